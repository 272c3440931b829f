package stage

import (
	"context"
	"io"
	"time"
)

// Store reads and writes the objects of one stage (usually a tenant's child
// stage). Keys are relative to the stage root ("tables/t1/3/part-0.parquet"),
// never absolute: the backend maps them with Descriptor.Key, which refuses
// anything that could leave the stage, before any I/O. Stores are safe for
// use from multiple goroutines.
type Store interface {
	// Descriptor returns the credential-free descriptor the store was opened
	// with.
	Descriptor() Descriptor

	// Put creates the object key with the contents of r. size is the exact
	// length, or -1 if unknown. Put never overwrites: if key exists it
	// returns ErrExists. The object becomes visible whole or not at all; on
	// error or context cancellation nothing is left behind (no partial
	// object, no open multipart upload). The returned Info carries the
	// SHA-256 of the contents.
	Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error)

	// Get opens the object for reading. The reader fails with ErrChecksum
	// at EOF if the backend holds a checksum for the object and the contents
	// do not match it. The caller closes the reader.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)

	// Stat returns the object's Info, or ErrNotFound.
	Stat(ctx context.Context, key string) (Info, error)

	// List returns up to limit keys (limit <= 0 means 1000) that start with
	// prefix and sort after startAfter (byte order), in byte order. prefix
	// "" lists the whole stage. An empty startAfter starts at the beginning;
	// a non-empty one obeys the key rules.
	List(ctx context.Context, prefix, startAfter string, limit int) ([]string, error)

	// Delete removes the objects; a missing object is not an error. Every
	// key is checked before anything is deleted: one bad key refuses the
	// whole batch.
	Delete(ctx context.Context, keys ...string) error

	// Copy creates dst with the contents of src, both keys of this stage.
	// It never overwrites: ErrExists if dst exists.
	Copy(ctx context.Context, src, dst string) error

	// Close releases the store's resources.
	Close() error
}

// Info describes a stored object.
type Info struct {
	Key  string // relative to the stage root
	Size int64  // bytes
	// SHA256 is the hex SHA-256 of the contents when known: always from
	// Put; from Stat/Get when the backend stored it (S3 single-part puts).
	SHA256 string
	// ETag is the backend's entity tag (S3); "" for the local backend.
	ETag string
	// Modified is when the object was last written, from Stat (zero when
	// the backend does not say).
	Modified time.Time
}

// DefaultListLimit is the List limit used when limit <= 0.
const DefaultListLimit = 1000
