package raftnode_test

import (
	"fmt"
	"testing"
	"time"

	"lakegate/metasrv/raftnode"
)

// TestSnapshotRestore compacts the log behind a snapshot, so a joining node
// can only catch up by installing the snapshot over the network, then
// restarts both nodes, which restore from their own snapshots plus log.
//
// It runs over each kind of log store. raft-wal truncates the head of its
// log lazily (a compacted entry stays readable until its whole segment
// goes), so there the joining node may catch up from the log instead.
func TestSnapshotRestore(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{raftnode.LogStoreBolt, raftnode.LogStoreWAL} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			testSnapshotRestore(t, kind)
		})
	}
}

func testSnapshotRestore(t *testing.T, kind string) {
	cfg1 := fewVoters(nodeConfig(t, "s1", true))
	cfg1.TrailingLogs = 1 // compact (almost) everything a snapshot covers
	cfg1.LogStore = kind
	n1 := start(t, cfg1)
	waitLeader(t, 10*time.Second, n1)

	for i := range 20 {
		mustPropose(t, n1, fmt.Sprintf("k%d=v%d", i, i))
	}
	if err := n1.Snapshot(); err != nil {
		t.Fatal(err)
	}

	cfg2 := fewVoters(nodeConfig(t, "s2", false))
	cfg2.LogStore = kind
	n2 := start(t, cfg2)
	join(t, n1, n2)
	last := mustPropose(t, n1, "after-snapshot=x")
	waitApplied(t, n2, last)
	if kind == raftnode.LogStoreBolt && n2.kv.restores.Load() == 0 {
		t.Fatal("joining node caught up without installing the snapshot")
	}
	if got := n2.kv.len(); got != 21 {
		t.Fatalf("s2 has %d entries after snapshot install, want 21", got)
	}
	if p, ok := n2.Members()["s1"]; !ok || p.HTTPAddr != n1.httpAddr {
		t.Fatalf("membership records not carried by the snapshot: %+v", n2.Members())
	}

	// Each restarts from its own snapshot (s2's may have come from s1).
	if err := n2.Snapshot(); err != nil {
		t.Fatal(err)
	}
	n1.stop(t)
	n2.stop(t)
	r1, r2 := start(t, n1.cfg), start(t, n2.cfg)
	if r1.kv.restores.Load() == 0 || r2.kv.restores.Load() == 0 {
		t.Fatal("restart did not restore from the node's own snapshot")
	}
	leader := waitLeader(t, 10*time.Second, r1, r2)
	last = mustPropose(t, leader, "after-restart=y")
	for _, n := range []*testNode{r1, r2} {
		waitApplied(t, n, last)
		if got := n.kv.len(); got != 22 {
			t.Errorf("%s has %d entries after restart, want 22", n.ID(), got)
		}
		for i := range 20 {
			if v, ok := n.kv.get(fmt.Sprintf("k%d", i)); !ok || v != fmt.Sprintf("v%d", i) {
				t.Errorf("%s: k%d = %q, %v", n.ID(), i, v, ok)
			}
		}
	}
}
