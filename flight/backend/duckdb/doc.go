// Package duckdb is the embedded execution backend: one locked-down, in-memory
// DuckDB instance per tenant, reading the tenant's Parquet tables and streaming
// Arrow record batches.
//
// Usage:
//
//	eng, err := duckdb.New(duckdb.Config{Root: "/var/lib/lakegate", Logger: log})
//	defer eng.Close()
//	tables, err := eng.Resolve(ctx, tenant, []backend.TableName{{Schema: "sales", Name: "orders"}})
//	rr, err := eng.Execute(ctx, tenant, sqlPrintedByTheGate, args)
//	defer rr.Release()
//
// # What it owns
//
// A tenant's data lives under <Root>/tenants/<tenant>/: tables/<schema>/<table>/data.parquet
// and tmp/ (DuckDB's spill directory). The first call for a tenant opens its
// instance (through duckdb-go's C API bindings, not database/sql) and locks it
// down in this order (SQL_GATE.md §5): create the directories;
// allowed_directories = [tenant dir]; temp_directory; memory_limit and
// threads; enable_external_access=false; no autoinstall, no autoload, no
// community extensions; MySQL's NULL ordering and TimeZone=UTC; an empty
// schema lg_empty and the schema lg_rel for relations; then the pool's primed
// connections, each with a 32 MB streaming_buffer_size and USE lg_empty
// (both per connection); finally lock_configuration=true. Connections opened
// later, when every primed one is busy, USE lg_empty and keep DuckDB's default
// buffer. Tables become views lg_rel."<schema>__<table>" over read_parquet of
// their file, created on first Resolve and re-created when the file changes.
// The instance stays open until Close.
//
// # What it must never do
//
//   - Run client text. Execute and Describe take SQL printed by the SQL gate from
//     an authorized AST. The lockdown is the second line of defense, not the
//     first: DuckDB still accepts, after lock_configuration, USE / SET
//     search_path / SET schema, SET VARIABLE, PRAGMA enable_profiling (which
//     prints to the process's stdout), ATTACH ':memory:', DDL in memory
//     (CREATE [TEMP] TABLE/VIEW/MACRO, DROP VIEW lg_rel.…) and COPY … TO a path
//     inside the tenant directory (which could overwrite a table file). Connections are pooled, so per-connection state such a
//     statement leaves behind would outlive its query. The gate must reject
//     all of them (it rejects everything but one SELECT).
//   - Open files outside the tenant directory. DuckDB enforces it for SQL
//     (allowed_directories + enable_external_access=false, including symlinks
//     and ../); the package's own file access goes through os.Root.
//   - Unlock configuration, or change settings after lock_configuration.
//   - Put a filesystem path in an error: engine messages are scrubbed.
//
// WriteTable is for trusted generator SQL only (demo data, tests); it runs on a
// separate, unlocked scratch instance, never the tenant's.
//
// Results stream: Execute prepares the statement, binds its arguments and
// starts it with DuckDB's streaming API; the reader fetches chunks as it is
// read, so a result need not fit in memory_limit (operators that must see all
// their input first, such as ORDER BY or a hash join's build side, still hold
// it, and may spill to the tenant's tmp/). Batches hold at least
// backend.MinBatchRows rows or backend.MinBatchBytes bytes: results whose
// columns are all fixed-width (integers, floats, decimals, dates, timestamps,
// times, booleans) are copied from DuckDB's vectors straight into the batch;
// others are converted by DuckDB per 2,048-row chunk and concatenated.
// Describe only prepares. Each connection caches the last few prepared
// statements by SQL text, so the Execute that follows a Describe does not
// prepare again; a view change retires them.
//
// An Engine is safe for use from multiple goroutines.
package duckdb
