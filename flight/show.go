package flight

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

// SHOW DATABASES, SHOW TABLES, DESCRIBE and EXPLAIN are answered by the
// gateway, not by the engine's catalog: a statement ticket for one carries
// payloadShow and a showQuery instead of a ticketPayload. The SHOW kinds are
// answered at DoGet from the caller's authorized catalog view (visible and
// resolveRead), so they are authorized again when they run; EXPLAIN carries
// the rendered query and its pinned tables like a query ticket, is
// re-authorized like one, and asks the engine for its plan of that SQL.

// payloadShow is the version byte of a show ticket payload.
const payloadShow = 3

// maxShowPattern bounds a LIKE pattern carried in a ticket.
const maxShowPattern = 1024

// Show kinds in a showQuery.
const (
	showDatabases = "databases"
	showTables    = "tables"
	showColumns   = "columns"
	showExplain   = "explain"
)

// showQuery is a SHOW, DESCRIBE or EXPLAIN statement as its ticket carries it.
type showQuery struct {
	Kind    string  `json:"kind"`
	Schema  string  `json:"schema,omitempty"`  // tables, columns
	Table   string  `json:"table,omitempty"`   // columns
	Pattern *string `json:"pattern,omitempty"` // databases, tables
	// SQL and Tables: explain (the rendered query and its pinned versions).
	SQL    string                 `json:"sql,omitempty"`
	Tables []backend.TableVersion `json:"tables,omitempty"`
}

// describeSchema is DESCRIBE's result, MySQL's column names.
var describeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "Field", Type: arrow.BinaryTypes.String},
	{Name: "Type", Type: arrow.BinaryTypes.String},
	{Name: "Null", Type: arrow.BinaryTypes.String},
	{Name: "Key", Type: arrow.BinaryTypes.String},
	{Name: "Default", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "Extra", Type: arrow.BinaryTypes.String},
}, nil)

// explainSchema is EXPLAIN's result: one column "plan"; the first row is the
// SQL the gateway runs, the second the engine's plan of it.
var explainSchema = arrow.NewSchema([]arrow.Field{{Name: "plan", Type: arrow.BinaryTypes.String}}, nil)

// showSchema returns the result schema of q (MySQL's column names: a LIKE
// pattern is part of the name, as in MySQL).
func showSchema(q *showQuery) *arrow.Schema {
	name := ""
	switch q.Kind {
	case showColumns:
		return describeSchema
	case showExplain:
		return explainSchema
	case showDatabases:
		name = "Database"
	case showTables:
		name = "Tables_in_" + q.Schema
	}
	if q.Pattern != nil {
		name += " (" + *q.Pattern + ")"
	}
	return arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.BinaryTypes.String}}, nil)
}

// planShow plans a SHOW, DESCRIBE or EXPLAIN statement. The SHOW kinds are
// answered once here so that an error (a schema or table the caller may not
// see) is reported at planning, as for a query.
func (s *Server) planShow(ctx context.Context, p *authz.Principal, stmt *sqlgate.Statement) (*plan, error) {
	q := &showQuery{}
	switch stmt.Kind() {
	case sqlgate.KindShowDatabases:
		q.Kind = showDatabases
	case sqlgate.KindShowTables:
		q.Kind, q.Schema = showTables, stmt.ShowSchema()
	case sqlgate.KindDescribe:
		t := stmt.Target()
		q.Kind, q.Schema, q.Table = showColumns, t.Schema, t.Name
	case sqlgate.KindExplain:
		return s.planExplain(ctx, p, stmt)
	default:
		return nil, fmt.Errorf("%w: %s is not a SHOW statement", errBadRequest, stmt.Kind())
	}
	if pat, ok := stmt.ShowPattern(); ok {
		if len(pat) > maxShowPattern {
			return nil, fmt.Errorf("%w: the LIKE pattern is longer than %d bytes", errBadRequest, maxShowPattern)
		}
		q.Pattern = &pat
	}
	if _, err := s.showRows(ctx, p, q); err != nil {
		return nil, err
	}
	return &plan{schema: showSchema(q), show: q}, nil
}

// planExplain authorizes, binds and renders the query of EXPLAIN exactly as
// planQuery does for the query itself.
func (s *Server) planExplain(ctx context.Context, p *authz.Principal, stmt *sqlgate.Statement) (*plan, error) {
	if stmt.NumParams() > 0 {
		return nil, fmt.Errorf("%w: EXPLAIN of a statement with parameters is not supported", errBadRequest)
	}
	refs := stmt.Tables()
	tables, err := s.resolveRead(ctx, p, refs)
	if err != nil {
		return nil, err
	}
	if up, err := upstreamOf(tables); err != nil || up != nil {
		return nil, fmt.Errorf("%w: EXPLAIN is not supported on tables of an upstream engine", errBadRequest)
	}
	for _, v := range tables {
		if v.Policy != nil {
			// The plan would show the filter and the masks, which the
			// caller may not be allowed to read.
			return nil, &policyError{table: v.Name.String(), explain: true}
		}
	}
	r, release, err := s.render(ctx, p, stmt, tables)
	if err != nil {
		return nil, err
	}
	defer release()
	q := &showQuery{Kind: showExplain, SQL: r.sql, Tables: tables}
	return &plan{schema: explainSchema, show: q}, nil
}

// showRows answers a SHOW kind from the caller's authorized catalog view.
// A nil cell is NULL.
func (s *Server) showRows(ctx context.Context, p *authz.Principal, q *showQuery) ([][]*string, error) {
	var rows [][]*string
	match := func(name string) bool { return likeMatch(q.Pattern, name) }
	switch q.Kind {
	case showDatabases:
		l, err := s.visible(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, sc := range l.Schemas {
			if match(sc) {
				rows = append(rows, []*string{ptrTo(sc)})
			}
		}
	case showTables:
		if !p.MayReadNamespace(q.Schema) {
			return nil, deny(reasonNamespace, &notFoundError{kind: "schema", name: q.Schema})
		}
		l, err := s.visible(ctx, p)
		if err != nil {
			return nil, err
		}
		found := false
		for _, sc := range l.Schemas {
			found = found || sc == q.Schema
		}
		if !found {
			return nil, deny(reasonPrivilege, &notFoundError{kind: "schema", name: q.Schema})
		}
		for _, t := range l.Tables {
			if t.Name.Schema == q.Schema && match(t.Name.Name) {
				rows = append(rows, []*string{ptrTo(t.Name.Name)})
			}
		}
	case showColumns:
		// The same resolution as a query reading the table: a table the
		// caller may not read and a missing one give the same NotFound.
		tv, err := s.resolveRead(ctx, p, []sqlgate.TableRef{{Schema: q.Schema, Name: q.Table}})
		if err != nil {
			return nil, err
		}
		for _, c := range tv[0].Columns {
			rows = append(rows, []*string{ptrTo(c.Name), ptrTo(c.Type), ptrTo("YES"), ptrTo(""), nil, ptrTo("")})
		}
	default:
		return nil, ticket.ErrInvalid
	}
	return rows, nil
}

func ptrTo(s string) *string { return &s }

// encodeShow is the ticket payload of a show plan.
func encodeShow(q *showQuery) ([]byte, error) {
	b, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	return append([]byte{payloadShow}, b...), nil
}

// isShowPayload reports whether a ticket payload is a show payload.
func isShowPayload(b []byte) bool { return len(b) > 0 && b[0] == payloadShow }

// doGetShow answers a show ticket: the SHOW kinds from the catalog view as
// it is now, EXPLAIN from the engine after re-authorizing its tables.
func (s *Server) doGetShow(ctx context.Context, p *authz.Principal, handle, payload []byte) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	var q showQuery
	if json.Unmarshal(payload[1:], &q) != nil {
		return nil, nil, toStatus(ticket.ErrInvalid)
	}
	var rows [][]*string
	switch q.Kind {
	case showExplain:
		if q.SQL == "" {
			return nil, nil, toStatus(ticket.ErrInvalid)
		}
		if err := s.reauthorize(ctx, p, q.Tables); err != nil {
			return nil, nil, s.fail(ctx, "reauthorize", err)
		}
		engine, err := s.enginePlan(ctx, p, handle, q.SQL, q.Tables)
		if err != nil {
			return nil, nil, err // already a status
		}
		rows = [][]*string{{ptrTo(q.SQL)}, {ptrTo(engine)}}
	default:
		release, err := s.planning(ctx, p)
		if err != nil {
			return nil, nil, s.fail(ctx, "admit", err)
		}
		r, err := s.showRows(ctx, p, &q)
		release()
		if err != nil {
			return nil, nil, s.fail(ctx, "show", err)
		}
		rows = r
	}
	schema := showSchema(&q)
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			f := b.Field(i).(*array.StringBuilder)
			if v == nil {
				f.AppendNull()
			} else {
				f.Append(*v)
			}
		}
	}
	return oneBatch(schema, b)
}

// maxEnginePlan bounds the engine's plan text returned by EXPLAIN.
const maxEnginePlan = 1 << 20

// enginePlan runs EXPLAIN of the rendered sql (which passed the gate's
// lexical check; the prefix keeps it one statement) on the pinned versions
// and returns the engine's physical plan, with paths scrubbed. Errors are
// statuses.
func (s *Server) enginePlan(ctx context.Context, p *authz.Principal, handle []byte, sql string, tables []backend.TableVersion) (string, error) {
	schema, ch, err := s.execute(ctx, p, ticketKey(handle), "EXPLAIN "+sql, nil, tables)
	if err != nil {
		return "", err
	}
	col := -1
	for i, f := range schema.Fields() {
		if f.Name == "explain_value" {
			col = i
		}
	}
	var sb strings.Builder
	var ferr error
	for c := range ch {
		if c.Err != nil {
			ferr = c.Err
			continue
		}
		if col >= 0 && ferr == nil {
			if a, ok := c.Data.Column(col).(*array.String); ok {
				for i := 0; i < a.Len(); i++ {
					if sb.Len() < maxEnginePlan && a.IsValid(i) {
						sb.WriteString(a.Value(i))
					}
				}
			}
		}
		c.Data.Release()
	}
	if ferr != nil {
		return "", ferr
	}
	if col < 0 {
		return "", s.fail(ctx, "explain", fmt.Errorf("engine EXPLAIN returned no explain_value column"))
	}
	out := sb.String()
	if len(out) > maxEnginePlan {
		out = out[:maxEnginePlan]
	}
	return scrubPlan(out), nil
}

// planPathRE matches an absolute file path (two or more components) or a
// URL, as an engine plan could print for a scan.
var planPathRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"│]+|/[^\s/'"│()]+(?:/[^\s/'"│()]*)+`)

// scrubPlan replaces every path in an engine plan by <path>, so a plan never
// shows where a tenant's files are.
func scrubPlan(plan string) string {
	return planPathRE.ReplaceAllString(plan, "<path>")
}
