package stage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Table file layout. A table's data files live in its child stage under
//
//	tables/<storageID>/<segment>/part-<n>.parquet
//
// where storageID is the table's storage id (never its SQL name, which can
// be renamed), segment is a random write-segment id from NewSegment, unique
// per writer so concurrent writers never collide, and n counts a segment's
// parts from 0. The keys are relative to the tenant's child stage, exactly
// what Store.Put, Get, Stat, List and Delete take; the store adds the child
// prefix and applies CheckKey itself. A file becomes part of the table only
// when metasrv commits a version naming it; files under tables/ that no
// committed version names are orphans.

// Layout limits.
const (
	// MaxStorageIDLen is the longest storage id TableFileKey accepts.
	MaxStorageIDLen = 64
	// SegmentLen is the length of a segment id from NewSegment.
	SegmentLen = 32
)

// Layout errors. Test them with errors.Is.
var (
	// ErrInvalidStorageID: a storage id is not 1–64 bytes of [a-z0-9-]
	// with an alphanumeric first and last byte.
	ErrInvalidStorageID = errors.New("stage: invalid storage id")
	// ErrInvalidSegment: a segment id is not SegmentLen lower-case hex
	// bytes, or a part number is negative.
	ErrInvalidSegment = errors.New("stage: invalid segment")
)

// CheckStorageID reports whether id is a valid storage id: 1 to
// MaxStorageIDLen bytes of a-z, 0-9 and '-', starting and ending with a
// letter or digit. Such an id is always a single valid key segment.
func CheckStorageID(id string) error {
	if len(id) == 0 || len(id) > MaxStorageIDLen {
		return fmt.Errorf("%w: %d bytes, want 1 to %d", ErrInvalidStorageID, len(id), MaxStorageIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-' && i > 0 && i < len(id)-1:
		default:
			return fmt.Errorf("%w: %s: byte %d is not allowed (want [a-z0-9-], alphanumeric at both ends)", ErrInvalidStorageID, SafeKey(id), i)
		}
	}
	return nil
}

// CheckSegment reports whether seg is a segment id as NewSegment makes
// them: SegmentLen lower-case hex bytes.
func CheckSegment(seg string) error {
	if len(seg) != SegmentLen {
		return fmt.Errorf("%w: %d bytes, want %d", ErrInvalidSegment, len(seg), SegmentLen)
	}
	for i := 0; i < len(seg); i++ {
		if c := seg[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("%w: %s: byte %d is not lower-case hex", ErrInvalidSegment, SafeKey(seg), i)
		}
	}
	return nil
}

// NewSegment returns a fresh random write-segment id: SegmentLen (32)
// lower-case hex characters from 16 bytes of crypto/rand, so two concurrent
// writers of one table never pick the same keys. The error is crypto/rand's
// (which does not fail on supported platforms).
func NewSegment() (string, error) {
	var b [SegmentLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("stage: new segment: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// TablePrefix returns "tables/<storageID>/", the list prefix (relative to
// the tenant's child stage, as Store.List takes it) of every data file of
// the table. It returns an error wrapping ErrInvalidStorageID for an invalid
// storage id, and then no prefix.
func TablePrefix(storageID string) (string, error) {
	if err := CheckStorageID(storageID); err != nil {
		return "", err
	}
	return "tables/" + storageID + "/", nil
}

// SegmentPrefix returns "tables/<storageID>/<segment>/", the list prefix
// (relative to the tenant's child stage) of every part of one write segment.
// It returns an error wrapping ErrInvalidStorageID or ErrInvalidSegment for
// invalid input, and then no prefix.
func SegmentPrefix(storageID, segment string) (string, error) {
	p, err := TablePrefix(storageID)
	if err != nil {
		return "", err
	}
	if err := CheckSegment(segment); err != nil {
		return "", err
	}
	return p + segment + "/", nil
}

// TableFileKey returns the key, relative to the tenant's child stage (what
// Store.Put and Store.Get take), of part n of a write segment of a table:
// "tables/<storageID>/<segment>/part-<n>.parquet", n in decimal without
// padding. It returns an error wrapping ErrInvalidStorageID or
// ErrInvalidSegment (also for n < 0) for invalid input, and then no key.
// A key it returns always passes the store's key check for any valid stage
// whose prefix leaves room for it (the key is at most 137 bytes).
func TableFileKey(storageID, segment string, part int) (string, error) {
	p, err := SegmentPrefix(storageID, segment)
	if err != nil {
		return "", err
	}
	if part < 0 {
		return "", fmt.Errorf("%w: part %d is negative", ErrInvalidSegment, part)
	}
	return p + "part-" + strconv.Itoa(part) + ".parquet", nil
}
