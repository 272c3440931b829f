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

// dictionarySample is how many leading values of a string column's first
// batch decide whether the column is dictionary-encoded.
const dictionarySample = 4096

// dictionaryChoice returns the dictionary properties for a segment whose
// first batch is rec (nil: a segment without rows). Dictionary encoding is off except for top-level
// columns that arrive dictionary-encoded and string or binary columns
// whose first dictionarySample values are at most a quarter distinct.
// Trying a dictionary on every column cost a sixth of the encoder's CPU and
// made high-cardinality columns larger than plain pages compressed with
// zstd (docs/performance.md, Ingest); a column of few distinct values is
// smaller and faster to read with one.
func (w *Writer) dictionaryChoice(rec arrow.RecordBatch) []parquet.WriterProperty {
	if w.cfg.legacy {
		return nil
	}
	opts := []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}
	if rec == nil {
		return opts
	}
	for i, f := range rec.Schema().Fields() {
		if dictionaryPays(rec.Column(i)) {
			opts = append(opts, parquet.WithDictionaryPath(parquet.ColumnPath{f.Name}, true))
		}
	}
	return opts
}

// dictionaryPays reports whether a top-level column should be
// dictionary-encoded, judging by its first values.
func dictionaryPays(col arrow.Array) bool {
	var value func(int) string
	switch a := col.(type) {
	case *array.Dictionary:
		return true
	case *array.String:
		value = a.Value
	case *array.LargeString:
		value = a.Value
	case *array.Binary:
		value = a.ValueString
	case *array.LargeBinary:
		value = a.ValueString
	default:
		return false
	}
	seen := make(map[string]struct{})
	n := 0
	for j := 0; j < col.Len() && n < dictionarySample; j++ {
		if col.IsValid(j) {
			n++
			seen[value(j)] = struct{}{}
		}
	}
	return n > 0 && len(seen)*4 <= n
}
