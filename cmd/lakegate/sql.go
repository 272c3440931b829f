package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// runSQL is `lakegate sql`: statements from the query argument, a file, a
// script on stdin, or the interactive shell.
func runSQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return sqlCmd(ctx, args, osConsole(), stdout, stderr)
}

// sqlCmd is runSQL with the console injected (tests drive the shell).
func sqlCmd(ctx context.Context, args []string, con console, stdout, stderr io.Writer) error {
	fs := newFlagSet("sql")
	conn := addConnFlags(fs)
	var file string
	fs.StringVar(&file, "f", "", "run the statements in `FILE` (- for stdin)")
	fs.StringVar(&file, "file", "", "run the statements in `FILE` (- for stdin)")
	format := fs.String("format", "table", "output `FORMAT`: table, csv, json (an array), jsonl (an object a line) or markdown")
	escapeFormulas := fs.Bool("csv-escape-formulas", false, "with --format csv: write a ' before text that a spreadsheet would run as a formula (=, +, -, @, tab, CR first)")
	catalog := fs.String("catalog", "", "start the session in `CATALOG`, such as an upstream catalog (default: the tenant's lake)")
	schema := fs.String("schema", "", "start the session in `SCHEMA`, as USE SCHEMA does")
	force := fs.Bool("force", false, "keep running a script after a statement fails (the exit status is still 1)")
	timing := fs.Bool("timing", false, "print each statement's elapsed time (on in the interactive shell)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 1:
		return fmt.Errorf("%w: sql takes at most one QUERY argument: quote it, and separate statements with ;", errUsage)
	case len(pos) == 1 && file != "":
		return fmt.Errorf("%w: pass a QUERY argument or --file, not both", errUsage)
	}
	write, err := writerFor(*format, *escapeFormulas)
	if err != nil {
		return err
	}
	if err := conn.resolve(); err != nil {
		return err
	}
	var in lineReader
	source := ""
	switch {
	case len(pos) == 1:
		in = textLines(strings.NewReader(pos[0]))
	case file == "-":
		in, source = textLines(con.stdin), "stdin"
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("--file: %w", err)
		}
		defer f.Close()
		in, source = textLines(f), file
	case !con.terminal:
		in, source = textLines(con.stdin), "stdin"
	}
	cl, callCtx, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	sh := &shell{
		ctx: callCtx, cl: cl, out: stdout, errOut: stderr,
		format: *format, escapeFormulas: *escapeFormulas, write: write,
		timing: *timing, force: *force, now: con.clock, onInterrupt: con.onInterrupt,
	}
	if sh.now == nil {
		sh.now = time.Now
	}
	if in == nil {
		sh.interactive = true
		sh.timing = *timing || !isSet(fs, "timing")
	}
	defer sh.close()
	if err := sh.start(*catalog, *schema); err != nil {
		return err
	}
	if in != nil {
		return sh.runScript(in, source)
	}
	editor, err := con.editor()
	if err != nil {
		return err
	}
	return sh.runInteractive(editor, *conn.addr)
}

// console is what `lakegate sql` sees of its process's terminal, behind a
// struct so tests can drive the shell.
type console struct {
	stdin    io.Reader
	terminal bool // stdin is a terminal: with no query, the shell is interactive
	// editor returns the interactive line reader (line editing, history).
	editor func() (lineReader, error)
	// onInterrupt makes Ctrl-C call cancel until restore is called; nil:
	// Ctrl-C is not routed.
	onInterrupt func(cancel func()) (restore func())
	// clock times statements (time.Now when nil).
	clock func() time.Time
}

// lineReader reads the shell's input a line at a time.
type lineReader interface {
	// ReadLine shows prompt (interactively) and returns the next line
	// without its line end: io.EOF at the end, errInterrupted when Ctrl-C
	// discards the line being typed.
	ReadLine(prompt string) (string, error)
	// AddHistory records an entry in the editor's history.
	AddHistory(entry string)
	Close() error
}

// textLines reads lines from r without prompting (a script).
func textLines(r io.Reader) lineReader { return &plainReader{r: bufio.NewReader(r)} }

// plainReader is a lineReader without line editing; prompts go to w when
// it is set.
type plainReader struct {
	r *bufio.Reader
	w io.Writer
}

func (p *plainReader) ReadLine(prompt string) (string, error) {
	if p.w != nil {
		io.WriteString(p.w, prompt)
	}
	line, err := p.r.ReadString('\n')
	if err == io.EOF && line != "" {
		err = nil
	}
	return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), err
}

func (p *plainReader) AddHistory(string) {}
func (p *plainReader) Close() error      { return nil }

// resultWriter prints a result: data only; the shell prints the footer
// (rows, time).
type resultWriter func(io.Writer, *arrow.Schema, []arrow.RecordBatch) error

// formats are the values of --format.
var formats = []string{"table", "csv", "json", "jsonl", "markdown"}

// writerFor returns the writer of a --format; escapeFormulas is
// --csv-escape-formulas (csv only).
func writerFor(format string, escapeFormulas bool) (resultWriter, error) {
	if escapeFormulas && format != "csv" {
		return nil, fmt.Errorf("%w: --csv-escape-formulas needs --format csv", errUsage)
	}
	switch format {
	case "table":
		return writeTable, nil
	case "csv":
		return csvWriter(escapeFormulas), nil
	case "json":
		return writeJSON, nil
	case "jsonl":
		return writeJSONLines, nil
	case "markdown":
		return writeMarkdown, nil
	}
	return nil, fmt.Errorf("%w: --format must be one of %s, not %q", errUsage, strings.Join(formats, ", "), format)
}

// cell renders one value as text; NULL is empty in CSV and "NULL" in tables.
// A DECIMAL keeps its scale's digits (12.50), as MySQL's client shows it.
func cell(col arrow.Array, i int) (string, bool) {
	if col.IsNull(i) {
		return "", false
	}
	switch a := col.(type) {
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale), true
	case *array.Decimal256:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal256Type).Scale), true
	}
	return col.ValueStr(i), true
}

func writeTable(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = printable(f.Name)
	}
	fmt.Fprintln(tw, strings.Join(names, "\t"))
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			vals := make([]string, rec.NumCols())
			for c, col := range rec.Columns() {
				v, ok := cell(col, r)
				if !ok {
					v = "NULL"
				}
				vals[c] = printable(v)
			}
			fmt.Fprintln(tw, strings.Join(vals, "\t"))
		}
	}
	return tw.Flush()
}

// csvWriter returns a writer of CSV (RFC 4180, a header line of column
// names). With escapeFormulas, a column name or text value that begins
// with =, +, -, @, a tab or a carriage return — which spreadsheets run as
// a formula — is written with a ' before it, as OWASP advises against CSV
// injection; numbers and other values are written as they are.
func csvWriter(escapeFormulas bool) resultWriter {
	text := func(s string) string {
		if escapeFormulas && s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
			return "'" + s
		}
		return s
	}
	return func(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
		cw := csv.NewWriter(w)
		names := make([]string, schema.NumFields())
		for i, f := range schema.Fields() {
			names[i] = text(f.Name)
		}
		if err := cw.Write(names); err != nil {
			return err
		}
		for _, rec := range recs {
			for r := 0; r < int(rec.NumRows()); r++ {
				vals := make([]string, rec.NumCols())
				for c, col := range rec.Columns() {
					vals[c], _ = cell(col, r)
					switch col.DataType().ID() {
					case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
						vals[c] = text(vals[c])
					}
				}
				if err := cw.Write(vals); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	}
}

// writeJSON prints the rows as a JSON array of objects, one a line (see
// jsonRows).
func writeJSON(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	if rowCount(recs) == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	if err := jsonRows(w, schema, recs, ",\n", "\n"); err != nil {
		return err
	}
	_, err := io.WriteString(w, "]\n")
	return err
}

// writeJSONLines prints one JSON object per row and line (JSON Lines).
func writeJSONLines(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	return jsonRows(w, schema, recs, "\n", "\n")
}

// jsonRows prints each row as a JSON object, its members in column order
// and named by jsonKeys, followed by sep (last by end).
func jsonRows(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch, sep, end string) error {
	keys := make([][]byte, schema.NumFields())
	for i, k := range jsonKeys(schema) {
		b, err := json.Marshal(k)
		if err != nil {
			return err
		}
		keys[i] = b
	}
	left := rowCount(recs)
	var line []byte
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			line = append(line[:0], '{')
			for c, col := range rec.Columns() {
				var one any = col.GetOneForMarshal(r)
				if arrow.IsDecimal(col.DataType().ID()) && !col.IsNull(r) {
					one, _ = cell(col, r) // a string, exact, with its scale
				}
				v, err := json.Marshal(one)
				if err != nil {
					return fmt.Errorf("column %d, row %d: %w", c+1, r+1, err)
				}
				if c > 0 {
					line = append(line, ',')
				}
				line = append(append(append(line, keys[c]...), ':'), v...)
			}
			line = append(line, '}')
			if left--; left > 0 {
				line = append(line, sep...)
			} else {
				line = append(line, end...)
			}
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}

func rowCount(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

// writeMarkdown prints a GitHub-flavoured Markdown table, numbers aligned
// right. Cells are printable (see printable) with | escaped; NULL is
// "NULL".
func writeMarkdown(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	n := schema.NumFields()
	rows := [][]string{make([]string, n)}
	for i, f := range schema.Fields() {
		rows[0][i] = markdownCell(f.Name)
	}
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			vals := make([]string, n)
			for c, col := range rec.Columns() {
				v, ok := cell(col, r)
				if !ok {
					v = "NULL"
				}
				vals[c] = markdownCell(v)
			}
			rows = append(rows, vals)
		}
	}
	width := make([]int, n)
	for _, row := range rows {
		for c, v := range row {
			width[c] = max(width[c], utf8.RuneCountInString(v), 3)
		}
	}
	right := make([]bool, n)
	for i, f := range schema.Fields() {
		right[i] = arrow.IsInteger(f.Type.ID()) || arrow.IsFloating(f.Type.ID()) || arrow.IsDecimal(f.Type.ID())
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteByte('|')
		for c, v := range cells {
			pad := strings.Repeat(" ", width[c]-utf8.RuneCountInString(v))
			if right[c] {
				b.WriteString(" " + pad + v + " |")
			} else {
				b.WriteString(" " + v + pad + " |")
			}
		}
		b.WriteByte('\n')
	}
	line(rows[0])
	b.WriteByte('|')
	for c := range n {
		if right[c] {
			b.WriteString(" " + strings.Repeat("-", width[c]-1) + ": |")
		} else {
			b.WriteString(" " + strings.Repeat("-", width[c]) + " |")
		}
	}
	b.WriteByte('\n')
	for _, row := range rows[1:] {
		line(row)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func markdownCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(printable(s), `\`, `\\`), "|", `\|`)
}

// jsonKeys names each column's member: its name, or, for a name an
// earlier column has, the name with the first suffix _1, _2, … that no
// column has and no earlier member took (as DuckDB names such columns), so
// that no value overwrites another.
func jsonKeys(schema *arrow.Schema) []string {
	taken := make(map[string]bool, schema.NumFields())
	for _, f := range schema.Fields() {
		taken[f.Name] = true
	}
	seen := make(map[string]bool, schema.NumFields())
	keys := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		if !seen[f.Name] {
			seen[f.Name], keys[i] = true, f.Name
			continue
		}
		for k := 1; ; k++ {
			if cand := f.Name + "_" + strconv.Itoa(k); !taken[cand] {
				taken[cand], keys[i] = true, cand
				break
			}
		}
	}
	return keys
}
