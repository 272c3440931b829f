package duckdb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"lakegate/flight/backend"
)

// cachedTable is a resolved table and the identity of the file its view reads.
type cachedTable struct {
	file  os.FileInfo
	table backend.Table
}

func (c *cachedTable) current(fi os.FileInfo) bool {
	return os.SameFile(c.file, fi) && c.file.Size() == fi.Size() && c.file.ModTime().Equal(fi.ModTime())
}

func relationName(n backend.TableName) string { return n.Schema + "__" + n.Name }

// tableKey is the table file's name inside the tenant directory (os.Root syntax).
func tableKey(n backend.TableName) string { return path.Join("tables", n.Schema, n.Name, dataFile) }

func notFound(n backend.TableName) error {
	if !validTableRef(n) {
		return fmt.Errorf("%w: table not found", backend.ErrNotFound)
	}
	return fmt.Errorf("%w: table %s not found", backend.ErrNotFound, n)
}

// Tables lists the tenant's tables: every tables/<schema>/<table>/data.parquet
// with valid names. Entries with invalid names are ignored; a file DuckDB
// cannot read is logged and left out.
func (e *Engine) Tables(ctx context.Context, tenantID string) ([]backend.Table, error) {
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	var names []backend.TableName
	schemas, err := fs.ReadDir(t.fs.FS(), "tables")
	if err != nil {
		return nil, fmt.Errorf("duckdb: list tables: %w", scrubErr(err, t.dir, e.root))
	}
	for _, s := range schemas {
		if !s.IsDir() || !validSchemaName(s.Name()) {
			continue
		}
		tables, err := fs.ReadDir(t.fs.FS(), path.Join("tables", s.Name()))
		if err != nil {
			continue
		}
		for _, tb := range tables {
			if tb.IsDir() && validTableName(tb.Name()) {
				names = append(names, backend.TableName{Schema: s.Name(), Name: tb.Name()})
			}
		}
	}
	slices.SortFunc(names, func(a, b backend.TableName) int {
		return strings.Compare(a.Schema+"\x00"+a.Name, b.Schema+"\x00"+b.Name)
	})
	out := make([]backend.Table, 0, len(names))
	for _, n := range names {
		tb, err := t.resolve(ctx, n)
		switch {
		case err == nil:
			out = append(out, tb)
		case errors.Is(err, backend.ErrNotFound):
			// a directory without a data file
		case ctx.Err() != nil:
			return nil, mapCtxErr(ctx.Err())
		default:
			t.log.Warn("table skipped", "table", n.String(), "err", err)
		}
	}
	return out, nil
}

// Resolve returns the named tables in order, creating or refreshing their
// views. A missing (or invalidly named) table fails the call with an error
// wrapping backend.ErrNotFound that names only the logical table.
func (e *Engine) Resolve(ctx context.Context, tenantID string, names []backend.TableName) ([]backend.Table, error) {
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	out := make([]backend.Table, 0, len(names))
	for _, n := range names {
		tb, err := t.resolve(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, tb)
	}
	return out, nil
}

// resolve returns n's table, (re)creating its view when the file is new or has
// changed since the cached view was made.
func (t *tenant) resolve(ctx context.Context, n backend.TableName) (backend.Table, error) {
	if !validTableRef(n) {
		return backend.Table{}, notFound(n)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// os.Root: a symlink leaving the tenant directory is an error, i.e. absent.
	fi, err := t.fs.Stat(tableKey(n))
	if err != nil || !fi.Mode().IsRegular() {
		if _, ok := t.tables[n]; ok {
			delete(t.tables, n)
			if err := t.exec(ctx, "DROP VIEW IF EXISTS "+relSchema+"."+quoteIdent(relationName(n))); err != nil {
				t.log.Warn("dropping view of a removed table", "table", n.String(), "err", err)
			}
		}
		return backend.Table{}, notFound(n)
	}
	if c, ok := t.tables[n]; ok && c.current(fi) {
		return c.table, nil
	}
	rel := backend.Relation{Schema: relSchema, Name: relationName(n)}
	qualified := relSchema + "." + quoteIdent(rel.Name)
	file := filepath.Join(t.dir, filepath.FromSlash(tableKey(n)))
	if err := t.exec(ctx, "CREATE OR REPLACE VIEW "+qualified+" AS SELECT * FROM read_parquet("+quoteString(file)+")"); err != nil {
		delete(t.tables, n)
		return backend.Table{}, err
	}
	d, err := t.describe(ctx, "SELECT * FROM "+qualified, 0)
	if err != nil {
		delete(t.tables, n)
		return backend.Table{}, err
	}
	tb := backend.Table{Name: n, Relation: rel, Columns: columnNames(d.Result), Schema: d.Result}
	t.tables[n] = &cachedTable{file: fi, table: tb}
	return tb, nil
}

func columnNames(s *arrow.Schema) []string {
	cols := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		cols[i] = strings.ToLower(f.Name)
	}
	return cols
}
