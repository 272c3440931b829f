package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

func TestExecuteCoalesces(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e, _ := newEngine(t, func(c *duckdb.Config) { c.Allocator = mem })
	const n = 1_000_000
	res := mustQuery(t, e, "acme", "SELECT range AS id, range * 2 AS v, 'x' || (range % 10)::VARCHAR AS s FROM range(1000000)")
	if res.rows != n {
		t.Fatalf("rows = %d, want %d", res.rows, n)
	}
	for i, b := range res.batches[:len(res.batches)-1] {
		if b < backend.MinBatchRows {
			t.Errorf("batch %d has %d rows", i, b)
		}
	}
	t.Logf("%d batches: %v", len(res.batches), res.batches)
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
	mem.AssertSize(t, 0)

	// A wide row reaches MinBatchBytes before MinBatchRows, and the batch
	// ends with the row that reaches it (1,000 bytes and a 4-byte offset a
	// row), even inside one of the engine's chunks.
	res = mustQuery(t, e, "acme", "SELECT repeat('x', 1000) AS s FROM range(100000)")
	for i, b := range res.batches[:len(res.batches)-1] {
		if b >= backend.MinBatchRows || int64(b)*1004 < backend.MinBatchBytes || int64(b-1)*1004 >= backend.MinBatchBytes {
			t.Errorf("wide batch %d has %d rows", i, b)
		}
	}
	if res.rows != 100000 {
		t.Fatalf("rows = %d", res.rows)
	}
	mem.AssertSize(t, 0)

	// Releasing early, mid-stream, frees everything and returns the connection.
	rr, err := e.Execute(context.Background(), "acme", "SELECT range FROM range(1000000)", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	rr.Retain()
	rr.Release()
	if e.ConnsInUse("acme") != 1 {
		t.Error("connection returned while the reader is retained")
	}
	rr.Release()
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
	mem.AssertSize(t, 0)

	// Empty result: schema, no batches.
	res = mustQuery(t, e, "acme", "SELECT range AS id FROM range(0)")
	if res.rows != 0 || len(res.batches) != 0 || res.schema.NumFields() != 1 {
		t.Fatalf("empty: %+v", res)
	}
}

func TestExecuteParams(t *testing.T) {
	e, _ := newEngine(t)
	tbl := relSQL(bindTable(t, e, "acme", "t@1", "SELECT range AS id, 'n' || range::VARCHAR AS name FROM range(100)"))
	res := mustQuery(t, e, "acme", "SELECT id, name FROM "+tbl+" WHERE id >= ? AND name <> ? ORDER BY id LIMIT ?", int64(90), "n95", int64(3))
	if len(res.values) != 3 || res.values[0][0] != int64(90) || res.values[2][0] != int64(92) {
		t.Fatalf("values = %v", res.values)
	}
	// A parameter is a value, never SQL.
	res = mustQuery(t, e, "acme", "SELECT count(*) AS n FROM "+tbl+" WHERE name = ?", "n1' OR '1'='1")
	if res.values[0][0] != int64(0) {
		t.Fatalf("injection: %v", res.values)
	}
	_, err := query(context.Background(), e, "acme", "SELECT ? + 1", "x", "extra")
	wantErr(t, err, backend.ErrQuery)
}

func TestExecuteErrors(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	for _, sql := range []string{"SELECT 1 + 'a'::INT", "SELECT nope FROM range(1)", "SELEC 1"} {
		_, err := query(ctx, e, "acme", sql)
		wantErr(t, err, backend.ErrQuery)
		if strings.Contains(err.Error(), root) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q", sql, err)
		}
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use after errors", in)
	}
	// Out of memory: a list aggregate cannot spill.
	small, _ := newEngine(t, func(c *duckdb.Config) { c.MemoryLimit = "64MB" })
	_, err := query(ctx, small, "acme", "SELECT list(range) FROM range(100000000)")
	wantErr(t, err, backend.ErrResources)
	if strings.Contains(err.Error(), root) {
		t.Errorf("leaks path: %v", err)
	}
}

// slow runs for minutes unless interrupted.
const slow = "SELECT sum(a.range * b.range) AS s FROM range(100000000) a, range(100000) b"

func TestExecuteCancel(t *testing.T) {
	e, _ := newEngine(t)
	mustQuery(t, e, "acme", "SELECT 1") // open the tenant outside the timed part

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := query(ctx, e, "acme", slow)
		wantErr(t, err, backend.ErrDeadline)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("interrupt took %v", d)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(200*time.Millisecond, cancel) // the query runs for minutes: cancel lands mid-query
		defer timer.Stop()
		start := time.Now()
		_, err := query(ctx, e, "acme", slow)
		wantErr(t, err, backend.ErrCanceled)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("interrupt took %v", d)
		}
	})
	t.Run("QueryTimeout", func(t *testing.T) {
		short, _ := newEngine(t, func(c *duckdb.Config) { c.QueryTimeout = 200 * time.Millisecond })
		_, err := query(context.Background(), short, "acme", slow)
		wantErr(t, err, backend.ErrDeadline)
	})
	// The instance still works and no connection is stuck.
	if r := mustQuery(t, e, "acme", "SELECT 42 AS x"); r.values[0][0] != int32(42) {
		t.Fatal(r.values)
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

func TestDescribe(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	tbl := relSQL(bindTable(t, e, "acme", "t@1", "SELECT range AS id, 'n' AS name, 1.5::DOUBLE AS amount FROM range(10)"))
	for _, c := range []struct {
		sql       string
		numParams int
		want      []arrow.Field
	}{
		{"SELECT id, name FROM " + tbl + " WHERE id > ? AND name = ?", 2, []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		}},
		{"SELECT id, id, amount * 2 AS a2 FROM " + tbl + " LIMIT ?", 1, []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "a2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		}},
	} {
		d, err := e.Describe(ctx, "acme", c.sql, c.numParams)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		got := d.Result
		if want := arrow.NewSchema(c.want, nil); !got.Equal(want) {
			t.Errorf("%s:\n got %v\nwant %v", c.sql, got, want)
		}
		// Execute agrees with Describe.
		args := []any{int64(1), "n"}[:c.numParams]
		res := mustQuery(t, e, "acme", c.sql, args...)
		if !res.schema.Equal(got) {
			t.Errorf("Execute schema %v != Describe %v", res.schema, got)
		}
	}
	// A placeholder in the select list is typed only once bound: Describe
	// falls back to binding NULLs (the wrapper keeps distinct names).
	d, err := e.Describe(ctx, "acme", "SELECT ? + 1 AS a, ? AS b FROM "+tbl, 2)
	if got := d.Result; err != nil || got.NumFields() != 2 || got.Field(0).Name != "a" || got.Field(1).Name != "b" {
		t.Errorf("Describe with untyped placeholders = %v, %v", got, err)
	}
	// Describe does not run the query.
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := e.Describe(dctx, "acme", slow, 0); err != nil {
		t.Fatal(err)
	}
	_, err = e.Describe(ctx, "acme", "SELECT nope FROM "+tbl, 0)
	wantErr(t, err, backend.ErrQuery)
	if !errors.Is(err, backend.ErrQuery) || strings.Contains(err.Error(), "__lg_d") {
		t.Errorf("message shows the wrapper: %v", err)
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

func TestDescribeParams(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	tbl := relSQL(bindTable(t, e, "acme", "t@1", "SELECT range AS id, 'n' AS name FROM range(10)"))
	param := func(i int, typ arrow.DataType) arrow.Field {
		return arrow.Field{Name: "parameter_" + strconv.Itoa(i), Type: typ, Nullable: true}
	}
	for _, c := range []struct {
		sql       string
		numParams int
		want      []arrow.Field
	}{
		{"SELECT name FROM " + tbl + " WHERE id = ?", 1, []arrow.Field{
			param(1, arrow.PrimitiveTypes.Int64),
		}},
		{"SELECT id FROM " + tbl + " WHERE id > ? AND name = ?", 2, []arrow.Field{
			param(1, arrow.PrimitiveTypes.Int64),
			param(2, arrow.BinaryTypes.String),
		}},
		// DuckDB cannot type a bare placeholder: it stays Null.
		{"SELECT ? AS x", 1, []arrow.Field{
			param(1, arrow.Null),
		}},
		{"SELECT id FROM " + tbl, 0, []arrow.Field{}},
	} {
		d, err := e.Describe(ctx, "acme", c.sql, c.numParams)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if want := arrow.NewSchema(c.want, nil); !d.Params.Equal(want) {
			t.Errorf("%s: params\n got %v\nwant %v", c.sql, d.Params, want)
		}
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

func TestConcurrentUse(t *testing.T) {
	e, _ := newEngine(t)
	tenants := []string{"t1", "t2"}
	paths := map[string]string{}
	for _, tn := range tenants {
		paths[tn] = writeFile(t, e, tn, "t", "SELECT range AS id FROM range(100000)")
	}
	ctx := context.Background()
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			// Every goroutine binds the same version: one of each tenant
			// creates the view, the others find it.
			tn := tenants[i%2]
			rels, err := e.Bind(ctx, tn, []backend.LocalTable{{ID: "t@1", Paths: []string{paths[tn]}}})
			if err != nil {
				errs <- err
				return
			}
			res, err := query(ctx, e, tn, "SELECT id FROM "+relSQL(rels[0])+" WHERE id % ? = 0", int64(i+1))
			if err == nil && res.rows != int64((100000+i)/(i+1)) {
				err = errors.New("wrong row count")
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, tn := range tenants {
		if in := e.ConnsInUse(tn); in != 0 {
			t.Errorf("%s: %d connections in use", tn, in)
		}
	}
}

// TestExecuteFixedWidthTypes reads every fixed-width type (which Execute
// copies from DuckDB's vectors itself) with nulls, over partial chunks (the
// filter) and several batches, and checks each column's non-null count and
// sum against DuckDB's own aggregates.
func TestExecuteFixedWidthTypes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e, _ := newEngine(t, func(c *duckdb.Config) { c.Allocator = mem })
	const src = `SELECT
		CASE WHEN r % 7 = 0 THEN NULL ELSE (r % 100)::TINYINT END AS i8,
		(r % 30000)::SMALLINT AS i16,
		CASE WHEN r % 5 = 0 THEN NULL ELSE r::INTEGER END AS i32,
		r::BIGINT AS i64,
		(r % 200)::UTINYINT AS u8,
		(r % 60000)::USMALLINT AS u16,
		CASE WHEN r % 11 = 0 THEN NULL ELSE r::UINTEGER END AS u32,
		r::UBIGINT AS u64,
		(r / 4)::FLOAT AS f32,
		CASE WHEN r % 3 = 1 THEN NULL ELSE r / 8 END AS f64,
		DATE '2000-01-01' + (r % 5000)::INTEGER AS d,
		TIMESTAMP '2000-01-01' + to_microseconds(r) AS ts,
		(TIMESTAMP '2000-01-01' + to_microseconds(r))::TIMESTAMP_NS AS tsns,
		(TIMESTAMP '2000-01-01' + to_seconds(r))::TIMESTAMP_S AS tss,
		TIMESTAMPTZ '2000-01-01 00:00:00+00' + to_microseconds(r) AS tstz,
		TIME '00:00:00' + to_microseconds(r) AS tm,
		CASE WHEN r % 13 = 0 THEN NULL ELSE r % 2 = 0 END AS b,
		((r % 1000 - 500) / 100)::DECIMAL(4,2) AS dec2,
		CASE WHEN r % 17 = 0 THEN NULL ELSE ((r - 150000) / 100)::DECIMAL(9,2) END AS dec4,
		((r - 150000) * 1.5)::DECIMAL(18,3) AS dec8,
		((r - 150000) * 0.5)::DECIMAL(38,1) AS dec16,
		(r - 150000)::HUGEINT AS hi
		FROM range(300000) t(r) WHERE r % 3 <> 2`
	for q, want := range map[string]bool{
		src:                             true,
		"SELECT 1 AS x, 'a' AS s":       true,
		"SELECT 'a'::BLOB AS b":         true,
		"SELECT [1] AS l":               false, // LIST
		"SELECT 1.5::DECIMAL(4,1) AS d": true,
	} {
		if got, err := e.DirectPath("acme", q); err != nil || got != want {
			t.Errorf("DirectPath(%.40q) = %v, %v; want %v", q, got, err, want)
		}
	}
	res := mustQuery(t, e, "acme", src)
	if res.rows != 200000 || len(res.batches) < 3 {
		t.Fatalf("rows = %d, batches %v", res.rows, res.batches)
	}

	// Re-read, summing each column in Go, and compare with DuckDB's sums of
	// the same values (as integers: epoch units, days, booleans as 0/1).
	rr, err := e.Execute(context.Background(), "acme", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	n := rr.Schema().NumFields()
	counts := make([]int64, n)
	sums := make([]float64, n)
	for rr.Next() {
		rec := rr.RecordBatch()
		for j, col := range rec.Columns() {
			for k := 0; k < col.Len(); k++ {
				if col.IsNull(k) {
					continue
				}
				counts[j]++
				sums[j] += numeric(t, col, k)
			}
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	var aggs []string
	for _, f := range rr.Schema().Fields() {
		c := f.Name
		var v string
		switch f.Type.ID() {
		case arrow.DATE32:
			v = "(" + c + " - DATE '1970-01-01')"
		case arrow.TIMESTAMP:
			switch f.Type.(*arrow.TimestampType).Unit {
			case arrow.Second:
				v = "epoch(" + c + ")"
			case arrow.Nanosecond:
				v = "epoch_ns(" + c + ")"
			default:
				v = "epoch_us(" + c + ")"
			}
		case arrow.TIME64:
			v = "epoch_us(" + c + ")"
		case arrow.BOOL:
			v = c + "::INTEGER"
		case arrow.DECIMAL128:
			v = c + "::DOUBLE"
		default:
			v = c
		}
		aggs = append(aggs, "count("+c+")::BIGINT", "coalesce(sum("+v+"), 0)::DOUBLE")
	}
	want := mustQuery(t, e, "acme", "SELECT "+strings.Join(aggs, ", ")+" FROM ("+src+")")
	for j, f := range rr.Schema().Fields() {
		wc, ws := want.values[0][2*j], want.values[0][2*j+1].(float64)
		if wc != counts[j] {
			t.Errorf("%s (%s): count %d, want %d", f.Name, f.Type, counts[j], wc)
		}
		if diff := sums[j] - ws; diff > 1e-6*max(1, ws) || diff < -1e-6*max(1, ws) {
			t.Errorf("%s (%s): sum %v, want %v", f.Name, f.Type, sums[j], ws)
		}
	}
	rr.Release()
	rr = nil
	mem.AssertSize(t, 0)
}

// TestExecuteStrings reads VARCHAR and BLOB columns through the direct path:
// empty values, values held inline by DuckDB (≤ 12 bytes) and values it
// points to, multi-byte UTF-8, NULLs, and enough rows for several chunks
// and batches. Every value is checked against the one Go builds from the
// row number.
func TestExecuteStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e, _ := newEngine(t, func(c *duckdb.Config) { c.Allocator = mem })
	const rows = 150000
	// s: r%9 = 0 is NULL, else r%40 copies of 'x' (or of 'é' when r is odd)
	// then r; b: the same bytes as a BLOB, NULL when r%7 = 0.
	src := fmt.Sprintf(`SELECT r,
		CASE WHEN r %% 9 = 0 THEN NULL ELSE repeat(CASE WHEN r %% 2 = 1 THEN 'é' ELSE 'x' END, (r %% 40)::INTEGER) || r::VARCHAR END AS s,
		CASE WHEN r %% 7 = 0 THEN NULL ELSE encode(repeat(CASE WHEN r %% 2 = 1 THEN 'é' ELSE 'x' END, (r %% 40)::INTEGER) || r::VARCHAR) END AS b,
		'' AS empty
		FROM range(%d) t(r)`, rows)
	if direct, err := e.DirectPath("acme", src); err != nil || !direct {
		t.Fatalf("DirectPath = %v, %v; want true", direct, err)
	}
	want := func(r int64) string {
		ch := "x"
		if r%2 == 1 {
			ch = "é"
		}
		return strings.Repeat(ch, int(r%40)) + strconv.FormatInt(r, 10)
	}
	rr, err := e.Execute(context.Background(), "acme", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen, batches := int64(0), 0
	for rr.Next() {
		rec := rr.RecordBatch()
		batches++
		rs := rec.Column(0).(*array.Int64)
		ss := rec.Column(1).(*array.String)
		bs := rec.Column(2).(*array.Binary)
		es := rec.Column(3).(*array.String)
		for k := 0; k < int(rec.NumRows()); k++ {
			r := rs.Value(k)
			if r != seen {
				t.Fatalf("row %d: r = %d", seen, r)
			}
			seen++
			if got := ss.IsNull(k); got != (r%9 == 0) {
				t.Fatalf("row %d: s null = %v", r, got)
			} else if !got && ss.Value(k) != want(r) {
				t.Fatalf("row %d: s = %q, want %q", r, ss.Value(k), want(r))
			}
			if got := bs.IsNull(k); got != (r%7 == 0) {
				t.Fatalf("row %d: b null = %v", r, got)
			} else if !got && string(bs.Value(k)) != want(r) {
				t.Fatalf("row %d: b = %q, want %q", r, bs.Value(k), want(r))
			}
			if es.IsNull(k) || es.Value(k) != "" {
				t.Fatalf("row %d: empty = %q", r, es.Value(k))
			}
		}
		for j, col := range []interface{ ValidateFull() error }{ss, bs, es} {
			if err := col.ValidateFull(); err != nil {
				t.Fatalf("batch %d, column %d: %v", batches, j+1, err)
			}
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	rr.Release()
	if seen != rows || batches < 3 {
		t.Fatalf("%d rows in %d batches; want %d rows in at least 3", seen, batches, rows)
	}
	mem.AssertSize(t, 0)
}

// numeric returns value k of col as a float64 in the units the test's
// DuckDB aggregates use.
func numeric(t *testing.T, col arrow.Array, k int) float64 {
	switch c := col.(type) {
	case *array.Int8:
		return float64(c.Value(k))
	case *array.Int16:
		return float64(c.Value(k))
	case *array.Int32:
		return float64(c.Value(k))
	case *array.Int64:
		return float64(c.Value(k))
	case *array.Uint8:
		return float64(c.Value(k))
	case *array.Uint16:
		return float64(c.Value(k))
	case *array.Uint32:
		return float64(c.Value(k))
	case *array.Uint64:
		return float64(c.Value(k))
	case *array.Float32:
		return float64(c.Value(k))
	case *array.Float64:
		return c.Value(k)
	case *array.Date32:
		return float64(c.Value(k))
	case *array.Timestamp:
		return float64(c.Value(k))
	case *array.Time64:
		return float64(c.Value(k))
	case *array.Decimal128:
		return c.Value(k).ToFloat64(c.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Boolean:
		if c.Value(k) {
			return 1
		}
		return 0
	}
	t.Fatalf("unexpected column type %s", col.DataType())
	return 0
}

// TestOneStatementOnly: text holding several statements runs none of them,
// whichever comes first (the gate already prints exactly one; DuckDB's
// prepare refuses more).
func TestOneStatementOnly(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	for _, sql := range []string{
		"SELECT 1; SELECT 2",
		"SELECT 1; CREATE TABLE lg_empty.second AS SELECT 2 AS x",
		"CREATE TABLE lg_empty.first AS SELECT 1 AS x; SELECT 2",
	} {
		_, err := query(ctx, e, "acme", sql)
		wantErr(t, err, backend.ErrQuery)
		_, err = e.Describe(ctx, "acme", sql, 0)
		wantErr(t, err, backend.ErrQuery)
	}
	for _, table := range []string{"lg_empty.first", "lg_empty.second"} {
		_, err := query(ctx, e, "acme", "SELECT * FROM "+table)
		wantErr(t, err, backend.ErrQuery) // never created
	}
	// The control: one statement of the same kind does run.
	mustQuery(t, e, "acme", "CREATE TABLE lg_empty.control AS SELECT 1 AS x")
	if r := mustQuery(t, e, "acme", "SELECT x FROM lg_empty.control"); r.rows != 1 {
		t.Fatalf("control: %d rows", r.rows)
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

// TestExecuteCancelMidStream reads the first batch of a result of ten
// billion rows (80 GB: only a streamed result returns it promptly) and
// cancels while the caller is reading.
func TestExecuteCancelMidStream(t *testing.T) {
	e, _ := newEngine(t)
	for range 3 { // the connection is reusable afterwards
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		rr, err := e.Execute(ctx, "acme", "SELECT range AS x FROM range(10000000000)", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("first batch after %v", d)
		}
		cancel()
		for rr.Next() {
		}
		wantErr(t, rr.Err(), backend.ErrCanceled)
		rr.Release()
		if in := e.ConnsInUse("acme"); in != 0 {
			t.Errorf("%d connections still in use", in)
		}
		if r := mustQuery(t, e, "acme", "SELECT 42 AS x"); r.values[0][0] != int32(42) {
			t.Fatal(r.values)
		}
	}
}

// TestVerify: the engine's second line of defence refuses, before running
// it, any statement DuckDB's own parser sees reading outside the relations
// the gate issues; what the gate prints passes.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t, verifying)
	tbl := relSQL(bindTable(t, e, "acme", "t@1", "SELECT range AS id FROM range(3)"))
	for _, sql := range []string{
		"SELECT 1",
		"SELECT * FROM " + tbl + " AS t WHERE id > 0",
		`WITH "__cte1_x" AS (SELECT id FROM ` + tbl + `) SELECT * FROM "__cte1_x"`,
		`SELECT * FROM (SELECT id FROM ` + tbl + ` AS "__lg_p" WHERE (id > 0)) AS "t"`,
		`SELECT * FROM (VALUES (1, 'a')) AS "__lg_values" ("a", "b")`,
		"SELECT id FROM " + tbl + " WHERE id IN (SELECT id FROM " + tbl + ")",
		"EXPLAIN SELECT * FROM " + tbl,
	} {
		if _, err := query(ctx, e, "acme", sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
	for _, sql := range []string{
		"SELECT * FROM range(3)",
		"SELECT * FROM read_csv('x.csv')",
		"SELECT * FROM lg_empty.t",
		"SELECT * FROM main.t",
		"SELECT * FROM memory.lg_rel.x",
		`WITH x AS (SELECT 1) SELECT * FROM x`,
		"SELECT id FROM " + tbl + " WHERE id IN (SELECT range FROM range(2))",
		"SELECT 1; SELECT 2",
		"CREATE TABLE lg_empty.t AS SELECT 1",
		"SELEC 1",
		"EXPLAIN ANALYZE SELECT * FROM " + tbl,
		"EXPLAIN SELECT * FROM range(3)",
	} {
		_, err := query(ctx, e, "acme", sql)
		if !errors.Is(err, duckdb.ErrUnverified) {
			t.Errorf("%s: %v, want ErrUnverified", sql, err)
		}
		if _, err := e.Describe(ctx, "acme", sql, 0); !errors.Is(err, duckdb.ErrUnverified) {
			t.Errorf("Describe %s: %v, want ErrUnverified", sql, err)
		}
	}
}
