package metasrv_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/metasrv"
	"lakegate/metasrv/api"
)

// Tokens of the tenant-admin tests' extra principals.
const (
	tokAcmeAdmin   = "tok-acme-admin"   // acmeadmin@acme, tenant_admin of acme
	tokGlobexAdmin = "tok-globex-admin" // gadmin@globex, tenant_admin of globex
)

// tenantAdminNode starts a node whose map adds a tenant admin to acme and
// one to globex; the operator (root) creates both metalakes, acme owned by
// alice, globex by its admin, and each gets a catalog.
func tenantAdminNode(t *testing.T) *node {
	t.Helper()
	specs := append(harnessSpecs(),
		authz.PrincipalSpec{ID: "acmeadmin@acme", Tenant: "acme", Role: "tenant_admin", TokenHashes: tokenHashes(tokAcmeAdmin)},
		authz.PrincipalSpec{ID: "gadmin@globex", Tenant: "globex", Role: "tenant_admin", TokenHashes: tokenHashes(tokGlobexAdmin)},
	)
	n := startSolo(t, principalMap(t, specs), "n1")
	waitLeader(t, n)
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "globex", "owner": "gadmin@globex"}})
	must(t, n, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}})
	must(t, n, call{method: "POST", path: "/api/metalakes/globex/catalogs", token: tokGlobexAdmin, body: map[string]any{"name": "secretlake"}})
	return n
}

// TestTenantAdminHeldToItsTenant: a tenant admin reaches nothing of another
// tenant — metalake, objects, events — and none of the deployment's
// operations: metalake lifecycle and the cluster endpoints are an
// operator's. Another tenant's metalake answers exactly as a missing one.
func TestTenantAdminHeldToItsTenant(t *testing.T) {
	n := tenantAdminNode(t)
	const other = "/api/metalakes/globex"
	missing := expect(t, n, call{method: "GET", path: "/api/metalakes/nosuch", token: tokAcmeAdmin}, 404, 1003)
	for _, c := range []call{
		{method: "GET", path: other},
		{method: "GET", path: other + "/events"},
		{method: "GET", path: other + "/catalogs"},
		{method: "GET", path: other + "/catalogs/secretlake"},
		{method: "PUT", path: other, body: map[string]any{"updates": []map[string]any{{"@type": "setProperty", "property": "k", "value": "v"}}}},
		{method: "DELETE", path: other + "?force=true"},
		{method: "POST", path: other + "/catalogs", body: map[string]any{"name": "planted"}},
	} {
		c.token = tokAcmeAdmin
		r := expect(t, n, c, 404, 1003)
		if strings.Contains(string(r.raw), "secretlake") {
			t.Errorf("%s %s names another tenant's object: %s", c.method, c.path, r.raw)
		}
		if strings.ReplaceAll(string(r.raw), "globex", "nosuch") != string(missing.raw) {
			t.Errorf("%s %s: %s; a missing metalake answers %s", c.method, c.path, r.raw, missing.raw)
		}
	}
	// The other tenant is intact.
	must(t, n, call{method: "GET", path: other + "/catalogs/secretlake", token: tokGlobexAdmin})

	// Metalake lifecycle is an operator's, its own metalake included.
	expect(t, n, call{method: "POST", path: "/api/metalakes", token: tokAcmeAdmin, body: map[string]any{"name": "newlake"}}, 403, 1008)
	expect(t, n, call{method: "DELETE", path: ml + "?force=true", token: tokAcmeAdmin}, 403, 1008)
	expect(t, n, call{method: "PUT", path: ml, token: tokAcmeAdmin,
		body: map[string]any{"updates": []map[string]any{{"@type": "updateComment", "newComment": "x"}}}}, 403, 1008)
	expect(t, n, call{method: "GET", path: "/api/metalakes/newlake", token: tokAdmin}, 404, 1003)

	// Its own metalake, whole: visible without any grant, its events
	// readable, and only its own.
	must(t, n, call{method: "GET", path: ml, token: tokAcmeAdmin})
	r := must(t, n, call{method: "GET", path: "/api/metalakes", token: tokAcmeAdmin})
	if got := r.body["metalakes"].([]any); len(got) != 1 || got[0].(map[string]any)["name"] != "acme" {
		t.Errorf("a tenant admin lists %s", r.raw)
	}
	r = must(t, n, call{method: "GET", path: ml + "/events?limit=1000", token: tokAcmeAdmin})
	evs := r.body["events"].([]any)
	if len(evs) == 0 {
		t.Fatal("no events of acme")
	}
	for _, e := range evs {
		if m := e.(map[string]any)["metalake"]; m != "acme" {
			t.Errorf("acme's events hold one of %v: %v", m, e)
		}
	}
	if strings.Contains(string(r.raw), "secretlake") {
		t.Errorf("acme's events name globex's catalog: %s", r.raw)
	}

	// The cluster is the operator's and the nodes'.
	expect(t, n, call{method: "GET", path: "/cluster/status", token: tokAcmeAdmin}, 403, 0)
	expect(t, n, call{method: "POST", path: "/cluster/remove", token: tokAcmeAdmin, body: map[string]any{"id": "n1"}}, 403, 0)
	expect(t, n, call{method: "POST", path: "/cluster/join", token: tokAcmeAdmin,
		body: map[string]any{"id": "n9", "raftAddr": "127.0.0.1:1"}}, 403, 0)
	if st := n.Node().Status(); len(st.Servers) != 1 {
		t.Fatalf("configuration changed: %+v", st.Servers)
	}
}

// TestOperatorRunsTheDeployment: an operator lists, creates, alters and
// drops any metalake and reads the cluster's status.
func TestOperatorRunsTheDeployment(t *testing.T) {
	n := tenantAdminNode(t)
	r := must(t, n, call{method: "GET", path: "/api/metalakes", token: tokAdmin})
	if got := r.body["metalakes"].([]any); len(got) != 2 {
		t.Errorf("an operator lists %s", r.raw)
	}
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "initech", "owner": "bob@initech"}})
	must(t, n, call{method: "PUT", path: "/api/metalakes/initech", token: tokAdmin,
		body: map[string]any{"updates": []map[string]any{{"@type": "updateComment", "newComment": "x"}}}})
	must(t, n, call{method: "DELETE", path: "/api/metalakes/initech?force=true", token: tokAdmin})
	must(t, n, call{method: "GET", path: "/cluster/status", token: tokAdmin})
}

// TestJoinAdmission: a node joins only as the metadata_peer principal named
// after it; no other principal — a tenant admin, an operator, another
// node's peer identity — adds a voter, and a node configured without
// AllowJoins (lakegate serve's) accepts none at all. Its nodes' Raft runs
// over loopback TCP, as joins in a deployment do.
func TestJoinAdmission(t *testing.T) {
	configHook = onTCP
	t.Cleanup(func() { configHook = nil })
	n1 := startNode(t, "n1", "", "", "", true)
	waitLeader(t, n1)
	n2 := startNode(t, "n2", "", "", "", false)
	join := func(token, id string) resp {
		return do(t, n1, call{method: "POST", path: "/cluster/join", token: token,
			body: map[string]any{"id": id, "raftAddr": n2.Node().RaftAddr(), "httpAddr": n2.addr}})
	}
	for _, c := range []struct {
		name, token, id string
	}{
		{"operator", tokAdmin, "n2"},
		{"user", tokAlice, "n2"},
		{"another node's peer identity", peerToken("n3"), "n2"},
		{"a peer joining under another id", peerToken("n2"), "n3"},
	} {
		if r := join(c.token, c.id); r.status != http.StatusForbidden {
			t.Errorf("%s: HTTP %d: %s", c.name, r.status, r.raw)
		}
	}
	if st := n1.Node().Status(); len(st.Servers) != 1 {
		t.Fatalf("configuration changed: %+v", st.Servers)
	}
	// A peer that is not a voter forwards nothing, even naming itself.
	expect(t, n1, call{method: "GET", path: ml + "/catalogs", token: peerToken("n3"),
		header: map[string]string{api.CallerHeader: "alice@acme", "Lakegate-Forwarded-By": "n3"}}, 403, 1008)

	// The node itself is admitted.
	if r := join(peerToken("n2"), "n2"); r.status != http.StatusOK {
		t.Fatalf("n2 joining as itself: HTTP %d: %s", r.status, r.raw)
	}
	if !n1.Node().IsVoter("n2") {
		t.Fatal("n2 is no voter after joining")
	}

	// A node that allows no joins refuses even an expected one.
	configHook = func(c *metasrv.Config) { onTCP(c); c.AllowJoins = false }
	solo := startNode(t, "n1", "", "", "", true)
	configHook = onTCP
	waitLeader(t, solo)
	n3 := startNode(t, "n3", "", "", "", false)
	r := do(t, solo, call{method: "POST", path: "/cluster/join", token: peerToken("n3"),
		body: map[string]any{"id": "n3", "raftAddr": n3.Node().RaftAddr()}})
	if r.status != http.StatusForbidden || !strings.Contains(string(r.raw), "accepts no joins") {
		t.Fatalf("join of a node that allows none: HTTP %d: %s", r.status, r.raw)
	}
}

// TestPeerTokenMustNameTheNode: a node refuses to start with a peer token
// that is not its own metadata_peer principal's, saying what to change.
func TestPeerTokenMustNameTheNode(t *testing.T) {
	for _, c := range []struct{ name, token, want string }{
		{"another node's", peerToken("n2"), `give each node its own metadata_peer principal with id "n1"`},
		{"an operator's", tokAdmin, "belongs to principal \"root\" of role operator"},
		{"unknown", "tok-nobody", "matches no principal"},
	} {
		cfg := metasrv.DefaultConfig()
		cfg.NodeID, cfg.DataDir, cfg.RaftAddr, cfg.HTTPAddr = "n1", t.TempDir(), "127.0.0.1:0", "127.0.0.1:1"
		cfg.Principals, cfg.PeerToken = principals(t), c.token
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := metasrv.New(ctx, cfg)
		cancel()
		if err == nil {
			_ = s.Shutdown(context.Background())
			t.Fatalf("%s peer token: started", c.name)
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.token) {
			t.Errorf("%s peer token: %v", c.name, err)
		}
	}
}
