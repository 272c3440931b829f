package metasrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	return s.syncJWTUser(r.Context(), tenant, p, tok)
}

// syncJWTUser makes metalake's catalog agree with p, a JWT principal of
// that tenant verified from token: the user is created if missing, added to
// every group of the token's groups claim that exists in the metalake and
// removed from every other group. Groups the metalake does not have are
// ignored: an administrator creates a group (and grants it roles) for the
// identity provider's group of the same name. Nothing to change proposes
// nothing. Otherwise the leader proposes one catalog.SyncIdentityUser (see
// proposeSync), whoever owns the metalake; a follower forwards the token to
// the leader (forwardSync), which verifies it itself, and answers once it
// has applied the leader's state — Unavailable when the leader cannot be
// reached: a membership removal is never skipped.
func (s *Server) syncJWTUser(ctx context.Context, metalake string, p *authz.Principal, token string) error {
	if _, changes := s.identitySync(metalake, p); !changes {
		return nil
	}
	if s.node.IsLeader() {
		return s.proposeSync(ctx, metalake, p)
	}
	return s.forwardSync(ctx, metalake, p, token)
}

// identitySync is the sync that makes metalake agree with p, and whether
// it changes anything (never for a principal not signed in by JWT for that
// tenant, or a missing metalake).
func (s *Server) identitySync(metalake string, p *authz.Principal) (catalog.SyncIdentityUser, bool) {
	if p.AuthMethod() != authz.AuthJWT || p.Tenant().String() != metalake {
		return catalog.SyncIdentityUser{}, false
	}
	l, ok := s.fsm.Lake(metalake)
	if !ok {
		return catalog.SyncIdentityUser{}, false
	}
	return catalog.IdentitySync(l.Snapshot, p.ID().String(), p.Groups())
}

// proposeSync proposes, on the leader, the sync of p's memberships against
// the current state, when it changes anything: one
// catalog.SyncIdentityUser as the user itself, with Proposal.Identity
// (which no REST request sets) and delegator jwtSyncDelegator, audited like
// any write. It waits for the proposal ProposeTimeout, as every write.
func (s *Server) proposeSync(ctx context.Context, metalake string, p *authz.Principal) error {
	cmd, changes := s.identitySync(metalake, p)
	if !changes {
		return nil
	}
	prop := Proposal{Metalake: metalake, Actor: cmd.Name, Identity: true, Delegator: jwtSyncDelegator, Time: s.now()}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ProposeTimeout)
	defer cancel()
	if _, _, err := s.propose(ctx, prop, []catalog.Command{cmd}); err != nil {
		return fmt.Errorf("metasrv: syncing the memberships of %s: %w", p.ID(), err)
	}
	return nil
}

// identitySyncPath is the peer-only route by which a follower has the
// leader sync a JWT user's memberships: POST, as the follower's
// metadata_peer identity forwarding as itself, with the user's token in
// api.CallerTokenHeader and nothing else. The leader verifies the token
// with its own principal map — a follower's word adds nothing — syncs the
// memberships the token's claims call for and answers 200 with
// api.IndexHeader, its applied index, for the follower to wait for.
const identitySyncPath = "/internal/v1/metalakes/{tenant}/identity-sync"

// identitySyncRoutes registers identitySyncPath.
func (s *Server) identitySyncRoutes() {
	s.mux.HandleFunc("POST "+identitySyncPath, s.handleIdentitySync)
}

// maxSyncReply bounds the leader's answer to a forwarded sync.
const maxSyncReply = 64 << 10

// forwardSync has the leader sync p's memberships from token and waits
// until this node has applied the leader's state after it, bounded by
// ProposeTimeout. The leader's refusal of the token is this call's
// (Unauthenticated); a leader that cannot be reached, or answers otherwise,
// is Unavailable. A node that finds itself the leader meanwhile proposes.
func (s *Server) forwardSync(ctx context.Context, metalake string, p *authz.Principal, token string) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProposeTimeout)
	defer cancel()
	hdr, err := s.peerHeader()
	if err != nil {
		return err
	}
	hdr.Set(api.CallerTokenHeader, token)
	resp, err := s.fwd.Forward(ctx, http.MethodPost, strings.Replace(identitySyncPath, "{tenant}", url.PathEscape(metalake), 1), hdr, nil)
	if errors.Is(err, raftnode.ErrIsLeader) {
		return s.proposeSync(ctx, metalake, p)
	}
	if err != nil {
		return fmt.Errorf("%w: forwarding the membership sync of %s to the leader: %v", ErrUnavailable, p.ID(), err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, maxSyncReply))
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return ErrUnauthenticated
	default:
		var eb api.ErrorBody
		_ = json.Unmarshal(reply, &eb)
		return fmt.Errorf("%w: the leader refused the membership sync of %s: HTTP %d: %s", ErrUnavailable, p.ID(), resp.StatusCode, eb.Message)
	}
	index, err := strconv.ParseUint(resp.Header.Get(api.IndexHeader), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: the leader's membership sync answer has no index", ErrUnavailable)
	}
	if err := s.node.WaitApplied(ctx, index); err != nil {
		return fmt.Errorf("%w: waiting for the membership sync of %s: %v", ErrUnavailable, p.ID(), err)
	}
	return nil
}

// handleIdentitySync serves identitySyncPath on the leader.
func (s *Server) handleIdentitySync(w http.ResponseWriter, r *http.Request) {
	const op = "SyncIdentityUser"
	tenant := r.PathValue("tenant")
	p, err := s.authenticate(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	target := catalog.Object{Type: catalog.ObjectMetalake, Name: tenant}
	by := r.Header.Get(raftnode.ForwardedHeader)
	other := r.Header.Get(api.CallerHeader) != "" || r.Header.Get(api.DelegateTenantHeader) != "" ||
		r.Header.Get(api.DelegateUserHeader) != "" || r.Header.Get(api.DelegateTokenHeader) != ""
	if p.Role() != authz.RoleMetadataPeer || by != p.ID().String() || !s.forwardingMember(r, p) || other {
		err := fmt.Errorf("%w: a membership sync is forwarded by a member of the cluster, as itself, with the user's token only", ErrForbidden)
		s.rejectEvent(r, tenant, p.ID().String(), op, target, err)
		s.writeError(w, r, err)
		return
	}
	// The leader's own verification: nothing the follower says is taken.
	jp, reason, err := s.authn.AuthenticateReason(r.Context(), r.Header.Get(api.CallerTokenHeader))
	if err != nil {
		s.metrics.authnFailed(reason)
		s.writeError(w, r, ErrUnauthenticated)
		return
	}
	if jp.AuthMethod() != authz.AuthJWT || jp.Tenant().String() != tenant {
		s.metrics.authnFailed(authz.ReasonUnknownUser)
		s.writeError(w, r, ErrUnauthenticated)
		return
	}
	if !s.node.IsLeader() {
		s.writeError(w, r, fmt.Errorf("%w: not the leader", ErrUnavailable))
		return
	}
	if _, ok := s.fsm.Lake(tenant); !ok {
		s.writeError(w, r, fmt.Errorf("%w: metalake %q", ErrNotFound, tenant))
		return
	}
	if err := s.proposeSync(r.Context(), tenant, jp); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set(api.IndexHeader, strconv.FormatUint(s.node.AppliedIndex(), 10))
	writeJSON(w, http.StatusOK, api.BaseResponse{})
}
