package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdbdrv "github.com/duckdb/duckdb-go/v2"

	"lakegate/flight/backend"
)

// Execute runs sql (printed by the SQL gate, never client text) with the
// positional args on the tenant's instance. The query runs under the caller's
// ctx bounded by Config.QueryTimeout; cancelling it interrupts DuckDB. The
// reader holds a pooled connection until it is released.
func (e *Engine) Execute(ctx context.Context, tenantID, sql string, args []any) (array.RecordReader, error) {
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, e.cfg.QueryTimeout)
	conn, err := t.db.Conn(qctx)
	if err != nil {
		err = t.mapErr(ctx, qctx, err) // before cancel: it reads qctx
		cancel()
		return nil, err
	}
	var src array.RecordReader
	err = conn.Raw(func(dc any) error {
		a, err := duckdbdrv.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		src, err = a.QueryContext(qctx, sql, args...)
		return err
	})
	if err != nil {
		err = t.mapErr(ctx, qctx, err)
		conn.Close()
		cancel()
		return nil, err
	}
	// The driver reader reads the result, not the connection; conn stays
	// checked out (so nothing else uses it) until the reader is released.
	return newCoalescer(src, e.cfg.Allocator, func(err error) error {
		return t.mapErr(ctx, qctx, err)
	}, func() {
		conn.Close()
		cancel()
	}), nil
}

// Describe returns the result schema of sql with numParams placeholders bound
// to NULL, without running it: it reads the Arrow schema of
// SELECT * FROM (sql) LIMIT 0, then restores the column names of sql's own
// prepared statement (the wrapper would rename duplicates, "a" → "a_1").
func (e *Engine) Describe(ctx context.Context, tenantID, sql string, numParams int) (*arrow.Schema, error) {
	if numParams < 0 {
		return nil, fmt.Errorf("%w: negative parameter count", backend.ErrQuery)
	}
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	return t.describe(ctx, sql, make([]any, numParams))
}

// describe is Describe on an open tenant. Table resolution calls it with a
// query that is already LIMIT 0.
func (t *tenant) describe(ctx context.Context, sql string, args []any) (*arrow.Schema, error) {
	qctx, cancel := context.WithTimeout(ctx, t.eng.cfg.QueryTimeout)
	defer cancel()
	conn, err := t.db.Conn(qctx)
	if err != nil {
		return nil, t.mapErr(ctx, qctx, err)
	}
	defer conn.Close()
	var schema *arrow.Schema
	err = conn.Raw(func(dc any) error {
		names, err := columnNamesOf(qctx, dc.(driver.Conn), sql)
		if err != nil {
			return err
		}
		a, err := duckdbdrv.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rr, err := a.QueryContext(qctx, "SELECT * FROM ("+sql+") AS __lg_d LIMIT 0", args...)
		if err != nil {
			return err
		}
		defer rr.Release()
		schema = rr.Schema()
		if len(names) != schema.NumFields() {
			return fmt.Errorf("describe: %d columns prepared, %d described", len(names), schema.NumFields())
		}
		fields := schema.Fields()
		for i := range fields {
			fields[i].Name = names[i]
		}
		md := schema.Metadata()
		schema = arrow.NewSchema(fields, &md)
		return nil
	})
	if err != nil {
		return nil, t.mapErr(ctx, qctx, err)
	}
	return schema, nil
}

// columnNamesOf prepares sql (without executing it) and returns its result
// column names.
func columnNamesOf(ctx context.Context, dc driver.Conn, sql string) ([]string, error) {
	st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ds, ok := st.(*duckdbdrv.Stmt)
	if !ok {
		return nil, errors.New("describe: not a duckdb statement")
	}
	n, err := ds.ColumnCount()
	if err != nil {
		return nil, err
	}
	names := make([]string, n)
	for i := range names {
		if names[i], err = ds.ColumnName(i); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// exec runs internal DDL on a pooled connection.
func (t *tenant) exec(ctx context.Context, sql string) error {
	qctx, cancel := context.WithTimeout(ctx, t.eng.cfg.QueryTimeout)
	defer cancel()
	if _, err := t.db.ExecContext(qctx, sql); err != nil {
		return t.mapErr(ctx, qctx, err)
	}
	return nil
}

// mapErr maps an error of a query run under qctx (derived from the caller's
// ctx) to backend's sentinels. Engine messages are kept, minus paths.
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
	var de *duckdbdrv.Error
	if errors.As(err, &de) {
		switch de.Type {
		case duckdbdrv.ErrorTypeOutOfMemory:
			return fmt.Errorf("%w: %s", backend.ErrResources, scrub(de.Msg, t.dir, t.eng.root))
		case duckdbdrv.ErrorTypeInterrupt:
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
