package metacatalog

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"

	"lakegate/flight/backend"
	"lakegate/metasrv/api"
)

// Bounds of the decision cache: past them nothing more is cached (answers
// still come from metasrv), so memory stays bounded whatever callers do.
const (
	maxWatchedTenants  = 1024
	maxTenantDecisions = 4096
	// maxListedTables bounds the tables of all cached listings together
	// (a listing is a whole catalog's visible tables: large).
	maxListedTables = 250_000
	// maxResolvedFiles bounds the data files of all cached resolve answers
	// together (a version of a large table lists many).
	maxResolvedFiles = 1_000_000
	// idleTenant is how long a tenant stays followed without a lookup.
	idleTenant = time.Minute
)

// decisions caches resolve answers per tenant for as long as metasrv
// confirms, through a watch on the tenant's generation, that the tenant's
// governance state has not moved. An answer is reused only when
//
//   - it was computed at the generation the watch last reported, and
//   - that report comes from a watch request sent less than window ago (a
//     watch that stops answering — metasrv unreachable, a connection gone
//     silent — turns the cache off within window), and
//   - it is at or after the generation this gateway's own writes reached.
//
// A watch request is answered as soon as a followed generation differs
// from the one sent, and requests follow each other without a gap, so a
// change reaches the cache within a round trip of being applied on the
// node watched; window bounds the rest.
type decisions struct {
	window time.Duration
	now    func() time.Time
	// authority, when set, answers tenants' current generations in
	// process (Options.Generations) and replaces the watch.
	authority func(tenant string) (uint64, bool)

	mu      sync.Mutex
	tenants map[string]*tenantDecisions
	listed  int                // tables of all cached listings
	files   int                // data files of all cached resolve answers
	restart context.CancelFunc // cancels the watch in flight; nil when none
	wake    chan struct{}      // capacity 1: a tenant was added
}

// tenantDecisions is what the cache holds for one tenant.
type tenantDecisions struct {
	known     bool      // gen was reported by the watch
	gen       uint64    // the tenant's generation as last reported
	confirmed time.Time // when the request that last reported gen was sent
	used      time.Time // last lookup
	answers   map[string]*resolved
	listings  map[string]*listed // List answers, by caller
}

// listed is metasrv's answer to one List request: shared, never modified.
type listed struct {
	gen     uint64
	listing backend.Listing
}

// tables is the number of tables l lists.
func (l *listed) tables() int { return len(l.listing.Tables) }

// resolved is metasrv's answer to one resolve request, converted: shared
// by every caller that reuses it, so never modified.
type resolved struct {
	gen      uint64
	versions []*backend.TableVersion // nil: unavailable
	conflict int                     // 1 + index of a reference whose policies conflict; 0: none
}

// files is the number of data files r's versions list.
func (r *resolved) files() int {
	n := 0
	for _, v := range r.versions {
		if v != nil {
			n += len(v.Files)
		}
	}
	return n
}

func newDecisions(window time.Duration, now func() time.Time, authority func(string) (uint64, bool)) *decisions {
	return &decisions{window: window, now: now, authority: authority,
		tenants: map[string]*tenantDecisions{}, wake: make(chan struct{}, 1)}
}

// state returns tenant's entry (nil when the cache is full) and whether its
// generation may be relied on at now: as the authority answers it now, or
// as a watch request sent less than window ago reported it.
func (d *decisions) state(tenant string, now time.Time) (*tenantDecisions, bool) {
	td := d.follow(tenant, now)
	if td == nil {
		return nil, false
	}
	if d.authority != nil {
		g, ok := d.authority(tenant)
		if ok {
			d.set(td, g, now)
		}
		return td, ok
	}
	return td, td.known && now.Sub(td.confirmed) < d.window
}

// current returns tenant's entry when its generation may be relied on now
// and is at least minGen, else nil. The caller holds d.mu.
func (d *decisions) current(tenant string, minGen uint64) *tenantDecisions {
	td, ok := d.state(tenant, d.now())
	if !ok || td.gen < minGen {
		return nil
	}
	return td
}

// set records g as td's generation, confirmed at the time given; the
// answers of another generation go. The caller holds d.mu.
func (d *decisions) set(td *tenantDecisions, g uint64, confirmed time.Time) {
	if !td.known || td.gen != g {
		d.forget(td)
		td.known, td.gen = true, g
	}
	td.confirmed = confirmed
}

// forget drops td's answers. The caller holds d.mu.
func (d *decisions) forget(td *tenantDecisions) {
	for _, l := range td.listings {
		d.listed -= l.tables()
	}
	for _, r := range td.answers {
		d.files -= r.files()
	}
	td.answers, td.listings = nil, nil
}

// storable returns tenant's entry when an answer computed at gen may be
// kept: the watch (or the authority) reports that generation. The caller
// holds d.mu.
func (d *decisions) storable(tenant string, gen uint64) *tenantDecisions {
	if td := d.tenants[tenant]; td != nil && td.known && td.gen == gen {
		return td
	}
	return nil
}

// follow returns tenant's entry, adding it (and restarting the watch so it
// includes the tenant) if it is new; nil when the cache is full.
func (d *decisions) follow(tenant string, now time.Time) *tenantDecisions {
	td := d.tenants[tenant]
	if td == nil {
		if len(d.tenants) >= maxWatchedTenants {
			return nil
		}
		td = &tenantDecisions{}
		d.tenants[tenant] = td
		if d.restart != nil {
			d.restart()
		}
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
	td.used = now
	return td
}

// lookup returns the answer cached under key for tenant when it may be
// reused at generation ≥ minGen.
func (d *decisions) lookup(tenant, key string, minGen uint64) (*resolved, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if td := d.current(tenant, minGen); td != nil {
		r, ok := td.answers[key]
		return r, ok && r.gen == td.gen
	}
	return nil, false
}

// store caches r under key when it was computed at the generation the
// watch reports for tenant (an answer from an older or newer state is not
// kept: the watch decides which state is current), within
// maxResolvedFiles for all tenants together.
func (d *decisions) store(tenant, key string, r *resolved) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if td := d.storable(tenant, r.gen); td != nil {
		keep(&td.answers, key, r, (*resolved).files, &d.files, maxResolvedFiles)
	}
}

// keep puts v under key in *m unless the tenant's map is full
// (maxTenantDecisions) or the shared budget *used of limit, counted with
// size, would be exceeded. The caller holds d.mu.
func keep[T any](m *map[string]T, key string, v T, size func(T) int, used *int, limit int) {
	old, replace := (*m)[key]
	n := size(v)
	if replace {
		n -= size(old)
	}
	if (!replace && len(*m) >= maxTenantDecisions) || *used+n > limit {
		return
	}
	if *m == nil {
		*m = map[string]T{}
	}
	(*m)[key] = v
	*used += n
}

// lookupListing is lookup for List answers.
func (d *decisions) lookupListing(tenant, key string, minGen uint64) (*listed, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if td := d.current(tenant, minGen); td != nil {
		l, ok := td.listings[key]
		return l, ok && l.gen == td.gen
	}
	return nil, false
}

// storeListing is store for List answers, within maxListedTables for all
// tenants together.
func (d *decisions) storeListing(tenant, key string, l *listed) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if td := d.storable(tenant, l.gen); td != nil {
		keep(&td.listings, key, l, (*listed).tables, &d.listed, maxListedTables)
	}
}

// generation returns tenant's generation when the watch vouches for it and
// it is at least minGen.
func (d *decisions) generation(tenant string, minGen uint64) (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if td := d.current(tenant, minGen); td != nil {
		return td.gen, true
	}
	return 0, false
}

// watched returns the generations to send in the next watch request (every
// followed tenant; idle ones are dropped first) and installs restart as the
// way to cancel it.
func (d *decisions) watched(restart context.CancelFunc) map[string]uint64 {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	known := make(map[string]uint64, len(d.tenants))
	for name, td := range d.tenants {
		if now.Sub(td.used) > idleTenant {
			d.forget(td)
			delete(d.tenants, name)
			continue
		}
		known[name] = td.gen
	}
	d.restart = restart
	return known
}

// reported records the generations a watch request sent at sent returned.
// A tenant whose generation moved loses its cached answers.
func (d *decisions) reported(sent time.Time, gens map[string]uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.restart = nil
	for name, g := range gens {
		if td := d.tenants[name]; td != nil {
			d.set(td, g, sent)
		}
	}
}

// tokenKey is the prefix of a decision's key that the JWT of a delegated
// user adds (api.WithDelegateToken): metasrv takes the user's groups from
// that token, so a decision is reused only for calls presenting the same
// one. It is 0x01 and the token's SHA-256 (the cache never holds the
// token), or 0x00 without a token: a fixed-length, tagged prefix, so no
// two keys collide.
func tokenKey(ctx context.Context) string {
	tok := api.DelegateTokenFrom(ctx)
	if tok == "" {
		return "\x00"
	}
	h := sha256.Sum256([]byte(tok))
	return "\x01" + string(h[:])
}

// resolveKey identifies a resolve request: caller and references, each
// string length-prefixed so that no two requests share a key.
func resolveKey(c backend.Caller, refs []backend.TableRef) string {
	n := len(c.Tenant) + len(c.Subject) + len(c.Catalog) + 3*binary.MaxVarintLen64
	for _, r := range refs {
		n += len(r.Name.Schema) + len(r.Name.Name) + 4*binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	str := func(s string) { b = append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	str(c.Tenant)
	str(c.Subject)
	str(c.Catalog)
	for _, r := range refs {
		str(r.Name.Schema)
		str(r.Name.Name)
		b = binary.AppendUvarint(b, r.Version)
		if r.Write {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return string(b)
}
