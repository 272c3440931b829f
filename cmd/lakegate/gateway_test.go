package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lakegate/flight/backend/duckdb"
)

func TestParseGatewayFlags(t *testing.T) {
	base := map[string]string{
		"--principals":         "p.yaml",
		"--ticket-keys":        "ring",
		"--stage":              "stage.json",
		"--metasrv":            "http://127.0.0.1:8816",
		"--metasrv-token-file": "tok",
	}
	// args returns base with overrides; an empty value drops the flag.
	args := func(over ...string) []string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(over); i += 2 {
			m[over[i]] = over[i+1]
		}
		var out []string
		for k, v := range m {
			if v != "" {
				out = append(out, k+"="+v)
			}
		}
		return out
	}
	cases := []struct {
		name    string
		args    []string
		wantErr string // "" = valid
	}{
		{"minimal loopback", args(), ""},
		{"missing --principals", args("--principals", ""), "--principals is required"},
		{"missing --ticket-keys", args("--ticket-keys", ""), "--ticket-keys is required"},
		{"missing --stage", args("--stage", ""), "--stage is required"},
		{"missing --metasrv", args("--metasrv", ""), "--metasrv is required"},
		{"missing --metasrv-token-file", args("--metasrv-token-file", ""), "--metasrv-token-file is required"},
		{"empty address in list", args("--metasrv", "http://127.0.0.1:1,"), "empty address"},
		{"several loopback http", args("--metasrv", "http://127.0.0.1:1, http://localhost:2,http://[::1]:3"), ""},
		{"http to a non-loopback metasrv", args("--metasrv", "http://10.0.0.1:8816"), "refusing plaintext to metasrv"},
		{"one http among https", args("--metasrv", "https://10.0.0.1:8816,http://127.0.0.1:8816"), "refusing plaintext to metasrv"},
		{"http metasrv, non-loopback flight", args("--flight-addr", "10.0.0.5:8815", "--insecure-no-tls", "true"), "refusing plaintext to metasrv"},
		{"https non-loopback", args("--metasrv", "https://m1:8816,https://m2:8816"), ""},
		{"host:port means https", args("--metasrv", "m1.example:8816,m2.example:8816"), ""},
		{"ftp scheme", args("--metasrv", "ftp://m1:8816"), "want http(s)://host:port"},
		{"no port", args("--metasrv", "https://m1"), "want http(s)://host:port"},
		{"a path", args("--metasrv", "https://m1:8816/api"), "want http(s)://host:port"},
		{"non-loopback flight without TLS", args("--metasrv", "https://m1:8816", "--flight-addr", "0.0.0.0:8815"), "without TLS"},
		{"non-loopback flight, --insecure-no-tls", args("--metasrv", "https://m1:8816", "--flight-addr", "0.0.0.0:8815", "--insecure-no-tls", "true"), ""},
		{"non-loopback flight with TLS", args("--metasrv", "https://m1:8816", "--flight-addr", "10.0.0.5:8815", "--tls-cert", "c", "--tls-key", "k"), ""},
		{"client CA without cert", args("--tls-client-ca", "ca"), "--tls-client-ca needs"},
		{"bad flight address", args("--flight-addr", "nope"), "missing port"},
		{"zero shutdown timeout", args("--shutdown-timeout", "0s"), "--shutdown-timeout must be positive"},
		{"negative gc interval", args("--gc-interval", "-1s"), "--gc-interval must not be negative"},
		{"gc grace too short", args("--gc-grace", "1h"), "--gc-grace must exceed"},
		{"per-tenant above global", args("--max-concurrent-per-tenant", "8", "--max-concurrent", "4"), "exceeds --max-concurrent"},
		{"unknown flag", args("--metasrv-addr", "x:1"), "unknown flag --metasrv-addr"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseGatewayFlags(c.args, io.Discard)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("%q: %v", c.args, err)
				}
				return
			}
			if err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("%q: err %v, want a usage error containing %q (config %+v)", c.args, err, c.wantErr, got)
			}
		})
	}

	t.Run("defaults", func(t *testing.T) {
		c, err := parseGatewayFlags(args(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.flightAddr != "127.0.0.1:8815" || c.gcInterval != 0 || c.gcGrace != 24*time.Hour || c.shutdownTimeout != 30*time.Second ||
			c.maxConcurrent != 16 || c.maxConcurrentPerTenant != 4 || c.queueTimeout != 5*time.Second {
			t.Fatalf("defaults: %+v", c)
		}
	})

	t.Run("through run: exit status 2", func(t *testing.T) {
		err := run(context.Background(), []string{"gateway", "--metasrv", "http://10.0.0.1:1"}, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) {
			t.Fatalf("run: %v, want a usage error", err)
		}
	})
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	const tok = "lg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // not subject to the umask
			t.Fatal(err)
		}
		return p
	}
	good := write("good", tok+"\n# a comment line\n", 0o600)
	if got, err := readTokenFile("--metasrv-token-file", good); err != nil || got != tok {
		t.Fatalf("0600 file: %q, %v", got, err)
	}
	ro := write("ro", "  "+tok+"  ", 0o400)
	if got, err := readTokenFile("--metasrv-token-file", ro); err != nil || got != tok {
		t.Fatalf("0400 file without newline: %q, %v", got, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{write("group", tok+"\n", 0o640), "grants group or other access"},
		{write("other", tok+"\n", 0o604), "grants group or other access"},
		{write("world", tok+"\n", 0o644), "grants group or other access"},
		{write("empty", "\n"+tok+"\n", 0o600), "no token on its first line"},
		{write("big", strings.Repeat("x", maxTokenFileSize+1), 0o600), "larger than"},
		{link, "symbolic link"},
		{dir, "not a regular file"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		_, err := readTokenFile("--metasrv-token-file", c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", filepath.Base(c.path), err, c.want)
			continue
		}
		if strings.Contains(err.Error(), tok) {
			t.Errorf("%s: the error contains the token: %v", filepath.Base(c.path), err)
		}
	}
}

// TestEngineFlagsAssembly: every shared flag reaches the gateway's
// configuration.
func TestEngineFlagsAssembly(t *testing.T) {
	c, err := parseServeFlags([]string{"--memory-limit", "2GB", "--memory-budget", "12GiB", "--max-temp-size", "3GB", "--threads", "3", "--query-timeout", "7m",
		"--max-concurrent-per-tenant", "5", "--max-concurrent", "9", "--queue-timeout", "11s", "--decision-window", "13s",
		"--gc-interval", "17m", "--gc-grace", "25h", "--upstream-allow", "127.0.0.1:9000,127.0.0.1:9001"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.assembly()
	if err != nil {
		t.Fatal(err)
	}
	if g.MemoryLimit != "2GB" || g.MemoryBudget != 12<<30 || g.MaxTempSize != "3GB" || g.Threads != 3 || g.QueryTimeout != 7*time.Minute ||
		g.MaxConcurrentPerTenant != 5 || g.MaxConcurrent != 9 || g.QueueTimeout != 11*time.Second || g.DecisionWindow != 13*time.Second ||
		g.GCInterval != 17*time.Minute || g.GCGrace != 25*time.Hour || g.Version != version {
		t.Fatalf("assembly: %+v", g)
	}
	if g.Upstream == nil || strings.Join(g.Upstream.Allow, ",") != "127.0.0.1:9000,127.0.0.1:9001" {
		t.Fatalf("upstream: %+v", g.Upstream)
	}
	c, err = parseServeFlags([]string{"--upstream-plaintext"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.assembly(); !errors.Is(err, errUsage) {
		t.Fatalf("--upstream-plaintext without --upstream-allow: %v, want a usage error", err)
	}
}

// TestAccessLogFlags: the access log is on by default with its spool under
// the data directory; every flag reaches its configuration, and bad values
// are usage errors.
func TestAccessLogFlags(t *testing.T) {
	c, err := parseServeFlags([]string{"--data-dir", "/srv/lg"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.accessLog.config(c.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.SpoolDir != filepath.Join("/srv/lg", "access-log-spool") || got.FlushInterval != 5*time.Second ||
		got.SpoolMax != 1<<30 || got.MaxMemory != 64<<20 || got.Retention != 0 || len(got.FailOpen) != 0 {
		t.Fatalf("defaults: %+v", got)
	}
	c, err = parseServeFlags([]string{"--access-log-flush", "1m", "--access-log-spool-dir", "/spool", "--access-log-spool-max", "512MiB",
		"--access-log-memory-max", "8MiB", "--access-log-fail-open", "acme, globex", "--access-log-retention", "2160h", "--access-log-full-text", "acme"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = c.accessLog.config(c.dataDir); err != nil {
		t.Fatal(err)
	}
	if got.SpoolDir != "/spool" || got.FlushInterval != time.Minute || got.SpoolMax != 512<<20 || got.MaxMemory != 8<<20 || got.Retention != 2160*time.Hour ||
		strings.Join(got.FailOpen, ",") != "acme,globex" || strings.Join(got.FullText, ",") != "acme" {
		t.Fatalf("set: %+v", got)
	}
	c, err = parseServeFlags([]string{"--access-log=false"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.accessLog.config(c.dataDir); err != nil || got != nil {
		t.Fatalf("--access-log=false: %+v, %v", got, err)
	}
	for _, bad := range [][]string{
		{"--access-log-flush", "0s"},
		{"--access-log-retention", "-1h"},
		{"--access-log-spool-max", "lots"},
		{"--access-log-spool-max", "0"},
		{"--access-log-spool-max", "-5MB"},
		{"--access-log-memory-max", "0"},
		{"--access-log-memory-max", "much"},
		{"--access-log-fail-open", "acme,Not A Tenant"},
		{"--access-log-full-text", "../x"},
	} {
		if _, err := parseServeFlags(bad, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("serve %q: %v, want a usage error", bad, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "1048576", want: 1 << 20},
		{in: "1GiB", want: 1 << 30},
		{in: "512MiB", want: 512 << 20},
		{in: "4GB", want: 4e9},
		{in: "10 KB", want: 10e3},
		{in: "7B", want: 7},
		{in: "", bad: true},
		{in: "GiB", bad: true},
		{in: "1.5GB", bad: true},
		{in: "9999999999TiB", bad: true},
	}
	for _, c := range cases {
		got, err := parseSize(c.in)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d (bad %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestMemoryBudgetFlag: --memory-budget takes a size or a share of the
// machine's memory, defaults to the gateway's default (0), and refuses at
// start a budget that cannot hold one tenant at --memory-limit besides
// the gateway's own buffers.
func TestMemoryBudgetFlag(t *testing.T) {
	machine, _ := duckdb.MachineMemory()
	for _, c := range []struct {
		args []string
		want int64
		err  string
	}{
		{nil, 0, ""},
		{[]string{"--memory-budget", "16GiB"}, 16 << 30, ""},
		{[]string{"--memory-budget", "100%"}, machine / 100 * 100, ""},
		{[]string{"--memory-budget", "1GiB", "--memory-limit", "512MB"}, 1 << 30, ""},
		{[]string{"--memory-budget", "1GiB"}, 0, "--memory-budget too small for --memory-limit"},
		{[]string{"--memory-budget", "2GB", "--memory-limit", "2GB"}, 0, "less than one tenant at MemoryLimit 2GB"},
		{[]string{"--memory-budget", "0"}, 0, "want a positive size"},
		{[]string{"--memory-budget", "lots"}, 0, "want a positive size"},
		{[]string{"--memory-budget", "150%"}, 0, "percentage"},
	} {
		sc, err := parseServeFlags(c.args, io.Discard)
		if c.err != "" {
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want a usage error saying %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		g, err := sc.assembly()
		if err != nil || g.MemoryBudget != c.want {
			t.Errorf("%q: budget %d, %v; want %d", c.args, g.MemoryBudget, err, c.want)
		}
	}
}
