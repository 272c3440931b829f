package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"lakegate/authz/pkitest"
)

func TestMCPUsageErrors(t *testing.T) {
	t.Setenv("LAKEGATE_TOKEN", "")
	t.Setenv("LAKEGATE_METALAKE", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--metalake", "m"}, "exactly one of --stdio and --http-addr"},
		{[]string{"--metalake", "m", "--stdio", "--http-addr", "127.0.0.1:0"}, "exactly one of"},
		{[]string{"--stdio", "--token", "t"}, "needs --metalake"},
		{[]string{"--metalake", "m", "--stdio"}, "--stdio needs --token"},
		{[]string{"--metalake", "m", "--http-addr", "127.0.0.1:0", "--token", "t"}, "--token is for --stdio"},
		{[]string{"--metalake", "m", "--http-addr", "0.0.0.0:8818"}, "not a loopback address"},
		{[]string{"--metalake", "m", "--http-addr", ":8818"}, "not a loopback address"},
		{[]string{"--metalake", "m", "--http-addr", "10.1.2.3:8818"}, "not a loopback address"},
		{[]string{"--metalake", "m", "--stdio", "--token", "t", "--include-tool-tags", "domain,bogus"}, "unknown tool tag"},
		{[]string{"--metalake", "m", "--stdio", "--token", "t", "extra"}, "takes no arguments"},
		{[]string{"--bogus"}, "bogus"},
		{[]string{"--metalake", "m", "--http-addr", "127.0.0.1:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--metalake", "m", "--http-addr", "127.0.0.1:0", "--tls-key", "k.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--metalake", "m", "--stdio", "--token", "t", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, "are for --http-addr"},
	} {
		err := run(context.Background(), append([]string{"mcp"}, c.args...), io.Discard, io.Discard)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mcp %q: %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:8818", "localhost:8818", "127.0.0.2:1"} {
		if err := checkLoopback(addr, false); err != nil {
			t.Errorf("checkLoopback(%q): %v", addr, err)
		}
	}
	if err := checkLoopback("0.0.0.0:8818", true); err != nil {
		t.Errorf("--insecure-expose: %v", err)
	}
	// HTTPS may bind a non-loopback address: the certificate is loaded
	// (and here missing) rather than the address refused.
	err := run(context.Background(), []string{"mcp", "--metalake", "m", "--http-addr", "0.0.0.0:0",
		"--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"}, io.Discard, io.Discard)
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "loading TLS certificate") {
		t.Errorf("--http-addr 0.0.0.0:0 with missing TLS files: %v", err)
	}
}

func TestMetasrvClient(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8816":      "http://127.0.0.1:8816",
		"https://ms:8816/":    "https://ms:8816",
		"http://127.0.0.1:80": "http://127.0.0.1:80",
		"http://localhost:80": "http://localhost:80",
	} {
		got, hc, err := metasrvClient(in, "", false)
		if err != nil || got != want || hc == nil {
			t.Errorf("metasrvClient(%q) = %q, %v", in, got, err)
		}
	}
	if _, _, err := metasrvClient("ms:8816", "/nonexistent/ca.pem", false); err == nil {
		t.Error("missing CA file accepted")
	}
	for _, in := range []string{"ftp://ms", "http://", "://x", "ms:8816"} {
		if _, _, err := metasrvClient(in, "", false); !errors.Is(err, errUsage) {
			t.Errorf("metasrvClient(%q): %v, want a usage error", in, err)
		}
	}
	if got, _, err := metasrvClient("ms:8816", "", true); err != nil || got != "http://ms:8816" {
		t.Errorf("with --insecure-no-tls: %q, %v", got, err)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type authTransport string

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", string(a))
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPHTTPRun: `lakegate mcp --http-addr` prints its address, serves
// the selected tools, forwards the caller's header and stops on cancel.
func TestMCPHTTPRun(t *testing.T) {
	var gotAuth sync.Map
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.URL.Path, r.Header.Get("Authorization"))
		io.WriteString(w, `{"code":0,"identifiers":[{"name":"lake"}]}`)
	}))
	defer ms.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"mcp", "--server", ms.URL, "--metalake", "demo", "--http-addr", "127.0.0.1:0",
			"--include-tool-tags", "catalog"}, &out, io.Discard)
	}()
	re := regexp.MustCompile(`streamable HTTP on (http://\S+/mcp)`)
	var endpoint string
	for deadline := time.Now().Add(10 * time.Second); endpoint == ""; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			endpoint = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no banner: %q", out.String())
		}
	}
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: authTransport("Bearer abc")},
		DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 2 {
		t.Fatalf("tools: %v %v", lt, err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_catalogs", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_catalogs: %v %+v", err, res)
	}
	if a, _ := gotAuth.Load("/api/metalakes/demo/catalogs"); a != "Bearer abc" {
		t.Errorf("metasrv saw Authorization %q", a)
	}
	cs.Close()
	stopMCP(t, cancel, done)
}

// serverCert writes a certificate for 127.0.0.1 and localhost and its key
// (PEM) to dir, and returns their paths and a pool trusting their CA.
func serverCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	ca := pkitest.NewCA(t, "lakegate mcp test CA")
	leaf := ca.Issue(t, pkitest.Host("lakegate mcp test", x509.ExtKeyUsageServerAuth))
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, []byte(leaf.CertPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(leaf.KeyPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, ca.Pool()
}

// authTLSTransport sets Authorization on every request over an HTTPS
// transport trusting pool.
type authTLSTransport struct {
	auth string
	base *http.Transport
}

func (a authTLSTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", a.auth)
	return a.base.RoundTrip(r)
}

// TestMCPHTTPSRun: with --tls-cert and --tls-key, `lakegate mcp
// --http-addr` serves HTTPS: a client trusting the certificate lists the
// tools; plain HTTP to the same port, and HTTPS without trusting the
// certificate, fail.
func TestMCPHTTPSRun(t *testing.T) {
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"code":0,"identifiers":[{"name":"lake"}]}`)
	}))
	defer ms.Close()
	certFile, keyFile, pool := serverCert(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"mcp", "--server", ms.URL, "--metalake", "demo", "--http-addr", "127.0.0.1:0",
			"--tls-cert", certFile, "--tls-key", keyFile, "--include-tool-tags", "catalog"}, &out, io.Discard)
	}()
	re := regexp.MustCompile(`streamable HTTP on (https://\S+/mcp)`)
	var endpoint string
	for deadline := time.Now().Add(10 * time.Second); endpoint == ""; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			endpoint = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no https banner: %q", out.String())
		}
	}
	connect := func(endpoint string, tr *http.Transport) (*sdk.ClientSession, error) {
		ct := &sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: authTLSTransport{"Bearer abc", tr}}}
		return sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
	}
	trusting := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}}
	defer trusting.CloseIdleConnections()
	cs, err := connect(endpoint, trusting)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 2 {
		t.Fatalf("tools over HTTPS: %v %v", lt, err)
	}
	cs.Close()

	// Plain HTTP to the TLS port: the MCP client fails, and a bare request
	// gets no MCP answer (Go's TLS server answers 400 to plain HTTP).
	plain := strings.Replace(endpoint, "https://", "http://", 1)
	if cs, err := connect(plain, &http.Transport{}); err == nil {
		cs.Close()
		t.Fatal("MCP over plain HTTP to the TLS port connected")
	}
	if r, err := http.Post(plain, "application/json", strings.NewReader(`{}`)); err == nil {
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP to the TLS port: HTTP %d", r.StatusCode)
		}
	}
	// HTTPS without trusting the certificate fails too.
	if cs, err := connect(endpoint, &http.Transport{}); err == nil {
		cs.Close()
		t.Fatal("MCP over HTTPS with an untrusted certificate connected")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}

	trusting.CloseIdleConnections()
	stopMCP(t, cancel, done)
}

// stopMCP cancels a running `lakegate mcp` and fails t unless it returns
// nil (10 s is a failure bound).
func stopMCP(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mcp: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcp did not stop on cancel")
	}
}
