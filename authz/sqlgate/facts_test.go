package sqlgate_test

import (
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// foldRels is rels with every column text, and FoldUnique set for the
// columns in unique (by name).
func foldRels(st *sqlgate.Statement, unique ...string) map[sqlgate.TableRef]sqlgate.Relation {
	m := rels(st)
	for ref, r := range m {
		r.Types = make([]string, len(r.Columns))
		r.FoldUnique = make([]bool, len(r.Columns))
		for i, c := range r.Columns {
			r.Types[i] = "VARCHAR"
			for _, u := range unique {
				r.FoldUnique[i] = r.FoldUnique[i] || u == c
			}
		}
		m[ref] = r
	}
	return m
}

// TestGroupKeys: which GROUP BY keys may group by bytes, and how Render
// prints them with and without Relation.FoldUnique. Where the raw form
// could not cover every use of the column, the key is not offered, and the
// statement prints as it does without the fact.
func TestGroupKeys(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	cases := []struct {
		sql  string
		keys []string // GroupKeys, as "table.column"
		raw  string   // a fragment of the output with FoldUnique (when keys)
	}{
		{sql: "SELECT name, count(*) FROM t GROUP BY name ORDER BY name", keys: []string{"t.name"},
			raw: `SELECT (("name" COLLATE c) COLLATE nocase.noaccent) AS "name",count(1) AS "count(*)" FROM "lg_rel"."t_0" AS "t" GROUP BY ("name" COLLATE c) ORDER BY (("name" COLLATE c) COLLATE nocase.noaccent)`},
		{sql: "SELECT t.name AS n, count(*) AS c FROM t GROUP BY t.name ORDER BY n", keys: []string{"t.name"},
			raw: `SELECT (("t"."name" COLLATE c) COLLATE nocase.noaccent) AS "n",count(1) AS "c" FROM "lg_rel"."t_0" AS "t" GROUP BY ("t"."name" COLLATE c) ORDER BY "n"`},
		{sql: "SELECT count(*) FROM t GROUP BY name, a", keys: []string{"t.name", "t.a"},
			raw: `GROUP BY ("name" COLLATE c),("a" COLLATE c)`},
		{sql: "SELECT name, sum(b) FROM t, u WHERE t.id = u.x GROUP BY name"}, // ambiguous
		{sql: "SELECT t.name, count(DISTINCT u.name) FROM t JOIN u ON t.id = u.id GROUP BY t.name", keys: []string{"t.name", "u.name"},
			raw: `count(DISTINCT "u"."name") AS "count(DISTINCT u.name)" FROM "lg_rel"."t_0" AS "t" JOIN "lg_rel"."t_1" AS "u" ON ("t"."id" = "u"."id") GROUP BY ("t"."name" COLLATE c)`},
		{sql: "SELECT count(DISTINCT name) FROM t", keys: []string{"t.name"}, raw: `SELECT count(DISTINCT "name") AS`},
		{sql: "SELECT * FROM (SELECT a, count(DISTINCT name) AS n FROM t GROUP BY a) AS d", keys: []string{"t.name"},
			raw: `count(DISTINCT "name") AS "n"`},
		{sql: "SELECT count(DISTINCT name, a) FROM t"},
		{sql: "SELECT upper(name), count(*) FROM t GROUP BY name"},
		{sql: "SELECT name, count(*) FROM t GROUP BY name HAVING name <> 'x'"},
		{sql: "SELECT name, rank() OVER (ORDER BY name) FROM t GROUP BY name"},
		{sql: "SELECT name, (SELECT count(*) FROM u WHERE u.name = t.name) FROM t GROUP BY name"},
		{sql: "SELECT name, count(*) FROM t GROUP BY name WITH ROLLUP"},
		{sql: "SELECT * FROM (SELECT name, count(*) AS c FROM t GROUP BY name) AS d"},
		{sql: "WITH d AS (SELECT name FROM t GROUP BY name) SELECT * FROM d"},
		{sql: "SELECT name FROM t GROUP BY name UNION SELECT name FROM u"},
		{sql: "SELECT name FROM t WHERE id IN (SELECT id FROM u GROUP BY name)"},
		{sql: "SELECT a AS name, count(*) FROM t GROUP BY name"},
		{sql: "SELECT n AS name FROM (SELECT name AS n FROM t) AS d GROUP BY n"},
		{sql: "SELECT name, count(*) FROM t GROUP BY name ORDER BY name COLLATE utf8mb4_bin"},
		{sql: "INSERT INTO u (name) SELECT name FROM t GROUP BY name"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			st, err := g.Parse(c.sql, "sales")
			if err != nil {
				t.Fatal(err)
			}
			if keys := refNames(st.GroupKeys(foldRels(st))); keys != strings.Join(c.keys, ",") {
				t.Fatalf("GroupKeys = %s, want %v", keys, c.keys)
			}
			// Unknown (nil) or false, and a column of another type:
			// printed as without the fact.
			plain, err := st.Render(foldRels(st))
			if err != nil {
				t.Fatal(err)
			}
			known := foldRels(st)
			for ref, r := range known {
				r.FoldUnique = nil
				known[ref] = r
			}
			if out, err := st.Render(known); err != nil || out != plain {
				t.Fatalf("FoldUnique nil: %v\n%s\nwant\n%s", err, out, plain)
			}
			intPlain, _ := st.Render(typed(foldRels(st), "INTEGER"))
			if out, err := st.Render(typed(foldRels(st, "name", "a"), "INTEGER")); err != nil || out != intPlain {
				t.Fatalf("an INTEGER column: %v\n%s\nwant\n%s", err, out, intPlain)
			}
			out, err := st.Render(foldRels(st, "name", "a"))
			if err != nil {
				t.Fatal(err)
			}
			if c.raw == "" {
				if out != plain {
					t.Fatalf("with FoldUnique but no key:\n%s\nwant\n%s", out, plain)
				}
				return
			}
			if !strings.Contains(out, c.raw) || sqlgate.CheckLexical(out) != nil {
				t.Fatalf("with FoldUnique:\n%s\nwant it to contain\n%s", out, c.raw)
			}
			// Not for a table read through a row filter, nor for a masked
			// column.
			for _, policy := range []string{"filter", "mask"} {
				rel := foldRels(st, "name", "a")
				for ref, r := range rel {
					r.Policy = &sqlgate.Policy{}
					if policy == "filter" {
						f, err := g.PrepareRowFilter("id > 0", r.Columns, sqlgate.DialectDuckDB)
						if err != nil {
							t.Fatal(err)
						}
						r.Policy.Filter = f
					} else {
						r.Policy.Masks = make([]*sqlgate.Mask, len(r.Columns))
						for i, col := range r.Columns {
							if r.Policy.Masks[i], err = g.PrepareMask("concat('x', {column})", col, r.Columns, sqlgate.DialectDuckDB); err != nil {
								t.Fatal(err)
							}
						}
					}
					rel[ref] = r
				}
				if keys := st.GroupKeys(rel); len(keys) != 0 {
					t.Errorf("with a %s: GroupKeys = %v", policy, keys)
				}
				if out, err := st.Render(rel); err != nil || strings.Contains(out, "COLLATE c)") {
					t.Errorf("with a %s: %v\n%s", policy, err, out)
				}
			}
		})
	}
}

// typed sets every column's type to typ.
func typed(m map[sqlgate.TableRef]sqlgate.Relation, typ string) map[sqlgate.TableRef]sqlgate.Relation {
	for ref, r := range m {
		for i := range r.Types {
			r.Types[i] = typ
		}
		m[ref] = r
	}
	return m
}

// TestLikeColumns: which LIKEs may compare the column as it is, and how
// Render prints them with and without Relation.Folded.
func TestLikeColumns(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	cases := []struct {
		sql     string
		cols    []string // LikeColumns, as "table.column"
		folded  string   // a fragment of the output with Folded (when cols)
		letters string   // LikeLetters, as "table.column=letters" separated by spaces
	}{
		{sql: "SELECT id FROM t WHERE name LIKE '%Ab%'", cols: []string{"t.name"}, folded: `("name" LIKE lower(strip_accents('%Ab%')))`,
			letters: "t.name=ab"},
		{sql: "SELECT id FROM t WHERE t.name NOT LIKE 'x|%%' ESCAPE '|'", cols: []string{"t.name"},
			folded: `("t"."name" NOT LIKE lower(strip_accents('x|%%')) ESCAPE '|')`, letters: "t.name=x"},
		{sql: "SELECT id FROM t WHERE name LIKE ?", cols: []string{"t.name"}, folded: `("name" LIKE lower(strip_accents($1)) ESCAPE '\')`},
		{sql: "SELECT * FROM (SELECT name FROM t WHERE a LIKE 'p%') AS d WHERE d.name LIKE 'q%'", cols: []string{"t.a"},
			folded: `("a" LIKE lower(strip_accents('p%')))`, letters: "t.a=p"},
		{sql: "SELECT id FROM t WHERE name LIKE 'Zy%' OR name NOT LIKE '%zz%' OR a LIKE '%1%' OR a LIKE '%é%'", cols: []string{"t.name", "t.a"},
			folded: `("name" LIKE lower(strip_accents('Zy%')))`, letters: "t.name=yz"},
		{sql: "SELECT id FROM t WHERE name LIKE 'x' COLLATE utf8mb4_bin"},
		{sql: "SELECT id FROM t WHERE upper(name) LIKE 'X%'"},
		{sql: "SELECT id FROM t WHERE 'abc' LIKE name"},
		{sql: "SELECT id FROM t, u WHERE name LIKE 'x%'"}, // ambiguous
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			st, err := g.Parse(c.sql, "sales")
			if err != nil {
				t.Fatal(err)
			}
			if cols := refNames(st.LikeColumns(foldRels(st))); cols != strings.Join(c.cols, ",") {
				t.Fatalf("LikeColumns = %s, want %v", cols, c.cols)
			}
			var letters []string
			for k, set := range st.LikeLetters(foldRels(st)) {
				l := k.Table.Name + "." + k.Column + "="
				for i := range 26 {
					if set&(1<<i) != 0 {
						l += string(rune('a' + i))
					}
				}
				letters = append(letters, l)
			}
			slices.Sort(letters)
			if strings.Join(letters, " ") != c.letters {
				t.Fatalf("LikeLetters = %v, want %s", letters, c.letters)
			}
			plain, err := st.Render(foldRels(st))
			if err != nil {
				t.Fatal(err)
			}
			rel := foldedRels(foldRels(st), nil)
			out, err := st.Render(rel)
			if err != nil {
				t.Fatal(err)
			}
			if c.folded == "" {
				if out != plain {
					t.Fatalf("with Folded but no column:\n%s\nwant\n%s", out, plain)
				}
				return
			}
			if !strings.Contains(out, c.folded) || sqlgate.CheckLexical(out) != nil {
				t.Fatalf("with Folded:\n%s\nwant it to contain\n%s", out, c.folded)
			}
			if strings.Contains(plain, c.folded) {
				t.Fatalf("without Folded:\n%s", plain)
			}
			filter, err := g.PrepareRowFilter("id > 0", cols0(rel), sqlgate.DialectDuckDB)
			if err != nil {
				t.Fatal(err)
			}
			filtered := foldedRels(foldRels(st), &sqlgate.Policy{Filter: filter})
			if got := st.LikeColumns(filtered); len(got) != 0 {
				t.Errorf("with a row filter: LikeColumns = %v", got)
			}
			if out, err := st.Render(filtered); err != nil || strings.Contains(out, c.folded) {
				t.Errorf("with a row filter: %v\n%s", err, out)
			}
		})
	}
}

// TestLikeASCIIColumn: with Relation.ASCII (and not Folded), a LIKE of a
// column against an ASCII pattern prints its ASCII form alone; a pattern
// that is not an ASCII literal keeps the folded form. With NoUpper, a
// pattern none of whose letters occurs in upper case in the column is
// matched exactly, lower-cased; one or two that occur are looked for first;
// more keep the ASCII form. Under a row filter none of it applies.
func TestLikeASCIIColumn(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	const unknown = "?"
	cases := []struct {
		sql     string
		letters string // the letters the column holds, or unknown
		want    string
	}{
		{"SELECT id FROM t WHERE name LIKE '%Abc%'", unknown, `WHERE regexp_matches("name", '(?s)[aA][bB][cC]')`},
		{"SELECT id FROM t WHERE name NOT LIKE 'a%b'", unknown,
			`WHERE (NOT CASE WHEN (contains("name", 'A') OR contains("name", 'B')) THEN regexp_matches("name", '(?s)\A[aA].*[bB]\z') ELSE ("name" LIKE 'a%b') END)`},
		{"SELECT id FROM t WHERE name NOT LIKE '%1%'", unknown, `WHERE (NOT ("name" LIKE '%1%'))`},
		{"SELECT id FROM t WHERE name LIKE '%é%'", unknown, `WHERE (lower(strip_accents("name")) LIKE lower(strip_accents('%é%')))`},
		{"SELECT id FROM t WHERE name LIKE ?", unknown, `WHERE (lower(strip_accents("name")) LIKE lower(strip_accents($1)) ESCAPE '\')`},
		{"SELECT id FROM t WHERE name LIKE '%Ab%'", "", `WHERE ("name" LIKE '%ab%')`},
		{"SELECT id FROM t WHERE name LIKE '%Ab%'", "CXYZ", `WHERE ("name" LIKE '%ab%')`},
		{"SELECT id FROM t WHERE name NOT LIKE 'A!%_%' ESCAPE '!'", "B", `WHERE (NOT ("name" LIKE 'a!%_%' ESCAPE '!'))`},
		{"SELECT id FROM t WHERE name NOT LIKE '%pending%deposits%'", "Tpendigos",
			`WHERE (NOT CASE WHEN (contains("name", 'T')) THEN regexp_matches("name", '(?s)[pP][eE][nN][dD][iI][nN][gG].*[dD][eE][pP][oO][sS][iI][tT][sS]') ELSE ("name" LIKE '%pending%deposits%') END)`},
		{"SELECT id FROM t WHERE name LIKE 'Ab%'", "BAZab",
			`WHERE CASE WHEN (contains("name", 'A') OR contains("name", 'B')) THEN regexp_matches("name", '(?s)\A[aA][bB]') ELSE ("name" LIKE 'ab%') END`},
		{"SELECT id FROM t WHERE name LIKE 'Abc%'", "ABCabc", `WHERE regexp_matches("name", '(?s)\A[aA][bB][cC]')`},
		{"SELECT id FROM t WHERE name NOT LIKE 'medium polished%'", "MEDIUPOLISHTN", `WHERE (NOT ("name" LIKE 'MEDIUM POLISHED%'))`},
		{"SELECT id FROM t WHERE name LIKE 'abc%'", "ABCDEFc",
			`WHERE CASE WHEN (contains("name", 'c')) THEN regexp_matches("name", '(?s)\A[aA][bB][cC]') ELSE ("name" LIKE 'ABC%') END`},
		{"SELECT id FROM t WHERE name LIKE '%é%'", "", `WHERE (lower(strip_accents("name")) LIKE lower(strip_accents('%é%')))`},
	}
	for _, c := range cases {
		st, err := g.Parse(c.sql, "sales")
		if err != nil {
			t.Fatal(err)
		}
		facts := func(policy *sqlgate.Policy) map[sqlgate.TableRef]sqlgate.Relation {
			rel := foldRels(st)
			for ref, r := range rel {
				r.ASCII = make([]bool, len(r.Columns))
				for i := range r.ASCII {
					r.ASCII[i] = true
				}
				if c.letters != unknown {
					noUpper, noLower := lacking(c.letters)
					r.NoUpper, r.NoLower = make([]uint32, len(r.Columns)), make([]uint32, len(r.Columns))
					for i := range r.Columns {
						r.NoUpper[i], r.NoLower[i] = noUpper, noLower
					}
				}
				r.Policy = policy
				rel[ref] = r
			}
			return rel
		}
		out, err := st.Render(facts(nil))
		if err != nil || !strings.HasSuffix(out, c.want) || sqlgate.CheckLexical(out) != nil {
			t.Errorf("%s (%s): %v\n%s\nwant it to end in\n%s", c.sql, c.letters, err, out, c.want)
		}
		filter, err := g.PrepareRowFilter("id > 0", cols0(foldRels(st)), sqlgate.DialectDuckDB)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := st.Render(foldRels(st))
		if err != nil {
			t.Fatal(err)
		}
		filtered, err := st.Render(facts(&sqlgate.Policy{Filter: filter}))
		if err != nil || !strings.Contains(filtered, plain[strings.Index(plain, " WHERE "):]) {
			t.Errorf("%s (%s) under a row filter: %v\n%s\nwant the form without facts\n%s", c.sql, c.letters, err, filtered, plain)
		}
	}
}

// foldedRels marks every column of m Folded, under policy.
func foldedRels(m map[sqlgate.TableRef]sqlgate.Relation, policy *sqlgate.Policy) map[sqlgate.TableRef]sqlgate.Relation {
	for ref, r := range m {
		r.Folded = make([]bool, len(r.Columns))
		for i := range r.Folded {
			r.Folded[i] = true
		}
		r.Policy = policy
		m[ref] = r
	}
	return m
}

// refNames prints refs as "table.column" separated by commas.
func refNames(refs []sqlgate.ColumnRef) string {
	names := make([]string, len(refs))
	for i, k := range refs {
		names[i] = k.Table.Name + "." + k.Column
	}
	return strings.Join(names, ",")
}

// cols0 is the columns of some relation of m (the test tables have the
// same).
func cols0(m map[sqlgate.TableRef]sqlgate.Relation) []string {
	for _, r := range m {
		return r.Columns
	}
	return nil
}

// TestFoldedComparison: an operand whose values are ASCII and their own
// fold (a column Relation.ASCII and Folded mark, or a substring, left, right
// or lower of one) compared with ASCII text literals is compared as bytes
// with the lower-cased literals; anything else — another operand, a
// non-ASCII or numeric-looking literal, a missing fact, a row filter — keeps
// the collation. CompareColumns names the columns worth the facts.
func TestFoldedComparison(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	cases := []struct {
		sql  string
		cols string // CompareColumns, as "table.column" separated by commas
		want string // the WHERE clause with the facts ("" for as without)
	}{
		{"SELECT id FROM t WHERE name = 'AbC'", "t.name", `WHERE (("name" COLLATE c) = 'abc')`},
		{"SELECT id FROM t WHERE 'X' <> t.name", "t.name", `WHERE ('x' <> ("t"."name" COLLATE c))`},
		{"SELECT id FROM t WHERE substring(name, 1, 2) IN ('20', 'Ab') AND left(a, 1) < 'Q'", "t.name,t.a",
			`WHERE (((substring("name", 1, 2) COLLATE c) IN ('20', 'ab')) AND ((left("a", 1) COLLATE c) < 'q'))`},
		{"SELECT id FROM t WHERE lower(right(name, 3)) NOT IN ('x', 'Y')", "t.name", `WHERE ((lower(right("name", 3)) COLLATE c) NOT IN ('x', 'y'))`},
		{"SELECT id FROM t WHERE name <=> 'Q'", "t.name", `WHERE (("name" COLLATE c) IS NOT DISTINCT FROM 'q')`},
		{"SELECT id FROM t WHERE name = 'é'", "", ""},
		{"SELECT id FROM t WHERE name IN ('a', 'é')", "", ""},
		{"SELECT id FROM t WHERE name = a", "", ""},
		{"SELECT id FROM t WHERE concat(name, 'x') = 'ax'", "", ""},
		{"SELECT id FROM t WHERE substring(name, a, 2) = 'ab'", "", ""},
		{"SELECT id FROM t WHERE name = '1.5'", "", ""},
		{"SELECT id FROM t WHERE name = ?", "", ""},
		{"SELECT id FROM t WHERE name IN (SELECT a FROM t)", "", ""},
		{"SELECT id FROM t WHERE name COLLATE utf8mb4_bin = 'A'", "", ""},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			st, err := g.Parse(c.sql, "sales")
			if err != nil {
				t.Fatal(err)
			}
			if cols := refNames(st.CompareColumns(foldRels(st))); cols != c.cols {
				t.Fatalf("CompareColumns = %s, want %s", cols, c.cols)
			}
			plain, err := st.Render(foldRels(st))
			if err != nil {
				t.Fatal(err)
			}
			facts := func(policy *sqlgate.Policy, ascii bool) map[sqlgate.TableRef]sqlgate.Relation {
				rel := foldedRels(foldRels(st), policy)
				for ref, r := range rel {
					r.ASCII = make([]bool, len(r.Columns))
					for i := range r.ASCII {
						r.ASCII[i] = ascii
					}
					rel[ref] = r
				}
				return rel
			}
			out, err := st.Render(facts(nil, true))
			switch {
			case err != nil:
				t.Fatal(err)
			case c.want == "" && out != plain:
				t.Fatalf("with the facts:\n%s\nwant as without\n%s", out, plain)
			case c.want != "" && (!strings.HasSuffix(out, c.want) || sqlgate.CheckLexical(out) != nil):
				t.Fatalf("with the facts:\n%s\nwant it to end in\n%s", out, c.want)
			}
			if out, err := st.Render(facts(nil, false)); err != nil || out != plain {
				t.Errorf("Folded without ASCII: %v\n%s", err, out)
			}
			filter, err := g.PrepareRowFilter("id > 0", cols0(foldRels(st)), sqlgate.DialectDuckDB)
			if err != nil {
				t.Fatal(err)
			}
			filtered := foldRels(st)
			for ref, r := range filtered {
				r.Policy = &sqlgate.Policy{Filter: filter}
				filtered[ref] = r
			}
			want, err := st.Render(filtered)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := st.Render(facts(&sqlgate.Policy{Filter: filter}, true)); err != nil || out != want {
				t.Errorf("under a row filter: %v\n%s\nwant as without the facts\n%s", err, out, want)
			}
		})
	}
}
