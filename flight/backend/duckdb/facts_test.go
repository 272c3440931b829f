package duckdb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// TestColumnFact: the answers are the collation's, exactly. Values that
// differ only by case, by accents (precomposed or not), or by a letter
// the collation folds to another (the Kelvin sign) are equal under it; a
// column of values that stay apart, NULLs and empty strings included, is
// fold-unique. Trailing spaces and punctuation keep values apart. A column
// is folded when no value changes under lower(strip_accents(…)), and ASCII
// when every value is.
func TestColumnFact(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	cases := []struct {
		name                  string
		values                string // a SQL list of VARCHAR values
		unique, folded, ascii bool
		letters               string // the letters the values hold
	}{
		{"distinct ascii", `'Brand#1', 'Brand#2', 'brand#3', 'Brand#1', NULL, ''`, true, false, true, "Bbrand"},
		{"lower case", `'pending deposits', 'x', 'x', '', NULL, '123 #-_.'`, true, true, true, "pendigostx"},
		{"case", `'Brand#1', 'brand#1'`, false, false, true, "Bbrand"},
		{"case upper", `'ABC', 'abc', 'x'`, false, false, true, "ABCabcx"},
		{"first and last letter", `'xAx', 'zZ', 'Tiresias'`, true, false, true, "xAzZTiresa"},
		{"accent", `'ärger', 'arger'`, false, false, false, "arge"},
		{"accent alone", `'ärger', 'b'`, true, false, false, "rgeb"},
		{"upper accent", `'Ärger', 'É', 'Ω'`, true, false, false, "rge"},
		{"decomposed accent", `'e' || chr(769), 'e'`, false, false, false, "e"},
		{"kelvin sign", `chr(8490), 'k'`, false, false, false, "k"},
		{"trailing space", `'a', 'a '`, true, true, true, "a"},
		{"punctuation", `'a-b', 'a_b', 'a.b', '[@]^'`, true, true, true, "ab"},
		{"only nulls", `NULL, NULL`, true, true, true, ""},
		{"one value repeated", `'Same', 'Same', 'Same'`, true, false, true, "Same"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("facts@%d", i+1)
			bindTable(t, e, "acme", id, "SELECT CAST(v AS VARCHAR) AS s, 1 AS n FROM (SELECT unnest(["+c.values+"]) AS v)")
			for range 2 { // the second answers come from memory
				for fact, want := range map[backend.ColumnFact]bool{backend.FactFoldUnique: c.unique, backend.FactFolded: c.folded, backend.FactASCII: c.ascii} {
					got, err := e.ColumnFact(ctx, "acme", id, "s", fact)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("ColumnFact(%s, %d) = %v, want %v", c.values, fact, got, want)
					}
				}
				for l := byte('A'); l <= 'z'; l++ {
					lacks := backend.FactLacks(l)
					if _, ok := lacks.Letter(); !ok {
						continue
					}
					got, err := e.ColumnFact(ctx, "acme", id, "s", lacks)
					if want := !strings.ContainsRune(c.letters, rune(l)); err != nil || got != want {
						t.Fatalf("ColumnFact(%s, FactLacks(%c)) = %v, %v; want %v", c.values, l, got, err, want)
					}
				}
			}
		})
	}
	for _, bad := range []struct{ id, column string }{{"unbound@1", "s"}, {"facts@1", "no_such_column"}} {
		if _, err := e.ColumnFact(ctx, "acme", bad.id, bad.column, backend.FactFolded); err == nil {
			t.Errorf("ColumnFact(%s, %s): no error", bad.id, bad.column)
		}
		if _, err := e.ColumnFact(ctx, "acme", bad.id, bad.column, backend.FactLacks('x')); err == nil {
			t.Errorf("ColumnFact(%s, %s, FactLacks): no error", bad.id, bad.column)
		}
	}
	for _, bad := range []backend.ColumnFact{0, backend.FactLacks('1'), backend.FactLacks(0xC3), 0x1ff} {
		if _, err := e.ColumnFact(ctx, "acme", "facts@1", "s", bad); err == nil {
			t.Errorf("ColumnFact of an unknown fact %#x: no error", bad)
		}
	}
}

// TestColumnFactFoldUniqueBound: a column of more distinct values than
// Config.FoldUniqueValues is not grouped to check FactFoldUnique: the fact
// is answered false; the other facts are checked whatever the count.
func TestColumnFactFoldUniqueBound(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		limit int
		want  bool
	}{{4, false}, {5, true}, {0, true}} {
		e, _ := newEngine(t, func(cfg *duckdb.Config) { cfg.FoldUniqueValues = c.limit })
		bindTable(t, e, "acme", "bound@1", "SELECT ['a', 'b', 'c', 'd', 'e'][range % 5 + 1] AS s FROM range(100)")
		got, err := e.ColumnFact(ctx, "acme", "bound@1", "s", backend.FactFoldUnique)
		if err != nil || got != c.want {
			t.Errorf("FoldUniqueValues %d: FoldUnique of 5 values = %v, %v; want %v", c.limit, got, err, c.want)
		}
		if folded, err := e.ColumnFact(ctx, "acme", "bound@1", "s", backend.FactFolded); err != nil || !folded {
			t.Errorf("FoldUniqueValues %d: Folded = %v, %v; want true", c.limit, folded, err)
		}
	}
}
