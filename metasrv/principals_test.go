package metasrv_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lakegate/authz"
	"lakegate/authz/oidctest"
	"lakegate/metasrv"
	"lakegate/metasrv/api"
)

// writeMapFile writes specs (or raw, when not nil) as the principal map
// file at path, replacing it whole.
func writeMapFile(t *testing.T, path string, specs []authz.PrincipalSpec, raw []byte) {
	t.Helper()
	if raw == nil {
		var err error
		if raw, err = authz.EncodePrincipalMap(specs); err != nil {
			t.Fatal(err)
		}
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestReloadPrincipals: POST /api/admin/principals/reload, by an operator
// only, puts the node's map file in force for the next request — a user
// removed is refused, one added admitted — and a malformed file is refused
// whole with the old map staying. Refused credentials are counted by
// reason. Before the route existed, a removed user kept access until the
// node restarted.
func TestReloadPrincipals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "principals.yaml")
	writeMapFile(t, path, harnessSpecs(), nil)
	ps, err := authz.LoadPrincipals(path, authz.PrincipalsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	configHook = func(c *metasrv.Config) {
		c.Principals, c.Authn = nil, ps
		c.ReloadPrincipals = func() error { return ps.Reload(path) }
	}
	t.Cleanup(func() { configHook = nil })
	n := withAcme(t, startSolo(t, principals(t), "n1"))
	const tokCarol = "tok-carol"
	withoutBob := func() []authz.PrincipalSpec {
		var out []authz.PrincipalSpec
		for _, s := range harnessSpecs() {
			if s.ID != "bob@acme" {
				out = append(out, s)
			}
		}
		return append(out, authz.PrincipalSpec{ID: "carol@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: tokenHashes(tokCarol)})
	}
	whoami := func(tok string) int { return do(t, n, call{method: "GET", path: "/api/whoami", token: tok}).status }
	reload := func(tok string) resp { return do(t, n, call{method: "POST", path: metasrv.ReloadPath, token: tok}) }

	if whoami(tokBob) != http.StatusOK || whoami(tokCarol) != http.StatusUnauthorized {
		t.Fatal("before the reload: bob refused or carol admitted")
	}
	writeMapFile(t, path, withoutBob(), nil)
	cases := []struct {
		name   string
		tok    string
		status int
	}{
		{"no credential", "", http.StatusUnauthorized},
		{"a user", tokAlice, http.StatusForbidden},
		{"a peer", tokPeer, http.StatusForbidden},
		{"the operator", tokAdmin, http.StatusOK},
	}
	for _, tc := range cases {
		if r := reload(tc.tok); r.status != tc.status {
			t.Errorf("%s: reload answered %d, want %d: %s", tc.name, r.status, tc.status, r.raw)
		}
	}
	if got := ps.Generation(); got != 2 {
		t.Errorf("generation %d after one accepted reload, want 2", got)
	}
	if whoami(tokBob) != http.StatusUnauthorized || whoami(tokCarol) != http.StatusOK {
		t.Error("after the reload: bob admitted or carol refused")
	}

	// A malformed map is refused whole; the old one stays in force.
	writeMapFile(t, path, nil, []byte("principals:\n  - {id: dave@acme, tenant: acme, role: nope}\n"))
	if r := reload(tokAdmin); r.status != http.StatusBadRequest || !strings.Contains(r.message(), "previous principal map stays in force") {
		t.Errorf("malformed map: %d %s", r.status, r.raw)
	}
	if whoami(tokCarol) != http.StatusOK || ps.Generation() != 2 {
		t.Error("a refused reload changed the map in force")
	}
	if acc, ref := ps.Reloads(); acc != 1 || ref != 1 {
		t.Errorf("reloads accepted %d refused %d, want 1 and 1", acc, ref)
	}
	if got := authnFailures(t, n, "unknown_token"); got < 3 {
		t.Errorf("lakegate_authn_failures_total{reason=unknown_token} = %v, want >= 3", got)
	}
}

// authnFailures reads lakegate_authn_failures_total{reason} of n.
func authnFailures(t *testing.T, n *node, reason string) float64 {
	t.Helper()
	mfs, err := n.MetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lakegate_authn_failures_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no lakegate_authn_failures_total{reason=%q}", reason)
	return 0
}

// TestJWTUsersAndGroups: a user signed in by JWT is a user of its tenant's
// metalake, created on first sight, whose group memberships follow the
// token's groups claim (groups the metalake lacks are ignored) — on its own
// calls and on a gateway's delegated calls carrying its token, which metasrv
// verifies itself. A delegated token of another user, or one that does not
// verify, refuses the request. The syncs are audited. Before, a delegated
// token was not looked at, and a JWT user's groups never reached metasrv.
func TestJWTUsersAndGroups(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	withOIDC(t, iss, "namespaces: {all: [sales], groups: {auditors: [hr]}}", nil)
	n := withAcme(t, startSolo(t, principals(t), "n1"))
	for _, g := range []string{"analysts", "auditors"} {
		must(t, n, call{method: "POST", path: "/api/metalakes/acme/groups", token: tokAlice, body: map[string]any{"name": g}})
	}
	jwt := func(user string, groups ...string) string {
		c := iss.Claims(user)
		c["groups"] = append([]string{}, groups...)
		return iss.Token(t, c)
	}
	groupsOf := func(user string) string {
		if do(t, n, call{method: "GET", path: "/api/metalakes/acme/users/" + user, token: tokAlice}).status != http.StatusOK {
			return "missing"
		}
		var out []string
		for _, g := range []string{"analysts", "auditors"} {
			r := must(t, n, call{method: "GET", path: "/api/metalakes/acme/groups/" + g, token: tokAlice})
			grp, _ := r.body["group"].(map[string]any)
			users, _ := grp["users"].([]any)
			for _, u := range users {
				if u == user {
					out = append(out, g)
				}
			}
		}
		return strings.Join(out, ",")
	}
	delegated := func(user, token string) int {
		return do(t, n, call{method: "GET", path: "/api/metalakes/acme/catalogs", token: tokGW, header: map[string]string{
			api.DelegateTenantHeader: "acme", api.DelegateUserHeader: user, api.DelegateTokenHeader: token}}).status
	}
	cases := []struct {
		name   string
		run    func() int
		status int
		user   string
		groups string // after the call
	}{
		{"own call, first sight", func() int {
			return do(t, n, call{method: "GET", path: "/api/metalakes/acme/catalogs", token: jwt("dave@acme", "analysts", "nosuchgroup")}).status
		}, http.StatusOK, "dave@acme", "analysts"},
		{"own call, groups changed", func() int {
			return do(t, n, call{method: "GET", path: "/api/metalakes/acme/catalogs", token: jwt("dave@acme", "auditors")}).status
		}, http.StatusOK, "dave@acme", "auditors"},
		{"delegated with the user's token", func() int { return delegated("erin@acme", jwt("erin@acme", "analysts")) },
			http.StatusOK, "erin@acme", "analysts"},
		{"delegated with another user's token", func() int { return delegated("erin@acme", jwt("dave@acme")) },
			http.StatusUnauthorized, "erin@acme", "analysts"},
		{"delegated with a token that does not verify", func() int { return delegated("erin@acme", jwt("erin@acme")+"x") },
			http.StatusUnauthorized, "erin@acme", "analysts"},
		{"delegated with a token of an unknown user", func() int { return delegated("frank@acme", jwt("dave@acme")) },
			http.StatusUnauthorized, "frank@acme", "missing"},
	}
	for _, tc := range cases {
		if got := tc.run(); got != tc.status {
			t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.status)
		}
		if got := groupsOf(tc.user); got != tc.groups {
			t.Errorf("%s: %s in groups %q, want %q", tc.name, tc.user, got, tc.groups)
		}
	}
	r := must(t, n, call{method: "GET", path: "/api/metalakes/acme/events", token: tokAlice})
	if !strings.Contains(string(r.raw), "oidc-token") || !strings.Contains(string(r.raw), "erin@acme") {
		t.Errorf("the syncs are not audited:\n%.2000s", r.raw)
	}
	// Explain gives a JWT user's gateway gate from the provider's rules for
	// the groups metasrv holds it in: dave (auditors) is granted hr, erin
	// (analysts) only sales.
	for _, tc := range []struct{ user, granted string }{{"dave@acme", "true"}, {"erin@acme", "false"}} {
		r := must(t, n, call{method: "GET", token: tokAdmin,
			path: "/api/metalakes/acme/access/explain?user=" + tc.user + "&privilege=SELECT_TABLE&object=TABLE:lake.hr.t"})
		gw, _ := r.body["gateway"].(map[string]any)
		if got := fmt.Sprint(gw["providers"], gw["inPrincipalMap"], gw["mayQuery"], gw["namespaceGranted"]); got != "[idp] false true "+tc.granted {
			t.Errorf("explain of %s: gateway %v, want providers [idp], not listed, may query, hr granted %s", tc.user, gw, tc.granted)
		}
	}
}

// TestJWTCallerForwarded: a follower forwards a JWT caller's write to the
// leader with the caller's token, which the leader verifies itself (the
// caller is in no node's map by id); a follower that has to sync a new JWT
// user's memberships has the leader sync them first. Before the token was
// forwarded, the leader refused the write as from an unknown caller.
func TestJWTCallerForwarded(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	withOIDC(t, iss, "namespaces: {all: [sales]}", nil)
	nodes, leader := startCluster(t, principals(t), 2)
	follower := nodes[1]
	if leader == follower {
		follower = nodes[0]
	}
	withAcme(t, leader)
	for _, c := range []call{
		{method: "POST", path: ml + "/groups", body: map[string]any{"name": "builders"}},
		{method: "POST", path: ml + "/roles", body: map[string]any{"name": "catalog_maker", "securableObjects": []map[string]any{
			{"fullName": "acme", "type": "METALAKE", "privileges": []map[string]string{{"name": "CREATE_CATALOG", "condition": "ALLOW"}}}}}},
		{method: "PUT", path: ml + "/permissions/groups/builders/grant", body: map[string]any{"roleNames": []string{"catalog_maker"}}},
	} {
		c.token = tokAlice
		must(t, leader, c)
	}
	jwt := func(user string) string {
		c := iss.Claims(user)
		c["groups"] = []string{"builders"}
		return iss.Token(t, c)
	}
	dave := jwt("dave@acme")
	// First sight on the leader: dave is created and joins builders.
	gen := must(t, leader, call{method: "GET", path: ml + "/catalogs", token: dave}).gen()
	must(t, follower, call{method: "GET", path: ml + "/catalogs?minGeneration=" + strconv.FormatUint(gen, 10), token: tokAlice})
	// A write on the follower is forwarded with dave's token.
	must(t, follower, call{method: "POST", path: ml + "/catalogs", token: dave, body: map[string]any{"name": "daves"}})
	// A new JWT user on the follower: the follower has the leader sync its
	// memberships (TestJWTSyncOnFollower).
	must(t, follower, call{method: "GET", path: ml + "/catalogs", token: jwt("erin@acme")})
	l, _ := leader.FSM().Lake("acme")
	if u, _ := l.Snapshot.User("erin@acme"); !slices.Equal(u.Groups, []string{"builders"}) {
		t.Errorf("first sight on a follower: erin in %q on the leader, want builders", u.Groups)
	}
	// Only a peer may send a caller's token.
	if r := do(t, follower, call{method: "GET", path: ml + "/catalogs", token: tokAlice, header: map[string]string{api.CallerTokenHeader: dave}}); r.status != http.StatusForbidden {
		t.Errorf("a caller token from a user: HTTP %d, want 403", r.status)
	}
}
