package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/authz"
)

func TestCheckExposure(t *testing.T) {
	cases := []struct {
		addr                    string
		haveMap, haveTLS, plain bool
		wantErr                 string
	}{
		{"127.0.0.1:8815", false, false, false, ""},
		{"localhost:8815", false, false, false, ""},
		{"[::1]:8815", false, false, false, ""},
		{"0.0.0.0:8815", false, false, false, "without --principals"},
		{"0.0.0.0:8815", false, true, false, "without --principals"},
		{"0.0.0.0:8815", false, false, true, "without --principals"},
		{":8815", true, false, false, "without TLS"},
		{"10.0.0.5:8815", true, false, false, "without TLS"},
		{"10.0.0.5:8815", true, true, false, ""},
		{"10.0.0.5:8815", true, false, true, ""},
		{"[::]:8815", true, false, false, "without TLS"},
		{"no-port", false, false, false, "missing port"},
	}
	for _, c := range cases {
		err := checkExposure(c.addr, c.haveMap, c.haveTLS, c.plain)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s %+v: %v", c.addr, c, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, errUsage)):
			t.Errorf("%s %+v: err %v, want usage error containing %q", c.addr, c, err, c.wantErr)
		}
	}
}

func TestRunUsage(t *testing.T) {
	t.Setenv("LAKEGATE_TOKEN", "")
	for _, args := range [][]string{nil, {"nope"}, {"token"}, {"token", "old"}, {"token", "new", "extra"}, {"version", "extra"},
		{"serve", "--flight-addr", "0.0.0.0:1"}, {"serve", "--tls-client-ca", "x"}, {"serve", "--raft-log", "sqlite"},
		{"sql"}, {"sql", "--format", "xml", "--token", "t", "SELECT 1"}, {"sql", "--token", "t", "SELECT 1", "SELECT 2"},
		{"sql", "--token", "t", "-f", "x.sql", "SELECT 1"}, {"sql", "--token", "t", "--format", "json", "--csv-escape-formulas", "SELECT 1"}} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); !errors.Is(err, errUsage) {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestTokenNew(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "new"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`token:  (lg_\S+)\nsha256: ([0-9a-f]{64})\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("output:\n%s", out.String())
	}
	if !authz.ValidTokenFormat(m[1]) || authz.HashToken(m[1]).String() != m[2] {
		t.Fatalf("token %q does not match hash %s", m[1], m[2])
	}
	if !strings.Contains(out.String(), "tokens: [{sha256: "+m[2]+"}]") {
		t.Fatalf("no principal map line:\n%s", out.String())
	}
}

func TestWriters(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a,\"b\"", ""}, []bool{true, false})
	rec := b.NewRecordBatch()
	defer rec.Release()
	cases := map[string]string{
		"csv":      "id,name\n1,\"a,\"\"b\"\"\"\n2,\n",
		"json":     "[\n{\"id\":1,\"name\":\"a,\\\"b\\\"\"},\n{\"id\":2,\"name\":null}\n]\n",
		"jsonl":    "{\"id\":1,\"name\":\"a,\\\"b\\\"\"}\n{\"id\":2,\"name\":null}\n",
		"table":    "id  name\n1   a,\"b\"\n2   NULL\n",
		"markdown": "|  id | name  |\n| --: | ----- |\n|   1 | a,\"b\" |\n|   2 | NULL  |\n",
	}
	for format, want := range cases {
		w, err := writerFor(format, false)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := w(&out, schema, []arrow.RecordBatch{rec}); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("%s:\n%q\nwant\n%q", format, out.String(), want)
		}
	}
}

func TestIsUpdate(t *testing.T) {
	for sql, want := range map[string]bool{
		"CREATE TABLE s.t AS SELECT 1":  true,
		"  insert into s.t VALUES (1)":  true,
		"\nDROP TABLE s.t":              true,
		"SELECT * FROM s.t":             false,
		"WITH x AS (SELECT 1) SELECT 1": false,
		"(SELECT 1)":                    false,
		"":                              false,
		"SHOW TABLES":                   false,
		"USE sales":                     false,
	} {
		if got := isUpdate(sql); got != want {
			t.Errorf("isUpdate(%q) = %v, want %v", sql, got, want)
		}
	}
}

// TestTableOutputIsInert: values and column names printed as a table cannot
// drive the terminal (escape sequences, carriage returns, C1 controls) or
// reorder the text around them (bidirectional overrides).
func TestTableOutputIsInert(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "n\x1b[31m", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{
		"\x1b[2J\x1b[Hwiped",       // clear the screen
		"\x1b]52;c;ZWNobyBoaQ==\a", // write the clipboard (OSC 52)
		"secret\rshown",            // overwrite the line
		"\u202egnp.exe",            // right-to-left override
		"\u009b31m",                // C1 CSI
		"a\xffb",                   // not UTF-8
		"tab\there\nnext",          // layout only
		"ünïcödé 日本 🔥",             // left as it is
	}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out bytes.Buffer
	if err := writeTable(&out, schema, []arrow.RecordBatch{rec}); err != nil {
		t.Fatal(err)
	}
	want := `n\x1b[31m
\x1b[2J\x1b[Hwiped
\x1b]52;c;ZWNobyBoaQ==\x07
secret\x0dshown
\u202egnp.exe
\u009b31m
a\xffb
tab here next
ünïcödé 日本 🔥
`
	if got := out.String(); got != want {
		t.Errorf("table:\n%s\nwant\n%s", got, want)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "plain",
		"":           "",
		"\x7f":       `\x7f`,
		"\u200b":     `\u200b`,
		"\U000e0001": `\U000e0001`,
		"a\u2028b":   `a\u2028b`,
		"x\ty\nz":    "x y z",
		"Ωmega\x00":  `Ωmega\x00`,
		"\xe2\x80":   `\xe2\x80`,
		"café":       "café",
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintError(t *testing.T) {
	var out bytes.Buffer
	printError(&out, errors.Join(errors.New("Could not convert string '\x1b]0;owned\a' to INT32"), errors.New("second\tline")))
	if want := "lakegate: Could not convert string '\\x1b]0;owned\\x07' to INT32\nsecond line\n"; out.String() != want {
		t.Errorf("printError:\n%q\nwant\n%q", out.String(), want)
	}
}

// FuzzPrintable: what printable returns is UTF-8 without a control, format
// or separator character, and printable ASCII comes back unchanged.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "a\rb", "\u202e", "\xff\xfe", "\U000e0001", "tab\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := printable(s)
		if !utf8.ValidString(out) {
			t.Fatalf("printable(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
				t.Fatalf("printable(%q) = %q holds %U", s, out, r)
			}
		}
		ascii := true
		for i := 0; i < len(s); i++ {
			ascii = ascii && s[i] >= 0x20 && s[i] < 0x7f
		}
		if ascii && out != s {
			t.Fatalf("printable(%q) = %q, want it unchanged", s, out)
		}
	})
}

// TestJSONKeepsColumns: --format json prints each row's columns in the
// result's order, and a column whose name an earlier one already took
// under a suffix (_1, _2, … as DuckDB names such columns) instead of
// overwriting it: a map lost `SELECT 1 AS x, 2 AS x`'s first x and sorted
// the rest by name.
func TestJSONKeepsColumns(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "z", Type: arrow.PrimitiveTypes.Int64}, {Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "a_1", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 4 {
		b.Field(i).(*array.Int64Builder).AppendValues([]int64{int64(i + 1)}, nil)
	}
	b.Field(4).(*array.StringBuilder).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	var out bytes.Buffer
	if err := writeJSONLines(&out, schema, []arrow.RecordBatch{rec}); err != nil {
		t.Fatal(err)
	}
	if want := `{"z":1,"a":2,"a_2":3,"a_1":4,"a_3":null}` + "\n"; out.String() != want {
		t.Fatalf("got  %swant %s", out.String(), want)
	}
}

// TestCSVEscapeFormulas: with --csv-escape-formulas a text cell (or column
// name) that a spreadsheet would run as a formula is written with a
// leading ' so that it shows as text; numbers, and text that is not a
// formula, are left alone. Without the flag CSV stays faithful.
func TestCSVEscapeFormulas(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "=n", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	vals := []string{`=HYPERLINK("http://x","y")`, "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", "a=b", ""}
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{-1, 2, 3, 4, 5, 6, 7, 8, 9}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues(vals, []bool{true, true, true, true, true, true, true, true, false})
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, tc := range []struct {
		escape bool
		want   string
	}{
		{true, "'=n,s\n-1,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"\n2,'+1+2\n3,'-2+3\n4,'@SUM(A1)\n5,'\tx\n6,\"'\rx\"\n7,plain\n8,a=b\n9,\n"},
		{false, "=n,s\n-1,\"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"\n2,+1+2\n3,-2+3\n4,@SUM(A1)\n5,\"\tx\"\n6,\"\rx\"\n7,plain\n8,a=b\n9,\n"},
	} {
		var out bytes.Buffer
		if err := csvWriter(tc.escape)(&out, schema, []arrow.RecordBatch{rec}); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("escape %v:\n%q\nwant\n%q", tc.escape, out.String(), tc.want)
		}
	}
	if err := run(context.Background(), []string{"sql", "--token", "t", "--csv-escape-formulas", "SELECT 1"}, io.Discard, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("--csv-escape-formulas without --format csv: %v, want a usage error", err)
	}
}

// TestDecimalCellsKeepTheirScale: a DECIMAL(p,s) value prints with s
// digits after the point in every format, as MySQL's client shows it
// (12.50, not 12.5; 0.05; -3.00; 7); JSON holds them as exact strings.
func TestDecimalCellsKeepTheirScale(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
		{Name: "n", Type: &arrow.Decimal128Type{Precision: 10, Scale: 0}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(1250), decimal128.FromI64(5), decimal128.FromI64(-300), {}}, []bool{true, true, true, false})
	b.Field(1).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(7), decimal128.FromI64(0), decimal128.FromI64(-1), decimal128.FromI64(2)}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"csv", []string{"12.50,7", "0.05,0", "-3.00,-1", ",2"}},
		{"table", []string{"12.50", "0.05", "-3.00", "NULL"}},
		{"jsonl", []string{`{"price":"12.50","n":"7"}`, `{"price":"0.05","n":"0"}`, `{"price":"-3.00","n":"-1"}`, `{"price":null,"n":"2"}`}},
	} {
		w, err := writerFor(tc.format, false)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := w(&out, schema, []arrow.RecordBatch{rec}); err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.want {
			if !strings.Contains(out.String(), s) {
				t.Errorf("%s: %q not in\n%s", tc.format, s, out.String())
			}
		}
	}
}
