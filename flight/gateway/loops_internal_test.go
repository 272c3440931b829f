package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lakegate/metasrv/client"
)

// TestWaitMetasrv: any answer of metasrv (a 404 included) makes the gateway
// ready; 401 and 403 fail at once; while metasrv answers 503 or cannot be
// reached, the gateway keeps trying.
func TestWaitMetasrv(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	newClient := func(t *testing.T, h http.HandlerFunc) (*client.Client, *atomic.Int32) {
		var calls atomic.Int32
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			if r.Header.Get("Authorization") != "Bearer tok" || r.URL.Path != "/internal/v1/metalakes/acme/generation" {
				http.Error(w, "unexpected request", http.StatusTeapot)
				return
			}
			h(w, r)
		}))
		t.Cleanup(ts.Close)
		mc, err := client.New(client.Config{Addrs: []string{ts.URL}, Token: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		return mc, &calls
	}
	status := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			io.WriteString(w, `{"code":1003,"type":"X","message":"m"}`)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	t.Run("404 is ready", func(t *testing.T) {
		mc, _ := newClient(t, status(http.StatusNotFound))
		if err := waitMetasrv(ctx, mc, "acme", log); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("200 is ready", func(t *testing.T) {
		mc, _ := newClient(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"generation":7}`) })
		if err := waitMetasrv(ctx, mc, "acme", log); err != nil {
			t.Fatal(err)
		}
	})
	for code, want := range map[int]string{http.StatusUnauthorized: "rejected the gateway's token", http.StatusForbidden: "delegate_tenants"} {
		mc, calls := newClient(t, status(code))
		err := waitMetasrv(ctx, mc, "acme", log)
		if !errors.Is(err, ErrMetasrvRefused) || !strings.Contains(err.Error(), want) || calls.Load() != 1 {
			t.Errorf("HTTP %d: %v after %d calls, want one call and ErrMetasrvRefused containing %q", code, err, calls.Load(), want)
		}
	}
	t.Run("503 then ready", func(t *testing.T) {
		var n atomic.Int32
		mc, calls := newClient(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) <= 2 {
				status(http.StatusServiceUnavailable)(w, r)
				return
			}
			status(http.StatusNotFound)(w, r)
		})
		if err := waitMetasrv(ctx, mc, "acme", log); err != nil || calls.Load() != 3 {
			t.Fatalf("%v after %d calls", err, calls.Load())
		}
	})
	t.Run("unreachable until cancelled", func(t *testing.T) {
		mc, err := client.New(client.Config{Addrs: []string{"http://127.0.0.1:1"}, Token: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		cctx, ccancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer ccancel()
		if err := waitMetasrv(cctx, mc, "acme", log); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v, want the context's error", err)
		}
	})
}
