package ingest

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Codec is the compression of a data file's pages.
type Codec string

// The codecs a table may choose (the table property CodecProperty).
const (
	// CodecZstd is the default: the smallest files, the most CPU to write.
	CodecZstd Codec = "zstd"
	// CodecSnappy writes and reads faster than zstd and stores more bytes.
	CodecSnappy Codec = "snappy"
	// CodecUncompressed stores the encoded pages as they are.
	CodecUncompressed Codec = "uncompressed"
)

// CodecProperty is the table property that chooses the codec of the
// table's data files.
const CodecProperty = "parquet.compression"

// zstdLevel is the zstd level of data pages: arrow-go's zstd (klauspost)
// at level 1 ("fastest") writes files of the same size as its default
// level on ingest's data (dictionary off, plain pages) with about a third
// less CPU (see docs/performance.md, Ingest).
const zstdLevel = 1

// ParseCodec returns the codec named s: "zstd" (also ""), "snappy" or
// "uncompressed". Any other value is an error naming the accepted ones.
func ParseCodec(s string) (Codec, error) {
	switch c := Codec(s); c {
	case "":
		return CodecZstd, nil
	case CodecZstd, CodecSnappy, CodecUncompressed:
		return c, nil
	}
	return "", fmt.Errorf("ingest: unknown Parquet codec %q: use %s, %s or %s", s, CodecZstd, CodecSnappy, CodecUncompressed)
}

// options returns the writer properties of c (a valid codec).
func (c Codec) options() []parquet.WriterProperty {
	switch c {
	case CodecSnappy:
		return []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy)}
	case CodecUncompressed:
		return []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Uncompressed)}
	}
	return []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCompressionLevel(zstdLevel)}
}

// encodingSample is how many leading values of a column's first batch
// decide its encoding.
const encodingSample = 4096

// encodingChoice returns the per-column encoding properties for a segment
// whose first batch is rec (nil: a segment without rows), judged on each
// top-level column's first encodingSample values:
//
//   - dictionary encoding only for a column that arrives dictionary-encoded
//     and for a string or binary column at most a quarter distinct: trying
//     a dictionary on every column cost a sixth of the encoder's CPU and
//     made high-cardinality columns larger than plain pages compressed with
//     zstd;
//   - DELTA_BINARY_PACKED for an integer, date, time or timestamp column
//     whose successive differences span less than 2^16 (ids, sequences,
//     event times): a few bits a value, which zstd then barely has to
//     compress;
//   - DELTA_BYTE_ARRAY for a string or binary column whose values share at
//     least half their bytes with the value before (sorted keys, labels
//     with a common stem);
//   - PLAIN otherwise.
//
// See docs/performance.md, Ingest, for the measurements behind each.
//
// The batch has passed the writer's checks; a panic reading it anyway is
// ErrMalformed.
func (w *Writer) encodingChoice(rec arrow.RecordBatch) (opts []parquet.WriterProperty, err error) {
	if w.cfg.legacy {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			opts, err = nil, fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	opts = []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}
	if rec == nil {
		return opts, nil
	}
	for i, f := range rec.Schema().Fields() {
		path := parquet.ColumnPath{f.Name}
		col := rec.Column(i)
		switch {
		case dictionaryPays(col):
			opts = append(opts, parquet.WithDictionaryPath(path, true))
		case narrowDeltas(col):
			opts = append(opts, parquet.WithEncodingPath(path, parquet.Encodings.DeltaBinaryPacked))
		case sharedPrefixes(col):
			opts = append(opts, parquet.WithEncodingPath(path, parquet.Encodings.DeltaByteArray))
		}
	}
	return opts, nil
}

// binaryValues returns a function reading value j of a string or binary
// column, nil for other columns.
func binaryValues(col arrow.Array) func(int) string {
	switch a := col.(type) {
	case *array.String:
		return a.Value
	case *array.LargeString:
		return a.Value
	case *array.Binary:
		return a.ValueString
	case *array.LargeBinary:
		return a.ValueString
	}
	return nil
}

// dictionaryPays reports whether a top-level column should be
// dictionary-encoded: it arrives as a dictionary, or it is a string or
// binary column whose first values are at most a quarter distinct.
func dictionaryPays(col arrow.Array) bool {
	if _, ok := col.(*array.Dictionary); ok {
		return true
	}
	value := binaryValues(col)
	if value == nil {
		return false
	}
	seen := make(map[string]struct{})
	n := 0
	for j := 0; j < col.Len() && n < encodingSample; j++ {
		if col.IsValid(j) {
			n++
			seen[value(j)] = struct{}{}
		}
	}
	return n > 0 && len(seen)*4 <= n
}

// narrowDeltas reports whether the first values of an integer, date, time
// or timestamp column differ from one to the next by amounts spanning less
// than 2^16.
func narrowDeltas(col arrow.Array) bool {
	var value func(int) int64
	switch a := col.(type) {
	case *array.Int64:
		value = a.Value
	case *array.Int32:
		value = func(j int) int64 { return int64(a.Value(j)) }
	case *array.Int16:
		value = func(j int) int64 { return int64(a.Value(j)) }
	case *array.Int8:
		value = func(j int) int64 { return int64(a.Value(j)) }
	case *array.Timestamp:
		value = func(j int) int64 { return int64(a.Value(j)) }
	case *array.Date32:
		value = func(j int) int64 { return int64(a.Value(j)) }
	case *array.Time32:
		value = func(j int) int64 { return int64(a.Value(j)) }
	case *array.Time64:
		value = func(j int) int64 { return int64(a.Value(j)) }
	default:
		return false
	}
	var (
		prev, lo, hi int64
		n            int
	)
	for j := 0; j < col.Len() && n < encodingSample; j++ {
		if !col.IsValid(j) {
			continue
		}
		v := value(j)
		if n > 0 {
			// Differences wrap around, as the encoding's own do.
			d := v - prev
			if n == 1 {
				lo, hi = d, d
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		prev = v
		n++
	}
	return n > 1 && uint64(hi-lo) < 1<<16
}

// sharedPrefixes reports whether the first values of a string or binary
// column share at least half their bytes with the value before.
func sharedPrefixes(col arrow.Array) bool {
	value := binaryValues(col)
	if value == nil {
		return false
	}
	var (
		prev          string
		shared, total int
		n             int
	)
	for j := 0; j < col.Len() && n < encodingSample; j++ {
		if !col.IsValid(j) {
			continue
		}
		v := value(j)
		k := 0
		for k < len(v) && k < len(prev) && v[k] == prev[k] {
			k++
		}
		shared += k
		total += len(v)
		prev = v
		n++
	}
	return n > 1 && total > 0 && 2*shared >= total
}
