package duckdb

import (
	"context"
	"errors"
	"strconv"
	"strings"
)

// versionUse is what a tenant knows about the use of its bound versions:
// which statements hold them and which version of each table is the
// current one. A version is superseded once a later version of its table
// (same storage id, higher number) has been bound; a superseded version no
// statement holds is dropped, so a busy tenant keeps one view per table
// plus those of the statements still reading older versions. It is
// guarded by tenant.mu.
type versionUse struct {
	users  map[string]int                 // version id → leases holding it
	tables map[string]map[string]struct{} // storage id → its bound version ids
	latest map[string]uint64              // storage id → highest version bound
	leases map[*lease]struct{}            // leases not released yet
}

// lease is one Bind call's hold on the versions it bound. It is released
// when the context of the call is done: the Flight layer runs a statement
// under the context it binds with and ends it once the statement's stream
// ends, fails or is cancelled.
type lease struct {
	ctx  context.Context
	ids  []string
	done chan struct{} // closed once released
}

// newLease returns a lease for a Bind under ctx, or nil if ctx can never be
// done: what such a call binds is never released, so never dropped as
// superseded.
func newLease(ctx context.Context) *lease {
	if ctx.Done() == nil {
		return nil
	}
	return &lease{ctx: ctx, done: make(chan struct{})}
}

// splitVersionID splits "<storage id>@<version>"; ok is false for an id
// of another shape, which is never superseded.
func splitVersionID(id string) (storage string, version uint64, ok bool) {
	i := strings.LastIndexByte(id, '@')
	if i <= 0 {
		return "", 0, false
	}
	v, err := strconv.ParseUint(id[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return id[:i], v, true
}

// acquire records that l holds the bound version id. The caller holds t.mu.
func (t *tenant) acquire(id string, l *lease) {
	if t.use.users == nil {
		t.use.users = make(map[string]int)
	}
	t.use.users[id]++
	if l != nil {
		l.ids = append(l.ids, id)
	}
}

// hold starts l: it is released when its context is done (at once if it
// already is).
func (t *tenant) hold(l *lease) {
	if l == nil {
		return
	}
	t.mu.Lock()
	if t.use.leases == nil {
		t.use.leases = make(map[*lease]struct{})
	}
	t.use.leases[l] = struct{}{}
	t.mu.Unlock()
	context.AfterFunc(l.ctx, func() { t.release(l) })
}

// release gives back what l holds, dropping the superseded versions no
// other lease holds.
func (t *tenant) release(l *lease) {
	if l == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	defer close(l.done)
	delete(t.use.leases, l)
	for _, id := range l.ids {
		if t.use.users[id]--; t.use.users[id] > 0 {
			continue
		}
		delete(t.use.users, id)
		if t.superseded(id) {
			t.dropVersion(id)
		}
	}
}

// superseded reports whether a later version of id's table is bound. The
// caller holds t.mu.
func (t *tenant) superseded(id string) bool {
	storage, v, ok := splitVersionID(id)
	return ok && v < t.use.latest[storage]
}

// boundVersion records that version id now has a view and, if it is the latest
// of its table, drops the versions it supersedes that no lease holds. The
// caller holds t.mu.
func (t *tenant) boundVersion(id string) {
	storage, v, ok := splitVersionID(id)
	if !ok {
		return
	}
	if t.use.tables == nil {
		t.use.tables, t.use.latest = make(map[string]map[string]struct{}), make(map[string]uint64)
	}
	ids := t.use.tables[storage]
	if ids == nil {
		ids = make(map[string]struct{})
		t.use.tables[storage] = ids
	}
	ids[id] = struct{}{}
	if v < t.use.latest[storage] {
		return
	}
	t.use.latest[storage] = v
	for old := range ids {
		if old != id && t.use.users[old] == 0 {
			t.dropVersion(old)
		}
	}
}

// forget removes version id from the tenant's records of bound versions
// (its view or copy is gone). The caller holds t.mu.
func (t *tenant) forget(id string) {
	if c := t.inMemory[id]; c != nil {
		t.materialized -= c.size
		delete(t.inMemory, id)
	}
	delete(t.bound, id)
	delete(t.facts, id)
	if storage, _, ok := splitVersionID(id); ok {
		delete(t.use.tables[storage], id)
		if len(t.use.tables[storage]) == 0 {
			delete(t.use.tables, storage)
		}
	}
}

// dropVersion drops the view (or in-memory copy) of a bound version no
// statement holds. A failure leaves it bound: it is dropped when the next
// version of its table is bound. The caller holds t.mu, which serializes
// view DDL.
func (t *tenant) dropVersion(id string) {
	if _, ok := t.bound[id]; !ok {
		return
	}
	kind := "VIEW"
	if t.inMemory[id] != nil {
		kind = "TABLE"
	}
	// Not under a statement's context: the drop is the engine's own
	// business, bounded by QueryTimeout.
	if err := t.exec(context.Background(), "DROP "+kind+" IF EXISTS "+relSchema+"."+quoteIdent("v_"+id)); err != nil {
		if !errors.Is(err, ErrClosed) {
			t.log.Warn("dropping a superseded table version", "error", err)
		}
		return
	}
	t.forget(id)
}
