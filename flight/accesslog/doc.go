// Package accesslog records data access: one Event for every statement and
// discovery call that reaches authorization, batched per tenant and
// written as Parquet files into the tenant's own stage, where they are read
// back through SQL as the governed, read-only table system.access_events.
//
// It owns the event's shape (Event, the columns of the table), batching in
// bounded memory, the spool on local disk that holds batches while the
// stage is unavailable, and the decision to refuse new statements when the
// spool is full (fail closed, unless the operator chose otherwise for a
// tenant). Where a batch goes is a Sink's business; Merge merges a
// tenant's files into one for the Sink's compaction.
//
// It must never hold a statement's literal values (Statement is the
// normalised text), never write a tenant's events outside that tenant's
// prefix, and never lose an event silently: what can be lost on a crash is
// bounded by the flush interval and documented.
//
// # Flow
//
// The gateway calls Admit before a statement runs and Record once it
// ends. Record appends to the tenant's batch in memory; the flush loop
// (one goroutine per Log) encodes each tenant's batch as one Parquet file
// (Encode, columns of Columns) every Config.FlushInterval, or sooner when a
// tenant reaches Config.MaxBatch events or memory is half full, and hands
// it to the Sink. A file the Sink refuses goes to the spool,
// SpoolDir/<tenant>/<seq>.parquet (written to a temporary name, synced,
// renamed, the directory synced), and the tenant's files are retried
// oldest first on every flush, so a tenant's events reach the Sink in
// order. New scans the spool and delivers it first; Close flushes
// everything to the Sink or the spool.
//
// # Bounds
//
// Memory holds at most Config.MaxMemory bytes of events and encoded files
// (plus the events of statements admitted just before it filled); the
// spool at most Config.SpoolMax bytes. When the Sink fails, batches move
// to the spool; when the spool is full, they stay in memory; when memory
// is full, Admit refuses every statement with an error wrapping
// ErrUnavailable ("access log unavailable"), except for tenants the
// operator made fail-open, whose events are then dropped and counted.
//
// # Loss
//
// A graceful shutdown (Close) loses nothing while the Sink or the spool
// takes the batches; what fits neither is counted, logged and reported by
// Close. A crash loses the events held in memory: those recorded since the
// last flush (at most one FlushInterval's, or MaxBatch per tenant) and
// any encoded file waiting for room in a full spool. A file the Sink
// stored but whose success the Log did not see (a timeout, a crash between
// the write and the spool file's removal) is written again: an event may
// appear twice, never silently vanish.
package accesslog
