package duckdb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// TestPreparedOnce: a statement is prepared once for its Describe and
// every execution that follows (Flight's GetFlightInfo then DoGet, or a
// prepared statement executed again and again), with or without
// parameters.
func TestPreparedOnce(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	rel := bindTable(t, e, "acme", "orders@1", "SELECT range AS id, range * 10 AS amount FROM range(1, 101)")
	scan := "SELECT id, amount FROM " + relSQL(rel) + " WHERE id = ?"
	for _, tc := range []struct {
		name   string
		sql    string
		params int
		args   func(i int) []any
		want   func(i int) [][]any
	}{
		{"select 1", "SELECT 1 AS one", 0, func(int) []any { return nil }, func(int) [][]any { return [][]any{{int32(1)}} }},
		{"scan", "SELECT count(*) AS n FROM " + relSQL(rel), 0, func(int) []any { return nil }, func(int) [][]any { return [][]any{{int64(100)}} }},
		{"point lookup", scan, 1, func(i int) []any { return []any{int64(i + 1)} }, func(i int) [][]any { return [][]any{{int64(i + 1), int64(10 * (i + 1))}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.Prepares("acme")
			for i := range 5 {
				if _, err := e.Describe(ctx, "acme", tc.sql, tc.params); err != nil {
					t.Fatal(err)
				}
				r := mustQuery(t, e, "acme", tc.sql, tc.args(i)...)
				if fmt.Sprint(r.values) != fmt.Sprint(tc.want(i)) {
					t.Fatalf("execution %d: %v, want %v", i, r.values, tc.want(i))
				}
			}
			if n := e.Prepares("acme") - before; n != 1 {
				t.Errorf("5 × Describe + Execute prepared %d statements, want 1", n)
			}
		})
	}
}

// TestPreparedReuseRetired: a cached statement is never used across a
// view change. A new version bound retires the statements prepared
// before it (the next Describe and Execute prepare again and read the same
// rows); an in-memory copy dropped under a statement makes its next
// execution fail as a missing relation, not run the cached plan; bound
// again, it reads the version again.
func TestPreparedReuseRetired(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	e, _ := newEngine(t, func(c *duckdb.Config) { c.QueryTimeout, c.Now = time.Minute, clk.Now })
	p1 := writeFile(t, e, "acme", "t", "SELECT range AS id FROM range(1, 11)")
	v1 := []backend.LocalTable{{ID: "t@1", Paths: []string{p1}}}
	rels, err := e.Bind(ctx, "acme", v1)
	if err != nil {
		t.Fatal(err)
	}
	if !e.InMemory("acme", []string{"t@1"}) {
		t.Fatal("t@1 was not copied into memory")
	}
	q1 := "SELECT count(*) AS n FROM " + relSQL(rels[0])
	run := func(sql string, want int64) {
		t.Helper()
		if _, err := e.Describe(ctx, "acme", sql, 0); err != nil {
			t.Fatal(err)
		}
		if r := mustQuery(t, e, "acme", sql); r.values[0][0] != want {
			t.Fatalf("%s: %v, want %d", sql, r.values, want)
		}
	}
	run(q1, 10)
	prepares := e.Prepares("acme")
	run(q1, 10)
	if n := e.Prepares("acme"); n != prepares {
		t.Fatalf("unchanged views: prepared %d more", n-prepares)
	}

	// A new version: a new view, and the generation moves on.
	p2 := writeFile(t, e, "acme", "t", "SELECT range AS id FROM range(1, 21)")
	rels2, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: "t@2", Paths: []string{p2}}})
	if err != nil {
		t.Fatal(err)
	}
	prepares = e.Prepares("acme") // Bind's own statements are counted too
	run(q1, 10)
	if n := e.Prepares("acme"); n != prepares+1 {
		t.Fatalf("after a new version: prepared %d, want 1 (the statement again)", n-prepares)
	}
	run("SELECT count(*) AS n FROM "+relSQL(rels2[0]), 20)

	// The copy of t@1 dropped as idle: the same text no longer runs.
	clk.Advance(10 * time.Minute)
	run("SELECT count(*) AS n FROM "+relSQL(rels2[0]), 20) // t@2 stays recent
	if freed := e.DropIdleCopies(ctx, time.Minute); freed == 0 {
		t.Fatal("the copy of t@1 was not dropped")
	}
	if _, err := query(ctx, e, "acme", q1); err == nil {
		t.Fatal("a dropped relation still answered from the cached statement")
	} else {
		wantErr(t, err, backend.ErrQuery)
	}
	if _, err := e.Describe(ctx, "acme", q1, 0); err == nil {
		t.Fatal("a dropped relation still described from the cached statement")
	}
	if _, err := e.Bind(ctx, "acme", v1); err != nil {
		t.Fatal(err)
	}
	run(q1, 10)
}

// TestPreparedConcurrent: sessions executing the same statement at once
// each get a statement of their own (a DuckDB prepared statement belongs
// to its connection and is not shared between goroutines), each with its
// own parameters. Run it with -race.
func TestPreparedConcurrent(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	rel := bindTable(t, e, "acme", "orders@1", "SELECT range AS id, range * 10 AS amount FROM range(1, 1001)")
	sql := "SELECT id, amount FROM " + relSQL(rel) + " WHERE id = ?"
	const sessions, runs = 6, 30
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for g := range sessions {
		wg.Go(func() {
			for i := range runs {
				id := int64(1 + (g*runs+i)%1000)
				if i%3 == 0 {
					if _, err := e.Describe(ctx, "acme", sql, 1); err != nil {
						errs <- err
						return
					}
				}
				r, err := query(ctx, e, "acme", sql, id)
				if err != nil {
					errs <- err
					return
				}
				if len(r.values) != 1 || r.values[0][0] != id || r.values[0][1] != 10*id {
					errs <- fmt.Errorf("session %d, id %d: %v", g, id, r.values)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
