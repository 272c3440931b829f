package accesslog

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// mustIDs is requestIDs that fails the test on an error.
func mustIDs(t *testing.T, data []byte) []string {
	t.Helper()
	ids, err := requestIDs(data)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestMerge: merged files hold every event of their inputs, in order, once,
// with the access log's columns; an input that is not an access-log file
// (other columns, or not Parquet) is refused.
func TestMerge(t *testing.T) {
	var files [][]byte
	var want []string
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for f := range 5 {
		var events []Event
		for i := range 1 + f*3 {
			id := fmt.Sprintf("f%d-e%d", f, i)
			events = append(events, Event{Time: t0.Add(time.Duration(len(want)) * time.Second), RequestID: id, Tenant: "acme", Kind: "query",
				Read: []Table{{Schema: "s", Name: "t", Version: uint64(f), MaskPolicies: []string{"m"}}}, Decision: Allowed, Rows: int64(i)})
			want = append(want, id)
		}
		data, err := Encode(events)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, data)
	}
	merged, n, err := Merge(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(want)) {
		t.Errorf("Merge counted %d events, want %d", n, len(want))
	}
	if got := mustIDs(t, merged); !slices.Equal(got, want) {
		t.Errorf("merged events %v, want %v", got, want)
	}
	// A merged file merges again (a later compaction may take it along).
	again, n2, err := Merge(context.Background(), [][]byte{merged, files[0]})
	if err != nil || n2 != n+1 {
		t.Fatalf("merging a merged file: %d events, %v", n2, err)
	}
	if got := mustIDs(t, again); !slices.Equal(got, append(slices.Clone(want), want[0])) {
		t.Errorf("re-merged events %v", got)
	}

	other := func() []byte {
		sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(1)
		rec := b.NewRecordBatch()
		defer rec.Release()
		var buf bytes.Buffer
		w, err := pqarrow.NewFileWriter(sc, &buf, nil, pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}()
	for name, in := range map[string][][]byte{
		"none":            nil,
		"other columns":   {files[0], other},
		"not parquet":     {files[0], []byte("PAR1 not really")},
		"truncated input": {files[1][:len(files[1])/2]},
	} {
		if out, _, err := Merge(context.Background(), in); err == nil || out != nil {
			t.Errorf("%s: merged (%d bytes, %v), want a refusal", name, len(out), err)
		}
	}
}
