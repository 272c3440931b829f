package flight

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/authz"
)

func TestRequestIDs(t *testing.T) {
	// Resolve fails with an unexpected error: the client gets Internal and
	// the server logs the cause, on behalf of the request.
	cat := &metricsCatalog{err: errors.New("catalog on fire")}
	cl, logs := servedLogging(t, cat)

	t.Run("client id is logged and echoed", func(t *testing.T) {
		var hdr metadata.MD
		_, err := cl.Execute(bearerCtx(aliceToken, RequestIDHeader, "req-42.A_b"), "SELECT * FROM sales.orders", grpc.Header(&hdr))
		if status.Code(err) != codes.Internal {
			t.Fatalf("Execute: %v, want Internal", err)
		}
		if got := hdr.Get(RequestIDHeader); len(got) != 1 || got[0] != "req-42.A_b" {
			t.Fatalf("%s header %v, want [req-42.A_b]", RequestIDHeader, got)
		}
		var found bool
		for _, l := range logs.lines(t) {
			if l["msg"] == "request failed" {
				found = true
				if l["request_id"] != "req-42.A_b" {
					t.Errorf("log line without the request id: %v", l)
				}
			}
		}
		if !found {
			t.Fatalf("no request failed line:\n%s", logs.String())
		}
	})

	t.Run("invalid or absent ids are replaced by fresh ones", func(t *testing.T) {
		seen := map[string]bool{}
		for _, sent := range []string{"", "has space", strings.Repeat("a", 65), "a/b", "a;b"} {
			kv := []string{}
			if sent != "" {
				kv = []string{RequestIDHeader, sent}
			}
			var hdr metadata.MD
			_, err := cl.Execute(bearerCtx(aliceToken, kv...), "SELECT * FROM sales.orders", grpc.Header(&hdr))
			if status.Code(err) != codes.Internal {
				t.Fatalf("Execute: %v", err)
			}
			got := hdr.Get(RequestIDHeader)
			if len(got) != 1 || len(got[0]) != 16 || strings.Trim(got[0], "0123456789abcdef") != "" || seen[got[0]] {
				t.Fatalf("sent %q: header %v, want 16 fresh hex characters", sent, got)
			}
			seen[got[0]] = true
			if strings.Contains(logs.String(), sent) && sent != "" {
				t.Errorf("the rejected id %q reached the logs", sent)
			}
		}
		// Every line logged for a request carries an id, and only ids the
		// client saw.
		for _, l := range logs.lines(t) {
			id, _ := l["request_id"].(string)
			if id != "req-42.A_b" && !seen[id] {
				t.Errorf("log line with request id %q: %v", id, l)
			}
		}
	})

	t.Run("streams and refused calls carry one too", func(t *testing.T) {
		// DoGet of a bogus ticket, without a token: refused by the
		// interceptor, yet the header is there.
		stream, err := cl.Client.DoGet(metadata.AppendToOutgoingContext(context.Background(), RequestIDHeader, "stream-1"), &flight.Ticket{Ticket: []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		hdr, err := stream.Header()
		if err != nil {
			t.Fatal(err)
		}
		if got := hdr.Get(RequestIDHeader); len(got) != 1 || got[0] != "stream-1" {
			t.Fatalf("DoGet header %v", got)
		}
		if _, err := stream.Recv(); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("DoGet: %v, want Unauthenticated", err)
		}
	})

	t.Run("no token or token hash in the logs", func(t *testing.T) {
		// One more authenticated call and a refused one with a wrong token.
		_, _ = cl.Execute(bearerCtx(aliceToken), "SELECT * FROM sales.orders")
		_, _ = cl.Execute(bearerCtx("lg_not_a_real_token"), "SELECT 1")
		out := logs.String()
		if out == "" {
			t.Fatal("nothing was logged")
		}
		for _, tok := range []string{aliceToken, carolToken, "lg_not_a_real_token"} {
			hash := authz.HashToken(tok).String()
			if strings.Contains(out, tok) || strings.Contains(strings.ToLower(out), strings.ToLower(hash)) {
				t.Errorf("the logs hold token %q or its hash:\n%s", tok, out)
			}
		}
	})
}

func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"": false, "a": true, "A-z_0.9": true, strings.Repeat("x", 64): true, strings.Repeat("x", 65): false,
		"a b": false, "a\n": false, "a:b": false, "é": false, "a/b": false,
	} {
		if got := validRequestID(id); got != want {
			t.Errorf("validRequestID(%q) = %v, want %v", id, got, want)
		}
	}
}
