// Package stage stores a tenant's objects in a stage — a local directory
// or an S3 bucket prefix — and guarantees that no key a caller passes can
// reach outside it. It is the gateway's storage layer and a small SDK for
// programs that hold their own storage credentials.
//
// # Usage
//
// A stage is described by a credential-free Descriptor (JSON, strictly
// decoded). A tenant's child stage is "<root or prefix>/tenants/<tenant>":
//
//	root, err := stage.ParseDescriptor(cfgJSON)
//	child, err := root.ForTenant("acme")
//	st, err := stage.Open(ctx, child, stage.Config{}) // credentials: AWS SDK default chain
//	defer st.Close()
//	info, err := st.Put(ctx, "tables/t1/1/part-0.parquet", r, size)
//	rc, info, err := st.Get(ctx, "tables/t1/1/part-0.parquet")
//
// Keys are relative to the opened stage's root; the store computes absolute
// S3 keys and local paths itself. Objects are immutable: Put and Copy never
// overwrite (ErrExists).
//
// # Containment guarantee
//
// One function, CheckKey (with its list-prefix twin CheckPrefix, reached
// through Descriptor.Key and Descriptor.ListPrefix), decides whether a key
// is inside a stage, and every Store operation applies it to every key it
// is given — object keys, list prefixes, start-after keys, copy sources and
// destinations, every key of a delete batch, multipart upload keys — before
// building any request or touching the file system. A refused key yields a
// *PathError wrapping ErrInvalidKey or ErrOutsideStage and no I/O. Keys are
// '/'-separated segments of A-Z a-z 0-9 - _ . = that are non-empty and do
// not start with '.', at most 1,024 bytes in total; so "..", "./", "//", a
// leading '/', backslashes, '%' escapes, control bytes, NUL, non-ASCII
// look-alikes of '/' and over-long keys are all refused. Because the stage
// prefix is always joined with '/', tenant "a" can never match tenant
// "ab"'s keys. Keys returned by a server (list results) are re-checked and
// dropped if outside. The local backend additionally resolves every path
// through os.Root at the stage root, so symlinks and ".." planted on disk
// cannot escape either.
//
// # Caller's obligations and what this does not cover
//
//   - Authorization: the package contains keys within the stage it is
//     given; choosing the right tenant's descriptor (ForTenant with the
//     authenticated tenant) is the caller's job.
//   - Credentials: S3 credentials reach the whole bucket. Containment is
//     enforced in this process; a program holding credentials can of course
//     bypass this package. Give SDK users credentials scoped to their prefix
//     (an IAM policy) when they must not be trusted.
//   - Other processes writing the directory or bucket directly, and
//     administrators, are out of scope; so is deleting a tenant's data and
//     garbage collection of orphaned objects.
//   - Checksums: single-part S3 objects carry a SHA-256 verified on read;
//     multipart objects are verified per part on upload only (Put returns
//     the whole-object SHA-256 for the caller to record); local files are
//     not checksummed (they are fsynced).
//   - Create-only on S3 relies on If-None-Match: *, which AWS S3 honours for
//     PutObject, CompleteMultipartUpload and CopyObject; a server that
//     ignores it on PutObject could overwrite under a race. A retried Put
//     whose first attempt landed reports ErrExists.
//   - Copy on S3 uses CopyObject, limited to 5 GiB sources.
//
// Stores are safe for use from multiple goroutines.
package stage
