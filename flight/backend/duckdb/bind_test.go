package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/clocktest"
	"lakegate/stage"
)

func TestRoundTripTypes(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	orders := writeFile(t, e, "acme", "orders", `SELECT * FROM (VALUES
		(1::BIGINT, 1.5::DOUBLE, 'a'::VARCHAR, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.123456', true, 12.34::DECIMAL(10,2)),
		(2, NULL, NULL, NULL, NULL, NULL, NULL)
	) v(id, amount, name, day, ts, ok, price)`)
	people := writeFile(t, e, "acme", "people", "SELECT 1 AS id")

	rels, err := e.Bind(ctx, "acme", []backend.LocalTable{
		{ID: "orders@1", Paths: []string{orders}},
		{ID: "people@3", Paths: []string{people}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []backend.Relation{
		{Schema: "lg_rel", Name: "v_orders@1", Types: []string{"BIGINT", "DOUBLE", "VARCHAR", "DATE", "TIMESTAMP", "BOOLEAN", "DECIMAL(10,2)"}},
		{Schema: "lg_rel", Name: "v_people@3", Types: []string{"INTEGER"}},
	}
	if !reflect.DeepEqual(rels, want) {
		t.Fatalf("Bind = %v, want %v", rels, want)
	}
	d, err := e.Describe(ctx, "acme", `SELECT * FROM lg_rel."v_orders@1"`, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, f := range d.Result.Fields() {
		cols = append(cols, f.Name)
	}
	if want := []string{"id", "amount", "name", "day", "ts", "ok", "price"}; !reflect.DeepEqual(cols, want) {
		t.Fatalf("Columns = %v", cols)
	}
	wantTypes := []arrow.DataType{
		arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond}, arrow.FixedWidthTypes.Boolean, &arrow.Decimal128Type{Precision: 10, Scale: 2},
	}
	for i, f := range d.Result.Fields() {
		if !arrow.TypeEqual(f.Type, wantTypes[i]) {
			t.Errorf("column %s: type %v, want %v", f.Name, f.Type, wantTypes[i])
		}
	}
	r := mustQuery(t, e, "acme", `SELECT * FROM lg_rel."v_orders@1" ORDER BY id`)
	if !r.schema.Equal(d.Result) {
		t.Errorf("result schema %v != described schema %v", r.schema, d.Result)
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
	if r := mustQuery(t, e, "acme", "SELECT id FROM "+relSQL(rels[1])); r.values[0][0] != int32(1) {
		t.Fatalf("people: %v", r.values)
	}
}

// TestBindSeveralFiles: a version's view reads all its files, in order.
func TestBindSeveralFiles(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	var paths []string
	for _, q := range []string{"SELECT range AS id FROM range(0, 5)", "SELECT range AS id FROM range(5, 12)"} {
		paths = append(paths, writeFile(t, e, "acme", "t", q))
	}
	rels, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "t@2", Paths: paths}})
	if err != nil {
		t.Fatal(err)
	}
	r := mustQuery(t, e, "acme", "SELECT count(*) AS n, sum(id) AS s FROM "+relSQL(rels[0]))
	if r.values[0][0] != int64(12) || r.values[0][1] != "66" {
		t.Fatalf("read %v", r.values)
	}
}

func TestTenantsAreIsolated(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	bindTable(t, e, "tenant-a", "mine@1", "SELECT 1 AS x")
	theirs := bindTable(t, e, "tenant-b", "theirs@1", "SELECT 2 AS x")
	// B's view exists in B's instance only.
	_, err := query(ctx, e, "tenant-a", "SELECT * FROM "+relSQL(theirs))
	wantErr(t, err, backend.ErrQuery)
	if r := mustQuery(t, e, "tenant-b", "SELECT x FROM "+relSQL(theirs)); r.values[0][0] != int32(2) {
		t.Fatalf("tenant-b reads %v", r.values)
	}
	// A cannot bind B's file.
	bFile := writeFile(t, e, "tenant-b", "theirs", "SELECT 3 AS x")
	_, err = e.Bind(ctx, "tenant-a", []backend.LocalTable{{ID: "theirs@2", Paths: []string{bFile}}})
	wantErr(t, err, backend.ErrQuery)
	if strings.Contains(err.Error(), root) {
		t.Errorf("leaks path: %v", err)
	}

	// The same version id bound in two tenants names two independent
	// views, each over its own tenant's file.
	for tn, q := range map[string]string{"tenant-a": "SELECT 'a' AS who", "tenant-b": "SELECT 'b' AS who"} {
		bindTable(t, e, tn, "shared@1", q)
	}
	for _, tn := range []string{"tenant-a", "tenant-b"} {
		r := mustQuery(t, e, tn, `SELECT who FROM lg_rel."v_shared@1"`)
		if want := tn[len(tn)-1:]; r.values[0][0] != want {
			t.Errorf("%s reads %v, want %s", tn, r.values, want)
		}
	}
}

// TestBindOnce: binding a bound version runs no DDL and keeps the first
// view, whatever paths come with it (versions are immutable); a new version
// of the same table is a new view beside the old one.
func TestBindOnce(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t, func(c *duckdb.Config) { c.MaterializeBytes = -1 }) // views over the files
	v1 := writeFile(t, e, "acme", "t", "SELECT 1 AS a")
	lt := []backend.LocalTable{{ID: "t@1", Paths: []string{v1}}}
	rel1, err := e.Bind(ctx, "acme", lt)
	if err != nil {
		t.Fatal(err)
	}
	gen := e.ViewGen("acme")
	// Run a query the way Flight does, twice, so that connections cache its
	// prepared statement.
	q1 := "SELECT * FROM " + relSQL(rel1[0])
	for range 2 {
		if _, err := e.Describe(ctx, "acme", q1, 0); err != nil {
			t.Fatal(err)
		}
		if r := mustQuery(t, e, "acme", q1); r.values[0][0] != int32(1) {
			t.Fatalf("read %v", r.values)
		}
	}
	other := writeFile(t, e, "acme", "t", "SELECT 'x' AS b, 2 AS c")
	for _, again := range [][]backend.LocalTable{lt, {{ID: "t@1", Paths: []string{other}}}, {{ID: "t@1"}}} {
		rel, err := e.Bind(ctx, "acme", again)
		if err != nil || !reflect.DeepEqual(rel[0], rel1[0]) {
			t.Fatalf("second Bind = %v, %v", rel, err)
		}
	}
	if g := e.ViewGen("acme"); g != gen {
		t.Fatalf("binding a bound version ran DDL: view generation %d → %d", gen, g)
	}
	if r := mustQuery(t, e, "acme", q1); r.values[0][0] != int32(1) || r.schema.NumFields() != 1 {
		t.Fatalf("t@1 changed: %v %v", r.schema, r.values)
	}

	// Control: a new version is a new view, and moves the generation on.
	rel2, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "t@2", Paths: []string{other}}})
	if err != nil {
		t.Fatal(err)
	}
	if g := e.ViewGen("acme"); g == gen {
		t.Fatal("a new view left the view generation unchanged")
	}
	if r := mustQuery(t, e, "acme", "SELECT * FROM "+relSQL(rel2[0])); r.values[0][0] != "x" || r.schema.NumFields() != 2 {
		t.Fatalf("t@2: %v %v", r.schema, r.values)
	}
	if r := mustQuery(t, e, "acme", q1); r.values[0][0] != int32(1) {
		t.Fatalf("t@1 after t@2: %v", r.values)
	}

	// A file that disappears under a bound view fails the read with
	// ErrQuery, naming no path.
	if err := os.Remove(v1); err != nil {
		t.Fatal(err)
	}
	_, err = query(ctx, e, "acme", q1)
	wantErr(t, err, backend.ErrQuery)
	if strings.Contains(err.Error(), root) {
		t.Errorf("leaks path: %v", err)
	}
}

// TestBindEmpty: a version without files is a view of typed NULLs with no
// rows; a column type the engine does not know, or no columns, fails.
func TestBindEmpty(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	cols := []backend.Column{
		{Name: "id", Type: "int64"}, {Name: "name", Type: "utf8"}, {Name: "amount", Type: "double"},
		{Name: "day", Type: "date32"}, {Name: "ts", Type: "timestamp[us, tz=UTC]"}, {Name: "Odd Name", Type: "BOOLEAN"},
	}
	rels, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "empty@1", Columns: cols}})
	if err != nil {
		t.Fatal(err)
	}
	r := mustQuery(t, e, "acme", "SELECT * FROM "+relSQL(rels[0]))
	want := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "Odd Name", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
	if r.rows != 0 || !r.schema.Equal(want) {
		t.Fatalf("empty view: %d rows, schema\n%v\nwant\n%v", r.rows, r.schema, want)
	}

	for _, c := range [][]backend.Column{
		{{Name: "id", Type: "int64"}, {Name: "x", Type: "list<item: int64>"}},
		{{Name: "x", Type: "INTEGER); DROP VIEW lg_rel.x; --"}},
		nil,
	} {
		_, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "bad@1", Columns: c}})
		wantErr(t, err, backend.ErrQuery)
	}
	// A failed bind leaves nothing behind: the id binds later.
	rels, err = e.Bind(ctx, "acme", []backend.LocalTable{{ID: "bad@1", Columns: cols[:1]}})
	if err != nil {
		t.Fatal(err)
	}
	if r := mustQuery(t, e, "acme", "SELECT * FROM "+relSQL(rels[0])); r.rows != 0 || r.schema.NumFields() != 1 {
		t.Fatalf("bad@1: %+v", r)
	}
}

func TestBindCorruptFile(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	p := filepath.Join(root, "tenants", "acme", "tables", "t", "part-0.parquet")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	rels, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "t@1", Paths: []string{p}}})
	if err == nil {
		_, err = query(ctx, e, "acme", "SELECT * FROM "+relSQL(rels[0]))
	}
	wantErr(t, err, backend.ErrQuery)
	if strings.Contains(err.Error(), root) {
		t.Errorf("leaks path: %v", err)
	}
}

func TestNames(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	const seg = "0123456789abcdef0123456789abcdef"
	good := "tables/t/" + seg + "/part-0.parquet"
	for _, c := range []struct{ tenant, key string }{
		{"", good}, {"-a", good}, {"a-", good}, {"a/b", good}, {"..", good}, {strings.Repeat("a", 65), good},
		{"a", ""}, {"a", "part-0.parquet"}, {"a", "/" + good}, {"a", "tables/../" + good},
		{"a", "tables/t/" + seg + "/../part-0.parquet"}, {"a", "tables/T/" + seg + "/part-0.parquet"},
		{"a", "tables/t/" + seg + "/part-0.csv"}, {"a", "tables/t/xyz/part-0.parquet"},
		{"a", "tables/t/" + seg + "/sub/part-0.parquet"}, {"a", "tmp/x.parquet"}, {"a", "tables\\t\\" + seg + "\\part-0.parquet"},
	} {
		if p, err := e.WriteFile(ctx, c.tenant, c.key, "SELECT 1"); !errors.Is(err, duckdb.ErrInvalidName) {
			t.Errorf("WriteFile(%q, %q) = %q, %v", c.tenant, c.key, p, err)
		}
	}
	for _, tenant := range []string{"", "a-", "../x", "a b"} {
		if _, err := e.Bind(ctx, tenant, nil); !errors.Is(err, duckdb.ErrInvalidName) {
			t.Errorf("Bind(%q) = %v", tenant, err)
		}
	}
	cols := []backend.Column{{Name: "a", Type: "int64"}}
	for _, id := range []string{
		"", `t"@1`, `t@1"; DROP VIEW x; --`, "a/b@1", "../t@1", "T@1", "Orders@1", "@1", "-t@1", "t@1 ", "t.x@1",
		strings.Repeat("t", 161),
	} {
		if _, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: id, Columns: cols}}); !errors.Is(err, duckdb.ErrInvalidName) {
			t.Errorf("Bind id %q = %v", id, err)
		}
	}
	// Valid edge cases.
	if _, err := e.Bind(ctx, "A1", []backend.LocalTable{{ID: strings.Repeat("t", 160), Columns: cols}, {ID: "0_x-y@18446744073709551615", Columns: cols}}); err != nil {
		t.Fatal(err)
	}
	bindTable(t, e, "A1", "a-b@1", "SELECT 1 AS a")
}

func TestWriteFile(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	key, err := stage.TableFileKey("t", "0123456789abcdef0123456789abcdef", 7)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.WriteFile(ctx, "acme", key, "SELECT 1 AS a")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "tenants", "acme", filepath.FromSlash(key)); p != want {
		t.Fatalf("path %q, want %q", p, want)
	}
	ents, err := os.ReadDir(filepath.Dir(p))
	if err != nil || len(ents) != 1 {
		t.Fatalf("directory holds %v, %v (a temporary file left behind?)", ents, err)
	}
	// Data files are immutable: an existing file is never replaced.
	if _, err := e.WriteFile(ctx, "acme", key, "SELECT 2 AS b"); err == nil {
		t.Fatal("existing file replaced")
	}
	// A failing query leaves nothing behind.
	key2, _ := stage.TableFileKey("t", "0123456789abcdef0123456789abcdef", 8)
	if _, err := e.WriteFile(ctx, "acme", key2, "SELECT nope"); err == nil || strings.Contains(err.Error(), root) {
		t.Fatalf("failing query: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Fatalf("directory holds %v after a failed write", ents)
	}
	// A symlinked directory on the way out of the tenant directory is refused.
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "tenants", "acme", "tables", "u")); err != nil {
		t.Fatal(err)
	}
	key3, _ := stage.TableFileKey("u", "0123456789abcdef0123456789abcdef", 0)
	if _, err := e.WriteFile(ctx, "acme", key3, "SELECT 1 AS a"); err == nil {
		t.Fatal("wrote through a symlink")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside: %v", ents)
	}
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
	ctx := context.Background()
	if _, err := e.Bind(ctx, "acme", nil); !errors.Is(err, duckdb.ErrClosed) {
		t.Fatalf("Bind after Close: %v", err)
	}
	if _, err := e.WriteFile(ctx, "acme", "tables/t/0123456789abcdef0123456789abcdef/part-0.parquet", "SELECT 1"); !errors.Is(err, duckdb.ErrClosed) {
		t.Fatalf("WriteFile after Close: %v", err)
	}
}

// TestBindMaterializes: a version whose files are small is copied into
// memory at Bind (its file may go away afterwards), up to the tenant's
// total; past it, versions are views over their files again.
func TestBindMaterializes(t *testing.T) {
	ctx := context.Background()
	small := writeFileSize(t)
	e, _ := newEngine(t, func(c *duckdb.Config) { c.MaterializeTotal = small + small/2 })
	var rels []backend.Relation
	var paths []string
	for i, id := range []string{"m@1", "m@2"} {
		p := writeFile(t, e, "acme", "m", fmt.Sprintf("SELECT %d AS v FROM range(100)", i))
		got, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: id, Paths: []string{p}}})
		if err != nil {
			t.Fatal(err)
		}
		rels, paths = append(rels, got[0]), append(paths, p)
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if r := mustQuery(t, e, "acme", "SELECT sum(v) FROM "+relSQL(rels[0])); r.rows != 1 {
		t.Fatalf("the copied version: %v", r.values)
	}
	_, err := query(ctx, e, "acme", "SELECT sum(v) FROM "+relSQL(rels[1]))
	wantErr(t, err, backend.ErrQuery) // past the total: a view over a file that is gone

	// InMemory tells the first apart: it binds again without its files.
	for _, c := range []struct {
		tenant string
		ids    []string
		want   bool
	}{
		{"acme", []string{"m@1"}, true},
		{"acme", []string{"m@2"}, false},
		{"acme", []string{"m@1", "m@2"}, false},
		{"acme", []string{"m@3"}, false},
		{"acme", nil, false},
		{"other", []string{"m@1"}, false}, // another tenant's engine
	} {
		if got := e.InMemory(c.tenant, c.ids); got != c.want {
			t.Errorf("InMemory(%s, %v) = %v, want %v", c.tenant, c.ids, got, c.want)
		}
	}
	again, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "m@1"}})
	if err != nil || again[0].Name != rels[0].Name {
		t.Fatalf("Bind of the copied version without files: %v, %v", again, err)
	}
}

// writeFileSize is the size of the files TestBindMaterializes writes.
func writeFileSize(t *testing.T) int64 {
	e, _ := newEngine(t)
	p := writeFile(t, e, "acme", "m", "SELECT 0 AS v FROM range(100)")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestBindDropsIdleCopies: when a new small version does not fit the
// tenant's copies, copies no statement has bound for longer than
// QueryTimeout are dropped (least recently bound first) to make room;
// recently bound ones never are. A dropped version binds again from its
// files; asked for as in memory, it answers ErrNotInMemory instead of
// binding without its files.
func TestBindDropsIdleCopies(t *testing.T) {
	ctx := context.Background()
	small := writeFileSize(t)
	clk := newClock()
	advance := clk.Advance
	e, _ := newEngine(t, func(c *duckdb.Config) {
		c.MaterializeTotal, c.QueryTimeout, c.Now = small+small/2, time.Minute, clk.Now
	})
	paths := map[string]string{}
	bind := func(id string, v int) backend.Relation {
		t.Helper()
		if paths[id] == "" {
			paths[id] = writeFile(t, e, "acme", "m", fmt.Sprintf("SELECT %d AS v FROM range(100)", v))
		}
		rels, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: id, Paths: []string{paths[id]}}})
		if err != nil {
			t.Fatalf("Bind %s: %v", id, err)
		}
		return rels[0]
	}
	inMemory := func(want map[string]bool) {
		t.Helper()
		for id, w := range want {
			if got := e.InMemory("acme", []string{id}); got != w {
				t.Errorf("InMemory(%s) = %v, want %v", id, got, w)
			}
		}
	}
	sum := func(rel backend.Relation, want int64) {
		t.Helper()
		r := mustQuery(t, e, "acme", "SELECT CAST(sum(v) AS BIGINT) FROM "+relSQL(rel))
		if r.rows != 1 || r.values[0][0] != want {
			t.Errorf("sum over %s = %v, want %d", rel.Name, r.values, want)
		}
	}

	bind("m@1", 1)
	advance(30 * time.Second)
	bind("m@2", 2) // m@1 bound 30 s ago: kept; m@2 is read from its file
	inMemory(map[string]bool{"m@1": true, "m@2": false})

	advance(2 * time.Minute)
	rel3 := bind("m@3", 3) // m@1 idle for 2.5 min: dropped for m@3
	inMemory(map[string]bool{"m@1": false, "m@2": false, "m@3": true})
	sum(rel3, 300)
	if _, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "m@1", InMemory: true}}); !errors.Is(err, backend.ErrNotInMemory) {
		t.Fatalf("Bind of a dropped copy as in memory: %v, want ErrNotInMemory", err)
	}
	sum(bind("m@1", 1), 100) // back, from its file (m@3 holds the room)
	inMemory(map[string]bool{"m@1": false})

	advance(50 * time.Second)
	bind("m@3", 3) // bound again: recent
	advance(40 * time.Second)
	bind("m@4", 4) // m@3 bound 40 s ago: kept
	inMemory(map[string]bool{"m@3": true, "m@4": false})
}

// TestDropIdleCopies: the periodic sweep gives back the copies of every
// tenant not bound for the idle time (never less than QueryTimeout), and
// keeps recent ones.
func TestDropIdleCopies(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	advance := clk.Advance
	e, _ := newEngine(t, func(c *duckdb.Config) { c.QueryTimeout, c.Now = time.Minute, clk.Now })
	bind := func(tenant, id string) int64 {
		t.Helper()
		p := writeFile(t, e, tenant, "m", "SELECT 1 AS v FROM range(100)")
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Bind(ctx, tenant, []backend.LocalTable{{ID: id, Paths: []string{p}}}); err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	old := bind("acme", "m@1") + bind("beta", "m@1")
	advance(5 * time.Minute)
	bind("acme", "m@2")
	if freed := e.DropIdleCopies(ctx, 10*time.Second); freed != old { // 10 s < QueryTimeout: 1 min applies
		t.Errorf("freed %d bytes, want %d", freed, old)
	}
	for _, c := range []struct {
		tenant, id string
		want       bool
	}{{"acme", "m@1", false}, {"beta", "m@1", false}, {"acme", "m@2", true}} {
		if got := e.InMemory(c.tenant, []string{c.id}); got != c.want {
			t.Errorf("InMemory(%s, %s) = %v, want %v", c.tenant, c.id, got, c.want)
		}
	}
	advance(30 * time.Second)
	if freed := e.DropIdleCopies(ctx, 10*time.Second); freed != 0 {
		t.Errorf("freed %d bytes of a copy bound 30 s ago", freed)
	}
}

// TestCloseIdleTenants: a tenant unused for the idle time and running no
// statement is closed (its copies and views go with it) and opens again on
// its next call; one unused as long but streaming a result is kept until
// the stream ends.
func TestCloseIdleTenants(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	advance := clk.Advance
	e, _ := newEngine(t, func(c *duckdb.Config) { c.Now = clk.Now })
	p := writeFile(t, e, "acme", "m", "SELECT range AS v FROM range(100)")
	local := []backend.LocalTable{{ID: "m@1", Paths: []string{p}}}
	rels, err := e.Bind(ctx, "acme", local)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := e.Execute(ctx, "beta", "SELECT range FROM range(200000)", nil) // open, not drained
	if err != nil {
		t.Fatal(err)
	}
	advance(31 * time.Minute)
	if n := e.CloseIdleTenants(30 * time.Minute); n != 1 {
		t.Fatalf("closed %d tenants, want 1 (acme; beta is streaming)", n)
	}
	if e.InMemory("acme", []string{"m@1"}) {
		t.Error("acme's copy survived its instance")
	}
	var rows int64
	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	if err := rr.Err(); err != nil || rows != 200000 {
		t.Fatalf("beta's stream: %d rows, %v", rows, err)
	}
	rr.Release()
	if n := e.CloseIdleTenants(30 * time.Minute); n != 1 {
		t.Fatalf("closed %d tenants once beta's stream ended, want 1", n)
	}
	// acme opens again: its version binds again and reads the same rows.
	if _, err := query(ctx, e, "acme", "SELECT count(*) FROM "+relSQL(rels[0])); err == nil {
		t.Error("a view of the closed instance is still there")
	}
	rels, err = e.Bind(ctx, "acme", local)
	if err != nil {
		t.Fatal(err)
	}
	if r := mustQuery(t, e, "acme", "SELECT count(*) FROM "+relSQL(rels[0])); r.values[0][0] != int64(100) {
		t.Errorf("after reopening: %v", r.values)
	}
	if n := e.CloseIdleTenants(30 * time.Minute); n != 0 {
		t.Errorf("closed %d tenants just used", n)
	}
}

// newClock is a clock tests move by hand (Config.Now).
func newClock() *clocktest.Clock {
	return clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}
