package duckdb_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// idleTenants is how many tenants BenchmarkIdleTenants opens:
// -idle.tenants=10000 shows the 10,000 of the target.
var (
	idleTenants   = flag.Int("idle.tenants", 1000, "tenants BenchmarkIdleTenants opens")
	budgetTenants = flag.Int("budget.tenants", 10000, "tenants BenchmarkTenantsUnderBudget serves")
	budgetBytes   = flag.Int64("budget.bytes", 1<<30, "BenchmarkTenantsUnderBudget's memory budget")
)

// BenchmarkIdleTenants opens -idle.tenants tenant engines, each after one
// statement (so each has run one query, then idles), and reports the
// resident memory each costs and how many fit in 24 GiB. Every engine stays
// open: the budget is large enough for all of them.
func BenchmarkIdleTenants(b *testing.B) {
	n := *idleTenants
	for b.Loop() {
		e, _ := newEngine(b, func(c *duckdb.Config) {
			c.MemoryBudget = 1 << 50
			if v := os.Getenv("IDLE_THREADS"); v != "" {
				c.Threads, _ = strconv.Atoi(v)
			}
		})
		ctx := context.Background()
		before := rss(b)
		start := time.Now()
		for i := range n {
			if _, err := query(ctx, e, fmt.Sprintf("t%05d", i), "SELECT 42 AS x"); err != nil {
				b.Fatal(err)
			}
		}
		open := time.Since(start)
		after := rss(b)
		per := float64(after-before) / float64(n)
		if got := e.OpenTenants(); got != n {
			b.Fatalf("%d tenants open, want %d", got, n)
		}
		b.ReportMetric(per/(1<<20), "MiB/tenant")
		b.ReportMetric(float64(24<<30)/per, "tenants/24GiB")
		b.ReportMetric(float64(open.Milliseconds())/float64(n), "ms/open")
		b.ReportMetric(float64(after)/(1<<30), "GiB-RSS")
		b.ReportMetric(float64(threads(b)), "threads")
		b.StopTimer()
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkTenantsUnderBudget serves -budget.tenants tenants in turn (each
// runs one statement, then idles) under a memory budget of -budget.bytes:
// idle engines are evicted least recently used first to make room, every
// tenant answers, and the process's resident memory above what it held
// before stays within the budget. It reports the evictions, the peak of
// that resident memory (sampled every 100 tenants) and the time per
// statement, opening and evicting included. 10,000 tenants take minutes.
func BenchmarkTenantsUnderBudget(b *testing.B) {
	n, budget := *budgetTenants, *budgetBytes
	for b.Loop() {
		e, _ := newEngine(b, func(c *duckdb.Config) {
			c.MemoryBudget = budget
			c.MemoryLimit = "64MB"
		})
		ctx := context.Background()
		before, peak := rss(b), int64(0)
		start := time.Now()
		for i := range n {
			r, err := query(ctx, e, fmt.Sprintf("t%05d", i), "SELECT 42 AS x")
			if err != nil {
				b.Fatalf("tenant %d: %v", i, err)
			}
			if fmt.Sprint(r.values[0]) != "[42]" {
				b.Fatalf("tenant %d answered %v", i, r.values[0])
			}
			if i%100 == 99 {
				peak = max(peak, statusKB(b, "VmRSS:")<<10-before)
			}
		}
		elapsed := time.Since(start)
		st := e.Budget()
		if st.Reserved > st.Budget {
			b.Fatalf("reserved %d of a budget of %d", st.Reserved, st.Budget)
		}
		b.ReportMetric(float64(n), "tenants")
		b.ReportMetric(float64(st.Evicted), "evicted")
		b.ReportMetric(float64(st.Open), "open-at-end")
		b.ReportMetric(float64(peak)/(1<<20), "peak-MiB-above-start")
		b.ReportMetric(float64(budget)/(1<<20), "budget-MiB")
		b.ReportMetric(float64(elapsed.Milliseconds())/float64(n), "ms/tenant")
		b.StopTimer()
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// rss is the process's resident set after a GC, in bytes.
func rss(tb testing.TB) int64 {
	tb.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	return statusKB(tb, "VmRSS:") << 10
}

// threads is the process's OS thread count.
func threads(tb testing.TB) int64 { return statusKB(tb, "Threads:") }

// statusKB reads one numeric field of /proc/self/status.
func statusKB(tb testing.TB, field string) int64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatalf("no /proc/self/status (Linux only): %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkBudgetPointQuery is BenchmarkPointLookup's point query with
// and without a memory budget: the accounting's cost on the shortest
// statement. Compare budget=on with budget=off of the same run (-count
// alternates them).
func BenchmarkBudgetPointQuery(b *testing.B) {
	ctx := context.Background()
	for _, on := range []bool{false, true} {
		name := "budget=off"
		if on {
			name = "budget=on"
		}
		b.Run(name, func(b *testing.B) {
			e, _ := newEngine(b, func(c *duckdb.Config) {
				c.Threads = 1
				if on {
					c.MemoryBudget = 16 << 30
				}
			})
			rel := bindTable(b, e, "acme", "orders@1", `SELECT range AS id, range % 500 AS customer_id,
				round(range * 1.37, 2) AS amount FROM range(1, 5001)`)
			sql := "SELECT id, customer_id, amount FROM " + relSQL(rel) + " WHERE id = ?"
			local := []backend.LocalTable{{ID: "orders@1"}}
			i := int64(0)
			for b.Loop() {
				i++
				if _, err := e.Bind(ctx, "acme", local); err != nil {
					b.Fatal(err)
				}
				if res, err := query(ctx, e, "acme", sql, 1+i%5000); err != nil || res.rows != 1 {
					b.Fatalf("%v rows, %v", res, err)
				}
			}
		})
	}
}

// BenchmarkBudgetEvictReopen measures a tenant's statement when the
// budget holds a single tenant: every statement of the other tenant
// closes the idle one and opens its own again (the cost of churn).
func BenchmarkBudgetEvictReopen(b *testing.B) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e, _ := newEngine(b, func(c *duckdb.Config) {
		c.MemoryLimit, c.IdleTenantBytes, c.MemoryBudget = "64MB", 1<<20, 64e6+(1<<20)
		c.Threads = 1
		c.Now = clock.Now
	})
	tenants := []string{"a", "b"}
	i := 0
	for b.Loop() {
		i++
		clock.Pass() // past the other tenant's grace
		if _, err := query(ctx, e, tenants[i%2], "SELECT 1 AS x"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(e.Budget().Evicted)/float64(b.N), "evictions/op")
}
