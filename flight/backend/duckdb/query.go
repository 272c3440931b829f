package duckdb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/duckdb/duckdb-go/v2/mapping"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
)

// Execute runs sql (printed by the SQL gate, never client text) with the
// positional args on the tenant's instance and streams the result: DuckDB
// produces chunks as the reader asks for them, so a result need not fit in
// memory (blocking operators such as ORDER BY still hold their input, and may
// spill to the tenant's tmp/). The query runs under the caller's ctx bounded
// by Config.QueryTimeout; cancelling it interrupts DuckDB. The reader holds a
// pooled connection until it is released.
//
// Every statement not seen before is first checked with DuckDB's own parser
// (json_serialize_sql): one statement, reading only relations the gate
// issues (lg_rel views, the gate's CTEs, derived tables), calling no table
// function; anything else fails with ErrUnverified (a gate bug). Describe
// does the same.
func (e *Engine) Execute(ctx context.Context, tenantID, sql string, args []any) (array.RecordReader, error) {
	if err := e.checkParams(args); err != nil {
		return nil, err
	}
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	if err := t.verify(ctx, sql); err != nil {
		return nil, err
	}
	s, err := t.beginFor(ctx, sql)
	if err != nil {
		return nil, err
	}
	schema, err := s.start(sql, args, true)
	if err != nil {
		err = s.err(err) // before end: it reads the query context
		s.end()
		return nil, err
	}
	next := splitter(func() (arrow.RecordBatch, error) { return s.fetch(schema) })
	if layout := directLayout(&s.res, schema); layout != nil {
		b := newBatchBuilder(e.reads, schema, layout)
		next = func() (arrow.RecordBatch, error) { return s.fetchDirect(b) }
	}
	e.reads.openReader()
	return newCoalescer(schema, next, e.reads, s.err, func() { s.end(); e.reads.closeReader() }), nil
}

// checkParams refuses a string or blob parameter longer than MaxParamBytes:
// a parameter stands for a literal and is held to the same size
// (sqlgate.Limits.StringBytes), by which the gate bounds what a statement
// builds from it.
func (e *Engine) checkParams(args []any) error {
	for i, arg := range args {
		n := 0
		switch v := arg.(type) {
		case string:
			n = len(v)
		case []byte:
			n = len(v)
		}
		if n > e.cfg.MaxParamBytes {
			return fmt.Errorf("%w: %w", backend.ErrResources, sqlgate.ParamLimit(i+1, e.cfg.MaxParamBytes))
		}
	}
	return nil
}

// start prepares (or with reuse takes from the connection's cache), binds and
// starts sql, and returns its result schema.
func (s *stmt) start(sql string, args []any, reuse bool) (*arrow.Schema, error) {
	if err := s.prepare(sql, reuse); err != nil {
		return nil, err
	}
	if err := s.bind(args); err != nil {
		return nil, err
	}
	if err := s.execute(); err != nil {
		return nil, err
	}
	return s.resultSchema()
}

// Describe returns the result and parameter schemas of sql without running
// it. The result schema is that of the prepared statement. Where DuckDB cannot type the statement without
// parameter values (a placeholder in the select list), it reads the schema of
// SELECT * FROM (sql) LIMIT 0 with the numParams placeholders bound to NULL;
// that wrapper renames duplicate column names ("a" → "a_1"). Parameter
// types are those DuckDB inferred when preparing sql; a placeholder it could
// not type (SELECT ?) is reported as arrow.Null.
func (e *Engine) Describe(ctx context.Context, tenantID, sql string, numParams int) (backend.Description, error) {
	if numParams < 0 {
		return backend.Description{}, fmt.Errorf("%w: negative parameter count", backend.ErrQuery)
	}
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return backend.Description{}, err
	}
	return t.describe(ctx, sql, numParams)
}

// describe is Describe on an open tenant.
func (t *tenant) describe(ctx context.Context, sql string, numParams int) (backend.Description, error) {
	var d backend.Description
	if err := t.verify(ctx, sql); err != nil {
		return d, err
	}
	s, err := t.beginFor(ctx, sql)
	if err != nil {
		return d, err
	}
	defer s.end()
	// A statement cached for sql was prepared at the current view
	// generation (takePrepared checks it), so its schema is that of the
	// views as they are now: the SQL names each immutable version's view
	// and carries the policies and the caller's values as printed by the
	// gate, and every view change moves the generation on. The statement
	// is then cached again for the Execute that usually follows.
	if err := s.prepare(sql, true); err != nil {
		return d, s.err(err)
	}
	d.Params = s.paramSchema(numParams)
	schema, err := s.preparedSchema()
	if err != nil {
		return d, s.err(err)
	}
	if schema != nil {
		s.keepPS = true
		d.Result = schema
		return d, nil
	}
	// Typed only once values are bound: run the LIMIT 0 wrapper on the
	// same connection (the first statement holds no result).
	schema, err = s.start("SELECT * FROM ("+sql+") AS __lg_d LIMIT 0", make([]any, numParams), false)
	if err != nil {
		return backend.Description{}, s.err(err)
	}
	d.Result = schema
	return d, nil
}

// exec runs internal DDL (view changes) on a pooled connection and moves the
// view generation on, which retires every cached prepared statement.
func (t *tenant) exec(ctx context.Context, sql string) error {
	s, err := t.begin(ctx)
	if err != nil {
		return err
	}
	defer s.end()
	defer t.gen.Add(1)
	if err := s.c.query(sql); err != nil {
		return s.err(err)
	}
	return nil
}

// mapErr maps an error of a query run under qctx (derived from the caller's
// ctx) to backend's sentinels. Engine messages are kept, minus paths. A
// string the engine refused to build for a limit the gate printed is
// backend.ErrResources wrapping the gate's *sqlgate.Error, whose message
// names the limit.
func (t *tenant) mapErr(ctx, qctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return mapCtxErr(ctx.Err())
	}
	if qctx.Err() != nil {
		return backend.ErrDeadline // the QueryTimeout fired
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return mapCtxErr(err)
	}
	var ee *engineError
	if errors.As(err, &ee) {
		// A size the gate made the engine check (limits.go): the
		// message is the gate's, naming the limit.
		if le, ok := sqlgate.EngineLimit(ee.msg); ok {
			return fmt.Errorf("%w: %w", backend.ErrResources, le)
		}
		switch ee.typ {
		case mapping.ErrorTypeOutOfMemory:
			return fmt.Errorf("%w: %s", backend.ErrResources, scrub(ee.msg, t.dir, t.eng.root))
		case mapping.ErrorTypeInterrupt:
			return backend.ErrCanceled
		}
	}
	return fmt.Errorf("%w: %s", backend.ErrQuery, scrub(err.Error(), t.dir, t.eng.root))
}

func mapCtxErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return backend.ErrDeadline
	}
	return backend.ErrCanceled
}

// quotedPathRE matches a quoted absolute path the way DuckDB quotes file
// names, including one cut short (no closing quote) in a message.
var quotedPathRE = regexp.MustCompile(`"/[^"\n]*"?|'/[^'\n]*'?`)

// scrub makes an engine message safe to show: it keeps the first line only
// (the rest is "Did you mean …" hints that can name other relations, and a
// "LINE 1:" snippet of the rewritten SQL, which can carry policy expressions),
// writes paths inside the tenant directory as <stage>/…, and replaces any
// other quoted absolute path, and the data root anywhere, by <path>.
func scrub(msg, tenantDir, root string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	if tenantDir != "" {
		msg = strings.ReplaceAll(msg, tenantDir+"/", "<stage>/")
	}
	msg = quotedPathRE.ReplaceAllStringFunc(msg, func(q string) string {
		if len(q) > 1 && q[len(q)-1] == q[0] {
			return q[:1] + "<path>" + q[:1]
		}
		return q[:1] + "<path>"
	})
	if root != "" {
		msg = strings.ReplaceAll(msg, root, "<path>")
	}
	return msg
}

// scrubErr is scrub for errors that are not returned to clients as ErrQuery
// but may still reach a log or a caller.
func scrubErr(err error, tenantDir, root string) error {
	return &scrubbedError{msg: scrub(err.Error(), tenantDir, root), err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
