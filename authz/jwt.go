package authz

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// JWT limits.
const (
	// maxJWTLen bounds a presented JWT (what fits one gRPC authorization
	// header); longer input is refused before any decoding.
	maxJWTLen = 8 << 10
	// maxGroups bounds the groups claim.
	maxGroups = 256
	// minRSABits refuses RSA keys too short to trust.
	minRSABits = 2048
	// maxVerified bounds the verified-token cache; maxVerifiedTTL bounds
	// how long one verification is reused (never past the token's expiry,
	// never longer than the provider's refresh interval).
	maxVerified    = 4096
	maxVerifiedTTL = time.Minute
)

// ErrUnknownKey is returned (wrapped) by a KeySource that has no key with the
// requested kid, even after the refresh it is allowed.
var ErrUnknownKey = errors.New("authz: unknown signing key")

// KeySource supplies the public keys of one provider. Implementations cache
// the keys and bound their refreshes (package authz/oidc).
type KeySource interface {
	// Keys returns the public keys published under kid, or every key when
	// kid is "". When there is none it may refresh its keys, at most once
	// per the provider's RefreshInterval, and then returns an error
	// wrapping ErrUnknownKey; any other error means the keys could not be
	// fetched or read. The returned slice must not be modified.
	Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error)
}

// KeySets makes the KeySource of a provider; it may return a source it made
// before for the same provider settings, so a reload keeps cached keys.
type KeySets interface {
	KeySource(p *Provider) (KeySource, error)
}

// AuthConfig configures NewAuthenticatorWith.
type AuthConfig struct {
	// Keys makes the key source of each OIDC provider of the map. Nil
	// refuses every JWT (reason key_fetch).
	Keys KeySets
	// Now is the clock for exp, nbf and iat; nil means time.Now.
	Now func() time.Time
}

// jwtAuth verifies the JWTs of a map's providers.
type jwtAuth struct {
	m         *PrincipalMap
	providers []*Provider
	sources   []KeySource // sources[i] serves providers[i]; nil refuses
	byIssuer  map[string][]int
	now       func() time.Time
	verified  verifiedCache
}

// verifiedCache remembers successful verifications by the token's SHA-256:
// clients present the same token on every call, and the signature check is
// most of the cost. Failures are never cached. The cache belongs to one
// Authenticator, so a reload starts empty.
type verifiedCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]verifiedEntry
}

type verifiedEntry struct {
	p     *Principal
	until time.Time
}

func (c *verifiedCache) get(h *[sha256.Size]byte, now time.Time) *Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[*h]
	if !ok {
		return nil
	}
	if !now.Before(e.until) {
		delete(c.m, *h)
		return nil
	}
	return e.p
}

func (c *verifiedCache) put(h *[sha256.Size]byte, p *Principal, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[[sha256.Size]byte]verifiedEntry)
	}
	if len(c.m) >= maxVerified {
		// Full: start over. Only valid tokens get here, so this costs
		// re-verifications, and is no attacker's lever on memory.
		clear(c.m)
	}
	c.m[*h] = verifiedEntry{p: p, until: until}
}

func newJWTAuth(m *PrincipalMap, cfg AuthConfig) (*jwtAuth, error) {
	j := &jwtAuth{
		m:         m,
		providers: m.providers,
		sources:   make([]KeySource, len(m.providers)),
		byIssuer:  make(map[string][]int),
		now:       cfg.Now,
	}
	if j.now == nil {
		j.now = time.Now
	}
	for i, p := range m.providers {
		j.byIssuer[p.issuer] = append(j.byIssuer[p.issuer], i)
		if cfg.Keys != nil {
			ks, err := cfg.Keys.KeySource(p)
			if err != nil {
				return nil, fmt.Errorf("authz: keys of OIDC provider %s: %w", p.name, err)
			}
			j.sources[i] = ks
		}
	}
	return j, nil
}

// looksLikeJWT reports whether token has the shape of a JWS compact
// serialization: three dot-separated segments, the first a base64url JSON
// object. Static tokens never have dots.
func looksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && strings.HasPrefix(token, "eyJ")
}

// jwtHeader is the part of the JOSE header that is read.
type jwtHeader struct {
	alg, kid string
}

// claims are the decoded payload members; only the registered claims are
// typed, the configured ones are read from members.
type claims struct {
	members map[string]json.RawMessage
	iss     string
	aud     []string
}

func b64(seg string) ([]byte, error) { return base64.RawURLEncoding.Strict().DecodeString(seg) }

// authenticate returns the principal of token, from the verified-token
// cache or by verifying it, or a failure reason.
func (j *jwtAuth) authenticate(ctx context.Context, token string) (*Principal, FailureReason) {
	if len(token) > maxJWTLen {
		return nil, ReasonMalformed
	}
	now := j.now()
	var buf [2048]byte // typical JWTs are hashed without allocating
	h := sha256.Sum256(append(buf[:0], token...))
	if p := j.verified.get(&h, now); p != nil {
		return p, ReasonNone
	}
	p, pv, r := j.verify(ctx, token, now)
	if r != ReasonNone {
		return nil, r
	}
	until := now.Add(min(maxVerifiedTTL, pv.refreshInterval))
	if exp := p.expiry.Add(pv.clockSkew); exp.Before(until) {
		until = exp
	}
	j.verified.put(&h, p, until)
	return p, ReasonNone
}

// verify checks token fully and returns its principal and provider, or a
// failure reason.
func (j *jwtAuth) verify(ctx context.Context, token string, now time.Time) (*Principal, *Provider, FailureReason) {
	hseg, rest, _ := strings.Cut(token, ".")
	pseg, sseg, _ := strings.Cut(rest, ".")
	h, r := decodeHeader(hseg)
	if r != ReasonNone {
		return nil, nil, r // alg none is refused here, whatever its (empty) signature
	}
	if pseg == "" || sseg == "" {
		return nil, nil, ReasonMalformed
	}
	payload, err := b64(pseg)
	if err != nil {
		return nil, nil, ReasonMalformed
	}
	c, r := decodeClaims(payload)
	if r != ReasonNone {
		return nil, nil, r
	}

	// The provider: by issuer, then audience (the map makes the pair unique;
	// a token naming several audiences of one issuer matches none).
	cands, ok := j.byIssuer[c.iss]
	if !ok {
		return nil, nil, ReasonBadIssuer
	}
	pi := -1
	for _, i := range cands {
		if slices.Contains(c.aud, j.providers[i].audience) {
			if pi >= 0 {
				return nil, nil, ReasonBadAudience
			}
			pi = i
		}
	}
	if pi < 0 {
		return nil, nil, ReasonBadAudience
	}
	p := j.providers[pi]
	if !slices.Contains(p.algorithms, h.alg) {
		return nil, nil, ReasonBadAlgorithm
	}

	// The key: named by kid, of the type the algorithm needs.
	src := j.sources[pi]
	if src == nil {
		return nil, nil, ReasonKeyFetch
	}
	keys, err := src.Keys(ctx, h.kid)
	if err != nil {
		if errors.Is(err, ErrUnknownKey) {
			return nil, nil, ReasonUnknownKey
		}
		return nil, nil, ReasonKeyFetch
	}
	var key *jose.JSONWebKey
	for k := range keys {
		if keyFits(h.alg, &keys[k]) {
			if key != nil {
				return nil, nil, ReasonUnknownKey // ambiguous: no kid and several keys fit
			}
			key = &keys[k]
		}
	}
	if key == nil {
		if len(keys) == 0 {
			return nil, nil, ReasonUnknownKey
		}
		return nil, nil, ReasonBadAlgorithm
	}

	// The signature, verified by go-jose with exactly this algorithm and
	// exactly this public key (never a key embedded in the header).
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(h.alg)})
	if err != nil {
		return nil, nil, ReasonMalformed
	}
	verified, err := jws.Verify(key.Key)
	if err != nil {
		return nil, nil, ReasonBadSignature
	}
	if !bytes.Equal(verified, payload) {
		// The claims were decoded from the payload segment; they must be
		// what the signature covers.
		return nil, nil, ReasonBadSignature
	}
	pr, r := j.principal(p, &c, now)
	if r != ReasonNone {
		return nil, nil, r
	}
	return pr, p, ReasonNone
}

// decodeHeader reads alg and kid, refusing what this verifier does not
// implement: a critical header (including b64) and an unexpected typ.
func decodeHeader(seg string) (jwtHeader, FailureReason) {
	if len(seg) > 2048 {
		return jwtHeader{}, ReasonMalformed
	}
	raw, err := b64(seg)
	if err != nil {
		return jwtHeader{}, ReasonMalformed
	}
	members, err := decodeObject(raw)
	if err != nil {
		return jwtHeader{}, ReasonMalformed
	}
	var h jwtHeader
	if err := stringMember(members, "alg", &h.alg); err != nil || h.alg == "" {
		return jwtHeader{}, ReasonMalformed
	}
	if !slices.Contains(SupportedAlgorithms, h.alg) {
		return jwtHeader{}, ReasonBadAlgorithm
	}
	if stringMember(members, "kid", &h.kid) != nil {
		return jwtHeader{}, ReasonMalformed
	}
	if _, ok := members["crit"]; ok {
		return jwtHeader{}, ReasonMalformed
	}
	if _, ok := members["b64"]; ok {
		return jwtHeader{}, ReasonMalformed
	}
	var typ string
	if stringMember(members, "typ", &typ) != nil {
		return jwtHeader{}, ReasonMalformed
	}
	switch strings.TrimPrefix(strings.ToLower(typ), "application/") {
	case "", "jwt", "at+jwt":
	default:
		return jwtHeader{}, ReasonMalformed
	}
	return h, ReasonNone
}

// decodeClaims decodes the payload strictly and reads iss and aud.
func decodeClaims(payload []byte) (claims, FailureReason) {
	members, err := decodeObject(payload)
	if err != nil {
		return claims{}, ReasonMalformed
	}
	c := claims{members: members}
	if _, ok := members["iss"]; !ok {
		return claims{}, ReasonBadIssuer
	}
	if stringMember(members, "iss", &c.iss) != nil {
		return claims{}, ReasonBadClaims
	}
	raw, ok := members["aud"]
	if !ok {
		return claims{}, ReasonBadAudience
	}
	// aud is a string or an array of strings (RFC 7519, 4.1.3).
	var one string
	if json.Unmarshal(raw, &one) == nil {
		c.aud = []string{one}
	} else if err := unmarshalStrings(raw, &c.aud); err != nil || len(c.aud) == 0 {
		return claims{}, ReasonBadClaims
	}
	return c, ReasonNone
}

// principal checks the token's times and the provider's claims and builds
// the principal.
func (j *jwtAuth) principal(p *Provider, c *claims, now time.Time) (*Principal, FailureReason) {
	exp, ok, err := numericDate(c.members, "exp")
	if err != nil || !ok {
		return nil, ReasonBadClaims // a token without exp would never expire
	}
	if now.After(exp.Add(p.clockSkew)) {
		return nil, ReasonExpired
	}
	for _, name := range []string{"nbf", "iat"} {
		t, ok, err := numericDate(c.members, name)
		if err != nil {
			return nil, ReasonBadClaims
		}
		if ok && t.After(now.Add(p.clockSkew)) {
			return nil, ReasonNotYetValid
		}
	}

	// Tenant.
	tenant := p.tenant
	if p.tenantClaim != "" {
		var s string
		if _, ok := c.members[p.tenantClaim]; !ok {
			return nil, ReasonUnknownTenant
		}
		if stringMember(c.members, p.tenantClaim, &s) != nil {
			return nil, ReasonBadClaims
		}
		t, err := ParseTenantID(s)
		if err != nil || !p.serves(t) {
			return nil, ReasonUnknownTenant
		}
		tenant = t
	}

	// User.
	var user string
	if _, ok := c.members[p.userClaim]; !ok {
		return nil, ReasonBadClaims
	}
	if stringMember(c.members, p.userClaim, &user) != nil {
		return nil, ReasonBadClaims
	}
	if p.userClaim == "email" {
		// An address the provider has not verified names nobody.
		var verified bool
		if raw, ok := c.members["email_verified"]; ok && (json.Unmarshal(raw, &verified) != nil || !verified) {
			return nil, ReasonBadClaims
		}
	}
	id, err := ParsePrincipalID(user)
	if err != nil {
		return nil, ReasonBadClaims
	}

	// Groups.
	var groups []string
	if p.groupsClaim != "" {
		if raw, ok := c.members[p.groupsClaim]; ok {
			if unmarshalStrings(raw, &groups) != nil || len(groups) > maxGroups {
				return nil, ReasonBadClaims
			}
			for _, g := range groups {
				if !validGroupName(g) {
					return nil, ReasonBadClaims
				}
			}
			slices.Sort(groups)
			groups = slices.Compact(groups)
		}
	}

	nss, ok := j.grants(p, id, tenant, groups)
	if !ok {
		return nil, ReasonUnknownUser
	}
	pr, err := NewPrincipal(id, tenant, RoleUser, nss, nil)
	if err != nil {
		return nil, ReasonUnknownUser
	}
	pr.method = AuthJWT
	pr.groups = groups
	pr.expiry = exp
	pr.issuer = p.issuer
	return pr, ReasonNone
}

// grants returns the namespaces a provider's user id of tenant with groups
// may read: the map's grants when the map lists the user (as a user of that
// tenant; any other entry with that id refuses the token, so a JWT never
// speaks for a service or an admin), plus the provider's rule. An unlisted
// user needs auto_create_users. No namespace means no access.
func (j *jwtAuth) grants(p *Provider, id PrincipalID, tenant TenantID, groups []string) ([]Namespace, bool) {
	nss := p.grants(groups)
	if listed := j.m.lookupID(id); listed != nil {
		if listed.role != RoleUser || listed.tenant != tenant {
			return nil, false
		}
		nss = append(nss, listed.namespaces...)
	} else if !p.autoCreate {
		return nil, false
	}
	return nss, len(nss) > 0
}

// lookupID returns the map's principal with id, or nil.
func (m *PrincipalMap) lookupID(id PrincipalID) *Principal {
	i, ok := slices.BinarySearchFunc(m.principals, id, func(p *Principal, id PrincipalID) int { return strings.Compare(p.id.s, id.s) })
	if !ok {
		return nil
	}
	return m.principals[i]
}

// keyFits reports whether k may verify a signature made with alg: its own
// use and alg (when set) allow it, and its type and size fit the algorithm.
func keyFits(alg string, k *jose.JSONWebKey) bool {
	if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) {
		return false
	}
	switch key := k.Key.(type) {
	case *rsa.PublicKey:
		return (strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")) && key.N.BitLen() >= minRSABits
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return key.Curve == elliptic.P256()
		case "ES384":
			return key.Curve == elliptic.P384()
		case "ES512":
			return key.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA" && len(key) == ed25519.PublicKeySize
	}
	return false
}

// decodeObject decodes a JSON object into its members, refusing anything
// else, trailing data and duplicate member names (which two parsers could
// resolve differently).
func decodeObject(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	members := make(map[string]json.RawMessage)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := t.(string)
		if !ok {
			return nil, errors.New("not a member name")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := members[name]; dup {
			return nil, errors.New("duplicate member name")
		}
		members[name] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, errors.New("unterminated object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return members, nil
}

// stringMember sets *s to the string member name; absent leaves *s alone.
func stringMember(members map[string]json.RawMessage, name string, s *string) error {
	raw, ok := members[name]
	if !ok {
		return nil
	}
	if len(raw) == 0 || raw[0] != '"' {
		return errors.New("not a string")
	}
	return json.Unmarshal(raw, s)
}

// unmarshalStrings decodes a JSON array of strings (not null, no other types).
func unmarshalStrings(raw json.RawMessage, out *[]string) error {
	if len(raw) == 0 || raw[0] != '[' {
		return errors.New("not an array")
	}
	var vs []json.RawMessage
	if err := json.Unmarshal(raw, &vs); err != nil {
		return err
	}
	ss := make([]string, len(vs))
	for i, v := range vs {
		if len(v) == 0 || v[0] != '"' {
			return errors.New("not a string")
		}
		if err := json.Unmarshal(v, &ss[i]); err != nil {
			return err
		}
	}
	*out = ss
	return nil
}

// numericDate reads a NumericDate claim (seconds since the epoch, RFC 7519).
func numericDate(members map[string]json.RawMessage, name string) (time.Time, bool, error) {
	raw, ok := members[name]
	if !ok {
		return time.Time{}, false, nil
	}
	var f float64
	if len(raw) == 0 || !(raw[0] == '-' || ('0' <= raw[0] && raw[0] <= '9')) {
		return time.Time{}, false, errors.New("not a number")
	}
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || f < 0 || f > 1<<40 {
		return time.Time{}, false, errors.New("not a valid date")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}
