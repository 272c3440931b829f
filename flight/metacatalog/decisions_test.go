package metacatalog

import (
	"fmt"
	"testing"
	"time"

	"lakegate/flight/backend"
	"lakegate/flight/clocktest"
)

// testWindow is the decision window of the tests: shorter than
// idleTenant, so a tenant stays followed across a window of the fake clock.
const testWindow = 30 * time.Second

// restarts counts the calls of the restart funcs handed to watched.
type restarts struct{ n int }

func (r *restarts) fn() { r.n++ }

func woken(d *decisions) bool {
	select {
	case <-d.wake:
		return true
	default:
		return false
	}
}

func answerAt(gen uint64) *resolved {
	return &resolved{gen: gen, versions: []*backend.TableVersion{{Version: gen}}}
}

func TestDecisionsFollowUnknownTenant(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	var rs restarts
	if known := d.watched(rs.fn); len(known) != 0 {
		t.Fatalf("watched with no tenants = %v", known)
	}
	if woken(d) {
		t.Fatal("wake signalled before any tenant was followed")
	}
	if _, ok := d.lookup("acme", "k", 0); ok {
		t.Fatal("lookup of an unknown tenant hit")
	}
	if rs.n != 1 {
		t.Errorf("restart called %d times for a new tenant, want 1", rs.n)
	}
	if !woken(d) {
		t.Error("wake not signalled for a new tenant")
	}
	// A tenant already followed neither restarts nor wakes the watch.
	if _, ok := d.lookup("acme", "k", 0); ok {
		t.Fatal("lookup of a tenant never reported hit")
	}
	if _, ok := d.generation("acme", 0); ok {
		t.Fatal("generation of a tenant never reported vouched")
	}
	if rs.n != 1 || woken(d) {
		t.Errorf("known tenant: restarts %d (want 1), woken %v (want false)", rs.n, woken(d))
	}
	// The next watch request includes it, at generation 0.
	known := d.watched(rs.fn)
	if g, ok := known["acme"]; !ok || g != 0 || len(known) != 1 {
		t.Errorf("watched = %v, want map[acme:0]", known)
	}
	// Another new tenant restarts the request in flight again.
	d.generation("other", 0)
	if rs.n != 2 || !woken(d) {
		t.Errorf("second new tenant: restarts %d (want 2), woken %v", rs.n, woken(d))
	}
	// Once reported, the request is over: nothing to restart.
	d.reported(clk.Now(), map[string]uint64{"acme": 1})
	d.lookup("third", "k", 0)
	if rs.n != 2 {
		t.Errorf("restart called after the request was reported: %d", rs.n)
	}
}

func TestDecisionsStoreNeedsReportedGeneration(t *testing.T) {
	cases := []struct {
		name      string
		report    bool   // the watch reports generation 5 before store
		storeGen  uint64 // generation of the answer stored
		reportGen uint64
		hit       bool
	}{
		{"not reported", false, 5, 0, false},
		{"reported same", true, 5, 5, true},
		{"answer older", true, 4, 5, false},
		{"answer newer", true, 6, 5, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			d := newDecisions(testWindow, clk.Now, nil)
			d.lookup("acme", "k", 0) // follow
			if tc.report {
				d.watched(func() {})
				d.reported(clk.Now(), map[string]uint64{"acme": tc.reportGen})
			}
			d.store("acme", "k", answerAt(tc.storeGen))
			if !tc.report {
				// Reporting afterwards does not make the earlier store count.
				d.reported(clk.Now(), map[string]uint64{"acme": tc.storeGen})
			}
			if n := len(d.tenants["acme"].answers); n != 0 && !tc.hit {
				t.Errorf("%d answers held, want none", n)
			}
			r, ok := d.lookup("acme", "k", 0)
			if ok != tc.hit {
				t.Fatalf("lookup hit = %v, want %v", ok, tc.hit)
			}
			if ok && r.gen != tc.storeGen {
				t.Errorf("lookup returned the answer at %d, want %d", r.gen, tc.storeGen)
			}
		})
	}
}

func TestDecisionsStoreUnfollowedTenant(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	d.store("acme", "k", answerAt(0)) // not followed: must not add it
	if len(d.tenants) != 0 {
		t.Fatalf("store added tenants: %v", d.tenants)
	}
}

func TestDecisionsHitAndMovedGeneration(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	d.lookup("acme", "k", 0)
	d.lookup("beta", "k", 0)
	d.reported(clk.Now(), map[string]uint64{"acme": 5, "beta": 2})
	a, b := answerAt(5), answerAt(2)
	d.store("acme", "k", a)
	d.store("beta", "k", b)
	if r, ok := d.lookup("acme", "k", 0); !ok || r != a {
		t.Fatalf("lookup after reported = %v, %v; want the stored answer", r, ok)
	}
	if _, ok := d.lookup("acme", "other", 0); ok {
		t.Fatal("lookup of another key hit")
	}
	if g, ok := d.generation("acme", 0); !ok || g != 5 {
		t.Fatalf("generation = %d, %v; want 5, true", g, ok)
	}
	// acme moves; beta is reported unchanged and keeps its answer.
	d.reported(clk.Now(), map[string]uint64{"acme": 6, "beta": 2})
	if _, ok := d.lookup("acme", "k", 0); ok {
		t.Fatal("answer of generation 5 reused at generation 6")
	}
	if g, ok := d.generation("acme", 0); !ok || g != 6 {
		t.Fatalf("generation after move = %d, %v; want 6, true", g, ok)
	}
	if r, ok := d.lookup("beta", "k", 0); !ok || r != b {
		t.Fatal("an unchanged tenant lost its answer when another moved")
	}
	// Moving back does not resurrect the dropped answer.
	d.reported(clk.Now(), map[string]uint64{"acme": 5})
	if _, ok := d.lookup("acme", "k", 0); ok {
		t.Fatal("dropped answer came back when the generation returned to 5")
	}
	// A tenant reported but never followed is not added.
	d.reported(clk.Now(), map[string]uint64{"ghost": 1})
	if _, ok := d.tenants["ghost"]; ok {
		t.Fatal("reported added a tenant that was not followed")
	}
}

func TestDecisionsExpiry(t *testing.T) {
	cases := []struct {
		name string
		// reportDelay is how long after sending the request was answered;
		// age is the time since sending at the lookup.
		reportDelay, age time.Duration
		fresh            bool
	}{
		{"just sent", 0, 0, true},
		{"before window", 0, testWindow - time.Nanosecond, true},
		{"at window", 0, testWindow, false},
		{"after window", 0, testWindow + time.Nanosecond, false},
		// The confirmation counts from sending, not from the answer.
		{"slow answer, before window", testWindow / 2, testWindow - time.Nanosecond, true},
		{"slow answer, at window", testWindow / 2, testWindow, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			d := newDecisions(testWindow, clk.Now, nil)
			d.lookup("acme", "k", 0)
			sent := clk.Now()
			clk.Advance(tc.reportDelay)
			d.reported(sent, map[string]uint64{"acme": 5})
			d.store("acme", "k", answerAt(5))
			clk.Advance(tc.age - tc.reportDelay)
			if _, ok := d.lookup("acme", "k", 0); ok != tc.fresh {
				t.Errorf("lookup %s after sending: hit %v, want %v", tc.age, ok, tc.fresh)
			}
			if _, ok := d.generation("acme", 0); ok != tc.fresh {
				t.Errorf("generation %s after sending: vouched %v, want %v", tc.age, ok, tc.fresh)
			}
		})
	}
}

func TestDecisionsReconfirmed(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	d.lookup("acme", "k", 0)
	d.reported(clk.Now(), map[string]uint64{"acme": 5})
	d.store("acme", "k", answerAt(5))
	clk.Advance(testWindow - time.Second)
	// Same generation, confirmed again: the answer stays and is fresh again.
	d.reported(clk.Now(), map[string]uint64{"acme": 5})
	clk.Advance(testWindow - time.Second)
	if _, ok := d.lookup("acme", "k", 0); !ok {
		t.Fatal("answer lost or stale after a reconfirmation of the same generation")
	}
}

func TestDecisionsMinGeneration(t *testing.T) {
	cases := []struct {
		minGen uint64
		hit    bool
	}{{0, true}, {4, true}, {5, true}, {6, false}, {100, false}}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.minGen), func(t *testing.T) {
			clk := newClock()
			d := newDecisions(testWindow, clk.Now, nil)
			d.lookup("acme", "k", 0)
			d.reported(clk.Now(), map[string]uint64{"acme": 5})
			d.store("acme", "k", answerAt(5))
			if _, ok := d.lookup("acme", "k", tc.minGen); ok != tc.hit {
				t.Errorf("lookup with minGen %d: hit %v, want %v", tc.minGen, ok, tc.hit)
			}
			if g, ok := d.generation("acme", tc.minGen); ok != tc.hit || (ok && g != 5) {
				t.Errorf("generation with minGen %d = %d, %v; want 5, %v", tc.minGen, g, ok, tc.hit)
			}
		})
	}
}

func TestDecisionsIdleTenants(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	d.lookup("idle", "k", 0)
	d.lookup("busy", "k", 0)
	d.reported(clk.Now(), map[string]uint64{"idle": 5, "busy": 5})
	d.store("idle", "k", answerAt(5))
	clk.Advance(idleTenant)
	d.lookup("busy", "k", 0)
	// Exactly idleTenant since the last use: still followed.
	if known := d.watched(func() {}); len(known) != 2 {
		t.Fatalf("watched at idleTenant = %v, want both tenants", known)
	}
	clk.Advance(time.Nanosecond)
	known := d.watched(func() {})
	if _, ok := known["idle"]; ok || len(known) != 1 {
		t.Fatalf("watched past idleTenant = %v, want only busy", known)
	}
	if _, ok := d.tenants["idle"]; ok {
		t.Fatal("idle tenant still held")
	}
	// Coming back, it is new: followed again (restart), nothing reused.
	var rs restarts
	d.watched(rs.fn)
	if _, ok := d.lookup("idle", "k", 0); ok {
		t.Fatal("dropped tenant's answer reused")
	}
	if rs.n != 1 {
		t.Errorf("returning tenant did not restart the watch (%d)", rs.n)
	}
}

func TestDecisionsMaxWatchedTenants(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	gens := map[string]uint64{}
	for i := range maxWatchedTenants {
		name := fmt.Sprintf("t%d", i)
		d.lookup(name, "k", 0)
		gens[name] = 1
	}
	d.reported(clk.Now(), gens)
	var rs restarts
	d.watched(rs.fn)
	woken(d)
	if _, ok := d.lookup("extra", "k", 0); ok {
		t.Fatal("lookup of the tenant past the cap hit")
	}
	if _, ok := d.generation("extra", 0); ok {
		t.Fatal("generation of the tenant past the cap vouched")
	}
	d.store("extra", "k", answerAt(0))
	if _, ok := d.tenants["extra"]; ok || len(d.tenants) != maxWatchedTenants {
		t.Fatalf("tenants = %d (extra held: %v), want %d", len(d.tenants), ok, maxWatchedTenants)
	}
	if rs.n != 0 || woken(d) {
		t.Errorf("tenant past the cap restarted (%d) or woke (%v) the watch", rs.n, woken(d))
	}
	// Tenants within the cap still work.
	d.store("t0", "k", answerAt(1))
	if _, ok := d.lookup("t0", "k", 0); !ok {
		t.Fatal("a followed tenant stopped caching at the cap")
	}
}

func TestDecisionsMaxTenantDecisions(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	d.lookup("acme", "k", 0)
	d.reported(clk.Now(), map[string]uint64{"acme": 5})
	for i := range maxTenantDecisions {
		d.store("acme", fmt.Sprint(i), answerAt(5))
	}
	d.store("acme", "extra", answerAt(5))
	if _, ok := d.lookup("acme", "extra", 0); ok {
		t.Fatal("answer past the cap stored")
	}
	if n := len(d.tenants["acme"].answers); n != maxTenantDecisions {
		t.Fatalf("answers = %d, want %d", n, maxTenantDecisions)
	}
	for _, k := range []string{"0", fmt.Sprint(maxTenantDecisions - 1)} {
		if _, ok := d.lookup("acme", k, 0); !ok {
			t.Errorf("answer %s within the cap not reused", k)
		}
	}
	// Storing again under a key already held keeps it usable.
	d.store("acme", "0", answerAt(5))
	if _, ok := d.lookup("acme", "0", 0); !ok {
		t.Error("answer 0 lost")
	}
	// Another generation starts afresh.
	d.reported(clk.Now(), map[string]uint64{"acme": 6})
	d.store("acme", "extra", answerAt(6))
	if _, ok := d.lookup("acme", "extra", 0); !ok {
		t.Error("no caching after the generation moved past a full cache")
	}
}

func TestDecisionsAuthority(t *testing.T) {
	clk := newClock()
	auth := struct {
		gen   uint64
		ok    bool
		calls int
	}{5, true, 0}
	d := newDecisions(testWindow, clk.Now, func(tenant string) (uint64, bool) {
		if tenant != "acme" {
			t.Errorf("authority asked about %q", tenant)
		}
		auth.calls++
		return auth.gen, auth.ok
	})
	step := func(name string, storeGen uint64, wantHit bool) {
		t.Helper()
		before := auth.calls
		if storeGen != 0 {
			d.store("acme", "k", answerAt(storeGen))
		}
		r, ok := d.lookup("acme", "k", 0)
		if ok != wantHit {
			t.Errorf("%s: hit %v, want %v", name, ok, wantHit)
		}
		if ok && r.gen != auth.gen {
			t.Errorf("%s: answer at %d reused at authority generation %d", name, r.gen, auth.gen)
		}
		if auth.calls != before+1 {
			t.Errorf("%s: authority called %d times by one lookup, want 1", name, auth.calls-before)
		}
	}
	step("first", 0, false)
	step("stored", 5, true)
	// No watch: time does not expire what the authority vouches for.
	clk.Advance(10 * testWindow)
	step("much later", 0, true)
	if g, ok := d.generation("acme", 0); !ok || g != 5 {
		t.Errorf("generation = %d, %v; want 5, true", g, ok)
	}
	auth.gen = 6
	step("moved", 0, false)
	step("old answer stored", 5, false)
	step("new answer stored", 6, true)
	auth.ok = false
	step("cannot vouch", 0, false)
	if _, ok := d.generation("acme", 0); ok {
		t.Error("generation vouched while the authority cannot")
	}
	auth.ok = true
	step("vouches again", 0, true)
}

func TestResolveKeyInjective(t *testing.T) {
	tn := func(schema, name string) backend.TableName { return backend.TableName{Schema: schema, Name: name} }
	type req struct {
		c    backend.Caller
		refs []backend.TableRef
	}
	base := backend.Caller{Tenant: "acme", Subject: "alice", Catalog: "lake"}
	orders := []backend.TableRef{{Name: tn("s", "orders")}}
	cases := []struct {
		name string
		a, b req
	}{
		{"tenant/subject boundary",
			req{backend.Caller{Tenant: "a", Subject: "bc", Catalog: "x"}, orders},
			req{backend.Caller{Tenant: "ab", Subject: "c", Catalog: "x"}, orders}},
		{"subject/catalog boundary",
			req{backend.Caller{Tenant: "t", Subject: "a", Catalog: "bc"}, orders},
			req{backend.Caller{Tenant: "t", Subject: "ab", Catalog: "c"}, orders}},
		{"catalog/schema boundary",
			req{backend.Caller{Tenant: "t", Subject: "s", Catalog: "a"}, []backend.TableRef{{Name: tn("bc", "x")}}},
			req{backend.Caller{Tenant: "t", Subject: "s", Catalog: "ab"}, []backend.TableRef{{Name: tn("c", "x")}}}},
		{"schema/name boundary",
			req{base, []backend.TableRef{{Name: tn("a", "bc")}}},
			req{base, []backend.TableRef{{Name: tn("ab", "c")}}}},
		{"NUL in names",
			req{backend.Caller{Tenant: "a\x00", Subject: "b", Catalog: "c"}, orders},
			req{backend.Caller{Tenant: "a", Subject: "\x00b", Catalog: "c"}, orders}},
		{"NUL and length bytes",
			req{base, []backend.TableRef{{Name: tn("a\x01b", "")}}},
			req{base, []backend.TableRef{{Name: tn("a", "b")}}}},
		{"empty fields",
			req{backend.Caller{Tenant: "", Subject: "x", Catalog: ""}, nil},
			req{backend.Caller{Tenant: "x", Subject: "", Catalog: ""}, nil}},
		{"write flag",
			req{base, []backend.TableRef{{Name: tn("s", "orders")}}},
			req{base, []backend.TableRef{{Name: tn("s", "orders"), Write: true}}}},
		{"version",
			req{base, []backend.TableRef{{Name: tn("s", "orders"), Version: 1}}},
			req{base, []backend.TableRef{{Name: tn("s", "orders"), Version: 2}}}},
		{"version 0 vs 1",
			req{base, orders},
			req{base, []backend.TableRef{{Name: tn("s", "orders"), Version: 1}}}},
		{"large version vs write",
			req{base, []backend.TableRef{{Name: tn("s", "t"), Version: 128}}},
			req{base, []backend.TableRef{{Name: tn("s", "t"), Version: 0, Write: true}}}},
		{"ref order",
			req{base, []backend.TableRef{{Name: tn("s", "a")}, {Name: tn("s", "b")}}},
			req{base, []backend.TableRef{{Name: tn("s", "b")}, {Name: tn("s", "a")}}}},
		{"ref count",
			req{base, orders},
			req{base, []backend.TableRef{{Name: tn("s", "orders")}, {Name: tn("s", "orders")}}}},
		{"no refs vs one empty ref",
			req{base, nil},
			req{base, []backend.TableRef{{}}}},
		// A length that could be read as part of a neighbouring field.
		{"length byte, tenant/subject",
			req{backend.Caller{Tenant: "a", Subject: "b\x00", Catalog: "c"}, orders},
			req{backend.Caller{Tenant: "a\x02b", Subject: "", Catalog: "c"}, orders}},
		{"length byte, subject/catalog",
			req{backend.Caller{Tenant: "t", Subject: "a", Catalog: "b\x00"}, orders},
			req{backend.Caller{Tenant: "t", Subject: "a\x02b", Catalog: ""}, orders}},
		{"length byte, catalog/schema",
			req{backend.Caller{Tenant: "t", Subject: "s", Catalog: "a"}, []backend.TableRef{{Name: tn("b\x00", "x")}}},
			req{backend.Caller{Tenant: "t", Subject: "s", Catalog: "a\x02b"}, []backend.TableRef{{Name: tn("", "x")}}}},
		{"length byte, schema/name",
			req{base, []backend.TableRef{{Name: tn("a", "b\x00")}}},
			req{base, []backend.TableRef{{Name: tn("a\x02b", "")}}}},
		{"name/version",
			req{base, []backend.TableRef{{Name: tn("s", "a\x01"), Version: 0}}},
			req{base, []backend.TableRef{{Name: tn("s", "a"), Version: 1}}}},
		{"ref split across two",
			req{base, []backend.TableRef{{Name: tn("a", "b")}, {Name: tn("c", "d")}}},
			req{base, []backend.TableRef{{Name: tn("a", "b\x00\x00\x01c\x01d\x00\x00")}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ka, kb := resolveKey(tc.a.c, tc.a.refs), resolveKey(tc.b.c, tc.b.refs)
			if ka == kb {
				t.Errorf("same key %q for %#v and %#v", ka, tc.a, tc.b)
			}
			// And deterministic.
			if resolveKey(tc.a.c, tc.a.refs) != ka {
				t.Error("key not deterministic")
			}
		})
	}
}

func listingOf(gen uint64, tables int) *listed {
	return &listed{gen: gen, listing: backend.Listing{Tables: make([]backend.TableVersion, tables)}}
}

// TestDecisionsListings: listings are reused at their generation, count
// against one budget of tables for all tenants, and give it back when the
// generation moves or the tenant goes idle.
func TestDecisionsListings(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	var rs restarts
	follow := func(tenant string, gen uint64) {
		t.Helper()
		d.lookupListing(tenant, "k", 0)
		d.watched(rs.fn)
		d.reported(clk.Now(), map[string]uint64{tenant: gen})
	}
	follow("acme", 5)
	follow("beta", 1)
	d.storeListing("acme", "old", listingOf(4, 10)) // another generation: not kept
	if _, ok := d.lookupListing("acme", "old", 0); ok || d.listed != 0 {
		t.Fatalf("a listing of generation 4 was kept (%d tables counted)", d.listed)
	}
	d.storeListing("acme", "a", listingOf(5, maxListedTables-100))
	if l, ok := d.lookupListing("acme", "a", 0); !ok || len(l.listing.Tables) != maxListedTables-100 {
		t.Fatal("a listing within the budget was not reused")
	}
	d.storeListing("beta", "b", listingOf(1, 101)) // past the budget
	if _, ok := d.lookupListing("beta", "b", 0); ok {
		t.Fatal("a listing past the budget was kept")
	}
	d.storeListing("beta", "b", listingOf(1, 100)) // exactly the budget
	if _, ok := d.lookupListing("beta", "b", 0); !ok || d.listed != maxListedTables {
		t.Fatalf("a listing filling the budget exactly: kept %v, %d tables counted", ok, d.listed)
	}
	d.storeListing("beta", "b", listingOf(1, 50)) // replaces its own entry
	if d.listed != maxListedTables-50 {
		t.Fatalf("replacing a listing: %d tables counted, want %d", d.listed, maxListedTables-50)
	}
	// acme's generation moves: its listing goes, and the budget with it.
	d.reported(clk.Now(), map[string]uint64{"acme": 6, "beta": 1})
	if _, ok := d.lookupListing("acme", "a", 0); ok || d.listed != 50 {
		t.Fatalf("after acme moved: hit %v, %d tables counted, want 50", ok, d.listed)
	}
	// beta goes idle: dropped with its listing.
	clk.Advance(idleTenant / 2)
	d.lookupListing("acme", "a", 0)
	clk.Advance(idleTenant/2 + time.Nanosecond)
	d.watched(rs.fn)
	if _, followed := d.tenants["beta"]; followed || d.listed != 0 {
		t.Fatalf("idle beta: still followed %v, %d tables counted", followed, d.listed)
	}
	// A listing and a resolve answer under the same key do not meet.
	d.reported(clk.Now(), map[string]uint64{"acme": 6})
	d.store("acme", "same", answerAt(6))
	if _, ok := d.lookupListing("acme", "same", 0); ok {
		t.Fatal("a resolve answer was found as a listing")
	}
}

func answerWithFiles(gen uint64, files int) *resolved {
	return &resolved{gen: gen, versions: []*backend.TableVersion{{Version: gen, Files: make([]backend.DataFile, files)}, nil}}
}

// TestDecisionsFileBudget: resolve answers count their data files against
// one budget for all tenants, given back when the generation moves.
func TestDecisionsFileBudget(t *testing.T) {
	clk := newClock()
	d := newDecisions(testWindow, clk.Now, nil)
	var rs restarts
	d.lookup("acme", "k", 0)
	d.watched(rs.fn)
	d.reported(clk.Now(), map[string]uint64{"acme": 5})
	d.store("acme", "big", answerWithFiles(5, maxResolvedFiles-10))
	d.store("acme", "over", answerWithFiles(5, 11))
	d.store("acme", "fits", answerWithFiles(5, 10))
	for key, want := range map[string]bool{"big": true, "over": false, "fits": true} {
		if _, ok := d.lookup("acme", key, 0); ok != want {
			t.Errorf("%s: cached %v, want %v", key, ok, want)
		}
	}
	d.store("acme", "fits", answerWithFiles(5, 5)) // replaces its own entry
	if d.files != maxResolvedFiles-5 {
		t.Fatalf("%d files counted, want %d", d.files, maxResolvedFiles-5)
	}
	d.reported(clk.Now(), map[string]uint64{"acme": 6})
	if d.files != 0 {
		t.Fatalf("after the generation moved: %d files counted", d.files)
	}
}

// newClock is the tests' hand-moved clock.
func newClock() *clocktest.Clock {
	return clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}
