package flight

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
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

// plan is an authorized statement: the SQL printed by the gate, the table
// versions it reads, the result schema and the parameter schema, ready to
// execute for the principal that planned it.
type plan struct {
	sql string
	// pushed and kinds: sql with the comparisons of columns with parameters
	// repeated behind row filters, and the kind each parameter's value
	// must have for it to run (sqlgate.Statement.RenderPushed; sqlFor).
	pushed    string
	kinds     []sqlgate.ParamKind
	numParams int
	schema    *arrow.Schema
	// params has numParams fields, typed as the backend inferred them
	// (arrow.Null where it could not).
	params *arrow.Schema
	// tables are the versions sql reads, pinned at planning.
	tables []backend.TableVersion
	// stmt is the gate's statement, kept so a prepared statement can be
	// resolved and rendered again when it runs.
	stmt *sqlgate.Statement
	// show is set for SHOW, DESCRIBE and EXPLAIN, answered by the gateway
	// (see show.go); sql is then empty.
	show *showQuery
	// write is a prepared write statement (CTAS, INSERT, DROP), run by
	// DoPutPreparedStatementUpdate; sql is then empty.
	write *sqlgate.Statement
	// text and defSchema are the client's statement and default schema of
	// a plan over an upstream engine, planned again in the engine's
	// dialect when a prepared statement's tables change (refresh).
	text, defSchema string
}

// planQuery runs the gate for one statement: parse, require a query, check
// every table against the principal's namespace grants, resolve and
// authorize it through the catalog, bind its files, render canonical SQL and
// describe it. USE statements update the caller's session and plan to an
// empty result; SHOW, DESCRIBE and EXPLAIN plan to a show plan (pl.show
// set), answered when the statement runs. planQuery plans prepared
// statements (JDBC prepares every statement): writes plan to a prepared
// write, run by DoPutPreparedStatementUpdate.
func (s *Server) planQuery(ctx context.Context, p *authz.Principal, text string) (*plan, error) {
	return s.planText(ctx, p, text, false)
}

// planStatement is planQuery for a plain (not prepared) statement: a write
// is refused (it runs with ExecuteUpdate).
func (s *Server) planStatement(ctx context.Context, p *authz.Principal, text string) (*plan, error) {
	return s.planText(ctx, p, text, true)
}

// planText plans text for planQuery (prepared) or planStatement (plain),
// under a planning permit.
func (s *Server) planText(ctx context.Context, p *authz.Principal, text string, plain bool) (*plan, error) {
	if !p.MayQuery() {
		return nil, errNotQuerier
	}
	release, err := s.admitPlanning(ctx, p)
	if err != nil {
		return nil, err
	}
	defer release()
	st := s.sessions.state(ctx, p)
	stmt, err := s.gate.Parse(text, st.schema)
	if err != nil {
		return nil, err
	}
	switch {
	case stmt.Kind() == sqlgate.KindUse:
		return s.use(ctx, p, stmt.UseSchema())
	case stmt.Kind() == sqlgate.KindSet:
		// Accepted only when it changes nothing (sqlgate/session.go).
		return &plan{schema: arrow.NewSchema(nil, nil)}, nil
	case stmt.IsWrite() && !plain:
		// Prepared (JDBC prepares every statement): run at
		// DoPutPreparedStatementUpdate, authorized then.
		return &plan{schema: arrow.NewSchema(nil, nil), numParams: stmt.NumParams(), write: stmt}, nil
	case stmt.IsWrite():
		return nil, fmt.Errorf("%w: %s changes data; run it with ExecuteUpdate", errBadRequest, stmt.Kind())
	case stmt.IsShow() || stmt.Kind() == sqlgate.KindExplain:
		return s.planShow(ctx, p, stmt)
	}
	refs := stmt.Tables()
	tables, err := s.resolveRead(ctx, p, refs)
	if err != nil {
		return nil, err
	}
	if err := checkColumns(stmt, refs, tables); err != nil {
		return nil, err
	}
	if up, err := upstreamOf(tables); err != nil {
		return nil, err
	} else if up != nil {
		return s.planUpstream(ctx, p, text, st.schema, stmt, tables, up)
	}
	r, release, err := s.render(ctx, p, stmt, tables)
	if err != nil {
		return nil, err
	}
	defer release()
	d, err := s.cfg.Backend.Describe(ctx, p.Tenant().String(), r.sql, stmt.NumParams())
	if err != nil {
		return nil, withheld(tables, err)
	}
	return &plan{sql: r.sql, pushed: r.pushed, kinds: r.kinds, numParams: stmt.NumParams(), schema: d.Result, params: d.Params, tables: tables, stmt: stmt}, nil
}

// checkColumns refuses a column reference that no table of stmt has, in
// MySQL's words, before the engine sees the statement (its message would
// name its own candidates). tables are refs resolved for the caller, in
// order: every one is readable, so the answer tells nothing about a table
// the caller may not read.
func checkColumns(stmt *sqlgate.Statement, refs []sqlgate.TableRef, tables []backend.TableVersion) error {
	if len(refs) != len(tables) {
		return nil
	}
	cols := make(map[sqlgate.TableRef][]string, len(refs))
	for i, r := range refs {
		names := make([]string, len(tables[i].Columns))
		for j, c := range tables[i].Columns {
			names[j] = c.Name
		}
		cols[r] = names
	}
	return stmt.CheckColumns(cols)
}

// sqlFor returns the text to run with args: the one with parameters pushed
// behind row filters when every value has the kind it needs there (a value
// of another kind would be converted at each row the filter hides, and a
// failure would tell they exist), else the plain one.
func (pl *plan) sqlFor(args []any) string {
	if pl.pushed == "" || len(args) != len(pl.kinds) {
		return pl.sql
	}
	for i, k := range pl.kinds {
		switch v := args[i]; k {
		case sqlgate.ParamInteger:
			if _, ok := v.(int64); !ok && v != nil {
				return pl.sql
			}
		case sqlgate.ParamText:
			if _, ok := v.(string); !ok && v != nil {
				return pl.sql
			}
		case sqlgate.ParamAny:
		default:
			return pl.sql
		}
	}
	return pl.pushed
}

// refresh resolves a prepared plan's tables again, so every execution is
// authorized now and reads the current versions; the SQL is rendered again
// only when a version changed.
func (s *Server) refresh(ctx context.Context, p *authz.Principal, pl *plan) (*plan, error) {
	if pl.stmt == nil || len(pl.tables) == 0 {
		return pl, nil
	}
	refs := pl.stmt.Tables()
	tables, err := s.resolveRead(ctx, p, refs)
	if err != nil {
		return nil, err
	}
	if slices.EqualFunc(tables, pl.tables, func(a, b backend.TableVersion) bool { return a.Same(&b) }) {
		return pl, nil
	}
	up, err := upstreamOf(tables)
	if err != nil {
		return nil, err
	}
	if up != nil || pl.text != "" {
		if up == nil || pl.text == "" {
			return nil, errPreparedChanged
		}
		np, err := s.planUpstream(ctx, p, pl.text, pl.defSchema, pl.stmt, tables, up)
		if err != nil {
			return nil, err
		}
		if !np.schema.Equal(pl.schema) {
			return nil, errPreparedChanged
		}
		np.numParams, np.params = pl.numParams, pl.params
		return np, nil
	}
	r, release, err := s.render(ctx, p, pl.stmt, tables)
	if err != nil {
		return nil, err
	}
	defer release()
	// The client holds the schema announced at preparation: a result of
	// another shape (a column added or retyped, a mask's form) is refused
	// rather than streamed under it.
	d, err := s.cfg.Backend.Describe(ctx, p.Tenant().String(), r.sql, pl.numParams)
	if err != nil {
		return nil, withheld(tables, err)
	}
	if !d.Result.Equal(pl.schema) {
		return nil, errPreparedChanged
	}
	np := *pl
	np.sql, np.pushed, np.kinds, np.tables = r.sql, r.pushed, r.kinds, tables
	return &np, nil
}

// errPreparedChanged refuses a prepared statement whose tables now give a
// result of another shape than announced when it was prepared.
var errPreparedChanged = fmt.Errorf("%w: the statement's result changed shape since it was prepared (a table or a policy changed); prepare it again", errStale)

// use switches the caller's default schema. A schema the caller may not see
// and one that does not exist give the same answer.
func (s *Server) use(ctx context.Context, p *authz.Principal, schema string) (*plan, error) {
	notFound := &notFoundError{kind: "schema", name: schema}
	if !p.MayReadNamespace(schema) {
		return nil, deny(reasonNamespace, notFound)
	}
	l, err := s.cfg.Catalog.List(ctx, s.caller(ctx, p))
	if err != nil {
		return nil, err
	}
	if !slices.Contains(l.Schemas, schema) {
		return nil, deny(reasonPrivilege, notFound)
	}
	sess, err := s.sessions.obtain(ctx, p)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	sess.state.schema = schema
	sess.mu.Unlock()
	return &plan{schema: arrow.NewSchema(nil, nil)}, nil
}

// GetFlightInfoStatement plans a query and returns its schema and a sealed
// ticket bound to the caller.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	pl, err := s.planStatement(ctx, p, cmd.GetQuery())
	if err != nil {
		return nil, s.fail(ctx, "plan", err)
	}
	if pl.numParams > 0 {
		return nil, toStatus(fmt.Errorf("%w: the statement has parameters; use a prepared statement", errBadRequest))
	}
	var payload []byte
	if pl.show != nil {
		payload, err = encodeShow(pl.show)
	} else {
		payload, err = encodePayload(pl)
	}
	if err != nil {
		return nil, s.fail(ctx, "ticket", err)
	}
	sealed, err := s.cfg.Tickets.Seal(s.rand, ticket.Claims{
		Principal: p.ID().String(),
		Tenant:    p.Tenant().String(),
		Expiry:    s.cfg.Now().Add(s.cfg.TicketTTL),
		Payload:   payload,
	})
	if err != nil {
		return nil, s.fail(ctx, "seal", err)
	}
	tkt, err := flightsql.CreateStatementQueryTicket(sealed)
	if err != nil {
		return nil, s.fail(ctx, "ticket", err)
	}
	return s.flightInfo(desc, pl.schema, tkt), nil
}

func (s *Server) flightInfo(desc *flight.FlightDescriptor, schema *arrow.Schema, tkt []byte) *flight.FlightInfo {
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, s.mem),
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
	pl, err := s.planStatement(ctx, p, cmd.GetQuery())
	if err != nil {
		return nil, s.fail(ctx, "plan", err)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(pl.schema, s.mem)}, nil
}

// DoGetStatement opens a sealed ticket and streams its result.
func (s *Server) DoGetStatement(ctx context.Context, cmd flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	handle := cmd.GetStatementHandle()
	claims, err := s.cfg.Tickets.Open(handle, s.cfg.Now(), p.ID().String(), p.Tenant().String())
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if isShowPayload(claims.Payload) {
		return s.doGetShow(ctx, p, handle, claims.Payload)
	}
	tp, err := decodePayload(claims.Payload)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if tp.SQL == "" {
		schema := arrow.NewSchema(nil, nil)
		ch := make(chan flight.StreamChunk)
		close(ch)
		return schema, ch, nil
	}
	if err := s.reauthorize(ctx, p, tp.Tables); err != nil {
		return nil, nil, s.fail(ctx, "reauthorize", err)
	}
	return s.execute(ctx, p, ticketKey(handle), tp.SQL, nil, tp.Tables)
}

// execute runs sql over the pinned table versions and streams batches. The
// query is registered under key so CancelFlightInfo can stop it.
func (s *Server) execute(ctx context.Context, p *authz.Principal, key [32]byte, sql string, args []any, tables []backend.TableVersion) (*arrow.Schema, <-chan flight.StreamChunk, error) {
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
		unpin, err = s.rebind(ctx, p.Tenant().String(), tables)
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
		rdr, err = s.cfg.Backend.Execute(ctx, p.Tenant().String(), sql, args)
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
	for rdr.Next() {
		rec := rdr.RecordBatch()
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
		if _, err := s.cfg.Tickets.Open(handle, s.cfg.Now(), p.ID().String(), p.Tenant().String()); err != nil {
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
	stmt, err := s.gate.Parse(cmd.GetQuery(), s.sessions.state(ctx, p).schema)
	if err != nil {
		return 0, toStatus(err)
	}
	switch {
	case stmt.Kind() == sqlgate.KindUse:
		if _, err := s.use(ctx, p, stmt.UseSchema()); err != nil {
			return 0, s.fail(ctx, "use", err)
		}
		return 0, nil
	case stmt.Kind() == sqlgate.KindSet:
		return 0, nil
	case stmt.IsWrite():
		n, err := s.executeWrite(ctx, p, stmt)
		if err != nil {
			return 0, s.fail(ctx, "write", err)
		}
		return n, nil
	}
	return 0, toStatus(fmt.Errorf("%w: queries return rows; run them with ExecuteQuery", errBadRequest))
}
