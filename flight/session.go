package flight

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
)

// sessionCookie names the cookie that carries a session id. Clients keep
// sessions by replaying it (JDBC does by default; ADBC with its cookie
// middleware option).
const sessionCookie = "lakegate_session"

// Session option names.
const (
	optCatalog = "catalog"
	optSchema  = "schema"
	optTenant  = "tenant" // read-only
)

// maxSessions bounds the session table so unauthenticated-looking churn from
// an authenticated client cannot grow it without limit.
const maxSessions = 100_000

// sessionState is a copy of a session's options, taken once per request.
type sessionState struct {
	catalog string
	schema  string
	// views are the session's views (CREATE VIEW) by the catalog they
	// were made in, each list in the order they were made. The lists are
	// never modified in place (sqlgate.Statement.ApplyTo copies), so a
	// copy of the state may share them.
	views map[string][]sqlgate.View
}

type session struct {
	id        string
	principal authz.PrincipalID
	tenant    authz.TenantID

	mu       sync.Mutex
	state    sessionState
	lastUsed time.Time
}

// sessionStore holds sessions by id. Each session is bound to the principal
// that created it; another principal presenting its cookie gets no session.
type sessionStore struct {
	ttl time.Duration
	now func() time.Time

	mu        sync.Mutex
	byID      map[string]*session
	lastSweep time.Time
}

func newSessionStore(ttl time.Duration, now func() time.Time) *sessionStore {
	return &sessionStore{ttl: ttl, now: now, byID: make(map[string]*session)}
}

// lookup returns the caller's session from its cookie, or nil.
func (st *sessionStore) lookup(ctx context.Context, p *authz.Principal) *session {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, line := range md.Get("cookie") {
		cookies, err := http.ParseCookie(line)
		if err != nil {
			continue
		}
		for _, c := range cookies {
			if c.Name != sessionCookie {
				continue
			}
			st.mu.Lock()
			s := st.byID[c.Value]
			st.mu.Unlock()
			if s == nil || s.principal != p.ID() || s.tenant != p.Tenant() {
				continue
			}
			s.mu.Lock()
			expired := st.now().Sub(s.lastUsed) > st.ttl
			if !expired {
				s.lastUsed = st.now()
			}
			s.mu.Unlock()
			if expired {
				st.remove(s.id)
				continue
			}
			return s
		}
	}
	return nil
}

// state returns the effective options for the caller: its session's, or the
// defaults.
func (st *sessionStore) state(ctx context.Context, p *authz.Principal) sessionState {
	if s := st.lookup(ctx, p); s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.state
	}
	return sessionState{}
}

// obtain returns the caller's session, creating one (and sending its cookie)
// when there is none.
func (st *sessionStore) obtain(ctx context.Context, p *authz.Principal) (*session, error) {
	if s := st.lookup(ctx, p); s != nil {
		return s, nil
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	s := &session{id: base64.RawURLEncoding.EncodeToString(raw[:]), principal: p.ID(), tenant: p.Tenant(), lastUsed: st.now()}
	st.mu.Lock()
	st.sweepLocked()
	if len(st.byID) >= maxSessions {
		st.mu.Unlock()
		return nil, errTooManySessions
	}
	st.byID[s.id] = s
	st.mu.Unlock()
	cookie := (&http.Cookie{Name: sessionCookie, Value: s.id, Path: "/", HttpOnly: true}).String()
	if err := grpc.SetHeader(ctx, metadata.Pairs("set-cookie", cookie)); err != nil {
		st.remove(s.id)
		return nil, err
	}
	return s, nil
}

// setSchema makes schema the default schema of the caller's session,
// starting a session for a caller that has none.
func (st *sessionStore) setSchema(ctx context.Context, p *authz.Principal, schema string) error {
	sess, err := st.obtain(ctx, p)
	if err != nil {
		return err
	}
	sess.mu.Lock()
	sess.state.schema = schema
	sess.mu.Unlock()
	return nil
}

// applyView applies a CREATE VIEW or DROP VIEW to the views the caller's
// session holds in catalog, starting a session for a caller that has none.
func (st *sessionStore) applyView(ctx context.Context, p *authz.Principal, catalog string, stmt *sqlgate.Statement) error {
	sess, err := st.obtain(ctx, p)
	if err != nil {
		return err
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	views, err := stmt.ApplyTo(sess.state.views[catalog])
	if err != nil {
		return err
	}
	m := make(map[string][]sqlgate.View, len(sess.state.views)+1)
	for c, vs := range sess.state.views {
		m[c] = vs
	}
	if len(views) == 0 {
		delete(m, catalog)
	} else {
		m[catalog] = views
	}
	sess.state.views = m
	return nil
}

func (st *sessionStore) remove(id string) {
	st.mu.Lock()
	delete(st.byID, id)
	st.mu.Unlock()
}

// sweepLocked drops idle sessions, at most once per quarter TTL.
func (st *sessionStore) sweepLocked() {
	now := st.now()
	if now.Sub(st.lastSweep) < st.ttl/4 {
		return
	}
	st.lastSweep = now
	for id, s := range st.byID {
		s.mu.Lock()
		idle := now.Sub(s.lastUsed)
		s.mu.Unlock()
		if idle > st.ttl {
			delete(st.byID, id)
		}
	}
}

// GetFlightInfoSqlInfo answers as flightsql.BaseServer does and starts a
// session for a caller that has none, sending its cookie. Drivers ask for
// SqlInfo when they connect (ADBC's Open and JDBC do), on a unary call whose
// response headers a client's cookie middleware always reads. A cookie first
// sent on a DoPut answer can be lost: arrow-go's middleware reads a stream's
// headers only when the client reads the stream to its end, and
// ExecuteUpdate reads one message. Without this, USE sent with ExecuteUpdate
// as a connection's first statement would answer success and change a
// session the client never presents again.
func (s *Server) GetFlightInfoSqlInfo(ctx context.Context, cmd flightsql.GetSqlInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	info, err := s.BaseServer.GetFlightInfoSqlInfo(ctx, cmd, desc)
	if err != nil {
		return nil, err
	}
	if p, err := principalOf(ctx); err == nil {
		// Best effort: with the session table full, the answer is still
		// given and USE reports the error when it needs a session.
		_, _ = s.sessions.obtain(ctx, p)
	}
	return info, nil
}

// SetSessionOptions sets "catalog" and/or "schema" for the caller's session.
func (s *Server) SetSessionOptions(ctx context.Context, req *flight.SetSessionOptionsRequest) (*flight.SetSessionOptionsResult, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	result := &flight.SetSessionOptionsResult{Errors: map[string]*flight.SetSessionOptionsResultError{}}
	fail := func(name string, v pb.SetSessionOptionsResult_ErrorValue) {
		result.Errors[name] = &flight.SetSessionOptionsResultError{Value: v}
	}
	next := map[string]string{}
	for name, v := range req.GetSessionOptions() {
		switch name {
		case optCatalog, optSchema:
		default:
			fail(name, flight.SetSessionOptionsResultErrorInvalidName)
			continue
		}
		sv, ok := v.GetOptionValue().(*pb.SessionOptionValue_StringValue)
		if !ok && v.GetOptionValue() != nil {
			fail(name, flight.SetSessionOptionsResultErrorInvalidValue)
			continue
		}
		value := ""
		if ok {
			value = sv.StringValue
		}
		if !s.validOption(name, value) {
			fail(name, flight.SetSessionOptionsResultErrorInvalidValue)
			continue
		}
		next[name] = value
	}
	if len(next) == 0 {
		return result, nil
	}
	sess, err := s.sessions.obtain(ctx, p)
	if err != nil {
		return nil, toStatus(err)
	}
	sess.mu.Lock()
	for name, value := range next {
		switch name {
		case optCatalog:
			sess.state.catalog = lowerASCII(value)
		case optSchema:
			sess.state.schema = lowerASCII(value)
		}
	}
	sess.mu.Unlock()
	return result, nil
}

// validOption checks a session option value. An empty value resets it.
func (s *Server) validOption(name, value string) bool {
	if value == "" {
		return true
	}
	switch name {
	case optCatalog:
		// Any catalog name: metasrv decides what the caller may see in it,
		// and an unknown catalog resolves like an empty one.
		_, err := authz.ParseNamespace(lowerASCII(value))
		return err == nil
	case optSchema:
		_, err := authz.ParseNamespace(value)
		return err == nil
	}
	return false
}

// GetSessionOptions returns the caller's effective options, and its own
// tenant as the read-only option "tenant" (clients show it, as lakegate
// sql's prompt does; SetSessionOptions refuses the name).
func (s *Server) GetSessionOptions(ctx context.Context, _ *flight.GetSessionOptionsRequest) (*flight.GetSessionOptionsResult, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	st := s.sessions.state(ctx, p)
	catalog := st.catalog
	if catalog == "" {
		catalog = s.cfg.DefaultCatalog
	}
	opts := map[string]any{optCatalog: catalog, optTenant: p.Tenant().String()}
	if st.schema != "" {
		opts[optSchema] = st.schema
	}
	values, err := flight.NewSessionOptionValues(opts)
	if err != nil {
		return nil, toStatus(err)
	}
	return &flight.GetSessionOptionsResult{SessionOptions: values}, nil
}

// CloseSession forgets the caller's session, if any.
func (s *Server) CloseSession(ctx context.Context, _ *flight.CloseSessionRequest) (*flight.CloseSessionResult, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	if sess := s.sessions.lookup(ctx, p); sess != nil {
		s.sessions.remove(sess.id)
	}
	return &flight.CloseSessionResult{Status: flight.CloseSessionResultClosed}, nil
}

// principalOf returns the authenticated principal; the interceptor guarantees
// one, so a missing principal is an authentication failure, never a default.
func principalOf(ctx context.Context) (*authz.Principal, error) {
	p, ok := authz.PrincipalFrom(ctx)
	if !ok || p == nil {
		return nil, authz.ErrUnauthenticated
	}
	return p, nil
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
