package integration_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
