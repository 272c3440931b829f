package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestColumnGovernanceAttack is the review's attack on a real `lakegate
// serve`: hr@demo (role hr_analyst: SELECT_TABLE, MODIFY_TABLE and
// CREATE_TABLE on hr, not the owner of hr.employees) reads ssn and salary
// masked; deleting a masked column and adding it again over REST would
// drop the column object with its tag, and the gateway would read the
// files' values under the untagged namesake. Every way to it is refused —
// over REST, as a replace through the gateway, by the owner while the
// files hold the column — and SELECT * stays masked. The owner's refused
// rename says why, and the table stays readable.
func TestColumnGovernanceAttack(t *testing.T) {
	srv := startServe(t)
	env, node := serveMetasrv(t, srv)
	hrEnv := *env
	hrEnv.adminTok = srv.token(t, "hr@demo")
	const ml = "/api/metalakes/demo"
	const tbl = ml + "/catalogs/lake/schemas/hr/tables/employees"
	ctx := context.Background()

	maskHR(t, env, node)

	hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
	owner := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))
	masked := func(t *testing.T, c *client) {
		t.Helper()
		if n := selectMasked(t, c); n != 500 {
			t.Fatalf("SELECT *: %d rows", n)
		}
		wantRows(t, c.mustRows(t, "SELECT ssn, salary FROM hr.employees WHERE id = 1"), []string{"***", "NULL"})
	}
	masked(t, hr)

	const (
		delSSN = `{"@type":"deleteColumn","fieldName":["ssn"]}`
		addSSN = `{"@type":"addColumn","fieldName":["ssn"],"type":"utf8"}`
		delSal = `{"@type":"deleteColumn","fieldName":["salary"]}`
		addSal = `{"@type":"addColumn","fieldName":["salary"],"type":"int64"}`
		rename = `{"@type":"renameColumn","oldFieldName":["ssn"],"newFieldName":"ssn2"}`
	)
	updates := func(us ...string) json.RawMessage {
		return json.RawMessage(`{"updates":[` + strings.Join(us, ",") + `]}`)
	}
	for _, tc := range []struct {
		name   string
		env    *metasrvEnv
		body   json.RawMessage
		status int
	}{
		{"hr@demo deletes and re-adds ssn", &hrEnv, updates(delSSN, addSSN), http.StatusForbidden},
		{"hr@demo deletes and re-adds salary", &hrEnv, updates(delSal, addSal), http.StatusForbidden},
		{"hr@demo deletes ssn", &hrEnv, updates(delSSN), http.StatusForbidden},
		{"hr@demo renames ssn", &hrEnv, updates(rename), http.StatusForbidden},
		{"the owner deletes and re-adds ssn", env, updates(delSSN, addSSN), http.StatusConflict},
		{"the owner deletes and re-adds salary", env, updates(delSal, addSal), http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.env.do(t, node, "PUT", tbl, tc.body)
			masked(t, hr)
			if r.status != tc.status {
				t.Fatalf("HTTP %d, want %d: %s", r.status, tc.status, r.raw)
			}
		})
	}
	// A replace through the gateway with other columns changes the
	// table's columns too: refused to hr@demo, nothing written.
	rec := paramRecord(t, int64(1))
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hr.ingest(ctx, "hr", "employees", adbc.OptionValueIngestModeReplace, rdr); adbcStatus(err) != adbc.StatusUnauthorized {
		t.Fatalf("hr@demo replaces hr.employees with other columns: %v", err)
	}
	rdr.Release()
	masked(t, hr)

	// The owner's rename is refused, saying why; nobody's table vanished.
	r := env.do(t, node, "PUT", tbl, updates(rename))
	if r.status != http.StatusConflict || !strings.Contains(string(r.raw), `column \"ssn\" holds data in version 1`) {
		t.Fatalf("the owner's rename: HTTP %d %s", r.status, r.raw)
	}
	masked(t, hr)
	masked(t, owner)
}

// maskHR masks hr.employees for everyone: ssn REDACT (tag pii), salary NULL
// (tag comp); written over REST by the demo metalake's owner.
func maskHR(t *testing.T, env *metasrvEnv, node *metasrvProc) {
	t.Helper()
	const ml = "/api/metalakes/demo"
	admin := func(method, path string, body any) { env.must(t, node, method, path, body) }
	admin("POST", ml+"/tags", map[string]any{"name": "pii"})
	admin("POST", ml+"/policies", map[string]any{"name": "redact_pii", "policyType": "column_mask", "content": map[string]any{"mask": "REDACT"}})
	admin("PUT", ml+"/tags/pii/policies/redact_pii", nil)
	admin("POST", ml+"/tags", map[string]any{"name": "comp"})
	admin("POST", ml+"/policies", map[string]any{"name": "null_comp", "policyType": "column_mask", "content": map[string]any{"mask": "NULL"}})
	admin("PUT", ml+"/tags/comp/policies/null_comp", nil)
	admin("POST", ml+"/objects/column/lake.hr.employees.ssn/tags", map[string]any{"tagsToAdd": []string{"pii"}})
	admin("POST", ml+"/objects/column/lake.hr.employees.salary/tags", map[string]any{"tagsToAdd": []string{"comp"}})
}

// selectMasked runs SELECT * FROM hr.employees as c, fails on a real SSN or
// a salary that is not NULL, and returns the number of rows.
func selectMasked(t *testing.T, c *client) int {
	t.Helper()
	_, rows, err := c.query(context.Background(), "SELECT * FROM hr.employees")
	if err != nil {
		t.Fatalf("SELECT *: %v", err)
	}
	for _, row := range rows {
		if s := strings.Join(row, "|"); ssnRE.MatchString(s) || len(row) != 5 || row[3] != "NULL" {
			t.Fatalf("SELECT * leaked a value: %s", s)
		}
	}
	return len(rows)
}

// TestStorageIDReuseAttack is the review's second attack on a real `lakegate
// serve`: the owner of the masked hr.employees (admin@demo, masked like
// everyone) drops it and creates it again over REST on its storage id and
// files, with a made-up SHA-256 even, to read the files unmasked — and the
// engine, which caches a view per "<storage id>@<version>", would serve the
// old table's. Only a gateway names a storage id or registers files: each
// attempt is refused; the table created again gets a storage id never used
// before, reads empty (no stale view), and takes rows through the gateway.
func TestStorageIDReuseAttack(t *testing.T) {
	srv := startServe(t)
	env, node := serveMetasrv(t, srv)
	const tables = "/api/metalakes/demo/catalogs/lake/schemas/hr/tables"
	maskHR(t, env, node)
	owner := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))
	hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
	ctx := context.Background()

	// The owner reads the table (masked): the engine now holds its view.
	if n := selectMasked(t, owner); n != 500 {
		t.Fatalf("%d rows", n)
	}
	tb := env.must(t, node, "GET", tables+"/employees", nil).body["table"].(map[string]any)
	oldSID, _ := tb["storageId"].(string)
	cols := tb["columns"]
	vs := env.must(t, node, "GET", tables+"/employees/versions", nil).body["versions"].([]any)
	files := vs[0].(map[string]any)["files"].([]any)
	if oldSID == "" || len(files) == 0 {
		t.Fatalf("table %v, files %v", tb, files)
	}
	fake := map[string]any{}
	for k, v := range files[0].(map[string]any) {
		fake[k] = v
	}
	fake["sha256"] = strings.Repeat("0", 64)

	if _, err := owner.exec(ctx, "DROP TABLE hr.employees"); err != nil {
		t.Fatal(err)
	}
	for _, body := range []map[string]any{
		{"name": "employees", "columns": cols, "storageId": oldSID, "files": files},
		{"name": "employees", "columns": cols, "storageId": oldSID, "files": []any{fake}},
		{"name": "employees", "columns": cols, "storageId": oldSID},
		{"name": "employees", "columns": cols, "files": files},
	} {
		if r := env.do(t, node, "POST", tables, body); r.status != http.StatusBadRequest {
			selectMasked(t, owner) // what the attack would have read
			t.Fatalf("re-created on the old storage id or files: HTTP %d %s", r.status, r.raw)
		}
	}
	r := env.must(t, node, "POST", tables, map[string]any{"name": "employees", "columns": cols})
	newSID, _ := r.body["table"].(map[string]any)["storageId"].(string)
	if newSID == "" || newSID == oldSID || r.body["table"].(map[string]any)["version"] != float64(0) {
		t.Fatalf("re-created table: %s", r.raw)
	}
	if r := env.do(t, node, "POST", tables+"/employees/versions", map[string]any{"base": 0, "files": files}); r.status != http.StatusBadRequest {
		t.Fatalf("the old files committed to the new table: HTTP %d %s", r.status, r.raw)
	}
	for _, c := range []*client{owner, hr} {
		if n := selectMasked(t, c); n != 0 {
			t.Fatalf("the re-created table reads %d rows", n)
		}
	}
	// Rows come in through the gateway, under the minted storage id.
	if _, err := hr.exec(ctx, "INSERT INTO hr.employees SELECT 7, 'Employee 7', 'eng', 1, '000-00-0007'"); err != nil {
		t.Fatal(err)
	}
	wantRows(t, hr.mustRows(t, "SELECT id, name FROM hr.employees"), []string{"7", "Employee 7"})
	files = env.must(t, node, "GET", tables+"/employees/versions", nil).body["versions"].([]any)[0].(map[string]any)["files"].([]any)
	if p, _ := files[0].(map[string]any)["path"].(string); !strings.HasPrefix(p, "tables/"+newSID+"/") {
		t.Fatalf("inserted file %s, storage id %s", p, newSID)
	}
}
