package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
)

// hrData matches values only hr.employees holds: SSNs and employee names.
var hrData = regexp.MustCompile(`^\d{3}-\d{2}-\d{4}$|^Employee \d+$`)

// TestAttacks runs the attack classes of SQL_GATE.md §1 and the traps of §3
// as the analyst (granted sales only). None may leak a row of hr, read or
// write a file, or run a second statement.
func TestAttacks(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	// A session whose default schema is hr, set through the session option
	// (allowed: setting a default does not grant anything).
	hrDefault := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	if err := hrDefault.conn.(adbc.PostInitOptions).SetOption("adbc.flight.sql.session.option.schema", "hr"); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	written := filepath.Join(outside, "pwned.csv")
	host, _ := os.ReadFile("/etc/hostname")

	cases := []struct {
		name string
		c    *client
		sql  string
		// wantErr: the statement must be refused; otherwise it may run but
		// must not leak.
		wantErr bool
	}{
		{"backslash escape then UNION", analyst, `SELECT id, status FROM sales.orders WHERE status = 'a\' UNION SELECT id, ssn FROM hr.employees -- '`, false},
		{"stacked DROP behind an escape", analyst, `SELECT id FROM sales.orders WHERE status = 'a\'; DROP TABLE hr.employees; --'`, false},
		{"stacked COPY behind an escape", analyst, `SELECT id FROM sales.orders WHERE status = 'a\'; COPY (SELECT 1) TO '` + written + `'; --'`, false},
		{"table function behind an escape", analyst, `SELECT id, status FROM sales.orders WHERE status = 'a\' UNION SELECT 0, content FROM read_text('/etc/hostname') --'`, false},
		{"plain stacked statements", analyst, `SELECT 1; SELECT ssn FROM hr.employees`, true},
		{"stacked COPY", analyst, `SELECT 1; COPY (SELECT 1) TO '` + written + `'`, true},
		{"executable comment", analyst, `SELECT 1 /*! , (SELECT ssn FROM hr.employees LIMIT 1) */`, true},
		{"hash comment", analyst, "SELECT id FROM sales.orders WHERE id = 1 # UNION SELECT id FROM hr.employees", false},
		{"double-dash without space", analyst, "SELECT 1 --1\n, ssn FROM hr.employees", true},
		{"double-quoted string is a string", analyst, `SELECT "ssn" FROM sales.customers LIMIT 1`, false},
		{"nested comment", analyst, `SELECT 1 /* /* */ UNION SELECT ssn FROM hr.employees -- */`, true},
		{"dollar quoting", analyst, `SELECT $$a$$`, true},
		{"alias used as a column", analyst, `SELECT c FROM sales.customers c`, true},
		{"CTE shadowing the real table", hrDefault, `WITH employees AS (SELECT * FROM employees) SELECT * FROM employees`, true},
		{"recursive CTE without UNION", hrDefault, `WITH RECURSIVE employees AS (SELECT * FROM employees) SELECT * FROM employees`, true},
		{"forward reference to a later CTE", hrDefault, `WITH a AS (SELECT * FROM employees), employees AS (SELECT 1 AS x) SELECT * FROM a`, true},
		{"CTE local to a derived table", hrDefault, `SELECT * FROM (WITH x AS (SELECT 1 AS y) SELECT * FROM x) d, employees`, true},
		{"backticked file name", analyst, "SELECT * FROM `/etc/passwd`", true},
		{"backticked csv", hrDefault, "SELECT * FROM `employees.csv`", true},
		{"table function", analyst, `SELECT * FROM read_csv('/etc/passwd')`, true},
		{"file function", analyst, `SELECT load_file('/etc/passwd')`, true},
		{"into outfile", analyst, `SELECT id FROM sales.orders INTO OUTFILE '` + written + `'`, true},
		{"engine relation name", analyst, `SELECT * FROM lg_rel.hr__employees`, true},
		{"information schema", analyst, `SELECT * FROM information_schema.tables`, true},
		{"engine catalog function", analyst, `SELECT * FROM duckdb_tables()`, true},
		{"engine setting function", analyst, `SELECT current_setting('allowed_directories')`, true},
		{"NUL in a literal", analyst, "SELECT 'a\x00b'", true},
		{"system variable", analyst, `SELECT @@hostname`, true},
		{"case folding", analyst, "SELECT * FROM HR.EMPLOYEES", true},
		{"subquery in WHERE", analyst, "SELECT id FROM sales.orders WHERE id IN (SELECT id FROM hr.employees)", true},
		{"EXISTS subquery", analyst, "SELECT id FROM sales.orders WHERE EXISTS (SELECT 1 FROM hr.employees)", true},
		{"scalar subquery in select", analyst, "SELECT (SELECT max(ssn) FROM hr.employees)", true},
		{"UNION branch", analyst, "SELECT name FROM sales.customers UNION ALL SELECT ssn FROM hr.employees", true},
		{"PREPARE", analyst, "PREPARE s FROM 'SELECT 1'", true},
		{"SET", analyst, "SET allowed_directories = '/'", true},
		{"DROP", analyst, "DROP TABLE hr.employees", true},
		{"ATTACH", analyst, "ATTACH '/tmp/x.db'", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rows, err := tc.c.query(ctx, tc.sql)
			if tc.wantErr && err == nil {
				t.Fatalf("ran: %v", rows)
			}
			for _, row := range rows {
				for _, v := range row {
					if hrData.MatchString(v) || (len(host) > 0 && strings.Contains(v, strings.TrimSpace(string(host)))) {
						t.Fatalf("leaked %q in %v", v, row)
					}
				}
			}
		})
	}
	t.Run("minus minus prints safely", func(t *testing.T) {
		_, rows, err := analyst.query(ctx, "SELECT - -1, 1 --1\n")
		if err != nil || rows[0][0] != "1" || rows[0][1] != "2" {
			t.Fatalf("rows = %v, %v (MySQL answers 1, 2)", rows, err)
		}
	})
	t.Run("nothing was written or dropped", func(t *testing.T) {
		if _, err := os.Stat(written); !os.IsNotExist(err) {
			t.Fatalf("%s exists or stat failed: %v", written, err)
		}
		hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
		_, rows, err := hr.query(ctx, "SELECT count(*) FROM hr.employees")
		if err != nil || rows[0][0] != "500" {
			t.Fatalf("hr.employees after the attacks: %v, %v", rows, err)
		}
	})
}
