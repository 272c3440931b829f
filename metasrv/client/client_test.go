package client_test

import (
	"context"
	"errors"
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
