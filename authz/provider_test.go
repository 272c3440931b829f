package authz_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"lakegate/authz"
)

// provider is one provider entry in flow style with fields overridden.
func providerEntry(fields ...string) string {
	base := map[string]string{
		"name":     "idp",
		"issuer":   "https://idp.example/realms/acme",
		"audience": "lakegate",
		"jwks_url": "https://idp.example/realms/acme/certs",
		"tenant":   "acme",
	}
	order := []string{"name", "issuer", "audience", "jwks_url", "tenant"}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, ": ")
		if _, ok := base[k]; !ok {
			order = append(order, k)
		}
		base[k] = v
	}
	var parts []string
	for _, k := range order {
		if v := base[k]; v != "-" {
			parts = append(parts, k+": "+v)
		}
	}
	return "    - {" + strings.Join(parts, ", ") + "}\n"
}

func oidcMap(entries ...string) string {
	return validMap + "oidc:\n  providers:\n" + strings.Join(entries, "")
}

func TestParsePrincipalMapOIDC(t *testing.T) {
	m, err := authz.ParsePrincipalMap([]byte(validMap))
	if err != nil || len(m.Providers()) != 0 {
		t.Fatalf("a map without oidc: %v, %d providers", err, len(m.Providers()))
	}

	m, err = authz.ParsePrincipalMap([]byte(oidcMap(
		providerEntry(),
		providerEntry("name: shared", "audience: other", "tenant: -", "tenant_claim: https://idp.example/tenant",
			"tenants: [globex, acme, acme]", "algorithms: [ES256, RS256, ES256]", "clock_skew: 30s", "refresh_interval: 10m",
			"user_claim: preferred_username", "groups_claim: cognito:groups", "auto_create_users: true",
			"namespaces: {all: [Public], groups: {'Data Team/analysts': [sales, hr]}}"),
	)))
	if err != nil {
		t.Fatal(err)
	}
	ps := m.Providers()
	if len(ps) != 2 {
		t.Fatalf("%d providers", len(ps))
	}
	p := ps[0]
	if p.Name() != "idp" || p.Tenant().String() != "acme" || fmt.Sprint(p.Algorithms()) != "[RS256]" ||
		p.ClockSkew() != authz.DefaultClockSkew || p.RefreshInterval() != authz.DefaultRefreshInterval || p.AllowHTTP() {
		t.Errorf("defaults: %v %v %v %v %v", p.Name(), p.Tenant(), p.Algorithms(), p.ClockSkew(), p.RefreshInterval())
	}
	p = ps[1]
	if fmt.Sprint(p.Tenants()) != "[acme globex]" || fmt.Sprint(p.Algorithms()) != "[ES256 RS256]" ||
		p.ClockSkew() != 30*time.Second || p.RefreshInterval() != 10*time.Minute || p.Tenant() != (authz.TenantID{}) {
		t.Errorf("shared: %v %v %v %v", p.Tenants(), p.Algorithms(), p.ClockSkew(), p.RefreshInterval())
	}

	// A user may have no token when a provider serves its tenant.
	jwtOnly := strings.Replace(oidcMap(providerEntry()), "principals:\n", "principals:\n  - {id: bob, tenant: acme, role: user, namespaces: [hr]}\n", 1)
	if _, err := authz.ParsePrincipalMap([]byte(jwtOnly)); err != nil {
		t.Errorf("JWT-only user: %v", err)
	}
}

func TestParsePrincipalMapOIDCInvalid(t *testing.T) {
	noTokens := func(line string) string {
		return strings.Replace(oidcMap(providerEntry()), "principals:\n", "principals:\n"+line, 1)
	}
	tests := []struct {
		name, doc, want string
	}{
		{"no providers", validMap + "oidc:\n  providers: []\n", "oidc: needs at least one provider"},
		{"unknown field", oidcMap(providerEntry("jwks: x")), "not found"},
		{"unknown oidc field", validMap + "oidc:\n  issuers: []\n", "not found"},
		{"no name", oidcMap(providerEntry("name: -")), "oidc.providers[0]: name"},
		{"bad name", oidcMap(providerEntry("name: 'a b'")), "oidc.providers[0]: name"},
		{"duplicate name", oidcMap(providerEntry(), providerEntry("audience: b")), "duplicate name (also oidc.providers[0])"},
		{"same issuer and audience", oidcMap(providerEntry(), providerEntry("name: two", "tenant: globex")), "same issuer and audience"},
		{"no key source", oidcMap(providerEntry("jwks_url: -")), "exactly one of jwks_url, discovery_url, jwks_file"},
		{"two key sources", oidcMap(providerEntry("jwks_file: /k.json")), "exactly one of"},
		{"http jwks_url", oidcMap(providerEntry("jwks_url: http://idp.example/certs")), "jwks_url: must use https"},
		{"http to a remote host even when allowed", oidcMap(providerEntry("jwks_url: http://idp.example/certs", "issuer: http://idp.example", "allow_http: true")), "loopback hosts only"},
		{"http issuer with discovery", oidcMap(providerEntry("jwks_url: -", "discovery_url: https://idp.example/.well-known/openid-configuration", "issuer: http://idp.example")), "issuer: must use https"},
		{"user info in URL", oidcMap(providerEntry("jwks_url: https://u:p@idp.example/certs")), "without user info"},
		{"file scheme", oidcMap(providerEntry("jwks_url: file:///etc/keys")), "jwks_url"},
		{"no issuer", oidcMap(providerEntry("issuer: -")), "issuer: want"},
		{"no audience", oidcMap(providerEntry("audience: -")), "audience: want"},
		{"alg none", oidcMap(providerEntry("algorithms: [none]")), "none and HMAC are never accepted"},
		{"alg HS256", oidcMap(providerEntry("algorithms: [RS256, HS256]")), "algorithms[1]"},
		{"alg lower case", oidcMap(providerEntry("algorithms: [rs256]")), "algorithms[0]"},
		{"skew too large", oidcMap(providerEntry("clock_skew: 10m")), "clock_skew"},
		{"skew negative", oidcMap(providerEntry("clock_skew: -1s")), "clock_skew"},
		{"skew without unit", oidcMap(providerEntry("clock_skew: 60")), "clock_skew"},
		{"refresh too short", oidcMap(providerEntry("refresh_interval: 10ms")), "refresh_interval"},
		{"bad user claim", oidcMap(providerEntry("user_claim: name")), "user_claim: want one of sub, email, preferred_username"},
		{"bad groups claim", oidcMap(providerEntry("groups_claim: 'a b'")), "groups_claim"},
		{"no tenant", oidcMap(providerEntry("tenant: -")), "needs tenant, or tenant_claim with tenants"},
		{"tenant claim without tenants", oidcMap(providerEntry("tenant: -", "tenant_claim: tid")), "tenant_claim needs tenants"},
		{"tenants with a fixed tenant", oidcMap(providerEntry("tenants: [globex]")), "tenants: only for a shared provider"},
		{"bad tenant", oidcMap(providerEntry("tenant: -x")), "tenant"},
		{"bad tenants entry", oidcMap(providerEntry("tenant: -", "tenant_claim: tid", "tenants: [acme, '']")), "tenants[1]"},
		{"auto-create without namespaces", oidcMap(providerEntry("auto_create_users: true")), "auto_create_users needs namespaces"},
		{"bad namespace", oidcMap(providerEntry("namespaces: {all: ['..']}")), "namespaces.all[0]"},
		{"group rule without groups claim", oidcMap(providerEntry("namespaces: {groups: {a: [s]}}")), "namespaces.groups needs groups_claim"},
		{"group granting nothing", oidcMap(providerEntry("groups_claim: g", "namespaces: {groups: {a: []}}")), "grants no namespace"},
		{"duplicate group", oidcMap(providerEntry("groups_claim: g", "namespaces: {groups: {a: [s], a: [t]}}")), "already defined"},
		{"token-less operator", noTokens("  - {id: bob, tenant: acme, role: operator}\n"), "at least one token"},
		{"token-less user of another tenant", noTokens("  - {id: bob, tenant: globex, role: user, namespaces: [hr]}\n"), "at least one token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := authz.ParsePrincipalMap([]byte(tt.doc))
			if err == nil {
				t.Fatalf("accepted:\n%s", tt.doc)
			}
			if !errors.Is(err, authz.ErrInvalidMap) {
				t.Errorf("error %v does not wrap ErrInvalidMap", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			assertNoSecrets(t, err.Error())
		})
	}
}

func TestCheckProviderURL(t *testing.T) {
	tests := []struct {
		u     string
		allow bool
		ok    bool
	}{
		{"https://idp.example/x", false, true},
		{"http://idp.example/x", false, false},
		{"http://idp.example/x", true, false},
		{"http://127.0.0.1:8080/x", true, true},
		{"http://[::1]:8080/x", true, true},
		{"http://localhost/x", true, true},
		{"http://127.0.0.1.nip.io/x", true, false},
		{"https://idp.example/x#f", false, false},
		{"https:///x", false, false},
		{"//idp.example/x", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		if err := authz.CheckProviderURL(tt.u, tt.allow); (err == nil) != tt.ok {
			t.Errorf("CheckProviderURL(%q, %v) = %v, want ok %v", tt.u, tt.allow, err, tt.ok)
		}
	}
}

// TestProviderBounds: each limit of a provider's settings at its edge.
func TestProviderBounds(t *testing.T) {
	long := func(n int) string { return "https://idp.example/" + strings.Repeat("a", n-len("https://idp.example/")) }
	many := func(n int) []string {
		var es []string
		for i := 0; i < n; i++ {
			es = append(es, providerEntry(fmt.Sprintf("name: p%d", i), fmt.Sprintf("audience: a%d", i)))
		}
		return es
	}
	tests := []struct {
		name string
		doc  string
		ok   bool
	}{
		{"issuer of 1024 bytes", oidcMap(providerEntry("issuer: " + long(1024))), true},
		{"issuer of 1025 bytes", oidcMap(providerEntry("issuer: " + long(1025))), false},
		{"audience of 256 bytes", oidcMap(providerEntry("audience: " + strings.Repeat("a", 256))), true},
		{"audience of 257 bytes", oidcMap(providerEntry("audience: " + strings.Repeat("a", 257))), false},
		{"audience with a space", oidcMap(providerEntry("audience: 'a b'")), false},
		{"clock_skew 0s", oidcMap(providerEntry("clock_skew: 0s")), true},
		{"clock_skew 5m", oidcMap(providerEntry("clock_skew: 5m")), true},
		{"clock_skew 5m1s", oidcMap(providerEntry("clock_skew: 5m1s")), false},
		{"refresh_interval 1s", oidcMap(providerEntry("refresh_interval: 1s")), true},
		{"refresh_interval 999ms", oidcMap(providerEntry("refresh_interval: 999ms")), false},
		{"refresh_interval 24h", oidcMap(providerEntry("refresh_interval: 24h")), true},
		{"refresh_interval 24h1s", oidcMap(providerEntry("refresh_interval: 24h1s")), false},
		{"64 providers", oidcMap(many(64)...), true},
		{"65 providers", oidcMap(many(65)...), false},
		{"jwks_file of 4096 bytes", oidcMap(providerEntry("jwks_url: -", "jwks_file: /"+strings.Repeat("k", 4095))), true},
		{"jwks_file of 4097 bytes", oidcMap(providerEntry("jwks_url: -", "jwks_file: /"+strings.Repeat("k", 4096))), false},
		{"jwks_file with NUL", oidcMap(providerEntry("jwks_url: -", `jwks_file: "/k\0.json"`)), false},
		{"jwks_file provider with a non-URL issuer", oidcMap(providerEntry("jwks_url: -", "jwks_file: /k.json", "issuer: my-issuer")), true},
		{"claim name of 256 bytes", oidcMap(providerEntry("groups_claim: " + strings.Repeat("g", 256))), true},
		{"claim name of 257 bytes", oidcMap(providerEntry("groups_claim: " + strings.Repeat("g", 257))), false},
		{"group name of 256 bytes", oidcMap(providerEntry("groups_claim: g", "namespaces: {groups: {"+strings.Repeat("g", 256)+": [s]}}")), true},
		{"group name of 257 bytes", oidcMap(providerEntry("groups_claim: g", "namespaces: {groups: {"+strings.Repeat("g", 257)+": [s]}}")), false},
		{"group name with a control character", oidcMap(providerEntry("groups_claim: g", `namespaces: {groups: {"a\tb": [s]}}`)), false},
		{"group name with a C1 control character", oidcMap(providerEntry("groups_claim: g", `namespaces: {groups: {"a\u0085b": [s]}}`)), false},
		{"group name in UTF-8", oidcMap(providerEntry("groups_claim: g", `namespaces: {groups: {"Équipe données": [s]}}`)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := authz.ParsePrincipalMap([]byte(tt.doc))
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
		})
	}
	for _, tt := range []struct {
		u     string
		allow bool
		ok    bool
	}{
		{"http://localhost:8080/x", false, false},
		{"http://[::2]/x", true, false},
		{"http://127.0.0.2/x", true, true},
		{"ftp://idp.example/x", true, false},
		{long(1024), false, true},
		{long(1025), false, false},
	} {
		if err := authz.CheckProviderURL(tt.u, tt.allow); (err == nil) != tt.ok {
			t.Errorf("CheckProviderURL(%.40q, %v) = %v, want ok %v", tt.u, tt.allow, err, tt.ok)
		}
	}
}
