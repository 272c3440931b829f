package flight

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"lakegate/authz"
	"lakegate/flight/clocktest"
)

// TestSqlInfoStartsSession: the SqlInfo answer drivers ask for on connecting
// starts a session and carries its cookie, so a USE sent next with
// ExecuteUpdate (whose answer's headers a client may drop) changes a session
// the client already presents; a caller presenting its cookie gets no new
// one, and a caller without a principal gets none.
func TestSqlInfoStartsSession(t *testing.T) {
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	s := &Server{sessions: newSessionStore(time.Hour, clock.Now)}
	if err := s.RegisterSqlInfo(flightsql.SqlInfoFlightSqlServerName, "lakegate"); err != nil {
		t.Fatal(err)
	}
	alice := principal(t, "alice@acme")
	desc := &flight.FlightDescriptor{Cmd: []byte("x")}
	call := func(ctx context.Context) metadata.MD {
		t.Helper()
		hs := &headerStream{}
		if _, err := s.GetFlightInfoSqlInfo(grpc.NewContextWithServerTransportStream(ctx, hs), nil, desc); err != nil {
			t.Fatal(err)
		}
		return hs.md
	}
	md := call(authz.WithPrincipal(context.Background(), alice))
	cookie := md.Get("set-cookie")
	if len(cookie) != 1 || !strings.HasPrefix(cookie[0], sessionCookie+"=") {
		t.Fatalf("set-cookie = %v", cookie)
	}
	nameValue, _, _ := strings.Cut(cookie[0], ";")
	withCookie := metadata.NewIncomingContext(authz.WithPrincipal(context.Background(), alice), metadata.Pairs("cookie", nameValue))
	if s.sessions.lookup(withCookie, alice) == nil {
		t.Fatal("the cookie names no session")
	}
	if again := call(withCookie).Get("set-cookie"); len(again) != 0 {
		t.Fatalf("a second session for a caller with one: %v", again)
	}
	if none := call(context.Background()).Get("set-cookie"); len(none) != 0 {
		t.Fatalf("a session without a principal: %v", none)
	}
}
