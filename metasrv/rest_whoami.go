package metasrv

import "lakegate/authz"

// whoamiRoutes registers GET /api/whoami: who the credential of the request
// is, so that a client can default to the caller's metalake (its tenant)
// instead of asking the user for it. Any authenticated caller may ask; the
// answer holds nothing the caller's principal map entry does not already
// grant it (no token, no hash).
func (s *Server) whoamiRoutes() {
	s.read("/api/whoami", "WhoAmI", func(rq *request, _ *Lake) (map[string]any, error) {
		return map[string]any{"principal": whoami(rq)}, nil
	})
}

// whoamiDTO is the answer of GET /api/whoami.
type whoamiDTO struct {
	Name   string `json:"name"`
	Tenant string `json:"tenant"`
	Role   string `json:"role"`
	// Namespaces are the namespace grants of a user; a tenant admin reads
	// every namespace of its tenant; empty for the other roles.
	Namespaces []string `json:"namespaces"`
	// Metalake is the metalake the caller works in by default (its
	// tenant's), empty for an operator (every metalake, none by default)
	// and the roles that are not a tenant's.
	Metalake string `json:"metalake"`
	// DelegatedBy names the query service acting for the user, on a
	// delegated request.
	DelegatedBy string `json:"delegatedBy,omitempty"`
}

func whoami(rq *request) whoamiDTO {
	p := rq.caller
	out := whoamiDTO{Name: p.ID().String(), Tenant: p.Tenant().String(), Role: p.Role().String(), Namespaces: []string{}}
	switch p.Role() {
	case authz.RoleUser:
		for _, ns := range p.Namespaces() {
			out.Namespaces = append(out.Namespaces, ns.String())
		}
		out.Metalake = out.Tenant
	case authz.RoleTenantAdmin:
		out.Namespaces = append(out.Namespaces, "*")
		out.Metalake = out.Tenant
	}
	if rq.delegator != nil {
		out.DelegatedBy = rq.delegator.ID().String()
	}
	return out
}
