package duckdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	duckdbdrv "github.com/duckdb/duckdb-go/v2"
)

// WriteTable materializes a table for a tenant from a TRUSTED generator query
// (demo data, tests; never client SQL) into
// <Root>/tenants/<tenant>/tables/<schema>/<table>/data.parquet, replacing any
// existing file atomically: DuckDB COPYs the result to a temporary file in the
// same directory (Parquet, zstd), which is fsynced and renamed over the target.
// The query runs on a scratch in-memory instance, unlocked and closed
// afterwards, never on the tenant's. Names: 1–64 of [a-z0-9_], not starting
// with "__"; a schema neither contains "__" nor ends with "_".
func (e *Engine) WriteTable(ctx context.Context, tenantID, schema, table, query string) (err error) {
	if !validTenant(tenantID) || !validSchemaName(schema) || !validTableName(table) {
		return ErrInvalidName
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrClosed
	}
	tdir := e.tenantDir(tenantID)
	dir := filepath.Join(tdir, "tables", schema, table)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("duckdb: write table: %w", scrubErr(err, tdir, e.root))
	}
	// No component may be a symlink: the file must land where Resolve looks.
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != dir {
		return errors.New("duckdb: write table: table directory is not a plain directory under the root")
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".data.parquet.tmp-"+hex.EncodeToString(rnd[:]))
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()

	connector, err := duckdbdrv.NewConnector("", nil)
	if err != nil {
		return fmt.Errorf("duckdb: write table: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	setup := []string{
		"SET memory_limit=" + quoteString(e.cfg.MemoryLimit),
		fmt.Sprintf("SET threads=%d", e.cfg.Threads),
		"SET temp_directory=" + quoteString(filepath.Join(tdir, "tmp")),
		"SET autoinstall_known_extensions=false",
		"SET TimeZone='UTC'",
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("duckdb: write table: %w", err)
	}
	defer conn.Close()
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("duckdb: write table: %w", scrubErr(err, tdir, e.root))
		}
	}
	copySQL := "COPY (" + query + ") TO " + quoteString(tmp) + " (FORMAT parquet, COMPRESSION zstd)"
	if _, err := conn.ExecContext(ctx, copySQL); err != nil {
		if ctx.Err() != nil {
			return mapCtxErr(ctx.Err())
		}
		return fmt.Errorf("duckdb: write table: %w", scrubErr(err, tdir, e.root))
	}
	if err := syncPath(tmp); err != nil {
		return fmt.Errorf("duckdb: write table: %w", scrubErr(err, tdir, e.root))
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataFile)); err != nil {
		return fmt.Errorf("duckdb: write table: %w", scrubErr(err, tdir, e.root))
	}
	if err := syncPath(dir); err != nil {
		return fmt.Errorf("duckdb: write table: %w", scrubErr(err, tdir, e.root))
	}
	return nil
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
