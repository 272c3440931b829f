package flight

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"lakegate/authz/sqlgate"
	"lakegate/flight/accesslog"
	"lakegate/flight/backend"
)

// The access log: every statement and discovery call that reaches
// authorization produces one accesslog.Event, handed to Config.AccessLog.
//
// An interceptor gives each authenticated call an access record (on its
// context); the planner and the handlers fill it in as the call reaches
// authorization (the tables read and written, the statement's kind and
// normalised text), and the interceptor records the event when the call
// ends, streams included: its duration, rows and bytes are those of the
// whole call, its decision and error class those of the call's status. A
// call that never reached authorization (a statement refused by the parser
// or as too large, SET, SHOW VARIABLES, a refused Admit) records nothing.
//
// One statement execution is one event. A query planned by GetFlightInfo
// is recorded by the DoGet that streams its ticket (the ticket carries the
// statement's kind and normalised text); its planning RPC records an event
// only when the statement ends there (a denial, an error). A ticket never
// fetched is recorded as its plan, with no rows, once it expires (or at
// shutdown). A prepared statement is recorded by each of its executions;
// one closed or expired without any is recorded as its plan.

// AccessLog receives the access events of a Server (Config.AccessLog).
// flight/accesslog.Log implements it.
type AccessLog interface {
	// Admit reports whether tenant's statements may run: an error (its
	// spool is full and the tenant fails closed) refuses a new statement
	// with Unavailable before it is planned.
	Admit(tenant string) error
	// Record takes one event. It must not block on I/O.
	Record(accesslog.Event)
}

// errAccessLogUnavailable refuses a statement whose access event could not
// be kept (AccessLog.Admit failed).
var errAccessLogUnavailable = errors.New("access log unavailable")

// Access record kinds of calls without SQL.
const (
	accessIngest     = "ingest"
	accessGetSchemas = "get schemas"
	accessGetTables  = "get tables"
)

// access is what one call did, as far as the access log is concerned. Its
// methods are safe on a nil receiver (no access log) and for concurrent
// use (a DoGet's producer counts rows while the handler returns).
type access struct {
	start time.Time

	mu        sync.Mutex
	reached   bool // the call reached authorization
	deferred  bool // the event is recorded elsewhere (a ticket, a prepared statement)
	kind      string
	statement string
	catalog   string
	read      []accesslog.Table
	written   []accesslog.Table

	rows, bytes atomic.Int64
}

type accessKey struct{}

// accessFrom returns the access record of the call ctx belongs to, or nil
// when the server keeps no access log.
func accessFrom(ctx context.Context) *access {
	a, _ := ctx.Value(accessKey{}).(*access)
	return a
}

// reach marks the call as having reached authorization.
func (a *access) reach() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.reached = true
	a.mu.Unlock()
}

// statementIs sets the call's kind and its statement's normalised text,
// unless an earlier step set them (a ticket's DoGet names the statement it
// runs before the planner could).
func (a *access) statementIs(kind, normalized string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kind == "" {
		a.kind, a.statement = kind, normalized
	}
}

// setCatalog records the catalog of the call.
func (a *access) setCatalog(catalog string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.catalog = catalog
	a.mu.Unlock()
}

// readRefs records the tables a statement reads, by the names the client
// wrote: with their versions (and policies) when versions is their
// authorized resolution, at version 0 when versions is nil (a denial, whose
// event names what the client asked for and nothing else).
func (a *access) readRefs(refs []sqlgate.TableRef, versions []backend.TableVersion) {
	if a == nil {
		return
	}
	out := make([]accesslog.Table, 0, len(refs))
	for i, r := range refs {
		t := accesslog.Table{Schema: r.Schema, Name: r.Name}
		if len(versions) == len(refs) {
			t.Version = versions[i].Version
			t.FilterPolicy, t.MaskPolicies = policyNames(&versions[i])
		}
		out = append(out, t)
	}
	a.mu.Lock()
	a.reached, a.read = true, out
	a.mu.Unlock()
}

// readPinned records the pinned versions a ticket reads; denied, they are
// recorded at version 0.
func (a *access) readPinned(pinned []backend.TableVersion, denied bool) {
	if a == nil {
		return
	}
	refs := make([]sqlgate.TableRef, len(pinned))
	for i, v := range pinned {
		refs[i] = sqlgate.TableRef{Schema: v.Name.Schema, Name: v.Name.Name}
	}
	if denied {
		pinned = nil
	}
	a.readRefs(refs, pinned)
}

// wrote records the table a write targets, at version (0: not written).
func (a *access) wrote(name backend.TableName, version uint64) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.reached = true
	a.written = []accesslog.Table{{Schema: name.Schema, Name: name.Name, Version: version}}
	a.mu.Unlock()
}

// undefer gives the event back to the call (what was to record it will not).
func (a *access) undefer() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.deferred = false
	a.mu.Unlock()
}

// addRows counts rows returned or written.
func (a *access) addRows(n int64) {
	if a != nil {
		a.rows.Add(n)
	}
}

// deferAccess marks the call's event as recorded elsewhere and returns it
// as it stands (for the plan of a ticket or a prepared statement), or nil when
// the call did not reach authorization.
func (s *Server) deferAccess(ctx context.Context, a *access) *accesslog.Event {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	reached := a.reached
	a.deferred = reached
	a.mu.Unlock()
	if !reached {
		return nil
	}
	ev := s.accessEvent(ctx, a, nil)
	return &ev
}

// policyNames returns the names of the policies whose row filter and masks
// v is read through, as the catalog named them.
func policyNames(v *backend.TableVersion) (filter string, masks []string) {
	if v.Policy == nil {
		return "", nil
	}
	for _, m := range v.Policy.Masks {
		// A mask of a column the version does not have is not applied.
		has := slices.ContainsFunc(v.Columns, func(c backend.Column) bool { return c.Name == m.Column })
		if has && m.Policy != "" && !slices.Contains(masks, m.Policy) {
			masks = append(masks, m.Policy)
		}
	}
	return v.Policy.FilterPolicy, masks
}

// normalizeStatement is the statement text as the access log keeps it:
// every literal replaced by "?" (sqlgate.Normalize).
func normalizeStatement(text string) string { return sqlgate.Normalize(text) }

// maxNormalized bounds the normalised statements a planner remembers.
const maxNormalized = 4096

// normalizedTexts remembers the normalised form of statements seen
// recently, by the SHA-256 of their text: clients repeat the same texts,
// and normalising parses the text again (a few µs, most of what the
// access log adds to a point query). Keys are hashes, so no literal typed
// into a statement stays in memory; when full, it starts over.
type normalizedTexts struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]string
}

// get returns text normalised (normalizeStatement).
func (n *normalizedTexts) get(text string) string {
	k := sha256.Sum256([]byte(text))
	n.mu.Lock()
	v, ok := n.m[k]
	n.mu.Unlock()
	if ok {
		return v
	}
	v = normalizeStatement(text)
	n.mu.Lock()
	if n.m == nil || len(n.m) >= maxNormalized {
		n.m = make(map[[sha256.Size]byte]string)
	}
	n.m[k] = v
	n.mu.Unlock()
	return v
}

// maxFullText bounds a statement kept whole, as Normalize bounds its own.
const maxFullText = 64 << 10

// accessText is text as w's access events keep it: whole for a tenant
// whose operator opted in (Config.AccessLogFullText), cut at maxFullText
// on a character boundary; normalised for every other tenant.
func (pn *planner) accessText(w who, text string) string {
	if !pn.fullText[w.tenant()] {
		return pn.normalized.get(text)
	}
	if len(text) <= maxFullText {
		return text
	}
	cut := maxFullText
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + sqlgate.TruncatedMarker
}

// admitAccess asks the access log whether p's tenant may run a statement.
func (s *Server) admitAccess(tenant string) error {
	if s.cfg.AccessLog == nil {
		return nil
	}
	if err := s.cfg.AccessLog.Admit(tenant); err != nil {
		return errors.Join(errAccessLogUnavailable, err)
	}
	return nil
}

// accessEvent builds the event of the call ctx belongs to from a, as the
// call ends with err.
func (s *Server) accessEvent(ctx context.Context, a *access, err error) accesslog.Event {
	ev := accesslog.Event{
		Time:     a.start.UTC(),
		Gateway:  s.cfg.GatewayID,
		Decision: accesslog.Allowed,
		Rows:     a.rows.Load(),
		Bytes:    a.bytes.Load(),
		Duration: s.cfg.Now().Sub(a.start),
	}
	ev.RequestID, _ = RequestIDFrom(ctx)
	if p, perr := principalOf(ctx); perr == nil {
		ev.Tenant, ev.Principal = p.Tenant().String(), p.ID().String()
	}
	if pr, ok := peer.FromContext(ctx); ok && pr.Addr != nil {
		ev.ClientAddr = pr.Addr.String()
	}
	a.mu.Lock()
	ev.Kind, ev.Statement, ev.Catalog = a.kind, a.statement, a.catalog
	ev.Read, ev.Written = a.read, a.written
	a.mu.Unlock()
	if err != nil {
		ev.ErrorClass = codeLabel(err)
		var d *deniedStatus
		if errors.As(err, &d) {
			ev.Decision, ev.DenyReason = accesslog.Denied, d.reason
		}
	}
	return ev
}

// finishAccess records the event of a call that ended with err, if it
// reached authorization and nothing else records it.
func (s *Server) finishAccess(ctx context.Context, a *access, err error) {
	a.mu.Lock()
	record := a.reached && !a.deferred
	a.mu.Unlock()
	if record {
		s.cfg.AccessLog.Record(s.accessEvent(ctx, a, err))
	}
}

// accessUnary gives a unary call its access record and records its event.
// It runs after authentication, so the call has a principal.
func (s *Server) accessUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if s.cfg.AccessLog == nil {
		return handler(ctx, req)
	}
	a := &access{start: s.cfg.Now()}
	ctx = context.WithValue(ctx, accessKey{}, a)
	resp, err := handler(ctx, req)
	s.finishAccess(ctx, a, err)
	return resp, err
}

// accessStream is accessUnary for streams: the event is recorded when the
// stream ends, with the bytes of Arrow data it sent.
func (s *Server) accessStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if s.cfg.AccessLog == nil {
		return handler(srv, ss)
	}
	a := &access{start: s.cfg.Now()}
	as := &accessServerStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), accessKey{}, a), a: a}
	err := handler(srv, as)
	s.finishAccess(as.ctx, a, err)
	return err
}

// accessServerStream counts the bytes of the Arrow messages a stream sends.
type accessServerStream struct {
	grpc.ServerStream
	ctx context.Context
	a   *access
}

func (s *accessServerStream) Context() context.Context { return s.ctx }

func (s *accessServerStream) SendMsg(m any) error {
	if fd, ok := m.(*flight.FlightData); ok {
		s.a.bytes.Add(int64(len(fd.DataHeader) + len(fd.DataBody)))
	}
	return s.ServerStream.SendMsg(m)
}

// Read-only schema.

// systemSchema is the schema of the gateway's own tables
// (system.access_events): nobody writes into it through the gateway.
const systemSchema = "system"

// errReadOnly refuses a write into the system schema. Its text is the same
// whether the table exists or not.
type errReadOnly struct{ name backend.TableName }

func (e *errReadOnly) Error() string { return "table " + e.name.String() + " is read-only" }

// checkWritable refuses a write into the system schema, whoever asks.
func checkWritable(name backend.TableName) error {
	if strings.EqualFold(name.Schema, systemSchema) {
		return deny(reasonPrivilege, &errReadOnly{name: name})
	}
	return nil
}

// Plans never fetched.

// maxPendingPlans bounds the plans kept for tickets not yet fetched; past
// it a plan is recorded at once, as one never fetched.
const maxPendingPlans = 100_000

// pendingPlans holds the events of planned tickets until their DoGet (which
// records its own event and forgets the plan's) or their expiry, when the
// plan's event is recorded as the statement's: authorized, no rows.
type pendingPlans struct {
	ttl    time.Duration
	now    func() time.Time
	record func(accesslog.Event)

	mu        sync.Mutex
	byKey     map[[32]byte]pendingPlan
	lastSweep time.Time
}

// pendingPlan holds its event by pointer: a map value this small is
// stored inline, so keeping a plan allocates nothing more.
type pendingPlan struct {
	ev      *accesslog.Event
	expires time.Time
}

func newPendingPlans(ttl time.Duration, now func() time.Time, record func(accesslog.Event)) *pendingPlans {
	return &pendingPlans{ttl: ttl, now: now, record: record, byKey: map[[32]byte]pendingPlan{}}
}

// add keeps ev for the ticket key until the ticket expires; ev must not
// be modified afterwards.
func (pp *pendingPlans) add(key [32]byte, ev *accesslog.Event) {
	var due []*accesslog.Event
	pp.mu.Lock()
	due = pp.sweepLocked()
	if len(pp.byKey) >= maxPendingPlans {
		due = append(due, ev)
	} else {
		pp.byKey[key] = pendingPlan{ev: ev, expires: pp.now().Add(pp.ttl)}
	}
	pp.mu.Unlock()
	for _, e := range due {
		pp.record(*e)
	}
}

// take forgets the plan of the ticket key: its DoGet records the statement.
func (pp *pendingPlans) take(key [32]byte) {
	pp.mu.Lock()
	delete(pp.byKey, key)
	due := pp.sweepLocked()
	pp.mu.Unlock()
	for _, e := range due {
		pp.record(*e)
	}
}

// sweepLocked removes and returns the plans whose tickets expired, at most
// once per quarter TTL.
func (pp *pendingPlans) sweepLocked() []*accesslog.Event {
	now := pp.now()
	if now.Sub(pp.lastSweep) < pp.ttl/4 {
		return nil
	}
	pp.lastSweep = now
	var due []*accesslog.Event
	for k, p := range pp.byKey {
		if now.After(p.expires) {
			due = append(due, p.ev)
			delete(pp.byKey, k)
		}
	}
	return due
}

// flush records every plan still pending (at shutdown).
func (pp *pendingPlans) flush() {
	pp.mu.Lock()
	due := make([]*accesslog.Event, 0, len(pp.byKey))
	for k, p := range pp.byKey {
		due = append(due, p.ev)
		delete(pp.byKey, k)
	}
	pp.mu.Unlock()
	for _, e := range due {
		pp.record(*e)
	}
}
