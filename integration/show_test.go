package integration_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
)

// TestShow: SHOW DATABASES / TABLES and DESCRIBE over ADBC are answered from
// the caller's authorized catalog view.
func TestShow(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	admin := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))

	column := func(t *testing.T, c *client, sql, name string) []string {
		t.Helper()
		sch, rows, err := c.query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if got := fieldNames(sch); !slices.Equal(got, []string{name}) {
			t.Fatalf("%s: columns %v, want [%s]", sql, got, name)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r[0])
		}
		return out
	}

	t.Run("databases", func(t *testing.T) {
		if got := column(t, analyst, "SHOW DATABASES", "Database"); !slices.Equal(got, []string{"sales"}) {
			t.Errorf("analyst: %v", got)
		}
		// The access log's schema shows once its first batch is written.
		isSystem := func(s string) bool { return s == "system" }
		if got := slices.DeleteFunc(column(t, admin, "show schemas", "Database"), isSystem); !slices.Equal(got, []string{"hr", "sales"}) {
			t.Errorf("admin: %v", got)
		}
		if got := column(t, admin, "SHOW DATABASES LIKE 'h%'", "Database (h%)"); !slices.Equal(got, []string{"hr"}) {
			t.Errorf("admin LIKE: %v", got)
		}
	})

	t.Run("tables", func(t *testing.T) {
		if got := column(t, analyst, "SHOW TABLES FROM sales", "Tables_in_sales"); !slices.Equal(got, []string{"customers", "orders"}) {
			t.Errorf("analyst: %v", got)
		}
		if got := column(t, analyst, "SHOW TABLES IN Sales LIKE 'ord%'", "Tables_in_sales (ord%)"); !slices.Equal(got, []string{"orders"}) {
			t.Errorf("analyst LIKE: %v", got)
		}
		if got := column(t, admin, "SHOW TABLES FROM hr", "Tables_in_hr"); !slices.Equal(got, []string{"employees"}) {
			t.Errorf("admin hr: %v", got)
		}
		// After USE, SHOW TABLES lists the session's schema.
		if _, _, err := analyst.query(ctx, "USE sales"); err != nil {
			t.Fatal(err)
		}
		if got := column(t, analyst, "SHOW TABLES", "Tables_in_sales"); !slices.Equal(got, []string{"customers", "orders"}) {
			t.Errorf("analyst after USE: %v", got)
		}
		// A schema the caller may not see looks like a missing one.
		_, _, errDenied := analyst.query(ctx, "SHOW TABLES FROM hr")
		_, _, errMissing := analyst.query(ctx, "SHOW TABLES FROM nosuchschema")
		if adbcStatus(errDenied) != adbc.StatusNotFound || adbcStatus(errMissing) != adbc.StatusNotFound {
			t.Fatalf("denied %v; missing %v", errDenied, errMissing)
		}
		if strings.ReplaceAll(errDenied.Error(), "hr", "nosuchschema") != errMissing.Error() {
			t.Errorf("messages differ:\ndenied:  %s\nmissing: %s", errDenied, errMissing)
		}
	})

	t.Run("describe", func(t *testing.T) {
		for _, sql := range []string{"DESCRIBE sales.orders", "DESC sales.orders", "SHOW COLUMNS FROM orders FROM sales"} {
			sch, rows, err := analyst.query(ctx, sql)
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if got := fieldNames(sch); !slices.Equal(got, []string{"Field", "Type", "Null", "Key", "Default", "Extra"}) {
				t.Fatalf("%s: columns %v", sql, got)
			}
			var fields []string
			for _, r := range rows {
				fields = append(fields, r[0])
				if r[1] == "" || r[4] != "NULL" {
					t.Errorf("%s: row %v", sql, r)
				}
			}
			if !slices.Equal(fields, []string{"id", "customer_id", "order_date", "amount", "status"}) {
				t.Errorf("%s: fields %v", sql, fields)
			}
		}
		// A table the caller may not read gives the same NotFound as a
		// missing table.
		for _, c := range []struct{ denied, missing string }{
			{"DESCRIBE hr.employees", "DESCRIBE hr.nosuchtable"},
			{"DESC hr.employees", "DESC sales.nosuchtable"},
			{"SHOW COLUMNS FROM hr.employees", "SHOW COLUMNS FROM hr.nosuchtable"},
		} {
			_, _, errDenied := analyst.query(ctx, c.denied)
			_, _, errMissing := analyst.query(ctx, c.missing)
			if adbcStatus(errDenied) != adbc.StatusNotFound || adbcStatus(errMissing) != adbc.StatusNotFound {
				t.Fatalf("%q: %v; %q: %v", c.denied, errDenied, c.missing, errMissing)
			}
			_, _, errQuery := analyst.query(ctx, strings.Replace(c.denied, "DESCRIBE", "SELECT * FROM", 1))
			if strings.HasPrefix(c.denied, "DESCRIBE") && errQuery.Error() != errDenied.Error() {
				t.Errorf("DESCRIBE and SELECT differ:\n%s\n%s", errDenied, errQuery)
			}
		}
		if _, rows, err := admin.query(ctx, "DESCRIBE hr.employees"); err != nil || len(rows) == 0 {
			t.Fatalf("admin DESCRIBE hr.employees: %v %v", rows, err)
		}
	})

	t.Run("other SHOW statements are refused", func(t *testing.T) {
		for _, sql := range []string{"SHOW STATUS", "SHOW CREATE TABLE sales.orders", "SHOW FULL TABLES FROM sales", "SHOW GRANTS"} {
			if _, _, err := analyst.query(ctx, sql); adbcStatus(err) != adbc.StatusInvalidArgument {
				t.Errorf("%s: %v", sql, err)
			}
		}
	})

	t.Run("SHOW and DESCRIBE prepared (as JDBC does)", func(t *testing.T) {
		for q, want := range map[string]string{"SHOW DATABASES": "sales", "DESCRIBE sales.orders": "customer_id"} {
			got := firstColumn(t, ctx, analyst.prepare(t, q))
			if !slices.Contains(got, want) {
				t.Errorf("%s prepared: %v, want %s among them", q, got, want)
			}
		}
	})
}

// firstColumn executes a statement and returns its first column as text.
func firstColumn(t *testing.T, ctx context.Context, stmt adbc.Statement) []string {
	t.Helper()
	rdr, _, err := stmt.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			out = append(out, rec.Column(0).ValueStr(i))
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExplain: EXPLAIN returns the gateway's SQL and the engine's plan, for
// queries the caller may run only.
func TestExplain(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))

	sch, rows, err := analyst.query(ctx, "EXPLAIN SELECT status, count(*) FROM sales.orders WHERE id <= 3 GROUP BY status LIMIT 1, 2")
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldNames(sch); !slices.Equal(got, []string{"plan"}) {
		t.Fatalf("columns %v", got)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %v", rows)
	}
	if sql := rows[0][0]; !strings.HasPrefix(sql, "SELECT ") || !strings.Contains(sql, "LIMIT 2 OFFSET 1") || !strings.Contains(sql, `"lg_rel".`) {
		t.Errorf("gateway SQL %q", sql)
	}
	engine := rows[1][0]
	if !strings.Contains(strings.ToUpper(engine), "LIMIT") {
		t.Errorf("engine plan lacks the limit:\n%s", engine)
	}
	for _, leak := range []string{srv.DataDir, "/tmp/", ".parquet"} {
		if leak != "" && strings.Contains(engine, leak) {
			t.Errorf("engine plan shows %q:\n%s", leak, engine)
		}
	}
	t.Logf("EXPLAIN:\n%s\n%s", rows[0][0], engine)

	_, _, errDenied := analyst.query(ctx, "EXPLAIN SELECT * FROM hr.employees")
	_, _, errMissing := analyst.query(ctx, "EXPLAIN SELECT * FROM hr.nosuchtable")
	if adbcStatus(errDenied) != adbc.StatusNotFound || adbcStatus(errMissing) != adbc.StatusNotFound {
		t.Fatalf("denied %v; missing %v", errDenied, errMissing)
	}
	for _, sql := range []string{"EXPLAIN ANALYZE SELECT 1", "EXPLAIN SELECT load_file('/etc/passwd')", "EXPLAIN DELETE FROM sales.orders"} {
		if _, _, err := analyst.query(ctx, sql); adbcStatus(err) != adbc.StatusInvalidArgument {
			t.Errorf("%s: %v", sql, err)
		}
	}
}
