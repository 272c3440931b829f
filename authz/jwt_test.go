package authz_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"lakegate/authz"
	"lakegate/authz/oidc"
	"lakegate/authz/oidctest"
)

// jwtMap is a map with static principals and the issuer's provider for
// tenant acme: the tenant claim tid must confirm acme, groups come from
// "groups", users are created on sign-in with namespace public (and sales
// for analysts); bob@acme is listed (JWT only) with hr; ops is an operator.
func jwtMap(iss *oidctest.Issuer, extra ...string) string {
	lines := append([]string{
		"tenant: acme",
		"tenant_claim: tid",
		"groups_claim: groups",
		"auto_create_users: true",
		"namespaces: {all: [public], groups: {analysts: [sales]}}",
	}, extra...)
	return validMap + `  - {id: bob@acme, tenant: acme, role: user, namespaces: [hr]}
  - {id: ops, tenant: acme, role: operator, tokens: [{sha256: ` + strings.Repeat("7", 64) + `}]}
` + oidctest.OIDCSection(iss.ProviderYAML("acme-idp", lines...))
}

// newJWTAuth parses the map and builds an authenticator whose keys come from
// the issuer through the real key sets.
func newJWTAuth(t *testing.T, iss *oidctest.Issuer, doc string) *authz.Authenticator {
	t.Helper()
	m, err := authz.ParsePrincipalMap([]byte(doc))
	if err != nil {
		t.Fatalf("map: %v\n%s", err, doc)
	}
	a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client()})})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// acmeClaims are valid claims for sub in tenant acme.
func acmeClaims(iss *oidctest.Issuer, sub string) oidctest.Claims {
	c := iss.Claims(sub)
	c["tid"] = "acme"
	return c
}

func with(c oidctest.Claims, kv ...any) oidctest.Claims {
	out := oidctest.Claims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// TestAuthenticateJWTAttacks: every forged, misdirected or stale token is
// refused with the same error, and the reason names what was wrong.
func TestAuthenticateJWTAttacks(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	a := newJWTAuth(t, iss, jwtMap(iss, "algorithms: [RS256, ES256]"))
	good := acmeClaims(iss, "alice")
	now := time.Now()
	kid := iss.Current().Kid

	// Keys an attacker holds: its own RSA key under the issuer's kid and
	// under a new kid, and an EC key under the issuer's kid.
	evil := oidctest.NewKey(t, "RS256")
	evil.Kid = kid
	evilNewKid := oidctest.NewKey(t, "RS256")
	evilNewKid.Kid = "forged"
	evilEC := oidctest.NewKey(t, "ES256")
	evilEC.Kid = kid
	other := oidctest.NewIssuer(t) // a real issuer this map does not trust

	pubDER, err := x509.MarshalPKIXPublicKey(iss.Current().Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})

	tests := []struct {
		name  string
		token string
		want  authz.FailureReason
	}{
		{"wrong audience", iss.Token(t, with(good, "aud", "another-app")), authz.ReasonBadAudience},
		{"audience array without ours", iss.Token(t, with(good, "aud", []string{"a", "b"})), authz.ReasonBadAudience},
		{"no audience", iss.Token(t, with(good, "aud", nil)), authz.ReasonBadAudience},
		{"empty audience array", iss.Token(t, with(good, "aud", []string{})), authz.ReasonBadClaims},
		{"empty signature", func() string { v := iss.Token(t, good); return v[:strings.LastIndexByte(v, '.')+1] }(), authz.ReasonMalformed},
		{"empty alg", oidctest.Forge(t, map[string]any{"alg": "", "kid": kid}, good, []byte("x")), authz.ReasonMalformed},
		{"alg not a string", oidctest.Forge(t, map[string]any{"alg": 256, "kid": kid}, good, []byte("x")), authz.ReasonMalformed},
		{"oversized header", oidctest.Forge(t, map[string]any{"alg": "RS256", "kid": kid, "x": strings.Repeat("x", 1600)}, good, []byte("x")), authz.ReasonMalformed},
		{"audience not a string", iss.Token(t, with(good, "aud", 7)), authz.ReasonBadClaims},
		{"wrong issuer (signed by the trusted key)", iss.Token(t, with(good, "iss", "https://evil.example")), authz.ReasonBadIssuer},
		{"issuer with trailing slash", iss.Token(t, with(good, "iss", iss.URL+"/")), authz.ReasonBadIssuer},
		{"another real issuer", other.Token(t, with(good, "iss", other.URL)), authz.ReasonBadIssuer},
		{"another issuer claiming ours", other.Token(t, good), authz.ReasonBadSignature},
		{"no issuer", iss.Token(t, with(good, "iss", nil)), authz.ReasonBadIssuer},
		{"tenant claim of another tenant", iss.Token(t, with(good, "tid", "globex")), authz.ReasonUnknownTenant},
		{"no tenant claim", iss.Token(t, with(good, "tid", nil)), authz.ReasonUnknownTenant},
		{"tenant claim not a string", iss.Token(t, with(good, "tid", []string{"acme"})), authz.ReasonBadClaims},
		{"expired", iss.Token(t, with(good, "exp", now.Add(-2*time.Minute).Unix())), authz.ReasonExpired},
		{"no expiry", iss.Token(t, with(good, "exp", nil)), authz.ReasonBadClaims},
		{"expiry as a string", iss.Token(t, with(good, "exp", fmt.Sprint(now.Add(time.Hour).Unix()))), authz.ReasonBadClaims},
		{"not before in the future beyond skew", iss.Token(t, with(good, "nbf", now.Add(2*time.Minute).Unix())), authz.ReasonNotYetValid},
		{"issued in the future beyond skew", iss.Token(t, with(good, "iat", now.Add(2*time.Minute).Unix())), authz.ReasonNotYetValid},
		{"unknown kid", oidctest.Sign(t, evilNewKid, good, nil), authz.ReasonUnknownKey},
		{"our kid, attacker's key", oidctest.Sign(t, evil, good, nil), authz.ReasonBadSignature},
		{"alg none", oidctest.Forge(t, map[string]any{"alg": "none", "kid": kid}, good, nil), authz.ReasonBadAlgorithm},
		{"alg None", oidctest.Forge(t, map[string]any{"alg": "None", "kid": kid}, good, nil), authz.ReasonBadAlgorithm},
		{"HS256 with the public key (PEM) as secret", oidctest.ForgeHS256(t, map[string]any{"alg": "HS256", "kid": kid}, good, pubPEM), authz.ReasonBadAlgorithm},
		{"HS256 with the public key (DER) as secret", oidctest.ForgeHS256(t, map[string]any{"alg": "HS256", "kid": kid}, good, pubDER), authz.ReasonBadAlgorithm},
		{"ES256 header over the RSA key's kid", oidctest.Sign(t, evilEC, good, nil), authz.ReasonBadAlgorithm},
		{"RS384 not allowed", oidctest.Forge(t, map[string]any{"alg": "RS384", "kid": kid}, good, []byte("x")), authz.ReasonBadAlgorithm},
		{"attacker key embedded in the header", oidctest.Sign(t, evil, good, map[string]any{"jwk": jose.JSONWebKey{Key: evil.Public()}}), authz.ReasonBadSignature},
		{"secret key embedded in the header", oidctest.Sign(t, evil, good, map[string]any{"jwk": map[string]any{"kty": "oct", "k": "AAAA"}}), authz.ReasonMalformed},
		{"critical header", oidctest.Sign(t, iss.Current(), good, map[string]any{"crit": []string{"exp"}, "exp": 1}), authz.ReasonMalformed},
		{"unexpected typ", oidctest.Sign(t, iss.Current(), good, map[string]any{"typ": "logout+jwt"}), authz.ReasonMalformed},
		{"oversized", iss.Token(t, with(good, "pad", strings.Repeat("x", 9000))), authz.ReasonMalformed},
		{"duplicate claim", oidctest.SignPayload(t, iss.Current(), []byte(`{"iss":"`+iss.URL+`","aud":"lakegate","tid":"acme","exp":`+fmt.Sprint(now.Add(time.Hour).Unix())+`,"sub":"alice","sub":"bob@acme"}`), nil), authz.ReasonMalformed},
		{"escaped duplicate claim", oidctest.SignPayload(t, iss.Current(), []byte(`{"iss":"`+iss.URL+`","aud":"lakegate","tid":"acme","exp":`+fmt.Sprint(now.Add(time.Hour).Unix())+`,"sub":"alice","s\u0075b":"bob@acme"}`), nil), authz.ReasonMalformed},
		{"payload not an object", oidctest.SignPayload(t, iss.Current(), []byte(`["alice"]`), nil), authz.ReasonMalformed},
		{"trailing data after the claims", oidctest.SignPayload(t, iss.Current(), []byte(`{"sub":"alice"} {}`), nil), authz.ReasonMalformed},
		{"groups a string", iss.Token(t, with(good, "groups", "analysts")), authz.ReasonBadClaims},
		{"groups numbers", iss.Token(t, with(good, "groups", []int{1, 2})), authz.ReasonBadClaims},
		{"groups mixed", iss.Token(t, with(good, "groups", []any{"analysts", 2})), authz.ReasonBadClaims},
		{"groups null", oidctest.SignPayload(t, iss.Current(), []byte(`{"iss":"`+iss.URL+`","aud":"lakegate","tid":"acme","exp":`+fmt.Sprint(now.Add(time.Hour).Unix())+`,"sub":"alice","groups":null}`), nil), authz.ReasonBadClaims},
		{"group with a control character", iss.Token(t, with(good, "groups", []string{"a\nb"})), authz.ReasonBadClaims},
		{"user not a valid principal id", iss.Token(t, with(good, "sub", "alice smith")), authz.ReasonBadClaims},
		{"user id too long", iss.Token(t, with(good, "sub", strings.Repeat("a", 129))), authz.ReasonBadClaims},
		{"user not a string", iss.Token(t, with(good, "sub", 42)), authz.ReasonBadClaims},
		{"no user", iss.Token(t, with(good, "sub", nil)), authz.ReasonBadClaims},
		{"user is a listed operator", iss.Token(t, with(good, "sub", "ops")), authz.ReasonUnknownUser},
		{"user is a listed service of another tenant", iss.Token(t, with(good, "sub", "gateway-1")), authz.ReasonUnknownUser},
		{"user is a listed user of another tenant", iss.Token(t, with(good, "sub", "alice@acme")), authz.ReasonNone},
		{"signature of another token", func() string {
			a, b := iss.Token(t, good), iss.Token(t, with(good, "sub", "bob@acme"))
			return a[:strings.LastIndexByte(a, '.')] + b[strings.LastIndexByte(b, '.'):]
		}(), authz.ReasonBadSignature},
		{"garbage: empty segments", "eyJ..", authz.ReasonMalformed},
		{"garbage: four segments", iss.Token(t, good) + ".x", authz.ReasonUnknownToken},
		{"garbage: header not base64url", "eyJ!!.eyJ.c2ln", authz.ReasonMalformed},
		{"garbage: header not an object", "eyJhbGci.eyJ.c2ln", authz.ReasonMalformed},
		{"garbage: padded base64", strings.Replace(iss.Token(t, good), ".", "=.", 1), authz.ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, r, err := a.AuthenticateReason(context.Background(), tt.token)
			if tt.name == "user is a listed user of another tenant" {
				// alice@acme is listed in tenant acme, so the token is hers.
				if err != nil || p.ID().String() != "alice@acme" {
					t.Fatalf("= %v, %v, %v", p, r, err)
				}
				return
			}
			if err != authz.ErrUnauthenticated || p != nil {
				t.Fatalf("= %v, %v, %v; want nil, %v, ErrUnauthenticated", p, r, err, tt.want)
			}
			if err.Error() != "authz: unauthenticated" {
				t.Errorf("message %q says more than unauthenticated", err)
			}
			if r != tt.want {
				t.Errorf("reason %v, want %v", r, tt.want)
			}
			if p, err := a.Authenticate(tt.token); err != authz.ErrUnauthenticated || p != nil {
				t.Errorf("Authenticate = %v, %v", p, err)
			}
		})
	}
}

// TestAuthenticateJWTAccepted: valid tokens and the principals they yield.
func TestAuthenticateJWTAccepted(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	a := newJWTAuth(t, iss, jwtMap(iss))
	good := acmeClaims(iss, "alice")
	now := time.Now()
	exp := now.Add(time.Hour).Unix()
	tests := []struct {
		name       string
		token      string
		id         string
		namespaces string
		groups     string
	}{
		{"auto-created user", iss.Token(t, good), "alice", "[public]", "[]"},
		{"aud as array", iss.Token(t, with(good, "aud", []string{"x", oidctest.DefaultAudience})), "alice", "[public]", "[]"},
		{"groups grant namespaces", iss.Token(t, with(good, "groups", []string{"analysts", "other", "analysts"})), "alice", "[public sales]", "[analysts other]"},
		{"empty groups", iss.Token(t, with(good, "groups", []string{})), "alice", "[public]", "[]"},
		{"listed user keeps the map's grants", iss.Token(t, with(good, "sub", "bob@acme")), "bob@acme", "[hr public]", "[]"},
		{"expired within the clock skew", iss.Token(t, with(good, "exp", now.Add(-30*time.Second).Unix())), "alice", "[public]", "[]"},
		{"not before within the clock skew", iss.Token(t, with(good, "nbf", now.Add(30*time.Second).Unix())), "alice", "[public]", "[]"},
		{"fractional dates", iss.Token(t, with(good, "exp", float64(exp)+0.5, "iat", float64(now.Unix())-0.5)), "alice", "[public]", "[]"},
		{"no kid, one published key", oidctest.Sign(t, &oidctest.Key{Alg: iss.Current().Alg, Private: iss.Current().Private}, good, nil), "alice", "[public]", "[]"},
		{"typ JWT", oidctest.Sign(t, iss.Current(), good, map[string]any{"typ": "JWT"}), "alice", "[public]", "[]"},
		{"typ at+jwt", oidctest.Sign(t, iss.Current(), good, map[string]any{"typ": "at+jwt"}), "alice", "[public]", "[]"},
		{"unknown claims of any type", iss.Token(t, with(good, "x", map[string]any{"y": []any{1, nil}})), "alice", "[public]", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, r, err := a.AuthenticateReason(context.Background(), tt.token)
			if err != nil || r != authz.ReasonNone {
				t.Fatalf("= %v, %v, %v", p, r, err)
			}
			if p.ID().String() != tt.id || p.Tenant().String() != "acme" || p.Role() != authz.RoleUser || p.AuthMethod() != authz.AuthJWT {
				t.Errorf("principal %v %v %v %v", p.ID(), p.Tenant(), p.Role(), p.AuthMethod())
			}
			if got := fmt.Sprint(p.Namespaces()); got != tt.namespaces {
				t.Errorf("namespaces %s, want %s", got, tt.namespaces)
			}
			if got := fmt.Sprint(p.Groups()); got != tt.groups {
				t.Errorf("groups %s, want %s", got, tt.groups)
			}
			if p.Expiry().IsZero() || p.Issuer() != iss.URL {
				t.Errorf("expiry %v issuer %q", p.Expiry(), p.Issuer())
			}
			// JDBC's user/password form: the JWT as password, its user as user.
			if q, err := a.AuthenticateBasic(tt.id, tt.token); err != nil || q.ID() != p.ID() {
				t.Errorf("AuthenticateBasic = %v, %v", q, err)
			}
			if _, r, err := a.AuthenticateBasicReason(context.Background(), "ops", tt.token); err != authz.ErrUnauthenticated || r != authz.ReasonUnknownUser {
				t.Errorf("AuthenticateBasic under another id = %v, %v", r, err)
			}
		})
	}

	// Static tokens keep working beside the provider, and are not JWTs.
	if p, r, err := a.AuthenticateReason(context.Background(), tokAlice); err != nil || p.ID().String() != "alice@acme" || p.AuthMethod() != authz.AuthStatic || !p.Expiry().IsZero() {
		t.Errorf("static token = %v, %v, %v", p, r, err)
	}
	if _, r, _ := a.AuthenticateReason(context.Background(), "lg_"+strings.Repeat("Z", 43)); r != authz.ReasonUnknownToken {
		t.Errorf("unknown static token: reason %v", r)
	}
}

// TestAuthenticateJWTWithoutProviderSettings: a user-claim of email needs a
// verified address; an unlisted user is refused unless users are created;
// a shared provider's tenant claim picks among its tenants only.
func TestAuthenticateJWTProviderRules(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	doc := validMap + oidctest.OIDCSection(
		iss.ProviderYAML("shared", "tenant_claim: tid", "tenants: [acme, globex]", "user_claim: email"),
	)
	doc = strings.Replace(doc, "principals:\n", "principals:\n  - {id: carol@globex.example, tenant: globex, role: user, namespaces: [ops]}\n", 1)
	a := newJWTAuth(t, iss, doc)
	base := with(iss.Claims("ignored"), "email", "carol@globex.example", "tid", "globex")
	tests := []struct {
		name   string
		claims oidctest.Claims
		want   authz.FailureReason
	}{
		{"listed user, verified email", with(base, "email_verified", true), authz.ReasonNone},
		{"listed user, email_verified absent", base, authz.ReasonNone},
		{"unverified email", with(base, "email_verified", false), authz.ReasonBadClaims},
		{"email_verified not a bool", with(base, "email_verified", "true"), authz.ReasonBadClaims},
		{"listed user claimed under another served tenant", with(base, "tid", "acme"), authz.ReasonUnknownUser},
		{"tenant the provider does not serve", with(base, "tid", "initech"), authz.ReasonUnknownTenant},
		{"tenant claim not a tenant id", with(base, "tid", "-x"), authz.ReasonUnknownTenant},
		{"unlisted user without auto-create", with(base, "email", "dave@globex.example"), authz.ReasonUnknownUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, r, err := a.AuthenticateReason(context.Background(), iss.Token(t, tt.claims))
			if r != tt.want || (err == nil) != (tt.want == authz.ReasonNone) {
				t.Fatalf("= %v, %v, %v; want reason %v", p, r, err, tt.want)
			}
			if err == nil && (p.Tenant().String() != "globex" || fmt.Sprint(p.Namespaces()) != "[ops]") {
				t.Errorf("principal %v %v", p.Tenant(), p.Namespaces())
			}
		})
	}
}

// TestAuthenticateJWTAlgorithms: each supported key type verifies with its
// own algorithm.
func TestAuthenticateJWTAlgorithms(t *testing.T) {
	for _, alg := range []string{"RS256", "PS256", "ES256", "ES384", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			iss := oidctest.NewIssuer(t, oidctest.WithAlgorithm(alg))
			a := newJWTAuth(t, iss, jwtMap(iss))
			p, r, err := a.AuthenticateReason(context.Background(), iss.Token(t, acmeClaims(iss, "alice")))
			if err != nil {
				t.Fatalf("= %v, %v, %v", p, r, err)
			}
		})
	}
}

// TestAuthenticateJWTNoKeySource: NewAuthenticator (no key sets) refuses
// JWTs rather than trusting them.
func TestAuthenticateJWTNoKeySource(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	m, err := authz.ParsePrincipalMap([]byte(jwtMap(iss)))
	if err != nil {
		t.Fatal(err)
	}
	a := authz.NewAuthenticator(m)
	if p, r, err := a.AuthenticateReason(context.Background(), iss.Token(t, acmeClaims(iss, "alice"))); err == nil || r != authz.ReasonKeyFetch {
		t.Fatalf("= %v, %v, %v", p, r, err)
	}
	if iss.JWKSRequests() != 0 {
		t.Errorf("fetched keys without a key source")
	}
}

func TestFailureReasons(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range authz.FailureReasons() {
		s := r.String()
		if seen[s] || s == "none" || strings.Contains(s, "(") {
			t.Errorf("reason %q duplicate or unnamed", s)
		}
		seen[s] = true
	}
	want := []string{"unknown_token", "malformed", "bad_signature", "unknown_key", "bad_issuer", "bad_audience", "expired",
		"not_yet_valid", "bad_algorithm", "bad_claims", "unknown_tenant", "unknown_user", "key_fetch"}
	got := []string{}
	for _, r := range authz.FailureReasons() {
		got = append(got, r.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reasons %v, want %v", got, want)
	}
}

// testClock is a settable clock shared by an authenticator and its key sets.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// TestAuthenticateJWTWithdrawnKey: a token verified, and remembered, under
// a key the issuer then withdraws is refused as soon as the key set is
// refreshed without that key, not when its verification would have lapsed;
// a key that stays published through a refresh keeps its tokens good.
func TestAuthenticateJWTWithdrawnKey(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	m, err := authz.ParsePrincipalMap([]byte(jwtMap(iss, "refresh_interval: 1m")))
	if err != nil {
		t.Fatal(err)
	}
	clk := &testClock{t: time.Now()}
	a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client(), Now: clk.Now}), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	auth := func(tok string) authz.FailureReason {
		_, r, _ := a.AuthenticateReason(context.Background(), tok)
		return r
	}
	if r := auth(iss.Token(t, acmeClaims(iss, "bob@acme"))); r != authz.ReasonNone { // the first fetch
		t.Fatalf("first token: %v", r)
	}
	// Verified late in the key set's interval, so remembered past its end.
	clk.Advance(50 * time.Second)
	old := iss.Token(t, acmeClaims(iss, "alice"))
	if r := auth(old); r != authz.ReasonNone {
		t.Fatalf("token of the first key: %v", r)
	}
	oldKid := iss.Current().Kid

	// Rotation that keeps the old key published: a refresh (forced by the
	// new kid) makes new key objects of the same key; the old token stays.
	iss.Rotate(t)
	clk.Advance(10 * time.Second)
	if r := auth(iss.Token(t, acmeClaims(iss, "alice"))); r != authz.ReasonNone {
		t.Fatalf("token of the second key: %v", r)
	}
	if r := auth(old); r != authz.ReasonNone {
		t.Fatalf("old key still published: %v", r)
	}

	// The issuer withdraws the old key; the next refresh (forced by the
	// third kid) drops it, and the remembered token goes with it.
	clk.Advance(50 * time.Second)
	if r := auth(old); r != authz.ReasonNone { // remembered again, until after the refresh below
		t.Fatalf("old key before the withdrawal: %v", r)
	}
	iss.Retire(oldKid)
	iss.Rotate(t)
	clk.Advance(10 * time.Second)
	if r := auth(iss.Token(t, acmeClaims(iss, "alice"))); r != authz.ReasonNone {
		t.Fatalf("token of the third key: %v", r)
	}
	if got := iss.JWKSRequests(); got != 3 {
		t.Fatalf("%d JWKS requests, want 3", got)
	}
	if r := auth(old); r != authz.ReasonUnknownKey {
		t.Errorf("token of the withdrawn key: reason %v, want %v", r, authz.ReasonUnknownKey)
	}
	if _, err := a.AuthenticateBasic("alice", old); err != authz.ErrUnauthenticated {
		t.Errorf("token of the withdrawn key, user/password form: %v", err)
	}
}

// TestAuthenticateJWTCachedAllocs: a token presented again is answered
// from the verified-token cache, key recheck included, without allocating.
func TestAuthenticateJWTCachedAllocs(t *testing.T) {
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			iss := oidctest.NewIssuer(t, oidctest.WithAlgorithm(alg))
			a := newJWTAuth(t, iss, jwtMap(iss))
			tok := iss.Token(t, with(acmeClaims(iss, "alice"), "groups", []string{"analysts"}))
			p, err := a.Authenticate(tok)
			if err != nil {
				t.Fatal(err)
			}
			n := testing.AllocsPerRun(100, func() {
				if q, err := a.Authenticate(tok); err != nil || q != p {
					t.Fatalf("cached token = %v, %v", q, err)
				}
			})
			if n != 0 {
				t.Errorf("%v allocations per cached authentication", n)
			}
		})
	}
}

// TestAuthenticateJWTSameIDTwoTenants: users created on sign-in in two
// tenants may carry the same id (static ids are unique map-wide, JWT users'
// are the user claim). Everything authz keys a JWT principal by keeps them
// apart: the verified-token cache is keyed by the token, Holds by issuer,
// tenant and grants, and each principal says its own tenant.
func TestAuthenticateJWTSameIDTwoTenants(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	a := newJWTAuth(t, iss, validMap+oidctest.OIDCSection(iss.ProviderYAML("shared",
		"tenant_claim: tid", "tenants: [acme, globex]", "auto_create_users: true",
		"groups_claim: groups", "namespaces: {all: [public], groups: {analysts: [sales]}}")))
	tokens := map[string]string{
		"acme":   iss.Token(t, with(iss.Claims("dana"), "tid", "acme", "groups", []string{"analysts"})),
		"globex": iss.Token(t, with(iss.Claims("dana"), "tid", "globex")),
	}
	got := map[string]*authz.Principal{}
	for round := 0; round < 2; round++ { // verified, then from the cache
		for tenant, tok := range tokens {
			p, err := a.Authenticate(tok)
			if err != nil {
				t.Fatalf("%s: %v", tenant, err)
			}
			if p.ID().String() != "dana" || p.Tenant().String() != tenant {
				t.Fatalf("%s token (round %d): principal %v of %v", tenant, round, p.ID(), p.Tenant())
			}
			if q, err := a.AuthenticateBasic("dana", tok); err != nil || q.Tenant().String() != tenant {
				t.Fatalf("%s token, user/password form: %v, %v", tenant, q, err)
			}
			if round == 1 && p != got[tenant] {
				t.Errorf("%s: the cache answered another principal", tenant)
			}
			got[tenant] = p
		}
	}
	acme, globex := got["acme"], got["globex"]
	if acme.ID() != globex.ID() {
		t.Fatal("expected the two tenants' users to share the id")
	}
	if fmt.Sprint(acme.Namespaces()) != "[public sales]" || fmt.Sprint(globex.Namespaces()) != "[public]" {
		t.Errorf("grants %v and %v", acme.Namespaces(), globex.Namespaces())
	}
	if !a.Holds(acme, time.Now()) || !a.Holds(globex, time.Now()) {
		t.Error("Holds refuses one of them")
	}
	if authz.VerifiedLen(a) != 2 {
		t.Errorf("%d cached verifications, want 2", authz.VerifiedLen(a))
	}
}

// TestHoldsJWTListedElsewhere: a JWT principal whose id a later map lists
// as another tenant's user, or as an operator, no longer holds, even where
// the grants would come out the same.
func TestHoldsJWTListedElsewhere(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	mapWith := func(entry string) string {
		return validMap + entry + oidctest.OIDCSection(iss.ProviderYAML("acme-idp",
			"tenant: acme", "auto_create_users: true", "namespaces: {all: [public]}"))
	}
	a := newJWTAuth(t, iss, mapWith("  - {id: bob@acme, tenant: acme, role: user, namespaces: [public]}\n"))
	bob, err := a.Authenticate(iss.Token(t, iss.Claims("bob@acme")))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tt := range []struct {
		name, entry string
		holds       bool
	}{
		{"listed as before", "  - {id: bob@acme, tenant: acme, role: user, namespaces: [public]}\n", true},
		{"unlisted, created on sign-in", "", true},
		{"listed in another tenant", "  - {id: bob@acme, tenant: globex, role: user, namespaces: [public], tokens: [{sha256: " + strings.Repeat("5", 64) + "}]}\n", false},
		{"listed as an operator", "  - {id: bob@acme, tenant: acme, role: operator, tokens: [{sha256: " + strings.Repeat("6", 64) + "}]}\n", false},
	} {
		if got := newJWTAuth(t, iss, mapWith(tt.entry)).Holds(bob, now); got != tt.holds {
			t.Errorf("%s: Holds = %v, want %v", tt.name, got, tt.holds)
		}
	}
}
