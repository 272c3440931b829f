package sqlgate_test

import (
	"errors"
	"testing"

	"lakegate/authz/sqlgate"
)

func TestCheckLexical(t *testing.T) {
	tests := []struct {
		sql string
		ok  bool
	}{
		{`SELECT 1`, true},
		{`SELECT 'a''b', "x""y" FROM "s"."t" AS "t"`, true},
		{"SELECT 'it''s -- not; a /* comment */ $$ # \\ `'", true},
		{"SELECT 'line\nbreak\r\ttab'", true},
		{`SELECT "a--b", "/*", ";"`, true},
		{`SELECT (1 - (-(1)))`, true},
		{`SELECT 1 / 2, 3 // 4`, true},
		{"SELECT 1\n\tFROM t", true},
		{`SELECT 1 --x`, false},
		{`SELECT --1`, false},
		{`SELECT 1 /* c */`, false},
		{`SELECT 1; SELECT 2`, false},
		{`SELECT 1;`, false},
		{`SELECT $$x$$`, false},
		{`SELECT $1`, true}, // a numbered parameter
		{`SELECT ($12 + $3)`, true},
		{`SELECT $0`, false},
		{`SELECT $01`, false},
		{`SELECT a$1`, false},
		{`SELECT $1a`, false},
		{`SELECT $1$x$1$`, false},
		{`SELECT $tag$x$tag$`, false},
		{`SELECT $`, false},
		{`SELECT $1'x'`, false},
		{`SELECT #1 FROM t`, false},
		{`SELECT 'a' \ 'b'`, false},
		{"SELECT `a`", false},
		{"SELECT 'a\x00'", false},
		{"SELECT 1\x00", false},
		{"SELECT 1\r", false},
		{"SELECT 1\x1b", false},
		{"SELECT 1\x7f", false},
		{"SELECT \"a\nb\"", false},
		{"SELECT é", false},
		{`SELECT E'\x41'`, false},
		{`SELECT e'a'`, false},
		{`SELECT x'41'`, false},
		{`SELECT X'41'`, false},
		{`SELECT b'1'`, false},
		{`SELECT B'1'`, false},
		{`SELECT U&'\0041'`, false},
		{`SELECT U&"a"`, false},
		{`SELECT n'x'`, false},
		{`SELECT DATE'2020-01-01'`, false},
		{`SELECT "a"'b'`, false},
		{`SELECT 'a`, false},
		{`SELECT "a`, false},
		{`SELECT 'a''`, false},
		{`SELECT "a""`, false},
	}
	for _, tt := range tests {
		err := sqlgate.CheckLexical(tt.sql)
		if (err == nil) != tt.ok {
			t.Errorf("CheckLexical(%q) = %v, want ok=%v", tt.sql, err, tt.ok)
		}
		if err != nil && !errors.Is(err, sqlgate.ErrUnsupported) {
			t.Errorf("CheckLexical(%q) error %v is not ErrUnsupported", tt.sql, err)
		}
	}
}
