package metasrv

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// principalIndex finds the principals of the map in force by id, for the
// callers a peer forwards for, the bootstrap operator and explain. It
// rebuilds its index when the map's generation changes, so a reload is seen
// by the next lookup.
type principalIndex struct {
	ps  *authz.Principals
	cur atomic.Pointer[indexAt]
}

type indexAt struct {
	gen  uint64
	byID map[string]*authz.Principal
}

// get returns the listed principal with id under the map in force.
func (x *principalIndex) get(id string) (*authz.Principal, bool) {
	snap := x.ps.Current()
	ix := x.cur.Load()
	if ix == nil || ix.gen != snap.Generation() {
		ix = &indexAt{gen: snap.Generation(), byID: map[string]*authz.Principal{}}
		for _, p := range snap.Map().Principals() {
			ix.byID[p.ID().String()] = p
		}
		x.cur.Store(ix)
	}
	p, ok := ix.byID[id]
	return p, ok
}

// ReloadPath is the node-local route that reloads the principal map
// (Config.ReloadPrincipals): POST, operators only, never forwarded — each
// node reloads its own file.
const ReloadPath = "/api/admin/principals/reload"

// reloadResponse answers a reload: the generation of the map in force.
type reloadResponse struct {
	Code       int    `json:"code"`
	Generation uint64 `json:"generation"`
}

// reloadRoutes registers ReloadPath.
func (s *Server) reloadRoutes() {
	s.mux.HandleFunc("POST "+ReloadPath, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		forwarded := r.Header.Get(api.CallerHeader) != "" || r.Header.Get(raftnode.ForwardedHeader) != "" ||
			r.Header.Get(api.DelegateTenantHeader) != "" || r.Header.Get(api.DelegateUserHeader) != ""
		if p.Role() != authz.RoleOperator || forwarded {
			s.writeError(w, r, fmt.Errorf("%w: only an operator reloads the principal map", ErrForbidden))
			return
		}
		if s.cfg.ReloadPrincipals == nil {
			s.writeError(w, r, fmt.Errorf("%w: this node has no principal map file to reload", ErrNotFound))
			return
		}
		if err := s.cfg.ReloadPrincipals(); err != nil {
			s.log.Warn("principal map reload refused", "by", p.ID().String(), "err", err)
			s.writeError(w, r, badRequest("%v", err))
			return
		}
		s.log.Info("principal map reloaded", "by", p.ID().String(), "generation", s.authn.Generation())
		writeJSON(w, http.StatusOK, reloadResponse{Generation: s.authn.Generation()})
	})
}

// jwtSyncDelegator is the delegator recorded on the audit events of a
// membership sync: the user applies it on the strength of the identity
// provider's token.
const jwtSyncDelegator = "oidc-token"

// verifyDelegateToken verifies the JWT a gateway forwarded for the
// delegated user du of tenant (api.DelegateTokenHeader) with this node's
// own principal map and syncs the user's memberships. No header: nothing to
// do. A token that does not verify, or names another user or tenant, is
// ErrUnauthenticated.
func (s *Server) verifyDelegateToken(r *http.Request, tenant, du string) error {
	tok := r.Header.Get(api.DelegateTokenHeader)
	if tok == "" {
		return nil
	}
	p, reason, err := s.authn.AuthenticateReason(r.Context(), tok)
	if err != nil {
		s.metrics.authnFailed(reason)
		return ErrUnauthenticated
	}
	if p.AuthMethod() != authz.AuthJWT || p.ID().String() != du || p.Tenant().String() != tenant {
		s.metrics.authnFailed(authz.ReasonUnknownUser)
		return ErrUnauthenticated
	}
	return s.syncJWTUser(r.Context(), tenant, p)
}

// syncJWTUser makes metalake's catalog agree with a verified JWT principal
// p of that tenant: the user is created if missing, added to every group of
// the token's groups claim that exists in the metalake and removed from
// every other group. Groups the metalake does not have are ignored: an
// administrator creates a group (and grants it roles) for the identity
// provider's group of the same name. Nothing to change proposes nothing;
// otherwise one catalog.SyncIdentityUser, proposed as the user itself with
// Proposal.Identity (which no REST request sets) and delegator
// jwtSyncDelegator, audited like any write — whoever owns the metalake. A
// follower that would have to change something answers Unavailable (a
// client fails over to the leader): a membership removal is never skipped.
func (s *Server) syncJWTUser(ctx context.Context, metalake string, p *authz.Principal) error {
	if p.AuthMethod() != authz.AuthJWT || p.Tenant().String() != metalake {
		return nil
	}
	l, ok := s.fsm.Lake(metalake)
	if !ok {
		return nil
	}
	cmd, changes := catalog.IdentitySync(l.Snapshot, p.ID().String(), p.Groups())
	if !changes {
		return nil
	}
	if !s.node.IsLeader() {
		return fmt.Errorf("%w: a membership sync needs the leader", ErrUnavailable)
	}
	prop := Proposal{Metalake: metalake, Actor: cmd.Name, Identity: true, Delegator: jwtSyncDelegator, Time: s.now()}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ProposeTimeout)
	defer cancel()
	if _, _, err := s.propose(ctx, prop, []catalog.Command{cmd}); err != nil {
		return fmt.Errorf("metasrv: syncing the memberships of %s: %w", p.ID(), err)
	}
	return nil
}
