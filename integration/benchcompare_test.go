package integration_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	bindings "github.com/duckdb/duckdb-go-bindings"
	duckdbgo "github.com/duckdb/duckdb-go/v2"
	"github.com/duckdb/duckdb-go/v2/arrowmapping"
	"github.com/duckdb/duckdb-go/v2/mapping"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	lgflight "lakegate/flight"
	"lakegate/flight/backend"
)

// BenchmarkCompare (make bench-compare) runs lakegate and its baselines in
// alternating rounds and prints one markdown table of each side's
// min/median/max and of their ratio within each round:
//
//   - SELECT * of -compare.rows rows × 4 columns (BIGINT, BIGINT, DOUBLE,
//     BIGINT) from one Parquet file, read by the same ADBC client: lakegate
//     (the in-process server of bench_test.go) against the minimal pipe
//     (DuckDB's Arrow conversion of its streamed chunks over the same file,
//     coalesced to 64Ki-row batches, served by a bare arrow-go Flight SQL
//     DoGet: compareMinimalPipe), and, for
//     reference, against a bare arrow-go Flight server streaming the same
//     batches from memory (read by arrow-go's Flight client); also the CPU
//     time of this process per GB read (server, DuckDB and client: steadier
//     than MB/s on a loaded machine), lakegate against the pipe;
//   - SELECT 1 and a prepared point query (one int64 parameter, one row),
//     p50 and p99 of -compare.points executions per round: `lakegate serve`
//     (a child process, its demo table sales.orders) against arrow-go's
//     example SQLite Flight SQL server (a child process, the same 5,000
//     rows);
//   - ingest of -compare.rows rows × 4 columns (BenchmarkIngest10M's
//     batches): ADBC bulk ingest into `lakegate serve` against DuckDB's COPY
//     of the same Arrow stream to one zstd Parquet file.
//
// Each round runs every side once, in an order that rotates from round to
// round. Ratios are lakegate ÷ baseline in the same round: above 1 is
// better for throughput (MB/s), below 1 for latency and CPU. -compare.only limits
// the run to some of select, point and ingest.
func BenchmarkCompare(b *testing.B) {
	if *compareRounds < 1 || *compareRows < 1 || *comparePoints < 1 {
		b.Fatal("-compare.rounds, -compare.rows and -compare.points must be positive")
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(*compareOnly, ",") {
		if p = strings.TrimSpace(p); p != "" {
			parts[p] = true
		}
	}
	for p := range parts {
		if p != "select" && p != "point" && p != "ingest" {
			b.Fatalf("-compare.only: unknown part %q (select, point, ingest)", p)
		}
	}
	run := func(p string) bool { return len(parts) == 0 || parts[p] }
	var rows []compareRow
	if run("select") {
		rows = append(rows, compareSelectStar(b)...)
	}
	if run("point") {
		rows = append(rows, comparePointQueries(b)...)
	}
	if run("ingest") {
		rows = append(rows, compareIngest(b)...)
	}
	fmt.Print(compareTable(rows))
	for _, r := range rows {
		if r.metric != "" {
			b.ReportMetric(compareMedian(r.ratio), r.metric)
		}
	}
}

var (
	compareRounds = flag.Int("compare.rounds", 5, "BenchmarkCompare: rounds (each side runs once a round)")
	compareRows   = flag.Int64("compare.rows", 10_000_000, "BenchmarkCompare: rows of SELECT * and of ingest")
	comparePoints = flag.Int("compare.points", 1000, "BenchmarkCompare: SELECT 1 and point queries per side and round")
	compareOnly   = flag.String("compare.only", "", "BenchmarkCompare: comma-separated parts to run (select, point, ingest; default all)")
)

// compareRow is one line of the table: a measure of lakegate and of a
// baseline, one value per round each, and their ratio per round.
type compareRow struct {
	what, unit, baseline, target string
	lakegate, base, ratio        []float64
	metric                       string // the ratio's median is reported under this name
}

func (r *compareRow) add(lakegate, base float64) {
	r.lakegate = append(r.lakegate, lakegate)
	r.base = append(r.base, base)
	r.ratio = append(r.ratio, lakegate/base)
}

// compareTable renders rows as the markdown table docs/performance.md shows.
func compareTable(rows []compareRow) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%d rounds; ratio = lakegate ÷ baseline in the same round (throughput: higher is better; latency and CPU: lower)\n\n", *compareRounds)
	sb.WriteString("| measure | baseline | lakegate min / median / max | baseline min / median / max | ratio min / median / max | target |\n")
	sb.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range rows {
		format := "%.0f" // MB/s
		if r.unit == "ms" || r.unit == "s" {
			format = "%.2f"
		}
		fmt.Fprintf(&sb, "| %s (%s) | %s | %s | %s | %s | %s |\n", r.what, r.unit, r.baseline,
			compareSpread(r.lakegate, format), compareSpread(r.base, format), compareSpread(r.ratio, "%.2f"), r.target)
	}
	return sb.String()
}

// compareSpread formats the min, median and max of vs.
func compareSpread(vs []float64, format string) string {
	s := slices.Sorted(slices.Values(vs))
	return fmt.Sprintf(format+" / "+format+" / "+format, s[0], compareMedian(s), s[len(s)-1])
}

// compareMedian is the middle value of vs (the mean of the middle two for an even count).
func compareMedian(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// compareRotate runs fns once each, starting at fns[round % len(fns)].
func compareRotate(round int, fns ...func()) {
	for i := range fns {
		fns[(round+i)%len(fns)]()
	}
}

// ---- SELECT * ----

// compareTableSQL is SELECT * over bench.cmp, the table compareSelectStar writes.
const compareTableSQL = "SELECT * FROM bench.cmp"

func compareSelectStar(b *testing.B) []compareRow {
	env := benchLakegate(b)
	n := *compareRows
	start := time.Now()
	tbl, err := writeCompareTable(env, n)
	if err != nil {
		b.Fatalf("writing bench.cmp: %v", err)
	}
	fmt.Fprintf(os.Stderr, "compare: wrote bench.cmp (%d rows) in %s\n", n, time.Since(start).Round(time.Millisecond))
	ctx := context.Background()

	lg := benchDial(b, env)
	pipe := startCompareMinimalPipe(b, tbl.Paths[0])
	pipeConn := compareDialPlain(b, pipe.addr)
	bare := startCompareBareFlight(b, env, tbl, n)
	bareCl, err := flight.NewClientWithMiddleware(bare.addr, nil, nil,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(lgflight.MaxMessageBytes)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bareCl.Close() })

	// read returns MB/s and the CPU seconds of this process (server,
	// DuckDB and client together) per GB read.
	read := func(what string, f func() (int64, int64, error)) (float64, float64) {
		cpu0, t0 := selfCPUSeconds(b), time.Now()
		got, bytes, err := f()
		d, cpu := time.Since(t0), selfCPUSeconds(b)-cpu0
		if err != nil || got != n {
			b.Fatalf("%s: %d rows, %v", what, got, err)
		}
		return float64(bytes) / 1e6 / d.Seconds(), cpu / (float64(bytes) / 1e9)
	}
	lgRead := func() (float64, float64) {
		return read("lakegate", func() (int64, int64, error) { return adbcRun(ctx, lg, compareTableSQL) })
	}
	pipeRead := func() (float64, float64) {
		return read("minimal pipe", func() (int64, int64, error) { return adbcRun(ctx, pipeConn, compareTableSQL) })
	}
	bareReadMBps := func() (float64, float64) {
		return read("bare Flight", func() (int64, int64, error) { return bareRead(ctx, bareCl) })
	}
	// One read of each outside the measurement: connections, DuckDB's file
	// caches and the Go heap are warm afterwards.
	lgRead()
	pipeRead()
	bareReadMBps()

	label := fmt.Sprintf("SELECT * %s rows × 4", compareHumanRows(n))
	vsPipe := compareRow{what: label, unit: "MB/s", baseline: "minimal pipe", target: "≥ 0.9", metric: "select-x-pipe"}
	vsBare := compareRow{what: label, unit: "MB/s", baseline: "bare Flight from memory", target: "reference", metric: "select-x-bare"}
	cpuPipe := compareRow{what: label + ", CPU per GB, client included", unit: "s", baseline: "minimal pipe", target: "report", metric: "select-cpu-x-pipe"}
	for r := range *compareRounds {
		var l, p, m, lc, pc float64
		compareRotate(r, func() { l, lc = lgRead() }, func() { p, pc = pipeRead() }, func() { m, _ = bareReadMBps() })
		vsPipe.add(l, p)
		vsBare.add(l, m)
		cpuPipe.add(lc, pc)
		fmt.Fprintf(os.Stderr, "compare: round %d SELECT *: lakegate %.0f, minimal pipe %.0f, bare %.0f MB/s; CPU %.2f, %.2f s/GB\n", r+1, l, p, m, lc, pc)
	}
	return []compareRow{vsPipe, vsBare, cpuPipe}
}

// compareHumanRows writes n as 10M, 500k or 1234.
func compareHumanRows(n int64) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}

// writeCompareTable writes n rows of wideQuery's shape as the one data file
// of bench.cmp version 1 and commits it in the bench catalog.
func writeCompareTable(env *benchEnv, n int64) (backend.LocalTable, error) {
	return writeWideShaped(env, "cmp", n)
}

// startCompareBareFlight materialises SELECT * of tbl (n rows) through the
// engine and serves the batches from memory with a bare arrow-go Flight
// server (bareFlight of bench_test.go).
func startCompareBareFlight(b *testing.B, env *benchEnv, tbl backend.LocalTable, n int64) *bareFlight {
	ctx := context.Background()
	rels, err := env.engine.Bind(ctx, benchTenant, []backend.LocalTable{tbl})
	if err != nil {
		b.Fatal(err)
	}
	rdr, err := env.engine.Execute(ctx, benchTenant, relationSelect(rels[0]), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rdr.Release()
	bf := &bareFlight{schema: rdr.Schema()}
	var got int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		bf.recs = append(bf.recs, rec)
		got += rec.NumRows()
	}
	if err := rdr.Err(); err != nil {
		b.Fatal(err)
	}
	if got != n {
		b.Fatalf("materialised %d rows, want %d", got, n)
	}
	bf.srv = flight.NewServerWithMiddleware(nil,
		grpc.MaxRecvMsgSize(lgflight.MaxMessageBytes),
		grpc.MaxSendMsgSize(lgflight.MaxMessageBytes))
	if err := bf.srv.Init("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	bf.srv.RegisterFlightService(bf)
	go func() { _ = bf.srv.Serve() }()
	b.Cleanup(func() {
		bf.srv.Shutdown()
		for _, rec := range bf.recs {
			rec.Release()
		}
	})
	bf.addr = bf.srv.Addr().String()
	return bf
}

// compareDialPlain opens an ADBC connection without credentials to a Flight SQL
// server on addr, closed at b's cleanup.
func compareDialPlain(b *testing.B, addr string) adbc.Connection {
	b.Helper()
	_, conn := benchOpen(b, "grpc://"+addr, "")
	return conn
}

// compareMinimalPipe is the least a Flight SQL server over DuckDB can do: every
// statement's ticket runs one fixed query (SELECT * of one Parquet file) on
// an embedded DuckDB with the in-process lakegate's settings (2 threads,
// 1 GB, a 32 MB streaming buffer), and DoGet streams DuckDB's own Arrow
// conversion of each 2,048-row chunk, concatenated into batches of
// backend.MinBatchRows rows. It runs the query with DuckDB's streaming API,
// as lakegate does: duckdb-go's database/sql Arrow reader (Arrow.QueryContext)
// materialises the whole result before its first batch. No
// authentication, SQL gate, catalog, tickets or lockdown.
type compareMinimalPipe struct {
	flightsql.BaseServer
	query string
	db    mapping.Database
	conns chan *comparePipeConn
	srv   flight.Server
	addr  string
}

type comparePipeConn struct {
	c    mapping.Connection
	opts arrowmapping.ArrowOptions
}

func startCompareMinimalPipe(b *testing.B, parquetPath string) *compareMinimalPipe {
	p := &compareMinimalPipe{
		query: "SELECT * FROM read_parquet('" + strings.ReplaceAll(parquetPath, "'", "''") + "')",
		conns: make(chan *comparePipeConn, 4),
	}
	if mapping.Open("", &p.db) == mapping.StateError {
		b.Fatal("opening DuckDB")
	}
	closeConns := func(n int) {
		for range n {
			c := <-p.conns
			arrowmapping.DestroyArrowOptions(&c.opts)
			mapping.Disconnect(&c.c)
		}
		mapping.Close(&p.db)
	}
	for i := range cap(p.conns) {
		c := &comparePipeConn{}
		if mapping.Connect(p.db, &c.c) == mapping.StateError {
			closeConns(i)
			b.Fatal("connecting to DuckDB")
		}
		arrowmapping.ConnectionGetArrowOptions(c.c, &c.opts)
		p.conns <- c
		for _, s := range []string{"SET threads=2", "SET memory_limit='1GB'", "SET streaming_buffer_size='32MB'"} {
			if err := comparePipeExec(c.c, s); err != nil {
				closeConns(i + 1)
				b.Fatal(err)
			}
		}
	}
	p.srv = flight.NewServerWithMiddleware(nil,
		grpc.MaxRecvMsgSize(lgflight.MaxMessageBytes),
		grpc.MaxSendMsgSize(lgflight.MaxMessageBytes))
	p.srv.RegisterFlightService(flightsql.NewFlightServer(p))
	if err := p.srv.Init("127.0.0.1:0"); err != nil {
		closeConns(cap(p.conns))
		b.Fatal(err)
	}
	go func() { _ = p.srv.Serve() }()
	b.Cleanup(func() {
		p.srv.Shutdown()
		closeConns(cap(p.conns))
	})
	p.addr = p.srv.Addr().String()
	return p
}

// comparePipeExec runs a statement without a result.
func comparePipeExec(c mapping.Connection, sql string) error {
	var res mapping.Result
	defer mapping.DestroyResult(&res)
	if mapping.Query(c, sql, &res) == mapping.StateError {
		return fmt.Errorf("%s: %s", sql, mapping.ResultError(&res))
	}
	return nil
}

// GetFlightInfoStatement answers every statement with one endpoint.
func (p *compareMinimalPipe) GetFlightInfoStatement(_ context.Context, _ flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	tkt, err := flightsql.CreateStatementQueryTicket([]byte("q"))
	if err != nil {
		return nil, err
	}
	return &flight.FlightInfo{
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: tkt}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}, nil
}

// comparePipeStream is one running query of the pipe.
type comparePipeStream struct {
	conn   *comparePipeConn
	ps     mapping.PreparedStatement
	res    mapping.Result
	schema *arrow.Schema
}

// start prepares and starts the query in streaming mode and reads its schema.
func (s *comparePipeStream) start(query string) error {
	if mapping.Prepare(s.conn.c, query, &s.ps) == mapping.StateError {
		return fmt.Errorf("prepare: %s", mapping.PrepareError(s.ps))
	}
	var pending mapping.PendingResult
	defer mapping.DestroyPending(&pending)
	if bindings.PendingPreparedStreaming(s.ps, &pending) == mapping.StateError {
		return fmt.Errorf("pending: %s", mapping.PendingError(pending))
	}
	if mapping.ExecutePending(pending, &s.res) == mapping.StateError {
		return fmt.Errorf("execute: %s", mapping.ResultError(&s.res))
	}
	n := mapping.ColumnCount(&s.res)
	names := make([]string, n)
	types := make([]mapping.LogicalType, n)
	for i := range n {
		names[i] = mapping.ColumnName(&s.res, i)
		types[i] = mapping.ColumnLogicalType(&s.res, i)
	}
	schema, ed := arrowmapping.NewArrowSchema(s.conn.opts, types, names)
	for i := range types {
		mapping.DestroyLogicalType(&types[i])
	}
	if err := comparePipeError(ed); err != nil {
		return err
	}
	s.schema = schema
	return nil
}

// next returns the next chunk as DuckDB converts it to Arrow, nil at the end.
func (s *comparePipeStream) next() (arrow.RecordBatch, error) {
	chunk := mapping.FetchChunk(s.res)
	if chunk.Ptr == nil {
		if msg := mapping.ResultError(&s.res); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, nil
	}
	defer mapping.DestroyDataChunk(&chunk)
	rec, ed := arrowmapping.DataChunkToArrowArray(s.conn.opts, s.schema, chunk)
	if err := comparePipeError(ed); err != nil {
		if rec != nil {
			rec.Release()
		}
		return nil, err
	}
	return rec, nil
}

func (s *comparePipeStream) close() {
	mapping.DestroyResult(&s.res)
	mapping.DestroyPrepare(&s.ps)
}

func comparePipeError(ed mapping.ErrorData) error {
	defer mapping.DestroyErrorData(&ed)
	if !mapping.ErrorDataHasError(ed) {
		return nil
	}
	return errors.New(mapping.ErrorDataMessage(ed))
}

// DoGetStatement runs the fixed query and streams its coalesced batches.
func (p *compareMinimalPipe) DoGetStatement(ctx context.Context, _ flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	s := &comparePipeStream{conn: <-p.conns}
	if err := s.start(p.query); err != nil {
		s.close()
		p.conns <- s.conn
		return nil, nil, err
	}
	ch := make(chan flight.StreamChunk, 1)
	go func() {
		defer func() { s.close(); p.conns <- s.conn }()
		defer close(ch)
		send := func(c flight.StreamChunk) bool {
			select {
			case ch <- c:
				return true
			case <-ctx.Done():
				if c.Data != nil {
					c.Data.Release()
				}
				return false
			}
		}
		var pending []arrow.RecordBatch
		var rows int64
		flush := func() bool {
			defer func() {
				for _, r := range pending {
					r.Release()
				}
				pending, rows = pending[:0], 0
			}()
			if len(pending) == 0 {
				return true
			}
			rec, err := compareConcat(s.schema, pending, rows)
			if err != nil {
				send(flight.StreamChunk{Err: err})
				return false
			}
			return send(flight.StreamChunk{Data: rec})
		}
		for {
			rec, err := s.next()
			if err != nil {
				flush()
				send(flight.StreamChunk{Err: err})
				return
			}
			if rec == nil {
				break
			}
			pending = append(pending, rec)
			if rows += rec.NumRows(); rows >= backend.MinBatchRows && !flush() {
				return
			}
		}
		flush()
	}()
	return s.schema, ch, nil
}

// compareConcat concatenates recs (rows in all) column by column.
func compareConcat(schema *arrow.Schema, recs []arrow.RecordBatch, rows int64) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(recs))
	for i := range cols {
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// ---- SELECT 1 and the point query ----

// compareSQLitePointQuery is demoPointQuery on the SQLite server's copy of the table.
const compareSQLitePointQuery = "SELECT id, customer_id, amount, status FROM orders WHERE id = ?"

func comparePointQueries(b *testing.B) []compareRow {
	ctx := context.Background()
	srv := startServe(b)
	tok := srv.token(b, "analyst@demo")
	lgConn := benchConn(b, srv).conn
	lgPoint := openPrepared(b, srv.uri(), tok, demoPointQuery)

	upAddr := freeLoopbackAddr(b)
	startUpstream(b, upAddr)
	upConn, err := grpc.NewClient(upAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer upConn.Close()
	// The demo's sales.orders: 5,000 rows, one looked up by id.
	for _, q := range []string{
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount REAL, status TEXT)`,
		`INSERT INTO orders WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5000)
			SELECT i, 1 + (i * 7919) % 2000, 10 + (i * 37 % 10000) / 100.0,
			CASE i % 3 WHEN 0 THEN 'new' WHEN 1 THEN 'shipped' ELSE 'returned' END FROM r`,
	} {
		if _, err := flightsqlClient(upConn).ExecuteUpdate(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	sqConn := compareDialPlain(b, upAddr)
	sqPoint := openPrepared(b, "grpc://"+upAddr, "none", compareSQLitePointQuery)

	select1 := func(conn adbc.Connection) func(int64) (int64, error) {
		return func(int64) (int64, error) {
			rows, _, err := adbcRun(ctx, conn, "SELECT 1")
			return rows, err
		}
	}
	point := func(pc *preparedConn) func(int64) (int64, error) {
		return func(id int64) (int64, error) { return pc.run(ctx, id) }
	}
	// times runs op n times (ids 1..5000 in turn) and returns p50 and p99 in ms.
	times := func(what string, op func(int64) (int64, error), n int) (p50, p99 float64) {
		lat := make([]time.Duration, 0, n)
		for i := range n {
			t0 := time.Now()
			got, err := op(1 + int64(i)%5000)
			lat = append(lat, time.Since(t0))
			if err != nil || got != 1 {
				b.Fatalf("%s: %d rows, %v", what, got, err)
			}
		}
		slices.Sort(lat)
		return micros(percentile(lat, 50)) / 1e3, micros(percentile(lat, 99)) / 1e3
	}
	for _, w := range []struct {
		what string
		op   func(int64) (int64, error)
	}{{"lakegate SELECT 1", select1(lgConn)}, {"SQLite SELECT 1", select1(sqConn)},
		{"lakegate point", point(lgPoint)}, {"SQLite point", point(sqPoint)}} {
		times(w.what, w.op, 50) // warm-up
	}

	const base = "arrow-go's SQLite example server"
	s1p50 := compareRow{what: "SELECT 1, p50", unit: "ms", baseline: base, target: "report", metric: "select1-p50-x-sqlite"}
	s1p99 := compareRow{what: "SELECT 1, p99", unit: "ms", baseline: base, target: "report"}
	ptp50 := compareRow{what: "prepared point query, p50", unit: "ms", baseline: base, target: "report", metric: "point-p50-x-sqlite"}
	ptp99 := compareRow{what: "prepared point query, p99", unit: "ms", baseline: base, target: "report"}
	n := *comparePoints
	for r := range *compareRounds {
		var l50, l99, s50, s99, lp50, lp99, sp50, sp99 float64
		compareRotate(r,
			func() { l50, l99 = times("lakegate SELECT 1", select1(lgConn), n) },
			func() { s50, s99 = times("SQLite SELECT 1", select1(sqConn), n) })
		compareRotate(r,
			func() { lp50, lp99 = times("lakegate point", point(lgPoint), n) },
			func() { sp50, sp99 = times("SQLite point", point(sqPoint), n) })
		s1p50.add(l50, s50)
		s1p99.add(l99, s99)
		ptp50.add(lp50, sp50)
		ptp99.add(lp99, sp99)
		fmt.Fprintf(os.Stderr, "compare: round %d SELECT 1 p50 %.2f vs %.2f ms, point p50 %.2f vs %.2f ms\n", r+1, l50, s50, lp50, sp50)
	}
	noSecretsLogged(b, srv.stderr.String(), tok)
	return []compareRow{s1p50, s1p99, ptp50, ptp99}
}

// ---- ingest ----

func compareIngest(b *testing.B) []compareRow {
	ctx := context.Background()
	n := *compareRows
	srv := startServe(b)
	c := benchConn(b, srv)

	// DuckDB with the same two threads, reading the Arrow stream through
	// its Arrow scan and writing it with COPY, as lakegate's writer does:
	// zstd, row groups of 1Mi rows.
	connector, err := duckdbgo.NewConnector("", func(execer driver.ExecerContext) error {
		for _, s := range []string{"SET threads=2", "SET memory_limit='1GB'"} {
			if _, err := execer.ExecContext(ctx, s, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	conn, err := connector.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(); connector.Close() })
	ar, err := duckdbgo.NewArrowFromConn(conn)
	if err != nil {
		b.Fatal(err)
	}
	execer, ok := conn.(driver.ExecerContext)
	if !ok {
		b.Fatal("duckdb-go's connection is not a driver.ExecerContext")
	}
	dir := b.TempDir()

	table := 0
	lgIngest := func() float64 {
		table++
		rdr := newGenRows(n, false)
		defer rdr.Release()
		t0 := time.Now()
		got, err := c.ingest(ctx, "sales", fmt.Sprintf("compare_%d", table), adbc.OptionValueIngestModeCreate, rdr)
		d := time.Since(t0)
		if err != nil || got != n {
			b.Fatalf("lakegate ingest: %d rows, %v\n%s", got, err, srv.stderr.String())
		}
		return float64(rdr.bytes) / 1e6 / d.Seconds()
	}
	copyIngest := func() float64 {
		table++
		view := fmt.Sprintf("src_%d", table)
		out := filepath.Join(dir, view+".parquet")
		rdr := newGenRows(n, false)
		defer rdr.Release()
		t0 := time.Now()
		release, err := ar.RegisterView(rdr, view)
		if err != nil {
			b.Fatal(err)
		}
		_, err = execer.ExecContext(ctx, fmt.Sprintf(
			"COPY (SELECT * FROM %s) TO '%s' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1048576)", view, out), nil)
		release()
		d := time.Since(t0)
		if err != nil {
			b.Fatalf("DuckDB COPY: %v", err)
		}
		if rdr.next != n {
			b.Fatalf("DuckDB COPY read %d rows, want %d", rdr.next, n)
		}
		if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.Fatal(err)
		}
		return float64(rdr.bytes) / 1e6 / d.Seconds()
	}
	row := compareRow{what: fmt.Sprintf("ingest %s rows × 4", compareHumanRows(n)), unit: "MB/s",
		baseline: "DuckDB COPY of the Arrow stream to Parquet", target: "report", metric: "ingest-x-copy"}
	for r := range *compareRounds {
		var l, d float64
		compareRotate(r, func() { l = lgIngest() }, func() { d = copyIngest() })
		row.add(l, d)
		fmt.Fprintf(os.Stderr, "compare: round %d ingest: lakegate %.1f, DuckDB COPY %.1f MB/s\n", r+1, l, d)
	}
	return []compareRow{row}
}
