package metasrv

import (
	"fmt"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// Delegation: a query_service principal (a gateway) acts for a user of a
// tenant's metalake by sending api.DelegateTenantHeader (the tenant, which must
// be the metalake addressed and one of the principal's delegate_tenants) and
// api.DelegateUserHeader (the user's name in that metalake). metasrv then
// authorizes the request as that user, with the user's roles from the
// catalog; the query service itself holds no privileges in any metalake.
//
// Rejected, with 403 / 1008 and an audit event naming the authenticated
// principal (and the delegating service):
//   - delegation headers from any role other than query_service;
//   - a delegated request for a tenant outside delegate_tenants, for a
//     tenant other than the metalake addressed, or with one header only;
//   - a query_service addressing a metalake without delegation headers.
//
// A follower forwarding a delegated write passes both headers on, so the
// leader checks the delegation again.

// delegate applies the delegation rules to rq (after forwarding has been
// resolved: rq.caller is the original caller). On success a delegated
// request has rq.delegator and rq.subject set.
func (s *Server) delegate(rq *request, op string) error {
	r := rq.r
	dt, du := r.Header.Get(api.DelegateTenantHeader), r.Header.Get(api.DelegateUserHeader)
	c := rq.caller
	if dt == "" && du == "" {
		if c.Role() == authz.RoleQueryService && rq.metalake != "" {
			return s.rejectDelegation(rq.metalake, c, "", op,
				fmt.Errorf("%w: a query_service addresses a metalake only on behalf of a delegated user", ErrForbidden))
		}
		return nil
	}
	if c.Role() != authz.RoleQueryService {
		return s.rejectDelegation(rq.metalake, c, "", op,
			fmt.Errorf("%w: delegation headers from a %s principal", ErrForbidden, c.Role()))
	}
	if dt == "" || du == "" {
		return s.rejectDelegation(rq.metalake, c, du, op,
			fmt.Errorf("%w: delegation needs both %s and %s", ErrForbidden, api.DelegateTenantHeader, api.DelegateUserHeader))
	}
	if rq.metalake == "" || dt != rq.metalake {
		return s.rejectDelegation(rq.metalake, c, du, op,
			fmt.Errorf("%w: the delegated tenant must be the metalake addressed", ErrForbidden))
	}
	if !mayDelegate(c, dt) {
		return s.rejectDelegation(rq.metalake, c, du, op,
			fmt.Errorf("%w: not a delegate for this tenant", ErrForbidden))
	}
	if err := catalog.CheckEntityName(du); err != nil {
		return s.rejectDelegation(rq.metalake, c, "", op,
			fmt.Errorf("%w: the delegated user is not a valid user name", ErrForbidden))
	}
	rq.delegator, rq.subject = c, du
	return nil
}

// mayDelegate reports whether p is a query_service that may act for tenant.
func mayDelegate(p *authz.Principal, tenant string) bool {
	if p.Role() != authz.RoleQueryService {
		return false
	}
	for _, t := range p.DelegateTenants() {
		if t.String() == tenant {
			return true
		}
	}
	return false
}

// rejectDelegation audits a rejected (delegated or would-be delegated)
// request and returns err. With a subject, the event's actor is the subject
// and the delegator the authenticated principal; without, the actor is the
// principal.
func (s *Server) rejectDelegation(tenant string, p *authz.Principal, subject, op string, err error) error {
	ev := Event{Metalake: tenant, Event: catalog.Event{Time: s.now().UTC(), Actor: p.ID().String(),
		Operation: op, Target: catalog.Object{Type: catalog.ObjectMetalake, Name: tenant},
		Outcome: catalog.Failure, Detail: err.Error()}}
	if subject != "" && catalog.CheckEntityName(subject) == nil {
		ev.Actor, ev.Delegator = subject, p.ID().String()
	}
	ev.rejected(nil, err)
	s.audit.Record(ev)
	return err
}
