package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"lakegate/metasrv/client"
)

// TestClientFailover503: a node answering 503 is skipped for the next one,
// which then stays preferred.
func TestClientFailover503(t *testing.T) {
	var busy, live atomic.Int32
	s503 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		busy.Add(1)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"code":1002,"type":"ServiceUnavailableException","message":"no leader"}`))
	}))
	defer s503.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" || r.URL.Path != "/internal/v1/metalakes/acme/generation" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"code":0,"generation":7}`))
	}))
	defer ok.Close()
	c, err := client.New(client.Config{Addrs: []string{s503.URL, ok.URL}, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if g, err := c.Generation(context.Background(), "acme"); err != nil || g != 7 {
			t.Fatalf("generation %d, %v", g, err)
		}
	}
	if busy.Load() != 1 || live.Load() != 3 {
		t.Fatalf("busy %d live %d", busy.Load(), live.Load())
	}
}

// TestClientFailoverDeadAddress: a refused connection fails over; a 4xx
// does not, and is typed.
func TestClientFailoverDeadAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	var calls atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"code":1008,"type":"ForbiddenException","message":"metasrv: forbidden: not a delegate for this tenant"}`))
	}))
	defer s.Close()
	c, err := client.New(client.Config{Addrs: []string{dead, s.URL}, Scheme: "http", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generation(context.Background(), "acme")
	var ae *client.Error
	if !errors.Is(err, client.ErrForbidden) || !errors.As(err, &ae) || ae.Code != 1008 || calls.Load() != 1 {
		t.Fatalf("err %v, calls %d", err, calls.Load())
	}
	if _, err := client.New(client.Config{Token: "tok"}); err == nil {
		t.Fatal("no addresses accepted")
	}
	if _, err := client.New(client.Config{Addrs: []string{dead}}); err == nil {
		t.Fatal("no token accepted")
	}
}

// TestClientWriteFailover: a write fails over only when it could not be
// sent (a refused connection); a 503 or a connection lost after sending is
// returned, typed, without trying the next node.
func TestClientWriteFailover(t *testing.T) {
	var calls atomic.Int32
	okSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/api/metalakes/acme/catalogs/lake/schemas/s/tables/t/versions" ||
			r.Header.Get("Lakegate-Delegate-Tenant") != "acme" || r.Header.Get("Lakegate-Delegate-User") != "alice@acme" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Lakegate-Generation", "9")
		_, _ = w.Write([]byte(`{"code":0,"version":4,"generation":9}`))
	}))
	defer okSrv.Close()
	s503 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"code":1002,"type":"ServiceUnavailableException","message":"outcome unknown"}`))
	}))
	defer s503.Close()
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer cut.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	ctx := context.Background()
	commit := func(addrs ...string) (uint64, uint64, error) {
		c, err := client.New(client.Config{Addrs: addrs, Token: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		return c.CommitVersion(ctx, "acme", "alice@acme", "lake", "s", "t", 3, false, nil, nil)
	}
	if v, g, err := commit(dead, okSrv.URL); err != nil || v != 4 || g != 9 || calls.Load() != 1 {
		t.Fatalf("after a refused connection: v%d g%d %v (calls %d)", v, g, err, calls.Load())
	}
	for _, first := range []string{s503.URL, cut.URL} {
		if _, _, err := commit(first, okSrv.URL); !errors.Is(err, client.ErrUnavailable) || calls.Load() != 1 {
			t.Fatalf("%s: %v (calls %d)", first, err, calls.Load())
		}
	}
	// 409s are typed by code.
	for code, want := range map[int]error{1012: client.ErrVersionConflict, 1004: client.ErrAlreadyExists} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusConflict)
			_, _ = fmt.Fprintf(w, `{"code":%d,"type":"X","message":"m"}`, code)
		}))
		_, _, err := commit(s.URL)
		s.Close()
		other := client.ErrAlreadyExists
		if want == client.ErrAlreadyExists {
			other = client.ErrVersionConflict
		}
		if !errors.Is(err, want) || errors.Is(err, other) {
			t.Fatalf("409/%d: %v", code, err)
		}
	}
}
