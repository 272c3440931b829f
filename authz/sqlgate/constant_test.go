package sqlgate_test

import (
	"testing"

	"lakegate/authz/sqlgate"
)

// TestConstant: only a SELECT whose printed fields are literals, without
// tables, clauses, parameters or functions, is constant; anything whose
// result may depend on the time, the session, randomness or data is not.
func TestConstant(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	cases := []struct {
		sql  string
		want bool
	}{
		{"SELECT 1", true},
		{"select 1 from dual", true},
		{"/* ping */ SELECT 1", true},
		{"SELECT -1.5, 'x' AS y, NULL, TRUE, 2.5E0, - -3", true},
		{"SELECT 'a' 'b'", true},
		{"SELECT now()", false},
		{"SELECT rand()", false},
		{"SELECT uuid()", false},
		{"SELECT current_user()", false},
		{"SELECT database()", false},
		{"SELECT @@version", true}, // printed as the literal the gate answers with
		{"SELECT connection_id()", false},
		{"SELECT 1 + 1", false},
		{"SELECT ?", false},
		{"SELECT 1 FROM t", false},
		{"SELECT 1 WHERE 1 = 0", false},
		{"SELECT 1 LIMIT 0", false},
		{"SELECT 1 UNION SELECT 2", false},
		{"SELECT (SELECT 1)", false},
		{"SELECT * FROM (SELECT 1) AS d", false},
		{"WITH c AS (SELECT 1) SELECT 1", false},
		{"SELECT NOT 1", false},
		{"SELECT DATE '2024-01-01'", false},
		{"SHOW TABLES", false},
	}
	for _, c := range cases {
		st, err := g.Parse(c.sql, "s")
		if err != nil {
			if c.want {
				t.Errorf("%s: %v", c.sql, err)
			}
			continue
		}
		if got := st.Constant(); got != c.want {
			t.Errorf("%s: Constant() = %v, want %v", c.sql, got, c.want)
		}
	}
}
