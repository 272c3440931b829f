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
	names := make([]string, len(ways))
	byName := map[string]func() error{}
	for i, w := range ways {
		names[i], byName[w.name] = w.name, w.run
	}
	b.ResetTimer()
	means := alternate(b, rounds, perRound, names, func(name string) error { return byName[name]() })
	b.StopTimer()
	for _, w := range ways {
		xs := slices.Sorted(slices.Values(means[w.name]))
		b.ReportMetric(xs[rounds/2], w.name+"-µs")
	}
	for _, rc := range []struct{ name, a, c string }{{"replan-x", "param", "cached"}, {"param-vs-fresh-x", "param", "fresh"}, {"cast-x", "cast", "param"}} {
		reportRatios(b, rc.name, means[rc.a], means[rc.c])
	}
}

// alternate runs each of names perRound times a round (run(name)), for
// rounds rounds, in an order reversed every other round so that a drift
// of the machine's load falls on every name alike, and returns each
// name's mean µs per run, by round.
func alternate(b *testing.B, rounds, perRound int, names []string, run func(name string) error) map[string][]float64 {
	b.Helper()
	means := map[string][]float64{}
	for r := range rounds {
		order := slices.Clone(names)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, name := range order {
			start := time.Now()
			for range perRound {
				if err := run(name); err != nil {
					b.Fatalf("%s: %v", name, err)
				}
			}
			means[name] = append(means[name], micros(time.Since(start))/float64(perRound))
		}
	}
	return means
}

// reportRatios reports the min, median and max over the rounds of
// num[r] ÷ den[r] as name-min, name-med and name-max.
func reportRatios(b *testing.B, name string, num, den []float64) {
	b.Helper()
	xs := make([]float64, len(num))
	for r := range num {
		xs[r] = num[r] / den[r]
	}
	slices.Sort(xs)
	b.ReportMetric(xs[0], name+"-min")
	b.ReportMetric(xs[len(xs)/2], name+"-med")
	b.ReportMetric(xs[len(xs)-1], name+"-max")
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
