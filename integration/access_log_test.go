package integration_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"lakegate/authz"
)

// TestAccessLogAcrossSIGTERM: statements of three users — a read, a CTAS,
// a denial and a refused write into schema system — are batched under an
// hour's flush interval, so only the flush of a graceful stop (SIGTERM)
// can write them; after a restart on the same data directory the tenant
// admin reads every one of them in system.access_events through the
// gateway, with no literal of a statement, and a user without a grant
// cannot read the table at all.
func TestAccessLogAcrossSIGTERM(t *testing.T) {
	dataDir := t.TempDir()
	args := []string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--access-log-flush", "1h"}
	s := startServeArgs(t, dataDir, args...)
	ctx := context.Background()
	analyst := mustDial(t, s.uri(), bearer(s.token(t, "analyst@demo")))
	hr := mustDial(t, s.uri(), bearer(s.token(t, "hr@demo")))
	admin := mustDial(t, s.uri(), bearer(s.token(t, "admin@demo")))

	const literal = "secret-literal-42"
	if _, _, err := analyst.query(ctx, "SELECT count(*) FROM sales.orders WHERE status = '"+literal+"'"); err != nil {
		t.Fatal(err)
	}
	if _, err := analyst.exec(ctx, "CREATE TABLE sales.big_orders AS SELECT * FROM sales.orders"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hr.query(ctx, "SELECT * FROM sales.orders WHERE status = '"+literal+"'"); err == nil {
		t.Fatal("hr@demo read sales.orders")
	}
	if _, err := admin.exec(ctx, "DROP TABLE system.access_events"); err == nil || !strings.Contains(err.Error(), "table system.access_events is read-only") {
		t.Fatalf("dropping system.access_events: %v, want it read-only", err)
	}
	s.stop(t)

	s = startServeArgs(t, dataDir, args...)
	admin = mustDial(t, s.uri(), bearer(s.token(t, "admin@demo")))
	rows := admin.mustRows(t, "SELECT principal, kind, tables_read, tables_written, decision, deny_reason, statement FROM system.access_events ORDER BY time")
	want := [][]string{
		{"analyst@demo", "query", "sales.orders@1", "", "allowed", ""},
		{"analyst@demo", "create table as", "sales.orders@1", "sales.big_orders@1", "allowed", ""},
		{"hr@demo", "query", "sales.orders@0", "", "denied", "namespace"},
		{"admin@demo", "drop table", "", "system.access_events@0", "denied", "privilege"},
	}
	if len(rows) != len(want) {
		t.Fatalf("events:\n%v\nwant %d", rows, len(want))
	}
	for i, w := range want {
		if got := rows[i][:len(w)]; strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("event %d: %q, want %q", i, got, w)
		}
		if strings.Contains(strings.Join(rows[i], "|"), literal) {
			t.Errorf("event %d holds the statement's literal: %q", i, rows[i])
		}
	}
	for _, i := range []int{0, 2} {
		if !strings.HasSuffix(rows[i][6], "from `sales` . `orders` where status = ?") {
			t.Errorf("event %d: statement %q, want it normalised", i, rows[i][6])
		}
	}
	analyst = mustDial(t, s.uri(), bearer(s.token(t, "analyst@demo")))
	if _, _, err := analyst.query(ctx, "SELECT count(*) FROM system.access_events"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("analyst@demo reading system.access_events: %v, want it missing", err)
	}
}

// TestAccessLogGovernedLikeATable: system.access_events is read like any
// table. Only the tenant admin reads it by default; granted to a user (whose
// principal map names schema system) with a row filter on
// principal = current_user(), that user sees only their own events.
func TestAccessLogGovernedLikeATable(t *testing.T) {
	dataDir := t.TempDir()
	// The demo's principals, with schema system added to the analyst's
	// namespaces (the gateway's own gate, before metasrv's grants).
	toks := map[string]string{}
	var specs []authz.PrincipalSpec
	for _, p := range []struct {
		id, tenant, role string
		namespaces       []string
	}{
		{"analyst@demo", "demo", "user", []string{"sales", "system"}},
		{"hr@demo", "demo", "user", []string{"hr"}},
		{"admin@demo", "demo", "tenant_admin", nil},
		{"operator", "platform", "operator", nil},
	} {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		toks[p.id] = tok
		specs = append(specs, authz.PrincipalSpec{ID: p.id, Tenant: p.tenant, Role: p.role, Namespaces: p.namespaces,
			TokenHashes: []string{authz.HashToken(tok).String()}})
	}
	if err := authz.WritePrincipalMap(filepath.Join(dataDir, "principals.yaml"), specs); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--access-log-flush", "1h"}
	s := startServeArgs(t, dataDir, args...)
	ctx := context.Background()
	for id, sql := range map[string]string{
		"analyst@demo": "SELECT count(*) FROM sales.orders",
		"hr@demo":      "SELECT count(*) FROM hr.employees",
		"admin@demo":   "SELECT count(*) FROM sales.customers",
	} {
		if _, _, err := mustDial(t, s.uri(), bearer(toks[id])).query(ctx, sql); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	// Written by the flush of a graceful stop.
	s.stop(t)
	s = startServeArgs(t, dataDir, args...)
	analyst := mustDial(t, s.uri(), bearer(toks["analyst@demo"]))
	admin := mustDial(t, s.uri(), bearer(toks["admin@demo"]))
	wantRows(t, admin.mustRows(t, "SELECT DISTINCT principal FROM system.access_events ORDER BY principal"),
		[]string{"admin@demo"}, []string{"analyst@demo"}, []string{"hr@demo"})
	if _, _, err := analyst.query(ctx, "SELECT count(*) FROM system.access_events"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("analyst@demo before any grant: %v, want the table missing", err)
	}

	m := bannerMetasrv.FindStringSubmatch(s.Banner)
	if m == nil {
		t.Fatalf("no metasrv address in the banner:\n%s", s.Banner)
	}
	env := &metasrvEnv{adminTok: toks["admin@demo"], client: &http.Client{Timeout: 20 * time.Second}}
	node := &metasrvProc{id: "serve", httpAddr: m[1]}
	const ml = "/api/metalakes/demo"
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", ml + "/roles", map[string]any{"name": "own_events_reader", "securableObjects": []map[string]any{
			{"fullName": "lake", "type": "CATALOG", "privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}},
			{"fullName": "lake.system", "type": "SCHEMA", "privileges": []map[string]string{{"name": "USE_SCHEMA", "condition": "ALLOW"}}},
			{"fullName": "lake.system.access_events", "type": "TABLE", "privileges": []map[string]string{{"name": "SELECT_TABLE", "condition": "ALLOW"}}}}}},
		{"PUT", ml + "/permissions/users/analyst@demo/grant", map[string]any{"roleNames": []string{"own_events_reader"}}},
		{"POST", ml + "/tags", map[string]any{"name": "own_rows"}},
		{"POST", ml + "/policies", map[string]any{"name": "own_events", "policyType": "row_filter",
			"content": map[string]any{"expression": "principal = current_user()"}}},
		{"PUT", ml + "/tags/own_rows/policies/own_events", nil},
		{"POST", ml + "/objects/table/lake.system.access_events/tags", map[string]any{"tagsToAdd": []string{"own_rows"}}},
	} {
		env.must(t, node, w.method, w.path, w.body)
	}
	wantRows(t, analyst.mustRows(t, "SELECT DISTINCT principal FROM system.access_events"), []string{"analyst@demo"})
	if _, err := analyst.exec(ctx, "DELETE FROM system.access_events"); err == nil {
		t.Fatal("analyst@demo deleted from system.access_events")
	}
	if _, err := analyst.exec(ctx, "INSERT INTO system.access_events SELECT * FROM system.access_events"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("analyst@demo inserting into system.access_events: %v, want it read-only", err)
	}
}

// TestAdminAccessLogCommand: `lakegate admin access-log` reads
// system.access_events through the gateway as the caller. An analyst's
// query, flushed within the flush interval, is listed to the tenant admin
// by --user; a --user holding a quote matches no principal instead of
// widening the filter; and the analyst, without a grant on the table, is
// answered as for a table that does not exist.
func TestAdminAccessLogCommand(t *testing.T) {
	s := startServe(t, "--access-log-flush", "200ms")
	ctx := context.Background()
	analystTok, adminTok := s.token(t, "analyst@demo"), s.token(t, "admin@demo")
	const literal = "secret-literal-77"
	if _, _, err := mustDial(t, s.uri(), bearer(analystTok)).query(ctx, "SELECT count(*) FROM sales.orders WHERE status = '"+literal+"'"); err != nil {
		t.Fatal(err)
	}
	accessLog := func(token string, args ...string) cliResult {
		return runCLI(t, append([]string{"admin", "access-log", "--addr", s.Addr, "--token", token}, args...)...)
	}
	// The flush is due within 200 ms; the deadline bounds a failure.
	var got cliResult
	for deadline := time.Now().Add(60 * time.Second); ; {
		got = accessLog(adminTok, "--user", "analyst@demo", "--table", "sales.orders", "--format", "jsonl")
		if got.code == 0 && strings.Contains(got.stdout, `"principal":"analyst@demo"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event of analyst@demo listed within 60 s: exit %d\n%s\n%s", got.code, got.stdout, got.stderr)
		}
	}
	lines := strings.Split(strings.TrimSpace(got.stdout), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"tables_read":"sales.orders@1"`) || !strings.Contains(lines[0], `"decision":"allowed"`) ||
		strings.Contains(lines[0], literal) {
		t.Fatalf("events of analyst@demo on sales.orders:\n%s\nwant one allowed read of sales.orders@1 without the literal", got.stdout)
	}
	table := accessLog(adminTok, "--user", "analyst@demo", "--since", "1h")
	if table.code != 0 || !strings.Contains(table.stdout, "analyst@demo") || !strings.Contains(table.stdout, "(1 rows)") {
		t.Fatalf("table format: exit %d\n%s\n%s", table.code, table.stdout, table.stderr)
	}
	for _, args := range [][]string{
		{"--user", "analyst@demo' OR '1'='1"},
		{"--user", `analyst@demo\' OR 1=1 -- `},
		{"--table", "sales.orders' OR '1'='1"},
		{"--denied", "--user", "analyst@demo"},
		{"--since", "2099-01-01", "--user", "analyst@demo"},
	} {
		r := accessLog(adminTok, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "(0 rows)") {
			t.Errorf("%q: exit %d, want no event:\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	denied := accessLog(analystTok, "--user", "analyst@demo")
	missing := runCLI(t, "sql", "--addr", s.Addr, "--token", analystTok, "SELECT * FROM system.no_such_table")
	if denied.code == 0 || missing.code == 0 || !strings.Contains(denied.stderr, "does not exist") {
		t.Fatalf("analyst@demo: exit %d\n%s\n%s\nwant the table missing", denied.code, denied.stdout, denied.stderr)
	}
	// The same message, but for the table's name and what the command
	// says it was reading.
	_, deniedMsg, _ := strings.Cut(strings.ReplaceAll(denied.stderr, "access_events", "X"), "reading system.X: ")
	_, missingMsg, _ := strings.Cut(strings.ReplaceAll(missing.stderr, "no_such_table", "X"), "lakegate: ")
	if deniedMsg == "" || deniedMsg != missingMsg {
		t.Errorf("analyst@demo's refusal differs from a missing table's:\n%s\n%s", denied.stderr, missing.stderr)
	}
}

// TestAccessLogTenantIsolation: two tenants in one serve, each with its
// own access log. Tenant b's admin reads only b's events in
// system.access_events, never a principal of a; every access-log file in
// the data directory holds one tenant's events and lies under that
// tenant's stage prefix (or its spool directory); and b's admin asking
// metasrv's REST API or its MCP tools for a's log table gets what a
// missing metalake's gets.
func TestAccessLogTenantIsolation(t *testing.T) {
	ctx := context.Background()
	tokens := map[string]string{}
	var specs []authz.PrincipalSpec
	for _, p := range []authz.PrincipalSpec{
		{ID: "ops-admin", Tenant: "ops", Role: "operator"},
		{ID: "admin@a", Tenant: "a", Role: "tenant_admin"},
		{ID: "admin@b", Tenant: "b", Role: "tenant_admin"},
	} {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tokens[p.ID] = tok
		p.TokenHashes = []string{authz.HashToken(tok).String()}
		specs = append(specs, p)
	}
	principals := filepath.Join(t.TempDir(), "principals.yaml")
	if err := authz.WritePrincipalMap(principals, specs); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--principals", principals, "--access-log-flush", "200ms", "--gc-interval", "0")
	m := tenantsMetaBanner.FindStringSubmatch(s.Banner)
	if m == nil {
		t.Fatalf("no metasrv REST address in the banner:\n%s", s.Banner)
	}
	node := &metasrvProc{id: "serve", httpAddr: strings.TrimPrefix(m[1], "http://")}
	rest := func(id string) *metasrvEnv {
		return &metasrvEnv{adminTok: tokens[id], client: &http.Client{Timeout: 20 * time.Second}}
	}
	for _, tenant := range []string{"a", "b"} {
		rest("ops-admin").must(t, node, "POST", "/api/metalakes", map[string]any{"name": tenant, "owner": "admin@" + tenant})
		rest("admin@"+tenant).must(t, node, "POST", "/api/metalakes/"+tenant+"/catalogs", map[string]any{"name": "lake", "type": "managed"})
		rest("admin@"+tenant).must(t, node, "POST", "/api/metalakes/"+tenant+"/catalogs/lake/schemas", map[string]any{"name": "sales"})
	}
	conns := map[string]*client{}
	for _, tenant := range []string{"a", "b"} {
		c := mustDial(t, s.uri(), bearer(tokens["admin@"+tenant]))
		conns[tenant] = c
		if _, err := c.exec(ctx, "CREATE TABLE sales.only_"+tenant+" AS SELECT 1 AS x"); err != nil {
			t.Fatalf("tenant %s: %v", tenant, err)
		}
		if _, _, err := c.query(ctx, "SELECT count(*) FROM sales.only_"+tenant); err != nil {
			t.Fatalf("tenant %s: %v", tenant, err)
		}
	}
	// Each tenant's flush is due within 200 ms; the deadline bounds a
	// failure.
	for _, tenant := range []string{"a", "b"} {
		for deadline := time.Now().Add(60 * time.Second); ; {
			_, rows, err := conns[tenant].query(ctx, "SELECT count(*) FROM system.access_events WHERE kind = 'query'")
			if err == nil && len(rows) == 1 && rows[0][0] != "0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tenant %s: no query event within 60 s: %v %v", tenant, rows, err)
			}
		}
	}

	// SQL: b's admin sees b's events only.
	wantRows(t, conns["b"].mustRows(t, "SELECT DISTINCT tenant, principal FROM system.access_events ORDER BY 1, 2"), []string{"b", "admin@b"})
	for _, r := range conns["b"].mustRows(t, "SELECT tables_read, tables_written, statement FROM system.access_events") {
		if strings.Contains(strings.Join(r, "|"), "only_a") {
			t.Errorf("b's log shows a's table: %q", r)
		}
	}

	// The stage: every access-log file lies under its tenant's prefix.
	logFiles := map[string]int{}
	err := filepath.WalkDir(s.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		tenants, ok := accessLogFileTenants(t, p)
		if !ok {
			return nil
		}
		for _, tenant := range tenants {
			// A file the stage refused waits in the tenant's directory of
			// the spool, on this gateway's disk.
			stagePrefix := filepath.Join(s.DataDir, "stage", "tenants", tenant) + string(filepath.Separator)
			spoolPrefix := filepath.Join(s.DataDir, "access-log-spool", tenant) + string(filepath.Separator)
			if !strings.HasPrefix(p, stagePrefix) && !strings.HasPrefix(p, spoolPrefix) {
				t.Errorf("an access-log file holding tenant %s's events lies outside %s: %s", tenant, stagePrefix, p)
			}
			if len(tenants) > 1 {
				t.Errorf("an access-log file holds the events of tenants %q: %s", tenants, p)
			}
			logFiles[tenant]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if logFiles["a"] == 0 || logFiles["b"] == 0 {
		t.Fatalf("access-log files per tenant: %v, want some of a and of b", logFiles)
	}

	// REST: a's log table is, to b's admin, in a metalake that does not
	// exist.
	b := rest("admin@b")
	// The same path names b's own table, so a's answers are not those of
	// a wrong path.
	b.must(t, node, "GET", "/api/metalakes/b/catalogs/lake/schemas/system/tables/access_events", nil)
	for _, path := range []string{
		"/api/metalakes/%s/catalogs/lake/schemas/system",
		"/api/metalakes/%s/catalogs/lake/schemas/system/tables",
		"/api/metalakes/%s/catalogs/lake/schemas/system/tables/access_events",
		"/internal/v1/metalakes/%s/access-log?catalog=lake",
		"/internal/v1/metalakes/%s/access-log?catalog=lake&files=true",
	} {
		missing := b.do(t, node, "GET", fmt.Sprintf(path, "nosuch"), nil)
		got := b.do(t, node, "GET", fmt.Sprintf(path, "a"), nil)
		if got.status/100 == 2 || got.status != missing.status || strings.ReplaceAll(string(got.raw), `\"a\"`, `\"nosuch\"`) != string(missing.raw) {
			t.Errorf("admin@b GET %s: HTTP %d %s; a missing metalake answers HTTP %d %s", fmt.Sprintf(path, "a"), got.status, got.raw, missing.status, missing.raw)
		}
	}
	// MCP: the tools run as the caller, so a's log is missing to b there too.
	checkAccessLogMCPIsolation(t, m[1], tokens["admin@b"])
}

// readParquetTable reads the Parquet file at path whole; the caller
// releases the table.
func readParquetTable(tb testing.TB, path string) arrow.Table {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	defer pf.Close()
	rd, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	tbl, err := rd.ReadTable(context.Background())
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return tbl
}

// accessLogFileTenants reads a Parquet file of the data directory: when
// it is an access-log file (its columns are the access log's), it returns
// the tenants of its events.
func accessLogFileTenants(t *testing.T, path string) ([]string, bool) {
	t.Helper()
	tbl := readParquetTable(t, path)
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices("tenant")
	if len(idx) != 1 || len(tbl.Schema().FieldIndices("request_id")) != 1 || len(tbl.Schema().FieldIndices("deny_reason")) != 1 {
		return nil, false
	}
	seen := map[string]bool{}
	var tenants []string
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		col := chunk.(*array.String)
		for i := 0; i < col.Len(); i++ {
			if v := col.Value(i); !seen[v] {
				seen[v] = true
				tenants = append(tenants, v)
			}
		}
	}
	return tenants, true
}

// TestAccessLogNamesFilterAndMask: a read through a row filter and a
// column mask, flushed within the flush interval (1 s here), names both
// policies in its event, which the tenant admin reads through the gateway.
func TestAccessLogNamesFilterAndMask(t *testing.T) {
	dataDir := t.TempDir()
	s := startServeArgs(t, dataDir, "serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--access-log-flush", "1s")
	m := bannerMetasrv.FindStringSubmatch(s.Banner)
	if m == nil {
		t.Fatalf("no metasrv address in the banner:\n%s", s.Banner)
	}
	env := &metasrvEnv{adminTok: s.token(t, "admin@demo"), client: &http.Client{Timeout: 20 * time.Second}}
	node := &metasrvProc{id: "serve", httpAddr: m[1]}
	const ml = "/api/metalakes/demo"
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", ml + "/tags", map[string]any{"name": "first_rows"}},
		{"POST", ml + "/tags", map[string]any{"name": "pii"}},
		{"POST", ml + "/policies", map[string]any{"name": "first_three", "policyType": "row_filter",
			"content": map[string]any{"expression": "id <= 3"}}},
		{"POST", ml + "/policies", map[string]any{"name": "redact_pii", "policyType": "column_mask",
			"content": map[string]any{"mask": "LAST4"}}},
		{"PUT", ml + "/tags/first_rows/policies/first_three", nil},
		{"PUT", ml + "/tags/pii/policies/redact_pii", nil},
		{"POST", ml + "/objects/table/lake.hr.employees/tags", map[string]any{"tagsToAdd": []string{"first_rows"}}},
		{"POST", ml + "/objects/column/lake.hr.employees.ssn/tags", map[string]any{"tagsToAdd": []string{"pii"}}},
	} {
		env.must(t, node, w.method, w.path, w.body)
	}
	hr := mustDial(t, s.uri(), bearer(s.token(t, "hr@demo")))
	wantRows(t, hr.mustRows(t, "SELECT id, ssn FROM hr.employees ORDER BY id"),
		[]string{"1", "*******1001"}, []string{"2", "*******1002"}, []string{"3", "*******1003"})
	admin := mustDial(t, s.uri(), bearer(s.token(t, "admin@demo")))
	const q = "SELECT tables_read, filter_policies, mask_policies, decision FROM system.access_events WHERE principal = 'hr@demo'"
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The table exists from the tenant's first flush.
		_, rows, err := admin.query(context.Background(), q)
		if err != nil && !strings.Contains(err.Error(), "does not exist") {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			wantRows(t, rows, []string{"hr.employees@1", "first_three", "redact_pii", "allowed"})
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("hr@demo's read is not in system.access_events 30 s after it ran (flush interval 1 s)")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
