package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
)

// statements returns the statements of a complete script as scanScript
// splits it: the segments holding code, trimmed.
func statements(src string) []string {
	segs, _, _ := scanScript(src)
	var out []string
	for _, s := range segs {
		if s.code {
			out = append(out, strings.TrimSpace(src[s.start:s.end]))
		}
	}
	return out
}

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		src  string
		want []string
		mode lexMode
	}{
		{"SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}, inCode},
		{"SELECT 1", []string{"SELECT 1"}, inCode},
		{"SELECT ';' AS a; SELECT 2", []string{"SELECT ';' AS a", "SELECT 2"}, inCode},
		{`SELECT "a;b", 'it''s; fine', 'x\'; y'; SELECT 2`, []string{`SELECT "a;b", 'it''s; fine', 'x\'; y'`, "SELECT 2"}, inCode},
		{"SELECT `we;ird``;` FROM t; SELECT 2", []string{"SELECT `we;ird``;` FROM t", "SELECT 2"}, inCode},
		{"SELECT 1 -- no; split\n; SELECT 2", []string{"SELECT 1 -- no; split", "SELECT 2"}, inCode},
		{"SELECT 1 --1; SELECT 2", []string{"SELECT 1 --1", "SELECT 2"}, inCode}, // 1 - (-1)
		{"SELECT 1 # no; split\n;", []string{"SELECT 1 # no; split"}, inCode},
		{"SELECT /* a; b */ 1; /* only a comment; */ ; -- trailing", []string{"SELECT /* a; b */ 1"}, inCode},
		{"SELECT 1 /*! ; DROP TABLE t */; SELECT 2", []string{"SELECT 1 /*! ; DROP TABLE t */", "SELECT 2"}, inCode},
		{";;  ;\n", nil, inCode},
		{"SELECT 'open; ", []string{"SELECT 'open;"}, inSingle},
		{`SELECT "open`, []string{`SELECT "open`}, inDouble},
		{"SELECT `open", []string{"SELECT `open"}, inBacktick},
		{"SELECT 1; /* open ;", []string{"SELECT 1"}, inBlock},
		{"SELECT 1 -- comment to the end", []string{"SELECT 1 -- comment to the end"}, inCode},
	}
	for _, c := range cases {
		if got := statements(c.src); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.src, got, c.want)
		}
		if _, mode, _ := scanScript(c.src); mode != c.mode {
			t.Errorf("%q: mode %d, want %d", c.src, mode, c.mode)
		}
	}
}

func TestKindOf(t *testing.T) {
	for stmt, want := range map[string]statementKind{
		"SELECT 1":                               kindQuery,
		"-- a comment\nINSERT INTO t VALUES (1)": kindUpdate,
		"/* c */ create table t as select 1":     kindUpdate,
		"# c\n  drop table t":                    kindUpdate,
		"use sales":                              kindUse,
		"USE`sales`":                             kindUse,
		"(SELECT 1)":                             kindQuery,
		"SHOW TABLES":                            kindQuery,
		"/*!50000 INSERT */ INTO t VALUES (1)":   kindUpdate,
		"-- only a comment":                      kindQuery,
		"users":                                  kindQuery,
	} {
		if got := kindOf(stmt); got != want {
			t.Errorf("kindOf(%q) = %d, want %d", stmt, got, want)
		}
	}
}

// tidbSemicolons returns the offsets of the ; tokens the gate's lexer
// (TiDB's, in the default SQL mode) finds in src, and false when it does
// not read src to its end without an error (an invalid token, or a byte
// it has no rule for, where it stops). Its Lex method takes an unexported
// type, so it is called through reflection. The parser's literal values
// (test_driver) panic on some number literals, as the gate knows
// (it recovers): no answer then.
func tidbSemicolons(src string) (_ []int, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	const invalid = 57356 // the lexer's invalid token
	s := parser.NewScanner(src)
	lex := reflect.ValueOf(s).MethodByName("Lex")
	sym := reflect.New(lex.Type().In(0).Elem())
	offset := func() int { return int(sym.Elem().FieldByName("offset").Int()) }
	var out []int
	for range len(src) + 1 {
		switch tok := lex.Call([]reflect.Value{sym})[0].Int(); tok {
		case 0:
			_, errs := s.Errors()
			return out, offset() == len(src) && len(errs) == 0
		case invalid:
			return nil, false
		case ';':
			if o := offset(); o < len(src) && src[o] == ';' {
				out = append(out, o)
			} else {
				return nil, false // a ; token elsewhere: "@@;" lexes so
			}
		}
	}
	return nil, false
}

// FuzzSplitStatements checks scanScript against invariants and against the
// gate's own lexer:
//   - the segments and the semicolons between them are src, in order;
//   - a statement scanned again on its own is one statement, with nothing
//     left open;
//   - feeding the script a line at a time, as the shell does, gives the
//     same statements as scanning it whole;
//   - where TiDB's lexer reads src without error, it finds a ; token at
//     exactly the offsets where scanScript splits (left out: executable
//     comments, where a ; does not split on purpose, and TiDB's /*T!
//     feature comments).
func FuzzSplitStatements(f *testing.F) {
	for _, s := range []string{
		"SELECT 1; SELECT 2;",
		`SELECT 'a;b', "c;d", ` + "`e;f`" + `; SELECT 'it''s', 'x\';y'`,
		"SELECT 1 -- c;\n; SELECT 2 # d;\n;",
		"SELECT /* ; */ 1; /* open",
		"SELECT 1--1; SELECT 2",
		"SELECT 1 /*! ; */;",
		"INSERT INTO t VALUES ('a\nb;c');\nUSE s;",
		"SELECT 1e-- x\n;",
		"SELECT \"\\\";\";",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		segs, mode, bang := scanScript(src)
		var b strings.Builder
		for i, s := range segs {
			if i > 0 {
				b.WriteByte(';')
			}
			if s.start > s.end || (i > 0 && s.start != segs[i-1].end+1) {
				t.Fatalf("%q: segments %v", src, segs)
			}
			b.WriteString(src[s.start:s.end])
		}
		if b.String() != src {
			t.Fatalf("%q: segments %v rebuild %q", src, segs, b.String())
		}
		for _, s := range segs[:len(segs)-1] {
			one, m, open := scanScript(src[s.start:s.end])
			if len(one) != 1 || m != inCode || open {
				t.Fatalf("%q: statement %q scans as %v (mode %d, bang %v)", src, src[s.start:s.end], one, m, open)
			}
		}
		// A line at a time: the shell keeps the text after the last ;
		// and scans it again with the next line.
		var fed []string
		pending := ""
		for _, line := range strings.SplitAfter(src, "\n") {
			pending += line
			ps, _, _ := scanScript(pending)
			for _, s := range ps[:len(ps)-1] {
				fed = append(fed, pending[s.start:s.end])
			}
			last := ps[len(ps)-1]
			pending = pending[last.start:]
		}
		var whole []string
		for _, s := range segs[:len(segs)-1] {
			whole = append(whole, src[s.start:s.end])
		}
		if !slices.Equal(fed, whole) {
			t.Fatalf("%q: a line at a time %q, whole %q", src, fed, whole)
		}
		if mode != inCode || bang || strings.Contains(src, "/*!") || strings.Contains(src, "/*T!") {
			return
		}
		want, ok := tidbSemicolons(src)
		if !ok {
			return
		}
		var got []int
		for _, s := range segs[:len(segs)-1] {
			got = append(got, s.end)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q: splits at %v, the gate's lexer finds ; at %v", src, got, want)
		}
	})
}
