package duckdb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
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

	// A wide row reaches MinBatchBytes before MinBatchRows.
	res = mustQuery(t, e, "acme", "SELECT repeat('x', 1000) AS s FROM range(100000)")
	for i, b := range res.batches[:len(res.batches)-1] {
		if b >= backend.MinBatchRows || int64(b)*1000 < backend.MinBatchBytes {
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
	writeTable(t, e, "acme", "s", "t", "SELECT range AS id, 'n' || range::VARCHAR AS name FROM range(100)")
	if _, err := e.Resolve(context.Background(), "acme", []backend.TableName{{Schema: "s", Name: "t"}}); err != nil {
		t.Fatal(err)
	}
	res := mustQuery(t, e, "acme", "SELECT id, name FROM lg_rel.s__t WHERE id >= ? AND name <> ? ORDER BY id LIMIT ?", int64(90), "n95", int64(3))
	if len(res.values) != 3 || res.values[0][0] != int64(90) || res.values[2][0] != int64(92) {
		t.Fatalf("values = %v", res.values)
	}
	// A parameter is a value, never SQL.
	res = mustQuery(t, e, "acme", "SELECT count(*) AS n FROM lg_rel.s__t WHERE name = ?", "n1' OR '1'='1")
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
	writeTable(t, e, "acme", "s", "t", "SELECT range AS id, 'n' AS name, 1.5::DOUBLE AS amount FROM range(10)")
	if _, err := e.Resolve(ctx, "acme", []backend.TableName{{Schema: "s", Name: "t"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql       string
		numParams int
		want      []arrow.Field
	}{
		{"SELECT id, name FROM lg_rel.s__t WHERE id > ? AND name = ?", 2, []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		}},
		{"SELECT id, id, amount * 2 AS a2 FROM lg_rel.s__t LIMIT ?", 1, []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "a2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		}},
	} {
		got, err := e.Describe(ctx, "acme", c.sql, c.numParams)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
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
	// Describe does not run the query.
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := e.Describe(dctx, "acme", slow, 0); err != nil {
		t.Fatal(err)
	}
	_, err := e.Describe(ctx, "acme", "SELECT nope FROM lg_rel.s__t", 0)
	wantErr(t, err, backend.ErrQuery)
	if !errors.Is(err, backend.ErrQuery) || strings.Contains(err.Error(), "__lg_d") {
		t.Errorf("message shows the wrapper: %v", err)
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

func TestConcurrentUse(t *testing.T) {
	e, _ := newEngine(t)
	tenants := []string{"t1", "t2"}
	for _, tn := range tenants {
		writeTable(t, e, tn, "s", "t", "SELECT range AS id FROM range(100000)")
	}
	ctx := context.Background()
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			tn := tenants[i%2]
			if _, err := e.Resolve(ctx, tn, []backend.TableName{{Schema: "s", Name: "t"}}); err != nil {
				errs <- err
				return
			}
			res, err := query(ctx, e, tn, "SELECT id FROM lg_rel.s__t WHERE id % ? = 0", int64(i+1))
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
