package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/ingest"
	"lakegate/flight/ipccheck"
	"lakegate/flight/ipccheck/ipctest"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// FuzzIngestIPC: whatever bytes a client sends as the Arrow stream of a bulk
// ingest are refused — by the gateway's check of each message's metadata
// (flight/ipccheck, as the Flight server does), as a stream, by CheckSchema
// or by Copy, leaving nothing stored — or written as Parquet files that hold
// exactly the rows read, with the sizes and checksums Copy reports. Its
// first finding, in testdata: a 305-byte stream whose schema claims more
// fields than it has bytes made arrow-go's reader allocate 29 GB.
func FuzzIngestIPC(f *testing.F) {
	mem := memory.NewGoAllocator()
	f.Add(ipctest.Stream(f, mixed, nil, mixedBatch(f, mem, 0, 3), mixedBatch(f, mem, 3, 2)))
	ints := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(mem)
	b.AppendValues([]int64{1, 2, 3}, nil)
	col := b.NewArray()
	f.Add(ipctest.Stream(f, ints, nil, array.NewRecordBatch(ints, []arrow.Array{col}, 3)))
	f.Add(ipctest.Stream(f, ints, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		if ipccheck.Stream(data) != nil {
			return // the Flight server refuses it before arrow-go reads it
		}
		r, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(mem))
		if err != nil {
			return
		}
		defer r.Release()
		if ingest.CheckSchema(r.Schema()) != nil {
			return
		}
		st := stagetest.Local(t).Open(t, "acme")
		files, rows, err := ingest.Copy(context.Background(), newConfig(t, st, r.Schema()), r)
		if err != nil {
			if l := left(t, st); len(l) != 0 {
				t.Fatalf("refused (%v) but left %v", err, l)
			}
			return
		}
		var stored int64
		for _, file := range files {
			tbl := readFile(t, st, file)
			if tbl.NumRows() != file.Rows {
				t.Fatalf("%s: %d rows read, %d reported", file.Key, tbl.NumRows(), file.Rows)
			}
			stored += file.Rows
		}
		if stored != rows {
			t.Fatalf("%d rows stored, Copy reports %d", stored, rows)
		}
	})
}

// TestMalformedBatchRefused: a batch whose validity bitmap is shorter than
// its arrays (FuzzIngestIPC's second finding; the Parquet writer panicked
// on it) fails the write with ErrMalformed and leaves nothing stored.
func TestMalformedBatchRefused(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	data := array.NewData(arrow.PrimitiveTypes.Int64, 3,
		[]*memory.Buffer{memory.NewBufferBytes(nil), memory.NewBufferBytes(make([]byte, 24))}, nil, array.UnknownNullCount, 0)
	defer data.Release()
	col := array.MakeFromData(data)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 3)
	st := stagetest.Local(t).Open(t, "acme")
	_, _, err := ingest.Copy(t.Context(), newConfig(t, st, schema), mustReader(t, schema, rec))
	refusedMalformed(t, st, err)
}

// shortRows is a batch announcing more rows than its columns hold.
type shortRows struct{ arrow.RecordBatch }

func (r shortRows) NumRows() int64 { return r.RecordBatch.NumRows() + 2 }

// TestColumnShorterThanBatch: a batch whose columns hold fewer values than
// it announces rows is refused (the file would hold fewer rows than
// recorded), and nothing is kept.
func TestColumnShorterThanBatch(t *testing.T) {
	mem := memory.NewGoAllocator()
	st := stagetest.Local(t).Open(t, "acme")
	w, err := ingest.New(t.Context(), newConfig(t, st, mixed))
	if err != nil {
		t.Fatal(err)
	}
	rec := mixedBatch(t, mem, 0, 3)
	defer rec.Release()
	refusedMalformed(t, st, w.Write(shortRows{rec}))
}

// refusedMalformed checks that a write failed with ErrMalformed and left
// nothing in st.
func refusedMalformed(t *testing.T, st stage.Store, err error) {
	t.Helper()
	if !errors.Is(err, ingest.ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
	if l := left(t, st); len(l) != 0 {
		t.Fatalf("left %v", l)
	}
}

// TestDictionaryIndexOutOfRange: a dictionary index past its dictionary
// (FuzzIngestIPC's fourth finding: pqarrow read it in a goroutine of its
// own, where the panic ended the process) is refused before writing.
func TestDictionaryIndexOutOfRange(t *testing.T) {
	mem := memory.NewGoAllocator()
	typ := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	ib.AppendValues([]int32{0, 5}, nil)
	idx := ib.NewArray()
	defer idx.Release()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues([]string{"a", "b"}, nil)
	dict := sb.NewArray()
	defer dict.Release()
	col := array.NewDictionaryArray(typ, idx, dict)
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: typ, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, 2)
	defer rec.Release()
	st := stagetest.Local(t).Open(t, "acme")
	_, _, err := ingest.Copy(t.Context(), newConfig(t, st, schema), mustReader(t, schema, rec))
	refusedMalformed(t, st, err)
}
