package duckdb_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
	"lakegate/stage"
)

// newEngine returns an Engine over a fresh root, closed at cleanup.
func newEngine(t testing.TB, mod ...func(*duckdb.Config)) (*duckdb.Engine, string) {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	cfg := duckdb.DefaultConfig()
	cfg.Root = root
	// Most tests here run SQL the gate would never print (range(), DDL):
	// the statement check is off unless a test turns it on (verifying).
	cfg.NoVerify = true
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	for _, m := range mod {
		m(&cfg)
	}
	e, err := duckdb.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e, root
}

// verifying turns the statement check on, as it is outside these tests.
func verifying(c *duckdb.Config) { c.NoVerify = false }

// writeFile writes query's result as a fresh data file of storageID (a new
// segment, part 0) in tenant's directory and returns its absolute path.
func writeFile(t testing.TB, e *duckdb.Engine, tenant, storageID, query string) string {
	t.Helper()
	seg, err := stage.NewSegment()
	if err != nil {
		t.Fatal(err)
	}
	key, err := stage.TableFileKey(storageID, seg, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.WriteFile(context.Background(), tenant, key, query)
	if err != nil {
		t.Fatalf("WriteFile %s: %v", key, err)
	}
	return p
}

// bindTable writes query's result as the one file of table version id
// ("<storage id>@<version>") and binds it for tenant.
func bindTable(t testing.TB, e *duckdb.Engine, tenant, id, query string) backend.Relation {
	t.Helper()
	storageID, _, _ := strings.Cut(id, "@")
	p := writeFile(t, e, tenant, storageID, query)
	rels, err := e.Bind(context.Background(), tenant, []backend.LocalTable{{ID: id, Paths: []string{p}}})
	if err != nil {
		t.Fatalf("Bind %s: %v", id, err)
	}
	return rels[0]
}

// relSQL renders rel as the gate does.
func relSQL(rel backend.Relation) string {
	return rel.Schema + `."` + strings.ReplaceAll(rel.Name, `"`, `""`) + `"`
}

// result is a drained reader.
type result struct {
	schema  *arrow.Schema
	batches []int64 // rows per batch
	rows    int64
	values  [][]any // per row, only when collected
}

// query runs sql to completion and returns the first error from Execute or the
// reader.
func query(ctx context.Context, e *duckdb.Engine, tenant, sql string, args ...any) (*result, error) {
	rr, err := e.Execute(ctx, tenant, sql, args)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	res := &result{schema: rr.Schema()}
	for rr.Next() {
		rec := rr.RecordBatch()
		res.batches = append(res.batches, rec.NumRows())
		res.rows += rec.NumRows()
		if res.rows <= 1000 {
			for i := 0; i < int(rec.NumRows()); i++ {
				row := make([]any, rec.NumCols())
				for j, col := range rec.Columns() {
					row[j] = value(col, i)
				}
				res.values = append(res.values, row)
			}
		}
	}
	return res, rr.Err()
}

func mustQuery(t testing.TB, e *duckdb.Engine, tenant, sql string, args ...any) *result {
	t.Helper()
	res, err := query(context.Background(), e, tenant, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

func value(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	switch c := col.(type) {
	case *array.Int64:
		return c.Value(i)
	case *array.Int32:
		return c.Value(i)
	case *array.Float64:
		return c.Value(i)
	case *array.String:
		return strings.Clone(c.Value(i)) // Value aliases the buffer
	case *array.Boolean:
		return c.Value(i)
	default:
		return strings.Clone(c.ValueStr(i))
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

var _ backend.Backend = (*duckdb.Engine)(nil)
