package sqlgate_test

import (
	"errors"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestCheckColumns: a column no table of the statement has is refused in
// MySQL's words, naming the clause; every name a reference may mean besides
// a table column (aliases, field names, CTE and derived columns, tables)
// passes, and so does anything when a table's columns are not known.
func TestCheckColumns(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	cols := map[string][]string{
		"orders":    {"id", "customer_id", "amount", "status"},
		"customers": {"id", "name"},
	}
	columns := func(st *sqlgate.Statement) map[sqlgate.TableRef][]string {
		m := map[sqlgate.TableRef][]string{}
		for _, r := range st.Tables() {
			m[r] = cols[r.Name]
		}
		return m
	}
	for _, tt := range []struct{ sql, want string }{
		{"SELECT nosuchcol FROM orders", "sqlgate: Unknown column 'nosuchcol' in 'field list'"},
		{"SELECT o.NoSuchCol FROM orders o", "sqlgate: Unknown column 'o.nosuchcol' in 'field list'"},
		{"SELECT id FROM sales.orders WHERE sales.orders.nope = 1", "sqlgate: Unknown column 'sales.orders.nope' in 'where clause'"},
		{"SELECT id FROM orders GROUP BY nope", "Unknown column 'nope' in 'group statement'"},
		{"SELECT count(*) FROM orders HAVING max(nope) > 1", "Unknown column 'nope' in 'having clause'"},
		{"SELECT id FROM orders ORDER BY nope", "Unknown column 'nope' in 'order clause'"},
		{"SELECT 1 FROM orders o JOIN customers c ON o.cust = c.id", "Unknown column 'o.cust' in 'on clause'"},
		{"SELECT 1 FROM orders JOIN customers USING (nope)", "Unknown column 'nope' in 'from clause'"},
		{"SELECT id FROM orders WHERE id IN (SELECT nope FROM customers)", "Unknown column 'nope' in 'field list'"},
		{"SELECT sum(amount) OVER (PARTITION BY nope) FROM orders", "Unknown column 'nope' in 'field list'"},
		{"SELECT id FROM orders UNION SELECT nope FROM customers", "Unknown column 'nope' in 'field list'"},
		{"WITH c AS (SELECT nope FROM customers) SELECT * FROM c", "Unknown column 'nope' in 'field list'"},
		{"INSERT INTO sales.t SELECT nope FROM orders", "Unknown column 'nope' in 'field list'"},
		{"CREATE TABLE sales.t AS SELECT id, nope FROM orders", "Unknown column 'nope' in 'field list'"},
		{"EXPLAIN SELECT nope FROM orders", "Unknown column 'nope' in 'field list'"},
		{"SELECT rowid FROM orders", "Unknown column 'rowid' in 'field list'"},
		{"SELECT id, amount AS a FROM orders ORDER BY a", ""},
		{"SELECT count(*) FROM orders GROUP BY status ORDER BY `count(*)`", ""},
		{"SELECT status, count(*) AS n FROM orders GROUP BY status HAVING n > 1", ""},
		{"SELECT d.total FROM (SELECT sum(amount) AS total FROM orders) d", ""},
		{"SELECT `sum(amount)` FROM (SELECT sum(amount) FROM orders) d", ""},
		{"SELECT abc FROM (SELECT 'abc') d", ""},
		{"WITH c (x, y) AS (SELECT id, name FROM customers) SELECT x, y FROM c", ""},
		{"SELECT o.id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id)", ""},
		{"SELECT id FROM orders JOIN customers USING (id)", ""},
		{"SELECT id FROM orders UNION SELECT id FROM customers ORDER BY id", ""},
		{"SELECT sum(amount) OVER w FROM orders WINDOW w AS (PARTITION BY status ORDER BY id)", ""},
		{"SELECT ID, Amount FROM Orders", ""},
		{"SELECT 1", ""},
		{"SELECT * FROM orders", ""},
	} {
		st, err := g.Parse(tt.sql, "sales")
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.sql, err)
			continue
		}
		err = st.CheckColumns(columns(st))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckColumns(%q) = %v, want none", tt.sql, err)
		case tt.want != "" && (!errors.Is(err, sqlgate.ErrUnknownColumn) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckColumns(%q) = %v, want %q", tt.sql, err, tt.want)
		}
	}
	// Columns not known for a table: the engine decides.
	st, err := g.Parse("SELECT nosuchcol FROM orders", "sales")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CheckColumns(nil); err != nil {
		t.Errorf("without columns: %v", err)
	}
}
