package stage

import (
	"errors"
	"fmt"
)

// Errors returned by this package, usually wrapped in a *PathError or a
// descriptor error. Test them with errors.Is.
var (
	// ErrInvalidKey: a key, list prefix or start-after value breaks the key
	// syntax (empty, leading or doubled '/', '.'-prefixed segment, a byte
	// outside the key alphabet, too long). Always returned before any I/O.
	ErrInvalidKey = errors.New("stage: invalid key")
	// ErrOutsideStage: a key does not lie under the child stage's prefix.
	// Always returned before any I/O.
	ErrOutsideStage = errors.New("stage: key outside the stage")
	// ErrExists: Put or Copy found an object at the destination. Objects
	// are immutable: nothing is ever overwritten.
	ErrExists = errors.New("stage: object already exists")
	// ErrNotFound: no object at the key (or no such multipart upload).
	ErrNotFound = errors.New("stage: object not found")
	// ErrChecksum: data read back does not match the checksum stored with it.
	ErrChecksum = errors.New("stage: checksum mismatch")
	// ErrInvalidDescriptor: a descriptor fails validation.
	ErrInvalidDescriptor = errors.New("stage: invalid descriptor")
	// ErrSize: Put read a different number of bytes than the size it was given.
	ErrSize = errors.New("stage: size mismatch")
)

// maxLoggedKey bounds how much of a key an error message repeats.
const maxLoggedKey = 96

// PathError records a failed stage operation, the key it was given and the
// cause, like io/fs.PathError. Error quotes the key with %q and truncates
// long keys, so the message is safe to log even for hostile keys; Key itself
// holds the key exactly as the caller passed it (do not log it raw).
type PathError struct {
	Op  string // "put", "get", "stat", "list", "delete", "copy", "abort", "open"
	Key string // the caller's key, relative to the child stage root
	Err error
}

func (e *PathError) Error() string {
	return "stage: " + e.Op + " " + SafeKey(e.Key) + ": " + e.Err.Error()
}

func (e *PathError) Unwrap() error { return e.Err }

// SafeKey renders a key for logs and messages: Go-quoted with %+q, ASCII only (control bytes,
// invalid UTF-8 and look-alike characters escaped) and truncated.
func SafeKey(key string) string {
	if len(key) <= maxLoggedKey {
		return fmt.Sprintf("%+q", key)
	}
	return fmt.Sprintf("%+q...(%d bytes)", key[:maxLoggedKey], len(key))
}

func pathErr(op, key string, err error) error {
	return &PathError{Op: op, Key: key, Err: err}
}
