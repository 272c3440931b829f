package metasrv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/metasrv"
	"lakegate/metasrv/api"
	"lakegate/metasrv/client"
	"lakegate/metasrv/raftnode"
)

// tokWatch is a query_service delegate for acme, other and ghost (a
// metalake that is never created).
const tokWatch = "tok-gw-watch"

const watchPath = "/internal/v1/generations"

// startWatchNode starts a bootstrapped single node with the delegation
// principal map plus gw-watch (tokWatch), metalake acme owned by alice and
// metalake other owned by eve. ghost does not exist.
func startWatchNode(t testing.TB) *node {
	t.Helper()
	pm := principalMap(t, append(delegationSpecs(), authz.PrincipalSpec{ID: "gw-watch", Tenant: "platform",
		Role: "query_service", DelegateTenants: []string{"acme", "other", "ghost"}, TokenHashes: tokenHashes(tokWatch)}))
	n := startSolo(t, pm, "n1")
	waitLeader(t, n)
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin,
		body: map[string]any{"name": "acme", "comment": "Acme", "owner": "alice@acme"}})
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin,
		body: map[string]any{"name": "other", "owner": "eve@other"}})
	return n
}

// lakeGen is metalake's generation in n's state machine, 0 for none.
func lakeGen(n *node, metalake string) uint64 {
	if l, ok := n.FSM().Lake(metalake); ok {
		return l.Generation()
	}
	return 0
}

// currentGens is n's generation of every one of names.
func currentGens(n *node, names ...string) map[string]uint64 {
	out := make(map[string]uint64, len(names))
	for _, m := range names {
		out[m] = lakeGen(n, m)
	}
	return out
}

func watchBody(known map[string]uint64, waitMillis int64) map[string]any {
	return map[string]any{"known": known, "waitMillis": waitMillis}
}

// watchGens decodes a watch answer, failing unless it is 200 / code 0.
func watchGens(t testing.TB, r resp) map[string]uint64 {
	t.Helper()
	var out metasrv.WatchResponse
	if r.status != http.StatusOK {
		t.Fatalf("watch: HTTP %d: %s", r.status, r.raw)
	}
	if err := json.Unmarshal(r.raw, &out); err != nil || out.Code != 0 || out.Generations == nil {
		t.Fatalf("watch answer %s (%v)", r.raw, err)
	}
	return out.Generations
}

// watchAudited reports whether n's audit ring holds a failed
// WatchGenerations event under metalake ("" for one recorded without a
// metalake) by actor whose detail contains detail.
func watchAudited(n *node, metalake, actor, detail string) bool {
	for _, e := range n.Audit().Events(metalake, 0, 0, 1000) {
		if e.Metalake == metalake && e.Operation == "WatchGenerations" && e.Actor == actor &&
			e.Delegator == "" && e.Outcome == "failure" && strings.Contains(e.Detail, detail) {
			return true
		}
	}
	return false
}

// watched is the outcome of a watch run in a goroutine.
type watched struct {
	r       resp
	elapsed time.Duration
}

// startWatch posts a watch from a goroutine. sent is closed once the
// request has been written to the connection; the answer arrives on
// answer. do's t.Fatal is not used off the test goroutine: a transport
// failure arrives as status 0 with the error as raw.
func startWatch(n *node, token string, body any) (sent <-chan struct{}, answer <-chan watched) {
	wrote, ch := make(chan struct{}), make(chan watched, 1)
	b, _ := json.Marshal(body)
	go func() {
		t0 := time.Now()
		var w watched
		var once sync.Once
		defer once.Do(func() { close(wrote) })
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(func() { close(wrote) }) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			"POST", "http://"+n.addr+watchPath, bytes.NewReader(b))
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			var hr *http.Response
			if hr, err = http.DefaultClient.Do(req); err == nil {
				w.r = resp{status: hr.StatusCode, header: hr.Header}
				w.r.raw, err = io.ReadAll(hr.Body)
				hr.Body.Close()
				_ = json.Unmarshal(w.r.raw, &w.r.body)
			}
		}
		if err != nil {
			w.r.raw = []byte(err.Error())
		}
		w.elapsed = time.Since(t0)
		ch <- w
	}()
	return wrote, ch
}

// TestWatchStale: a known generation that differs from the node's is
// answered at once with every metalake's generation; a metalake that does
// not exist is 0, and known 0 for one that exists is stale.
func TestWatchStale(t *testing.T) {
	n := startWatchNode(t)
	for _, u := range []string{"carol@acme", "dan@acme"} {
		must(t, n, call{method: "POST", path: ml + "/users", token: tokAlice, body: map[string]any{"name": u}})
	}
	must(t, n, call{method: "POST", path: "/api/metalakes/other/catalogs", token: tokEve, body: map[string]any{"name": "c1"}})
	acme, other := lakeGen(n, "acme"), lakeGen(n, "other")
	if acme == 0 || other == 0 || acme == other {
		t.Fatalf("generations acme %d other %d", acme, other)
	}
	// A wait far beyond the cap: answering before the cap has passed
	// shows it did not wait.
	const wait = 60_000
	limit := metasrv.DefaultConfig().ReadWaitTimeout
	for _, tc := range []struct {
		name  string
		known map[string]uint64
		want  map[string]uint64
	}{
		{"older", map[string]uint64{"acme": acme - 1}, map[string]uint64{"acme": acme}},
		{"newer", map[string]uint64{"acme": acme + 100}, map[string]uint64{"acme": acme}},
		{"known 0 for an existing metalake", map[string]uint64{"acme": 0}, map[string]uint64{"acme": acme}},
		{"absent metalake is 0", map[string]uint64{"ghost": 7}, map[string]uint64{"ghost": 0}},
		{"one stale of three", map[string]uint64{"acme": acme, "other": other - 1, "ghost": 0},
			map[string]uint64{"acme": acme, "other": other, "ghost": 0}},
		{"absent stale among current", map[string]uint64{"acme": acme, "other": other, "ghost": 1},
			map[string]uint64{"acme": acme, "other": other, "ghost": 0}},
		{"each other's generations", map[string]uint64{"acme": other, "other": acme},
			map[string]uint64{"acme": acme, "other": other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			got := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: watchBody(tc.known, wait)}))
			if el := time.Since(t0); el >= limit {
				t.Fatalf("answered after %s: it waited", el)
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("known %v: got %v, want %v", tc.known, got, tc.want)
			}
		})
	}
	// A delegate of one metalake only may watch it.
	if got := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokGW, body: watchBody(map[string]uint64{"acme": 0}, 0)})); !maps.Equal(got, map[string]uint64{"acme": acme}) {
		t.Fatalf("gw: %v", got)
	}
	if got := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokGWOther, body: watchBody(map[string]uint64{"other": 0}, 0)})); !maps.Equal(got, map[string]uint64{"other": other}) {
		t.Fatalf("gw-other: %v", got)
	}
}

// TestWatchHoldsUntilWrite: while every known generation is current the
// request is held; a write to a followed metalake answers it with the
// write's generation, and a write to a metalake not followed does not.
func TestWatchHoldsUntilWrite(t *testing.T) {
	n := startWatchNode(t)
	limit := metasrv.DefaultConfig().ReadWaitTimeout
	all := []string{"acme", "other", "ghost"}

	t.Run("write to a followed metalake", func(t *testing.T) {
		known := currentGens(n, all...)
		sent, ch := startWatch(n, tokWatch, watchBody(known, 60_000))
		<-sent
		select {
		case w := <-ch:
			t.Fatalf("answered before any write: HTTP %d %s", w.r.status, w.r.raw)
		default:
		}
		wr := must(t, n, call{method: "POST", path: "/api/metalakes/other/catalogs", token: tokEve, body: map[string]any{"name": "c1"}})
		if wr.gen() <= known["other"] {
			t.Fatalf("write generation %d, was %d", wr.gen(), known["other"])
		}
		w := <-ch
		got := watchGens(t, w.r)
		want := map[string]uint64{"acme": known["acme"], "other": wr.gen(), "ghost": 0}
		if !maps.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if w.elapsed >= limit {
			t.Fatalf("answered after %s: by the timer, not the write", w.elapsed)
		}
	})

	t.Run("write to another metalake only", func(t *testing.T) {
		known := currentGens(n, "acme")
		sent, ch := startWatch(n, tokWatch, watchBody(known, 60_000))
		<-sent
		// A write to other wakes the node's waiters but must not answer a
		// watch of acme: had it, the answer below would hold acme's old
		// generation.
		must(t, n, call{method: "POST", path: "/api/metalakes/other/catalogs", token: tokEve, body: map[string]any{"name": "c2"}})
		if g := lakeGen(n, "acme"); g != known["acme"] {
			t.Fatalf("a write to other moved acme from %d to %d", known["acme"], g)
		}
		wr := must(t, n, call{method: "POST", path: ml + "/users", token: tokAlice, body: map[string]any{"name": "dan@acme"}})
		w := <-ch
		if got := watchGens(t, w.r); !maps.Equal(got, map[string]uint64{"acme": wr.gen()}) {
			t.Fatalf("got %v, want acme %d (before the writes %d)", got, wr.gen(), known["acme"])
		}
		if w.elapsed >= limit {
			t.Fatalf("answered after %s: by the timer, not the write", w.elapsed)
		}
	})
}

// TestWatchMetalakeReplaced: creating a followed metalake, or dropping and
// re-creating one, is a change a watch must report: no generation of a
// name may stand for two different states. A metalake that does not exist
// is 0; a re-created one must not come back to a generation a gateway
// knows of the dropped one.
func TestWatchMetalakeReplaced(t *testing.T) {
	n := startWatchNode(t)

	t.Run("created", func(t *testing.T) {
		// A new metalake is at generation 0, like a missing one (nothing
		// decided at generation 0 is reused); its first change moves it.
		known := map[string]uint64{"ghost": 0}
		must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "ghost"}})
		must(t, n, call{method: "POST", path: "/api/metalakes/ghost/users", token: tokAdmin, body: map[string]any{"name": "carol@ghost"}})
		got := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: watchBody(known, 0)}))
		if got["ghost"] == known["ghost"] {
			t.Fatalf("ghost was created and changed, yet the watch answers %v for known %v: unchanged", got, known)
		}
	})

	t.Run("dropped and re-created", func(t *testing.T) {
		must(t, n, call{method: "POST", path: ml + "/users", token: tokAlice, body: map[string]any{"name": "carol@acme"}})
		known := currentGens(n, "acme")
		if r := must(t, n, call{method: "DELETE", path: "/api/metalakes/acme", token: tokAdmin}); r.body["dropped"] != true {
			t.Fatalf("drop: %s", r.raw)
		}
		must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
		for i := uint64(0); lakeGen(n, "acme") < known["acme"]; i++ {
			must(t, n, call{method: "POST", path: ml + "/users", token: tokAlice, body: map[string]any{"name": fmt.Sprintf("u%d@acme", i)}})
		}
		// carol@acme is gone: the metalake is not the one known.
		expect(t, n, call{method: "GET", path: ml + "/users/carol@acme", token: tokAlice}, 404, 1003)
		got := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: watchBody(known, 0)}))
		if got["acme"] == known["acme"] {
			t.Fatalf("acme was dropped and re-created, yet the watch answers %v for known %v: unchanged", got, known)
		}
	})
}

// TestWatchNoChange: without a change, waitMillis 0 (or absent) answers at
// once and a short wait answers when it ends, both with the current
// generations unchanged.
func TestWatchNoChange(t *testing.T) {
	n := startWatchNode(t)
	known := currentGens(n, "acme", "other", "ghost")
	limit := metasrv.DefaultConfig().ReadWaitTimeout
	for _, tc := range []struct {
		name string
		body any
		min  time.Duration // the answer may not come sooner
	}{
		{"waitMillis 0", watchBody(known, 0), 0},
		{"waitMillis absent", map[string]any{"known": known}, 0},
		{"waitMillis 150", watchBody(known, 150), 150 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			got := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: tc.body}))
			el := time.Since(t0)
			if !maps.Equal(got, known) {
				t.Fatalf("got %v, want %v", got, known)
			}
			if el < tc.min || el >= limit {
				t.Fatalf("answered after %s, want %s to %s", el, tc.min, limit)
			}
		})
	}
}

// TestWatchWaitCapped: a wait beyond Config.ReadWaitTimeout, up to the
// largest waitMillis, is held for ReadWaitTimeout, then answered unchanged.
func TestWatchWaitCapped(t *testing.T) {
	const limit = 300 * time.Millisecond
	configHook = func(c *metasrv.Config) { c.ReadWaitTimeout = limit }
	t.Cleanup(func() { configHook = nil })
	n := startWatchNode(t)
	known := currentGens(n, "acme", "ghost")
	for _, wait := range []int64{10_000, math.MaxInt64 / int64(time.Millisecond), math.MaxInt64/int64(time.Millisecond) + 1, math.MaxInt64} {
		t.Run(fmt.Sprint(wait), func(t *testing.T) {
			t0 := time.Now()
			got := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: watchBody(known, wait)}))
			if el := time.Since(t0); el < limit {
				t.Fatalf("waitMillis %d answered after %s, before the cap %s", wait, el, limit)
			}
			if !maps.Equal(got, known) {
				t.Fatalf("got %v, want %v", got, known)
			}
		})
	}
}

// TestWatchRejected: callers other than a query_service delegate of every
// metalake named, forwarded requests and malformed bodies are refused,
// audited, and change nothing.
func TestWatchRejected(t *testing.T) {
	n := startWatchNode(t)
	names := func(k int) map[string]uint64 {
		m := make(map[string]uint64, k)
		for i := range k {
			m[fmt.Sprintf("m%d", i)] = 0
		}
		return m
	}
	type audit struct{ metalake, actor, detail string }
	for _, tc := range []struct {
		name         string
		token        string
		body         any
		header       map[string]string
		status, code int
		audit        *audit // nil: not checked
	}{
		{name: "user", token: tokBob, body: watchBody(map[string]uint64{"acme": 0}, 0), status: 403, code: 1008,
			audit: &audit{"", "bob@acme", "query_service"}},
		{name: "admin", token: tokAdmin, body: watchBody(map[string]uint64{"acme": 0}, 0), status: 403, code: 1008,
			audit: &audit{"", "root", "query_service"}},
		{name: "metalake outside delegate_tenants", token: tokGWOther, body: watchBody(map[string]uint64{"acme": 0}, 0), status: 403, code: 1008,
			audit: &audit{"acme", "gw-other", "not a delegate"}},
		{name: "one of two outside delegate_tenants", token: tokGW, body: watchBody(map[string]uint64{"acme": 0, "other": 0}, 0), status: 403, code: 1008,
			audit: &audit{"other", "gw", "not a delegate"}},
		{name: "absent metalake outside delegate_tenants", token: tokGW, body: watchBody(map[string]uint64{"ghost": 0}, 0), status: 403, code: 1008,
			audit: &audit{"ghost", "gw", "not a delegate"}},
		{name: "forged caller header", token: tokWatch, body: watchBody(map[string]uint64{"acme": 0}, 0),
			header: map[string]string{api.CallerHeader: "alice@acme"}, status: 403, code: 1008,
			audit: &audit{"", "gw-watch", "not forwarded"}},
		{name: "forged forwarded header", token: tokWatch, body: watchBody(map[string]uint64{"acme": 0}, 0),
			header: map[string]string{raftnode.ForwardedHeader: "1"}, status: 403, code: 1008,
			audit: &audit{"", "gw-watch", "not forwarded"}},
		{name: "delegated tenant with two metalakes", token: tokWatch, body: watchBody(map[string]uint64{"acme": 0, "other": 0}, 0),
			header: map[string]string{api.DelegateTenantHeader: "acme"}, status: 403, code: 1008,
			audit: &audit{"acme", "gw-watch", "delegated tenant"}},
		{name: "delegated tenant not the one named", token: tokWatch, body: watchBody(map[string]uint64{"acme": 0}, 0),
			header: map[string]string{api.DelegateTenantHeader: "other"}, status: 403, code: 1008,
			audit: &audit{"acme", "gw-watch", "delegated tenant"}},
		{name: "no token", body: watchBody(map[string]uint64{"acme": 0}, 0), status: 401, code: 1011},
		{name: "unknown token", token: "nope", body: watchBody(map[string]uint64{"acme": 0}, 0), status: 401, code: 1011},
		{name: "empty known", token: tokWatch, body: `{"known":{}}`, status: 400, code: 1001,
			audit: &audit{"", "gw-watch", "known must name"}},
		{name: "null known", token: tokWatch, body: `{"known":null,"waitMillis":5}`, status: 400, code: 1001},
		{name: "no known", token: tokWatch, body: `{}`, status: 400, code: 1001},
		{name: "too many names", token: tokWatch, body: watchBody(names(metasrv.MaxWatchTenants+1), 0), status: 400, code: 1001,
			audit: &audit{"", "gw-watch", "known must name"}},
		// At the bound the body is valid: refused for the delegation.
		{name: "MaxWatchTenants names", token: tokWatch, body: watchBody(names(metasrv.MaxWatchTenants), 0), status: 403, code: 1008},
		{name: "invalid name", token: tokWatch, body: watchBody(map[string]uint64{"acme": 0, "bad\x01name": 0}, 0), status: 400, code: 1001,
			audit: &audit{"", "gw-watch", "known:"}},
		{name: "name too long", token: tokWatch, body: watchBody(map[string]uint64{strings.Repeat("a", 129): 0}, 0), status: 400, code: 1001},
		{name: "empty name", token: tokWatch, body: watchBody(map[string]uint64{"": 0}, 0), status: 400, code: 1001},
		{name: "negative waitMillis", token: tokWatch, body: watchBody(map[string]uint64{"acme": 0}, -1), status: 400, code: 1001,
			audit: &audit{"", "gw-watch", "waitMillis"}},
		{name: "unknown field", token: tokWatch, body: `{"known":{"acme":0},"waitMillis":0,"minGeneration":3}`, status: 400, code: 1001,
			audit: &audit{"", "gw-watch", "request body"}},
		{name: "negative generation", token: tokWatch, body: `{"known":{"acme":-1}}`, status: 400, code: 1001},
		{name: "string waitMillis", token: tokWatch, body: `{"known":{"acme":0},"waitMillis":"5"}`, status: 400, code: 1001},
		{name: "not JSON", token: tokWatch, body: `{"known":`, status: 400, code: 1001},
		{name: "empty body", token: tokWatch, body: ``, status: 400, code: 1001},
		{name: "trailing data", token: tokWatch, body: `{"known":{"acme":0}}{}`, status: 400, code: 1001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := n.Node().AppliedIndex()
			before := currentGens(n, "acme", "other", "ghost")
			expect(t, n, call{method: "POST", path: watchPath, token: tc.token, body: tc.body, header: tc.header}, tc.status, tc.code)
			if tc.audit != nil && !watchAudited(n, tc.audit.metalake, tc.audit.actor, tc.audit.detail) {
				t.Fatalf("not audited under %q as %s with %q", tc.audit.metalake, tc.audit.actor, tc.audit.detail)
			}
			if got := n.Node().AppliedIndex(); got != idx {
				t.Fatalf("applied index moved from %d to %d", idx, got)
			}
			if after := currentGens(n, "acme", "other", "ghost"); !maps.Equal(after, before) {
				t.Fatalf("generations moved from %v to %v", before, after)
			}
		})
	}
	// Other methods on the route are not served.
	if r := do(t, n, call{method: "GET", path: watchPath, token: tokWatch}); r.status == http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", watchPath, r.status, r.raw)
	}
}

// TestWatchClient: WatchGenerations answers what the endpoint answers, at
// once for a stale known generation, held until a write otherwise, with
// the client's typed errors.
func TestWatchClient(t *testing.T) {
	n := startWatchNode(t)
	ctx := context.Background()
	c, err := client.New(client.Config{Addrs: []string{n.addr}, Scheme: "http", Token: tokWatch})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()

	known := currentGens(n, "acme", "other", "ghost")
	raw := watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: watchBody(known, 0)}))
	got, err := c.WatchGenerations(ctx, known, 0)
	if err != nil || !maps.Equal(got, raw) || !maps.Equal(got, known) {
		t.Fatalf("client %v (%v), endpoint %v, known %v", got, err, raw, known)
	}
	stale := map[string]uint64{"acme": 0, "other": known["other"], "ghost": 3}
	raw = watchGens(t, do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: watchBody(stale, 0)}))
	got, err = c.WatchGenerations(ctx, stale, time.Minute)
	if err != nil || !maps.Equal(got, raw) || !maps.Equal(got, known) {
		t.Fatalf("stale: client %v (%v), endpoint %v, want %v", got, err, raw, known)
	}

	// Held until a write.
	type result struct {
		gens map[string]uint64
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		g, err := c.WatchGenerations(ctx, known, time.Minute)
		ch <- result{g, err}
	}()
	wr := must(t, n, call{method: "POST", path: ml + "/users", token: tokAlice, body: map[string]any{"name": "erin@acme"}})
	res := <-ch
	want := map[string]uint64{"acme": wr.gen(), "other": known["other"], "ghost": 0}
	if res.err != nil || !maps.Equal(res.gens, want) {
		t.Fatalf("after a write: %v (%v), want %v", res.gens, res.err, want)
	}

	// Typed errors.
	if _, err := c.WatchGenerations(ctx, map[string]uint64{"nosuch": 0}, 0); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("outside delegate_tenants: %v", err)
	}
	if _, err := c.WatchGenerations(ctx, map[string]uint64{}, 0); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("empty known: %v", err)
	}
	if _, err := c.WatchGenerations(ctx, map[string]uint64{"acme": 0}, -time.Second); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("negative wait: %v", err)
	}
}

// TestWatchNeedsContact: a node out of contact with the leader refuses a
// watch (503, so the gateway fails over), also one it was holding when it
// lost the leader: the answer would vouch for a state that may be stale.
func TestWatchNeedsContact(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	leader, followers := startContactCluster(ctx, t, 2*time.Second)
	f := followers[0]
	if err := f.Node().WaitApplied(ctx, leader.Node().AppliedIndex()); err != nil {
		t.Fatal(err)
	}
	known := currentGens(f, "acme")
	// In contact: a follower answers from its own state.
	if got := watchGens(t, do(t, f, call{method: "POST", path: watchPath, token: tokGW, body: watchBody(known, 0)})); !maps.Equal(got, known) {
		t.Fatalf("follower: %v, want %v", got, known)
	}

	sent, ch := startWatch(f, tokGW, watchBody(known, 60_000))
	<-sent
	leader.stop()
	followers[1].stop()
	// Held until ReadWaitTimeout (nothing changes), then refused: the
	// node has not heard from a leader for longer than StaleReadBound.
	if w := <-ch; w.r.status != http.StatusServiceUnavailable || w.r.code() != 1002 || w.r.header.Get("Retry-After") == "" {
		t.Fatalf("held watch after losing the leader: HTTP %d %s", w.r.status, w.r.raw)
	}
	// And a new watch is refused at once.
	expect(t, f, call{method: "POST", path: watchPath, token: tokGW, body: watchBody(known, 0)}, 503, 1002)
}

// FuzzWatchBody: whatever the body, a watch is answered 200 (with exactly
// the metalakes asked for), 400 or 403 — never a server error — and
// changes nothing.
func FuzzWatchBody(f *testing.F) {
	for _, seed := range []string{
		`{"known":{"acme":1}}`,
		`{"known":{"acme":0,"other":3,"ghost":0},"waitMillis":1}`,
		`{"known":{"acme":1},"waitMillis":9223372036854775807}`,
		`{"known":{"acme":-1}}`,
		`{"known":{"bad name":1}}`,
		`{"known":{}}`,
		`{"known":null}`,
		`{"known":{"acme":1},"extra":true}`,
		`{"known":{"acme":1}} {}`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	configHook = func(c *metasrv.Config) { c.ReadWaitTimeout = time.Millisecond } // no long holds
	n := startWatchNode(f)
	configHook = nil
	applied := n.Node().AppliedIndex()
	f.Fuzz(func(t *testing.T, body []byte) {
		r := do(t, n, call{method: "POST", path: watchPath, token: tokWatch, body: body})
		switch r.status {
		case http.StatusOK:
			var req metasrv.WatchRequest
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatalf("answered 200 to a body that does not decode: %q", body)
			}
			got := watchGens(t, r)
			if len(got) != len(req.Known) {
				t.Fatalf("asked %v, answered %v", req.Known, got)
			}
			for name := range req.Known {
				if _, ok := got[name]; !ok {
					t.Fatalf("asked %v, answered %v", req.Known, got)
				}
			}
		case http.StatusBadRequest, http.StatusForbidden:
		default:
			t.Fatalf("body %q: HTTP %d %s", body, r.status, r.raw)
		}
		if now := n.Node().AppliedIndex(); now != applied {
			t.Fatalf("body %q changed the state (applied index %d → %d)", body, applied, now)
		}
	})
}
