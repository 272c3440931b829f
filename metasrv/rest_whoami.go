package metasrv

import (
	"lakegate/authz"
	"lakegate/metasrv/api"
)

// whoamiRoutes registers GET /api/whoami: who the credential of the request
// is, so that a client can default to the caller's metalake (its tenant)
// instead of asking the user for it. Any authenticated caller may ask; the
// answer holds nothing the caller's principal map entry does not already
// grant it (no token, no hash).
func (s *Server) whoamiRoutes() {
	s.read("/api/whoami", "WhoAmI", s.whoAmI)
}

func whoami(rq *request) api.WhoamiDTO {
	p := rq.caller
	out := api.WhoamiDTO{Name: p.ID().String(), Tenant: p.Tenant().String(), Role: p.Role().String(), Namespaces: []string{}}
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

// whoAmI serves GET /api/whoami.
func (s *Server) whoAmI(rq *request, _ *Metalake) (any, error) {
	return api.WhoamiResponse{Principal: whoami(rq)}, nil
}
