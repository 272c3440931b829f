package ticket

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

const (
	// MaxRingFileSize is the largest ring file LoadRing reads.
	MaxRingFileSize = 64 << 10
	// keyPrefix starts every key line of a ring file.
	keyPrefix = "lgk1:"
)

var keyEncoding = base64.RawURLEncoding.Strict()

// RingFileError is returned by LoadRing and WriteRingFile. Its message names
// the file and, for a malformed key, the line number; never key material.
type RingFileError struct {
	Op   string // "load" or "write"
	Path string
	Line int // 1-based line of a malformed key; 0 if not about a line
	Err  error
}

func (e *RingFileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("ticket: %s ring %s: line %d: %v", e.Op, e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("ticket: %s ring %s: %v", e.Op, e.Path, e.Err)
}

func (e *RingFileError) Unwrap() error { return e.Err }

// Reasons LoadRing refuses a file. They are always wrapped in a
// *RingFileError, whose message carries the "ticket:" prefix; match them
// with errors.Is.
var (
	ErrNotRegular  = errors.New("not a regular file")
	ErrPermissions = errors.New("group or other permission bits set (want 0600 or stricter)")
	ErrFileSize    = errors.New("file larger than 64 KiB")
	ErrMalformed   = errors.New("malformed key line (want lgk1:<base64url of 32 bytes>)")
	ErrNoKeys      = errors.New("no keys")
)

// LoadRing reads a ring file: one key per line as "lgk1:<base64url, no
// padding, of 32 bytes>", the first the active key and the rest verification
// keys. Blank lines and text from '#' to the end of a line are ignored.
//
// The file is opened without following symlinks, and the opened descriptor
// must be a regular file of at most MaxRingFileSize bytes with no group or
// other permission bits.
func LoadRing(path string) (*Ring, error) {
	fail := func(line int, err error) (*Ring, error) {
		return nil, &RingFileError{Op: "load", Path: path, Line: line, Err: err}
	}
	f, err := openNoFollow(path)
	if err != nil {
		return fail(0, withoutPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return fail(0, err)
	case !fi.Mode().IsRegular():
		return fail(0, ErrNotRegular)
	case fi.Mode().Perm()&0o077 != 0:
		return fail(0, ErrPermissions)
	case fi.Size() > MaxRingFileSize:
		return fail(0, ErrFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRingFileSize+1))
	if err != nil {
		return fail(0, err)
	}
	defer clear(data)
	if len(data) > MaxRingFileSize { // grew after Stat
		return fail(0, ErrFileSize)
	}
	var keys [][]byte
	lineOf := make(map[KeyID]int)
	defer func() {
		for _, k := range keys {
			clear(k)
		}
	}()
	for i, line := range bytes.Split(data, []byte("\n")) {
		if j := bytes.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		enc, ok := bytes.CutPrefix(line, []byte(keyPrefix))
		key := make([]byte, KeySize)
		// Check the length first: Decode into a 32-byte buffer must not
		// be handed more. The decoder's own errors carry no input.
		if !ok || keyEncoding.DecodedLen(len(enc)) != KeySize {
			return fail(i+1, ErrMalformed)
		}
		if n, err := keyEncoding.Decode(key, enc); err != nil || n != KeySize {
			return fail(i+1, ErrMalformed)
		}
		id := keyIDOf(key)
		if prev, dup := lineOf[id]; dup {
			return fail(i+1, fmt.Errorf("duplicate key: same key id as line %d", prev))
		}
		lineOf[id] = i + 1
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return fail(0, ErrNoKeys)
	}
	r, err := NewRing(keys[0], keys[1:]...)
	if err != nil {
		return fail(0, err)
	}
	return r, nil
}

// WriteRingFile writes r to a new file at path, mode 0600, in the format
// LoadRing reads, and syncs it. It never overwrites an existing file or
// follows a symlink.
func WriteRingFile(path string, r *Ring) (err error) {
	var b strings.Builder
	b.WriteString("# lakegate Flight ticket key ring. Keep secret.\n")
	b.WriteString("# First key seals and opens; the others only open (rotation).\n")
	writeKey := func(k *ringKey) {
		b.WriteString(keyPrefix)
		b.WriteString(keyEncoding.EncodeToString(k.raw[:]))
		b.WriteString("\n")
	}
	writeKey(r.active)
	for _, k := range r.verify {
		writeKey(k)
	}

	f, err := createExclusive(path)
	if err != nil {
		return &RingFileError{Op: "write", Path: path, Err: withoutPath(err)}
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
			err = &RingFileError{Op: "write", Path: path, Err: err}
		}
	}()
	if _, err := io.WriteString(f, b.String()); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// withoutPath drops an *os.PathError's path, which RingFileError already
// carries.
func withoutPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// syncDir makes the new directory entry durable; best effort, as some
// platforms cannot sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
