package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func TestIngestModeOptions(t *testing.T) {
	const (
		nxCreate = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_CREATE
		nxFail   = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_FAIL
		exFail   = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_FAIL
		exAppend = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND
		exRepl   = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_REPLACE
	)
	cases := []struct {
		mode       string
		ifNotExist pb.CommandStatementIngest_TableDefinitionOptions_TableNotExistOption
		ifExists   pb.CommandStatementIngest_TableDefinitionOptions_TableExistsOption
		wantErr    bool
	}{
		{"create", nxCreate, exFail, false},
		{"append", nxFail, exAppend, false},
		{"replace", nxCreate, exRepl, false},
		{"create_append", nxCreate, exAppend, false},
		{"", 0, 0, true},
		{"CREATE", 0, 0, true},
		{"create-append", 0, 0, true},
		{"upsert", 0, 0, true},
	}
	for _, c := range cases {
		o, err := tableDefinitionOptions(c.mode)
		if c.wantErr {
			if !errors.Is(err, errUsage) {
				t.Errorf("mode %q: err %v, want a usage error", c.mode, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("mode %q: %v", c.mode, err)
			continue
		}
		if o.GetIfNotExist() != c.ifNotExist || o.GetIfExists() != c.ifExists {
			t.Errorf("mode %q: got %v/%v, want %v/%v", c.mode, o.GetIfNotExist(), o.GetIfExists(), c.ifNotExist, c.ifExists)
		}
	}
}

func TestIngestColumnNames(t *testing.T) {
	long := strings.Repeat("a", 64)
	cases := []struct {
		in      []string
		want    []string
		wantErr []string // substrings of the error
	}{
		{[]string{"ID", "Name", "amount_USD", "_x9"}, []string{"id", "name", "amount_usd", "_x9"}, nil},
		{[]string{long}, []string{long}, nil},
		{[]string{"id", long + "b"}, nil, []string{"column 2", long + "b"}},
		{[]string{"id", "Foo Bar"}, nil, []string{"column 2", `"Foo Bar"`, "not a valid column name"}},
		{[]string{"1st"}, nil, []string{"column 1", `"1st"`}},
		{[]string{""}, nil, []string{"column 1"}},
		{[]string{"größe"}, nil, []string{"column 1"}},
		{[]string{"a-b"}, nil, []string{"column 1"}},
		{[]string{"id", "x", "ID"}, nil, []string{"column 3", `"ID"`, "column 1"}},
	}
	for _, c := range cases {
		fields := make([]arrow.Field, len(c.in))
		for i, n := range c.in {
			fields[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int64}
		}
		got, err := lowerColumnNames(arrow.NewSchema(fields, nil))
		if c.wantErr != nil {
			if err == nil {
				t.Errorf("%q: no error", c.in)
				continue
			}
			for _, s := range c.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q: error %q lacks %q", c.in, err, s)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		for i, f := range got.Fields() {
			if f.Name != c.want[i] {
				t.Errorf("%q: column %d is %q, want %q", c.in, i+1, f.Name, c.want[i])
			}
		}
	}
}

func TestIngestFormatAndDelimiter(t *testing.T) {
	formats := []struct{ path, format, want string }{
		{"a.parquet", "auto", "parquet"},
		{"a.PQ", "auto", "parquet"},
		{"dir.x/a.csv", "auto", "csv"},
		{"a.txt", "csv", "csv"},
		{"a.csv", "parquet", "parquet"},
		{"a.txt", "auto", ""},
		{"a.csv", "json", ""},
	}
	for _, c := range formats {
		got, err := ingestFormat(c.path, c.format)
		if c.want == "" {
			if !errors.Is(err, errUsage) {
				t.Errorf("%s/%s: err %v, want a usage error", c.path, c.format, err)
			}
		} else if got != c.want || err != nil {
			t.Errorf("%s/%s = %q, %v; want %q", c.path, c.format, got, err, c.want)
		}
	}
	delims := []struct {
		in   string
		want rune
		ok   bool
	}{
		{",", ',', true}, {";", ';', true}, {`\t`, '\t', true}, {"\t", '\t', true}, {"|", '|', true},
		{"", 0, false}, {",,", 0, false}, {`"`, 0, false}, {"\n", 0, false},
	}
	for _, c := range delims {
		got, err := parseDelimiter(c.in)
		if c.ok != (err == nil) || (c.ok && got != c.want) {
			t.Errorf("parseDelimiter(%q) = %q, %v", c.in, got, err)
		}
	}
}

// writeTestParquet writes rows rows of (ID int64, Name utf8, Amount float64,
// TS timestamp[us]) in row groups of rowGroup rows.
func writeTestParquet(t *testing.T, path string, rows, rowGroup int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ID", Type: arrow.PrimitiveTypes.Int64},
		{Name: "Name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f,
		parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rowGroup))),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%7 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name-%d", i))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 4)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// drain reads every batch and returns the row count, the batch count and
// the sum of the first (int64) column when it is one.
func drain(t *testing.T, src *source) (rows, batches, sum int64) {
	t.Helper()
	for src.Next() {
		rec := src.RecordBatch()
		if !rec.Schema().Equal(src.Schema()) {
			t.Fatalf("batch schema %s, reader schema %s", rec.Schema(), src.Schema())
		}
		rows += rec.NumRows()
		batches++
		if col, ok := rec.Column(0).(*array.Int64); ok {
			for i := range col.Len() {
				sum += col.Value(i)
			}
		}
	}
	return rows, batches, sum
}

func TestIngestOpenSource(t *testing.T) {
	dir := t.TempDir()
	pq := filepath.Join(dir, "data.parquet")
	writeTestParquet(t, pq, 1000, 300)
	pqNoExt := filepath.Join(dir, "data.bin")
	writeTestParquet(t, pqNoExt, 10, 10)

	csvPath := filepath.Join(dir, "data.csv")
	var sb strings.Builder
	sb.WriteString("ID,Name,Amount,Active\n")
	for i := range 250 {
		fmt.Fprintf(&sb, "%d,n%d,%d.5,%v\n", i, i, i, i%2 == 0)
	}
	writeFile(t, csvPath, sb.String())
	semi := filepath.Join(dir, "semi.csv")
	writeFile(t, semi, "a;B\n1;x\n2;\n3;z\n")
	noHeader := filepath.Join(dir, "nohdr.csv")
	writeFile(t, noHeader, "10,a\n20,b\n30,c\n")
	headerOnly := filepath.Join(dir, "empty.csv")
	writeFile(t, headerOnly, "id,name\n")
	badName := filepath.Join(dir, "bad.csv")
	writeFile(t, badName, "id,Order Date\n1,2024-01-01\n")
	dupName := filepath.Join(dir, "dup.csv")
	writeFile(t, dupName, "Id,x,ID\n1,2,3\n")
	badValue := filepath.Join(dir, "badvalue.csv")
	writeFile(t, badValue, "id\n1\n2\n3\nfour\n5\n")

	csvDefault := csvOptions{header: true, delimiter: ','}
	type want struct {
		names   []string
		types   []string
		rows    int64
		batches int64
		sum     int64
		total   int64 // totalRows hint
	}
	cases := []struct {
		name, path, format string
		batchRows          int
		csv                csvOptions
		want               want
		wantErr            string // substring of an open error
		wantReadErr        string // substring of the error after reading
	}{
		{name: "parquet", path: pq, format: "auto", batchRows: 128, csv: csvDefault, want: want{
			names: []string{"id", "name", "amount", "ts"},
			types: []string{"int64", "utf8", "float64", "timestamp[us, tz=UTC]"},
			rows:  1000, sum: 999 * 1000 / 2, total: 1000}},
		{name: "parquet one batch", path: pq, format: "parquet", batchRows: 65536, csv: csvDefault, want: want{
			names: []string{"id", "name", "amount", "ts"}, rows: 1000, sum: 999 * 1000 / 2, total: 1000}},
		{name: "parquet by flag", path: pqNoExt, format: "parquet", batchRows: 3, csv: csvDefault, want: want{
			names: []string{"id", "name", "amount", "ts"}, rows: 10, batches: 4, sum: 45, total: 10}},
		{name: "csv", path: csvPath, format: "auto", batchRows: 100, csv: csvDefault, want: want{
			names: []string{"id", "name", "amount", "active"},
			types: []string{"int64", "utf8", "decimal(18, 1)", "bool"},
			rows:  250, batches: 3, sum: 249 * 250 / 2, total: -1}},
		{name: "csv semicolon", path: semi, format: "csv", batchRows: 2, csv: csvOptions{header: true, delimiter: ';'}, want: want{
			names: []string{"a", "b"}, types: []string{"int64", "utf8"}, rows: 3, batches: 2, sum: 6, total: -1}},
		{name: "csv no header", path: noHeader, format: "csv", batchRows: 10, csv: csvOptions{header: false, delimiter: ','}, want: want{
			names: []string{"f0", "f1"}, rows: 3, batches: 1, sum: 60, total: -1}},
		{name: "csv header only", path: headerOnly, format: "csv", batchRows: 10, csv: csvDefault, wantErr: "no data rows"},
		{name: "csv header only with a schema", path: headerOnly, format: "csv", batchRows: 10,
			csv: csvOptions{header: true, delimiter: ',', schema: &schemaOverride{names: []string{"id", "name"},
				types: map[string]colType{"id": {kind: kindBigint}, "name": {kind: kindVarchar}}}},
			want: want{names: []string{"id", "name"}, types: []string{"int64", "utf8"}, total: -1}},
		{name: "parquet with a schema", path: pq, format: "auto", batchRows: 10,
			csv:     csvOptions{header: true, delimiter: ',', schema: &schemaOverride{names: []string{"id"}, types: map[string]colType{"id": {kind: kindBigint}}}},
			wantErr: "CSV files only"},
		{name: "csv bad name", path: badName, format: "csv", batchRows: 10, csv: csvDefault, wantErr: `column 2 ("Order Date")`},
		{name: "csv duplicate name", path: dupName, format: "csv", batchRows: 10, csv: csvDefault, wantErr: "column 3"},
		{name: "csv bad value", path: badValue, format: "csv", batchRows: 2, csv: csvOptions{header: true, delimiter: ',', sampleRows: 2},
			wantReadErr: `line 5, column id: "four" is not a BIGINT (the type was inferred from the first 2 rows`},
		{name: "missing file", path: filepath.Join(dir, "nope.csv"), format: "auto", batchRows: 10, csv: csvDefault, wantErr: "no such file"},
		{name: "parquet garbage", path: csvPath, format: "parquet", batchRows: 10, csv: csvDefault, wantErr: "data.csv"},
		{name: "unknown extension", path: pqNoExt, format: "auto", batchRows: 10, csv: csvDefault, wantErr: "--format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := openSource(c.path, c.format, c.batchRows, c.csv)
			if c.wantErr != "" {
				if err == nil {
					src.Close()
					t.Fatalf("no error, want one containing %q", c.wantErr)
				}
				if !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %q lacks %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := src.Close(); err != nil {
					t.Error(err)
				}
			}()
			if c.wantReadErr != "" {
				rows, _, _ := drain(t, src)
				if err := src.Err(); err == nil || !strings.Contains(err.Error(), c.wantReadErr) {
					t.Fatalf("read error %v, want one containing %q", err, c.wantReadErr)
				}
				// Only whole, clean batches before the bad value went out.
				if rows != 2 {
					t.Errorf("%d rows before the error, want 2", rows)
				}
				return
			}
			names := make([]string, src.Schema().NumFields())
			types := make([]string, len(names))
			for i, f := range src.Schema().Fields() {
				names[i], types[i] = f.Name, f.Type.String()
			}
			if strings.Join(names, ",") != strings.Join(c.want.names, ",") {
				t.Errorf("names %q, want %q", names, c.want.names)
			}
			if c.want.types != nil && strings.Join(types, ",") != strings.Join(c.want.types, ",") {
				t.Errorf("types %q, want %q", types, c.want.types)
			}
			if src.totalRows != c.want.total {
				t.Errorf("total rows hint %d, want %d", src.totalRows, c.want.total)
			}
			rows, batches, sum := drain(t, src)
			if err := src.Err(); err != nil {
				t.Fatal(err)
			}
			if rows != c.want.rows || sum != c.want.sum {
				t.Errorf("%d rows summing to %d, want %d and %d", rows, sum, c.want.rows, c.want.sum)
			}
			if c.want.batches != 0 && batches != c.want.batches {
				t.Errorf("%d batches, want %d", batches, c.want.batches)
			}
			if c.want.batches == 0 && c.want.rows > 0 && batches < 1 {
				t.Errorf("no batches")
			}
			fi, _ := os.Stat(c.path)
			if got := src.BytesRead(); got <= 0 || got > fi.Size() {
				t.Errorf("bytes read %d, file size %d", got, fi.Size())
			}
			if rows != src.rowsSent {
				t.Errorf("rowsSent %d, want %d", src.rowsSent, rows)
			}
		})
	}
}

func TestIngestSplitBatch(t *testing.T) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer b.Release()
	for i := range 1000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	size := util.TotalRecordSize(rec)
	cases := []struct {
		limit     int64
		wantParts int
	}{{1 << 20, 1}, {size, 1}, {size - 1, 2}, {(size + 3) / 4, 4}, {(size + 9) / 10, 10}, {1, 1000}}
	for _, c := range cases {
		parts := splitBatch(rec, c.limit)
		var rows int64
		for _, p := range parts {
			rows += p.NumRows()
			p.Release()
		}
		if len(parts) != c.wantParts || rows != 1000 {
			t.Errorf("limit %d: %d parts, %d rows; want %d parts, 1000 rows", c.limit, len(parts), rows, c.wantParts)
		}
	}
}

func TestIngestProgressLine(t *testing.T) {
	cases := []struct {
		rows, bytes          int64
		elapsed              time.Duration
		totalRows, totalByte int64
		want                 string
	}{
		{0, 0, 0, -1, 1000, "0 rows sent  0.0 MB read  0.0 MB/s  0%"},
		{1234567, 12_300_000, time.Second, -1, 24_600_000, "1,234,567 rows sent  12.3 MB read  12.3 MB/s  50%"},
		{500, 2_000_000, 2 * time.Second, 1000, 9_000_000, "500 rows sent  2.0 MB read  1.0 MB/s  50%"},
		{999, 5_000_000, time.Second, 1000, 0, "999 rows sent  5.0 MB read  5.0 MB/s  99%"},
		{100, 1_000_000, time.Second, -1, 0, "100 rows sent  1.0 MB read  1.0 MB/s"},
		{0, 10, time.Second, 0, 10, "0 rows sent  0.0 MB read  0.0 MB/s  100%"},
	}
	for _, c := range cases {
		if got := progressLine(c.rows, c.bytes, c.elapsed, c.totalRows, c.totalByte); got != c.want {
			t.Errorf("progressLine(%d, %d, %s, %d, %d) = %q, want %q", c.rows, c.bytes, c.elapsed, c.totalRows, c.totalByte, got, c.want)
		}
	}
	if got, want := summaryLine(10000, 2_500_000, "sales.x", 1250*time.Millisecond), "loaded 10000 rows (2.5 MB) into sales.x in 1.25 s (2.0 MB/s)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	for n, want := range map[int64]string{0: "0", 12: "12", 999: "999", 1000: "1,000", 65536: "65,536", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestIngestProgressUpdates(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(1000, 0)
	p := newProgress(&out, true, nil)
	p.now = func() time.Time { return clock }
	p.start, p.last, p.totalRows, p.totalBytes = clock, clock, 1000, 0

	steps := []struct {
		advance    time.Duration
		rows       int64
		wantRedraw bool
	}{
		{0, 0, false},                        // nothing in the first interval
		{50 * time.Millisecond, 100, false},  // still too soon
		{60 * time.Millisecond, 200, true},   // 110ms since the start
		{99 * time.Millisecond, 300, false},  // too soon
		{time.Millisecond, 1000, true},       // exactly 100ms
		{10 * time.Second, 1000, true},       // much later
		{10 * time.Millisecond, 1000, false}, // too soon
	}
	for i, s := range steps {
		clock = clock.Add(s.advance)
		before := out.Len()
		p.update(s.rows, s.rows*1000)
		drew := out.Len() > before
		if drew != s.wantRedraw {
			t.Fatalf("step %d: drew %v, want %v (output %q)", i, drew, s.wantRedraw, out.String())
		}
		if drew {
			line := out.String()[before:]
			if !strings.HasPrefix(line, "\r") || strings.Contains(line, "\n") {
				t.Fatalf("step %d: line %q is not a single \\r-updated line", i, line)
			}
			if want := fmt.Sprintf("%s rows sent", groupDigits(s.rows)); !strings.Contains(line, want) {
				t.Fatalf("step %d: line %q lacks %q", i, line, want)
			}
		}
	}
	// A shorter line blanks what is left of a longer one.
	p.width = 200
	clock = clock.Add(time.Second)
	before := out.Len()
	p.update(1, 1)
	if line := out.String()[before:]; len(line) != 201 {
		t.Errorf("redrawn line is %d bytes, want 201 (padded)", len(line))
	}
	before = out.Len()
	p.finish()
	if got := out.String()[before:]; got != "\r"+strings.Repeat(" ", p.width)+"\r" {
		t.Errorf("finish wrote %q", got)
	}

	// Not a terminal: nothing at all.
	var quiet bytes.Buffer
	q := newProgress(&quiet, false, nil)
	q.update(10, 10)
	q.finish()
	if quiet.Len() != 0 {
		t.Errorf("progress without a terminal wrote %q", quiet.String())
	}
}

func TestIngestUsage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "ok.csv")
	writeFile(t, good, "id\n1\n")
	bad := filepath.Join(dir, "bad.csv")
	writeFile(t, bad, "id,Two Words\n1,2\n")
	cases := []struct {
		args    []string
		usage   bool
		wantErr string
	}{
		{[]string{"--token", "t"}, true, "FILE and SCHEMA.TABLE"},
		{[]string{"--token", "t", good}, true, "FILE and SCHEMA.TABLE"},
		{[]string{"--token", "t", good, "notable"}, true, "SCHEMA.TABLE"},
		{[]string{"--token", "t", good, "a.b.c"}, true, "SCHEMA.TABLE"},
		{[]string{"--token", "t", good, ".b"}, true, "SCHEMA.TABLE"},
		{[]string{"--token", "t", "--mode", "merge", good, "s.t"}, true, "--mode"},
		{[]string{"--token", "t", "--format", "xml", good, "s.t"}, true, "--format"},
		{[]string{"--token", "t", "--batch-rows", "0", good, "s.t"}, true, "--batch-rows"},
		{[]string{"--token", "t", "--csv-delimiter", "ab", good, "s.t"}, true, "--csv-delimiter"},
		{[]string{"--nope", good, "s.t"}, true, ""},
		{[]string{"--token", "t", "--sample-rows", "0", good, "s.t"}, true, "--sample-rows"},
		{[]string{"--token", "t", "--schema", "id:money", good, "s.t"}, true, `unknown type "money"`},
		// Flags after the positional arguments count.
		{[]string{good, "s.t", "--token", "t", "--mode", "merge"}, true, "--mode"},
		{[]string{good, "s.t", "--token", "t", "--schema", "nope:bigint", "--addr", "127.0.0.1:1"}, true, `--schema names column "nope"`},
		// Checked before any connection: the address is never dialled.
		{[]string{"--token", "t", "--addr", "127.0.0.1:1", bad, "s.t"}, false, `column 2 ("Two Words")`},
		{[]string{"--token", "t", "--addr", "127.0.0.1:1", filepath.Join(dir, "none.csv"), "s.t"}, false, "no such file"},
	}
	t.Setenv("LAKEGATE_TOKEN", "")
	for _, c := range cases {
		var out, errOut bytes.Buffer
		err := ingestCmd(context.Background(), c.args, &out, &errOut, false)
		if err == nil {
			t.Errorf("%q: no error", c.args)
			continue
		}
		if errors.Is(err, errUsage) != c.usage {
			t.Errorf("%q: %v; usage error %v, want %v", c.args, err, errors.Is(err, errUsage), c.usage)
		}
		if !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%q: error %q lacks %q", c.args, err, c.wantErr)
		}
	}
	// No token anywhere.
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"ingest", good, "s.t"}, &out, &errOut); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "token") {
		t.Errorf("without a token: %v", err)
	}
}
