package integration_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
)

// update runs sql with ADBC's ExecuteUpdate (a Flight SQL DoPut, as JDBC's
// Statement.executeUpdate and execute send a statement without rows).
func (c *client) update(ctx context.Context, sql string) error {
	stmt, err := c.conn.NewStatement()
	if err != nil {
		return err
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery(sql); err != nil {
		return err
	}
	_, err = stmt.ExecuteUpdate(ctx)
	return err
}

// TestSessionUse: USE changes the session whichever path sends it, on a fresh
// connection: ExecuteUpdate (DoPut) first, before any query; ExecuteQuery; a
// prepared statement run with ExecuteUpdate or ExecuteQuery. The next query
// names its table without a schema.
func TestSessionUse(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	token := srv.token(t, "analyst@demo")
	const probe = "SELECT count(*) FROM orders"
	for _, path := range []struct {
		name string
		use  func(t *testing.T, c *client) error
	}{
		{"ExecuteUpdate first", func(t *testing.T, c *client) error { return c.update(ctx, "USE sales") }},
		{"ExecuteQuery", func(t *testing.T, c *client) error { _, _, err := c.query(ctx, "USE sales"); return err }},
		{"prepared ExecuteUpdate", func(t *testing.T, c *client) error {
			_, err := c.prepare(t, "USE sales").ExecuteUpdate(ctx)
			return err
		}},
		{"prepared ExecuteQuery", func(t *testing.T, c *client) error {
			rdr, _, err := c.prepare(t, "USE sales").ExecuteQuery(ctx)
			if err == nil {
				rdr.Release()
			}
			return err
		}},
	} {
		t.Run(path.name, func(t *testing.T) {
			c := mustDial(t, srv.uri(), bearer(token))
			// Nothing but the driver's own connection set-up has run: the
			// query without a schema fails until USE.
			if _, _, err := c.query(ctx, probe); adbcStatus(err) != adbc.StatusInvalidArgument {
				t.Fatalf("before USE: %v", err)
			}
			if err := path.use(t, c); err != nil {
				t.Fatalf("USE sales: %v", err)
			}
			_, rows, err := c.query(ctx, probe)
			if err != nil || len(rows) != 1 {
				t.Fatalf("after USE: %v %v", rows, err)
			}
		})
	}
	t.Run("USE through ExecuteUpdate is the first call after connecting", func(t *testing.T) {
		c := mustDial(t, srv.uri(), bearer(token))
		if err := c.update(ctx, "USE sales"); err != nil {
			t.Fatal(err)
		}
		_, rows, err := c.query(ctx, probe)
		if err != nil || len(rows) != 1 {
			t.Fatalf("after USE: %v %v", rows, err)
		}
		// A second USE on the same path moves the same session.
		if err := c.update(ctx, "USE hr"); adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("USE hr (not granted): %v", err)
		}
		if _, rows, err := c.query(ctx, "SHOW TABLES"); err != nil || !slices.Equal(column0(rows), []string{"customers", "orders"}) {
			t.Fatalf("SHOW TABLES: %v %v", rows, err)
		}
	})
}

func column0(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[0])
	}
	return out
}

// TestSessionStatements: the SET statements and variable reads drivers send
// are answered with fixed values or accepted as no-ops on every path;
// anything else is refused naming it, and no variable shows server state.
func TestSessionStatements(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	c := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))

	t.Run("SET accepted on every path", func(t *testing.T) {
		for _, sql := range []string{
			"SET NAMES utf8mb4",
			"SET NAMES utf8mb4 COLLATE utf8mb4_0900_ai_ci",
			"SET autocommit=1",
			"SET SESSION sql_mode='STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
			"SET character_set_results = NULL",
		} {
			if err := c.update(ctx, sql); err != nil {
				t.Errorf("ExecuteUpdate %s: %v", sql, err)
			}
			if sch, rows, err := c.query(ctx, sql); err != nil || len(rows) != 0 || sch.NumFields() != 0 {
				t.Errorf("ExecuteQuery %s: %v %v %v", sql, sch, rows, err)
			}
			if _, err := c.prepare(t, sql).ExecuteUpdate(ctx); err != nil {
				t.Errorf("prepared %s: %v", sql, err)
			}
		}
	})

	t.Run("SET refused, naming it", func(t *testing.T) {
		for sql, want := range map[string]string{
			"SET GLOBAL sql_mode = ''":                "SET GLOBAL sql_mode is not supported",
			"SET @x = (SELECT ssn FROM hr.employees)": "SET @x is not supported",
			"SET sql_mode = 'ANSI_QUOTES'":            "SET sql_mode = 'ANSI_QUOTES' is not supported",
			"SET autocommit = 0":                      "SET autocommit = '0' is not supported",
			"SET allowed_directories = '/'":           "SET allowed_directories is not supported",
			"SET memory_limit = '100GB'":              "SET memory_limit is not supported",
		} {
			for name, err := range map[string]error{"ExecuteUpdate": c.update(ctx, sql), "ExecuteQuery": second(c.query(ctx, sql))} {
				if adbcStatus(err) != adbc.StatusInvalidArgument || !strings.Contains(err.Error(), want) {
					t.Errorf("%s %s: %v, want InvalidArgument saying %q", name, sql, err, want)
				}
			}
		}
	})

	t.Run("system variables", func(t *testing.T) {
		sch, rows, err := c.query(ctx, "SELECT @@version, @@version_comment, @@session.transaction_isolation, @@character_set_client, @@max_allowed_packet")
		if err != nil {
			t.Fatal(err)
		}
		if got := fieldNames(sch); !slices.Equal(got, []string{"@@version", "@@version_comment", "@@session.transaction_isolation", "@@character_set_client", "@@max_allowed_packet"}) {
			t.Errorf("names %v", got)
		}
		if want := []string{"8.0.36-lakegate", "lakegate", "REPEATABLE-READ", "utf8mb4", "1048576"}; len(rows) != 1 || !slices.Equal(rows[0], want) {
			t.Errorf("rows %v, want %v", rows, want)
		}
		// Mixed with table columns: the value is a literal on every row.
		_, rows, err = c.query(ctx, "SELECT id, @@version_comment AS v FROM sales.orders ORDER BY id LIMIT 2")
		if err != nil || len(rows) != 2 || rows[1][1] != "lakegate" {
			t.Errorf("mixed: %v %v", rows, err)
		}
		for _, v := range []string{"hostname", "datadir", "basedir", "secure_file_priv", "port", "tmpdir", "pid_file", "version_compile_os", "threads", "memory_limit"} {
			_, _, err := c.query(ctx, "SELECT @@"+v)
			if adbcStatus(err) != adbc.StatusInvalidArgument || !strings.Contains(err.Error(), "unknown system variable '"+v+"'") {
				t.Errorf("@@%s: %v", v, err)
			}
		}
	})

	t.Run("SHOW VARIABLES, WARNINGS, COLLATION, CHARACTER SET", func(t *testing.T) {
		for _, tt := range []struct {
			sql     string
			columns []string
			first   []string
		}{
			{"SHOW VARIABLES LIKE 'version%'", []string{"Variable_name", "Value"}, []string{"version", "version_comment"}},
			{"SHOW SESSION VARIABLES LIKE 'max_allowed_packet'", []string{"Variable_name", "Value"}, []string{"max_allowed_packet"}},
			{"SHOW VARIABLES LIKE '%dir%'", []string{"Variable_name", "Value"}, nil},
			{"SHOW WARNINGS", []string{"Level", "Code", "Message"}, nil},
			{"SHOW ERRORS", []string{"Level", "Code", "Message"}, nil},
			{"SHOW COLLATION", []string{"Collation", "Charset", "Id", "Default", "Compiled", "Sortlen", "Pad_attribute"}, []string{"utf8mb4_0900_ai_ci"}},
			{"SHOW CHARACTER SET", []string{"Charset", "Description", "Default collation", "Maxlen"}, []string{"utf8mb4"}},
		} {
			sch, rows, err := c.query(ctx, tt.sql)
			if err != nil {
				t.Errorf("%s: %v", tt.sql, err)
				continue
			}
			if got := fieldNames(sch); !slices.Equal(got, tt.columns) {
				t.Errorf("%s: columns %v, want %v", tt.sql, got, tt.columns)
			}
			if got := column0(rows); !slices.Equal(got, tt.first) {
				t.Errorf("%s: rows %v, want %v", tt.sql, rows, tt.first)
			}
			// Prepared, as JDBC sends it.
			if got := firstColumn(t, ctx, c.prepare(t, tt.sql)); !slices.Equal(got, tt.first) {
				t.Errorf("%s prepared: %v", tt.sql, got)
			}
		}
	})
}

// second returns the last of three results (the error of client.query).
func second[A, B any](_ A, _ B, err error) error { return err }

// TestMySQLErrors: syntax errors say so with the token, refusals name the
// construct, an unknown column is named in MySQL's words without the
// engine's, and a table the caller may not read answers exactly as a
// missing one — whatever else is wrong with the statement.
func TestMySQLErrors(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))

	for _, tt := range []struct {
		sql, want string
		code      adbc.Status
	}{
		{"SELEC * FROM sales.orders", `syntax error at line 1 column 5 near "SELEC"`, adbc.StatusInvalidArgument},
		{"SELECT * FROM sales.orders WHERE", "syntax error at line 1 column 32: the statement ends too early", adbc.StatusInvalidArgument},
		{"SELECT * FROM read_parquet('/etc/passwd')", "table function read_parquet(…) is not supported", adbc.StatusInvalidArgument},
		{"SELECT * FROM '/etc/passwd'", "reading a file by name ('/etc/passwd') is not supported", adbc.StatusInvalidArgument},
		{"SELECT nosuchcol FROM sales.orders", "Unknown column 'nosuchcol' in 'field list'", adbc.StatusInvalidArgument},
		{"SELECT id FROM sales.orders o WHERE o.nosuchcol = 1", "Unknown column 'o.nosuchcol' in 'where clause'", adbc.StatusInvalidArgument},
		{"SELECT status FROM sales.orders GROUP BY customer_id", "'status' isn't in GROUP BY", adbc.StatusInvalidArgument},
		{"UPDATE sales.orders SET status = 'x'", "UPDATE is not supported", adbc.StatusInvalidArgument},
	} {
		_, _, err := analyst.query(ctx, tt.sql)
		if adbcStatus(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %v saying %q", tt.sql, err, tt.code, tt.want)
		}
		for _, engine := range []string{"Binder Error", "Candidate", "FROM clause!", "lg_rel"} {
			if err != nil && strings.Contains(err.Error(), engine) {
				t.Errorf("%s: the engine's text %q reached the client: %v", tt.sql, engine, err)
			}
		}
	}
	// A write's query part is checked the same way.
	admin := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))
	for _, sql := range []string{"CREATE TABLE sales.t_unknown AS SELECT nosuchcol FROM sales.orders", "INSERT INTO sales.orders SELECT nosuchcol FROM sales.orders"} {
		if err := admin.update(ctx, sql); adbcStatus(err) != adbc.StatusInvalidArgument || !strings.Contains(err.Error(), "Unknown column 'nosuchcol' in 'field list'") {
			t.Errorf("%s: %v", sql, err)
		}
	}
	// The same through a prepared statement (JDBC prepares everything).
	stmt, err := analyst.conn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery("SELECT nosuchcol FROM sales.orders WHERE id = ?"); err != nil {
		t.Fatal(err)
	}
	if err := stmt.Prepare(ctx); adbcStatus(err) != adbc.StatusInvalidArgument || !strings.Contains(err.Error(), "Unknown column 'nosuchcol' in 'field list'") {
		t.Errorf("prepared unknown column: %v", err)
	}

	// Denial = missing, before any column is looked at: an unknown column
	// of a table the caller may not read answers as a missing table does,
	// byte for byte once the names are swapped.
	for _, tt := range []struct{ denied, missing string }{
		{"SELECT nosuchcol FROM hr.employees", "SELECT nosuchcol FROM hr.nosuchtable"},
		{"SELECT ssn FROM hr.employees", "SELECT ssn FROM hr.nosuchtable"},
		{"SELECT o.nosuchcol FROM sales.orders o JOIN hr.employees e ON TRUE", "SELECT o.nosuchcol FROM sales.orders o JOIN hr.nosuchtable e ON TRUE"},
		{"DESCRIBE hr.employees", "DESCRIBE hr.nosuchtable"},
		{"EXPLAIN SELECT nosuchcol FROM hr.employees", "EXPLAIN SELECT nosuchcol FROM hr.nosuchtable"},
	} {
		_, _, errDenied := analyst.query(ctx, tt.denied)
		_, _, errMissing := analyst.query(ctx, tt.missing)
		if adbcStatus(errDenied) != adbc.StatusNotFound || adbcStatus(errMissing) != adbc.StatusNotFound {
			t.Errorf("%s: %v; %s: %v", tt.denied, errDenied, tt.missing, errMissing)
			continue
		}
		if strings.ReplaceAll(errDenied.Error(), "employees", "nosuchtable") != errMissing.Error() {
			t.Errorf("messages differ:\ndenied:  %s\nmissing: %s", errDenied, errMissing)
		}
	}
}

// TestDescribeTypes: DESCRIBE and SHOW COLUMNS name MySQL's types.
func TestDescribeTypes(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	c := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))
	for _, sql := range []string{"DESCRIBE sales.orders", "SHOW COLUMNS FROM orders FROM sales"} {
		_, rows, err := c.query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rows {
			got[r[0]] = r[1]
		}
		want := map[string]string{"id": "bigint", "customer_id": "bigint", "order_date": "date", "amount": "decimal(10,2)", "status": "text"}
		for col, typ := range want {
			if got[col] != typ {
				t.Errorf("%s: %s is %q, want %q (all: %v)", sql, col, got[col], typ, got)
			}
		}
	}
	// No Arrow type name in any demo table.
	arrowName := regexp.MustCompile(`^(u?int(8|16|32|64)|float(16|32|64)|utf8|large_utf8|date(32|64)|bool|timestamp\[)`)
	for _, table := range []string{"sales.customers", "hr.employees"} {
		_, rows, err := c.query(ctx, "DESCRIBE "+table)
		if err != nil || len(rows) == 0 {
			t.Fatalf("DESCRIBE %s: %v %v", table, rows, err)
		}
		for _, r := range rows {
			if arrowName.MatchString(r[1]) {
				t.Errorf("DESCRIBE %s: %s has the Arrow type %q", table, r[0], r[1])
			}
		}
	}
}

// TestSessionViews: CREATE VIEW makes a view of the session (ExecuteUpdate
// or ExecuteQuery, as JDBC sends either); statements of that session read
// it, as their reader, and DROP VIEW ends it. Another session — the same
// principal's included — does not see it, and a view reads nothing its
// reader could not: hr@demo's view over sales is refused when it is read,
// as the table would be.
func TestSessionViews(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	analyst := srv.token(t, "analyst@demo")
	c := mustDial(t, srv.uri(), bearer(analyst))
	if err := c.update(ctx, "USE sales"); err != nil {
		t.Fatal(err)
	}
	// TPC-H q15's shape: create, read twice (once in a subquery), drop.
	if err := c.update(ctx, "CREATE VIEW revenue0 (customer_no, total_revenue) AS SELECT customer_id, sum(amount) FROM orders GROUP BY customer_id"); err != nil {
		t.Fatal(err)
	}
	const top = "SELECT customer_no, total_revenue FROM revenue0 WHERE total_revenue = (SELECT max(total_revenue) FROM revenue0) ORDER BY customer_no"
	_, viaView, err := c.query(ctx, top)
	if err != nil {
		t.Fatal(err)
	}
	_, direct, err := c.query(ctx, "SELECT customer_id, sum(amount) AS s FROM orders GROUP BY customer_id HAVING s = (SELECT max(s) FROM (SELECT sum(amount) AS s FROM orders GROUP BY customer_id) AS x) ORDER BY customer_id")
	if err != nil {
		t.Fatal(err)
	}
	if len(viaView) == 0 || !slices.EqualFunc(viaView, direct, slices.Equal[[]string]) {
		t.Fatalf("through the view %v, directly %v", viaView, direct)
	}
	if _, _, err := c.query(ctx, "CREATE VIEW revenue0 AS SELECT 1"); adbcStatus(err) != adbc.StatusInvalidArgument {
		t.Fatalf("a second CREATE VIEW of the name: %v", err)
	}
	if _, _, err := c.query(ctx, "CREATE OR REPLACE VIEW revenue0 (customer_no, total_revenue) AS SELECT customer_id, amount FROM orders WHERE id = 1"); err != nil {
		t.Fatalf("CREATE OR REPLACE through ExecuteQuery: %v", err)
	}
	if _, rows, err := c.query(ctx, "SELECT count(*) FROM sales.revenue0"); err != nil || len(rows) != 1 || rows[0][0] != "1" {
		t.Fatalf("the replaced view: %v %v", rows, err)
	}

	// Another session of the same principal has no such view.
	other := mustDial(t, srv.uri(), bearer(analyst))
	_, _, missing := other.query(ctx, "SELECT * FROM sales.nosuchtable")
	_, _, err = other.query(ctx, "SELECT * FROM sales.revenue0")
	if err == nil || adbcStatus(err) != adbcStatus(missing) {
		t.Fatalf("another session read the view: %v (a missing table: %v)", err, missing)
	}

	if err := c.update(ctx, "DROP VIEW revenue0"); err != nil {
		t.Fatal(err)
	}
	if err := c.update(ctx, "DROP VIEW revenue0"); adbcStatus(err) != adbc.StatusInvalidArgument {
		t.Fatalf("DROP VIEW of a dropped view: %v", err)
	}
	if err := c.update(ctx, "DROP VIEW IF EXISTS revenue0"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.query(ctx, top); err == nil || adbcStatus(err) != adbcStatus(missing) {
		t.Fatalf("after DROP VIEW: %v (a missing table: %v)", err, missing)
	}

	// A view is its reader's: hr@demo may make one over sales, and reading
	// it is refused as reading sales.orders is.
	hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
	if err := hr.update(ctx, "CREATE VIEW hr.peek AS SELECT * FROM sales.orders"); err != nil {
		t.Fatal(err)
	}
	_, _, direct2 := hr.query(ctx, "SELECT * FROM sales.orders")
	_, _, viaPeek := hr.query(ctx, "SELECT * FROM hr.peek")
	if direct2 == nil || viaPeek == nil || adbcStatus(viaPeek) != adbcStatus(direct2) {
		t.Fatalf("hr@demo reading sales through a view: %v; directly: %v", viaPeek, direct2)
	}
}
