package metacatalog

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lakegate/flight/backend"
	"lakegate/flight/clocktest"
	"lakegate/metasrv/client"
)

// waitLimit bounds every wait of these tests for something another
// goroutine does; reaching it fails the test.
const waitLimit = 20 * time.Second

// fakeMetasrv stands in for metasrv: resolve, generation, watch and a
// commit.
type fakeMetasrv struct {
	t *testing.T

	mu sync.Mutex
	// gens are the metalakes and their generations; a tenant absent has
	// no metalake (404).
	gens map[string]uint64
	// tables maps "schema.table" to its current version; absent:
	// unavailable. conflicts are the tables whose policies conflict.
	tables    map[string]uint64
	conflicts map[string]bool
	// watchFail, when not 0, is the status every watch answers (-1: the
	// connection is closed without an answer).
	watchFail int
	// changed is closed (and replaced) to wake held watch requests.
	changed chan struct{}
	// commitGen is the generation a commit answers (without moving gens:
	// the node watched lags behind the one written).
	commitGen uint64

	resolves    []resolveCall
	lists       int
	genCalls    int
	watches     []map[string]uint64 // known of each watch request received
	watchNotify chan struct{}       // closed (and replaced) when one is
}

type resolveCall struct {
	Tenant        string
	Subject       string
	Catalog       string
	MinGeneration uint64
	Refs          []client.Ref
}

func newFakeMetasrv(t *testing.T) (*fakeMetasrv, *client.Client) {
	f := &fakeMetasrv{t: t, gens: map[string]uint64{}, tables: map[string]uint64{}, conflicts: map[string]bool{},
		changed: make(chan struct{}), watchNotify: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /internal/v1/metalakes/{tenant}/resolve", f.resolve)
	mux.HandleFunc("GET /internal/v1/metalakes/{tenant}/generation", f.generation)
	mux.HandleFunc("POST /internal/v1/generations", f.watch)
	mux.HandleFunc("POST /internal/v1/metalakes/{tenant}/tables", f.list)
	mux.HandleFunc("POST /api/metalakes/{tenant}/catalogs/{catalog}/schemas/{schema}/tables/{table}/versions", f.commit)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		http.Error(w, "no route", http.StatusNotFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Addrs: []string{srv.URL}, Token: "lg_test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return f, c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"code": 1003, "type": "NoSuchMetalakeException", "message": "no metalake"})
}

func (f *fakeMetasrv) resolve(w http.ResponseWriter, r *http.Request) {
	var req resolveCall
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("resolve body: %v", err)
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	req.Tenant = r.PathValue("tenant")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resolves = append(f.resolves, req)
	gen, ok := f.tenantGen(w, r)
	if !ok {
		return
	}
	gen = max(gen, req.MinGeneration) // a node that has caught up
	results := make([]any, len(req.Refs))
	for i, ref := range req.Refs {
		full := ref.Schema + "." + ref.Table
		v, ok := f.tables[full]
		switch {
		case !ok || (ref.Version != 0 && ref.Version > v):
			results[i] = map[string]any{"unavailable": true}
		case f.conflicts[full]:
			results[i] = map[string]any{"error": "conflict", "fullName": req.Catalog + "." + full}
		default:
			if ref.Version != 0 {
				v = ref.Version
			}
			results[i] = map[string]any{
				"fullName":  req.Catalog + "." + full,
				"columns":   []map[string]any{{"name": "id", "type": "BIGINT", "nullable": true}},
				"storageId": "st-" + ref.Table,
				"version":   v,
				"files":     []map[string]any{{"path": "tables/st-" + ref.Table + "/f.parquet", "size": 10, "rows": 1, "sha256": "00"}},
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "generation": gen, "results": results})
}

// list answers every table of f.tables, sorted, at the tenant's generation.
func (f *fakeMetasrv) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	gen, ok := f.tenantGen(w, r)
	if !ok {
		return
	}
	var tables []map[string]any
	for _, full := range slices.Sorted(maps.Keys(f.tables)) {
		schema, name, _ := strings.Cut(full, ".")
		tables = append(tables, map[string]any{"schema": schema, "table": name, "storageId": "st-" + name,
			"version": f.tables[full], "columns": []map[string]any{{"name": "id", "type": "BIGINT", "nullable": true}}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "generation": gen, "schemas": []string{"sales"}, "tables": tables})
}

// tenantGen is the generation of the request's tenant, or a 404 answered
// to w for a tenant f does not have. The caller holds f.mu.
func (f *fakeMetasrv) tenantGen(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	g, ok := f.gens[r.PathValue("tenant")]
	if !ok {
		notFound(w)
	}
	return g, ok
}

func (f *fakeMetasrv) listCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists
}

func (f *fakeMetasrv) generation(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.genCalls++
	g, ok := f.tenantGen(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "generation": g})
}

func (f *fakeMetasrv) commit(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	g := f.commitGen
	f.mu.Unlock()
	w.Header().Set("Lakegate-Generation", strconv.FormatUint(g, 10))
	writeJSON(w, http.StatusOK, map[string]any{"version": 2, "generation": g})
}

// watch answers as soon as a known generation differs from the fake's,
// else holds the request until wakeLocked or the caller leaving.
func (f *fakeMetasrv) watch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Known      map[string]uint64 `json:"known"`
		WaitMillis int64             `json:"waitMillis"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Known) == 0 || req.WaitMillis <= 0 {
		f.t.Errorf("watch request: %+v, %v", req, err)
		http.Error(w, "bad", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.watches = append(f.watches, req.Known)
	close(f.watchNotify)
	f.watchNotify = make(chan struct{})
	current := func() (map[string]uint64, bool) {
		out := make(map[string]uint64, len(req.Known))
		moved := false
		for name, g := range req.Known {
			out[name] = f.gens[name]
			moved = moved || out[name] != g
		}
		return out, moved
	}
	_, moved := current()
	changed := f.changed
	f.mu.Unlock()
	if !moved {
		// The test decides when the wait ends (waitMillis is a third of the
		// window in real time, longer than any test).
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
	f.mu.Lock()
	fail := f.watchFail
	gens, _ := current()
	f.mu.Unlock()
	switch {
	case fail < 0:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	case fail > 0:
		writeJSON(w, fail, map[string]any{"code": 1002, "message": "watch failing"})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "generations": gens})
	}
}

// wakeLocked ends the wait of held watch requests.
func (f *fakeMetasrv) wakeLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// set sets tenant's generation (waking held watch requests) and lets
// change modify the tables meanwhile.
func (f *fakeMetasrv) set(tenant string, gen uint64, change func(f *fakeMetasrv)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gens[tenant] = gen
	if change != nil {
		change(f)
	}
	f.wakeLocked()
}

// failWatch makes the watch answer status from now on, including the
// requests held.
func (f *fakeMetasrv) failWatch(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchFail = status
	f.wakeLocked()
}

func (f *fakeMetasrv) resolveCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.resolves)
}

func (f *fakeMetasrv) lastResolve() resolveCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resolves[len(f.resolves)-1]
}

func (f *fakeMetasrv) genCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.genCalls
}

// awaitWatch waits for a watch request whose known generations satisfy
// ok. Watch sends a request only after recording the previous answer, so
// a request knowing a generation means the Catalog holds it.
func (f *fakeMetasrv) awaitWatch(ok func(known map[string]uint64) bool) {
	f.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	seen := 0
	for {
		f.mu.Lock()
		for ; seen < len(f.watches); seen++ {
			if ok(f.watches[seen]) {
				f.mu.Unlock()
				return
			}
		}
		notify := f.watchNotify
		f.mu.Unlock()
		select {
		case <-notify:
		case <-deadline.C:
			f.t.Fatal("no such watch request")
		}
	}
}

// awaitKnown waits until the Catalog's watch has recorded gen for every
// tenant of gens.
func (f *fakeMetasrv) awaitKnown(gens map[string]uint64) {
	f.t.Helper()
	f.awaitWatch(func(known map[string]uint64) bool {
		for name, g := range gens {
			if k, ok := known[name]; !ok || k != g {
				return false
			}
		}
		return true
	})
}

// startWatch runs cat.Watch until the test ends, then checks it stops.
func startWatch(t *testing.T, cat *Governance) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cat.Watch(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Error("Watch did not return after its context was canceled")
		}
	})
}

// reuses records Options.Reuse.
type reuses struct {
	mu  sync.Mutex
	got []bool
}

func (r *reuses) record(reused bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, reused)
}

func (r *reuses) take() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

var (
	alice  = backend.Caller{Tenant: "acme", Subject: "alice", Catalog: "lake"}
	orders = backend.TableName{Schema: "sales", Name: "orders"}
	items  = backend.TableName{Schema: "sales", Name: "items"}
)

func read(names ...backend.TableName) []backend.TableRef {
	out := make([]backend.TableRef, len(names))
	for i, n := range names {
		out[i] = backend.TableRef{Name: n}
	}
	return out
}

// resolveOK resolves and fails the test on an error.
func resolveOK(t *testing.T, cat *Governance, c backend.Caller, refs []backend.TableRef) []*backend.TableVersion {
	t.Helper()
	vs, err := cat.Resolve(context.Background(), c, refs)
	if err != nil {
		t.Fatalf("Resolve(%+v, %+v): %v", c, refs, err)
	}
	if len(vs) != len(refs) {
		t.Fatalf("Resolve returned %d versions for %d refs", len(vs), len(refs))
	}
	return vs
}

// cachedCatalog is a Catalog with a decision window over f, on clk, whose
// watch runs and has reported acme at generation 5 with orders and items
// at version 3 once warm returns.
func cachedCatalog(t *testing.T, o Options) (*fakeMetasrv, *Governance, *clocktest.Clock, *reuses) {
	f, c := newFakeMetasrv(t)
	f.gens["acme"] = 5
	f.tables["sales.orders"] = 3
	f.tables["sales.items"] = 3
	clk := newClock()
	var rs reuses
	if o.DecisionWindow == 0 {
		o.DecisionWindow = testWindow
	}
	o.Now, o.Reuse = clk.Now, rs.record
	cat := NewWithOptions(c, o)
	startWatch(t, cat)
	return f, cat, clk, &rs
}

// warm follows acme and waits until the watch reported it.
func warm(t *testing.T, f *fakeMetasrv, cat *Governance) {
	t.Helper()
	if _, err := cat.Generation(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	f.awaitKnown(map[string]uint64{"acme": f.genOf("acme")})
}

func (f *fakeMetasrv) genOf(tenant string) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gens[tenant]
}

func TestCacheReusesIdenticalResolve(t *testing.T) {
	f, cat, _, rs := cachedCatalog(t, Options{})
	warm(t, f, cat)
	calls := f.resolveCount()
	first := resolveOK(t, cat, alice, read(orders))
	second := resolveOK(t, cat, alice, read(orders))
	if n := f.resolveCount() - calls; n != 1 {
		t.Fatalf("two identical resolves made %d calls, want 1", n)
	}
	if got := rs.take(); len(got) != 2 || got[0] || !got[1] {
		t.Errorf("reuse reports %v, want [false true]", got)
	}
	for i, vs := range [][]*backend.TableVersion{first, second} {
		v := vs[0]
		if v == nil || v.Name != orders || v.Version != 3 || v.Generation != 5 || v.StorageID != "st-orders" || len(v.Files) != 1 {
			t.Errorf("resolve %d = %+v", i, v)
		}
	}
	if first[0] == second[0] {
		t.Error("the cached answer returned the same *TableVersion twice")
	}
}

func TestCacheKeys(t *testing.T) {
	f, cat, _, _ := cachedCatalog(t, Options{})
	warm(t, f, cat)
	bob := alice
	bob.Subject = "bob"
	other := alice
	other.Catalog = "other"
	cases := []struct {
		name string
		c    backend.Caller
		refs []backend.TableRef
	}{
		{"base", alice, read(orders)},
		{"other subject", bob, read(orders)},
		{"other catalog", other, read(orders)},
		{"other table", alice, read(items)},
		{"two tables", alice, read(orders, items)},
		{"two tables reversed", alice, read(items, orders)},
		{"write", alice, []backend.TableRef{{Name: orders, Write: true}}},
		{"version", alice, []backend.TableRef{{Name: orders, Version: 2}}},
	}
	// Each request is asked once, whatever the order; then all are reused.
	for round := range 2 {
		for _, tc := range cases {
			before := f.resolveCount()
			vs := resolveOK(t, cat, tc.c, tc.refs)
			want := 1
			if round == 1 {
				want = 0
			}
			if n := f.resolveCount() - before; n != want {
				t.Errorf("round %d, %s: %d calls, want %d", round, tc.name, n, want)
			}
			if round == 0 {
				got := f.lastResolve()
				if got.Tenant != tc.c.Tenant || got.Subject != tc.c.Subject || got.Catalog != tc.c.Catalog || len(got.Refs) != len(tc.refs) {
					t.Fatalf("%s: metasrv asked %+v", tc.name, got)
				}
				for i, r := range tc.refs {
					want := client.Ref{Schema: r.Name.Schema, Table: r.Name.Name, Privilege: client.SelectTable, Version: r.Version}
					if r.Write {
						want.Privilege = client.ModifyTable
					}
					if got.Refs[i] != want {
						t.Errorf("%s: ref %d asked as %+v, want %+v", tc.name, i, got.Refs[i], want)
					}
				}
			}
			for i, r := range tc.refs {
				if vs[i] == nil || vs[i].Name != r.Name {
					t.Errorf("round %d, %s: version %d = %+v, want %s", round, tc.name, i, vs[i], r.Name)
				} else if r.Version != 0 && vs[i].Version != r.Version {
					t.Errorf("round %d, %s: version %d, want %d", round, tc.name, vs[i].Version, r.Version)
				}
			}
		}
	}
}

func TestCacheGenerationMoves(t *testing.T) {
	f, cat, _, rs := cachedCatalog(t, Options{})
	warm(t, f, cat)
	resolveOK(t, cat, alice, read(orders, items))
	if vs := resolveOK(t, cat, alice, read(orders, items)); vs[0] == nil || vs[1] == nil {
		t.Fatalf("cached answer = %+v", vs)
	}
	rs.take()
	// orders is revoked: the held watch request answers generation 6.
	f.set("acme", 6, func(f *fakeMetasrv) { delete(f.tables, "sales.orders") })
	f.awaitKnown(map[string]uint64{"acme": 6})
	before := f.resolveCount()
	vs := resolveOK(t, cat, alice, read(orders, items))
	if n := f.resolveCount() - before; n != 1 {
		t.Fatalf("resolve after the generation moved made %d calls, want 1", n)
	}
	if vs[0] != nil {
		t.Errorf("revoked table still resolves: %+v", vs[0])
	}
	if vs[1] == nil || vs[1].Generation != 6 {
		t.Errorf("items = %+v, want it at generation 6", vs[1])
	}
	// The new answer is cached in turn.
	vs = resolveOK(t, cat, alice, read(orders, items))
	if n := f.resolveCount() - before; n != 1 || vs[0] != nil {
		t.Errorf("second resolve at 6: %d calls in all, orders %+v", n, vs[0])
	}
	if got := rs.take(); len(got) != 2 || got[0] || !got[1] {
		t.Errorf("reuse reports %v, want [false true]", got)
	}
	// Generation answers the new one without a call.
	calls := f.genCount()
	if g, err := cat.Generation(context.Background(), "acme"); err != nil || g != 6 {
		t.Errorf("Generation = %d, %v; want 6", g, err)
	}
	if f.genCount() != calls {
		t.Error("Generation called metasrv while the watch vouched")
	}
}

func TestCacheNewTenantRestartsWatch(t *testing.T) {
	f, cat, _, _ := cachedCatalog(t, Options{})
	f.gens["beta"] = 9
	warm(t, f, cat) // a request knowing acme is held now
	bobBeta := backend.Caller{Tenant: "beta", Subject: "bob", Catalog: "lake"}
	if _, err := cat.Generation(context.Background(), "beta"); err != nil { // follows beta
		t.Fatal(err)
	}
	f.awaitKnown(map[string]uint64{"acme": 5, "beta": 9})
	before := f.resolveCount()
	resolveOK(t, cat, bobBeta, read(orders))
	resolveOK(t, cat, bobBeta, read(orders))
	resolveOK(t, cat, alice, read(orders))
	resolveOK(t, cat, alice, read(orders))
	if n := f.resolveCount() - before; n != 2 {
		t.Errorf("two tenants, two requests each: %d calls, want 2", n)
	}
	if got := f.lastResolve(); got.Tenant != "acme" {
		t.Errorf("last call for %q", got.Tenant)
	}
}

func TestCacheConflictReused(t *testing.T) {
	f, cat, _, rs := cachedCatalog(t, Options{})
	f.conflicts["sales.items"] = true
	warm(t, f, cat)
	before := f.resolveCount()
	for i := range 3 {
		vs, err := cat.Resolve(context.Background(), alice, read(orders, items))
		if !errors.Is(err, backend.ErrPolicyConflict) || vs != nil {
			t.Fatalf("resolve %d = %v, %v; want ErrPolicyConflict", i, vs, err)
		}
	}
	if n := f.resolveCount() - before; n != 1 {
		t.Errorf("three resolves of a conflict made %d calls, want 1", n)
	}
	if got := rs.take(); len(got) != 3 || got[0] || !got[1] || !got[2] {
		t.Errorf("reuse reports %v, want [false true true]", got)
	}
}

func TestCacheNoMetalakeNotCached(t *testing.T) {
	f, cat, _, rs := cachedCatalog(t, Options{})
	ghost := backend.Caller{Tenant: "ghost", Subject: "g", Catalog: "lake"}
	// ghost is followed first, then acme: the watch answer that reports
	// acme reports ghost (at 0) too.
	if vs := resolveOK(t, cat, ghost, read(orders)); vs[0] != nil {
		t.Fatalf("resolve without a metalake = %+v", vs[0])
	}
	f.awaitKnown(map[string]uint64{"ghost": 0})
	warm(t, f, cat)
	if g, ok := cat.cache.generation("ghost", 0); !ok || g != 0 {
		t.Fatalf("the watch does not vouch for ghost at 0: %d, %v", g, ok)
	}
	rs.take()
	before := f.resolveCount()
	for range 3 {
		if vs := resolveOK(t, cat, ghost, read(orders)); vs[0] != nil {
			t.Fatalf("resolve without a metalake = %+v", vs[0])
		}
	}
	if n := f.resolveCount() - before; n != 3 {
		t.Errorf("three resolves without a metalake made %d calls, want 3", n)
	}
	if got := rs.take(); len(got) != 3 || got[0] || got[1] || got[2] {
		t.Errorf("reuse reports %v, want all false", got)
	}
}

func TestCacheWatchFailing(t *testing.T) {
	cases := []struct {
		name   string
		status int
	}{
		{"500", http.StatusInternalServerError},
		{"503", http.StatusServiceUnavailable},
		{"connection closed", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, cat, clk, _ := cachedCatalog(t, Options{})
			warm(t, f, cat) // confirmed at clk's start; a request held
			confirmed := clk.Now()
			resolveOK(t, cat, alice, read(orders))
			f.failWatch(tc.status)
			// Once the held request has failed, the watch waits (a third of
			// the window, real time) before trying again.
			calls := f.genCount()
			before := f.resolveCount()
			clk.Advance(testWindow - time.Nanosecond)
			resolveOK(t, cat, alice, read(orders))
			if g, err := cat.Generation(context.Background(), "acme"); err != nil || g != 5 {
				t.Errorf("Generation within the window = %d, %v", g, err)
			}
			if n := f.resolveCount() - before; n != 0 || f.genCount() != calls {
				t.Fatalf("within the window: %d resolve and %d generation calls, want none", n, f.genCount()-calls)
			}
			clk.Advance(time.Nanosecond)
			if got := clk.Now().Sub(confirmed); got != testWindow {
				t.Fatalf("clock moved %s", got)
			}
			resolveOK(t, cat, alice, read(orders))
			resolveOK(t, cat, alice, read(orders))
			if n := f.resolveCount() - before; n != 2 {
				t.Errorf("past the window: %d calls for two resolves, want 2", n)
			}
			if g, err := cat.Generation(context.Background(), "acme"); err != nil || g != 5 || f.genCount() != calls+1 {
				t.Errorf("Generation past the window = %d, %v after %d calls; want 5 from one call", g, err, f.genCount()-calls)
			}
		})
	}
}

// A request's confirmation counts from when it was sent: an answer that
// arrives late is worth less.
func TestCacheConfirmedWhenSent(t *testing.T) {
	f, cat, clk, _ := cachedCatalog(t, Options{})
	warm(t, f, cat)
	sent := clk.Now() // the held request was sent at the start
	clk.Advance(testWindow / 2)
	f.set("acme", 6, nil)
	f.awaitKnown(map[string]uint64{"acme": 6}) // next request sent at window/2, held
	before := f.resolveCount()
	resolveOK(t, cat, alice, read(orders))
	resolveOK(t, cat, alice, read(orders))
	if n := f.resolveCount() - before; n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
	clk.Advance(testWindow/2 - time.Nanosecond)
	resolveOK(t, cat, alice, read(orders))
	if n := f.resolveCount() - before; n != 1 {
		t.Fatalf("just before the window from sending: %d calls, want 1", n)
	}
	clk.Advance(time.Nanosecond)
	if clk.Now().Sub(sent) != testWindow {
		t.Fatal("clock")
	}
	resolveOK(t, cat, alice, read(orders))
	if n := f.resolveCount() - before; n != 2 {
		t.Errorf("a window after sending: %d calls, want 2", n)
	}
}

func TestCacheGenerationWithoutCall(t *testing.T) {
	f, cat, _, _ := cachedCatalog(t, Options{})
	ctx := context.Background()
	// Not vouched yet: asked.
	if g, err := cat.Generation(ctx, "acme"); err != nil || g != 5 || f.genCount() != 1 {
		t.Fatalf("first Generation = %d, %v after %d calls", g, err, f.genCount())
	}
	f.awaitKnown(map[string]uint64{"acme": 5})
	for range 3 {
		if g, err := cat.Generation(ctx, "acme"); err != nil || g != 5 {
			t.Fatalf("Generation = %d, %v", g, err)
		}
	}
	if n := f.genCount(); n != 1 {
		t.Errorf("Generation made %d calls while vouched, want 1 in all", n)
	}
	// A tenant without a metalake is at 0, asked while not vouched.
	if g, err := cat.Generation(ctx, "ghost"); err != nil || g != 0 || f.genCount() != 2 {
		t.Errorf("Generation(ghost) = %d, %v after %d calls", g, err, f.genCount())
	}
}

// The gateway's own write raises the generation it must read at: an
// answer the watch vouches for below it is not reused.
func TestCacheOwnWrite(t *testing.T) {
	f, cat, _, rs := cachedCatalog(t, Options{})
	warm(t, f, cat)
	resolveOK(t, cat, alice, read(orders))
	resolveOK(t, cat, alice, read(orders))
	rs.take()
	f.mu.Lock()
	f.commitGen = 7 // the watched node has not seen it yet
	f.mu.Unlock()
	if _, err := cat.Commit(context.Background(), alice, backend.Commit{Name: orders, Base: 1}); err != nil {
		t.Fatal(err)
	}
	before, calls := f.resolveCount(), f.genCount()
	for range 2 {
		if vs := resolveOK(t, cat, alice, read(orders)); vs[0] == nil || vs[0].Generation != 7 {
			t.Errorf("after the write: %+v, want the answer at 7", vs[0])
		}
		if got := f.lastResolve(); got.MinGeneration != 7 {
			t.Errorf("resolve asked minGeneration %d, want 7", got.MinGeneration)
		}
	}
	if n := f.resolveCount() - before; n != 2 {
		t.Errorf("two resolves after the write made %d calls, want 2", n)
	}
	if got := rs.take(); len(got) != 2 || got[0] || got[1] {
		t.Errorf("reuse reports %v, want [false false]", got)
	}
	if _, err := cat.Generation(context.Background(), "acme"); err != nil || f.genCount() != calls+1 {
		t.Errorf("Generation below the written generation: %v, %d calls, want 1", err, f.genCount()-calls)
	}
	// Once the watch reports the write, answers are reused again.
	f.set("acme", 7, nil)
	f.awaitKnown(map[string]uint64{"acme": 7})
	before = f.resolveCount()
	resolveOK(t, cat, alice, read(orders))
	resolveOK(t, cat, alice, read(orders))
	if n := f.resolveCount() - before; n != 1 {
		t.Errorf("at the written generation: %d calls, want 1", n)
	}
}

func TestCacheReturnsCopies(t *testing.T) {
	f, cat, _, _ := cachedCatalog(t, Options{})
	warm(t, f, cat)
	first := resolveOK(t, cat, alice, read(orders))
	before := f.resolveCount()
	second := resolveOK(t, cat, alice, read(orders))
	second[0].Version = 99
	second[0].StorageID = "mutated"
	second[0].Generation = 42
	second[0].Name = items
	third := resolveOK(t, cat, alice, read(orders))
	if n := f.resolveCount() - before; n != 0 {
		t.Fatalf("%d calls, want the cached answer", n)
	}
	for i, vs := range [][]*backend.TableVersion{first, third} {
		v := vs[0]
		if v.Version != 3 || v.StorageID != "st-orders" || v.Generation != 5 || v.Name != orders {
			t.Errorf("answer %d after mutating another = %+v", i, v)
		}
	}
}

func TestCacheAuthority(t *testing.T) {
	f, c := newFakeMetasrv(t)
	f.gens["acme"] = 5
	f.tables["sales.orders"] = 3
	var auth struct {
		sync.Mutex
		gen   uint64
		ok    bool
		calls int
	}
	auth.gen, auth.ok = 5, true
	clk := newClock()
	var rs reuses
	cat := NewWithOptions(c, Options{DecisionWindow: testWindow, Now: clk.Now, Reuse: rs.record,
		Generations: func(tenant string) (uint64, bool) {
			auth.Lock()
			defer auth.Unlock()
			auth.calls++
			return auth.gen, auth.ok
		}})
	// Watch is not needed and returns at once.
	watchReturns(t, cat)
	setAuth := func(gen uint64, ok bool) {
		auth.Lock()
		defer auth.Unlock()
		auth.gen, auth.ok = gen, ok
	}
	authCalls := func() int {
		auth.Lock()
		defer auth.Unlock()
		return auth.calls
	}
	steps := []struct {
		name    string
		change  func()
		calls   int // resolve calls the step makes
		version uint64
	}{
		{"first", nil, 1, 3},
		{"cached", nil, 0, 3},
		{"later", func() { clk.Advance(10 * testWindow) }, 0, 3},
		{"moved", func() {
			setAuth(6, true)
			f.set("acme", 6, func(f *fakeMetasrv) { f.tables["sales.orders"] = 4 })
		}, 1, 4},
		{"cached at 6", nil, 0, 4},
		{"cannot vouch", func() { setAuth(6, false) }, 1, 4},
		{"still cannot vouch", nil, 1, 4},
		{"vouches again", func() { setAuth(6, true) }, 0, 4},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		before, checks := f.resolveCount(), authCalls()
		vs := resolveOK(t, cat, alice, read(orders))
		if n := f.resolveCount() - before; n != s.calls {
			t.Errorf("%s: %d calls, want %d", s.name, n, s.calls)
		}
		if vs[0] == nil || vs[0].Version != s.version {
			t.Errorf("%s: %+v, want version %d", s.name, vs[0], s.version)
		}
		if n := authCalls() - checks; n != 1 {
			t.Errorf("%s: authority checked %d times, want 1", s.name, n)
		}
		if got := rs.take(); len(got) != 1 || got[0] != (s.calls == 0) {
			t.Errorf("%s: reuse reports %v", s.name, got)
		}
	}
	calls := f.genCount()
	if g, err := cat.Generation(context.Background(), "acme"); err != nil || g != 6 || f.genCount() != calls {
		t.Errorf("Generation = %d, %v with %d calls; want 6 from the authority", g, err, f.genCount()-calls)
	}
}

func TestWatchReturnsAtOnce(t *testing.T) {
	_, c := newFakeMetasrv(t)
	cases := []struct {
		name string
		o    Options
	}{
		{"no window", Options{}},
		{"no window, authority", Options{Generations: func(string) (uint64, bool) { return 1, true }}},
		{"authority", Options{DecisionWindow: time.Minute, Generations: func(string) (uint64, bool) { return 1, true }}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			watchReturns(t, NewWithOptions(c, tc.o))
		})
	}
}

// Without a window every resolve asks metasrv and Reuse is not called.
func TestNoWindowNoReuse(t *testing.T) {
	f, c := newFakeMetasrv(t)
	f.gens["acme"] = 5
	f.tables["sales.orders"] = 3
	var rs reuses
	cat := NewWithOptions(c, Options{Reuse: rs.record})
	for range 3 {
		resolveOK(t, cat, alice, read(orders))
	}
	if n := f.resolveCount(); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
	if got := rs.take(); len(got) != 0 {
		t.Errorf("Reuse called without a window: %v", got)
	}
}

// Without Watch running nothing is ever reported, so nothing is reused.
func TestCacheNeedsWatch(t *testing.T) {
	f, c := newFakeMetasrv(t)
	f.gens["acme"] = 5
	f.tables["sales.orders"] = 3
	clk := newClock()
	var rs reuses
	cat := NewWithOptions(c, Options{DecisionWindow: testWindow, Now: clk.Now, Reuse: rs.record})
	for range 3 {
		resolveOK(t, cat, alice, read(orders))
	}
	if n := f.resolveCount(); n != 3 {
		t.Errorf("%d calls, want 3", n)
	}
	if got := rs.take(); len(got) != 3 || got[0] || got[1] || got[2] {
		t.Errorf("reuse reports %v, want all false", got)
	}
	if _, err := cat.Generation(context.Background(), "acme"); err != nil || f.genCount() != 1 {
		t.Errorf("Generation: %v after %d calls, want 1", err, f.genCount())
	}
}

// watchReturns fails t unless cat.Watch returns by itself (waitLimit is a
// failure bound).
func watchReturns(t *testing.T, cat *Governance) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		cat.Watch(context.Background())
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("Watch did not return")
	}
}

// recordHandler is a slog.Handler sending every record's level and
// message to a channel.
type recordHandler chan string

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h <- r.Level.String() + " " + r.Message
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// TestCacheWatchFailureLogged: operators hear that decisions stopped
// being reused when the watch is no longer answered.
func TestCacheWatchFailureLogged(t *testing.T) {
	logged := make(recordHandler, 8)
	f, cat, _, _ := cachedCatalog(t, Options{Logger: slog.New(logged)})
	warm(t, f, cat)
	select {
	case r := <-logged:
		t.Fatalf("logged while the watch works: %s", r)
	default:
	}
	f.failWatch(http.StatusServiceUnavailable)
	select {
	case r := <-logged:
		if !strings.HasPrefix(r, "WARN generation watch not answered") {
			t.Errorf("logged %q", r)
		}
	case <-time.After(waitLimit):
		t.Fatal("a failing watch was not logged")
	}
}

// TestCacheListing: a listing is reused for the same caller and catalog
// while the generation holds (a copy of nothing: callers must not modify
// it), asked again once it moves, and separately per caller.
func TestCacheListing(t *testing.T) {
	f, cat, _, rs := cachedCatalog(t, Options{})
	warm(t, f, cat)
	list := func(c backend.Caller) backend.Listing {
		t.Helper()
		l, err := cat.List(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	first := list(alice)
	if len(first.Tables) != 2 || first.Tables[0].Name.Name != "items" || first.Tables[1].Name.Name != "orders" {
		t.Fatalf("listing %+v", first.Tables)
	}
	list(alice)
	if n := f.listCount(); n != 1 {
		t.Fatalf("two listings at one generation: %d calls, want 1", n)
	}
	bob := alice
	bob.Subject = "bob@acme"
	list(bob)
	other := alice
	other.Catalog = "other"
	list(other)
	if n := f.listCount(); n != 3 {
		t.Fatalf("other caller, other catalog: %d calls in all, want 3", n)
	}
	f.set("acme", 6, func(f *fakeMetasrv) { delete(f.tables, "sales.orders") })
	f.awaitKnown(map[string]uint64{"acme": 6})
	if l := list(alice); len(l.Tables) != 1 || f.listCount() != 4 {
		t.Fatalf("after the generation moved: %+v after %d calls", l.Tables, f.listCount())
	}
	if got := rs.take(); !slices.Equal(got, []bool{false, true, false, false, false}) {
		t.Errorf("Reuse saw %v", got)
	}
}
