package metasrv_test

import (
	"net/http"
	"strings"
	"testing"

	"lakegate/authz"
	"lakegate/metasrv/api"
)

// TestDelegationTenantChecks covers each rule of a delegated request on its
// own: the delegated tenant must be the metalake addressed AND one of the
// caller's delegate_tenants. Gateways: gw may act for acme, gw-other for
// other, gw-both for both; so a refusal below is owed to exactly one rule
// (with either check removed, one of the cases answers 200).
func TestDelegationTenantChecks(t *testing.T) {
	const tokGWBoth = "tok-gw-both"
	specs := append(delegationSpecs(), authz.PrincipalSpec{ID: "gw-both", Tenant: "platform", Role: "query_service",
		DelegateTenants: []string{"acme", "other"}, TokenHashes: tokenHashes(tokGWBoth)})
	n := startNodeWith(t, principalMap(t, specs), "n1", "", "", "", true)
	waitLeader(t, n)
	for _, m := range []map[string]any{{"name": "acme", "owner": "alice@acme"}, {"name": "other", "owner": "eve@other"}} {
		must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: m})
	}
	catalogs := func(tenant string) string { return "/api/metalakes/" + tenant + "/catalogs" }
	dh := func(tenant, user string) map[string]string {
		h := map[string]string{}
		if tenant != "" {
			h[api.DelegateTenantHeader] = tenant
		}
		if user != "" {
			h[api.DelegateUserHeader] = user
		}
		return h
	}
	cases := []struct {
		name   string
		token  string
		path   string
		header map[string]string
		status int
	}{
		{"delegate for the metalake addressed", tokGW, catalogs("acme"), dh("acme", "alice@acme"), http.StatusOK},
		{"other delegate for its metalake", tokGWOther, catalogs("other"), dh("other", "eve@other"), http.StatusOK},
		{"both-tenant delegate, acme", tokGWBoth, catalogs("acme"), dh("acme", "alice@acme"), http.StatusOK},
		{"both-tenant delegate, other", tokGWBoth, catalogs("other"), dh("other", "eve@other"), http.StatusOK},
		// The delegated tenant is one the gateway may act for, but not
		// the metalake addressed.
		{"header names its own tenant, path another", tokGWOther, catalogs("acme"), dh("other", "alice@acme"), http.StatusForbidden},
		{"header names its own tenant, path another (reversed)", tokGW, catalogs("other"), dh("acme", "eve@other"), http.StatusForbidden},
		{"both-tenant delegate, header and path differ", tokGWBoth, catalogs("acme"), dh("other", "alice@acme"), http.StatusForbidden},
		// The delegated tenant is the metalake addressed, but not one the
		// gateway may act for.
		{"not a delegate for the tenant addressed", tokGWOther, catalogs("acme"), dh("acme", "alice@acme"), http.StatusForbidden},
		{"not a delegate for the tenant addressed (reversed)", tokGW, catalogs("other"), dh("other", "eve@other"), http.StatusForbidden},
		// Incomplete or malformed delegation.
		{"tenant header only", tokGW, catalogs("acme"), dh("acme", ""), http.StatusForbidden},
		{"user header only", tokGW, catalogs("acme"), dh("", "alice@acme"), http.StatusForbidden},
		{"no headers", tokGW, catalogs("acme"), dh("", ""), http.StatusForbidden},
		{"invalid user name", tokGW, catalogs("acme"), dh("acme", strings.Repeat("a", 129)), http.StatusForbidden},
		{"headers from a user", tokBob, catalogs("acme"), dh("acme", "alice@acme"), http.StatusForbidden},
		{"user header only, from a user", tokBob, catalogs("acme"), dh("", "alice@acme"), http.StatusForbidden},
		{"tenant header only, from a user", tokBob, catalogs("acme"), dh("acme", ""), http.StatusForbidden},
		{"no headers, from a user", tokAlice, catalogs("acme"), dh("", ""), http.StatusOK},
		{"headers from an operator", tokAdmin, catalogs("acme"), dh("acme", "alice@acme"), http.StatusForbidden},
	}
	// A refused delegation names an invalid user nowhere: its audit event's
	// actor is the gateway.
	long := strings.Repeat("b", 129)
	expect(t, n, call{method: "GET", path: catalogs("acme"), token: tokGWOther, header: dh("acme", long)}, 403, 1008)
	if !auditHas(n, "gw-other", "", "not a delegate") {
		t.Error("the refusal is not audited with the gateway as its actor")
	}
	for _, e := range n.Audit().Events("acme", 0, 0, 1000) {
		if e.Actor == long || e.Delegator == long {
			t.Errorf("an audit event names the invalid user: %+v", e)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, n, call{method: "GET", path: c.path, token: c.token, header: c.header})
			if r.status != c.status {
				t.Fatalf("HTTP %d, want %d: %s", r.status, c.status, r.raw)
			}
			if c.status == http.StatusForbidden && r.code() != 1008 {
				t.Fatalf("code %d, want 1008: %s", r.code(), r.raw)
			}
		})
	}
}
