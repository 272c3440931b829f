package sqlgate_test

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"lakegate/authz/sqlgate"
)

// cols gives the columns tests pretend each table (by name) has.
var cols = map[string][]string{
	"public_t": {"a", "b"},
	"t":        {"a", "b", "c", "id", "name"},
}

// rels maps every table of st to lg_rel.t_<i>, in Tables() order.
func rels(st *sqlgate.Statement) map[sqlgate.TableRef]sqlgate.Relation {
	m := make(map[sqlgate.TableRef]sqlgate.Relation)
	for i, r := range st.Tables() {
		c, ok := cols[r.Name]
		if !ok {
			c = []string{"a", "b", "c", "id", "name", "x"}
		}
		m[r] = sqlgate.Relation{Schema: "lg_rel", Name: fmt.Sprintf("t_%d", i), Columns: c}
	}
	return m
}

func tableStrings(st *sqlgate.Statement) []string {
	var out []string
	for _, r := range st.Tables() {
		out = append(out, r.String())
	}
	return out
}

// numberedParams returns n when sql (outside quotes) holds the numbered
// parameters $1 … $n, each at least once, and no other "$"; otherwise -1.
func numberedParams(sql string) int {
	seen := map[int]bool{}
	for _, m := range regexp.MustCompile(`\$[0-9]*`).FindAllString(sql, -1) {
		k, err := strconv.Atoi(m[1:])
		if err != nil || k < 1 {
			return -1
		}
		seen[k] = true
	}
	for k := 1; k <= len(seen); k++ {
		if !seen[k] {
			return -1
		}
	}
	return len(seen)
}

// outsideQuotes returns sql with quoted tokens blanked (DuckDB rules).
func outsideQuotes(sql string) string {
	var b strings.Builder
	var q byte
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case q == 0 && (c == '\'' || c == '"'):
			q = c
			b.WriteByte(' ')
		case q != 0 && c == q:
			if i+1 < len(sql) && sql[i+1] == q {
				i++
			} else {
				q = 0
			}
			b.WriteByte(' ')
		case q != 0:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func parseRender(t *testing.T, sql string) (*sqlgate.Statement, string, error) {
	t.Helper()
	st, err := sqlgate.New(sqlgate.Config{}).Parse(sql, "sales")
	if err != nil {
		return nil, "", err
	}
	out, err := st.Render(rels(st))
	if err == nil {
		if lerr := sqlgate.CheckLexical(out); lerr != nil {
			t.Fatalf("Render output fails CheckLexical: %v\n%s", lerr, out)
		}
	}
	return st, out, err
}

// TestAttacks covers every class of SQL_GATE.md §1 and §2: each must either be
// refused or read as TiDB reads it, and print as text DuckDB reads the same way.
func TestAttacks(t *testing.T) {
	tests := []struct {
		name   string
		sql    string
		tables []string // nil: must be refused at Parse
		// contains must appear in the rendered SQL; absent must not appear
		// outside quoted tokens.
		contains string
		absent   []string
		refused  bool // refused at Render
	}{
		{name: "backslash escape hides UNION",
			sql:      `SELECT * FROM t WHERE name = 'a\' UNION SELECT * FROM secret -- '`,
			tables:   []string{"sales.t"},
			contains: `("name" = 'a'' UNION SELECT * FROM secret -- ')`,
			absent:   []string{"UNION", "secret", "--"}},
		{name: "stacked DROP behind escape",
			sql:      `SELECT * FROM t WHERE name = 'a\'; DROP TABLE t; --'`,
			tables:   []string{"sales.t"},
			contains: `'a''; DROP TABLE t; --'`,
			absent:   []string{";", "DROP", "--"}},
		{name: "stacked COPY behind escape",
			sql:      `SELECT * FROM t WHERE name = 'a\'; COPY t TO \'/tmp/x\'; --'`,
			tables:   []string{"sales.t"},
			contains: `'a''; COPY t TO ''/tmp/x''; --'`,
			absent:   []string{";", "COPY", "--"}},
		{name: "table function behind escape",
			sql:    `SELECT a, b FROM t WHERE name = 'a\' UNION SELECT 0, content FROM read_text('/etc/hostname') --'`,
			tables: nil},
		{name: "table function behind escape, closed",
			sql:      `SELECT a, b FROM t WHERE name = 'a\' UNION SELECT 0, content FROM read_text(\'/etc/hostname\') --'`,
			tables:   []string{"sales.t"},
			contains: `read_text(''/etc/hostname'') --'`,
			absent:   []string{"read_text", "--"}},
		{name: "table function", sql: `SELECT * FROM read_text('/etc/hostname')`},
		{name: "file function", sql: `SELECT load_file('/etc/passwd')`},
		{name: "executable comment is code to TiDB, so it is gated",
			sql:    `SELECT * FROM t /*! UNION SELECT * FROM secret */`,
			tables: []string{"sales.secret", "sales.t"},
			absent: []string{"/*", "*/"}},
		{name: "executable comment with a second statement", sql: `SELECT 1 /*! ; DROP TABLE t */`},
		{name: "hash comment",
			sql:    "SELECT a FROM t # comment\nUNION SELECT b FROM secret",
			tables: []string{"sales.secret", "sales.t"},
			absent: []string{"#", "comment"}},
		{name: "hash hides the rest", sql: "SELECT # FROM secret\n a FROM t", tables: []string{"sales.t"}, absent: []string{"#", "secret"}},
		{name: "double dash without space is minus minus",
			sql:      "SELECT a --x\nFROM t",
			tables:   []string{"sales.t"},
			contains: `((+("a")) - (-("x")))`,
			absent:   []string{"--"}},
		{name: "double-quoted string is a string, not a (masked) column",
			sql:      `SELECT "secret_col" FROM t`,
			tables:   []string{"sales.t"},
			contains: `SELECT 'secret_col' AS "secret_col" FROM`},
		{name: "double-quoted string with quotes",
			sql:      `SELECT "it's ""x""" FROM t`,
			tables:   []string{"sales.t"},
			contains: `'it''s "x"'`},
		{name: "nested comment", sql: `SELECT 1 /* /* */ FROM secret */`},
		{name: "nested comment closed", sql: `SELECT a /* /* */ FROM t /* */ */`},
		{name: "dollar quoting is an identifier to MySQL",
			sql:    `SELECT $$a$$ FROM t`,
			tables: []string{"sales.t"},
			absent: []string{"$"}},
		{name: "dollar string", sql: `SELECT $$ ; DROP TABLE t; $$`},
		{name: "alias used as a column returns the whole row",
			sql: `SELECT p FROM public_t p`, tables: []string{"sales.public_t"}, refused: true},
		{name: "table name used as a column",
			sql: `SELECT public_t FROM public_t`, tables: []string{"sales.public_t"}, refused: true},
		{name: "alias used as a column from a subquery",
			sql: `SELECT (SELECT p FROM t) FROM public_t p`, tables: []string{"sales.public_t", "sales.t"}, refused: true},
		{name: "alias used as a column in WHERE",
			sql: `SELECT a FROM public_t p WHERE p IS NOT NULL`, tables: []string{"sales.public_t"}, refused: true},
		{name: "alias used as a column by a later derived table (DuckDB joins it laterally)",
			sql: `SELECT * FROM public_t p, (SELECT p FROM t) AS d`, tables: []string{"sales.public_t", "sales.t"}, refused: true},
		{name: "a derived table's column named like a table inside it is its column",
			sql: `SELECT nation FROM (SELECT a AS nation FROM nation) AS profit GROUP BY nation`, tables: []string{"sales.nation"},
			contains: `SELECT "nation" FROM (SELECT "a" AS "nation" FROM "lg_rel"."t_0" AS "nation") AS "profit" GROUP BY "nation"`},
		{name: "a CTE's column named like a table inside it is its column",
			sql: `WITH x AS (SELECT a AS nation FROM nation) SELECT nation FROM x`, tables: []string{"sales.nation"}},
		{name: "alias that is also a real column is fine",
			sql: `SELECT a FROM t a`, tables: []string{"sales.t"}, contains: `SELECT "a" FROM "lg_rel"."t_0" AS "a"`},
		{name: "qualified column of alias is fine",
			sql: `SELECT p.a FROM public_t p`, tables: []string{"sales.public_t"}, contains: `SELECT "p"."a" FROM`},
		{name: "minus minus", sql: `SELECT - -a FROM t`, tables: []string{"sales.t"}, contains: `(-((-("a"))))`, absent: []string{"--"}},
		{name: "minus negative literal", sql: `SELECT 1 - -1`, tables: []string{}, contains: `(1 - (-(1)))`, absent: []string{"--"}},
		{name: "bang is NOT with MySQL precedence",
			sql: `SELECT !a = b FROM t`, tables: []string{"sales.t"}, contains: `((NOT ("a")) = "b")`},
		{name: "AND binds tighter than OR",
			sql: `SELECT a FROM t WHERE a OR b AND c`, tables: []string{"sales.t"}, contains: `WHERE ("a" OR ("b" AND "c"))`},
		{name: "NUL byte", sql: "SELECT 'a\x00b'"},
		{name: "NUL escape", sql: `SELECT 'a\0b'`},
		{name: "backslash kept as data",
			sql: `SELECT 'x\\y', 'a\nb' FROM t`, tables: []string{"sales.t"}, contains: "'x\\y' AS \"x\\y\",'a\nb' AS \"a b\""},
		{name: "semicolon in a string", sql: `SELECT ';' FROM t`, tables: []string{"sales.t"}, contains: `';'`, absent: []string{";"}},
		{name: "stacked statements", sql: `SELECT 1; DROP TABLE t`},
		{name: "stacked selects", sql: `SELECT 1; SELECT 2`},
		{name: "E string prefix is a column and an alias to MySQL",
			sql: `SELECT E'\\x41' FROM t`, tables: []string{"sales.t"}, contains: `SELECT "e" AS "\x41" FROM`},
		{name: "backticked file name is just a table",
			sql: "SELECT * FROM `x.csv`", tables: []string{"sales.x.csv"}, contains: `FROM "lg_rel"."t_0" AS "x.csv"`, absent: []string{"x.csv"}},
		{name: "backticked path is just a table",
			sql: "SELECT * FROM `/etc/passwd`", tables: []string{"sales./etc/passwd"}, absent: []string{"passwd"}},
		{name: "identifier with a double quote",
			sql: "SELECT `a\"b` FROM t", tables: []string{"sales.t"}, contains: `"a""b"`},
		{name: "newline in identifier", sql: "SELECT `a\nb` FROM t"},
		{name: "reserved CTE prefix", sql: "SELECT * FROM __cte1_x"},
		{name: "reserved lg prefix", sql: "SELECT a AS __lg FROM t"},
		{name: "user variable", sql: `SELECT @x`},
		{name: "system variable", sql: `SELECT @@datadir`},
		{name: "hex literal", sql: `SELECT x'41'`},
		{name: "0x literal", sql: `SELECT 0x41`},
		{name: "bit literal", sql: `SELECT b'1'`},
		{name: "charset introducer", sql: `SELECT _latin1'a'`},
		{name: "binary introducer", sql: `SELECT _binary'a'`},
		{name: "utf8mb4 introducer is fine", sql: `SELECT _utf8mb4'a'`, tables: []string{}, contains: `SELECT 'a'`},
		{name: "INTO OUTFILE", sql: `SELECT * FROM t INTO OUTFILE '/tmp/x'`},
		{name: "INTO DUMPFILE", sql: `SELECT * FROM t INTO DUMPFILE '/tmp/x'`},
		{name: "INTO variable", sql: `SELECT a INTO @x FROM t`},
		{name: "sequence", sql: `SELECT NEXTVAL(s)`},
		{name: "sequence syntax", sql: `SELECT NEXT VALUE FOR s`},
		{name: "setval", sql: `SELECT SETVAL(s, 10)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, out, err := parseRender(t, tt.sql)
			if tt.tables == nil {
				if st != nil {
					t.Fatalf("Parse accepted %q: tables %v", tt.sql, tableStrings(st))
				}
				var ge *sqlgate.Error
				if !errors.As(err, &ge) || !strings.HasPrefix(ge.Msg, "sqlgate: ") {
					t.Fatalf("error %v is not a user-facing *sqlgate.Error", err)
				}
				return
			}
			if st == nil {
				t.Fatalf("Parse refused: %v", err)
			}
			if got := strings.Join(tableStrings(st), ","); got != strings.Join(tt.tables, ",") {
				t.Fatalf("Tables() = %v, want %v", got, tt.tables)
			}
			if tt.refused {
				if err == nil || !errors.Is(err, sqlgate.ErrUnsupported) {
					t.Fatalf("Render = %q, %v; want ErrUnsupported", out, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if !strings.Contains(out, tt.contains) {
				t.Errorf("output %s\ndoes not contain %s", out, tt.contains)
			}
			for _, a := range tt.absent {
				if strings.Contains(outsideQuotes(out), a) {
					t.Errorf("output %s\nhas %q outside quotes", out, a)
				}
			}
			// The same trap with a filter and a mask on every table.
			pout, err := st.Render(policyRels(t, sqlgate.New(sqlgate.Config{}), st))
			if err != nil {
				t.Fatalf("Render with policies: %v", err)
			}
			if !strings.Contains(tt.contains, `"lg_rel"`) && !strings.Contains(pout, tt.contains) {
				t.Errorf("output with policies %s\ndoes not contain %s", pout, tt.contains)
			}
			if strings.Count(pout, `AS "__lg_p" WHERE (`) != strings.Count(out, `"lg_rel".`) {
				t.Errorf("output with policies %s\ndoes not filter every table of %s", pout, out)
			}
			for _, a := range tt.absent {
				if strings.Contains(outsideQuotes(pout), a) {
					t.Errorf("output with policies %s\nhas %q outside quotes", pout, a)
				}
			}
		})
	}
}

// TestTables covers extraction (SQL_GATE.md §3), including the CTE traps.
func TestTables(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		want []string
	}{
		{"CTE named like the table it reads", `WITH secret AS (SELECT * FROM secret) SELECT * FROM secret`, []string{"sales.secret"}},
		{"forward reference to a later CTE is a real table",
			`WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a, b`, []string{"sales.b"}},
		{"CTE local to a derived table",
			`SELECT * FROM (WITH s AS (SELECT 1 AS x) SELECT * FROM s) d JOIN s ON TRUE`, []string{"sales.s"}},
		{"CTE local to a scalar subquery",
			`SELECT (WITH s AS (SELECT 1) SELECT * FROM s), (SELECT a FROM s)`, []string{"sales.s"}},
		{"inner WITH shadows outer",
			`WITH s AS (SELECT * FROM t) SELECT * FROM (WITH s AS (SELECT * FROM secret) SELECT * FROM s) x, s`, []string{"sales.secret", "sales.t"}},
		{"outer CTE visible in a subquery",
			`WITH s AS (SELECT * FROM t) SELECT * FROM u WHERE a IN (SELECT a FROM s)`, []string{"sales.t", "sales.u"}},
		{"qualified name is never a CTE", `WITH secret AS (SELECT 1) SELECT * FROM sales.secret JOIN secret AS c ON TRUE`, []string{"sales.secret"}},
		{"recursive CTE", `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT * FROM c`, []string{}},
		{"recursive WITH, non-recursive CTE reading a real table", `WITH RECURSIVE c AS (SELECT * FROM t) SELECT * FROM c`, []string{"sales.t"}},
		{"CTE sees earlier CTE", `WITH a AS (SELECT 1 AS x), b AS (SELECT * FROM a) SELECT * FROM b`, []string{}},
		{"set operation WITH", `WITH s AS (SELECT a FROM t) SELECT a FROM s UNION SELECT a FROM s2`, []string{"sales.s2", "sales.t"}},
		{"every subquery kind",
			`SELECT (SELECT max(a) FROM s1) FROM t WHERE a IN (SELECT a FROM s2) AND EXISTS (SELECT 1 FROM s3)
			 AND a > ANY (SELECT a FROM s4) AND a = ALL (SELECT a FROM s5) GROUP BY a HAVING count(*) > (SELECT count(*) FROM s6)
			 ORDER BY (SELECT min(a) FROM s7)`,
			[]string{"sales.s1", "sales.s2", "sales.s3", "sales.s4", "sales.s5", "sales.s6", "sales.t", "sales.s7"}},
		{"joins and derived tables",
			`SELECT * FROM a LEFT JOIN (SELECT * FROM b) x ON TRUE RIGHT JOIN other.c ON TRUE, (d JOIN e USING (id))`,
			[]string{"other.c", "sales.a", "sales.b", "sales.d", "sales.e"}},
		{"lateral", `SELECT * FROM t, LATERAL (SELECT * FROM u WHERE u.a = t.a) x`, []string{"sales.t", "sales.u"}},
		{"union branches", `SELECT a FROM t UNION ALL (SELECT a FROM u EXCEPT SELECT a FROM v) INTERSECT SELECT a FROM w`,
			[]string{"sales.t", "sales.u", "sales.v", "sales.w"}},
		{"case", `SELECT A FROM Sales.T JOIN OTHER.U ON TRUE`, []string{"other.u", "sales.t"}},
		{"duplicates", `SELECT * FROM t x JOIN t y ON TRUE JOIN sales.t z ON TRUE`, []string{"sales.t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _, err := parseRender(t, tt.sql)
			if st == nil {
				t.Fatalf("Parse: %v", err)
			}
			got := tableStrings(st)
			want := append([]string(nil), tt.want...)
			if strings.Join(sorted(got), ",") != strings.Join(sorted(want), ",") {
				t.Fatalf("Tables() = %v, want %v", got, want)
			}
			if err != nil && !errors.Is(err, sqlgate.ErrUnsupported) {
				t.Fatalf("Render: %v", err)
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestRender pins the printed form of representative queries.
func TestRender(t *testing.T) {
	tests := []struct{ sql, want string }{
		{`SELECT 1`, `SELECT 1 AS "1"`},
		{`SELECT * FROM t`, `SELECT * FROM "lg_rel"."t_0" AS "t"`},
		{`SELECT T.A, Sales.T.B, sales.t.* FROM T`, `SELECT "t"."a","t"."b","t".* FROM "lg_rel"."t_0" AS "t"`},
		{`SELECT o.id, c.name, sum(o.amount) AS Total FROM orders o JOIN customers c ON o.cid = c.id WHERE o.x > 5 AND NOT c.y GROUP BY o.id, c.name HAVING count(*) > 1 ORDER BY 3 DESC LIMIT 5, 10`,
			`SELECT "o"."id","c"."name",sum("o"."amount") AS "total" FROM "lg_rel"."t_1" AS "o" JOIN "lg_rel"."t_0" AS "c" ON ("o"."cid" = "c"."id") WHERE (("o"."x" > 5) AND (NOT ("c"."y"))) GROUP BY "o"."id","c"."name" HAVING (count(1) > 1) ORDER BY 3 DESC LIMIT 10 OFFSET 5`},
		{`WITH secret AS (SELECT * FROM secret) SELECT * FROM secret`,
			`WITH "__cte1_secret" AS (SELECT * FROM "lg_rel"."t_0" AS "secret") SELECT * FROM "__cte1_secret" AS "secret"`},
		{`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 5) SELECT c.n FROM c`,
			`WITH RECURSIVE "__cte1_c" ("n") AS (SELECT 1 AS "1" UNION ALL SELECT ((+("n")) + 1) AS "n+1" FROM "__cte1_c" AS "c" WHERE ("n" < 5)) SELECT "c"."n" FROM "__cte1_c" AS "c"`},
		{`SELECT a DIV 2, a / b, a % 3, a <=> b, CAST(a AS SIGNED), CONVERT(a, CHAR), CAST(a AS DECIMAL), CAST(a AS DATETIME) FROM t, u`,
			`SELECT (list_transform([struct_pack(f0 := "a", f1 := 2)], lambda __lg_v: CAST(round(((__lg_v['f0'] - (__lg_v['f0'] % nullif(__lg_v['f1'], 0))) // nullif(__lg_v['f1'], 0))) AS BIGINT))[1]) AS "a DIV 2",("a" / nullif("b", 0)) AS "a / b",("a" % nullif(3, 0)) AS "a % 3",("a" IS NOT DISTINCT FROM "b") AS "a <=> b",CAST("a" AS BIGINT) AS "CAST(a AS SIGNED)",(list_transform([struct_pack(f0 := "a")], lambda __lg_v: CASE WHEN typeof(__lg_v['f0']) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v['f0'] AS VARCHAR), '\.0$', ''), 'e\+', 'e') WHEN typeof(__lg_v['f0']) = 'BOOLEAN' THEN CAST(CAST(__lg_v['f0'] AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v['f0'] AS VARCHAR) END)[1]) AS "CONVERT(a, CHAR)",CAST("a" AS DECIMAL(10,0)) AS "CAST(a AS DECIMAL)",CAST("a" AS TIMESTAMP) AS "CAST(a AS DATETIME)" FROM "lg_rel"."t_0" AS "t" JOIN "lg_rel"."t_1" AS "u" ON TRUE`},
		{`SELECT a FROM t WHERE a LIKE 'x\_%' OR a NOT LIKE 'y|%' ESCAPE '|' OR a LIKE 'z' ESCAPE ''`,
			`SELECT "a" FROM "lg_rel"."t_0" AS "t" WHERE (((lower(strip_accents("a")) LIKE lower(strip_accents('x\_%')) ESCAPE '\') OR (lower(strip_accents("a")) NOT LIKE lower(strip_accents('y|%')) ESCAPE '|')) OR (lower(strip_accents("a")) LIKE lower(strip_accents('z'))))`},
		// The pattern holds no escape character: no ESCAPE, so the engine
		// searches substrings; a parameter's pattern keeps it.
		{`SELECT a FROM t WHERE a LIKE '%p%q%' AND a NOT LIKE ?`,
			`SELECT "a" FROM "lg_rel"."t_0" AS "t" WHERE ((lower(strip_accents("a")) LIKE lower(strip_accents('%p%q%'))) AND (lower(strip_accents("a")) NOT LIKE lower(strip_accents($1)) ESCAPE '\'))`},
		{`SELECT 1 FROM DUAL WHERE 1 = 1`, `SELECT 1 AS "1" FROM (SELECT 1) AS "__lg_dual" WHERE (1 = 1)`},
		{`SELECT row_number() OVER (PARTITION BY a ORDER BY b DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), sum(a) OVER w FROM t WINDOW w AS (ORDER BY a)`,
			`SELECT row_number() OVER (PARTITION BY "a" ORDER BY "b" DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS "row_number() OVER (PARTITION BY a ORDER BY b DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",sum("a") OVER "w" AS "sum(a) OVER w" FROM "lg_rel"."t_0" AS "t" WINDOW "w" AS (ORDER BY "a")`},
		{`(SELECT a FROM t) UNION (SELECT b FROM u) ORDER BY 1 LIMIT ?`,
			`(SELECT "a" FROM "lg_rel"."t_0" AS "t") UNION (SELECT "b" FROM "lg_rel"."t_1" AS "u") ORDER BY 1 LIMIT $1`},
		{`SELECT CASE a WHEN 1 THEN 'x' ELSE 'y' END, IF(a, 1, 2), IFNULL(a, -1.5), coalesce(a, 'q''r', "s"), count(DISTINCT a), 1e3, TRUE, NULL FROM t`,
			`SELECT CASE "a" WHEN 1 THEN 'x' ELSE 'y' END AS "CASE a WHEN 1 THEN 'x' ELSE 'y' END",if("a", 1, 2) AS "IF(a, 1, 2)",ifnull("a", (-(1.5))) AS "IFNULL(a, -1.5)",coalesce("a", 'q''r', 's') AS "coalesce(a, 'q''r', ""s"")",count(DISTINCT lower(strip_accents(CAST("a" AS VARCHAR)))) AS "count(DISTINCT a)",1e+03 AS "1e3",TRUE AS "TRUE",NULL AS "NULL" FROM "lg_rel"."t_0" AS "t"`},
		{`SELECT a FROM t WHERE a IN (1, 2) AND b NOT IN (SELECT b FROM u) AND NOT EXISTS (SELECT 1) AND a BETWEEN 1 AND 2 AND a IS NULL`,
			`SELECT "a" FROM "lg_rel"."t_0" AS "t" WHERE ((((("a" IN (1, 2)) AND ("b" NOT IN (SELECT "b" FROM "lg_rel"."t_1" AS "u"))) AND (NOT EXISTS (SELECT 1 AS "1"))) AND ("a" BETWEEN 1 AND 2)) AND ("a" IS NULL))`},
		{`SELECT /*+ HASH_JOIN(t) */ SQL_NO_CACHE STRAIGHT_JOIN a FROM t STRAIGHT_JOIN u`,
			`SELECT "a" FROM "lg_rel"."t_0" AS "t" JOIN "lg_rel"."t_1" AS "u" ON TRUE`},
		{`SELECT * FROM a, b JOIN c ON a.x = c.x`,
			`SELECT * FROM "lg_rel"."t_0" AS "a" JOIN ("lg_rel"."t_1" AS "b" JOIN "lg_rel"."t_2" AS "c" ON ("a"."x" = "c"."x")) ON TRUE`},
		{`SELECT * FROM t LIMIT ? OFFSET ?`, `SELECT * FROM "lg_rel"."t_0" AS "t" LIMIT $1 OFFSET $2`},
		{`SELECT substring(name FROM 2 FOR 3), substr(name, 2), trim(name), length(name), char_length(name), lcase(name), round(a, 2), ceiling(a) FROM t`,
			`SELECT substring("name", 2, 3) AS "substring(name FROM 2 FOR 3)",substring("name", 2) AS "substr(name, 2)",trim("name") AS "trim(name)",strlen("name") AS "length(name)",length("name") AS "char_length(name)",lower("name") AS "lcase(name)",(list_transform([struct_pack(f0 := "a")], lambda __lg_v: CASE WHEN ((typeof(__lg_v['f0']) IN ('DOUBLE', 'FLOAT')) AND (abs(((abs((__lg_v['f0'] * pow(10, 2))) - trunc(abs((__lg_v['f0'] * pow(10, 2))))) - 0.5)) < 1e-9)) THEN error('ROUND of an inexact value at a tie is ambiguous (MySQL rounds a DOUBLE half to even, a DECIMAL half away from zero); CAST it to DECIMAL or DOUBLE') ELSE round(__lg_v['f0'], 2) END)[1]) AS "round(a, 2)",ceil("a") AS "ceiling(a)" FROM "lg_rel"."t_0" AS "t"`},
		{"SELECT 'a\\'b', 'line\nbreak', 'tab\\t', '\\\\'", "SELECT 'a''b' AS \"a'b\",'line\nbreak' AS \"line break\",'tab\t' AS \"tab \",'\\' AS \"\\\""},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			_, out, err := parseRender(t, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

// TestRefused pins what Parse refuses and with which sentinel.
func TestRefused(t *testing.T) {
	tests := []struct {
		sql  string
		want error
	}{
		{"", sqlgate.ErrSyntax},
		{" \n\t", sqlgate.ErrSyntax},
		{";", sqlgate.ErrSyntax},
		{"SELECT", sqlgate.ErrSyntax},
		{"SELECT 1; SELECT 2", sqlgate.ErrSyntax},
		{"SELECT 1\x00", sqlgate.ErrSyntax},
		{"SELECT '\xff'", sqlgate.ErrSyntax},
		{"UPDATE t SET a = 1", sqlgate.ErrUnsupported},
		{"DELETE FROM t", sqlgate.ErrUnsupported},
		{"CREATE TABLE x (a INT)", sqlgate.ErrUnsupported},
		{"SET @a = 1", sqlgate.ErrUnsupported},
		{"SET GLOBAL x = 1", sqlgate.ErrUnsupported},
		{"PREPARE s FROM 'SELECT 1'", sqlgate.ErrUnsupported},
		{"EXECUTE s", sqlgate.ErrUnsupported},
		{"EXPLAIN ANALYZE SELECT 1", sqlgate.ErrUnsupported},
		{"EXPLAIN FORMAT='json' SELECT 1", sqlgate.ErrUnsupported},
		{"EXPLAIN INSERT INTO t VALUES (1)", sqlgate.ErrUnsupported},
		{"SHOW FULL TABLES FROM s", sqlgate.ErrUnsupported},
		{"SHOW TABLES FROM s WHERE x = 1", sqlgate.ErrUnsupported},
		{"SHOW TABLES FROM s NOT LIKE 'a'", sqlgate.ErrSyntax},
		{"SHOW STATUS", sqlgate.ErrUnsupported},
		{"SHOW CREATE TABLE s.t", sqlgate.ErrUnsupported},
		{"SHOW GRANTS", sqlgate.ErrUnsupported},
		{"SHOW PROCESSLIST", sqlgate.ErrUnsupported},
		{"SHOW INDEX FROM s.t", sqlgate.ErrUnsupported},
		{"SHOW FULL COLUMNS FROM s.t", sqlgate.ErrUnsupported},
		{"SHOW COLUMNS FROM s.t LIKE 'a%'", sqlgate.ErrUnsupported},
		{"DESCRIBE s.t a", sqlgate.ErrUnsupported},
		{"DESCRIBE __lg_x.t", sqlgate.ErrUnsupported},
		{"LOAD DATA INFILE '/etc/passwd' INTO TABLE t", sqlgate.ErrUnsupported},
		{"DO 1", sqlgate.ErrUnsupported},
		{"TABLE t", sqlgate.ErrUnsupported},
		{"VALUES ROW(1)", sqlgate.ErrUnsupported},
		{"SELECT * FROM t FOR UPDATE", sqlgate.ErrUnsupported},
		{"SELECT * FROM t LOCK IN SHARE MODE", sqlgate.ErrUnsupported},
		{"SELECT * FROM t AS OF TIMESTAMP '2020-01-01 00:00:00'", sqlgate.ErrUnsupported},
		{"SELECT * FROM t PARTITION (p0)", sqlgate.ErrUnsupported},
		{"SELECT * FROM t TABLESAMPLE REGIONS()", sqlgate.ErrUnsupported},
		{"SELECT sleep(1)", sqlgate.ErrUnsupported},
		{"SELECT user()", sqlgate.ErrUnsupported},
		{"SELECT abs(1, 2)", sqlgate.ErrUnsupported},
		{"SELECT a ILIKE 'x' FROM t", sqlgate.ErrUnsupported},
		{"SELECT CAST(a AS CHAR(3)) FROM t", sqlgate.ErrUnsupported},
		{"SELECT CAST(a AS BINARY) FROM t", sqlgate.ErrUnsupported},
		{"SELECT CAST(a AS JSON) FROM t", sqlgate.ErrUnsupported},
		{"SELECT CAST(a AS DECIMAL(65, 2)) FROM t", sqlgate.ErrUnsupported},
		{"SELECT BINARY a FROM t", sqlgate.ErrUnsupported},
		{"SELECT CONVERT(a USING latin1) FROM t", sqlgate.ErrUnsupported},
		{"SELECT (1, 2) IN (SELECT * FROM t)", sqlgate.ErrUnsupported},
		{"SELECT (a, 2) IN ((b, 2)) FROM t", sqlgate.ErrUnsupported},
		{"SELECT (1, 2) IN ((1, 2, 3))", sqlgate.ErrUnsupported},
		{"SELECT json_unquote(a) FROM t", sqlgate.ErrUnsupported},
		{"SELECT json_extract(a, '$**.b') FROM t", sqlgate.ErrUnsupported},
		{"SELECT json_extract(a, b) FROM t", sqlgate.ErrUnsupported},
		{"SELECT (1, 2) < (1, 3)", sqlgate.ErrUnsupported},
		{"SELECT a COLLATE latin1_swedish_ci FROM t", sqlgate.ErrUnsupported},
		{"SELECT CAST('2.5' AS SIGNED)", sqlgate.ErrUnsupported},
		{"SELECT CAST(' 3x' AS UNSIGNED)", sqlgate.ErrUnsupported},
		{"SELECT any_value(a) FROM t", sqlgate.ErrUnsupported},
		{"SELECT trim(both 'xy' from a) FROM t", sqlgate.ErrUnsupported},
		{"SELECT lpad(a, -1, 'x') FROM t", sqlgate.ErrUnsupported},
		{"SELECT lpad(a, 3, '') FROM t", sqlgate.ErrUnsupported},
		{"SELECT lpad(a, b, 'x') FROM t", sqlgate.ErrUnsupported},
		{"SELECT substring_index(a, b, 1) FROM t", sqlgate.ErrUnsupported},
		{"SELECT substring_index(a, '', 1) FROM t", sqlgate.ErrUnsupported},
		{"SELECT date_format(a, '%Q') FROM t", sqlgate.ErrUnsupported},
		{"SELECT date_format(a, b) FROM t", sqlgate.ErrUnsupported},
		{"SELECT date_format('2020-00-01', '%Y')", sqlgate.ErrUnsupported},
		{"SELECT str_to_date(a, '%H:%i') FROM t", sqlgate.ErrUnsupported},
		{"SELECT date_add(a, INTERVAL 1.5 DAY) FROM t", sqlgate.ErrUnsupported},
		{"SELECT date_add(a, INTERVAL '1.5' SECOND_MICROSECOND) FROM t", sqlgate.ErrUnsupported},
		{"SELECT date_add('tomorrow', INTERVAL 1 DAY)", sqlgate.ErrUnsupported},
		{"SELECT extract(hour FROM '10:00:00')", sqlgate.ErrUnsupported},
		{"SELECT timestampdiff(hour, a) FROM t", sqlgate.ErrSyntax},
		{"SELECT round(a, b) FROM t", sqlgate.ErrUnsupported},
		{"SELECT truncate(a, b) FROM t", sqlgate.ErrUnsupported},
		{"SELECT format(a, 31) FROM t", sqlgate.ErrUnsupported},
		{"SELECT format(1.5E0, 1)", sqlgate.ErrUnsupported},
		{"SELECT space(a) FROM t", sqlgate.ErrUnsupported},
		{"SELECT char(65 USING utf8mb4)", sqlgate.ErrUnsupported},
		{"SELECT char(65, 66)", sqlgate.ErrUnsupported},
		{"SELECT group_concat(DISTINCT a, b) FROM t", sqlgate.ErrUnsupported},
		{"SELECT group_concat(a) OVER () FROM t", sqlgate.ErrUnsupported},
		{"SELECT bit_and(a) OVER () FROM t", sqlgate.ErrUnsupported},
		{"SELECT json_arrayagg(a) OVER () FROM t", sqlgate.ErrUnsupported},
		{"SELECT date_format(a, '%U%') FROM t", sqlgate.ErrUnsupported},
		{"SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW) FROM t", sqlgate.ErrUnsupported},
		{"SELECT unix_timestamp('1960-01-01')", sqlgate.ErrUnsupported},
		{"SELECT week(a, b) FROM t", sqlgate.ErrUnsupported},
		{"SELECT locate(a, b, 2) FROM t", sqlgate.ErrUnsupported},
		{"SELECT * FROM t LIMIT ?, ?", sqlgate.ErrUnsupported},
		{"SELECT * FROM t WHERE a = DEFAULT(a)", sqlgate.ErrUnsupported},
		{"SELECT MATCH (a) AGAINST ('x') FROM t", sqlgate.ErrUnsupported},
		{"WITH RECURSIVE secret AS (SELECT * FROM secret) SELECT * FROM secret", sqlgate.ErrUnsupported},
		{"WITH RECURSIVE c AS (SELECT * FROM c UNION SELECT 1) SELECT * FROM c", sqlgate.ErrUnsupported},
		{"WITH RECURSIVE c AS (SELECT 1 UNION SELECT * FROM c WHERE 0 UNION SELECT 2) SELECT * FROM c", sqlgate.ErrUnsupported},
		{"WITH RECURSIVE c AS (SELECT 1 EXCEPT SELECT * FROM c) SELECT * FROM c", sqlgate.ErrUnsupported},
		{"WITH c AS (SELECT 1), c AS (SELECT 2) SELECT * FROM c", sqlgate.ErrSyntax},
		{"SELECT * FROM t a JOIN u a ON TRUE", sqlgate.ErrUnsupported},
		{"SELECT * FROM s1.t JOIN s2.t ON TRUE", sqlgate.ErrUnsupported},
		{"SELECT * FROM __lg_secret", sqlgate.ErrUnsupported},
		{"SELECT * FROM `__CTE1_x`", sqlgate.ErrUnsupported},
		{"SELECT a AS `__lg` FROM t", sqlgate.ErrUnsupported},
		{"SELECT other.t.a FROM t", sqlgate.ErrUnsupported},
		{"SELECT sales.t.a FROM t AS x", sqlgate.ErrUnsupported},
		{"SELECT `a\tb` FROM t", sqlgate.ErrSyntax},
		{"SELECT count(a, b) FROM t", sqlgate.ErrSyntax},
		{"USE `__lg`", sqlgate.ErrUnsupported},
		{"SELECT " + strings.Repeat("(", 1200) + "1" + strings.Repeat(")", 1200), sqlgate.ErrLimit},
	}
	g := sqlgate.New(sqlgate.Config{})
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st, err := g.Parse(tt.sql, "sales")
			if err == nil {
				out, _ := st.Render(rels(st))
				t.Fatalf("accepted, renders as %s", out)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "sqlgate: ") {
				t.Fatalf("message %q lacks the package prefix", err.Error())
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for sql, want := range map[string]string{
		"SELECT load_file('/etc/passwd')":   `sqlgate: function "load_file" is not supported`,
		"SELECT * FROM t INTO OUTFILE '/x'": `sqlgate: SELECT … INTO is not supported`,
		"SELECT @x":                         `sqlgate: a user or system variable (@x, @@x) is not supported`,
		"SELECT 0x41":                       `sqlgate: hexadecimal and bit literals are not supported`,
		"WITH RECURSIVE s AS (SELECT * FROM s) SELECT * FROM s": `sqlgate: recursive CTE "s" without UNION is not supported`,
	} {
		_, err := g.Parse(sql, "sales")
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %q", sql, err, want)
		}
	}
}

func TestStatementKinds(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	st, err := g.Parse("USE Sales_2", "")
	if err != nil || st.Kind() != sqlgate.KindUse || st.UseSchema() != "sales_2" || len(st.Tables()) != 0 {
		t.Fatalf("USE: %v %v", st, err)
	}
	if _, err := st.Render(nil); err == nil {
		t.Fatal("Render of USE succeeded")
	}
	for _, sql := range []string{"SELECT 1;", "SELECT 1 ; \n", "SELECT 1;;"} {
		st, err := g.Parse(sql, "")
		if err != nil || st.Kind() != sqlgate.KindQuery {
			t.Fatalf("Parse(%q): %v", sql, err)
		}
	}
	st, err = g.Parse("SELECT a FROM t WHERE a = ? AND b IN (?, ?) LIMIT ?", "s")
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Render(rels(st))
	if err != nil || st.NumParams() != 4 || numberedParams(out) != 4 {
		t.Fatalf("NumParams = %d, output %s, %v", st.NumParams(), out, err)
	}
}

func TestSchemas(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	if _, err := g.Parse("SELECT * FROM t", ""); !errors.Is(err, sqlgate.ErrNoSchema) {
		t.Fatalf("unqualified table without a default schema: %v", err)
	}
	st, err := g.Parse("SELECT * FROM s.t", "")
	if err != nil || tableStrings(st)[0] != "s.t" {
		t.Fatalf("qualified table: %v", err)
	}
	if _, err := g.Parse("SELECT 1", "__lgx"); err == nil {
		t.Fatal("reserved default schema accepted")
	}
	st, err = g.Parse("SELECT * FROM T", "MySchema")
	if err != nil || tableStrings(st)[0] != "myschema.t" {
		t.Fatalf("default schema is lower-cased: %v %v", tableStrings(st), err)
	}
}

func TestTooLarge(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{MaxSQLBytes: 16})
	if _, err := g.Parse("SELECT 1 + 1 + 1 + 1", ""); !errors.Is(err, sqlgate.ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	if _, err := g.Parse("SELECT 1", ""); err != nil {
		t.Fatal(err)
	}
	big := "SELECT '" + strings.Repeat("x", 1<<20) + "'"
	if _, err := sqlgate.New(sqlgate.Config{}).Parse(big, ""); !errors.Is(err, sqlgate.ErrTooLarge) {
		t.Fatalf("default limit: %v", err)
	}
}

func TestRenderNeedsEveryRelation(t *testing.T) {
	st, err := sqlgate.New(sqlgate.Config{}).Parse("SELECT * FROM t JOIN u ON TRUE", "s")
	if err != nil {
		t.Fatal(err)
	}
	rel := rels(st)
	delete(rel, sqlgate.TableRef{Schema: "s", Name: "u"})
	if _, err := st.Render(rel); err == nil {
		t.Fatal("Render succeeded with a missing relation")
	}
	rel = rels(st)
	rel[sqlgate.TableRef{Schema: "s", Name: "u"}] = sqlgate.Relation{Schema: "x"}
	if _, err := st.Render(rel); err == nil {
		t.Fatal("Render succeeded with an empty relation name")
	}
}

func TestRenderConcurrent(t *testing.T) {
	st, err := sqlgate.New(sqlgate.Config{}).Parse(
		"WITH c AS (SELECT a FROM t) SELECT c.a, -u.b FROM c JOIN u ON c.a = u.a WHERE u.b LIKE 'x%' LIMIT 3, 4", "s")
	if err != nil {
		t.Fatal(err)
	}
	rel := rels(st)
	want, err := st.Render(rel)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				got, err := st.Render(rel)
				if err != nil || got != want {
					errs <- fmt.Errorf("got %q, %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestParseConcurrent(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				sql := fmt.Sprintf("SELECT a FROM t%d_%d WHERE b = 'x'", i, j)
				st, err := g.Parse(sql, "s")
				if err != nil || len(st.Tables()) != 1 || st.Tables()[0].Name != fmt.Sprintf("t%d_%d", i, j) {
					errs <- fmt.Errorf("%s: %v", sql, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
