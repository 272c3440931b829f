package duckdb

import (
	"errors"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/backend"
)

// coalescer merges the small batches next returns (nil at the end) into
// batches of at least backend.MinBatchRows rows or backend.MinBatchBytes
// bytes (the last may be smaller). Like every RecordReader it is for one
// consumer goroutine; Retain and Release may be called from any.
type coalescer struct {
	refs      atomic.Int64
	schema    *arrow.Schema
	next      func() (arrow.RecordBatch, error)
	mem       memory.Allocator
	mapErr    func(error) error
	onRelease func()

	cur          arrow.RecordBatch
	pending      []arrow.RecordBatch
	pendingRows  int64
	pendingBytes int64
	done         bool
	err          error
}

var _ array.RecordReader = (*coalescer)(nil)

func newCoalescer(schema *arrow.Schema, next func() (arrow.RecordBatch, error), mem memory.Allocator, mapErr func(error) error, onRelease func()) *coalescer {
	c := &coalescer{schema: schema, next: next, mem: mem, mapErr: mapErr, onRelease: onRelease}
	c.refs.Store(1)
	return c
}

func (c *coalescer) Retain() { c.refs.Add(1) }

func (c *coalescer) Release() {
	if c.refs.Add(-1) != 0 {
		return
	}
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	c.dropPending()
	if c.err == nil {
		c.err = errReleased // a Next after the final Release must not read on
	}
	if c.onRelease != nil {
		c.onRelease()
	}
}

// errReleased is the reader's error once it is released.
var errReleased = errors.New("duckdb: reader released")

func (c *coalescer) Schema() *arrow.Schema { return c.schema }

// Record returns the current batch; it is valid until the next call to Next.
func (c *coalescer) Record() arrow.RecordBatch { return c.cur }

// RecordBatch returns the current batch; it is valid until the next call to Next.
func (c *coalescer) RecordBatch() arrow.RecordBatch { return c.cur }

func (c *coalescer) Err() error { return c.err }

func (c *coalescer) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.done || c.err != nil {
		return false
	}
	for {
		rec, err := c.next()
		if err != nil {
			c.dropPending()
			c.err = c.mapErr(err)
			return false
		}
		if rec == nil {
			break
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		c.pending = append(c.pending, rec)
		c.pendingRows += rec.NumRows()
		c.pendingBytes += recordBytes(rec)
		if c.pendingRows >= backend.MinBatchRows || c.pendingBytes >= backend.MinBatchBytes {
			return c.flush()
		}
	}
	c.done = true
	if len(c.pending) > 0 {
		return c.flush()
	}
	return false
}

// flush turns the pending batches into c.cur.
func (c *coalescer) flush() bool {
	if len(c.pending) == 1 {
		c.cur = c.pending[0]
		c.pending = c.pending[:0]
		c.pendingRows, c.pendingBytes = 0, 0
		return true
	}
	schema := c.schema
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(c.pending))
	var err error
	for i := range cols {
		for j, rec := range c.pending {
			parts[j] = rec.Column(i)
		}
		if cols[i], err = array.Concatenate(parts, c.mem); err != nil {
			for _, col := range cols[:i] {
				col.Release()
			}
			c.dropPending()
			c.err = c.mapErr(err)
			return false
		}
	}
	c.cur = array.NewRecordBatch(schema, cols, c.pendingRows)
	for _, col := range cols {
		col.Release() // the batch holds its own references
	}
	c.dropPending()
	return true
}

func (c *coalescer) dropPending() {
	for i, rec := range c.pending {
		rec.Release()
		c.pending[i] = nil
	}
	c.pending = c.pending[:0]
	c.pendingRows, c.pendingBytes = 0, 0
}

// recordBytes is the size of rec's buffers, children and dictionaries included.
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += dataBytes(col.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	if d == nil {
		return 0
	}
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, ch := range d.Children() {
		n += dataBytes(ch)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}

// splitter returns next's batches cut into slices of about
// backend.MinBatchBytes (by their average row), so that no batch of a
// result with large rows is much larger (a client refuses a Flight message
// beyond its limit, commonly 16 MiB). Slices share the batch's buffers.
func splitter(next func() (arrow.RecordBatch, error)) func() (arrow.RecordBatch, error) {
	var cur arrow.RecordBatch
	var off, step int64
	return func() (arrow.RecordBatch, error) {
		if cur == nil {
			rec, err := next()
			if err != nil || rec == nil {
				return rec, err
			}
			n, size := rec.NumRows(), recordBytes(rec)
			if n <= 1 || size <= 2*backend.MinBatchBytes {
				return rec, nil
			}
			cur, off, step = rec, 0, max(1, n*backend.MinBatchBytes/size)
		}
		end := min(off+step, cur.NumRows())
		part := cur.NewSlice(off, end)
		if off = end; off == cur.NumRows() {
			cur.Release()
			cur = nil
		}
		return part, nil
	}
}
