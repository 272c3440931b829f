package cache

import "strings"

// LocalName exposes the key-to-file-name mapping to tests.
func LocalName(key, sha string) string { return localName(key, strings.ToLower(sha)) }

// TmpPrefix is the prefix of temporary files.
const TmpPrefix = tmpPrefix
