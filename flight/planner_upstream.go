package flight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/backend/upstream"
)

// Planning a query over the tables of an upstream engine (upstream.go runs
// it).

// planUpstream plans a query over tables of one upstream engine: the text is
// parsed again for the engine's dialect, every table is printed as its
// engine-side name (through its row filter and masks), and the engine
// describes the result.
//
// parsed is the statement as the gate parsed it for the embedded engine: its
// tables are the ones resolved, and a prepared statement keeps it (with
// the text) to be refreshed.
func (pn *planner) planUpstream(ctx context.Context, w who, text, schema string, parsed *sqlgate.Statement, tables []backend.TableVersion, up *backend.UpstreamTable) (*plan, error) {
	refs := parsed.Tables()
	if pn.upstreams == nil {
		return nil, errNoUpstreams
	}
	d, err := sqlgate.ParseDialect(up.Dialect)
	if err != nil || d == sqlgate.DialectDuckDB {
		return nil, fmt.Errorf("%w: the engine of table %s has an unsupported dialect", errBadRequest, tables[0].Name)
	}
	stmt, err := pn.gate.ParseFor(text, schema, d)
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
			if r.Policy, err = pn.preparePolicy(w, v, r.Columns, d); err != nil {
				return nil, err
			}
		}
		rel[ref] = r
	}
	sql, err := stmt.Render(rel)
	if err != nil {
		return nil, err
	}
	sch, err := pn.upstreamSchema(ctx, up, sql)
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
func (pn *planner) upstreamSchema(ctx context.Context, up *backend.UpstreamTable, sql string) (*arrow.Schema, error) {
	sch, err := pn.upstreams.Schema(ctx, target(up), sql)
	if !errors.Is(err, upstream.ErrNoSchema) {
		return sch, mapUpstreamErr(err)
	}
	rdr, err := pn.upstreams.Execute(ctx, target(up), sql)
	if err != nil {
		return nil, mapUpstreamErr(err)
	}
	defer rdr.Release()
	return rdr.Schema(), nil
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
