package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
)

// ssnRE matches a real social security number of the demo's hr.employees.
var ssnRE = regexp.MustCompile(`\d{3}-\d{2}-\d{4}`)

// TestPolicies drives row filters and column masks end to end through the
// ADBC client against `lakegate serve`: governance written over REST, queries
// through the gateway.
func TestPolicies(t *testing.T) {
	srv := startServe(t)
	env, node := serveMetasrv(t, srv)
	const ml = "/api/metalakes/demo"
	admin := func(method, path string, body any) { env.must(t, node, method, path, body) }
	ctx := context.Background()

	hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	owner := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))

	// A policy expression outside the allow-list is refused when written.
	r := env.do(t, node, "POST", ml+"/policies", map[string]any{"name": "bad", "policyType": "row_filter",
		"content": map[string]any{"expression": "id IN (SELECT id FROM hr.employees)"}})
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.raw), "subqueries") {
		t.Fatalf("a filter with a subquery: HTTP %d %s", r.status, r.raw)
	}

	// pii: REDACT for everyone without pii_reader, on hr.employees.ssn.
	admin("POST", ml+"/roles", map[string]any{"name": "pii_reader"})
	admin("POST", ml+"/tags", map[string]any{"name": "pii"})
	admin("POST", ml+"/policies", map[string]any{"name": "redact_pii", "policyType": "column_mask",
		"content": map[string]any{"mask": "REDACT", "exempt_roles": []string{"pii_reader"}}})
	admin("PUT", ml+"/tags/pii/policies/redact_pii", nil)
	admin("POST", ml+"/objects/column/lake.hr.employees.ssn/tags", map[string]any{"tagsToAdd": []string{"pii"}})

	t.Run("masked everywhere", func(t *testing.T) {
		for _, q := range []string{
			"SELECT * FROM hr.employees",
			"SELECT ssn FROM hr.employees",
			"SELECT a.ssn, b.ssn FROM hr.employees a JOIN hr.employees b ON a.id = b.id",
			"SELECT name FROM hr.employees WHERE ssn IN (SELECT ssn FROM hr.employees WHERE id < 5)",
			"SELECT (SELECT max(ssn) FROM hr.employees) AS m",
			"WITH c AS (SELECT ssn FROM hr.employees) SELECT ssn FROM c",
			"SELECT ssn FROM hr.employees UNION SELECT name FROM hr.employees",
			"SELECT ssn, row_number() OVER (PARTITION BY ssn ORDER BY id) FROM hr.employees",
			"SELECT ssn, count(*) FROM hr.employees GROUP BY ssn",
			"SELECT group_concat(ssn) FROM hr.employees",
			"SELECT right(ssn, 9) FROM hr.employees",
		} {
			_, rows, err := hr.query(ctx, q)
			if err != nil {
				t.Errorf("%s: %v", q, err)
				continue
			}
			if len(rows) == 0 {
				t.Errorf("%s: no rows", q)
			}
			for _, row := range rows {
				if s := strings.Join(row, "|"); ssnRE.MatchString(s) {
					t.Fatalf("%s leaked a value: %s", q, s)
				}
			}
		}
		wantRows(t, hr.mustRows(t, "SELECT ssn FROM hr.employees WHERE id = 1"), []string{"***"})
		// Probing the masked column finds nothing.
		wantRows(t, hr.mustRows(t, "SELECT count(*) FROM hr.employees WHERE ssn = '101-11-1001'"), []string{"0"})
		// A row as a struct is refused by the gate (MySQL has no such thing).
		if _, rows, err := hr.query(ctx, "SELECT t FROM hr.employees t"); err == nil && ssnRE.MatchString(strings.Join(rows[0], "")) {
			t.Fatalf("row as struct leaked: %v", rows[0])
		}
		// The schema clients see is the table's.
		schema, _, err := hr.query(ctx, "SELECT ssn, salary FROM hr.employees LIMIT 1")
		if err != nil || schema.Field(0).Type.String() != "utf8" {
			t.Fatalf("masked schema %v, %v", schema, err)
		}
		// EXPLAIN would print the mask: refused.
		if _, _, err := hr.query(ctx, "EXPLAIN SELECT ssn FROM hr.employees"); err == nil || !strings.Contains(err.Error(), "row filter or column mask") {
			t.Fatalf("EXPLAIN of a masked table: %v", err)
		}
		// CTAS reads through the mask: no laundering into a new table.
		if _, err := hr.exec(ctx, "CREATE TABLE hr.copy AS SELECT * FROM hr.employees"); err != nil {
			t.Fatal(err)
		}
		wantRows(t, hr.mustRows(t, "SELECT count(*), min(ssn), max(ssn) FROM hr.copy"), []string{"500", "***", "***"})
	})

	t.Run("conflicting masks fail closed", func(t *testing.T) {
		admin("POST", ml+"/tags", map[string]any{"name": "pii2"})
		admin("POST", ml+"/policies", map[string]any{"name": "null_pii", "policyType": "column_mask",
			"content": map[string]any{"mask": "NULL"}})
		admin("PUT", ml+"/tags/pii2/policies/null_pii", nil)
		admin("POST", ml+"/objects/column/lake.hr.employees.ssn/tags", map[string]any{"tagsToAdd": []string{"pii2"}})
		_, _, err := hr.query(ctx, "SELECT id FROM hr.employees WHERE id = 1")
		if err == nil || !strings.Contains(err.Error(), "FailedPrecondition") || !strings.Contains(err.Error(), "hr.employees") {
			t.Fatalf("conflicting masks: %v", err)
		}
		for _, secret := range []string{"null_pii", "redact_pii", "REDACT"} {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the refusal names the policies: %v", err)
			}
		}
		// A disabled policy does not apply.
		admin("PATCH", ml+"/policies/null_pii", map[string]any{"enable": false})
		wantRows(t, hr.mustRows(t, "SELECT ssn FROM hr.employees WHERE id = 1"), []string{"***"})
		// Enabled again it conflicts again; removing its tag from the
		// column restores access.
		admin("PATCH", ml+"/policies/null_pii", map[string]any{"enable": true})
		if _, _, err := hr.query(ctx, "SELECT id FROM hr.employees WHERE id = 1"); err == nil {
			t.Fatal("conflicting masks after re-enabling: no error")
		}
		admin("POST", ml+"/objects/column/lake.hr.employees.ssn/tags", map[string]any{"tagsToRemove": []string{"pii2"}})
		wantRows(t, hr.mustRows(t, "SELECT ssn FROM hr.employees WHERE id = 1"), []string{"***"})
	})

	t.Run("exempt role sees real values", func(t *testing.T) {
		// A statement prepared before the grant runs with the policy of
		// the moment it executes.
		stmt := hr.prepare(t, "SELECT ssn FROM hr.employees WHERE id = 1")
		if got := firstCell(t, ctx, stmt); got != "***" {
			t.Fatalf("prepared, before the grant: %q", got)
		}
		admin("PUT", ml+"/permissions/users/hr@demo/grant", map[string]any{"roleNames": []string{"pii_reader"}})
		if got := firstCell(t, ctx, stmt); got != "101-11-1001" {
			t.Fatalf("prepared, after the grant: %q", got)
		}
		wantRows(t, hr.mustRows(t, "SELECT ssn FROM hr.employees WHERE id = 1"), []string{"101-11-1001"})
		wantRows(t, hr.mustRows(t, "SELECT count(*) FROM hr.employees WHERE ssn = '101-11-1001'"), []string{"1"})
		// What was written masked stays masked.
		wantRows(t, hr.mustRows(t, "SELECT min(ssn) FROM hr.copy"), []string{"***"})
	})

	t.Run("row filter", func(t *testing.T) {
		// Unfiltered answers first, from the owner.
		joined := owner.mustRows(t, "SELECT count(*) FROM sales.orders WHERE customer_id % 5 = 0")
		// A predicate that fails on the rows the filter will hide (the US
		// ones) fails the query while they are visible, and never once they
		// are hidden: the filter is fenced, so it tells nothing of them.
		oracle := "SELECT count(*) FROM sales.customers WHERE CAST(CASE WHEN country = 'US' THEN name ELSE '1' END AS SIGNED) = 1"
		if _, _, err := owner.query(ctx, oracle); err == nil {
			t.Fatal("the oracle query succeeded while the US rows are visible")
		}
		admin("POST", ml+"/tags", map[string]any{"name": "de_only"})
		admin("POST", ml+"/policies", map[string]any{"name": "de_rows", "policyType": "row_filter",
			"content": map[string]any{"expression": "country = 'DE' OR has_role('global_sales')"}})
		admin("PUT", ml+"/tags/de_only/policies/de_rows", nil)
		admin("POST", ml+"/objects/table/lake.sales.customers/tags", map[string]any{"tagsToAdd": []string{"de_only"}})

		wantRows(t, analyst.mustRows(t, "SELECT count(*), max(id), min(country), max(country) FROM sales.customers"),
			[]string{"400", "2000", "DE", "DE"})
		wantRows(t, analyst.mustRows(t, "SELECT EXISTS (SELECT 1 FROM sales.customers WHERE country = 'US')"), []string{"false"})
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.orders o JOIN sales.customers c ON c.id = o.customer_id"), joined...)
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.orders WHERE customer_id IN (SELECT id FROM sales.customers)"), joined...)
		for range 3 {
			wantRows(t, analyst.mustRows(t, oracle), []string{"400"})
		}
		// A literal point lookup behind the fence.
		wantRows(t, analyst.mustRows(t, "SELECT name FROM sales.customers WHERE id = 5"), []string{"Customer 5"})
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.customers WHERE id = 6"), []string{"0"})
		// The same lookup prepared: a bound integer is compared behind the
		// fence as well (sqlgate RenderPushed); a value of another kind
		// runs the statement as printed without it.
		lookup := analyst.prepare(t, "SELECT name FROM sales.customers WHERE id = ?")
		for _, tc := range []struct {
			param arrow.RecordBatch
			want  []string
		}{
			{int64Record(t, 5), []string{"Customer 5"}},
			{int64Record(t, 6), nil},
			{paramRecord(t, "5"), []string{"Customer 5"}},
			{paramRecord(t, "6"), nil},
			{int64Record(t, 5), []string{"Customer 5"}},
		} {
			if got := boundColumn(t, ctx, lookup, tc.param); !slices.Equal(got, tc.want) {
				t.Errorf("prepared lookup bound to %v: %v, want %v", tc.param.Column(0), got, tc.want)
			}
		}

		admin("POST", ml+"/roles", map[string]any{"name": "global_sales"})
		admin("PUT", ml+"/permissions/users/analyst@demo/grant", map[string]any{"roleNames": []string{"global_sales"}})
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.customers"), []string{"2000"})
	})

	t.Run("schema tag masks tables created later", func(t *testing.T) {
		admin("POST", ml+"/tags", map[string]any{"name": "sensitivity", "allowedValues": []string{"pii", "public"}})
		admin("POST", ml+"/policies", map[string]any{"name": "redact_sensitive", "policyType": "column_mask",
			"content": map[string]any{"mask": "REDACT"}})
		admin("PUT", ml+"/tags/sensitivity/policies/redact_sensitive", map[string]any{"selector": map[string]any{"type": "TAG_VALUE", "value": "pii"}})
		tagV2(t, env, node, ml+"/objects/schema/lake.hr/tags", "sensitivity", "pii")
		if _, err := hr.exec(ctx, "CREATE TABLE hr.contacts AS SELECT 1 AS id, 'call-me-555' AS phone"); err != nil {
			t.Fatal(err)
		}
		wantRows(t, hr.mustRows(t, "SELECT id, phone FROM hr.contacts"), []string{"NULL", "***"})
		// The other value of the tag selects nothing.
		admin("POST", ml+"/objects/schema/lake.hr/tags", map[string]any{"tagsToRemove": []string{"sensitivity"}})
		tagV2(t, env, node, ml+"/objects/schema/lake.hr/tags", "sensitivity", "public")
		wantRows(t, hr.mustRows(t, "SELECT id, phone FROM hr.contacts"), []string{"1", "call-me-555"})
	})
}

// boundColumn binds param (and releases it), executes the prepared stmt and
// returns its first column.
func boundColumn(t *testing.T, ctx context.Context, stmt adbc.Statement, param arrow.RecordBatch) []string {
	t.Helper()
	defer param.Release()
	if err := stmt.Bind(ctx, param); err != nil {
		t.Fatal(err)
	}
	return firstColumn(t, ctx, stmt)
}

// firstCell executes a prepared statement and returns its first value.
func firstCell(t *testing.T, ctx context.Context, stmt adbc.Statement) string {
	t.Helper()
	rdr, _, err := stmt.ExecuteQuery(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	for rdr.Next() {
		if rec := rdr.RecordBatch(); rec.NumRows() > 0 {
			return rec.Column(0).ValueStr(0)
		}
	}
	t.Fatalf("no rows (%v)", rdr.Err())
	return ""
}

// tagV2 assigns tag=value to an object with Gravitino's v2 association body.
func tagV2(t *testing.T, env *metasrvEnv, node *metasrvProc, path, tag, value string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"tagsToAdd": []map[string]string{{"name": tag, "value": value}}})
	req, err := http.NewRequest("POST", "http://"+node.httpAddr+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+env.adminTok)
	req.Header.Set("Content-Type", "application/vnd.gravitino.v2+json")
	resp, err := env.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		t.Fatalf("tagging %s: HTTP %d %s", path, resp.StatusCode, buf.String())
	}
}
