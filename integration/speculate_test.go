package integration_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestPreparedSpeculation: the gateway opens a prepared query when its
// parameters are bound, before the client fetches the result. What it
// streams is still decided at DoGet: a revocation between the bind and the
// fetch refuses the fetch exactly like a missing table; parameters bound
// again replace the earlier execution; speculations nobody fetches never
// keep other statements from running; and claimed ones are counted.
func TestPreparedSpeculation(t *testing.T) {
	srv := startServe(t)
	env, node := serveMetasrv(t, srv)
	metricsURL := srv.metricsURL(t)

	cl, ctx := flightSQLAs(t, srv, srv.token(t, "analyst@demo"))

	prepare := func(sql string) *flightsql.PreparedStatement {
		t.Helper()
		prep, err := cl.Prepare(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = prep.Close(ctx) })
		return prep
	}
	// bind binds id and asks for the result's FlightInfo: DoPut, then
	// GetFlightInfo, leaving the DoGet to the caller.
	bind := func(prep *flightsql.PreparedStatement, id int64) *flight.Ticket {
		t.Helper()
		params := int64Record(t, id)
		prep.SetParameters(params)
		params.Release()
		info, err := prep.Execute(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.GetEndpoint()[0].GetTicket()
	}
	// ids fetches tkt and returns the ids it streams.
	ids := func(tkt *flight.Ticket) ([]int64, error) {
		rdr, err := cl.DoGet(ctx, tkt)
		if err != nil {
			return nil, err
		}
		defer rdr.Release()
		var out []int64
		for rdr.Next() {
			col := rdr.RecordBatch().Column(0).(*array.Int64)
			out = append(out, col.Int64Values()...)
		}
		return out, rdr.Err()
	}
	speculations := func(outcome string) float64 {
		return scrapeSamples(t, metricsURL).sum("lakegate_speculations_total", `outcome="`+outcome+`"`)
	}

	prep := prepare("SELECT id FROM sales.orders WHERE id = ?")
	claimed := speculations("claimed")
	for _, id := range []int64{42, 43, 44} {
		if got, err := ids(bind(prep, id)); err != nil || len(got) != 1 || got[0] != id {
			t.Fatalf("id %d: got %v, %v", id, got, err)
		}
	}
	if n := speculations("claimed") - claimed; n != 3 {
		t.Errorf("%v executions claimed their speculation, want 3", n)
	}

	t.Run("parameters bound again replace the execution", func(t *testing.T) {
		bind(prep, 7)
		tkt := bind(prep, 8)
		if got, err := ids(tkt); err != nil || len(got) != 1 || got[0] != 8 {
			t.Fatalf("after binding 7 then 8: got %v, %v", got, err)
		}
	})

	t.Run("a revocation between bind and fetch refuses the fetch", func(t *testing.T) {
		const grants = "/api/metalakes/demo/permissions/users/analyst@demo/"
		stale := speculations("stale")
		tkt := bind(prep, 42)
		env.must(t, node, "PUT", grants+"revoke", map[string]any{"roleNames": []string{"sales_analyst"}})
		got, err := ids(tkt)
		if status.Code(err) != codes.NotFound || status.Convert(err).Message() != "table sales.orders does not exist" {
			t.Fatalf("fetch after the revocation: %v, %v", got, err)
		}
		if speculations("stale") <= stale {
			t.Error("the revoked speculation was not counted stale")
		}
		env.must(t, node, "PUT", grants+"grant", map[string]any{"roleNames": []string{"sales_analyst"}})
		if got, err := ids(bind(prep, 42)); err != nil || len(got) != 1 || got[0] != 42 {
			t.Fatalf("after the grant is back: got %v, %v", got, err)
		}
	})

	t.Run("unfetched speculations do not hold statements back", func(t *testing.T) {
		// More than the tenant's execution permits (4 by default) bound and
		// never fetched: a statement of the same tenant still runs.
		for i := range 8 {
			bind(prepare("SELECT id FROM sales.orders WHERE id = ?"), int64(100+i))
		}
		info, err := cl.Execute(ctx, "SELECT count(*) FROM sales.orders")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := redeemRows(ctx, cl, info.GetEndpoint()[0].GetTicket()); err != nil || n != 1 {
			t.Fatalf("a plain query: %d rows, %v", n, err)
		}
		if got, err := ids(bind(prep, 5)); err != nil || len(got) != 1 || got[0] != 5 {
			t.Fatalf("a prepared query: got %v, %v", got, err)
		}
	})
}
