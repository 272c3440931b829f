package integration_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// BenchmarkMetasrvWrites3Processes is the metasrv write load over real
// processes: three `lakegate metasrv` nodes on loopback with Raft's default
// timeouts and the sub-benchmark's --raft-log, each with its own data
// directory, and `lakegate admin bench writes` as a fourth process driving
// 64 writers (one kept-alive HTTP/1.1 connection each, through net/http)
// at the leader: b.N committed tag attach/detach writes. It reports what
// the tool measured (writes/s, p50/p90/p99/p99.9/max latency in ms) and the
// CPU the three nodes and the tool each spent per write, from
// /proc/<pid>/stat and the tool's rusage.
//
//	GOFLAGS=-tags=duckdb_arrow go test ./integration -run '^$' -bench MetasrvWrites3Processes -benchtime 20000x
//
// metasrv's BenchmarkTagAssignWrites3Nodes measures the same load with the
// nodes and a leaner client in one process.
func BenchmarkMetasrvWrites3Processes(b *testing.B) {
	for _, kind := range []string{"bolt", "wal"} {
		b.Run("raft-log="+kind, func(b *testing.B) { benchMetasrvWrites(b, kind) })
	}
}

func benchMetasrvWrites(b *testing.B, raftLog string) {
	e := newMetasrvEnv(b)
	nodes, leader := e.startCluster(b, "--raft-log", raftLog)
	e.must(b, leader, "POST", "/api/metalakes", map[string]any{"name": "bench"})

	nodesCPU := func() float64 {
		var s float64
		for _, p := range nodes {
			s += procCPUSeconds(b, p.cmd.Process.Pid)
		}
		return s
	}
	cmd := exec.Command(lakegateBin, "admin", "--server", "http://"+leader.httpAddr, "--metalake", "bench",
		"bench", "writes", "--writers", "64", "--writes", strconv.Itoa(b.N), "--json")
	cmd.Env = append(os.Environ(), "LAKEGATE_TOKEN="+e.adminTok)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cpu0 := nodesCPU()
	b.ResetTimer()
	err := cmd.Run()
	b.StopTimer()
	if err != nil {
		b.Fatalf("admin bench writes: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	cpu := nodesCPU() - cpu0
	var rep struct {
		Writes                             int
		WritesPerSecond                    float64
		P50Ms, P90Ms, P99Ms, P999Ms, MaxMs float64
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Writes != b.N {
		b.Fatalf("admin bench writes answered %q (%v), want a report of %d writes", stdout.String(), err, b.N)
	}
	// The nodes' CPU includes the tool's setup and cleanup (64 catalogs
	// and a tag, created and dropped): small beside 20,000 writes.
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	b.ReportMetric(rep.WritesPerSecond, "writes/s")
	b.ReportMetric(rep.P50Ms, "p50-ms")
	b.ReportMetric(rep.P90Ms, "p90-ms")
	b.ReportMetric(rep.P99Ms, "p99-ms")
	b.ReportMetric(rep.P999Ms, "p999-ms")
	b.ReportMetric(rep.MaxMs, "max-ms")
	b.ReportMetric(cpu*1e6/float64(rep.Writes), "nodes-cpu-µs/write")
	b.ReportMetric(float64(client.Microseconds())/float64(rep.Writes), "client-cpu-µs/write")
}
