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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	jose "github.com/go-jose/go-jose/v4"
)

// JWT limits.
const (
	// maxJWTLen bounds a presented JWT (what fits one gRPC authorization
	// header); longer input is refused before any decoding.
	maxJWTLen = 8 << 10
	// maxHeaderSeg bounds the header segment, whatever the JWT's length.
	maxHeaderSeg = 2048
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
	// fetched or read. The returned slice must not be modified. The
	// verified-token cache asks again on every hit, so answering a kid
	// that is known must be cheap (no I/O).
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
// most of the cost. Failures are never cached. An entry is used only while
// the key that verified it is still published (keyRef.current), so a key
// the issuer withdraws stops its tokens at the next refresh of its key set.
// The cache belongs to one Authenticator, so a reload starts empty.
type verifiedCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]verifiedEntry
}

type verifiedEntry struct {
	p     *Principal
	until time.Time
	key   keyRef
}

// keyRef names the key that verified a token: what was asked of which
// source, for which algorithm, and the public key that answered.
type keyRef struct {
	provider int // index in jwtAuth.providers
	src      KeySource
	kid      string
	alg      string
	key      any // jose.JSONWebKey.Key
}

// current reports whether src still answers kid with exactly one key fit
// for alg, and that it is the same public key: what verify would pick now.
// It asks the source as verify does, so a withdrawn kid may start the
// source's bounded refresh.
func (k *keyRef) current(ctx context.Context) bool {
	keys, err := k.src.Keys(ctx, k.kid)
	if err != nil {
		return false
	}
	found := false
	for i := range keys {
		if keyFits(k.alg, &keys[i]) {
			if found || !samePublicKey(keys[i].Key, k.key) {
				return false
			}
			found = true
		}
	}
	return found
}

// samePublicKey compares two public keys of the types keyFits accepts.
// Keys from one fetch are the same pointers; a refresh makes new ones with
// the same values. Public keys are public: no constant time needed.
func samePublicKey(a, b any) bool {
	switch a := a.(type) {
	case *rsa.PublicKey:
		b, ok := b.(*rsa.PublicKey)
		return ok && (a == b || a.Equal(b))
	case *ecdsa.PublicKey:
		b, ok := b.(*ecdsa.PublicKey)
		return ok && (a == b || a.Equal(b))
	case ed25519.PublicKey:
		return a.Equal(b)
	}
	return false
}

func (c *verifiedCache) get(h *[sha256.Size]byte, now time.Time) (verifiedEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[*h]
	if !ok {
		return verifiedEntry{}, false
	}
	if !now.Before(e.until) {
		delete(c.m, *h)
		return verifiedEntry{}, false
	}
	return e, true
}

func (c *verifiedCache) put(h *[sha256.Size]byte, e verifiedEntry) {
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
	c.m[*h] = e
}

func (c *verifiedCache) drop(h *[sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, *h)
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

// b64url decodes JWS segments: unpadded base64url, strictly (no stray bits).
var b64url = base64.RawURLEncoding.Strict()

// joseAlgorithms holds the one-algorithm allow-list handed to go-jose for
// each supported algorithm, made once rather than per token.
var joseAlgorithms = func() map[string][]jose.SignatureAlgorithm {
	m := make(map[string][]jose.SignatureAlgorithm, len(SupportedAlgorithms))
	for _, a := range SupportedAlgorithms {
		m[a] = []jose.SignatureAlgorithm{jose.SignatureAlgorithm(a)}
	}
	return m
}()

// jwtHeader is the part of the JOSE header that is read.
type jwtHeader struct {
	alg, kid string // alg is an element of SupportedAlgorithms
}

// claims are the payload's members, read in place; iss and aud are
// decoded for choosing the provider, the configured claims are read from
// members.
type claims struct {
	members []jsonMember
	iss     []byte
	aud     [][]byte
}

// authenticate returns the principal of token, from the verified-token
// cache or by verifying it, or a failure reason.
func (j *jwtAuth) authenticate(ctx context.Context, token string) (*Principal, FailureReason) {
	if len(token) > maxJWTLen {
		return nil, ReasonMalformed
	}
	now := j.now()
	var buf [2048]byte // typical JWTs are hashed without allocating
	h := sha256.Sum256(append(buf[:0], token...))
	if e, ok := j.verified.get(&h, now); ok {
		if e.key.current(ctx) {
			return e.p, ReasonNone
		}
		// The key is gone: verify again, which names the reason.
		j.verified.drop(&h)
	}
	p, key, r := j.verify(ctx, token, now)
	if r != ReasonNone {
		return nil, r
	}
	pv := j.providers[key.provider]
	until := now.Add(min(maxVerifiedTTL, pv.refreshInterval))
	if exp := p.expiry.Add(pv.clockSkew); exp.Before(until) {
		until = exp
	}
	j.verified.put(&h, verifiedEntry{p: p, until: until, key: key})
	return p, ReasonNone
}

// verify checks token fully and returns its principal and the key that
// verified it, or a failure reason.
func (j *jwtAuth) verify(ctx context.Context, token string, now time.Time) (*Principal, keyRef, FailureReason) {
	hseg, rest, _ := strings.Cut(token, ".")
	pseg, sseg, _ := strings.Cut(rest, ".")
	if len(hseg) > maxHeaderSeg {
		return nil, keyRef{}, ReasonMalformed
	}
	// One buffer holds the header and payload segments and their
	// decodings, which the members read below are slices of.
	hlen, plen := b64url.DecodedLen(len(hseg)), b64url.DecodedLen(len(pseg))
	buf := make([]byte, len(hseg)+len(pseg)+hlen+plen)
	hin := buf[:copy(buf, hseg)]
	pin := buf[len(hin) : len(hin)+copy(buf[len(hin):], pseg)]
	hdr, payload := buf[len(hin)+len(pin):][:hlen], buf[len(hin)+len(pin)+hlen:]

	n, err := b64url.Decode(hdr, hin)
	if err != nil {
		return nil, keyRef{}, ReasonMalformed
	}
	var hm [16]jsonMember
	h, r := decodeHeader(hdr[:n], hm[:0])
	if r != ReasonNone {
		return nil, keyRef{}, r // alg none is refused here, whatever its (empty) signature
	}
	if pseg == "" || sseg == "" {
		return nil, keyRef{}, ReasonMalformed
	}
	if n, err = b64url.Decode(payload, pin); err != nil {
		return nil, keyRef{}, ReasonMalformed
	}
	payload = payload[:n]
	var cm [24]jsonMember
	var aud [4][]byte
	c, r := decodeClaims(payload, cm[:0], aud[:0])
	if r != ReasonNone {
		return nil, keyRef{}, r
	}

	// The provider: by issuer, then audience (the map makes the pair unique;
	// a token naming several audiences of one issuer matches none).
	cands, ok := j.byIssuer[string(c.iss)]
	if !ok {
		return nil, keyRef{}, ReasonBadIssuer
	}
	pi := -1
	for _, i := range cands {
		if c.hasAudience(j.providers[i].audience) {
			if pi >= 0 {
				return nil, keyRef{}, ReasonBadAudience
			}
			pi = i
		}
	}
	if pi < 0 {
		return nil, keyRef{}, ReasonBadAudience
	}
	p := j.providers[pi]
	if !slices.Contains(p.algorithms, h.alg) {
		return nil, keyRef{}, ReasonBadAlgorithm
	}

	// The key: named by kid, of the type the algorithm needs.
	src := j.sources[pi]
	if src == nil {
		return nil, keyRef{}, ReasonKeyFetch
	}
	keys, err := src.Keys(ctx, h.kid)
	if err != nil {
		if errors.Is(err, ErrUnknownKey) {
			return nil, keyRef{}, ReasonUnknownKey
		}
		return nil, keyRef{}, ReasonKeyFetch
	}
	var key *jose.JSONWebKey
	for k := range keys {
		if keyFits(h.alg, &keys[k]) {
			if key != nil {
				return nil, keyRef{}, ReasonUnknownKey // ambiguous: no kid and several keys fit
			}
			key = &keys[k]
		}
	}
	if key == nil {
		if len(keys) == 0 {
			return nil, keyRef{}, ReasonUnknownKey
		}
		return nil, keyRef{}, ReasonBadAlgorithm
	}

	// The signature, verified by go-jose with exactly this algorithm and
	// exactly this public key (never a key embedded in the header).
	jws, err := jose.ParseSignedCompact(token, joseAlgorithms[h.alg])
	if err != nil {
		return nil, keyRef{}, ReasonMalformed
	}
	verified, err := jws.Verify(key.Key)
	if err != nil {
		return nil, keyRef{}, ReasonBadSignature
	}
	if !bytes.Equal(verified, payload) {
		// The claims were decoded from the payload segment; they must be
		// what the signature covers.
		return nil, keyRef{}, ReasonBadSignature
	}
	pr, r := j.principal(p, &c, now)
	if r != ReasonNone {
		return nil, keyRef{}, r
	}
	return pr, keyRef{provider: pi, src: src, kid: h.kid, alg: h.alg, key: key.Key}, ReasonNone
}

// decodeHeader reads alg and kid from the decoded header, refusing what
// this verifier does not implement: a critical header (including b64) and
// an unexpected typ. members is scratch space for its members.
func decodeHeader(raw []byte, members []jsonMember) (jwtHeader, FailureReason) {
	members, err := parseObject(raw, members)
	if err != nil {
		return jwtHeader{}, ReasonMalformed
	}
	var h jwtHeader
	alg, _, err := stringMember(members, "alg")
	if err != nil || len(alg) == 0 {
		return jwtHeader{}, ReasonMalformed
	}
	for _, a := range SupportedAlgorithms {
		if string(alg) == a {
			h.alg = a
			break
		}
	}
	if h.alg == "" {
		return jwtHeader{}, ReasonBadAlgorithm
	}
	kid, _, err := stringMember(members, "kid")
	if err != nil {
		return jwtHeader{}, ReasonMalformed
	}
	h.kid = string(kid)
	if _, ok := member(members, "crit"); ok {
		return jwtHeader{}, ReasonMalformed
	}
	if _, ok := member(members, "b64"); ok {
		return jwtHeader{}, ReasonMalformed
	}
	typ, _, err := stringMember(members, "typ")
	if err != nil || !typAllowed(typ) {
		return jwtHeader{}, ReasonMalformed
	}
	return h, ReasonNone
}

// typAllowed accepts no typ, JWT and at+jwt, case-insensitively, with or
// without the application/ prefix.
func typAllowed(typ []byte) bool {
	for _, c := range typ {
		if c >= utf8.RuneSelf {
			// Unicode case mapping, as strings.ToLower has it.
			typ = []byte(strings.ToLower(string(typ)))
			break
		}
	}
	const prefix = "application/"
	if len(typ) >= len(prefix) && asciiEqualFold(typ[:len(prefix)], prefix) {
		typ = typ[len(prefix):]
	}
	return len(typ) == 0 || asciiEqualFold(typ, "jwt") || asciiEqualFold(typ, "at+jwt")
}

// asciiEqualFold reports whether b equals the lower-case ASCII s, ignoring
// the case of ASCII letters in b.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// decodeClaims parses the payload strictly and reads iss and aud; members
// and aud are scratch space.
func decodeClaims(payload []byte, members []jsonMember, aud [][]byte) (claims, FailureReason) {
	members, err := parseObject(payload, members)
	if err != nil {
		return claims{}, ReasonMalformed
	}
	c := claims{members: members}
	iss, ok, err := stringMember(members, "iss")
	if !ok {
		return claims{}, ReasonBadIssuer
	}
	if err != nil {
		return claims{}, ReasonBadClaims
	}
	c.iss = iss
	raw, ok := member(members, "aud")
	if !ok {
		return claims{}, ReasonBadAudience
	}
	// aud is a string or an array of strings (RFC 7519, 4.1.3); null is
	// read as one empty string, which is no provider's audience.
	switch {
	case string(raw) == "null":
		c.aud = append(aud, nil)
	case raw[0] == '"':
		one, err := jsonString(raw)
		if err != nil {
			return claims{}, ReasonBadClaims
		}
		c.aud = append(aud, one)
	default:
		elems, err := parseArray(raw, aud, -1)
		if err != nil || len(elems) == 0 {
			return claims{}, ReasonBadClaims
		}
		for i, e := range elems {
			if elems[i], err = jsonString(e); err != nil {
				return claims{}, ReasonBadClaims
			}
		}
		c.aud = elems
	}
	return c, ReasonNone
}

// hasAudience reports whether the token names audience.
func (c *claims) hasAudience(audience string) bool {
	for _, a := range c.aud {
		if string(a) == audience {
			return true
		}
	}
	return false
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
	for _, name := range [...]string{"nbf", "iat"} {
		t, ok, err := numericDate(c.members, name)
		if err != nil {
			return nil, ReasonBadClaims
		}
		if ok && t.After(now.Add(p.clockSkew)) {
			return nil, ReasonNotYetValid
		}
	}

	// Tenant: the provider's, or the one of its tenants the claim names.
	tenant := p.tenant
	if p.tenantClaim != "" {
		s, ok, err := stringMember(c.members, p.tenantClaim)
		if !ok {
			return nil, ReasonUnknownTenant
		}
		if err != nil {
			return nil, ReasonBadClaims
		}
		if tenant, ok = servedTenant(p, s); !ok {
			return nil, ReasonUnknownTenant
		}
	}

	// User: a listed user's id is the map's, others are parsed.
	user, ok, err := stringMember(c.members, p.userClaim)
	if !ok || err != nil {
		return nil, ReasonBadClaims
	}
	if p.userClaim == "email" {
		// An address the provider has not verified names nobody.
		if raw, ok := member(c.members, "email_verified"); ok && string(raw) != "true" {
			return nil, ReasonBadClaims
		}
	}
	listed := j.m.lookupIDBytes(user)
	var id PrincipalID
	if listed != nil {
		id = listed.id
	} else if id, err = ParsePrincipalID(string(user)); err != nil {
		return nil, ReasonBadClaims
	}

	// Groups.
	var groups []string
	if p.groupsClaim != "" {
		if raw, ok := member(c.members, p.groupsClaim); ok {
			if groups, ok = decodeGroups(raw); !ok {
				return nil, ReasonBadClaims
			}
		}
	}

	// Grants: as grants has them, built once, sorted and unique as
	// NewPrincipal makes them.
	if listed != nil && (listed.role != RoleUser || listed.tenant != tenant) {
		return nil, ReasonUnknownUser
	}
	if listed == nil && !p.autoCreate {
		return nil, ReasonUnknownUser
	}
	n := len(p.allNS)
	for _, g := range groups {
		n += len(p.groupNS[g])
	}
	if listed != nil {
		n += len(listed.namespaces)
	}
	if n == 0 {
		return nil, ReasonUnknownUser
	}
	nss := make([]Namespace, 0, n)
	nss = append(nss, p.allNS...)
	for _, g := range groups {
		nss = append(nss, p.groupNS[g]...)
	}
	if listed != nil {
		nss = append(nss, listed.namespaces...)
	}
	slices.SortFunc(nss, func(a, b Namespace) int { return strings.Compare(a.s, b.s) })
	return &Principal{
		id: id, tenant: tenant, role: RoleUser, namespaces: slices.Compact(nss),
		method: AuthJWT, groups: groups, expiry: exp, issuer: p.issuer,
	}, ReasonNone
}

// servedTenant returns the tenant named s among those p serves.
func servedTenant(p *Provider, s []byte) (TenantID, bool) {
	if p.tenant != (TenantID{}) {
		return p.tenant, string(s) == p.tenant.s
	}
	i, ok := slices.BinarySearchFunc(p.tenants, s, func(t TenantID, s []byte) int { return cmpStringBytes(t.s, s) })
	if !ok {
		return TenantID{}, false
	}
	return p.tenants[i], true
}

// decodeGroups reads a groups claim: an array of at most maxGroups valid
// group names (not null, no other types), returned sorted and unique, in
// one allocation for the names.
func decodeGroups(raw []byte) ([]string, bool) {
	var eb [16][]byte
	elems, err := parseArray(raw, eb[:0], maxGroups)
	if err != nil {
		return nil, false
	}
	var nb [512]byte
	var ends [16]int
	names, end := nb[:0], ends[:0]
	for _, e := range elems {
		s, err := jsonString(e)
		if err != nil {
			return nil, false
		}
		names = append(names, s...)
		end = append(end, len(names))
	}
	all := string(names)
	groups := make([]string, len(elems))
	start := 0
	for i, e := range end {
		groups[i] = all[start:e]
		start = e
		if !validGroupName(groups[i]) {
			return nil, false
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), true
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

// lookupIDBytes is lookupID for an id not yet parsed.
func (m *PrincipalMap) lookupIDBytes(id []byte) *Principal {
	i, ok := slices.BinarySearchFunc(m.principals, id, func(p *Principal, id []byte) int { return cmpStringBytes(p.id.s, id) })
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
