package metasrv

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// request is one authenticated REST request.
type request struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	caller *authz.Principal // the effective caller
	peer   *authz.Principal // the forwarding peer, if forwarded
	// metalake is the metalake the path addresses ({tenant}, a tenant
	// id), "" for /api/metalakes and /api/whoami.
	metalake string
	// delegator is the query_service acting for subject (a user name of
	// the metalake), nil when not delegated.
	delegator *authz.Principal
	subject   string
	body      []byte
}

// actor is the caller's name in catalogs: its principal id, or the
// delegated user on a delegated request.
func (rq *request) actor() string {
	if rq.delegator != nil {
		return rq.subject
	}
	return rq.caller.ID().String()
}

// operator reports whether the caller runs the deployment: metalake
// lifecycle and cluster membership, on every metalake.
func (rq *request) operator() bool { return rq.caller.Role() == authz.RoleOperator }

// administers reports whether the caller may act on the addressed metalake
// as a whole (see it whatever its grants, read its events): an operator, or
// the tenant admin of that metalake. Inside it, what a caller may do to
// objects is still decided by the catalog.
func (rq *request) administers() bool {
	return rq.operator() || (rq.metalake != "" && rq.delegator == nil && rq.caller.AdministersTenant(rq.metalake))
}

func (rq *request) param(name string) string { return rq.r.PathValue(name) }

func (rq *request) query(name string) string { return rq.r.URL.Query().Get(name) }

func (rq *request) details() bool {
	b, _ := strconv.ParseBool(rq.query("details"))
	return b
}

// decode parses the body strictly into v.
func (rq *request) decode(v any) error {
	if len(rq.body) == 0 {
		return badRequest("empty request body")
	}
	if err := decodeRequest(rq.body, v); err != nil {
		return badRequest("request body: %v", err)
	}
	return nil
}

// readFunc answers a read: an api envelope (api.TagResponse, …) with code 0.
type readFunc func(rq *request, l *Metalake) (any, error)

// plan is what a write handler proposes and how it answers.
type plan struct {
	cmds []catalog.Command
	lake *LakeOp
	// render builds the answer (an api envelope) from the result.
	render func(res *Result) (any, error)
	// onNotFound, when set, answers a not-found rejection (deletes answer
	// {"dropped":false}).
	onNotFound any
	// now, when set, is answered without proposing.
	now any
	// lakeName is the metalake of a lake operation on /api/metalakes.
	lakeName string
	// accessLog marks the access log's commit, the one write into a
	// system schema (see refuseSystemWrites).
	accessLog bool
}

type writeFunc func(rq *request, l *Metalake) (*plan, error)

// checkDisplay refuses a write that introduces a name which does not look
// like what it is (catalog.CheckDisplayName) — in its commands
// (catalog.IntroducedNames), or as a new metalake or its owner — or a policy
// expression that hides or reorders text (catalog.CheckDisplayText). The
// rules are checked here, where requests enter, and not by the FSM, so that
// entries logged before them replay as they were applied.
func checkDisplay(pl *plan) error {
	var names []string
	if pl.lake != nil && pl.lake.Op == LakeCreate {
		names = append(names, pl.lakeName, pl.lake.Owner)
	}
	for _, c := range pl.cmds {
		names = append(names, catalog.IntroducedNames(c)...)
		for _, e := range catalog.IntroducedExpressions(c) {
			if err := catalog.CheckDisplayText("policy expression", e); err != nil {
				return err
			}
		}
	}
	for _, n := range names {
		if err := catalog.CheckDisplayName(n); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) routes() error {
	h, err := raftnode.NewHandlers(raftnode.HTTPConfig{
		Node: s.node,
		Authorize: func(r *http.Request) error {
			p, err := s.authenticate(r)
			if err != nil {
				return statusErr{http.StatusUnauthorized, err}
			}
			if !clusterRole(p) {
				return statusErr{http.StatusForbidden, ErrForbidden}
			}
			return nil
		},
		AuthorizeJoin: s.authorizeJoin,
		Forwarder:     s.fwd,
		ForwardHeader: func(*http.Request) (http.Header, error) {
			return s.peerHeader()
		},
		MaxBodyBytes: s.cfg.MaxBodyBytes,
		Logger:       s.log,
	})
	if err != nil {
		return err
	}
	m := http.NewServeMux()
	m.Handle("/cluster/join", h.JoinHandler())
	m.Handle("/cluster/status", h.StatusHandler())
	m.HandleFunc("/api/", s.noRoute)
	s.mux = m
	s.metalakeRoutes()
	s.objectRoutes()
	s.tagRoutes()
	s.policyRoutes()
	s.domainRoutes()
	s.accessRoutes()
	s.explainRoutes()
	s.whoamiRoutes()
	s.reloadRoutes()
	s.identitySyncRoutes()
	s.internalRoutes()
	return nil
}

// routeMethods are the methods noRoute tries on a path.
var routeMethods = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch}

// noRoute answers a request under /api/ or /internal/ that no route
// matched. When the path is a route's under other methods it answers 405 /
// 1006 (UnsupportedOperationException) with an Allow header naming them;
// otherwise 404 / 1003.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range routeMethods {
		if m == r.Method {
			continue
		}
		alt := *r
		alt.Method = m
		if _, p := s.mux.Handler(&alt); p != "" && p != r.Pattern {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		s.writeError(w, r, fmt.Errorf("%w: no such endpoint", ErrNotFound))
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	s.writeError(w, r, fmt.Errorf("%w: method %s on %s (allowed: %s)", ErrUnsupported, r.Method, r.URL.Path, strings.Join(allow, ", ")))
}

// clusterRole reports whether p may use the cluster endpoints at all:
// nodes (metadata_peer) and operators. Joining needs more (authorizeJoin).
func clusterRole(p *authz.Principal) bool {
	return p.Role() == authz.RoleMetadataPeer || p.Role() == authz.RoleOperator
}

type statusErr struct {
	code int
	err  error
}

func (e statusErr) Error() string   { return e.err.Error() }
func (e statusErr) Unwrap() error   { return e.err }
func (e statusErr) HTTPStatus() int { return e.code }

func (s *Server) peerHeader() (http.Header, error) {
	if s.cfg.PeerToken == "" {
		return nil, fmt.Errorf("%w: this node has no peer token to forward with", ErrUnavailable)
	}
	return http.Header{"Authorization": {"Bearer " + s.cfg.PeerToken}}, nil
}

// authenticate checks the bearer token, after refusing a request that
// carries it, or a header naming on whose behalf it acts, more than once.
func (s *Server) authenticate(r *http.Request) (*authz.Principal, error) {
	if len(r.Header.Values("Authorization")) > 1 {
		return nil, ErrUnauthenticated
	}
	// The headers that say on whose behalf a request acts may each appear
	// once: with two values, a proxy or a node on the way could act on
	// another one than the one checked here.
	for _, k := range [...]string{api.CallerHeader, raftnode.ForwardedHeader, api.DelegateTenantHeader, api.DelegateUserHeader, api.DelegateTokenHeader, api.CallerTokenHeader} {
		if len(r.Header.Values(k)) > 1 {
			return nil, badRequest("header %s appears more than once", k)
		}
	}
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		s.metrics.authnFailed(authz.ReasonUnknownToken)
		return nil, ErrUnauthenticated
	}
	p, reason, err := s.authn.AuthenticateReason(r.Context(), strings.TrimSpace(tok))
	if err != nil {
		s.metrics.authnFailed(reason)
		return nil, ErrUnauthenticated
	}
	return p, nil
}

// rejectEvent audits request r (nil for a bootstrap seed), rejected before
// it reached the log.
// Recording is synchronous and takes no context, so client cancellation
// never loses it.
func (s *Server) rejectEvent(r *http.Request, metalake, actor, op string, target catalog.Object, err error) {
	ev := Event{Metalake: metalake, Event: catalog.Event{Time: s.now().UTC(), Actor: actor,
		Operation: op, Target: target, Outcome: catalog.Failure, Detail: err.Error()}}
	ev.rejected(r, err)
	s.audit.Record(ev)
}

// reject records the audit event of a write rejected before it was
// proposed, with the delegating service when there is one.
func (rq *request) reject(op string, err error) {
	s := rq.s
	ev := Event{Metalake: rq.metalake, Event: catalog.Event{Time: s.now().UTC(), Actor: rq.actor(),
		Operation: op, Target: catalog.Object{Type: catalog.ObjectMetalake, Name: rq.metalake}, Outcome: catalog.Failure, Detail: err.Error()}}
	if rq.delegator != nil {
		ev.Delegator = rq.delegator.ID().String()
	}
	ev.rejected(rq.r, err)
	s.audit.Record(ev)
}

// begin authenticates the request, resolves forwarding and checks the
// tenant. op names the operation for audit.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, op string) (*request, error) {
	rq, err := s.beginCaller(w, r, op)
	if err != nil {
		return nil, err
	}
	if err := s.delegate(rq, op); err != nil {
		return nil, err
	}
	// Every caller but an operator is held to its own tenant; a delegated
	// request was held to the delegate's tenants above.
	if rq.metalake != "" && !rq.operator() && rq.delegator == nil && rq.caller.Tenant().String() != rq.metalake {
		return nil, fmt.Errorf("%w: metalake %q", ErrNotFound, rq.metalake)
	}
	// A user signed in by JWT is a user of the metalake with the token's
	// groups; a delegated one when its gateway forwarded its token.
	switch {
	case rq.delegator != nil:
		err = s.verifyDelegateToken(r, rq.metalake, rq.subject)
	case rq.metalake != "" && rq.peer == nil:
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		err = s.syncJWTUser(r.Context(), rq.metalake, rq.caller, strings.TrimSpace(tok))
	}
	if err != nil {
		return nil, err
	}
	return rq, nil
}

// beginCaller authenticates the request and resolves forwarding: rq.caller
// is the original caller.
func (s *Server) beginCaller(w http.ResponseWriter, r *http.Request, op string) (*request, error) {
	p, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	rq := &request{s: s, w: w, r: r, caller: p, metalake: r.PathValue("tenant")}
	target := catalog.Object{Type: catalog.ObjectMetalake, Name: rq.metalake}
	forwarded := r.Header.Get(api.CallerHeader) != "" || r.Header.Get(raftnode.ForwardedHeader) != "" || r.Header.Get(api.CallerTokenHeader) != ""
	switch {
	case forwarded && p.Role() != authz.RoleMetadataPeer:
		err := fmt.Errorf("%w: forwarding headers from a %s principal", ErrForbidden, p.Role())
		s.rejectEvent(r, rq.metalake, p.ID().String(), op, target, err)
		return nil, err
	case p.Role() == authz.RoleMetadataPeer && !s.forwardingMember(r, p):
		err := fmt.Errorf("%w: a peer request must come from a member of the cluster, forwarding as itself", ErrForbidden)
		s.rejectEvent(r, rq.metalake, p.ID().String(), op, target, err)
		return nil, err
	case p.Role() == authz.RoleMetadataPeer:
		id := r.Header.Get(api.CallerHeader)
		c, ok := s.byID.get(id)
		if tok := r.Header.Get(api.CallerTokenHeader); tok != "" {
			// A caller signed in by JWT: this node verifies its token.
			jc, _, err := s.authn.AuthenticateReason(r.Context(), tok)
			c, ok = jc, err == nil && jc.AuthMethod() == authz.AuthJWT && jc.ID().String() == id
		}
		if !ok || c.Role() == authz.RoleMetadataPeer {
			err := fmt.Errorf("%w: a peer request must name a known non-peer caller", ErrForbidden)
			s.rejectEvent(r, rq.metalake, p.ID().String(), op, target, err)
			return nil, err
		}
		rq.peer, rq.caller = p, c
	}
	return rq, nil
}

// forwardingMember reports whether a metadata_peer request comes from a
// current voter of the cluster and names that same node as its forwarder:
// a peer identity alone, without the cluster expecting that node, forwards
// nothing.
func (s *Server) forwardingMember(r *http.Request, p *authz.Principal) bool {
	id := p.ID().String()
	by := r.Header.Get(raftnode.ForwardedHeader)
	return (by == "" || by == id) && s.node.IsVoter(id)
}

// writeError answers err through the one mapper.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, body := mapError(err)
	if status == http.StatusInternalServerError {
		s.log.Error("metasrv: request failed", "method", r.Method, "route", r.Pattern, "err", err)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, body)
}

// ok writes answer, an api envelope whose code is 0 (nil: code alone), with
// the generation of l when there is one.
func (s *Server) ok(w http.ResponseWriter, l *Metalake, answer any) {
	if l != nil {
		w.Header().Set(api.GenerationHeader, strconv.FormatUint(l.Generation(), 10))
	}
	if answer == nil {
		answer = api.BaseResponse{}
	}
	writeJSON(w, http.StatusOK, answer)
}

// updatesOf decodes the body of an alter, {"updates": [...]}, which must
// hold at least one update.
func updatesOf[U any](rq *request) ([]U, error) {
	var b api.AlterRequest[U]
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if len(b.Updates) == 0 {
		return nil, badRequest("no updates")
	}
	return b.Updates, nil
}

// namesOr answers a collection read: the names of items, or with
// details=true the envelope list makes of their wire objects, leaving out
// an item whose object dto does not find. Either list is [] when empty,
// never null.
func namesOr[T, D any](rq *request, items []T, name func(T) string, dto func(T) (D, bool), list func([]D) any) any {
	if rq.details() {
		out := []D{}
		for _, it := range items {
			if d, ok := dto(it); ok {
				out = append(out, d)
			}
		}
		return list(out)
	}
	names := []string{}
	for _, it := range items {
		names = append(names, name(it))
	}
	return api.NameListResponse{Names: names}
}

// read registers a read route.
func (s *Server) read(pattern, op string, fn readFunc) {
	s.mux.HandleFunc("GET "+pattern, func(w http.ResponseWriter, r *http.Request) {
		rq, err := s.begin(w, r, op)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.serveRead(rq, fn); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) serveRead(rq *request, fn readFunc) error {
	r := rq.r
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadWaitTimeout)
	defer cancel()
	if c, _ := strconv.ParseBool(rq.query("consistent")); c {
		if !s.node.IsLeader() {
			if err := s.forward(rq); !errors.Is(err, errNowLeader) {
				return err
			}
		}
		if err := s.node.Barrier(ctx); err != nil {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	if mg := rq.query("minGeneration"); mg != "" && rq.metalake != "" {
		gen, err := strconv.ParseUint(mg, 10, 64)
		if err != nil {
			return badRequest("minGeneration must be a non-negative integer")
		}
		if err := s.fsm.WaitGeneration(ctx, rq.metalake, gen); err != nil {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	var l *Metalake
	if rq.metalake != "" {
		var ok bool
		if l, ok = s.fsm.Lake(rq.metalake); !ok {
			return fmt.Errorf("%w: metalake %q", ErrNotFound, rq.metalake)
		}
		if !rq.administers() && !l.Snapshot.Visible(rq.actor(), catalog.Object{Type: catalog.ObjectMetalake, Name: rq.metalake}) {
			return fmt.Errorf("%w: metalake %q", ErrNotFound, rq.metalake)
		}
	}
	answer, err := fn(rq, l)
	if err != nil {
		return err
	}
	rq.w.Header().Set(api.IndexHeader, strconv.FormatUint(s.node.AppliedIndex(), 10))
	s.ok(rq.w, l, answer)
	return nil
}

// write registers a write route.
func (s *Server) write(method, pattern, op string, fn writeFunc) {
	s.writeRoute(method, pattern, op, false, fn)
}

// writeRoute registers a write route; with lakeOptional, fn runs with a nil
// *Metalake when the metalake does not exist.
func (s *Server) writeRoute(method, pattern, op string, lakeOptional bool, fn writeFunc) {
	s.mux.HandleFunc(method+" "+pattern, func(w http.ResponseWriter, r *http.Request) {
		rq, err := s.begin(w, r, op)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.serveWrite(rq, op, lakeOptional, fn); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) serveWrite(rq *request, op string, lakeOptional bool, fn writeFunc) error {
	r := rq.r
	body, err := s.readBody(rq.w, r)
	if err != nil {
		err = badRequest("%v", err)
		rq.reject(op, err)
		return err
	}
	rq.body = body
	if !s.node.IsLeader() {
		if err := s.forward(rq); !errors.Is(err, errNowLeader) {
			return err
		}
	}
	var l *Metalake
	if rq.metalake != "" {
		var ok bool
		if l, ok = s.fsm.Lake(rq.metalake); !ok && !lakeOptional {
			return fmt.Errorf("%w: metalake %q", ErrNotFound, rq.metalake)
		}
	}
	pl, err := fn(rq, l)
	if err == nil {
		err = refuseSystemWrites(pl)
	}
	if err == nil {
		err = checkDisplay(pl)
	}
	if err != nil {
		rq.reject(op, err)
		return err
	}
	if pl.now != nil {
		s.ok(rq.w, l, pl.now)
		return nil
	}
	metalake := rq.metalake
	if pl.lake != nil && metalake == "" {
		metalake = pl.lakeName
	}
	prop := Proposal{Metalake: metalake, Actor: rq.actor(), Admin: rq.operator(), Time: s.now(), Lake: pl.lake}
	if rq.delegator != nil {
		prop.Delegator = rq.delegator.ID().String()
	}
	ctx := context.WithoutCancel(r.Context()) // a queued proposal is not withdrawn
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ProposeTimeout)
	defer cancel()
	out, index, err := s.propose(ctx, prop, pl.cmds)
	if index != 0 {
		rq.w.Header().Set(api.IndexHeader, strconv.FormatUint(index, 10))
	}
	if err != nil {
		if pl.onNotFound != nil && errors.Is(err, catalog.ErrNotFound) {
			s.ok(rq.w, l, pl.onNotFound)
			return nil
		}
		if l != nil {
			rq.w.Header().Set(api.GenerationHeader, strconv.FormatUint(l.Generation(), 10))
		}
		return err
	}
	res, ok := out.(*Result)
	if !ok {
		return fmt.Errorf("metasrv: unexpected apply result %T", out)
	}
	answer, err := pl.render(res)
	if err != nil {
		return err
	}
	if res.Lake != nil {
		s.ok(rq.w, res.Lake, answer)
	} else {
		s.ok(rq.w, nil, answer)
	}
	return nil
}

// errNowLeader: forward found this node to be the leader; serve locally.
var errNowLeader = errors.New("metasrv: this node is the leader")

// forward relays a request that needs the leader, once, as this node's peer
// identity on behalf of the caller.
func (s *Server) forward(rq *request) error {
	r := rq.r
	if r.Header.Get(raftnode.ForwardedHeader) != "" {
		return fmt.Errorf("%w: not the leader", ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ReadWaitTimeout)
	defer cancel()
	if self, err := s.awaitLeader(ctx); err != nil {
		return err
	} else if self {
		return errNowLeader
	}
	hdr, err := s.peerHeader()
	if err != nil {
		return err
	}
	hdr.Set(api.CallerHeader, rq.caller.ID().String())
	if rq.caller.AuthMethod() == authz.AuthJWT {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		hdr.Set(api.CallerTokenHeader, strings.TrimSpace(tok))
	}
	for _, k := range []string{"Content-Type", "Accept", api.DelegateTenantHeader, api.DelegateUserHeader, api.DelegateTokenHeader} {
		if v := r.Header.Get(k); v != "" {
			hdr.Set(k, v)
		}
	}
	resp, err := s.fwd.Forward(ctx, r.Method, r.URL.RequestURI(), hdr, rq.body)
	if err != nil {
		if s.node.IsLeader() { // won the election while waiting for a leader
			return errNowLeader
		}
		return fmt.Errorf("%w: forwarding to the leader: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	raftnode.CopyReply(rq.w, resp, 64<<20, api.GenerationHeader, api.IndexHeader)
	return nil
}

// awaitLeader waits until a leader is known; self reports this node.
func (s *Server) awaitLeader(ctx context.Context) (self bool, err error) {
	for {
		ch := s.node.LeaderCh()
		if s.node.IsLeader() {
			return true, nil
		}
		if _, ok := s.node.Leader(); ok {
			return false, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false, fmt.Errorf("%w: no leader: %v", ErrUnavailable, ctx.Err())
		}
	}
}

// mediaType returns the request's media type, lower case.
func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// lower returns an enum's wire form.
func lower(s fmt.Stringer) string { return strings.ToLower(s.String()) }
