package sqlgate_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// viewSession is a session's views as the Flight server keeps them.
type viewSession struct {
	g     *sqlgate.Gate
	views []sqlgate.View
}

func (s *viewSession) exec(t *testing.T, sql string) *sqlgate.Statement {
	t.Helper()
	st, err := s.g.ParseWith(sql, "s", s.views)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if s.views, err = st.ApplyTo(s.views); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return st
}

// TestSessionViews: a statement reading a session view reads the view's
// query in its place, so its tables are extracted (and then authorized)
// and its policies apply as they do to every read; a view cannot reach a
// column its reader could not.
func TestSessionViews(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	mask, err := g.PrepareMask("'***'", "ssn", peopleCols, sqlgate.DialectDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := g.PrepareRowFilter("region = 'EU'", peopleCols, sqlgate.DialectDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	pol := &sqlgate.Policy{Filter: filter, Masks: []*sqlgate.Mask{nil, nil, mask, nil, nil}}
	run := func(t *testing.T, s *viewSession, sql string) []string {
		t.Helper()
		st := s.exec(t, sql)
		rel := map[sqlgate.TableRef]sqlgate.Relation{}
		for _, r := range st.Tables() {
			switch r {
			case sqlgate.TableRef{Schema: "s", Name: "people"}:
				rel[r] = sqlgate.Relation{Schema: "lg_rel", Name: "people", Columns: peopleCols, Types: peopleTypes, Policy: pol}
			case sqlgate.TableRef{Schema: "s", Name: "orders"}:
				rel[r] = sqlgate.Relation{Schema: "lg_rel", Name: "orders", Columns: []string{"oid", "person", "amount"},
					Types: []string{"BIGINT", "BIGINT", "INTEGER"}}
			default:
				t.Fatalf("%s reads %s", sql, r)
			}
		}
		out, err := st.Render(rel)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got, err := queryStrings(db, out)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return got
	}

	t.Run("create, read, drop", func(t *testing.T) {
		s := &viewSession{g: g}
		st := s.exec(t, "CREATE VIEW spend (who, total) AS SELECT person, sum(amount) FROM orders GROUP BY person")
		if st.Kind() != sqlgate.KindCreateView || len(st.Tables()) != 0 {
			t.Fatalf("kind %s, tables %v", st.Kind(), st.Tables())
		}
		v := st.View()
		if v.Ref != (sqlgate.TableRef{Schema: "s", Name: "spend"}) || !slices.Equal(v.Columns, []string{"who", "total"}) || !strings.Contains(v.Query, "FROM `orders`") {
			t.Fatalf("view %+v", v)
		}
		// TPC-H's q15 shape: the view read twice, once in a subquery.
		got := run(t, s, "SELECT who, total FROM spend WHERE total = (SELECT max(total) FROM s.spend)")
		if !slices.Equal(got, []string{"4 11"}) {
			t.Fatalf("got %q", got)
		}
		if st := s.exec(t, "SELECT * FROM spend"); !slices.Equal(tableStrings(st), []string{"s.orders"}) {
			t.Fatalf("tables %v", tableStrings(st))
		}
		if st := s.exec(t, "DROP VIEW spend"); st.Kind() != sqlgate.KindDropView || st.IfExists() {
			t.Fatalf("kind %s", st.Kind())
		}
		if st := s.exec(t, "SELECT * FROM spend"); !slices.Equal(tableStrings(st), []string{"s.spend"}) {
			t.Fatalf("after DROP VIEW the name is a table again: %v", tableStrings(st))
		}
	})

	t.Run("policies apply through a view", func(t *testing.T) {
		s := &viewSession{g: g}
		s.exec(t, "CREATE VIEW everyone AS SELECT id, name, ssn, region FROM people")
		got := run(t, s, "SELECT id, ssn, region FROM everyone ORDER BY id")
		if !slices.Equal(got, []string{"1 *** EU", "3 *** EU"}) {
			t.Fatalf("got %q", got)
		}
	})

	t.Run("a view named like its table reads the table", func(t *testing.T) {
		s := &viewSession{g: g}
		s.exec(t, "CREATE VIEW people AS SELECT id, name FROM people WHERE id > 1")
		got := run(t, s, "SELECT * FROM people ORDER BY id")
		if !slices.Equal(got, []string{"3 cy"}) { // id > 1 and the filter's EU
			t.Fatalf("got %q", got)
		}
	})

	t.Run("views over views, in order", func(t *testing.T) {
		s := &viewSession{g: g}
		s.exec(t, "CREATE VIEW big AS SELECT * FROM orders WHERE amount > 6")
		s.exec(t, "CREATE VIEW bigger AS SELECT oid FROM big WHERE amount > 8")
		got := run(t, s, "SELECT * FROM bigger ORDER BY oid")
		if !slices.Equal(got, []string{"12", "13"}) {
			t.Fatalf("got %q", got)
		}
		s.exec(t, "CREATE OR REPLACE VIEW big AS SELECT * FROM orders WHERE amount > 10")
		got = run(t, s, "SELECT * FROM bigger ORDER BY oid")
		if !slices.Equal(got, []string{"13"}) {
			t.Fatalf("after OR REPLACE: got %v", got)
		}
	})
}

// TestSessionViewsRefused: what a session view cannot be, and statements
// that would read a view ambiguously.
func TestSessionViewsRefused(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	views := []sqlgate.View{{Ref: sqlgate.TableRef{Schema: "s", Name: "v"}, Query: "SELECT `a` FROM `t`"}}
	for _, sql := range []string{
		"CREATE DEFINER = 'root'@'%' VIEW w AS SELECT 1",
		"CREATE SQL SECURITY DEFINER VIEW w AS SELECT 1",
		"CREATE SQL SECURITY INVOKER VIEW w AS SELECT 1",
		"CREATE ALGORITHM = MERGE VIEW w AS SELECT 1",
		"CREATE VIEW w AS SELECT a FROM t WITH CHECK OPTION",
		"CREATE VIEW w AS SELECT a FROM t WITH LOCAL CHECK OPTION;",
		"CREATE VIEW w (a, a) AS SELECT 1, 2",
		"CREATE VIEW w AS SELECT load_file('/etc/passwd')",
		"CREATE VIEW w AS SELECT * FROM later",        // no such view yet: read as a table, fine; but …
		"CREATE VIEW `__lg_x` AS SELECT 1",            // reserved names stay reserved
		"WITH v AS (SELECT 1 AS a) SELECT * FROM s.v", // a WITH query hiding the view read by its qualified name
		"WITH v AS (SELECT 1 AS a) SELECT * FROM v, s.v AS w",
		"DROP VIEW v, w",
	} {
		st, err := g.ParseWith(sql, "s", views)
		if sql == "CREATE VIEW w AS SELECT * FROM later" {
			if err != nil {
				t.Errorf("%s: %v", sql, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s accepted: kind %s", sql, st.Kind())
			continue
		}
		var ge *sqlgate.Error
		if !errors.As(err, &ge) {
			t.Errorf("%s: %v is not a *sqlgate.Error", sql, err)
		}
	}
	// A view's query is checked like any query: the gate's function list,
	// limits and names apply.
	if _, err := g.ParseWith("CREATE VIEW w AS SELECT sleep(10)", "s", nil); err == nil {
		t.Error("a view calling a refused function was accepted")
	}
}

// FuzzSessionViews: whatever the statement, in a session with views, the
// gate either refuses it with an *Error or accepts it reading only tables
// (never a view's name while the view exists) and renders text that passes
// the lexical check.
func FuzzSessionViews(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM v", "SELECT * FROM s.v, w", "WITH v AS (SELECT 1) SELECT * FROM v",
		"SELECT (SELECT max(a) FROM v) FROM t", "INSERT INTO t SELECT * FROM w", "CREATE TABLE x AS SELECT * FROM v",
		"EXPLAIN SELECT * FROM w", "CREATE VIEW x AS SELECT * FROM w", "DROP VIEW IF EXISTS v", "SELECT * FROM v UNION SELECT * FROM w",
	} {
		f.Add(s)
	}
	g := sqlgate.New(sqlgate.Config{MaxSQLBytes: 64 << 10})
	views := []sqlgate.View{
		{Ref: sqlgate.TableRef{Schema: "s", Name: "v"}, Columns: []string{"a", "b"}, Query: "SELECT `a`, `b` FROM `t` WHERE `a`>1"},
		{Ref: sqlgate.TableRef{Schema: "s", Name: "w"}, Query: "SELECT `x`.`a` FROM `v` AS `x` JOIN `u` ON `x`.`b`=`u`.`b`"},
	}
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := g.ParseWith(sql, "s", views)
		if err != nil {
			if _, ok := err.(*sqlgate.Error); !ok {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		for _, r := range st.Tables() {
			if r.Schema == "s" && (r.Name == "v" || r.Name == "w") {
				t.Fatalf("%q reads the view %s as a table", sql, r)
			}
		}
		out, err := st.Render(rels(st))
		if err != nil {
			return
		}
		if err := sqlgate.CheckLexical(out); err != nil {
			t.Fatalf("%q renders %q: %v", sql, out, err)
		}
	})
}
