package integration_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var bannerMetasrv = regexp.MustCompile(`metasrv REST on http://(\S+) `)

// serveMetasrv returns the REST client of the metasrv node a `lakegate serve`
// runs, acting as the demo tenant's owner (admin@demo).
func serveMetasrv(t testing.TB, srv *server) (*metasrvEnv, *metasrvProc) {
	t.Helper()
	m := bannerMetasrv.FindStringSubmatch(srv.Banner)
	if m == nil {
		t.Fatalf("no metasrv address in the banner:\n%s", srv.Banner)
	}
	env := &metasrvEnv{adminTok: srv.token(t, "admin@demo"), client: &http.Client{Timeout: 20 * time.Second}}
	return env, &metasrvProc{id: "serve", httpAddr: m[1]}
}

// TestTicketReauthorized: a ticket issued before a revocation is refused at
// DoGet after it, exactly like a missing table; after the grant is back
// the same ticket runs again. Tickets issued and redeemed with no change
// in between run as usual.
func TestTicketReauthorized(t *testing.T) {
	srv := startServe(t)
	env, node := serveMetasrv(t, srv)

	cl, ctx := flightSQLAs(t, srv, srv.token(t, "analyst@demo"))

	ticketFor := func(sql string) *flight.Ticket {
		t.Helper()
		info, err := cl.Execute(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		return info.Endpoint[0].Ticket
	}
	redeem := func(tkt *flight.Ticket) (int64, error) { return redeemRows(ctx, cl, tkt) }

	fresh := ticketFor("SELECT id FROM sales.orders WHERE id <= 10")
	if n, err := redeem(fresh); err != nil || n != 10 {
		t.Fatalf("fresh ticket: %d rows, %v", n, err)
	}

	const grants = "/api/metalakes/demo/permissions/users/analyst@demo/"
	early := ticketFor("SELECT id FROM sales.orders WHERE id <= 10")
	env.must(t, node, "PUT", grants+"revoke", map[string]any{"roleNames": []string{"sales_analyst"}})
	_, err := redeem(early)
	if status.Code(err) != codes.NotFound || status.Convert(err).Message() != "table sales.orders does not exist" {
		t.Fatalf("ticket after the revocation: %v", err)
	}
	if _, err := cl.Execute(ctx, "SELECT id FROM sales.orders"); status.Code(err) != codes.NotFound {
		t.Fatalf("planning after the revocation: %v", err)
	}

	env.must(t, node, "PUT", grants+"grant", map[string]any{"roleNames": []string{"sales_analyst"}})
	if n, err := redeem(early); err != nil || n != 10 {
		t.Fatalf("the same ticket after the grant is back: %d rows, %v", n, err)
	}
}
