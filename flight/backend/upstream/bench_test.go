package upstream_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"lakegate/flight/backend/upstream"
)

// BenchmarkUpstreamExecute reads a 200,000-row table from the example
// engine, directly with a flightsql client (Execute + DoGet of every
// endpoint) and through the Pool, and reports rows/s for each.
func BenchmarkUpstreamExecute(b *testing.B) {
	const n = 200_000
	eng := serve(b, "127.0.0.1:0", newEngine(b, false, false))
	direct, err := flightsql.NewClient(eng.addr, nil, nil,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { direct.Close() })
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)

	if _, err := direct.ExecuteUpdate(ctx, "CREATE TABLE bench (id INTEGER, name TEXT, v REAL)"); err != nil {
		b.Fatalf("the example engine runs updates: %v", err)
	}
	got, err := direct.ExecuteUpdate(ctx, "INSERT INTO bench (id, name, v) "+
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < "+strconv.Itoa(n)+") "+
		"SELECT x, 'row ' || x, x * 0.5 FROM c")
	if err != nil {
		b.Fatalf("INSERT … WITH RECURSIVE on the example engine: %v", err)
	}
	if got != n {
		b.Fatalf("inserted %d rows, want %d", got, n)
	}
	const q = "SELECT id, name, v FROM bench"

	check := func(b *testing.B, rows int64) {
		if rows != n {
			b.Fatalf("read %d rows, want %d", rows, n)
		}
	}
	report := func(b *testing.B, loops int) {
		b.ReportMetric(float64(n)*float64(loops)/b.Elapsed().Seconds(), "rows/s")
	}

	b.Run("direct", func(b *testing.B) {
		loops := 0
		for b.Loop() {
			info, err := direct.Execute(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			var rows int64
			for _, ep := range info.Endpoint {
				rdr, err := direct.DoGet(ctx, ep.Ticket)
				if err != nil {
					b.Fatal(err)
				}
				for rdr.Next() {
					rows += rdr.RecordBatch().NumRows()
				}
				if err := rdr.Err(); err != nil {
					b.Fatal(err)
				}
				rdr.Release()
			}
			check(b, rows)
			loops++
		}
		report(b, loops)
	})

	b.Run("pool", func(b *testing.B) {
		dir := b.TempDir()
		if err := os.WriteFile(filepath.Join(dir, credsName), []byte(token), 0o600); err != nil {
			b.Fatal(err)
		}
		p := upstream.New(upstream.Config{Allow: []string{eng.addr}, CredentialsDir: dir})
		defer p.Close()
		t := upstream.Target{Address: eng.addr, Credentials: credsName}
		loops := 0
		for b.Loop() {
			rr, err := p.Execute(context.Background(), t, q)
			if err != nil {
				b.Fatal(err)
			}
			var rows int64
			for rr.Next() {
				rows += rr.RecordBatch().NumRows()
			}
			if err := rr.Err(); err != nil {
				b.Fatal(err)
			}
			rr.Release()
			check(b, rows)
			loops++
		}
		report(b, loops)
	})
}
