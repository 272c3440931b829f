package authz_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strconv"
	"strings"
	"sync"
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

// mutableKeys is a key source whose keys a test replaces; it counts the
// lookups.
type mutableKeys struct {
	mu    sync.Mutex
	keys  fixedKeys
	calls int
}

func (k *mutableKeys) KeySource(*authz.Provider) (authz.KeySource, error) { return k, nil }

func (k *mutableKeys) Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	return k.keys.Keys(ctx, kid)
}

func (k *mutableKeys) set(keys fixedKeys) { k.mu.Lock(); k.keys = keys; k.mu.Unlock() }

// lookups returns the lookups since the last call.
func (k *mutableKeys) lookups() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.calls
	k.calls = 0
	return n
}

// TestJWTVerifiedCacheKeyRecheck: per key type, a cached verification is
// reused (one key lookup, no verification) while the source answers the
// token's kid with the same public key — new key objects of the same key
// after a refresh included — and never when the kid names another key of
// the same type, a key of another type, or two keys fit for the algorithm.
func TestJWTVerifiedCacheKeyRecheck(t *testing.T) {
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			doc := validMap + `oidc:
  providers:
    - {name: idp, issuer: "` + fuzzIssuer + `", audience: lakegate, jwks_url: "https://idp.example/jwks", algorithms: [RS256, ES256, EdDSA],
       tenant: acme, auto_create_users: true, namespaces: {all: [public]}}
`
			m, err := authz.ParsePrincipalMap([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			signer := oidctest.NewKey(t, alg)
			signer.Kid = "k1"
			jwk := func(k *oidctest.Key, kid string) jose.JSONWebKey {
				// Through JSON, as a refresh makes them: new objects.
				data, err := json.Marshal(jose.JSONWebKey{Key: k.Public(), KeyID: kid, Algorithm: string(k.Alg)})
				if err != nil {
					t.Fatal(err)
				}
				var out jose.JSONWebKey
				if err := out.UnmarshalJSON(data); err != nil {
					t.Fatal(err)
				}
				return out
			}
			same := jwk(signer, "k1")
			keys := &mutableKeys{keys: fixedKeys{same}}
			a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: keys, Now: func() time.Time { return time.Unix(fuzzNow, 0) }})
			if err != nil {
				t.Fatal(err)
			}
			tok := oidctest.Sign(t, signer, oidctest.Claims{"iss": fuzzIssuer, "aud": "lakegate", "sub": "alice", "exp": fuzzNow + 3600}, nil)
			other := oidctest.NewKey(t, alg)
			if alg == "ES256" {
				// The point's mirror image (x, p−y): another key with the
				// same x, which must not pass for this one.
				pub := signer.Public().(*ecdsa.PublicKey)
				raw, err := pub.Bytes() // 0x04 ‖ x ‖ y
				if err != nil {
					t.Fatal(err)
				}
				half := (len(raw) - 1) / 2
				y := new(big.Int).Sub(pub.Curve.Params().P, new(big.Int).SetBytes(raw[1+half:]))
				y.FillBytes(raw[1+half:])
				mirror, err := ecdsa.ParseUncompressedPublicKey(pub.Curve, raw)
				if err != nil {
					t.Fatal(err)
				}
				other = &oidctest.Key{Alg: jose.ES256, Private: mirrorSigner{mirror}}
			}
			otherType := oidctest.NewKey(t, map[string]string{"RS256": "ES256", "ES256": "EdDSA", "EdDSA": "RS256"}[alg])
			tests := []struct {
				name    string
				keys    fixedKeys
				want    authz.FailureReason
				lookups int // 1: the cache answered, or nothing cached and verified; 2: the cache's recheck refused, verified again
			}{
				{"first presentation", fixedKeys{same}, authz.ReasonNone, 1},
				{"again", fixedKeys{same}, authz.ReasonNone, 1},
				{"the same key, fetched again", fixedKeys{jwk(signer, "k1")}, authz.ReasonNone, 1},
				{"another key under the kid", fixedKeys{jwk(other, "k1")}, authz.ReasonBadSignature, 2},
				{"the key back", fixedKeys{same}, authz.ReasonNone, 1},
				{"a key of another type under the kid", fixedKeys{jwk(otherType, "k1")}, authz.ReasonBadAlgorithm, 2},
				{"the key back again", fixedKeys{same}, authz.ReasonNone, 1},
				{"two keys fit under the kid", fixedKeys{same, jwk(other, "k1")}, authz.ReasonUnknownKey, 2},
				{"the key and one of another type", fixedKeys{jwk(otherType, "k1"), same}, authz.ReasonNone, 1},
				{"then from the cache", fixedKeys{jwk(otherType, "k1"), same}, authz.ReasonNone, 1},
				{"the kid withdrawn", nil, authz.ReasonUnknownKey, 2},
			}
			for _, tt := range tests {
				keys.set(tt.keys)
				keys.lookups()
				if _, r, _ := a.AuthenticateReason(context.Background(), tok); r != tt.want {
					t.Errorf("%s: reason %v, want %v", tt.name, r, tt.want)
				}
				if n := keys.lookups(); n != tt.lookups {
					t.Errorf("%s: %d key lookups, want %d", tt.name, n, tt.lookups)
				}
			}
		})
	}
}

// TestJWTVerifiedCache: a verification is reused for at most a minute (the
// refresh interval when shorter), never past the token's expiry, and only
// while the key source still answers its kid with the same key (a key
// withdrawn or replaced under its kid takes its cached tokens with it);
// failures are not cached.
func TestJWTVerifiedCache(t *testing.T) {
	doc := validMap + `oidc:
  providers:
    - {name: idp, issuer: "` + fuzzIssuer + `", audience: lakegate, jwks_url: "https://idp.example/jwks", algorithms: [EdDSA],
       tenant: acme, auto_create_users: true, namespaces: {all: [public]}, clock_skew: 0s}
`
	m, err := authz.ParsePrincipalMap([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(fuzzNow, 0)
	keys := &mutableKeys{keys: fixedKeys{{Key: fuzzKey.Public(), KeyID: "k1", Algorithm: "EdDSA"}}}
	a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: keys, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	k := &oidctest.Key{Kid: "k1", Alg: jose.EdDSA, Private: fuzzKey}
	claims := oidctest.Claims{"iss": fuzzIssuer, "aud": "lakegate", "sub": "alice", "exp": fuzzNow + 3600}
	long := oidctest.Sign(t, k, claims, nil)
	short := oidctest.Sign(t, k, with(claims, "exp", fuzzNow+10), nil)
	other := oidctest.Sign(t, k, with(claims, "sub", "bob"), nil)
	auth := func(tok string) authz.FailureReason {
		_, r, _ := a.AuthenticateReason(context.Background(), tok)
		return r
	}
	if auth(long) != authz.ReasonNone || auth(short) != authz.ReasonNone {
		t.Fatal("valid tokens refused")
	}
	if _, r, _ := a.AuthenticateBasicReason(context.Background(), "bob", long); r != authz.ReasonUnknownUser {
		t.Errorf("cached token under another id: %v", r)
	}

	// The kid published with something else: the cached tokens are not
	// its; with the key back, they verify again.
	otherKey := ed25519.NewKeyFromSeed([]byte("another key of the fuzz issuer 32"[:32]))
	for _, c := range []struct {
		what string
		key  fixedKeys
		want authz.FailureReason
	}{
		{"its kid now another key", fixedKeys{{Key: otherKey.Public(), KeyID: "k1", Algorithm: "EdDSA"}}, authz.ReasonBadSignature},
		{"its key now for another algorithm", fixedKeys{{Key: fuzzKey.Public(), KeyID: "k1", Algorithm: "RS256"}}, authz.ReasonBadAlgorithm},
	} {
		keys.set(c.key)
		if r := auth(long); r != c.want {
			t.Errorf("cached token, %s: %v", c.what, r)
		}
		keys.set(fixedKeys{{Key: fuzzKey.Public(), KeyID: "k1", Algorithm: "EdDSA"}})
		if auth(long) != authz.ReasonNone || auth(short) != authz.ReasonNone {
			t.Fatalf("valid tokens refused after the key's return (%s)", c.what)
		}
	}

	keys.set(nil) // the issuer withdraws its key
	if r := auth(other); r != authz.ReasonUnknownKey {
		t.Errorf("uncached token after withdrawal: %v", r)
	}
	if r := auth(long); r != authz.ReasonUnknownKey {
		t.Errorf("cached token after withdrawal: %v", r)
	}
	keys.set(fixedKeys{{Key: fuzzKey.Public(), KeyID: "k1", Algorithm: "EdDSA"}})
	if auth(long) != authz.ReasonNone || auth(short) != authz.ReasonNone {
		t.Fatal("valid tokens refused after the key's return")
	}
	now = now.Add(11 * time.Second)
	if r := auth(short); r != authz.ReasonExpired {
		t.Errorf("cached token past its expiry: %v", r)
	}
	now = now.Add(50 * time.Second)
	if n := authz.VerifiedLen(a); n != 1 {
		t.Errorf("%d cached tokens, want 1 (long)", n)
	}
	if r := auth(long); r != authz.ReasonNone || authz.VerifiedLen(a) != 1 {
		t.Errorf("token after a minute: %v (verified again, cached again)", r)
	}
	keys.set(nil)
	now = now.Add(time.Minute)
	if r := auth(long); r != authz.ReasonUnknownKey {
		t.Errorf("token after a minute, key withdrawn: %v", r)
	}

	// A failure is not remembered: the key's return makes the token good.
	keys.set(fixedKeys{{Key: fuzzKey.Public(), KeyID: "k1"}})
	if r := auth(long); r != authz.ReasonNone {
		t.Errorf("after the key's return: %v", r)
	}
}

// TestJWTBounds: a JWT of exactly the length limit is verified, one byte
// more is not; the verified-token cache stays within its bound (4,096)
// however many distinct valid tokens are presented.
func TestJWTBounds(t *testing.T) {
	a := fuzzAuthenticator(t)
	k := &oidctest.Key{Kid: "k1", Alg: jose.EdDSA, Private: fuzzKey}
	claims := oidctest.Claims{"iss": fuzzIssuer, "aud": "lakegate", "sub": "alice", "tid": "acme", "exp": fuzzNow + 3600}
	// Find a padding that makes the token exactly the limit long.
	var exact, over string
	// A base64url segment is never 1 more than a multiple of 4 long, so
	// vary the header's length too.
	n0 := authz.MaxJWTLen * 3 / 4
	l0 := len(oidctest.Sign(t, k, with(claims, "pad", strings.Repeat("p", n0)), nil))
	for n := n0 - (l0-authz.MaxJWTLen)*3/4 + 9; n > 0 && (exact == "" || over == ""); n -= 3 {
		shortest := 0
		for _, h := range []string{"", "h", "hh"} {
			for _, q := range []string{"", "q", "qq"} {
				tok := oidctest.Sign(t, k, with(claims, "pad", strings.Repeat("p", n), "q", q), map[string]any{"h": h})
				switch len(tok) {
				case authz.MaxJWTLen:
					exact = tok
				case authz.MaxJWTLen + 1:
					over = tok
				}
				if shortest == 0 {
					shortest = len(tok)
				}
			}
		}
		if shortest < authz.MaxJWTLen-8 {
			break
		}
	}
	if exact == "" || over == "" {
		t.Fatal("no padding gives the limit's lengths")
	}
	if _, r, err := a.AuthenticateReason(context.Background(), exact); err != nil {
		t.Errorf("token of exactly %d bytes: %v", authz.MaxJWTLen, r)
	}
	if _, r, _ := a.AuthenticateReason(context.Background(), over); r != authz.ReasonMalformed {
		t.Errorf("token of %d bytes: %v", authz.MaxJWTLen+1, r)
	}

	// The header segment's own limit: 2,048 characters.
	var header2048 string
	for n := 1400; n < 1600 && header2048 == ""; n++ {
		tok := oidctest.Sign(t, k, claims, map[string]any{"h": strings.Repeat("h", n)})
		if strings.IndexByte(tok, '.') == 2048 {
			header2048 = tok
		}
	}
	if header2048 == "" {
		t.Fatal("no padding gives a header of 2,048 characters")
	}
	if _, r, err := a.AuthenticateReason(context.Background(), header2048); err != nil {
		t.Errorf("header of 2,048 characters: %v", r)
	}

	for i := 0; i < 4200; i++ {
		tok := oidctest.Sign(t, k, with(claims, "jti", strconv.Itoa(i)), nil)
		if _, r, err := a.AuthenticateReason(context.Background(), tok); err != nil {
			t.Fatalf("token %d: %v", i, r)
		}
		if n := authz.VerifiedLen(a); n > 4096 {
			t.Fatalf("verified-token cache holds %d entries after %d tokens", n, i+1)
		}
	}
}

// TestJWTKeyTypeFitsAlgorithm: a published key without alg or use verifies
// only the algorithms of its type and size: a token naming its kid with
// another algorithm is refused bad_algorithm before any signature check.
func TestJWTKeyTypeFitsAlgorithm(t *testing.T) {
	doc := validMap + `oidc:
  providers:
    - {name: idp, issuer: "` + fuzzIssuer + `", audience: lakegate, jwks_url: "https://idp.example/jwks", algorithms: [RS256, PS256, ES256, ES384, ES512, EdDSA],
       tenant: acme, auto_create_users: true, namespaces: {all: [public]}}
`
	m, err := authz.ParsePrincipalMap([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	claims := oidctest.Claims{"iss": fuzzIssuer, "aud": "lakegate", "sub": "alice", "exp": fuzzNow + 3600}
	signers := map[string]*oidctest.Key{}
	for _, alg := range []string{"RS256", "PS256", "ES256", "ES384", "ES512", "EdDSA"} {
		signers[alg] = oidctest.NewKey(t, alg)
		signers[alg].Kid = "k1"
	}
	for _, published := range []string{"RS256", "ES256", "ES384", "ES512", "EdDSA"} {
		// The key alone: no alg, no use.
		keys := fixedKeys{{Key: signers[published].Public(), KeyID: "k1"}}
		a, err := authz.NewAuthenticatorWith(m, authz.AuthConfig{Keys: keys, Now: func() time.Time { return time.Unix(fuzzNow, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		for alg, signer := range signers {
			want := authz.ReasonBadAlgorithm
			switch {
			case alg == published:
				want = authz.ReasonNone
			case published == "RS256" && alg == "PS256":
				want = authz.ReasonBadSignature // an RSA key fits PS256 too; this one did not sign
			}
			if _, r, _ := a.AuthenticateReason(context.Background(), oidctest.Sign(t, signer, claims, nil)); r != want {
				t.Errorf("%s key, %s token: reason %v, want %v", published, alg, r, want)
			}
		}
	}
}

// mirrorSigner is a public key without its private half: published, never
// signing.
type mirrorSigner struct{ pub crypto.PublicKey }

func (m mirrorSigner) Public() crypto.PublicKey { return m.pub }

func (m mirrorSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("mirrorSigner: no private key")
}
