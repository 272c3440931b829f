package flight

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// TestIdleConnectionsClosed: a connection costs the gateway a file
// descriptor and its HTTP/2 state, and anyone can open one (the token is
// checked per call), so one with no call in progress is closed after
// IdleConnTimeout: the server sends GOAWAY and a client reconnects at its
// next call.
func TestIdleConnectionsClosed(t *testing.T) {
	s, _ := newTestServer(t, &metricsCatalog{}, func(c *Config) { c.IdleConnTimeout = 300 * time.Millisecond })
	addr := serveLoopback(t, s)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The bound only fails the test; the server closes well before it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn.Connect()
	want := []connectivity.State{connectivity.Ready, connectivity.Idle}
	for st := conn.GetState(); len(want) > 0; st = conn.GetState() {
		if st == want[0] {
			want = want[1:]
			continue
		}
		if !conn.WaitForStateChange(ctx, st) {
			t.Fatalf("connection still %s, waiting for %s: the server kept a connection without calls open", st, want[0])
		}
	}
}

// TestSilentConnectionsClosed: a connection that never completes the
// HTTP/2 handshake (nor TLS, with TLS) is closed after HandshakeTimeout
// rather than gRPC's default two minutes.
func TestSilentConnectionsClosed(t *testing.T) {
	s, _ := newTestServer(t, &metricsCatalog{}, func(c *Config) { c.HandshakeTimeout = 300 * time.Millisecond })
	addr := serveLoopback(t, s)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The bound only fails the test; the server closes well before it.
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("a connection that sent nothing was still open after 10s")
	}
}
