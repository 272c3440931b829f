package integration_test

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

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
