package flight

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"

	"lakegate/flight/accesslog"
)

// discardLog is an AccessLog that admits everyone and keeps nothing: what
// the Server itself costs per event.
type discardLog struct{}

func (discardLog) Admit(string) error     { return nil }
func (discardLog) Record(accesslog.Event) {}

// encodingSink takes every flushed batch and drops it: the log's own
// batching, encoding and flushing are paid, the stage's write is not.
type encodingSink struct{}

func (encodingSink) Write(context.Context, string, []byte, int) error { return nil }

// accessLogVariants are the lakes an access-log benchmark compares: no
// access log ("off", the baseline), one that keeps nothing ("discard": the
// Server's own cost per event) and the real log, memory-only, flushing
// every 100 ms to a sink that drops the Parquet files ("log").
var accessLogVariants = []struct {
	name string
	log  func(b *testing.B) AccessLog
}{
	{"off", func(*testing.B) AccessLog { return nil }},
	{"discard", func(*testing.B) AccessLog { return discardLog{} }},
	{"log", func(b *testing.B) AccessLog {
		l, err := accesslog.New(accesslog.Config{Sink: encodingSink{}, MemoryOnly: true, FlushInterval: 100 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = l.Close(context.Background()) })
		return l
	}},
}

// accessLogRounds is the number of rounds of an access-log benchmark.
const accessLogRounds = 15

// alternateAccessLog runs op perRound times on each variant's client per
// round, interleaved (one op on each variant in turn, the order rotating
// every op), so that whatever else the machine does weighs on every
// variant alike; a variant's figures for the round are the medians of its
// ops' wall times and of the process CPU time they took (server and client
// run in this process; CPU time is the steadier figure on a loaded
// machine, wall time the one a client sees). For every variant but the
// baseline (the first) it reports the ratio of its figure to the
// baseline's of the same round, as min, median and max over the rounds
// ("log/off-med": 1.02 means 2 % slower; "log/off-cpu-med" the same for
// CPU), and logs them.
func alternateAccessLog(b *testing.B, perRound int, seed func(testing.TB, *flightsql.Client), op func(cl *flightsql.Client)) {
	n := len(accessLogVariants)
	clients := make([]*flightsql.Client, n)
	for i, v := range accessLogVariants {
		log := v.log(b)
		l := newLake(b, func(c *Config) { c.AccessLog = log })
		clients[i] = l.client(b)
		seed(b, clients[i])
		op(clients[i]) // warm-up
	}
	wall := make([][]time.Duration, n)
	cpu := make([][]time.Duration, n)
	walls := make([][]time.Duration, n)
	cpus := make([][]time.Duration, n)
	b.ResetTimer()
	for range accessLogRounds {
		for i := range walls {
			walls[i], cpus[i] = walls[i][:0], cpus[i][:0]
		}
		for k := range perRound * n {
			i := (k + k/n) % n
			c0, start := processCPU(b), time.Now()
			op(clients[i])
			walls[i] = append(walls[i], time.Since(start))
			cpus[i] = append(cpus[i], processCPU(b)-c0)
		}
		for i := range walls {
			wall[i] = append(wall[i], median(walls[i]))
			cpu[i] = append(cpu[i], median(cpus[i]))
		}
	}
	b.StopTimer()
	for _, f := range []struct {
		suffix  string
		figures [][]time.Duration
	}{{"", wall}, {"-cpu", cpu}} {
		base := f.figures[0]
		for i := 1; i < n; i++ {
			ratios := make([]float64, accessLogRounds)
			for r := range ratios {
				ratios[r] = float64(f.figures[i][r]) / float64(base[r])
			}
			slices.Sort(ratios)
			name := accessLogVariants[i].name + "/" + accessLogVariants[0].name + f.suffix
			b.ReportMetric(ratios[0], name+"-min")
			b.ReportMetric(ratios[len(ratios)/2], name+"-med")
			b.ReportMetric(ratios[len(ratios)-1], name+"-max")
			b.Logf("%s over %d rounds: min %.3f median %.3f max %.3f", name, accessLogRounds, ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1])
		}
		for i, v := range accessLogVariants {
			b.ReportMetric(float64(median(f.figures[i]).Microseconds()), v.name+f.suffix+"-µs")
		}
	}
}

// median returns the median of ds, sorting them.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPointQueryAccessLog measures the access log's cost on a point
// query through a Flight SQL client: each round runs 300 queries on each
// variant (accessLogVariants), interleaved; the ratios are of the
// variants' p50s in the same round. The whole run happens once whatever
// b.N is.
func BenchmarkPointQueryAccessLog(b *testing.B) {
	ctx := bearerCtx(aliceToken)
	alternateAccessLog(b, 300, seedOrders, func(cl *flightsql.Client) {
		if _, err := runQuery(ctx, cl, "SELECT amount FROM sales.orders WHERE id = 1"); err != nil {
			b.Fatal(err)
		}
	})
}

// selectStarRows is the size of the table BenchmarkSelectStarAccessLog
// reads whole.
const selectStarRows = 4_000_000

// seedWide creates sales.wide (id BIGINT, amount DOUBLE) of selectStarRows
// rows as alice.
func seedWide(t testing.TB, cl *flightsql.Client) {
	t.Helper()
	schema := schemaOf("id", arrow.PrimitiveTypes.Int64, "amount", arrow.PrimitiveTypes.Float64)
	bld := array.NewRecordBuilder(cl.Alloc, schema)
	defer bld.Release()
	var recs []arrow.RecordBatch
	for start := 0; start < selectStarRows; start += 64 << 10 {
		for i := start; i < min(start+64<<10, selectStarRows); i++ {
			bld.Field(0).(*array.Int64Builder).Append(int64(i))
			bld.Field(1).(*array.Float64Builder).Append(float64(i) / 4)
		}
		recs = append(recs, bld.NewRecordBatch())
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	rdr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if n, err := cl.ExecuteIngest(bearerCtx(aliceToken), rdr, ingestOpts("sales", "wide", ingestCreate)); err != nil || n != selectStarRows {
		t.Fatalf("seeding sales.wide: %d, %v", n, err)
	}
}

// BenchmarkSelectStarAccessLog measures the access log's cost on SELECT *
// throughput: each round reads sales.wide (selectStarRows rows) whole
// three times on each variant (accessLogVariants), interleaved; the ratios
// are of the variants' median times in the same round (1.02: 2 % less
// throughput). The whole run happens once whatever b.N is.
func BenchmarkSelectStarAccessLog(b *testing.B) {
	ctx := bearerCtx(aliceToken)
	alternateAccessLog(b, 3, seedWide, func(cl *flightsql.Client) {
		if n, err := countRows(ctx, cl, "SELECT * FROM sales.wide"); err != nil || n != selectStarRows {
			b.Fatal(fmt.Errorf("SELECT *: %d rows, %w", n, err))
		}
	})
}

// countRows runs sql and counts the rows of its result without converting
// them.
func countRows(ctx context.Context, cl *flightsql.Client, sql string) (int64, error) {
	info, err := cl.Execute(ctx, sql)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, ep := range info.GetEndpoint() {
		rdr, err := cl.DoGet(ctx, ep.GetTicket())
		if err != nil {
			return n, err
		}
		for rdr.Next() {
			n += rdr.RecordBatch().NumRows()
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// BenchmarkAccessOnPath measures the access log's steps on a statement's
// path, each alone, to set them against a point query's p50
// (BenchmarkPointQueryAccessLog): normalising the statement, keeping a
// planned ticket's event until its DoGet (add, take), and Record into the
// real log (memory-only; its flushes, off the path, are not timed).
func BenchmarkAccessOnPath(b *testing.B) {
	const sql = "SELECT amount FROM sales.orders WHERE id = 1"
	ev := accesslog.Event{Time: time.Now(), RequestID: "0123456789abcdef", Tenant: "acme", Principal: "alice@acme",
		Gateway: "gw-1", ClientAddr: "127.0.0.1:54321", Kind: "query", Statement: normalizeStatement(sql), Catalog: "lake",
		Read: []accesslog.Table{{Schema: "sales", Name: "orders", Version: 3}}, Decision: accesslog.Allowed, Rows: 1, Bytes: 200}
	b.Run("normalize", func(b *testing.B) {
		for b.Loop() {
			_ = normalizeStatement(sql)
		}
	})
	b.Run("pending", func(b *testing.B) {
		pp := newPendingPlans(time.Minute, time.Now, func(accesslog.Event) {})
		var key [32]byte
		for i := 0; b.Loop(); i++ {
			key[0], key[1] = byte(i), byte(i>>8)
			pp.add(key, &ev)
			pp.take(key)
		}
	})
	b.Run("record", func(b *testing.B) {
		l, err := accesslog.New(accesslog.Config{Sink: encodingSink{}, MemoryOnly: true, FlushInterval: 100 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close(context.Background())
		for i := 0; b.Loop(); i++ {
			if err := l.Admit("acme"); err != nil {
				b.Fatal(err)
			}
			l.Record(ev)
			if i%4096 == 4095 {
				// Off the path: a flush, so memory never fills.
				b.StopTimer()
				l.Flush(context.Background())
				b.StartTimer()
			}
		}
	})
}
