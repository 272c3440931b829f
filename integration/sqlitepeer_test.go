package integration_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The bare peer of the latency benchmark is arrow-go's example Flight SQL
// server (flightsql/example, over modernc.org/sqlite): no authentication,
// authorization, tickets or governance, one SQLite database in memory. It
// runs as a child process, like `lakegate serve`, built once per run next
// to the harness's lakegate binary.

const sqlitePeerPkg = "github.com/apache/arrow-go/v18/arrow/flight/flightsql/example/cmd/sqlite_flightsql_server"

var (
	sqlitePeerOnce sync.Once
	sqlitePeerBin  string
	sqlitePeerErr  error
)

// peerBanner is the line the example server prints once it listens.
var peerBanner = regexp.MustCompile(`Starting SQLite Flight SQL Server on (\S+)`)

// peerOrders creates and fills, on the peer, the table of the point query
// with the rows of `lakegate serve`'s demo sales.orders (cmd/lakegate's
// demo.go), id as its primary key.
var peerOrders = []string{
	`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, order_date TEXT, amount REAL, status TEXT)`,
	`INSERT INTO orders WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5000)
	 SELECT i, 1 + (i * 7919) % 2000, date('2024-01-01', '+' || (i % 365) || ' days'),
	        10 + (i * 37 % 10000) / 100.0,
	        CASE i % 3 WHEN 0 THEN 'new' WHEN 1 THEN 'shipped' ELSE 'returned' END
	 FROM r`,
}

// peerPointQuery is demoPointQuery on the peer's table.
const peerPointQuery = "SELECT id, customer_id, amount, status FROM orders WHERE id = ?"

// sqlitePeer is the running peer process.
type sqlitePeer struct {
	cmd  *exec.Cmd
	addr string
}

// startSQLitePeer builds (once) and starts the peer, and creates its
// orders table.
func startSQLitePeer(b *testing.B) *sqlitePeer {
	b.Helper()
	sqlitePeerOnce.Do(func() {
		sqlitePeerBin = filepath.Join(filepath.Dir(lakegateBin), "sqlite-flightsql-peer")
		build := exec.Command("go", "build", "-o", sqlitePeerBin, sqlitePeerPkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		sqlitePeerErr = build.Run()
	})
	if sqlitePeerErr != nil {
		b.Fatalf("building the SQLite peer: %v", sqlitePeerErr)
	}
	cmd := exec.Command(sqlitePeerBin, "-host", "127.0.0.1", "-port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &sqlitePeer{cmd: cmd}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := peerBanner.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			b.Fatal("the SQLite peer exited before serving")
		}
		p.addr = a
	case <-time.After(startTimeout):
		b.Fatal("the SQLite peer did not start")
	}
	cl, err := flightsql.NewClient(p.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	for _, sql := range peerOrders {
		if _, err := cl.ExecuteUpdate(context.Background(), sql); err != nil {
			b.Fatalf("peer: %s: %v", sql, err)
		}
	}
	return p
}

// peerEnv reads the positive count in the environment variable name, def
// if unset (LAKEGATE_PEER_ROUNDS, LAKEGATE_PEER_QUERIES).
func peerEnv(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// latencyTarget is one server of BenchmarkPeerLatency with its clients: an
// ADBC connection for SELECT 1 and one holding the prepared point query.
type latencyTarget struct {
	name  string
	pid   int
	conn  adbc.Connection
	point *preparedConn
}

func newLatencyTarget(b *testing.B, name, uri, token, pointSQL string, pid int) *latencyTarget {
	b.Helper()
	_, conn := benchOpen(b, uri, token)
	return &latencyTarget{name: name, pid: pid, conn: conn, point: openPrepared(b, uri, token, pointSQL)}
}

// run answers n queries of kind ("select1" or "point") and returns their
// latencies, sorted, the target process's CPU seconds they took, the
// client's (this process's), and the context switches of the target's
// threads while they ran.
func (lt *latencyTarget) run(b *testing.B, kind string, n int, next *int64) ([]time.Duration, float64, float64, int64) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, n)
	cpu0, sw0, client0 := procCPUSeconds(b, lt.pid), procSwitches(b, lt.pid), procCPUSeconds(b, os.Getpid())
	for range n {
		start := time.Now()
		var rows int64
		var err error
		switch kind {
		case "select1":
			rows, _, err = adbcRun(ctx, lt.conn, "SELECT 1")
		default:
			*next++
			rows, err = lt.point.run(ctx, 1+*next%5000)
		}
		lat = append(lat, time.Since(start))
		if err != nil || rows != 1 {
			b.Fatalf("%s %s: %d rows, %v", lt.name, kind, rows, err)
		}
	}
	client := procCPUSeconds(b, os.Getpid()) - client0
	cpu, sw := procCPUSeconds(b, lt.pid)-cpu0, procSwitches(b, lt.pid)-sw0
	slices.Sort(lat)
	return lat, cpu, client, sw
}

// procSwitches returns the context switches, voluntary and not, of the
// threads of process pid so far (threads that exited are not counted).
func procSwitches(b *testing.B, pid int) int64 {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue // the thread exited meanwhile
		}
		for line := range strings.Lines(string(data)) {
			name, v, ok := strings.Cut(line, ":")
			if ok && (name == "voluntary_ctxt_switches" || name == "nonvoluntary_ctxt_switches") {
				k, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					b.Fatalf("/proc/%d/task/%s/status: %v", pid, t.Name(), err)
				}
				n += k
			}
		}
	}
	return n
}

// roundStats is one target's figures for one kind in one round.
type roundStats struct{ p50, p99, cpu, client, sw float64 } // µs, µs, µs per query (server, client), switches per query

// BenchmarkPeerLatency compares the per-query latency of `lakegate serve`
// (a child process, with its demo data) with that of a bare Flight SQL peer
// (arrow-go's example SQLite server, a child process, with a primary-key
// table of the demo's sales.orders rows), through the same ADBC client on
// the same machine: SELECT 1 (GetFlightInfo + DoGet) and the prepared
// point query (demoPointQuery: DoPut of the id, GetFlightInfo, DoGet).
// Each of LAKEGATE_PEER_ROUNDS rounds (default 5) runs LAKEGATE_PEER_QUERIES
// (default 400) queries of each kind on each target, alternating the order
// of the targets from round to round; each round gives p50, p99, server
// CPU per query, the client's CPU per query (this process's) and context
// switches per query (of the server's threads) of each target and their
// ratios (lakegate / peer), printed per round, and the benchmark reports
// the min/median/max over the rounds of the ratios (p50-x, p99-x, cpu-x,
// client-cpu-x, sw-x; ≤ 1 is at or below the peer) and the median p50s. With LAKEGATE_PEER_BASELINE_BIN naming another lakegate
// binary, a third target serves the same demo from it, and the ratios of
// this build to it are reported too (base-p50-x, base-p99-x). The whole run
// happens once whatever b.N is. LAKEGATE_PEER_KINDS (select1, point or
// both, comma-separated) runs only those kinds, e.g. to profile one.
func BenchmarkPeerLatency(b *testing.B) {
	rounds := peerEnv(b, "LAKEGATE_PEER_ROUNDS", 5)
	queries := peerEnv(b, "LAKEGATE_PEER_QUERIES", 400)
	srv := startServe(b)
	tok := srv.token(b, "analyst@demo")
	peer := startSQLitePeer(b)
	targets := []*latencyTarget{
		newLatencyTarget(b, "lakegate", srv.uri(), tok, demoPointQuery, srv.cmd.Process.Pid),
		newLatencyTarget(b, "peer", "grpc://"+peer.addr, "", peerPointQuery, peer.cmd.Process.Pid),
	}
	if bin := os.Getenv("LAKEGATE_PEER_BASELINE_BIN"); bin != "" {
		dataDir := b.TempDir()
		base, err := launchBin(b, bin, dataDir, "serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0",
			"--metrics-addr", "127.0.0.1:0", "--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		targets = append(targets, newLatencyTarget(b, "baseline", base.uri(), base.token(b, "analyst@demo"), demoPointQuery, base.cmd.Process.Pid))
	}
	kinds := []string{"select1", "point"}
	if k := os.Getenv("LAKEGATE_PEER_KINDS"); k != "" { // one kind alone, e.g. to profile it
		kinds = strings.Split(k, ",")
		for _, k := range kinds {
			if k != "select1" && k != "point" {
				b.Fatalf("LAKEGATE_PEER_KINDS=%q: want select1, point or both", os.Getenv("LAKEGATE_PEER_KINDS"))
			}
		}
	}
	// Warm-up outside the rounds: connections, the tenant's engine, plans.
	next := int64(0)
	for _, t := range targets {
		for _, k := range kinds {
			t.run(b, k, 100, &next)
		}
	}
	stats := map[string]map[string][]roundStats{} // kind → target → rounds
	for _, k := range kinds {
		stats[k] = map[string][]roundStats{}
	}
	b.ResetTimer()
	for r := range rounds {
		order := slices.Clone(targets)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, k := range kinds {
			for _, t := range order {
				lat, cpu, client, sw := t.run(b, k, queries, &next)
				stats[k][t.name] = append(stats[k][t.name], roundStats{
					p50: micros(percentile(lat, 50)), p99: micros(percentile(lat, 99)), cpu: cpu * 1e6 / float64(queries),
					client: client * 1e6 / float64(queries), sw: float64(sw) / float64(queries)})
			}
		}
		for _, k := range kinds {
			lg, pe := stats[k]["lakegate"][r], stats[k]["peer"][r]
			line := fmt.Sprintf("round %d %-7s lakegate p50 %6.0f µs p99 %6.0f µs cpu %5.0f µs client %5.0f µs sw %4.1f | peer p50 %6.0f p99 %6.0f cpu %5.0f client %5.0f sw %4.1f | x p50 %.2f p99 %.2f cpu %.2f client %.2f sw %.2f",
				r+1, k, lg.p50, lg.p99, lg.cpu, lg.client, lg.sw, pe.p50, pe.p99, pe.cpu, pe.client, pe.sw, lg.p50/pe.p50, lg.p99/pe.p99, lg.cpu/pe.cpu, lg.client/pe.client, lg.sw/pe.sw)
			if bs, ok := stats[k]["baseline"]; ok {
				line += fmt.Sprintf(" | baseline p50 %6.0f p99 %6.0f cpu %5.0f, x %.2f", bs[r].p50, bs[r].p99, bs[r].cpu, lg.p50/bs[r].p50)
			}
			fmt.Fprintln(os.Stderr, line)
		}
	}
	b.StopTimer()
	for _, k := range kinds {
		ratios := func(against string, f func(roundStats) float64) []float64 {
			var out []float64
			for r, lg := range stats[k]["lakegate"] {
				out = append(out, f(lg)/f(stats[k][against][r]))
			}
			slices.Sort(out)
			return out
		}
		report := func(unit string, xs []float64) {
			b.ReportMetric(xs[0], k+"-"+unit+"-min")
			b.ReportMetric(xs[len(xs)/2], k+"-"+unit+"-med")
			b.ReportMetric(xs[len(xs)-1], k+"-"+unit+"-max")
		}
		p50 := func(s roundStats) float64 { return s.p50 }
		p99 := func(s roundStats) float64 { return s.p99 }
		report("p50-x", ratios("peer", p50))
		report("p99-x", ratios("peer", p99))
		report("cpu-x", ratios("peer", func(s roundStats) float64 { return s.cpu }))
		report("client-cpu-x", ratios("peer", func(s roundStats) float64 { return s.client }))
		report("sw-x", ratios("peer", func(s roundStats) float64 { return s.sw }))
		if _, ok := stats[k]["baseline"]; ok {
			report("base-p50-x", ratios("baseline", p50))
			report("base-p99-x", ratios("baseline", p99))
		}
		for _, t := range targets {
			var xs []float64
			for _, s := range stats[k][t.name] {
				xs = append(xs, s.p50)
			}
			slices.Sort(xs)
			b.ReportMetric(xs[len(xs)/2], k+"-"+t.name+"-p50-µs")
		}
	}
	noSecretsLogged(b, srv.stderr.String(), tok)
}

// launchBin is launch with another lakegate binary than the harness's.
func launchBin(owner testing.TB, bin, dataDir string, args ...string) (*server, error) {
	saved := lakegateBin
	lakegateBin = bin
	defer func() { lakegateBin = saved }()
	s, err := launch(owner, dataDir, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", strings.TrimSpace(bin), err)
	}
	return s, nil
}
