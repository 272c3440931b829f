package integration_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// slowQuery would run for hours: a three-way cross join of 5,000 rows.
const slowQuery = "SELECT count(*) FROM sales.orders a, sales.orders b, sales.orders c"

func TestCancelAndDeadline(t *testing.T) {
	srv := startServe(t, "--query-timeout", "2s")
	cl, ctx := flightSQLAs(t, srv, srv.token(t, "analyst@demo"))

	t.Run("CancelFlightInfo stops the query", func(t *testing.T) {
		info, err := cl.Execute(ctx, slowQuery)
		if err != nil {
			t.Fatal(err)
		}
		// The DoGet may start before or after the cancel lands; both orders
		// must end in Canceled.
		done := make(chan error, 1)
		go func() {
			rdr, err := cl.DoGet(ctx, info.GetEndpoint()[0].GetTicket())
			if err == nil {
				for rdr.Next() {
				}
				err = rdr.Err()
				rdr.Release()
			}
			done <- err
		}()
		res, err := cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
		if err != nil || res.GetStatus() != flight.CancelStatusCancelled {
			t.Fatalf("cancel: %v %v", res, err)
		}
		if err := <-done; status.Code(err) != codes.Canceled {
			t.Fatalf("DoGet after cancel: %v, want Canceled", err)
		}
	})

	t.Run("another principal cannot cancel", func(t *testing.T) {
		info, err := cl.Execute(ctx, "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		hrCtx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+srv.token(t, "hr@demo"))
		if _, err := cl.CancelFlightInfo(hrCtx, &flight.CancelFlightInfoRequest{Info: info}); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("foreign cancel: %v, want Unauthenticated", err)
		}
	})

	t.Run("query deadline", func(t *testing.T) {
		info, err := cl.Execute(ctx, slowQuery)
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := cl.DoGet(ctx, info.GetEndpoint()[0].GetTicket())
		if err == nil {
			for rdr.Next() {
			}
			err = rdr.Err()
			rdr.Release()
		}
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("slow query: %v, want DeadlineExceeded", err)
		}
	})
}
