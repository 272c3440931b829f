package sqlgate_test

import (
	"fmt"
	"slices"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestLikeIgnoresCaseAndAccents: LIKE compares as MySQL's default collation
// does, ignoring case and accents, on ASCII and other strings, with and
// without an escape character, on a column and on an expression. Every
// answer is checked against the plain form (strip_accents on both sides,
// ILIKE) run on the same engine, and against MySQL 8.0's answer where the
// test names one.
func TestLikeIgnoresCaseAndAccents(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	values := []string{"Café", "CAFE", "cafe\u0301", "caffè latte", "x_y", "X%Y", "naïve", "", "ÉCOLE"}
	db := openTestDB(t, "duckdb", "", `CREATE SCHEMA lg_rel`, `CREATE TABLE lg_rel.w (id INTEGER, s VARCHAR)`)
	for i, v := range values {
		if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (?, ?)`, i, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (99, NULL)`); err != nil {
		t.Fatal(err)
	}
	rel := sqlgate.Relation{Schema: "lg_rel", Name: "w", Columns: []string{"id", "s"}, Types: []string{"INTEGER", "VARCHAR"}}
	tests := []struct {
		cond, ref string
		mysql     []string // MySQL 8.0's ids, when given
	}{
		{"s LIKE 'caf%'", "strip_accents(s) ILIKE 'caf%'", []string{"0", "1", "2", "3"}},
		{"s LIKE '%E'", "strip_accents(s) ILIKE '%E'", []string{"0", "1", "2", "3", "6", "8"}},
		{"s LIKE '%É'", "strip_accents(s) ILIKE '%E'", []string{"0", "1", "2", "3", "6", "8"}},
		{"s NOT LIKE 'caf%'", "strip_accents(s) NOT ILIKE 'caf%'", nil},
		{"s LIKE '_afe'", "strip_accents(s) ILIKE '_afe'", nil},
		{"s LIKE 'x\\_y'", `strip_accents(s) ILIKE 'x\_y' ESCAPE '\'`, []string{"4"}},
		{"s LIKE 'x|%y' ESCAPE '|'", `strip_accents(s) ILIKE 'x|%y' ESCAPE '|'`, []string{"5"}},
		{"concat(s, '!') LIKE '%e!'", "strip_accents(s || '!') ILIKE '%e!'", []string{"0", "1", "2", "3", "6", "8"}},
		{"s LIKE '%IVE'", "strip_accents(s) ILIKE '%ive'", []string{"6"}},
		{"s LIKE ''", "strip_accents(s) ILIKE ''", []string{"7"}},
		{"s LIKE 'école'", "strip_accents(s) ILIKE 'ecole'", []string{"8"}},
	}
	for _, cond := range []string{"s LIKE 'xa%y' ESCAPE 'a'", "s NOT LIKE 'XA%Y' ESCAPE 'A'", "s LIKE 'xé%y' ESCAPE 'é'"} {
		if _, err := g.Parse("SELECT id FROM w WHERE "+cond, "s"); err == nil {
			t.Errorf("%s: a letter as the escape character was accepted", cond)
		}
	}
	for _, tc := range tests {
		t.Run(tc.cond, func(t *testing.T) {
			got, out := runOver(t, g, db, rel, "SELECT id FROM w WHERE "+tc.cond+" ORDER BY id")
			want, err := queryStrings(db, fmt.Sprintf("SELECT id FROM lg_rel.w WHERE %s ORDER BY id", tc.ref))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, the plain form %v\n%s", got, want, out)
			}
			if tc.mysql != nil && !slices.Equal(got, tc.mysql) {
				t.Fatalf("got %v, MySQL %v", got, tc.mysql)
			}
		})
	}
}
