package flight

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"lakegate/flight/backend"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// heldSpeculation registers, as st's speculation of tenant, one that has
// opened holding the permit release gives back; closed reports whether it
// was closed.
func heldSpeculation(ss *speculations, st *prepared, tenant string, release func()) (sp *speculation, closed *bool) {
	closed = new(bool)
	ready := make(chan struct{})
	close(ready)
	sp = &speculation{st: st, tenant: tenant, cancel: func() {}, ready: ready,
		o: &openStatement{close: func() { *closed = true; release() }}}
	ss.producers.Add(1) // as Server.opening does
	st.mu.Lock()
	ss.putLocked(st, sp)
	st.mu.Unlock()
	return sp, closed
}

// TestSpeculationYieldsItsPermit: a statement that finds no free permit
// takes one back from a speculation not yet claimed — of its tenant, or of
// another tenant for a global permit — and never from one already claimed.
func TestSpeculationYieldsItsPermit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		specTenant string // the speculation's tenant; the statement's is "acme"
	}{
		{"same tenant", "acme"},
		{"another tenant, global limit", "beta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var producers sync.WaitGroup
			ss := newSpeculations(&producers)
			// One permit per tenant and one in all: the speculation holds
			// both the statement could use. The queue deadline is long, so
			// only a yield lets acquire return.
			a := newAdmission(workExecute, 1, 1, long)
			a.yield = ss.yield
			st := &prepared{}
			_, closed := heldSpeculation(ss, st, tc.specTenant, mustAcquire(t, a, tc.specTenant))
			release, err := a.acquire(context.Background(), "acme")
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			defer release()
			if !*closed {
				t.Error("the speculation was not closed")
			}
			if st.spec != nil {
				t.Error("the statement still has its speculation")
			}
			producers.Wait() // returns once the speculation is accounted for
		})
	}

	t.Run("a claimed speculation keeps its permit", func(t *testing.T) {
		var producers sync.WaitGroup
		ss := newSpeculations(&producers)
		a := newAdmission(workExecute, 1, 1, time.Millisecond)
		a.yield = ss.yield
		st := &prepared{}
		sp, closed := heldSpeculation(ss, st, "acme", mustAcquire(t, a, "acme"))
		if got := ss.take(st, nil); got != sp {
			t.Fatal("take did not return the speculation")
		}
		if _, err := a.acquire(context.Background(), "acme"); !errors.Is(err, errTooManyQueries) {
			t.Fatalf("acquire while the claimed speculation holds the permit: %v", err)
		}
		if *closed {
			t.Error("a claimed speculation was closed")
		}
		ss.drop(sp, speculationDiscarded, true)
		producers.Wait()
	})

	t.Run("closing the statement drops it", func(t *testing.T) {
		var producers sync.WaitGroup
		ss := newSpeculations(&producers)
		ps := newPreparedStore(time.Minute, time.Now, ss)
		alice := principal(t, "alice@acme")
		id, err := ps.add(alice, &plan{sql: "SELECT 1"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := ps.get(alice, id)
		a := newAdmission(workExecute, 1, 1, time.Millisecond)
		_, closed := heldSpeculation(ss, st, "acme", mustAcquire(t, a, "acme"))
		ps.remove(alice, id)
		producers.Wait() // the drop is asynchronous; this waits for it
		if !*closed {
			t.Error("the speculation outlived its statement")
		}
		if tn, g := held(a, "acme"); tn != 0 || g != 0 {
			t.Errorf("permits held after the drop: tenant %d, global %d", tn, g)
		}
	})
}

// TestReadAhead: the batches read ahead come first, in order, then the rest
// of the source; releasing the reader releases everything it holds.
func TestReadAhead(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, tc := range []struct {
		batches, ahead, consume int
	}{
		{0, 2, 0}, {1, 2, 1}, {2, 2, 2}, {5, 2, 5}, {5, 2, 1}, {5, 2, 0}, {3, 0, 3},
	} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var recs []arrow.RecordBatch
		for i := range tc.batches {
			b := array.NewInt64Builder(mem)
			b.AppendValues([]int64{int64(i), int64(i)}, nil)
			col := b.NewArray()
			b.Release()
			recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{col}, 2))
			col.Release()
		}
		src, err := array.NewRecordReader(schema, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.Release()
		}
		rdr := readAhead(src, tc.ahead)
		var got []int64
		for range tc.consume {
			if !rdr.Next() {
				break
			}
			got = append(got, rdr.RecordBatch().Column(0).(*array.Int64).Value(0))
		}
		if tc.consume == tc.batches && rdr.Next() {
			t.Errorf("%+v: a batch after the end", tc)
		}
		for i, v := range got {
			if v != int64(i) {
				t.Errorf("%+v: batch %d is %d", tc, i, v)
			}
		}
		if want := min(tc.consume, tc.batches); len(got) != want {
			t.Errorf("%+v: %d batches, want %d", tc, len(got), want)
		}
		rdr.Release()
		mem.AssertSize(t, 0)
	}
}

// pointEngine is an engine holding every table in memory whose queries
// return one row: the first argument (an int64 id), or 0.
type pointEngine struct{}

var pointSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

func (pointEngine) InMemory(string, []string) bool { return true }

func (pointEngine) Bind(_ context.Context, _ string, tables []backend.LocalTable) ([]backend.Relation, error) {
	rels := make([]backend.Relation, len(tables))
	for i := range tables {
		rels[i] = backend.Relation{Schema: "main", Name: "t" + strconv.Itoa(i), Types: []string{"BIGINT"}}
	}
	return rels, nil
}

func (pointEngine) Describe(context.Context, string, string, int) (backend.Description, error) {
	return backend.Description{Result: pointSchema, Params: arrow.NewSchema([]arrow.Field{{Name: "parameter_1", Type: arrow.PrimitiveTypes.Int64}}, nil)}, nil
}

func (pointEngine) Execute(ctx context.Context, _, _ string, args []any) (array.RecordReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var id int64
	if len(args) > 0 {
		id, _ = args[0].(int64)
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(id)
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(pointSchema, []arrow.Array{col}, 1)
	defer rec.Release()
	return array.NewRecordReader(pointSchema, []arrow.RecordBatch{rec})
}

// TestSpeculationStress: clients binding, fetching, abandoning and closing
// prepared statements concurrently — some sharing one statement — each get
// the row of a value bound to the statement they fetch, and once they are
// done and the server has stopped, every execution permit is back.
func TestSpeculationStress(t *testing.T) {
	cat := &metricsCatalog{visible: map[backend.TableName]bool{{Schema: "sales", Name: "orders"}: true},
		columns: []backend.Column{{Name: "id", Type: "int64"}}}
	s, cl := served(t, cat, func(c *Config) {
		c.Backend = pointEngine{}
		c.Logger = slog.New(slog.DiscardHandler)
	})
	ctx := bearerCtx(aliceToken)
	const query = "SELECT id FROM sales.orders WHERE id = ?"
	shared, err := cl.Prepare(ctx, query)
	if err != nil {
		t.Fatal(err)
	}

	// run binds id to prep and, unless abandon, fetches it: the row must be
	// id, or for a statement others bind too, any id at all.
	run := func(prep *flightsql.PreparedStatement, id int64, abandon, own bool) error {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.Append(id)
		col := b.NewArray()
		b.Release()
		params := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "p", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, 1)
		col.Release()
		prep.SetParameters(params)
		params.Release()
		info, err := prep.Execute(ctx)
		if err != nil || abandon {
			return err
		}
		rdr, err := cl.DoGet(ctx, info.GetEndpoint()[0].GetTicket())
		if err != nil {
			return err
		}
		defer rdr.Release()
		var got []int64
		for rdr.Next() {
			got = append(got, rdr.RecordBatch().Column(0).(*array.Int64).Int64Values()...)
		}
		if err := rdr.Err(); err != nil {
			return err
		}
		if len(got) != 1 || (own && got[0] != id) {
			return fmt.Errorf("bound %d, fetched %v", id, got)
		}
		return nil
	}

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Go(func() {
			prep, err := cl.Prepare(ctx, query)
			if err != nil {
				errs <- err
				return
			}
			// The same server statement, through a client object of its
			// own (arrow-go's is not safe for concurrent use).
			alias, err := cl.LoadPreparedStatementFromResult(&flightsql.CreatePreparedStatementResult{PreparedStatementHandle: shared.Handle()})
			if err != nil {
				errs <- err
				return
			}
			for i := range 40 {
				id := int64(w*1000 + i)
				var err error
				switch {
				case w%4 == 0: // shares one statement with others
					err = run(alias, id, i%5 == 0, false)
				case i%7 == 3: // closes its statement with a speculation open
					if err = run(prep, id, true, true); err == nil {
						err = prep.Close(ctx)
					}
					if err == nil {
						prep, err = cl.Prepare(ctx, query)
					}
				default:
					err = run(prep, id, i%5 == 0, true)
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d, execution %d: %w", w, i, err)
					return
				}
			}
			if err := prep.Close(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := shared.Close(ctx); err != nil {
		t.Error(err)
	}
	// Close waits for every producer, and so for every speculation to have
	// given back what it held.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if tn, g := held(s.admitExecute, "acme"); tn != 0 || g != 0 {
		t.Fatalf("permits still held after the server stopped: tenant %d, global %d", tn, g)
	}
	outcomes := map[string]float64{}
	for _, o := range speculationOutcomes {
		outcomes[o] = testutil.ToFloat64(s.cfg.Metrics.speculation.WithLabelValues(o))
	}
	if outcomes[speculationClaimed] == 0 || outcomes[speculationDiscarded]+outcomes[speculationExpired] == 0 {
		t.Errorf("speculation outcomes %v: want some claimed and some not", outcomes)
	}
}
