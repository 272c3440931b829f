package sqlgate_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// typesSetup is a table with a column of every engine type the type pass
// reads; the ties (x.xx5 at scale 6, half cents) are where rounding modes
// differ.
const typesSetup = `CREATE SCHEMA lg_rel;
CREATE TABLE lg_rel.t_orders AS SELECT * FROM (VALUES
 (1, 'a', CAST(10.00 AS DECIMAL(12,2)), 3, 2.5, DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00', TRUE),
 (2, 'a', CAST(10.01 AS DECIMAL(12,2)), 4, 3.5, DATE '1969-12-31', TIMESTAMP '2024-01-02 00:00:01', FALSE),
 (3, 'b', CAST(-0.05 AS DECIMAL(12,2)), -7, 0.125, DATE '2024-03-01', TIMESTAMP '2024-01-02 00:00:01.5', TRUE),
 (4, 'b', CAST(0.10 AS DECIMAL(12,2)), NULL, NULL, NULL, NULL, NULL)
) v(id, grp, total, qty, price, order_date, created_at, flag);
ALTER TABLE lg_rel.t_orders ALTER id TYPE BIGINT;
ALTER TABLE lg_rel.t_orders ALTER qty TYPE BIGINT;
ALTER TABLE lg_rel.t_orders ALTER price TYPE DOUBLE;`

var typesRel = sqlgate.Relation{
	Schema:  "lg_rel",
	Name:    "t_orders",
	Columns: []string{"id", "grp", "total", "qty", "price", "order_date", "created_at", "flag"},
	Types:   []string{"BIGINT", "VARCHAR", "DECIMAL(12,2)", "BIGINT", "DOUBLE", "DATE", "TIMESTAMP", "BOOLEAN"},
}

// typesDB opens a DuckDB with typesSetup.
func typesDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(typesSetup); err != nil {
		t.Fatal(err)
	}
	return db
}

// runTyped gates q over rel (the orders table), runs it and returns the
// DuckDB types of its columns and its rows as text.
func runTyped(t *testing.T, db *sql.DB, q string, rel sqlgate.Relation) (types []string, rows []string, err error) {
	t.Helper()
	g := sqlgate.New(sqlgate.Config{})
	st, err := g.Parse(q, "sales")
	if err != nil {
		return nil, nil, err
	}
	rels := map[sqlgate.TableRef]sqlgate.Relation{}
	for _, r := range st.Tables() {
		rels[r] = rel
	}
	out, err := st.Render(rels)
	if err != nil {
		return nil, nil, err
	}
	res, err := db.Query(out)
	if err != nil {
		return nil, nil, fmt.Errorf("%w\n%s", err, out)
	}
	cts, err := res.ColumnTypes()
	if err != nil {
		res.Close()
		return nil, nil, err
	}
	for _, c := range cts {
		types = append(types, c.DatabaseTypeName())
	}
	res.Close()
	// The values as DuckDB prints them (a DECIMAL with its scale).
	res, err = db.Query("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM (" + out + ") AS q")
	if err != nil {
		return nil, nil, fmt.Errorf("%w\n%s", err, out)
	}
	defer res.Close()
	for res.Next() {
		vals := make([]any, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := res.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				parts[i] = "NULL"
			case []byte:
				parts[i] = string(v)
			default:
				parts[i] = fmt.Sprint(v)
			}
		}
		rows = append(rows, strings.Join(parts, " "))
	}
	return types, rows, res.Err()
}

// TestResultTypesAreMySQL: results carry MySQL's type (as the engine type
// the Arrow schema is made from) and MySQL's value.
func TestResultTypesAreMySQL(t *testing.T) {
	db := typesDB(t)
	for _, tc := range []struct {
		q     string
		types string // DuckDB types of the result, space-separated
		rows  []string
	}{
		// AVG of exact values: DECIMAL, scale + 4, half away from zero.
		{"SELECT AVG(total) FROM orders", "DECIMAL(38,6)", []string{"5.015000"}},
		{"SELECT AVG(qty) FROM orders", "DECIMAL(38,4)", []string{"0.0000"}},
		{"SELECT AVG(qty) FROM orders WHERE id < 3", "DECIMAL(38,4)", []string{"3.5000"}},
		{"SELECT grp, AVG(total) FROM orders GROUP BY grp ORDER BY grp", "VARCHAR DECIMAL(38,6)", []string{"a 10.005000", "b 0.025000"}},
		{"SELECT AVG(price) FROM orders", "DOUBLE", []string{"2.0416666666666665"}},
		{"SELECT AVG(DISTINCT qty) FROM orders", "DECIMAL(38,4)", []string{"0.0000"}},
		{"SELECT AVG(flag) FROM orders", "DECIMAL(38,4)", []string{"0.6667"}},
		{"SELECT AVG(total) FROM orders WHERE id > 9", "DECIMAL(38,6)", []string{"NULL"}},
		// SUM: integers give DECIMAL(…,0), DECIMAL keeps its scale.
		{"SELECT SUM(qty), SUM(total), SUM(price) FROM orders", "DECIMAL(38,0) DECIMAL(38,2) DOUBLE", []string{"0 20.06 6.125"}},
		// The acceptance case: ROUND of AVG of a DECIMAL for any grouping.
		{"SELECT ROUND(AVG(total), 2) FROM orders", "DECIMAL(38,2)", []string{"5.02"}},
		{"SELECT grp, ROUND(AVG(total), 2) FROM orders GROUP BY grp ORDER BY grp", "VARCHAR DECIMAL(38,2)", []string{"a 10.01", "b 0.03"}},
		{"SELECT id, ROUND(AVG(total), 1) FROM orders GROUP BY id ORDER BY id", "BIGINT DECIMAL(38,1)", []string{"1 10.0", "2 10.0", "3 -0.1", "4 0.1"}},
		// Window AVG and SUM.
		{"SELECT id, AVG(total) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM orders ORDER BY id", "BIGINT DECIMAL(38,6)",
			[]string{"1 10.000000", "2 10.005000", "3 4.980000", "4 0.025000"}},
		{"SELECT id, SUM(qty) OVER (ORDER BY id) FROM orders ORDER BY id", "BIGINT DECIMAL(38,0)", []string{"1 3", "2 7", "3 0", "4 0"}},
		// "/" of exact values: DECIMAL of the dividend's scale + 4, half
		// away from zero; NULL for division by zero; DOUBLE with a DOUBLE.
		{"SELECT 7 / 2, 1 / 32, -1 / 32, 1 / 0, 2.00 / 3", "DECIMAL(38,4) DECIMAL(38,4) DECIMAL(38,4) DECIMAL(38,4) DECIMAL(38,6)",
			[]string{"3.5000 0.0313 -0.0313 NULL 0.666667"}},
		{"SELECT total / qty, qty / total, price / 2 FROM orders WHERE id = 3", "DECIMAL(38,6) DECIMAL(38,4) DOUBLE", []string{"0.007143 140.0000 0.0625"}},
		{"SELECT SUM(total) / COUNT(*) FROM orders", "DECIMAL(38,6)", []string{"5.015000"}},
		{"SELECT 10 / (2 / 3) FROM orders WHERE id = 1", "DECIMAL(38,4)", []string{"14.9993"}},
		// DIV is an integer.
		{"SELECT 7 DIV 2, total DIV 3 FROM orders WHERE id = 2", "BIGINT BIGINT", []string{"3 3"}},
		// ROUND and TRUNCATE keep the type: DECIMAL gets scale d, integers
		// stay, a DOUBLE rounds half to even.
		{"SELECT ROUND(total, 1), ROUND(total), ROUND(total, 4), TRUNCATE(total, 1), TRUNCATE(total, 3) FROM orders WHERE id = 2",
			"DECIMAL(12,1) DECIMAL(12,0) DECIMAL(38,4) DECIMAL(12,1) DECIMAL(38,3)", []string{"10.0 10 10.0100 10.0 10.010"}},
		{"SELECT ROUND(total, 1) FROM orders WHERE id = 3", "DECIMAL(12,1)", []string{"-0.1"}},
		{"SELECT ROUND(qty, -1), ROUND(price, 0), ROUND(price * 1, 1) FROM orders WHERE id = 1", "BIGINT DOUBLE DOUBLE", []string{"0 2.0 2.5"}},
		// UNIX_TIMESTAMP of a DATE or DATETIME is an integer; 0 before 1970.
		{"SELECT id, UNIX_TIMESTAMP(order_date), UNIX_TIMESTAMP(created_at) FROM orders WHERE id <= 2 ORDER BY id", "BIGINT BIGINT BIGINT",
			[]string{"1 1704067200 1704103200", "2 0 1704153601"}},
		// CAST targets.
		{"SELECT CAST(total AS SIGNED), CAST(qty AS UNSIGNED), CAST(total AS DECIMAL(10,3)), CAST(total AS CHAR), CAST(created_at AS DATE), CAST(order_date AS DATETIME), CAST(created_at AS TIME) FROM orders WHERE id = 2",
			"BIGINT UBIGINT DECIMAL(10,3) VARCHAR DATE TIMESTAMP TIME", []string{"10 4 10.010 10.01 2024-01-02 1969-12-31 00:00:00 00:00:01"}},
		// Through derived tables, CTEs, column lists, *, unions and
		// subqueries.
		{"SELECT AVG(t) FROM (SELECT total AS t FROM orders) d", "DECIMAL(38,6)", []string{"5.015000"}},
		{"SELECT AVG(d.total) FROM (SELECT * FROM orders) d", "DECIMAL(38,6)", []string{"5.015000"}},
		{"WITH c (x) AS (SELECT qty FROM orders) SELECT SUM(x), AVG(x) FROM c", "DECIMAL(38,0) DECIMAL(38,4)", []string{"0 0.0000"}},
		{"SELECT AVG(x) FROM (SELECT qty AS x FROM orders UNION ALL SELECT 1) u", "DECIMAL(38,4)", []string{"0.2500"}},
		{"WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10) SELECT SUM(n), AVG(n) FROM seq", "DECIMAL(38,0) DECIMAL(38,4)", []string{"55 5.5000"}},
		{"WITH RECURSIVE seq (n) AS (SELECT total FROM orders WHERE id = 1 UNION ALL SELECT n / 3 FROM seq WHERE n > 1) SELECT n FROM seq", "DECIMAL(12,2)", []string{"10.00", "3.33", "1.11", "0.37"}},
		{"SELECT (SELECT AVG(total) FROM orders) / 2", "DECIMAL(38,10)", []string{"2.5075000000"}},
		{"SELECT AVG(o.total) FROM orders o WHERE o.id IN (SELECT p.id FROM orders p WHERE p.total / o.total > 0)", "DECIMAL(38,6)", []string{"5.015000"}},
		// FLOOR and CEIL of a DECIMAL are a BIGINT when they fit.
		{"SELECT FLOOR(total), CEIL(total), CEIL(1.1), FLOOR(-1.1), FLOOR(qty), CEIL(price), FLOOR(CAST(total AS DECIMAL(38,2))) FROM orders WHERE id = 3",
			"BIGINT BIGINT BIGINT BIGINT BIGINT DOUBLE DECIMAL(38,0)", []string{"-1 0 2 -2 -7 1.0 -1"}},
		{"SELECT FLOOR(SUM(total)) FROM orders", "DECIMAL(38,0)", []string{"20"}},
		{"SELECT FLOOR(CAST(9007199254740993 AS SIGNED)), CEIL(flag) FROM orders WHERE id = 1", "BIGINT BIGINT", []string{"9007199254740993 1"}},
		// Typed forms in GROUP BY, HAVING and ORDER BY.
		{"SELECT qty / 2 AS h, COUNT(*) FROM orders WHERE qty IS NOT NULL GROUP BY qty / 2 ORDER BY h", "DECIMAL(38,4) BIGINT", []string{"-3.5000 1", "1.5000 1", "2.0000 1"}},
		{"SELECT grp FROM orders GROUP BY grp HAVING AVG(total) > 5 ORDER BY AVG(total) DESC", "VARCHAR", []string{"a"}},
		{"SELECT grp FROM orders GROUP BY grp HAVING SUM(total) / 2 > 5 AND CONCAT(grp, COUNT(*)) = 'a2'", "VARCHAR", []string{"a"}},
		// TIME.
		{"SELECT TIME(created_at), TIME '12:34:56', CAST('23:59:59' AS TIME) FROM orders WHERE id = 1", "TIME TIME TIME", []string{"10:00:00 12:34:56 23:59:59"}},
		// CASE of a DECIMAL and an integer keeps the DECIMAL's scale (TPC-H
		// q8 and q14: a share of a sum).
		{"SELECT SUM(CASE WHEN grp = 'a' THEN total ELSE 0 END), 100.00 * SUM(CASE WHEN grp = 'a' THEN total ELSE 0 END) / SUM(total) FROM orders",
			"DECIMAL(38,2) DECIMAL(38,8)", []string{"20.01 99.75074776"}},
		{"SELECT AVG(x) FROM (SELECT total AS x FROM orders UNION ALL SELECT qty FROM orders) u", "DECIMAL(38,6)", []string{"2.865714"}},
		// Functions from the table: IFNULL of one type, ABS, FLOOR, MIN.
		{"SELECT AVG(IFNULL(qty, 0)), AVG(ABS(total)), AVG(FLOOR(total)), MIN(total) / 2 FROM orders", "DECIMAL(38,4) DECIMAL(38,6) DECIMAL(38,4) DECIMAL(38,6)",
			[]string{"0.0000 5.040000 4.7500 -0.025000"}},
	} {
		types, rows, err := runTyped(t, db, tc.q, typesRel)
		if err != nil {
			t.Errorf("%s: %v", tc.q, err)
			continue
		}
		if got := strings.Join(types, " "); got != tc.types {
			t.Errorf("%s: types %s, want %s", tc.q, got, tc.types)
		}
		if strings.Join(rows, "\n") != strings.Join(tc.rows, "\n") {
			t.Errorf("%s: rows %q, want %q", tc.q, rows, tc.rows)
		}
	}
}

// TestResultTypesUnknown: where the gate cannot infer a type it prints the
// untyped form (DuckDB's type), never a different value; and what MySQL
// would answer differently is refused.
func TestResultTypesUnknown(t *testing.T) {
	db := typesDB(t)
	untyped := typesRel
	untyped.Types = nil
	for _, tc := range []struct {
		q     string
		rel   sqlgate.Relation
		types string
		rows  []string
		err   string
	}{
		// No column types: DuckDB's AVG.
		{q: "SELECT AVG(total) FROM orders", rel: untyped, types: "DOUBLE", rows: []string{"5.015"}},
		{q: "SELECT ROUND(AVG(total), 2) FROM orders WHERE id < 3", rel: untyped, err: "at a tie is ambiguous"},
		{q: "SELECT total / 2 FROM orders WHERE id = 1", rel: untyped, types: "DOUBLE", rows: []string{"5.0"}},
		// A name that is also a select-list alias may be the alias.
		{q: "SELECT price AS total, AVG(total) FROM orders GROUP BY price ORDER BY total LIMIT 1", rel: typesRel, types: "DOUBLE DOUBLE", rows: []string{"0.125 -0.05"}},
		// * over a USING join lists the USING columns once, first: not
		// typed by position.
		{q: "WITH d (i, g, x) AS (SELECT * FROM orders a JOIN orders b USING (id)) SELECT AVG(x) FROM d", rel: typesRel, types: "DOUBLE", rows: []string{"5.015"}},
		// % of DECIMALs.
		{q: "SELECT AVG(total % 3) FROM orders", rel: typesRel, types: "DOUBLE", rows: []string{"0.515"}},
		// Mixed types in a union are not guessed.
		{q: "SELECT AVG(x) FROM (SELECT total AS x FROM orders UNION ALL SELECT price FROM orders) u", rel: typesRel, types: "DOUBLE", rows: []string{"3.7407142857142857"}},
		// A fraction of a second MySQL's DATETIME and TIME have not.
		{q: "SELECT UNIX_TIMESTAMP(created_at) FROM orders WHERE id = 3", rel: typesRel, err: "fraction of a second"},
		{q: "SELECT CAST(created_at AS TIME) FROM orders WHERE id = 3", rel: typesRel, err: "fraction of a second"},
		{q: "SELECT CAST(grp AS JSON) FROM orders", rel: typesRel, err: "CAST to json is not supported"},
		{q: "SELECT CAST(created_at AS TIME(3)) FROM orders", rel: typesRel, err: "CAST to TIME(3) is not supported"},
	} {
		types, rows, err := runTyped(t, db, tc.q, tc.rel)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.q, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.q, err)
			continue
		}
		if got := strings.Join(types, " "); got != tc.types {
			t.Errorf("%s: types %s, want %s", tc.q, got, tc.types)
		}
		if strings.Join(rows, "\n") != strings.Join(tc.rows, "\n") {
			t.Errorf("%s: rows %q, want %q", tc.q, rows, tc.rows)
		}
	}
}

// TestTypedFormsStayLinear: a typed form prints an argument more than once
// only where it cannot nest (AVG prints its argument for SUM and COUNT), so
// the printed SQL stays linear in the client's text: nested aggregates,
// which MySQL rejects, are refused rather than printed 2^depth times.
func TestTypedFormsStayLinear(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "total" + strings.Repeat(close, n)
	}
	for _, tc := range []struct {
		q, err string
	}{
		{"SELECT " + nest("AVG(", ")", 12) + " FROM orders", "cannot be nested"},
		{"SELECT " + nest("SUM(AVG(", "))", 6) + " FROM orders", "cannot be nested"},
		{"SELECT AVG(AVG(total) OVER ()) FROM orders", "cannot be nested"},
		{"SELECT AVG(SUM(total) OVER ()) OVER () FROM orders", "cannot be nested"},
		{"SELECT AVG(total) OVER (ORDER BY AVG(AVG(total) OVER ())) FROM orders", "cannot be nested"},
		{"SELECT " + nest("(1 / ", ")", 14) + " FROM orders", ""},
		{"SELECT AVG(" + nest("(1 / ", ")", 14) + ") FROM orders", ""},
		{"SELECT AVG(SUM(total)) OVER () FROM orders", ""},
		{"SELECT SUM((SELECT AVG(total) FROM orders)) FROM orders", ""},
	} {
		st, err := g.Parse(tc.q, "sales")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.q, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.q, err)
			continue
		}
		rels := map[sqlgate.TableRef]sqlgate.Relation{}
		for _, r := range st.Tables() {
			rels[r] = typesRel
		}
		out, err := st.Render(rels)
		if err != nil {
			t.Errorf("%s: %v", tc.q, err)
			continue
		}
		if len(out) > 400*len(tc.q) {
			t.Errorf("%s: printed %d bytes from %d", tc.q, len(out), len(tc.q))
		}
	}
}

// TestCountDistinctKeepsTypedKeys: COUNT(DISTINCT x) compares a number or a
// date as itself and only text folded (MySQL's collation), so a typed
// numeric key is not cast to text; untyped, every key is folded. The
// counts are the same either way.
func TestCountDistinctKeepsTypedKeys(t *testing.T) {
	const q = "SELECT COUNT(DISTINCT qty), COUNT(DISTINCT order_date), COUNT(DISTINCT grp), COUNT(DISTINCT id, grp) FROM orders"
	db := typesDB(t)
	for _, tc := range []struct {
		name      string
		rel       sqlgate.Relation
		castsKeys int // keys cast to text
	}{
		{"typed", typesRel, 3},
		{"untyped", sqlgate.Relation{Schema: typesRel.Schema, Name: typesRel.Name, Columns: typesRel.Columns}, 5},
	} {
		st, err := sqlgate.New(sqlgate.Config{}).Parse(q, "sales")
		if err != nil {
			t.Fatal(err)
		}
		rels := map[sqlgate.TableRef]sqlgate.Relation{}
		for _, r := range st.Tables() {
			rels[r] = tc.rel
		}
		out, err := st.Render(rels)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out, "AS VARCHAR)"); n != tc.castsKeys {
			t.Errorf("%s: %d keys cast to text, want %d:\n%s", tc.name, n, tc.castsKeys, out)
		}
		var a, b, c, d int
		if err := db.QueryRow(out).Scan(&a, &b, &c, &d); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		if got := fmt.Sprint(a, b, c, d); got != "3 3 2 4" {
			t.Errorf("%s: counts %s, want 3 3 2 4", tc.name, got)
		}
	}
}
