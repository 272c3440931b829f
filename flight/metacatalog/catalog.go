package metacatalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"lakegate/flight/backend"
	"lakegate/metasrv/client"
)

// Governance is a backend.Governance over a metasrv client. It is safe for use
// from multiple goroutines.
type Governance struct {
	c       *client.Client
	observe func(op string, d time.Duration, err error)
	reuse   func(reused bool)
	cache   *decisions // nil: every resolve asks metasrv
	log     *slog.Logger

	mu   sync.Mutex
	gens map[string]uint64 // tenant → generation of this gateway's last write
}

var _ backend.Governance = (*Governance)(nil)

// New returns a Catalog using c, which must authenticate as a query_service
// principal that may delegate for the tenants it will serve.
func New(c *client.Client) *Governance { return NewWithOptions(c, Options{}) }

// Options are optional settings of a Catalog.
type Options struct {
	// Observe, when non-nil, is called after every call to metasrv with the
	// operation (OpResolve, OpList, OpCommit, OpDrop or OpGeneration), its duration
	// (failover and retries included) and the error the Catalog method
	// returns for it (nil when the answer was usable, including "no
	// metalake" and "not dropped"). It must be safe for concurrent use and
	// quick. flight.Metrics.ObserveMetasrv fits.
	Observe func(op string, d time.Duration, err error)

	// DecisionWindow, when positive, lets the Catalog reuse metasrv's answer
	// to a resolve request (the same caller, catalog and references) or a
	// listing (the same caller and catalog) while
	// a watch on the tenant's governance generation, running in Watch,
	// confirms that nothing changed: an answer is dropped as soon as the
	// watch reports another generation, and none is reused once the watch
	// has gone unconfirmed for DecisionWindow. It bounds how long a change
	// (a revoked grant, a DENY, a dropped table) can go unseen when metasrv
	// stops answering; a reachable metasrv reports changes within a round
	// trip. Zero asks metasrv on every resolve.
	DecisionWindow time.Duration
	// Reuse, when non-nil, is called once per resolve and per listing when
	// DecisionWindow is set, reporting whether a cached answer served it. It must be safe
	// for concurrent use and quick.
	Reuse func(reused bool)
	// Generations, when set with a DecisionWindow, is an in-process
	// authority on tenants' current generations (the embedded metasrv of
	// `lakegate serve`): a cached answer is checked against it at every
	// use, so a change applied there is seen by the very next statement,
	// and Watch is not needed. ok false means it cannot vouch now (nothing
	// is reused then). It must be safe for concurrent use and quick.
	Generations func(tenant string) (gen uint64, ok bool)
	// Now is the clock the cache reads; nil means time.Now.
	Now func() time.Time
	// Logger, when non-nil, hears when the generation watch stops being
	// answered (decisions are then no longer reused) and when it recovers.
	Logger *slog.Logger
}

// Operations reported to Options.Observe.
const (
	OpResolve = "resolve"
	OpList    = "list"
	OpCommit  = "commit" // creating a table or committing a version
	OpDrop    = "drop"
	// OpGeneration reads the tenant's governance generation.
	OpGeneration = "generation"
)

// NewWithOptions is New with options.
func NewWithOptions(c *client.Client, o Options) *Governance {
	m := &Governance{c: c, observe: o.Observe, reuse: o.Reuse, log: o.Logger, gens: map[string]uint64{}}
	if o.DecisionWindow > 0 {
		now := o.Now
		if now == nil {
			now = time.Now
		}
		m.cache = newDecisions(o.DecisionWindow, now, o.Generations)
	}
	return m
}

// Watch follows, until ctx ends, the governance generations of the
// tenants whose decisions the Catalog holds, so that they are reused only
// while valid (Options.DecisionWindow). Without a window it returns at
// once; with one, nothing is reused unless Watch runs. Run it in its own
// goroutine. With Options.Generations it returns at once too.
func (m *Governance) Watch(ctx context.Context) {
	if m.cache == nil || m.cache.authority != nil {
		return
	}
	// A watch request is held at most wait, so that one confirmation is
	// always younger than the window while requests keep being answered.
	wait := m.cache.window / 3
	failing := false
	for ctx.Err() == nil {
		req, cancel := context.WithTimeout(ctx, wait+m.cache.window)
		known := m.cache.watched(cancel)
		if len(known) == 0 {
			cancel()
			select {
			case <-m.cache.wake:
			case <-ctx.Done():
			}
			continue
		}
		sent := m.cache.now()
		gens, err := m.c.WatchGenerations(req, known, wait)
		restarted := errors.Is(req.Err(), context.Canceled)
		cancel()
		switch {
		case err == nil:
			m.cache.reported(sent, gens)
			if failing && m.log != nil {
				m.log.Info("generation watch answered again: decisions are reused")
			}
			failing = false
		case ctx.Err() != nil, restarted:
		default:
			// metasrv did not answer: cached decisions expire with the
			// window meanwhile; try again shortly.
			if !failing && m.log != nil {
				m.log.Warn("generation watch not answered: decisions are not reused until it is", "error", err)
			}
			failing = true
			pause := time.NewTimer(wait)
			select {
			case <-pause.C:
			case <-ctx.Done():
				pause.Stop()
			}
		}
	}
}

// observed reports a call that started at start and ended with *err; use
// it deferred, with the method's named error result.
func (m *Governance) observed(op string, start time.Time, err *error) {
	if m.observe != nil {
		m.observe(op, time.Since(start), *err)
	}
}

func (m *Governance) minGen(tenant string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gens[tenant]
}

func (m *Governance) wrote(tenant string, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen > m.gens[tenant] {
		m.gens[tenant] = gen
	}
}

// mapErr maps client errors to backend's sentinels.
func mapErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, client.ErrUnavailable), errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %s: %w", backend.ErrCatalogUnavailable, op, err)
	case errors.Is(err, client.ErrVersionConflict):
		return fmt.Errorf("%w: %s", backend.ErrVersionConflict, op)
	case errors.Is(err, client.ErrAlreadyExists):
		return fmt.Errorf("%w: %s", backend.ErrExists, op)
	case errors.Is(err, client.ErrNotFound):
		return fmt.Errorf("%w: %s", backend.ErrNotFound, op)
	case errors.Is(err, client.ErrForbidden):
		return fmt.Errorf("%w: %s", backend.ErrForbidden, op)
	case errors.Is(err, client.ErrBadRequest):
		// The catalog's reason, without where the catalog is.
		msg := "the catalog refused the request"
		if ae := (*client.Error)(nil); errors.As(err, &ae) {
			msg = strings.TrimPrefix(ae.Message, "metasrv: bad request: ")
		}
		return fmt.Errorf("%w: %s: %s", backend.ErrRefused, op, msg)
	}
	return fmt.Errorf("metacatalog: %s: %w", op, err)
}

func columns(cs []client.Column) []backend.Column {
	out := make([]backend.Column, len(cs))
	for i, c := range cs {
		out[i] = backend.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

func clientColumns(cs []backend.Column) []client.Column {
	out := make([]client.Column, len(cs))
	for i, c := range cs {
		out[i] = client.Column{Name: c.Name, Type: c.Type, Nullable: true}
	}
	return out
}

func clientFiles(fs []backend.DataFile) []client.DataFile {
	out := make([]client.DataFile, len(fs))
	for i, f := range fs {
		out[i] = client.DataFile{Path: f.Key, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256}
	}
	return out
}

// List implements backend.Governance. With a decision window, the listing may
// be one metasrv gave earlier for the same caller and catalog at the
// tenant's current generation; its slices are shared and must not be
// modified.
func (m *Governance) List(ctx context.Context, c backend.Caller) (backend.Listing, error) {
	var key string
	if m.cache != nil {
		key = tokenKey(ctx) + resolveKey(c, nil) // in its own map: no clash with a resolve of no table
		l, ok := m.cache.lookupListing(c.Tenant, key, m.minGen(c.Tenant))
		if m.reuse != nil {
			m.reuse(ok)
		}
		if ok {
			return l.listing, nil
		}
	}
	l, err := m.list(ctx, c)
	if err != nil {
		return backend.Listing{}, err
	}
	if m.cache != nil && l.gen != 0 {
		m.cache.storeListing(c.Tenant, key, l)
	}
	return l.listing, nil
}

// list asks metasrv.
func (m *Governance) list(ctx context.Context, c backend.Caller) (_ *listed, err error) {
	defer m.observed(OpList, time.Now(), &err)
	l, err := m.c.ListTables(ctx, c.Tenant, c.Subject, c.Catalog, m.minGen(c.Tenant))
	if err != nil {
		if errors.Is(err, client.ErrNotFound) {
			return &listed{}, nil // no metalake: nothing to see
		}
		return nil, mapErr("list", err)
	}
	out := &listed{gen: l.Generation, listing: backend.Listing{Schemas: l.Schemas, Tables: make([]backend.TableVersion, len(l.Tables))}}
	for i, t := range l.Tables {
		out.listing.Tables[i] = backend.TableVersion{Name: backend.TableName{Schema: t.Schema, Name: t.Name},
			StorageID: t.StorageID, Version: t.Version, Columns: columns(t.Columns)}
	}
	return out, nil
}

// Resolve implements backend.Governance. A table with a row filter or column
// masks for the caller carries them in TableVersion.Policy. With a decision
// window, the answer may be one metasrv gave earlier for the same request
// at the tenant's current generation; its slices are shared and must not be
// modified.
func (m *Governance) Resolve(ctx context.Context, c backend.Caller, refs []backend.TableRef) ([]*backend.TableVersion, error) {
	var key string
	if m.cache != nil {
		key = tokenKey(ctx) + resolveKey(c, refs)
		r, ok := m.cache.lookup(c.Tenant, key, m.minGen(c.Tenant))
		if m.reuse != nil {
			m.reuse(ok)
		}
		if ok {
			return r.output(refs)
		}
	}
	r, err := m.resolve(ctx, c, refs)
	if err != nil {
		return nil, err
	}
	if m.cache != nil && r.gen != 0 {
		m.cache.store(c.Tenant, key, r)
	}
	return r.output(refs)
}

// resolve asks metasrv.
func (m *Governance) resolve(ctx context.Context, c backend.Caller, refs []backend.TableRef) (_ *resolved, err error) {
	defer m.observed(OpResolve, time.Now(), &err)
	q := make([]client.Ref, len(refs))
	for i, r := range refs {
		q[i] = client.Ref{Schema: r.Name.Schema, Table: r.Name.Name, Privilege: client.SelectTable, Version: r.Version}
		if r.Write {
			q[i].Privilege = client.ModifyTable
		}
	}
	res, err := m.c.ResolveAt(ctx, c.Tenant, c.Subject, c.Catalog, m.minGen(c.Tenant), q)
	if err != nil {
		if errors.Is(err, client.ErrNotFound) {
			return &resolved{versions: make([]*backend.TableVersion, len(refs))}, nil // no metalake
		}
		return nil, mapErr("resolve", err)
	}
	out := &resolved{gen: res.Generation, versions: make([]*backend.TableVersion, len(refs))}
	for i, r := range res.Refs {
		switch {
		case r.Unavailable:
		case r.Conflict:
			if out.conflict == 0 {
				out.conflict = i + 1
			}
		default:
			v := &backend.TableVersion{Name: refs[i].Name, StorageID: r.Table.StorageID, Version: r.Table.Version,
				Columns: columns(r.Table.Columns), Files: make([]backend.DataFile, len(r.Table.Files)), Generation: res.Generation,
				Codec: r.Table.Codec}
			for j, f := range r.Table.Files {
				v.Files[j] = backend.DataFile{Key: f.Path, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256}
			}
			if r.Table.RowFilter != nil || len(r.Table.ColumnMasks) > 0 {
				pol := &backend.TablePolicy{Roles: r.Table.Roles}
				if r.Table.RowFilter != nil {
					pol.RowFilter, pol.FilterPolicy = *r.Table.RowFilter, r.Table.RowFilterPolicy
				}
				for _, m := range r.Table.ColumnMasks {
					pol.Masks = append(pol.Masks, backend.ColumnMask{Column: m.Column, Mask: m.Mask, Policy: m.Policy})
				}
				v.Policy = pol
			}
			if u := r.Table.Upstream; u != nil {
				v.Upstream = &backend.UpstreamTable{Address: u.Address, TLS: u.TLS, Credentials: u.Credentials, Dialect: u.Dialect, Name: u.Name}
			}
			out.versions[i] = v
		}
	}
	return out, nil
}

// output is r as Resolve returns it: a copy of each version (sharing its
// slices), or the conflict.
func (r *resolved) output(refs []backend.TableRef) ([]*backend.TableVersion, error) {
	if r.conflict != 0 {
		return nil, fmt.Errorf("%w: table %s", backend.ErrPolicyConflict, refs[r.conflict-1].Name)
	}
	out := make([]*backend.TableVersion, len(r.versions))
	for i, v := range r.versions {
		if v != nil {
			c := *v
			out[i] = &c
		}
	}
	return out, nil
}

// Commit implements backend.Governance.
func (m *Governance) Commit(ctx context.Context, c backend.Caller, cm backend.Commit) (_ uint64, err error) {
	defer m.observed(OpCommit, time.Now(), &err)
	if cm.Create {
		gen, err := m.c.CreateTable(ctx, c.Tenant, c.Subject, c.Catalog, cm.Name.Schema, cm.Name.Name,
			clientColumns(cm.Columns), cm.StorageID, clientFiles(cm.Files))
		if err != nil {
			return 0, mapErr("create table", err)
		}
		m.wrote(c.Tenant, gen)
		return 1, nil
	}
	var cols []client.Column
	if cm.Replace {
		cols = clientColumns(cm.Columns)
	}
	v, gen, err := m.c.CommitVersion(ctx, c.Tenant, c.Subject, c.Catalog, cm.Name.Schema, cm.Name.Name,
		cm.Base, cm.Replace, cols, clientFiles(cm.Files))
	if err != nil {
		return 0, mapErr("commit", err)
	}
	m.wrote(c.Tenant, gen)
	return v, nil
}

// Drop implements backend.Governance. A table the caller may not see is
// reported as not dropped, like a missing one.
func (m *Governance) Drop(ctx context.Context, c backend.Caller, name backend.TableName) (_ bool, err error) {
	defer m.observed(OpDrop, time.Now(), &err)
	dropped, gen, err := m.c.DropTable(ctx, c.Tenant, c.Subject, c.Catalog, name.Schema, name.Name)
	switch {
	case errors.Is(err, client.ErrNotFound):
		return false, nil
	case err != nil:
		return false, mapErr("drop table", err)
	}
	m.wrote(c.Tenant, gen)
	return dropped, nil
}

// Generation implements backend.Governance. A tenant without a metalake is at
// generation 0. With a decision window, the generation the watch vouches
// for is answered without a call.
func (m *Governance) Generation(ctx context.Context, tenant string) (uint64, error) {
	if m.cache != nil {
		if g, ok := m.cache.generation(tenant, m.minGen(tenant)); ok {
			return g, nil
		}
	}
	return m.generation(ctx, tenant)
}

func (m *Governance) generation(ctx context.Context, tenant string) (_ uint64, err error) {
	defer m.observed(OpGeneration, time.Now(), &err)
	g, err := m.c.Generation(ctx, tenant)
	switch {
	case errors.Is(err, client.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, mapErr("generation", err)
	}
	return g, nil
}
