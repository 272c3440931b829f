package sqlgate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestLast4HidesShortValues runs LAST4 on real engines over values of every
// length around four: a value of four characters or fewer (a PIN) is hidden
// whole, a longer one keeps only its last four. Multibyte characters count
// as one.
func TestLast4HidesShortValues(t *testing.T) {
	values := []string{"", "1", "12", "123", "1234", "12345", "123456", "äöüß", "äöüßx"}
	want := []string{"", "*", "**", "***", "****", "*2345", "**3456", "****", "*öüßx"}
	var rows []string
	for i, v := range values {
		rows = append(rows, fmt.Sprintf("(%d, 'n', '%s', 'EU', 1)", i, v))
	}
	insert := strings.Join(rows, ", ")
	engines := []struct {
		d     sqlgate.Dialect
		open  func(t *testing.T) func(string) ([]string, error)
		table string
	}{
		{sqlgate.DialectDuckDB, func(t *testing.T) func(string) ([]string, error) {
			db := openTestDB(t, "duckdb", "", `CREATE SCHEMA lg_rel`,
				`CREATE TABLE lg_rel.people (id BIGINT, name VARCHAR, ssn VARCHAR, region VARCHAR, age INTEGER)`,
				`INSERT INTO lg_rel.people VALUES `+insert)
			return func(q string) ([]string, error) { return queryStrings(db, q) }
		}, "lg_rel"},
		{sqlgate.DialectSQLite, func(t *testing.T) func(string) ([]string, error) {
			db := openTestDB(t, "sqlite", ":memory:",
				`CREATE TABLE people (id INTEGER, name TEXT, ssn TEXT, region TEXT, age INTEGER)`,
				`INSERT INTO people VALUES `+insert)
			return func(q string) ([]string, error) { return queryStrings(db, q) }
		}, "main"},
	}
	for _, e := range engines {
		t.Run(e.d.String(), func(t *testing.T) {
			g := sqlgate.New(sqlgate.Config{})
			run := e.open(t)
			m, err := g.PrepareMask("LAST4", "ssn", peopleCols, e.d)
			if err != nil {
				t.Fatal(err)
			}
			pol := &sqlgate.Policy{Masks: []*sqlgate.Mask{nil, nil, m, nil, nil}}
			st, err := g.ParseFor("SELECT ssn FROM people ORDER BY id", "s", e.d)
			if err != nil {
				t.Fatal(err)
			}
			rel := map[sqlgate.TableRef]sqlgate.Relation{}
			for _, r := range st.Tables() {
				rel[r] = sqlgate.Relation{Schema: e.table, Name: "people", Columns: peopleCols, Types: peopleTypes, Policy: pol}
			}
			out, err := st.Render(rel)
			if err != nil {
				t.Fatal(err)
			}
			got, err := run(out)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("LAST4 of %q = %q, want %q (%s)", values, got, want, out)
			}
		})
	}
	// MySQL is not run here: its text holds the same bound.
	g := sqlgate.New(sqlgate.Config{})
	m, err := g.PrepareMask("LAST4", "ssn", peopleCols, sqlgate.DialectMySQL)
	if err != nil {
		t.Fatal(err)
	}
	out, err := dialectRender(g, sqlgate.DialectMySQL, &sqlgate.Policy{Masks: []*sqlgate.Mask{nil, nil, m, nil, nil}}, "SELECT ssn FROM people")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "CHAR_LENGTH(`__lg_p`.`ssn`) <= 4 THEN") {
		t.Fatalf("MySQL LAST4 does not hide values of four characters whole: %s", out)
	}
}

// TestMaskColumnPlaceholderInQuotes checks that "{column}" inside a quoted
// string of a mask stays text (the column's value never shows through a
// literal), after escaped quotes too, and that outside quotes it is the
// column.
func TestMaskColumnPlaceholderInQuotes(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	cases := []struct {
		mask string
		want string // ssn of person 1 through the mask
	}{
		{`'{column}'`, "{column}"},
		{`'ab{column}'`, "ab{column}"},
		{`concat('a\'{column}', 'b')`, "a'{column}b"},
		{`concat('a\\', {column})`, `a\111-22-3333`},
		{`concat("{column}", '-', {column})`, "{column}-111-22-3333"},
		{"concat('x', {column})", "x111-22-3333"},
	}
	for _, c := range cases {
		m, err := g.PrepareMask(c.mask, "ssn", peopleCols, sqlgate.DialectDuckDB)
		if err != nil {
			t.Errorf("%s: %v", c.mask, err)
			continue
		}
		pol := &sqlgate.Policy{Masks: []*sqlgate.Mask{nil, nil, m, nil, nil}}
		got, err := policyRun(t, g, db, pol, "SELECT ssn FROM people WHERE id = 1")
		if err != nil || len(got) != 1 || got[0] != c.want {
			t.Errorf("mask %s = %q, %v; want %q", c.mask, got, err, c.want)
		}
	}
}
