package flight

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
		id, err := ps.add(alice, &plan{sql: "SELECT 1"})
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
