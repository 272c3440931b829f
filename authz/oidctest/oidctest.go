// Package oidctest is a test-only OpenID Connect issuer: an httptest server
// publishing a discovery document and a JWKS, and a minter of signed (and
// deliberately mis-signed) tokens. Tests of the authenticator, the gateway
// and metasrv use it to sign users in without a real identity provider.
//
//	iss := oidctest.NewIssuer(t)                       // RS256, plain http on 127.0.0.1
//	yaml := iss.ProviderYAML("acme-idp", "tenant: acme")  // for a principal map's oidc.providers
//	tok := iss.Token(t, iss.Claims("alice"))            // valid for an hour
//	iss.Rotate(t)                                       // a new kid signs from now on
//
// It is for tests only: no non-test code may import it, and nothing it makes
// is fit for a deployment.
package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// DefaultAudience is the audience of tokens from Claims and of ProviderYAML.
const DefaultAudience = "lakegate"

// Claims are a token's claims; values are marshalled with encoding/json.
type Claims map[string]any

// Issuer is a running test issuer. Its methods are safe for concurrent use.
type Issuer struct {
	// URL is the issuer identifier (iss) and the base of its endpoints.
	URL    string
	server *httptest.Server
	alg    jose.SignatureAlgorithm

	mu        sync.Mutex
	keys      []*Key // published, in order
	current   *Key   // signs Token
	nextKid   int
	jwksHits  atomic.Int64
	discoHits atomic.Int64
}

// Key is one of the issuer's signing keys.
type Key struct {
	Kid     string
	Alg     jose.SignatureAlgorithm
	Private crypto.Signer
}

// Public returns the key's public half.
func (k *Key) Public() crypto.PublicKey { return k.Private.Public() }

// Option configures NewIssuer.
type Option func(*options)

type options struct {
	tls bool
	alg jose.SignatureAlgorithm
}

// WithTLS serves https (use Client, which trusts the test certificate).
func WithTLS() Option { return func(o *options) { o.tls = true } }

// WithAlgorithm signs with alg: RS256 (the default), PS256, ES256, ES384 or
// EdDSA; it decides the key type.
func WithAlgorithm(alg string) Option {
	return func(o *options) { o.alg = jose.SignatureAlgorithm(alg) }
}

// NewIssuer starts an issuer with one signing key; it stops when the test
// ends.
func NewIssuer(t testing.TB, opts ...Option) *Issuer {
	t.Helper()
	o := options{alg: jose.RS256}
	for _, f := range opts {
		f(&o)
	}
	i := &Issuer{alg: o.alg}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		i.discoHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                i.URL,
			"jwks_uri":                              i.JWKSURL(),
			"id_token_signing_alg_values_supported": []string{string(i.alg)},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		i.jwksHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(i.JWKS())
	})
	if o.tls {
		i.server = httptest.NewTLSServer(mux)
	} else {
		i.server = httptest.NewServer(mux)
	}
	t.Cleanup(i.server.Close)
	i.URL = i.server.URL
	i.Rotate(t)
	return i
}

// Client returns an HTTP client that reaches the issuer (and trusts its
// certificate under WithTLS).
func (i *Issuer) Client() *http.Client { return i.server.Client() }

// DiscoveryURL is the issuer's discovery document.
func (i *Issuer) DiscoveryURL() string { return i.URL + "/.well-known/openid-configuration" }

// JWKSURL is the issuer's JWKS.
func (i *Issuer) JWKSURL() string { return i.URL + "/jwks" }

// JWKSRequests and DiscoveryRequests count the requests served so far.
func (i *Issuer) JWKSRequests() int64 { return i.jwksHits.Load() }

// DiscoveryRequests counts the discovery documents served so far.
func (i *Issuer) DiscoveryRequests() int64 { return i.discoHits.Load() }

// Rotate makes a new key of the issuer's algorithm, publishes it next to
// the others and signs with it from now on. It returns the new key.
func (i *Issuer) Rotate(t testing.TB) *Key {
	t.Helper()
	k := NewKey(t, string(i.alg))
	i.mu.Lock()
	defer i.mu.Unlock()
	i.nextKid++
	k.Kid = "k" + strconv.Itoa(i.nextKid)
	i.keys = append(i.keys, k)
	i.current = k
	return k
}

// Retire stops publishing the key kid.
func (i *Issuer) Retire(kid string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for n, k := range i.keys {
		if k.Kid == kid {
			i.keys = append(i.keys[:n:n], i.keys[n+1:]...)
			return
		}
	}
}

// Current returns the key that signs Token.
func (i *Issuer) Current() *Key {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.current
}

// JWKS returns the published keys as a JWKS document (public halves, with
// use "sig" and their alg).
func (i *Issuer) JWKS() []byte {
	i.mu.Lock()
	defer i.mu.Unlock()
	set := jose.JSONWebKeySet{}
	for _, k := range i.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: k.Kid, Algorithm: string(k.Alg), Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		panic(err) // only public keys of supported types are published
	}
	return b
}

// WriteJWKS writes JWKS to path (mode 0600), for a provider's jwks_file.
func (i *Issuer) WriteJWKS(t testing.TB, path string) {
	t.Helper()
	if err := os.WriteFile(path, i.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ProviderYAML returns one entry of a principal map's oidc.providers list
// for this issuer, using discovery and allowing http to it. Extra lines
// ("key: value", for example "tenant: acme" or "auto_create_users: true")
// are added, replacing a default line with the same key. Pass the entries to
// OIDCSection.
func (i *Issuer) ProviderYAML(name string, extra ...string) string {
	lines := []string{
		"name: " + name,
		"issuer: " + strconv.Quote(i.URL),
		"audience: " + DefaultAudience,
		"discovery_url: " + strconv.Quote(i.DiscoveryURL()),
		"algorithms: [" + string(i.alg) + "]",
		"allow_http: true",
	}
	for _, e := range extra {
		key, _, _ := strings.Cut(e, ":")
		replaced := false
		for n, l := range lines {
			if strings.HasPrefix(l, key+":") {
				lines[n], replaced = e, true
			}
		}
		if !replaced {
			lines = append(lines, e)
		}
	}
	return "- " + strings.Join(lines, "\n  ") + "\n"
}

// Claims returns the claims of a valid token for sub: iss, aud
// DefaultAudience, sub, iat now and exp in an hour.
func (i *Issuer) Claims(sub string) Claims {
	now := time.Now()
	return Claims{"iss": i.URL, "aud": DefaultAudience, "sub": sub, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Token signs c with the current key (its kid in the header).
func (i *Issuer) Token(t testing.TB, c Claims) string {
	t.Helper()
	return Sign(t, i.Current(), c, nil)
}

// Sign signs c with k using go-jose; extra header fields (for example
// "typ") are added to the protected header.
func Sign(t testing.TB, k *Key, c Claims, extra map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return SignPayload(t, k, payload, extra)
}

// SignPayload signs raw payload bytes with k (for odd payloads: duplicate
// members, wrong types).
func SignPayload(t testing.TB, k *Key, payload []byte, extra map[string]any) string {
	t.Helper()
	so := &jose.SignerOptions{}
	so.WithHeader("kid", k.Kid)
	for name, v := range extra {
		so.WithHeader(jose.HeaderKey(name), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Alg, Key: k.Private}, so)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Forge assembles a compact JWS from a header, claims and raw signature
// bytes without signing: for alg none and other forgeries.
func Forge(t testing.TB, header map[string]any, c Claims, sig []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	p, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(p) + "." + enc.EncodeToString(sig)
}

// ForgeHS256 signs header and claims with HMAC-SHA256 under secret — the
// attack that uses an issuer's public key as an HMAC secret.
func ForgeHS256(t testing.TB, header map[string]any, c Claims, secret []byte) string {
	t.Helper()
	unsigned := Forge(t, header, c, nil)
	unsigned = unsigned[:len(unsigned)-1] // drop the empty signature's dot
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(unsigned))
	return unsigned + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// NewKey makes a key for alg (kid "k0"; set Kid before publishing it).
func NewKey(t testing.TB, alg string) *Key {
	t.Helper()
	var (
		priv crypto.Signer
		err  error
	)
	switch jose.SignatureAlgorithm(alg) {
	case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.ES384:
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case jose.ES512:
		priv, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case jose.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("oidctest: unsupported algorithm %q", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &Key{Kid: "k0", Alg: jose.SignatureAlgorithm(alg), Private: priv}
}

// OIDCSection returns a principal map's oidc section holding entries (each
// from ProviderYAML), to append to a map that has a principals list.
func OIDCSection(entries ...string) string {
	s := "oidc:\n  providers:\n"
	for _, e := range entries {
		for _, line := range strings.SplitAfter(e, "\n") {
			if line != "" {
				s += "    " + line
			}
		}
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
	}
	return s
}
