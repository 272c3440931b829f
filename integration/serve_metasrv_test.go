package integration_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServeMetasrvSurvivesRestart: `lakegate serve` runs a single-node
// metasrv under <data-dir>/metasrv with the demo metalake; every object,
// grant, tag association and policy written through its REST API is still
// there, unchanged, after a SIGTERM and a restart on the same data
// directory, and the Flight side keeps serving.
func TestServeMetasrvSurvivesRestart(t *testing.T) {
	dataDir, metaAddr := t.TempDir(), freeLoopbackAddr(t)
	// The same ports on both starts, as an operator's configuration would.
	args := []string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--metasrv-addr", metaAddr, "--raft-addr", freeLoopbackAddr(t)}
	srv := startServeArgs(t, dataDir, args...)
	env := &metasrvEnv{adminTok: srv.token(t, "admin@demo"), client: &http.Client{Timeout: 20 * time.Second}}
	node := &metasrvProc{id: "serve", httpAddr: metaAddr}

	// The demo metalake exists from the first start, owned by the demo admin
	// (with the demo's catalog "lake"; this test adds a catalog "archive").
	lake := env.must(t, node, "GET", "/api/metalakes/demo", nil)
	if m, _ := lake.body["metalake"].(map[string]any); m["owner"] != "admin@demo" {
		t.Fatalf("demo metalake: %s", lake.raw)
	}

	const ml = "/api/metalakes/demo"
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", ml + "/catalogs", map[string]any{"name": "archive", "comment": "main lake"}},
		{"POST", ml + "/catalogs/archive/schemas", map[string]any{"name": "sales", "comment": "sales data"}},
		{"POST", ml + "/catalogs/archive/schemas/sales/tables", map[string]any{"name": "orders", "columns": []map[string]any{
			{"name": "id", "type": "bigint", "nullable": false}, {"name": "amount", "type": "decimal(10,2)"}}}},
		{"POST", ml + "/tags", map[string]any{"name": "pii", "comment": "personal data"}},
		{"POST", ml + "/objects/table/archive.sales.orders/tags", map[string]any{"tagsToAdd": []string{"pii"}}},
		{"POST", ml + "/roles", map[string]any{"name": "reader", "securableObjects": []map[string]any{
			{"fullName": "archive", "type": "CATALOG", "privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}}}}},
		{"PUT", ml + "/permissions/roles/reader/schema/archive.sales/grant", map[string]any{"privileges": []map[string]string{
			{"name": "USE_SCHEMA", "condition": "ALLOW"}, {"name": "SELECT_TABLE", "condition": "ALLOW"}}}},
		{"POST", ml + "/users", map[string]any{"name": "auditor@demo"}},
		{"PUT", ml + "/permissions/users/auditor@demo/grant", map[string]any{"roleNames": []string{"reader"}}},
		{"POST", ml + "/policies", map[string]any{"name": "mask_pii", "comment": "hide personal data",
			"policyType": "column_mask", "content": map[string]any{"mask": "redact"}}},
		{"PUT", ml + "/tags/pii/policies/mask_pii", nil},
	} {
		env.must(t, node, w.method, w.path, w.body)
	}

	// Each read and what its answer must contain.
	reads := []struct{ path, want string }{
		{"/api/metalakes", `"name":"demo"`},
		{ml, `"owner":"admin@demo"`},
		{ml + "/catalogs/archive", `"comment":"main lake"`},
		{ml + "/catalogs/archive/schemas/sales", `"comment":"sales data"`},
		{ml + "/catalogs/archive/schemas/sales/tables/orders", `"type":"decimal(10,2)"`},
		{ml + "/tags/pii", `"comment":"personal data"`},
		{ml + "/tags/pii/objects", `"fullName":"archive.sales.orders"`},
		{ml + "/objects/table/archive.sales.orders/tags", `"names":["pii"]`},
		{ml + "/roles/reader", `{"name":"select_table","condition":"allow"}`},
		{ml + "/users/auditor@demo", `"roles":["reader"]`},
		{ml + "/policies/mask_pii", `"policyType":"column_mask"`},
		{ml + "/tags/pii/policies?details=true", `"policy":"mask_pii"`},
		{ml + "/objects/table/archive.sales.orders/policies", `"names":["mask_pii"]`},
	}
	before := make([][]byte, len(reads))
	for i, r := range reads {
		before[i] = env.must(t, node, "GET", r.path, nil).raw
		if !bytes.Contains(before[i], []byte(r.want)) {
			t.Fatalf("GET %s: want %s in %s", r.path, r.want, before[i])
		}
	}

	start := time.Now()
	srv.stop(t)
	if st := srv.cmd.ProcessState; st == nil || !st.Success() {
		t.Fatalf("serve did not exit cleanly on SIGTERM (%v); stderr:\n%s", st, srv.stderr.String())
	}
	srv = startServeArgs(t, dataDir, args...)
	t.Logf("stop and restart took %s", time.Since(start).Round(time.Millisecond))

	for i, r := range reads {
		after := env.must(t, node, "GET", r.path, nil).raw
		if !bytes.Equal(after, before[i]) {
			t.Errorf("GET %s changed across the restart:\nbefore %s\nafter  %s", r.path, before[i], after)
		}
	}
	// The restart recreated nothing: still one metalake, and no new tokens.
	var lakes []string
	for _, m := range env.must(t, node, "GET", "/api/metalakes", nil).body["metalakes"].([]any) {
		lakes = append(lakes, m.(map[string]any)["name"].(string))
	}
	if !slices.Equal(lakes, []string{"demo"}) {
		t.Errorf("metalakes after restart = %v, want [demo]", lakes)
	}
	if strings.Contains(srv.Banner, "They are shown once") {
		t.Errorf("restart printed new demo tokens:\n%s", srv.Banner)
	}

	// The Flight side serves the demo tenant after the restart.
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	_, rows, err := analyst.query(context.Background(), "SELECT count(*) FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]string{{"5000"}}; !slices.EqualFunc(rows, want, slices.Equal) {
		t.Fatalf("rows = %v, want %v", rows, want)
	}
}
