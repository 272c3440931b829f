package flight

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/protobuf/proto"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

// plan is an authorized statement: the SQL printed by the gate, the result
// schema and the parameter schema, ready to execute for the principal that
// planned it.
type plan struct {
	sql       string
	numParams int
	schema    *arrow.Schema
	// params has numParams fields, typed as the backend inferred them
	// (arrow.Null where it could not).
	params *arrow.Schema
}

// planQuery runs the gate for one statement: parse, require a query, check
// every table against the principal's namespace grants, resolve through the
// backend, render canonical SQL and describe it. USE statements update the
// caller's session and plan to an empty result.
func (s *Server) planQuery(ctx context.Context, p *authz.Principal, text string) (*plan, error) {
	if !p.MayQuery() {
		return nil, errNotQuerier
	}
	st := s.sessions.state(ctx, p)
	if st.catalog != "" && st.catalog != s.cfg.DefaultCatalog {
		return nil, &notFoundError{kind: "catalog", name: st.catalog}
	}
	stmt, err := s.gate.Parse(text, st.schema)
	if err != nil {
		return nil, err
	}
	if stmt.Kind() == sqlgate.KindUse {
		return s.use(ctx, p, stmt.UseSchema())
	}
	refs := stmt.Tables()
	// The local gate runs first and on every reference, so a denied table never
	// reaches the backend; the error is the same as for a missing one.
	for _, ref := range refs {
		if !p.MayReadNamespace(ref.Schema) {
			return nil, tableNotFound(ref.Schema, ref.Name)
		}
	}
	names := make([]backend.TableName, len(refs))
	for i, ref := range refs {
		names[i] = backend.TableName{Schema: ref.Schema, Name: ref.Name}
	}
	tables, err := s.cfg.Backend.Resolve(ctx, p.Tenant().String(), names)
	if err != nil {
		if errors.Is(err, backend.ErrNotFound) {
			return nil, s.firstMissing(ctx, p, names)
		}
		return nil, err
	}
	rel := make(map[sqlgate.TableRef]sqlgate.Relation, len(refs))
	for i, ref := range refs {
		t := tables[i]
		rel[ref] = sqlgate.Relation{Schema: t.Relation.Schema, Name: t.Relation.Name, Columns: t.Columns}
	}
	sql, err := stmt.Render(rel)
	if err != nil {
		return nil, err
	}
	d, err := s.cfg.Backend.Describe(ctx, p.Tenant().String(), sql, stmt.NumParams())
	if err != nil {
		return nil, err
	}
	return &plan{sql: sql, numParams: stmt.NumParams(), schema: d.Result, params: d.Params}, nil
}

// firstMissing names the first table (in sorted order) that does not resolve,
// so the message does not depend on which check failed.
func (s *Server) firstMissing(ctx context.Context, p *authz.Principal, names []backend.TableName) error {
	for _, n := range names {
		if _, err := s.cfg.Backend.Resolve(ctx, p.Tenant().String(), []backend.TableName{n}); err != nil {
			return tableNotFound(n.Schema, n.Name)
		}
	}
	return &notFoundError{kind: "table", name: names[0].String()}
}

// use switches the caller's default schema. A schema the caller may not read
// and one that does not exist give the same answer.
func (s *Server) use(ctx context.Context, p *authz.Principal, schema string) (*plan, error) {
	notFound := &notFoundError{kind: "schema", name: schema}
	if !p.MayReadNamespace(schema) {
		return nil, notFound
	}
	tables, err := s.cfg.Backend.Tables(ctx, p.Tenant().String())
	if err != nil {
		return nil, err
	}
	found := false
	for _, t := range tables {
		if t.Name.Schema == schema {
			found = true
			break
		}
	}
	if !found {
		return nil, notFound
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

// Ticket payload: one version byte, then the rendered SQL. A ticket for an
// empty plan (USE) carries no SQL.
const payloadV1 = 1

func encodePayload(pl *plan) []byte {
	return append([]byte{payloadV1}, pl.sql...)
}

func decodePayload(b []byte) (string, error) {
	if len(b) < 1 || b[0] != payloadV1 {
		return "", ticket.ErrInvalid
	}
	return string(b[1:]), nil
}

// GetFlightInfoStatement plans a query and returns its schema and a sealed
// ticket bound to the caller.
func (s *Server) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	pl, err := s.planQuery(ctx, p, cmd.GetQuery())
	if err != nil {
		return nil, s.fail(ctx, "plan", err)
	}
	if pl.numParams > 0 {
		return nil, toStatus(fmt.Errorf("%w: the statement has parameters; use a prepared statement", errBadRequest))
	}
	sealed, err := s.cfg.Tickets.Seal(s.rand, ticket.Claims{
		Principal: p.ID().String(),
		Tenant:    p.Tenant().String(),
		Expiry:    s.cfg.Now().Add(s.cfg.TicketTTL),
		Payload:   encodePayload(pl),
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
	pl, err := s.planQuery(ctx, p, cmd.GetQuery())
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
	sql, err := decodePayload(claims.Payload)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if sql == "" {
		schema := arrow.NewSchema(nil, nil)
		ch := make(chan flight.StreamChunk)
		close(ch)
		return schema, ch, nil
	}
	return s.execute(ctx, p, ticketKey(handle), sql, nil)
}

// execute runs sql and streams batches. The query is registered under key so
// CancelFlightInfo can stop it.
func (s *Server) execute(ctx context.Context, p *authz.Principal, key [32]byte, sql string, args []any) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ctx, cancel := context.WithCancel(ctx)
	if !s.running.start(key, cancel) {
		cancel()
		return nil, nil, toStatus(errCanceledByClient)
	}
	// Waiting for a permit happens under the registered context, so
	// CancelFlightInfo also stops a queued statement.
	release, err := s.admit.acquire(ctx, p.Tenant().String())
	if err != nil {
		s.running.finish(key)
		cancel()
		return nil, nil, s.fail(ctx, "admit", err)
	}
	rdr, err := s.cfg.Backend.Execute(ctx, p.Tenant().String(), sql, args)
	if err != nil {
		release()
		s.running.finish(key)
		cancel()
		return nil, nil, s.fail(ctx, "execute", err)
	}
	ch := make(chan flight.StreamChunk, 1)
	s.producers.Add(1)
	go func() {
		defer s.producers.Done()
		defer close(ch)
		defer cancel()
		defer s.running.finish(key)
		// The permits go back once the engine's reader is released.
		defer release()
		defer rdr.Release()
		s.produce(ctx, rdr, ch)
	}()
	return rdr.Schema(), ch, nil
}

// produce sends every batch of rdr on ch until the reader ends or ctx is done.
func (s *Server) produce(ctx context.Context, rdr array.RecordReader, ch chan<- flight.StreamChunk) {
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
		case ch <- flight.StreamChunk{Err: s.fail(ctx, "stream", err)}:
		case <-ctx.Done():
		}
	}
}

// fail maps err to a status, logging what the client will not see.
func (s *Server) fail(ctx context.Context, op string, err error) error {
	st := toStatus(err)
	if isInternal(st) {
		s.log.ErrorContext(ctx, "request failed", "op", op, "err", err)
	}
	return st
}

// ticketKey identifies a ticket in the running-query table without keeping
// the ticket itself.
func ticketKey(handle []byte) [32]byte { return sha256.Sum256(handle) }

// runningQueries maps ticket keys to the cancel functions of their queries,
// and remembers tickets cancelled before their DoGet started.
type runningQueries struct {
	mu        sync.Mutex
	running   map[[32]byte]context.CancelFunc
	cancelled map[[32]byte]struct{}
}

func newRunningQueries() *runningQueries {
	return &runningQueries{running: map[[32]byte]context.CancelFunc{}, cancelled: map[[32]byte]struct{}{}}
}

// start registers a query; it reports false if the ticket was cancelled.
func (r *runningQueries) start(key [32]byte, cancel context.CancelFunc) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cancelled[key]; ok {
		return false
	}
	r.running[key] = cancel
	return true
}

func (r *runningQueries) finish(key [32]byte) {
	r.mu.Lock()
	delete(r.running, key)
	r.mu.Unlock()
}

// cancel stops the query of key if it runs, or marks the ticket so its DoGet
// will not start.
func (r *runningQueries) cancel(key [32]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.running[key]; ok {
		c()
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
	for _, c := range r.running {
		c()
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

var _ = proto.Marshal

// DoPutCommandStatementUpdate accepts only USE: lakegate is read-only, and
// drivers send USE through the update path.
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
	if stmt.Kind() != sqlgate.KindUse {
		return 0, toStatus(fmt.Errorf("%w: only queries and USE are supported; run queries with ExecuteQuery", errBadRequest))
	}
	if _, err := s.use(ctx, p, stmt.UseSchema()); err != nil {
		return 0, s.fail(ctx, "use", err)
	}
	return 0, nil
}
