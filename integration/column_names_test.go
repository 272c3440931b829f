package integration_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// nameLeakRE matches what no result column name, schema or error message
// may carry: the text of the test's row filter and masks, a storage id
// (lg_rel."v_<id>"), the gate's internal names and its translations.
var nameLeakRE = regexp.MustCompile(`zzfilter|zzrole|zzmask|424242|lg_rel|\bv_[0-9A-Za-z_-]{6,}|__lg|__cte|list_transform|TRY_CAST|OFFSET 0|has_role`)

// TestColumnNames: through the gateway, result column names are MySQL's,
// taken from the client's text, in every schema the client can ask for
// (GetExecuteSchema, FlightInfo, a prepared statement's dataset schema,
// the stream), and neither a name nor an engine error carries a row filter,
// a mask, a storage id or an internal name.
func TestColumnNames(t *testing.T) {
	srv := startServe(t)
	env, node := serveMetasrv(t, srv)
	const ml = "/api/metalakes/demo"
	admin := func(method, path string, body any) { env.must(t, node, method, path, body) }
	ctx := context.Background()

	// hr.employees: a row filter and expression masks on ssn and salary,
	// all with text easy to find in a name or a message.
	for _, p := range []struct{ tag, policy, kind, key, text, object string }{
		{"zz_rows", "zz_rows_filter", "row_filter", "expression", "name <> 'zzfilter' OR has_role('zzrole')", "table/lake.hr.employees"},
		{"zz_ssn", "zz_ssn_mask", "column_mask", "mask", "concat('zzmask', right({column}, 2))", "column/lake.hr.employees.ssn"},
		{"zz_salary", "zz_salary_mask", "column_mask", "mask", "{column} * 0 + 424242", "column/lake.hr.employees.salary"},
	} {
		admin("POST", ml+"/tags", map[string]any{"name": p.tag})
		admin("POST", ml+"/policies", map[string]any{"name": p.policy, "policyType": p.kind, "content": map[string]any{p.key: p.text}})
		admin("PUT", ml+"/tags/"+p.tag+"/policies/"+p.policy, nil)
		admin("POST", ml+"/objects/"+p.object+"/tags", map[string]any{"tagsToAdd": []string{p.tag}})
	}
	hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	hrRPC, hrCtx := flightSQLAs(t, srv, srv.token(t, "hr@demo"))

	// The policies apply: the masked value is the mask's.
	wantRows(t, hr.mustRows(t, "SELECT ssn, salary FROM hr.employees WHERE id = 2"), []string{"zzmask02", "424242"})

	t.Run("no policy in a name", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"SELECT (SELECT ssn FROM hr.employees WHERE id = 2)", []string{"(SELECT ssn FROM hr.employees WHERE id = 2)"}},
			{"SELECT * FROM (SELECT (SELECT salary FROM hr.employees WHERE id = 2)) d", []string{"(SELECT salary FROM hr.employees WHERE id = 2)"}},
			{"WITH c AS (SELECT (SELECT max(ssn) FROM hr.employees), count(*) FROM hr.employees) SELECT * FROM c",
				[]string{"(SELECT max(ssn) FROM hr.employees)", "count(*)"}},
			{"SELECT EXISTS (SELECT 1 FROM hr.employees WHERE ssn LIKE 'zz%') UNION SELECT 1", []string{"EXISTS (SELECT 1 FROM hr.employees WHERE ssn LIKE 'zz%')"}},
			{"SELECT ssn, salary, e.name, upper(ssn) FROM hr.employees e WHERE id = 2", []string{"ssn", "salary", "name", "upper(ssn)"}},
			{"SELECT * FROM hr.employees WHERE id = 2", []string{"id", "name", "department", "salary", "ssn"}},
		} {
			check := func(where string, s *arrow.Schema) {
				t.Helper()
				got := fieldNames(s)
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("%s: %s names %q, want %q", tc.query, where, got, tc.want)
				}
				for _, n := range got {
					if m := nameLeakRE.FindString(n); m != "" {
						t.Errorf("%s: %s name %.200q… carries %q", tc.query, where, n, m)
					}
				}
			}
			// GetExecuteSchema: planned, not run.
			res, err := hrRPC.GetExecuteSchema(hrCtx, tc.query)
			if err != nil {
				t.Fatalf("%s: GetExecuteSchema: %v", tc.query, err)
			}
			check("GetExecuteSchema", schemaOf(t, res.GetSchema()))
			info, err := hrRPC.Execute(hrCtx, tc.query)
			if err != nil {
				t.Fatalf("%s: Execute: %v", tc.query, err)
			}
			check("FlightInfo", schemaOf(t, info.GetSchema()))
			prep, err := hrRPC.Prepare(hrCtx, tc.query)
			if err != nil {
				t.Fatalf("%s: Prepare: %v", tc.query, err)
			}
			check("prepared dataset schema", prep.DatasetSchema())
			ps, err := prep.GetSchema(hrCtx)
			if err != nil {
				t.Fatalf("%s: prepared GetSchema: %v", tc.query, err)
			}
			check("prepared GetSchema", schemaOf(t, ps.GetSchema()))
			if err := prep.Close(hrCtx); err != nil {
				t.Fatal(err)
			}
			s, _, err := hr.query(ctx, tc.query)
			if err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
			check("result", s)
		}
	})

	t.Run("MySQL names", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"SELECT count(*), COUNT(*) FROM sales.orders", []string{"count(*)", "COUNT(*)"}},
			{"SELECT IFNULL(amount, 0), CONCAT(status, '!'), YEAR(order_date), o.order_date FROM sales.orders o LIMIT 1",
				[]string{"IFNULL(amount, 0)", "CONCAT(status, '!')", "YEAR(order_date)", "order_date"}},
			{"SELECT 'abc', 1+1, NULL, TRUE, 2.50", []string{"abc", "1+1", "NULL", "TRUE", "2.50"}},
			{"SELECT * FROM (SELECT count(*) FROM sales.orders) d", []string{"count(*)"}},
			{"SELECT status FROM sales.orders UNION SELECT 'x'", []string{"status"}},
		} {
			s, _, err := analyst.query(ctx, tc.query)
			if err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
			if got := fieldNames(s); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s: names %q, want %q", tc.query, got, tc.want)
			}
		}
		// As in MySQL, ORDER BY may name a column by the name made from
		// its text.
		wantRows(t, analyst.mustRows(t, "SELECT status, count(*) FROM sales.orders GROUP BY status ORDER BY `COUNT(*)`, status"),
			[]string{"new", "1666"}, []string{"returned", "1667"}, []string{"shipped", "1667"})
	})

	t.Run("no policy in a message", func(t *testing.T) {
		for _, tc := range []struct {
			c     *client
			query string
			write bool
		}{
			{hr, "SELECT nosuch FROM hr.employees", false},
			{hr, "SELECT ssn FROM hr.employees e, hr.employees f", false},
			{hr, "SELECT * FROM hr.employees e JOIN hr.employees f USING (nope)", false},
			{hr, "SELECT CAST(ssn AS SIGNED) + 1 FROM hr.employees", false},
			{hr, "SELECT (SELECT ssn FROM hr.employees)", false},
			{hr, "SELECT department, ssn FROM hr.employees GROUP BY department", false},
			{hr, "SELECT sum(ssn) FROM hr.employees", false},
			{hr, "CREATE TABLE hr.names_dup AS SELECT (SELECT ssn FROM hr.employees WHERE id = 2), (SELECT ssn FROM hr.employees WHERE id = 2)", true},
			{hr, "CREATE TABLE hr.names_dup AS SELECT ssn, ssn FROM hr.employees", true},
			{hr, "INSERT INTO hr.employees SELECT ssn, (SELECT ssn FROM hr.employees WHERE id = 2) FROM hr.employees", true},
			{analyst, "WITH c AS (SELECT 1 AS a) SELECT c.zz FROM c", false},
			{analyst, "WITH RECURSIVE c(n) AS (SELECT 1, 2 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT * FROM c", false},
			{analyst, "SELECT zz FROM sales.orders WHERE 1 = 1", false},
			{analyst, "SELECT * FROM (SELECT id FROM sales.orders) d JOIN sales.customers c USING (nope)", false},
		} {
			var err error
			if tc.write {
				_, err = tc.c.exec(ctx, tc.query)
			} else {
				_, _, err = tc.c.query(ctx, tc.query)
			}
			if err == nil {
				t.Errorf("%s: no error", tc.query)
				continue
			}
			if m := nameLeakRE.FindString(err.Error()); m != "" {
				t.Errorf("%s: the message carries %q: %v", tc.query, m, err)
			}
		}
	})
}

// schemaOf decodes a serialized schema.
func schemaOf(t *testing.T, b []byte) *arrow.Schema {
	t.Helper()
	s, err := flight.DeserializeSchema(b, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
