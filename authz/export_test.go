package authz

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
