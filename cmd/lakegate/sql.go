package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
)

// runSQL runs one query and prints the result.
func runSQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conn := addConnFlags(fs)
	format := fs.String("format", "table", "output format: table, csv or json")
	escapeFormulas := fs.Bool("csv-escape-formulas", false, "with --format csv: write a ' before text that a spreadsheet would run as a formula (=, +, -, @, tab, CR first)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *escapeFormulas && *format != "csv" {
		return fmt.Errorf("%w: --csv-escape-formulas needs --format csv", errUsage)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: sql takes exactly one query argument", errUsage)
	}
	if err := conn.resolve(); err != nil {
		return err
	}
	write, err := writerFor(*format)
	if err != nil {
		return err
	}
	if *escapeFormulas {
		write = csvWriter(true)
	}
	cl, ctx, err := conn.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	if isUpdate(fs.Arg(0)) {
		n, err := cl.ExecuteUpdate(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "(%d rows written)\n", n)
		return nil
	}
	info, err := cl.Execute(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	var schema *arrow.Schema
	var records []arrow.RecordBatch
	defer func() {
		for _, r := range records {
			r.Release()
		}
	}()
	for _, ep := range info.GetEndpoint() {
		rdr, err := cl.DoGet(ctx, ep.GetTicket())
		if err != nil {
			return err
		}
		schema = rdr.Schema()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rec.Retain()
			records = append(records, rec)
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return err
		}
	}
	if schema == nil {
		if schema, err = flight.DeserializeSchema(info.GetSchema(), nil); err != nil {
			return err
		}
	}
	return write(stdout, schema, records)
}

type resultWriter func(io.Writer, *arrow.Schema, []arrow.RecordBatch) error

func writerFor(format string) (resultWriter, error) {
	switch format {
	case "table":
		return writeTable, nil
	case "csv":
		return csvWriter(false), nil
	case "json":
		return writeJSON, nil
	}
	return nil, fmt.Errorf("%w: --format must be table, csv or json", errUsage)
}

// cell renders one value as text; NULL is empty in CSV and "NULL" in tables.
func cell(col arrow.Array, i int) (string, bool) {
	if col.IsNull(i) {
		return "", false
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
	rows := 0
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
			rows++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "(%d rows)\n", rows)
	return err
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

// writeJSON prints one JSON object per row, its members in column order
// and named by jsonKeys.
func writeJSON(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	keys := make([][]byte, schema.NumFields())
	for i, k := range jsonKeys(schema) {
		b, err := json.Marshal(k)
		if err != nil {
			return err
		}
		keys[i] = b
	}
	var line []byte
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			line = append(line[:0], '{')
			for c, col := range rec.Columns() {
				v, err := json.Marshal(col.GetOneForMarshal(r))
				if err != nil {
					return fmt.Errorf("column %d, row %d: %w", c+1, r+1, err)
				}
				if c > 0 {
					line = append(line, ',')
				}
				line = append(append(append(line, keys[c]...), ':'), v...)
			}
			if _, err := w.Write(append(line, '}', '\n')); err != nil {
				return err
			}
		}
	}
	return nil
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

var _ = array.NewRecordReader

// isUpdate reports whether a statement changes data (CREATE, INSERT, DROP)
// and so goes through ExecuteUpdate instead of a query. It only picks the
// RPC: the gateway parses and authorizes the statement either way.
func isUpdate(sql string) bool {
	f := strings.Fields(strings.TrimLeft(sql, " \t\r\n("))
	if len(f) == 0 {
		return false
	}
	switch strings.ToUpper(f[0]) {
	case "CREATE", "INSERT", "DROP":
		return true
	}
	return false
}
