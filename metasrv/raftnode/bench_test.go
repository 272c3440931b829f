package raftnode_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkPropose64 drives a 3-node loopback cluster (default config, fsync
// on every log write) with 64 concurrent proposers of ~200-byte commands and
// reports committed writes/s and the p99 proposal latency.
//
//	go test ./metasrv/raftnode -run '^$' -bench Propose64 -benchtime 20000x
func BenchmarkPropose64(b *testing.B) {
	n1 := start(b, tcpConfig(b, "b1", true))
	waitLeader(b, 10*time.Second, n1)
	for _, id := range []string{"b2", "b3"} {
		n := start(b, tcpConfig(b, id, false))
		join(b, n1, n)
	}
	const writers = 64
	value := strings.Repeat("x", 190)
	lat := make([][]time.Duration, writers)
	b.ResetTimer()
	begin := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < b.N; i += writers {
				cmd := fmt.Appendf(nil, "k%06d=%s", i, value)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				t0 := time.Now()
				_, _, err := n1.Propose(ctx, cmd)
				lat[w] = append(lat[w], time.Since(t0))
				cancel()
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
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	p := func(q float64) time.Duration { return all[int(q*float64(len(all)-1))] }
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "writes/s")
	b.ReportMetric(float64(p(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
}
