package flight

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/grpc/codes"

	"lakegate/flight/backend"
)

// describeCounter is a Backend that counts Describe calls: each one is a
// statement planned (or taken from the engine's cache) for a result schema.
// Of the engine's other interfaces it passes InMemory through, not
// ColumnFact: statements take the form they take without column facts.
type describeCounter struct {
	backend.Backend
	describes atomic.Int64
}

func (d *describeCounter) Describe(ctx context.Context, tenant, sql string, numParams int) (backend.Description, error) {
	d.describes.Add(1)
	return d.Backend.Describe(ctx, tenant, sql, numParams)
}

// InMemory passes the engine's answer through (planner_tables.go asks it).
func (d *describeCounter) InMemory(tenant string, ids []string) bool {
	m, ok := d.Backend.(inMemory)
	return ok && m.InMemory(tenant, ids)
}

// countingLake is newLake with its engine behind a describeCounter.
func countingLake(t *testing.T) (*lake, *describeCounter) {
	var counter *describeCounter
	l := newLake(t, func(c *Config) {
		counter = &describeCounter{Backend: c.Backend}
		c.Backend = counter
	})
	return l, counter
}

// TestReuseAcrossChanges runs one statement again and again — prepared
// (DoPut, GetFlightInfo, DoGet) and plain (GetFlightInfo, DoGet) — while its
// table and policies change under it: its plan is reused (no Describe)
// while nothing it depends on changed, and never across a change. A row
// filter or a mask set between two runs applies to the very next one, and
// so does its removal; a new version is read by the next run; a dropped
// table fails the next run as a missing one.
func TestReuseAcrossChanges(t *testing.T) {
	for _, way := range []string{"prepared", "plain"} {
		t.Run(way, func(t *testing.T) {
			l, counter := countingLake(t)
			cl := l.client(t)
			seedOrders(t, cl)
			ctx := bearerCtx(aliceToken)
			run := func() ([][]string, error) {
				return runQuery(ctx, cl, "SELECT id, amount FROM sales.orders ORDER BY id")
			}
			if way == "prepared" {
				prep, err := cl.Prepare(ctx, "SELECT id, amount FROM sales.orders WHERE id >= ? ORDER BY id")
				if err != nil {
					t.Fatal(err)
				}
				defer prep.Close(ctx)
				param := schemaOf("parameter_1", arrow.PrimitiveTypes.Int64)
				run = func() ([][]string, error) {
					return executePrepared(ctx, cl, prep, param, `[{"parameter_1":1}]`)
				}
			}
			setPolicy := func(p *backend.TablePolicy) {
				l.cat.set("sales.orders", func(tb *lakeTable) { tb.versions[len(tb.versions)-1].Policy = p })
			}
			both := [][]string{{"1", "1.5"}, {"2", "2.5"}}
			for i, step := range []struct {
				name     string
				change   func()
				want     [][]string
				code     codes.Code
				describe bool // the run plans the statement again
			}{
				// A plain statement is planned at its first run; a prepared
				// one was planned when it was prepared.
				{"first", func() {}, both, codes.OK, way == "plain"},
				{"unchanged", func() {}, both, codes.OK, false},
				{"generation moved, nothing else", func() { l.cat.set("sales.orders", func(*lakeTable) {}) }, both, codes.OK, false},
				{"row filter set", func() { setPolicy(&backend.TablePolicy{RowFilter: "id <> 2", FilterPolicy: "no_two"}) }, [][]string{{"1", "1.5"}}, codes.OK, true},
				{"row filter kept", func() {}, [][]string{{"1", "1.5"}}, codes.OK, false},
				{"mask set", func() {
					setPolicy(&backend.TablePolicy{Masks: []backend.ColumnMask{{Column: "amount", Mask: "NULL", Policy: "hide_amount"}}})
				}, [][]string{{"1", "(null)"}, {"2", "(null)"}}, codes.OK, true},
				{"policies removed", func() { setPolicy(nil) }, both, codes.OK, true},
				{"new version", func() {
					if _, err := cl.ExecuteUpdate(ctx, "INSERT INTO sales.orders VALUES (3, 3.5)"); err != nil {
						t.Fatal(err)
					}
				}, append(slices.Clone(both), []string{"3", "3.5"}), codes.OK, true},
				{"table dropped", func() {
					if _, err := cl.ExecuteUpdate(ctx, "DROP TABLE sales.orders"); err != nil {
						t.Fatal(err)
					}
				}, nil, codes.NotFound, false},
			} {
				step.change()
				before := counter.describes.Load()
				rows, err := run()
				if step.code != codes.OK {
					checkStatus(t, err, step.code, "table sales.orders does not exist")
					continue
				}
				if err != nil {
					t.Fatalf("%d %s: %v", i, step.name, err)
				}
				if !slices.EqualFunc(rows, step.want, slices.Equal) {
					t.Errorf("%s: rows %v, want %v", step.name, rows, step.want)
				}
				if planned := counter.describes.Load() > before; planned != step.describe {
					t.Errorf("%s: planned again = %v, want %v", step.name, planned, step.describe)
				}
			}
		})
	}
}

// TestPreparedConcurrentSessions: two sessions executing the same prepared
// statement at once, with their own parameters, each read their own rows.
// Run it with -race.
func TestPreparedConcurrentSessions(t *testing.T) {
	l := newLake(t, nil)
	seedOrders(t, l.client(t))
	param := schemaOf("parameter_1", arrow.PrimitiveTypes.Int64)
	want := map[int][]string{1: {"1", "1.5"}, 2: {"2", "2.5"}}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for id := range 2 {
		cl := l.client(t)
		wg.Go(func() {
			ctx := bearerCtx(aliceToken)
			prep, err := cl.Prepare(ctx, "SELECT id, amount FROM sales.orders WHERE id = ?")
			if err != nil {
				errs <- err
				return
			}
			defer prep.Close(ctx)
			for range 20 {
				rows, err := executePrepared(ctx, cl, prep, param, fmt.Sprintf(`[{"parameter_1":%d}]`, id+1))
				if err != nil {
					errs <- err
					return
				}
				if len(rows) != 1 || !slices.Equal(rows[0], want[id+1]) {
					errs <- fmt.Errorf("id %d: %v", id+1, rows)
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
