package ingest_test

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"lakegate/flight/ingest"
	"lakegate/flight/ingest/ingesttest"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// flatColumns are the columns of mixed that are one Parquet leaf each:
// the schemas the parallel column encoder writes.
var flatColumns = func() []int {
	var idx []int
	for i, f := range mixed.Fields() {
		switch f.Type.(type) {
		case *arrow.ListType, *arrow.StructType, *arrow.MapType:
		default:
			idx = append(idx, i)
		}
	}
	return idx
}()

var flat = func() *arrow.Schema {
	var fs []arrow.Field
	for _, i := range flatColumns {
		fs = append(fs, mixed.Field(i))
	}
	return arrow.NewSchema(fs, nil)
}()

// flatBatch is mixedBatch without its nested columns.
func flatBatch(t testing.TB, start, n int) arrow.RecordBatch {
	rec := mixedBatch(t, memory.DefaultAllocator, start, n)
	defer rec.Release()
	cols := make([]arrow.Array, len(flatColumns))
	for j, i := range flatColumns {
		cols[j] = rec.Column(i)
	}
	return array.NewRecordBatch(flat, cols, rec.NumRows())
}

// The parallel column encoder (Workers > 1, flat schemas) writes the very
// bytes pqarrow's FileWriter writes (Workers 1) for the same batches and
// settings, so everything the read-back tests prove of one holds for the
// other; the files also read back as written.
func TestColumnEncoderWritesPqarrowBytes(t *testing.T) {
	st := stagetest.Local(t).Open(t, "acme")
	cases := []struct {
		name   string
		rgRows int64
		sizes  []int
		codec  ingest.Codec
	}{
		{"one batch", 0, []int{300}, ""},
		{"row groups cut inside batches", 7, []int{100, 1, 257}, ""},
		{"row group per batch", 64, []int{64, 64, 64}, ""},
		{"snappy", 10, []int{55, 200}, ingest.CodecSnappy},
		{"uncompressed", 0, []int{55, 200}, ingest.CodecUncompressed},
		{"no rows", 0, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var batches []arrow.RecordBatch
			start := 0
			for _, n := range c.sizes {
				rec := flatBatch(t, start, n)
				defer rec.Release()
				batches = append(batches, rec)
				start += n
			}
			sums := map[int]string{}
			for _, workers := range []int{1, 2, 8} {
				mem := checked(t)
				cfg := newConfig(t, st, flat)
				cfg.RowGroupRows, cfg.Codec, cfg.Workers, cfg.Allocator = c.rgRows, c.codec, workers, mem
				files, rows, err := ingest.Copy(t.Context(), cfg, mustReader(t, flat, batches...))
				if err != nil || rows != int64(start) || len(files) != 1 {
					t.Fatalf("workers %d: %v %d rows, %v", workers, files, rows, err)
				}
				sums[workers] = files[0].SHA256
				if c.codec == "" {
					compare(t, st, files, flat, batches)
				}
				if err := st.Delete(t.Context(), keys(files)...); err != nil {
					t.Fatal(err)
				}
			}
			if sums[1] != sums[2] || sums[1] != sums[8] {
				t.Errorf("the files differ by encoder: %v", sums)
			}
		})
	}
}

// failingReader yields good batches of ~1 MiB of incompressible Arrow
// data until it has yielded good, then bad.
type failingReader struct {
	array.RecordReader
	schema    *arrow.Schema
	good, n   int
	bad, cur  arrow.RecordBatch
	goodBatch func(i int) arrow.RecordBatch
}

func (r *failingReader) Schema() *arrow.Schema { return r.schema }
func (r *failingReader) Err() error            { return nil }
func (r *failingReader) Release() {
	if r.cur != nil && r.cur != r.bad {
		r.cur.Release()
	}
	r.cur = nil
}
func (r *failingReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *failingReader) Next() bool {
	r.Release()
	switch {
	case r.n < r.good:
		r.cur = r.goodBatch(r.n)
	case r.n == r.good:
		r.cur = r.bad
	default:
		return false
	}
	r.n++
	return true
}

// wideFlat is a flat schema with a required column, written by either
// encoder.
var wideFlat = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "blob", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// wideBatch is rows [first, first+n) of wideFlat with 16 KiB random blobs.
func wideBatch(t testing.TB, first, n int) arrow.RecordBatch {
	blobs := incompressible(t, blobs, n, 16<<10)
	defer blobs.Release()
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	defer ids.Release()
	ss := array.NewStringBuilder(memory.DefaultAllocator)
	defer ss.Release()
	for i := first; i < first+n; i++ {
		ids.Append(int64(i))
		ss.Append("row")
	}
	id, s := ids.NewArray(), ss.NewArray()
	defer id.Release()
	defer s.Release()
	return array.NewRecordBatch(wideFlat, []arrow.Array{id, blobs.Column(0), s}, int64(n))
}

// A stream that turns malformed after megabytes of good batches — parts
// already stored, a row group buffered, on S3 a multipart upload open —
// fails the whole write with ErrMalformed and leaves nothing in the stage,
// whichever encoder wrote it. The required column holding nulls is a rule
// of the writer's own (a Parquet required column has no place for a null;
// before the rule the nulls were stored as the values under them).
func TestFailureMidwayLeavesNothing(t *testing.T) {
	nullInRequired := func(t testing.TB) arrow.RecordBatch {
		good := wideBatch(t, 0, 4)
		defer good.Release()
		ids := array.NewInt64Builder(memory.DefaultAllocator)
		defer ids.Release()
		ids.AppendValues([]int64{1, 2, 3, 4}, []bool{true, false, true, true})
		id := ids.NewArray()
		defer id.Release()
		return array.NewRecordBatch(wideFlat, []arrow.Array{id, good.Column(1), good.Column(2)}, 4)
	}
	badUTF8 := func(t testing.TB) arrow.RecordBatch {
		good := wideBatch(t, 0, 2)
		defer good.Release()
		ss := array.NewStringBuilder(memory.DefaultAllocator)
		defer ss.Release()
		ss.Append("ok")
		ss.Append("\xff\xfe")
		s := ss.NewArray()
		defer s.Release()
		return array.NewRecordBatch(wideFlat, []arrow.Array{good.Column(0), good.Column(1), s}, 2)
	}
	backends(t, func(t *testing.T, b *stagetest.Backend, st stage.Store) {
		for _, bad := range []struct {
			name string
			make func(testing.TB) arrow.RecordBatch
		}{
			{"null in a required column", nullInRequired},
			{"invalid UTF-8", badUTF8},
		} {
			for _, c := range []struct {
				name    string
				workers int
				target  int64
				good    int
			}{
				{"pqarrow, one part buffered", 1, 0, 3},
				{"columns, one part buffered", 2, 0, 3},
				{"pqarrow, parts stored", 1, 6 << 20, 24}, // 24 MiB: parts 0-2 stored, on S3 over multipart
				{"columns, parts stored", 2, 6 << 20, 24},
			} {
				t.Run(bad.name+"/"+c.name, func(t *testing.T) {
					rec := bad.make(t)
					defer rec.Release()
					// Not a checked allocator: a Parquet writer closed after
					// its sink failed does not return all its buffers (the
					// Go allocator's memory is collected).
					cfg := newConfig(t, st, wideFlat)
					cfg.Workers, cfg.TargetFileBytes, cfg.RowGroupRows = c.workers, c.target, 32
					r := &failingReader{schema: wideFlat, good: c.good, bad: rec,
						goodBatch: func(i int) arrow.RecordBatch { return wideBatch(t, i*64, 64) }}
					defer r.Release()
					files, _, err := ingest.Copy(t.Context(), cfg, r)
					if !errors.Is(err, ingest.ErrMalformed) {
						t.Fatalf("Copy: %v files, %v; want ErrMalformed", files, err)
					}
					if l := left(t, st); len(l) != 0 {
						t.Errorf("left after the failure: %v", l)
					}
				})
			}
		}
	})
}

// A table's codec is the codec of every column chunk of its files; an
// unknown codec is refused before anything is written.
func TestCodec(t *testing.T) {
	st := stagetest.Local(t).Open(t, "acme")
	for _, c := range []struct {
		codec ingest.Codec
		want  compress.Compression
	}{
		{"", compress.Codecs.Zstd},
		{ingest.CodecZstd, compress.Codecs.Zstd},
		{ingest.CodecSnappy, compress.Codecs.Snappy},
		{ingest.CodecUncompressed, compress.Codecs.Uncompressed},
	} {
		for _, schema := range []*arrow.Schema{flat, mixed} {
			rec := mixedBatch(t, memory.DefaultAllocator, 0, 50)
			defer rec.Release()
			if schema == flat {
				rec = flatBatch(t, 0, 50)
				defer rec.Release()
			}
			cfg := newConfig(t, st, schema)
			cfg.Codec = c.codec
			files, _, err := ingest.Copy(t.Context(), cfg, mustReader(t, schema, rec))
			if err != nil {
				t.Fatal(err)
			}
			if got := codecsOf(t, st, files[0]); len(got) != 1 || got[0] != c.want {
				t.Errorf("codec %q, %d columns: column chunks compressed with %v, want %v", c.codec, schema.NumFields(), got, c.want)
			}
		}
	}
	for _, s := range []string{"gzip", "ZSTD", "lz4", " zstd", "none"} {
		if _, err := ingest.ParseCodec(s); err == nil || !strings.Contains(err.Error(), "zstd, snappy or uncompressed") {
			t.Errorf("ParseCodec(%q): %v", s, err)
		}
		cfg := newConfig(t, st, flat)
		cfg.Codec = ingest.Codec(s)
		if _, err := ingest.New(t.Context(), cfg); !errors.Is(err, ingest.ErrInvalidConfig) {
			t.Errorf("Codec %q: %v", s, err)
		}
	}
}

// codecsOf returns the distinct codecs of f's column chunks.
func codecsOf(t *testing.T, st stage.Store, f ingest.File) []compress.Compression {
	t.Helper()
	got, err := ingesttest.Codecs(bytes.NewReader(storedBytes(t, st, f.Key)))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Each column's encoding is chosen by its first batch: a dictionary for a
// string column of few distinct values and for a dictionary column, delta
// encoding for integers and times that step by small amounts and for
// strings sharing prefixes, plain pages for the rest; whichever encoder
// writes them, the files read back as written and DuckDB reads them.
func TestEncodingChoice(t *testing.T) {
	b := stagetest.Local(t)
	st := b.Open(t, "acme")
	ts := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "rnd", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "small", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "at", Type: ts, Nullable: true},
		{Name: "at_rnd", Type: ts, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "token", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	}, nil)
	want := map[string]string{"seq": "delta", "rnd": "plain", "small": "delta", "at": "delta", "at_rnd": "plain", "day": "delta",
		"x": "plain", "status": "dictionary", "label": "delta", "token": "plain", "dict": "dictionary"}
	rng := mrand.New(mrand.NewPCG(1, 2))
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for i := range 10000 {
		if i%97 == 5 { // nulls do not change the choice
			for j := range schema.NumFields() {
				bld.Field(j).AppendNull()
			}
			continue
		}
		bld.Field(0).(*array.Int64Builder).Append(int64(1_000_000 + i))
		bld.Field(1).(*array.Int64Builder).Append(rng.Int64())
		bld.Field(2).(*array.Int32Builder).Append(int32(i % 300))
		bld.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_704_067_200_000_000 + int64(i)*1000 + rng.Int64N(500)))
		bld.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(1_704_067_200_000_000 + rng.Int64N(300_000_000_000_000)))
		bld.Field(5).(*array.Date32Builder).Append(arrow.Date32(19000 + i/100))
		bld.Field(6).(*array.Float64Builder).Append(float64(i) * 0.25)
		bld.Field(7).(*array.StringBuilder).Append([]string{"open", "paid", "shipped"}[i%3])
		bld.Field(8).(*array.StringBuilder).Append(fmt.Sprintf("customer-%08d", i))
		bld.Field(9).(*array.StringBuilder).Append(fmt.Sprintf("%016x", rng.Uint64()))
		if err := bld.Field(10).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("d-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	for _, workers := range []int{1, 2} {
		cfg := newConfig(t, st, schema)
		cfg.Workers = workers
		files, _, err := ingest.Copy(t.Context(), cfg, mustReader(t, schema, rec))
		if err != nil {
			t.Fatal(err)
		}
		data := storedBytes(t, st, files[0].Key)
		pr, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for c := range pr.MetaData().Schema.NumColumns() {
			cc, err := pr.MetaData().RowGroup(0).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			name := pr.MetaData().Schema.Column(c).Name()
			got := "plain"
			switch encs := cc.Encodings(); {
			case cc.HasDictionaryPage():
				got = "dictionary"
			case slices.Contains(encs, parquet.Encodings.DeltaBinaryPacked), slices.Contains(encs, parquet.Encodings.DeltaByteArray):
				got = "delta"
			}
			if got != want[name] {
				t.Errorf("workers %d: column %s encoded %s (%v), want %s", workers, name, got, cc.Encodings(), want[name])
			}
		}
		pr.Close()
		compare(t, st, files, schema, []arrow.RecordBatch{rec})
		duckdbSums(t, b, files, rec)
	}
}

// duckdbSums checks that DuckDB reads the files' rows as rec holds them:
// the count and a checksum of every column.
func duckdbSums(t *testing.T, b *stagetest.Backend, files []ingest.File, rec arrow.RecordBatch) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var paths []string
	for _, f := range files {
		paths = append(paths, "'"+filepath.Join(b.Abs("tenants/acme"), f.Key)+"'")
	}
	from := " FROM read_parquet([" + strings.Join(paths, ",") + "])"
	var got, want string
	q := "SELECT count(*)::VARCHAR || '/' || sum(seq)::VARCHAR || '/' || sum(rnd::HUGEINT)::VARCHAR || '/' || sum(small)::VARCHAR || '/' || " +
		"sum(epoch_us(\"at\"))::VARCHAR || '/' || sum(epoch_us(at_rnd))::VARCHAR || '/' || sum(day - DATE '1970-01-01')::VARCHAR || '/' || (sum(x) * 4)::BIGINT::VARCHAR || '/' || " +
		"sum(length(status))::VARCHAR || '/' || max(label) || '/' || string_agg(token, '' ORDER BY seq) || '/' || count(DISTINCT dict)::VARCHAR"
	if err := db.QueryRowContext(t.Context(), q+from).Scan(&got); err != nil {
		t.Fatal(err)
	}
	// The same figures computed from the batch.
	var (
		n                          int64
		seq, small, status, dayOff int64
		rnd                        big.Int
		at, atRnd                  big.Int
		x                          float64
		maxLabel, tokens           string
		dicts                      = map[string]bool{}
	)
	cols := rec.Columns()
	for i := range int(rec.NumRows()) {
		if cols[0].IsNull(i) {
			n++
			continue
		}
		n++
		seq += cols[0].(*array.Int64).Value(i)
		rnd.Add(&rnd, big.NewInt(cols[1].(*array.Int64).Value(i)))
		small += int64(cols[2].(*array.Int32).Value(i))
		at.Add(&at, big.NewInt(int64(cols[3].(*array.Timestamp).Value(i))))
		atRnd.Add(&atRnd, big.NewInt(int64(cols[4].(*array.Timestamp).Value(i))))
		dayOff += int64(cols[5].(*array.Date32).Value(i))
		x += cols[6].(*array.Float64).Value(i)
		status += int64(len(cols[7].(*array.String).Value(i)))
		maxLabel = max(maxLabel, cols[8].(*array.String).Value(i))
		tokens += cols[9].(*array.String).Value(i)
		d := cols[10].(*array.Dictionary)
		dicts[d.Dictionary().(*array.String).Value(d.GetValueIndex(i))] = true
	}
	want = fmt.Sprintf("%d/%d/%s/%d/%s/%s/%d/%d/%d/%s/%s/%d", n, seq, rnd.String(), small, at.String(), atRnd.String(), dayOff,
		int64(x*4), status, maxLabel, tokens, len(dicts)) // x holds quarters: its sum is exact
	if got != want {
		t.Errorf("DuckDB reads\n%.200s\nwant\n%.200s", got, want)
	}
}

// TestRequiredColumnShortBitmap: a column whose validity bitmap is shorter
// than the column and whose null count is left to be computed is refused
// with ErrMalformed — not read past its bitmap, where a panic outside any
// recovery ends the process — whether declared nullable or not, whichever
// encoder, and nothing is kept.
func TestRequiredColumnShortBitmap(t *testing.T) {
	for _, c := range []struct {
		workers  int
		nullable bool
	}{{1, false}, {2, false}, {1, true}, {2, true}} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: c.nullable},
			{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: c.nullable}}, nil)
		data := array.NewData(arrow.PrimitiveTypes.Int64, 4096,
			[]*memory.Buffer{memory.NewBufferBytes([]byte{0xff}), memory.NewBufferBytes(make([]byte, 8*4096))}, nil, array.UnknownNullCount, 0)
		defer data.Release()
		col := array.MakeFromData(data)
		defer col.Release()
		rec := array.NewRecordBatch(schema, []arrow.Array{col, col}, 4096)
		defer rec.Release()
		st := stagetest.Local(t).Open(t, "acme")
		cfg := newConfig(t, st, schema)
		cfg.Workers = c.workers
		_, _, err := ingest.Copy(t.Context(), cfg, mustReader(t, schema, rec))
		refusedMalformed(t, st, err)
	}
}
