package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkMetasrvCrashSoak kills metasrv nodes under write load, b.N
// times, and then checks that no acknowledged write was lost and that the
// nodes agree: the evidence wanted before the Raft log store's default
// changes. Three `lakegate metasrv` processes with the sub-benchmark's
// --raft-log take schema creations from 8 writers, each through a random
// node (followers forward); in each cycle a random node — the leader half
// of the time — is SIGKILLed after 0.2–1 s of writes and restarted from its
// own data directory on its addresses, and the cycle ends when the three
// agree on a leader again. Afterwards every node must hold every
// acknowledged schema, and all three the same set (a write that failed or
// timed out may or may not be there).
//
//	GOFLAGS=-tags=duckdb_arrow go test ./integration -run '^$' -bench MetasrvCrashSoak -benchtime 20x -timeout 60m
//
// It is a benchmark only so that it runs on request, never in `make test`;
// it reports the acknowledged writes and the cycles.
func BenchmarkMetasrvCrashSoak(b *testing.B) {
	for _, kind := range []string{"bolt", "wal"} {
		b.Run("raft-log="+kind, func(b *testing.B) { soakMetasrv(b, kind) })
	}
}

func soakMetasrv(b *testing.B, raftLog string) {
	e := newMetasrvEnv(b)
	nodes, leader := e.startCluster(b, "--raft-log", raftLog)
	logFlag := []string{"--raft-log", raftLog}
	e.must(b, leader, "POST", "/api/metalakes", map[string]any{"name": "acme"})
	e.must(b, leader, "POST", "/api/metalakes/acme/catalogs", map[string]any{"name": "lake", "type": "managed"})

	var (
		mu    sync.Mutex // guards nodes (a restart replaces one) and acked
		acked []string
	)
	pick := func() *metasrvProc {
		mu.Lock()
		defer mu.Unlock()
		return nodes[rand.IntN(len(nodes))]
	}
	client := &http.Client{Timeout: 5 * time.Second}
	// create asks p for schema name; it reports whether the write was
	// acknowledged (200 with code 0). Anything else — refused, timed out,
	// node gone — leaves the outcome open.
	create := func(p *metasrvProc, name string) bool {
		body, _ := json.Marshal(map[string]string{"name": name})
		req, err := http.NewRequest("POST", "http://"+p.httpAddr+"/api/metalakes/acme/catalogs/lake/schemas", bytes.NewReader(body))
		if err != nil {
			return false
		}
		req.Header.Set("Authorization", "Bearer "+e.adminTok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var env struct{ Code int }
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&env) == nil && env.Code == 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d_%d", w, i)
				if create(pick(), name) {
					mu.Lock()
					acked = append(acked, name)
					mu.Unlock()
				}
			}
		})
	}

	b.ResetTimer()
	start := time.Now()
	for c := range b.N {
		time.Sleep(time.Duration(200+rand.IntN(800)) * time.Millisecond) // writes go on meanwhile
		mu.Lock()
		victim := nodes[rand.IntN(len(nodes))]
		if c%2 == 0 {
			victim = leader
		}
		mu.Unlock()
		victim.kill(b)
		restarted, err := e.runMetasrv(b, victim.id, victim.dataDir, victim.httpAddr, victim.raftAddr, logFlag...)
		if err != nil {
			b.Fatalf("cycle %d: restarting %s: %v", c, victim.id, err)
		}
		mu.Lock()
		nodes[slices.Index(nodes, victim)] = restarted
		current := slices.Clone(nodes)
		mu.Unlock()
		leader = e.waitConverged(b, 3, current...)
	}
	cancel()
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	// One write through the leader after everything else: a node that has
	// applied it has applied every acknowledged write before it.
	final := e.must(b, leader, "POST", "/api/metalakes/acme/catalogs/lake/schemas", map[string]any{"name": "final"}).gen(b)
	want := append(slices.Clone(acked), "final")
	slices.Sort(want)
	var first []string
	for _, p := range nodes {
		// A node restarted in the last cycle may still be catching up: a
		// read at a generation it has not reached answers 503 after a
		// bounded wait.
		for deadline := time.Now().Add(metasrvFailover); ; {
			r := e.do(b, p, "GET", "/api/metalakes/acme/catalogs/lake?minGeneration="+strconv.FormatUint(final, 10), nil)
			if r.status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s did not reach generation %d: HTTP %d %s", p.id, final, r.status, r.raw)
			}
		}
		got := e.schemaNames(b, p, "minGeneration="+strconv.FormatUint(final, 10))
		slices.Sort(got)
		if missing := sortedMinus(want, got); len(missing) > 0 {
			b.Fatalf("%s lost %d acknowledged writes, e.g. %v", p.id, len(missing), missing[:min(5, len(missing))])
		}
		if first == nil {
			first = got
		} else if !slices.Equal(first, got) {
			b.Fatalf("%s holds %d schemas, %s %d: the nodes disagree", p.id, len(got), nodes[0].id, len(first))
		}
		if s := p.stderr.String(); strings.Contains(s, "panic") {
			b.Fatalf("%s panicked:\n%s", p.id, s)
		}
	}
	b.ReportMetric(float64(len(acked)), "acked-writes")
	b.ReportMetric(float64(len(first)-len(want)), "unacked-kept")
	b.ReportMetric(float64(len(acked))/elapsed.Seconds(), "acked/s")
}

// sortedMinus returns the elements of sorted a that are not in sorted b.
func sortedMinus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, ok := slices.BinarySearch(b, s); !ok {
			out = append(out, s)
		}
	}
	return out
}
