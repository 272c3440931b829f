package flight

import (
	"context"
	"errors"
	"maps"
	"slices"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
)

// The planner's table steps: resolve a statement's tables for the caller
// (namespace grants, then the catalog), authorize pinned versions again,
// bind versions on the engine through their policies, and render.

// resolve resolves the tables a statement reads. The local gate runs
// first, on every reference, so a table outside the caller's namespaces
// never reaches the catalog; every kind of refusal is the same not-found
// error naming the first unavailable table in reference order.
func (pn *planner) resolve(ctx context.Context, w who, refs []sqlgate.TableRef) ([]backend.TableVersion, error) {
	a := accessFrom(ctx)
	// Until the catalog answers, the access names the tables as the
	// client wrote them, at version 0.
	a.readRefs(refs, nil)
	for _, ref := range refs {
		if !w.p.MayReadNamespace(ref.Schema) {
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
	got, err := pn.catalog.Resolve(ctx, w.caller, q)
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
	a.readRefs(refs, out)
	return out, nil
}

// ResolveStatement resolves the tables stmt reads, in stmt.Tables() order,
// and checks its column references against them.
func (pn *planner) ResolveStatement(ctx context.Context, w who, stmt *sqlgate.Statement) ([]backend.TableVersion, error) {
	refs := stmt.Tables()
	tables, err := pn.resolve(ctx, w, refs)
	if err != nil {
		return nil, err
	}
	if err := checkColumns(stmt, refs, tables); err != nil {
		return nil, err
	}
	return tables, nil
}

// Reauthorize checks, before a ticket runs, that its pinned versions may
// still be read: when the tenant's governance generation has moved since
// planning (a grant revoked, a DENY added, a table dropped…), each pinned
// version is resolved again for the caller, and any one that is no longer
// available fails the ticket like a missing table.
func (pn *planner) Reauthorize(ctx context.Context, w who, pinned []backend.TableVersion) (err error) {
	a := accessFrom(ctx)
	a.reach()
	if a != nil {
		defer func() { a.readPinned(pinned, err != nil) }()
	}
	if len(pinned) == 0 {
		return nil
	}
	var at uint64
	for _, v := range pinned {
		at = max(at, v.Generation)
	}
	now, err := pn.catalog.Generation(ctx, w.caller.Tenant)
	if err != nil {
		return err
	}
	if at != 0 && now == at {
		return nil
	}
	refs := make([]backend.TableRef, len(pinned))
	for i, v := range pinned {
		if !w.p.MayReadNamespace(v.Name.Schema) {
			return deny(reasonNamespace, tableNotFound(v.Name.Schema, v.Name.Name))
		}
		refs[i] = backend.TableRef{Name: v.Name, Version: v.Version}
	}
	got, err := pn.catalog.Resolve(ctx, w.caller, refs)
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

// Visible lists the schemas and tables the caller may see: the catalog's
// answer for the caller, narrowed to the caller's namespace grants, so
// discovery never shows more than a query could reach.
func (pn *planner) Visible(ctx context.Context, w who) (backend.Listing, error) {
	accessFrom(ctx).reach()
	if !w.p.MayQuery() {
		return backend.Listing{}, nil
	}
	l, err := pn.catalog.List(ctx, w.caller)
	if err != nil {
		return backend.Listing{}, err
	}
	out := backend.Listing{}
	for _, sc := range l.Schemas {
		if w.p.MayReadNamespace(sc) {
			out.Schemas = append(out.Schemas, sc)
		}
	}
	for _, t := range l.Tables {
		if w.p.MayReadNamespace(t.Name.Schema) {
			out.Tables = append(out.Tables, t)
		}
	}
	return out, nil
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

// Render binds the versions of stmt's tables (in stmt.Tables() order) and
// prints stmt over them; release unpins their files once the statement no
// longer reads them.
func (pn *planner) Render(ctx context.Context, w who, stmt *sqlgate.Statement, tables []backend.TableVersion) (r rendered, release func(), err error) {
	rel, release, err := pn.bind(ctx, w, stmt.Tables(), tables)
	if err != nil {
		return r, nil, err
	}
	pn.columnFacts(ctx, w, stmt, rel, tables)
	if r.sql, err = stmt.Render(rel); err == nil {
		r.pushed, r.kinds, err = stmt.RenderPushed(rel)
	}
	if err != nil {
		release()
		return rendered{}, nil, err
	}
	return r, release, nil
}

// columnFacts is implemented by engines that can tell facts about the
// values of a text column of a bound version (duckdb.Engine), which let the
// gate print cheaper forms of MySQL's collation (sqlgate.Relation).
type columnFacts interface {
	ColumnFact(ctx context.Context, tenant, id, column string, fact backend.ColumnFact) (bool, error)
}

// factRows bounds the versions whose columns columnFacts asks about, by
// their rows: the first question about a column scans it.
const factRows = 4 << 20

// columnFacts sets Relation.FoldUnique, Folded, ASCII, NoUpper and NoLower
// in rel for the text columns stmt groups by or counts distinct
// (sqlgate.Statement.GroupKeys), compares with LIKE (LikeColumns,
// LikeLetters) or with text literals (CompareColumns), versions[i] being
// the version of stmt.Tables()[i], bound.
// A fact the engine cannot answer, or of a version of more than factRows
// rows, stays unknown: the statement then takes the form it takes without
// it.
func (pn *planner) columnFacts(ctx context.Context, w who, stmt *sqlgate.Statement, rel map[sqlgate.TableRef]sqlgate.Relation, versions []backend.TableVersion) {
	cf, ok := pn.engine.(columnFacts)
	if !ok {
		return
	}
	refs := stmt.Tables()
	// learn asks for the facts facts(column) gives about each column of
	// cols worth asking about, and records those that hold in rel.
	learn := func(cols []sqlgate.ColumnRef, facts func(sqlgate.ColumnRef, sqlgate.Relation, int) []backend.ColumnFact) {
		for _, k := range cols {
			i := slices.Index(refs, k.Table)
			if i < 0 || i >= len(versions) || versions[i].Upstream != nil {
				continue
			}
			var rows int64
			for _, f := range versions[i].Files {
				rows += f.Rows
			}
			if rows == 0 || rows > factRows { // nothing to gain, or too much to scan
				continue
			}
			r := rel[k.Table]
			c := slices.Index(r.Columns, k.Column)
			if c < 0 {
				continue
			}
			for _, fact := range facts(k, r, c) {
				if v, err := cf.ColumnFact(ctx, w.tenant(), versions[i].ID(), k.Column, fact); err == nil && v {
					recordFact(&r, c, fact)
				}
			}
			rel[k.Table] = r
		}
	}
	one := func(fact backend.ColumnFact) func(sqlgate.ColumnRef, sqlgate.Relation, int) []backend.ColumnFact {
		return func(sqlgate.ColumnRef, sqlgate.Relation, int) []backend.ColumnFact { return []backend.ColumnFact{fact} }
	}
	learn(stmt.GroupKeys(rel), one(backend.FactFoldUnique))
	text := stmt.LikeColumns(rel)
	for _, c := range stmt.CompareColumns(rel) {
		if !slices.Contains(text, c) {
			text = append(text, c)
		}
	}
	learn(text, one(backend.FactFolded))
	learn(text, one(backend.FactASCII))

	// The letters of the patterns an ASCII column that is not folded is
	// compared with: in upper case first, and in lower case only when some
	// occurs in upper case (otherwise the gate needs no more).
	letters := stmt.LikeLetters(rel)
	lacks := func(upper bool) func(sqlgate.ColumnRef, sqlgate.Relation, int) []backend.ColumnFact {
		return func(k sqlgate.ColumnRef, r sqlgate.Relation, c int) []backend.ColumnFact {
			if c >= len(r.ASCII) || !r.ASCII[c] || c < len(r.Folded) && r.Folded[c] ||
				!upper && c < len(r.NoUpper) && letters[k]&^r.NoUpper[c] == 0 {
				return nil
			}
			var facts []backend.ColumnFact
			for l := range byte(26) {
				if letters[k]&(1<<l) != 0 {
					if upper {
						facts = append(facts, backend.FactLacks('A'+l))
					} else {
						facts = append(facts, backend.FactLacks('a'+l))
					}
				}
			}
			return facts
		}
	}
	cols := slices.Collect(maps.Keys(letters))
	learn(cols, lacks(true))
	learn(cols, lacks(false))
}

// recordFact marks in r that fact holds for its column c.
func recordFact(r *sqlgate.Relation, c int, fact backend.ColumnFact) {
	if l, ok := fact.Letter(); ok {
		lacks, bit := &r.NoLower, uint32(1)<<(l-'a')
		if l <= 'Z' {
			lacks, bit = &r.NoUpper, 1<<(l-'A')
		}
		if *lacks == nil {
			*lacks = make([]uint32, len(r.Columns))
		}
		(*lacks)[c] |= bit
		return
	}
	marks := &r.FoldUnique
	switch fact {
	case backend.FactFolded:
		marks = &r.Folded
	case backend.FactASCII:
		marks = &r.ASCII
	}
	if *marks == nil {
		*marks = make([]bool, len(r.Columns))
	}
	(*marks)[c] = true
}

// bind localizes and binds versions on the caller's engine and returns the
// relation map the gate renders with, each table read through the policy
// the catalog gave for it. release must be called once the statement no
// longer reads the files.
func (pn *planner) bind(ctx context.Context, w who, refs []sqlgate.TableRef, versions []backend.TableVersion) (map[sqlgate.TableRef]sqlgate.Relation, func(), error) {
	rels, release, err := pn.localize(ctx, w.tenant(), versions)
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
			if r.Policy, err = pn.preparePolicy(w, &versions[i], r.Columns, sqlgate.DialectDuckDB); err != nil {
				release()
				return nil, nil, err
			}
		}
		m[ref] = r
	}
	return m, release, nil
}

// preparePolicy prepares the row filter and masks of v for w's principal.
// A policy that cannot be applied to the version's columns refuses the
// statement, naming the table but not the expression (the caller may not be
// allowed to read the policy).
func (pn *planner) preparePolicy(w who, v *backend.TableVersion, columns []string, d sqlgate.Dialect) (*sqlgate.Policy, error) {
	bad := func(err error) error {
		return &policyError{table: v.Name.String(), err: err}
	}
	pol := &sqlgate.Policy{Caller: sqlgate.Caller{User: w.p.ID().String(), Tenant: w.p.Tenant().String(), Roles: v.Policy.Roles}}
	if v.Policy.RowFilter != "" {
		f, err := pn.gate.PrepareRowFilter(v.Policy.RowFilter, columns, d)
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
		m, err := pn.gate.PrepareMask(cm.Mask, cm.Column, columns, d)
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

// Bind makes sure the pinned versions of a ticket or prepared statement
// are bound before their SQL runs (another replica may have planned it, or
// the files may have left the cache since); release unpins their files.
func (pn *planner) Bind(ctx context.Context, tenant string, versions []backend.TableVersion) (release func(), err error) {
	_, release, err = pn.localize(ctx, tenant, versions)
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
func (pn *planner) localize(ctx context.Context, tenant string, versions []backend.TableVersion) ([]backend.Relation, func(), error) {
	if len(versions) == 0 {
		return nil, func() {}, nil
	}
	if mem, ok := pn.engine.(inMemory); ok {
		ids := make([]string, len(versions))
		local := make([]backend.LocalTable, len(versions))
		for i := range versions {
			ids[i] = versions[i].ID()
			local[i] = backend.LocalTable{ID: ids[i], Columns: versions[i].Columns, InMemory: true}
		}
		if mem.InMemory(tenant, ids) {
			// A copy idle long enough may be dropped in between: then
			// its files are made local as for any other version.
			rels, err := pn.engine.Bind(ctx, tenant, local)
			if !errors.Is(err, backend.ErrNotInMemory) {
				return rels, func() {}, err
			}
		}
	}
	local, release, err := pn.files.Acquire(ctx, tenant, versions)
	if err != nil {
		return nil, nil, err
	}
	rels, err := pn.engine.Bind(ctx, tenant, local)
	if err != nil {
		release()
		return nil, nil, err
	}
	return rels, release, nil
}
