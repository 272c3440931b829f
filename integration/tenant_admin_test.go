package integration_test

import (
	"crypto/rand"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lakegate/authz"
)

// TestTenantAdminConfinedInServe: on `lakegate serve`, the operator
// provisions a second tenant over REST; the demo tenant's admin, with only
// its own token, reaches nothing of it — metalake, objects, events —
// changes no metalake, and cannot join the embedded metasrv as a node:
// neither with its token as a peer token of a `lakegate metasrv` process
// started against a map that calls it a metadata_peer, nor by calling
// /cluster/join itself.
func TestTenantAdminConfinedInServe(t *testing.T) {
	srv := startServe(t)
	m := tenantsMetaBanner.FindStringSubmatch(srv.Banner)
	if m == nil {
		t.Fatalf("no metasrv REST address in the banner:\n%s", srv.Banner)
	}
	meta := &metasrvProc{id: "serve", httpAddr: strings.TrimPrefix(m[1], "http://")}
	as := func(id string) *metasrvEnv {
		return &metasrvEnv{adminTok: srv.token(t, id), client: &http.Client{Timeout: 20 * time.Second}}
	}
	operator, admin := as("operator"), as("admin@demo")

	// A second tenant, provisioned over REST by the operator.
	operator.must(t, meta, "POST", "/api/metalakes", map[string]any{"name": "globex"})
	operator.must(t, meta, "POST", "/api/metalakes/globex/catalogs", map[string]any{"name": "vault", "type": "managed"})

	missing := admin.do(t, meta, "GET", "/api/metalakes/nosuch", nil)
	if missing.status != http.StatusNotFound {
		t.Fatalf("a missing metalake: HTTP %d %s", missing.status, missing.raw)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/metalakes/globex", nil},
		{"GET", "/api/metalakes/globex/events", nil},
		{"GET", "/api/metalakes/globex/catalogs", nil},
		{"PUT", "/api/metalakes/globex", map[string]any{"updates": []map[string]any{{"@type": "updateComment", "newComment": "mine"}}}},
		{"DELETE", "/api/metalakes/globex?force=true", nil},
	} {
		r := admin.do(t, meta, c.method, c.path, c.body)
		if r.status != http.StatusNotFound || strings.ReplaceAll(string(r.raw), "globex", "nosuch") != string(missing.raw) {
			t.Errorf("admin@demo %s %s: HTTP %d %s; a missing metalake answers %s", c.method, c.path, r.status, r.raw, missing.raw)
		}
	}
	if r := admin.do(t, meta, "POST", "/api/metalakes", map[string]any{"name": "initech"}); r.status != http.StatusForbidden {
		t.Errorf("admin@demo creates a metalake: HTTP %d %s", r.status, r.raw)
	}
	r := admin.must(t, meta, "GET", "/api/metalakes", nil)
	if ls, _ := r.body["metalakes"].([]any); len(ls) != 1 || strings.Contains(string(r.raw), "globex") {
		t.Errorf("admin@demo lists %s", r.raw)
	}
	// Its own tenant's events are its own.
	r = admin.must(t, meta, "GET", "/api/metalakes/demo/events?limit=1000", nil)
	if strings.Contains(string(r.raw), "globex") || strings.Contains(string(r.raw), "vault") {
		t.Errorf("demo's events show globex: %s", r.raw)
	}
	operator.must(t, meta, "GET", "/api/metalakes/globex/catalogs/vault", nil)

	// A node of the tenant admin's making: its own map calls the admin's
	// token a metadata_peer, so it starts, and asks serve's metasrv to
	// take it in.
	dir := t.TempDir()
	tokFile := writeSecret(t, dir, "stolen.token", srv.token(t, "admin@demo")+"\n")
	opTok, err := authz.NewToken(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rogueMap := filepath.Join(dir, "rogue.yaml")
	if err := authz.WritePrincipalMap(rogueMap, []authz.PrincipalSpec{
		{ID: "rogue", Tenant: "platform", Role: "metadata_peer", TokenHashes: []string{authz.HashToken(srv.token(t, "admin@demo")).String()}},
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: []string{authz.HashToken(opTok).String()}},
	}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lakegateBin, "metasrv", "--node-id", "rogue", "--data-dir", filepath.Join(dir, "data"),
		"--http-addr", freeLoopbackAddr(t), "--raft-addr", freeLoopbackAddr(t), "--metrics-addr", "",
		"--principals", rogueMap, "--peer-token-file", tokFile, "--join", meta.httpAddr, "--log-level", "warn")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the rogue node joined serve's metasrv:\n%s", out)
	}
	if !strings.Contains(string(out), "join refused") {
		t.Errorf("the rogue node's failure does not say the join was refused:\n%s", out)
	}
	// Nor by asking itself.
	join := map[string]any{"id": "rogue", "raftAddr": "127.0.0.1:1"}
	if r := admin.do(t, meta, "POST", "/cluster/join", join); r.status != http.StatusForbidden {
		t.Errorf("admin@demo calls /cluster/join: HTTP %d %s", r.status, r.raw)
	}
	if r := admin.do(t, meta, "GET", "/cluster/status", nil); r.status != http.StatusForbidden {
		t.Errorf("admin@demo reads /cluster/status: HTTP %d %s", r.status, r.raw)
	}
	st := operator.must(t, meta, "GET", "/cluster/status", nil)
	if srvs, _ := st.body["servers"].([]any); len(srvs) != 1 {
		t.Fatalf("serve's cluster changed: %s", st.raw)
	}
}
