// Package ingest writes a table's data files: it streams Arrow record
// batches into Parquet files (zstd unless the table chose another codec,
// Config.Codec) and stores them, part by part,
// in a tenant's child stage under one write segment,
//
//	tables/<storageID>/<segment>/part-<n>.parquet  (stage.TableFileKey)
//
// and reports each file's key, size, row count and SHA-256 for the caller
// to commit.
//
// # Usage
//
//	seg, err := stage.NewSegment()
//	files, rows, err := ingest.Copy(ctx, ingest.Config{
//		Store: tenantStore, StorageID: "t1", Segment: seg, Schema: r.Schema(),
//	}, r)
//	// on success: ask metasrv to commit a version naming files;
//	// on error: nothing is left in the stage.
//
// or, batch by batch, New, Write, Close (or Abort).
//
// # What it owns and what it must never do
//
// The package owns the bytes of the data files of one write segment, from
// the first batch to the stored, closed files. It must never:
//
//   - commit, publish or register a table version: files become part of a
//     table only when the caller has metasrv commit a version naming them,
//     and uncommitted files are invisible orphans;
//   - see or handle credentials: it is given an opened stage.Store, the
//     tenant's child store the caller chose for the authenticated tenant;
//   - write outside the stage, or outside its own segment: every key comes
//     from stage.TableFileKey, and the store checks containment itself;
//   - overwrite: stores are create-only, so a reused segment fails with
//     stage.ErrExists rather than replacing committed files.
//
// # Caller's obligations
//
// Use a fresh segment (stage.NewSegment) for every writer. Call Close to
// keep the files, or Abort to discard them; Write and Close discard the
// segment themselves when they fail. Files of a successful Close stay in
// the stage until a version commits them or garbage collection removes
// them.
//
// # Types
//
// Only types that both arrow-go's pqarrow and DuckDB read back as the type
// that was written are accepted (see Config.Validate); anything else fails
// up front with ErrUnsupportedType naming the column, and the caller casts.
// The Arrow schema is stored in the file (ARROW:schema), so pqarrow restores
// time zones, large strings and string dictionaries exactly.
//
// # Encoding
//
// Each column's encoding is chosen from its first batch (a dictionary
// where few values repeat, delta encodings for values stepping by small
// amounts or sharing prefixes, plain pages otherwise), and the columns of
// a batch of a flat schema are encoded in parallel (Config.Workers); the
// bytes are those arrow-go's pqarrow writes with the same settings, which
// writes nested schemas itself. docs/performance.md (Ingest) has the
// measurements behind each choice.
//
// # Memory
//
// Memory is bounded by the batch being written, the current buffered row
// group (flushed at Config.RowGroupRows rows or about 64 MiB of encoded
// pages), one page per column, and the store's own upload buffer (the S3
// store holds up to two 16 MiB parts); a part is never held whole.
package ingest
