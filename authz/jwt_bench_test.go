package authz_test

import (
	"context"
	"fmt"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"lakegate/authz"
	"lakegate/authz/oidc"
	"lakegate/authz/oidctest"
)

// jwtBigMap is bigMap's 1,000 static principals plus the issuer's provider.
func jwtBigMap(b *testing.B, iss *oidctest.Issuer) (*authz.PrincipalMap, []string) {
	b.Helper()
	m, tokens := bigMap(b, 1000)
	specs := authz.MapSpecs(m)
	data, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		b.Fatal(err)
	}
	doc := string(data) + oidctest.OIDCSection(iss.ProviderYAML("idp", "tenant: t1", "groups_claim: groups",
		"auto_create_users: true", "namespaces: {all: [public], groups: {analysts: [sales]}}", "algorithms: [RS256, ES256, EdDSA]"))
	m, err = authz.ParsePrincipalMap([]byte(doc))
	if err != nil {
		b.Fatal(err)
	}
	return m, tokens
}

// BenchmarkAuthenticateJWT authenticates a JWT whose key is cached (one
// fetch, then every call from the cache), per signing algorithm, in a map
// that also holds 1,000 static principals: "cached" presents the same token
// again (the verified-token cache answers, the steady state of a client),
// "verify" checks it fully every time (a token's first presentation),
// "jose" is go-jose's parse and signature check alone (the floor).
// Compare with BenchmarkAuthenticate1000 in the same run.
func BenchmarkAuthenticateJWT(b *testing.B) {
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		iss := oidctest.NewIssuer(b, oidctest.WithAlgorithm(alg))
		m, _ := jwtBigMap(b, iss)
		a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client()})})
		if err != nil {
			b.Fatal(err)
		}
		tok := iss.Token(b, with(iss.Claims("alice@t1"), "groups", []string{"analysts", "staff"}))
		if _, err := a.Authenticate(tok); err != nil { // fetches the keys once
			b.Fatal(err)
		}
		b.Run(alg+"/cached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Authenticate(tok); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(alg+"/verify", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, r := authz.VerifyJWT(a, tok); r != authz.ReasonNone {
					b.Fatal(r)
				}
			}
		})
		b.Run(alg+"/jose", func(b *testing.B) {
			// The floor: go-jose's parse and signature check alone.
			b.ReportAllocs()
			pub := iss.Current().Public()
			algs := []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)}
			for b.Loop() {
				jws, err := jose.ParseSignedCompact(tok, algs)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := jws.Verify(pub); err != nil {
					b.Fatal(err)
				}
			}
		})
		if iss.JWKSRequests() != 1 {
			b.Fatalf("%d JWKS requests", iss.JWKSRequests())
		}
	}
}

// BenchmarkAuthenticate1000WithOIDC is BenchmarkAuthenticate1000 in a map
// that also has an OIDC provider: a static token still takes the static
// path, whose only extra cost is the JWT-shape test.
func BenchmarkAuthenticate1000WithOIDC(b *testing.B) {
	iss := oidctest.NewIssuer(b)
	m, tokens := jwtBigMap(b, iss)
	a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client()})})
	if err != nil {
		b.Fatal(err)
	}
	tok := tokens[500]
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := a.AuthenticateReason(context.Background(), tok); err != nil {
			b.Fatal(err)
		}
	}
	if iss.JWKSRequests() != 0 {
		b.Fatal(fmt.Sprint("static tokens fetched keys: ", iss.JWKSRequests()))
	}
}
