package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	duckdbgo "github.com/duckdb/duckdb-go/v2"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ingest"
	"lakegate/integration/gotpc"
	"lakegate/stage"
)

// BenchmarkTPCHBisect finds where a TPC-H query's time goes between the
// gateway's engine and a plain DuckDB over the same Parquet files. It
// re-encodes the tables a query reads through the stage's writer
// (flight/ingest, as an ADBC bulk ingest stores them), then times, in
// rounds whose order rotates, one arm per difference:
//
//   - ref: DuckDB with the reference's settings (make bench-tpch's: threads,
//     memory limit, MySQL's NULL order, UTC) and a view per table, running
//     go-tpc's text;
//   - ref+gate: the same DuckDB running the SQL gate's rendering;
//   - settings: DuckDB set up with the engine's own lockdownStatements and
//     its views (viewBody; small versions copied into tables as Bind copies
//     them), running the gate's rendering for the engine;
//   - settings-X: the same without one difference X (a lockdown
//     statement left out, or no in-memory copies; settings-collation-copies
//     both);
//   - engine: the Engine itself: Bind, Describe and Execute, as the
//     gateway runs a statement.
//
// Each arm's ratio to ref is taken within each round (min / median / max).
// Run it with -benchtime 1x; it needs the SF 1 data of make bench-tpch
// (bin/tpch-sf1, or -bisect.dir):
//
//	go test -tags=duckdb_arrow -run '^$' -bench TPCHBisect -benchtime 1x ./flight/backend/duckdb/ -args -bisect.queries=q16,q13 -bisect.rounds=7
var (
	bisectDir     = flag.String("bisect.dir", filepath.Join("..", "..", "..", "bin", "tpch-sf1"), "BenchmarkTPCHBisect: the generated TPC-H Parquet files (make bench-tpch)")
	bisectQueries = flag.String("bisect.queries", "q16,q13", "BenchmarkTPCHBisect: go-tpc queries to bisect, comma-separated")
	bisectRounds  = flag.Int("bisect.rounds", 7, "BenchmarkTPCHBisect: rounds per query")
	bisectArms    = flag.String("bisect.arms", "", "BenchmarkTPCHBisect: arms to time besides ref, comma-separated (default all)")
	bisectExplain = flag.String("bisect.explain", "", "BenchmarkTPCHBisect: print the gate's SQL and EXPLAIN ANALYZE on these settings arms, comma-separated")
)

// bisectTables are the TPC-H tables by name; a query reads those it names.
var bisectTables = []string{"nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"}

// bisectQueryTexts reads go-tpc's query texts by name (q1 … q22).
func bisectQueryTexts(b *testing.B) map[string]string {
	b.Helper()
	qs, err := gotpc.Load()
	if err != nil {
		b.Fatal(err)
	}
	texts := make(map[string]string, len(qs))
	for _, q := range qs {
		texts[q.Name] = q.Text
	}
	return texts
}

// bisectTablesOf lists the TPC-H tables text names.
func bisectTablesOf(text string) []string {
	var out []string
	low := strings.ToLower(text)
	for _, t := range bisectTables {
		for _, suffix := range []string{",", " ", "\n", "\t", ")"} {
			if strings.Contains(low, " "+t+suffix) || strings.Contains(low, "\t"+t+suffix) || strings.Contains(low, "\n"+t+suffix) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// bisectEncode writes dir/table.parquet into the tenant directory through
// the stage's writer and returns the files' absolute paths.
func bisectEncode(b *testing.B, store stage.Store, stageRoot, dir, table string) []string {
	b.Helper()
	pf, err := file.OpenParquetFile(filepath.Join(dir, table+".parquet"), false)
	if err != nil {
		b.Fatalf("%v (generate the data with make bench-tpch SF=1)", err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		b.Fatal(err)
	}
	rdr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rdr.Release()
	seg, err := stage.NewSegment()
	if err != nil {
		b.Fatal(err)
	}
	files, _, err := ingest.Copy(context.Background(), ingest.Config{Store: store, StorageID: table, Segment: seg, Schema: rdr.Schema()}, rdr)
	if err != nil {
		b.Fatalf("encoding %s: %v", table, err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(stageRoot, filepath.FromSlash(f.Key)))
	}
	return paths
}

// bisectDB is a DuckDB opened through duckdb-go, read through its Arrow
// interface as make bench-tpch's reference is.
type bisectDB struct {
	db    *sql.DB
	conn  driver.Conn
	arrow *duckdbgo.Arrow
}

func openBisectDB(b *testing.B, setup []string) *bisectDB {
	b.Helper()
	connector, err := duckdbgo.NewConnector("", nil)
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, s := range setup {
		if _, err := db.ExecContext(ctx, s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	ar, err := duckdbgo.NewArrowFromConn(conn)
	if err != nil {
		b.Fatal(err)
	}
	d := &bisectDB{db: db, conn: conn, arrow: ar}
	b.Cleanup(func() { conn.Close(); db.Close(); connector.Close() })
	return d
}

// run runs q and reads every batch.
func (d *bisectDB) run(ctx context.Context, q string) (int64, error) {
	rdr, err := d.arrow.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	return bisectDrain(rdr)
}

func bisectDrain(rdr array.RecordReader) (int64, error) {
	var n int64
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	return n, rdr.Err()
}

// bisectFolded turns the ASCII form of a LIKE the gate prints (a CASE on
// strlen = length) back into its folded form, which every value could use.
func bisectFolded(sql string) string {
	const caseRE = `CASE WHEN \(strlen\("[^"]+"\) = length\("[^"]+"\)\) THEN .*? ELSE (\(lower\(strip_accents\("[^"]+"\)\) LIKE lower\(strip_accents\('(?:[^']|'')*'\)\)\)) END`
	sql = regexp.MustCompile(`\(NOT `+caseRE+`\)`).ReplaceAllString(sql, "(NOT $1)")
	return regexp.MustCompile(caseRE).ReplaceAllString(sql, "$1")
}

// bisectCPU is the CPU time the process has used, all threads.
func bisectCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bisectStats prints ds and ds ÷ base (pairwise) as min / median / max.
func bisectStats(ds, base []time.Duration) (string, string) {
	var ratios []float64
	for r := range ds {
		ratios = append(ratios, float64(ds[r])/float64(max(base[r], 1)))
	}
	slices.Sort(ratios)
	ms := slices.Clone(ds)
	slices.Sort(ms)
	f := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return fmt.Sprintf("%6.1f / %6.1f / %6.1f", f(ms[0]), f(ms[len(ms)/2]), f(ms[len(ms)-1])),
		fmt.Sprintf("%.2f / %.2f / %.2f", ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1])
}

// bisectArm is one way of running a query.
type bisectArm struct {
	name string
	run  func(ctx context.Context) (int64, error)
}

func BenchmarkTPCHBisect(b *testing.B) {
	const threads, memoryLimit, tenantID = 2, "4GB", "tpch"
	texts := bisectQueryTexts(b)
	queries := strings.Split(*bisectQueries, ",")
	need := map[string]bool{}
	for _, q := range queries {
		if texts[q] == "" {
			b.Fatalf("go-tpc has no query %q", q)
		}
		for _, t := range bisectTablesOf(texts[q]) {
			need[t] = true
		}
	}

	root := b.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	cfg := DefaultConfig()
	cfg.Root, cfg.Threads, cfg.MemoryLimit = root, threads, memoryLimit
	eng, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close() })
	tdir := eng.tenantDir(tenantID)
	stageRoot := filepath.Join(tdir, "stage")
	store, err := stage.OpenLocal(stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: stageRoot}})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	files := map[string][]string{}
	var local []backend.LocalTable
	var names []string
	for _, t := range bisectTables {
		if !need[t] {
			continue
		}
		start := time.Now()
		files[t] = bisectEncode(b, store, stageRoot, *bisectDir, t)
		var size int64
		for _, p := range files[t] {
			if fi, err := os.Stat(p); err == nil {
				size += fi.Size()
			}
		}
		fmt.Printf("encoded %s: %d files, %.1f MB, %.1f s\n", t, len(files[t]), float64(size)/1e6, time.Since(start).Seconds())
		local = append(local, backend.LocalTable{ID: t + "@1", Paths: files[t]})
		names = append(names, t)
	}
	ctx := context.Background()
	rels, err := eng.Bind(ctx, tenantID, local)
	if err != nil {
		b.Fatal(err)
	}
	gate := sqlgate.New(sqlgate.Config{})
	render := func(text string, rel func(i int, name string) sqlgate.Relation) string {
		st, err := gate.Parse(text, "tpch")
		if err != nil {
			b.Fatalf("gate: %v", err)
		}
		m := map[sqlgate.TableRef]sqlgate.Relation{}
		for _, ref := range st.Tables() {
			i := slices.Index(names, ref.Name)
			if i < 0 {
				b.Fatalf("gate names %v", ref)
			}
			m[ref] = rel(i, ref.Name)
		}
		out, err := st.Render(m)
		if err != nil {
			b.Fatalf("render: %v", err)
		}
		return out
	}
	columns := func(t string) []string {
		d := openBisectDB(b, nil)
		rows, err := d.db.QueryContext(ctx, "SELECT name FROM parquet_schema("+quoteString(files[t][0])+") WHERE num_children IS NULL")
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				b.Fatal(err)
			}
			cols = append(cols, c)
		}
		return cols
	}
	cols := map[string][]string{}
	for _, t := range names {
		cols[t] = columns(t)
	}

	// The reference: make bench-tpch's settings and views.
	refSetup := []string{
		fmt.Sprintf("SET threads=%d", threads),
		fmt.Sprintf("SET memory_limit='%s'", memoryLimit),
		"SET default_null_order='nulls_first_on_asc_last_on_desc'",
		"SET TimeZone='UTC'",
	}
	for _, t := range names {
		var quoted []string
		for _, p := range files[t] {
			quoted = append(quoted, quoteString(p))
		}
		refSetup = append(refSetup, fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet([%s])", t, strings.Join(quoted, ",")))
	}
	ref := openBisectDB(b, refSetup)

	// The engine's settings and views, one difference left out at a time.
	tn := &tenant{dir: tdir, eng: eng}
	engineSetup := func(drop string, copies bool) []string {
		var setup []string
		for _, s := range lockdownStatements(tdir, memoryLimit, cfg.MaxTempSize, threads) {
			if drop == "" || !slices.ContainsFunc(strings.Split(drop, "|"), func(d string) bool { return strings.HasPrefix(s, d) }) {
				setup = append(setup, s)
			}
		}
		for i, lt := range local {
			body, err := tn.viewBody(&lt)
			if err != nil {
				b.Fatal(err)
			}
			kind := "VIEW"
			var size int64
			for _, p := range lt.Paths {
				if fi, err := os.Stat(p); err == nil {
					size += fi.Size()
				}
			}
			if copies && size <= eng.cfg.MaterializeBytes {
				kind = "TABLE"
			}
			setup = append(setup, "CREATE "+kind+" "+relSchema+"."+quoteIdent(rels[i].Name)+" AS "+body)
		}
		return append(setup, primeStatements[0], lockStatement)
	}
	arms := []bisectArm{}
	want := func(name string) bool {
		return *bisectArms == "" || slices.Contains(strings.Split(*bisectArms, ","), name)
	}
	type variant struct {
		name, drop string
		copies     bool
	}
	variants := []variant{
		{"settings", "", true},
		{"settings-collation", "SET GLOBAL default_collation", true},
		{"settings-filecache", "SET GLOBAL enable_external_file_cache", true},
		{"settings-nullorder", "SET GLOBAL default_null_order", true},
		{"settings-access", "SET GLOBAL enable_external_access", true},
		{"settings-copies", "", false},
		{"settings-collation-copies", "SET GLOBAL default_collation", false},
	}
	dbs := map[string]*bisectDB{}
	for _, v := range variants {
		if want(v.name) {
			dbs[v.name] = openBisectDB(b, engineSetup(v.drop, v.copies))
		}
	}

	for _, q := range queries {
		text := texts[q]
		refGate := render(text, func(i int, name string) sqlgate.Relation {
			return sqlgate.Relation{Schema: "main", Name: name, Columns: cols[name], Types: rels[i].Types}
		})
		engGate := render(text, func(i int, name string) sqlgate.Relation {
			return sqlgate.Relation{Schema: rels[i].Schema, Name: rels[i].Name, Columns: cols[name], Types: rels[i].Types}
		})
		if *bisectExplain != "" {
			fmt.Printf("%s gate SQL for the engine:\n%s\n", q, engGate)
			for _, name := range strings.Split(*bisectExplain, ",") {
				d := dbs[name]
				if d == nil {
					continue
				}
				rows, err := d.db.QueryContext(ctx, "EXPLAIN ANALYZE "+engGate)
				if err != nil {
					b.Fatal(err)
				}
				for rows.Next() {
					var k, v string
					if err := rows.Scan(&k, &v); err != nil {
						b.Fatal(err)
					}
					fmt.Printf("--- %s\n%s\n", name, v)
				}
				rows.Close()
			}
		}
		arms = arms[:0]
		arms = append(arms, bisectArm{"ref", func(ctx context.Context) (int64, error) { return ref.run(ctx, text) }})
		if want("ref+gate") {
			arms = append(arms, bisectArm{"ref+gate", func(ctx context.Context) (int64, error) { return ref.run(ctx, refGate) }})
		}
		if folded := bisectFolded(refGate); want("ref+gate-folded") && folded != refGate {
			arms = append(arms, bisectArm{"ref+gate-folded", func(ctx context.Context) (int64, error) { return ref.run(ctx, folded) }})
		}
		for _, v := range variants {
			if d := dbs[v.name]; d != nil {
				arms = append(arms, bisectArm{v.name, func(ctx context.Context) (int64, error) { return d.run(ctx, engGate) }})
			}
		}
		if want("engine") {
			arms = append(arms, bisectArm{"engine", func(ctx context.Context) (int64, error) {
				sctx, cancel := context.WithCancel(ctx)
				defer cancel()
				if _, err := eng.Bind(sctx, tenantID, local); err != nil {
					return 0, err
				}
				if _, err := eng.Describe(sctx, tenantID, engGate, 0); err != nil {
					return 0, err
				}
				rdr, err := eng.Execute(sctx, tenantID, engGate, nil)
				if err != nil {
					return 0, err
				}
				defer rdr.Release()
				return bisectDrain(rdr)
			}})
		}
		times := make([][]time.Duration, len(arms))
		cpu := make([][]time.Duration, len(arms))
		rows := make([]int64, len(arms))
		for i, a := range arms { // warm up: every file in the page cache, the answers agree
			n, err := a.run(ctx)
			if err != nil {
				b.Fatalf("%s %s: %v", q, a.name, err)
			}
			rows[i] = n
			if n != rows[0] {
				b.Errorf("%s: %s returns %d rows, ref %d", q, a.name, n, rows[0])
			}
		}
		for r := range *bisectRounds {
			for k := range arms {
				i := (k + r) % len(arms)
				t0, c0 := time.Now(), bisectCPU()
				if _, err := arms[i].run(ctx); err != nil {
					b.Fatalf("%s %s: %v", q, arms[i].name, err)
				}
				times[i] = append(times[i], time.Since(t0))
				cpu[i] = append(cpu[i], bisectCPU()-c0)
			}
		}
		fmt.Printf("\n%s (%d rows), %d rounds; wall ms and CPU ms (the process, all threads) min / median / max; ratios to ref within each round\n", q, rows[0], *bisectRounds)
		for i, a := range arms {
			wall, wallRatio := bisectStats(times[i], times[0])
			c, cpuRatio := bisectStats(cpu[i], cpu[0])
			fmt.Printf("  %-26s wall %s  ratio %s   cpu %s  ratio %s\n", a.name, wall, wallRatio, c, cpuRatio)
		}
	}
	for range b.N {
	}
}
