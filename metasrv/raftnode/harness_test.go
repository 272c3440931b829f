package raftnode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"lakegate/metasrv/raftnode"
)

// testNode is an in-process node with its HTTP handlers served on loopback.
type testNode struct {
	*raftnode.Node
	kv       *kv
	cfg      raftnode.Config
	httpAddr string
	fwd      *raftnode.Forwarder
	srv      *http.Server
	stopped  bool
}

// authorized is the credential the test Authorize hook accepts.
const testToken = "Bearer peer-secret"

func authorize(r *http.Request) error {
	if r.Header.Get("Authorization") != testToken {
		return errors.New("unauthorized")
	}
	return nil
}

// tlogWriter sends slog output to t.Log (warnings and errors only, to keep
// output small).
type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// memNet is the in-memory Raft network of the tests that are not about
// the network. Their nodes take addresses of its own, so clusters of
// different tests share it without meeting.
var memNet = raftnode.NewMemNetwork()

// nodeConfig returns a config for id with its own temp dir, on the
// in-memory network.
func nodeConfig(t testing.TB, id string, bootstrap bool) raftnode.Config {
	cfg := tcpConfig(t, id, bootstrap)
	cfg.Network = memNet
	return cfg
}

// oneVoter shortens cfg's timeouts for a cluster that stays a single
// voter: such a leader never loses its lease (it is its own quorum), so a
// short heartbeat only brings its first election forward, from 1–2 s to
// 50–100 ms.
func oneVoter(cfg raftnode.Config) raftnode.Config {
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 50*time.Millisecond, 50*time.Millisecond, 25*time.Millisecond
	return cfg
}

// fewVoters shortens cfg's timeouts to 200 ms (lease 100 ms), as metasrv's
// test harness does, for a cluster of several voters whose subject is not
// timing: its first election and a restart's then take a fraction of the
// default 1–2 s. TestCluster keeps the defaults: it is the story a
// deployment runs.
func fewVoters(cfg raftnode.Config) raftnode.Config {
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout = 200*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond
	return cfg
}

// tcpConfig returns a config for id with its own temp dir and a loopback
// TCP port: for the tests about the transport itself (TCP, TLS, peer
// certificates) and for the end-to-end cluster story.
func tcpConfig(t testing.TB, id string, bootstrap bool) raftnode.Config {
	cfg := raftnode.DefaultConfig()
	cfg.NodeID = id
	cfg.DataDir = t.TempDir()
	cfg.RaftAddr = "127.0.0.1:0"
	cfg.Bootstrap = bootstrap
	cfg.Logger = slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return cfg
}

// start starts a node (keeping cfg.HTTPAddr's listener address if set) and
// its HTTP server. Cleanup shuts both down.
func start(t testing.TB, cfg raftnode.Config) *testNode {
	t.Helper()
	addr := cfg.HTTPAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPAddr = ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sm := newKV()
	n, err := raftnode.New(ctx, cfg, sm)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	cfg.RaftAddr = n.RaftAddr() // a restart reuses the port
	tn := &testNode{Node: n, kv: sm, cfg: cfg, httpAddr: cfg.HTTPAddr}
	tn.fwd = &raftnode.Forwarder{Node: n, Scheme: "http"}
	h, err := raftnode.NewHandlers(raftnode.HTTPConfig{
		Node:      n,
		Authorize: authorize,
		Forwarder: tn.fwd,
		ForwardHeader: func(r *http.Request) (http.Header, error) {
			return http.Header{"Authorization": {r.Header.Get("Authorization")}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/cluster/join", h.JoinHandler())
	mux.Handle("/cluster/status", h.StatusHandler())
	mux.Handle("/cluster/propose", h.ProposeHandler())
	tn.srv = &http.Server{Handler: mux}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = tn.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		tn.stop(t)
		<-served
	})
	return tn
}

// stop shuts the node and its HTTP server down (idempotent).
func (tn *testNode) stop(t testing.TB) {
	t.Helper()
	if tn.stopped {
		return
	}
	tn.stopped = true
	_ = tn.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tn.Shutdown(ctx); err != nil {
		t.Errorf("%s: shutdown: %v", tn.ID(), err)
	}
}

// postJSON posts v to url with the test credential.
func postJSON(t testing.TB, url string, v any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(v)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Authorization", testToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// join asks via's JoinHandler to add tn.
func join(t testing.TB, via, tn *testNode) {
	t.Helper()
	code, body := postJSON(t, "http://"+via.httpAddr+"/cluster/join", raftnode.JoinRequest{
		ID: tn.ID(), RaftAddr: tn.RaftAddr(), HTTPAddr: tn.httpAddr,
	})
	if code != http.StatusOK {
		t.Fatalf("join %s via %s: HTTP %d: %s", tn.ID(), via.ID(), code, body)
	}
}

// waitLeader waits until one of nodes is leader and returns it.
func waitLeader(t testing.TB, timeout time.Duration, nodes ...*testNode) *testNode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		// Take the signal before checking, so no change is missed.
		ch := nodes[0].LeaderCh()
		for _, n := range nodes {
			if n.IsLeader() {
				return n
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no leader among %d nodes within %s", len(nodes), timeout)
		}
	}
}

func mustPropose(t testing.TB, n *testNode, cmd string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, idx, err := n.Propose(ctx, []byte(cmd))
	if err != nil {
		t.Fatalf("propose %q on %s: %v", cmd, n.ID(), err)
	}
	if res != idx {
		t.Fatalf("propose %q: result %v, index %d", cmd, res, idx)
	}
	return idx
}

func waitApplied(t testing.TB, n *testNode, index uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.WaitApplied(ctx, index); err != nil {
		t.Fatalf("%s: %v", n.ID(), err)
	}
}
