package integration_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/metasrv/raftnode"
)

// metasrvFailover bounds how long a cluster may take to converge (form, elect
// a new leader, catch a restarted node up); it is a failure bound only.
const metasrvFailover = 15 * time.Second

// metasrvEnv is what every node of one test cluster shares.
type metasrvEnv struct {
	principals string
	// peerTokens holds each node's metadata_peer token by node id: a node
	// authenticates to the others as the principal named after it.
	peerTokens map[string]string
	peerDir    string // where the nodes' --peer-token-file files are
	adminTok   string
	client     *http.Client
}

// testNodeIDs are the node ids the tests' clusters use.
var testNodeIDs = []string{"n1", "n2", "n3", "m1"}

// peers makes a metadata_peer principal and token file for each of
// testNodeIDs in dir and returns the principals for e's map.
func (e *metasrvEnv) peers(t testing.TB, dir string) []authz.PrincipalSpec {
	t.Helper()
	e.peerDir, e.peerTokens = dir, map[string]string{}
	var specs []authz.PrincipalSpec
	for _, id := range testNodeIDs {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.peerTokenFile(id), []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e.peerTokens[id] = tok
		specs = append(specs, authz.PrincipalSpec{ID: id, Tenant: "platform", Role: "metadata_peer", TokenHashes: []string{authz.HashToken(tok).String()}})
	}
	return specs
}

// peerTokenFile is node id's --peer-token-file.
func (e *metasrvEnv) peerTokenFile(id string) string {
	return filepath.Join(e.peerDir, "peer-"+id+".token")
}

// newMetasrvEnv writes the principal map of a test's metasrv nodes: the
// operator root (token adminTok), extra, and a metadata_peer principal for
// each of testNodeIDs.
func newMetasrvEnv(t testing.TB, extra ...authz.PrincipalSpec) *metasrvEnv {
	t.Helper()
	dir := t.TempDir()
	adminTok, err := authz.NewToken(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	e := &metasrvEnv{
		principals: filepath.Join(dir, "principals.yaml"),
		adminTok:   adminTok,
		client:     &http.Client{Timeout: 20 * time.Second},
	}
	specs := append([]authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: []string{authz.HashToken(adminTok).String()}},
	}, extra...)
	if err := authz.WritePrincipalMap(e.principals, append(specs, e.peers(t, dir)...)); err != nil {
		t.Fatal(err)
	}
	return e
}

// metasrvProc is one running `lakegate metasrv` process.
type metasrvProc struct {
	id, dataDir, httpAddr, raftAddr string

	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	exited         chan struct{} // closed once Wait returned
	waitErr        error
}

// bannerWriter records stdout and signals once the start banner was written.
type bannerWriter struct {
	buf    *lockedBuffer
	ready  chan struct{}
	closed bool
}

func (w *bannerWriter) Write(p []byte) (int, error) {
	n, err := w.buf.Write(p)
	if !w.closed && strings.Contains(w.buf.String(), ": REST on ") {
		w.closed = true
		close(w.ready)
	}
	return n, err
}

// freeLoopbackAddr returns a loopback address free now, on a port below the
// kernel's ephemeral range when it can: a node killed and restarted on its
// address must find the port still free, and every outgoing connection of
// the test run takes its source port from the ephemeral range (a restart
// once failed with "address already in use" that way).
func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	if low := ephemeralLow(); low > 12_000 {
		for range 100 {
			var b [2]byte
			_, _ = rand.Read(b[:])
			port := low - 10_000 + (int(b[0])<<8|int(b[1]))%10_000 // [low-10000, low)
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err == nil {
				addr := ln.Addr().String()
				ln.Close()
				return addr
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// ephemeralLow is the first port of the kernel's ephemeral range, or 0 if
// unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	low, _ := strconv.Atoi(f[0])
	return low
}

// startMetasrv starts a node on fresh ports, retrying on the rare port
// collision.
func (e *metasrvEnv) startMetasrv(t testing.TB, id, dataDir string, extra ...string) *metasrvProc {
	t.Helper()
	for attempt := 0; ; attempt++ {
		p, err := e.runMetasrv(t, id, dataDir, freeLoopbackAddr(t), freeLoopbackAddr(t), extra...)
		if err == nil {
			return p
		}
		if attempt < 3 && strings.Contains(err.Error(), "address already in use") {
			t.Logf("%s: port collision, retrying: %v", id, err)
			continue
		}
		t.Fatal(err)
	}
}

// runMetasrv starts a node and waits for its banner; an error carries the
// output of a process that exited first.
func (e *metasrvEnv) runMetasrv(t testing.TB, id, dataDir, httpAddr, raftAddr string, extra ...string) (*metasrvProc, error) {
	t.Helper()
	args := append([]string{"metasrv", "--node-id", id, "--data-dir", dataDir,
		"--http-addr", httpAddr, "--raft-addr", raftAddr,
		"--principals", e.principals, "--peer-token-file", e.peerTokenFile(id), "--log-level", "warn",
		"--metrics-addr", ""}, extra...)
	p := &metasrvProc{id: id, dataDir: dataDir, httpAddr: httpAddr, raftAddr: raftAddr,
		cmd: exec.Command(lakegateBin, args...), stdout: &lockedBuffer{}, stderr: &lockedBuffer{},
		exited: make(chan struct{})}
	bw := &bannerWriter{buf: p.stdout, ready: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = bw, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.stop(t) })
	select {
	case <-bw.ready:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before serving (%v):\n%s\n%s", id, p.waitErr, p.stdout.String(), p.stderr.String())
	case <-time.After(startTimeout):
		return nil, fmt.Errorf("%s printed no banner within %s:\n%s", id, startTimeout, p.stderr.String())
	}
}

// stop sends SIGTERM and waits, killing after a bounded wait.
func (p *metasrvProc) stop(t testing.TB) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.waitErr != nil {
			t.Errorf("metasrv %s on SIGTERM: %v; stderr:\n%s", p.id, p.waitErr, p.stderr.String())
		}
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("metasrv %s did not stop on SIGTERM; stderr:\n%s", p.id, p.stderr.String())
	}
}

// kill SIGKILLs the process and waits for it.
func (p *metasrvProc) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// msResp is one REST answer.
type msResp struct {
	status int
	body   map[string]any
	raw    []byte
	header http.Header
}

func (r msResp) gen(t testing.TB) uint64 {
	t.Helper()
	g, err := strconv.ParseUint(r.header.Get("Lakegate-Generation"), 10, 64)
	if err != nil {
		t.Fatalf("no Lakegate-Generation header (%v): %s", err, r.raw)
	}
	return g
}

func (e *metasrvEnv) do(t testing.TB, p *metasrvProc, method, path string, body any) msResp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+p.httpAddr+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.adminTok)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hr, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, p.id, err)
	}
	defer hr.Body.Close()
	raw, err := io.ReadAll(hr.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := msResp{status: hr.StatusCode, raw: raw, header: hr.Header}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// must fails unless the request answers 200 with code 0.
func (e *metasrvEnv) must(t testing.TB, p *metasrvProc, method, path string, body any) msResp {
	t.Helper()
	r := e.do(t, p, method, path, body)
	if c, _ := r.body["code"].(float64); r.status != http.StatusOK || c != 0 {
		t.Fatalf("%s %s on %s: HTTP %d: %s", method, path, p.id, r.status, r.raw)
	}
	return r
}

// status fetches /cluster/status; a connection error or non-200 is
// reported as an error (the node may be starting or electing).
func (e *metasrvEnv) status(p *metasrvProc) (raftnode.Status, error) {
	var st raftnode.Status
	req, err := http.NewRequest(http.MethodGet, "http://"+p.httpAddr+"/cluster/status", nil)
	if err != nil {
		return st, err
	}
	req.Header.Set("Authorization", "Bearer "+e.adminTok)
	hr, err := e.client.Do(req)
	if err != nil {
		return st, err
	}
	defer hr.Body.Close()
	raw, _ := io.ReadAll(hr.Body)
	if hr.StatusCode != http.StatusOK {
		return st, fmt.Errorf("HTTP %d: %s", hr.StatusCode, raw)
	}
	return st, json.Unmarshal(raw, &st)
}

// waitConverged polls /cluster/status on nodes until they all report
// `servers` voters and agree on one leader among nodes, which reports
// itself as Leader. It returns the leader.
func (e *metasrvEnv) waitConverged(t testing.TB, servers int, nodes ...*metasrvProc) *metasrvProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), metasrvFailover)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last []string
	for {
		last = last[:0]
		leaderID, agreed := "", true
		var leader *metasrvProc
		for _, p := range nodes {
			st, err := e.status(p)
			if err != nil {
				last, agreed = append(last, fmt.Sprintf("%s: %v", p.id, err)), false
				continue
			}
			b, _ := json.Marshal(st)
			last = append(last, string(b))
			voters := 0
			for _, s := range st.Servers {
				if s.Suffrage == "Voter" {
					voters++
				}
			}
			switch {
			case voters != servers, st.Leader.ID == "", leaderID != "" && st.Leader.ID != leaderID:
				agreed = false
			}
			leaderID = st.Leader.ID
			if st.ID == st.Leader.ID && st.State == "Leader" {
				leader = p
			}
		}
		if agreed && leader != nil && leader.id == leaderID {
			return leader
		}
		select {
		case <-ctx.Done():
			t.Fatalf("cluster did not converge on %d voters and a leader within %s; last status:\n%s",
				servers, metasrvFailover, strings.Join(last, "\n"))
		case <-tick.C:
		}
	}
}

// startCluster forms the three-node cluster the tests share: n1
// bootstraps, n2 joins through n1 and n3 through n2 (a follower, so that
// join is forwarded to the leader), each step converged before the next.
// flags go to every node (e.g. --raft-log). It returns the nodes, n1
// first, and the leader.
func (e *metasrvEnv) startCluster(t testing.TB, flags ...string) ([]*metasrvProc, *metasrvProc) {
	t.Helper()
	with := func(more ...string) []string { return append(slices.Clone(flags), more...) }
	n1 := e.startMetasrv(t, "n1", t.TempDir(), with("--bootstrap")...)
	e.waitConverged(t, 1, n1)
	n2 := e.startMetasrv(t, "n2", t.TempDir(), with("--join", n1.httpAddr)...)
	e.waitConverged(t, 2, n1, n2)
	n3 := e.startMetasrv(t, "n3", t.TempDir(), with("--join", n2.httpAddr)...)
	nodes := []*metasrvProc{n1, n2, n3}
	return nodes, e.waitConverged(t, 3, nodes...)
}

// without returns nodes except p, in order.
func without(nodes []*metasrvProc, p *metasrvProc) []*metasrvProc {
	var out []*metasrvProc
	for _, n := range nodes {
		if n != p {
			out = append(out, n)
		}
	}
	return out
}

// schemaNames lists the schemas of acme.lake on p with the query q.
func (e *metasrvEnv) schemaNames(t testing.TB, p *metasrvProc, q string) []string {
	t.Helper()
	r := e.must(t, p, "GET", "/api/metalakes/acme/catalogs/lake/schemas?"+q, nil)
	ids, _ := r.body["identifiers"].([]any)
	var out []string
	for _, id := range ids {
		if m, ok := id.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["name"]))
		}
	}
	return out
}
