package flight

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// sqlRecorder is the engine, recording the SQL it is given to run.
type sqlRecorder struct {
	*duckdb.Engine
	mu   sync.Mutex
	sqls []string
}

func (r *sqlRecorder) Execute(ctx context.Context, tenant, sql string, args []any) (array.RecordReader, error) {
	r.mu.Lock()
	r.sqls = append(r.sqls, sql)
	r.mu.Unlock()
	return r.Engine.Execute(ctx, tenant, sql, args)
}

// recordingLake is newLake with its engine recording the SQL it runs.
func recordingLake(t *testing.T) (*lake, *sqlRecorder) {
	var rec *sqlRecorder
	l := newLake(t, func(c *Config) {
		rec = &sqlRecorder{Engine: c.Backend.(*duckdb.Engine)}
		c.Backend = rec
	})
	return l, rec
}

// take returns the SQL run since the last call.
func (r *sqlRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sqls
	r.sqls = nil
	return out
}

// TestGroupByTextFoldUnique: a GROUP BY of a text column groups by the
// column's bytes exactly when that forms the collation's groups (the
// statement's own SELECT, the column's values apart under the collation,
// no row filter or mask, not used in an expression), and the answer is
// MySQL's either way: ordered under the collation by name, alias or
// position, and with
// the values that differ only by case or accents in one group where they
// exist or a mask makes them.
func TestGroupByTextFoldUnique(t *testing.T) {
	l, rec := recordingLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	create := func(name string, values ...string) {
		t.Helper()
		var parts []string
		for _, v := range values {
			parts = append(parts, "SELECT '"+v+"' AS brand, 1 AS n")
		}
		if _, err := cl.ExecuteUpdate(ctx, "CREATE TABLE sales."+name+" AS "+strings.Join(parts, " UNION ALL ")); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
	// Binary order would put every upper-case letter first.
	create("uniq", "Brand#2", "apple", "Brand#1", "brand#3", "Brand#1", "Zebra")
	create("cased", "Brand#1", "brand#1", "Brand#2", "BRAND#1")
	create("accented", "Ärger", "arger", "Arger", "b")
	create("masked", "apple", "Brand#1", "Brand#2")
	create("filtered", "apple", "Brand#1", "Brand#2")
	l.cat.set("sales.filtered", func(tb *lakeTable) {
		tb.versions[len(tb.versions)-1].Policy = &backend.TablePolicy{RowFilter: "brand <> 'apple'"}
	})
	l.cat.set("sales.masked", func(tb *lakeTable) {
		tb.versions[len(tb.versions)-1].Policy = &backend.TablePolicy{Masks: []backend.ColumnMask{{
			Column: "brand", Mask: "CASE WHEN {column} = 'apple' THEN 'X' WHEN {column} = 'Brand#1' THEN 'x' ELSE {column} END"}}}
	})
	rec.take()

	grouped := func(table string) string {
		return "SELECT brand, count(*) AS n FROM sales." + table + " GROUP BY brand ORDER BY brand"
	}
	cases := []struct {
		name  string
		sql   string
		want  [][]string // nil: compare counts only (which value of a merged group shows is the engine's)
		count []string
		raw   bool
	}{
		{name: "fold-unique", sql: grouped("uniq"), raw: true,
			want: [][]string{{"apple", "1"}, {"Brand#1", "2"}, {"Brand#2", "1"}, {"brand#3", "1"}, {"Zebra", "1"}}},
		{name: "fold-unique, qualified, aliased", raw: true,
			sql:  "SELECT u.brand AS b, sum(n) AS total FROM sales.uniq AS u GROUP BY u.brand ORDER BY b DESC",
			want: [][]string{{"Zebra", "1"}, {"brand#3", "1"}, {"Brand#2", "1"}, {"Brand#1", "2"}, {"apple", "1"}}},
		{name: "ordered by position", raw: true,
			sql:  "SELECT brand, count(*) AS n FROM sales.uniq GROUP BY brand ORDER BY 1 DESC",
			want: [][]string{{"Zebra", "1"}, {"brand#3", "1"}, {"Brand#2", "1"}, {"Brand#1", "2"}, {"apple", "1"}}},
		{name: "ordered under a binary collation",
			sql:  "SELECT brand, count(*) AS n FROM sales.uniq GROUP BY brand ORDER BY brand COLLATE utf8mb4_bin",
			want: [][]string{{"Brand#1", "2"}, {"Brand#2", "1"}, {"Zebra", "1"}, {"apple", "1"}, {"brand#3", "1"}}},
		{name: "a derived table, compared under the collation outside",
			sql:  "SELECT brand FROM (SELECT brand FROM sales.uniq GROUP BY brand) AS d WHERE brand = 'APPLE' OR brand = 'BRAND#3' ORDER BY brand",
			want: [][]string{{"apple"}, {"brand#3"}}},
		{name: "case collisions", sql: grouped("cased"), count: []string{"3", "1"}},
		{name: "accent collisions", sql: grouped("accented"), count: []string{"3", "1"}},
		{name: "masked", sql: grouped("masked"), count: []string{"1", "2"}},
		{name: "row filter", sql: grouped("filtered"), want: [][]string{{"Brand#1", "1"}, {"Brand#2", "1"}}},
		{name: "used in an expression", sql: "SELECT upper(brand) AS b, count(*) AS n FROM sales.uniq GROUP BY brand ORDER BY b",
			want: [][]string{{"APPLE", "1"}, {"BRAND#1", "2"}, {"BRAND#2", "1"}, {"BRAND#3", "1"}, {"ZEBRA", "1"}}},
		{name: "in HAVING", sql: "SELECT brand, count(*) AS n FROM sales.uniq GROUP BY brand HAVING brand <> 'brand#1' ORDER BY brand",
			want: [][]string{{"apple", "1"}, {"Brand#2", "1"}, {"brand#3", "1"}, {"Zebra", "1"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for run := range 2 { // planned, then from the kept plan
				rows := mustQuery(t, ctx, cl, c.sql)
				if c.want != nil && !slices.EqualFunc(rows, c.want, slices.Equal) {
					t.Fatalf("run %d: %v, want %v", run, rows, c.want)
				}
				if c.count != nil {
					var got []string
					for _, r := range rows {
						got = append(got, r[len(r)-1])
					}
					slices.Sort(got)
					want := slices.Sorted(slices.Values(c.count))
					if !slices.Equal(got, want) {
						t.Fatalf("run %d: group counts %v (%v), want %v", run, got, rows, want)
					}
				}
				sqls := rec.take()
				raw := slices.ContainsFunc(sqls, func(s string) bool { return strings.Contains(s, "GROUP BY (") })
				if raw != c.raw {
					t.Fatalf("run %d: grouped by bytes %v, want %v: %q", run, raw, c.raw, sqls)
				}
			}
		})
	}
}

// TestLikeFoldedColumn: LIKE compares a column as it is exactly when every
// value of its version is its own fold, and answers under MySQL's
// collation either way (the column folded, or matched by its ASCII form
// when every value is ASCII): case and accents of the pattern and of the
// values ignored, NULL not matched by LIKE or NOT LIKE.
func TestLikeFoldedColumn(t *testing.T) {
	l, rec := recordingLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	for _, u := range []string{
		"CREATE TABLE sales.notes AS SELECT 'pending deposits' AS note, 1 AS n UNION ALL SELECT 'special requests', 2 UNION ALL SELECT NULL, 3",
		"CREATE TABLE sales.mixed AS SELECT 'Pending deposits' AS note, 1 AS n UNION ALL SELECT 'café pending', 2 UNION ALL SELECT 'special requests', 3",
		"CREATE TABLE sales.cased AS SELECT 'Pending deposits' AS note, 1 AS n UNION ALL SELECT 'special REQUESTS', 2 UNION ALL SELECT NULL, 3",
	} {
		if _, err := cl.ExecuteUpdate(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	rec.take()
	cases := []struct {
		sql    string
		want   string // the n of the rows, in order
		folded bool   // the column compared as it is
		ascii  bool   // the column matched by the ASCII form alone
	}{
		{"SELECT n FROM sales.notes WHERE note LIKE '%PENDING%' ORDER BY n", "1", true, false},
		{"SELECT n FROM sales.notes WHERE note LIKE '%pÉnding%' ORDER BY n", "1", true, false},
		{"SELECT n FROM sales.notes WHERE note NOT LIKE '%Deposits' ORDER BY n", "2", true, false},
		{"SELECT n FROM sales.notes WHERE note LIKE 'special%' ORDER BY n", "2", true, false},
		{"SELECT n FROM sales.mixed WHERE note LIKE '%PENDING%' ORDER BY n", "1,2", false, false},
		{"SELECT n FROM sales.mixed WHERE note LIKE '%cafe%' ORDER BY n", "2", false, false},
		{"SELECT n FROM sales.mixed WHERE note NOT LIKE 'pending%' ORDER BY n", "2,3", false, false},
		{"SELECT n FROM sales.cased WHERE note LIKE '%requests' ORDER BY n", "2", false, true},
		{"SELECT n FROM sales.cased WHERE note NOT LIKE 'PENDING%' ORDER BY n", "2", false, true},
		{"SELECT n FROM sales.cased WHERE note LIKE '%pÉnding%' ORDER BY n", "1", false, false},
	}
	for _, c := range cases {
		for run := range 2 {
			rows := mustQuery(t, ctx, cl, c.sql)
			var got []string
			for _, r := range rows {
				got = append(got, r[0])
			}
			if strings.Join(got, ",") != c.want {
				t.Fatalf("%s (run %d): %v, want %s", c.sql, run, got, c.want)
			}
			sqls := rec.take()
			folded := slices.ContainsFunc(sqls, func(s string) bool {
				return strings.Contains(s, `"note" LIKE lower(`) || strings.Contains(s, `"note" NOT LIKE lower(`)
			})
			if folded != c.folded {
				t.Fatalf("%s (run %d): column compared as it is %v, want %v: %q", c.sql, run, folded, c.folded, sqls)
			}
			ascii := slices.ContainsFunc(sqls, func(s string) bool { return strings.Contains(s, "regexp_matches") && !strings.Contains(s, "strlen(") })
			if ascii != c.ascii {
				t.Fatalf("%s (run %d): ASCII form alone %v, want %v: %q", c.sql, run, ascii, c.ascii, sqls)
			}
		}
	}
}

// TestColumnFactsAnswerAlike runs grouped, COUNT(DISTINCT …) and LIKE
// statements of many shapes on two servers over the same data, one whose
// engine answers column facts (they hold for some text columns of the
// tables, which mix case, hold NULLs and values that sort differently in
// bytes than under the collation) and one whose engine does not, and
// requires the same answers, in the same order where the statement orders
// them, and the same refusals.
func TestColumnFactsAnswerAlike(t *testing.T) {
	with, rec := recordingLake(t)
	without, _ := countingLake(t) // no column facts through the counter
	ctx := bearerCtx(aliceToken)
	setup := []string{
		`CREATE TABLE sales.p AS SELECT 1 AS id, 'apple' AS brand, 'Red' AS color, 'pending deposits' AS note, 10 AS qty
		 UNION ALL SELECT 2, 'Brand#1', 'red ', 'Tiresias sleeps', 20
		 UNION ALL SELECT 3, 'Brand#2', 'Blue', 'special requests', 30
		 UNION ALL SELECT 4, 'brand#3', NULL, NULL, 40
		 UNION ALL SELECT 5, 'Zebra', 'Red', 'pending Deposits', 50
		 UNION ALL SELECT 6, NULL, 'blue', 'x', 60
		 UNION ALL SELECT 7, 'Brand#1', 'Green', 'final', 70`,
		`CREATE TABLE sales.s AS SELECT 1 AS id, 'Acme' AS name UNION ALL SELECT 2, 'acme co' UNION ALL SELECT 3, 'Bolt' UNION ALL SELECT 5, 'bolt inc'`,
		`CREATE TABLE sales.notes AS SELECT 1 AS id, 'pending deposits' AS note UNION ALL SELECT 2, 'special requests' UNION ALL SELECT 3, NULL`,
		`CREATE TABLE sales.k AS SELECT 1 AS id, 'MEDIUM POLISHED TIN' AS kind UNION ALL SELECT 2, 'PROMO BRUSHED' UNION ALL SELECT 3, NULL
		 UNION ALL SELECT 4, 'SMALL PLATEd' UNION ALL SELECT 5, 'LARGE ANODIZED' UNION ALL SELECT 6, 'MEDIUM POLISHED'`,
	}
	for _, l := range []*lake{with, without} {
		cl := l.client(t)
		for _, u := range setup {
			if _, err := cl.ExecuteUpdate(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	queries := []string{
		"SELECT brand, count(*) AS n FROM sales.p GROUP BY brand ORDER BY brand",
		"SELECT brand, count(*) AS n FROM sales.p GROUP BY brand ORDER BY brand DESC",
		"SELECT brand, sum(qty) FROM sales.p GROUP BY brand ORDER BY 1",
		"SELECT brand AS b, color AS c, count(*) FROM sales.p GROUP BY brand, color ORDER BY b, c",
		"SELECT color, brand, max(qty) FROM sales.p GROUP BY brand, color ORDER BY 2 DESC, 1",
		"SELECT p.brand, count(*) FROM sales.p AS p GROUP BY p.brand ORDER BY p.brand",
		"SELECT count(*) FROM sales.p GROUP BY brand ORDER BY 1",
		"SELECT brand FROM sales.p GROUP BY brand HAVING count(*) > 1",
		"SELECT brand, count(*) FROM sales.p GROUP BY brand HAVING brand > 'b' ORDER BY brand",
		"SELECT upper(brand), count(*) FROM sales.p GROUP BY brand ORDER BY 1",
		"SELECT brand, count(*) FROM sales.p GROUP BY brand ORDER BY count(*) DESC, brand LIMIT 3",
		"SELECT brand, count(*) FROM sales.p GROUP BY brand ORDER BY brand LIMIT 2 OFFSET 2",
		"SELECT DISTINCT brand FROM sales.p GROUP BY brand ORDER BY brand",
		"SELECT brand, count(DISTINCT color) FROM sales.p GROUP BY brand ORDER BY brand",
		"SELECT count(DISTINCT brand), count(DISTINCT color) FROM sales.p",
		"SELECT color, count(DISTINCT brand) AS n FROM sales.p GROUP BY color ORDER BY color, n",
		"SELECT * FROM (SELECT count(DISTINCT brand) AS n FROM sales.p WHERE qty > 15) AS d",
		"SELECT brand, rank() OVER (ORDER BY sum(qty)) AS r FROM sales.p GROUP BY brand ORDER BY r, brand",
		"SELECT brand, (SELECT count(*) FROM sales.s WHERE s.id = max(p.id)) FROM sales.p GROUP BY brand ORDER BY brand",
		"SELECT brand, count(*) FROM sales.p WHERE brand IN (SELECT brand FROM sales.p GROUP BY brand) GROUP BY brand ORDER BY brand",
		"SELECT * FROM (SELECT brand, count(*) AS n FROM sales.p GROUP BY brand) AS d WHERE brand = 'BRAND#1'",
		"WITH g AS (SELECT brand FROM sales.p GROUP BY brand) SELECT brand FROM g WHERE brand = 'ZEBRA'",
		"SELECT brand FROM sales.p GROUP BY brand UNION SELECT name FROM sales.s ORDER BY 1",
		"SELECT brand, color, count(*) FROM sales.p GROUP BY brand, color WITH ROLLUP ORDER BY brand, color",
		"SELECT s.name, count(*) FROM sales.p JOIN sales.s ON p.id = s.id GROUP BY s.name ORDER BY s.name",
		"SELECT a.brand, count(*) FROM sales.p AS a JOIN sales.p AS b ON a.id = b.id GROUP BY a.brand ORDER BY a.brand",
		"SELECT brand, color FROM sales.p GROUP BY brand ORDER BY brand",
		"SELECT brand AS color, count(*) FROM sales.p GROUP BY color ORDER BY 1",
		"SELECT brand, count(*) FROM sales.p GROUP BY brand ORDER BY brand COLLATE utf8mb4_bin",
		"SELECT brand = 'BRAND#1' AS is1, count(*) FROM sales.p GROUP BY brand ORDER BY brand",
		"SELECT concat(brand, '!') AS b, count(*) FROM sales.p GROUP BY brand ORDER BY b",
		"SELECT id, note FROM sales.p WHERE note LIKE '%PENDING%' ORDER BY id",
		"SELECT id FROM sales.p WHERE note NOT LIKE '%deposits' ORDER BY id",
		"SELECT id FROM sales.p WHERE color LIKE 'r%' ORDER BY id",
		"SELECT id FROM sales.notes WHERE note LIKE '%pÉnding%' ORDER BY id",
		"SELECT id FROM sales.notes WHERE note NOT LIKE 'special%' ORDER BY id",
		"SELECT count(*) FROM sales.p JOIN sales.notes ON p.id = notes.id AND notes.note NOT LIKE '%DEPOSITS%'",
		"SELECT brand, count(*) FROM sales.p WHERE note LIKE '%e%' GROUP BY brand ORDER BY brand",
		"SELECT id FROM sales.p WHERE note NOT LIKE '%pending%deposits%' ORDER BY id",
		"SELECT id FROM sales.p WHERE note LIKE '%SLEEP%' ORDER BY id",
		"SELECT id FROM sales.p WHERE note LIKE '%ti%' ORDER BY id",
		"SELECT id FROM sales.p WHERE note LIKE 'tiresias%' OR note LIKE '_ending_deposits' ORDER BY id",
		"SELECT id, note LIKE '%DEPOSIT%', note NOT LIKE 'f%l' FROM sales.p ORDER BY id",
		"SELECT id FROM sales.k WHERE kind NOT LIKE 'medium polished%' ORDER BY id",
		"SELECT id FROM sales.k WHERE kind LIKE 'Promo%' OR kind LIKE '%anodized' ORDER BY id",
		"SELECT id FROM sales.k WHERE kind LIKE '%plated' ORDER BY id",
		"SELECT id, kind LIKE '%ed' FROM sales.k ORDER BY id",
		"SELECT id FROM sales.notes WHERE note = 'PENDING DEPOSITS' ORDER BY id",
		"SELECT id FROM sales.notes WHERE substring(note, 1, 7) IN ('Pending', 'SPECIAL', 'x') ORDER BY id",
		"SELECT id FROM sales.notes WHERE left(note, 1) < 'Q' OR note >= 'Special Z' ORDER BY id",
		"SELECT id, note = 'pending DEPOSITS', lower(right(note, 8)) NOT IN ('REQUESTS'), note <=> 'PENDING deposits' FROM sales.notes ORDER BY id",
		"SELECT id FROM sales.k WHERE kind = 'promo brushed' OR substring(kind, 1, 6) IN ('Medium') ORDER BY id",
		"SELECT id FROM sales.p WHERE note = 'TIRESIAS SLEEPS' OR left(note, 4) = 'FINA' ORDER BY id",
	}
	ordered := func(q string) bool { return strings.Contains(q, "ORDER BY") }
	clW, clWo := with.client(t), without.client(t)
	rawSeen := 0
	for _, q := range queries {
		got, errW := runQuery(ctx, clW, q)
		want, errWo := runQuery(ctx, clWo, q)
		if (errW == nil) != (errWo == nil) {
			t.Errorf("%s: with facts %v, without %v", q, errW, errWo)
			continue
		}
		if !ordered(q) {
			slices.SortFunc(got, slices.Compare)
			slices.SortFunc(want, slices.Compare)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s:\nwith facts    %v\nwithout facts %v", q, got, want)
		}
		for _, s := range rec.take() {
			if strings.Contains(s, "COLLATE c)") || strings.Contains(s, `count(DISTINCT "brand")`) ||
				strings.Contains(s, "regexp_matches") && !strings.Contains(s, "strlen(") ||
				strings.Contains(s, `"note" LIKE lower(`) || strings.Contains(s, `"note" NOT LIKE lower(`) ||
				strings.Contains(s, `contains("`) || strings.Contains(s, `("note" LIKE '`) || strings.Contains(s, `("kind" LIKE '`) {
				rawSeen++
			}
		}
	}
	t.Logf("facts changed the SQL of %d statements", rawSeen)
	if rawSeen < 10 {
		t.Errorf("facts changed the SQL of %d statements only: the comparison proves little", rawSeen)
	}
}
