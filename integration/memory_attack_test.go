package integration_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"google.golang.org/grpc/codes"
)

// procStatus reads a kB field (VmRSS, VmHWM) of /proc/<pid>/status in bytes.
func procStatus(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the server's status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status (has the server exited?)", field, pid)
	return 0
}

// wantResourceExhausted checks that err is ResourceExhausted carrying the
// limit's message.
func wantResourceExhausted(t testing.TB, err error, limit string) {
	t.Helper()
	var ae adbc.Error
	if !errors.As(err, &ae) || ae.VendorCode != int32(codes.ResourceExhausted) {
		t.Fatalf("err = %v, want ResourceExhausted", err)
	}
	if want := "statement exceeds the limit of " + limit; !strings.Contains(ae.Msg, want) {
		t.Fatalf("message %q, want it to name %q", ae.Msg, want)
	}
}

// drain runs sql and counts the rows it returns without keeping them.
func (c *client) drain(ctx context.Context, sql string) (int64, error) {
	stmt, err := c.conn.NewStatement()
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery(sql); err != nil {
		return 0, err
	}
	rdr, _, err := stmt.ExecuteQuery(ctx)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	return n, rdr.Err()
}

// memoryLimit is the --memory-limit the attack tests run serve with.
const memoryLimit = 512 << 20

// memoryAttacks are statements that took, or could take, the process past
// any memory bound: the review's (a 50,000-branch UNION, REPEAT of two
// billion bytes) and one of each construct the gate bounds. limit is the
// limit each must be refused for.
var memoryAttacks = []struct{ name, sql, limit string }{
	{"50,000 UNION branches", "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 49_999), "1000 UNION, EXCEPT and INTERSECT branches"},
	{"REPEAT of 2,000,000,000 bytes", "SELECT length(repeat('x', 2000000000))", "32768 bytes for a string REPEAT builds"},
	{"LPAD to 2,000,000,000 characters", "SELECT length(lpad('x', 2000000000, 'y'))", "32768 bytes for a string LPAD builds"},
	{"nested REPEAT", "SELECT length(repeat(repeat('x', 60000), 60000))", "32768 bytes for a string REPEAT builds"},
	{"REPEAT of a column", "SELECT max(length(repeat(status, id * 1000))) FROM sales.orders", "32768 bytes for a string REPEAT builds"},
	{"REPLACE growing", "SELECT length(replace(repeat('a', 30000), 'a', 'bbbbbbbbbb'))", "32768 bytes for a string REPLACE builds"},
	{"recursive CTE doubling a string", "WITH RECURSIVE r (s, n) AS (SELECT 'x', 1 UNION ALL SELECT concat(s, s), n + 1 FROM r WHERE n < 40) SELECT max(length(s)) FROM r", "32768 bytes for a string CONCAT builds"},
	{"a built column doubled (checked by the engine)", "WITH c0 AS (SELECT concat(status, repeat('x', 20000)) AS s FROM sales.orders), c1 AS (SELECT concat(s, s) AS s FROM c0) SELECT max(length(s)) FROM c1", "32768 bytes for a string CONCAT builds"},
	{"CTE chain doubling a column", cteDoubling(9), "65536 bytes of computed values per row"},
	{"string literal of 900 KB", "SELECT length('" + strings.Repeat("x", 900_000) + "')", "65536 bytes for a string literal"},
	{"strings built into every row", "SELECT max(length(repeat(status, 4000))), max(length(repeat(status, 4001))), max(length(repeat(status, 4002))) FROM sales.orders", "65536 bytes of computed values per row"},
	{"700 functions evaluated per row", "SELECT " + strings.Repeat("max(CAST(a.id AS CHAR)), ", 699) + "max(CAST(a.id AS CHAR)) FROM sales.orders a, sales.orders b WHERE b.id < 50", "65536 bytes of computed values per row"},
	{"IN list of 100,000 literals", "SELECT count(*) FROM sales.orders WHERE id IN (1" + strings.Repeat(", 1", 99_999) + ")", "50000 literals and parameters"},
	{"deeply nested functions", "SELECT " + strings.Repeat("abs(", 500) + "1" + strings.Repeat(")", 500), "64 levels of nested expressions"},
	{"nested scalar subqueries", "SELECT " + strings.Repeat("(SELECT ", 40) + "1" + strings.Repeat(")", 40), "8 levels of nested subqueries"},
	{"1,200 parentheses", "SELECT " + strings.Repeat("(", 1200) + "1" + strings.Repeat(")", 1200), "1000 levels of nesting"},
	{"100 joined tables", "SELECT count(*) FROM sales.orders o0" + joinedOrders(99), "32 tables in one FROM clause"},
}

// cteDoubling doubles a string through n CTEs.
func cteDoubling(n int) string {
	var b strings.Builder
	b.WriteString("WITH c0 AS (SELECT status AS s FROM sales.orders)")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, ", c%d AS (SELECT concat(s, s) AS s FROM c%d)", i, i-1)
	}
	fmt.Fprintf(&b, " SELECT max(length(s)) FROM c%d", n)
	return b.String()
}

func joinedOrders(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, " JOIN sales.orders o%d ON o%d.id = o0.id", i, i)
	}
	return b.String()
}

// memoryHeavy are statements within every limit that make the engine and
// the gateway hold as much as the limits allow: values computed per row up
// to the limit, a result of 160 MB, an IN list at the literal limit.
var memoryHeavy = []struct {
	name, sql string
	rows      int64
}{
	{"a 32 KB string and 100 more functions per row", "SELECT max(length(repeat(status, 4000)))" + strings.Repeat(", max(CAST(id AS CHAR))", 100) + " FROM sales.orders", 1},
	{"a 160 MB result", "SELECT id, repeat(status, 4000) FROM sales.orders", 5000},
	{"a column doubled through 7 CTEs", cteDoubling(7), 1},
	{"200 functions evaluated per row", "SELECT " + strings.Repeat("max(CAST(a.id AS CHAR)), ", 199) + "max(CAST(a.id AS CHAR)) FROM sales.orders a, sales.orders b WHERE b.id < 20", 1},
	{"IN list of 49,000 literals", "SELECT count(*) FROM sales.orders WHERE id IN (1" + strings.Repeat(", 2", 48_999) + ")", 1},
	{"aggregate over a cross join", "SELECT count(DISTINCT concat(a.status, b.id)) FROM sales.orders a, sales.customers b WHERE b.id < 200", 1},
}

// peakBound is what TestMemoryAttacks allows the server's peak RSS above
// its RSS at rest: DuckDB's memory limit (what its buffer manager tracks),
// plus the strings its expressions build outside it — 2,048 rows of at most
// sqlgate.DefaultRowBytes on each of its 2 threads — plus 256 MiB for
// the gateway's own heap (batches of at most 4 MiB, parse trees, gRPC).
const peakBound = memoryLimit + 2*2048*(64<<10) + 256<<20

// TestMemoryAttacks sends the statements that took `lakegate serve` past its
// memory, and one of each construct the gate bounds, through ADBC: each is
// refused with ResourceExhausted naming its limit, the process answers a
// normal query after each, and its peak RSS over the whole run — the heavy
// statements the limits still allow included — stays within peakBound of
// what it used at rest. Before the statement limits, the first statement
// alone grew the process until the kernel killed it.
func TestMemoryAttacks(t *testing.T) {
	srv := startServe(t, "--memory-limit", strconv.Itoa(memoryLimit>>20)+"MB")
	pid := srv.cmd.Process.Pid
	c := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	ctx := context.Background()
	alive := func(t *testing.T) {
		t.Helper()
		_, rows, err := c.query(ctx, "SELECT count(*) FROM sales.orders")
		if err != nil || len(rows) != 1 || rows[0][0] != "5000" {
			t.Fatalf("the server does not answer a normal query: %v %v", rows, err)
		}
	}
	alive(t)
	rest := procStatus(t, pid, "VmRSS")

	for _, a := range memoryAttacks {
		t.Run(a.name, func(t *testing.T) {
			_, _, err := c.query(ctx, a.sql)
			wantResourceExhausted(t, err, a.limit)
			alive(t)
		})
	}
	for _, h := range memoryHeavy {
		t.Run(h.name, func(t *testing.T) {
			n, err := c.drain(ctx, h.sql)
			if err != nil || n != h.rows {
				t.Fatalf("%d rows, %v; want %d", n, err, h.rows)
			}
			alive(t)
		})
	}
	peak := procStatus(t, pid, "VmHWM")
	t.Logf("RSS at rest %d MiB, peak %d MiB (--memory-limit %d MiB)", rest>>20, peak>>20, memoryLimit>>20)
	if peak > rest+peakBound {
		t.Fatalf("peak RSS %d MiB exceeds %d MiB at rest + %d MiB", peak>>20, rest>>20, peakBound>>20)
	}
}

// benignQueries are ordinary statements over the demo tables.
var benignQueries = []string{
	"SELECT status, count(*), sum(amount) FROM sales.orders GROUP BY status",
	"SELECT c.country, count(*), avg(o.amount) FROM sales.orders o JOIN sales.customers c ON o.customer_id = c.id GROUP BY c.country ORDER BY 2 DESC",
	"SELECT * FROM sales.orders WHERE id < 500 ORDER BY order_date DESC",
	"SELECT name, upper(name), concat(name, ' (', country, ')') FROM sales.customers",
	"SELECT customer_id, count(*) AS n FROM sales.orders GROUP BY customer_id HAVING count(*) > 2 ORDER BY n DESC LIMIT 20",
}

// goSys reads the Go runtime's memory from the server's metrics
// (go_memstats_sys_bytes: what the Go heap, stacks and runtime took from
// the OS; DuckDB's memory is not in it).
func goSys(b testing.TB, srv *server) int64 {
	b.Helper()
	resp, err := http.Get(srv.metricsURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_sys_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			return int64(f)
		}
	}
	b.Fatal("no go_memstats_sys_bytes in the metrics")
	return 0
}

// BenchmarkHostileMixPeakRSS reports the peak RSS of a `lakegate serve`
// (--memory-limit 512MB) under a hostile mix, next to the peak of benign
// queries in the same run: 4 clients (as many as a tenant may run at once)
// send benign queries, then, every iteration, every statement of
// memoryAttacks and memoryHeavy, each client in another order. The Go
// runtime's share is reported apart (go-sys-MiB). The server inherits the
// environment, so GOMEMLIMIT applies to it. Run it on request:
//
//	go test -tags=duckdb_arrow -run XXX -bench HostileMix -benchtime 3x ./integration/
func BenchmarkHostileMixPeakRSS(b *testing.B) {
	srv := startServe(b, "--memory-limit", strconv.Itoa(memoryLimit>>20)+"MB")
	pid := srv.cmd.Process.Pid
	const clients = 4
	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = mustDial(b, srv.uri(), bearer(srv.token(b, "analyst@demo")))
	}
	ctx := context.Background()
	type stmt struct {
		sql    string
		refuse bool
	}
	var hostile []stmt
	for _, a := range memoryAttacks {
		hostile = append(hostile, stmt{a.sql, true})
	}
	for _, h := range memoryHeavy {
		hostile = append(hostile, stmt{h.sql, false})
	}
	run := func(each func(i int, c *client) error) {
		errs := make(chan error, clients)
		for i, c := range cs {
			go func() { errs <- each(i, c) }()
		}
		for range cs {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := cs[0].drain(ctx, benignQueries[0]); err != nil {
		b.Fatal(err)
	}
	rest := procStatus(b, pid, "VmRSS")
	run(func(_ int, c *client) error {
		for range 20 {
			for _, q := range benignQueries {
				if _, err := c.drain(ctx, q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
		}
		return nil
	})
	benign, benignGo := procStatus(b, pid, "VmHWM"), goSys(b, srv)
	for b.Loop() {
		run(func(i int, c *client) error {
			for j := range hostile {
				h := hostile[(i*len(hostile)/clients+j)%len(hostile)]
				_, err := c.drain(ctx, h.sql)
				var ae adbc.Error
				switch {
				case h.refuse && (!errors.As(err, &ae) || ae.VendorCode != int32(codes.ResourceExhausted)):
					return fmt.Errorf("%.60s: %v, want ResourceExhausted", h.sql, err)
				case !h.refuse && err != nil:
					return fmt.Errorf("%.60s: %w", h.sql, err)
				}
			}
			return nil
		})
	}
	b.ReportMetric(float64(rest>>20), "rest-MiB")
	b.ReportMetric(float64(benign>>20), "benign-peak-MiB")
	b.ReportMetric(float64(benignGo>>20), "benign-go-sys-MiB")
	b.ReportMetric(float64(procStatus(b, pid, "VmHWM")>>20), "hostile-peak-MiB")
	b.ReportMetric(float64(goSys(b, srv)>>20), "hostile-go-sys-MiB")
}
