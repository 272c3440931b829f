package duckdb

import (
	"errors"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

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

// bufferPool is the allocator of the read path's batches (the direct path's
// builders and the coalescer's concatenations). A result of many batches
// allocates buffers of the same few sizes again and again, each of which the
// Go allocator would zero fresh and the garbage collector would then chase;
// the pool keeps the buffers released by the consumer and hands them out
// again, to the same stream or another.
//
// A buffer returns to the pool only through Free, which Arrow calls when the
// last reference to it is released, so a buffer is never reused while a
// batch still holds it. A reused buffer is cleared before it is handed out:
// like the Go allocator's, every buffer starts zeroed, so nothing of an
// earlier result (another principal's or tenant's) can show through bytes a
// new batch does not write, such as the bits past the last row of a bitmap.
//
// The pool holds at most readPoolBytes, and nothing while no reader is open
// (open and close count them): an idle engine gives every buffer back to the
// underlying allocator, which then balances.
type bufferPool struct {
	mem   memory.Allocator
	limit int // readPoolBytes; 0 turns pooling off (benchmarks compare)

	mu   sync.Mutex
	open int              // readers open
	held int              // bytes in free
	free map[int][][]byte // idle buffers by class size
	out  map[*byte][]byte // handed-out buffers (by first byte) to the class-size allocation behind each
}

var _ memory.Allocator = (*bufferPool)(nil)

const (
	// readPoolBytes bounds the idle buffers the pool keeps: about fifteen
	// batches of four 8-byte columns.
	readPoolBytes = 32 << 20
	// Buffers smaller than readPoolMin (a point lookup's) are cheap to
	// allocate and go straight to the underlying allocator, as do those
	// larger than readPoolMax.
	readPoolMin = 4 << 10
	readPoolMax = 8 << 20
	// readPoolSteps is the number of size classes between two powers of
	// two: a buffer is at most 1/8 larger than asked for.
	readPoolSteps = 8
)

func newBufferPool(mem memory.Allocator) *bufferPool {
	return &bufferPool{mem: mem, limit: readPoolBytes, free: make(map[int][][]byte), out: make(map[*byte][]byte)}
}

// poolClass returns the size class of a size-byte buffer, or 0 if buffers
// of that size are not pooled.
func poolClass(size int) int {
	if size < readPoolMin || size > readPoolMax {
		return 0
	}
	step := (1 << (bits.Len(uint(size-1)) - 1)) / readPoolSteps
	return (size + step - 1) / step * step
}

// openReader counts a reader in; closeReader counts it out, and the last
// one out empties the pool.
func (p *bufferPool) openReader() {
	p.mu.Lock()
	p.open++
	p.mu.Unlock()
}

func (p *bufferPool) closeReader() {
	p.mu.Lock()
	p.open--
	var drop [][]byte
	if p.open == 0 {
		for class, bufs := range p.free {
			drop = append(drop, bufs...)
			delete(p.free, class)
		}
		p.held = 0
	}
	p.mu.Unlock()
	for _, b := range drop {
		p.mem.Free(b)
	}
}

// Allocate returns a zeroed buffer of size bytes.
func (p *bufferPool) Allocate(size int) []byte {
	class := poolClass(size)
	if class == 0 || p.limit == 0 {
		return p.mem.Allocate(size)
	}
	p.mu.Lock()
	var buf []byte
	if bufs := p.free[class]; len(bufs) > 0 {
		buf = bufs[len(bufs)-1]
		bufs[len(bufs)-1] = nil
		p.free[class] = bufs[:len(bufs)-1]
		p.held -= class
	}
	p.mu.Unlock()
	if buf == nil {
		buf = p.mem.Allocate(class) // zeroed by the underlying allocator
	} else {
		clear(buf[:size]) // the rest is cleared if Reallocate exposes it
	}
	p.mu.Lock()
	p.out[unsafe.SliceData(buf)] = buf
	p.mu.Unlock()
	return buf[:size:size]
}

// Reallocate returns a buffer of size bytes that begins with b's bytes.
func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if len(b) > 0 {
		p.mu.Lock()
		orig, ok := p.out[unsafe.SliceData(b)]
		p.mu.Unlock()
		switch {
		case ok && size > 0 && size <= len(orig):
			// Still fits the allocation behind it; the bytes it gains are
			// cleared, as a fresh allocation's would be.
			if size > len(b) {
				clear(orig[len(b):size])
			}
			return orig[:size:size]
		case !ok && (poolClass(size) == 0 || p.limit == 0):
			return p.mem.Reallocate(size, b)
		}
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free takes back a buffer Allocate or Reallocate returned: into the pool
// while a reader is open and the pool has room, else to the underlying
// allocator.
func (p *bufferPool) Free(b []byte) {
	if len(b) == 0 {
		p.mem.Free(b)
		return
	}
	p.mu.Lock()
	orig, ok := p.out[unsafe.SliceData(b)]
	if !ok {
		p.mu.Unlock()
		p.mem.Free(b)
		return
	}
	delete(p.out, unsafe.SliceData(b))
	if p.open > 0 && p.held+len(orig) <= p.limit {
		p.free[len(orig)] = append(p.free[len(orig)], orig)
		p.held += len(orig)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.mem.Free(orig)
}
