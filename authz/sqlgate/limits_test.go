package sqlgate_test

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// lit is a string literal of n bytes.
func lit(n int) string { return "'" + strings.Repeat("x", n) + "'" }

// nest wraps leaf in n levels of open … close.
func nest(open, leaf, close string, n int) string {
	return strings.Repeat(open, n) + leaf + strings.Repeat(close, n)
}

// cteChain doubles a 1,000-byte string through n CTEs.
func cteChain(n int) string { return doubling("SELECT repeat('x', 1000) AS s", n) }

// doubling doubles the column s of first through n CTEs.
func doubling(first string, n int) string {
	var b strings.Builder
	b.WriteString("WITH c0 AS (" + first + ")")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, ", c%d AS (SELECT concat(s, s) AS s FROM c%d)", i, i-1)
	}
	fmt.Fprintf(&b, " SELECT length(s) FROM c%d", n)
	return b.String()
}

// TestLimitAttacks: every construct that let one statement take the
// engine's memory or planning time without bound is refused with ErrLimit
// (ResourceExhausted), and the message names the limit it exceeds.
func TestLimitAttacks(t *testing.T) {
	const (
		branches = "1000 UNION, EXCEPT and INTERSECT branches"
		nodes    = "3000 expression nodes"
		literals = "50000 literals and parameters"
		exprs    = "64 levels of nested expressions"
		queries  = "32 levels of nested queries"
		subqs    = "8 levels of nested subqueries"
		perRow   = "65536 bytes of computed values per row"
	)
	built := func(fn string) string { return "32768 bytes for a string " + fn + " builds" }
	cases := []struct {
		name, sql, limit string
	}{
		{"50,000 UNION branches", "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 49_999), branches},
		{"1,001 UNION branches", "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 1000), branches},
		{"nested set operations", "SELECT 1" + strings.Repeat(" UNION (SELECT 1 EXCEPT SELECT 2)", 500), branches},
		{"set operation in a CTE", "WITH c AS (SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 1000) + ") SELECT * FROM c", branches},
		{"3,001 columns", "SELECT a" + strings.Repeat(", a", 3000) + " FROM t", nodes},
		{"IN list of 3,000 columns", "SELECT 1 FROM t WHERE a IN (b" + strings.Repeat(", b", 3000) + ")", nodes},
		{"CASE of 3,000 literal branches", "SELECT CASE a" + strings.Repeat(" WHEN 1 THEN 'x'", 3000) + " END FROM t", nodes},
		{"IN list of 100,000 literals", "SELECT 1 FROM t WHERE a IN (1" + strings.Repeat(", 1", 99_999) + ")", literals},
		{"VALUES of 60,000 literals", "INSERT INTO t VALUES (1, 2)" + strings.Repeat(", (1, 2)", 29_999), literals},
		{"60,000 parameters", "INSERT INTO t VALUES (?, ?)" + strings.Repeat(", (?, ?)", 29_999), literals},
		{"33 joined tables", "SELECT 1 FROM t" + joins(32), "32 tables in one FROM clause"},
		{"33 tables joined with ON", "SELECT 1 FROM t" + strings.Repeat(" JOIN t AS u ON 1 = 1", 32), "32 tables in one FROM clause"},
		{"17 nested functions", "SELECT " + nest("abs(", "a", ")", 17) + " FROM t", exprs},
		{"65 nested additions", "SELECT a" + strings.Repeat(" + a", 65) + " FROM t", exprs},
		{"65 nested CASEs", "SELECT " + nest("CASE WHEN a = 1 THEN ", "1", " END", 65) + " FROM t", exprs},
		{"CONCAT of 62 arguments", "SELECT concat(a" + strings.Repeat(", a", 61) + ") FROM t", exprs},
		{"GREATEST of 62 arguments", "SELECT greatest(a" + strings.Repeat(", a", 61) + ") FROM t", exprs},
		{"nested CONCAT", "SELECT " + nest("concat(a, ", "a", ")", 13) + " FROM t", exprs},
		{"33 nested derived tables", "SELECT * FROM " + nest("(SELECT * FROM ", "t", ") AS d", 32), queries},
		{"9 nested scalar subqueries", "SELECT " + nest("(SELECT ", "1", ")", 9), subqs},
		{"9 nested IN subqueries", "SELECT 1 FROM t WHERE " + nest("a IN (SELECT a FROM t WHERE ", "1 = 1", ")", 9), subqs},
		{"9 nested EXISTS", "SELECT 1 FROM t WHERE " + nest("EXISTS (SELECT 1 FROM t WHERE ", "1 = 1", ")", 9), subqs},
		{"1,200 parentheses", "SELECT " + nest("(", "1", ")", 1200), "1000 levels of nesting"},
		{"string literal over 64 KiB", "SELECT " + lit(65537), "65536 bytes for a string literal"},
		{"literal in a filter", "SELECT 1 FROM t WHERE a = " + lit(65537), "65536 bytes for a string literal"},
		{"REPEAT of 2,000,000,000", "SELECT length(repeat('x', 2000000000))", built("REPEAT")},
		{"REPEAT one byte over", "SELECT repeat('ab', 16385)", built("REPEAT")},
		{"REPEAT with a huge count", "SELECT repeat('x', 9223372036854775807)", built("REPEAT")},
		{"LPAD of 2,000,000,000", "SELECT lpad('x', 2000000000, 'y')", built("LPAD")},
		{"RPAD over 8,192 characters", "SELECT rpad(a, 8193, ' ') FROM t", built("RPAD")},
		{"SPACE one byte over", "SELECT space(32769)", built("SPACE")},
		{"REPLACE of literals", "SELECT replace(" + lit(20000) + ", 'x', 'yy')", built("REPLACE")},
		{"DATE_FORMAT expanding", "SELECT date_format(a, '" + strings.Repeat("%r", 3000) + "') FROM t", built("DATE_FORMAT")},
		{"CTE chain doubling", cteChain(7), perRow},
		{"CTE chain doubling a column", doubling("SELECT a AS s FROM t", 9), perRow},
		{"CTE chain doubling a column with CONCAT_WS", strings.ReplaceAll(doubling("SELECT a AS s FROM t", 9), "concat(s, s)", "concat_ws(s, s, s)"), perRow},
		{"two REPEATs of columns per row", "SELECT repeat(a, 2), repeat(b, 2) FROM t", perRow},
		{"a built value copied per row", "WITH c AS (SELECT concat(repeat('x', 30000), a) AS s FROM t) SELECT lower(s), upper(s), reverse(s) FROM c", perRow},
		{"constants returned with every row", "SELECT " + lit(30000) + ", " + lit(30000) + ", " + lit(30000) + " FROM t", perRow},
		{"built constants returned with every row", "SELECT repeat('x', 30000), repeat('y', 30000), repeat('z', 30000) FROM t", perRow},
		{"parameters built into every row", "SELECT concat(a, ?), concat(b, ?), concat(c, ?) FROM t", perRow},
		{"600 functions evaluated per row", "SELECT " + strings.Repeat("max(CAST(a AS CHAR)), ", 599) + "max(CAST(a AS CHAR)) FROM t", perRow},
		{"INSERT of constants per row", "INSERT INTO t SELECT " + lit(30000) + ", " + lit(30000) + ", " + lit(30000) + " FROM t", perRow},
		{"EXPLAIN", "EXPLAIN SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 1000), branches},
		{"CREATE TABLE AS", "CREATE TABLE u AS SELECT repeat('x', 2000000000)", built("REPEAT")},
		{"INSERT VALUES", "INSERT INTO t VALUES (" + nest("abs(", "1", ")", 17) + ")", exprs},
	}
	g := sqlgate.New(sqlgate.Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := g.Parse(c.sql, "s")
			if err == nil {
				out, _ := st.Render(rels(st))
				t.Fatalf("accepted, renders as %.300s", out)
			}
			if !errors.Is(err, sqlgate.ErrLimit) {
				t.Fatalf("error %v, want ErrLimit", err)
			}
			if want := "sqlgate: statement exceeds the limit of " + c.limit; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("message %q, want it to start with %q", err.Error(), want)
			}
		})
	}
}

// joins is n comma-joined tables after the first.
func joins(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ", t AS u%d", i)
	}
	return b.String()
}

// TestLimitsAllow: statements at each limit, and the shapes the limits
// leave free, are accepted.
func TestLimitsAllow(t *testing.T) {
	cases := []struct{ name, sql string }{
		{"1,000 UNION branches", "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 999)},
		{"100 UNION branches of 10 functions", "SELECT lower(a), upper(a), trim(a), abs(x), round(x), md5(a), left(a, 2), right(a, 2), reverse(a), length(a) FROM t" + strings.Repeat(" UNION ALL SELECT lower(a), upper(a), trim(a), abs(x), round(x), md5(a), left(a, 2), right(a, 2), reverse(a), length(a) FROM t", 99)},
		{"16 nested functions", "SELECT " + nest("abs(", "a", ")", 16) + " FROM t"},
		{"64 nested additions", "SELECT a" + strings.Repeat(" + a", 63) + " FROM t"},
		{"CONCAT of 60 arguments", "SELECT concat(a" + strings.Repeat(", a", 59) + ") FROM t"},
		{"32 joined tables", "SELECT 1 FROM t" + joins(31)},
		{"an AND chain of 900", "SELECT 1 FROM t WHERE a = 1" + strings.Repeat(" AND a = 1", 899)},
		{"an OR chain of 900", "SELECT 1 FROM t WHERE a = 1" + strings.Repeat(" OR a = 1", 899)},
		{"31 nested derived tables", "SELECT * FROM " + nest("(SELECT * FROM ", "t", ") AS d", 31)},
		{"8 nested scalar subqueries", "SELECT " + nest("(SELECT ", "1", ")", 8)},
		{"literal of 64 KiB", "SELECT " + lit(65536)},
		{"REPEAT of 32 KiB", "SELECT repeat('ab', 16384)"},
		{"LPAD to 8,192 characters", "SELECT lpad(a, 8192, ' ') FROM t"},
		{"SPACE of 32 KiB", "SELECT space(32768)"},
		{"REPLACE that shrinks", "SELECT replace(a, 'xyz', '') FROM t"},
		{"IN list of 49,999 literals", "SELECT 1 FROM t WHERE a IN (1" + strings.Repeat(", 1", 49_998) + ")"},
		{"many parameters, one row", "SELECT ?, ?, ?, ?, ?, ?"},
		{"INSERT of parameters", "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)"},
		{"a pattern built from a parameter", "SELECT * FROM t WHERE a LIKE concat('%', ?, '%') AND lower(b) = lower(?)"},
		{"a parameter built into every row", "SELECT concat(a, ' ', ?) FROM t"},
		{"a REPEAT of a column and 200 functions per row", "SELECT repeat(a, 2), " + strings.Repeat("lower(b), ", 199) + "lower(b) FROM t"},
		{"constants without FROM", "SELECT " + lit(60000) + ", " + lit(60000) + ", " + lit(60000)},
		{"a built value returned many times", "SELECT * FROM (SELECT repeat('x', 30000) AS s) AS d, t AS u, t AS v"},
		{"recursive CTE building paths", "WITH RECURSIVE r (id, path) AS (SELECT id, CAST(name AS CHAR) FROM t WHERE a IS NULL UNION ALL SELECT t.id, concat(r.path, '/', t.name) FROM t JOIN r ON t.a = r.id) SELECT id, path FROM r ORDER BY path"},
		{"recursive CTE copying strings", "WITH RECURSIVE r (n, s, u, v) AS (SELECT 1, 'a', 'b', 'c' UNION ALL SELECT n + 1, s, u, v FROM r WHERE n < 5) SELECT lower(s), lower(u), lower(v) FROM r"},
		{"a column doubled 7 times (checked by the engine)", doubling("SELECT a AS s FROM t", 7)},
		{"CONCAT_WS of 200 columns", "SELECT concat_ws(',', a" + strings.Repeat(", a", 199) + ") FROM t"},
		{"200 functions evaluated per row", "SELECT " + strings.Repeat("max(CAST(a AS CHAR)), ", 199) + "max(CAST(a AS CHAR)) FROM t"},
	}
	g := sqlgate.New(sqlgate.Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := g.Parse(c.sql, "s")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Render(rels(st)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLimitsUpstream: statements for upstream engines are held to the
// same limits, and what the DuckDB engine would check at run time is
// printed as is.
func TestLimitsUpstream(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, d := range []sqlgate.Dialect{sqlgate.DialectMySQL, sqlgate.DialectSQLite} {
		_, err := g.ParseFor("SELECT 1"+strings.Repeat(" UNION ALL SELECT 1", 1000), "s", d)
		if !errors.Is(err, sqlgate.ErrLimit) {
			t.Errorf("%v: 1,001 branches: %v", d, err)
		}
		st, err := g.ParseFor("SELECT concat(a, "+lit(20000)+", "+lit(20000)+") FROM t", "s", d)
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		out, err := st.Render(rels(st))
		if err != nil || strings.Contains(out, "error(") {
			t.Fatalf("%v: %s, %v", d, out, err)
		}
	}
}

// TestLimitsConfig: Config.Limits replaces the defaults it sets.
func TestLimitsConfig(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{Limits: sqlgate.Limits{SetOperands: 3, StringBytes: 100, LiteralBytes: 100}})
	if _, err := g.Parse("SELECT 1 UNION SELECT 2 UNION SELECT 3", ""); err != nil {
		t.Fatal(err)
	}
	_, err := g.Parse("SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4", "")
	if !errors.Is(err, sqlgate.ErrLimit) || !strings.Contains(err.Error(), "limit of 3 UNION") {
		t.Fatalf("4 branches: %v", err)
	}
	if _, err := g.Parse("SELECT "+lit(101), ""); !errors.Is(err, sqlgate.ErrLimit) {
		t.Fatalf("literal of 101 bytes: %v", err)
	}
	st, err := g.Parse("SELECT repeat(a, 3) FROM t", "s")
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Render(rels(st))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "> 33)") || !strings.Contains(out, "limit of 100 bytes") {
		t.Fatalf("the engine checks another limit: %s", out)
	}
	if d := sqlgate.DefaultLimits(); d.SetOperands != sqlgate.DefaultSetOperands || d.StringBytes != sqlgate.DefaultStringBytes {
		t.Fatalf("DefaultLimits = %+v", d)
	}
}

// TestEngineLimit: the engine's message for a limit the gate printed is
// recognised, and no other.
func TestEngineLimit(t *testing.T) {
	msg := "Invalid Input Error: sqlgate: statement exceeds the limit of 32768 bytes for a string REPEAT builds"
	e, ok := sqlgate.EngineLimit(msg)
	if !ok || !errors.Is(e, sqlgate.ErrLimit) || e.Error() != "sqlgate: statement exceeds the limit of 32768 bytes for a string REPEAT builds" {
		t.Fatalf("EngineLimit(%q) = %v, %v", msg, e, ok)
	}
	for _, m := range []string{
		"Conversion Error: Could not convert string 'sqlgate: statement exceeds the limit of 1' to INT32",
		"sqlgate: statement exceeds the limit of 1",
		"Invalid Input Error: Malformed JSON",
		"Out of Memory Error: failed to allocate",
	} {
		if _, ok := sqlgate.EngineLimit(m); ok {
			t.Errorf("EngineLimit(%q) recognised", m)
		}
	}
	if e := sqlgate.ParamLimit(2, 65536); !errors.Is(e, sqlgate.ErrLimit) || !strings.Contains(e.Error(), "limit of 65536 bytes for a string (parameter 2)") {
		t.Fatalf("ParamLimit = %v", e)
	}
}

// engineDB is an in-memory DuckDB holding lg_rel.t_0 (v, w VARCHAR; n
// BIGINT) with rows that exercise the checked functions, and lg_rel.t_1
// (v) with a value of 1,000 bytes.
func engineDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE SCHEMA lg_rel",
		`CREATE TABLE lg_rel.t_0 AS SELECT * FROM (VALUES
			(1, 'ab', 'a', 3), (2, '', 'b', 5), (3, NULL, 'a', 2), (4, 'x', NULL, NULL),
			(5, 'éa', 'é', 4), (6, 'ab', '', 0), (7, 'ab', 'xyz', -1), (8, 'aaaa', 'aa', 1)) AS v(id, v, w, n)`,
		"CREATE TABLE lg_rel.t_1 AS SELECT 1 AS id, repeat('x', 1000) AS v, '' AS w, 1 AS n",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// runRendered renders sql (reading s.t as lg_rel.t_0, s.big as
// lg_rel.t_1) and returns its rows as strings, sorted, from DuckDB.
func runRendered(t *testing.T, db *sql.DB, g *sqlgate.Gate, query string) ([]string, error) {
	t.Helper()
	st, err := g.Parse(query, "s")
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	m := map[sqlgate.TableRef]sqlgate.Relation{}
	for _, r := range st.Tables() {
		name := "t_0"
		if r.Name == "big" {
			name = "t_1"
		}
		m[r] = sqlgate.Relation{Schema: "lg_rel", Name: name, Columns: []string{"id", "v", "w", "n"}}
	}
	out, err := st.Render(m)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return runSQL(db, out)
}

func runSQL(db *sql.DB, q string) ([]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		if v.Valid {
			out = append(out, v.String)
		} else {
			out = append(out, "NULL")
		}
	}
	slices.Sort(out)
	return out, rows.Err()
}

// TestEngineChecksKeepAnswers: the size checks the gate prints change no
// answer under the limit — NULLs, empty strings, zero and negative counts,
// multi-byte characters included — and over it the engine fails with the
// gate's message (EngineLimit), before building the string.
func TestEngineChecksKeepAnswers(t *testing.T) {
	db := engineDB(t)
	g := sqlgate.New(sqlgate.Config{})
	same := []struct{ gate, plain string }{
		{"SELECT repeat(v, n) FROM t", "SELECT repeat(v, n) FROM lg_rel.t_0"},
		{"SELECT repeat(v, 3) FROM t", "SELECT repeat(v, 3) FROM lg_rel.t_0"},
		{"SELECT repeat('ab', n) FROM t", "SELECT repeat('ab', n) FROM lg_rel.t_0"},
		{"SELECT repeat(v, 1) FROM t", "SELECT v FROM lg_rel.t_0"},
		{"SELECT repeat(concat(v, v), n) FROM t", "SELECT repeat(v || v, n) FROM lg_rel.t_0"},
		{"SELECT replace(v, 'a', 'xyz') FROM t", "SELECT replace(v, 'a', 'xyz') FROM lg_rel.t_0"},
		{"SELECT replace(v, w, 'long!') FROM t", "SELECT replace(v, w, 'long!') FROM lg_rel.t_0"},
		{"SELECT replace(v, 'a', w) FROM t", "SELECT replace(v, 'a', w) FROM lg_rel.t_0"},
		{"SELECT replace('banana', 'a', w) FROM t", "SELECT replace('banana', 'a', w) FROM lg_rel.t_0"},
		{doubling("SELECT v AS s FROM t", 7), "SELECT strlen(v) * 128 FROM lg_rel.t_0"},
	}
	for _, c := range same {
		got, err := runRendered(t, db, g, c.gate)
		if err != nil {
			t.Fatalf("%s: %v", c.gate, err)
		}
		want, err := runSQL(db, c.plain)
		if err != nil {
			t.Fatalf("%s: %v", c.plain, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", c.gate, got, want)
		}
	}
	over := []struct{ sql, fn string }{
		{"SELECT length(repeat(v, n * 20000)) FROM t", "REPEAT"},
		{"SELECT length(repeat('ab', n * 20000)) FROM t", "REPEAT"},
		{"SELECT length(repeat(repeat('x', 1000), 1000))", "REPEAT"},
		{"SELECT length(repeat(concat(v, v), 10000)) FROM t", "REPEAT"},
		{"SELECT length(replace(repeat('a', 20000), 'a', 'bb'))", "REPLACE"},
		{"SELECT length(replace(concat(v, repeat('a', 20000)), 'a', 'bbb')) FROM t", "REPLACE"},
		{"SELECT length(replace(concat(v, repeat('a', 1000)), w, repeat('c', 100))) FROM t", "REPLACE"},
		{"WITH c AS (SELECT repeat('x', 30000) AS s) SELECT length(concat(s, s)) FROM c", "CONCAT"},
		{"SELECT length(concat(d.s, d.s)) FROM (SELECT repeat('x', 30000) AS s) AS d", "CONCAT"},
		{"SELECT length(concat(s, s)) FROM (SELECT * FROM (SELECT repeat('x', 30000) AS s) AS e) AS d", "CONCAT"},
		{"WITH c (s) AS (SELECT repeat('x', 30000)) SELECT length(concat(s, s)) FROM c", "CONCAT"},
		{"WITH c AS (SELECT repeat('x', 30000) AS s) SELECT (SELECT length(concat(s, s)) FROM c)", "CONCAT"},
		{"SELECT length(concat(" + lit(20000) + ", " + lit(20000) + "))", "CONCAT"},
		{"SELECT length(concat_ws(" + lit(20000) + ", v, v, v)) FROM t", "CONCAT_WS"},
		{"WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT concat(s, s), k + 1 FROM r WHERE k < 40) SELECT max(length(s)) FROM r", "CONCAT"},
		{"WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT concat_ws(s, s, s), k + 1 FROM r WHERE k < 40) SELECT max(length(s)) FROM r", "CONCAT_WS"},
		{"WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT repeat(s, 2), k + 1 FROM r WHERE k < 40) SELECT max(length(s)) FROM r", "REPEAT"},
		{strings.Replace(doubling("SELECT v AS s FROM big", 7), "SELECT length(s)", "SELECT max(length(s))", 1), "CONCAT"},
	}
	for _, c := range over {
		_, err := runRendered(t, db, g, c.sql)
		if err == nil {
			t.Errorf("%s: no error", c.sql)
			continue
		}
		msg := err.Error()
		if i := strings.Index(msg, "Invalid Input Error: "); i > 0 {
			msg = msg[i:] // the driver may prefix its own words
		}
		le, ok := sqlgate.EngineLimit(msg)
		if !ok || !strings.Contains(le.Error(), "32768 bytes for a string "+c.fn+" builds") {
			t.Errorf("%s: %v, want the engine's %s limit", c.sql, err, c.fn)
		}
	}
	// Under the limit, a recursive CTE builds its strings as before.
	got, err := runRendered(t, db, g, "WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT concat(s, '-', s), k + 1 FROM r WHERE k < 5) SELECT s FROM r WHERE k = 4")
	if err != nil || len(got) != 1 || got[0] != "x-x-x-x-x-x-x-x" {
		t.Fatalf("recursive concat = %q, %v", got, err)
	}
}
