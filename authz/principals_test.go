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
