package flight

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/flight/backend"
)

// panicCatalog panics in List, with a value that must not reach a caller.
type panicCatalog struct{ metricsCatalog }

func (*panicCatalog) List(context.Context, backend.Caller) (backend.Listing, error) {
	panic("listing of tenant acme: secret_column")
}

// TestHandlerPanicIsOneRequestsInternalError: a handler that panics fails its
// own request with Internal and a generic message, is logged with its stack
// and request id, and the server keeps serving.
func TestHandlerPanicIsOneRequestsInternalError(t *testing.T) {
	cl, logs := servedLogging(t, &panicCatalog{})
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+aliceToken, RequestIDHeader, "panic-1")
	for i := range 2 { // the server is still there for the second
		info, err := cl.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{})
		if err != nil {
			t.Fatalf("call %d: GetDBSchemas: %v", i, err)
		}
		rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
		if err == nil {
			for rdr.Next() {
			}
			err = rdr.Err()
			rdr.Release()
		}
		if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "internal error" {
			t.Fatalf("call %d: %v, want Internal \"internal error\"", i, err)
		}
	}
	var found bool
	for _, l := range logs.lines(t) {
		if l["msg"] == "request panicked" {
			found = true
			if l["request_id"] != "panic-1" || !strings.Contains(l["stack"].(string), "panicCatalog") || !strings.Contains(l["panic"].(string), "secret_column") {
				t.Errorf("panic log = %v", l)
			}
		}
	}
	if !found {
		t.Fatalf("no panic logged:\n%s", logs.String())
	}
}

// panicReader is a RecordReader whose Next panics.
type panicReader struct{ array.RecordReader }

func (panicReader) Schema() *arrow.Schema { return arrow.NewSchema(nil, nil) }
func (panicReader) Next() bool            { panic("reader") }
func (panicReader) Release()              {}

// TestProducerPanicEndsItsStream: a panic while producing a result ends that
// stream with Internal and closes the statement.
func TestProducerPanicEndsItsStream(t *testing.T) {
	s, _ := newTestServer(t, &metricsCatalog{}, func(c *Config) { c.Logger = slog.New(slog.DiscardHandler) })
	closed := false
	_, ch := s.stream(&openStatement{ctx: context.Background(), rdr: panicReader{}, close: func() { closed = true }})
	var errs []error
	for c := range ch {
		errs = append(errs, c.Err)
	}
	if len(errs) != 1 || status.Code(errs[0]) != codes.Internal {
		t.Fatalf("stream ended with %v, want one Internal error", errs)
	}
	if !closed {
		t.Fatal("statement not closed")
	}
}
