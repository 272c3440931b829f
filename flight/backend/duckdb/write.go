package duckdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	duckdbdrv "github.com/duckdb/duckdb-go/v2"

	"lakegate/stage"
)

// WriteFile writes the result of a TRUSTED generator query (test data,
// benchmarks; never client SQL) as one Parquet file (zstd) at
// <Root>/tenants/<tenant>/<key> and returns its absolute path, which Bind
// accepts in a backend.LocalTable. It is for tests and tools only:
// production writes go through flight/ingest into the tenant's stage and are
// committed in the catalog, and the engine never writes table files itself.
//
// key is relative to the tenant directory, which is also the tenant's child
// of a local stage rooted at Root, and must have the stage's table file shape
// (stage.IsTableFile): "tables/<storage id>/<segment>/part-<n>.parquet", as
// stage.TableFileKey makes. Data files are immutable, so an existing file is
// never replaced: the call fails instead. The file appears atomically: DuckDB
// COPYs the result to a temporary file in the same directory, which is
// fsynced and renamed to key. The query runs on a scratch in-memory instance,
// unlocked and closed afterwards, never on the tenant's.
func (e *Engine) WriteFile(ctx context.Context, tenantID, key, query string) (_ string, err error) {
	if !validTenant(tenantID) {
		return "", fmt.Errorf("%w: tenant", ErrInvalidName)
	}
	if !stage.IsTableFile(key) {
		return "", fmt.Errorf("%w: file key", ErrInvalidName)
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return "", ErrClosed
	}
	tdir := e.tenantDir(tenantID)
	wrap := func(err error) error { return fmt.Errorf("duckdb: write file: %w", scrubErr(err, tdir, e.root)) }
	if err := os.MkdirAll(tdir, 0o750); err != nil {
		return "", wrap(err)
	}
	root, err := os.OpenRoot(tdir)
	if err != nil {
		return "", wrap(err)
	}
	defer root.Close()
	keyDir := path.Dir(key)
	if err := root.MkdirAll(keyDir, 0o750); err != nil {
		return "", wrap(err)
	}
	// DuckDB writes by absolute path: no component may be a symlink, so the
	// file lands inside the tenant directory, where Bind accepts it.
	dir := filepath.Join(tdir, filepath.FromSlash(keyDir))
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != dir {
		return "", errors.New("duckdb: write file: the file's directory is not a plain directory under the root")
	}
	if _, err := root.Lstat(key); err == nil {
		return "", errors.New("duckdb: write file: the file exists (data files are immutable)")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", wrap(err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmpKey := key + ".tmp-" + hex.EncodeToString(rnd[:])
	tmp := filepath.Join(tdir, filepath.FromSlash(tmpKey))
	defer func() {
		if err != nil {
			_ = root.Remove(tmpKey)
		}
	}()

	connector, err := duckdbdrv.NewConnector("", nil)
	if err != nil {
		return "", fmt.Errorf("duckdb: write file: %w", err)
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
		return "", fmt.Errorf("duckdb: write file: %w", err)
	}
	defer conn.Close()
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return "", wrap(err)
		}
	}
	copySQL := "COPY (" + query + ") TO " + quoteString(tmp) + " (FORMAT parquet, COMPRESSION zstd)"
	if _, err := conn.ExecContext(ctx, copySQL); err != nil {
		if ctx.Err() != nil {
			return "", mapCtxErr(ctx.Err())
		}
		return "", wrap(err)
	}
	if err := syncPath(tmp); err != nil {
		return "", wrap(err)
	}
	if err := root.Rename(tmpKey, key); err != nil {
		return "", wrap(err)
	}
	if err := syncPath(dir); err != nil {
		return "", wrap(err)
	}
	return filepath.Join(tdir, filepath.FromSlash(key)), nil
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
