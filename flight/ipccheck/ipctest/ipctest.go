package ipctest

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/ipccheck"
)

// Stream writes batches of schema as an IPC stream with the writer options
// opts (a codec, say).
func Stream(t testing.TB, schema *arrow.Schema, opts []ipc.Option, batches ...arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(schema)}, opts...)...)
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Compressed is a stream of one batch of the int64s 0 to 999 compressed
// with codec, and the offset in it of the uncompressed length (8,000) its
// data buffer starts with.
func Compressed(t testing.TB, codec ipc.Option) ([]byte, int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range 1000 {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 1000)
	defer rec.Release()
	stream := Stream(t, schema, []ipc.Option{codec}, rec)
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], 8000)
	at := bytes.Index(stream, size[:])
	if at < 0 {
		t.Fatal("no uncompressed length in the body")
	}
	return stream, at
}

// CompressionBomb is Compressed with zstd, its data buffer announcing
// 64 GiB uncompressed: the reader allocates that before decompressing.
func CompressionBomb(t testing.TB) []byte {
	t.Helper()
	stream, at := Compressed(t, ipc.WithZstd())
	binary.LittleEndian.PutUint64(stream[at:], 1<<36)
	return stream
}

// Message is one message of an IPC stream: its metadata and its body.
type Message struct{ Meta, Body []byte }

// Messages cuts an IPC stream (continuation marker, length, metadata,
// body) into its messages, taking body lengths from ipccheck.Message. It
// stops at the end marker or at framing it cannot follow, and a message
// whose metadata ipccheck refuses, or whose body overruns the stream, comes
// without a body (the hostile streams of this package are sent that way).
func Messages(stream []byte) []Message {
	var out []Message
	for len(stream) >= 8 {
		n := uint64(binary.LittleEndian.Uint32(stream[4:]))
		if n == 0 || n > uint64(len(stream)-8) {
			break
		}
		meta := stream[8 : 8+n]
		body, err := ipccheck.Message(meta)
		if err != nil || uint64(body) > uint64(len(stream))-8-n {
			body = 0
		}
		stream = stream[8+n:]
		out = append(out, Message{meta, stream[:body]})
		stream = stream[body:]
	}
	return out
}

// HugeFields returns the 305-byte stream FuzzIngestIPC found: its schema's
// fields vector claims far more elements than the message has bytes, and
// arrow-go's reader allocated 29 GB for it.
func HugeFields() []byte { return bytes.Clone(hugeFields) }

var hugeFields = []byte("\xff\xff\xff\xff\x78\x00\x00\x00\x10\x00\x00\x00\x00\x00\x0a\x00\x0c\x00\x0a\x00\x09\x00\x04\x00\x0a\x00\x00\x00\x10\x00\x00\x00\x00\x01\x04\x00\x08\x00\x08\x00\x00\x00\x04\x00\x08\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x14\x00\x00\x00\x10\x00\x14\x00\x10\x00\x00\x00\x0f\x00\x08\x00\x00\x00\x04\x00\x10\x00\x00\x00\x10\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x02\x1c\x00\x00\x00\x00\x00\x00\x00\x08\x00\x0c\x00\x08\x00\x07\x00\x08\x00\x00\x00\x00\x00\x00\x01\x40\x00\x00\x00\x02\x00\x00\x00\x69\x64\x00\x00\xff\xff\xff\xff\x88\x00\x00\x00\x14\x00\x00\x00\x00\x00\x00\x00\x0c\x00\x16\x00\x14\x00\x13\x00\x0c\x00\x04\x00\x0c\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x14\x00\x00\x00\x00\x00\x00\x03\x04\x00\x0a\x00\x18\x00\x0c\x00\x08\x00\x04\x00\x0a\x00\x00\x00\x14\x00\x00\x00\x38\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x03\x00\xaf\xaf\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00")
