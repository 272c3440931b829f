package metasrv_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv"
)

// domainConcurrencyRequests is how many requests each of
// TestDomainConcurrency's 8 clients sends. A count, not a duration, so the
// workload is the same on a fast and on a loaded machine; 400 each gives
// 3,200 interleaved commands of every kind in a few seconds. Raise
// it for a soak.
const domainConcurrencyRequests = 400

// logEntry is one metasrv entry of the replicated log: its Raft index, its
// bytes as the FSM receives them, and its proposals (EncodeProposal bytes;
// one, or a batch entry's several).
type logEntry struct {
	index     uint64
	body      []byte
	proposals [][]byte
}

// readLog reads the Raft log of a stopped node whose data dir is dir and
// returns its metasrv entries in log order, batch entries split into their
// proposals. It relies on formats that are on disk and pinned: raftnode's
// one-byte envelope (1 = a StateMachine command; raftnode's
// TestFormatPinned) and metasrv's batch entry ("LGB" 1, uvarint count,
// uvarint-length-prefixed proposals; batch.go). The FSM applies a batch's
// proposals "each exactly as if it were its own entry" at the entry's
// index, so applying them one by one to a fresh FSM goes through exactly
// the states the replicas went through, and lets a caller check the state
// after every proposal. The log must not have been compacted (see
// noCompaction): the first index must be 1.
func readLog(t *testing.T, dir string) []logEntry {
	t.Helper()
	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft", "raft.db"),
		BoltOptions: &bbolt.Options{ReadOnly: true, Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	first, err := store.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err := store.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	if first != 1 {
		t.Fatalf("raft log starts at %d: compacted, cannot replay from the start", first)
	}
	var out []logEntry
	for i := first; i <= last; i++ {
		var l raft.Log
		if err := store.GetLog(i, &l); err != nil {
			t.Fatalf("log %d: %v", i, err)
		}
		if l.Type != raft.LogCommand || len(l.Data) == 0 || l.Data[0] != 1 {
			continue // configuration entries, membership records
		}
		e := logEntry{index: i, body: l.Data[1:]}
		if len(e.body) < 4 || string(e.body[:3]) != "LGB" {
			e.proposals = [][]byte{e.body}
			out = append(out, e)
			continue
		}
		if e.body[3] != 1 {
			t.Fatalf("log %d: batch version %d", i, e.body[3])
		}
		b := e.body[4:]
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 {
			t.Fatalf("log %d: bad batch count", i)
		}
		b = b[k:]
		for range n {
			l, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < l {
				t.Fatalf("log %d: truncated batch", i)
			}
			e.proposals = append(e.proposals, b[k:k+int(l)])
			b = b[k+int(l):]
		}
		if len(b) != 0 {
			t.Fatalf("log %d: trailing batch data", i)
		}
		out = append(out, e)
	}
	return out
}

// noCompaction is a configHook part: Raft's default timeouts (the
// harness's 200 ms flap on a loaded machine, see TestInternalReadsNeedContact)
// and no log compaction during the test, so that the whole log can be
// replayed from index 1.
func noCompaction(c *metasrv.Config) {
	c.Raft.HeartbeatTimeout, c.Raft.ElectionTimeout, c.Raft.LeaderLeaseTimeout = time.Second, time.Second, 500*time.Millisecond
	c.Raft.SnapshotThreshold = 1 << 40
	c.Raft.SnapshotInterval = time.Hour
}

// auditLines returns the applied events (index ≠ 0) of an audit file, as
// written.
func auditLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e metasrv.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if e.Index != 0 {
			out = append(out, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// domainPrincipals is the harness's principal map plus users of acme.
func domainPrincipals(t *testing.T, users ...string) *authz.PrincipalMap {
	t.Helper()
	specs := []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: tokenHashes(tokAdmin)},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: tokenHashes(tokAlice)},
		peerSpec("n1"), peerSpec("n2"), peerSpec("n3"),
	}
	for _, u := range users {
		specs = append(specs, authz.PrincipalSpec{ID: u + "@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: tokenHashes("tok-" + u)})
	}
	return principalMap(t, specs)
}

// TestDomainConcurrency is the domains' concurrency acceptance: 8 clients (the
// metalake owner, three stewards with MANAGE_DOMAIN + CREATE_TAG, four
// table owners) send random publish / unpublish / move / detach /
// create(-subdomain) / drop / backing-tag commands, and tag and untag their
// tables and schemas with backing tags, to random nodes of a 3-node cluster
// (followers forward), domainConcurrencyRequests each. Rejections (4xx) are
// expected; 5xx other than 503 are failures.
//
// Checking "after each applied command": the whole Raft log of one node is
// read back (readLog) and re-applied, proposal by proposal, to a
// fresh metasrv.FSM — the same deterministic Apply every replica ran, at
// the same indexes — and CheckDomainInvariants (C1–C6, parent/subdomain
// links, status consistency, backing tags) runs on the metalake after every
// proposal, and after every command inside a multi-command proposal. The
// replay is tied to what the cluster did: its final state is byte-identical
// to the three replicas' (themselves identical), and the audit events it
// produces are byte-identical to the node's audit file (every applied
// index, operation, target, outcome and detail), i.e. the event log is
// exactly the history that was checked.
func TestDomainConcurrency(t *testing.T) {
	configHook = noCompaction
	t.Cleanup(func() { configHook = nil })
	stewards := []string{"steward", "sam", "sue"}
	owners := []string{"tom", "ann", "ray", "kim"}
	pm := domainPrincipals(t, append(append([]string{}, stewards...), owners...)...)
	nodes, leader := startCluster(t, pm, 3)

	// Setup: catalog cat, schema sK and tables sK.t0..t3 per table owner,
	// tags pool0..pool5 (alice's, APPLY_TAG for the owners), the stewards'
	// role.
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	must(t, leader, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
	for _, u := range append(append([]string{}, stewards...), owners...) {
		must(t, leader, alice("POST", "/users", map[string]any{"name": u + "@acme"}))
	}
	must(t, leader, alice("POST", "/roles", `{"name":"steward","securableObjects":[
		{"fullName":"acme","type":"metalake","privileges":[{"name":"MANAGE_DOMAIN","condition":"ALLOW"},{"name":"CREATE_TAG","condition":"ALLOW"}]}]}`))
	for _, u := range stewards {
		must(t, leader, alice("PUT", "/permissions/users/"+u+"@acme/grant", `{"roleNames":["steward"]}`))
	}
	must(t, leader, alice("POST", "/catalogs", map[string]any{"name": "cat"}))
	const pool = 6
	tagger := []string{`{"fullName":"cat","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]}`}
	for i := range pool {
		must(t, leader, alice("POST", "/tags", map[string]any{"name": fmt.Sprintf("pool%d", i)}))
		tagger = append(tagger, fmt.Sprintf(`{"fullName":"pool%d","type":"tag","privileges":[{"name":"APPLY_TAG","condition":"ALLOW"}]}`, i))
	}
	must(t, leader, alice("POST", "/roles", `{"name":"tagger","securableObjects":[`+strings.Join(tagger, ",")+`]}`))
	col := []any{map[string]any{"name": "id", "type": "int"}}
	for k, u := range owners {
		s := fmt.Sprintf("s%d", k)
		must(t, leader, alice("POST", "/catalogs/cat/schemas", map[string]any{"name": s}))
		must(t, leader, alice("PUT", "/owners/schema/cat."+s, `{"name":"`+u+`@acme","type":"USER"}`))
		for j := range 4 {
			tb := fmt.Sprintf("t%d", j)
			must(t, leader, alice("POST", "/catalogs/cat/schemas/"+s+"/tables", map[string]any{"name": tb, "columns": col}))
			must(t, leader, alice("PUT", "/owners/table/cat."+s+"."+tb, `{"name":"`+u+`@acme","type":"USER"}`))
		}
		must(t, leader, alice("PUT", "/permissions/users/"+u+"@acme/grant", `{"roleNames":["tagger"]}`))
	}

	// The clients.
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	domains := []string{"D0", "D1", "D2", "D3", "D4", "D5", "D6", "D7"}
	type client struct{ user, tok string }
	var clients []client
	for _, u := range append([]string{"alice"}, stewards...) {
		clients = append(clients, client{u, "tok-" + u})
	}
	for _, u := range owners {
		clients = append(clients, client{u, "tok-" + u})
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		failures []string
		tagSeq   atomic.Int64
	)
	send := func(n *node, c call) {
		var rd io.Reader
		if c.body != nil {
			b, _ := json.Marshal(c.body)
			if s, ok := c.body.(string); ok {
				b = []byte(s)
			}
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(c.method, "http://"+n.addr+c.path, rd)
		if err != nil {
			panic(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		hr, err := hc.Do(req)
		var status int
		var raw []byte
		if err == nil {
			raw, _ = io.ReadAll(hr.Body)
			hr.Body.Close()
			status = hr.StatusCode
		}
		mu.Lock()
		defer mu.Unlock()
		statuses[status]++
		if err != nil || (status >= 500 && status != http.StatusServiceUnavailable) {
			failures = append(failures, fmt.Sprintf("%s: %s %s: HTTP %d %v %s", n.id, c.method, c.path, status, err, raw))
		}
	}
	domainCmd := func(rng *rand.Rand, cl client) call {
		d := domains[rng.IntN(len(domains))]
		p := domains[rng.IntN(len(domains))]
		newTag := func() string {
			if cl.user == "alice" && rng.IntN(2) == 0 {
				return fmt.Sprintf(`{"name":"pool%d"}`, rng.IntN(pool)) // an existing tag alice owns
			}
			return fmt.Sprintf(`{"name":"bt%d","create":true}`, tagSeq.Add(1))
		}
		c := call{token: cl.tok}
		switch r := rng.IntN(100); {
		case r < 12: // create top-level
			c.method, c.path, c.body = "POST", "/domains", `{"name":"`+d+`","backingTag":`+newTag()+`}`
		case r < 27: // create a subdomain
			c.method, c.path, c.body = "POST", "/domains", `{"name":"`+d+`","backingTag":`+newTag()+`,"parent":"`+p+`"}`
		case r < 47:
			c.method, c.path, c.body = "PATCH", "/domains/"+d, `{"status":"published"}`
		case r < 60:
			c.method, c.path, c.body = "PATCH", "/domains/"+d, `{"status":"draft"}`
		case r < 77: // attach / move
			c.method, c.path, c.body = "PUT", "/domains/"+d+"/parent", `{"parent":"`+p+`"}`
		case r < 88:
			c.method, c.path = "DELETE", "/domains/"+d+"/parent"
		case r < 95:
			c.method, c.path = "DELETE", "/domains/"+d
		default: // replace or remove the backing tag
			bt := "null"
			if cl.user == "alice" {
				bt = fmt.Sprintf(`{"name":"pool%d"}`, rng.IntN(pool))
			}
			c.method, c.path, c.body = "PUT", "/domains/"+d+"/backingTag", `{"backingTag":`+bt+`}`
		}
		c.path = ml + c.path
		return c
	}
	ownerCmd := func(rng *rand.Rand, k int, cl client) call {
		s := fmt.Sprintf("cat.s%d", k)
		tag := fmt.Sprintf("pool%d", rng.IntN(pool))
		op := "tagsToAdd"
		if rng.IntN(3) == 0 {
			op = "tagsToRemove"
		}
		switch r := rng.IntN(100); {
		case r < 50:
			return as(cl.tok, "POST", fmt.Sprintf("/objects/table/%s.t%d/tags", s, rng.IntN(6)), `{"`+op+`":["`+tag+`"]}`)
		case r < 65:
			return as(cl.tok, "POST", "/objects/schema/"+s+"/tags", `{"`+op+`":["`+tag+`"]}`)
		case r < 75: // tables t4, t5 come and go under the (maybe tagged) schema
			return as(cl.tok, "POST", fmt.Sprintf("/catalogs/cat/schemas/s%d/tables", k), map[string]any{"name": fmt.Sprintf("t%d", 4+rng.IntN(2)), "columns": col})
		case r < 82:
			return as(cl.tok, "DELETE", fmt.Sprintf("/catalogs/cat/schemas/s%d/tables/t%d", k, 4+rng.IntN(2)), nil)
		default: // domain commands without domain privileges: rejected
			return domainCmd(rng, cl)
		}
	}
	var wg sync.WaitGroup
	var sent atomic.Int64
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for range domainConcurrencyRequests {
				var c call
				if i < 4 {
					c = domainCmd(rng, cl)
				} else {
					c = ownerCmd(rng, i-4, cl)
				}
				send(nodes[rng.IntN(len(nodes))], c)
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d requests; statuses %v", sent.Load(), statuses)
	for i, f := range failures {
		if i == 20 {
			t.Errorf("… %d more", len(failures)-20)
			break
		}
		t.Error(f)
	}

	// Every replica ends with byte-identical state.
	leader = waitLeader(t, nodes...)
	idx := leader.Node().AppliedIndex()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var snaps [][]byte
	for _, n := range nodes {
		if err := n.Node().WaitApplied(ctx, idx); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, persist(t, n.FSM()))
	}
	if !bytes.Equal(snaps[0], snaps[1]) || !bytes.Equal(snaps[0], snaps[2]) {
		t.Fatal("replica snapshots differ")
	}
	l, _ := leader.FSM().Lake("acme")
	if err := l.Snapshot.CheckDomainInvariants(); err != nil {
		t.Fatalf("final state: %v", err)
	}
	for _, n := range nodes {
		n.stop()
	}

	// Replay n2's log, checking the invariants after every proposal and
	// every command; a second FSM applies the entries whole (batches
	// included), writing its audit file, as the replicas did.
	auditPath := filepath.Join(t.TempDir(), "replay.jsonl")
	audit, err := metasrv.OpenAuditLog(auditPath, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	fsm, whole := metasrv.NewFSM(nil), metasrv.NewFSM(audit)
	applied, rejected, checks, props, batches := map[string]int{}, 0, 0, 0, 0
	for _, e := range readLog(t, nodes[1].dir) {
		whole.Apply(e.index, e.body)
		if len(e.proposals) > 1 {
			batches++
		}
		for _, body := range e.proposals {
			props++
			p, err := metasrv.DecodeProposal(body)
			if err != nil {
				t.Fatalf("index %d: %v", e.index, err)
			}
			var before *catalog.Snapshot
			if l, ok := fsm.Lake(p.Metalake); ok {
				before = l.Snapshot
			}
			if _, ok := fsm.Apply(e.index, body).(*metasrv.Result); !ok {
				rejected++
				continue
			}
			var cmds []catalog.Command
			for _, raw := range p.Commands {
				c, err := catalog.DecodeCommand(raw)
				if err != nil {
					t.Fatalf("index %d: %v", e.index, err)
				}
				cmds = append(cmds, c)
				applied[c.Op()]++
				if cd, ok := c.(catalog.CreateDomain); ok && cd.Parent != "" {
					applied["CreateSubdomain"]++
				}
			}
			if len(cmds) > 1 && before != nil { // the states inside an all-or-nothing proposal
				s := before
				for _, c := range cmds[:len(cmds)-1] {
					if s, _, err = catalog.Apply(s, c, catalog.Meta{Actor: p.Actor, Time: p.Time, Index: e.index}); err != nil {
						t.Fatalf("index %d: replaying %s: %v", e.index, c.Op(), err)
					}
					if err := s.CheckDomainInvariants(); err != nil {
						t.Fatalf("index %d, inside the proposal after %s: %v", e.index, c.Op(), err)
					}
					checks++
				}
			}
			if l, ok := fsm.Lake(p.Metalake); ok {
				if err := l.Snapshot.CheckDomainInvariants(); err != nil {
					t.Fatalf("index %d, after %d command(s) %v by %s: %v", e.index, len(cmds), p.Commands, p.Actor, err)
				}
				checks++
			}
		}
	}
	if err := audit.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d proposals (%d batch entries): %d applied, %d rejected, %d invariant checks; applied %v",
		props, batches, props-rejected, rejected, checks, applied)
	if !bytes.Equal(persist(t, fsm), snaps[0]) || !bytes.Equal(persist(t, whole), snaps[0]) {
		t.Fatal("the replayed state differs from the replicas'")
	}
	want, got := auditLines(t, filepath.Join(nodes[1].dir, "audit.jsonl")), auditLines(t, auditPath)
	if len(want) != len(got) {
		t.Fatalf("replay produced %d events, the node's audit log has %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("event %d:\nnode   %s\nreplay %s", i, want[i], got[i])
		}
	}
	// The workload exercised every command kind, and rejected some.
	var ops []string
	for _, op := range []string{"CreateDomain", "PublishDomain", "UnpublishDomain", "SetDomainParent", "DetachDomain", "DropDomain", "AssociateTags", "CreateSubdomain"} {
		if applied[op] == 0 {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	if len(ops) > 0 || rejected == 0 {
		t.Fatalf("workload too thin: nothing applied for %v; %d rejected", ops, rejected)
	}
}
