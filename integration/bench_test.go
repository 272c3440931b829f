package integration_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	drv "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"lakegate/authz"
	lgflight "lakegate/flight"
	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/gateway"
	"lakegate/flight/ticket"
	"lakegate/stage"
)

// The benchmarks run an IN-PROCESS lakegate server (assembled by
// flight/gateway, as `lakegate serve` assembles its own) so that process start-up and scheduling
// noise of a child process stay out of the numbers. One fixture is shared by
// every benchmark of the process:
//
//   - benchLakegate: engine + local stage (tablefiles, at the engine's root)
//     + an in-memory catalog (benchCatalog, standing in for metasrv) +
//     principal map + ticket ring + Flight SQL server on 127.0.0.1:0
//     (BenchmarkSelect1 needs only this);
//   - benchWideTable: the table bench.wide, 10M rows × 4 columns (BIGINT,
//     BIGINT, DOUBLE, BIGINT: 320 MB of Arrow buffers), written as one
//     Parquet file of the tenant's stage (Engine.WriteFile) and committed as
//     version 1 in the catalog, only when a benchmark that reads it runs;
//   - startBareFlight: the batches of SELECT * FROM bench.wide, materialised
//     once through the engine's Execute and kept in memory, served by a bare
//     arrow-go Flight server (BenchmarkBareFlight10M only).
//
// The fixture lives in a directory next to the harness's lakegate binary,
// which TestMain removes when the run ends.

const (
	benchTenant    = "bench"
	benchPrincipal = "bench@bench"
	benchNamespace = "bench"
	wideRows       = 10_000_000
	// wideQuery makes the rows of the wide tables: %d of them.
	wideQuery = `SELECT i AS a, i*2 AS b, CAST(i AS DOUBLE)/3 AS c, i %% 1000 AS d FROM range(%d) t(i)`
)

// benchEnv is the in-process lakegate server.
type benchEnv struct {
	dir     string
	engine  *duckdb.Engine
	catalog *benchCatalog
	gw      *gateway.Gateway
	addr    string
	token   string
}

// benchCatalog is a fixed in-memory backend.Governance: every caller of the
// bench tenant may read every table it holds, and nothing is written.
type benchCatalog struct {
	mu     sync.Mutex
	tables map[backend.TableName]backend.TableVersion
}

func (c *benchCatalog) add(v backend.TableVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tables[v.Name] = v
}

func (c *benchCatalog) List(_ context.Context, caller backend.Caller) (backend.Listing, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if caller.Tenant != benchTenant {
		return backend.Listing{}, nil
	}
	l := backend.Listing{Schemas: []string{benchNamespace}}
	for _, v := range c.tables {
		v.Files = nil
		l.Tables = append(l.Tables, v)
	}
	slices.SortFunc(l.Tables, func(a, b backend.TableVersion) int {
		if a.Name.Schema != b.Name.Schema {
			return strings.Compare(a.Name.Schema, b.Name.Schema)
		}
		return strings.Compare(a.Name.Name, b.Name.Name)
	})
	return l, nil
}

func (c *benchCatalog) Resolve(_ context.Context, caller backend.Caller, refs []backend.TableRef) ([]*backend.TableVersion, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*backend.TableVersion, len(refs))
	for i, r := range refs {
		if v, ok := c.tables[r.Name]; ok && caller.Tenant == benchTenant && !r.Write {
			out[i] = &v
		}
	}
	return out, nil
}

func (c *benchCatalog) Commit(context.Context, backend.Caller, backend.Commit) (uint64, error) {
	return 0, backend.ErrForbidden
}

func (c *benchCatalog) Drop(context.Context, backend.Caller, backend.TableName) (bool, error) {
	return false, backend.ErrForbidden
}

var (
	benchEnvOnce sync.Once
	benchEnvVal  *benchEnv
	benchEnvErr  error

	benchWideOnce sync.Once
	benchWideVal  backend.LocalTable
	benchWideErr  error

	benchBareOnce sync.Once
	benchBareVal  *bareFlight
	benchBareErr  error

	// bareMBps collects the throughput of BenchmarkBareFlight10M runs so that
	// BenchmarkSelectStar10M (declared after it, so run after it) can report
	// its ratio to the bare server.
	bareMBps []float64
)

// benchLakegate returns the shared in-process server, starting it on first use.
func benchLakegate(b *testing.B) *benchEnv {
	b.Helper()
	benchEnvOnce.Do(func() { benchEnvVal, benchEnvErr = startBenchEnv() })
	if benchEnvErr != nil {
		b.Fatalf("starting the in-process lakegate: %v", benchEnvErr)
	}
	return benchEnvVal
}

func startBenchEnv() (*benchEnv, error) {
	// TestMain removes the binary's directory after m.Run: the fixture goes
	// with it.
	parent := ""
	if lakegateBin != "" {
		parent = filepath.Dir(lakegateBin)
	}
	dir, err := os.MkdirTemp(parent, "bench-")
	if err != nil {
		return nil, err
	}
	tok, err := authz.NewToken(rand.Reader)
	if err != nil {
		return nil, err
	}
	mapPath := filepath.Join(dir, "principals.yaml")
	err = authz.WritePrincipalMap(mapPath, []authz.PrincipalSpec{{
		ID: benchPrincipal, Tenant: benchTenant, Role: "user",
		Namespaces:  []string{benchNamespace},
		TokenHashes: []string{authz.HashToken(tok).String()},
	}})
	if err != nil {
		return nil, err
	}
	principals, err := authz.LoadPrincipalMap(mapPath)
	if err != nil {
		return nil, err
	}
	ring, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		return nil, err
	}
	// Assembled as `lakegate serve` assembles its gateway, with its
	// defaults (1GB, 2 threads, 5 min timeout) and a local stage, whose
	// root is the engine's: the engine reads committed files where they are.
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	cat := &benchCatalog{tables: map[backend.TableName]backend.TableVersion{}}
	gw, err := gateway.New(context.Background(), gateway.Config{
		Principals: principals,
		Tickets:    ring,
		Stage:      stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: filepath.Join(root, "stage")}},
		Governance: cat,
		Version:    "bench",
	})
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = gw.Shutdown(context.Background())
		return nil, err
	}
	go func() { _ = gw.Serve(context.Background(), lis) }() // lives until the process exits
	return &benchEnv{dir: dir, engine: gw.Engine(), catalog: cat, gw: gw, addr: lis.Addr().String(), token: tok}, nil
}

// benchWideTable writes and commits bench.wide once per process and returns
// its version with the local path of its file.
func benchWideTable(b *testing.B, env *benchEnv) backend.LocalTable {
	b.Helper()
	benchWideOnce.Do(func() {
		start := time.Now()
		benchWideVal, benchWideErr = writeWide(env)
		if benchWideErr == nil {
			fmt.Fprintf(os.Stderr, "bench: wrote bench.wide (%d rows) in %s\n", wideRows, time.Since(start).Round(time.Millisecond))
		}
	})
	if benchWideErr != nil {
		b.Fatalf("writing bench.wide: %v", benchWideErr)
	}
	return benchWideVal
}

// writeWide writes wideRows rows of wideQuery as the one data file of a new table
// version and commits it in the bench catalog as bench.wide version 1.
func writeWide(env *benchEnv) (backend.LocalTable, error) {
	return writeWideShaped(env, "wide", wideRows)
}

// writeWideShaped writes n rows of wideQuery's shape as the one data file
// of table bench.<name> version 1 (storage id name) and commits it in the
// bench catalog.
func writeWideShaped(env *benchEnv, name string, n int64) (backend.LocalTable, error) {
	storageID := name
	seg, err := stage.NewSegment()
	if err != nil {
		return backend.LocalTable{}, err
	}
	key, err := stage.TableFileKey(storageID, seg, 0)
	if err != nil {
		return backend.LocalTable{}, err
	}
	path, err := env.engine.WriteFile(context.Background(), benchTenant, key, fmt.Sprintf(wideQuery, n))
	if err != nil {
		return backend.LocalTable{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return backend.LocalTable{}, err
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return backend.LocalTable{}, err
	}
	v := backend.TableVersion{
		Name:      backend.TableName{Schema: benchNamespace, Name: name},
		StorageID: storageID,
		Version:   1,
		Columns: []backend.Column{
			{Name: "a", Type: "int64"}, {Name: "b", Type: "int64"}, {Name: "c", Type: "float64"}, {Name: "d", Type: "int64"},
		},
		Files: []backend.DataFile{{Key: key, Size: size, Rows: n, SHA256: hex.EncodeToString(h.Sum(nil))}},
	}
	env.catalog.add(v)
	return backend.LocalTable{ID: v.ID(), Columns: v.Columns, Paths: []string{path}}, nil
}

// benchDial opens an ADBC connection to the in-process server. Unlike the
// harness's dial it uses the plain Go allocator (the checked allocator's
// bookkeeping is not what is being measured).
func benchDial(b *testing.B, env *benchEnv) adbc.Connection {
	b.Helper()
	_, conn := benchOpen(b, "grpc://"+env.addr, env.token)
	return conn
}

// benchOpen opens an ADBC database and connection to the Flight SQL
// server at uri with the plain Go allocator and session cookies, as the
// bearer of token ("" for none), both closed at b's cleanup.
func benchOpen(b testing.TB, uri, token string) (adbc.Database, adbc.Connection) {
	b.Helper()
	opts := map[string]string{adbc.OptionKeyURI: uri, drv.OptionCookieMiddleware: adbc.OptionValueEnabled}
	if token != "" {
		opts[drv.OptionAuthorizationHeader] = "Bearer " + token
	}
	db, err := drv.NewDriver(memory.DefaultAllocator).NewDatabase(opts)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := db.Open(context.Background())
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn.Close()
		db.Close()
	})
	return db, conn
}

// adbcRun runs sql on conn and drains the result, returning rows and the
// buffer bytes of the batches received.
func adbcRun(ctx context.Context, conn adbc.Connection, sql string) (rows, bytes int64, err error) {
	stmt, err := conn.NewStatement()
	if err != nil {
		return 0, 0, err
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery(sql); err != nil {
		return 0, 0, err
	}
	rdr, _, err := stmt.ExecuteQuery(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rows += rec.NumRows()
		bytes += batchBytes(rec)
	}
	return rows, bytes, rdr.Err()
}

// batchBytes is the size of rec's buffers, children and dictionaries included
// (the measure the engine's coalescer uses).
func batchBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += arrayDataBytes(col.Data())
	}
	return n
}

func arrayDataBytes(d arrow.ArrayData) int64 {
	if d == nil {
		return 0
	}
	var n int64
	for _, buf := range d.Buffers() {
		if buf != nil {
			n += int64(buf.Len())
		}
	}
	for _, ch := range d.Children() {
		n += arrayDataBytes(ch)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += arrayDataBytes(d.Dictionary())
	}
	return n
}

// percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkSelect1 measures one SELECT 1 over ADBC against the in-process
// server: GetFlightInfo (authenticate, parse, gate, describe, seal a ticket)
// plus DoGet (open the ticket, execute, stream one batch). It reports the
// median and 99th percentile of the per-operation latency.
func BenchmarkSelect1(b *testing.B) {
	env := benchLakegate(b)
	conn := benchDial(b, env)
	ctx := context.Background()
	// Warm-up outside the measurement: connection set-up, the tenant's engine
	// instance, the DuckDB connection pool, the Go heap.
	for range 20 {
		if rows, _, err := adbcRun(ctx, conn, "SELECT 1"); err != nil || rows != 1 {
			b.Fatalf("SELECT 1: %d rows, %v", rows, err)
		}
	}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		rows, _, err := adbcRun(ctx, conn, "SELECT 1")
		lat = append(lat, time.Since(start))
		if err != nil || rows != 1 {
			b.Fatalf("SELECT 1: %d rows, %v", rows, err)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(micros(percentile(lat, 50)), "p50-µs")
	b.ReportMetric(micros(percentile(lat, 99)), "p99-µs")
}

// BenchmarkBareFlight10M is the baseline for BenchmarkSelectStar10M: the same
// batches (SELECT * FROM bench.wide through the engine, materialised in
// memory once) streamed by a bare arrow-go Flight server with no
// authentication, SQL, tickets or engine in the path, read by an arrow-go
// Flight client over loopback.
func BenchmarkBareFlight10M(b *testing.B) {
	env := benchLakegate(b)
	wide := benchWideTable(b, env)
	benchBareOnce.Do(func() { benchBareVal, benchBareErr = startBareFlight(env, wide) })
	if benchBareErr != nil {
		b.Fatalf("starting the bare Flight server: %v", benchBareErr)
	}
	bare := benchBareVal
	cl, err := flight.NewClientWithMiddleware(bare.addr, nil, nil,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(lgflight.MaxMessageBytes)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	ctx := context.Background()
	// One full read outside the measurement, as in BenchmarkSelectStar10M.
	if rows, _, err := bareRead(ctx, cl); err != nil || rows != wideRows {
		b.Fatalf("warm-up bare DoGet: %d rows, %v", rows, err)
	}

	var totalRows, totalBytes int64
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		rows, bytes, err := bareRead(ctx, cl)
		elapsed += time.Since(start)
		if err != nil || rows != wideRows {
			b.Fatalf("bare DoGet: %d rows, %v", rows, err)
		}
		totalRows += rows
		totalBytes += bytes
	}
	mbps := float64(totalBytes) / 1e6 / elapsed.Seconds()
	b.ReportMetric(float64(totalRows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(mbps, "MB/s")
	bareMBps = append(bareMBps, mbps)
}

// BenchmarkSelectStar10M streams SELECT * FROM bench.wide (10M rows × 4
// columns) through lakegate to an ADBC client. When BenchmarkBareFlight10M
// ran earlier in the same process it also reports "x-bare": this run's MB/s
// over the median MB/s of the bare runs, for reference (the target is against
// the minimal pipe: make bench-compare).
func BenchmarkSelectStar10M(b *testing.B) {
	env := benchLakegate(b)
	benchWideTable(b, env)
	conn := benchDial(b, env)
	ctx := context.Background()
	// One full read outside the measurement: the tenant instance, the table's
	// view, DuckDB's file cache and the Go heap are warm afterwards (the
	// first read of a run is otherwise up to twice as slow).
	if rows, _, err := adbcRun(ctx, conn, "SELECT * FROM bench.wide"); err != nil || rows != wideRows {
		b.Fatalf("warm-up SELECT *: %d rows, %v", rows, err)
	}

	var totalRows, totalBytes int64
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		rows, bytes, err := adbcRun(ctx, conn, "SELECT * FROM bench.wide")
		elapsed += time.Since(start)
		if err != nil || rows != wideRows {
			b.Fatalf("SELECT *: %d rows, %v", rows, err)
		}
		totalRows += rows
		totalBytes += bytes
	}
	mbps := float64(totalBytes) / 1e6 / elapsed.Seconds()
	b.ReportMetric(float64(totalRows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(mbps, "MB/s")
	if len(bareMBps) > 0 {
		sorted := slices.Sorted(slices.Values(bareMBps))
		b.ReportMetric(mbps/sorted[len(sorted)/2], "x-bare")
	}
}

// BenchmarkEngine10M reads SELECT * FROM bench.wide straight from the
// engine's Execute, with no Flight, gRPC or client in the path: the ceiling
// the lakegate path cannot beat, for telling engine cost from transport cost.
func BenchmarkEngine10M(b *testing.B) {
	env := benchLakegate(b)
	wide := benchWideTable(b, env)
	ctx := context.Background()
	rels, err := env.engine.Bind(ctx, benchTenant, []backend.LocalTable{wide})
	if err != nil {
		b.Fatal(err)
	}
	sql := relationSelect(rels[0])
	run := func() (rows, bytes int64, err error) {
		rdr, err := env.engine.Execute(ctx, benchTenant, sql, nil)
		if err != nil {
			return 0, 0, err
		}
		defer rdr.Release()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rows += rec.NumRows()
			bytes += batchBytes(rec)
		}
		return rows, bytes, rdr.Err()
	}
	if rows, _, err := run(); err != nil || rows != wideRows {
		b.Fatalf("warm-up Execute: %d rows, %v", rows, err)
	}
	var totalRows, totalBytes int64
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		rows, bytes, err := run()
		elapsed += time.Since(start)
		if err != nil || rows != wideRows {
			b.Fatalf("Execute: %d rows, %v", rows, err)
		}
		totalRows += rows
		totalBytes += bytes
	}
	b.ReportMetric(float64(totalRows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(totalBytes)/1e6/elapsed.Seconds(), "MB/s")
}

// relationSelect is SELECT * over an engine relation (what the gate renders
// for SELECT * FROM <table>, minus masks and filters).
func relationSelect(rel backend.Relation) string {
	return fmt.Sprintf(`SELECT * FROM "%s"."%s"`, rel.Schema, rel.Name)
}

// bareFlight is a plain arrow-go Flight server whose DoGet streams batches
// held in memory.
type bareFlight struct {
	flight.BaseFlightServer
	schema *arrow.Schema
	recs   []arrow.RecordBatch
	srv    flight.Server
	addr   string
}

// startBareFlight materialises SELECT * FROM bench.wide through the engine
// (the batches lakegate would send) and serves them.
func startBareFlight(env *benchEnv, wide backend.LocalTable) (*bareFlight, error) {
	ctx := context.Background()
	rels, err := env.engine.Bind(ctx, benchTenant, []backend.LocalTable{wide})
	if err != nil {
		return nil, err
	}
	rdr, err := env.engine.Execute(ctx, benchTenant, relationSelect(rels[0]), nil)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	bf := &bareFlight{schema: rdr.Schema()}
	var rows int64
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		bf.recs = append(bf.recs, rec)
		rows += rec.NumRows()
	}
	if err := rdr.Err(); err != nil {
		return nil, err
	}
	if rows != wideRows {
		return nil, fmt.Errorf("materialised %d rows, want %d", rows, wideRows)
	}
	bf.srv = flight.NewServerWithMiddleware(nil,
		grpc.MaxRecvMsgSize(lgflight.MaxMessageBytes),
		grpc.MaxSendMsgSize(lgflight.MaxMessageBytes))
	if err := bf.srv.Init("127.0.0.1:0"); err != nil {
		return nil, err
	}
	bf.srv.RegisterFlightService(bf)
	go func() { _ = bf.srv.Serve() }() // lives until the process exits
	bf.addr = bf.srv.Addr().String()
	return bf, nil
}

// DoGet streams every batch, whatever the ticket.
func (bf *bareFlight) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	w := flight.NewRecordWriter(stream, ipc.WithSchema(bf.schema))
	for _, rec := range bf.recs {
		if err := w.Write(rec); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// bareRead reads one DoGet stream from the bare server.
func bareRead(ctx context.Context, cl flight.Client) (rows, bytes int64, err error) {
	stream, err := cl.DoGet(ctx, &flight.Ticket{Ticket: []byte("wide")})
	if err != nil {
		return 0, 0, err
	}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return 0, 0, err
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rows += rec.NumRows()
		bytes += batchBytes(rec)
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return rows, bytes, err
	}
	return rows, bytes, nil
}

func (c *benchCatalog) Generation(context.Context, string) (uint64, error) { return 0, nil }
