package duckdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	// mapping does not re-export duckdb_pending_prepared_streaming; the
	// bindings module is the one mapping aliases, at the same version.
	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/duckdb/duckdb-go/v2/arrowmapping"
	"github.com/duckdb/duckdb-go/v2/mapping"
)

// stmt is one statement's use of a pooled connection: the query context
// (the caller's ctx bounded by Config.QueryTimeout), the interrupt watcher,
// and the DuckDB handles, all freed by end. A stmt belongs to one goroutine.
type stmt struct {
	t       *tenant
	ctx     context.Context // the caller's
	qctx    context.Context // ctx bounded by QueryTimeout
	cancel  context.CancelFunc
	c       *dbConn
	unwatch func()

	ps     mapping.PreparedStatement
	sql    string // ps's text
	gen    uint64 // the tenant's view generation before ps was prepared
	keepPS bool   // ps may be cached on the connection for reuse
	res    mapping.Result
	hasRes bool
	// chunk is a fetched chunk of the result the direct path has copied
	// up to row chunkRow (split between two batches).
	chunk    mapping.DataChunk
	chunkRow int
	done     bool // the result was read to its end
	// clean reports that the connection may be reused: set once the result
	// is exhausted or when no result was opened.
	clean bool
}

// begin checks a connection out for one statement run under ctx.
func (t *tenant) begin(ctx context.Context) (*stmt, error) { return t.beginFor(ctx, "") }

// beginFor is begin for a statement that will prepare sql: it prefers a
// connection that caches sql's prepared statement (pool.get).
func (t *tenant) beginFor(ctx context.Context, sql string) (*stmt, error) {
	qctx, cancel := context.WithTimeout(ctx, t.eng.cfg.QueryTimeout)
	if err := qctx.Err(); err != nil {
		err = t.mapErr(ctx, qctx, err)
		cancel()
		return nil, err
	}
	if err := t.activate(qctx); err != nil { // the memory budget (budget.go)
		cancel()
		return nil, err
	}
	c, err := t.pool.get(sql, t.gen.Load())
	if err != nil {
		t.deactivate()
		cancel()
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return nil, fmt.Errorf("duckdb: %w", scrubErr(err, t.dir, t.eng.root))
	}
	return &stmt{t: t, ctx: ctx, qctx: qctx, cancel: cancel, c: c, unwatch: c.watch(qctx), clean: true}, nil
}

// end frees the statement (or caches it on the connection) and returns the
// connection, telling the pool whether it is clean: no result, or one read to
// its end, and the query context not done (so no interrupt is pending).
func (s *stmt) end() {
	s.unwatch()
	s.dropChunk()
	reusable := s.clean && s.qctx.Err() == nil
	if s.hasRes {
		mapping.DestroyResult(&s.res)
		s.hasRes = false
	}
	if s.keepPS && reusable && s.ps.Ptr != nil {
		s.c.keepPrepared(s.sql, s.gen, s.t.gen.Load(), s.ps)
		s.ps = mapping.PreparedStatement{}
	}
	mapping.DestroyPrepare(&s.ps)
	s.t.pool.put(s.c, reusable)
	s.t.deactivate()
	s.c = nil
	s.cancel()
}

// err maps an error of this statement to backend's sentinels.
func (s *stmt) err(err error) error { return s.t.mapErr(s.ctx, s.qctx, err) }

// prepare prepares sql, or with reuse takes the statement the connection
// cached for it. DuckDB's C API prepares exactly one statement: text holding
// several fails here, before any of them runs.
func (s *stmt) prepare(sql string, reuse bool) error {
	mapping.DestroyPrepare(&s.ps)
	s.sql, s.gen, s.keepPS = sql, s.t.gen.Load(), false
	if reuse {
		if ps, ok := s.c.takePrepared(sql, s.gen); ok {
			s.ps = ps
			return nil
		}
	}
	s.t.pool.prepares.Add(1)
	if mapping.Prepare(s.c.c, sql, &s.ps) == mapping.StateError {
		return newEngineError(mapping.PrepareError(s.ps))
	}
	return nil
}

// preparedSchema returns the result schema of the prepared statement, or
// nil if DuckDB could not type it without parameter values.
func (s *stmt) preparedSchema() (*arrow.Schema, error) {
	n := mapping.PreparedStatementColumnCount(s.ps)
	names := make([]string, n)
	types := make([]mapping.LogicalType, n)
	defer destroyTypes(types)
	for i := range n {
		types[i] = mapping.PreparedStatementColumnLogicalType(s.ps, i)
		switch mapping.GetTypeId(types[i]) {
		case mapping.TypeInvalid, mapping.TypeAny:
			// Unresolved until parameters are bound: DuckDB reports a
			// single placeholder column "unknown".
			return nil, nil
		}
		names[i] = mapping.PreparedStatementColumnName(s.ps, i)
	}
	return s.schema(types, names)
}

// paramSchema returns the types DuckDB inferred for the prepared statement's
// numParams placeholders, one field each named "parameter_N". A placeholder
// DuckDB could not type, or whose type has no Arrow mapping, is arrow.Null.
func (s *stmt) paramSchema(numParams int) *arrow.Schema {
	fields := make([]arrow.Field, numParams)
	n := int(mapping.NParams(s.ps))
	for i := range fields {
		fields[i] = arrow.Field{Name: "parameter_" + strconv.Itoa(i+1), Type: arrow.Null, Nullable: true}
		if i < n {
			if typ := s.paramType(mapping.IdxT(i + 1)); typ != nil {
				fields[i].Type = typ
			}
		}
	}
	return arrow.NewSchema(fields, nil)
}

// paramType maps the type of placeholder idx (1-based) to Arrow, or nil if
// DuckDB left it unresolved or the mapping fails.
func (s *stmt) paramType(idx mapping.IdxT) arrow.DataType {
	lt := mapping.ParamLogicalType(s.ps, idx)
	types := []mapping.LogicalType{lt}
	defer destroyTypes(types)
	if lt.Ptr == nil {
		return nil
	}
	switch mapping.GetTypeId(lt) {
	case mapping.TypeInvalid, mapping.TypeAny, mapping.TypeSQLNull:
		return nil
	}
	schema, err := s.schema(types, []string{"p"})
	if err != nil || schema.NumFields() != 1 {
		return nil
	}
	return schema.Field(0).Type
}

// resultSchema returns the schema of the executed statement's result.
func (s *stmt) resultSchema() (*arrow.Schema, error) {
	n := mapping.ColumnCount(&s.res)
	names := make([]string, n)
	types := make([]mapping.LogicalType, n)
	defer destroyTypes(types)
	for i := range n {
		names[i] = mapping.ColumnName(&s.res, i)
		types[i] = mapping.ColumnLogicalType(&s.res, i)
	}
	return s.schema(types, names)
}

func (s *stmt) schema(types []mapping.LogicalType, names []string) (*arrow.Schema, error) {
	schema, ed := arrowmapping.NewArrowSchema(s.c.opts, types, names)
	if err := errorData(ed); err != nil {
		return nil, err
	}
	return schema, nil
}

func destroyTypes(types []mapping.LogicalType) {
	for i := range types {
		mapping.DestroyLogicalType(&types[i])
	}
}

// errorData turns (and destroys) a DuckDB error data.
func errorData(ed mapping.ErrorData) error {
	defer mapping.DestroyErrorData(&ed)
	if !mapping.ErrorDataHasError(ed) {
		return nil
	}
	return &engineError{typ: mapping.ErrorDataErrorType(ed), msg: mapping.ErrorDataMessage(ed)}
}

// bind binds args to the prepared statement's placeholders, in order. The
// types are those flight's parameter decoding produces.
func (s *stmt) bind(args []any) error {
	if n := int(mapping.NParams(s.ps)); n != len(args) {
		return &engineError{msg: fmt.Sprintf("the statement has %d parameters, %d were given", n, len(args))}
	}
	for i, arg := range args {
		idx := mapping.IdxT(i + 1)
		var state mapping.State
		switch v := arg.(type) {
		case nil:
			state = mapping.BindNull(s.ps, idx)
		case bool:
			state = mapping.BindBoolean(s.ps, idx, v)
		case int64:
			state = mapping.BindInt64(s.ps, idx, v)
		case int:
			state = mapping.BindInt64(s.ps, idx, int64(v))
		case int32:
			state = mapping.BindInt32(s.ps, idx, v)
		case uint64:
			state = mapping.BindUInt64(s.ps, idx, v)
		case float64:
			state = mapping.BindDouble(s.ps, idx, v)
		case string:
			state = mapping.BindVarcharLength(s.ps, idx, v, mapping.IdxT(len(v)))
		case []byte:
			state = mapping.BindBlob(s.ps, idx, v)
		case time.Time:
			state = s.bindTime(idx, v)
		default:
			return &engineError{msg: fmt.Sprintf("parameter %d: unsupported type %T", i+1, arg)}
		}
		if state == mapping.StateError {
			return &engineError{msg: fmt.Sprintf("parameter %d: cannot bind %T", i+1, arg)}
		}
	}
	return nil
}

// bindTime binds v as the placeholder's type where DuckDB resolved it to a
// date or timestamp variant, else as a TIMESTAMP (microseconds, UTC).
func (s *stmt) bindTime(idx mapping.IdxT, v time.Time) mapping.State {
	switch mapping.ParamType(s.ps, idx) {
	case mapping.TypeDate:
		days := v.Unix() / 86400
		if v.Unix() < 0 && v.Unix()%86400 != 0 {
			days-- // floor, not truncation, before 1970
		}
		return mapping.BindDate(s.ps, idx, mapping.NewDate(int32(days)))
	case mapping.TypeTimestampTZ:
		return mapping.BindTimestampTZ(s.ps, idx, mapping.NewTimestamp(v.UnixMicro()))
	case mapping.TypeTimestampNS:
		val := mapping.CreateTimestampNS(mapping.NewTimestampNS(v.UnixNano()))
		defer mapping.DestroyValue(&val)
		return mapping.BindValue(s.ps, idx, val)
	default:
		return mapping.BindTimestamp(s.ps, idx, mapping.NewTimestamp(v.UnixMicro()))
	}
}

// execute starts the bound statement as a streaming query: DuckDB runs it as
// far as its first result chunk needs (all of it only for blocking operators
// such as ORDER BY or an aggregate) and fetch pulls the rest.
func (s *stmt) execute() error {
	if err := s.qctx.Err(); err != nil {
		return err
	}
	var pending mapping.PendingResult
	defer mapping.DestroyPending(&pending)
	if bindings.PendingPreparedStreaming(s.ps, &pending) == mapping.StateError {
		return newEngineError(mapping.PendingError(pending))
	}
	s.hasRes = true
	s.clean = false // until the result is read to its end
	if mapping.ExecutePending(pending, &s.res) == mapping.StateError {
		return resultError(&s.res)
	}
	return nil
}

// fetchChunk returns the next chunk of the result; Ptr is nil at the end.
func (s *stmt) fetchChunk() (mapping.DataChunk, error) {
	if s.done {
		return mapping.DataChunk{}, nil
	}
	if err := s.qctx.Err(); err != nil {
		return mapping.DataChunk{}, err
	}
	chunk := mapping.FetchChunk(s.res)
	if chunk.Ptr == nil {
		if mapping.ResultError(&s.res) != "" {
			return chunk, resultError(&s.res)
		}
		s.done, s.clean = true, true
		s.keepPS = true // ran to completion: worth keeping
	}
	return chunk, nil
}

// fetch returns the next chunk of the result converted by DuckDB to a record
// batch of the given schema, or nil at the end.
func (s *stmt) fetch(schema *arrow.Schema) (arrow.RecordBatch, error) {
	chunk, err := s.fetchChunk()
	if err != nil || chunk.Ptr == nil {
		return nil, err
	}
	defer mapping.DestroyDataChunk(&chunk)
	rec, ed := arrowmapping.DataChunkToArrowArray(s.c.opts, schema, chunk)
	if err := errorData(ed); err != nil {
		if rec != nil {
			rec.Release()
		}
		return nil, err
	}
	return rec, nil
}

// fetchDirect returns the next batch of the result built by b (the direct
// path), or nil at the end. A chunk that would take the batch beyond its
// size is split: the rest of it starts the next batch.
func (s *stmt) fetchDirect(b *batchBuilder) (arrow.RecordBatch, error) {
	for !b.full() {
		if s.chunk.Ptr == nil {
			chunk, err := s.fetchChunk()
			if err != nil {
				b.reset()
				return nil, err
			}
			if chunk.Ptr == nil {
				break
			}
			s.chunk, s.chunkRow = chunk, 0
		}
		next, err := b.append(s.chunk, s.chunkRow)
		if err != nil {
			s.dropChunk()
			b.reset()
			return nil, err
		}
		if next >= int(mapping.DataChunkGetSize(s.chunk)) {
			s.dropChunk()
		} else {
			s.chunkRow = next
		}
	}
	return b.finish(), nil
}

// dropChunk destroys the chunk fetchDirect holds, if any.
func (s *stmt) dropChunk() {
	if s.chunk.Ptr != nil {
		mapping.DestroyDataChunk(&s.chunk)
		s.chunk = mapping.DataChunk{}
	}
}
