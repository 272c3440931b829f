package integration_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// flightSQLAs connects arrow-go's Flight SQL client to srv (closed when t
// ends) and returns it with a context presenting token.
func flightSQLAs(t testing.TB, srv *server, token string) (*flightsql.Client, context.Context) {
	t.Helper()
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return flightsqlClient(conn), metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

// flightsqlClient wraps an existing connection in arrow-go's Flight SQL client.
func flightsqlClient(conn *grpc.ClientConn) *flightsql.Client {
	return &flightsql.Client{Client: flight.NewClientFromConn(conn, nil)}
}

// redeemRows redeems tkt with DoGet and returns the number of rows
// streamed.
func redeemRows(ctx context.Context, cl *flightsql.Client, tkt *flight.Ticket) (int64, error) {
	rdr, err := cl.DoGet(ctx, tkt)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	return countRows(rdr)
}

// countRows drains rdr and returns the number of rows it read.
func countRows(rdr interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
}) (int64, error) {
	var n int64
	for rdr.Next() {
		n += rdr.RecordBatch().NumRows()
	}
	return n, rdr.Err()
}

func healthCheck(ctx context.Context, conn *grpc.ClientConn) error {
	_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "arrow.flight.protocol.FlightService"})
	return err
}
