package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lakegate/authz"
)

// TestExposureRules checks that serve refuses to listen beyond loopback
// without a principal map and TLS, and that --insecure-no-tls waives only TLS.
func TestExposureRules(t *testing.T) {
	mapFile := writePrincipalMap(t, []authz.PrincipalSpec{{
		ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"},
		TokenHashes: []string{authz.HashToken("lg_aliceAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").String()},
	}})
	refused := []struct {
		name string
		args []string
		want string
	}{
		{"no map, no TLS", []string{"--flight-addr", "0.0.0.0:0"}, "without --principals"},
		{"no map, insecure", []string{"--flight-addr", "0.0.0.0:0", "--insecure-no-tls"}, "without --principals"},
		{"map, no TLS", []string{"--flight-addr", "0.0.0.0:0", "--principals", mapFile}, "without TLS"},
		{"empty host", []string{"--flight-addr", ":0", "--principals", mapFile}, "without TLS"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(lakegateBin, append([]string{"serve", "--data-dir", t.TempDir()}, tc.args...)...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err == nil || !asExit(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("serve %v: err %v, output:\n%s", tc.args, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("output %q does not say %q", out, tc.want)
			}
		})
	}
	t.Run("map and insecure-no-tls starts", func(t *testing.T) {
		dir := t.TempDir()
		srv := startServeArgs(t, dir, "serve", "--data-dir", dir, "--flight-addr", "0.0.0.0:0", "--principals", mapFile, "--insecure-no-tls",
			"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
		if srv.Addr == "" {
			t.Fatal("no address")
		}
	})
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

func writePrincipalMap(t testing.TB, specs []authz.PrincipalSpec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "principals.yaml")
	if err := authz.WritePrincipalMap(path, specs); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("map mode: %v %v", fi, err)
	}
	return path
}
