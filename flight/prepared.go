package flight

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"lakegate/authz"
	"lakegate/flight/accesslog"
	"lakegate/flight/ticket"
)

// maxPreparedPerPrincipal bounds open prepared statements per principal.
const maxPreparedPerPrincipal = 1024

// preparedLifetime bounds a prepared statement handle's validity regardless of
// use; idle statements are closed much sooner (Config.PreparedTTL).
const preparedLifetime = 24 * time.Hour

type prepared struct {
	principal owner
	// plan is the statement as prepared: its kind, parameters, announced
	// schema and access record never change. Executions start from
	// current().
	plan *plan

	mu       sync.Mutex
	args     []any
	lastUsed time.Time
	// cur is the plan the last refresh that changed it returned (nil: plan).
	cur *plan
	// spec is the execution started for the next DoGet (speculate.go).
	spec *speculation

	// planned is the access event of the statement's preparation, recorded
	// if it is closed without ever being executed; executed is set by its
	// first execution (access.go).
	planned  *accesslog.Event
	executed atomic.Bool
}

// execution marks st executed and names its statement on the call's
// access record; when its preparation reached authorization, so does the
// execution (a prepared write reaches it when it runs): each execution is
// recorded.
func (st *prepared) execution(a *access) {
	st.executed.Store(true)
	a.statementIs(st.plan.access.Kind, st.plan.access.Statement)
	if st.planned != nil {
		a.reach()
	}
}

// current returns the plan st's next execution refreshes and runs: the
// one its last refresh returned (planner.Refresh), or the prepared one.
// Keeping it means that once a table or policy changed, the executions
// after the first one to see the change reuse its plan (and the engine's
// prepared statement) instead of rendering and describing it again.
func (st *prepared) current() *plan {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cur != nil {
		return st.cur
	}
	return st.plan
}

// refreshed makes pl, which a refresh of base returned, st's current plan,
// unless another execution replaced base first.
func (st *prepared) refreshed(base, pl *plan) {
	if pl == base {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if cur := st.cur; cur == base || (cur == nil && base == st.plan) {
		st.cur = pl
	}
}

// preparedStore holds prepared statements by id. Handles given to clients
// are sealed tickets carrying the id, so a forged or foreign handle fails like
// any bad ticket.
type preparedStore struct {
	ttl   time.Duration
	now   func() time.Time
	specs *speculations
	// record, when set, takes the access event of a statement removed
	// without having been executed.
	record func(accesslog.Event)

	mu        sync.Mutex
	byID      map[string]*prepared
	count     map[owner]int
	lastSweep time.Time
}

func newPreparedStore(ttl time.Duration, now func() time.Time, specs *speculations) *preparedStore {
	return &preparedStore{ttl: ttl, now: now, specs: specs, byID: map[string]*prepared{}, count: map[owner]int{}}
}

// owner is who may use a prepared statement and whose bound it counts
// against: an id and its tenant, as JWT users of two tenants may share an
// id.
type owner struct {
	id     authz.PrincipalID
	tenant authz.TenantID
}

func ownerOf(p *authz.Principal) owner { return owner{p.ID(), p.Tenant()} }

func (ps *preparedStore) add(p *authz.Principal, pl *plan, planned *accesslog.Event) (string, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	id := string(raw[:])
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.sweepLocked()
	if ps.count[ownerOf(p)] >= maxPreparedPerPrincipal {
		return "", errTooManyPrepared
	}
	ps.byID[id] = &prepared{principal: ownerOf(p), plan: pl, lastUsed: ps.now(), planned: planned}
	ps.count[ownerOf(p)]++
	return id, nil
}

func (ps *preparedStore) get(p *authz.Principal, id string) (*prepared, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	st, ok := ps.byID[id]
	if !ok || st.principal != ownerOf(p) {
		return nil, false
	}
	st.mu.Lock()
	st.lastUsed = ps.now()
	st.mu.Unlock()
	return st, true
}

func (ps *preparedStore) remove(p *authz.Principal, id string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if st, ok := ps.byID[id]; ok && st.principal == ownerOf(p) {
		ps.removeLocked(id, st)
	}
}

func (ps *preparedStore) removeLocked(id string, st *prepared) {
	delete(ps.byID, id)
	if ps.count[st.principal]--; ps.count[st.principal] <= 0 {
		delete(ps.count, st.principal)
	}
	if sp := ps.specs.take(st, nil); sp != nil {
		ps.specs.drop(sp, speculationDiscarded, false)
	}
	ps.recordUnexecuted(st)
}

// recordUnexecuted records the plan of st if it was never executed, once.
func (ps *preparedStore) recordUnexecuted(st *prepared) {
	if ps.record != nil && st.planned != nil && !st.executed.Swap(true) {
		ps.record(*st.planned)
	}
}

// flushUnexecuted records the plans of the open statements never executed
// (at shutdown).
func (ps *preparedStore) flushUnexecuted() {
	for _, st := range ps.all() {
		ps.recordUnexecuted(st)
	}
}

// all returns every open statement.
func (ps *preparedStore) all() []*prepared {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]*prepared, 0, len(ps.byID))
	for _, st := range ps.byID {
		out = append(out, st)
	}
	return out
}

// sweepLocked closes statements idle longer than the TTL, at most once per
// quarter TTL.
func (ps *preparedStore) sweepLocked() {
	now := ps.now()
	if now.Sub(ps.lastSweep) < ps.ttl/4 {
		return
	}
	ps.lastSweep = now
	for id, st := range ps.byID {
		st.mu.Lock()
		idle := now.Sub(st.lastUsed)
		st.mu.Unlock()
		if idle > ps.ttl {
			ps.removeLocked(id, st)
		}
	}
}

// len reports the number of open statements (for tests through export_test).
func (ps *preparedStore) len() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.byID)
}

// openPrepared unseals a handle and returns the caller's statement.
func (s *Server) openPrepared(p *authz.Principal, handle []byte) (*prepared, string, error) {
	claims, err := s.openFor(p, handle)
	if err != nil {
		return nil, "", err
	}
	id := string(claims.Payload)
	st, ok := s.prepared.get(p, id)
	if !ok {
		return nil, "", &notFoundError{kind: "prepared statement", name: "handle"}
	}
	return st, id, nil
}

// CreatePreparedStatement plans a query once; executions reuse the plan.
func (s *Server) CreatePreparedStatement(ctx context.Context, req flightsql.ActionCreatePreparedStatementRequest) (flightsql.ActionCreatePreparedStatementResult, error) {
	var zero flightsql.ActionCreatePreparedStatementResult
	p, err := principalOf(ctx)
	if err != nil {
		return zero, toStatus(err)
	}
	if len(req.GetTransactionId()) > 0 {
		return zero, toStatus(fmt.Errorf("%w: transactions are not supported", errBadRequest))
	}
	pl, err := s.planText(ctx, p, req.GetQuery(), false)
	if err != nil {
		return zero, s.fail(ctx, "prepare", err)
	}
	// Each execution records the statement; the preparation only if none
	// comes.
	a := accessFrom(ctx)
	planned := s.deferAccess(ctx, a)
	id, err := s.prepared.add(p, pl, planned)
	if err != nil {
		a.undefer()
		return zero, toStatus(err)
	}
	handle, err := s.sealFor(p, ticket.Claims{
		Principal: p.ID().String(),
		Tenant:    p.Tenant().String(),
		Expiry:    s.cfg.Now().Add(preparedLifetime),
		Payload:   []byte(id),
	})
	if err != nil {
		s.prepared.remove(p, id)
		a.undefer()
		return zero, s.fail(ctx, "seal", err)
	}
	notUpdate := false
	return flightsql.ActionCreatePreparedStatementResult{
		Handle:          handle,
		DatasetSchema:   pl.schema,
		ParameterSchema: parameterSchema(pl),
		IsUpdate:        &notUpdate,
	}, nil
}

// parameterSchema returns the plan's parameter schema: the types the backend
// inferred, with arrow.Null for any placeholder it could not type (or for all
// of them if it reported a schema of the wrong width).
func parameterSchema(pl *plan) *arrow.Schema {
	if pl.params != nil && pl.params.NumFields() == pl.numParams {
		return pl.params
	}
	fields := make([]arrow.Field, pl.numParams)
	for i := range fields {
		fields[i] = arrow.Field{Name: "parameter_" + strconv.Itoa(i+1), Type: arrow.Null, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// ClosePreparedStatement forgets a statement. Closing twice is not an error.
func (s *Server) ClosePreparedStatement(ctx context.Context, req flightsql.ActionClosePreparedStatementRequest) error {
	p, err := principalOf(ctx)
	if err != nil {
		return toStatus(err)
	}
	claims, err := s.openFor(p, req.GetPreparedStatementHandle())
	if err != nil {
		return toStatus(err)
	}
	s.prepared.remove(p, string(claims.Payload))
	return nil
}

// DoPutPreparedStatementQuery binds one row of parameters.
func (s *Server) DoPutPreparedStatementQuery(ctx context.Context, cmd flightsql.PreparedStatementQuery, rdr flight.MessageReader, _ flight.MetadataWriter) ([]byte, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	handle := cmd.GetPreparedStatementHandle()
	st, _, err := s.openPrepared(p, handle)
	if err != nil {
		return nil, toStatus(err)
	}
	var args []any
	rows := 0
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		rows += int(rec.NumRows())
		if rows > 1 {
			return nil, toStatus(fmt.Errorf("%w: bind exactly one row of parameters", errBadRequest))
		}
		if int(rec.NumCols()) != st.plan.numParams {
			return nil, toStatus(fmt.Errorf("%w: the statement has %d parameters, %d were bound", errBadRequest, st.plan.numParams, rec.NumCols()))
		}
		args = make([]any, rec.NumCols())
		for i, col := range rec.Columns() {
			v, err := scalarAt(col, 0)
			if err != nil {
				return nil, toStatus(fmt.Errorf("%w: parameter %d: %v", errBadRequest, i+1, err))
			}
			args[i] = v
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, toStatus(fmt.Errorf("%w: reading parameters: %v", errBadRequest, err))
	}
	// The parameters are bound and the statement started for its DoGet
	// (speculate.go) in one step, so a DoGet sees either the earlier
	// parameters and their execution or these and theirs.
	s.speculate(ctx, p, st, ticketKey(handle), args, true)
	return handle, nil
}

// GetFlightInfoPreparedStatement returns the statement's schema and a ticket
// that executes it with the parameters bound so far.
func (s *Server) GetFlightInfoPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	st, _, err := s.openPrepared(p, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, toStatus(err)
	}
	s.speculate(ctx, p, st, ticketKey(cmd.GetPreparedStatementHandle()), nil, false)
	// The descriptor's command is the sealed handle itself; DoGet re-opens it.
	return s.flightInfoIPC(desc, st.plan.schemaIPC, desc.GetCmd()), nil
}

// GetSchemaPreparedStatement returns the statement's result schema.
func (s *Server) GetSchemaPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	st, _, err := s.openPrepared(p, cmd.GetPreparedStatementHandle())
	if err != nil {
		return nil, toStatus(err)
	}
	return &flight.SchemaResult{Schema: st.plan.schemaIPC}, nil
}

// DoGetPreparedStatement executes a prepared statement.
func (s *Server) DoGetPreparedStatement(ctx context.Context, cmd flightsql.PreparedStatementQuery) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return nil, nil, toStatus(err)
	}
	handle := cmd.GetPreparedStatementHandle()
	st, _, err := s.openPrepared(p, handle)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	st.execution(accessFrom(ctx))
	st.mu.Lock()
	args := st.args
	sp := s.specs.takeLocked(st, nil)
	st.mu.Unlock()
	if sp != nil {
		return s.claim(ctx, p, st, sp, args)
	}
	if len(args) != st.plan.numParams {
		return nil, nil, toStatus(fmt.Errorf("%w: the statement has %d parameters, %d were bound", errBadRequest, st.plan.numParams, len(args)))
	}
	if st.plan.write != nil {
		return nil, nil, toStatus(fmt.Errorf("%w: %s changes data; run it with ExecuteUpdate", errBadRequest, st.plan.write.Kind()))
	}
	if st.plan.show != nil {
		// Answered now, from what the caller may see now (like a ticket's).
		payload, err := encodeShow(st.plan.show, accessedStatement{})
		if err != nil {
			return nil, nil, s.fail(ctx, "show", err)
		}
		return s.doGetShow(ctx, p, handle, payload)
	}
	if st.plan.sql == "" {
		ch := make(chan flight.StreamChunk)
		close(ch)
		return arrow.NewSchema(nil, nil), ch, nil
	}
	// The statement is authorized again (planner.Refresh) while the engine
	// opens it as prepared: the two round trips overlap, and nothing is
	// sent before the refresh confirms the same versions and policies.
	return s.claim(ctx, p, st, s.opening(ctx, p, ticketKey(handle), st.current(), args, false), args)
}

// scalarAt converts one parameter value to a Go value the engine binds.
// Arrays read from a client are not fully validated by arrow-go (a validity
// bitmap may be shorter than the array), and reading one as declared can
// panic: that is the client's malformed data, reported as an error.
func scalarAt(col arrow.Array, i int) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("malformed array: %v", r)
		}
	}()
	if col.IsNull(i) {
		return nil, nil
	}
	switch a := col.(type) {
	case *array.Null:
		return nil, nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return int64(a.Value(i)), nil
	case *array.Int16:
		return int64(a.Value(i)), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint8:
		return uint64(a.Value(i)), nil
	case *array.Uint16:
		return uint64(a.Value(i)), nil
	case *array.Uint32:
		return uint64(a.Value(i)), nil
	case *array.Uint64:
		return a.Value(i), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Date32:
		return a.Value(i).ToTime(), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit), nil
	default:
		return nil, fmt.Errorf("type %s is not supported", col.DataType())
	}
}

// DoPutPreparedStatementUpdate runs a prepared write statement (drivers such
// as JDBC prepare every statement, updates included) or a prepared USE or
// SET, which took effect (USE) or was accepted as a no-op (SET) when it was
// prepared. It returns the rows written.
func (s *Server) DoPutPreparedStatementUpdate(ctx context.Context, cmd flightsql.PreparedStatementUpdate, _ flight.MessageReader) (int64, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return 0, toStatus(err)
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return 0, toStatus(err)
	}
	st, _, err := s.openPrepared(p, cmd.GetPreparedStatementHandle())
	if err != nil {
		return 0, toStatus(err)
	}
	st.execution(accessFrom(ctx))
	switch {
	case st.plan.write != nil:
		n, err := s.executeWrite(ctx, s.whoIs(ctx, p), st.plan.write)
		if err != nil {
			return 0, s.fail(ctx, "write", err)
		}
		return n, nil
	case st.plan.sql == "" && st.plan.show == nil:
		return 0, nil // USE, SET
	}
	return 0, toStatus(fmt.Errorf("%w: queries return rows; run them with ExecuteQuery", errBadRequest))
}
