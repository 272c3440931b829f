package metasrv_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"lakegate/metasrv"
)

// TestSlowClientsDisconnected: a connection costs the node a file
// descriptor and a goroutine, so a client may neither keep one idle
// without end after its request (anyone can: a request without a token is
// answered 401 and the connection kept alive) nor hold a request open by
// sending its body a byte at a time.
func TestSlowClientsDisconnected(t *testing.T) {
	configHook = func(c *metasrv.Config) { c.IdleTimeout, c.BodyTimeout = 300*time.Millisecond, 300*time.Millisecond }
	n := single(t)
	configHook = nil
	// bound only fails the test; the server is expected well before it.
	const bound = 10 * time.Second
	dial := func(t *testing.T) (net.Conn, *bufio.Reader) {
		t.Helper()
		c, err := net.Dial("tcp", n.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.SetDeadline(time.Now().Add(bound)); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	closed := func(t *testing.T, br *bufio.Reader) {
		t.Helper()
		_, err := br.ReadByte()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the connection was still open after %s", bound)
		}
		if err == nil {
			t.Fatal("the server sent more bytes")
		}
	}

	t.Run("idle after a request", func(t *testing.T) {
		c, br := dial(t)
		if _, err := io.WriteString(c, "GET /api/metalakes HTTP/1.1\r\nHost: metasrv\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Close {
			t.Fatalf("HTTP %d, close %v: want 401 on a kept-alive connection", resp.StatusCode, resp.Close)
		}
		closed(t, br)
	})

	t.Run("body sent slowly", func(t *testing.T) {
		list := call{method: "GET", path: "/api/metalakes", token: tokAdmin}
		before := len(must(t, n, list).body["metalakes"].([]any))
		c, br := dial(t)
		if _, err := io.WriteString(c, "POST /api/metalakes HTTP/1.1\r\nHost: metasrv\r\nAuthorization: Bearer "+tokAdmin+
			"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "not received within 300ms") {
			t.Fatalf("HTTP %d: %s", resp.StatusCode, body)
		}
		closed(t, br)
		if r := must(t, n, list); len(r.body["metalakes"].([]any)) != before {
			t.Fatalf("a metalake was created: %s", r.raw)
		}
	})
}
