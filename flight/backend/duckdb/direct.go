package duckdb

import (
	"errors"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/duckdb/duckdb-go/v2/mapping"

	"lakegate/flight/backend"
)

// The direct path copies DuckDB's vectors straight into the buffers of the
// batch being built, for results whose columns all have the same memory
// layout in DuckDB and in Arrow (fixed-width numbers, dates, timestamps,
// times; booleans are bit-packed on the way) or are strings and blobs
// (gathered into Arrow's offsets and values on the way). That is one copy
// per value, where DuckDB's own conversion (duckdb_data_chunk_to_arrow)
// makes a 2,048-row Arrow batch per chunk that the coalescer then
// concatenates: two copies and a C-to-Go import per chunk. Other results
// take that path.
//
// It relies on three things DuckDB guarantees for chunks fetched from a
// result: their vectors are flat; a validity mask is an array of uint64
// words with bit i%64 of word i/64 set when row i is valid, which on a
// little-endian machine is Arrow's bitmap layout; and a VARCHAR or BLOB
// vector is an array of the C API's duckdb_string_t (16 bytes: a uint32
// length, then the bytes themselves if there are at most 12 of them, else
// a 4-byte prefix and a pointer to all of them), whose entries for NULL
// rows are not to be read.

// directCol is how one column is copied: width bytes a value (srcWidth in
// DuckDB when it differs: a DECIMAL stored in a 2-, 4- or 8-byte integer
// becomes Arrow's 16-byte decimal128 by sign extension), a bit-packed
// boolean, or a variable-length string or blob (Arrow's 32-bit offsets,
// which are width bytes a value, and its values).
type directCol struct {
	width    int
	srcWidth int
	boolean  bool
	varlen   bool
}

// duckStringSize is the size of the C API's duckdb_string_t, and
// duckStringInline the most bytes it holds inline.
const (
	duckStringSize   = 16
	duckStringInline = 12
)

// directLayout returns the copy plan of res's columns for schema (the
// result's Arrow schema), or nil if some column needs DuckDB's conversion.
func directLayout(res *mapping.Result, schema *arrow.Schema) []directCol {
	if !littleEndian() {
		return nil
	}
	cols := make([]directCol, schema.NumFields())
	for i, f := range schema.Fields() {
		var want arrow.Type
		width := 0
		unit := arrow.Microsecond
		switch mapping.ColumnType(res, mapping.IdxT(i)) {
		case mapping.TypeBoolean:
			want = arrow.BOOL
		case mapping.TypeTinyInt:
			want, width = arrow.INT8, 1
		case mapping.TypeSmallInt:
			want, width = arrow.INT16, 2
		case mapping.TypeInteger:
			want, width = arrow.INT32, 4
		case mapping.TypeBigInt:
			want, width = arrow.INT64, 8
		case mapping.TypeUTinyInt:
			want, width = arrow.UINT8, 1
		case mapping.TypeUSmallInt:
			want, width = arrow.UINT16, 2
		case mapping.TypeUInteger:
			want, width = arrow.UINT32, 4
		case mapping.TypeUBigInt:
			want, width = arrow.UINT64, 8
		case mapping.TypeFloat:
			want, width = arrow.FLOAT32, 4
		case mapping.TypeDouble:
			want, width = arrow.FLOAT64, 8
		case mapping.TypeDate:
			want, width = arrow.DATE32, 4
		case mapping.TypeTimestamp, mapping.TypeTimestampTZ:
			want, width = arrow.TIMESTAMP, 8
		case mapping.TypeTimestampS:
			want, width, unit = arrow.TIMESTAMP, 8, arrow.Second
		case mapping.TypeTimestampMS:
			want, width, unit = arrow.TIMESTAMP, 8, arrow.Millisecond
		case mapping.TypeTimestampNS:
			want, width, unit = arrow.TIMESTAMP, 8, arrow.Nanosecond
		case mapping.TypeTime:
			want, width = arrow.TIME64, 8
		case mapping.TypeHugeInt:
			want, width = arrow.DECIMAL128, 16
		case mapping.TypeDecimal:
			src := decimalStorage(res, i, f.Type)
			if src == 0 {
				return nil
			}
			cols[i] = directCol{width: 16, srcWidth: src}
			continue
		case mapping.TypeVarchar, mapping.TypeBlob:
			// DuckDB's Arrow options may ask for large or view strings:
			// only the 32-bit offsets layout is built here.
			switch f.Type.ID() {
			case arrow.STRING, arrow.BINARY:
				cols[i] = directCol{width: arrow.Int32SizeBytes, varlen: true}
				continue
			}
			return nil
		default:
			return nil
		}
		// The Arrow type DuckDB chose must be the one of the same layout.
		if f.Type.ID() != want {
			return nil
		}
		switch t := f.Type.(type) {
		case *arrow.TimestampType:
			if t.Unit != unit {
				return nil
			}
		case *arrow.Time64Type:
			if t.Unit != arrow.Microsecond {
				return nil
			}
		}
		if width == 0 {
			cols[i] = directCol{boolean: true}
		} else {
			if fw, ok := f.Type.(arrow.FixedWidthDataType); !ok || fw.Bytes() != width {
				return nil
			}
			cols[i] = directCol{width: width, srcWidth: width}
		}
	}
	return cols
}

// decimalStorage returns the width of DuckDB's storage of DECIMAL column i
// if its Arrow type is a decimal128 of the same precision and scale, else 0.
func decimalStorage(res *mapping.Result, i int, at arrow.DataType) int {
	dt, ok := at.(*arrow.Decimal128Type)
	if !ok {
		return 0
	}
	lt := mapping.ColumnLogicalType(res, mapping.IdxT(i))
	defer mapping.DestroyLogicalType(&lt)
	if int32(mapping.DecimalWidth(lt)) != dt.Precision || int32(mapping.DecimalScale(lt)) != dt.Scale {
		return 0
	}
	switch mapping.DecimalInternalType(lt) {
	case mapping.TypeSmallInt:
		return 2
	case mapping.TypeInteger:
		return 4
	case mapping.TypeBigInt:
		return 8
	case mapping.TypeHugeInt:
		return 16
	}
	return 0
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// batchBuilder accumulates chunks into one batch of at least target rows
// (the last batch may be smaller). It is reused from batch to batch.
type batchBuilder struct {
	mem     memory.Allocator
	schema  *arrow.Schema
	cols    []directCol
	target  int // rows that make a batch
	capRows int // target plus one chunk
	// grown is set once a batch has filled: later batches reserve capRows
	// at once. Until then buffers start at one chunk and double, so that a
	// small result does not allocate (and zero) a full batch.
	grown bool

	rows  int
	bytes int              // of the batch's data so far, for MinBatchBytes
	data  []*memory.Buffer // values, or offsets of a varlen column
	vals  []*memory.Buffer // a varlen column's bytes
	valid []*memory.Buffer // nil for a column until it has a null
	// lastVals is each varlen column's bytes in the last full batch scaled
	// to capRows rows: the next one starts with that much room, so that its
	// values buffer does not grow (and copy) on the way.
	lastVals []int
}

func newBatchBuilder(mem memory.Allocator, schema *arrow.Schema, cols []directCol) *batchBuilder {
	rowBytes := 0
	for _, c := range cols {
		rowBytes += c.width
	}
	target := backend.MinBatchRows
	if rowBytes > 0 && rowBytes*target > backend.MinBatchBytes {
		target = (backend.MinBatchBytes + rowBytes - 1) / rowBytes
	}
	return &batchBuilder{
		mem:      mem,
		schema:   schema,
		cols:     cols,
		target:   target,
		capRows:  target + int(mapping.VectorSize()),
		data:     make([]*memory.Buffer, len(cols)),
		vals:     make([]*memory.Buffer, len(cols)),
		valid:    make([]*memory.Buffer, len(cols)),
		lastVals: make([]int, len(cols)),
	}
}

// full reports whether the batch has reached its target size.
func (b *batchBuilder) full() bool {
	return b.rows >= b.target || b.bytes >= backend.MinBatchBytes
}

// errBatchTooLarge: a string or blob column's bytes in one batch do not fit
// Arrow's 32-bit offsets (DuckDB's own conversion refuses the same).
var errBatchTooLarge = errors.New("duckdb: a batch's strings exceed 2 GiB")

// append copies chunk's rows from row from on into the batch, up to the
// row that fills it (full), and returns the row after the last it copied.
// The caller checks full before appending again.
func (b *batchBuilder) append(chunk mapping.DataChunk, from int) (int, error) {
	size := int(mapping.DataChunkGetSize(chunk))
	n := b.take(chunk, from, size)
	if n == 0 {
		return size, nil
	}
	rows := b.reserveRows(b.rows + n)
	for i, c := range b.cols {
		vec := mapping.DataChunkGetVector(chunk, mapping.IdxT(i))
		if b.data[i] == nil {
			b.data[i] = memory.NewResizableBuffer(b.mem)
		}
		switch {
		case c.boolean:
			b.data[i].Reserve(int(bitutil.BytesForBits(int64(rows))))
		case c.varlen:
			b.data[i].Reserve((rows + 1) * c.width)
		default:
			b.data[i].Reserve(rows * c.width)
		}
		if b.valid[i] != nil {
			b.valid[i].Reserve(int(bitutil.BytesForBits(int64(rows))))
		}
		dst := b.data[i].Buf()
		src := mapping.VectorGetData(vec)
		mask := mapping.VectorGetValidity(vec)
		switch {
		case c.boolean:
			bools := unsafe.Slice((*byte)(src), from+n)[from:]
			for r, v := range bools {
				bitutil.SetBitTo(dst, b.rows+r, v != 0)
			}
		case c.varlen:
			if err := b.appendStrings(i, src, mask, from, n); err != nil {
				return 0, err
			}
		case c.srcWidth == c.width:
			copy(dst[b.rows*c.width:], unsafe.Slice((*byte)(src), (from+n)*c.width)[from*c.width:])
		default:
			widenDecimal(dst[b.rows*16:(b.rows+n)*16], unsafe.Add(src, from*c.srcWidth), c.srcWidth, n)
		}
		b.copyValidity(i, mask, from, n, rows)
		b.bytes += n * c.width
	}
	b.rows += n
	return from + n, nil
}

// take returns how many rows of chunk from row from on (of size) the batch
// takes: up to the row that fills it, by rows or by bytes, so that a batch
// holds at most MinBatchBytes and one row, however large the rows.
func (b *batchBuilder) take(chunk mapping.DataChunk, from, size int) int {
	n := min(size-from, b.target-b.rows)
	bytes := b.bytes
	fixed := 0
	var strs []*[duckStringSize]byte
	var valid [][]byte
	for i, c := range b.cols {
		if !c.varlen {
			fixed += c.width
			continue
		}
		vec := mapping.DataChunkGetVector(chunk, mapping.IdxT(i))
		strs = append(strs, (*[duckStringSize]byte)(mapping.VectorGetData(vec)))
		var v []byte
		if mask := mapping.VectorGetValidity(vec); mask != nil {
			v = unsafe.Slice((*byte)(mask), bitutil.BytesForBits(int64(size)))
		}
		valid = append(valid, v)
	}
	if len(strs) == 0 {
		return n // fixed-width rows: target is already sized by bytes
	}
	for r := range n {
		bytes += fixed
		for j, p := range strs {
			if valid[j] == nil || bitutil.BitIsSet(valid[j], from+r) {
				e := unsafe.Slice(p, size)[from+r]
				bytes += arrow.Int32SizeBytes + int(*(*uint32)(unsafe.Pointer(&e)))
			}
		}
		if bytes >= backend.MinBatchBytes {
			return r + 1
		}
	}
	return n
}

// appendStrings gathers n duckdb_string_t at src from row from on (rows
// whose bit in mask is clear are NULL and left unread) into varlen column
// i: an offset per row after the batch's rows so far, and the bytes.
func (b *batchBuilder) appendStrings(i int, src, mask unsafe.Pointer, from, n int) error {
	offsets := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b.data[i].Buf()))), b.rows+n+1)
	if b.vals[i] == nil {
		b.vals[i] = memory.NewResizableBuffer(b.mem)
		if b.grown {
			b.vals[i].Reserve(b.lastVals[i])
		}
		offsets[0] = 0
	}
	vals := b.vals[i]
	entries := unsafe.Slice((*[duckStringSize]byte)(src), from+n)[from:]
	var valid []byte
	if mask != nil {
		valid = unsafe.Slice((*byte)(mask), bitutil.BytesForBits(int64(from+n)))
	}
	// One pass to size the values, so that the buffer grows at most once.
	end := int64(offsets[b.rows])
	size := end
	for r := range entries {
		if valid == nil || bitutil.BitIsSet(valid, from+r) {
			size += int64(*(*uint32)(unsafe.Pointer(&entries[r])))
		}
	}
	if size > math.MaxInt32 {
		return errBatchTooLarge
	}
	if int(size) > vals.Cap() {
		vals.Reserve(max(int(size), 2*vals.Cap()))
	}
	buf := vals.Buf()
	for r := range entries {
		if valid == nil || bitutil.BitIsSet(valid, from+r) {
			e := &entries[r]
			l := int64(*(*uint32)(unsafe.Pointer(e)))
			if l <= duckStringInline {
				copy(buf[end:], e[4:4+l])
			} else {
				copy(buf[end:], unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&e[8]))), l))
			}
			end += l
		}
		offsets[b.rows+r+1] = int32(end)
	}
	b.bytes += int(size - int64(offsets[b.rows]))
	return nil
}

// reserveRows returns how many rows the buffers should hold for need rows.
func (b *batchBuilder) reserveRows(need int) int {
	if b.grown {
		return b.capRows
	}
	// From a cache line's worth of the narrowest column up: a point
	// lookup's one row must not allocate (and zero) a chunk's worth.
	rows := 64
	for rows < need {
		rows *= 2
	}
	return min(rows, b.capRows)
}

// copyValidity records the validity of n rows of column i from row from
// on of DuckDB's mask (nil: all valid); a new bitmap gets room for capRows
// rows.
func (b *batchBuilder) copyValidity(i int, mask unsafe.Pointer, from, n, capRows int) {
	var src []byte
	if mask != nil {
		src = unsafe.Slice((*byte)(mask), bitutil.BytesForBits(int64(from+n)))
		if bitutil.CountSetBits(src, from, n) == n {
			src = nil
		}
	}
	if b.valid[i] == nil {
		if src == nil {
			return // still no null in this batch
		}
		buf := memory.NewResizableBuffer(b.mem)
		buf.Reserve(int(bitutil.BytesForBits(int64(capRows))))
		bitutil.SetBitsTo(buf.Buf(), 0, int64(b.rows), true)
		b.valid[i] = buf
	}
	dst := b.valid[i].Buf()
	if src == nil {
		bitutil.SetBitsTo(dst, int64(b.rows), int64(n), true)
		return
	}
	bitutil.CopyBitmap(src, from, n, dst, b.rows)
}

// finish returns the batch built so far (nil if empty) and starts the next.
func (b *batchBuilder) finish() arrow.RecordBatch {
	if b.rows == 0 {
		return nil
	}
	full := b.full()
	if full {
		b.grown = true
	}
	cols := make([]arrow.Array, len(b.cols))
	for i, c := range b.cols {
		data := b.data[i]
		buffers := []*memory.Buffer{b.valid[i], data}
		switch {
		case c.boolean:
			data.ResizeNoShrink(int(bitutil.BytesForBits(int64(b.rows))))
		case c.varlen:
			data.ResizeNoShrink((b.rows + 1) * c.width)
			offsets := arrow.Int32Traits.CastFromBytes(data.Bytes())
			b.vals[i].ResizeNoShrink(int(offsets[b.rows]))
			if full {
				// A batch cut by bytes is as large as the next will be;
				// one cut by rows is scaled to capRows.
				b.lastVals[i] = int(offsets[b.rows])
				if b.bytes < backend.MinBatchBytes {
					b.lastVals[i] = int(int64(offsets[b.rows]) * int64(b.capRows) / int64(b.rows))
				}
			}
			buffers = append(buffers, b.vals[i])
		default:
			data.ResizeNoShrink(b.rows * c.width)
		}
		nulls := 0
		if valid := b.valid[i]; valid != nil {
			valid.ResizeNoShrink(int(bitutil.BytesForBits(int64(b.rows))))
			nulls = b.rows - bitutil.CountSetBits(valid.Bytes(), 0, b.rows)
		}
		d := array.NewData(b.schema.Field(i).Type, b.rows, buffers, nil, nulls, 0)
		cols[i] = array.MakeFromData(d)
		d.Release()
		for _, buf := range buffers {
			if buf != nil {
				buf.Release()
			}
		}
		b.data[i], b.vals[i], b.valid[i] = nil, nil, nil
	}
	rec := array.NewRecordBatch(b.schema, cols, int64(b.rows))
	for _, col := range cols {
		col.Release()
	}
	b.rows, b.bytes = 0, 0
	return rec
}

// reset drops a partly built batch.
func (b *batchBuilder) reset() {
	for _, bufs := range [][]*memory.Buffer{b.data, b.vals, b.valid} {
		for i, buf := range bufs {
			if buf != nil {
				buf.Release()
				bufs[i] = nil
			}
		}
	}
	b.rows, b.bytes = 0, 0
}

// widenDecimal writes n sign-extended 2-, 4- or 8-byte integers from src
// into dst as little-endian 128-bit integers.
func widenDecimal(dst []byte, src unsafe.Pointer, srcWidth, n int) {
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(dst))), 2*n)
	put := func(r int, v int64) {
		words[2*r] = uint64(v)
		words[2*r+1] = uint64(v >> 63)
	}
	switch srcWidth {
	case 2:
		for r, v := range unsafe.Slice((*int16)(src), n) {
			put(r, int64(v))
		}
	case 4:
		for r, v := range unsafe.Slice((*int32)(src), n) {
			put(r, int64(v))
		}
	case 8:
		for r, v := range unsafe.Slice((*int64)(src), n) {
			put(r, v)
		}
	}
}
