package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
}

func TestMCPMetasrvClient(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8816":      "http://127.0.0.1:8816",
		"https://ms:8816/":    "https://ms:8816",
		"http://127.0.0.1:80": "http://127.0.0.1:80",
	} {
		got, hc, err := mcpMetasrvClient(in, "")
		if err != nil || got != want || hc == nil {
			t.Errorf("mcpMetasrvClient(%q) = %q, %v", in, got, err)
		}
	}
	if _, _, err := mcpMetasrvClient("ms:8816", "/nonexistent/ca.pem"); err == nil {
		t.Error("missing CA file accepted")
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
