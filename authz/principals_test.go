package authz_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/authz/oidc"
	"lakegate/authz/oidctest"
)

func writeMap(t *testing.T, path, doc string, mode os.FileMode) {
	t.Helper()
	os.Remove(path)
	if err := os.WriteFile(path, []byte(doc), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func mustAuth(t *testing.T, ps *authz.Principals, token string) *authz.Principal {
	t.Helper()
	p, r, err := ps.AuthenticateReason(context.Background(), token)
	if err != nil {
		t.Fatalf("authenticate: %v (%v)", err, r)
	}
	return p
}

// TestPrincipalsReload: an invalid map is refused whole and the old one
// stays in force; an accepted one takes effect on the next call, and a
// principal it removes or changes no longer holds (outstanding tickets).
func TestPrincipalsReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "principals.yaml")
	writeMap(t, path, validMap, 0o600)
	ps, err := authz.LoadPrincipals(path, authz.PrincipalsConfig{Keys: oidc.NewRegistry(oidc.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if ps.Generation() != 1 {
		t.Fatalf("generation %d", ps.Generation())
	}
	alice := mustAuth(t, ps, tokAlice)
	gw := mustAuth(t, ps, tokGW)
	now := time.Now()

	refused := []struct {
		name string
		doc  string
		mode os.FileMode
	}{
		{"duplicate hash", strings.Replace(validMap, hGW, hAlice, 1), 0o600},
		{"unknown field", validMap + "extra: 1\n", 0o600},
		{"group-readable file", validMap, 0o640},
		{"empty", "", 0o600},
		{"missing jwks_file", validMap + "oidc:\n  providers:\n    - {name: a, issuer: x, audience: y, jwks_file: " + filepath.Join(dir, "none.json") + ", tenant: acme}\n", 0o600},
	}
	for i, tt := range refused {
		writeMap(t, path, tt.doc, tt.mode)
		err := ps.Reload(path)
		if err == nil {
			t.Fatalf("%s: reload accepted", tt.name)
		}
		if !strings.Contains(err.Error(), "previous principal map stays in force") {
			t.Errorf("%s: error %q", tt.name, err)
		}
		assertNoSecrets(t, err.Error())
		if ps.Generation() != 1 {
			t.Errorf("%s: generation %d after a refused reload", tt.name, ps.Generation())
		}
		if p := mustAuth(t, ps, tokAlice); p.ID() != alice.ID() {
			t.Errorf("%s: old map not in force", tt.name)
		}
		if ok, no := ps.Reloads(); ok != 0 || no != uint64(i+1) {
			t.Errorf("%s: Reloads = %d, %d", tt.name, ok, no)
		}
	}
	if !ps.Holds(alice, now) || !ps.Holds(gw, now) {
		t.Fatal("principals do not hold under their own map")
	}

	// Remove alice, narrow nothing else: her token and her outstanding
	// tickets end; the gateway's hold.
	withoutAlice := strings.Replace(validMap, validMap[strings.Index(validMap, "  - id: alice@acme"):strings.Index(validMap, "  - id: gateway-1")], "", 1)
	writeMap(t, path, withoutAlice, 0o600)
	if err := ps.Reload(path); err != nil {
		t.Fatal(err)
	}
	if ps.Generation() != 2 {
		t.Errorf("generation %d", ps.Generation())
	}
	if _, r, err := ps.AuthenticateReason(context.Background(), tokAlice); !errors.Is(err, authz.ErrUnauthenticated) || r != authz.ReasonUnknownToken {
		t.Errorf("removed principal's token: %v, %v", r, err)
	}
	if ps.Holds(alice, now) {
		t.Error("removed principal still holds")
	}
	if !ps.Holds(gw, now) {
		t.Error("unchanged principal no longer holds")
	}

	// Changed grants end the old principal's tickets too.
	writeMap(t, path, strings.Replace(validMap, "[Sales, hr]", "[hr]", 1), 0o600)
	if err := ps.Reload(path); err != nil {
		t.Fatal(err)
	}
	if ps.Holds(alice, now) {
		t.Error("principal with narrowed grants still holds")
	}
	if p := mustAuth(t, ps, tokAlice); !ps.Holds(p, now) || ps.Current().Generation() != 3 {
		t.Error("re-authenticated principal does not hold")
	}
	if ok, _ := ps.Reloads(); ok != 2 {
		t.Errorf("accepted reloads %d", ok)
	}
}

// TestPrincipalsReloadJWT: a reload that removes the provider, or the
// listed user, ends JWT principals; an expired token's principal does not
// hold; a reload keeps the provider's cached keys.
func TestPrincipalsReloadJWT(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "principals.yaml")
	doc := jwtMap(iss)
	writeMap(t, path, doc, 0o600)
	ps, err := authz.LoadPrincipals(path, authz.PrincipalsConfig{Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client()})})
	if err != nil {
		t.Fatal(err)
	}
	bob := mustAuth(t, ps, iss.Token(t, acmeClaims(iss, "bob@acme")))
	alice := mustAuth(t, ps, iss.Token(t, with(acmeClaims(iss, "alice"), "groups", []string{"analysts"})))
	now := time.Now()
	if !ps.Holds(bob, now) || !ps.Holds(alice, now) {
		t.Fatal("JWT principals do not hold under their own map")
	}
	if ps.Holds(alice, alice.Expiry()) {
		t.Error("principal holds at its token's expiry")
	}

	// Same provider, bob no longer listed: bob ends, alice holds, and no
	// key is fetched again.
	fetches := iss.JWKSRequests()
	writeMap(t, path, strings.Replace(doc, "  - {id: bob@acme, tenant: acme, role: user, namespaces: [hr]}\n", "", 1), 0o600)
	if err := ps.Reload(path); err != nil {
		t.Fatal(err)
	}
	if ps.Holds(bob, now) {
		t.Error("unlisted user still holds")
	}
	if !ps.Holds(alice, now) {
		t.Error("auto-created user no longer holds")
	}
	mustAuth(t, ps, iss.Token(t, acmeClaims(iss, "alice")))
	if iss.JWKSRequests() != fetches {
		t.Errorf("reload refetched keys: %d -> %d", fetches, iss.JWKSRequests())
	}

	// Provider removed: every JWT principal ends.
	writeMap(t, path, validMap, 0o600)
	if err := ps.Reload(path); err != nil {
		t.Fatal(err)
	}
	if ps.Holds(alice, now) {
		t.Error("JWT principal holds without its provider")
	}
	if _, r, _ := ps.AuthenticateReason(context.Background(), iss.Token(t, acmeClaims(iss, "alice"))); r != authz.ReasonUnknownToken {
		t.Errorf("JWT without providers: reason %v", r)
	}
}

// TestPrincipalsPrepare: Prepare's principal survives reloads; its error
// refuses the map.
func TestPrincipalsPrepare(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "principals.yaml")
	writeMap(t, path, validMap, 0o600)
	self, err := authz.NewPrincipal(mustID(t, "node-1"), mustTenant(t, "platform"), authz.RoleMetadataPeer, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	selfTok := "lg_" + strings.Repeat("S", 43)
	ps, err := authz.LoadPrincipals(path, authz.PrincipalsConfig{Prepare: func(m *authz.PrincipalMap) (*authz.PrincipalMap, error) {
		return m.With(self, authz.HashToken(selfTok))
	}})
	if err != nil {
		t.Fatal(err)
	}
	mustAuth(t, ps, selfTok)
	if err := ps.Reload(path); err != nil {
		t.Fatal(err)
	}
	mustAuth(t, ps, selfTok)
	// A file that takes the process's own id is refused by With.
	writeMap(t, path, strings.Replace(validMap, "gateway-1", "node-1", 1), 0o600)
	if err := ps.Reload(path); err == nil {
		t.Fatal("map colliding with the process's own principal accepted")
	}
	mustAuth(t, ps, tokGW)
}

// TestPrincipalsConcurrentReload: authentication during reloads always
// sees one whole map (run with -race).
func TestPrincipalsConcurrentReload(t *testing.T) {
	m1, err := authz.ParsePrincipalMap([]byte(validMap))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := authz.ParsePrincipalMap([]byte(strings.Replace(validMap, "[Sales, hr]", "[hr]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := authz.NewPrincipals(m1, authz.PrincipalsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := ps.Current()
				p, err := s.Authenticator().Authenticate(tokAlice)
				if err != nil || !s.Authenticator().Holds(p, time.Now()) {
					t.Errorf("snapshot %d: %v", s.Generation(), err)
					return
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		m := m1
		if i%2 == 1 {
			m = m2
		}
		if err := ps.Replace(m); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if ps.Generation() != 51 {
		t.Errorf("generation %d", ps.Generation())
	}
}

// TestHolds: what ends a principal's hold, edit by edit.
func TestHolds(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	keys := oidc.NewRegistry(oidc.Options{Client: iss.Client()})
	build := func(t *testing.T, doc string) *authz.Authenticator {
		t.Helper()
		m, err := authz.ParsePrincipalMap([]byte(doc))
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: keys})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	base := jwtMap(iss)
	a := build(t, base)
	static, err := a.Authenticate(tokAlice)
	if err != nil {
		t.Fatal(err)
	}
	jwtP, err := a.Authenticate(iss.Token(t, acmeClaims(iss, "carol")))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if a.Holds(nil, now) || authz.NewAuthenticator(nil).Holds(static, now) {
		t.Error("nil principal or nil map holds")
	}
	bobEntry := "  - {id: bob@acme, tenant: acme, role: user, namespaces: [hr]}\n"
	aliceEntry := base[strings.Index(base, "  - id: alice@acme"):strings.Index(base, "  - id: gateway-1")]
	tests := []struct {
		name            string
		doc             string
		staticOK, jwtOK bool
	}{
		{"unchanged", base, true, true},
		{"static principal moved to another tenant", strings.Replace(base, "tenant: acme              # TenantID", "tenant: globex", 1), false, true},
		{"static principal made tenant admin", strings.Replace(base, aliceEntry, "  - {id: alice@acme, tenant: acme, role: tenant_admin, tokens: [{sha256: "+hAlice+"}]}\n", 1), false, true},
		{"static principal's tokens all removed (JWT only now)", strings.Replace(base, aliceEntry, "  - {id: alice@acme, tenant: acme, role: user, namespaces: [Sales, hr]}\n", 1), false, true},
		{"provider moved to another tenant", strings.Replace(strings.Replace(base, "tenant: acme\n      tenant_claim", "tenant: globex\n      tenant_claim", 1), bobEntry, "", 1), true, false},
		{"provider no longer creates users", strings.Replace(base, "auto_create_users: true", "auto_create_users: false", 1), true, false},
		{"provider grants another namespace", strings.Replace(base, "all: [public]", "all: [other]", 1), true, false},
		{"another issuer serves the tenant", strings.Replace(base, `issuer: "`+iss.URL+`"`, `issuer: "http://127.0.0.1:1"`, 1), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := build(t, tt.doc)
			if got := b.Holds(static, now); got != tt.staticOK {
				t.Errorf("static principal holds = %v, want %v", got, tt.staticOK)
			}
			if got := b.Holds(jwtP, now); got != tt.jwtOK {
				t.Errorf("JWT principal holds = %v, want %v", got, tt.jwtOK)
			}
		})
	}
}

// TestJWTAmbiguousAudience: two providers of one issuer are told apart by
// audience; a token naming both is refused.
func TestJWTAmbiguousAudience(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	doc := validMap + oidctest.OIDCSection(
		iss.ProviderYAML("acme-idp", "tenant: acme", "audience: app-acme", "auto_create_users: true", "namespaces: {all: [public]}"),
		iss.ProviderYAML("globex-strict", "tenant: globex", "audience: app-strict", "namespaces: {all: [public]}"),
		iss.ProviderYAML("globex-idp", "tenant: globex", "audience: app-globex", "auto_create_users: true", "namespaces: {all: [public]}"),
	)
	a := newJWTAuth(t, iss, doc)
	// Holds finds the principal's provider past others of its issuer: one
	// serving another tenant, one serving its tenant but not creating users.
	if p, err := a.Authenticate(iss.Token(t, with(iss.Claims("carol"), "aud", "app-globex"))); err != nil || !a.Holds(p, time.Now()) {
		t.Errorf("globex principal: %v, %v, holds %v", p, err, p != nil && a.Holds(p, time.Now()))
	}
	for _, tt := range []struct {
		aud    any
		tenant string
		want   authz.FailureReason
	}{
		{"app-acme", "acme", authz.ReasonNone},
		{[]string{"app-globex"}, "globex", authz.ReasonNone},
		{[]string{"x", "app-globex"}, "globex", authz.ReasonNone},
		{[]string{"app-acme", "app-globex"}, "", authz.ReasonBadAudience},
		{[]string{"app-globex", "app-acme"}, "", authz.ReasonBadAudience},
	} {
		p, r, _ := a.AuthenticateReason(context.Background(), iss.Token(t, with(iss.Claims("carol"), "aud", tt.aud)))
		if r != tt.want || (p != nil && p.Tenant().String() != tt.tenant) {
			t.Errorf("aud %v: %v, %v; want %v, %s", tt.aud, p, r, tt.want, tt.tenant)
		}
	}
	// Static Basic credentials beside providers.
	if p, err := a.AuthenticateBasic("alice@acme", tokAlice); err != nil || p.ID().String() != "alice@acme" {
		t.Errorf("static Basic beside providers: %v, %v", p, err)
	}
	if _, r, _ := a.AuthenticateBasicReason(context.Background(), "gateway-1", tokAlice); r != authz.ReasonUnknownToken {
		t.Errorf("static Basic under another id: %v", r)
	}
}
