package accesslog

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Compaction: a table version lists at most so many files, and the log adds
// one per flush per tenant per gateway, so a tenant's small files are
// merged now and then into larger ones (the gateway's sink decides when and
// commits the result). Merge is the file part of it.

// mergeRowGroup bounds the rows of one row group of a merged file, so a
// reader never holds a whole merged file's column chunk at once.
const mergeRowGroup = 128 << 10

// Merge reads files, access-log Parquet files (Encode's, or Merge's), and
// writes their events, in the order given, as one Parquet file with the
// columns of Columns. It returns the file and its number of events. A file
// whose columns are not the access log's is refused: Merge never turns
// something else into events.
func Merge(ctx context.Context, files [][]byte) ([]byte, int64, error) {
	if len(files) == 0 {
		return nil, 0, errors.New("accesslog: merge: no files")
	}
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(mergeRowGroup),
		parquet.WithCreatedBy("lakegate"),
	)
	w, err := pqarrow.NewFileWriter(columns, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, 0, fmt.Errorf("accesslog: merge: parquet writer: %w", err)
	}
	var rows int64
	for i, data := range files {
		n, err := copyFile(ctx, w, data)
		if err != nil {
			_ = w.Close()
			return nil, 0, fmt.Errorf("accesslog: merge: file %d of %d: %w", i+1, len(files), err)
		}
		rows += n
	}
	if err := w.Close(); err != nil {
		return nil, 0, fmt.Errorf("accesslog: merge: close parquet file: %w", err)
	}
	return buf.Bytes(), rows, nil
}

// copyFile appends the events of one access-log file to w.
func copyFile(ctx context.Context, w *pqarrow.FileWriter, data []byte) (int64, error) {
	pf, err := pqfile.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	defer pf.Close()
	rd, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: mergeRowGroup}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	sc, err := rd.Schema()
	if err != nil {
		return 0, err
	}
	if !sameColumns(sc, columns) {
		return 0, fmt.Errorf("not an access-log file: columns %s", sc)
	}
	rr, err := rd.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var n int64
	for rr.Next() {
		rec := rr.RecordBatch()
		// The file's own schema may carry metadata; the merged file's is
		// the access log's.
		out := array.NewRecordBatch(columns, rec.Columns(), rec.NumRows())
		err := w.WriteBuffered(out)
		out.Release()
		if err != nil {
			return n, err
		}
		n += rec.NumRows()
	}
	if err := rr.Err(); err != nil {
		return n, err
	}
	if n != pf.NumRows() {
		return n, fmt.Errorf("read %d of its %d events", n, pf.NumRows())
	}
	return n, nil
}

// sameColumns reports whether a and b have the same fields (names, types,
// nullability), in order.
func sameColumns(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}
