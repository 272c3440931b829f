package metasrv_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"lakegate/metasrv"
	"lakegate/metasrv/raftnode"
)

// BenchmarkTagAssignWrites3Nodes is metasrv's load generator: a 3-node
// cluster on loopback (fsync on every Raft log write), 64 concurrent
// writers each toggling a v2 tag association (pii=<value>) on its own
// catalog through REST on the leader, as clients do. It reports committed
// writes/s, the p50/p99 request latency and, once per run, the time from
// stopping the leader to the first acknowledged write through a survivor.
//
//	GOFLAGS=-tags=duckdb_arrow go test ./metasrv -run '^$' -bench TagAssignWrites3Nodes -benchtime 20000x
//
// Sub-benchmarks compare proposal batching configurations in one run:
// batch=off (MaxBatchProposals 1: one Raft entry per write, Raft's own
// batching of entries only) and batch=pipeN (on, with N batch entries in
// Raft at once; 2 is the default). Nodes use Raft's default timeouts.
// Besides writes/s and latency it reports cpu-µs/write, the process's CPU
// time (all three nodes and the clients) per write, which varies less with
// other load on the machine than writes/s does.
func BenchmarkTagAssignWrites3Nodes(b *testing.B) {
	for _, v := range []struct {
		name            string
		items, pipeline int
		raw             bool
		logStore        string // "" is the default (bolt)
	}{
		{"batch=off", 1, 0, false, ""},
		{"batch=pipe1", 0, 1, false, ""},
		{"batch=pipe2", 0, 2, false, ""},
		{"batch=pipe4", 0, 4, false, ""},
		// The default configuration with a lean client: one connection
		// per writer, requests written and answers read in place, no
		// net/http Transport (its two goroutines and handoffs per request
		// cost as much CPU as the server's side of the request). Closer to
		// clients on other machines.
		{"batch=pipe2/client=raw", 0, 2, true, ""},
		// The same with the Raft log in raft-wal's append-only segments
		// (one fsync per log write instead of bbolt's two).
		{"log=wal/batch=pipe2/client=raw", 0, 2, true, raftnode.LogStoreWAL},
		{"log=wal/batch=pipe2", 0, 2, false, raftnode.LogStoreWAL},
	} {
		b.Run(v.name, func(b *testing.B) {
			configHook = func(c *metasrv.Config) {
				c.MaxBatchProposals, c.BatchPipeline = v.items, v.pipeline
				// Raft's default timeouts, not the harness's 200 ms
				// heartbeat: a starved leader must not lose its lease
				// mid-run, and failover-ms is then measured with the
				// defaults.
				d := raftnode.DefaultConfig()
				c.Raft.HeartbeatTimeout, c.Raft.ElectionTimeout, c.Raft.LeaderLeaseTimeout = d.HeartbeatTimeout, d.ElectionTimeout, d.LeaderLeaseTimeout
				c.Raft.LogStore = v.logStore
				onTCP(c)
			}
			defer func() { configHook = nil }()
			benchTagAssignWrites(b, v.raw)
		})
	}
}

func benchTagAssignWrites(b *testing.B, raw bool) {
	nodes, leader := startCluster(b, principals(b), 3)
	const writers = 64
	must(b, leader, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
	must(b, leader, call{method: "POST", path: ml + "/tags", token: tokAlice, body: map[string]any{"name": "pii"}})
	for w := range writers {
		must(b, leader, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": fmt.Sprintf("c%02d", w)}})
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConns: writers * 2, MaxIdleConnsPerHost: writers * 2}}
	defer client.CloseIdleConnections()
	// write toggles writer w's association: even k adds pii=v<w>, odd k
	// removes it, so that every request is an accepted, committed change.
	write := func(n *node, w, k int) (int, error) {
		op := "tagsToAdd"
		if k%2 == 1 {
			op = "tagsToRemove"
		}
		body := fmt.Appendf(nil, `{%q:[{"name":"pii","value":"v%02d"}]}`, op, w)
		req, err := http.NewRequest("POST", fmt.Sprintf("http://%s%s/objects/catalog/c%02d/tags", n.addr, ml, w), bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+tokAlice)
		req.Header.Set("Content-Type", "application/vnd.gravitino.v2+json")
		req.Header.Set("Accept", "application/vnd.gravitino.v2+json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
		}
		return resp.StatusCode, nil
	}

	send := make([]func(k int) error, writers)
	for w := range writers {
		send[w] = func(k int) error { _, err := write(leader, w, k); return err }
		if raw {
			rw := dialRaw(b, leader.addr)
			send[w] = func(k int) error { return rw.toggle(w, k) }
		}
	}

	lat := make([][]time.Duration, writers)
	log0 := logWrites(b, nodes)
	cpu0 := cpuTime(b)
	index0 := leader.Node().Status().LastIndex
	b.ResetTimer()
	begin := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for k, i := 0, w; i < b.N; k, i = k+1, i+writers {
				t0 := time.Now()
				err := send[w](k)
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	// The live heap of the three nodes and the clients once the writes
	// are done: the catalog state and what the nodes still hold (a leader
	// that kept its writes' results alive showed here as 100+ MB).
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
	logs := logWrites(b, nodes).since(log0)
	entries := leader.Node().Status().LastIndex - index0
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	p := func(q float64) time.Duration { return all[int(q*float64(len(all)-1))] }
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(p(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(p(0.90).Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(p(0.999).Microseconds())/1000, "p999-ms")
	// CPU time of the whole process (three nodes and the clients) per
	// write: steadier than writes/s on a shared machine.
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "cpu-µs/write")
	// Raft log entries per write: 1 without batching, less with it.
	b.ReportMetric(float64(entries)/float64(len(all)), "entries/write")
	// Log store writes on all three nodes (bbolt transactions with their
	// fdatasyncs): every commit waits for one on the leader, then one on a
	// follower, so the disk's sync latency is a floor under p50 and its
	// tail shows in p99. p99 is the upper bound of its histogram bucket.
	if logs.count > 0 {
		b.ReportMetric(logs.sum*1000/float64(logs.count), "logwrite-ms")
		b.ReportMetric(logs.quantile(0.99)*1000, "logwrite-p99-ms")
	}

	// Leader loss: stop the leader, then write through a survivor (which
	// forwards to the new leader, or is it) until a write is acknowledged.
	var survivor *node
	for _, n := range nodes {
		if n != leader {
			survivor = n
			break
		}
	}
	lost := time.Now()
	leader.stop()
	for k := 0; ; k++ {
		if _, err := write(survivor, 0, len(lat[0])+k); err == nil {
			break
		}
		if time.Since(lost) > 30*time.Second {
			b.Fatal("no write acknowledged within 30s of losing the leader")
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.ReportMetric(float64(time.Since(lost).Microseconds())/1000, "failover-ms")
}

// cpuTime returns the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// logHistogram is the sum of the nodes' metasrv_raft_log_write_duration_seconds.
type logHistogram struct {
	count  uint64
	sum    float64
	bounds []float64
	cum    []uint64 // cumulative count per bound
}

func logWrites(b *testing.B, nodes []*node) logHistogram {
	var h logHistogram
	for _, n := range nodes {
		mfs, err := n.MetricsRegistry().Gather()
		if err != nil {
			b.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "metasrv_raft_log_write_duration_seconds" {
				continue
			}
			m := mf.GetMetric()[0].GetHistogram()
			h.count += m.GetSampleCount()
			h.sum += m.GetSampleSum()
			if h.bounds == nil {
				for _, bk := range m.GetBucket() {
					h.bounds = append(h.bounds, bk.GetUpperBound())
				}
				h.cum = make([]uint64, len(h.bounds))
			}
			for i, bk := range m.GetBucket() {
				h.cum[i] += bk.GetCumulativeCount()
			}
		}
	}
	return h
}

// since returns h less the earlier observations in old.
func (h logHistogram) since(old logHistogram) logHistogram {
	d := logHistogram{count: h.count - old.count, sum: h.sum - old.sum, bounds: h.bounds, cum: slices.Clone(h.cum)}
	for i := range d.cum {
		if i < len(old.cum) {
			d.cum[i] -= old.cum[i]
		}
	}
	return d
}

// quantile returns the upper bound of the bucket holding quantile q
// (+Inf past the last bound).
func (h logHistogram) quantile(q float64) float64 {
	for i, c := range h.cum {
		if float64(c) >= q*float64(h.count) {
			return h.bounds[i]
		}
	}
	return math.Inf(1)
}

// rawWriter is one writer's own HTTP/1.1 connection, used by one goroutine.
type rawWriter struct {
	conn net.Conn
	br   *bufio.Reader
	buf  []byte
}

func dialRaw(b *testing.B, addr string) *rawWriter {
	b.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return &rawWriter{conn: conn, br: bufio.NewReader(conn)}
}

// toggle sends writer w's k-th tag association change (as write does) and
// reads the answer, which must be 200.
func (rw *rawWriter) toggle(w, k int) error {
	op := "tagsToAdd"
	if k%2 == 1 {
		op = "tagsToRemove"
	}
	body := fmt.Sprintf(`{%q:[{"name":"pii","value":"v%02d"}]}`, op, w)
	rw.buf = fmt.Appendf(rw.buf[:0], "POST %s/objects/catalog/c%02d/tags HTTP/1.1\r\nHost: metasrv\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/vnd.gravitino.v2+json\r\n"+
		"Accept: application/vnd.gravitino.v2+json\r\nContent-Length: %d\r\n\r\n%s", ml, w, tokAlice, len(body), body)
	if _, err := rw.conn.Write(rw.buf); err != nil {
		return err
	}
	resp, err := http.ReadResponse(rw.br, nil)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
	}
	return nil
}
