package gateway_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"lakegate/flight/gateway"
)

// recordingSink is an accesslog.Sink keeping what it was given.
type recordingSink struct {
	mu     sync.Mutex
	writes []sinkWrite
}

type sinkWrite struct {
	tenant string
	bytes  int
	events int
}

func (s *recordingSink) Write(_ context.Context, tenant string, file []byte, events int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, sinkWrite{tenant: tenant, bytes: len(file), events: events})
	return nil
}

func (s *recordingSink) all() []sinkWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkWrite(nil), s.writes...)
}

// TestGatewayAccessLogFlushedAtShutdown: a gateway with an access log hands
// its Flight server the log, and Shutdown — after the server has drained —
// writes every event still batched (the flush interval is an hour here),
// so a graceful stop loses none.
func TestGatewayAccessLogFlushedAtShutdown(t *testing.T) {
	ms := startFakeMetasrv(t, http.StatusOK)
	cfg, tok := baseConfig(t, ms.url)
	sink := &recordingSink{}
	cfg.AccessLog = &gateway.AccessLogConfig{SpoolDir: t.TempDir(), FlushInterval: time.Hour, Sink: sink}
	cfg.GatewayID = "gw1"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	addr, served := serve(t, serveCtx, g)
	<-g.Ready()
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	qctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	for range 3 {
		info, err := cl.Execute(qctx, "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := cl.DoGet(qctx, info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
	}
	if w := sink.all(); len(w) != 0 {
		t.Fatalf("written before shutdown with an hour's interval: %+v", w)
	}
	stop()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := g.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	w := sink.all()
	events := 0
	for _, x := range w {
		if x.tenant != "acme" || x.bytes == 0 {
			t.Errorf("write %+v, want a file of tenant acme", x)
		}
		events += x.events
	}
	if events != 3 {
		t.Fatalf("writes %+v: %d events, want the 3 queries'", w, events)
	}
}
