package sqlgate_test

import (
	"errors"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

func TestShowKinds(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	tests := []struct {
		sql, def string
		kind     sqlgate.Kind
		schema   string // ShowSchema
		pattern  string
		hasPat   bool
		target   string // Target for KindDescribe
	}{
		{sql: "SHOW DATABASES", kind: sqlgate.KindShowDatabases},
		{sql: "show schemas", kind: sqlgate.KindShowDatabases},
		{sql: "SHOW DATABASES LIKE 'Sa%'", kind: sqlgate.KindShowDatabases, pattern: "sa%", hasPat: true},
		{sql: "SHOW TABLES", def: "Sales", kind: sqlgate.KindShowTables, schema: "sales"},
		{sql: "SHOW TABLES FROM HR", def: "sales", kind: sqlgate.KindShowTables, schema: "hr"},
		{sql: "SHOW TABLES IN hr LIKE 'emp\\_%'", kind: sqlgate.KindShowTables, schema: "hr", pattern: `emp\_%`, hasPat: true},
		{sql: "DESCRIBE Orders", def: "sales", kind: sqlgate.KindDescribe, target: "sales.orders"},
		{sql: "DESC hr.employees", def: "sales", kind: sqlgate.KindDescribe, target: "hr.employees"},
		{sql: "EXPLAIN hr.employees", kind: sqlgate.KindDescribe, target: "hr.employees"},
		{sql: "SHOW COLUMNS FROM orders", def: "sales", kind: sqlgate.KindDescribe, target: "sales.orders"},
		{sql: "SHOW COLUMNS FROM employees FROM hr", def: "sales", kind: sqlgate.KindDescribe, target: "hr.employees"},
		{sql: "SHOW COLUMNS IN hr.employees", kind: sqlgate.KindDescribe, target: "hr.employees"},
	}
	for _, tt := range tests {
		st, err := g.Parse(tt.sql, tt.def)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.sql, err)
			continue
		}
		if st.Kind() != tt.kind || !st.IsShow() || st.IsWrite() || len(st.Tables()) != 0 {
			t.Errorf("Parse(%q): kind %s (IsShow %v, IsWrite %v, tables %v), want %s", tt.sql, st.Kind(), st.IsShow(), st.IsWrite(), st.Tables(), tt.kind)
		}
		if st.ShowSchema() != tt.schema {
			t.Errorf("Parse(%q): ShowSchema %q, want %q", tt.sql, st.ShowSchema(), tt.schema)
		}
		if p, ok := st.ShowPattern(); p != tt.pattern || ok != tt.hasPat {
			t.Errorf("Parse(%q): ShowPattern %q %v, want %q %v", tt.sql, p, ok, tt.pattern, tt.hasPat)
		}
		if tt.target != "" && st.Target().String() != tt.target {
			t.Errorf("Parse(%q): Target %s, want %s", tt.sql, st.Target(), tt.target)
		}
		if _, err := st.Render(nil); err == nil {
			t.Errorf("Render of %q succeeded", tt.sql)
		}
	}
}

func TestExplainKind(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, sql := range []string{
		"EXPLAIN SELECT a FROM t WHERE a = 1",
		"EXPLAIN FORMAT=ROW SELECT a FROM t WHERE a = 1",
		"DESCRIBE SELECT a FROM t WHERE a = 1",
	} {
		st, err := g.Parse(sql, "s")
		if err != nil {
			t.Fatalf("Parse(%q): %v", sql, err)
		}
		if st.Kind() != sqlgate.KindExplain || st.IsShow() || st.IsWrite() {
			t.Fatalf("Parse(%q): kind %s", sql, st.Kind())
		}
		if got := tableStrings(st); len(got) != 1 || got[0] != "s.t" {
			t.Fatalf("Parse(%q): tables %v", sql, got)
		}
		out, err := st.Render(rels(st))
		if err != nil {
			t.Fatal(err)
		}
		if want := `SELECT "a" FROM "lg_rel"."t_0" AS "t" WHERE ("a" = 1)`; out != want {
			t.Fatalf("Render(%q) = %s, want %s", sql, out, want)
		}
	}
	// The query inside EXPLAIN is gated like any query.
	for _, sql := range []string{
		"EXPLAIN SELECT load_file('/etc/passwd')",
		"EXPLAIN SELECT * FROM t INTO OUTFILE '/x'",
		"EXPLAIN WITH RECURSIVE s AS (SELECT * FROM s) SELECT * FROM s",
	} {
		if _, err := g.Parse(sql, "s"); !errors.Is(err, sqlgate.ErrUnsupported) {
			t.Errorf("Parse(%q) = %v, want ErrUnsupported", sql, err)
		}
	}
	// CTE scoping inside EXPLAIN: the inner real reference is found.
	st, err := g.Parse("EXPLAIN WITH secret AS (SELECT * FROM secret) SELECT * FROM secret", "s")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tableStrings(st), ","); got != "s.secret" {
		t.Fatalf("tables %s", got)
	}
}

func TestShowNeedsSchema(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, sql := range []string{"SHOW TABLES", "DESCRIBE t", "SHOW COLUMNS FROM t"} {
		if _, err := g.Parse(sql, ""); !errors.Is(err, sqlgate.ErrNoSchema) {
			t.Errorf("Parse(%q) = %v, want ErrNoSchema", sql, err)
		}
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for sql, want := range map[string]string{
		"SELECT a FROM t WHERE":                   "line 1 column 21",
		"SELECT a\nFROM t\nWHERE a = = 1":         "line 3 column 12",
		"SELECT a,\n  b\nFROM t\n  GROUP BY BY a": "line 4 column 14",
	} {
		_, err := g.Parse(sql, "s")
		if !errors.Is(err, sqlgate.ErrSyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want a syntax error at %s", sql, err, want)
		}
	}
}

func TestRefusalNamesConstruct(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for sql, want := range map[string]string{
		"SHOW STATUS":                             "SHOW SESSION STATUS is not supported",
		"SHOW FULL TABLES FROM s":                 "SHOW FULL is not supported",
		"SHOW TABLES FROM s WHERE x = 1":          "SHOW … WHERE is not supported",
		"EXPLAIN ANALYZE SELECT 1":                "EXPLAIN ANALYZE is not supported",
		"EXPLAIN FORMAT='json' SELECT 1":          "EXPLAIN FORMAT=json is not supported",
		"EXPLAIN SELECT sleep(1)":                 `function "sleep" is not supported`,
		"SELECT * FROM t TABLESAMPLE SYSTEM (10)": "TABLESAMPLE is not supported",
		"SELECT * FROM t AS OF TIMESTAMP NOW()":   "AS OF is not supported",
		"SELECT * FROM t FOR UPDATE":              "locking reads (FOR UPDATE, LOCK IN SHARE MODE) are not supported",
		"DESCRIBE s.t a":                          "DESCRIBE of a single column is not supported",
		"SELECT CAST(a AS JSON) FROM t":           "CAST to json is not supported",
		"UPDATE t SET a = 1":                      "only SELECT, USE,",
	} {
		_, err := g.Parse(sql, "s")
		if !errors.Is(err, sqlgate.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want a refusal saying %q", sql, err, want)
		}
	}
}
