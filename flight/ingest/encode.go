package ingest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// encoder turns the batches of one part into Parquet bytes written to a
// sink, with row groups buffered in memory until flushed.
//
// Two implementations: columnEncoder encodes the columns of a batch in
// parallel and serves schemas whose columns are all flat (no list, struct
// or map), which is where ingest spends its time; pqarrowEncoder is
// pqarrow's own FileWriter, one column after the other, for the rest.
// Both write the same file layout: the Parquet schema pqarrow derives, the
// Arrow schema in ARROW:schema, one buffered row group at a time.
type encoder interface {
	// write encodes rec (whose schema is the writer's) into the current
	// row group, cutting row groups at the writer's row limit.
	write(rec arrow.RecordBatch) error
	// rowGroupBytes is the encoded size of the buffered row group.
	rowGroupBytes() int64
	// flushRowGroup writes the buffered row group to the sink.
	flushRowGroup() error
	// close flushes the row group and writes the footer.
	close() error
	// abandon releases the encoder's buffers after a failure; what it
	// writes to the sink is discarded.
	abandon()
}

// flatSchema reports whether every column of s is a single Parquet leaf at
// the top level (columnEncoder's domain).
func flatSchema(s *arrow.Schema) bool {
	for _, f := range s.Fields() {
		switch f.Type.(type) {
		case *arrow.ListType, *arrow.LargeListType, *arrow.StructType, *arrow.MapType,
			*arrow.FixedSizeListType:
			return false
		}
	}
	return true
}

// newEncoder returns the encoder for schema writing to w.
func newEncoder(schema *arrow.Schema, w io.Writer, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties, workers int) (encoder, error) {
	if !flatSchema(schema) || workers <= 1 || schema.NumFields() == 1 {
		fw, err := pqarrow.NewFileWriter(schema, w, props, aprops)
		if err != nil {
			return nil, err
		}
		return &pqarrowEncoder{fw: fw}, nil
	}
	return newColumnEncoder(schema, w, props, aprops, workers)
}

// pqarrowEncoder is pqarrow's FileWriter.
type pqarrowEncoder struct{ fw *pqarrow.FileWriter }

func (e *pqarrowEncoder) write(rec arrow.RecordBatch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	return e.fw.WriteBuffered(rec)
}

func (e *pqarrowEncoder) rowGroupBytes() int64 { return e.fw.RowGroupTotalBytesWritten() }
func (e *pqarrowEncoder) flushRowGroup() error { return e.fw.NewBufferedRowGroupChecked() }
func (e *pqarrowEncoder) close() error         { return e.fw.Close() }
func (e *pqarrowEncoder) abandon()             { closeAfterFailure(e.fw) }

// closeAfterFailure closes a writer that failed, perhaps mid-batch: its
// state may then be inconsistent, and its error or panic says nothing more.
func closeAfterFailure(c interface{ Close() error }) {
	defer func() { _ = recover() }()
	_ = c.Close()
}

// columnEncoder writes a flat schema with arrow-go's low-level Parquet
// writer, encoding (and compressing) the columns of each batch in parallel
// on up to workers goroutines: the column chunks of a buffered row group
// are independent until the row group is flushed, which happens on the
// caller's goroutine.
type columnEncoder struct {
	wr       *file.Writer
	rgw      file.BufferedRowGroupWriter // nil between row groups
	rows     int64                       // rows in rgw
	maxRows  int64
	workers  int
	nullable []bool
	ctxs     []context.Context // one pqarrow write context per column
	defs     [][]int16         // per column: definition levels, reused
}

func newColumnEncoder(schema *arrow.Schema, w io.Writer, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties, workers int) (*columnEncoder, error) {
	pqschema, err := pqarrow.ToParquet(schema, props, aprops)
	if err != nil {
		return nil, err
	}
	// The key-value metadata pqarrow.NewFileWriter writes: the schema's
	// own, then the Arrow schema (flat schemas have no list element names
	// for pqarrow to normalise).
	meta := make(metadata.KeyValueMetadata, 0, schema.Metadata().Len()+1)
	for i := range schema.Metadata().Len() {
		meta.Append(schema.Metadata().Keys()[i], schema.Metadata().Values()[i])
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(schema, props.Allocator())))
	wr, err := file.NewParquetWriterWithError(w, pqschema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	n := schema.NumFields()
	e := &columnEncoder{wr: wr, maxRows: props.MaxRowGroupLength(), workers: min(workers, n),
		nullable: make([]bool, n), ctxs: make([]context.Context, n), defs: make([][]int16, n)}
	for i, f := range schema.Fields() {
		e.nullable[i] = f.Nullable
		e.ctxs[i] = pqarrow.NewArrowWriteContext(context.Background(), &aprops)
	}
	return e, nil
}

func (e *columnEncoder) write(rec arrow.RecordBatch) error {
	n := rec.NumRows()
	for off := int64(0); off < n; {
		if e.rgw == nil {
			rgw, err := e.wr.AppendBufferedRowGroupChecked()
			if err != nil {
				return err
			}
			e.rgw, e.rows = rgw, 0
		}
		take := min(n-off, e.maxRows-e.rows)
		if take <= 0 {
			if err := e.flushRowGroup(); err != nil {
				return err
			}
			continue
		}
		if err := e.writeRange(rec, off, take); err != nil {
			return err
		}
		e.rows += take
		off += take
	}
	return nil
}

// writeRange encodes rows [off, off+size) of rec, one column per task.
func (e *columnEncoder) writeRange(rec arrow.RecordBatch, off, size int64) error {
	ncols := int(rec.NumCols())
	errs := make([]error, ncols)
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= ncols {
				return
			}
			errs[i] = e.writeColumn(i, rec.Column(i), off, size)
		}
	}
	var wg sync.WaitGroup
	for range e.workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

// writeColumn encodes rows [off, off+size) of column i. It runs on a
// worker goroutine, so a panic of the encoder (a malformed batch that
// validation missed) becomes an error here instead of ending the process.
func (e *columnEncoder) writeColumn(i int, col arrow.Array, off, size int64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	cw, err := e.rgw.Column(i)
	if err != nil {
		return err
	}
	if off != 0 || size != int64(col.Len()) {
		col = array.NewSlice(col, off, off+size)
		defer col.Release()
	}
	var defs []int16
	if e.nullable[i] {
		// A top-level nullable leaf: definition level 1 for a value, 0
		// for a null (what pqarrow's level builder computes for it).
		if cap(e.defs[i]) < int(size) {
			e.defs[i] = make([]int16, size)
		}
		defs = e.defs[i][:size]
		if col.NullN() == 0 {
			for j := range defs {
				defs[j] = 1
			}
		} else {
			for j := range defs {
				if col.IsValid(j) {
					defs[j] = 1
				} else {
					defs[j] = 0
				}
			}
		}
	} else if col.NullN() > 0 {
		return fmt.Errorf("%w: a column declared not nullable holds %d nulls", ErrMalformed, col.NullN())
	}
	return pqarrow.WriteArrowToColumn(e.ctxs[i], cw, col, defs, nil, e.nullable[i])
}

func (e *columnEncoder) rowGroupBytes() int64 {
	if e.rgw == nil {
		return 0
	}
	return e.rgw.TotalBytesWritten()
}

func (e *columnEncoder) flushRowGroup() error {
	if e.rgw == nil {
		return nil
	}
	rgw := e.rgw
	e.rgw = nil
	return rgw.Close()
}

func (e *columnEncoder) close() error {
	return errors.Join(e.flushRowGroup(), e.wr.Close())
}

func (e *columnEncoder) abandon() {
	e.rgw = nil
	closeAfterFailure(e.wr)
}

// defaultWorkers is the number of columns encoded at once when
// Config.Workers is 0.
func defaultWorkers() int { return runtime.GOMAXPROCS(0) }
