package raftnode_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"lakegate/metasrv/raftnode"
)

// TestCluster runs the replication story end to end over loopback TCP:
// bootstrap + two joins (one through a follower), replication, forwarding,
// leader loss, durability of acknowledged writes, and a restart that
// catches up from its own disk. Default timeouts throughout.
func TestCluster(t *testing.T) {
	t.Parallel()
	n1 := start(t, tcpConfig(t, "n1", true))
	if l := waitLeader(t, 10*time.Second, n1); l != n1 {
		t.Fatalf("leader %s", l.ID())
	}
	// The leader forwarding to itself is told so by a typed error, so a
	// handler racing an election serves the request instead of failing it.
	if _, err := n1.fwd.Forward(context.Background(), http.MethodPost, "/cluster/join", nil, nil); !errors.Is(err, raftnode.ErrIsLeader) {
		t.Fatalf("Forward on the leader: %v, want ErrIsLeader", err)
	}
	n2 := start(t, tcpConfig(t, "n2", false))
	n3 := start(t, tcpConfig(t, "n3", false))

	join(t, n1, n2) // to the leader
	// The follower learns the leader's HTTP address from the replicated
	// membership records; wait until it has applied them.
	waitApplied(t, n2, n1.AppliedIndex())
	join(t, n2, n3) // to a follower: forwarded to the leader

	st := n1.Status()
	if st.State != "Leader" || len(st.Servers) != 3 {
		t.Fatalf("status after joins: %+v", st)
	}
	for _, s := range st.Servers {
		if s.Suffrage != "Voter" || s.HTTPAddr == "" {
			t.Errorf("server %+v: want a voter with an HTTP address", s)
		}
	}

	nodes := []*testNode{n1, n2, n3}
	var acked []string // every write acknowledged so far
	var last uint64
	write := func(leader *testNode, key string) {
		last = mustPropose(t, leader, key+"=v-"+key)
		acked = append(acked, key)
	}
	checkAll := func(ns ...*testNode) {
		t.Helper()
		for _, n := range ns {
			waitApplied(t, n, last)
			for _, k := range acked {
				if v, ok := n.kv.get(k); !ok || v != "v-"+k {
					t.Fatalf("%s: %s = %q, %v; want v-%s", n.ID(), k, v, ok, k)
				}
			}
		}
	}

	t.Run("write via leader applied on all", func(t *testing.T) {
		write(n1, "a")
		checkAll(nodes...)
	})

	t.Run("follower forwards proposal", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hdr := http.Header{"Authorization": {testToken}}
		pr, err := n3.fwd.Propose(ctx, "/cluster/propose", hdr, []byte("b=v-b"))
		if err != nil {
			t.Fatal(err)
		}
		var res uint64
		if err := json.Unmarshal(pr.Result, &res); err != nil || res != pr.Index {
			t.Fatalf("forwarded result %s, index %d: %v", pr.Result, pr.Index, err)
		}
		acked, last = append(acked, "b"), pr.Index
		checkAll(nodes...)

		// A rejected command reaches the proposer as an error with its index.
		_, err = n3.fwd.Propose(ctx, "/cluster/propose", hdr, []byte("=nokey"))
		var rej *raftnode.RejectedError
		if !errors.As(err, &rej) || rej.Index == 0 {
			t.Fatalf("rejected command: %v", err)
		}
		_, idx, err := n1.Propose(ctx, []byte("=nokey"))
		if err == nil || err.Error() != "kv: empty key" || idx == 0 {
			t.Fatalf("local rejected command: idx %d, err %v", idx, err)
		}
	})

	t.Run("handlers", func(t *testing.T) {
		// Authorize runs first: no credential, no join.
		resp, err := http.Get("http://" + n2.httpAddr + "/cluster/status")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("status without credential: HTTP %d", resp.StatusCode)
		}
		code, body := postJSON(t, "http://"+n1.httpAddr+"/cluster/join", map[string]any{"id": "x", "bogus": 1})
		if code != http.StatusBadRequest {
			t.Errorf("join with unknown field: HTTP %d %s", code, body)
		}
		// Followers do not accept proposals directly.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _, err = n2.Propose(ctx, []byte("c=1"))
		var nl *raftnode.NotLeaderError
		if !errors.As(err, &nl) || !errors.Is(err, raftnode.ErrNotLeader) || nl.Leader.ID != "n1" || nl.Leader.HTTPAddr != n1.httpAddr {
			t.Errorf("propose on follower: %v", err)
		}
		if err := n2.Barrier(ctx); !errors.Is(err, raftnode.ErrNotLeader) {
			t.Errorf("barrier on follower: %v", err)
		}
		if err := n1.Barrier(ctx); err != nil {
			t.Errorf("barrier on leader: %v", err)
		}
		// A bounded wait for an index nobody wrote ends with the context.
		short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel2()
		if err := n2.WaitApplied(short, last+1000); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("wait for unwritten index: %v", err)
		}
	})

	t.Run("leader loss", func(t *testing.T) {
		// Concurrent writers; only acknowledged writes must survive.
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := range 10 {
					key := fmt.Sprintf("w%d-%d", w, i)
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, idx, err := n1.Propose(ctx, []byte(key+"=v-"+key))
					cancel()
					if err != nil {
						t.Errorf("propose %s: %v", key, err)
						return
					}
					mu.Lock()
					acked = append(acked, key)
					last = max(last, idx)
					mu.Unlock()
				}
			})
		}
		wg.Wait()

		lost := time.Now()
		n1.stop(t) // no leadership transfer: the others must notice and elect
		leader := waitLeader(t, 10*time.Second, n2, n3)
		write(leader, "after-failover")
		took := time.Since(lost)
		t.Logf("leader loss to first acknowledged write: %s (new leader %s)", took, leader.ID())
		if took > 5*time.Second {
			t.Errorf("leader loss to first write took %s, want ≤ 5s", took)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := leader.Barrier(ctx); err != nil {
			t.Fatal(err)
		}
		checkAll(n2, n3)
	})

	t.Run("restart catches up from own disk", func(t *testing.T) {
		leader := waitLeader(t, 10*time.Second, n2, n3)
		write(leader, "while-down")
		// Same DataDir and Raft port; Bootstrap stays set and is ignored
		// because state exists.
		r1 := start(t, n1.cfg)
		checkAll(r1)
		write(waitLeader(t, 10*time.Second, n2, n3, r1), "after-restart")
		checkAll(r1, n2, n3)
		if st := r1.Status(); len(st.Servers) != 3 || st.Leader.ID == "" {
			t.Errorf("restarted node status: %+v", st)
		}
	})
}
