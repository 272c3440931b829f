package metasrv_test

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestServeAfterShutdown: a Serve that starts after Shutdown (a process
// failing while it starts) returns at once and closes its listener, instead
// of serving for ever while its caller waits for it.
func TestServeAfterShutdown(t *testing.T) {
	n := startNode(t, "n1", "", "", "", true)
	n.stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- n.Serve(ln) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve after Shutdown: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Serve after Shutdown is still serving")
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the listener still accepts connections")
	}
}
