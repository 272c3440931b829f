package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// runIngest loads a local Parquet or CSV file into a table through Flight
// SQL bulk ingest (CommandStatementIngest, the RPC behind ADBC's
// adbc_ingest).
func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return ingestCmd(ctx, args, stdout, stderr, stderrIsTerminal())
}

// stderrIsTerminal reports whether the process's stderr is a terminal, which
// is when ingest draws its progress line.
func stderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ingestCmd is runIngest with the terminal check injected (tests pass a
// fake terminal).
func ingestCmd(ctx context.Context, args []string, stdout, stderr io.Writer, terminal bool) error {
	fs := newFlagSet("ingest")
	conn := addConnFlags(fs)
	mode := fs.String("mode", "create", "create, append, replace or create_append")
	format := fs.String("format", "auto", "input format: auto (from the file extension), parquet or csv")
	batchRows := fs.Int("batch-rows", 65536, "rows per record batch sent")
	csvHeader := fs.Bool("csv-header", true, "the CSV file's first line names the columns")
	csvDelim := fs.String("csv-delimiter", ",", "CSV field delimiter (one character; \\t for tab)")
	sampleRows := fs.Int("sample-rows", defaultSampleRows, "CSV: infer column types from the first N data rows")
	schemaFlag := fs.String("schema", "", "CSV: column types, 'col:type,…' (varchar, boolean, bigint, integer, double, decimal(p,s), date, timestamp); other columns are inferred")
	noProgress := fs.Bool("no-progress", false, "never draw the progress line")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fmt.Errorf("%w: ingest takes FILE and SCHEMA.TABLE", errUsage)
	}
	path, target := pos[0], pos[1]
	schema, table, ok := strings.Cut(target, ".")
	if !ok || schema == "" || table == "" || strings.Contains(table, ".") {
		return fmt.Errorf("%w: the target must be SCHEMA.TABLE, not %q", errUsage, target)
	}
	opts, err := tableDefinitionOptions(*mode)
	if err != nil {
		return err
	}
	if *batchRows < 1 {
		return fmt.Errorf("%w: --batch-rows must be at least 1", errUsage)
	}
	delim, err := parseDelimiter(*csvDelim)
	if err != nil {
		return err
	}
	if *sampleRows < 1 {
		return fmt.Errorf("%w: --sample-rows must be at least 1", errUsage)
	}
	override, err := parseSchemaFlag(*schemaFlag)
	if err != nil {
		return err
	}
	if err := conn.resolve(); err != nil {
		return err
	}
	// Open and check the file before connecting: a bad column name or an
	// unreadable file should not cost a round trip.
	src, err := openSource(path, *format, *batchRows, csvOptions{header: *csvHeader, delimiter: delim, sampleRows: *sampleRows, schema: override})
	if err != nil {
		return err
	}
	defer src.Close()

	cl, callCtx, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Cancelling the call resets the stream, so the server discards the
	// upload; that happens on Ctrl-C and whenever the file cannot be read.
	callCtx, cancel := context.WithCancel(callCtx)
	defer cancel()

	prog := newProgress(stderr, terminal && !*noProgress, src)
	src.onBatch = prog.update
	start := time.Now()
	n, err := cl.ExecuteIngest(callCtx, src, &flightsql.ExecuteIngestOpts{
		TableDefinitionOptions: opts,
		Table:                  table,
		Schema:                 &schema,
	})
	cancel()
	prog.finish()
	if err != nil {
		return ingestError(ctx, path, target, *mode, src, err)
	}
	fmt.Fprintln(stdout, summaryLine(n, src.BytesRead(), target, time.Since(start)))
	return nil
}

// ingestError turns an ExecuteIngest failure into the message shown: the
// file's read error, an interruption, or the server's status, with the
// likely fix where there is one.
func ingestError(ctx context.Context, path, target, mode string, src *source, err error) error {
	if rerr := src.Err(); rerr != nil {
		return fmt.Errorf("ingest: %s: %w (nothing was loaded)", path, rerr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("ingest: interrupted (nothing was loaded): %w", ctx.Err())
	}
	if st, ok := status.FromError(err); ok {
		switch {
		case st.Code() == codes.AlreadyExists && mode == "create":
			return fmt.Errorf("ingest: table %s already exists (nothing was loaded): pass --mode append to add the rows to it, or --mode replace to replace its rows", target)
		case st.Code() == codes.NotFound && mode == "append":
			// The gateway answers a table the caller may not modify as
			// missing; the hint holds either way.
			return fmt.Errorf("ingest: %s: %s (nothing was loaded): --mode append needs an existing table you may modify; --mode create_append creates it when missing", st.Code(), st.Message())
		}
		return fmt.Errorf("ingest: %s: %s", st.Code(), st.Message())
	}
	return fmt.Errorf("ingest: %w", err)
}

// tableDefinitionOptions maps --mode to Flight SQL's table definition
// options exactly as ADBC's adbc.ingest.mode does.
func tableDefinitionOptions(mode string) (*flightsql.TableDefinitionOptions, error) {
	var (
		ifNotExist pb.CommandStatementIngest_TableDefinitionOptions_TableNotExistOption
		ifExists   pb.CommandStatementIngest_TableDefinitionOptions_TableExistsOption
	)
	switch mode {
	case "create":
		ifNotExist = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_CREATE
		ifExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_FAIL
	case "append":
		ifNotExist = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_FAIL
		ifExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND
	case "replace":
		ifNotExist = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_CREATE
		ifExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_REPLACE
	case "create_append":
		ifNotExist = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_CREATE
		ifExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND
	default:
		return nil, fmt.Errorf("%w: --mode must be create, append, replace or create_append, not %q", errUsage, mode)
	}
	return &flightsql.TableDefinitionOptions{IfNotExist: ifNotExist, IfExists: ifExists}, nil
}

// parseDelimiter reads --csv-delimiter: one character, or \t for a tab.
func parseDelimiter(s string) (rune, error) {
	if s == `\t` || s == "tab" {
		return '\t', nil
	}
	r, size := utf8.DecodeRuneInString(s)
	if size == 0 || size != len(s) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' {
		return 0, fmt.Errorf("%w: --csv-delimiter must be one character other than a quote or newline, not %q", errUsage, s)
	}
	return r, nil
}

// ingestFormat resolves --format, deriving auto from the file's extension.
func ingestFormat(path, format string) (string, error) {
	switch format {
	case "parquet", "csv":
		return format, nil
	case "auto", "":
		switch strings.ToLower(filepath.Ext(path)) {
		case ".parquet", ".pq":
			return "parquet", nil
		case ".csv":
			return "csv", nil
		}
		return "", fmt.Errorf("%w: cannot tell the format of %s from its extension: pass --format parquet or --format csv", errUsage, path)
	}
	return "", fmt.Errorf("%w: --format must be auto, parquet or csv, not %q", errUsage, format)
}

// columnNameRE is the gateway's rule for column names.
var columnNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,63}$`)

// lowerColumnNames returns schema with its top-level column names
// lower-cased, failing if a lower-cased name is not a valid gateway column
// name or repeats an earlier one. Positions in messages count from 1.
func lowerColumnNames(schema *arrow.Schema) (*arrow.Schema, error) {
	fields := schema.Fields()
	seen := make(map[string]int, len(fields))
	for i := range fields {
		orig := fields[i].Name
		name := strings.ToLower(orig)
		if !columnNameRE.MatchString(name) {
			return nil, fmt.Errorf("column %d (%q): %q is not a valid column name: names are 1–64 of [a-z0-9_], starting with a letter or _ (after lower-casing)", i+1, orig, name)
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("column %d (%q): lower-cased to %q, the same name as column %d (%q)", i+1, orig, name, prev+1, fields[prev].Name)
		}
		seen[name] = i
		fields[i].Name = name
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

// csvOptions configure the CSV reader.
type csvOptions struct {
	header     bool
	delimiter  rune
	sampleRows int             // rows to infer types from; 0 means defaultSampleRows
	schema     *schemaOverride // --schema, or nil
}

// maxBatchBytes bounds one record batch sent; larger batches are sliced so
// no message nears the gateway's 16 MiB request limit.
const maxBatchBytes = 8 << 20

// source streams a local file as record batches with lower-cased column
// names. It implements array.RecordReader for ExecuteIngest.
type source struct {
	refs   atomic.Int64
	inner  array.RecordReader
	schema *arrow.Schema
	closer func() error

	// pending holds batches already read but not yet handed out: slices
	// of an oversized batch.
	pending []arrow.RecordBatch
	cur     arrow.RecordBatch
	err     error
	done    bool

	fileBytes int64 // the file's size
	totalRows int64 // rows in the file when known (Parquet), else -1
	counter   *countingFile
	rowsSent  int64
	onBatch   func(rows, bytes int64)
}

// openSource opens path as format (auto, parquet or csv) and returns a
// streaming reader of batches of up to batchRows rows, with lower-cased,
// validated column names. Close releases it and the file.
func openSource(path, format string, batchRows int, co csvOptions) (*source, error) {
	format, err := ingestFormat(path, format)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", path)
	}
	cf := &countingFile{f: f}
	s := &source{counter: cf, fileBytes: fi.Size(), totalRows: -1, closer: f.Close}
	s.refs.Store(1)
	switch format {
	case "parquet":
		if co.schema != nil {
			err = fmt.Errorf("%w: --schema applies to CSV files only", errUsage)
			break
		}
		err = s.openParquet(cf, batchRows)
	default:
		err = s.openCSV(cf, batchRows, co)
	}
	if err == nil {
		s.schema, err = lowerColumnNames(s.schema)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (s *source) openParquet(cf *countingFile, batchRows int) error {
	pf, err := file.NewParquetReader(cf)
	if err != nil {
		return err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batchRows)}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return err
	}
	s.inner = rr
	s.schema = rr.Schema()
	s.totalRows = pf.NumRows()
	return nil
}

// openCSV reads the CSV file's header and type sample (ingest_csv.go).
func (s *source) openCSV(cf *countingFile, batchRows int, co csvOptions) error {
	cr, err := newCSVReader(cf, co, batchRows)
	if err != nil {
		return err
	}
	s.inner, s.schema = cr, cr.Schema()
	return nil
}

// errReaderPanic marks a reader that panicked.
var errReaderPanic = errors.New("malformed input")

// safeNext calls r.Next, turning a panic into an error: a reader of
// malformed input must not take the process down.
func safeNext(r array.RecordReader) (more bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			more, err = false, fmt.Errorf("%w: %v", errReaderPanic, p)
		}
	}()
	more = r.Next()
	if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return more, nil
}

// countingFile counts the bytes read from a file, by Read or ReadAt.
type countingFile struct {
	f *os.File
	n atomic.Int64
}

func (c *countingFile) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingFile) Seek(off int64, whence int) (int64, error) { return c.f.Seek(off, whence) }

// BytesRead is how many bytes of the file have been read, capped at its size
// (Parquet readers may read some bytes twice).
func (s *source) BytesRead() int64 { return min(s.counter.n.Load(), s.fileBytes) }

func (s *source) Schema() *arrow.Schema          { return s.schema }
func (s *source) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *source) Record() arrow.RecordBatch      { return s.cur }
func (s *source) Err() error                     { return s.err }
func (s *source) Retain()                        { s.refs.Add(1) }
func (s *source) Release()                       { s.release() }
func (s *source) Close() error                   { return s.release() }

func (s *source) release() error {
	if s.refs.Add(-1) != 0 {
		return nil
	}
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	for _, r := range s.pending {
		r.Release()
	}
	s.pending = nil
	if s.inner != nil {
		s.inner.Release()
	}
	return s.closer()
}

// Next hands out the next batch: pending ones first, then the file's,
// renamed and sliced to at most maxBatchBytes.
func (s *source) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.onBatch != nil {
		s.onBatch(s.rowsSent, s.BytesRead())
	}
	if len(s.pending) == 0 && !s.done && s.err == nil {
		s.fill()
	}
	if len(s.pending) == 0 {
		return false
	}
	rec := s.pending[0]
	s.pending = s.pending[1:]
	// Same columns under the lower-cased names.
	s.cur = array.NewRecordBatch(s.schema, rec.Columns(), rec.NumRows())
	rec.Release()
	s.rowsSent += s.cur.NumRows()
	return true
}

// fill reads one batch from the file into pending.
func (s *source) fill() {
	// A reader that fails reports no batch: nothing of a batch with a
	// bad value is sent.
	more, err := safeNext(s.inner)
	if err != nil || !more {
		s.done, s.err = true, err
		return
	}
	rec := s.inner.RecordBatch()
	if rec.NumRows() == 0 {
		return
	}
	s.pending = append(s.pending, splitBatch(rec, maxBatchBytes)...)
}

// splitBatch returns rec, retained, or when it holds more than limit bytes,
// slices of it that each hold about limit bytes.
func splitBatch(rec arrow.RecordBatch, limit int64) []arrow.RecordBatch {
	size := util.TotalRecordSize(rec)
	n := rec.NumRows()
	parts := (size + limit - 1) / limit
	if parts <= 1 || n <= 1 {
		rec.Retain()
		return []arrow.RecordBatch{rec}
	}
	parts = min(parts, n)
	step := (n + parts - 1) / parts
	out := make([]arrow.RecordBatch, 0, parts)
	for i := int64(0); i < n; i += step {
		out = append(out, rec.NewSlice(i, min(i+step, n)))
	}
	return out
}

// progressInterval is the least time between progress line updates.
const progressInterval = 100 * time.Millisecond

// progress draws a single updating line on a terminal: rows sent, MB read,
// MB/s and how far through the file the upload is.
type progress struct {
	w          io.Writer
	on         bool
	now        func() time.Time
	start      time.Time
	last       time.Time
	drawn      bool
	width      int // length of the last line drawn, to blank leftovers
	totalRows  int64
	totalBytes int64
}

func newProgress(w io.Writer, on bool, src *source) *progress {
	p := &progress{w: w, on: on, now: time.Now, totalRows: -1}
	if src != nil {
		p.totalRows, p.totalBytes = src.totalRows, src.fileBytes
	}
	p.start = p.now()
	p.last = p.start
	return p
}

// update redraws the line unless it was drawn (or the upload started) less
// than progressInterval ago.
func (p *progress) update(rows, bytes int64) {
	if !p.on {
		return
	}
	now := p.now()
	// The first line waits one interval too: a rate over a few
	// milliseconds means nothing, and small files finish before then.
	if now.Sub(p.last) < progressInterval {
		return
	}
	p.last, p.drawn = now, true
	line := progressLine(rows, bytes, now.Sub(p.start), p.totalRows, p.totalBytes)
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprint(p.w, "\r"+line+strings.Repeat(" ", pad))
}

// finish blanks the line so the summary starts on a clean one.
func (p *progress) finish() {
	if p.on && p.drawn {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
		p.drawn = false
	}
}

// progressLine renders one progress line. The percentage is of the file's
// rows when known (Parquet metadata), else of its bytes.
func progressLine(rows, bytes int64, elapsed time.Duration, totalRows, totalBytes int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s rows sent  %.1f MB read  %.1f MB/s", groupDigits(rows), megabytes(bytes), rate(bytes, elapsed))
	switch {
	case totalRows > 0:
		fmt.Fprintf(&b, "  %d%%", min(rows*100/totalRows, 100))
	case totalRows == 0:
		b.WriteString("  100%")
	case totalBytes > 0:
		fmt.Fprintf(&b, "  %d%%", min(bytes*100/totalBytes, 100))
	}
	return b.String()
}

// summaryLine is what ingest prints on success.
func summaryLine(rows, bytes int64, target string, elapsed time.Duration) string {
	return fmt.Sprintf("loaded %d rows (%.1f MB) into %s in %.2f s (%.1f MB/s)",
		rows, megabytes(bytes), target, elapsed.Seconds(), rate(bytes, elapsed))
}

// megabytes converts bytes to (decimal) MB.
func megabytes(n int64) float64 { return float64(n) / 1e6 }

func rate(bytes int64, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return megabytes(bytes) / elapsed.Seconds()
}

// groupDigits renders n with thousands separators: 1234567 → 1,234,567.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
