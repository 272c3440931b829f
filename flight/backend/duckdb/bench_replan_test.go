package duckdb_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"lakegate/flight/backend/duckdb"
)

// BenchmarkPointLookupReplan attributes the engine's share of a prepared
// point query: the statement with its value bound as a parameter (what a
// prepared statement's execution runs: DuckDB plans a statement with
// parameters that scans a relation again at every execution), the same
// lookup as one literal text executed again (a cached statement DuckDB does
// not re-plan), and a new literal text each time (parsed and planned
// afresh). Each of 7 rounds runs 300 executions of each, in an order that
// alternates; it reports the median over the rounds of each one's mean
// (param-µs, cached-µs, fresh-µs) and the min/median/max of the ratios
// param ÷ cached (replan-x) and param ÷ fresh (param-vs-fresh-x). A fourth
// way gives the parameter a resolved type (CAST(? AS BIGINT)): DuckDB
// re-plans it all the same (cast-x, cast ÷ param). The whole run happens
// once whatever b.N is.
func BenchmarkPointLookupReplan(b *testing.B) {
	ctx := context.Background()
	e, _ := newEngine(b, func(c *duckdb.Config) { c.Threads = 2; c.NoVerify = false })
	rel := bindTable(b, e, "acme", "orders@1", `SELECT range AS id, range % 500 AS customer_id,
		round(range * 1.37, 2) AS amount, ['new', 'paid', 'shipped'][range % 3 + 1] AS status FROM range(1, 5001)`)
	base := "SELECT id, customer_id, amount, status FROM " + relSQL(rel) + " WHERE id = "
	id := int64(0)
	ways := []struct {
		name string
		run  func() error
	}{
		{"param", func() error {
			id++
			_, err := query(ctx, e, "acme", base+"?", 1+id%5000)
			return err
		}},
		{"cast", func() error {
			id++
			_, err := query(ctx, e, "acme", base+"CAST(? AS BIGINT)", 1+id%5000)
			return err
		}},
		{"cached", func() error {
			_, err := query(ctx, e, "acme", base+"42")
			return err
		}},
		{"fresh", func() error {
			id++
			_, err := query(ctx, e, "acme", base+strconv.FormatInt(1+id%5000, 10))
			return err
		}},
	}
	const rounds, perRound = 7, 300
	for _, w := range ways { // warm-up: the tenant, the pool, the caches
		for range 50 {
			if err := w.run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	means := map[string][]float64{}
	b.ResetTimer()
	for r := range rounds {
		order := slices.Clone(ways)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, w := range order {
			start := time.Now()
			for range perRound {
				if err := w.run(); err != nil {
					b.Fatal(err)
				}
			}
			means[w.name] = append(means[w.name], micros(time.Since(start))/perRound)
		}
	}
	b.StopTimer()
	ratios := func(a, c string) []float64 {
		var out []float64
		for r := range rounds {
			out = append(out, means[a][r]/means[c][r])
		}
		slices.Sort(out)
		return out
	}
	for _, w := range ways {
		xs := slices.Sorted(slices.Values(means[w.name]))
		b.ReportMetric(xs[rounds/2], w.name+"-µs")
	}
	for _, rc := range []struct{ name, a, c string }{{"replan-x", "param", "cached"}, {"param-vs-fresh-x", "param", "fresh"}, {"cast-x", "cast", "param"}} {
		xs := ratios(rc.a, rc.c)
		b.ReportMetric(xs[0], rc.name+"-min")
		b.ReportMetric(xs[rounds/2], rc.name+"-med")
		b.ReportMetric(xs[rounds-1], rc.name+"-max")
	}
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
