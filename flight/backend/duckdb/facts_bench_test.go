package duckdb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend/duckdb"
)

// BenchmarkColumnFactForms times what the column facts save, on the
// engine, over one table version of 2M rows: a GROUP BY of two text keys
// (35 brands and 150 types, apart under the collation) and a NOT LIKE of a
// comment column (2M distinct ASCII values, lower case but for 1 in 200,
// as TPC-H's o_comment), each as the SQL
// gate prints it without facts (collated, folded) and with them
// (FoldUnique; ASCII), and as a case-sensitive engine would run it (every
// text compared as bytes): the bound the facts can reach. Each of 7 rounds
// runs every form 5 times in an order that alternates; it reports the
// min/median/max over the rounds of each form's ratio to the case-sensitive
// one (group-plain-x, group-facts-x, like-plain-x, like-facts-x). The
// whole run happens once whatever b.N is.
func BenchmarkColumnFactForms(b *testing.B) {
	ctx := context.Background()
	e, _ := newEngine(b, func(c *duckdb.Config) { c.Threads = 2 })
	rel := bindTable(b, e, "acme", "facts@1", `SELECT
		'Brand#' || (range % 5 + 1) || (range % 7 + 1) AS brand,
		['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'][range % 6 + 1] || ' ' ||
		['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'][range // 6 % 5 + 1] || ' ' ||
		['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'][range // 30 % 5 + 1] AS type,
		CASE WHEN range % 200 = 0 THEN 'Tiresias ' ELSE '' END ||
		['furiously', 'pending', 'final', 'ironic', 'regular'][(hash(range) % 5)::BIGINT + 1] || ' ' ||
		['deposits', 'accounts', 'requests', 'packages', 'ideas'][(hash(range + 1) % 5)::BIGINT + 1] || ' sleep quickly among the ' ||
		['theodolites', 'foxes', 'dolphins', 'pinto beans'][(hash(range + 2) % 4)::BIGINT + 1] || ' ' || range AS note
		FROM range(2000000)`)
	ref := sqlgate.TableRef{Schema: "bench", Name: "p"}
	relation := func(facts bool) map[sqlgate.TableRef]sqlgate.Relation {
		r := sqlgate.Relation{Schema: rel.Schema, Name: rel.Name, Columns: []string{"brand", "type", "note"}, Types: rel.Types}
		if facts {
			r.FoldUnique = []bool{true, true, false}
			r.ASCII = []bool{true, true, true}
		}
		return map[sqlgate.TableRef]sqlgate.Relation{ref: r}
	}
	gate := sqlgate.New(sqlgate.Config{})
	render := func(sql string, facts bool) string {
		st, err := gate.Parse(sql, "bench")
		if err != nil {
			b.Fatal(err)
		}
		out, err := st.Render(relation(facts))
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	const group = "SELECT brand, type, count(*) AS n FROM p GROUP BY brand, type ORDER BY brand, type"
	const like = "SELECT count(*) FROM p WHERE note NOT LIKE '%pending%deposits%'"
	forms := []struct{ name, sql string }{
		{"group-plain", render(group, false)},
		{"group-facts", render(group, true)},
		{"group-binary", "SELECT (brand COLLATE c) AS brand, (type COLLATE c) AS type, count(*) AS n FROM " + relSQL(rel) +
			" GROUP BY (brand COLLATE c), (type COLLATE c) ORDER BY 1, 2"},
		{"like-plain", render(like, false)},
		{"like-facts", render(like, true)},
		{"like-binary", "SELECT count(*) FROM " + relSQL(rel) + " WHERE note NOT LIKE '%pending%deposits%'"},
	}
	answers := map[string]string{}
	for _, f := range forms { // warm-up; the forms of a kind answer alike
		r, err := query(ctx, e, "acme", f.sql)
		if err != nil {
			b.Fatalf("%s: %v\n%s", f.name, err, f.sql)
		}
		kind, got := f.name[:strings.IndexByte(f.name, '-')], fmt.Sprint(r.values)
		if want, ok := answers[kind]; ok && got != want {
			b.Fatalf("%s answers %.200s, want %.200s", f.name, got, want)
		}
		answers[kind] = got
	}
	const rounds, perRound = 7, 5
	names := make([]string, len(forms))
	sqls := map[string]string{}
	for i, f := range forms {
		names[i], sqls[f.name] = f.name, f.sql
	}
	b.ResetTimer()
	times := alternate(b, rounds, perRound, names, func(name string) error {
		_, err := query(ctx, e, "acme", sqls[name])
		return err
	})
	b.StopTimer()
	for _, kind := range []string{"group", "like"} {
		for _, form := range []string{"plain", "facts"} {
			reportRatios(b, kind+"-"+form+"-x", times[kind+"-"+form], times[kind+"-binary"])
		}
	}
}
