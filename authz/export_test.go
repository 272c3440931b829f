package authz

import "context"

// MapSpecs returns m as specs (hashes in lower-case hex), for round-trip tests.
func MapSpecs(m *PrincipalMap) []PrincipalSpec {
	specs := make([]PrincipalSpec, len(m.principals))
	for i, p := range m.principals {
		s := PrincipalSpec{ID: p.id.s, Tenant: p.tenant.s, Role: p.role.String()}
		for _, n := range p.namespaces {
			s.Namespaces = append(s.Namespaces, n.s)
		}
		for _, t := range p.delegateTenants {
			s.DelegateTenants = append(s.DelegateTenants, t.s)
		}
		for _, h := range m.hashes[i] {
			s.TokenHashes = append(s.TokenHashes, h.String())
		}
		specs[i] = s
	}
	return specs
}

// VerifyJWT verifies token without the verified-token cache, for the
// benchmark of a first presentation.
func VerifyJWT(a *Authenticator, token string) (*Principal, FailureReason) {
	p, _, r := a.jwt.verify(context.Background(), token, a.jwt.now())
	return p, r
}

// VerifiedLen returns the number of entries in a's verified-token cache.
func VerifiedLen(a *Authenticator) int {
	a.jwt.verified.mu.Lock()
	defer a.jwt.verified.mu.Unlock()
	return len(a.jwt.verified.m)
}

// MaxJWTLen is the longest JWT accepted.
const MaxJWTLen = maxJWTLen
