package duckdb_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// bindBench is a tenant holding n bound versions (of n tables, each
// current, so none is ever released) and a table "probe" whose new
// versions the benchmark binds.
type bindBench struct {
	e      *duckdb.Engine
	tenant string
	path   string // the one data file every version reads
	next   int    // the probe's next version
}

func newBindBench(b *testing.B, e *duckdb.Engine, n int) *bindBench {
	b.Helper()
	bb := &bindBench{e: e, tenant: fmt.Sprintf("v%d", n), next: 1}
	bb.path = writeFile(b, e, bb.tenant, "fill", "SELECT range AS id, range * 0.5 AS amount, 'x' || range AS name FROM range(100)")
	const batch = 500
	for i := 0; i < n; i += batch {
		var local []backend.LocalTable
		for j := i; j < min(n, i+batch); j++ {
			local = append(local, backend.LocalTable{ID: fmt.Sprintf("fill%d@1", j), Paths: []string{bb.path}})
		}
		if _, err := e.Bind(context.Background(), bb.tenant, local); err != nil {
			b.Fatal(err)
		}
	}
	return bb
}

// bindProbe binds the probe's next version (a new view, as after a
// commit) under a statement's context and returns how long Bind took. The
// statement then ends, which releases the superseded version; the release
// is not timed.
func (bb *bindBench) bindProbe(b *testing.B) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	local := []backend.LocalTable{{ID: fmt.Sprintf("probe@%d", bb.next), Paths: []string{bb.path}}}
	bb.next++
	start := time.Now()
	_, err := bb.e.Bind(ctx, bb.tenant, local)
	d := time.Since(start)
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	bb.e.WaitReleases(bb.tenant)
	return d
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkBind is the cost of binding a new table version (the first
// statement after a commit) on a tenant that has bound 100 and 5,000 other
// versions: per size, the p50 of Bind; and "ratio", rounds alternating
// between the two sizes in the same run, each round's p50 at 5,000 over its
// p50 at 100 (min, median and max over the rounds). Views over the files,
// not in-memory copies.
func BenchmarkBind(b *testing.B) {
	e, _ := newEngine(b, func(c *duckdb.Config) { c.MaterializeBytes = -1 })
	sizes := []int{100, 5000}
	benches := make([]*bindBench, len(sizes))
	for i, n := range sizes {
		benches[i] = newBindBench(b, e, n)
	}
	for i, n := range sizes {
		b.Run(fmt.Sprintf("versions=%d", n), func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				ds = append(ds, benches[i].bindProbe(b))
			}
			b.ReportMetric(float64(p50(ds).Microseconds()), "p50-µs")
		})
	}
	// The rounds run once per call, whatever b.N: each probe adds a view
	// where superseded ones are not dropped, so repeating them would
	// change the sizes being compared.
	b.Run("ratio", func(b *testing.B) {
		const rounds, perRound = 7, 40
		{
			var ratios []float64
			var p50s [2][]time.Duration
			for range rounds {
				var round [2]time.Duration
				for i, bb := range benches {
					ds := make([]time.Duration, perRound)
					for k := range ds {
						ds[k] = bb.bindProbe(b)
					}
					round[i] = p50(ds)
					p50s[i] = append(p50s[i], round[i])
				}
				ratios = append(ratios, float64(round[1])/float64(round[0]))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[0], "ratio-min")
			b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
			b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
			b.ReportMetric(float64(p50(p50s[0]).Microseconds()), "p50-100-µs")
			b.ReportMetric(float64(p50(p50s[1]).Microseconds()), "p50-5000-µs")
		}
	})
}

// BenchmarkBindBound is the cost of binding a version already bound (every
// statement's Bind): under a context that is never done, and under a
// statement's context, which the Bind holds the version for until the
// statement ends (here at once).
func BenchmarkBindBound(b *testing.B) {
	e, _ := newEngine(b, func(c *duckdb.Config) { c.MaterializeBytes = -1 })
	rel := bindTable(b, e, "acme", "t@1", "SELECT 1 AS a")
	local := []backend.LocalTable{{ID: "t@1"}}
	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"ctx=background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"ctx=statement", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx, end := c.ctx()
				rels, err := e.Bind(ctx, "acme", local)
				end()
				if err != nil || rels[0].Name != rel.Name {
					b.Fatalf("Bind = %v, %v", rels, err)
				}
			}
			e.WaitReleases("acme")
		})
	}
}
