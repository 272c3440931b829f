// Package cache is a per-tenant local read cache of immutable stage files.
// The gateway reads a table version's data files from a stage (S3 or a
// local directory) through a stage.Store into a local directory that the
// tenant's DuckDB may read, and pins them while a query uses them.
//
// # Usage
//
//	c, err := cache.Open(cache.Config{Dir: "/var/cache/lakegate/tenants/acme"})
//	defer c.Close()
//	paths, release, err := c.Acquire(ctx, store, []cache.File{
//		{Key: "tables/t1/3/part-0.parquet", Size: 1234, SHA256: "9f86d0…"},
//	})
//	defer release()
//	// hand paths to the engine; they stay on disk until release is called
//
// File describes what the caller wants, taken from the committed table
// version: Key (relative to the store's stage), exact Size and hex SHA-256.
// Key and SHA-256 together identify immutable content.
//
// # What it owns
//
// One directory per tenant (Config.Dir, created 0700): its complete files,
// named hex(sha256(key + "\x00" + sha256))[:40] + ".parquet", and its
// temporary files, named ".tmp-" + that name + a random suffix. Nothing
// else belongs there: Open removes every entry whose name does not parse,
// leftover temporary files, and anything that is not a regular file.
//
// # Guarantees
//
//   - It never holds credentials: it reads only through the stage.Store the
//     caller passes to each Acquire, and it never logs or returns more than
//     the (quoted, truncated) key.
//   - It never writes outside Dir: local names come from a hash of the key
//     and checksum, never from key text, and every file operation goes
//     through an os.Root opened at Dir, so hostile keys ("..", absolute
//     paths, NUL, …) and symlinks planted in Dir cannot redirect a write.
//   - It never serves unverified bytes: a fetched file is written to a
//     temporary file, its size and SHA-256 are checked against File
//     (ErrChecksum otherwise, and the temporary file is removed), it is
//     fsynced and only then renamed into place. Files found in Dir by Open
//     were verified when written but cannot be checked against anything
//     until a caller names them, so Open checks nothing but their names and
//     they are verified lazily: the first Acquire that names one re-hashes
//     it (size and SHA-256 against File) before serving it, and replaces it
//     from the store if it does not match.
//   - Concurrent Acquires of the same file fetch it once. If the fetching
//     caller's context is cancelled, the temporary file is removed and each
//     waiter whose own context is still live retries the fetch itself; any
//     other failure (ErrChecksum, a missing object) is returned to every
//     waiter of that fetch.
//   - Acquire leaves no goroutine behind: it fetches up to four missing
//     files at once and waits for all of them before returning.
//
// # Size bound and eviction
//
// Bytes (the total size of complete files) is kept at or below
// Config.MaxBytes by evicting, least recently released first, files that
// no Acquire currently pins. Pinned files are never evicted, so when
// everything is pinned the cache exceeds MaxBytes until enough is released;
// temporary files of in-flight fetches are not counted. A single file
// larger than MaxBytes is still fetched and served; it is evicted as soon
// as its last pin is released, so acquiring it again fetches it again.
//
// # Caller's obligations
//
//   - Give each tenant its own Dir, and open at most one Cache on a Dir at a
//     time (in any process): the Cache assumes it is the directory's only
//     writer. Other processes writing Dir are out of scope.
//   - Pass the tenant's own store to Acquire (authorization is not this
//     package's job), and call release exactly when the engine no longer
//     reads the paths; release is idempotent.
//   - Close waits for in-flight fetches (cancel their contexts first); it
//     deletes nothing, so paths still pinned stay readable.
//
// A Cache is safe for use from multiple goroutines.
package cache
