package cache

import (
	"errors"

	"lakegate/stage"
)

// Errors returned by this package, usually wrapped in an *Error with the
// key. Test them with errors.Is; errors from the store (stage.ErrNotFound,
// stage.ErrInvalidKey, context errors, …) are wrapped too.
var (
	// ErrChecksum: the bytes read from the store (or found on disk) do not
	// have the File's size or SHA-256. Nothing is kept.
	ErrChecksum = errors.New("cache: checksum mismatch")
	// ErrInvalidFile: a File has an empty key, a negative size or a SHA256
	// that is not 64 hex digits. Returned before any I/O.
	ErrInvalidFile = errors.New("cache: invalid file")
	// ErrClosed: the Cache was closed.
	ErrClosed = errors.New("cache: closed")
)

// Error records a failed cache operation, the key it concerned and the
// cause. Error quotes and truncates the key (stage.SafeKey), so the message
// is safe to log for hostile keys; it never contains credentials.
type Error struct {
	Op  string // "acquire", "fetch", "verify"
	Key string // the File's key, exactly as given (do not log it raw)
	Err error
}

func (e *Error) Error() string {
	return "cache: " + e.Op + " " + stage.SafeKey(e.Key) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
