package upstream_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/example"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// engine is arrow-go's example SQLite Flight SQL server with the abilities a
// real engine has and the example lacks, each switchable: GetExecuteSchema
// (describe), a schema in the FlightInfo (infoSchema), and endpoint
// locations.
type engine struct {
	*example.SQLiteFlightSQLServer

	describe   bool
	infoSchema bool
	// schemaBytes, when set, is what GetSchemaStatement answers, as is.
	schemaBytes []byte

	mu        sync.Mutex
	locations [][]string // per endpoint; nil: the example's single endpoint
}

func newEngine(t testing.TB, describe, infoSchema bool) *engine {
	t.Helper()
	db, err := example.CreateDB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv, err := example.NewSQLiteFlightSQLServer(db)
	if err != nil {
		t.Fatal(err)
	}
	return &engine{SQLiteFlightSQLServer: srv, describe: describe, infoSchema: infoSchema}
}

func (e *engine) setLocations(locs [][]string) {
	e.mu.Lock()
	e.locations = locs
	e.mu.Unlock()
}

// handle is a statement ticket as the example server encodes it.
type handle []byte

func (h handle) GetStatementHandle() []byte { return h }

// schemaOf runs query just long enough to learn its schema.
func (e *engine) schemaOf(ctx context.Context, query string) (*arrow.Schema, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, ch, err := e.SQLiteFlightSQLServer.DoGetStatement(ctx, handle(":"+query))
	if err != nil {
		return nil, err
	}
	cancel()
	for c := range ch {
		if c.Data != nil {
			c.Data.Release()
		}
	}
	return s, nil
}

func (e *engine) GetSchemaStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if e.schemaBytes != nil {
		return &flight.SchemaResult{Schema: e.schemaBytes}, nil
	}
	if !e.describe {
		return e.SQLiteFlightSQLServer.GetSchemaStatement(ctx, cmd, desc)
	}
	s, err := e.schemaOf(ctx, cmd.GetQuery())
	if err != nil {
		return nil, err
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(s, memory.DefaultAllocator)}, nil
}

func (e *engine) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	info, err := e.SQLiteFlightSQLServer.GetFlightInfoStatement(ctx, cmd, desc)
	if err != nil {
		return nil, err
	}
	if e.infoSchema {
		s, err := e.schemaOf(ctx, cmd.GetQuery())
		if err != nil {
			return nil, err
		}
		info.Schema = flight.SerializeSchema(s, memory.DefaultAllocator)
	}
	e.mu.Lock()
	locs := e.locations
	e.mu.Unlock()
	if locs != nil {
		tkt := info.Endpoint[0].Ticket
		info.Endpoint = nil
		for _, uris := range locs {
			ep := &flight.FlightEndpoint{Ticket: tkt}
			for _, u := range uris {
				ep.Location = append(ep.Location, &flight.Location{Uri: u})
			}
			info.Endpoint = append(info.Endpoint, ep)
		}
	}
	return info, nil
}

// authRecorder records the authorization header of every call.
type authRecorder struct {
	mu    sync.Mutex
	calls []string // "method authorization"
	auth  []string
}

func (r *authRecorder) record(ctx context.Context, method string) {
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, method)
	r.auth = append(r.auth, md.Get("authorization")...)
	if len(md.Get("authorization")) == 0 {
		r.auth = append(r.auth, "")
	}
}

func (r *authRecorder) snapshot() (calls, auth []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...), append([]string(nil), r.auth...)
}

func (r *authRecorder) middleware() flight.ServerMiddleware {
	return flight.ServerMiddleware{
		Unary: func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			r.record(ctx, info.FullMethod)
			return h(ctx, req)
		},
		Stream: func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			r.record(ss.Context(), info.FullMethod)
			return h(srv, ss)
		},
	}
}

// running is an engine served on a real TCP listener.
type running struct {
	addr string
	rec  *authRecorder
	stop func()
}

// serve serves eng on addr ("127.0.0.1:0" or an address to listen on again)
// until stop or the end of the test.
func serve(t testing.TB, addr string, eng *engine, opts ...grpc.ServerOption) *running {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rec := &authRecorder{}
	m := rec.middleware()
	opts = append(opts, grpc.ChainUnaryInterceptor(m.Unary), grpc.ChainStreamInterceptor(m.Stream))
	srv := grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(srv, flightsql.NewFlightServer(eng))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	stop := sync.OnceFunc(func() {
		srv.Stop()
		<-done
	})
	t.Cleanup(stop)
	return &running{addr: lis.Addr().String(), rec: rec, stop: stop}
}

// countingListener accepts connections, counts and closes them: a service
// that must never be contacted.
type countingListener struct {
	addr     string
	accepted atomic.Int64
	stop     func()
}

func listenCounting(t testing.TB) *countingListener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{addr: lis.Addr().String()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			cl.accepted.Add(1)
			c.Close()
		}
	}()
	cl.stop = sync.OnceFunc(func() {
		lis.Close()
		<-done
	})
	t.Cleanup(cl.stop)
	return cl
}
