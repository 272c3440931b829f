package stage

import (
	"fmt"
	"strings"
)

// Key limits.
const (
	// MaxKeyLen is the largest full key in bytes (the child prefix, '/', and
	// the relative key), S3's own limit.
	MaxKeyLen = 1024
	// MaxSegmentLen is the largest '/'-separated segment in bytes (NAME_MAX
	// on local file systems), so both backends accept the same keys.
	MaxSegmentLen = 255
)

// CheckKey is the containment check: it reports whether full, an absolute
// object key (S3) or path (local), names an object inside the child stage
// whose prefix is child. Every backend calls it, through Descriptor.Key,
// before every I/O. It accepts full only if
//
//   - full is child + "/" + rel, and full is at most MaxKeyLen bytes;
//   - rel is non-empty, made of '/'-separated segments that are non-empty
//     (so no leading, trailing or doubled '/'), at most MaxSegmentLen bytes,
//     do not start with '.' (so no "." or ".." segment, and no hidden or
//     temporary files), and use only the key alphabet A-Z a-z 0-9 - _ . =.
//
// The alphabet is deliberately ASCII-only: it excludes backslashes, '%' (so
// no percent-encoded separators such as %2F, %5C or %2E%2E), control bytes
// including NUL and DEL, spaces, invalid UTF-8 and every Unicode look-alike
// of '/' (U+2215, U+2044, U+FF0F, U+29F8, ...).
//
// A nil result means: the key cannot name anything outside the child stage
// on either backend. CheckKey does not check that child itself is a valid
// stage prefix; Descriptor.Validate does.
func CheckKey(child, full string) error {
	return check(child, full, false)
}

// CheckPrefix is CheckKey for list prefixes: rel may also be empty (the
// whole stage) or end in '/' (a "directory"); every other rule is the same.
func CheckPrefix(child, full string) error {
	return check(child, full, true)
}

func check(child, full string, prefix bool) error {
	if len(full) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes, over %d", ErrInvalidKey, len(full), MaxKeyLen)
	}
	if child == "" || !strings.HasPrefix(full, child+"/") {
		return ErrOutsideStage
	}
	rel := full[len(child)+1:]
	if prefix {
		if rel == "" {
			return nil
		}
		rel = strings.TrimSuffix(rel, "/")
	}
	if rel == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	segStart := 0
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' {
			if !keyByte(rel[i]) {
				return fmt.Errorf("%w: byte %#02x at offset %d is outside [A-Za-z0-9._=-/]", ErrInvalidKey, rel[i], i)
			}
			continue
		}
		seg := rel[segStart:i]
		switch {
		case seg == "":
			return fmt.Errorf("%w: empty segment (leading, trailing or doubled '/')", ErrInvalidKey)
		case seg[0] == '.':
			return fmt.Errorf("%w: segment starts with '.'", ErrInvalidKey)
		case len(seg) > MaxSegmentLen:
			return fmt.Errorf("%w: segment of %d bytes, over %d", ErrInvalidKey, len(seg), MaxSegmentLen)
		}
		segStart = i + 1
	}
	return nil
}

func keyByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '-', c == '_', c == '.', c == '=':
		return true
	}
	return false
}

// prefix returns the containment prefix of the descriptor: the S3 key prefix
// or the local root. It is "" for an invalid descriptor, which CheckKey
// refuses.
func (d Descriptor) prefix() string {
	switch {
	case d.S3 != nil && d.Local == nil:
		return d.S3.Prefix
	case d.Local != nil && d.S3 == nil:
		return d.Local.Root
	}
	return ""
}

// Key maps rel, a key relative to the stage root, to the backend's absolute
// key (S3 object key or local path), or returns the CheckKey error. It is
// the only way backends turn caller keys into storage keys.
func (d Descriptor) Key(rel string) (string, error) {
	p := d.prefix()
	full := p + "/" + rel
	return full, CheckKey(p, full)
}

// ListPrefix is Key for list prefixes ("" lists the whole stage).
func (d Descriptor) ListPrefix(rel string) (string, error) {
	p := d.prefix()
	full := p + "/" + rel
	return full, CheckPrefix(p, full)
}
