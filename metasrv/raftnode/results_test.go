package raftnode_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"lakegate/metasrv/raftnode"
)

// bigResults is kv with a large result per command, so that a node which
// kept results after handing them to their proposers would show it.
type bigResults struct{ *kv }

type bigResult struct {
	index   uint64
	payload []byte // makes a retained result visible in the heap
}

func (b bigResults) Apply(index uint64, cmd []byte) any {
	b.kv.Apply(index, cmd)
	return &bigResult{index: index, payload: make([]byte, 64<<10)}
}

// TestResultsNotRetained: once Propose has returned a command's result, the
// node keeps no reference to it. hashicorp/raft's log cache holds each
// recent entry's future, and the future holds the FSM's response, so a node
// that left results there kept the last 1,024 of them alive — for metasrv,
// catalog snapshots, which made the leader's heap (and its garbage
// collector's marking) grow with the cache instead of with the catalog.
func TestResultsNotRetained(t *testing.T) {
	cfg := oneVoter(nodeConfig(t, "n1", true))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := raftnode.New(ctx, cfg, bigResults{newKV()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	for ch := n.LeaderCh(); !n.IsLeader(); ch = n.LeaderCh() {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("no leader")
		}
	}
	const proposals = 40
	results := make([]weak.Pointer[bigResult], proposals)
	for i := range results {
		results[i] = proposeWeak(ctx, t, n, fmt.Sprintf("k%d=v", i))
	}
	runtime.GC()
	alive := 0
	for _, r := range results {
		if r.Value() != nil {
			alive++
		}
	}
	if alive != 0 {
		t.Fatalf("%d of %d results still reachable after Propose returned them", alive, proposals)
	}
}

// proposeWeak proposes cmd and returns a weak pointer to its result (in a
// function of its own, so that no stack slot of the test keeps it alive).
func proposeWeak(ctx context.Context, t *testing.T, n *raftnode.Node, cmd string) weak.Pointer[bigResult] {
	t.Helper()
	res, idx, err := n.Propose(ctx, []byte(cmd))
	if err != nil {
		t.Fatalf("propose %q: %v", cmd, err)
	}
	r, ok := res.(*bigResult)
	if !ok || r.index != idx {
		t.Fatalf("propose %q: result %v, index %d", cmd, res, idx)
	}
	return weak.Make(r)
}
