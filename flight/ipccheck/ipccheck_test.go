package ipccheck_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/ipccheck"
	"lakegate/flight/ipccheck/ipctest"
)

// split cuts a stream arrow-go wrote into its messages, each of which
// Message must accept.
func split(t testing.TB, stream []byte) []ipctest.Message {
	t.Helper()
	msgs := ipctest.Messages(stream)
	for i, m := range msgs {
		if _, err := ipccheck.Message(m.Meta); err != nil {
			t.Fatalf("message %d of a stream arrow-go wrote: %v", i, err)
		}
	}
	return msgs
}

// everyType is a schema with every kind of field the metadata can hold:
// nested, dictionary-encoded, a union, time zones, key-value metadata.
var everyType = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 4}, Nullable: true},
	{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "list", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)})), Nullable: true},
	{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "u", Type: arrow.SparseUnionOf([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}, {Name: "y", Type: arrow.BinaryTypes.String}}, []arrow.UnionTypeCode{3, 7})},
}, &schemaMeta)

var schemaMeta = arrow.NewMetadata([]string{"schema"}, []string{"meta"})

// everyTypeStream is an IPC stream of everyType with two batches.
func everyTypeStream(t testing.TB) []byte {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, everyType)
	defer b.Release()
	for range 2 {
		for _, f := range b.Fields() {
			f.AppendNull()
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return ipctest.Stream(t, everyType, nil, rec, rec)
}

func TestMessageAcceptsWhatArrowWrites(t *testing.T) {
	msgs := split(t, everyTypeStream(t))
	if len(msgs) < 3 { // schema, dictionary batch, record batches
		t.Fatalf("%d messages", len(msgs))
	}
}

// TestMessageRefusesHugeLengths: the crasher FuzzIngestIPC found (a 305
// byte schema whose fields vector claims more elements than the metadata
// has bytes; arrow-go allocated 29 GB for it and the process died), and
// every word of real metadata set in turn to a huge length: Message refuses
// it, or arrow-go reads what it accepted without dying.
func TestMessageRefusesHugeLengths(t *testing.T) {
	crasher := ipctest.HugeFields()
	meta := crasher[8 : 8+binary.LittleEndian.Uint32(crasher[4:])]
	if _, err := ipccheck.Message(meta); !errors.Is(err, ipccheck.ErrMalformed) {
		t.Fatalf("the fuzz crasher: %v, want ErrMalformed", err)
	}
	for i, m := range split(t, everyTypeStream(t)) {
		for off := 0; off+4 <= len(m.Meta); off += 4 {
			meta := bytes.Clone(m.Meta)
			binary.LittleEndian.PutUint32(meta[off:], 0x7fffff00)
			body, err := ipccheck.Message(meta)
			switch {
			case err == nil && body <= 1<<20:
				readStream(meta, body)
			case err != nil && !errors.Is(err, ipccheck.ErrMalformed):
				t.Errorf("message %d, offset %d: %v is not ErrMalformed", i, off, err)
			}
		}
	}
}

// readSchema parses meta as the first message of a stream, as the server's
// reader does with a client's schema.
func readSchema(meta []byte) {
	var s bytes.Buffer
	_ = binary.Write(&s, binary.LittleEndian, uint32(0xFFFFFFFF))
	_ = binary.Write(&s, binary.LittleEndian, uint32(len(meta)))
	s.Write(meta)
	if r, err := ipc.NewReader(&s); err == nil {
		r.Release()
	}
}

// readStream reads meta and a zero body of n bytes as an IPC stream with
// arrow-go, as the server would after Message accepted it.
func readStream(meta []byte, n int64) {
	var s bytes.Buffer
	_ = binary.Write(&s, binary.LittleEndian, uint32(0xFFFFFFFF))
	_ = binary.Write(&s, binary.LittleEndian, uint32(len(meta)))
	s.Write(meta)
	s.Write(make([]byte, n))
	_ = binary.Write(&s, binary.LittleEndian, uint64(0))
	r, err := ipc.NewReader(&s)
	if err != nil {
		return
	}
	defer r.Release()
	for r.Next() {
	}
}

func TestMessageTruncated(t *testing.T) {
	for _, m := range split(t, everyTypeStream(t)) {
		for n := range len(m.Meta) {
			if _, err := ipccheck.Message(m.Meta[:n]); err == nil && n < 8 {
				t.Errorf("accepted %d bytes", n)
			}
		}
	}
}

func TestMessageLimits(t *testing.T) {
	wide := make([]arrow.Field, ipccheck.MaxFields+1)
	for i := range wide {
		wide[i] = arrow.Field{Name: "c", Type: arrow.PrimitiveTypes.Int8}
	}
	var deep arrow.DataType = arrow.PrimitiveTypes.Int8
	for range ipccheck.MaxDepth {
		deep = arrow.ListOf(deep)
	}
	for name, s := range map[string]*arrow.Schema{
		"too many fields": arrow.NewSchema(wide, nil),
		"too deep":        arrow.NewSchema([]arrow.Field{{Name: "d", Type: deep}}, nil),
	} {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(s))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		n := binary.LittleEndian.Uint32(b[4:])
		if _, err := ipccheck.Message(b[8 : 8+n]); !errors.Is(err, ipccheck.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzMessage: Message never panics, refuses with ErrMalformed, and a
// schema it accepts arrow-go parses (or refuses) without running out of
// memory or stack: the fuzzing process would die.
func FuzzMessage(f *testing.F) {
	for _, m := range split(f, everyTypeStream(f)) {
		f.Add(m.Meta)
	}
	f.Fuzz(func(t *testing.T, meta []byte) {
		body, err := ipccheck.Message(meta)
		if err != nil {
			if !errors.Is(err, ipccheck.ErrMalformed) {
				t.Fatalf("%v is not ErrMalformed", err)
			}
			return
		}
		if body > 1<<20 {
			// A stream reader allocates the announced body before reading
			// it; the server takes bodies from the Flight message that
			// carries them, never by this length (and refuses above
			// flight.MaxRequestBytes).
			return
		}
		readSchema(meta)
	})
}

func TestStream(t *testing.T) {
	good := everyTypeStream(t)
	if err := ipccheck.Stream(good); err != nil {
		t.Fatalf("arrow-go's stream: %v", err)
	}
	for name, b := range map[string][]byte{
		"the fuzz crasher": ipctest.HugeFields(),
		"truncated":        good[:len(good)/2],
		"no continuation":  append([]byte{1, 0, 0, 0}, good[4:]...),
	} {
		if err := ipccheck.Stream(b); !errors.Is(err, ipccheck.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// TestDecompressionBomb: a compressed buffer announcing 64 GiB (arrow-go
// allocates the announced size before decompressing: the process dies) is
// refused, as a stream and as a Flight message; honest compressed batches
// pass.
func TestDecompressionBomb(t *testing.T) {
	for name, codec := range map[string]ipc.Option{"zstd": ipc.WithZstd(), "lz4": ipc.WithLZ4()} {
		stream, at := ipctest.Compressed(t, codec)
		if err := ipccheck.Stream(stream); err != nil {
			t.Fatalf("%s: honest stream: %v", name, err)
		}
		binary.LittleEndian.PutUint64(stream[at:], 1<<36)
		if err := ipccheck.Stream(stream); !errors.Is(err, ipccheck.ErrMalformed) {
			t.Errorf("%s: bomb as a stream: %v, want ErrMalformed", name, err)
		}
		msgs := split(t, stream)
		batch := msgs[len(msgs)-1]
		if err := ipccheck.FlightData(batch.Meta, batch.Body); !errors.Is(err, ipccheck.ErrMalformed) {
			t.Errorf("%s: bomb as a Flight message: %v, want ErrMalformed", name, err)
		}
	}
}
