package duckdb

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"lakegate/flight/backend"
)

// versionIDRE is the shape of a backend.LocalTable ID: it becomes part of a
// quoted view name, so nothing else may pass.
var versionIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9@_-]{0,159}$`)

// Bind makes each table version queryable on the tenant's instance and
// returns the relation to render it as, in order. A version's view reads
// exactly its files, which must be absolute paths inside the tenant
// directory; it is created once and never changed (versions are immutable),
// so binding a version again costs a map lookup. A version without files is
// a view of typed NULLs with no rows, for column types the engine knows.
//
// The versions stay bound at least until ctx is done: run the statement
// over them under ctx and end ctx when the statement ends. A version
// superseded by a later one of its table (a higher number after the '@') is
// dropped once no Bind whose context is still live holds it; a statement
// that binds it again gets it back.
func (e *Engine) Bind(ctx context.Context, tenantID string, tables []backend.LocalTable) ([]backend.Relation, error) {
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	l := newLease(ctx)
	out := make([]backend.Relation, len(tables))
	for i := range tables {
		rel, err := t.bind(ctx, &tables[i], l)
		if err != nil {
			t.release(l)
			return nil, err
		}
		out[i] = rel
	}
	t.hold(l)
	return out, nil
}

// InMemory reports whether every version of ids is bound for the tenant
// and was copied into memory (Config.MaterializeBytes): a statement over
// them reads none of their files, so they need not be made local before
// Bind (which then needs no Paths for them). A copy stays in memory until
// it has gone unbound for longer than Config.QueryTimeout and its room is
// needed (see Config.MaterializeTotal).
func (e *Engine) InMemory(tenantID string, ids []string) bool {
	e.mu.Lock()
	s, ok := e.tenants[tenantID]
	e.mu.Unlock()
	if !ok {
		return false
	}
	t, ok := s.open()
	if !ok {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if t.inMemory[id] == nil {
			return false
		}
	}
	return len(ids) > 0
}

// bind binds one version and acquires it for l. The caller releases l.
func (t *tenant) bind(ctx context.Context, lt *backend.LocalTable, l *lease) (backend.Relation, error) {
	rel := backend.Relation{Schema: relSchema, Name: "v_" + lt.ID}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.eng.now()
	// A bound id passed the check below when it was bound: every
	// statement binds its versions, so the hot path skips the regexp.
	if types, ok := t.bound[lt.ID]; ok {
		if c := t.inMemory[lt.ID]; c != nil {
			c.bound = now
		}
		rel.Types = types
		t.acquire(lt.ID, l)
		return rel, nil
	}
	if !versionIDRE.MatchString(lt.ID) {
		return backend.Relation{}, fmt.Errorf("%w: table version id", ErrInvalidName)
	}
	if lt.InMemory {
		return backend.Relation{}, backend.ErrNotInMemory // dropped since InMemory said so
	}
	body, err := t.viewBody(lt)
	if err != nil {
		return backend.Relation{}, err
	}
	// A small version is copied into memory once: reading its Parquet
	// files costs more than a point query itself.
	kind := "VIEW"
	size, copy := t.materializable(ctx, lt, now)
	if copy {
		kind = "TABLE"
	}
	if err := t.exec(ctx, "CREATE "+kind+" IF NOT EXISTS "+relSchema+"."+quoteIdent(rel.Name)+" AS "+body); err != nil {
		return backend.Relation{}, err
	}
	if copy {
		t.materialized += size
		t.inMemory[lt.ID] = &copied{size: size, bound: now}
	}
	if rel.Types, err = t.viewTypes(ctx, rel.Name); err != nil {
		return backend.Relation{}, err
	}
	t.bound[lt.ID] = rel.Types
	t.acquire(lt.ID, l)
	t.boundVersion(lt.ID)
	return rel, nil
}

// materializable reports whether lt should be copied into memory (see
// Config.MaterializeBytes) and its files' total size, making room for it
// by dropping idle copies when it does not fit. The caller holds t.mu.
func (t *tenant) materializable(ctx context.Context, lt *backend.LocalTable, now time.Time) (int64, bool) {
	cfg := t.eng.cfg
	if cfg.MaterializeBytes < 0 || len(lt.Paths) == 0 {
		return 0, false
	}
	var size int64
	for _, p := range lt.Paths {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		size += fi.Size()
	}
	if size > cfg.MaterializeBytes || size > cfg.MaterializeTotal {
		return size, false
	}
	if t.materialized+size > cfg.MaterializeTotal {
		t.dropIdle(ctx, t.materialized+size-cfg.MaterializeTotal, now, cfg.QueryTimeout)
	}
	return size, t.materialized+size <= cfg.MaterializeTotal
}

// dropIdle drops copies not bound for longer than idle (at least
// QueryTimeout), least recently bound first, until need bytes are free or
// none is left, and returns the bytes freed. Every statement binds its
// versions before it runs and runs at most QueryTimeout, so no statement
// still reads an idle copy; one that binds it later makes it again. The
// caller holds t.mu.
func (t *tenant) dropIdle(ctx context.Context, need int64, now time.Time, idle time.Duration) (freed int64) {
	idle = max(idle, t.eng.cfg.QueryTimeout)
	var ids []string
	for id, c := range t.inMemory {
		if now.Sub(c.bound) > idle {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return t.inMemory[a].bound.Compare(t.inMemory[b].bound) })
	for _, id := range ids {
		if freed >= need {
			break
		}
		if err := t.exec(ctx, "DROP TABLE IF EXISTS "+relSchema+"."+quoteIdent("v_"+id)); err != nil {
			t.log.Warn("dropping an idle in-memory table version", "error", err)
			break
		}
		freed += t.inMemory[id].size
		t.forget(id)
	}
	return freed
}

// DropIdleCopies drops, in every open tenant, the in-memory copies of
// versions (Config.MaterializeBytes) no statement has bound for longer
// than idle (at least Config.QueryTimeout), and returns their files' bytes:
// a tenant that stopped querying gives its copies back. A version bound
// again later is read from its files, or copied again.
func (e *Engine) DropIdleCopies(ctx context.Context, idle time.Duration) int64 {
	e.mu.Lock()
	var ts []*tenant
	for _, s := range e.tenants {
		if t, ok := s.open(); ok { // one still opening has nothing copied yet
			ts = append(ts, t)
		}
	}
	e.mu.Unlock()
	now := e.now()
	var freed int64
	for _, t := range ts {
		t.mu.Lock()
		freed += t.dropIdle(ctx, math.MaxInt64, now, idle)
		t.mu.Unlock()
	}
	return freed
}

// viewTypes returns the engine types of the columns of view name (in
// relSchema), in order, as DuckDB prints them. DESCRIBE binds the one
// view: duckdb_columns() would list every column of every bound version
// before filtering, so binding a new version would cost more the more
// versions the tenant has bound.
func (t *tenant) viewTypes(ctx context.Context, name string) ([]string, error) {
	var types []string
	err := t.readAll(ctx, "SELECT column_type FROM (DESCRIBE "+relSchema+"."+quoteIdent(name)+")", func(rec arrow.RecordBatch) error {
		col, ok := rec.Column(0).(*array.String)
		if !ok {
			return fmt.Errorf("duckdb: view column types: unexpected %s", rec.Column(0).DataType())
		}
		for i := range col.Len() {
			types = append(types, strings.Clone(col.Value(i))) // the batch's memory goes with it
		}
		return nil
	})
	return types, err
}

// readAll runs sql on one of the tenant's connections and passes each
// batch of its result to each, which must not keep it; it stops at the
// first error.
func (t *tenant) readAll(ctx context.Context, sql string, each func(arrow.RecordBatch) error) error {
	s, err := t.begin(ctx)
	if err != nil {
		return err
	}
	defer s.end()
	schema, err := s.start(sql, nil, false)
	if err != nil {
		return s.err(err)
	}
	for {
		rec, err := s.fetch(schema)
		if err != nil {
			return s.err(err)
		}
		if rec == nil {
			return nil
		}
		err = each(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
}

// viewBody is the SELECT a version's view stands for.
func (t *tenant) viewBody(lt *backend.LocalTable) (string, error) {
	if len(lt.Paths) == 0 {
		return emptyRelation(lt.Columns)
	}
	var b strings.Builder
	b.WriteString("SELECT * FROM read_parquet([")
	for i, p := range lt.Paths {
		if !filepath.IsAbs(p) || !strings.HasPrefix(filepath.Clean(p), t.dir+string(filepath.Separator)) {
			return "", fmt.Errorf("%w: a data file is outside the tenant directory", backend.ErrQuery)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoteString(filepath.Clean(p)))
	}
	b.WriteString("])")
	return b.String(), nil
}

// emptyTypes maps catalog column types (Arrow type names as the gateway
// records them, and the common Gravitino names), lower-cased, to DuckDB
// types, for views of tables that have no data file yet.
var emptyTypes = map[string]string{
	"bool": "BOOLEAN", "boolean": "BOOLEAN",
	"int8": "TINYINT", "byte": "TINYINT", "int16": "SMALLINT", "short": "SMALLINT",
	"int32": "INTEGER", "integer": "INTEGER", "int64": "BIGINT", "long": "BIGINT",
	"uint8": "UTINYINT", "uint16": "USMALLINT", "uint32": "UINTEGER", "uint64": "UBIGINT",
	"float32": "FLOAT", "float": "FLOAT", "float64": "DOUBLE", "double": "DOUBLE",
	"utf8": "VARCHAR", "large_utf8": "VARCHAR", "string": "VARCHAR", "varchar": "VARCHAR",
	"binary": "BLOB", "large_binary": "BLOB", "date32": "DATE", "date": "DATE",
	"timestamp[us]": "TIMESTAMP", "timestamp": "TIMESTAMP", "timestamp[us, tz=utc]": "TIMESTAMPTZ",
	"timestamp_tz": "TIMESTAMPTZ",
}

// emptyRelation is a SELECT of no rows with the columns' names and types.
func emptyRelation(cols []backend.Column) (string, error) {
	if len(cols) == 0 {
		return "", fmt.Errorf("%w: the table has no columns", backend.ErrQuery)
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range cols {
		typ, ok := emptyTypes[strings.ToLower(c.Type)]
		if !ok {
			return "", fmt.Errorf("%w: the table has no data files and a column type the engine cannot create", backend.ErrQuery)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "CAST(NULL AS %s) AS %s", typ, quoteIdent(c.Name))
	}
	b.WriteString(" WHERE false")
	return b.String(), nil
}
