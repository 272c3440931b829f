package authz_test

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"lakegate/authz"
	"lakegate/authz/oidctest"
)

// fixedKeys serves a fixed key set without I/O.
type fixedKeys []jose.JSONWebKey

func (k fixedKeys) KeySource(*authz.Provider) (authz.KeySource, error) { return k, nil }

func (k fixedKeys) Keys(_ context.Context, kid string) ([]jose.JSONWebKey, error) {
	var out []jose.JSONWebKey
	for _, key := range k {
		if kid == "" || key.KeyID == kid {
			out = append(out, key)
		}
	}
	if len(out) == 0 {
		return nil, authz.ErrUnknownKey
	}
	return out, nil
}

// The fuzz issuer is deterministic (a fixed Ed25519 key and clock), so
// committed corpus entries stay meaningful.
const (
	fuzzIssuer = "https://idp.example"
	fuzzNow    = 1_700_000_000
)

var fuzzKey = ed25519.NewKeyFromSeed([]byte("lakegate fuzz issuer key seed 32"))

func fuzzAuthenticator(tb testing.TB) *authz.Authenticator {
	tb.Helper()
	doc := validMap + `oidc:
  providers:
    - {name: idp, issuer: "` + fuzzIssuer + `", audience: lakegate, jwks_url: "https://idp.example/jwks", algorithms: [EdDSA, RS256],
       tenant: acme, tenant_claim: tid, groups_claim: groups, auto_create_users: true, namespaces: {all: [public], groups: {analysts: [sales]}}}
`
	m, err := authz.ParsePrincipalMap([]byte(doc))
	if err != nil {
		tb.Fatal(err)
	}
	a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{
		Keys: fixedKeys{{Key: fuzzKey.Public(), KeyID: "k1", Algorithm: "EdDSA", Use: "sig"}},
		Now:  func() time.Time { return time.Unix(fuzzNow, 0) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// FuzzAuthenticateJWT: whatever the credential, authentication does not
// panic, fails only with ErrUnauthenticated and a named reason, and
// succeeds only for a token whose signature go-jose verifies with the
// issuer's key.
func FuzzAuthenticateJWT(f *testing.F) {
	a := fuzzAuthenticator(f)
	k := &oidctest.Key{Kid: "k1", Alg: jose.EdDSA, Private: fuzzKey}
	claims := oidctest.Claims{"iss": fuzzIssuer, "aud": "lakegate", "sub": "alice", "tid": "acme", "exp": fuzzNow + 3600, "iat": fuzzNow}
	valid := oidctest.Sign(f, k, claims, nil)
	f.Add(valid)
	f.Add(oidctest.Sign(f, k, with(claims, "groups", []string{"analysts"}, "aud", []string{"x", "lakegate"}), nil))
	f.Add(oidctest.Sign(f, k, with(claims, "exp", fuzzNow-3600), nil))
	f.Add(oidctest.Sign(f, k, with(claims, "groups", "analysts"), nil))
	f.Add(oidctest.Forge(f, map[string]any{"alg": "none", "kid": "k1"}, claims, nil))
	f.Add(oidctest.ForgeHS256(f, map[string]any{"alg": "HS256", "kid": "k1"}, claims, fuzzKey.Public().(ed25519.PublicKey)))
	f.Add(oidctest.SignPayload(f, k, []byte(`{"iss":"`+fuzzIssuer+`","aud":"lakegate","sub":"alice","sub":"bob","tid":"acme","exp":1700003600}`), nil))
	f.Add(valid[:strings.LastIndexByte(valid, '.')] + ".")
	f.Add("eyJ..")
	f.Add("eyJhbGciOiJFZERTQSJ9.e30.")
	f.Add(tokAlice)
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		p, r, err := a.AuthenticateReason(context.Background(), token)
		if err != nil {
			if err != authz.ErrUnauthenticated || p != nil || r == authz.ReasonNone || strings.Contains(r.String(), "(") {
				t.Fatalf("failure = %v, %v, %v", p, r, err)
			}
			return
		}
		if r != authz.ReasonNone || p == nil {
			t.Fatalf("success = %v, %v", p, r)
		}
		if p.AuthMethod() == authz.AuthStatic {
			return // a static token of validMap
		}
		jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			t.Fatalf("accepted a token go-jose does not parse: %v", err)
		}
		if _, err := jws.Verify(fuzzKey.Public()); err != nil {
			t.Fatalf("accepted a token whose signature does not verify: %v", err)
		}
		if p.Tenant().String() != "acme" || p.Role() != authz.RoleUser {
			t.Fatalf("accepted principal %v %v", p.Tenant(), p.Role())
		}
	})
}
