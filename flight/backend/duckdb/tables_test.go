package duckdb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

func TestRoundTripTypes(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	writeTable(t, e, "acme", "sales", "orders", `SELECT * FROM (VALUES
		(1::BIGINT, 1.5::DOUBLE, 'a'::VARCHAR, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.123456', true, 12.34::DECIMAL(10,2)),
		(2, NULL, NULL, NULL, NULL, NULL, NULL)
	) v(id, amount, name, day, ts, ok, price)`)
	writeTable(t, e, "acme", "sales", "customers", "SELECT 1 AS id")
	writeTable(t, e, "acme", "hr", "people", "SELECT 1 AS id")

	tables, err := e.Tables(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tb := range tables {
		got = append(got, tb.Name.String()+"="+tb.Relation.Schema+"."+tb.Relation.Name)
	}
	want := []string{"hr.people=lg_rel.hr__people", "sales.customers=lg_rel.sales__customers", "sales.orders=lg_rel.sales__orders"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Tables = %v, want %v", got, want)
	}

	res, err := e.Resolve(ctx, "acme", []backend.TableName{{Schema: "sales", Name: "orders"}, {Schema: "hr", Name: "people"}})
	if err != nil {
		t.Fatal(err)
	}
	orders := res[0]
	if res[1].Name.Name != "people" {
		t.Fatalf("Resolve order: %+v", res)
	}
	if want := []string{"id", "amount", "name", "day", "ts", "ok", "price"}; !reflect.DeepEqual(orders.Columns, want) {
		t.Fatalf("Columns = %v", orders.Columns)
	}
	wantTypes := []arrow.DataType{
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond}, arrow.FixedWidthTypes.Boolean, &arrow.Decimal128Type{Precision: 10, Scale: 2},
	}
	for i, f := range orders.Schema.Fields() {
		if !arrow.TypeEqual(f.Type, wantTypes[i]) {
			t.Errorf("column %s: type %v, want %v", f.Name, f.Type, wantTypes[i])
		}
	}
	r := mustQuery(t, e, "acme", "SELECT * FROM lg_rel.sales__orders ORDER BY id")
	if !r.schema.Equal(orders.Schema) {
		t.Errorf("result schema %v != table schema %v", r.schema, orders.Schema)
	}
	wantRows := [][]any{
		{int64(1), 1.5, "a", "2024-01-02", "2024-01-02 03:04:05.123456", true, "12.34"},
		{int64(2), nil, nil, nil, nil, nil, nil},
	}
	for i := range wantRows {
		for j := range wantRows[i] {
			g := r.values[i][j]
			if s, ok := g.(string); ok {
				g = strings.TrimSuffix(strings.Replace(s, "T", " ", 1), "Z")
			}
			if g != wantRows[i][j] {
				t.Errorf("row %d col %d = %#v, want %#v", i, j, r.values[i][j], wantRows[i][j])
			}
		}
	}
}

func TestTenantsAreIsolated(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	writeTable(t, e, "tenant-a", "s", "mine", "SELECT 1 AS x")
	writeTable(t, e, "tenant-b", "s", "theirs", "SELECT 2 AS x")
	if _, err := e.Resolve(ctx, "tenant-b", []backend.TableName{{Schema: "s", Name: "theirs"}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.Resolve(ctx, "tenant-a", []backend.TableName{{Schema: "s", Name: "mine"}, {Schema: "s", Name: "theirs"}})
	wantErr(t, err, backend.ErrNotFound)
	if err.Error() != "backend: table not found: table s.theirs not found" {
		t.Errorf("message %q", err)
	}
	tables, err := e.Tables(ctx, "tenant-a")
	if err != nil || len(tables) != 1 || tables[0].Name.Name != "mine" {
		t.Fatalf("Tables(tenant-a) = %v, %v", tables, err)
	}
	// B's view exists in B's instance only.
	_, err = query(ctx, e, "tenant-a", "SELECT * FROM lg_rel.s__theirs")
	wantErr(t, err, backend.ErrQuery)
	if r := mustQuery(t, e, "tenant-b", "SELECT x FROM lg_rel.s__theirs"); r.values[0][0] != int32(2) {
		t.Fatalf("tenant-b reads %v", r.values)
	}
}

func TestResolveNotFoundAndRefresh(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	name := backend.TableName{Schema: "s", Name: "t"}
	for _, n := range []backend.TableName{name, {Schema: "S", Name: "t"}, {Schema: "s", Name: "../t"}, {Schema: "a_", Name: "b"}} {
		_, err := e.Resolve(ctx, "acme", []backend.TableName{n})
		wantErr(t, err, backend.ErrNotFound)
		if strings.Contains(err.Error(), root) {
			t.Errorf("leaks path: %v", err)
		}
	}
	writeTable(t, e, "acme", "s", "t", "SELECT 1 AS a")
	got, err := e.Resolve(ctx, "acme", []backend.TableName{name})
	if err != nil || !reflect.DeepEqual(got[0].Columns, []string{"a"}) {
		t.Fatalf("Resolve = %v, %v", got, err)
	}
	// Run the query the way Flight does, twice, so that connections cache
	// its prepared statement.
	for range 2 {
		if _, err := e.Describe(ctx, "acme", "SELECT * FROM lg_rel.s__t", 0); err != nil {
			t.Fatal(err)
		}
		if r := mustQuery(t, e, "acme", "SELECT * FROM lg_rel.s__t"); r.values[0][0] != int32(1) {
			t.Fatalf("read %v", r.values)
		}
	}
	// Rewrite with another schema: the cached view must be replaced, and no
	// cached statement may read through the old one.
	writeTable(t, e, "acme", "s", "t", "SELECT 'x' AS b, 2 AS c")
	got, err = e.Resolve(ctx, "acme", []backend.TableName{name})
	if err != nil || !reflect.DeepEqual(got[0].Columns, []string{"b", "c"}) {
		t.Fatalf("Resolve after rewrite = %v, %v", got, err)
	}
	if r := mustQuery(t, e, "acme", "SELECT * FROM lg_rel.s__t"); r.values[0][0] != "x" || r.schema.NumFields() != 2 {
		t.Fatalf("read %v %v", r.schema, r.values)
	}
	// Removing the file makes it not found again.
	if err := os.Remove(filepath.Join(root, "tenants", "acme", "tables", "s", "t", "data.parquet")); err != nil {
		t.Fatal(err)
	}
	_, err = e.Resolve(ctx, "acme", []backend.TableName{name})
	wantErr(t, err, backend.ErrNotFound)
}

func TestTablesIgnoresInvalidEntries(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	writeTable(t, e, "acme", "s", "ok", "SELECT 1 AS a")
	tables := filepath.Join(root, "tenants", "acme", "tables")
	for _, d := range []string{"Bad/t", "s/Bad", "s/__hidden", "s/nofile", "x_/t", "a__b/t"} {
		if err := os.MkdirAll(filepath.Join(tables, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(tables, "s", "ok", "data.parquet")
	for _, d := range []string{"Bad/t", "s/Bad", "s/__hidden", "x_/t", "a__b/t"} {
		b, _ := os.ReadFile(src)
		if err := os.WriteFile(filepath.Join(tables, d, "data.parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A symlinked table file pointing outside the tenant directory is absent.
	outside := filepath.Join(t.TempDir(), "x.parquet")
	b, _ := os.ReadFile(src)
	os.WriteFile(outside, b, 0o644)
	os.MkdirAll(filepath.Join(tables, "s", "link"), 0o755)
	if err := os.Symlink(outside, filepath.Join(tables, "s", "link", "data.parquet")); err != nil {
		t.Fatal(err)
	}
	// A corrupt file is skipped (and logged).
	os.MkdirAll(filepath.Join(tables, "s", "corrupt"), 0o755)
	os.WriteFile(filepath.Join(tables, "s", "corrupt", "data.parquet"), []byte("not parquet"), 0o644)

	got, err := e.Tables(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name.String() != "s.ok" {
		t.Fatalf("Tables = %+v", got)
	}
	_, err = e.Resolve(ctx, "acme", []backend.TableName{{Schema: "s", Name: "link"}})
	wantErr(t, err, backend.ErrNotFound)
	_, err = e.Resolve(ctx, "acme", []backend.TableName{{Schema: "s", Name: "corrupt"}})
	wantErr(t, err, backend.ErrQuery)
	if strings.Contains(err.Error(), root) {
		t.Errorf("leaks path: %v", err)
	}
}

func TestNames(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	for _, c := range []struct{ tenant, schema, table string }{
		{"", "s", "t"}, {"-a", "s", "t"}, {"a-", "s", "t"}, {"a/b", "s", "t"}, {"..", "s", "t"}, {strings.Repeat("a", 65), "s", "t"},
		{"a", "", "t"}, {"a", "S", "t"}, {"a", "__s", "t"}, {"a", "s_", "t"}, {"a", "a__b", "t"}, {"a", "s", "__t"},
		{"a", "s", "t-"}, {"a", "s", "../t"}, {"a", "s", strings.Repeat("t", 65)},
	} {
		if err := e.WriteTable(ctx, c.tenant, c.schema, c.table, "SELECT 1"); !errors.Is(err, duckdb.ErrInvalidName) {
			t.Errorf("WriteTable(%q, %q, %q) = %v", c.tenant, c.schema, c.table, err)
		}
	}
	for _, tenant := range []string{"", "a-", "../x", "a b"} {
		if _, err := e.Tables(ctx, tenant); !errors.Is(err, duckdb.ErrInvalidName) {
			t.Errorf("Tables(%q) = %v", tenant, err)
		}
	}
	writeTable(t, e, "A1", "s_1", "_t", "SELECT 1 AS a") // valid edge cases
}

func TestConfig(t *testing.T) {
	if err := duckdb.DefaultConfig().Validate(); err == nil {
		t.Error("missing Root accepted")
	}
	for _, bad := range []duckdb.Config{
		{Root: "x", MemoryLimit: "1GB'; SET x=1; --"},
		{Root: "x", MemoryLimit: "lots"},
		{Root: "x", Threads: -1},
		{Root: "x", QueryTimeout: -1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	for _, ok := range []string{"", "1GB", "512MiB", "1.5 GB", "100000000 bytes"} {
		if err := (duckdb.Config{Root: "x", MemoryLimit: ok}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	e, err := duckdb.New(duckdb.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := e.Tables(context.Background(), "acme"); !errors.Is(err, duckdb.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
