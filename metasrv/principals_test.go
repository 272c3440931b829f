package metasrv_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lakegate/authz"
	"lakegate/metasrv"
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
