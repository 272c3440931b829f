package flight

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ingest"
	"lakegate/stage"
)

// Writes. Every write streams its rows into new Parquet files of a fresh
// write segment of the table's stage directory, then commits them as a new
// version through the catalog, naming the version it builds on. Nothing is
// visible before the commit; a write that fails at any point deletes the
// files it wrote (what a crash leaves behind is the garbage collector's).
// A concurrent commit to the same table makes an append retry its commit on
// the new version (its files stay valid); a replace or create fails instead.

// maxCommitAttempts bounds how often an append retries a commit that lost
// a race with another writer.
const maxCommitAttempts = 8

// cleanupTimeout bounds the deletion of an aborted write's files, which runs
// after the request's context may be gone.
const cleanupTimeout = 30 * time.Second

// writeMode is what a write does to its target.
type writeMode int

const (
	modeCreate       writeMode = iota // a new table; fails if it exists
	modeAppend                        // add rows to an existing table
	modeReplace                       // the rows become the whole table (created if missing)
	modeCreateAppend                  // append, creating the table if missing
)

// writeRequest is one write of rows into a table.
type writeRequest struct {
	who         who // the caller
	target      backend.TableName
	mode        writeMode
	ifNotExists bool     // create: an existing table is not an error (0 rows)
	columns     []string // insert: the listed target columns; nil = all in order
	// byPosition: without a column list, the source's columns fill the
	// table's in order (SQL's INSERT … SELECT); otherwise they are matched
	// by name where they can be (ingest).
	byPosition bool
}

// newStorageID returns a fresh storage id for a table the gateway creates
// with data: 32 hex characters from 128 bits of crypto/rand, so that no two
// tables, dropped or not, ever share one (and with it their files or the
// engine's cached views, keyed "<storage id>@<version>"). The gateway draws
// it because it writes the files before the table exists; metasrv takes a
// storage id from no one else, and mints its own for tables created
// without data.
func newStorageID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// write runs one write: rows come from src (whose schema names the
// columns). It returns the number of rows committed.
func (s *Server) write(ctx context.Context, req writeRequest, src array.RecordReader) (int64, error) {
	a := accessFrom(ctx)
	a.wrote(req.target, 0)
	if err := checkWritable(req.target); err != nil {
		return 0, err
	}
	if !req.who.p.MayReadNamespace(req.target.Schema) {
		return 0, deny(reasonNamespace, tableNotFound(req.target.Schema, req.target.Name))
	}
	c := req.who.caller
	tenant := c.Tenant
	cur, err := s.resolveTarget(ctx, c, req.target)
	if err != nil {
		return 0, err
	}
	switch {
	case cur != nil && req.mode == modeCreate && req.ifNotExists:
		return 0, nil
	case cur != nil && req.mode == modeCreate:
		return 0, fmt.Errorf("%w: table %s already exists", errAlreadyExists, req.target)
	case cur == nil && req.mode == modeAppend:
		return 0, deny(reasonPrivilege, tableNotFound(req.target.Schema, req.target.Name))
	}
	// The rows to store, in the table's column order and types.
	rows := src
	var cols []backend.Column
	if cur != nil && req.mode != modeReplace {
		rows, err = alignRows(src, cur.Columns, req.columns, req.byPosition)
		if err != nil {
			return 0, err
		}
		defer rows.Release()
		cols = cur.Columns
	} else {
		if req.columns != nil {
			return 0, fmt.Errorf("%w: table %s does not exist", errNotFound, req.target)
		}
		if cols, err = columnsOf(src.Schema()); err != nil {
			return 0, err
		}
	}
	storageID, codec := "", ingest.CodecZstd
	if cur != nil {
		storageID = cur.StorageID
		// The table's parquet.compression property; a value metasrv let
		// through that this gateway does not know refuses the write.
		if codec, err = ingest.ParseCodec(cur.Codec); err != nil {
			return 0, fmt.Errorf("%w: table %s: %w", errBadRequest, req.target, err)
		}
	} else if storageID, err = newStorageID(); err != nil {
		return 0, err
	}
	store, err := s.cfg.Files.Store(ctx, tenant)
	if err != nil {
		return 0, err
	}
	segment, err := stage.NewSegment()
	if err != nil {
		return 0, err
	}
	started := time.Now()
	files, n, err := ingest.Copy(ctx, ingest.Config{Store: store, StorageID: storageID, Segment: segment,
		Schema: rows.Schema(), Allocator: s.mem, Codec: codec}, rows)
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", req.target, err)
	}
	dfs := make([]backend.DataFile, len(files))
	for i, f := range files {
		dfs[i] = backend.DataFile{Key: f.Key, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256}
	}
	// The orphan collector may already consider a write this old abandoned.
	if time.Since(started) > stage.MaxWriteAge {
		s.discard(ctx, tenant, store, dfs)
		return 0, fmt.Errorf("%w: the write took longer than %s; split it", errBadRequest, stage.MaxWriteAge)
	}
	// metasrv registers the files on the gateway's word: they must be in
	// the stage, under the table's storage id, as written.
	if err := ingest.Verify(ctx, store, storageID, files); err != nil {
		s.discard(ctx, tenant, store, dfs)
		return 0, fmt.Errorf("writing %s: %w", req.target, err)
	}
	version, committed, err := s.commit(ctx, c, req, cur, storageID, cols, dfs)
	if err != nil || !committed {
		s.discard(ctx, tenant, store, dfs)
		return 0, err
	}
	a.wrote(req.target, version)
	a.addRows(n)
	if a != nil {
		for _, f := range dfs {
			a.bytes.Add(f.Size)
		}
	}
	return n, nil
}

// resolveTarget returns the current version of a write's target if the
// caller may modify it, nil if it does not exist or may not be modified.
func (s *Server) resolveTarget(ctx context.Context, c backend.Caller, name backend.TableName) (*backend.TableVersion, error) {
	got, err := s.cfg.Governance.Resolve(ctx, c, []backend.TableRef{{Name: name, Write: true}})
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

// commit records the written files as the target's next version, retrying
// an append whose base moved, and returns that version. It reports false,
// with no error, for a create IF NOT EXISTS that found the table created
// meanwhile: nothing was written.
func (s *Server) commit(ctx context.Context, c backend.Caller, req writeRequest, cur *backend.TableVersion, storageID string, cols []backend.Column, files []backend.DataFile) (uint64, bool, error) {
	cm := backend.Commit{Name: req.target, StorageID: storageID, Columns: cols, Files: files}
	switch {
	case cur == nil:
		cm.Create = true
	case req.mode == modeReplace:
		cm.Replace, cm.Base = true, cur.Version
	default:
		cm.Base = cur.Version
	}
	for attempt := 1; ; attempt++ {
		version, err := s.cfg.Governance.Commit(ctx, c, cm)
		switch {
		case err == nil:
			return version, true, nil
		case errors.Is(err, backend.ErrExists):
			if req.mode == modeCreate && req.ifNotExists {
				return 0, false, nil
			}
			return 0, false, fmt.Errorf("%w: table %s already exists", errAlreadyExists, req.target)
		case !errors.Is(err, backend.ErrVersionConflict) || cm.Create || cm.Replace || attempt == maxCommitAttempts:
			return 0, false, err
		}
		// Another append won: build on its version if the table is still
		// the same table with the same columns.
		now, rerr := s.resolveTarget(ctx, c, req.target)
		if rerr != nil {
			return 0, false, rerr
		}
		if now == nil || now.StorageID != storageID || !sameColumns(now.Columns, cols) {
			return 0, false, fmt.Errorf("%w: table %s changed during the write", errConflict, req.target)
		}
		cm.Base = now.Version
	}
}

// discard deletes the files of a write that did not commit, even when the
// request's ctx has ended (it only names the request in the log).
func (s *Server) discard(reqCtx context.Context, tenant string, store stage.Store, files []backend.DataFile) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(reqCtx), cleanupTimeout)
	defer cancel()
	keys := make([]string, len(files))
	for i, f := range files {
		keys[i] = f.Key
	}
	if err := store.Delete(ctx, keys...); err != nil {
		s.logger(reqCtx).Warn("deleting the files of a failed write; the garbage collector will", "tenant", tenant, "files", len(keys), "err", err)
	}
}

func sameColumns(a, b []backend.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// alignRows returns a reader of src's rows shaped as the table's columns:
// with listed (an INSERT column list), src's i-th column fills column
// listed[i] and the others are NULL; without, src's columns fill the
// table's in order when byPosition (INSERT … SELECT, one value per column,
// as in MySQL) and are otherwise matched to the table's by name (ingest)
// or, when the names differ, by position. Values are cast to the table's
// types; a cast that would lose data fails.
func alignRows(src array.RecordReader, cols []backend.Column, listed []string, byPosition bool) (array.RecordReader, error) {
	in := src.Schema()
	index := make(map[string]int, len(cols))
	for i, c := range cols {
		index[c.Name] = i
	}
	from := make([]int, len(cols)) // source column of each table column, -1 = NULL
	for i := range from {
		from[i] = -1
	}
	switch {
	case listed != nil:
		if len(listed) != in.NumFields() {
			return nil, fmt.Errorf("%w: %d columns listed, %d values given", errBadRequest, len(listed), in.NumFields())
		}
		for i, name := range listed {
			j, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("%w: the table has no column %s", errBadRequest, name)
			}
			from[j] = i
		}
	case !byPosition && byName(in, index):
		for i, f := range in.Fields() {
			from[index[lowerASCII(f.Name)]] = i
		}
	default:
		if in.NumFields() != len(cols) {
			return nil, fmt.Errorf("%w: the table has %d columns, %d values given", errBadRequest, len(cols), in.NumFields())
		}
		for i := range from {
			from[i] = i
		}
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		t, ok := arrowType(c.Type)
		if !ok {
			return nil, fmt.Errorf("%w: column %s has a type lakegate cannot write", errBadRequest, c.Name)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: t, Nullable: true}
	}
	return &alignedReader{src: src, schema: arrow.NewSchema(fields, nil), from: from, refs: 1}, nil
}

// byName reports whether every column of in names a distinct table column.
func byName(in *arrow.Schema, index map[string]int) bool {
	seen := map[string]bool{}
	for _, f := range in.Fields() {
		n := lowerASCII(f.Name)
		if _, ok := index[n]; !ok || seen[n] {
			return false
		}
		seen[n] = true
	}
	return in.NumFields() > 0
}

// alignedReader casts and reorders the batches of src.
type alignedReader struct {
	src    array.RecordReader
	schema *arrow.Schema
	from   []int
	cur    arrow.RecordBatch
	err    error
	refs   int64
}

func (r *alignedReader) Schema() *arrow.Schema { return r.schema }
func (r *alignedReader) Retain()               { r.refs++ }
func (r *alignedReader) Release() {
	if r.refs--; r.refs == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}
func (r *alignedReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch under its older name.
//
// Deprecated: use RecordBatch.
func (r *alignedReader) Record() arrow.RecordBatch { return r.cur }
func (r *alignedReader) Err() error                { return r.err }

func (r *alignedReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || !r.src.Next() {
		if r.err == nil {
			r.err = r.src.Err()
		}
		return false
	}
	rec := r.src.RecordBatch()
	n := rec.NumRows()
	out := make([]arrow.Array, len(r.from))
	defer func() {
		for _, a := range out {
			if a != nil {
				a.Release()
			}
		}
	}()
	ctx := context.Background()
	for i, j := range r.from {
		want := r.schema.Field(i).Type
		if j < 0 {
			out[i] = array.MakeArrayOfNull(compute.GetAllocator(ctx), want, int(n))
			continue
		}
		col := rec.Column(j)
		if arrow.TypeEqual(col.DataType(), want) {
			col.Retain()
			out[i] = col
			continue
		}
		c, err := compute.CastArray(ctx, col, compute.SafeCastOptions(want))
		if err != nil {
			r.err = fmt.Errorf("%w: column %s: cannot store %s values as %s", errBadRequest, r.schema.Field(i).Name, col.DataType(), want)
			return false
		}
		out[i] = c
	}
	r.cur = array.NewRecordBatch(r.schema, out, n)
	return true
}

// DoPutCommandStatementIngest loads a client's Arrow stream into a table
// (ADBC bulk ingest). Modes follow the table definition options: create
// (fail if it exists), append (fail if missing), replace (create if
// missing), create-append.
func (s *Server) DoPutCommandStatementIngest(ctx context.Context, cmd flightsql.StatementIngest, rdr flight.MessageReader) (int64, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return 0, toStatus(err)
	}
	if !p.MayQuery() {
		return 0, toStatus(errNotQuerier)
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return 0, toStatus(err)
	}
	accessFrom(ctx).statementIs(accessIngest, "")
	if len(cmd.GetTransactionId()) > 0 || cmd.GetTemporary() {
		return 0, toStatus(fmt.Errorf("%w: transactions and temporary tables are not supported", errBadRequest))
	}
	w := s.whoIs(ctx, p)
	if c := cmd.GetCatalog(); c != "" && c != w.caller.Catalog {
		accessFrom(ctx).reach()
		return 0, toStatus(&notFoundError{kind: catalogKind, name: c})
	}
	mode, err := ingestMode(cmd.GetTableDefinitionOptions())
	if err != nil {
		return 0, toStatus(err)
	}
	schema := lowerASCII(cmd.GetSchema())
	if schema == "" {
		schema = w.schema
	}
	name := backend.TableName{Schema: schema, Name: lowerASCII(cmd.GetTable())}
	if err := checkTableName(name); err != nil {
		return 0, toStatus(err)
	}
	release, err := s.admitExecute.acquire(ctx, p.Tenant().String())
	if err != nil {
		return 0, s.fail(ctx, "admit", err)
	}
	defer release()
	n, err := s.write(ctx, writeRequest{who: w, target: name, mode: mode}, rdr)
	if err != nil {
		return 0, s.fail(ctx, "ingest", err)
	}
	return n, nil
}

// ingestMode maps Flight SQL's table definition options to a write mode
// (ADBC's adbc.ingest.mode: create, append, replace, create_append).
func ingestMode(o *flightsql.TableDefinitionOptions) (writeMode, error) {
	const (
		notExistFail  = 2 // TABLE_NOT_EXIST_OPTION_FAIL; unspecified and CREATE create
		existsAppend  = 2 // TABLE_EXISTS_OPTION_APPEND
		existsReplace = 3 // TABLE_EXISTS_OPTION_REPLACE; unspecified and FAIL fail
	)
	create := o == nil || int32(o.GetIfNotExist()) != notExistFail
	exists := int32(0)
	if o != nil {
		exists = int32(o.GetIfExists())
	}
	switch {
	case exists == existsReplace && create:
		return modeReplace, nil
	case exists == existsAppend && create:
		return modeCreateAppend, nil
	case exists == existsAppend:
		return modeAppend, nil
	case exists < existsAppend && create:
		return modeCreate, nil
	}
	return modeCreate, fmt.Errorf("%w: unsupported table definition options (replace needs create)", errBadRequest)
}

// checkTableName validates a target named outside SQL (ingest).
func checkTableName(n backend.TableName) error {
	if n.Schema == "" {
		return fmt.Errorf("%w: no schema: name one or set the session's schema", errBadRequest)
	}
	if !columnNameRE.MatchString(n.Schema) {
		return fmt.Errorf("%w: schema names are 1–64 of [a-z0-9_], starting with a letter or _", errBadRequest)
	}
	if !columnNameRE.MatchString(n.Name) {
		return fmt.Errorf("%w: table names are 1–64 of [a-z0-9_], starting with a letter or _", errBadRequest)
	}
	return nil
}

// executeWrite runs a write statement from DoPutCommandStatementUpdate or
// DoPutPreparedStatementUpdate: its source query is resolved and rendered by
// the planner, with an execution permit taken in between.
func (s *Server) executeWrite(ctx context.Context, w who, stmt *sqlgate.Statement) (int64, error) {
	p := w.p
	t := stmt.Target()
	target := backend.TableName{Schema: t.Schema, Name: t.Name}
	// A name no table may have is refused before any row is written.
	if err := checkTableName(target); err != nil {
		return 0, err
	}
	// The target is named in the access event whatever happens next, and
	// a target in the system schema is refused before anything is read.
	accessFrom(ctx).wrote(target, 0)
	if err := checkWritable(target); err != nil {
		return 0, err
	}
	if stmt.Kind() == sqlgate.KindDropTable {
		if !p.MayReadNamespace(target.Schema) {
			return 0, deny(reasonNamespace, tableNotFound(target.Schema, target.Name))
		}
		dropped, err := s.cfg.Governance.Drop(ctx, w.caller, target)
		switch {
		case err != nil:
			return 0, err
		case !dropped && !stmt.IfExists():
			return 0, deny(reasonPrivilege, tableNotFound(target.Schema, target.Name))
		}
		return 0, nil
	}
	if stmt.NumParams() > 0 {
		return 0, fmt.Errorf("%w: parameters in write statements are not supported; write the values into the statement or use bulk ingest", errBadRequest)
	}
	tenant := w.tenant()
	tables, err := s.planner.ResolveStatement(ctx, w, stmt)
	if err != nil {
		return 0, err
	}
	if up, err := upstreamOf(tables); err != nil || up != nil {
		return 0, fmt.Errorf("%w: writes cannot read tables of an upstream engine", errBadRequest)
	}
	release, err := s.admitExecute.acquire(ctx, tenant)
	if err != nil {
		return 0, err
	}
	defer release()
	r, unpin, err := s.planner.Render(ctx, w, stmt, tables)
	if err != nil {
		return 0, err
	}
	defer unpin()
	rows, err := s.cfg.Backend.Execute(ctx, tenant, r.sql, nil)
	if err != nil {
		return 0, withheld(tables, err)
	}
	defer rows.Release()
	req := writeRequest{who: w, target: target, mode: modeAppend, columns: stmt.Columns(), byPosition: true}
	if stmt.Kind() == sqlgate.KindCreateTableAs {
		req.mode, req.ifNotExists = modeCreate, stmt.IfNotExists()
	}
	n, err := s.write(ctx, req, rows)
	return n, withheld(tables, err)
}
