package integration_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestAuthentication(t *testing.T) {
	srv := startServe(t)
	good := srv.token(t, "analyst@demo")
	ctx := context.Background()

	t.Run("bearer header", func(t *testing.T) {
		c := mustDial(t, srv.uri(), bearer(good))
		_, rows, err := c.query(ctx, "SELECT 1")
		if err != nil || len(rows) != 1 || rows[0][0] != "1" {
			t.Fatalf("SELECT 1 = %v, %v", rows, err)
		}
	})
	t.Run("username and password through Handshake", func(t *testing.T) {
		c := mustDial(t, srv.uri(), map[string]string{adbc.OptionKeyUsername: "analyst@demo", adbc.OptionKeyPassword: good})
		_, rows, err := c.query(ctx, "SELECT count(*) FROM sales.orders")
		if err != nil || len(rows) != 1 || rows[0][0] != "5000" {
			t.Fatalf("count = %v, %v", rows, err)
		}
	})
	t.Run("password of another principal", func(t *testing.T) {
		_, err := dial(t, srv.uri(), map[string]string{adbc.OptionKeyUsername: "hr@demo", adbc.OptionKeyPassword: good})
		if adbcStatus(err) != adbc.StatusUnauthenticated {
			t.Fatalf("err = %v, want Unauthenticated", err)
		}
	})

	offByOne := []byte(good)
	offByOne[len(offByOne)-1] ^= 1
	bad := map[string]map[string]string{
		"wrong token":       bearer("lg_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
		"one character off": bearer(string(offByOne)),
		"missing token":     {},
		"empty bearer":      {"adbc.flight.sql.authorization_header": "Bearer "},
		"basic on a query":  {"adbc.flight.sql.authorization_header": "Basic YW5hbHlzdEBkZW1vOg=="},
	}
	for name, opts := range bad {
		t.Run(name+" query", func(t *testing.T) {
			c, err := dial(t, srv.uri(), opts)
			if err == nil {
				_, _, err = c.query(ctx, "SELECT 1")
			}
			if adbcStatus(err) != adbc.StatusUnauthenticated {
				t.Fatalf("err = %v, want Unauthenticated", err)
			}
		})
	}

	// Streaming calls: DoGet with a ticket issued to the analyst, presented
	// with bad credentials, and Handshake with a bad password.
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fc := flight.NewClientFromConn(conn, nil)
	goodCtx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+good)
	info, err := flightsqlClient(conn).Execute(goodCtx, "SELECT id FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	tkt := info.GetEndpoint()[0].GetTicket()
	for name, hdr := range map[string]string{
		"wrong":   "Bearer lg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"off":     "Bearer " + string(offByOne),
		"missing": "",
	} {
		t.Run(name+" DoGet", func(t *testing.T) {
			c := ctx
			if hdr != "" {
				c = metadata.AppendToOutgoingContext(ctx, "authorization", hdr)
			}
			stream, err := fc.DoGet(c, tkt)
			if err == nil {
				_, err = stream.Recv()
			}
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("DoGet err = %v, want Unauthenticated", err)
			}
		})
	}
	t.Run("Handshake with a wrong password", func(t *testing.T) {
		_, err := fc.AuthenticateBasicToken(ctx, "analyst@demo", string(offByOne))
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("Handshake err = %v, want Unauthenticated", err)
		}
	})
	t.Run("Handshake returns the bearer header", func(t *testing.T) {
		authCtx, err := fc.AuthenticateBasicToken(ctx, "analyst@demo", good)
		if err != nil {
			t.Fatal(err)
		}
		md, _ := metadata.FromOutgoingContext(authCtx)
		if got := md.Get("authorization"); len(got) == 0 || got[len(got)-1] != "Bearer "+good {
			t.Fatalf("authorization header = %q", got)
		}
	})
	t.Run("health needs a token", func(t *testing.T) {
		if err := healthCheck(ctx, conn); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("health without token: %v", err)
		}
		if err := healthCheck(goodCtx, conn); err != nil {
			t.Fatalf("health with token: %v", err)
		}
	})
	t.Run("ticket of another principal", func(t *testing.T) {
		hrCtx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+srv.token(t, "hr@demo"))
		stream, err := fc.DoGet(hrCtx, tkt)
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("foreign ticket: %v, want Unauthenticated", err)
		}
	})
	t.Run("tampered ticket", func(t *testing.T) {
		forged := append([]byte(nil), tkt.GetTicket()...)
		forged[len(forged)-3] ^= 0x40
		stream, err := fc.DoGet(goodCtx, &flight.Ticket{Ticket: forged})
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("tampered ticket: %v, want Unauthenticated", err)
		}
	})
}
