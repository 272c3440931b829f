package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestTokensNeverSentInClear: the client commands send a bearer token with
// every request, so to an address beyond this machine they must not speak
// plaintext unless told to (--insecure-no-tls, for a trusted network or a
// TLS-terminating proxy). They used to: `--server metasrv.internal:8816`
// meant http://, and `sql --addr` without --tls plain gRPC — the token
// crossed the network in clear even when the server expected TLS.
func TestTokensNeverSentInClear(t *testing.T) {
	t.Setenv("LAKEGATE_TOKEN", "")
	t.Setenv("LAKEGATE_METASRV", "")
	// 192.0.2.1 (TEST-NET-1) never answers: a command that got past the
	// check would wait for it, so the context bounds it.
	run := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return run(ctx, args, io.Discard, io.Discard)
	}
	for _, args := range [][]string{
		{"sql", "--addr", "192.0.2.1:8815", "--token", "t", "SELECT 1"},
		{"sql", "--addr", "gateway.example:8815", "--token", "t", "SELECT 1"},
		{"ingest", "--addr", "192.0.2.1:8815", "--token", "t", "x.parquet", "s.t"},
		{"admin", "--server", "192.0.2.1:8816", "--token", "t", "metalake", "list"},
		{"admin", "--server", "http://metasrv.example:8816", "--token", "t", "metalake", "list"},
		{"mcp", "--stdio", "--server", "http://192.0.2.1:8816", "--metalake", "m", "--token", "t"},
	} {
		err := run(args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "in clear") {
			t.Errorf("%q: %v, want a usage error about the token in clear", args, err)
		}
	}
	// Loopback, TLS, or the explicit waiver pass the check (and then fail
	// or time out trying to connect, which is not a usage error).
	for _, args := range [][]string{
		{"sql", "--addr", "127.0.0.1:1", "--token", "t", "SELECT 1"},
		{"sql", "--addr", "localhost:1", "--token", "t", "SELECT 1"},
		{"sql", "--addr", "192.0.2.1:8815", "--token", "t", "--insecure-no-tls", "SELECT 1"},
		{"admin", "--server", "http://[::1]:1", "--token", "t", "metalake", "list"},
		{"admin", "--server", "https://192.0.2.1:8816", "--token", "t", "metalake", "list"},
		{"admin", "--server", "192.0.2.1:8816", "--insecure-no-tls", "--token", "t", "metalake", "list"},
	} {
		if err := run(args...); err == nil || errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a connection error", args, err)
		}
	}
}
