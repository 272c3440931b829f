package ipccheck

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Limits on a schema.
const (
	// MaxFields bounds the fields of one schema, nested ones included.
	MaxFields = 10_000
	// MaxDepth bounds the nesting of fields (a list of structs of lists…).
	MaxDepth = 64
	// MaxDecompressedBytes bounds what the buffers of one compressed
	// record batch may announce they decompress to: the reader allocates
	// each buffer's announced size before decompressing into it.
	MaxDecompressedBytes = 256 << 20
)

// ErrMalformed reports metadata that is not a well-formed Arrow IPC message
// within the limits; the error wrapping it says where.
var ErrMalformed = errors.New("ipccheck: malformed Arrow IPC message")

// Message checks meta, the flatbuffer metadata of one Arrow IPC message (a
// Flight message's data header, or what follows the length prefix in a
// stream), and returns the body length it announces. A schema, dictionary
// batch and record batch are the messages accepted; tensors are not.
func Message(meta []byte) (bodyLen int64, err error) {
	c := &checker{b: meta}
	return c.message()
}

func (c *checker) message() (bodyLen int64, err error) {
	msg := c.root()
	c.keyValues(msg, 12)
	switch c.u8(msg, 6) { // header_type
	case headerSchema:
		if s, ok := c.tableField(msg, 8, true); ok {
			c.schema(s)
		}
	case headerDictionaryBatch:
		if batch, ok := c.tableField(msg, 8, true); ok {
			if rb, ok := c.tableField(batch, 6, false); ok {
				c.recordBatch(rb)
			}
		}
	case headerRecordBatch:
		if rb, ok := c.tableField(msg, 8, true); ok {
			c.recordBatch(rb)
		}
	default:
		c.fail("message header type %d is not a schema, dictionary batch or record batch", c.u8(msg, 6))
	}
	bodyLen = c.i64(msg, 10)
	if bodyLen < 0 {
		c.fail("negative body length")
	}
	if c.err != nil {
		return 0, c.err
	}
	return bodyLen, nil
}

// MessageHeader values (Message.fbs).
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
)

// Type values with vectors or strings in their tables (Schema.fbs).
const (
	typeTimestamp = 10
	typeUnion     = 14
)

// checker reads a flatbuffer with every access bounds-checked; after the
// first failure it records the error and every read yields nothing, so the
// walk ends without panicking.
type checker struct {
	b      []byte
	err    error
	fields int
	// visits counts the tables walked. Metadata written by Arrow's
	// libraries never shares a table, so it cannot exceed the number of
	// tables the buffer holds (one per 4 bytes at most); a message whose
	// vectors point many times at the same tables would make the reader
	// build far more than its size, and is refused.
	visits int
	// compressed is set when a record batch has a compression table; its
	// buffers vector holds n Buffer structs (offset, length) from first.
	compressed   bool
	buffers      uint64
	buffersFirst uint64
}

func (c *checker) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
}

// has reports whether n bytes at off lie inside the buffer.
func (c *checker) has(off, n uint64) bool {
	return c.err == nil && off <= uint64(len(c.b)) && n <= uint64(len(c.b))-off
}

func (c *checker) u32(off uint64) uint32 {
	if !c.has(off, 4) {
		c.fail("read past the end of the metadata")
		return 0
	}
	return binary.LittleEndian.Uint32(c.b[off:])
}

// table is the position of a table whose vtable was checked.
type table uint64

// root is the message's root table.
func (c *checker) root() table {
	return c.tableAt(uint64(c.u32(0)))
}

// tableAt checks the table at off and its vtable.
func (c *checker) tableAt(off uint64) table {
	if c.visits++; c.visits > len(c.b)/4 {
		c.fail("tables are shared or repeated")
		return 0
	}
	soff := int64(int32(c.u32(off)))
	vt := int64(off) - soff
	if c.err != nil || vt < 0 || !c.has(uint64(vt), 4) {
		c.fail("table at %d has no vtable", off)
		return 0
	}
	vtLen := uint64(binary.LittleEndian.Uint16(c.b[vt:]))
	if vtLen < 4 || vtLen%2 != 0 || !c.has(uint64(vt), vtLen) {
		c.fail("vtable at %d is malformed", vt)
		return 0
	}
	return table(off)
}

// field returns the position of the table field in vtable slot (4, 6, …)
// and whether it is present; n bytes of it must lie in the buffer.
func (c *checker) field(t table, slot, n uint64) (uint64, bool) {
	if c.err != nil {
		return 0, false
	}
	vt := uint64(int64(t) - int64(int32(binary.LittleEndian.Uint32(c.b[t:]))))
	vtLen := uint64(binary.LittleEndian.Uint16(c.b[vt:]))
	if slot+2 > vtLen {
		return 0, false
	}
	o := uint64(binary.LittleEndian.Uint16(c.b[vt+slot:]))
	if o == 0 {
		return 0, false
	}
	if !c.has(uint64(t)+o, n) {
		c.fail("field out of range")
		return 0, false
	}
	return uint64(t) + o, true
}

func (c *checker) u8(t table, slot uint64) uint8 {
	if p, ok := c.field(t, slot, 1); ok {
		return c.b[p]
	}
	return 0
}

func (c *checker) i64(t table, slot uint64) int64 {
	if p, ok := c.field(t, slot, 8); ok {
		return int64(binary.LittleEndian.Uint64(c.b[p:]))
	}
	return 0
}

// ref follows the offset stored in slot to what it points to.
func (c *checker) ref(t table, slot uint64) (uint64, bool) {
	p, ok := c.field(t, slot, 4)
	if !ok {
		return 0, false
	}
	return p + uint64(c.u32(p)), c.err == nil
}

// tableField checks the table referenced in slot and reports whether it is
// there (and sound); required ones must be present.
func (c *checker) tableField(t table, slot uint64, required bool) (table, bool) {
	p, ok := c.ref(t, slot)
	if !ok {
		if required {
			c.fail("a required table is missing")
		}
		return 0, false
	}
	tt := c.tableAt(p)
	return tt, c.err == nil
}

// vector checks the vector referenced in slot, of elements of size bytes,
// and returns its length and the position of its first element.
func (c *checker) vector(t table, slot, size uint64) (n, first uint64) {
	p, ok := c.ref(t, slot)
	if !ok {
		return 0, 0
	}
	n = uint64(c.u32(p))
	if !c.has(p+4, n*size) { // n < 2^32 and size ≤ 16: no overflow
		c.fail("a vector of %d elements does not fit in the metadata", n)
		return 0, 0
	}
	return n, p + 4
}

// tables checks a vector of tables in slot and calls each for every one.
func (c *checker) tables(t table, slot uint64, each func(table)) {
	n, first := c.vector(t, slot, 4)
	for i := uint64(0); i < n && c.err == nil; i++ {
		off := first + 4*i
		each(c.tableAt(off + uint64(c.u32(off))))
	}
}

func (c *checker) keyValues(t table, slot uint64) {
	c.tables(t, slot, func(kv table) {
		c.vector(kv, 4, 1) // key
		c.vector(kv, 6, 1) // value
	})
}

func (c *checker) schema(s table) {
	c.tables(s, 6, func(f table) { c.field1(f, 1) })
	c.keyValues(s, 8)
	c.vector(s, 10, 8) // features
}

// field1 checks a field at nesting depth.
func (c *checker) field1(f table, depth int) {
	c.fields++
	switch {
	case c.fields > MaxFields:
		c.fail("more than %d fields", MaxFields)
		return
	case depth > MaxDepth:
		c.fail("fields nested deeper than %d", MaxDepth)
		return
	}
	c.vector(f, 4, 1) // name
	if typ, ok := c.tableField(f, 10, false); ok {
		switch c.u8(f, 8) { // type_type
		case typeTimestamp:
			c.vector(typ, 6, 1) // timezone
		case typeUnion:
			c.vector(typ, 6, 4) // typeIds
		}
	}
	if dict, ok := c.tableField(f, 12, false); ok {
		c.tableField(dict, 6, false) // indexType
	}
	c.tables(f, 14, func(child table) { c.field1(child, depth+1) })
	c.keyValues(f, 16)
}

func (c *checker) recordBatch(rb table) {
	c.vector(rb, 6, 16)                             // nodes (FieldNode structs)
	c.buffers, c.buffersFirst = c.vector(rb, 8, 16) // buffers (Buffer structs)
	_, c.compressed = c.tableField(rb, 10, false)   // compression
	c.vector(rb, 12, 8)                             // variadicBufferCounts
}

// decompressed checks what the buffers of a compressed record batch announce
// they decompress to (each compressed buffer starts with that length as an
// int64; -1 for one left uncompressed) against MaxDecompressedBytes.
func (c *checker) decompressed(body []byte) error {
	if !c.compressed {
		return nil
	}
	var total uint64
	for i := range c.buffers {
		pos := c.buffersFirst + 16*i
		off := binary.LittleEndian.Uint64(c.b[pos:])
		n := binary.LittleEndian.Uint64(c.b[pos+8:])
		if n == 0 {
			continue
		}
		if n < 8 || off > uint64(len(body)) || n > uint64(len(body))-off {
			return fmt.Errorf("%w: compressed buffer outside the body", ErrMalformed)
		}
		size := int64(binary.LittleEndian.Uint64(body[off:]))
		if size == -1 {
			continue
		}
		if size < 0 {
			return fmt.Errorf("%w: negative decompressed length", ErrMalformed)
		}
		if total += uint64(size); total > MaxDecompressedBytes {
			return fmt.Errorf("%w: buffers decompress to more than %d bytes", ErrMalformed, MaxDecompressedBytes)
		}
	}
	return nil
}

// Stream checks b, a whole Arrow IPC stream held in memory (a serialized
// schema, as Flight sends in FlightInfo and SchemaResult): each message's
// framing and metadata (see Message), each body within b, and compressed
// batches' decompressed sizes (MaxDecompressedBytes).
func Stream(b []byte) error {
	for len(b) > 0 {
		if len(b) < 8 || binary.LittleEndian.Uint32(b) != 0xFFFFFFFF {
			return fmt.Errorf("%w: stream framing", ErrMalformed)
		}
		n := uint64(binary.LittleEndian.Uint32(b[4:]))
		if n == 0 {
			return nil // end of stream
		}
		if n > uint64(len(b)-8) {
			return fmt.Errorf("%w: truncated message", ErrMalformed)
		}
		c := &checker{b: b[8 : 8+n]}
		body, err := c.message()
		if err != nil {
			return err
		}
		if uint64(body) > uint64(len(b))-8-n {
			return fmt.Errorf("%w: truncated body", ErrMalformed)
		}
		if err := c.decompressed(b[8+n : 8+n+uint64(body)]); err != nil {
			return err
		}
		b = b[8+n+uint64(body):]
	}
	return nil
}

// FlightData checks the IPC message a Flight FlightData carries: its data
// header (see Message), announcing no longer a body than it carries, and a
// compressed batch's decompressed size (MaxDecompressedBytes). A message
// without a header (a descriptor or app metadata alone) passes.
func FlightData(header, body []byte) error {
	if len(header) == 0 {
		return nil
	}
	c := &checker{b: header}
	n, err := c.message()
	if err != nil {
		return err
	}
	if n > int64(len(body)) {
		return fmt.Errorf("%w: body longer than the message carries", ErrMalformed)
	}
	return c.decompressed(body[:n])
}
