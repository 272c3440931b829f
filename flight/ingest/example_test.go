package ingest_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/ingest"
	"lakegate/stage"
)

// Copy a stream of batches into a new write segment of table t1 in tenant
// acme's child stage; the caller then commits a version naming the files.
func ExampleCopy() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ingest-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	root := stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: dir}}
	child, err := root.ForTenant("acme")
	if err != nil {
		panic(err)
	}
	st, err := stage.Open(ctx, child, stage.Config{})
	if err != nil {
		panic(err)
	}
	defer st.Close()

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema,
		strings.NewReader(`[{"id": 1, "name": "a"}, {"id": 2, "name": null}]`))
	if err != nil {
		panic(err)
	}
	defer rec.Release()
	r, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec, rec})
	if err != nil {
		panic(err)
	}
	defer r.Release()

	seg, err := stage.NewSegment()
	if err != nil {
		panic(err)
	}
	files, rows, err := ingest.Copy(ctx, ingest.Config{Store: st, StorageID: "t1", Segment: seg, Schema: schema}, r)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(files), rows, files[0].Key == "tables/t1/"+seg+"/part-0.parquet", len(files[0].SHA256))
	// Output: 1 4 true 64
}
