package sqlgate_test

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // the DuckDB-side check of rendered SQL

	"lakegate/authz/sqlgate"
)

// corpusFiles are the vendored dialect corpus (integration tests own it) and
// the repository's own cases.
var corpusFiles = []string{
	"../../integration/testdata/conformance/dialect/corpus.jsonl",
	"../../integration/testdata/conformance/extra.jsonl",
}

// corpusQueries returns the mysql text of every case of the corpus files; a
// missing file fails the caller.
func corpusQueries(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, name := range corpusFiles {
		f, err := os.Open(filepath.FromSlash(name))
		if err != nil {
			// The corpus is part of the repository: without it the tests
			// built on it would pass having checked nothing.
			tb.Fatalf("corpus: %v", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var c struct {
				MySQL string `json:"mysql"`
			}
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				f.Close()
				tb.Fatalf("%s: %v", name, err)
			}
			if c.MySQL != "" {
				out = append(out, c.MySQL)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	return out
}

// duckCheck parses rendered SQL with DuckDB's own parser
// (json_serialize_sql) and reports what is wrong with it, or "": it must be
// exactly one statement, read only gate-issued relations ("lg_rel".…) or
// the gate's renamed CTEs (__cte…), and call no table function. A text
// DuckDB cannot parse is not a violation (the engine refuses it).
type duckCheck struct {
	once sync.Once
	db   *sql.DB
	err  error
}

func (d *duckCheck) check(out string) (string, error) { return d.checkRelations(out, false) }

// checkPolicy is check for a statement rendered with a policy on every table
// (policyRels): besides, every read of a gate-issued relation must be the
// one inside a policy's derived table (aliased "__lg_p").
func (d *duckCheck) checkPolicy(out string) (string, error) { return d.checkRelations(out, true) }

func (d *duckCheck) checkRelations(out string, policy bool) (string, error) {
	d.once.Do(func() {
		d.db, d.err = sql.Open("duckdb", "")
		if d.err == nil {
			d.db.SetMaxOpenConns(1)
		}
	})
	if d.err != nil {
		return "", d.err
	}
	var js string
	if err := d.db.QueryRow("SELECT CAST(json_serialize_sql(?::VARCHAR) AS VARCHAR)", out).Scan(&js); err != nil {
		return "", err
	}
	var doc struct {
		Error      bool              `json:"error"`
		Statements []json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		return "", err
	}
	if doc.Error {
		return "", nil
	}
	if len(doc.Statements) != 1 {
		return fmt.Sprintf("%d statements", len(doc.Statements)), nil
	}
	var tree any
	if err := json.Unmarshal(doc.Statements[0], &tree); err != nil {
		return "", err
	}
	return relationProblem(tree, policy), nil
}

// relationProblem walks a json_serialize_sql tree for table references.
func relationProblem(v any, policy bool) string {
	switch n := v.(type) {
	case map[string]any:
		switch n["type"] {
		case "BASE_TABLE":
			schema, _ := n["schema_name"].(string)
			table, _ := n["table_name"].(string)
			catalog, _ := n["catalog_name"].(string)
			alias, _ := n["alias"].(string)
			switch {
			case policy && schema == "lg_rel" && alias != "__lg_p":
				return fmt.Sprintf("relation %q.%q is read without its policy", schema, table)
			case catalog == "" && schema == "lg_rel" && table != "":
			case catalog == "" && schema == "" && strings.HasPrefix(table, "__cte"):
			default:
				return fmt.Sprintf("relation %q.%q.%q is not gate-issued", catalog, schema, table)
			}
		case "TABLE_FUNCTION":
			return "table function"
		}
		for _, c := range n {
			if p := relationProblem(c, policy); p != "" {
				return p
			}
		}
	case []any:
		for _, c := range n {
			if p := relationProblem(c, policy); p != "" {
				return p
			}
		}
	}
	return ""
}

// policyRels is rels with a row filter and a mask of the first column on
// every table.
func policyRels(tb testing.TB, g *sqlgate.Gate, st *sqlgate.Statement) map[sqlgate.TableRef]sqlgate.Relation {
	m := rels(st)
	for ref, r := range m {
		f, err := g.PrepareRowFilter("a IS NOT NULL OR has_role('x') OR current_user() = 'u'", r.Columns, st.Dialect())
		if err != nil {
			tb.Fatal(err)
		}
		mask, err := g.PrepareMask("concat('x', {column})", r.Columns[0], r.Columns, st.Dialect())
		if err != nil {
			tb.Fatal(err)
		}
		r.Types = make([]string, len(r.Columns))
		for i := range r.Types {
			r.Types[i] = "VARCHAR"
		}
		r.Policy = &sqlgate.Policy{Filter: f, Masks: make([]*sqlgate.Mask, len(r.Columns)), Caller: sqlgate.Caller{User: "u'; --"}}
		r.Policy.Masks[0] = mask
		m[ref] = r
	}
	return m
}

// TestCorpusRendersGateRelations: every corpus query the gate accepts
// renders to one statement reading only gate-issued relations, by DuckDB's
// own parser.
func TestCorpusRendersGateRelations(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	var dc duckCheck
	// The check itself catches what it must.
	for sql, want := range map[string]string{
		`SELECT * FROM "lg_rel"."t_0" AS "t"`:                                "",
		`WITH "__cte1_s" AS (SELECT 1) SELECT * FROM "__cte1_s"`:             "",
		`SELECT * FROM secret`:                                               "not gate-issued",
		`SELECT * FROM "lg_rel"."t_0" WHERE a IN (SELECT a FROM "main"."x")`: "not gate-issued",
		`SELECT * FROM read_text('/etc/hostname')`:                           "table function",
		`SELECT 1; SELECT * FROM "lg_rel"."t_0"`:                             "2 statements",
	} {
		p, err := dc.check(sql)
		if err != nil || (want == "" && p != "") || !strings.Contains(p, want) {
			t.Errorf("check(%s) = %q, %v; want %q", sql, p, err, want)
		}
	}
	for sql, want := range map[string]string{
		`SELECT * FROM (SELECT a FROM "lg_rel"."t_0" AS "__lg_p" WHERE (TRUE)) AS "t"`:                   "",
		`SELECT * FROM (SELECT a FROM "lg_rel"."t_0" AS "__lg_p") AS "t", "lg_rel"."t_0" AS "t"`:         "without its policy",
		`SELECT * FROM (SELECT a FROM "lg_rel"."t_0" AS "__lg_p") AS "t" WHERE a IN (SELECT 1 FROM "x")`: "not gate-issued",
	} {
		p, err := dc.checkPolicy(sql)
		if err != nil || (want == "" && p != "") || !strings.Contains(p, want) {
			t.Errorf("checkPolicy(%s) = %q, %v; want %q", sql, p, err, want)
		}
	}
	n := 0
	for _, q := range corpusQueries(t) {
		st, err := g.Parse(q, "sales")
		if err != nil {
			continue
		}
		out, err := st.Render(rels(st))
		if err != nil {
			continue
		}
		p, err := dc.check(out)
		if err != nil {
			t.Fatal(err)
		}
		if p != "" {
			t.Errorf("%s\nrenders as %s: %s", q, out, p)
		}
		// Again with a row filter and a mask on every table.
		if len(st.Tables()) > 0 {
			out, err := st.Render(policyRels(t, g, st))
			if err != nil {
				t.Errorf("%s: with policies: %v", q, err)
				continue
			}
			if p, err := dc.checkPolicy(out); err != nil || p != "" {
				t.Errorf("%s\nrenders with policies as %s: %s %v", q, out, p, err)
			}
		}
		n++
	}
	t.Logf("%d corpus queries checked", n)
}
