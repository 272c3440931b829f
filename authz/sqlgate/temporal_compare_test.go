package sqlgate_test

import (
	"database/sql"
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestTemporalComparedWithString: MySQL compares a DATE or DATETIME with a
// string by reading the string as a DATETIME (a DATE is its midnight); an
// unreadable string matches nothing. DuckDB refuses to compare DATE with a
// VARCHAR that is not a literal, and reads a literal as the column's own
// type, so the gate decides the comparison. The expected rows are MySQL
// 8.0's answers.
func TestTemporalComparedWithString(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := openTestDB(t, "duckdb", "",
		`CREATE SCHEMA lg_rel`,
		`CREATE TABLE lg_rel.ev (id BIGINT, d DATE, ts TIMESTAMP, s VARCHAR)`,
		`INSERT INTO lg_rel.ev VALUES (1, '1995-01-01', '1995-01-01 10:00:00', '1995-01-01'),
			(2, '1995-03-31', '1995-03-31 23:59:59', '1995-04-01'), (3, '1995-04-01', '1995-04-01 00:00:00', 'junk')`)
	rel := sqlgate.Relation{Schema: "lg_rel", Name: "ev", Columns: []string{"id", "d", "ts", "s"},
		Types: []string{"BIGINT", "DATE", "TIMESTAMP", "VARCHAR"}}
	tests := []struct {
		where string
		want  []string
	}{
		{"d < date_add('1995-01-01', INTERVAL '3' MONTH)", []string{"1", "2"}},
		{"d <= date_sub('1995-04-01', INTERVAL 1 DAY)", []string{"1", "2"}},
		{"date_add('1995-01-01', INTERVAL 3 MONTH) > d", []string{"1", "2"}},
		{"ts >= date_add('1995-03-31', INTERVAL 1 DAY)", []string{"3"}},
		{"ts < date_add('1995-01-01 10:00:00', INTERVAL 1 SECOND)", []string{"1"}},
		{"d = s", []string{"1"}},                     // 'junk' is no date: no match, no error
		{"s = d", []string{"1"}},                     // either side
		{"d <=> s", []string{"1"}},                   // NULL-safe equality too
		{"d = '1995-01-01 10:00:00'", nil},           // compared as DATETIME: midnight is not 10:00
		{"d = '1995-01-01 00:00:00'", []string{"1"}}, // … but midnight is
		{"d = '1995-01-01'", []string{"1"}},          // a date literal as the engine reads it
		{"ts > concat('1995-03-31', ' 12:00:00')", []string{"2", "3"}},
		{"d BETWEEN '1995-01-01' AND date_sub('1995-04-01', INTERVAL 1 DAY)", []string{"1", "2"}},
		{"d NOT BETWEEN date_add('1995-01-01', INTERVAL 1 DAY) AND '1995-12-31'", []string{"1"}},
		{"upper(s) = s", []string{"1", "2"}}, // strings stay strings
	}
	// A date computed from literals is a literal: the engine compares the
	// column with a constant and prunes files by it.
	if _, out := runOver(t, g, db, rel, "SELECT id FROM ev WHERE d <= date_sub('1998-12-01', INTERVAL 108 DAY)"); !strings.Contains(out, `("d" <= '1998-08-15')`) {
		t.Errorf("date_sub of literals is not a literal: %s", out)
	}
	if _, out := runOver(t, g, db, rel, "SELECT id FROM ev WHERE d < date_add('1994-01-01', INTERVAL '1' YEAR)"); !strings.Contains(out, `("d" < '1995-01-01')`) {
		t.Errorf("date_add of literals with a quoted count is not a literal: %s", out)
	}
	for _, tc := range tests {
		t.Run(tc.where, func(t *testing.T) {
			got, out := runOver(t, g, db, rel, "SELECT id FROM ev WHERE "+tc.where+" ORDER BY id")
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v\n%s", got, tc.want, out)
			}
		})
	}
}

// runOver renders query with every table it reads as rel, runs the result
// on db and returns its rows and the printed SQL.
func runOver(t *testing.T, g *sqlgate.Gate, db *sql.DB, rel sqlgate.Relation, query string) ([]string, string) {
	t.Helper()
	st, err := g.Parse(query, "s")
	if err != nil {
		t.Fatal(err)
	}
	m := map[sqlgate.TableRef]sqlgate.Relation{}
	for _, r := range st.Tables() {
		m[r] = rel
	}
	out, err := st.Render(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := queryStrings(db, out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return got, out
}
