package sqlgate_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"lakegate/authz/sqlgate"
)

// namesRelation is the storage id the name tests give hr.employees: a
// result column name must never carry it.
const namesRelation = "v_5f3a9c0d"

// namesDB holds hr.employees (as lg_rel.v_5f3a9c0d) and sales.ord.
func namesDB(t *testing.T) *sql.DB {
	return openTestDB(t, "duckdb", "",
		`CREATE SCHEMA lg_rel`,
		`CREATE TABLE lg_rel.`+namesRelation+` (id BIGINT, name VARCHAR, ssn VARCHAR, salary BIGINT, department VARCHAR)`,
		`INSERT INTO lg_rel.`+namesRelation+` VALUES (1, 'Ann', '101-11-1001', 50000, 'eng'), (2, 'Bob', '102-12-1002', 60000, 'hr')`,
		`CREATE TABLE lg_rel.v_ord (oid BIGINT, emp_id BIGINT, amount DOUBLE, discount DOUBLE, order_date DATE)`,
		`INSERT INTO lg_rel.v_ord VALUES (10, 1, 9.5, NULL, DATE '2024-03-01'), (11, 2, 20, 0.5, DATE '2025-01-02')`)
}

var (
	namesEmpCols  = []string{"id", "name", "ssn", "salary", "department"}
	namesEmpTypes = []string{"BIGINT", "VARCHAR", "VARCHAR", "BIGINT", "VARCHAR"}
)

// namesPolicy is a row filter and two expression masks on hr.employees
// whose text is easy to recognise in a name.
func namesPolicy(t *testing.T, g *sqlgate.Gate) *sqlgate.Policy {
	t.Helper()
	f, err := g.PrepareRowFilter("name <> 'zzfiltersecret' OR has_role('zzrole')", namesEmpCols, sqlgate.DialectDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	ssn, err := g.PrepareMask("concat('zzmasksecret', right({column}, 2))", "ssn", namesEmpCols, sqlgate.DialectDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	salary, err := g.PrepareMask("{column} - {column} + 777", "salary", namesEmpCols, sqlgate.DialectDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	return &sqlgate.Policy{Filter: f, Masks: []*sqlgate.Mask{nil, nil, ssn, salary, nil}, Caller: sqlgate.Caller{User: "hr@demo"}}
}

// namesRender renders query with hr.employees under pol and sales.ord
// plain, in dialect d.
func namesRender(t *testing.T, g *sqlgate.Gate, pol *sqlgate.Policy, d sqlgate.Dialect, query string) (string, error) {
	t.Helper()
	st, err := g.ParseFor(query, "hr", d)
	if err != nil {
		return "", err
	}
	rel := map[sqlgate.TableRef]sqlgate.Relation{}
	for _, r := range st.Tables() {
		switch r.String() {
		case "hr.employees":
			rel[r] = sqlgate.Relation{Schema: "lg_rel", Name: namesRelation, Columns: namesEmpCols, Types: namesEmpTypes, Policy: pol}
		case "sales.ord":
			rel[r] = sqlgate.Relation{Schema: "lg_rel", Name: "v_ord", Columns: []string{"oid", "emp_id", "amount", "discount", "order_date"},
				Types: []string{"BIGINT", "BIGINT", "DOUBLE", "DOUBLE", "DATE"}}
		default:
			t.Fatalf("unexpected table %s", r)
		}
	}
	return st.Render(rel)
}

// resultNames runs the rendered query on db and returns the names of its
// result columns, as the engine reports them.
func resultNames(t *testing.T, db *sql.DB, out string) []string {
	t.Helper()
	rows, err := db.Query(out)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// leakMarkers are texts of the policy, the storage id and the gate's
// internal names: none may appear in a result column name.
var leakMarkers = []string{"zzfiltersecret", "zzrole", "zzmasksecret", "777", namesRelation, "lg_rel", "__lg", "__cte",
	"list_transform", "TRY_CAST", "OFFSET", "has_role", "hr@demo"}

func checkNoLeak(t *testing.T, query string, names []string) {
	t.Helper()
	for _, n := range names {
		for _, m := range leakMarkers {
			if strings.Contains(n, m) {
				t.Errorf("%s: column name %.200q… carries %q", query, n, m)
				break
			}
		}
	}
}

// TestColumnNamesCarryNoPolicy: a scalar subquery over a table with a row
// filter and masks is named by the client's text, at every level of the
// statement, never by the rewritten text with the filter, the masks and
// the storage id in it.
func TestColumnNamesCarryNoPolicy(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := namesDB(t)
	pol := namesPolicy(t, g)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"SELECT (SELECT ssn FROM hr.employees WHERE id = 2)", []string{"(SELECT ssn FROM hr.employees WHERE id = 2)"}},
		{"SELECT (SELECT salary FROM employees WHERE id = 2), (SELECT count(*) FROM employees)",
			[]string{"(SELECT salary FROM employees WHERE id = 2)", "(SELECT count(*) FROM employees)"}},
		{"SELECT * FROM (SELECT (SELECT ssn FROM hr.employees WHERE id = 2)) d", []string{"(SELECT ssn FROM hr.employees WHERE id = 2)"}},
		{"WITH c AS (SELECT (SELECT max(ssn) FROM hr.employees), upper(name) FROM hr.employees) SELECT * FROM c",
			[]string{"(SELECT max(ssn) FROM hr.employees)", "upper(name)"}},
		{"SELECT c.* FROM (SELECT concat(ssn, '!') FROM hr.employees) c", []string{"concat(ssn, '!')"}},
		{"SELECT (SELECT name FROM hr.employees WHERE id = 2) UNION SELECT 'x'", []string{"(SELECT name FROM hr.employees WHERE id = 2)"}},
		{"SELECT EXISTS (SELECT 1 FROM hr.employees WHERE ssn LIKE '1%')", []string{"EXISTS (SELECT 1 FROM hr.employees WHERE ssn LIKE '1%')"}},
		{"SELECT ssn, salary, e.name FROM hr.employees e", []string{"ssn", "salary", "name"}},
		{"SELECT * FROM hr.employees", namesEmpCols},
		{"SELECT e.* FROM hr.employees e", namesEmpCols},
		{"SELECT ssn IN (SELECT ssn FROM hr.employees) FROM hr.employees", []string{"ssn IN (SELECT ssn FROM hr.employees)"}},
	} {
		for _, p := range []*sqlgate.Policy{pol, nil} {
			out, err := namesRender(t, g, p, sqlgate.DialectDuckDB, tc.query)
			if err != nil {
				t.Errorf("%s: %v", tc.query, err)
				continue
			}
			got := resultNames(t, db, out)
			checkNoLeak(t, tc.query, got)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s (policy %v): names %.300q, want %q", tc.query, p != nil, got, tc.want)
			}
		}
	}
}

// TestColumnNamesAreMySQL: an unaliased select expression is named by its
// text as the client wrote it, as MySQL names it.
func TestColumnNamesAreMySQL(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := namesDB(t)
	long := "concat(name" + strings.Repeat(", 'é'", 60) + ")"
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Aggregates and functions, with the client's case and spacing.
		{"SELECT count(*) FROM sales.ord", []string{"count(*)"}},
		{"SELECT COUNT(*), Count( * ) FROM sales.ord", []string{"COUNT(*)", "Count( * )"}},
		{"SELECT IFNULL(discount, 0), ifnull(discount,0) FROM sales.ord", []string{"IFNULL(discount, 0)", "ifnull(discount,0)"}},
		{"SELECT CONCAT(name, '!') FROM employees", []string{"CONCAT(name, '!')"}},
		{"SELECT YEAR(order_date), year(o.order_date) FROM sales.ord o", []string{"YEAR(order_date)", "year(o.order_date)"}},
		{"SELECT count(DISTINCT department), sum(salary) / 2 FROM employees", []string{"count(DISTINCT department)", "sum(salary) / 2"}},
		{"SELECT round(avg(amount), 2) FROM sales.ord", []string{"round(avg(amount), 2)"}},
		// Arithmetic as written.
		{"SELECT 1+1, 1 + 1, (1+1), 7 DIV 2, 5 % 3", []string{"1+1", "1 + 1", "(1+1)", "7 DIV 2", "5 % 3"}},
		{"SELECT amount*2, -amount, amount - discount FROM sales.ord", []string{"amount*2", "-amount", "amount - discount"}},
		// Literals: a string by its value, numbers by their text.
		{"SELECT 'abc', \"dq\", 'a' 'b', '  padded', 'it''s'", []string{"abc", "dq", "a", "padded", "it's"}},
		{"SELECT 1, 2.50, -3, (4), +5, 1e3", []string{"1", "2.50", "-3", "4", "5", "1e3"}},
		{"SELECT NULL, null, TRUE, false", []string{"NULL", "NULL", "TRUE", "FALSE"}},
		{"SELECT ''", []string{"''"}},
		// Column references by their (lower-cased) column name.
		{"SELECT o.order_date, O.AMOUNT, (oid), sales.ord.emp_id FROM sales.ord o", nil},
		{"SELECT o.order_date, O.AMOUNT, (oid) FROM sales.ord o", []string{"order_date", "amount", "oid"}},
		{"SELECT +oid FROM sales.ord", []string{"oid"}},
		// Aliases are kept (lower-cased, as every identifier).
		{"SELECT count(*) AS n, amount AS Total, 1 AS 'two words' FROM sales.ord GROUP BY amount", []string{"n", "total", "two words"}},
		// CASE, CAST, subqueries, window functions.
		{"SELECT CASE WHEN id > 1 THEN 'x' ELSE 'y' END FROM employees", []string{"CASE WHEN id > 1 THEN 'x' ELSE 'y' END"}},
		{"SELECT CAST(id AS CHAR), CAST(salary AS DECIMAL(10,2)) FROM employees", []string{"CAST(id AS CHAR)", "CAST(salary AS DECIMAL(10,2))"}},
		{"SELECT (SELECT max(amount) FROM sales.ord), (SELECT (SELECT 1))", []string{"(SELECT max(amount) FROM sales.ord)", "(SELECT (SELECT 1))"}},
		{"SELECT row_number() OVER (ORDER BY id) FROM employees", []string{"row_number() OVER (ORDER BY id)"}},
		{"SELECT DATE '2024-01-01', CURRENT_DATE = CURRENT_DATE", []string{"DATE '2024-01-01'", "CURRENT_DATE = CURRENT_DATE"}},
		// Set operations are named by their first branch.
		{"SELECT count(*) FROM sales.ord UNION ALL SELECT 1", []string{"count(*)"}},
		{"SELECT 'a' UNION SELECT 'b' UNION SELECT 'c'", []string{"a"}},
		{"(SELECT 1+1) UNION (SELECT 2+2) ORDER BY 1", []string{"1+1"}},
		// Derived tables and CTEs surface their inner names through *.
		{"SELECT * FROM (SELECT count(*) FROM sales.ord) d", []string{"count(*)"}},
		{"SELECT d.* FROM (SELECT year(order_date), amount*2 FROM sales.ord) d", []string{"year(order_date)", "amount*2"}},
		{"WITH c AS (SELECT 1+1, 'x') SELECT * FROM c", []string{"1+1", "x"}},
		{"WITH c(a, b) AS (SELECT 1+1, 'x') SELECT * FROM c", []string{"a", "b"}},
		{"SELECT *, oid + 1 FROM sales.ord LIMIT 1", []string{"oid", "emp_id", "amount", "discount", "order_date", "oid + 1"}},
		// Comments after the expression are not part of its name; the
		// markers of an executable comment neither. A name is one line.
		{"SELECT 1+1 /* two */, 2 -- x\n FROM sales.ord", []string{"1+1", "2"}},
		{"SELECT 1 /* in */ + 1", []string{"1 /* in */ + 1"}},
		{"SELECT /*!50000 1+1 */", []string{"1+1"}},
		{"SELECT 2*/*c*/3, concat(name, '*/', \"--\") # x\n FROM employees", []string{"2*/*c*/3", "concat(name, '*/', \"--\")"}},
		{"SELECT 1 +\n\t1, 'a\nb'", []string{"1 +  1", "a b"}},
		// Names are cut at 256 bytes, on a character boundary.
		{"SELECT " + long + " FROM employees", []string{cut(long, 256)}},
		// Duplicate names are allowed.
		{"SELECT 1+1, 1+1", []string{"1+1", "1+1"}},
	} {
		if tc.want == nil {
			continue
		}
		out, err := namesRender(t, g, nil, sqlgate.DialectDuckDB, tc.query)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		got := resultNames(t, db, out)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: names %q, want %q", tc.query, got, tc.want)
		}
		for _, n := range got {
			if !utf8.ValidString(n) || len(n) > 256 || strings.ContainsAny(n, "\n\r\t") {
				t.Errorf("%s: name %q is not one line of at most 256 bytes of UTF-8", tc.query, n)
			}
		}
	}
}

// TestColumnNamesParameters: a parameter marker is named "?", as MySQL
// names it in a prepared statement.
func TestColumnNamesParameters(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := namesDB(t)
	out, err := namesRender(t, g, nil, sqlgate.DialectDuckDB, "SELECT ?, ? + 1")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(out, int64(1), int64(2))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if got, _ := rows.Columns(); strings.Join(got, "|") != "?|? + 1" {
		t.Fatalf("names %q", got)
	}
}

// cut is s cut to at most n bytes at a character boundary.
func cut(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// TestColumnNamesUpstreamDialects: the names are the same when the
// statement is printed for an upstream engine.
func TestColumnNamesUpstreamDialects(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	lite := openTestDB(t, "sqlite", ":memory:",
		`CREATE TABLE "`+namesRelation+`" (id INTEGER, name TEXT, ssn TEXT, salary INTEGER, department TEXT)`,
		`INSERT INTO "`+namesRelation+`" VALUES (1, 'Ann', '101-11-1001', 50000, 'eng')`)
	pol := &sqlgate.Policy{Caller: sqlgate.Caller{User: "hr@demo"}}
	f, err := g.PrepareRowFilter("name <> 'zzfiltersecret'", namesEmpCols, sqlgate.DialectSQLite)
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.PrepareMask("upper({column})", "ssn", namesEmpCols, sqlgate.DialectSQLite)
	if err != nil {
		t.Fatal(err)
	}
	pol.Filter, pol.Masks = f, []*sqlgate.Mask{nil, nil, m, nil, nil}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"SELECT (SELECT ssn FROM hr.employees WHERE id = 1), count(*) FROM hr.employees", []string{"(SELECT ssn FROM hr.employees WHERE id = 1)", "count(*)"}},
		{"SELECT * FROM (SELECT upper(name), 'abc' FROM hr.employees) d", []string{"upper(name)", "abc"}},
	} {
		st, err := g.ParseFor(tc.query, "hr", sqlgate.DialectSQLite)
		if err != nil {
			t.Fatal(err)
		}
		rel := map[sqlgate.TableRef]sqlgate.Relation{{Schema: "hr", Name: "employees"}: {Schema: "main", Name: namesRelation,
			Columns: namesEmpCols, Types: []string{"BIGINT", "VARCHAR", "VARCHAR", "BIGINT", "VARCHAR"}, Policy: pol}}
		out, err := st.Render(rel)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		got := resultNames(t, lite, out)
		checkNoLeak(t, tc.query, got)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("sqlite %s: names %q, want %q", tc.query, got, tc.want)
		}
	}
	out, err := namesRender(t, g, nil, sqlgate.DialectMySQL, "SELECT count(*), `x` + 1, 'a`b' FROM hr.employees")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"AS `count(*)`", "AS ```x`` + 1`", "AS `a``b`"} {
		if !strings.Contains(out, want) {
			t.Errorf("mysql: %s\nhas no %s", out, want)
		}
	}
}

// TestColumnNamesRefused: a name the gate reserves for itself, and an alias
// longer than MySQL allows, are refused.
func TestColumnNamesRefused(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, q := range []string{
		"SELECT '__lg_v'",
		"SELECT '__CTE1_x'",
		"SELECT 1 AS " + strings.Repeat("a", 257),
	} {
		_, err := g.Parse(q, "hr")
		var e *sqlgate.Error
		if !errors.As(err, &e) || e.Kind != sqlgate.ErrorKindUnsupported {
			t.Errorf("%.60s: %v, want ErrUnsupported", q, err)
		}
	}
	if _, err := g.Parse("SELECT 1 AS "+strings.Repeat("é", 256), "hr"); err != nil {
		t.Errorf("an alias of 256 characters: %v", err)
	}
}

// TestColumnNamesNotForInsert: the rows of INSERT … SELECT keep the
// engine's names (the caller aligns them to the target by name when every
// name is a column): a string literal must not be named by its value.
func TestColumnNamesNotForInsert(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, q := range []string{
		"INSERT INTO t SELECT 'b', 'a'",
		"INSERT INTO t SELECT * FROM (SELECT 'b', 'a') d",
	} {
		st, err := g.Parse(q, "hr")
		if err != nil {
			t.Fatal(err)
		}
		out, err := st.Render(rels(st))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, " AS \"a\"") || strings.Contains(out, " AS \"b\"") {
			t.Errorf("%s: %s names the values", q, out)
		}
	}
	st, err := g.Parse("CREATE TABLE t2 AS SELECT 'b', count(*) FROM t", "hr")
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Render(rels(st))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `'b' AS "b"`) || !strings.Contains(out, `AS "count(*)"`) {
		t.Errorf("CREATE TABLE … AS SELECT: %s does not name its columns as MySQL", out)
	}
}
