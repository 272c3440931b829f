package authz

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The oidc section of the principal map file. Field names are part of the
// contract (docs/security.md, "Sign-in with an identity provider").
type mapOIDC struct {
	Providers []mapProvider `yaml:"providers"`
}

type mapProvider struct {
	Name            string        `yaml:"name"`
	Issuer          string        `yaml:"issuer"`
	Audience        string        `yaml:"audience"`
	JWKSURL         string        `yaml:"jwks_url,omitempty"`
	DiscoveryURL    string        `yaml:"discovery_url,omitempty"`
	JWKSFile        string        `yaml:"jwks_file,omitempty"`
	Algorithms      []string      `yaml:"algorithms,omitempty,flow"`
	ClockSkew       string        `yaml:"clock_skew,omitempty"`
	UserClaim       string        `yaml:"user_claim,omitempty"`
	GroupsClaim     string        `yaml:"groups_claim,omitempty"`
	Tenant          string        `yaml:"tenant,omitempty"`
	TenantClaim     string        `yaml:"tenant_claim,omitempty"`
	Tenants         []string      `yaml:"tenants,omitempty,flow"`
	AutoCreateUsers bool          `yaml:"auto_create_users,omitempty"`
	Namespaces      *mapGrantRule `yaml:"namespaces,omitempty"`
	RefreshInterval string        `yaml:"refresh_interval,omitempty"`
	AllowHTTP       bool          `yaml:"allow_http,omitempty"`
}

// mapGrantRule grants namespaces to a provider's users: all to every one,
// groups[g] to members of group g.
type mapGrantRule struct {
	All    []string            `yaml:"all,omitempty,flow"`
	Groups map[string][]string `yaml:"groups,omitempty"`
}

// Provider defaults and bounds.
const (
	DefaultClockSkew       = time.Minute
	MaxClockSkew           = 5 * time.Minute
	DefaultRefreshInterval = time.Minute
	MinRefreshInterval     = time.Second
	MaxRefreshInterval     = 24 * time.Hour

	maxProviders   = 64
	maxClaimName   = 256
	maxGroupName   = 256
	maxIssuerLen   = 1024
	maxAudienceLen = 256
)

// SupportedAlgorithms lists the JWS algorithms a provider may allow: public-key
// signatures only. "none" and the HMAC algorithms (HS256/384/512) are never
// accepted, so a token cannot be "signed" with nothing or with the issuer's
// public key used as an HMAC secret.
var SupportedAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// userClaims are the claims that may name the user.
var userClaims = []string{"sub", "email", "preferred_username"}

// Provider is a validated OIDC provider from the principal map's oidc
// section: whose JWTs are accepted, for which tenant(s), and what their
// users may read. It is immutable and safe for use from multiple goroutines.
type Provider struct {
	index                           int
	name                            string
	issuer, audience                string
	jwksURL, discoveryURL, jwksFile string
	algorithms                      []string // sorted, unique, from SupportedAlgorithms
	clockSkew                       time.Duration
	userClaim                       string
	groupsClaim                     string // "" when groups are not read
	tenantClaim                     string // "" when the tenant is fixed
	tenant                          TenantID
	tenants                         []TenantID // shared provider: the tenants its tenant claim may name, sorted
	autoCreate                      bool
	allNS                           []Namespace
	groupNS                         map[string][]Namespace
	refreshInterval                 time.Duration
	allowHTTP                       bool
}

// Name returns the provider's name (unique in its map).
func (p *Provider) Name() string { return p.name }

// Issuer returns the issuer a token's iss must equal exactly.
func (p *Provider) Issuer() string { return p.issuer }

// Audience returns the value a token's aud must contain.
func (p *Provider) Audience() string { return p.audience }

// JWKSURL returns the configured JWKS URL, or "".
func (p *Provider) JWKSURL() string { return p.jwksURL }

// DiscoveryURL returns the configured OpenID discovery document URL, or "".
func (p *Provider) DiscoveryURL() string { return p.discoveryURL }

// JWKSFile returns the configured JWKS file path, or "".
func (p *Provider) JWKSFile() string { return p.jwksFile }

// Algorithms returns a sorted copy of the allowed JWS algorithms.
func (p *Provider) Algorithms() []string { return slices.Clone(p.algorithms) }

// ClockSkew returns the tolerance applied to exp, nbf and iat.
func (p *Provider) ClockSkew() time.Duration { return p.clockSkew }

// RefreshInterval returns the shortest time between two fetches of the
// provider's keys: an unknown kid triggers at most one fetch per interval.
func (p *Provider) RefreshInterval() time.Duration { return p.refreshInterval }

// AllowHTTP reports whether plain http URLs to loopback hosts are allowed
// (tests and local development only).
func (p *Provider) AllowHTTP() bool { return p.allowHTTP }

// Tenant returns the provider's fixed tenant, or the zero TenantID for a
// shared provider whose tenant claim chooses among Tenants.
func (p *Provider) Tenant() TenantID { return p.tenant }

// Tenants returns the tenants the provider serves, sorted.
func (p *Provider) Tenants() []TenantID {
	if p.tenant != (TenantID{}) {
		return []TenantID{p.tenant}
	}
	return slices.Clone(p.tenants)
}

// serves reports whether the provider may authenticate users of tenant t.
func (p *Provider) serves(t TenantID) bool {
	if p.tenant != (TenantID{}) {
		return p.tenant == t
	}
	_, ok := slices.BinarySearchFunc(p.tenants, t, cmpTenant)
	return ok
}

// String describes the provider by name and issuer.
func (p *Provider) String() string {
	return "authz.Provider{" + p.name + " " + p.issuer + "}"
}

func cmpTenant(a, b TenantID) int { return strings.Compare(a.s, b.s) }

// CheckProviderURL checks a URL a provider's keys are fetched from (or
// whose discovery document names them): absolute https without user info
// or fragment; plain http only when allowHTTP is set and the host is a
// loopback address or localhost. The error does not contain u.
func CheckProviderURL(u string, allowHTTP bool) error {
	if u == "" || len(u) > maxIssuerLen {
		return fmt.Errorf("must be an absolute URL of at most %d bytes", maxIssuerLen)
	}
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("not a valid URL")
	}
	if pu.User != nil || pu.Fragment != "" || pu.Opaque != "" || pu.Host == "" {
		return fmt.Errorf("must be an absolute URL with a host and without user info or fragment")
	}
	switch pu.Scheme {
	case "https":
		return nil
	case "http":
		if !allowHTTP {
			return fmt.Errorf("must use https (allow_http permits http to loopback hosts only)")
		}
		host := pu.Hostname()
		if host == "localhost" {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("http is allowed to loopback hosts only")
	}
	return fmt.Errorf("must use https")
}

// parseProviders validates the oidc section: each provider, unique names,
// and unique (issuer, audience) pairs.
func parseProviders(o *mapOIDC) ([]*Provider, error) {
	if o == nil {
		return nil, nil
	}
	if len(o.Providers) == 0 {
		return nil, &MapError{Index: -1, Rule: "oidc: needs at least one provider"}
	}
	if len(o.Providers) > maxProviders {
		return nil, &MapError{Index: -1, Rule: fmt.Sprintf("oidc: more than %d providers", maxProviders)}
	}
	var (
		out   = make([]*Provider, 0, len(o.Providers))
		names = make(map[string]int)
		keys  = make(map[[2]string]int)
	)
	for i := range o.Providers {
		mp := &o.Providers[i]
		p, err := mp.provider(i)
		if err != nil {
			return nil, err
		}
		if j, dup := names[p.name]; dup {
			return nil, providerError(i, p.name, fmt.Sprintf("duplicate name (also oidc.providers[%d])", j), nil)
		}
		names[p.name] = i
		k := [2]string{p.issuer, p.audience}
		if j, dup := keys[k]; dup {
			return nil, providerError(i, p.name, fmt.Sprintf("same issuer and audience as oidc.providers[%d]: a token would match both (use one provider with a tenant claim)", j), nil)
		}
		keys[k] = i
		out = append(out, p)
	}
	return out, nil
}

func providerError(i int, name, rule string, err error) error {
	prefix := "oidc.providers[" + strconv.Itoa(i) + "]"
	if name != "" {
		prefix += " (" + name + ")"
	}
	return &MapError{Index: -1, Rule: prefix + ": " + rule, Err: err}
}

// provider validates one provider entry.
func (mp *mapProvider) provider(i int) (*Provider, error) {
	name := ""
	if _, err := ParseTenantID(mp.Name); err == nil {
		name = mp.Name // same alphabet as tenant ids: safe to print
	}
	fail := func(rule string, err error) error { return providerError(i, name, rule, err) }
	if name == "" {
		return nil, fail("name: want 1–64 of [A-Za-z0-9_-], alphanumeric at both ends", nil)
	}
	p := &Provider{
		index:           i,
		name:            name,
		issuer:          mp.Issuer,
		audience:        mp.Audience,
		jwksURL:         mp.JWKSURL,
		discoveryURL:    mp.DiscoveryURL,
		jwksFile:        mp.JWKSFile,
		clockSkew:       DefaultClockSkew,
		userClaim:       "sub",
		refreshInterval: DefaultRefreshInterval,
		allowHTTP:       mp.AllowHTTP,
		autoCreate:      mp.AutoCreateUsers,
	}

	// Where the keys come from: exactly one source.
	sources := 0
	for _, s := range []string{mp.JWKSURL, mp.DiscoveryURL, mp.JWKSFile} {
		if s != "" {
			sources++
		}
	}
	if sources != 1 {
		return nil, fail("needs exactly one of jwks_url, discovery_url, jwks_file", nil)
	}
	for _, u := range []struct{ field, v string }{{"jwks_url", mp.JWKSURL}, {"discovery_url", mp.DiscoveryURL}} {
		if u.v != "" {
			if err := CheckProviderURL(u.v, mp.AllowHTTP); err != nil {
				return nil, fail(u.field+": "+err.Error(), nil)
			}
		}
	}
	if mp.JWKSFile != "" && (strings.ContainsRune(mp.JWKSFile, 0) || len(mp.JWKSFile) > 4096) {
		return nil, fail("jwks_file: not a valid path", nil)
	}

	// Issuer: compared exactly with iss. Discovery checks the document's
	// issuer, so there it must be a URL the discovery rules accept.
	if mp.Issuer == "" || len(mp.Issuer) > maxIssuerLen || !printableASCII(mp.Issuer) {
		return nil, fail(fmt.Sprintf("issuer: want 1–%d printable ASCII characters", maxIssuerLen), nil)
	}
	if mp.DiscoveryURL != "" || mp.JWKSURL != "" {
		if err := CheckProviderURL(mp.Issuer, mp.AllowHTTP); err != nil {
			return nil, fail("issuer: "+err.Error(), nil)
		}
	}
	if mp.Audience == "" || len(mp.Audience) > maxAudienceLen || !printableASCII(mp.Audience) {
		return nil, fail(fmt.Sprintf("audience: want 1–%d printable ASCII characters", maxAudienceLen), nil)
	}

	// Algorithms: an allow-list of public-key algorithms only.
	if len(mp.Algorithms) == 0 {
		p.algorithms = []string{"RS256"} // OpenID Connect's default
	}
	for k, a := range mp.Algorithms {
		if !slices.Contains(SupportedAlgorithms, a) {
			return nil, fail("algorithms["+strconv.Itoa(k)+"]: want one of "+strings.Join(SupportedAlgorithms, ", ")+
				" (none and HMAC are never accepted)", nil)
		}
		p.algorithms = append(p.algorithms, a)
	}
	slices.Sort(p.algorithms)
	p.algorithms = slices.Compact(p.algorithms)

	var err error
	if mp.ClockSkew != "" {
		if p.clockSkew, err = time.ParseDuration(mp.ClockSkew); err != nil || p.clockSkew < 0 || p.clockSkew > MaxClockSkew {
			return nil, fail(fmt.Sprintf("clock_skew: want a duration from 0s to %v", MaxClockSkew), nil)
		}
	}
	if mp.RefreshInterval != "" {
		if p.refreshInterval, err = time.ParseDuration(mp.RefreshInterval); err != nil ||
			p.refreshInterval < MinRefreshInterval || p.refreshInterval > MaxRefreshInterval {
			return nil, fail(fmt.Sprintf("refresh_interval: want a duration from %v to %v", MinRefreshInterval, MaxRefreshInterval), nil)
		}
	}

	// Claims.
	if mp.UserClaim != "" {
		if !slices.Contains(userClaims, mp.UserClaim) {
			return nil, fail("user_claim: want one of "+strings.Join(userClaims, ", "), nil)
		}
		p.userClaim = mp.UserClaim
	}
	for _, c := range []struct{ field, v string }{{"groups_claim", mp.GroupsClaim}, {"tenant_claim", mp.TenantClaim}} {
		if c.v != "" && !validClaimName(c.v) {
			return nil, fail(fmt.Sprintf("%s: want 1–%d printable ASCII characters", c.field, maxClaimName), nil)
		}
	}
	p.groupsClaim, p.tenantClaim = mp.GroupsClaim, mp.TenantClaim

	// Tenancy: a fixed tenant (optionally confirmed by a claim), or a
	// tenant claim choosing among an explicit list.
	switch {
	case mp.Tenant != "":
		if p.tenant, err = ParseTenantID(mp.Tenant); err != nil {
			return nil, fail("tenant", err)
		}
		if len(mp.Tenants) > 0 {
			return nil, fail("tenants: only for a shared provider (no tenant)", nil)
		}
	case mp.TenantClaim == "":
		return nil, fail("needs tenant, or tenant_claim with tenants", nil)
	case len(mp.Tenants) == 0:
		return nil, fail("tenant_claim needs tenants: the tenants the claim may name", nil)
	default:
		for k, s := range mp.Tenants {
			t, err := ParseTenantID(s)
			if err != nil {
				return nil, fail("tenants["+strconv.Itoa(k)+"]", err)
			}
			p.tenants = append(p.tenants, t)
		}
		slices.SortFunc(p.tenants, cmpTenant)
		p.tenants = slices.Compact(p.tenants)
	}

	// Grants.
	if r := mp.Namespaces; r != nil {
		for k, s := range r.All {
			ns, err := ParseNamespace(s)
			if err != nil {
				return nil, fail("namespaces.all["+strconv.Itoa(k)+"]", err)
			}
			p.allNS = append(p.allNS, ns)
		}
		if len(r.Groups) > 0 && p.groupsClaim == "" {
			return nil, fail("namespaces.groups needs groups_claim", nil)
		}
		groups := make([]string, 0, len(r.Groups))
		for g := range r.Groups {
			groups = append(groups, g)
		}
		slices.Sort(groups)
		for gi, g := range groups {
			if !validGroupName(g) {
				return nil, fail(fmt.Sprintf("namespaces.groups: group %d (in sorted order): want 1–%d bytes of UTF-8 without control characters", gi, maxGroupName), nil)
			}
			if len(r.Groups[g]) == 0 {
				return nil, fail(fmt.Sprintf("namespaces.groups: group %d (in sorted order) grants no namespace", gi), nil)
			}
			for k, s := range r.Groups[g] {
				ns, err := ParseNamespace(s)
				if err != nil {
					return nil, fail(fmt.Sprintf("namespaces.groups: group %d (in sorted order)[%d]", gi, k), err)
				}
				if p.groupNS == nil {
					p.groupNS = make(map[string][]Namespace)
				}
				p.groupNS[g] = append(p.groupNS[g], ns)
			}
		}
	}
	if p.autoCreate && len(p.allNS) == 0 && len(p.groupNS) == 0 {
		return nil, fail("auto_create_users needs namespaces (all or groups): a user without a namespace is refused", nil)
	}
	return p, nil
}

// Grants returns the namespaces the provider's rule (namespaces.all and
// namespaces.groups) gives a user that is a member of groups.
func (p *Provider) Grants(groups []string) []Namespace { return p.grants(groups) }

// Serves reports whether the provider signs in users of tenant t.
func (p *Provider) Serves(t TenantID) bool { return p.serves(t) }

// grants returns the namespaces the provider's rule gives a member of groups.
func (p *Provider) grants(groups []string) []Namespace {
	out := slices.Clone(p.allNS)
	for _, g := range groups {
		out = append(out, p.groupNS[g]...)
	}
	return out
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func validClaimName(s string) bool {
	return s != "" && len(s) <= maxClaimName && printableASCII(s)
}

// validGroupName accepts what identity providers put in group claims (names,
// paths, ids) but not control characters or invalid UTF-8.
func validGroupName(s string) bool {
	if s == "" || len(s) > maxGroupName || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}
