package ingest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"lakegate/flight/ingest"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

const storageID = "t-0001"

// backends runs f against a tenant store of the local backend and of S3
// (the stand-in, or AWS_ENDPOINT_URL when set).
func backends(t *testing.T, f func(t *testing.T, b *stagetest.Backend, st stage.Store)) {
	for _, b := range []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)} {
		t.Run(b.Name, func(t *testing.T) { f(t, b, b.Open(t, "acme")) })
	}
}

func elem(t arrow.DataType) arrow.Field { return arrow.Field{Name: "element", Type: t, Nullable: true} }

// mixed has one column of most supported types, lists already named the
// way Parquet names their elements.
var mixed = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "ts_utc", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "ts_paris", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Europe/Paris"}, Nullable: true},
	{Name: "ts_ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
	{Name: "ts_local", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "tm", Type: arrow.FixedWidthTypes.Time64us, Nullable: true},
	{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 4}, Nullable: true},
	{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 4}, Nullable: true},
	{Name: "list", Type: arrow.ListOfField(elem(arrow.PrimitiveTypes.Int32)), Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
	{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "uuid", Type: extensions.NewUUIDType(), Nullable: true},
}, nil)

// mixedBatch returns rows [start, start+n) of a deterministic mixed table
// with nulls in every nullable column.
func mixedBatch(t testing.TB, mem memory.Allocator, start, n int) arrow.RecordBatch {
	t.Helper()
	rows := []map[string]any{}
	for i := start; i < start+n; i++ {
		r := map[string]any{
			"id":       i,
			"f":        float64(i) * 1.5,
			"s":        fmt.Sprintf("s%d", i),
			"ls":       strings.Repeat("L", i%7),
			"b":        i%3 == 0,
			"u32":      uint32(math.MaxUint32 - i),
			"ts_utc":   int64(1700000000000000 + i),
			"ts_paris": int64(1700000000000 + i),
			"ts_ns":    int64(1700000000000000000 + i),
			"ts_local": int64(1700000000000 + i),
			"d":        19000 + i,
			"tm":       int64(i) * 1000,
			"dec":      fmt.Sprintf("%d.%04d", i*1000, i%10000),
			"dict":     []string{"red", "green", "blue"}[i%3],
			"bin":      []byte{byte(i), 0, 255},
			"fsb":      []byte{byte(i), 1, 2, 3},
			"list":     []any{i, nil, -i},
			"st":       map[string]any{"a": i, "b": fmt.Sprint("x", i)},
			"m":        []map[string]any{{"key": "k", "value": i}, {"key": "z", "value": nil}},
			"uuid":     fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
		}
		if i%5 == 4 {
			for _, f := range mixed.Fields() {
				if f.Nullable {
					r[f.Name] = nil
				}
			}
		}
		rows = append(rows, r)
	}
	js, err := json.Marshal(rows)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(mem, mixed, bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// storedBytes returns the bytes stored under key in st.
func storedBytes(t *testing.T, st stage.Store, key string) []byte {
	t.Helper()
	rc, _, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readFile reads a stored file back with pqarrow, checks its size and hash
// against f and that it is zstd-compressed with statistics, and returns it
// as a table of its stored Arrow schema.
func readFile(t *testing.T, st stage.Store, f ingest.File) arrow.Table {
	t.Helper()
	data := storedBytes(t, st, f.Key)
	if sum := sha256.Sum256(data); int64(len(data)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
		t.Fatalf("%s: stored %d bytes sha256 %x, File says %d bytes %s", f.Key, len(data), sum, f.Size, f.SHA256)
	}
	if info, err := st.Stat(t.Context(), f.Key); err != nil || info.Size != f.Size {
		t.Fatalf("stat %s: %+v %v", f.Key, info, err)
	}
	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	md := pr.MetaData()
	if md.NumRows != f.Rows {
		t.Errorf("%s: %d rows in the footer, File says %d", f.Key, md.NumRows, f.Rows)
	}
	if md.KeyValueMetadata().FindValue("ARROW:schema") == nil {
		t.Errorf("%s: no stored Arrow schema", f.Key)
	}
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		for c := 0; c < md.Schema.NumColumns(); c++ {
			cc, err := md.RowGroup(rg).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			if cc.Compression() != compress.Codecs.Zstd {
				t.Errorf("%s: row group %d column %d compressed with %v", f.Key, rg, c, cc.Compression())
			}
			if ok, err := cc.StatsSet(); !ok || err != nil {
				t.Errorf("%s: row group %d column %d has no statistics (%v)", f.Key, rg, c, err)
			}
		}
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 1000}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// rowStrings renders every row of every column, logically (a dictionary
// as its values).
func rowStrings(cols []*arrow.Chunked) [][]string {
	out := make([][]string, len(cols))
	for i, c := range cols {
		for _, a := range c.Chunks() {
			for j := 0; j < a.Len(); j++ {
				v := "NULL"
				if a.IsValid(j) {
					v = a.ValueStr(j)
				}
				out[i] = append(out[i], v)
			}
		}
	}
	return out
}

// compare checks that the files hold exactly the batches: schema, types
// and values, in order.
func compare(t *testing.T, st stage.Store, files []ingest.File, schema *arrow.Schema, batches []arrow.RecordBatch) {
	t.Helper()
	want := make([]*arrow.Chunked, schema.NumFields())
	var got [][]*arrow.Chunked
	for i := range want {
		var chunks []arrow.Array
		for _, b := range batches {
			chunks = append(chunks, b.Column(i))
		}
		want[i] = arrow.NewChunked(schema.Field(i).Type, chunks)
		defer want[i].Release()
	}
	for _, f := range files {
		tbl := readFile(t, st, f)
		if !sameSchema(tbl.Schema(), schema) {
			t.Fatalf("%s: schema read back\n%s\nwant\n%s", f.Key, tbl.Schema(), schema)
		}
		cols := make([]*arrow.Chunked, tbl.NumCols())
		for i := range cols {
			cols[i] = tbl.Column(i).Data()
		}
		got = append(got, cols)
	}
	all := make([]*arrow.Chunked, len(want))
	for i := range all {
		var chunks []arrow.Array
		for _, cols := range got {
			chunks = append(chunks, cols[i].Chunks()...)
		}
		all[i] = arrow.NewChunked(schema.Field(i).Type, chunks)
		defer all[i].Release()
	}
	g, w := rowStrings(all), rowStrings(want)
	for i := range w {
		if len(g[i]) != len(w[i]) {
			t.Fatalf("column %s: %d rows read back, want %d", schema.Field(i).Name, len(g[i]), len(w[i]))
		}
		for j := range w[i] {
			if g[i][j] != w[i][j] {
				t.Fatalf("column %s row %d: read %q, wrote %q", schema.Field(i).Name, j, g[i][j], w[i][j])
			}
		}
	}
}

// sameSchema compares names, types and nullability, ignoring the field
// metadata the reader adds (PARQUET:field_id).
func sameSchema(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i, f := range a.Fields() {
		g := b.Field(i)
		if f.Name != g.Name || f.Nullable != g.Nullable || !arrow.TypeEqual(f.Type, g.Type) {
			return false
		}
	}
	return true
}

func newConfig(t testing.TB, st stage.Store, schema *arrow.Schema) ingest.Config {
	t.Helper()
	seg, err := stage.NewSegment()
	if err != nil {
		t.Fatal(err)
	}
	return ingest.Config{Store: st, StorageID: storageID, Segment: seg, Schema: schema}
}

func checked(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// left lists what is stored under the table, and on S3 also any open
// multipart upload under it.
func left(t *testing.T, st stage.Store) []string {
	t.Helper()
	prefix, err := stage.TablePrefix(storageID)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.List(context.WithoutCancel(t.Context()), prefix, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if up, ok := st.(stage.Uploads); ok {
		ups, err := up.ListUploads(context.WithoutCancel(t.Context()), prefix)
		if err != nil && !errors.Is(err, stage.ErrNotFound) { // the stand-in's answer when a bucket never had uploads

			t.Fatal(err)
		}
		for _, u := range ups {
			keys = append(keys, "upload:"+u.Key)
		}
	}
	return keys
}

func hasUpload(t *testing.T, st stage.Store) bool {
	for _, k := range left(t, st) {
		if strings.HasPrefix(k, "upload:") {
			return true
		}
	}
	return false
}

func TestWriteReadBack(t *testing.T) {
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		cases := []struct {
			name      string
			target    int64
			rgRows    int64
			sizes     []int
			wantFiles int
		}{
			{"three batches one file", 0, 0, []int{100, 1, 257}, 1},
			{"row groups of 10 rows", 0, 10, []int{100, 1, 257}, 1},
			{"a part per batch", 1, 0, []int{100, 1, 257}, 3},
			{"parts of some batches", 20 << 10, 64, []int{500, 500, 500, 500, 500, 500}, 0},
			{"empty batches skipped", 1, 0, []int{0, 5, 0, 0, 7, 0}, 2},
			{"no batches", 0, 0, nil, 1},
			{"only empty batches", 1, 0, []int{0, 0}, 1},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				mem := checked(t)
				cfg := newConfig(t, st, mixed)
				cfg.TargetFileBytes, cfg.RowGroupRows, cfg.Allocator = c.target, c.rgRows, mem
				w, err := ingest.New(t.Context(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				var batches []arrow.RecordBatch
				start := 0
				for _, n := range c.sizes {
					rec := mixedBatch(t, memory.DefaultAllocator, start, n)
					defer rec.Release()
					start += n
					if err := w.Write(rec); err != nil {
						t.Fatal(err)
					}
					batches = append(batches, rec)
				}
				files, err := w.Close()
				if err != nil {
					t.Fatal(err)
				}
				if c.wantFiles > 0 && len(files) != c.wantFiles || len(files) < 2 && c.wantFiles == 0 {
					t.Fatalf("%d files, want %d (0: several)", len(files), c.wantFiles)
				}
				var rows int64
				for i, f := range files {
					key, _ := stage.TableFileKey(storageID, cfg.Segment, i)
					if f.Key != key {
						t.Errorf("file %d key %q, want %q", i, f.Key, key)
					}
					if f.Rows == 0 && len(files) > 1 {
						t.Errorf("empty part %s among %d", f.Key, len(files))
					}
					rows += f.Rows
				}
				if rows != int64(start) {
					t.Errorf("%d rows in files, wrote %d", rows, start)
				}
				compare(t, st, files, mixed, batches)
				if _, err := w.Close(); !errors.Is(err, ingest.ErrClosed) {
					t.Errorf("second Close: %v", err)
				}
				if err := w.Abort(); !errors.Is(err, ingest.ErrClosed) {
					t.Errorf("Abort after Close: %v", err)
				}
				if got := len(left(t, st)); got < len(files) {
					t.Errorf("Abort after Close deleted files: %d left of %d", got, len(files))
				}
				if err := st.Delete(t.Context(), keys(files)...); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

func keys(files []ingest.File) []string {
	var ks []string
	for _, f := range files {
		ks = append(ks, f.Key)
	}
	return ks
}

func TestRowGroups(t *testing.T) {
	st := stagetest.Local(t).Open(t, "acme")
	cfg := newConfig(t, st, mixed)
	cfg.RowGroupRows = 100
	rec := mixedBatch(t, memory.DefaultAllocator, 0, 1050)
	defer rec.Release()
	files, rows, err := ingest.Copy(t.Context(), cfg, mustReader(t, mixed, rec, rec))
	if err != nil || rows != 2100 || len(files) != 1 {
		t.Fatalf("%v %d %v", files, rows, err)
	}
	data := storedBytes(t, st, files[0].Key)
	pr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if n := pr.NumRowGroups(); n != 21 {
		t.Errorf("%d row groups of at most 100 rows for 2100 rows, want 21", n)
	}
}

func mustReader(t testing.TB, schema *arrow.Schema, recs ...arrow.RecordBatch) array.RecordReader {
	r, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestZeroRows(t *testing.T) {
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		files, rows, err := ingest.Copy(t.Context(), newConfig(t, st, mixed), mustReader(t, mixed))
		if err != nil || rows != 0 || len(files) != 1 || files[0].Rows != 0 {
			t.Fatalf("%+v %d %v", files, rows, err)
		}
		tbl := readFile(t, st, files[0])
		if !sameSchema(tbl.Schema(), mixed) || tbl.NumRows() != 0 {
			t.Fatalf("0-row file: %d rows, schema\n%s", tbl.NumRows(), tbl.Schema())
		}
	})
}

// incompressible returns a batch of n rows of size random bytes each.
func incompressible(t testing.TB, schema *arrow.Schema, n, size int) arrow.RecordBatch {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	buf := make([]byte, size)
	for range n {
		_, _ = rand.Read(buf)
		bld.Field(0).(*array.BinaryBuilder).Append(buf)
	}
	return bld.NewRecordBatch()
}

var blobs = arrow.NewSchema([]arrow.Field{{Name: "blob", Type: arrow.BinaryTypes.Binary}}, nil)

func TestAbort(t *testing.T) {
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		rec := incompressible(t, blobs, 64, 64<<10) // 4 MiB
		defer rec.Release()
		cases := []struct {
			name   string
			target int64
			writes int
			upload bool // a multipart upload is open when Abort runs (S3)
		}{
			{"before any write", 0, 0, false},
			{"mid first part", 0, 1, false},
			{"mid multipart upload", 0, 6, true}, // 5 row groups (20 MiB) flushed to the store, which uploads over 16 MiB in parts
			{"after parts", 5 << 20, 7, false},   // parts 0-2 stored (8 MiB each), part 3 buffered
			{"between parts", 1, 3, false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				mem := checked(t)
				cfg := newConfig(t, st, blobs)
				cfg.TargetFileBytes, cfg.RowGroupRows, cfg.Allocator = c.target, 64, mem
				w, err := ingest.New(t.Context(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				for range c.writes {
					if err := w.Write(rec); err != nil {
						t.Fatal(err)
					}
				}
				if c.upload && b.Name == "s3" && !hasUpload(t, st) {
					t.Fatal("control: no multipart upload open before Abort")
				}
				if err := w.Abort(); err != nil {
					t.Fatal(err)
				}
				if l := left(t, st); len(l) != 0 {
					t.Errorf("left after Abort: %v", l)
				}
				if err := w.Write(rec); !errors.Is(err, ingest.ErrClosed) {
					t.Errorf("Write after Abort: %v", err)
				}
				if _, err := w.Close(); !errors.Is(err, ingest.ErrClosed) {
					t.Errorf("Close after Abort: %v", err)
				}
				if err := w.Abort(); err != nil {
					t.Errorf("second Abort: %v", err)
				}
			})
		}
	})
}

// cancelReader yields rec n times, canceling its context before the k-th.
type cancelReader struct {
	array.RecordReader
	rec    arrow.RecordBatch
	n, k   int
	before func() // runs just before cancel
	cancel context.CancelFunc
}

func (r *cancelReader) Next() bool {
	if r.n == r.k {
		if r.before != nil {
			r.before()
		}
		r.cancel()
	}
	r.n--
	return r.n >= 0
}
func (r *cancelReader) RecordBatch() arrow.RecordBatch { return r.rec }
func (r *cancelReader) Err() error                     { return nil }

func TestCancel(t *testing.T) {
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		rec := incompressible(t, blobs, 64, 64<<10) // 4 MiB
		defer rec.Release()
		for _, c := range []struct {
			name   string
			target int64
			at     int
		}{
			{"before the first batch", 0, 0},
			{"mid multipart upload", 0, 6},         // 24 MiB flushed: S3 has sent parts
			{"after parts", 5 << 20, 7},            // part 0 stored
			{"before close, parts stored", 1, 100}, // cancel on the final Next
		} {
			t.Run(c.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				mem := checked(t)
				cfg := newConfig(t, st, blobs)
				cfg.TargetFileBytes, cfg.RowGroupRows, cfg.Allocator = c.target, 64, mem
				n := 10
				if c.at == 100 {
					n, c.at = 3, 0
				} else {
					c.at = n - c.at
				}
				before := func() {
					if c.name == "mid multipart upload" && b.Name == "s3" && !hasUpload(t, st) {
						t.Error("control: no multipart upload open at cancel")
					}
				}
				files, _, err := ingest.Copy(ctx, cfg, &cancelReader{rec: rec, n: n, k: c.at, before: before, cancel: cancel})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Copy after cancel: %v, %v", files, err)
				}
				if l := left(t, st); len(l) != 0 {
					t.Errorf("left after cancel: %v", l)
				}
			})
		}
	})
}

// Canceling while a Write is blocked on the upload fails the Write.
func TestCancelDuringWrite(t *testing.T) {
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		rec := incompressible(t, blobs, 64, 64<<10)
		defer rec.Release()
		ctx, cancel := context.WithCancel(t.Context())
		cfg := newConfig(t, st, blobs)
		cfg.RowGroupRows = 64
		w, err := ingest.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			for {
				if err := w.Write(rec); err != nil {
					done <- err
					return
				}
			}
		}()
		// Wait until the part is on its way: a temporary file (local) or
		// an open multipart upload (S3).
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if b.Name == "s3" && hasUpload(t, st) || b.Name == "local" && len(b.RawList(t, "tenants/acme/tables/")) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the upload never started")
			}
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Write after cancel: %v", err)
		}
		if l := left(t, st); len(l) != 0 {
			t.Errorf("left after cancel: %v", l)
		}
	})
}

func TestReusedSegmentKeepsFirstWritersFiles(t *testing.T) {
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		rec := mixedBatch(t, memory.DefaultAllocator, 0, 10)
		defer rec.Release()
		cfg := newConfig(t, st, mixed)
		files, _, err := ingest.Copy(t.Context(), cfg, mustReader(t, mixed, rec))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = ingest.Copy(t.Context(), cfg, mustReader(t, mixed, rec, rec))
		if !errors.Is(err, stage.ErrExists) {
			t.Fatalf("second writer of a segment: %v", err)
		}
		compare(t, st, files, mixed, []arrow.RecordBatch{rec})
	})
}

type errReader struct{ array.RecordReader }

func (errReader) Next() bool { return false }
func (errReader) Err() error { return io.ErrUnexpectedEOF }

func TestCopyErrors(t *testing.T) {
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		rec := mixedBatch(t, memory.DefaultAllocator, 0, 10)
		defer rec.Release()
		other := incompressible(t, blobs, 1, 1)
		defer other.Release()
		r := mustReader(t, mixed, rec)
		r.Next()
		if _, _, err := ingest.Copy(t.Context(), newConfig(t, st, mixed), errReader{r}); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("reader error: %v", err)
		}
		cfg := newConfig(t, st, mixed)
		cfg.TargetFileBytes = 1
		w, err := ingest.New(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(other); !errors.Is(err, ingest.ErrSchema) {
			t.Errorf("batch of another schema: %v", err)
		}
		if err := w.Write(rec); !errors.Is(err, ingest.ErrSchema) {
			t.Errorf("Write after a failed Write: %v", err)
		}
		if err := w.Abort(); err != nil {
			t.Errorf("Abort after a failed Write: %v", err)
		}
		if l := left(t, st); len(l) != 0 {
			t.Errorf("left after errors: %v", l)
		}
	})
}

func TestConfig(t *testing.T) {
	st := stagetest.Local(t).Open(t, "acme")
	good := newConfig(t, st, mixed)
	for _, c := range []struct {
		name string
		edit func(*ingest.Config)
	}{
		{"no store", func(c *ingest.Config) { c.Store = nil }},
		{"no schema", func(c *ingest.Config) { c.Schema = nil }},
		{"bad storage id", func(c *ingest.Config) { c.StorageID = "../t" }},
		{"bad segment", func(c *ingest.Config) { c.Segment = "x/../y" }},
		{"negative target", func(c *ingest.Config) { c.TargetFileBytes = -1 }},
		{"negative row group", func(c *ingest.Config) { c.RowGroupRows = -1 }},
	} {
		cfg := good
		c.edit(&cfg)
		if _, err := ingest.New(t.Context(), cfg); !errors.Is(err, ingest.ErrInvalidConfig) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := good.Validate(); err != nil {
		t.Error(err)
	}
}

func TestUnsupportedType(t *testing.T) {
	json, _ := extensions.NewJSONType(arrow.BinaryTypes.String)
	cases := []struct {
		typ    arrow.DataType
		column string
	}{
		{arrow.Null, "c"},
		{arrow.FixedWidthTypes.Float16, "c"},
		{arrow.BinaryTypes.StringView, "c"},
		{arrow.BinaryTypes.BinaryView, "c"},
		{arrow.FixedWidthTypes.Date64, "c"},
		{arrow.FixedWidthTypes.Time32s, "c"},
		{arrow.FixedWidthTypes.Time64ns, "c"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, "c"},
		{&arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, "c"},
		{arrow.FixedWidthTypes.Duration_us, "c"},
		{arrow.FixedWidthTypes.MonthDayNanoInterval, "c"},
		{&arrow.Decimal32Type{Precision: 9, Scale: 2}, "c"},
		{&arrow.Decimal64Type{Precision: 18, Scale: 2}, "c"},
		{&arrow.Decimal256Type{Precision: 40, Scale: 2}, "c"},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}, "c"},
		{arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), "c"},
		{arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, []arrow.UnionTypeCode{0}), "c"},
		{arrow.DenseUnionOf([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, []arrow.UnionTypeCode{0}), "c"},
		{arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), "c"},
		{arrow.ListViewOf(arrow.PrimitiveTypes.Int32), "c"},
		{json, "c"},
		{arrow.StructOf(), "c"},
		{arrow.ListOf(arrow.BinaryTypes.StringView), "c.item"},
		{arrow.StructOf(arrow.Field{Name: "ok", Type: arrow.PrimitiveTypes.Int8}, arrow.Field{Name: "d", Type: arrow.FixedWidthTypes.Duration_s}), "c.d"},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.FixedWidthTypes.Float16), "c.value"},
		{arrow.MapOf(arrow.FixedWidthTypes.Date64, arrow.PrimitiveTypes.Int8), "c.key"},
	}
	st := stagetest.Local(t).Open(t, "acme")
	for _, c := range cases {
		schema := arrow.NewSchema([]arrow.Field{{Name: "ok", Type: arrow.PrimitiveTypes.Int64}, {Name: "c", Type: c.typ, Nullable: true}}, nil)
		_, err := ingest.New(t.Context(), newConfig(t, st, schema))
		var ce *ingest.ColumnError
		if !errors.Is(err, ingest.ErrUnsupportedType) || !errors.As(err, &ce) || ce.Column != c.column {
			t.Errorf("%v: got %v, want ErrUnsupportedType naming %q", c.typ, err, c.column)
		}
	}
	if err := ingest.CheckSchema(mixed); err != nil {
		t.Errorf("mixed: %v", err)
	}
	// No columns (FuzzIngestIPC's third finding): Parquet keeps a row count
	// only through columns, so a batch's rows would be recorded, not stored.
	if _, err := ingest.New(t.Context(), newConfig(t, st, arrow.NewSchema(nil, nil))); !errors.Is(err, ingest.ErrMalformed) {
		t.Errorf("no columns: got %v, want ErrMalformed", err)
	}
	if l := left(t, st); len(l) != 0 {
		t.Errorf("refused schemas stored %v", l)
	}
}
