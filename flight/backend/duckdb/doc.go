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
// instance and locks it down in this order (SQL_GATE.md §5): create the
// directories; allowed_directories = [tenant dir]; temp_directory; memory_limit
// and threads; enable_external_access=false; no autoinstall, no autoload, no
// community extensions; MySQL's NULL ordering and TimeZone=UTC; an empty schema
// lg_empty that every connection USEs (so an unqualified name resolves to
// nothing) and the schema lg_rel for relations; finally lock_configuration=true.
// Tables become views lg_rel."<schema>__<table>" over read_parquet of their file,
// created on first Resolve and re-created when the file changes. The instance
// stays open until Close.
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
// Results: duckdb-go materializes a query's result before the first batch is
// returned (it does not use DuckDB's streaming API), so a result must fit in
// memory_limit (DuckDB may spill to the tenant tmp/). Execute merges DuckDB's
// 2,048-row vectors into batches of at least backend.MinBatchRows rows or
// backend.MinBatchBytes bytes.
//
// An Engine is safe for use from multiple goroutines.
package duckdb
