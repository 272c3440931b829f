package sqlgate_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestWrite pins every accepted write form: kind, target, tables read,
// column list, flags and the rendered query part.
func TestWrite(t *testing.T) {
	tests := []struct {
		sql         string
		kind        sqlgate.Kind
		target      string
		tables      []string // Tables(), in order
		columns     []string
		ifNotExists bool
		ifExists    bool
		params      int
		want        string // Render output
	}{
		// CREATE TABLE … AS
		{sql: `CREATE TABLE t AS SELECT a, b FROM u WHERE a > 1`,
			kind: sqlgate.KindCreateTableAs, target: "sales.t", tables: []string{"sales.u"},
			want: `SELECT "a","b" FROM "lg_rel"."t_0" AS "u" WHERE ("a" > 1)`},
		{sql: `CREATE TABLE IF NOT EXISTS Other.T2 SELECT 1 AS X`,
			kind: sqlgate.KindCreateTableAs, target: "other.t2", ifNotExists: true,
			want: `SELECT 1 AS "x"`},
		{sql: `CREATE TABLE t AS WITH t AS (SELECT * FROM t) SELECT * FROM t`,
			kind: sqlgate.KindCreateTableAs, target: "sales.t", tables: []string{"sales.t"},
			want: `WITH "__cte1_t" AS (SELECT * FROM "lg_rel"."t_0" AS "t") SELECT * FROM "__cte1_t" AS "t"`},
		{sql: `CREATE TABLE t AS (SELECT a FROM u) UNION ALL (SELECT a FROM v) ORDER BY 1 LIMIT ?`,
			kind: sqlgate.KindCreateTableAs, target: "sales.t", tables: []string{"sales.u", "sales.v"}, params: 1,
			want: `(SELECT "a" FROM "lg_rel"."t_0" AS "u") UNION ALL (SELECT "a" FROM "lg_rel"."t_1" AS "v") ORDER BY 1 LIMIT $1`},
		{sql: `CREATE TABLE t AS SELECT a DIV 2 AS h, sum(b) AS s FROM u GROUP BY 1;`,
			kind: sqlgate.KindCreateTableAs, target: "sales.t", tables: []string{"sales.u"},
			want: `SELECT (list_transform([struct_pack(f0 := "a", f1 := 2)], lambda __lg_v: CAST(round(((__lg_v['f0'] - (__lg_v['f0'] % nullif(__lg_v['f1'], 0))) // nullif(__lg_v['f1'], 0))) AS BIGINT))[1]) AS "h",sum("b") AS "s" FROM "lg_rel"."t_0" AS "u" GROUP BY 1`},

		// INSERT … query
		{sql: `INSERT INTO t SELECT * FROM t`,
			kind: sqlgate.KindInsert, target: "sales.t", tables: []string{"sales.t"},
			want: `SELECT * FROM "lg_rel"."t_0" AS "t"`},
		{sql: `INSERT INTO S2.T (A, b) SELECT x, y FROM u`,
			kind: sqlgate.KindInsert, target: "s2.t", tables: []string{"sales.u"}, columns: []string{"a", "b"},
			want: `SELECT "x","y" FROM "lg_rel"."t_0" AS "u"`},
		{sql: `INSERT t (SELECT 1)`,
			kind: sqlgate.KindInsert, target: "sales.t",
			want: `(SELECT 1)`},
		{sql: `INSERT INTO t WITH x AS (SELECT a FROM u) SELECT a FROM x`,
			kind: sqlgate.KindInsert, target: "sales.t", tables: []string{"sales.u"},
			want: `WITH "__cte1_x" AS (SELECT "a" FROM "lg_rel"."t_0" AS "u") SELECT "a" FROM "__cte1_x" AS "x"`},
		{sql: `INSERT INTO t (a) WITH t AS (SELECT a FROM t) SELECT a FROM t WHERE a = ?`,
			kind: sqlgate.KindInsert, target: "sales.t", tables: []string{"sales.t"}, columns: []string{"a"}, params: 1,
			want: `WITH "__cte1_t" AS (SELECT "a" FROM "lg_rel"."t_0" AS "t") SELECT "a" FROM "__cte1_t" AS "t" WHERE ("a" = $1)`},
		{sql: `INSERT INTO x WITH x AS (SELECT 1 AS a) SELECT a FROM x`, // the target is never a CTE
			kind: sqlgate.KindInsert, target: "sales.x",
			want: `WITH "__cte1_x" AS (SELECT 1 AS "a") SELECT "a" FROM "__cte1_x" AS "x"`},
		{sql: `INSERT /*+ SET_VAR(foo=1) */ INTO t SELECT a FROM u`,
			kind: sqlgate.KindInsert, target: "sales.t", tables: []string{"sales.u"},
			want: `SELECT "a" FROM "lg_rel"."t_0" AS "u"`},

		// INSERT … VALUES
		{sql: `INSERT INTO t VALUES (1, 'x'), (2, NULL)`,
			kind: sqlgate.KindInsert, target: "sales.t",
			want: `SELECT * FROM (VALUES (1, 'x'), (2, NULL)) AS "__lg_values" ("col1", "col2")`},
		{sql: "INSERT INTO t (A, `b`) VALUE (?, ?), (-1, 'a\\'b'), (1.5e0, \"q\")",
			kind: sqlgate.KindInsert, target: "sales.t", columns: []string{"a", "b"}, params: 2,
			want: `SELECT * FROM (VALUES ($1, $2), ((-(1)), 'a''b'), (1.5e+00, 'q')) AS "__lg_values" ("a", "b")`},
		{sql: `INSERT INTO t VALUES ((SELECT max(a) FROM secret), 1 + 2 * 3, CAST('3' AS SIGNED), coalesce(NULL, 1), - -1, 4 / 0)`,
			kind: sqlgate.KindInsert, target: "sales.t", tables: []string{"sales.secret"},
			want: `SELECT * FROM (VALUES ((SELECT max("a") FROM "lg_rel"."t_0" AS "secret"), (1 + (2 * 3)), CAST('3' AS BIGINT), coalesce(NULL, 1), (-((-(1)))), (list_transform([struct_pack(f0 := (CAST(4 AS HUGEINT) * 10000), f1 := CAST(0 AS HUGEINT))], lambda __lg_v: CASE WHEN (__lg_v['f1'] = 0) THEN NULL ELSE CAST((CAST(((sign(__lg_v['f0']) * sign(__lg_v['f1'])) * (((2 * abs(__lg_v['f0'])) + abs(__lg_v['f1'])) // (2 * abs(__lg_v['f1'])))) AS DECIMAL(38,0)) * 0.0001) AS DECIMAL(38,4)) END)[1]))) AS "__lg_values" ("col1", "col2", "col3", "col4", "col5", "col6")`},
		{sql: "INSERT INTO t (`a\"b`) VALUES (TRUE)",
			kind: sqlgate.KindInsert, target: "sales.t", columns: []string{`a"b`},
			want: `SELECT * FROM (VALUES (TRUE)) AS "__lg_values" ("a""b")`},

		// DROP TABLE
		{sql: `DROP TABLE t`, kind: sqlgate.KindDropTable, target: "sales.t"},
		{sql: `DROP TABLE IF EXISTS Sales.T;`, kind: sqlgate.KindDropTable, target: "sales.t", ifExists: true},
		{sql: `DROP TABLES x.y`, kind: sqlgate.KindDropTable, target: "x.y"},
		{sql: "DROP TABLE `cascade`", kind: sqlgate.KindDropTable, target: "sales.cascade"},
		{sql: "DROP TABLE s.`restrict`", kind: sqlgate.KindDropTable, target: "s.restrict"},
		{sql: "DROP TABLE `t` /* CASCADE */", kind: sqlgate.KindDropTable, target: "sales.t"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st, out, err := parseRender(t, tt.sql)
			if st == nil || err != nil {
				t.Fatalf("Parse/Render: %v", err)
			}
			if st.Kind() != tt.kind || !st.IsWrite() {
				t.Fatalf("Kind = %v, IsWrite = %v; want %v", st.Kind(), st.IsWrite(), tt.kind)
			}
			if got := st.Target().String(); got != tt.target {
				t.Errorf("Target = %q, want %q", got, tt.target)
			}
			if got := tableStrings(st); !slices.Equal(got, tt.tables) {
				t.Errorf("Tables = %v, want %v", got, tt.tables)
			}
			if got := st.Columns(); !slices.Equal(got, tt.columns) {
				t.Errorf("Columns = %q, want %q", got, tt.columns)
			}
			if st.IfNotExists() != tt.ifNotExists || st.IfExists() != tt.ifExists {
				t.Errorf("IfNotExists, IfExists = %v, %v", st.IfNotExists(), st.IfExists())
			}
			if st.NumParams() != tt.params {
				t.Errorf("NumParams = %d, want %d", st.NumParams(), tt.params)
			}
			if out != tt.want {
				t.Errorf("Render:\ngot  %s\nwant %s", out, tt.want)
			}
		})
	}
}

// TestWriteAttacks: hostile write statements are refused, or read as TiDB
// reads them and render to a query alone.
func TestWriteAttacks(t *testing.T) {
	tests := []struct {
		name   string
		sql    string
		target string   // "": must be refused at Parse
		tables []string // Tables()
		absent []string // must not appear outside quoted tokens of the output
		// refused at Render with ErrUnsupported
		renderRefused bool
	}{
		{name: "quoted target with a dot is one name",
			sql: "INSERT INTO `secret.t` VALUES (1)", target: `sales.secret.t`},
		{name: "quoted schema and table with dots and backticks",
			sql: "CREATE TABLE `x``y`.`z.w` AS SELECT 1", target: "x`y.z.w"},
		{name: "drop a quoted qualified name",
			sql: "DROP TABLE `other.secret`", target: "sales.other.secret"},
		{name: "double-quoted target is a string, not a name", sql: `INSERT INTO "other"."t" VALUES (1)`},
		{name: "newline in target", sql: "DROP TABLE `a\nb`"},
		{name: "reserved target", sql: "CREATE TABLE __lg_x AS SELECT 1"},
		{name: "reserved CTE name as target", sql: "INSERT INTO `__CTE1_x` VALUES (1)"},
		{name: "stacked statement after INSERT … SELECT", sql: `INSERT INTO t SELECT 1; DROP TABLE u`},
		{name: "stacked SELECT after INSERT", sql: `INSERT INTO t VALUES (1); SELECT * FROM secret`},
		{name: "stacked statement after DROP", sql: `DROP TABLE t; DROP TABLE u`},
		{name: "stacked statement in an executable comment", sql: `INSERT INTO t SELECT 1 /*! ; DROP TABLE u */`},
		{name: "executable comment is code: its subquery is gated",
			sql: `INSERT INTO t VALUES (1) /*! , ((SELECT max(a) FROM secret)) */`, target: "sales.t",
			tables: []string{"sales.secret"}, absent: []string{"/*", "*/"}},
		{name: "backslash escape hides a statement in VALUES",
			sql: `INSERT INTO t VALUES ('a\'); DROP TABLE u; --')`, target: "sales.t",
			absent: []string{";", "DROP", "--"}},
		{name: "backslash escape hides a file read in VALUES",
			sql: `INSERT INTO t VALUES ('a\'), (read_text(\'/etc/passwd\')) -- ')`, target: "sales.t",
			absent: []string{"read_text", "--"}},
		{name: "backslash escape hides UNION in INSERT … SELECT",
			sql: `INSERT INTO t SELECT * FROM u WHERE b = 'x\' UNION SELECT * FROM secret -- '`, target: "sales.t",
			tables: []string{"sales.u"}, absent: []string{"UNION", "secret", "--"}},
		{name: "hash comment", sql: "INSERT INTO t # DROP TABLE u\nVALUES (1)", target: "sales.t", absent: []string{"#", "DROP"}},
		{name: "double dash comment", sql: "DROP TABLE t -- CASCADE\n", target: "sales.t"},
		{name: "block comment", sql: "INSERT /* x */ INTO t /* y */ VALUES (/* z */ 1)", target: "sales.t", absent: []string{"/*"}},
		{name: "function not on the allow-list in VALUES", sql: `INSERT INTO t VALUES (load_file('/etc/passwd'))`},
		{name: "table function in VALUES", sql: `INSERT INTO t VALUES ((SELECT * FROM read_text('/etc/passwd')))`},
		{name: "sleep in VALUES", sql: `INSERT INTO t VALUES (1), (sleep(10))`},
		{name: "sleep in VALUES", sql: `INSERT INTO t VALUES (sleep(1))`},
		{name: "variable in VALUES", sql: `INSERT INTO t VALUES (@x)`},
		{name: "system variable in VALUES", sql: `INSERT INTO t VALUES (@@hostname)`},
		{name: "hex literal in VALUES", sql: `INSERT INTO t VALUES (0x41)`},
		{name: "NUL in VALUES", sql: `INSERT INTO t VALUES ('a\0')`},
		{name: "column reference in VALUES", sql: `INSERT INTO t (a, b) VALUES (1, a)`},
		{name: "aggregate in VALUES", sql: `INSERT INTO t VALUES (count(*))`},
		{name: "window function in VALUES", sql: `INSERT INTO t VALUES (row_number() OVER ())`},
		{name: "row constructor in VALUES", sql: `INSERT INTO t VALUES ((1, 2))`},
		{name: "DEFAULT in VALUES", sql: `INSERT INTO t VALUES (1, DEFAULT)`},
		{name: "DEFAULT(col) in VALUES", sql: `INSERT INTO t VALUES (DEFAULT(a))`},
		{name: "VALUES(col) in VALUES", sql: `INSERT INTO t VALUES (VALUES(a))`},
		{name: "CTAS INTO OUTFILE", sql: `CREATE TABLE t AS SELECT * FROM u INTO OUTFILE '/tmp/x'`},
		{name: "INSERT … SELECT INTO OUTFILE", sql: `INSERT INTO t SELECT * FROM u INTO OUTFILE '/tmp/x'`},
		{name: "CTAS from a file function", sql: `CREATE TABLE t AS SELECT load_file('/etc/passwd') AS x`},
		{name: "CREATE TABLE LIKE", sql: `CREATE TABLE t LIKE secret`},
		{name: "CREATE TABLE (LIKE)", sql: `CREATE TABLE t (LIKE secret)`},
		{name: "CREATE TEMPORARY TABLE AS", sql: `CREATE TEMPORARY TABLE t AS SELECT 1`},
		{name: "ON DUPLICATE KEY UPDATE", sql: `INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 2`},
		{name: "ON DUPLICATE KEY UPDATE after SELECT", sql: `INSERT INTO t SELECT a FROM u ON DUPLICATE KEY UPDATE a = VALUES(a)`},
		{name: "WITH before INSERT (not MySQL/TiDB syntax)", sql: `WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x`},
		{name: "locking read in INSERT … SELECT", sql: `INSERT INTO t SELECT * FROM u FOR UPDATE`},
		{name: "AS OF in INSERT … SELECT", sql: `INSERT INTO t SELECT * FROM u AS OF TIMESTAMP '2020-01-01 00:00:00'`},
		{name: "alias as a column in INSERT … SELECT", sql: `INSERT INTO t SELECT p FROM public_t p`, target: "sales.t",
			tables: []string{"sales.public_t"}, renderRefused: true},
	}
	g := sqlgate.New(sqlgate.Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := g.Parse(tt.sql, "sales")
			if tt.target == "" {
				if err == nil {
					out, _ := st.Render(rels(st))
					t.Fatalf("accepted: %v %s, renders %s", st.Kind(), st.Target(), out)
				}
				var ge *sqlgate.Error
				if !errors.As(err, &ge) || !strings.HasPrefix(ge.Msg, "sqlgate: ") {
					t.Fatalf("error %v is not a user-facing *sqlgate.Error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := st.Target().String(); got != tt.target {
				t.Fatalf("Target = %q, want %q", got, tt.target)
			}
			if got := tableStrings(st); !slices.Equal(got, tt.tables) {
				t.Fatalf("Tables = %v, want %v", got, tt.tables)
			}
			out, err := st.Render(rels(st))
			if tt.renderRefused {
				if !errors.Is(err, sqlgate.ErrUnsupported) {
					t.Fatalf("Render = %q, %v; want ErrUnsupported", out, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if err := sqlgate.CheckLexical(out); err != nil {
				t.Fatalf("output fails CheckLexical: %v\n%s", err, out)
			}
			for _, w := range []string{"INSERT", "CREATE", "DROP"} {
				if strings.Contains(outsideQuotes(out), w) {
					t.Errorf("output %s has %s outside quotes", out, w)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(outsideQuotes(out), a) {
					t.Errorf("output %s has %q outside quotes", out, a)
				}
			}
		})
	}
}

// TestWriteRefused pins what stays refused, and with which sentinel.
func TestWriteRefused(t *testing.T) {
	tests := []struct {
		sql  string
		want error
	}{
		// CREATE
		{"CREATE TABLE t (a INT)", sqlgate.ErrUnsupported},
		{"CREATE TABLE t (a INT) AS SELECT 1", sqlgate.ErrUnsupported},
		{"CREATE TABLE t (PRIMARY KEY (a)) AS SELECT 1 AS a", sqlgate.ErrUnsupported},
		{"CREATE TABLE t", sqlgate.ErrUnsupported},
		{"CREATE TABLE t ENGINE = InnoDB AS SELECT 1", sqlgate.ErrUnsupported},
		{"CREATE TABLE t COMMENT 'x' SELECT 1", sqlgate.ErrUnsupported},
		{"CREATE TABLE t PARTITION BY HASH (a) PARTITIONS 2 AS SELECT 1 AS a", sqlgate.ErrUnsupported},
		{"CREATE TABLE t IGNORE AS SELECT 1", sqlgate.ErrUnsupported},
		{"CREATE TABLE t REPLACE AS SELECT 1", sqlgate.ErrUnsupported},
		{"CREATE TABLE t LIKE u", sqlgate.ErrUnsupported},
		{"CREATE TEMPORARY TABLE t AS SELECT 1", sqlgate.ErrUnsupported},
		{"CREATE GLOBAL TEMPORARY TABLE t AS SELECT 1 ON COMMIT DELETE ROWS", sqlgate.ErrUnsupported},
		{"CREATE TABLE t AS SELECT 1 INTO OUTFILE '/tmp/x'", sqlgate.ErrUnsupported},
		{"CREATE TABLE t AS SELECT get_format(DATE, 'USA')", sqlgate.ErrUnsupported},
		{"CREATE TABLE t AS TABLE u", sqlgate.ErrUnsupported},
		{"CREATE TABLE t AS VALUES ROW(1)", sqlgate.ErrUnsupported},
		{"CREATE TABLE `a\tb` AS SELECT 1", sqlgate.ErrSyntax},
		{"CREATE ALGORITHM = MERGE VIEW v AS SELECT 1", sqlgate.ErrUnsupported},
		{"CREATE DATABASE d", sqlgate.ErrUnsupported},
		{"CREATE INDEX i ON t (a)", sqlgate.ErrUnsupported},
		{"CREATE SEQUENCE s", sqlgate.ErrUnsupported},
		// INSERT
		{"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 1", sqlgate.ErrUnsupported},
		{"INSERT INTO t SELECT 1 ON DUPLICATE KEY UPDATE a = 1", sqlgate.ErrUnsupported},
		{"REPLACE INTO t VALUES (1)", sqlgate.ErrUnsupported},
		{"REPLACE INTO t SELECT * FROM u", sqlgate.ErrUnsupported},
		{"INSERT INTO t SET a = 1", sqlgate.ErrUnsupported},
		{"INSERT IGNORE INTO t VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT LOW_PRIORITY INTO t VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT HIGH_PRIORITY INTO t VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT DELAYED INTO t VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT INTO t PARTITION (p0) VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (DEFAULT)", sqlgate.ErrUnsupported},
		{"INSERT INTO t (a, b) VALUES (1, DEFAULT)", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (1), (2, 3)", sqlgate.ErrSyntax},
		{"INSERT INTO t VALUES (1, 2), (3)", sqlgate.ErrSyntax},
		{"INSERT INTO t (a, b) VALUES (1)", sqlgate.ErrSyntax},
		{"INSERT INTO t (a) VALUES (1, 2)", sqlgate.ErrSyntax},
		{"INSERT INTO t (a, A) VALUES (1, 2)", sqlgate.ErrSyntax},
		{"INSERT INTO t (a, `A`) SELECT 1, 2", sqlgate.ErrSyntax},
		{"INSERT INTO t () VALUES ()", sqlgate.ErrUnsupported},
		{"INSERT INTO t () SELECT 1", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES ()", sqlgate.ErrUnsupported},
		{"INSERT INTO t (t.a) VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT INTO t (sales.t.a) VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT INTO t (`__lg_a`) VALUES (1)", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (a)", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (t.a)", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (count(*))", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (sum(1))", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (rank() OVER ())", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES (lpad('a', -1, 'b'))", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES ((1, 2))", sqlgate.ErrUnsupported},
		{"INSERT INTO t VALUES ROW(1)", sqlgate.ErrUnsupported},
		{"INSERT INTO t TABLE u", sqlgate.ErrUnsupported},
		{"INSERT INTO t SELECT 1; SELECT 2", sqlgate.ErrSyntax},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", sqlgate.ErrSyntax},
		// DROP
		{"DROP TABLE a, b", sqlgate.ErrUnsupported},
		{"DROP TABLE IF EXISTS a, a", sqlgate.ErrUnsupported},
		{"DROP TEMPORARY TABLE t", sqlgate.ErrUnsupported},
		{"DROP TABLE t CASCADE", sqlgate.ErrUnsupported},
		{"DROP TABLE t restrict", sqlgate.ErrUnsupported},
		{"DROP TABLE IF EXISTS s.t RESTRICT ;", sqlgate.ErrUnsupported},
		{"DROP TABLE `t` /*! CASCADE */", sqlgate.ErrUnsupported},
		{"DROP TABLE `cascade` CASCADE", sqlgate.ErrUnsupported},
		{"DROP TABLE __lg_t", sqlgate.ErrUnsupported},
		{"DROP VIEW v, w", sqlgate.ErrUnsupported},
		{"DROP DATABASE d", sqlgate.ErrUnsupported},
		{"DROP SCHEMA d", sqlgate.ErrUnsupported},
		{"DROP INDEX i ON t", sqlgate.ErrUnsupported},
		{"DROP SEQUENCE s", sqlgate.ErrUnsupported},
		// other writes stay refused
		{"UPDATE t SET a = 1", sqlgate.ErrUnsupported},
		{"UPDATE t SET a = (SELECT b FROM secret)", sqlgate.ErrUnsupported},
		{"DELETE FROM t WHERE a = 1", sqlgate.ErrUnsupported},
		{"WITH x AS (SELECT 1) DELETE FROM t", sqlgate.ErrUnsupported},
		{"TRUNCATE TABLE t", sqlgate.ErrUnsupported},
		{"ALTER TABLE t ADD COLUMN b INT", sqlgate.ErrUnsupported},
		{"RENAME TABLE a TO b", sqlgate.ErrUnsupported},
		{"LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t", sqlgate.ErrUnsupported},
		{"GRANT ALL ON *.* TO u", sqlgate.ErrUnsupported},
		{"BEGIN", sqlgate.ErrUnsupported},
		{"FLASHBACK TABLE t", sqlgate.ErrUnsupported},
	}
	g := sqlgate.New(sqlgate.Config{})
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st, err := g.Parse(tt.sql, "sales")
			if err == nil {
				out, _ := st.Render(rels(st))
				t.Fatalf("accepted as %v %s, renders as %s", st.Kind(), st.Target(), out)
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

func TestWriteErrorMessages(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for sql, want := range map[string]string{
		"INSERT INTO t VALUES (1), (2, 3)":                       `sqlgate: column count does not match value count at row 2`,
		"INSERT INTO t (a, A) VALUES (1, 2)":                     `sqlgate: column "a" is listed twice`,
		"INSERT INTO t VALUES (DEFAULT)":                         `sqlgate: DEFAULT is not supported`,
		"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = 1": `sqlgate: ON DUPLICATE KEY UPDATE is not supported`,
		"CREATE TABLE t (a INT)":                                 `sqlgate: column definitions are not supported; use CREATE TABLE … AS SELECT`,
		"DROP TABLE a, b":                                        `sqlgate: DROP TABLE takes exactly one table`,
		"DROP TABLE t CASCADE":                                   `sqlgate: RESTRICT and CASCADE are not supported in DROP TABLE`,
		"UPDATE t SET a = 1":                                     `sqlgate: UPDATE is not supported (only SELECT, USE, SET, CREATE TABLE … AS SELECT, INSERT, DROP TABLE, SHOW, DESCRIBE and EXPLAIN are)`,
	} {
		_, err := g.Parse(sql, "sales")
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %q", sql, err, want)
		}
	}
}

func TestWriteNoSchema(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, sql := range []string{
		"CREATE TABLE t AS SELECT 1",
		"INSERT INTO t VALUES (1)",
		"INSERT INTO t SELECT * FROM s.u",
		"INSERT INTO s.t SELECT * FROM u",
		"DROP TABLE t",
	} {
		if _, err := g.Parse(sql, ""); !errors.Is(err, sqlgate.ErrNoSchema) {
			t.Errorf("Parse(%q) = %v, want ErrNoSchema", sql, err)
		}
	}
	st, err := g.Parse("INSERT INTO s.t SELECT * FROM s.u", "")
	if err != nil || st.Target() != (sqlgate.TableRef{Schema: "s", Name: "t"}) {
		t.Fatalf("qualified: %v %v", st, err)
	}
}

func TestKinds(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for sql, want := range map[string]struct {
		kind  sqlgate.Kind
		name  string
		write bool
	}{
		"SELECT 1":                   {sqlgate.KindQuery, "query", false},
		"USE s":                      {sqlgate.KindUse, "use", false},
		"CREATE TABLE t AS SELECT 1": {sqlgate.KindCreateTableAs, "create table as", true},
		"INSERT INTO t VALUES (1)":   {sqlgate.KindInsert, "insert", true},
		"DROP TABLE t":               {sqlgate.KindDropTable, "drop table", true},
	} {
		st, err := g.Parse(sql, "s")
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if st.Kind() != want.kind || st.Kind().String() != want.name || st.IsWrite() != want.write {
			t.Errorf("%s: kind %v (%d), IsWrite %v", sql, st.Kind(), st.Kind(), st.IsWrite())
		}
		if !st.IsWrite() && st.Target() != (sqlgate.TableRef{}) {
			t.Errorf("%s: Target %v on a read", sql, st.Target())
		}
	}
	if got := sqlgate.Kind(99).String(); got != "Kind(99)" {
		t.Errorf("unknown kind prints %q", got)
	}
	st, err := g.Parse("DROP TABLE t", "s")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := st.Render(nil); out != "" || err != nil || len(st.Tables()) != 0 {
		t.Fatalf("DROP renders %q, %v; tables %v", out, err, st.Tables())
	}
	st, err = g.Parse("INSERT INTO t (a, b) VALUES (1, 2)", "s")
	if err != nil {
		t.Fatal(err)
	}
	c := st.Columns()
	c[0] = "mutated"
	if st.Columns()[0] != "a" {
		t.Fatal("Columns returns the statement's own slice")
	}
}

// valuesSQL builds INSERT INTO t VALUES with n rows of (i, 'x<i>', ?).
func valuesSQL(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO t (id, name, v) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, 'x%d', ?)", i, i)
	}
	return b.String()
}

// TestLongValues: 10 000 rows parse and render (BenchmarkLongValues shows
// the cost grows linearly); the size of a VALUES list is bounded by
// Config.MaxSQLBytes.
func TestLongValues(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	const n = 10_000
	st, err := g.Parse(valuesSQL(n), "s")
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.NumParams() != n || numberedParams(out) != n || st.Kind() != sqlgate.KindInsert {
		t.Fatalf("%d rows: NumParams %d", n, st.NumParams())
	}
	if !strings.HasPrefix(out, "SELECT * FROM (VALUES (0, 'x0', $1), (1, 'x1', $2), ") ||
		!strings.HasSuffix(out, fmt.Sprintf(`(%d, 'x%d', $%d)) AS "__lg_values" ("id", "name", "v")`, n-1, n-1, n)) {
		t.Fatalf("%d rows: output %.100s … %s", n, out, out[max(len(out)-100, 0):])
	}
	// The text bound applies.
	small := sqlgate.New(sqlgate.Config{MaxSQLBytes: 64 << 10})
	if _, err := small.Parse(valuesSQL(10_000), "s"); !errors.Is(err, sqlgate.ErrTooLarge) {
		t.Fatalf("MaxSQLBytes not applied: %v", err)
	}
}

// BenchmarkLongValues parses and renders VALUES lists of growing length;
// ns/op per row should stay flat.
func BenchmarkLongValues(b *testing.B) {
	// 40,000 rows hold more literals than a statement may (Limits.Literals).
	g := sqlgate.New(sqlgate.Config{Limits: sqlgate.Limits{Literals: 200_000}})
	for _, n := range []int{1_000, 10_000, 40_000} {
		sql := valuesSQL(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				st, err := g.Parse(sql, "s")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := st.Render(nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
		})
	}
}
