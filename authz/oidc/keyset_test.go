package oidc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// clock is a settable clock for the refresh bound.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const staticPrincipals = `principals:
  - {id: ops, tenant: acme, role: operator, tokens: [{sha256: ` + "7777777777777777777777777777777777777777777777777777777777777777" + `}]}
`

// provider parses a map holding the issuer's provider (with extra lines)
// and returns the map and its provider.
func provider(t *testing.T, iss *oidctest.Issuer, extra ...string) (*authz.PrincipalMap, *authz.Provider) {
	t.Helper()
	lines := append([]string{"tenant: acme", "auto_create_users: true", "namespaces: {all: [public]}", "refresh_interval: 1m"}, extra...)
	m, err := authz.ParsePrincipalMap([]byte(staticPrincipals + oidctest.OIDCSection(iss.ProviderYAML("idp", lines...))))
	if err != nil {
		t.Fatal(err)
	}
	return m, m.Providers()[0]
}

func authenticator(t *testing.T, m *authz.PrincipalMap, opts oidc.Options) *authz.Authenticator {
	t.Helper()
	// The authenticator shares the key sets' clock: its verified-token
	// cache lasts at most the refresh interval of that clock.
	a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: oidc.NewRegistry(opts), Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func reason(a *authz.Authenticator, token string) authz.FailureReason {
	_, r, _ := a.AuthenticateReason(context.Background(), token)
	return r
}

// TestForgedKidFlood: however many tokens name unknown kids, concurrently
// or not, the issuer is asked at most once per refresh interval.
func TestForgedKidFlood(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	m, _ := provider(t, iss)
	clk := &clock{t: time.Now()}
	a := authenticator(t, m, oidc.Options{Client: iss.Client(), Now: clk.Now})

	if r := reason(a, iss.Token(t, iss.Claims("alice"))); r != authz.ReasonNone {
		t.Fatalf("valid token: %v", r)
	}
	if got := iss.JWKSRequests(); got != 1 {
		t.Fatalf("first use: %d JWKS requests, want 1", got)
	}
	forged := func(n int) string {
		k := oidctest.NewKey(t, "ES256")
		k.Kid = fmt.Sprintf("forged-%d", n)
		return oidctest.Sign(t, k, iss.Claims("alice"), nil)
	}
	// ES256 keys are cheap to make; the algorithm is refused only after
	// the kid lookup when the provider allows it, so allow it.
	m, _ = provider(t, iss, "algorithms: [RS256, ES256]")
	a = authenticator(t, m, oidc.Options{Client: iss.Client(), Now: clk.Now})
	before := iss.JWKSRequests()
	tokens := make([]string, 200)
	for i := range tokens {
		tokens[i] = forged(i)
	}
	flood := func() {
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := g; i < len(tokens); i += 8 {
					if r := reason(a, tokens[i]); r != authz.ReasonUnknownKey {
						t.Errorf("forged kid: reason %v", r)
					}
				}
			}(g)
		}
		wg.Wait()
	}
	flood()
	// The new registry's first lookup fetches once; no forged kid fetches again.
	if got := iss.JWKSRequests() - before; got != 1 {
		t.Fatalf("flood: %d JWKS requests, want 1 (the first fetch)", got)
	}
	clk.Advance(59 * time.Second)
	flood()
	if got := iss.JWKSRequests() - before; got != 1 {
		t.Fatalf("flood within the interval: %d JWKS requests, want 1", got)
	}
	clk.Advance(time.Second)
	flood()
	if got := iss.JWKSRequests() - before; got != 2 {
		t.Fatalf("flood in the next interval: %d JWKS requests, want 2", got)
	}
	// Valid tokens never wait for the bound.
	if r := reason(a, iss.Token(t, iss.Claims("alice"))); r != authz.ReasonNone {
		t.Fatalf("valid token after the flood: %v", r)
	}
}

// TestKeyRotation: a new kid published by the issuer is accepted after one
// refresh, without a new authenticator; a retired kid stops verifying after
// the next refresh, its tokens' cached verifications included.
func TestKeyRotation(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	m, _ := provider(t, iss)
	clk := &clock{t: time.Now()}
	a := authenticator(t, m, oidc.Options{Client: iss.Client(), Now: clk.Now})
	old := iss.Token(t, iss.Claims("alice"))
	if r := reason(a, old); r != authz.ReasonNone {
		t.Fatalf("old key: %v", r)
	}
	oldKid := iss.Current().Kid

	iss.Rotate(t)
	rotated := iss.Token(t, iss.Claims("alice"))
	// Within the interval of the first fetch the new kid is not fetched yet.
	if r := reason(a, rotated); r != authz.ReasonUnknownKey {
		t.Fatalf("new kid within the interval: %v", r)
	}
	clk.Advance(time.Minute)
	if r := reason(a, rotated); r != authz.ReasonNone {
		t.Fatalf("new kid after the interval: %v", r)
	}
	if r := reason(a, old); r != authz.ReasonNone {
		t.Fatalf("old kid still published: %v", r)
	}
	if got := iss.JWKSRequests(); got != 2 {
		t.Errorf("%d JWKS requests, want 2", got)
	}

	iss.Retire(oldKid)
	iss.Rotate(t)
	clk.Advance(time.Minute)
	newest := iss.Token(t, iss.Claims("alice"))
	if r := reason(a, newest); r != authz.ReasonNone {
		t.Fatalf("newest kid: %v", r)
	}
	if r := reason(a, old); r != authz.ReasonUnknownKey {
		t.Fatalf("retired kid: %v", r)
	}
}

// TestKeySetRefusals: what a fetch refuses ends in key_fetch (or, for the
// map, a load error), never in an accepted token.
func TestKeySetRefusals(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	token := iss.Token(t, iss.Claims("alice"))
	jwks := string(iss.JWKS())
	serve := func(t *testing.T, h http.HandlerFunc) string {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s.URL
	}
	tests := []struct {
		name  string
		extra func(t *testing.T) []string
	}{
		{"discovery names another issuer", func(t *testing.T) []string {
			u := serve(t, func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"issuer": "https://evil.example", "jwks_uri": %q}`, iss.JWKSURL())
			})
			return []string{"discovery_url: " + u}
		}},
		{"discovery jwks_uri over plain http without allow_http", func(t *testing.T) []string {
			return []string{"discovery_url: " + iss.DiscoveryURL(), "allow_http: false"}
		}},
		{"JWKS over the size limit", func(t *testing.T) []string {
			u := serve(t, func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"keys": [], "pad": "`+strings.Repeat("x", oidc.MaxResponseBytes)+`"}`)
			})
			return []string{"discovery_url:", "jwks_url: " + u}
		}},
		{"JWKS status 500", func(t *testing.T) []string {
			u := serve(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, jwks, 500) })
			return []string{"discovery_url:", "jwks_url: " + u}
		}},
		{"JWKS redirects to plain http elsewhere", func(t *testing.T) []string {
			u := serve(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://example.com/jwks", http.StatusFound)
			})
			return []string{"discovery_url:", "jwks_url: " + u}
		}},
		{"JWKS with only an HMAC secret", func(t *testing.T) []string {
			u := serve(t, func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `{"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "k1"}]}`)
			})
			return []string{"discovery_url:", "jwks_url: " + u}
		}},
		{"JWKS not JSON", func(t *testing.T) []string {
			u := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>") })
			return []string{"discovery_url:", "jwks_url: " + u}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := staticPrincipals + oidctest.OIDCSection(iss.ProviderYAML("idp", append([]string{"tenant: acme", "auto_create_users: true", "namespaces: {all: [public]}"}, tt.extra(t)...)...))
			m, err := authz.ParsePrincipalMap([]byte(doc))
			if err != nil {
				if strings.Contains(tt.name, "without allow_http") {
					return // refused at parse: even better
				}
				t.Fatalf("%v\n%s", err, doc)
			}
			a := authenticator(t, m, oidc.Options{})
			if r := reason(a, token); r != authz.ReasonKeyFetch {
				t.Fatalf("reason %v, want key_fetch", r)
			}
		})
	}
}

// TestJWKSFile: an air-gapped provider reads its keys from a file when the
// map is loaded; a missing, invalid or private-key file fails the load.
func TestJWKSFile(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	iss.WriteJWKS(t, path)
	fileMap := func(p string) *authz.PrincipalMap {
		doc := staticPrincipals + `oidc:
  providers:
    - {name: airgap, issuer: ` + iss.URL + `, audience: lakegate, jwks_file: ` + p + `, tenant: acme, auto_create_users: true, namespaces: {all: [public]}}
`
		m, err := authz.ParsePrincipalMap([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := authenticator(t, fileMap(path), oidc.Options{})
	if r := reason(a, iss.Token(t, iss.Claims("alice"))); r != authz.ReasonNone {
		t.Fatalf("file keys: %v", r)
	}
	if iss.JWKSRequests() != 0 {
		t.Errorf("a jwks_file provider fetched over the network")
	}

	priv := filepath.Join(dir, "private.json")
	if err := os.WriteFile(priv, []byte(`{"keys": [{"kty": "EC", "crv": "P-256", "kid": "p",
		"x": "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4", "y": "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM",
		"d": "870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "missing.json"), priv, garbage} {
		_, err := authz.NewAuthenticatorWith(fileMap(p), authz.AuthConfig{Keys: oidc.NewRegistry(oidc.Options{})})
		if err == nil {
			t.Errorf("%s: authenticator built", filepath.Base(p))
		}
	}

	// Rotation through the file: an unknown kid re-reads it (bounded).
	clk := &clock{t: time.Now()}
	a = authenticator(t, fileMap(path), oidc.Options{Now: clk.Now})
	iss.Rotate(t)
	iss.WriteJWKS(t, path)
	tok := iss.Token(t, iss.Claims("alice"))
	if r := reason(a, tok); r != authz.ReasonUnknownKey {
		t.Fatalf("new kid within the interval: %v", r)
	}
	clk.Advance(time.Minute)
	if r := reason(a, tok); r != authz.ReasonNone {
		t.Fatalf("new kid after re-reading the file: %v", r)
	}
}

// TestKeySetTLS: the default rules fetch over https with the client given.
func TestKeySetTLS(t *testing.T) {
	iss := oidctest.NewIssuer(t, oidctest.WithTLS())
	m, _ := provider(t, iss, "allow_http: false")
	a := authenticator(t, m, oidc.Options{Client: iss.Client()})
	if r := reason(a, iss.Token(t, iss.Claims("alice"))); r != authz.ReasonNone {
		t.Fatalf("https issuer: %v", r)
	}
	// Without the test CA the certificate is not trusted.
	b := authenticator(t, m, oidc.Options{})
	if r := reason(b, iss.Token(t, iss.Claims("alice"))); r != authz.ReasonKeyFetch {
		t.Fatalf("untrusted certificate: %v", r)
	}
}

// TestKeysCancelledCaller: a caller's cancelled context does not abort the
// shared fetch (which would spend the refresh budget on nothing).
func TestKeysCancelledCaller(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	_, p := provider(t, iss)
	ks, err := oidc.NewKeySet(p, oidc.Options{Client: iss.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	keys, err := ks.Keys(ctx, iss.Current().Kid)
	if err != nil || len(keys) != 1 {
		t.Fatalf("Keys = %v, %v", keys, err)
	}
	if _, err := ks.Keys(context.Background(), "nope"); !errors.Is(err, authz.ErrUnknownKey) {
		t.Fatalf("unknown kid: %v", err)
	}
	if ks.Refreshes() != 1 {
		t.Errorf("%d refreshes, want 1", ks.Refreshes())
	}
}
