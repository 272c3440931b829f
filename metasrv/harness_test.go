package metasrv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/metasrv"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// Test tokens (the principal map holds their hashes).
const (
	tokAdmin = "tok-admin"
	tokAlice = "tok-alice"   // alice@acme, owner of metalake acme
	tokBob   = "tok-bob"     // bob@acme
	tokEve   = "tok-eve"     // eve@other
	tokPeer  = "tok-peer-n1" // metadata_peer n1 (peerToken("n1"))
)

// peerToken is the token of node id's metadata_peer principal: each node
// authenticates to the others as itself.
func peerToken(id string) string { return "tok-peer-" + id }

// peerSpec is the metadata_peer principal of node id.
func peerSpec(id string) authz.PrincipalSpec {
	return authz.PrincipalSpec{ID: id, Tenant: "platform", Role: "metadata_peer", TokenHashes: tokenHashes(peerToken(id))}
}

func principals(t testing.TB) *authz.PrincipalMap {
	t.Helper()
	return principalMap(t, harnessSpecs())
}

// harnessSpecs are the principals of principals().
func harnessSpecs() []authz.PrincipalSpec {
	return []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: tokenHashes(tokAdmin)},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: tokenHashes(tokAlice)},
		{ID: "bob@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: tokenHashes(tokBob)},
		{ID: "eve@other", Tenant: "other", Role: "user", Namespaces: []string{"x"}, TokenHashes: tokenHashes(tokEve)},
		peerSpec("n1"), peerSpec("n2"), peerSpec("n3"),
	}
}

// tokenHashes is the TokenHashes of a principal holding tok.
func tokenHashes(tok string) []string { return []string{authz.HashToken(tok).String()} }

// principalMap writes specs as a principal map file and reads it back, as
// a node reads its --principals file.
func principalMap(t testing.TB, specs []authz.PrincipalSpec) *authz.PrincipalMap {
	t.Helper()
	b, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := authz.ParsePrincipalMap(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// node is an in-process metasrv node serving on loopback.
type node struct {
	*metasrv.Server
	t       testing.TB
	addr    string // HTTP host:port
	dir     string
	id      string
	raft    string
	served  chan error
	stopped bool
}

// configHook, when set, adjusts the Config of every node started next
// (benchmarks comparing configurations; never set in parallel tests).
var configHook func(*metasrv.Config)

// memNet is the in-memory Raft network the harness's nodes replicate
// over: clusters need no Raft sockets or ports, and a restarted node takes
// its address back. Nodes of different tests take different addresses
// and never meet. The REST API and forwarding stay on loopback HTTP.
var memNet = raftnode.NewMemNetwork()

// onTCP is a configHook part for the tests about the real deployment's
// Raft path (joins and replication over TCP) and for the benchmarks: the
// node's Raft transport listens on loopback TCP.
func onTCP(c *metasrv.Config) { c.Raft.Network = nil }

// startNode starts a node with its own (or the given) data dir; a restart
// passes the old node's dir, raft and http addresses.

func startNode(t testing.TB, id, dir, raftAddr, httpAddr string, bootstrap bool) *node {
	t.Helper()
	return startNodeWith(t, principals(t), id, dir, raftAddr, httpAddr, bootstrap)
}

// startNodeWith is startNode with a given principal map.
func startNodeWith(t testing.TB, pm *authz.PrincipalMap, id, dir, raftAddr, httpAddr string, bootstrap bool) *node {
	t.Helper()
	return launchNode(t, pm, id, dir, raftAddr, httpAddr, bootstrap, false)
}

// startCluster starts size nodes n1, n2, … with principal map pm, the
// others joining the cluster n1 bootstraps, and returns them and their
// leader.
func startCluster(t testing.TB, pm *authz.PrincipalMap, size int) ([]*node, *node) {
	t.Helper()
	nodes := []*node{startNodeWith(t, pm, "n1", "", "", "", true)}
	waitLeader(t, nodes[0])
	for i := 2; i <= size; i++ {
		nodes = append(nodes, startNodeWith(t, pm, fmt.Sprintf("n%d", i), "", "", "", false))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range nodes[1:] {
		if err := n.Join(ctx, nodes[0].addr); err != nil {
			t.Fatal(err)
		}
	}
	return nodes, waitLeader(t, nodes...)
}

// startSolo starts node id bootstrapping a cluster of its own that no
// other node joins. A single voter cannot lose its lease (it is its own
// quorum), so it runs with a 10 ms heartbeat: that only brings its first
// election forward, which is most of a one-node test's time.
func startSolo(t testing.TB, pm *authz.PrincipalMap, id string) *node {
	t.Helper()
	return launchNode(t, pm, id, "", "", "", true, true)
}

// launchNode starts a node; solo gives it startSolo's short timeouts.
func launchNode(t testing.TB, pm *authz.PrincipalMap, id, dir, raftAddr, httpAddr string, bootstrap, solo bool) *node {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	if raftAddr == "" {
		raftAddr = "127.0.0.1:0"
	}
	if httpAddr == "" {
		httpAddr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	cfg := metasrv.DefaultConfig()
	cfg.NodeID, cfg.DataDir, cfg.RaftAddr, cfg.HTTPAddr = id, dir, raftAddr, ln.Addr().String()
	cfg.Bootstrap = bootstrap
	cfg.Principals = pm
	cfg.PeerToken, cfg.PeerScheme = peerToken(id), "http"
	cfg.AllowJoins = true
	cfg.Logger = slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Raft.HeartbeatTimeout = 200 * time.Millisecond
	cfg.Raft.ElectionTimeout = 200 * time.Millisecond
	cfg.Raft.LeaderLeaseTimeout = 100 * time.Millisecond
	cfg.Raft.Network = memNet
	if solo {
		cfg.Raft.HeartbeatTimeout, cfg.Raft.ElectionTimeout, cfg.Raft.LeaderLeaseTimeout = 10*time.Millisecond, 10*time.Millisecond, 5*time.Millisecond
	}
	if configHook != nil {
		configHook(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := metasrv.New(ctx, cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	n := &node{Server: s, t: t, addr: ln.Addr().String(), dir: dir, id: id, raft: s.Node().RaftAddr(), served: make(chan error, 1)}
	go func() { n.served <- s.Serve(ln) }()
	t.Cleanup(n.stop)
	return n
}

func (n *node) stop() {
	if n.stopped {
		return
	}
	n.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A burst of requests can leave the client a spare connection it
	// dialled and never used; the server's graceful shutdown waits 5 s
	// for such a connection's first request. Closing the client's idle
	// connections ends them at once.
	http.DefaultClient.CloseIdleConnections()
	if err := n.Shutdown(ctx); err != nil {
		n.t.Errorf("%s: shutdown: %v", n.id, err)
	}
	if err := <-n.served; err != nil {
		n.t.Errorf("%s: serve: %v", n.id, err)
	}
}

// waitLeader waits until one of nodes leads and has announced itself
// (Barrier succeeds), and returns it.
func waitLeader(t testing.TB, nodes ...*node) *node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		ch := nodes[0].Node().LeaderCh()
		for _, n := range nodes {
			if n.Node().IsLeader() && n.Node().Barrier(ctx) == nil {
				return n
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("no leader")
		}
	}
}

// resp is a decoded REST answer.
type resp struct {
	status int
	body   map[string]any
	raw    []byte
	header http.Header
}

func (r resp) code() int {
	c, _ := r.body["code"].(float64)
	return int(c)
}

func (r resp) index() uint64 {
	i, _ := strconv.ParseUint(r.header.Get(api.IndexHeader), 10, 64)
	return i
}

func (r resp) gen() uint64 {
	g, _ := strconv.ParseUint(r.header.Get(api.GenerationHeader), 10, 64)
	return g
}

type call struct {
	method, path, token string
	body                any // string, []byte or a value to marshal
	header              map[string]string
	repeated            http.Header // headers added value by value, after header
}

func do(t testing.TB, n *node, c call) resp {
	t.Helper()
	var rd io.Reader
	switch b := c.body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(c.method, "http://"+n.addr+c.path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	for k, vs := range c.repeated {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	hr, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer hr.Body.Close()
	raw, _ := io.ReadAll(hr.Body)
	r := resp{status: hr.StatusCode, raw: raw, header: hr.Header}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// must does c and fails unless it answers 200 with code 0.
func must(t testing.TB, n *node, c call) resp {
	t.Helper()
	r := do(t, n, c)
	if r.status != http.StatusOK || r.code() != 0 {
		t.Fatalf("%s %s: HTTP %d: %s", c.method, c.path, r.status, r.raw)
	}
	return r
}

// expect does c and checks the HTTP status and Gravitino code.
func expect(t testing.TB, n *node, c call, status, code int) resp {
	t.Helper()
	r := do(t, n, c)
	if r.status != status || r.code() != code {
		t.Fatalf("%s %s: want HTTP %d code %d, got HTTP %d: %s", c.method, c.path, status, code, r.status, r.raw)
	}
	return r
}

// single starts a one-node cluster with metalake acme owned by alice.
func single(t testing.TB) *node {
	t.Helper()
	return withAcme(t, startSolo(t, principals(t), "n1"))
}

// withAcme waits until n leads and creates metalake acme, owned by alice.
func withAcme(t testing.TB, n *node) *node {
	t.Helper()
	waitLeader(t, n)
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin,
		body: map[string]any{"name": "acme", "comment": "Acme", "owner": "alice@acme"}})
	return n
}

// message is an error answer's message.
func (r resp) message() string {
	m, _ := r.body["message"].(string)
	return m
}
