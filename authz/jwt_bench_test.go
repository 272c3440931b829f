package authz_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
//
// "ratio" measures in one run, in alternating rounds of 100 calls each, a
// static token of the same map (as BenchmarkAuthenticate1000), "verify",
// "jose" and "cached", and reports per round what a first presentation adds
// over a static token (µs-verify-static), verify ÷ jose and cached ÷ static,
// as min, median and max over the rounds: figures that the machine's load
// moves far less than it moves absolute times.
func BenchmarkAuthenticateJWT(b *testing.B) {
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		iss := oidctest.NewIssuer(b, oidctest.WithAlgorithm(alg))
		m, statics := jwtBigMap(b, iss)
		a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client()})})
		if err != nil {
			b.Fatal(err)
		}
		tok := iss.Token(b, with(iss.Claims("alice@t1"), "groups", []string{"analysts", "staff"}))
		if _, err := a.Authenticate(tok); err != nil { // fetches the keys once
			b.Fatal(err)
		}
		pub := iss.Current().Public()
		algs := []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)}
		cached := func(b *testing.B) {
			if _, err := a.Authenticate(tok); err != nil {
				b.Fatal(err)
			}
		}
		static := func(b *testing.B) {
			if _, err := a.Authenticate(statics[500]); err != nil {
				b.Fatal(err)
			}
		}
		verify := func(b *testing.B) {
			if _, r := authz.VerifyJWT(a, tok); r != authz.ReasonNone {
				b.Fatal(r)
			}
		}
		joseOnly := func(b *testing.B) {
			jws, err := jose.ParseSignedCompact(tok, algs)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := jws.Verify(pub); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(alg+"/cached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				cached(b)
			}
		})
		b.Run(alg+"/verify", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				verify(b)
			}
		})
		b.Run(alg+"/jose", func(b *testing.B) {
			// The floor: go-jose's parse and signature check alone.
			b.ReportAllocs()
			for b.Loop() {
				joseOnly(b)
			}
		})
		b.Run(alg+"/ratio", func(b *testing.B) {
			const calls = 100
			var added, ratio, hit []float64
			fs := []func(*testing.B){static, verify, joseOnly, cached}
			for round := 0; b.Loop(); round++ {
				var took [4]time.Duration
				for k := range fs {
					k = (k + round) % len(fs) // alternate which goes first
					start := time.Now()
					for range calls {
						fs[k](b)
					}
					took[k] = time.Since(start)
				}
				added = append(added, float64(took[1]-took[0])/calls/1e3)
				ratio = append(ratio, float64(took[1])/float64(took[2]))
				hit = append(hit, float64(took[3])/float64(took[0]))
			}
			b.ReportMetric(0, "ns/op")
			for _, f := range []struct {
				name string
				v    []float64
			}{{"µs-verify-static", added}, {"verify/jose", ratio}, {"cached/static", hit}} {
				slices.Sort(f.v)
				b.ReportMetric(f.v[0], f.name+"-min")
				b.ReportMetric(f.v[len(f.v)/2], f.name+"-med")
				b.ReportMetric(f.v[len(f.v)-1], f.name+"-max")
			}
			med := func(v []float64) float64 { return v[len(v)/2] }
			b.Logf("%s over %d rounds (min / median / max): verify − static %.1f / %.1f / %.1f µs; verify ÷ jose %.2f / %.2f / %.2f; cached ÷ static %.2f / %.2f / %.2f",
				alg, len(added), added[0], med(added), added[len(added)-1], ratio[0], med(ratio), ratio[len(ratio)-1], hit[0], med(hit), hit[len(hit)-1])
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
