package integration_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/localstack/standin"
)

// The table benchmarks run `lakegate serve` as a CHILD process (unlike
// bench_test.go's in-process server) because they measure the server's own
// peak RSS and restart it with an empty read cache:
//
//   - BenchmarkIngest10M/{local,s3}: ADBC bulk ingest (create mode, a new
//     table per iteration) of 10M rows × 4 columns generated lazily by
//     genRows, to a serve process with a local stage or an S3 stage on the
//     in-process stand-in. MB/s is Arrow buffer bytes sent; peakRSS-MiB is
//     the serve process's VmHWM after the last iteration.
//   - BenchmarkS3Read1GB/{cold,warm}: one table of high-entropy rows (~1 GB
//     of Parquet) ingested once to an S3 stage, then bigQuery timed against
//     a freshly started serve with an empty cache (cold) and again on the
//     same process (warm). MB/s is Parquet bytes of the table per query.
//
// Both stand-in and client run in the test process, on the same cores as
// the server.

const (
	ingestRowsN = 10_000_000
	genBatch    = 64 << 10

	// bigRows rows of genRows' high-entropy shape (48-character random
	// labels, random doubles and timestamps) come to ~1 GB of Parquet.
	bigRows  = 20_000_000
	bigQuery = "SELECT sum(id), count(*) FROM sales.big"
)

// startServeEnv is launch with extra environment for the child (the AWS
// credentials of an S3 stage) on top of this process's.
func startServeEnv(owner testing.TB, dataDir string, env []string, args ...string) (*server, error) {
	return launch(owner, dataDir, append(os.Environ(), env...), args...)
}

// serveArgs are the arguments of a serve process on dataDir with free
// loopback ports, plus extra.
func serveArgs(dataDir string, extra ...string) []string {
	return append([]string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0"}, extra...)
}

// s3Stage starts a stand-in (closed at cleanup) and writes a stage
// descriptor for it; it returns the descriptor's path and the environment
// serve needs.
func s3Stage(b *testing.B) (descPath string, env []string) {
	b.Helper()
	st, err := standin.Start(context.Background(), standin.Config{Buckets: []string{"lakegate"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	desc, err := json.Marshal(map[string]any{"version": 1, "s3": map[string]any{
		"bucket": "lakegate", "prefix": "p", "region": "us-east-1",
		"endpoint": st.URL(), "path_style": true,
	}})
	if err != nil {
		b.Fatal(err)
	}
	descPath = filepath.Join(b.TempDir(), "stage.json")
	if err := os.WriteFile(descPath, desc, 0o600); err != nil {
		b.Fatal(err)
	}
	return descPath, []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1"}
}

// vmHWM returns the peak resident set size of process pid in MiB.
func vmHWM(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest) // "123456 kB"
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("unexpected VmHWM line %q", line)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, err
			}
			return float64(kb) / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// benchConn opens an ADBC connection with the plain Go allocator, closed at
// b's cleanup.
func benchConn(b *testing.B, srv *server) *client {
	b.Helper()
	db, conn := benchOpen(b, srv.uri(), srv.token(b, "analyst@demo"))
	return &client{db: db, conn: conn}
}

// genRows is a RecordReader of rows [0, rows) of ingestSchema, each batch
// built only when Next asks for it (the data set is never in memory).
//
// Plain rows: id, id*0.25, "lbl-" + 8 digits of id (12 bytes), and a
// timestamp id ms after 2024-01-01. Random rows (high entropy, so Parquet
// compression keeps most of it): id, a random double, 48 random base64
// characters, a random timestamp within ~9 years.
type genRows struct {
	refs   atomic.Int64
	rows   int64
	next   int64
	random bool
	rng    *rand.Rand
	cur    arrow.RecordBatch
	bytes  int64 // Arrow buffer bytes handed out so far
}

func newGenRows(rows int64, random bool) *genRows {
	g := &genRows{rows: rows, random: random, rng: rand.New(rand.NewPCG(1, 2))}
	g.refs.Store(1)
	return g
}

func (g *genRows) Retain()                        { g.refs.Add(1) }
func (g *genRows) Schema() *arrow.Schema          { return ingestSchema }
func (g *genRows) RecordBatch() arrow.RecordBatch { return g.cur }
func (g *genRows) Record() arrow.RecordBatch      { return g.cur }
func (g *genRows) Err() error                     { return nil }

func (g *genRows) Release() {
	if g.refs.Add(-1) == 0 && g.cur != nil {
		g.cur.Release()
		g.cur = nil
	}
}

func (g *genRows) Next() bool {
	if g.cur != nil {
		g.cur.Release()
		g.cur = nil
	}
	if g.next >= g.rows {
		return false
	}
	n := int(min(genBatch, g.rows-g.next))
	g.cur = g.batch(g.next, n)
	for _, col := range g.cur.Columns() {
		for _, buf := range col.Data().Buffers() {
			if buf != nil {
				g.bytes += int64(buf.Len())
			}
		}
	}
	g.next += int64(n)
	return true
}

func (g *genRows) batch(first int64, n int) arrow.RecordBatch {
	const tsBase = 1_704_067_200_000_000 // 2024-01-01T00:00:00Z in µs
	ids := make([]int64, n)
	amounts := make([]float64, n)
	ts := make([]int64, n)
	offsets := make([]int32, n+1)
	var labels []byte
	if g.random {
		labels = make([]byte, 0, n*48)
	} else {
		labels = make([]byte, 0, n*12)
	}
	var raw [36]byte
	for i := range n {
		id := first + int64(i)
		ids[i] = id
		if g.random {
			amounts[i] = g.rng.NormFloat64() * 1e6
			ts[i] = tsBase + g.rng.Int64N(300_000_000_000_000)
			for j := 0; j < len(raw); j += 8 {
				v := g.rng.Uint64()
				for k := 0; k < 8 && j+k < len(raw); k++ {
					raw[j+k] = byte(v >> (8 * k))
				}
			}
			labels = base64.StdEncoding.AppendEncode(labels, raw[:])
		} else {
			amounts[i] = float64(id) * 0.25
			ts[i] = tsBase + id*1000
			labels = append(labels, "lbl-"...)
			v := id % 100_000_000
			for d := int64(10_000_000); d > 0; d /= 10 {
				labels = append(labels, byte('0'+v/d%10))
			}
		}
		offsets[i+1] = int32(len(labels))
	}
	cols := []arrow.ArrayData{
		array.NewData(ingestSchema.Field(0).Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ids))}, nil, 0, 0),
		array.NewData(ingestSchema.Field(1).Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(amounts))}, nil, 0, 0),
		array.NewData(ingestSchema.Field(2).Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(labels)}, nil, 0, 0),
		array.NewData(ingestSchema.Field(3).Type, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ts))}, nil, 0, 0),
	}
	arrs := make([]arrow.Array, len(cols))
	for i, d := range cols {
		arrs[i] = array.MakeFromData(d)
		d.Release()
	}
	rec := array.NewRecordBatch(ingestSchema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// BenchmarkIngest10M bulk-ingests 10M rows × 4 columns (int64, float64,
// 12-byte utf8, timestamp[us, UTC]; ~400 MB of Arrow buffers) per
// iteration through ADBC (create mode, a new table each time) into a serve
// process, and reports the server's peak RSS (reported, not asserted) and
// CPU seconds per ingest.
//
// With LAKEGATE_BENCH_BASE_BIN naming another lakegate build (the
// baseline), every iteration ingests into a serve process of each build,
// the two taking turns to go first, and the benchmark also reports the
// ratio of this build's throughput to the baseline's per iteration (min,
// median, max: x-base-*), of their server CPU (cpu-x-base) and the
// baseline's own figures (base-*). MB/s is then for both ingests.
func BenchmarkIngest10M(b *testing.B) {
	baseBin := os.Getenv("LAKEGATE_BENCH_BASE_BIN")
	for _, stage := range []string{"local", "s3"} {
		b.Run(stage, func(b *testing.B) {
			type side struct {
				name      string
				srv       *server
				c         *client
				mbps, cpu []float64
			}
			sides := []*side{{name: "new"}}
			if baseBin != "" {
				sides = append(sides, &side{name: "base"})
			}
			for _, sd := range sides {
				dataDir := b.TempDir()
				var extra, env []string
				if stage == "s3" {
					desc, e := s3Stage(b)
					extra, env = []string{"--stage", desc}, e
				}
				bin := lakegateBin
				if sd.name == "base" {
					bin = baseBin
				}
				srv, err := startServeBin(b, bin, dataDir, env, serveArgs(dataDir, extra...)...)
				if err != nil {
					b.Fatal(err)
				}
				sd.srv, sd.c = srv, benchConn(b, srv)
			}
			ctx := context.Background()
			var ratios []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var bytes int64
				for k := range sides {
					sd := sides[(i+k)%len(sides)] // take turns to go first
					rdr := newGenRows(ingestRowsN, false)
					pid := sd.srv.cmd.Process.Pid
					cpu0, start := procCPUSeconds(b, pid), time.Now()
					n, err := sd.c.ingest(ctx, "sales", fmt.Sprintf("ingest_%d", i), adbc.OptionValueIngestModeCreate, rdr)
					el := time.Since(start)
					rdr.Release()
					if err != nil || n != ingestRowsN {
						b.Fatalf("%s: ingest: %d rows, %v\n%s", sd.name, n, err, sd.srv.stderr.String())
					}
					sd.cpu = append(sd.cpu, procCPUSeconds(b, pid)-cpu0)
					sd.mbps = append(sd.mbps, float64(rdr.bytes)/1e6/el.Seconds())
					bytes += rdr.bytes
				}
				b.SetBytes(bytes)
				if len(sides) == 2 {
					ratios = append(ratios, sides[0].mbps[i]/sides[1].mbps[i])
				}
			}
			b.StopTimer()
			for _, sd := range sides {
				hwm, err := vmHWM(sd.srv.cmd.Process.Pid)
				if err != nil {
					b.Fatal(err)
				}
				prefix := ""
				if sd.name == "base" {
					prefix = "base-"
				}
				b.ReportMetric(hwm, prefix+"peakRSS-MiB")
				b.ReportMetric(median(sd.cpu), prefix+"server-cpu-s")
				b.ReportMetric(median(sd.mbps), prefix+"ingest-MB/s")
			}
			if len(ratios) > 0 {
				sorted := slices.Sorted(slices.Values(ratios))
				b.ReportMetric(sorted[0], "x-base-min")
				b.ReportMetric(median(ratios), "x-base-med")
				b.ReportMetric(sorted[len(sorted)-1], "x-base-max")
				b.ReportMetric(median(sides[0].cpu)/median(sides[1].cpu), "cpu-x-base")
			}
		})
	}
}

// startServeBin is startServeEnv running the lakegate binary bin instead
// of the one built for the package. Benchmarks run one at a time, so
// pointing launch at bin for the start is safe.
func startServeBin(owner testing.TB, bin, dataDir string, env []string, args ...string) (*server, error) {
	saved := lakegateBin
	lakegateBin = bin
	defer func() { lakegateBin = saved }()
	return startServeEnv(owner, dataDir, env, args...)
}

// median returns the median of xs (the upper one of an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// BenchmarkS3Read1GB ingests bigRows high-entropy rows into sales.big on an
// S3 stage once, then times bigQuery on a server just restarted with an
// empty read cache (cold: every file is fetched, verified and cached) and
// on a warm server (the files are in the cache). MB/s is the table's
// Parquet bytes per query; parquet-MB reports that size (the sum of the
// cached files).
func BenchmarkS3Read1GB(b *testing.B) {
	dataDir := b.TempDir()
	desc, env := s3Stage(b)
	args := serveArgs(dataDir, "--stage", desc)
	srv, err := startServeEnv(b, dataDir, env, args...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	{
		c := benchConn(b, srv)
		rdr := newGenRows(bigRows, true)
		start := time.Now()
		n, err := c.ingest(ctx, "sales", "big", adbc.OptionValueIngestModeCreate, rdr)
		rdr.Release()
		if err != nil || n != bigRows {
			b.Fatalf("ingest of sales.big: %d rows, %v\n%s", n, err, srv.stderr.String())
		}
		el := time.Since(start)
		fmt.Fprintf(os.Stderr, "bench: ingested sales.big (%d rows, %.1f MB Arrow) to S3 in %s (%.1f MB/s)\n",
			bigRows, float64(rdr.bytes)/1e6, el.Round(time.Millisecond), float64(rdr.bytes)/1e6/el.Seconds())
	}
	cacheDir := filepath.Join(dataDir, "stage", "tenants", "demo", "cache")
	wantSum := fmt.Sprint(int64(bigRows) * (bigRows - 1) / 2)
	query := func(b *testing.B, c *client) {
		_, rows, err := c.query(ctx, bigQuery)
		if err != nil {
			b.Fatalf("%s: %v\n%s", bigQuery, err, srv.stderr.String())
		}
		if len(rows) != 1 || rows[0][0] != wantSum || rows[0][1] != fmt.Sprint(bigRows) {
			b.Fatalf("%s = %v, want [[%s %d]]", bigQuery, rows, wantSum, bigRows)
		}
	}
	var parquetBytes int64
	report := func(b *testing.B) {
		if parquetBytes == 0 {
			parquetBytes = dirBytes(b, cacheDir, ".parquet")
		}
		b.SetBytes(parquetBytes)
		b.ReportMetric(float64(parquetBytes)/1e6, "parquet-MB")
	}

	parent := b
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			srv.stop(b)
			if err := os.RemoveAll(cacheDir); err != nil {
				b.Fatal(err)
			}
			// The server outlives this sub-benchmark: warm reuses it.
			if srv, err = startServeEnv(parent, dataDir, env, args...); err != nil {
				b.Fatal(err)
			}
			c := benchConn(b, srv)
			b.StartTimer()
			query(b, c)
		}
		b.StopTimer()
		report(b)
	})
	b.Run("warm", func(b *testing.B) {
		c := benchConn(b, srv)
		query(b, c) // fills the cache if cold did not run; untimed
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			query(b, c)
		}
		b.StopTimer()
		report(b)
	})
}

// dirBytes sums the sizes of the regular files named *suffix under dir.
func dirBytes(b *testing.B, dir, suffix string) int64 {
	b.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), suffix) {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
