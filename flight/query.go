package flight

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

// planText plans text for p under a planning permit: a plain statement
// (GetFlightInfo, GetSchema) or, with plain unset, one being prepared. An
// authorized USE switches the caller's session here.
func (s *Server) planText(ctx context.Context, p *authz.Principal, text string, plain bool) (*plan, error) {
	if !p.MayQuery() {
		return nil, errNotQuerier
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return nil, err
	}
	release, err := s.admitPlanning(ctx, p)
	if err != nil {
		return nil, err
	}
	defer release()
	w := s.whoIs(ctx, p)
	pl, err := s.planner.Plan(ctx, w, text, plain)
	if err != nil {
		return nil, err
	}
	if pl.use != "" {
		if err := s.sessions.setSchema(ctx, p, pl.use); err != nil {
			return nil, err
		}
	}
	if pl.view != nil {
		if err := s.sessions.applyView(ctx, p, w.caller.Catalog, pl.view); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// whoIs is p as the planner sees it, with its session's options read now:
// once per request.
func (s *Server) whoIs(ctx context.Context, p *authz.Principal) who {
	w := s.planner.whoIs(p, s.sessions.state(ctx, p))
	accessFrom(ctx).setCatalog(w.caller.Catalog)
	return w
}

// GetFlightInfoStatement plans a query and returns its schema and a sealed
// ticket bound to the caller.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	pl, err := s.planText(ctx, p, cmd.GetQuery(), true)
	if err != nil {
		return nil, s.fail(ctx, "plan", err)
	}
	if pl.numParams > 0 {
		return nil, toStatus(fmt.Errorf("%w: the statement has parameters; use a prepared statement", errBadRequest))
	}
	// The ticket's DoGet records the statement (access.go); the plan is
	// recorded only if the ticket is never fetched.
	a := accessFrom(ctx)
	planned := s.deferAccess(ctx, a)
	var st accessedStatement
	if planned != nil {
		st = accessedStatement{Kind: planned.Kind, Statement: planned.Statement}
	}
	var payload []byte
	if pl.show != nil {
		payload, err = encodeShow(pl.show, st)
	} else {
		payload, err = encodePayload(pl, st)
	}
	if err != nil {
		a.undefer()
		return nil, s.fail(ctx, "ticket", err)
	}
	sealed, err := s.sealFor(p, ticket.Claims{
		Principal: p.ID().String(),
		Tenant:    p.Tenant().String(),
		Expiry:    s.cfg.Now().Add(s.cfg.TicketTTL),
		Payload:   payload,
	})
	if err != nil {
		a.undefer()
		return nil, s.fail(ctx, "seal", err)
	}
	tkt, err := flightsql.CreateStatementQueryTicket(sealed)
	if err != nil {
		a.undefer()
		return nil, s.fail(ctx, "ticket", err)
	}
	if planned != nil {
		s.pending.add(ticketKey(sealed), planned)
	}
	return s.flightInfoIPC(desc, pl.schemaIPC, tkt), nil
}

func (s *Server) flightInfo(desc *flight.FlightDescriptor, schema *arrow.Schema, tkt []byte) *flight.FlightInfo {
	return s.flightInfoIPC(desc, flight.SerializeSchema(schema, s.mem), tkt)
}

// flightInfoIPC is flightInfo with the schema already serialized (a plan's,
// made once with it).
func (s *Server) flightInfoIPC(desc *flight.FlightDescriptor, schema []byte, tkt []byte) *flight.FlightInfo {
	return &flight.FlightInfo{
		Schema:           schema,
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}
}

// GetSchemaStatement plans a query and returns only its schema.
func (s *Server) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, _ *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	pl, err := s.planText(ctx, p, cmd.GetQuery(), true)
	if err != nil {
		return nil, s.fail(ctx, "plan", err)
	}
	return &flight.SchemaResult{Schema: pl.schemaIPC}, nil
}

// DoGetStatement opens a sealed ticket and streams its result.
func (s *Server) DoGetStatement(ctx context.Context, cmd flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return nil, nil, toStatus(err)
	}
	a := accessFrom(ctx)
	handle := cmd.GetStatementHandle()
	claims, err := s.openFor(p, handle)
	if err != nil {
		// A ticket that does not open is a denial of whatever it was.
		a.statementIs(sqlgate.KindQuery.String(), "")
		a.reach()
		return nil, nil, toStatus(err)
	}
	if isShowPayload(claims.Payload) {
		return s.doGetShow(ctx, p, handle, claims.Payload)
	}
	tp, err := decodePayload(claims.Payload)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	s.fetched(ctx, handle, tp.Access)
	if tp.SQL == "" {
		schema := arrow.NewSchema(nil, nil)
		ch := make(chan flight.StreamChunk)
		close(ch)
		return schema, ch, nil
	}
	if err := s.planner.Reauthorize(ctx, s.whoIs(ctx, p), tp.Tables); err != nil {
		return nil, nil, s.fail(ctx, "reauthorize", err)
	}
	return s.execute(ctx, p, ticketKey(handle), tp.SQL, nil, tp.Tables)
}

// fetched names on the call's access record the statement of the ticket
// handle, whose plan reached authorization when st is set, and forgets the
// plan's pending event: this call records the statement.
func (s *Server) fetched(ctx context.Context, handle []byte, st accessedStatement) {
	a := accessFrom(ctx)
	if a == nil || st.Kind == "" {
		return
	}
	s.pending.take(ticketKey(handle))
	a.statementIs(st.Kind, st.Statement)
	a.reach()
}

// execute runs sql over the pinned table versions and streams batches. The
// query is registered under key so CancelFlightInfo can stop it.
func (s *Server) execute(ctx context.Context, p *authz.Principal, key [32]byte, sql string, args []any, tables []backend.TableVersion) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if len(tables) == 0 && len(args) == 0 {
		if rec := s.planner.constants.result(sql); rec != nil {
			// A constant statement run before: its kept result, with
			// no engine, permit or producer (constant.go); a ticket
			// cancelled before its DoGet still answers nothing.
			if s.running.wasCancelled(key) {
				rec.Release()
				return nil, nil, toStatus(errCanceledByClient)
			}
			accessFrom(ctx).addRows(rec.NumRows())
			ch := make(chan flight.StreamChunk, 1)
			ch <- flight.StreamChunk{Data: rec}
			close(ch)
			return rec.Schema(), ch, nil
		}
	}
	o, err := s.open(ctx, p, key, sql, args, tables, s.admitExecute.acquire)
	if err != nil {
		return nil, nil, err
	}
	schema, ch := s.stream(o)
	return schema, ch, nil
}

// openStatement is a statement whose engine reader is open and not yet
// streamed: close gives back everything it holds (the reader, the pinned
// files, the admission permit, the registration under its key).
type openStatement struct {
	ctx    context.Context
	rdr    array.RecordReader
	tables []backend.TableVersion
	close  func()
}

// open registers the statement under key, takes an execution permit with
// admit (admission.acquire waits for one, tryAcquire does not; either
// returns a release or an error and holds nothing), pins the versions' files
// and starts sql on the engine. Errors are statuses.
func (s *Server) open(ctx context.Context, p *authz.Principal, key [32]byte, sql string, args []any, tables []backend.TableVersion, admit func(context.Context, string) (func(), error)) (*openStatement, error) {
	ctx, cancel := context.WithCancel(ctx)
	run, ok := s.running.start(key, cancel)
	if !ok {
		cancel()
		return nil, toStatus(errCanceledByClient)
	}
	// Waiting for a permit happens under the registered context, so
	// CancelFlightInfo also stops a queued statement.
	release, err := admit(ctx, p.Tenant().String())
	if err != nil {
		s.running.finish(key, run)
		cancel()
		return nil, s.fail(ctx, "admit", err)
	}
	up, err := upstreamOf(tables)
	unpin := func() {}
	if err == nil && up == nil {
		unpin, err = s.planner.Bind(ctx, p.Tenant().String(), tables)
	}
	if err != nil {
		release()
		s.running.finish(key, run)
		cancel()
		return nil, s.fail(ctx, "bind", err)
	}
	var rdr array.RecordReader
	if up != nil {
		rdr, err = s.executeUpstream(ctx, up, sql, args)
	} else {
		rdr, err = s.executeLocal(ctx, p, sql, args, tables)
	}
	if err != nil {
		unpin()
		release()
		s.running.finish(key, run)
		cancel()
		return nil, s.fail(ctx, "execute", withheld(tables, err))
	}
	o := &openStatement{ctx: ctx, rdr: rdr, tables: tables}
	o.close = func() {
		// The permit and the files go back once the reader is released.
		o.rdr.Release()
		unpin()
		release()
		s.running.finish(key, run)
		cancel()
	}
	return o, nil
}

// executeLocal runs sql on the engine, or answers a constant statement's
// run from its kept result; its first run is read at once and kept
// (constant.go).
func (s *Server) executeLocal(ctx context.Context, p *authz.Principal, sql string, args []any, tables []backend.TableVersion) (array.RecordReader, error) {
	constant := len(tables) == 0 && len(args) == 0 && s.planner.constants.marked(sql)
	if constant {
		if rec := s.planner.constants.result(sql); rec != nil {
			defer rec.Release()
			return array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		}
	}
	rdr, err := s.cfg.Backend.Execute(ctx, p.Tenant().String(), sql, args)
	if err != nil || !constant {
		return rdr, err
	}
	defer rdr.Release()
	schema := rdr.Schema()
	recs, err := s.planner.constants.keep(sql, rdr)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return array.NewRecordReader(schema, recs)
}

// stream sends the batches of an open statement from a producer goroutine,
// which closes the statement when the reader ends or the client goes away.
func (s *Server) stream(o *openStatement) (*arrow.Schema, <-chan flight.StreamChunk) {
	ch := make(chan flight.StreamChunk, 1)
	s.producers.Add(1)
	go func() {
		defer s.producers.Done()
		defer close(ch)
		defer o.close()
		defer func() {
			if r := recover(); r != nil {
				err := s.panicked(o.ctx, "DoGet producer", r)
				select {
				case ch <- flight.StreamChunk{Err: err}:
				case <-o.ctx.Done():
				}
			}
		}()
		s.produce(o.ctx, o.rdr, ch, o.tables)
	}()
	return o.rdr.Schema(), ch
}

// produce sends every batch of rdr on ch until the reader ends or ctx is done.
// Errors are withheld as withheld says for tables.
func (s *Server) produce(ctx context.Context, rdr array.RecordReader, ch chan<- flight.StreamChunk, tables []backend.TableVersion) {
	a := accessFrom(ctx)
	for rdr.Next() {
		rec := rdr.RecordBatch()
		a.addRows(rec.NumRows())
		rec.Retain()
		select {
		case ch <- flight.StreamChunk{Data: rec}:
		case <-ctx.Done():
			rec.Release()
			return
		}
	}
	if err := rdr.Err(); err != nil {
		select {
		case ch <- flight.StreamChunk{Err: s.fail(ctx, "stream", withheld(tables, err))}:
		case <-ctx.Done():
		}
	}
}

// fail maps err to a status, logging what the client will not see.
func (s *Server) fail(ctx context.Context, op string, err error) error {
	st := toStatus(err)
	if isInternal(st) {
		s.logger(ctx).ErrorContext(ctx, "request failed", "op", op, "err", err)
	}
	return st
}

// ticketKey identifies a ticket in the running-query table without keeping
// the ticket itself.
func ticketKey(handle []byte) [32]byte { return sha256.Sum256(handle) }

// runningQueries maps ticket keys to the cancel functions of their queries,
// and remembers tickets cancelled before their DoGet started. A key may run
// more than once at a time (a prepared statement's handle is its ticket).
type runningQueries struct {
	mu        sync.Mutex
	running   map[[32]byte]map[*runningQuery]struct{}
	cancelled map[[32]byte]struct{}
}

// runningQuery is one registration of a key.
type runningQuery struct{ cancel context.CancelFunc }

func newRunningQueries() *runningQueries {
	return &runningQueries{running: map[[32]byte]map[*runningQuery]struct{}{}, cancelled: map[[32]byte]struct{}{}}
}

// start registers a query; it reports false if the ticket was cancelled.
func (r *runningQueries) start(key [32]byte, cancel context.CancelFunc) (*runningQuery, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cancelled[key]; ok {
		return nil, false
	}
	q := &runningQuery{cancel: cancel}
	set := r.running[key]
	if set == nil {
		set = map[*runningQuery]struct{}{}
		r.running[key] = set
	}
	set[q] = struct{}{}
	return q, true
}

// wasCancelled reports whether key was cancelled before it ran.
func (r *runningQueries) wasCancelled(key [32]byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.cancelled[key]
	return ok
}

// finish removes q's registration of key.
func (r *runningQueries) finish(key [32]byte, q *runningQuery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	set := r.running[key]
	delete(set, q)
	if len(set) == 0 {
		delete(r.running, key)
	}
}

// cancel stops the queries of key if they run, or marks the ticket so its
// DoGet will not start.
func (r *runningQueries) cancel(key [32]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if set, ok := r.running[key]; ok {
		for q := range set {
			q.cancel()
		}
		return
	}
	if len(r.cancelled) >= 100_000 {
		clear(r.cancelled)
	}
	r.cancelled[key] = struct{}{}
}

func (r *runningQueries) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, set := range r.running {
		for q := range set {
			q.cancel()
		}
	}
}

// CancelFlightInfo cancels the query behind a FlightInfo this server issued to
// the caller.
func (s *Server) CancelFlightInfo(ctx context.Context, req *flight.CancelFlightInfoRequest) (flight.CancelFlightInfoResult, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return flight.CancelFlightInfoResult{}, toStatus(err)
	}
	info := req.GetInfo()
	if info == nil || len(info.GetEndpoint()) == 0 {
		return flight.CancelFlightInfoResult{}, toStatus(fmt.Errorf("%w: no endpoint to cancel", errBadRequest))
	}
	for _, ep := range info.GetEndpoint() {
		handle, err := statementHandle(ep.GetTicket().GetTicket())
		if err != nil {
			return flight.CancelFlightInfoResult{}, toStatus(err)
		}
		if _, err := s.openFor(p, handle); err != nil {
			return flight.CancelFlightInfoResult{}, toStatus(err)
		}
		s.running.cancel(ticketKey(handle))
	}
	return flight.CancelFlightInfoResult{Status: flight.CancelStatusCancelled}, nil
}

// statementHandle extracts the sealed handle from a statement ticket.
func statementHandle(tkt []byte) ([]byte, error) {
	t, err := flightsql.GetStatementQueryTicket(&flight.Ticket{Ticket: tkt})
	if err != nil {
		return nil, ticket.ErrInvalid
	}
	return t.GetStatementHandle(), nil
}

// DoPutCommandStatementUpdate runs USE, SET and the write statements: CREATE
// TABLE … AS SELECT, INSERT INTO … SELECT | VALUES and DROP TABLE. It
// returns the number of rows written.
func (s *Server) DoPutCommandStatementUpdate(ctx context.Context, cmd flightsql.StatementUpdate) (int64, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return 0, toStatus(err)
	}
	if len(cmd.GetTransactionId()) > 0 {
		return 0, toStatus(fmt.Errorf("%w: transactions are not supported", errBadRequest))
	}
	if !p.MayQuery() {
		return 0, toStatus(errNotQuerier)
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return 0, toStatus(err)
	}
	w := s.whoIs(ctx, p)
	stmt, err := s.planner.Parse(cmd.GetQuery(), w)
	if err != nil {
		return 0, toStatus(err)
	}
	if a := accessFrom(ctx); a != nil {
		a.statementIs(stmt.Kind().String(), s.planner.accessText(w, cmd.GetQuery()))
	}
	switch {
	case stmt.Kind() == sqlgate.KindUse:
		err := s.planner.Use(ctx, w, stmt.UseSchema())
		if err == nil {
			err = s.sessions.setSchema(ctx, p, stmt.UseSchema())
		}
		if err != nil {
			return 0, s.fail(ctx, "use", err)
		}
		return 0, nil
	case stmt.Kind() == sqlgate.KindSet:
		return 0, nil
	case stmt.Kind() == sqlgate.KindCreateView, stmt.Kind() == sqlgate.KindDropView:
		if err := s.sessions.applyView(ctx, p, w.caller.Catalog, stmt); err != nil {
			return 0, s.fail(ctx, "view", err)
		}
		return 0, nil
	case stmt.IsWrite():
		n, err := s.executeWrite(ctx, w, stmt)
		if err != nil {
			return 0, s.fail(ctx, "write", err)
		}
		return n, nil
	}
	return 0, toStatus(fmt.Errorf("%w: queries return rows; run them with ExecuteQuery", errBadRequest))
}
