package metasrv_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"
)

// TestClusterFollowerWriteAndDeterminism runs its cluster's Raft over
// loopback TCP, as a deployment does: joins (one forwarded by a follower)
// and replication take the real transport.
func TestClusterFollowerWriteAndDeterminism(t *testing.T) {
	configHook = onTCP
	t.Cleanup(func() { configHook = nil })
	n1 := startNode(t, "n1", "", "", "", true)
	waitLeader(t, n1)
	n2 := startNode(t, "n2", "", "", "", false)
	n3 := startNode(t, "n3", "", "", "", false)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := n2.Join(ctx, n1.addr); err != nil {
		t.Fatal(err)
	}
	if err := n3.Join(ctx, n2.addr); err != nil { // via a follower: forwarded
		t.Fatal(err)
	}
	nodes := []*node{n1, n2, n3}
	leader := waitLeader(t, nodes...)
	var follower *node
	for _, n := range nodes {
		if n != leader {
			follower = n
			break
		}
	}
	must(t, follower, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
	must(t, follower, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}})
	must(t, follower, call{method: "POST", path: ml + "/tags", token: tokAlice, body: map[string]any{"name": "pii"}})
	r := must(t, follower, call{method: "POST", path: ml + "/objects/catalog/lake/tags", token: tokAlice, body: map[string]any{"tagsToAdd": []string{"pii"}}})
	gen := r.gen()
	if gen != 3 {
		t.Fatalf("generation after 3 writes: %d", gen)
	}
	expect(t, follower, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}}, 409, 1004)
	// Readable everywhere with minGeneration (read-your-writes) and, on any
	// node, linearizably.
	for _, n := range nodes {
		r := must(t, n, call{method: "GET", path: ml + "/objects/catalog/lake/tags?minGeneration=" + strconv.FormatUint(gen, 10), token: tokAlice})
		if got := names(r); len(got) != 1 || got[0] != "pii" || r.gen() < gen {
			t.Fatalf("%s: %s (generation %d)", n.id, r.raw, r.gen())
		}
		must(t, n, call{method: "GET", path: ml + "/catalogs/lake?consistent=true", token: tokAlice})
	}
	// Every replica holds byte-identical state at the same index.
	idx := leader.Node().AppliedIndex()
	var snaps [][]byte
	for _, n := range nodes {
		if err := n.Node().WaitApplied(ctx, idx); err != nil {
			t.Fatal(err)
		}
		s, err := n.FSM().Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.Persist(&buf); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, buf.Bytes())
	}
	if !bytes.Equal(snaps[0], snaps[1]) || !bytes.Equal(snaps[0], snaps[2]) {
		t.Fatal("replica snapshots differ")
	}
	// The rejected write was audited on every node with the same index.
	for _, n := range nodes {
		evs := n.Audit().Events("acme", 0, 0, 1)
		if len(evs) != 1 || evs[0].Outcome != "failure" || evs[0].Index == 0 {
			t.Fatalf("%s: newest event %+v", n.id, evs)
		}
	}
}

func TestRestartKeepsState(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	must(t, n, a("POST", "/catalogs", map[string]any{"name": "lake"}))
	must(t, n, a("POST", "/catalogs/lake/schemas", map[string]any{"name": "sales"}))
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	must(t, n, a("POST", "/roles", `{"name":"reader","securableObjects":[{"fullName":"lake","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]}]}`))
	if err := n.Node().Snapshot(); err != nil { // part from the snapshot …
		t.Fatal(err)
	}
	must(t, n, a("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["reader"]}`)) // … part from the log
	must(t, n, a("POST", "/tags", map[string]any{"name": "dept", "allowedValues": []string{"hr"}}))
	c := a("POST", "/objects/schema/lake.sales/tags", `{"tagsToAdd":[{"name":"dept","value":"hr"}]}`)
	c.header = map[string]string{"Content-Type": "application/vnd.gravitino.v2+json"}
	must(t, n, c)
	before := must(t, n, a("GET", "/catalogs/lake", nil)).gen()
	dir, raft, addr := n.dir, n.raft, n.addr
	n.stop()

	n = startNode(t, "n1", dir, raft, addr, true)
	waitLeader(t, n)
	r := must(t, n, a("GET", "/catalogs/lake?minGeneration="+strconv.FormatUint(before, 10), nil))
	if r.gen() != before {
		t.Fatalf("generation %d after restart, want %d", r.gen(), before)
	}
	must(t, n, a("GET", "/catalogs/lake/schemas/sales", nil))
	must(t, n, call{method: "GET", path: ml + "/catalogs/lake", token: tokBob}) // bob's grant survived
	r = must(t, n, a("GET", "/objects/schema/lake.sales/tags?details=true", nil))
	if tags := r.body["tags"].([]any); len(tags) != 1 || tags[0].(map[string]any)["assignmentValues"].([]any)[0] != "hr" {
		t.Fatalf("tags after restart: %s", r.raw)
	}
	// The audit log was not duplicated by the log replay.
	seen := map[uint64]bool{}
	for _, e := range n.Audit().Events("", 0, 0, 1000) {
		if e.Index != 0 && seen[e.Index] && e.Operation != "EffectiveTagsChanged" {
			t.Fatalf("event at index %d recorded twice", e.Index)
		}
		seen[e.Index] = true
	}
}
