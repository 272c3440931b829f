package integration_test

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// flightsqlClient wraps an existing connection in arrow-go's Flight SQL client.
func flightsqlClient(conn *grpc.ClientConn) *flightsql.Client {
	return &flightsql.Client{Client: flight.NewClientFromConn(conn, nil)}
}

func healthCheck(ctx context.Context, conn *grpc.ClientConn) error {
	_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "arrow.flight.protocol.FlightService"})
	return err
}
