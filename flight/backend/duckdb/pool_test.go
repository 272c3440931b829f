package duckdb_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/backend/duckdb"
)

// TestReadBuffersStartZeroed is the attack on the read path's buffer pool:
// tenant "victim" reads a column of TRUE, then tenant "reader" reads
// FALSE values whose last batch ends inside a byte of its bitmaps. The
// bits past its last row go to the client with the batch (Arrow sends
// whole bytes), so a reused buffer that still held the victim's bits would
// show them. A third reader stays open throughout, so that the pool keeps
// the victim's buffers for the reader's stream.
func TestReadBuffersStartZeroed(t *testing.T) {
	e, _ := newEngine(t)
	ctx := context.Background()
	hold, err := e.Execute(ctx, "other", "SELECT range AS id FROM range(10)", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Release()

	victim := mustQuery(t, e, "victim", "SELECT true AS x, CASE WHEN range % 2 = 0 THEN true END AS y FROM range(300000)")
	if victim.rows != 300000 {
		t.Fatalf("victim read %d rows", victim.rows)
	}
	const rows = 65536 + 5 // the second batch holds 5 rows
	rr, err := e.Execute(ctx, "reader", "SELECT false AS x, CASE WHEN range = 0 THEN false END AS y FROM range(65541)", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var seen int64
	for rr.Next() {
		rec := rr.RecordBatch()
		n := int(rec.NumRows())
		seen += int64(n)
		for c, col := range rec.Columns() {
			for b, buf := range col.Data().Buffers() {
				if buf == nil {
					continue
				}
				// Both buffers of a boolean column are bitmaps: every bit
				// the reader's rows do not set must be clear.
				bytes := buf.Bytes()
				for bit := n; bit < len(bytes)*8; bit++ {
					if bitutil.BitIsSet(bytes, bit) {
						t.Fatalf("column %d buffer %d of a %d-row batch: bit %d past the last row is set", c, b, n, bit)
					}
				}
			}
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != rows {
		t.Fatalf("reader read %d rows, want %d", seen, rows)
	}
}

// countingAllocator counts the allocations of at least 4 KiB it passes on.
type countingAllocator struct {
	memory.Allocator
	mu    sync.Mutex
	large int
}

func (c *countingAllocator) Allocate(size int) []byte {
	if size >= 4<<10 {
		c.mu.Lock()
		c.large++
		c.mu.Unlock()
	}
	return c.Allocator.Allocate(size)
}

func (c *countingAllocator) Reallocate(size int, b []byte) []byte {
	if size >= 4<<10 && size > cap(b) {
		c.mu.Lock()
		c.large++
		c.mu.Unlock()
	}
	return c.Allocator.Reallocate(size, b)
}

func (c *countingAllocator) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.large
}

// TestReadBuffersReused: a result of many batches allocates its buffers
// once or twice, not once a batch; the underlying allocator balances once
// every batch and reader is released, for the direct path and for DuckDB's
// conversion (a LIST column), whose batches the coalescer concatenates.
func TestReadBuffersReused(t *testing.T) {
	for _, tc := range []struct {
		name, sql string
		direct    bool
	}{
		{"direct", "SELECT range AS a, range * 2 AS b FROM range(2000000)", true},
		{"converted", "SELECT range AS a, [range] AS l FROM range(2000000)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := &countingAllocator{Allocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
			e, _ := newEngine(t, func(c *duckdb.Config) { c.Allocator = mem })
			if direct, err := e.DirectPath("acme", tc.sql); err != nil || direct != tc.direct {
				t.Fatalf("direct path %v (%v), want %v", direct, err, tc.direct)
			}
			res := mustQuery(t, e, "acme", tc.sql)
			if res.rows != 2000000 || len(res.batches) < 20 {
				t.Fatalf("%d rows in %d batches", res.rows, len(res.batches))
			}
			// A batch of the direct path is two data buffers; a converted
			// one's concatenation, five (a, the list's offsets and its
			// values, and their validity where DuckDB gives one).
			if n := mem.count(); n > 3*5 {
				t.Errorf("%d allocations of at least 4 KiB for %d batches", n, len(res.batches))
			}
			mem.Allocator.(*memory.CheckedAllocator).AssertSize(t, 0)
		})
	}
}

// TestReadBuffersHeldBatchIntact: a batch the consumer still holds keeps
// its bytes while its stream and others go on (a buffer returns to the pool
// only when its last reference is released), and the underlying allocator
// balances at the end.
func TestReadBuffersHeldBatchIntact(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	e, _ := newEngine(t, func(c *duckdb.Config) { c.Allocator = mem })
	ctx := context.Background()
	const sql = "SELECT range AS a, range * 3 AS b FROM range(1000000)"
	rr, err := e.Execute(ctx, "acme", sql, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	held := rr.RecordBatch()
	held.Retain()
	want := [][]int64{
		slices.Clone(held.Column(0).(*array.Int64).Int64Values()),
		slices.Clone(held.Column(1).(*array.Int64).Int64Values()),
	}

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, tenant := range []string{"acme", "acme", "globex", "initech"} {
		wg.Go(func() {
			if _, err := query(ctx, e, tenant, "SELECT range * 7 AS a, range * 11 AS b FROM range(1000000)"); err != nil {
				errs <- err
			}
		})
	}
	for rr.Next() {
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	rr.Release()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for c, col := range []arrow.Array{held.Column(0), held.Column(1)} {
		got := col.(*array.Int64).Int64Values()
		if !slices.Equal(got, want[c]) {
			t.Fatalf("column %d of the held batch changed", c)
		}
		for i, v := range got {
			if v != int64(i)*int64(c*2+1) {
				t.Fatalf("column %d row %d = %d", c, i, v)
			}
		}
	}
	held.Release()
	mem.AssertSize(t, 0)
}
