package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestIngestCSVInference(t *testing.T) {
	cases := []struct {
		values []string
		want   string
	}{
		{[]string{"747.06", "12.5", "3"}, "DECIMAL(18,2)"},
		{[]string{"747.06"}, "DECIMAL(18,2)"},
		{[]string{"0.001", "-0.5"}, "DECIMAL(18,3)"},
		{[]string{".5", "5."}, "DECIMAL(18,1)"},
		{[]string{strings.Repeat("9", 17) + ".25"}, "DECIMAL(19,2)"},
		{[]string{"1", "-2", "+3", ""}, "BIGINT"},
		{[]string{"9223372036854775807"}, "BIGINT"},
		{[]string{"9223372036854775808"}, "DECIMAL(19,0)"},
		{[]string{strings.Repeat("9", 38)}, "DECIMAL(38,0)"},
		{[]string{strings.Repeat("9", 39)}, "DOUBLE"},
		{[]string{strings.Repeat("1", 20) + "." + strings.Repeat("1", 19)}, "DOUBLE"},
		{[]string{"1e3", "2.5"}, "DOUBLE"},
		{[]string{"1.5E-3"}, "DOUBLE"},
		{[]string{"inf"}, "VARCHAR"},
		{[]string{"NaN"}, "VARCHAR"},
		{[]string{"0x10"}, "VARCHAR"},
		{[]string{"1_000"}, "VARCHAR"},
		{[]string{"007", "1"}, "VARCHAR"},
		{[]string{"0", "10"}, "BIGINT"},
		{[]string{"true", "FALSE", "True", ""}, "BOOLEAN"},
		{[]string{"true", "1"}, "VARCHAR"},
		{[]string{"yes", "no"}, "VARCHAR"},
		{[]string{"2024-01-31", "1999-12-01"}, "DATE"},
		{[]string{"2024-02-30"}, "VARCHAR"},
		{[]string{"2024-1-3"}, "VARCHAR"},
		{[]string{"2024-01-31 10:00:00", "2024-01-31T23:59:59.123456"}, "TIMESTAMP"},
		{[]string{"2024-01-31", "2024-01-31 10:00:00"}, "TIMESTAMP"},
		{[]string{"2024-01-31 10:00:00.1234567"}, "VARCHAR"},
		{[]string{"2024-01-31 10:00:00Z"}, "VARCHAR"},
		{[]string{"2024-01-31 25:00:00"}, "VARCHAR"},
		{[]string{"", "NULL", "null"}, "VARCHAR"},
		{[]string{"1", "NULL", "null", ""}, "BIGINT"},
		{[]string{"abc", "1"}, "VARCHAR"},
	}
	for _, c := range cases {
		in := inferrer{fits: fitAll}
		for _, v := range c.values {
			in.add(v)
		}
		if got := in.result().String(); got != c.want {
			t.Errorf("%q: %s, want %s", c.values, got, c.want)
		}
	}
}

func TestIngestCSVSchemaFlag(t *testing.T) {
	cases := []struct {
		in      string
		want    string // name:TYPE,… as parsed
		wantErr string
	}{
		{"id:bigint,price:decimal(15,2),d:date", "id:BIGINT,price:DECIMAL(15,2),d:DATE", ""},
		{" ID : BIGINT , Price:Numeric( 15 , 2 ) ", "id:BIGINT,price:DECIMAL(15,2)", ""},
		{"a:varchar,b:text,c:bool,d:integer,e:double,f:timestamp,g:datetime,h:int64", "a:VARCHAR,b:VARCHAR,c:BOOLEAN,d:INTEGER,e:DOUBLE,f:TIMESTAMP,g:TIMESTAMP,h:BIGINT", ""},
		{"", "", ""},
		{"id", "", `"id" is not COLUMN:TYPE`},
		{":bigint", "", "not COLUMN:TYPE"},
		{"id:bigint,", "", "not COLUMN:TYPE"},
		{"id:money", "", `unknown type "money"`},
		{"p:decimal(39,2)", "", "precision is 1–38"},
		{"p:decimal(5,6)", "", "precision is 1–38"},
		{"p:decimal(0,0)", "", "precision is 1–38"},
		{"id:bigint,ID:varchar", "", `names column "id" twice`},
	}
	for _, c := range cases {
		o, err := parseSchemaFlag(c.in)
		if c.wantErr != "" {
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: err %v, want a usage error containing %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var got []string
		if o != nil {
			for _, n := range o.names {
				got = append(got, n+":"+o.types[n].String())
			}
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%q: %s, want %s", c.in, strings.Join(got, ","), c.want)
		}
	}
}

// readCSV opens text as a CSV source and returns its schema's types and
// every batch's rows as text, or the open or read error.
func readCSV(t *testing.T, text string, co csvOptions, batchRows int) (types []string, rows [][]string, err error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.csv")
	writeFile(t, path, text)
	src, err := openSource(path, "csv", batchRows, co)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	for _, f := range src.Schema().Fields() {
		types = append(types, f.Type.String())
	}
	for src.Next() {
		rec := src.RecordBatch()
		for r := range int(rec.NumRows()) {
			var row []string
			for c := range int(rec.NumCols()) {
				row = append(row, rec.Column(c).ValueStr(r))
			}
			rows = append(rows, row)
		}
	}
	return types, rows, src.Err()
}

func TestIngestCSVValues(t *testing.T) {
	comma := csvOptions{header: true, delimiter: ','}
	cases := []struct {
		name      string
		text      string
		co        csvOptions
		wantTypes string
		wantRows  string // rows joined by ";", values by "|"
	}{
		{"types", "id,price,ok,d,ts,name\n" +
			"1,747.06,true,2024-01-31,2024-01-31 10:00:00,a\n" +
			"-2,0.1,FALSE,1970-01-01,1970-01-01T00:00:00.5,\n" +
			",,,,,c\n",
			comma,
			"int64,decimal(18, 2),bool,date32,timestamp[us],utf8",
			"1|747.06|true|2024-01-31|2024-01-31T10:00:00|a;-2|0.1|false|1970-01-01|1970-01-01T00:00:00.5|(null);(null)|(null)|(null)|(null)|(null)|c"},
		{"decimal exact beyond float64", "x\n12345678901234567890.12\n-0.01\n",
			comma, "decimal(22, 2)", "12345678901234567890.12;-0.01"},
		{"schema override", "id,price,zip\n1,747.06,00501\n2,3,10001\n",
			csvOptions{header: true, delimiter: ',', schema: &schemaOverride{names: []string{"price", "zip"},
				types: map[string]colType{"price": {kind: kindDecimal, precision: 15, scale: 2}, "zip": {kind: kindVarchar}}}},
			"int64,decimal(15, 2),utf8", "1|747.06|00501;2|3|10001"},
		{"byte order mark", "\xef\xbb\xbfid\n1\n", comma, "int64", "1"},
		{"quoted field over two lines", "id,note\n1,\"a\nb\"\n2,c\n", comma, "int64,utf8", "1|a\nb;2|c"},
		{"no header", "1,x\n2,y\n", csvOptions{header: false, delimiter: ','}, "int64,utf8", "1|x;2|y"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			types, rows, err := readCSV(t, c.text, c.co, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(types, ","); got != c.wantTypes {
				t.Errorf("types %s, want %s", got, c.wantTypes)
			}
			var rs []string
			for _, r := range rows {
				rs = append(rs, strings.Join(r, "|"))
			}
			if got := strings.Join(rs, ";"); got != c.wantRows {
				t.Errorf("rows %q, want %q", got, c.wantRows)
			}
		})
	}
}

// TestIngestCSVDecimalSum: fixed-point text becomes DECIMAL and sums
// exactly, where float64 drifts.
func TestIngestCSVDecimalSum(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("amount\n")
	var f float64
	for range 1000 {
		sb.WriteString("747.06\n")
		f += 747.06
	}
	if f == 747060 {
		t.Fatalf("float64 sums exactly here; the test shows nothing")
	}
	path := filepath.Join(t.TempDir(), "sum.csv")
	writeFile(t, path, sb.String())
	src, err := openSource(path, "csv", 300, csvOptions{header: true, delimiter: ','})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var sum decimal128.Num
	for src.Next() {
		col := src.RecordBatch().Column(0).(*array.Decimal128)
		for i := range col.Len() {
			sum = sum.Add(col.Value(i))
		}
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	dt := src.Schema().Field(0).Type.(*arrow.Decimal128Type)
	if got := sum.ToString(dt.Scale); got != "747060.00" {
		t.Errorf("sum %s, want 747060.00", got)
	}
}

func TestIngestCSVErrors(t *testing.T) {
	rows := func(n int, v string) string { return strings.Repeat(v+"\n", n) }
	cases := []struct {
		name    string
		text    string
		co      csvOptions
		open    bool // the error comes at open, not while reading
		usage   bool
		wantErr []string
	}{
		{name: "value beyond the sample", text: "id,price\n" + rows(5, "1,747.06") + "2,abc\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 3},
			wantErr: []string{`line 7, column price: "abc" is not a DECIMAL(18,2)`, "first 3 rows", "--schema 'price:varchar'", "--sample-rows"}},
		{name: "integer column meets a fraction", text: "n\n1\n2\n3.75\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 2},
			wantErr: []string{`line 4, column n: "3.75" is not a BIGINT`, "--schema 'n:decimal(18,2)'"}},
		{name: "date column meets a timestamp", text: "d\n2024-01-01\n2024-01-02 10:00:00\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 1},
			wantErr: []string{`line 3, column d: "2024-01-02 10:00:00" is not a DATE`, "--schema 'd:timestamp'"}},
		{name: "wider scale beyond the sample", text: "price\n" + rows(3, "1.5") + "1.25\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 3},
			wantErr: []string{`line 5, column price: "1.25" is not a DECIMAL(18,1)`, "--schema 'price:decimal(18,2)'"}},
		{name: "wider decimal beyond the sample", text: "price\n" + rows(3, "1.5") + strings.Repeat("9", 18) + ".5\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 3},
			wantErr: []string{`line 5, column price: "` + strings.Repeat("9", 18) + `.5" is not a DECIMAL(18,1)`}},
		{name: "bigint overflow beyond the sample", text: "n\n1\n99999999999999999999\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 1},
			wantErr: []string{`line 3, column n: "99999999999999999999" is not a BIGINT`, "--schema 'n:decimal(20,0)'"}},
		{name: "value against the schema", text: "id,d\n1,2024-01-01\n2,yesterday\n",
			co: csvOptions{header: true, delimiter: ',', schema: &schemaOverride{names: []string{"d"},
				types: map[string]colType{"d": {kind: kindDate}}}},
			wantErr: []string{`line 3, column d: "yesterday" is not a DATE (the type --schema gives)`}},
		{name: "line of a field after a multi-line one", text: "note,n\n\"a\nb\nc\",1\nx,y\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 1},
			wantErr: []string{`line 5, column n: "y" is not a BIGINT`}},
		{name: "unknown schema column", text: "id,name\n1,a\n",
			co: csvOptions{header: true, delimiter: ',', schema: &schemaOverride{names: []string{"nme"},
				types: map[string]colType{"nme": {kind: kindVarchar}}}},
			open: true, usage: true, wantErr: []string{`--schema names column "nme", which the file does not have (its columns: id, name)`}},
		{name: "semicolons read with commas", text: "id;name\n1;a\n",
			co: csvOptions{header: true, delimiter: ','}, open: true,
			wantErr: []string{`"id;name" is not a valid column name`, "pass --csv-delimiter ';'"}},
		{name: "tabs read with commas", text: "id\tname\n1\ta\n",
			co: csvOptions{header: true, delimiter: ','}, open: true,
			wantErr: []string{`pass --csv-delimiter '\t'`, "tab-separated"}},
		{name: "field count", text: "a,b\n1,2\n3\n",
			co: csvOptions{header: true, delimiter: ','}, open: true,
			wantErr: []string{"line 3: a different number of fields than the first line"}},
		{name: "field count beyond the sample", text: "a,b\n1,2\n3,4,5\n",
			co:      csvOptions{header: true, delimiter: ',', sampleRows: 1},
			wantErr: []string{"line 3: a different number of fields than the first line"}},
		{name: "bare quote", text: "a\nx\"y\n",
			co: csvOptions{header: true, delimiter: ','}, open: true,
			wantErr: []string{"line 2, character 2: a quote"}},
		{name: "empty file", text: "", co: csvOptions{header: true, delimiter: ','}, open: true,
			wantErr: []string{"the file is empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readCSV(t, c.text, c.co, 2)
			if err == nil {
				t.Fatal("no error")
			}
			var ve *ValueError
			if !c.open && strings.Contains(c.wantErr[0], "is not a") && !errors.As(err, &ve) {
				t.Errorf("error %v is not a *ValueError", err)
			}
			if errors.Is(err, errUsage) != c.usage {
				t.Errorf("usage error %v, want %v", errors.Is(err, errUsage), c.usage)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "strconv") {
				t.Errorf("error %q shows Go internals", err)
			}
		})
	}
}

func TestIngestErrorHints(t *testing.T) {
	src := &source{}
	cases := []struct {
		mode string
		err  error
		want string
	}{
		{"create", status.Error(codes.AlreadyExists, "already exists: table sales.x already exists"),
			"ingest: table sales.x already exists (nothing was loaded): pass --mode append to add the rows to it, or --mode replace to replace its rows"},
		{"create_append", status.Error(codes.AlreadyExists, "already exists: x"), "ingest: AlreadyExists: already exists: x"},
		{"append", status.Error(codes.NotFound, "not found: table sales.x"),
			"ingest: NotFound: not found: table sales.x (nothing was loaded): --mode append needs an existing table you may modify; --mode create_append creates it when missing"},
		{"create", status.Error(codes.NotFound, "not found: schema nope"), "ingest: NotFound: not found: schema nope"},
	}
	for _, c := range cases {
		got := ingestError(context.Background(), "f.csv", "sales.x", c.mode, src, c.err)
		if got.Error() != c.want {
			t.Errorf("%s, %v:\n got %q\nwant %q", c.mode, c.err, got, c.want)
		}
	}
	// A read error says where in the file.
	src.err = &ValueError{Line: 7, Column: "x", Value: "v", Type: colType{kind: kindBigint}}
	got := ingestError(context.Background(), "f.csv", "sales.x", "create", src, errors.New("canceled"))
	if want := `ingest: f.csv: line 7, column x: "v" is not a BIGINT (the type --schema gives) (nothing was loaded)`; got.Error() != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// BenchmarkIngestCSVRead reads 200,000 rows of BIGINT, DECIMAL, DATE,
// VARCHAR and BOOLEAN columns from a CSV file into record batches.
func BenchmarkIngestCSVRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.csv")
	var sb strings.Builder
	sb.WriteString("id,price,day,name,ok\n")
	const rows = 200000
	for i := range rows {
		fmt.Fprintf(&sb, "%d,%d.%02d,2024-01-%02d,name %d,%v\n", i, i%10000, i%100, i%28+1, i, i%2 == 0)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		src, err := openSource(path, "csv", 65536, csvOptions{header: true, delimiter: ','})
		if err != nil {
			b.Fatal(err)
		}
		n := int64(0)
		for src.Next() {
			n += src.RecordBatch().NumRows()
		}
		if src.Err() != nil || n != rows {
			b.Fatal(src.Err(), n)
		}
		src.Close()
	}
}
