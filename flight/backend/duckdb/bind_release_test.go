package duckdb_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// relations lists the views and tables in the tenant's relation schema, as
// DuckDB's catalog has them.
func relations(t *testing.T, e *duckdb.Engine, tenant string) []string {
	t.Helper()
	r := mustQuery(t, e, tenant, `SELECT name FROM (
		SELECT view_name AS name FROM duckdb_views() WHERE schema_name = 'lg_rel'
		UNION ALL SELECT table_name FROM duckdb_tables() WHERE schema_name = 'lg_rel') ORDER BY name`)
	names := []string{}
	for _, row := range r.values {
		names = append(names, row[0].(string))
	}
	return names
}

// TestBindReleasesSuperseded: a statement reading version 1 keeps reading
// it while version 2 is committed and bound; once that statement ends,
// version 1's view (or in-memory copy) is dropped; the current version's
// never is. A statement that binds the older version again gets it back,
// until it ends.
func TestBindReleasesSuperseded(t *testing.T) {
	for _, c := range []struct {
		name     string
		mod      func(*duckdb.Config)
		inMemory bool
	}{
		{"views", func(c *duckdb.Config) { c.MaterializeBytes = -1 }, false},
		{"copies", func(*duckdb.Config) {}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := newEngine(t, c.mod)
			const rows = 300_000
			files := map[string]string{
				"t@1": writeFile(t, e, "acme", "t", fmt.Sprintf("SELECT range AS id FROM range(%d)", rows)),
				"t@2": writeFile(t, e, "acme", "t", "SELECT range AS id FROM range(7)"),
			}
			bind := func(ctx context.Context, id string) backend.Relation {
				t.Helper()
				rels, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: id, Paths: []string{files[id]}}})
				if err != nil {
					t.Fatalf("Bind %s: %v", id, err)
				}
				return rels[0]
			}

			ctx1, end1 := context.WithCancel(context.Background())
			defer end1()
			rel1 := bind(ctx1, "t@1")
			if got := e.InMemory("acme", []string{"t@1"}); got != c.inMemory {
				t.Fatalf("InMemory(t@1) = %v, want %v", got, c.inMemory)
			}
			rr, err := e.Execute(ctx1, "acme", "SELECT id FROM "+relSQL(rel1), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			if !rr.Next() {
				t.Fatalf("no first batch: %v", rr.Err())
			}
			read := rr.RecordBatch().NumRows()

			// Version 2 is committed and bound by another statement,
			// which ends.
			ctx2, end2 := context.WithCancel(context.Background())
			rel2 := bind(ctx2, "t@2")
			if r := mustQuery(t, e, "acme", "SELECT count(*) FROM "+relSQL(rel2)); r.values[0][0] != int64(7) {
				t.Fatalf("t@2: %v", r.values)
			}
			end2()
			e.WaitReleases("acme")
			if got, want := relations(t, e, "acme"), []string{"v_t@1", "v_t@2"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("while t@1 is read: relations %v, want %v", got, want)
			}

			// The statement over version 1 reads to its end.
			for rr.Next() {
				read += rr.RecordBatch().NumRows()
			}
			if err := rr.Err(); err != nil || read != rows {
				t.Fatalf("t@1's stream: %d rows, %v", read, err)
			}
			rr.Release()
			end1()
			e.WaitReleases("acme")
			if got, want := relations(t, e, "acme"), []string{"v_t@2"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("after t@1's statement ended: relations %v, want %v", got, want)
			}
			if e.InMemory("acme", []string{"t@1"}) {
				t.Error("InMemory(t@1) after it was dropped")
			}

			// A statement over the older version binds it again; it goes
			// once that statement ends. Version 2 stays throughout.
			ctx3, end3 := context.WithCancel(context.Background())
			rel1 = bind(ctx3, "t@1")
			r, err := query(ctx3, e, "acme", "SELECT count(*) FROM "+relSQL(rel1))
			if err != nil || r.values[0][0] != int64(rows) {
				t.Fatalf("t@1 bound again: %v, %v", r, err)
			}
			end3()
			e.WaitReleases("acme")
			if got, want := relations(t, e, "acme"), []string{"v_t@2"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("after the second t@1 statement: relations %v, want %v", got, want)
			}
			if r := mustQuery(t, e, "acme", "SELECT count(*) FROM "+relSQL(rel2)); r.values[0][0] != int64(7) {
				t.Fatalf("t@2 at the end: %v", r.values)
			}
		})
	}
}

// TestBindFailureReleases: a Bind that fails holds nothing: the versions
// it bound before the failure are released at once.
func TestBindFailureReleases(t *testing.T) {
	e, _ := newEngine(t, func(c *duckdb.Config) { c.MaterializeBytes = -1 })
	bindTable(t, e, "acme", "t@2", "SELECT 2 AS a") // current, held for good
	p1 := writeFile(t, e, "acme", "t", "SELECT 1 AS a")
	ctx, end := context.WithCancel(context.Background())
	defer end()
	_, err := e.Bind(ctx, "acme", []backend.LocalTable{
		{ID: "t@1", Paths: []string{p1}},
		{ID: "u@1", Columns: []backend.Column{{Name: "x", Type: "list<item: int64>"}}},
	})
	wantErr(t, err, backend.ErrQuery)
	if got, want := relations(t, e, "acme"), []string{"v_t@2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a failed Bind: relations %v, want %v", got, want)
	}
}

// TestBindConcurrentVersions: statements bind and read the versions of a
// table while new versions are committed and bound; every statement reads
// the rows of the version it bound, and at the end only the current
// version's view is left. Run it under -race.
func TestBindConcurrentVersions(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*duckdb.Config)
	}{
		{"views", func(c *duckdb.Config) { c.MaterializeBytes = -1 }},
		{"copies", func(*duckdb.Config) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _ := newEngine(t, c.mod)
			const versions, readers, reads = 12, 4, 15
			files := make([]string, versions+1)
			for v := 1; v <= versions; v++ { // version v has v rows
				files[v] = writeFile(t, e, "acme", "t", fmt.Sprintf("SELECT range AS id FROM range(%d)", v))
			}
			// statement binds version v under its own context, counts its
			// rows and ends.
			statement := func(v int) error {
				ctx, end := context.WithCancel(context.Background())
				defer end()
				id := fmt.Sprintf("t@%d", v)
				rels, err := e.Bind(ctx, "acme", []backend.LocalTable{{ID: id, Paths: []string{files[v]}}})
				if err != nil {
					return fmt.Errorf("bind %s: %w", id, err)
				}
				r, err := query(ctx, e, "acme", "SELECT count(*) FROM "+relSQL(rels[0]))
				if err != nil {
					return fmt.Errorf("read %s: %w", id, err)
				}
				if r.values[0][0] != int64(v) {
					return fmt.Errorf("%s has %v rows, want %d", id, r.values[0][0], v)
				}
				return nil
			}
			var current atomic.Int64
			current.Store(1)
			if err := statement(1); err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, readers*reads+versions)
			var wg sync.WaitGroup
			for range readers {
				wg.Go(func() {
					for i := range reads {
						v := int(current.Load())
						if i%3 == 2 && v > 1 {
							v-- // a statement planned before the last commit
						}
						if err := statement(v); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Go(func() {
				for v := 2; v <= versions; v++ {
					if err := statement(v); err != nil {
						errs <- err
					}
					current.Store(int64(v))
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			e.WaitReleases("acme")
			want := []string{fmt.Sprintf("v_t@%d", versions)}
			if got := relations(t, e, "acme"); !reflect.DeepEqual(got, want) {
				t.Fatalf("relations at the end %v, want %v", got, want)
			}
		})
	}
}
