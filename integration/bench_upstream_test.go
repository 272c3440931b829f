package integration_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// upstreamBenchRows is the size of the upstream result read in
// BenchmarkUpstream5M.
const upstreamBenchRows = 5_000_000

// BenchmarkUpstream5M reads a 5M-row table of the example SQLite engine
// directly from the engine and through the gateway (an upstream catalog),
// with the same Flight SQL client, in one run. Sub-benchmarks report rows/s;
// "gateway" also reports x-direct, its rows/s over the median rows/s of
// "direct" in the same process.
func BenchmarkUpstream5M(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 5M rows into SQLite; skipped under -short")
	}
	ctx := context.Background()
	upAddr := freeLoopbackAddr(b)
	startUpstream(b, upAddr)
	upConn, err := grpc.NewClient(upAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		b.Fatal(err)
	}
	defer upConn.Close()
	direct := &flightsql.Client{Client: flight.NewClientFromConn(upConn, nil)}
	for _, q := range []string{
		`CREATE TABLE big (id INTEGER, name TEXT, amount REAL)`,
		`INSERT INTO big WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5000000)
			SELECT i, 'name-' || i, i * 0.5 FROM r`,
	} {
		if _, err := direct.ExecuteUpdate(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	creds := b.TempDir()
	if err := os.WriteFile(filepath.Join(creds, "t"), []byte("token\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	srv := startServe(b, "--upstream-allow", upAddr, "--upstream-credentials-dir", creds)
	env, node := serveMetasrv(b, srv)
	const ml = "/api/metalakes/demo"
	env.must(b, node, "POST", ml+"/catalogs", map[string]any{"name": "ext", "type": "upstream",
		"properties": map[string]string{"upstream.address": upAddr, "upstream.dialect": "sqlite", "upstream.tls": "false", "upstream.credentials": "t"}})
	env.must(b, node, "POST", ml+"/catalogs/ext/schemas", map[string]any{"name": "sales"})
	env.must(b, node, "POST", ml+"/catalogs/ext/schemas/sales/tables", map[string]any{"name": "big",
		"columns":    []map[string]any{{"name": "id", "type": "int64"}, {"name": "name", "type": "utf8"}, {"name": "amount", "type": "float64"}},
		"properties": map[string]string{"upstream_name": "main.big"}})

	gwConn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		b.Fatal(err)
	}
	defer gwConn.Close()
	gateway := &flightsql.Client{Client: flight.NewClientFromConn(gwConn, nil)}
	gctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+srv.token(b, "admin@demo"))
	var hdr metadata.MD
	if _, err := gateway.SetSessionOptions(gctx, &flight.SetSessionOptionsRequest{SessionOptions: map[string]*flight.SessionOptionValue{
		"catalog": stringOption("ext")}}, grpc.Header(&hdr)); err != nil {
		b.Fatal(err)
	}
	gctx = metadata.AppendToOutgoingContext(gctx, "cookie", cookieNameValue(hdr.Get("set-cookie")[0]))

	read := func(b *testing.B, cl *flightsql.Client, ctx context.Context, sql string) int64 {
		info, err := cl.Execute(ctx, sql)
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for _, ep := range info.Endpoint {
			rdr, err := cl.DoGet(ctx, ep.Ticket)
			if err != nil {
				b.Fatal(err)
			}
			for rdr.Next() {
				n += rdr.RecordBatch().NumRows()
			}
			if err := rdr.Err(); err != nil {
				b.Fatal(err)
			}
			rdr.Release()
		}
		if n != upstreamBenchRows {
			b.Fatalf("read %d rows", n)
		}
		return n
	}
	var directRates []float64
	b.Run("direct", func(b *testing.B) {
		var rows int64
		start := time.Now()
		for b.Loop() {
			rows += read(b, direct, ctx, "SELECT id, name, amount FROM big")
		}
		r := float64(rows) / time.Since(start).Seconds()
		directRates = append(directRates, r)
		b.ReportMetric(r, "rows/s")
	})
	b.Run("gateway", func(b *testing.B) {
		var rows int64
		start := time.Now()
		for b.Loop() {
			rows += read(b, gateway, gctx, "SELECT id, name, amount FROM sales.big")
		}
		r := float64(rows) / time.Since(start).Seconds()
		b.ReportMetric(r, "rows/s")
		if len(directRates) > 0 {
			sorted := slices.Sorted(slices.Values(directRates))
			b.ReportMetric(r/sorted[len(sorted)/2], "x-direct")
		}
	})
}
