package flight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/backend/upstream"
)

// UpstreamEngines runs SQL on the upstream Flight SQL engines that metasrv's
// upstream catalogs register; upstream.Pool implements it. The gateway
// prints every statement it sends and serves DoGet itself: an engine's
// tickets and locations never reach clients.
type UpstreamEngines interface {
	// Schema returns the result schema of sql without its rows.
	Schema(ctx context.Context, t upstream.Target, sql string) (*arrow.Schema, error)
	// Execute runs sql and streams its rows.
	Execute(ctx context.Context, t upstream.Target, sql string) (array.RecordReader, error)
}

// errNoUpstreams answers a statement over an upstream table on a gateway
// configured with no upstream engines.
var errNoUpstreams = fmt.Errorf("%w: this gateway serves no upstream engines", backend.ErrUnavailable)

// errMixedEngines refuses a statement over tables of different engines.
var errMixedEngines = fmt.Errorf("%w: a statement may not read tables of different engines (the embedded engine and an upstream one, or two upstream engines)", errBadRequest)

// upstreamOf returns the upstream engine the tables live in: nil when none
// is an upstream table, an error when they do not all live in one engine.
func upstreamOf(tables []backend.TableVersion) (*backend.UpstreamTable, error) {
	if len(tables) == 0 {
		return nil, nil
	}
	first := tables[0].Upstream
	for _, v := range tables[1:] {
		if (v.Upstream == nil) != (first == nil) || (first != nil && !sameEngine(first, v.Upstream)) {
			return nil, errMixedEngines
		}
	}
	return first, nil
}

// sameEngine reports whether a and b are tables of one engine, reached the
// same way.
func sameEngine(a, b *backend.UpstreamTable) bool {
	return a.Address == b.Address && a.TLS == b.TLS && a.Credentials == b.Credentials && a.Dialect == b.Dialect
}

func target(up *backend.UpstreamTable) upstream.Target {
	return upstream.Target{Address: up.Address, TLS: up.TLS, Credentials: up.Credentials}
}

// planUpstream plans a query over tables of one upstream engine: the text is
// parsed again for the engine's dialect, every table is printed as its
// engine-side name (through its row filter and masks), and the engine
// describes the result.
//
// parsed is the statement as the gate parsed it for the embedded engine: its
// tables are the ones resolved, and a prepared statement keeps it (with
// the text) to be refreshed.
func (s *Server) planUpstream(ctx context.Context, p *authz.Principal, text, schema string, parsed *sqlgate.Statement, tables []backend.TableVersion, up *backend.UpstreamTable) (*plan, error) {
	refs := parsed.Tables()
	if s.cfg.Upstreams == nil {
		return nil, errNoUpstreams
	}
	d, err := sqlgate.ParseDialect(up.Dialect)
	if err != nil || d == sqlgate.DialectDuckDB {
		return nil, fmt.Errorf("%w: the engine of table %s has an unsupported dialect", errBadRequest, tables[0].Name)
	}
	stmt, err := s.gate.ParseFor(text, schema, d)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(stmt.Tables(), refs) {
		return nil, errors.New("flight: the upstream dialect read other tables than the statement")
	}
	rel := make(map[sqlgate.TableRef]sqlgate.Relation, len(refs))
	for i, ref := range refs {
		v := &tables[i]
		sch, name, ok := strings.Cut(v.Upstream.Name, ".")
		if !ok || sch == "" || name == "" {
			return nil, fmt.Errorf("%w: table %s has no usable engine-side name", errBadRequest, v.Name)
		}
		r := sqlgate.Relation{Schema: sch, Name: name, Columns: v.ColumnNames(), Types: engineTypes(v.Columns)}
		if v.Policy != nil {
			if r.Policy, err = s.preparePolicy(p, v, r.Columns, d); err != nil {
				return nil, err
			}
		}
		rel[ref] = r
	}
	sql, err := stmt.Render(rel)
	if err != nil {
		return nil, err
	}
	sch, err := s.upstreamSchema(ctx, up, sql)
	if err != nil {
		return nil, withheld(tables, err)
	}
	return &plan{sql: sql, schema: sch, params: arrow.NewSchema(nil, nil), tables: tables,
		stmt: parsed, text: text, defSchema: schema}, nil
}

// upstreamSchema asks the engine for the result schema of sql. An engine
// that cannot say without running the query (arrow-go's SQLite example
// types columns from the first row) runs it, and the stream's schema is
// taken before its rows are dropped: clients check that DoGet streams the
// schema GetFlightInfo announced, so it must come from the same query.
func (s *Server) upstreamSchema(ctx context.Context, up *backend.UpstreamTable, sql string) (*arrow.Schema, error) {
	sch, err := s.cfg.Upstreams.Schema(ctx, target(up), sql)
	if !errors.Is(err, upstream.ErrNoSchema) {
		return sch, mapUpstreamErr(err)
	}
	rdr, err := s.cfg.Upstreams.Execute(ctx, target(up), sql)
	if err != nil {
		return nil, mapUpstreamErr(err)
	}
	defer rdr.Release()
	return rdr.Schema(), nil
}

// executeUpstream runs a planned statement on its engine.
func (s *Server) executeUpstream(ctx context.Context, up *backend.UpstreamTable, sql string, args []any) (array.RecordReader, error) {
	if s.cfg.Upstreams == nil {
		return nil, errNoUpstreams
	}
	if len(args) > 0 {
		return nil, fmt.Errorf("%w: parameters are not supported on tables of an upstream engine", errBadRequest)
	}
	rdr, err := s.cfg.Upstreams.Execute(ctx, target(up), sql)
	return rdr, mapUpstreamErr(err)
}

// mapUpstreamErr turns an engine the gateway may not or cannot reach as
// configured (not on its allow-list, a bad address or credentials file in
// the catalog, the pool closing) into an unavailable engine: clients see
// Unavailable, the log says why.
func mapUpstreamErr(err error) error {
	for _, e := range []error{upstream.ErrNotAllowed, upstream.ErrInvalidTarget, upstream.ErrCredentials, upstream.ErrClosed} {
		if errors.Is(err, e) {
			return fmt.Errorf("%w: the table's engine cannot be reached from this gateway: %w", backend.ErrUnavailable, err)
		}
	}
	return err
}

// engineTypes maps a table's catalog column types to the engine type names
// masks know (VARCHAR, BIGINT, DOUBLE); others are "OTHER" (masked to NULL).
func engineTypes(cols []backend.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		t, _ := arrowType(c.Type)
		switch t.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			out[i] = "VARCHAR"
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			out[i] = "BIGINT"
		case arrow.FLOAT32, arrow.FLOAT64:
			out[i] = "DOUBLE"
		default:
			out[i] = "OTHER"
		}
	}
	return out
}
