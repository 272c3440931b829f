package flight

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
)

// constantResults keeps the results of constant statements
// (sqlgate.Statement.Constant: the SELECT 1 that connection pools send to
// check a connection) by their rendered SQL. The planner marks a rendering
// constant when it plans one; its first run goes to the engine as any
// statement does, and later runs of the same rendered text, by any caller,
// answer from the kept copy without the engine — the text fixes the rows
// and their types. A result of more than one batch or of more than
// maxConstantBytes is not kept. At most maxConstantStatements renderings
// are known at once.
type constantResults struct {
	mu    sync.Mutex
	known map[string]arrow.RecordBatch // nil until its first run kept it
}

const (
	maxConstantStatements = 64
	maxConstantBytes      = 16 << 10
)

// mark records sql as the rendering of a constant statement.
func (c *constantResults) mark(sql string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.known[sql]; ok {
		return
	}
	if c.known == nil {
		c.known = make(map[string]arrow.RecordBatch)
	}
	for k, rec := range c.known { // full: forget one
		if len(c.known) < maxConstantStatements {
			break
		}
		if rec != nil {
			rec.Release()
		}
		delete(c.known, k)
	}
	c.known[sql] = nil
}

// marked reports whether sql is marked constant.
func (c *constantResults) marked(sql string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.known[sql]
	return ok
}

// result returns the kept result of sql (retained: the caller releases
// it), or nil when there is none.
func (c *constantResults) result(sql string) arrow.RecordBatch {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.known[sql]
	if rec != nil {
		rec.Retain()
	}
	return rec
}

// keep reads rdr to its end and returns its batches (retained: the caller
// releases them), keeping a copy for sql when the result is one batch of at
// most maxConstantBytes and sql is still marked.
func (c *constantResults) keep(sql string, rdr array.RecordReader) ([]arrow.RecordBatch, error) {
	var recs []arrow.RecordBatch
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rdr.Err(); err != nil {
		for _, r := range recs {
			r.Release()
		}
		return nil, err
	}
	if len(recs) != 1 || util.TotalRecordSize(recs[0]) > maxConstantBytes {
		return recs, nil
	}
	// A copy in the Go heap: the engine's batches come from its read
	// allocator, which should not hold a result for as long as it is kept.
	cols := make([]arrow.Array, recs[0].NumCols())
	for i, col := range recs[0].Columns() {
		cp, err := array.Concatenate([]arrow.Array{col}, memory.DefaultAllocator)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return recs, nil // served, not kept
		}
		cols[i] = cp
	}
	cp := array.NewRecordBatch(recs[0].Schema(), cols, recs[0].NumRows())
	for _, col := range cols {
		col.Release()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.known[sql]; ok && old == nil {
		c.known[sql] = cp
	} else {
		cp.Release()
	}
	return recs, nil
}
