package duckdb_test

import (
	"context"
	"fmt"
	"testing"
)

// TestFoldUnique: the answer is the collation's, exactly. Values that
// differ only by case, by accents (precomposed or not), or by a letter
// the collation folds to another (the Kelvin sign) are equal under it; a
// column of values that stay apart, NULLs and empty strings included, is
// fold-unique. Trailing spaces and other punctuation keep values apart.
func TestFoldUnique(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	cases := []struct {
		name   string
		values string // a SQL list of VARCHAR values
		want   bool
	}{
		{"distinct ascii", `'Brand#1', 'Brand#2', 'brand#3', 'Brand#1', NULL, ''`, true},
		{"case", `'Brand#1', 'brand#1'`, false},
		{"case upper", `'ABC', 'abc', 'x'`, false},
		{"accent", `'Ärger', 'arger'`, false},
		{"decomposed accent", `'e' || chr(769), 'e'`, false},
		{"kelvin sign", `chr(8490), 'k'`, false},
		{"trailing space", `'a', 'a '`, true},
		{"punctuation", `'a-b', 'a_b', 'a.b'`, true},
		{"only nulls", `NULL, NULL`, true},
		{"one value repeated", `'Same', 'Same', 'Same'`, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("folds@%d", i+1)
			bindTable(t, e, "acme", id, "SELECT CAST(v AS VARCHAR) AS s, 1 AS n FROM (SELECT unnest(["+c.values+"]) AS v)")
			for range 2 { // the second answer comes from memory
				got, err := e.FoldUnique(ctx, "acme", id, "s")
				if err != nil {
					t.Fatal(err)
				}
				if got != c.want {
					t.Fatalf("FoldUnique(%s) = %v, want %v", c.values, got, c.want)
				}
			}
		})
	}
	if _, err := e.FoldUnique(ctx, "acme", "unbound@1", "s"); err == nil {
		t.Error("FoldUnique of a version not bound: no error")
	}
	if _, err := e.FoldUnique(ctx, "acme", "folds@1", "no_such_column"); err == nil {
		t.Error("FoldUnique of a missing column: no error")
	}
}
