package sqlgate

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"os"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// agrees reports whether the engine's type of a result column is the one
// the type pass inferred (a DECIMAL with the same scale).
func agrees(t mtype, duck string) bool {
	switch t.kind {
	case tInt:
		return engineType(duck).kind == tInt
	case tBool:
		return duck == "BOOLEAN"
	case tDecimal:
		e := engineType(duck)
		return e.kind == tDecimal && e.scale == t.scale && (t.prec == 0 || t.prec == e.prec)
	case tDouble:
		return duck == "DOUBLE"
	case tString:
		return duck == "VARCHAR"
	case tDate:
		return duck == "DATE"
	case tDatetime:
		return duck == "TIMESTAMP"
	case tTime:
		return duck == "TIME"
	}
	return true // not inferred: anything
}

// TestTypePassAgreesWithEngine: for every query of the dialect corpus,
// over the corpus's tables with their engine types, every result column
// whose type the type pass infers has that type in the engine (DuckDB's
// description of the rendered SQL), DECIMAL scales included: the typed
// forms rescale by the inferred scale, so a wrong one would be a wrong
// value.
func TestTypePassAgreesWithEngine(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	setup, err := os.ReadFile("../../integration/testdata/conformance/dialect/setup.duckdb.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(setup)); err != nil {
		t.Fatal(err)
	}
	rels := map[string]Relation{}
	rows, err := db.Query("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' ORDER BY table_name, ordinal_position")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tb, c, typ string
		if err := rows.Scan(&tb, &c, &typ); err != nil {
			t.Fatal(err)
		}
		r := rels[tb]
		r.Schema, r.Name = "main", tb
		r.Columns, r.Types = append(r.Columns, c), append(r.Types, typ)
		rels[tb] = r
	}
	rows.Close()
	g := New(Config{})
	checked, typed := 0, 0
	for _, name := range []string{"../../integration/testdata/conformance/dialect/corpus.jsonl", "../../integration/testdata/conformance/extra.jsonl"} {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			var c struct{ ID, MySQL string }
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatal(err)
			}
			st, err := g.Parse(c.MySQL, "sales")
			if err != nil {
				continue
			}
			m := map[TableRef]Relation{}
			for _, r := range st.Tables() {
				m[r] = rels[r.Name]
			}
			out, err := st.Render(m)
			if err != nil {
				continue
			}
			res, err := db.Query("DESCRIBE " + out)
			if err != nil {
				continue // refused by the engine
			}
			var duck []string
			for res.Next() {
				var col, typ string
				var null, key, def, extra sql.NullString
				if err := res.Scan(&col, &typ, &null, &key, &def, &extra); err != nil {
					t.Fatal(err)
				}
				duck = append(duck, typ)
			}
			res.Close()
			ty := &typer{info: st.types, rel: m, memo: make(map[ast.Node]mtype)}
			cols := ty.outputs(st.root)
			if len(cols) != len(duck) {
				continue
			}
			checked++
			for i, col := range cols {
				if col.t.kind != tUnknown && col.t.kind != tNull {
					typed++
				}
				if !agrees(col.t, duck[i]) {
					t.Errorf("%s: column %d (%s) typed %s, the engine's is %s\n%s", c.ID, i+1, col.name, col.t, duck[i], c.MySQL)
				}
			}
		}
		f.Close()
	}
	t.Logf("%d queries, %d typed columns", checked, typed)
	if checked < 200 {
		t.Errorf("only %d queries checked", checked)
	}
}
