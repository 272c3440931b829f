package sqlgate_test

import (
	"errors"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestFunctionArityAndCasts checks the bounds of the function allow list
// and of CAST targets at each end: a function that takes no argument
// refuses one, a refused function is named in the message, and DECIMAL
// precision and scale are accepted exactly within 1 to 38 and 0 to the
// precision.
func TestFunctionArityAndCasts(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	cases := []struct {
		sql  string
		want error  // nil: accepted
		msg  string // the refusal's message contains it
	}{
		{"SELECT pi() FROM t", nil, ""},
		{"SELECT pi(1) FROM t", sqlgate.ErrUnsupported, "does not take 1 arguments"},
		{"SELECT rand(1, 2) FROM t", sqlgate.ErrUnsupported, "does not take 2 arguments"},
		{"SELECT no_such_fn(a) FROM t", sqlgate.ErrUnsupported, `"no_such_fn"`},
		// A quoted name that is no identifier is not echoed.
		{"SELECT `no such fn`(a) FROM t", sqlgate.ErrUnsupported, "function (unnamed) is not supported"},
		{"SELECT CAST(a AS DECIMAL(1, 0)) FROM t", nil, ""},
		{"SELECT CAST(a AS DECIMAL(38, 38)) FROM t", nil, ""},
		{"SELECT CAST(a AS DECIMAL(10, 10)) FROM t", nil, ""},
		{"SELECT CAST(a AS DECIMAL(39, 2)) FROM t", sqlgate.ErrUnsupported, "DECIMAL(39,2)"},
		{"SELECT CAST(a AS DECIMAL(10, 11)) FROM t", sqlgate.ErrUnsupported, "DECIMAL(10,11)"},
		{"SELECT CAST(a AS DECIMAL(5)) FROM t", nil, ""},
		{"SELECT CAST(a AS DECIMAL) FROM t", nil, ""},
	}
	for _, c := range cases {
		_, err := g.Parse(c.sql, "s")
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.sql, err)
			}
			continue
		}
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v mentioning %s", c.sql, err, c.want, c.msg)
		}
	}
}

// TestPolicyTextSelectOptions checks that a policy expression cannot carry a
// SELECT option: each one is refused like any other clause.
func TestPolicyTextSelectOptions(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, opt := range []string{"DISTINCT", "DISTINCTROW", "ALL", "STRAIGHT_JOIN", "SQL_CALC_FOUND_ROWS", "SQL_BIG_RESULT",
		"SQL_SMALL_RESULT", "SQL_BUFFER_RESULT", "HIGH_PRIORITY"} {
		expr := opt + " region = 'EU'"
		if err := g.CheckRowFilter(expr); err == nil {
			t.Errorf("CheckRowFilter(%q) accepted", expr)
		}
		if err := g.CheckMask(opt + " {column}"); err == nil {
			t.Errorf("CheckMask(%q) accepted", opt+" {column}")
		}
	}
	if err := g.CheckRowFilter("region = 'EU'"); err != nil {
		t.Fatal(err)
	}
}
