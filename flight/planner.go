package flight

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
)

// planner turns a caller's statement into an authorized plan, and
// authorizes a plan again when it runs. It holds what planning needs — the
// gate, the catalog, the engine and its files, the upstream engines — and
// nothing of the RPCs: the Server authenticates, takes the admission
// permits, reads the caller's session, seals tickets and executes; the
// planner decides what may run.
//
// Its methods with exported names are what the Server calls:
//
//   - Plan: statement text to a plan (query, SHOW, EXPLAIN, upstream, a
//     prepared write, USE and SET), resolving the statement's tables once.
//   - Refresh: a prepared plan authorized again for one execution.
//   - Reauthorize: a ticket's pinned versions checked again at DoGet.
//   - Bind: a plan's pinned versions made readable by the engine before it
//     runs.
//   - Parse and Use: a statement run with ExecuteUpdate, and USE there.
//   - ResolveStatement and Render: the source query of a write (write.go),
//     which takes an execution permit between the two.
//   - Visible, Show: the catalog view of discovery and SHOW.
//
// Its other methods are the steps of those: resolving, binding through
// policies and localizing tables (planner_tables.go), SHOW, DESCRIBE and
// EXPLAIN (planner_show.go), and queries over an upstream engine
// (planner_upstream.go).
type planner struct {
	gate      *sqlgate.Gate
	catalog   backend.Governance
	engine    backend.Backend
	files     TableFiles
	upstreams UpstreamEngines
	// defaultCatalog is the catalog of a session that chose none.
	defaultCatalog string
	// fullText holds the tenants whose access events keep statements
	// whole (Config.AccessLogFullText).
	fullText map[string]bool
	// normalized remembers recent statements' normalised texts.
	normalized normalizedTexts
	// reused holds plain statements' plans for their next run
	// (planner_reuse.go).
	reused reusedPlans
	// constants knows the renderings of constant statements and keeps
	// their results (constant.go).
	constants constantResults
}

// newPlanner returns the planner of a Server configured with c (defaults
// applied).
func newPlanner(c Config) *planner {
	pn := &planner{
		gate:           sqlgate.New(sqlgate.Config{MaxSQLBytes: c.MaxSQLBytes}),
		catalog:        c.Governance,
		engine:         c.Backend,
		files:          c.Files,
		upstreams:      c.Upstreams,
		defaultCatalog: c.DefaultCatalog,
		fullText:       make(map[string]bool, len(c.AccessLogFullText)),
	}
	for _, t := range c.AccessLogFullText {
		pn.fullText[t] = true
	}
	return pn
}

// who is whom the planner plans for: the principal and its session's
// options, read once when the request starts (Server.whoIs).
type who struct {
	p *authz.Principal
	// schema is the session's default schema ("" for none).
	schema string
	// caller is p's identity in its session's catalog.
	caller backend.Caller
	// views are the session's views in that catalog.
	views []sqlgate.View
}

// whoIs returns whom the planner plans for: p in a session with options
// st.
func (pn *planner) whoIs(p *authz.Principal, st sessionState) who {
	catalog := st.catalog
	if catalog == "" {
		catalog = pn.defaultCatalog
	}
	return who{p: p, schema: st.schema, caller: backend.Caller{Tenant: p.Tenant().String(), Subject: p.ID().String(), Catalog: catalog}, views: st.views[catalog]}
}

// tenant is w's tenant.
func (w who) tenant() string { return w.caller.Tenant }

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
	// schemaIPC is schema serialized as FlightInfo and SchemaResult carry
	// it, made once with the plan (Plan) rather than at every call.
	schemaIPC []byte
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
	// use is the schema an authorized USE switches the caller's session
	// to, which the Server does once the plan is made; sql is then empty.
	use string
	// view is a CREATE VIEW or DROP VIEW, which the Server applies to the
	// caller's session once the plan is made; sql is then empty.
	view *sqlgate.Statement
	// text and defSchema are the client's statement and default schema of
	// a plan over an upstream engine, planned again in the engine's
	// dialect when a prepared statement's tables change (Refresh).
	text, defSchema string
	// access is the statement as the access log records it (set only
	// when the server keeps one).
	access accessedStatement
}

// Plan plans one statement for w: parse, require a query, check every
// table against the principal's namespace grants, resolve and authorize it
// through the catalog, bind its files, render canonical SQL and describe
// it. USE plans to an empty result naming the schema to use (pl.use), once
// the caller may see it; SHOW, DESCRIBE and EXPLAIN plan to a show plan
// (pl.show set), answered when the statement runs. A prepared statement
// (plain unset; JDBC prepares every statement) that writes plans to a
// prepared write, run by DoPutPreparedStatementUpdate; a plain one is
// refused (it runs with ExecuteUpdate).
func (pn *planner) Plan(ctx context.Context, w who, text string, plain bool) (*plan, error) {
	key, keep := keyFor(w, text)
	keep = keep && plain
	if keep {
		if pl, err := pn.reuse(ctx, w, key); pl != nil || err != nil {
			return pl, err
		}
	}
	stmt, err := pn.Parse(text, w)
	if err != nil {
		return nil, err
	}
	var access accessedStatement
	if a := accessFrom(ctx); a != nil {
		access = accessedStatement{Kind: stmt.Kind().String(), Statement: pn.accessText(w, text)}
		a.statementIs(access.Kind, access.Statement)
	}
	pl, err := pn.planStatement(ctx, w, stmt, text, plain)
	if pl != nil {
		pl.access = access
		if pl.schema != nil {
			pl.schemaIPC = flight.SerializeSchema(pl.schema, memory.DefaultAllocator)
		}
	}
	if err == nil && keep && reusable(pl) {
		pn.reused.put(key, pl)
	}
	return pl, err
}

// planStatement is Plan of the parsed stmt.
func (pn *planner) planStatement(ctx context.Context, w who, stmt *sqlgate.Statement, text string, plain bool) (*plan, error) {
	switch {
	case stmt.Kind() == sqlgate.KindUse:
		if err := pn.Use(ctx, w, stmt.UseSchema()); err != nil {
			return nil, err
		}
		return &plan{schema: arrow.NewSchema(nil, nil), use: stmt.UseSchema()}, nil
	case stmt.Kind() == sqlgate.KindSet:
		// Accepted only when it changes nothing (sqlgate/session.go).
		return &plan{schema: arrow.NewSchema(nil, nil)}, nil
	case stmt.Kind() == sqlgate.KindCreateView, stmt.Kind() == sqlgate.KindDropView:
		// A session view reads nothing now: a statement that reads it is
		// authorized then, as its reader.
		if _, err := stmt.ApplyTo(w.views); err != nil {
			return nil, err
		}
		return &plan{schema: arrow.NewSchema(nil, nil), view: stmt}, nil
	case stmt.IsWrite() && !plain:
		// Prepared (JDBC prepares every statement): run at
		// DoPutPreparedStatementUpdate, authorized then.
		return &plan{schema: arrow.NewSchema(nil, nil), numParams: stmt.NumParams(), write: stmt}, nil
	case stmt.IsWrite():
		return nil, fmt.Errorf("%w: %s changes data; run it with ExecuteUpdate", errBadRequest, stmt.Kind())
	case stmt.IsShow() || stmt.Kind() == sqlgate.KindExplain:
		return pn.planShow(ctx, w, stmt)
	}
	tables, err := pn.ResolveStatement(ctx, w, stmt)
	if err != nil {
		return nil, err
	}
	if up, err := upstreamOf(tables); err != nil {
		return nil, err
	} else if up != nil {
		return pn.planUpstream(ctx, w, text, w.schema, stmt, tables, up)
	}
	r, release, err := pn.Render(ctx, w, stmt, tables)
	if err != nil {
		return nil, err
	}
	defer release()
	d, err := pn.engine.Describe(ctx, w.tenant(), r.sql, stmt.NumParams())
	if err != nil {
		return nil, withheld(tables, err)
	}
	if stmt.Constant() {
		pn.constants.mark(r.sql)
	}
	return &plan{sql: r.sql, pushed: r.pushed, kinds: r.kinds, numParams: stmt.NumParams(), schema: d.Result, params: d.Params, tables: tables, stmt: stmt}, nil
}

// Parse parses text in w's default schema, with w's session views.
func (pn *planner) Parse(text string, w who) (*sqlgate.Statement, error) {
	return pn.gate.ParseWith(text, w.schema, w.views)
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

// Refresh resolves a prepared plan's tables again, so every execution is
// authorized now and reads the current versions; the SQL is rendered again
// only when a version changed.
func (pn *planner) Refresh(ctx context.Context, w who, pl *plan) (*plan, error) {
	if pl.stmt == nil || len(pl.tables) == 0 {
		return pl, nil
	}
	tables, err := pn.resolve(ctx, w, pl.stmt.Tables())
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
		np, err := pn.planUpstream(ctx, w, pl.text, pl.defSchema, pl.stmt, tables, up)
		if err != nil {
			return nil, err
		}
		if !np.schema.Equal(pl.schema) {
			return nil, errPreparedChanged
		}
		np.numParams, np.params = pl.numParams, pl.params
		return np, nil
	}
	r, release, err := pn.Render(ctx, w, pl.stmt, tables)
	if err != nil {
		return nil, err
	}
	defer release()
	// The client holds the schema announced at preparation: a result of
	// another shape (a column added or retyped, a mask's form) is refused
	// rather than streamed under it.
	d, err := pn.engine.Describe(ctx, w.tenant(), r.sql, pl.numParams)
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

// Use authorizes switching w's default schema to schema. A schema the
// caller may not see and one that does not exist give the same answer.
func (pn *planner) Use(ctx context.Context, w who, schema string) error {
	notFound := &notFoundError{kind: "schema", name: schema}
	accessFrom(ctx).reach()
	if !w.p.MayReadNamespace(schema) {
		return deny(reasonNamespace, notFound)
	}
	l, err := pn.catalog.List(ctx, w.caller)
	if err != nil {
		return err
	}
	if !slices.Contains(l.Schemas, schema) {
		return deny(reasonPrivilege, notFound)
	}
	return nil
}
