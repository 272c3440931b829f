// Package duckdb is the embedded execution backend: one locked-down, in-memory
// DuckDB instance per tenant, reading the Parquet files of committed table
// versions and streaming Arrow record batches.
//
// Usage:
//
//	eng, err := duckdb.New(duckdb.Config{Root: "/var/lib/lakegate", Logger: log})
//	defer eng.Close()
//	rels, err := eng.Bind(ctx, tenant, localTables) // from the catalog, via flight/tablefiles
//	rr, err := eng.Execute(ctx, tenant, sqlPrintedByTheGate, args)
//	defer rr.Release()
//
// # What it owns
//
// The engine discovers no tables. The Flight layer resolves a statement's
// tables in the catalog (metasrv), which names the immutable data files of
// each table's current version; flight/tablefiles makes them available
// locally (a local stage's files, or the tenant's S3 read cache) and hands
// the engine a backend.LocalTable per version: its id ("<storage id>@<version>"),
// columns and the files' absolute paths. Bind creates, once per id and
// tenant, a view lg_rel."v_<id>" over read_parquet of exactly those paths,
// each of which must lie inside the tenant directory; a version without files
// is a view of typed NULLs with no rows. A version is immutable, so its view
// is never re-created while it exists, and binding it again is a map lookup.
// The SQL gate renders the logical table as the returned relation.
//
// A Bind holds the versions it binds until its context is done: the Flight
// layer runs a statement under the context it bound with and ends that
// context once the statement's stream ends, fails or is cancelled. Once a
// later version of a table is bound, the earlier ones are superseded, and a
// superseded version no Bind holds is dropped (DROP VIEW, or DROP TABLE for
// an in-memory copy, under the tenant's view lock), so a busy tenant keeps
// one view per table plus those its running statements still read. A
// version bound under a context that is never done is never dropped as
// superseded (an idle in-memory copy still is, see Config.MaterializeBytes).
// Binding a new version costs the same however many versions the tenant has
// bound: its column types come from DESCRIBE of the one view.
//
// A tenant's directory is <Root>/tenants/<tenant>/; it holds the tenant's
// local stage files or S3 cache, and tmp/ (DuckDB's spill directory). The
// first call for a tenant opens its instance (through duckdb-go's C API
// bindings, not database/sql) and locks it down in this order (SQL_GATE.md
// §5): create the directories; allowed_directories = [tenant dir];
// temp_directory; memory_limit, max_temp_directory_size and threads;
// enable_external_file_cache=false (see the memory budget below);
// enable_external_access=false; no autoinstall, no autoload, no community
// extensions; MySQL's NULL ordering and TimeZone=UTC; an empty schema
// lg_empty and the schema lg_rel for relations; then the pool's primed connections, each with a 32 MB
// streaming_buffer_size and USE lg_empty (both per connection); finally
// lock_configuration=true. Connections opened later, when every primed one is
// busy, USE lg_empty and keep DuckDB's default buffer. The instance stays
// open until Close.
//
// # What it must never do
//
//   - Run client text. Execute and Describe take SQL printed by the SQL gate from
//     an authorized AST. The lockdown is the second line of defense, not the
//     first: DuckDB still accepts, after lock_configuration, USE / SET
//     search_path / SET schema, SET VARIABLE, PRAGMA enable_profiling (which
//     prints to the process's stdout), ATTACH ':memory:', DDL in memory
//     (CREATE [TEMP] TABLE/VIEW/MACRO, DROP VIEW lg_rel.…) and COPY … TO a path
//     inside the tenant directory (which could overwrite a data file).
//     Connections are pooled, so per-connection state such a statement
//     leaves behind would outlive its query, and a view dropped behind
//     Bind's back would stay dropped. The gate must reject all of them (it
//     rejects everything but one SELECT).
//   - Open files outside the tenant directory. Bind refuses a path outside
//     it; DuckDB enforces it for SQL (allowed_directories +
//     enable_external_access=false, including symlinks and ../), so a
//     symlink inside the directory pointing out is refused too; WriteFile's
//     own file access goes through os.Root.
//   - Unlock configuration, or change settings after lock_configuration.
//   - Put a filesystem path in an error: engine messages are scrubbed.
//
// WriteFile writes one Parquet data file from trusted generator SQL, for tests
// and benchmarks only (production writes go through flight/ingest and the
// catalog); it runs on a separate, unlocked scratch instance, never the
// tenant's.
//
// Results stream: Execute prepares the statement, binds its arguments and
// starts it with DuckDB's streaming API; the reader fetches chunks as it is
// read, so a result need not fit in memory_limit (operators that must see all
// their input first, such as ORDER BY or a hash join's build side, still hold
// it, and may spill to the tenant's tmp/). Batches hold at least
// backend.MinBatchRows rows or backend.MinBatchBytes bytes, and not much
// more: results whose columns are all fixed-width (integers, floats,
// decimals, dates, timestamps, times, booleans), strings or blobs are copied
// from DuckDB's vectors straight into the batch, which ends with the row
// that fills it, inside a chunk if need be; others (lists, structs, maps,
// enums, UUIDs, intervals, …) are converted by DuckDB per 2,048-row chunk,
// cut into slices of about MinBatchBytes and concatenated. So a result of
// large rows streams in messages of a few MiB, which clients accept.
// A string or blob parameter longer than Config.MaxParamBytes (the SQL
// gate's literal limit) is refused, and an engine error raised by a size
// check the gate printed is returned as backend.ErrResources wrapping the
// gate's sqlgate.ErrLimit (both ResourceExhausted to clients). DuckDB checks
// for an interrupt between the phases of a statement (prepare, start, each
// chunk) but not while it plans; the gate's limits bound planning.
// Describe only prepares. Each connection caches the last few prepared
// statements by SQL text and view generation, and a statement takes a
// connection caching its text when one is idle, so a statement is prepared
// once for its Describe and all the executions that follow, until a view
// change (a version bound or a copy dropped) retires every cached
// statement. The key is complete: the gate prints each table as its
// immutable version's view, with the caller's row filter, masks and
// values inlined, so a policy or version change is a new text. DuckDB
// itself re-plans, at every execution, a statement with parameters that
// scans a relation (it does not cache such plans, to plan with the
// values); only its parse is reused then.
//
// # The memory budget
//
// Config.MemoryBudget bounds what the tenant instances reserve together
// (budget.go). An open instance reserves Config.IdleTenantBytes (its
// measured idle cost, about 2.6 MiB: DuckDB's catalog of built-in
// functions, its connections and its worker threads), plus, while it holds
// in-memory copies of table versions, what its buffer manager holds for
// them (asked of DuckDB when they change); from the start of a statement (a
// query, a Describe, Bind's view DDL) until its tenant's last statement
// ends, it reserves its MemoryLimit besides, which bounds DuckDB's buffer
// manager. A running instance's reservation does not follow its use,
// because memory_limit cannot change after lock_configuration. When a reservation does not fit,
// idle instances (no running statement, not handed out within the last
// second, so that a Bind and the Execute after it see the same instance)
// are closed, least recently used first; if closing all of them would not
// make room, the statement waits until another ends, and fails with
// ErrMemoryBudget (ResourceExhausted) when Config.MemoryWait passes or its
// context ends first. A tenant
// whose instance was closed opens a new one on its next call. The
// external file cache is off: it would keep files an idle instance has
// read in its buffer manager, while the budget counts it at its idle cost.
//
// An Engine is safe for use from multiple goroutines.
package duckdb
