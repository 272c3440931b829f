package sqlgate_test

import (
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// seeds are the attack shapes of SQL_GATE.md plus representative queries.
var seeds = []string{
	// Parameters compared with columns of a filtered table (RenderPushed).
	`SELECT b FROM t WHERE b = ? AND ? <> name AND a = ? AND c LIKE ?`,
	`SELECT t.x FROM s.t t WHERE (t.id >= ?) AND x = ? OR x IS NULL`,
	`SELECT * FROM t WHERE name = 'a\' UNION SELECT * FROM secret -- '`,
	`SELECT * FROM t WHERE name = 'a\'; DROP TABLE t; --'`,
	`SELECT * FROM t WHERE name = 'a\'; COPY t TO '/tmp/x'; --'`,
	`SELECT a, b FROM t WHERE name = 'a\' UNION SELECT 0, content FROM read_text('/etc/hostname') --'`,
	`SELECT * FROM t /*! UNION SELECT * FROM secret */`,
	"SELECT a FROM t # c\nUNION SELECT b FROM secret",
	"SELECT a --x\nFROM t",
	`SELECT "secret_col" FROM t`,
	`SELECT 1 /* /* */ FROM secret */`,
	`SELECT $$a$$ FROM t`,
	`SELECT p FROM public_t p`,
	`SELECT - -a, !a = b FROM t`,
	`WITH secret AS (SELECT * FROM secret) SELECT * FROM secret`,
	`WITH RECURSIVE secret AS (SELECT * FROM secret) SELECT * FROM secret`,
	`WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a, b`,
	`SELECT * FROM (WITH s AS (SELECT 1 AS x) SELECT * FROM s) d JOIN s ON TRUE`,
	`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT * FROM c`,
	"SELECT * FROM `x.csv`",
	`SELECT o.id, sum(o.amount) FROM orders o JOIN customers c ON o.cid = c.id WHERE o.x BETWEEN 1 AND 5 GROUP BY 1 ORDER BY 2 DESC LIMIT 5, 10`,
	`SELECT a DIV 2, a <=> b, CAST(a AS DECIMAL(5,2)), a LIKE 'x\_%' ESCAPE '|' FROM t, u WHERE a IN (SELECT b FROM v) AND EXISTS (SELECT 1 FROM w)`,
	`SELECT row_number() OVER (PARTITION BY a ORDER BY b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t WINDOW w AS (ORDER BY a)`,
	`(SELECT a FROM t) UNION (SELECT b FROM u) ORDER BY 1 LIMIT ?`,
	`SELECT 1 FROM DUAL WHERE ? = 'x'`,
	"SELECT 'a\x00'", `SELECT @@version`, `SELECT 0x41`, `USE Sales`,
	// SHOW, DESCRIBE, EXPLAIN
	`SHOW DATABASES LIKE 'S%'`, `SHOW TABLES FROM hr LIKE 'e\_%'`, `DESCRIBE hr.employees`,
	`SHOW COLUMNS FROM t FROM s`, `EXPLAIN SELECT a FROM t WHERE b = 'x\' UNION SELECT * FROM secret -- '`,
	`EXPLAIN WITH secret AS (SELECT * FROM secret) SELECT * FROM secret`,
	// write statements
	`CREATE TABLE IF NOT EXISTS s.t AS WITH x AS (SELECT * FROM t) SELECT a, count(*) AS n FROM x GROUP BY a`,
	"CREATE TABLE `x``y`.`z.w` SELECT 1",
	`CREATE TABLE t AS SELECT * FROM u INTO OUTFILE '/tmp/x'`,
	`CREATE TEMPORARY TABLE t LIKE u`,
	`INSERT INTO t (a, b) VALUES (1, 'x'), (?, -2.5), ((SELECT max(a) FROM secret), NULL)`,
	`INSERT INTO t VALUES ('a\'); DROP TABLE u; --')`,
	`INSERT INTO t VALUES (load_file('/etc/passwd'), DEFAULT)`,
	`INSERT INTO t SELECT * FROM t WHERE a = ? ON DUPLICATE KEY UPDATE a = 1`,
	`INSERT INTO t WITH x AS (SELECT a FROM u) SELECT a FROM x; DROP TABLE u`,
	`DROP TABLE IF EXISTS s.t`,
	"DROP TABLE `t` /*! CASCADE */",
	// statement limits (limits.go): sizes the gate or the engine checks
	`SELECT repeat(a, b), repeat('ab', ?), repeat(a, 3), replace(a, b, c), replace(a, 'x', 'yy') FROM t`,
	`SELECT length(repeat('x', 2000000000)), lpad('x', 2000000000, 'y'), space(70000)`,
	`WITH RECURSIVE r (s, n) AS (SELECT 'x', 1 UNION ALL SELECT concat(s, s), n + 1 FROM r WHERE n < 40) SELECT length(s) FROM r`,
	`WITH c AS (SELECT repeat('x', 40000) AS s) SELECT concat(s, s) FROM c`,
}

func FuzzGate(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, "sales")
	}
	// Every query of the vendored dialect corpus (none if it is missing).
	for _, s := range corpusQueries(f) {
		f.Add(s, "sales")
	}
	g := sqlgate.New(sqlgate.Config{MaxSQLBytes: 64 << 10})
	var dc duckCheck
	f.Fuzz(func(t *testing.T, sql, schema string) {
		checkUpstreamDialects(t, g, sql, schema)
		st, err := g.Parse(sql, schema)
		if err != nil {
			if _, ok := err.(*sqlgate.Error); !ok {
				t.Fatalf("Parse error %T %v is not an *Error", err, err)
			}
			return
		}
		switch {
		case st.Kind() == sqlgate.KindCreateView, st.Kind() == sqlgate.KindDropView:
			// A session view: the Flight server keeps it; nothing is read
			// or rendered now.
			if st.Target().Name == "" || len(st.Tables()) != 0 {
				t.Fatalf("%v: target %v, tables %v", st.Kind(), st.Target(), st.Tables())
			}
			if _, err := st.Render(rels(st)); err == nil {
				t.Fatalf("%v renders", st.Kind())
			}
			return
		case st.IsWrite(), st.Kind() == sqlgate.KindDescribe:
			checkWrite(t, st)
		case st.Target() != (sqlgate.TableRef{}) || st.Columns() != nil:
			t.Fatalf("%v has a target or columns", st.Kind())
		}
		if st.IsShow() {
			checkShow(t, st)
		}
		if st.Kind() == sqlgate.KindUse || st.IsShow() {
			if _, err := st.Render(rels(st)); err == nil {
				t.Fatalf("%v renders", st.Kind())
			}
			return
		}
		rel := rels(st)
		out, err := st.Render(rel)
		if err != nil {
			return
		}
		if st.Kind() == sqlgate.KindDropTable {
			if out != "" || len(st.Tables()) != 0 || st.NumParams() != 0 {
				t.Fatalf("DROP renders %q, tables %v", out, st.Tables())
			}
			return
		}
		if out == "" {
			t.Fatalf("%v renders as empty text", st.Kind())
		}
		if w := firstWord(outsideQuotes(out)); w != "SELECT" && w != "WITH" && w != "(" {
			t.Fatalf("output is not a query: %s", out)
		}
		if err := sqlgate.CheckLexical(out); err != nil {
			t.Fatalf("output fails CheckLexical: %v\n%s", err, out)
		}
		if strings.Contains(outsideQuotes(out), ";") {
			t.Fatalf("output has ';' outside quotes: %s", out)
		}
		if again, err := st.Render(rel); err != nil || again != out {
			t.Fatalf("second Render differs: %q, %v", again, err)
		}
		if numberedParams(outsideQuotes(out)) != st.NumParams() {
			t.Fatalf("NumParams %d, output %s", st.NumParams(), out)
		}
		// Grouping text by bytes (facts.go) keeps every invariant, and
		// changes nothing where no key is offered.
		folded := foldRels(st, "a", "b", "c", "id", "name", "x")
		fout, err := st.Render(folded)
		if err == nil {
			if err := sqlgate.CheckLexical(fout); err != nil || strings.Contains(outsideQuotes(fout), ";") || numberedParams(outsideQuotes(fout)) != st.NumParams() {
				t.Fatalf("with FoldUnique: %v\n%s", err, fout)
			}
			if len(st.GroupKeys(folded)) == 0 {
				if plain, _ := st.Render(foldRels(st)); plain != fout {
					t.Fatalf("no group keys, yet FoldUnique changes the output:\n%s\n%s", plain, fout)
				}
			}
		}
		// So does every other fact: folded, ASCII, letters in one case.
		facts := foldRels(st, "a", "b", "c", "id", "name", "x")
		for ref, r := range facts {
			n := len(r.Columns)
			r.Folded, r.ASCII, r.NoUpper, r.NoLower = make([]bool, n), make([]bool, n), make([]uint32, n), make([]uint32, n)
			for i := range n {
				r.Folded[i], r.ASCII[i] = i%2 == 0, true
				r.NoUpper[i], r.NoLower[i] = 1<<26-1&^(1<<('t'-'a')), 1<<('q'-'a')
			}
			facts[ref] = r
		}
		if fout, err := st.Render(facts); err == nil {
			if err := sqlgate.CheckLexical(fout); err != nil || strings.Contains(outsideQuotes(fout), ";") || numberedParams(outsideQuotes(fout)) != st.NumParams() {
				t.Fatalf("with the facts: %v\n%s", err, fout)
			}
			if p, err := dc.check(fout); err != nil || p != "" {
				t.Fatalf("with the facts, DuckDB check: %v %s\n%s", err, p, fout)
			}
			if len(st.GroupKeys(facts)) == 0 && len(st.LikeColumns(facts)) == 0 && len(st.CompareColumns(facts)) == 0 {
				if plain, _ := st.Render(foldRels(st)); plain != fout {
					t.Fatalf("no column worth a fact, yet the facts change the output:\n%s\n%s", plain, fout)
				}
			}
		}
		// DuckDB's own parser: one statement, gate-issued relations only.
		p, err := dc.check(out)
		if err != nil {
			t.Fatalf("DuckDB check: %v", err)
		}
		if p != "" {
			t.Fatalf("output %s: %s", out, p)
		}
		// With a row filter and a mask on every table, no read escapes them.
		if len(st.Tables()) == 0 {
			return
		}
		prel := policyRels(t, g, st)
		out, err = st.Render(prel)
		if err != nil {
			return
		}
		if err := sqlgate.CheckLexical(out); err != nil {
			t.Fatalf("output with policies fails CheckLexical: %v\n%s", err, out)
		}
		if p, err := dc.checkPolicy(out); err != nil || p != "" {
			t.Fatalf("output with policies %s: %s %v", out, p, err)
		}
		// Parameters pushed behind the filters: a kind per parameter, some
		// not ParamAny, and text that still passes every check, with no
		// marker past the statement's parameters.
		pushed, kinds, err := st.RenderPushed(prel)
		if err != nil {
			t.Fatalf("RenderPushed fails where Render did not: %v", err)
		}
		if pushed == "" {
			if kinds != nil {
				t.Fatalf("kinds %v without a text", kinds)
			}
			return
		}
		if len(kinds) != st.NumParams() || !slices.ContainsFunc(kinds, func(k sqlgate.ParamKind) bool { return k != sqlgate.ParamAny }) {
			t.Fatalf("kinds %v for %d parameters", kinds, st.NumParams())
		}
		if err := sqlgate.CheckLexical(pushed); err != nil {
			t.Fatalf("pushed output fails CheckLexical: %v\n%s", err, pushed)
		}
		if numberedParams(outsideQuotes(pushed)) != st.NumParams() {
			t.Fatalf("pushed output has markers past $%d: %s", st.NumParams(), pushed)
		}
		if p, err := dc.checkPolicy(pushed); err != nil || p != "" {
			t.Fatalf("pushed output %s: %s %v", pushed, p, err)
		}
	})
}

// checkUpstreamDialects: in an upstream dialect a statement is refused with
// an *Error or is a query that renders, with and without policies, to text
// that passes the dialect's output check (Render fails otherwise).
func checkUpstreamDialects(t *testing.T, g *sqlgate.Gate, sql, schema string) {
	t.Helper()
	for _, d := range []sqlgate.Dialect{sqlgate.DialectMySQL, sqlgate.DialectSQLite} {
		st, err := g.ParseFor(sql, schema, d)
		if err != nil {
			if _, ok := err.(*sqlgate.Error); !ok {
				t.Fatalf("ParseFor(%s) error %T %v is not an *Error", d, err, err)
			}
			continue
		}
		if st.Kind() != sqlgate.KindQuery || st.NumParams() != 0 || st.Dialect() != d {
			t.Fatalf("ParseFor(%s) accepted %v with %d parameters", d, st.Kind(), st.NumParams())
		}
		for _, rel := range []map[sqlgate.TableRef]sqlgate.Relation{rels(st), policyRels(t, g, st)} {
			if _, err := st.Render(rel); err != nil {
				if _, ok := err.(*sqlgate.Error); !ok {
					t.Fatalf("Render(%s): %v", d, err)
				}
			}
		}
	}
}

// checkShow checks the invariants of an accepted SHOW kind.
func checkShow(t *testing.T, st *sqlgate.Statement) {
	t.Helper()
	if len(st.Tables()) != 0 || st.NumParams() != 0 || st.IsWrite() {
		t.Fatalf("%v reads tables %v or has parameters", st.Kind(), st.Tables())
	}
	if p, _ := st.ShowPattern(); p != strings.ToLower(p) {
		t.Fatalf("%v: pattern %q is not lower-case", st.Kind(), p)
	}
	if st.Kind() == sqlgate.KindShowTables {
		if s := st.ShowSchema(); s == "" || s != strings.ToLower(s) || strings.HasPrefix(s, "__lg") {
			t.Fatalf("SHOW TABLES: schema %q", s)
		}
	} else if st.ShowSchema() != "" {
		t.Fatalf("%v: schema %q", st.Kind(), st.ShowSchema())
	}
}

// checkWrite checks the invariants of an accepted write statement.
func checkWrite(t *testing.T, st *sqlgate.Statement) {
	t.Helper()
	tg := st.Target()
	for _, id := range []string{tg.Schema, tg.Name} {
		if id == "" || id != strings.ToLower(id) || strings.HasPrefix(id, "__lg") || strings.HasPrefix(id, "__cte") {
			t.Fatalf("%v: invalid target %q", st.Kind(), tg)
		}
		for _, c := range []byte(id) {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("%v: control character in target %q", st.Kind(), tg)
			}
		}
	}
	cols := st.Columns()
	if st.Kind() != sqlgate.KindInsert && cols != nil {
		t.Fatalf("%v has columns %q", st.Kind(), cols)
	}
	seen := make(map[string]bool)
	for _, c := range cols {
		if c == "" || c != strings.ToLower(c) || seen[c] {
			t.Fatalf("invalid column list %q", cols)
		}
		seen[c] = true
	}
}

func firstWord(s string) string {
	s = strings.TrimLeft(s, " ")
	if strings.HasPrefix(s, "(") {
		return "("
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

func FuzzCheckLexical(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if sqlgate.CheckLexical(sql) != nil {
			return
		}
		out := outsideQuotes(sql)
		if strings.ContainsAny(out, ";#\\`\x00") || strayDollar(out) {
			t.Fatalf("accepted %q", sql)
		}
	})
}

// strayDollar reports a "$" in s that is not a numbered parameter: "$", a
// digit from 1 and digits, with no identifier character or "$" on either
// side.
func strayDollar(s string) bool {
	ident := func(c byte) bool {
		return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		if i > 0 && ident(s[i-1]) || i+1 >= len(s) || s[i+1] < '1' || s[i+1] > '9' {
			return true
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j < len(s) && ident(s[j]) {
			return true
		}
		i = j - 1
	}
	return false
}
