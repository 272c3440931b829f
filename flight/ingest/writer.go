package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"lakegate/stage"
)

// Defaults and limits.
const (
	// DefaultTargetFileBytes is the part size Config.TargetFileBytes 0 means.
	DefaultTargetFileBytes = 256 << 20
	// DefaultRowGroupRows is the row group length Config.RowGroupRows 0 means.
	DefaultRowGroupRows = 1 << 20
	// RowGroupBytes bounds a row group's buffered, encoded pages: when a
	// write brings the current row group past it, the row group is
	// flushed to the store and a new one starts.
	RowGroupBytes = 64 << 20
	// cleanupTimeout bounds deleting parts after a failure, which runs
	// even when the writer's context is canceled.
	cleanupTimeout = 30 * time.Second
)

// Errors of this package; the store's errors (stage.ErrExists, ...) and
// context errors come through wrapped. Test them with errors.Is.
var (
	// ErrUnsupportedType: a column's type (or a type nested in it) is not
	// written, because pqarrow cannot write it or pqarrow or DuckDB would
	// not read it back as the same type. It comes wrapped in a
	// *ColumnError naming the column.
	ErrUnsupportedType = errors.New("ingest: unsupported column type")
	// ErrClosed: Write or Close after Close or Abort; Abort after a
	// successful Close (the files were kept: a no-op the caller may ignore).
	ErrClosed = errors.New("ingest: writer closed")
	// ErrSchema: a batch's schema differs from Config.Schema.
	ErrSchema = errors.New("ingest: batch schema differs from the writer's")
	// ErrInvalidConfig: Config.Validate failed.
	ErrInvalidConfig = errors.New("ingest: invalid config")
	// ErrMalformed: a batch's buffers do not hold what its arrays declare
	// (a validity bitmap shorter than the array, a column shorter than the
	// batch, for two), or a schema has no columns. Arrow data read
	// from a client is not fully validated by arrow-go, and the Parquet
	// writer indexes it as declared; nothing of the write is kept.
	ErrMalformed = errors.New("ingest: malformed record batch")
	// errAborted closes a part's pipe when the part is given up.
	errAborted = errors.New("ingest: aborted")
)

// Config describes one write segment of a table.
type Config struct {
	// Store is the tenant's child store; the files go under
	// stage.TablePrefix(StorageID) in it. Required.
	Store stage.Store
	// StorageID is the table's storage id (see stage.CheckStorageID).
	StorageID string
	// Segment is a fresh segment id from stage.NewSegment, used by this
	// writer only.
	Segment string
	// Schema is the schema of every batch. Required; see CheckSchema.
	Schema *arrow.Schema
	// TargetFileBytes: once a write brings the current part's bytes
	// (stored plus buffered) to it, the part is finished and the next
	// write starts a new one. A part overshoots it by at most one batch's
	// encoded size. 0 means DefaultTargetFileBytes (256 MiB).
	TargetFileBytes int64
	// RowGroupRows is the largest row group in rows; row groups are also
	// cut at RowGroupBytes. 0 means DefaultRowGroupRows (1Mi rows).
	RowGroupRows int64
	// Allocator serves the Parquet encoder's buffers; nil means
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// Codec compresses the data pages: "" means CodecZstd. See ParseCodec.
	Codec Codec
	// Workers bounds how many columns of a batch are encoded at once; 0
	// means runtime.GOMAXPROCS(0), 1 encodes them one after the other.
	Workers int

	// legacy writes as the writer did before its encoding was chosen by
	// measurement (a dictionary tried on every column, zstd's default
	// level, one column after the other): the baseline of the package's
	// benchmarks, set by a test hook.
	legacy bool
}

// Validate checks the config: a store, a valid storage id and segment, a
// schema CheckSchema accepts, no negative sizes. Its errors wrap
// ErrInvalidConfig, or ErrUnsupportedType for the schema.
func (c Config) Validate() error {
	switch {
	case c.Store == nil:
		return fmt.Errorf("%w: no store", ErrInvalidConfig)
	case c.Schema == nil:
		return fmt.Errorf("%w: no schema", ErrInvalidConfig)
	case c.TargetFileBytes < 0:
		return fmt.Errorf("%w: TargetFileBytes %d is negative", ErrInvalidConfig, c.TargetFileBytes)
	case c.RowGroupRows < 0:
		return fmt.Errorf("%w: RowGroupRows %d is negative", ErrInvalidConfig, c.RowGroupRows)
	case c.Workers < 0:
		return fmt.Errorf("%w: Workers %d is negative", ErrInvalidConfig, c.Workers)
	}
	if _, err := ParseCodec(string(c.Codec)); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if _, err := stage.TableFileKey(c.StorageID, c.Segment, 0); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return CheckSchema(c.Schema)
}

// File is a stored data file of the segment.
type File struct {
	Key    string // relative to the child stage, from stage.TableFileKey
	Size   int64  // bytes stored
	Rows   int64
	SHA256 string // lower-case hex SHA-256 of the bytes written
}

// Writer writes one segment of a table's data files: Write batches, then
// Close to keep the files or Abort to delete them. Parts are numbered from
// 0 and streamed to the store while they are written; no part is held in
// memory whole.
//
// A Writer is not safe for concurrent use: one goroutine writes, and only
// that goroutine calls Close or Abort.
type Writer struct {
	ctx    context.Context
	cfg    Config
	opts   []parquet.WriterProperty  // every part's Parquet properties but the encodings
	props  *parquet.WriterProperties // opts and the encodings chosen by the first batch
	aprops pqarrow.ArrowWriterProperties

	cur    *part    // the part being written, nil between parts
	next   int      // number of the next part
	files  []File   // finished parts
	stored []string // keys of stored parts not yet deleted by an abort
	state  state
	err    error // why the writer failed (state failed)
}

type state int

const (
	open state = iota
	closed
	failed
)

// New validates cfg and returns a Writer whose uploads run under ctx:
// canceling ctx makes the next Write or Close fail and abort the segment.
// Nothing is stored before the first Write (or Close).
func New(ctx context.Context, cfg Config) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.TargetFileBytes == 0 {
		cfg.TargetFileBytes = DefaultTargetFileBytes
	}
	if cfg.RowGroupRows == 0 {
		cfg.RowGroupRows = DefaultRowGroupRows
	}
	if cfg.Allocator == nil {
		cfg.Allocator = memory.DefaultAllocator
	}
	if cfg.Codec == "" {
		cfg.Codec = CodecZstd
	}
	if cfg.Workers == 0 {
		cfg.Workers = defaultWorkers()
	}
	codec := cfg.Codec.options()
	if cfg.legacy {
		cfg.Workers = 1
		codec = []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd)}
	}
	return &Writer{
		ctx: ctx,
		cfg: cfg,
		opts: append([]parquet.WriterProperty{
			parquet.WithAllocator(cfg.Allocator),
			parquet.WithStats(true),
			parquet.WithMaxRowGroupLength(cfg.RowGroupRows),
			parquet.WithCreatedBy("lakegate"),
		}, codec...),
		aprops: pqarrow.NewArrowWriterProperties(
			pqarrow.WithAllocator(cfg.Allocator),
			pqarrow.WithStoreSchema(),
		),
	}, nil
}

// Write encodes rec into the current part, starting a part if none is
// open, and finishes the part once it reaches Config.TargetFileBytes. The
// caller keeps ownership of rec. On failure Write aborts the segment
// (deleting every stored part) and returns the error; so do later calls.
func (w *Writer) Write(rec arrow.RecordBatch) error {
	if err := w.usable(); err != nil {
		return err
	}
	if !rec.Schema().Equal(w.cfg.Schema) {
		return w.fail(fmt.Errorf("%w: got %s, want %s", ErrSchema, rec.Schema(), w.cfg.Schema))
	}
	if err := w.ctx.Err(); err != nil {
		return w.fail(err)
	}
	for i, col := range rec.Columns() {
		// A batch read from a client may announce more rows than its
		// columns hold; the file would then have fewer than recorded.
		if int64(col.Len()) != rec.NumRows() {
			return w.fail(fmt.Errorf("%w: column %d has %d values for %d rows", ErrMalformed, i, col.Len(), rec.NumRows()))
		}
		if err := validate(col); err != nil {
			return w.fail(fmt.Errorf("column %d: %w", i, err))
		}
		if err := checkBitmap(col); err != nil {
			return w.fail(fmt.Errorf("column %d: %w", i, err))
		}
		if !w.cfg.Schema.Field(i).Nullable {
			if err := checkRequired(col); err != nil {
				return w.fail(fmt.Errorf("column %d: %w", i, err))
			}
		}
	}
	if rec.NumRows() == 0 {
		return nil
	}
	if w.props == nil {
		enc, err := w.encodingChoice(rec)
		if err != nil {
			return w.fail(err)
		}
		w.props = parquet.NewWriterProperties(slices.Concat(w.opts, enc)...)
	}
	if w.cur == nil {
		if err := w.start(); err != nil {
			return w.fail(err)
		}
	}
	p := w.cur
	if err := p.enc.write(rec); err != nil {
		return w.fail(w.drop(err))
	}
	p.rows += rec.NumRows()
	if p.enc.rowGroupBytes() >= RowGroupBytes {
		if err := p.enc.flushRowGroup(); err != nil {
			return w.fail(w.drop(err))
		}
	}
	if p.sink.n+p.enc.rowGroupBytes() >= w.cfg.TargetFileBytes {
		if err := w.finish(); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// Close finishes the last part and returns every file of the segment in
// part order. A segment always has at least one file: with no rows it is a
// single 0-row file carrying the schema. On failure Close aborts the
// segment and returns the error.
func (w *Writer) Close() ([]File, error) {
	if err := w.usable(); err != nil {
		return nil, err
	}
	if err := w.ctx.Err(); err != nil {
		return nil, w.fail(err)
	}
	if w.cur == nil && len(w.files) == 0 {
		if w.props == nil {
			enc, _ := w.encodingChoice(nil) // without rows nothing is read
			w.props = parquet.NewWriterProperties(slices.Concat(w.opts, enc)...)
		}
		if err := w.start(); err != nil {
			return nil, w.fail(err)
		}
	}
	if w.cur != nil {
		if err := w.finish(); err != nil {
			return nil, w.fail(err)
		}
	}
	w.state = closed
	w.stored = nil
	return w.files, nil
}

// Abort stops writing and deletes every part already stored; the part
// being written is abandoned, which makes the store discard it (the S3
// store aborts its multipart upload). Deleting runs even if the writer's
// context is canceled. Abort after Write or Close failed returns nil (they
// aborted already) unless an earlier cleanup failed, which it retries;
// after a successful Close it deletes nothing and returns ErrClosed.
func (w *Writer) Abort() error {
	switch w.state {
	case closed:
		return ErrClosed
	case failed:
		return w.cleanup()
	}
	w.state, w.err = failed, ErrClosed
	return w.cleanup()
}

// Copy writes every batch of r to a new Writer for cfg and closes it,
// returning the files and the number of rows. On any error, including
// r.Err(), it aborts the segment and returns the error. It does not
// release r.
func Copy(ctx context.Context, cfg Config, r array.RecordReader) ([]File, int64, error) {
	w, err := New(ctx, cfg)
	if err != nil {
		return nil, 0, err
	}
	for r.Next() {
		if err := w.Write(r.RecordBatch()); err != nil {
			return nil, 0, err // Write aborted
		}
	}
	if err := r.Err(); err != nil {
		return nil, 0, errors.Join(fmt.Errorf("ingest: reading batches: %w", err), w.Abort())
	}
	files, err := w.Close()
	if err != nil {
		return nil, 0, err
	}
	var rows int64
	for _, f := range files {
		rows += f.Rows
	}
	return files, rows, nil
}

func (w *Writer) usable() error {
	switch w.state {
	case closed:
		return ErrClosed
	case failed:
		return w.err
	}
	return nil
}

// fail records err, aborts the segment and returns err joined with any
// cleanup error.
func (w *Writer) fail(err error) error {
	w.state, w.err = failed, err
	if cerr := w.cleanup(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

// cleanup abandons the current part and deletes the stored ones, under a
// context that survives the writer's cancellation.
func (w *Writer) cleanup() error {
	var errs []error
	if w.cur != nil {
		_ = w.drop(errAborted)
	}
	if len(w.stored) > 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), cleanupTimeout)
		defer cancel()
		if err := w.cfg.Store.Delete(ctx, w.stored...); err != nil {
			errs = append(errs, fmt.Errorf("ingest: deleting %d stored parts: %w", len(w.stored), err))
		} else {
			w.stored = nil
		}
	}
	w.files = nil
	return errors.Join(errs...)
}

// start opens part w.next: a Put of the pipe's read end runs in its own
// goroutine while the Parquet writer writes the other end.
func (w *Writer) start() error {
	key, err := stage.TableFileKey(w.cfg.StorageID, w.cfg.Segment, w.next)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(w.ctx)
	pr, pw := io.Pipe()
	p := &part{
		key:    key,
		pw:     pw,
		sink:   &sink{w: pw, h: sha256.New()},
		cancel: cancel,
		done:   make(chan putResult, 1),
	}
	go func() {
		info, err := w.cfg.Store.Put(ctx, key, pr, -1)
		if err == nil {
			err = io.ErrClosedPipe // the store read to EOF; nothing more is written
		}
		pr.CloseWithError(err) // unblocks the writer if Put stopped reading early
		if errors.Is(err, io.ErrClosedPipe) {
			err = nil
		}
		p.done <- putResult{info, err}
	}()
	w.next++
	w.cur = p
	enc, err := newEncoder(w.cfg.Schema, p.sink, w.props, w.aprops, w.cfg.Workers)
	if err != nil {
		return w.drop(fmt.Errorf("ingest: start %s: %w", stage.SafeKey(key), err))
	}
	p.enc = enc
	return nil
}

// finish writes the footer, ends the upload and records the file.
func (w *Writer) finish() error {
	p := w.cur
	if err := p.enc.close(); err != nil {
		return w.drop(fmt.Errorf("ingest: finish %s: %w", stage.SafeKey(p.key), err))
	}
	w.cur = nil
	_ = p.pw.Close()
	res := p.wait()
	p.cancel()
	if res.err != nil {
		return res.err
	}
	w.stored = append(w.stored, p.key)
	sum := hex.EncodeToString(p.sink.h.Sum(nil))
	if res.info.Size != p.sink.n || (res.info.SHA256 != "" && res.info.SHA256 != sum) {
		return fmt.Errorf("ingest: %s: store has %d bytes sha256 %s, wrote %d bytes sha256 %s",
			stage.SafeKey(p.key), res.info.Size, res.info.SHA256, p.sink.n, sum)
	}
	w.files = append(w.files, File{Key: p.key, Size: p.sink.n, Rows: p.rows, SHA256: sum})
	return nil
}

// part is one file being written and uploaded.
type part struct {
	key    string
	enc    encoder
	pw     *io.PipeWriter
	sink   *sink
	rows   int64
	cancel context.CancelFunc
	done   chan putResult // buffered 1: the Put goroutine never blocks
	res    putResult      // from done, once waited
	waited bool
}

type putResult struct {
	info stage.Info
	err  error
}

// drop abandons the current part: the upload is made to fail and its
// goroutine waited for. It returns err, or the store's error if the upload
// had failed first (the pipe broke under the encoder, whose own error then
// only says so). A part whose Put had completed is recorded for deletion.
func (w *Writer) drop(err error) error {
	p := w.cur
	w.cur = nil
	// Only a store that failed before this drop explains err; closing the
	// writer below writes into the pipe this closes.
	storeFirst := p.sink.err != nil
	p.cancel()
	p.pw.CloseWithError(errAborted)
	if p.enc != nil {
		p.enc.abandon() // releases the encoders' buffers; its writes fail at once
	}
	res := p.wait()
	switch {
	case res.err == nil:
		w.stored = append(w.stored, p.key) // it landed anyway
	case storeFirst:
		return res.err
	}
	return err
}

// wait returns the Put's result once it is known.
func (p *part) wait() putResult {
	if !p.waited {
		p.res, p.waited = <-p.done, true
	}
	return p.res
}

// sink counts and hashes the bytes on their way into the pipe. It has no
// Close method, so pqarrow's Close cannot end the upload before finish.
type sink struct {
	w   io.Writer
	h   hash.Hash
	n   int64
	err error // the first write error: the upload stopped reading
}

func (s *sink) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	s.h.Write(b[:n])
	s.n += int64(n)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}
