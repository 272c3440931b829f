package flight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
	"lakegate/stage"
)

// TableFiles makes committed table files available to the engine and opens
// tenants' child stages for writing; tablefiles.Files implements it.
type TableFiles interface {
	// Acquire localizes the files of every version, in order; release when
	// the statement no longer reads them.
	Acquire(ctx context.Context, tenant string, versions []backend.TableVersion) ([]backend.LocalTable, func(), error)
	// Store returns the tenant's child stage.
	Store(ctx context.Context, tenant string) (stage.Store, error)
}

// caller is the Catalog identity of p in its session's catalog.
func (s *Server) caller(ctx context.Context, p *authz.Principal) backend.Caller {
	return backend.Caller{Tenant: p.Tenant().String(), Subject: p.ID().String(), Catalog: s.catalogOf(ctx, p)}
}

// catalogOf is the catalog of p's session: the "catalog" session option,
// or Config.DefaultCatalog.
func (s *Server) catalogOf(ctx context.Context, p *authz.Principal) string {
	if c := s.sessions.state(ctx, p).catalog; c != "" {
		return c
	}
	return s.cfg.DefaultCatalog
}

// resolveRead resolves the tables a statement reads. The local gate runs
// first, on every reference, so a table outside the caller's namespaces
// never reaches the catalog; every kind of refusal is the same not-found
// error naming the first unavailable table in reference order.
func (s *Server) resolveRead(ctx context.Context, p *authz.Principal, refs []sqlgate.TableRef) ([]backend.TableVersion, error) {
	for _, ref := range refs {
		if !p.MayReadNamespace(ref.Schema) {
			return nil, deny(reasonNamespace, tableNotFound(ref.Schema, ref.Name))
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	q := make([]backend.TableRef, len(refs))
	for i, ref := range refs {
		q[i] = backend.TableRef{Name: backend.TableName{Schema: ref.Schema, Name: ref.Name}}
	}
	got, err := s.cfg.Catalog.Resolve(ctx, s.caller(ctx, p), q)
	if err != nil {
		return nil, err
	}
	out := make([]backend.TableVersion, len(refs))
	for i, v := range got {
		if v == nil {
			return nil, deny(reasonPrivilege, tableNotFound(refs[i].Schema, refs[i].Name))
		}
		out[i] = *v
	}
	return out, nil
}

// bind localizes and binds versions on the caller's engine and returns the
// relation map the gate renders with, each table read through the policy
// the catalog gave for it. release must be called once the statement no
// longer reads the files.
func (s *Server) bind(ctx context.Context, p *authz.Principal, refs []sqlgate.TableRef, versions []backend.TableVersion) (map[sqlgate.TableRef]sqlgate.Relation, func(), error) {
	rels, release, err := s.localize(ctx, p.Tenant().String(), versions)
	if err != nil {
		return nil, nil, err
	}
	m := make(map[sqlgate.TableRef]sqlgate.Relation, len(refs))
	for i, ref := range refs {
		if ref == (sqlgate.TableRef{}) {
			continue
		}
		r := sqlgate.Relation{Schema: rels[i].Schema, Name: rels[i].Name, Columns: versions[i].ColumnNames(), Types: rels[i].Types}
		if versions[i].Policy != nil {
			if r.Policy, err = s.preparePolicy(p, &versions[i], r.Columns, sqlgate.DialectDuckDB); err != nil {
				release()
				return nil, nil, err
			}
		}
		m[ref] = r
	}
	return m, release, nil
}

// rendered is a statement printed for the engine: sql, and for a statement
// with parameters compared with columns of row-filtered tables, pushed, the
// text that also repeats those comparisons behind the filters, to be run
// only when the bound values have the kinds kinds gives (plan.sqlFor).
type rendered struct {
	sql    string
	pushed string
	kinds  []sqlgate.ParamKind
}

// render binds the versions of stmt's tables (in stmt.Tables() order) and
// prints stmt over them; release unpins their files once the statement no
// longer reads them.
func (s *Server) render(ctx context.Context, p *authz.Principal, stmt *sqlgate.Statement, tables []backend.TableVersion) (r rendered, release func(), err error) {
	rel, release, err := s.bind(ctx, p, stmt.Tables(), tables)
	if err != nil {
		return r, nil, err
	}
	if r.sql, err = stmt.Render(rel); err == nil {
		r.pushed, r.kinds, err = stmt.RenderPushed(rel)
	}
	if err != nil {
		release()
		return rendered{}, nil, err
	}
	return r, release, nil
}

// preparePolicy prepares the row filter and masks of v for p. A policy that
// cannot be applied to the version's columns refuses the statement, naming
// the table but not the expression (the caller may not be allowed to read
// the policy).
func (s *Server) preparePolicy(p *authz.Principal, v *backend.TableVersion, columns []string, d sqlgate.Dialect) (*sqlgate.Policy, error) {
	bad := func(err error) error {
		return &policyError{table: v.Name.String(), err: err}
	}
	pol := &sqlgate.Policy{Caller: sqlgate.Caller{User: p.ID().String(), Tenant: p.Tenant().String(), Roles: v.Policy.Roles}}
	if v.Policy.RowFilter != "" {
		f, err := s.gate.PrepareRowFilter(v.Policy.RowFilter, columns, d)
		if err != nil {
			return nil, bad(err)
		}
		pol.Filter = f
	}
	for _, cm := range v.Policy.Masks {
		i := slices.Index(columns, cm.Column)
		if i < 0 {
			continue // a mask of a column this version does not have
		}
		m, err := s.gate.PrepareMask(cm.Mask, cm.Column, columns, d)
		if err != nil {
			return nil, bad(err)
		}
		if pol.Masks == nil {
			pol.Masks = make([]*sqlgate.Mask, len(columns))
		}
		pol.Masks[i] = m
	}
	return pol, nil
}

// rebind makes sure the pinned versions of a ticket or prepared statement
// are bound before their SQL runs (another replica may have planned it, or
// the files may have left the cache since).
func (s *Server) rebind(ctx context.Context, tenant string, versions []backend.TableVersion) (func(), error) {
	_, release, err := s.localize(ctx, tenant, versions)
	return release, err
}

// inMemory is implemented by engines that copy small versions into memory
// (duckdb.Engine): a statement over such versions reads none of their
// files.
type inMemory interface {
	InMemory(tenant string, ids []string) bool
}

// localize makes the versions' files available on the engine's disk and
// binds them, returning their relations in order; release unpins the files.
// Versions the engine holds in memory need no files.
func (s *Server) localize(ctx context.Context, tenant string, versions []backend.TableVersion) ([]backend.Relation, func(), error) {
	if len(versions) == 0 {
		return nil, func() {}, nil
	}
	if mem, ok := s.cfg.Backend.(inMemory); ok {
		ids := make([]string, len(versions))
		local := make([]backend.LocalTable, len(versions))
		for i := range versions {
			ids[i] = versions[i].ID()
			local[i] = backend.LocalTable{ID: ids[i], Columns: versions[i].Columns, InMemory: true}
		}
		if mem.InMemory(tenant, ids) {
			// A copy idle long enough may be dropped in between: then
			// its files are made local as for any other version.
			rels, err := s.cfg.Backend.Bind(ctx, tenant, local)
			if !errors.Is(err, backend.ErrNotInMemory) {
				return rels, func() {}, err
			}
		}
	}
	local, release, err := s.cfg.Files.Acquire(ctx, tenant, versions)
	if err != nil {
		return nil, nil, err
	}
	rels, err := s.cfg.Backend.Bind(ctx, tenant, local)
	if err != nil {
		release()
		return nil, nil, err
	}
	return rels, release, nil
}

// Ticket payload: one version byte, then JSON of ticketPayload.
const payloadV2 = 2

// ticketPayload is what a statement ticket carries: the rendered SQL and the
// table versions it reads, pinned at planning.
type ticketPayload struct {
	SQL    string                 `json:"sql,omitempty"`
	Tables []backend.TableVersion `json:"tables,omitempty"`
}

func encodePayload(pl *plan) ([]byte, error) {
	b, err := json.Marshal(ticketPayload{SQL: pl.sql, Tables: pl.tables})
	if err != nil {
		return nil, err
	}
	return append([]byte{payloadV2}, b...), nil
}

func decodePayload(b []byte) (ticketPayload, error) {
	var tp ticketPayload
	if len(b) < 1 || b[0] != payloadV2 || json.Unmarshal(b[1:], &tp) != nil {
		return tp, ticket.ErrInvalid
	}
	return tp, nil
}

// Arrow types of catalog column types, for discovery. Tables lakegate
// writes record Arrow type names (DataType.String()); tables created through
// the REST API may use Gravitino's names.
var (
	simpleArrowTypes = map[string]arrow.DataType{
		"bool": arrow.FixedWidthTypes.Boolean, "boolean": arrow.FixedWidthTypes.Boolean,
		"int8": arrow.PrimitiveTypes.Int8, "byte": arrow.PrimitiveTypes.Int8,
		"int16": arrow.PrimitiveTypes.Int16, "short": arrow.PrimitiveTypes.Int16,
		"int32": arrow.PrimitiveTypes.Int32, "integer": arrow.PrimitiveTypes.Int32,
		"int64": arrow.PrimitiveTypes.Int64, "long": arrow.PrimitiveTypes.Int64,
		"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16,
		"uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
		"float16": arrow.FixedWidthTypes.Float16, "float32": arrow.PrimitiveTypes.Float32, "float": arrow.PrimitiveTypes.Float32,
		"float64": arrow.PrimitiveTypes.Float64, "double": arrow.PrimitiveTypes.Float64,
		"utf8": arrow.BinaryTypes.String, "string": arrow.BinaryTypes.String, "varchar": arrow.BinaryTypes.String,
		"large_utf8": arrow.BinaryTypes.LargeString, "utf8_view": arrow.BinaryTypes.StringView,
		"binary": arrow.BinaryTypes.Binary, "large_binary": arrow.BinaryTypes.LargeBinary,
		"date32": arrow.FixedWidthTypes.Date32, "date": arrow.FixedWidthTypes.Date32, "date64": arrow.FixedWidthTypes.Date64,
		"time64[us]": arrow.FixedWidthTypes.Time64us, "time32[ms]": arrow.FixedWidthTypes.Time32ms,
		"null": arrow.Null,
	}
	timestampTypeRE = regexp.MustCompile(`^timestamp\[(s|ms|us|ns)(?:, tz=([A-Za-z0-9_/+:-]{1,64}))?\]$`)
	decimalTypeRE   = regexp.MustCompile(`^decimal(?:128)?\((\d{1,2}), ?(\d{1,2})\)$`)
)

// arrowType maps a catalog column type to an Arrow type. An unknown type is
// reported as a string column carrying the catalog's type name in the
// field metadata, so discovery never fails on one table.
func arrowType(name string) (arrow.DataType, bool) {
	if t, ok := simpleArrowTypes[strings.ToLower(name)]; ok {
		return t, true
	}
	if m := timestampTypeRE.FindStringSubmatch(name); m != nil {
		unit := map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}[m[1]]
		return &arrow.TimestampType{Unit: unit, TimeZone: m[2]}, true
	}
	if m := decimalTypeRE.FindStringSubmatch(strings.ToLower(name)); m != nil {
		p, _ := strconv.Atoi(m[1])
		sc, _ := strconv.Atoi(m[2])
		if p >= 1 && p <= 38 && sc <= p {
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(sc)}, true
		}
	}
	return arrow.BinaryTypes.String, false
}

// arrowSchema is the Arrow schema of a table version's columns.
func arrowSchema(cols []backend.Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		t, ok := arrowType(c.Type)
		fields[i] = arrow.Field{Name: c.Name, Type: t, Nullable: true}
		if !ok {
			fields[i].Metadata = arrow.NewMetadata([]string{"lakegate.catalog_type"}, []string{c.Type})
		}
	}
	return arrow.NewSchema(fields, nil)
}

// catalogType is the catalog column type recorded for an Arrow type.
func catalogType(t arrow.DataType) string { return t.String() }

// columnsOf returns the catalog columns of an Arrow schema: lower-cased
// names, which must be distinct identifiers.
func columnsOf(schema *arrow.Schema) ([]backend.Column, error) {
	if schema.NumFields() == 0 {
		return nil, fmt.Errorf("%w: a table needs at least one column", errBadRequest)
	}
	cols := make([]backend.Column, schema.NumFields())
	seen := make(map[string]bool, len(cols))
	for i, f := range schema.Fields() {
		name := strings.ToLower(f.Name)
		if !columnNameRE.MatchString(name) {
			return nil, fmt.Errorf("%w: column %d: names are 1–64 of [a-z0-9_], starting with a letter or _", errBadRequest, i+1)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: column %s appears twice", errBadRequest, name)
		}
		seen[name] = true
		cols[i] = backend.Column{Name: name, Type: catalogType(f.Type)}
	}
	return cols, nil
}

var columnNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,63}$`)

// reauthorize checks, before a ticket runs, that its pinned versions may
// still be read: when the tenant's governance generation has moved since
// planning (a grant revoked, a DENY added, a table dropped…), each pinned
// version is resolved again for the caller, and any one that is no longer
// available fails the ticket like a missing table.
func (s *Server) reauthorize(ctx context.Context, p *authz.Principal, pinned []backend.TableVersion) error {
	if len(pinned) == 0 {
		return nil
	}
	c := s.caller(ctx, p)
	var at uint64
	for _, v := range pinned {
		at = max(at, v.Generation)
	}
	now, err := s.cfg.Catalog.Generation(ctx, c.Tenant)
	if err != nil {
		return err
	}
	if at != 0 && now == at {
		return nil
	}
	refs := make([]backend.TableRef, len(pinned))
	for i, v := range pinned {
		if !p.MayReadNamespace(v.Name.Schema) {
			return deny(reasonNamespace, tableNotFound(v.Name.Schema, v.Name.Name))
		}
		refs[i] = backend.TableRef{Name: v.Name, Version: v.Version}
	}
	got, err := s.cfg.Catalog.Resolve(ctx, c, refs)
	if err != nil {
		return err
	}
	for i, v := range got {
		if v == nil || !v.Same(&pinned[i]) {
			return deny(reasonPrivilege, tableNotFound(pinned[i].Name.Schema, pinned[i].Name.Name))
		}
	}
	return nil
}
