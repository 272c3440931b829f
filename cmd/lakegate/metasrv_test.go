package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lakegate/authz"
)

func TestMetasrvFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--principals", "p.yaml"}, // no node id
		{"--node-id", "n1"},        // no principals
		{"--node-id", "n1", "--principals", "p", "--bootstrap", "--join", "x:1"},
		{"--node-id", "n1", "--principals", "p", "--join", "x:1"},            // no peer token
		{"--node-id", "n1", "--principals", "p", "--tls-cert", "c"},          // incomplete TLS
		{"--node-id", "n1", "--principals", "p", "--http-addr", "0.0.0.0:1"}, // exposed without TLS
		{"--node-id", "n1", "--principals", "p", "--raft-log", "rocksdb"},    // unknown log store
	} {
		if _, err := parseMetasrvFlags(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
}

// TestMetasrvServes starts a bootstrap node through run (with its Raft log
// in raft-wal's segments), creates a metalake over REST and stops it with
// the context (the signal path).
func TestMetasrvServes(t *testing.T) {
	dir := t.TempDir()
	pm := filepath.Join(dir, "principals.yaml")
	if err := authz.WritePrincipalMap(pm, []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: []string{authz.HashToken("tok-admin").String()}},
	}); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"metasrv", "--node-id", "n1", "--data-dir", filepath.Join(dir, "data"),
			"--raft-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--bootstrap", "--principals", pm,
			"--log-level", "error", "--raft-log", "wal"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	// "lakegate metasrv n1: REST on ADDR, Raft on …"
	addr := strings.TrimSuffix(strings.Fields(line)[5], ",")
	// The node forwards, or waits for its own election, before answering.
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/metalakes", strings.NewReader(`{"name":"acme"}`))
	req.Header.Set("Authorization", "Bearer tok-admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Code int }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 200 || body.Code != 0 {
		t.Fatalf("create metalake: HTTP %d code %d", resp.StatusCode, body.Code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"audit.jsonl", "raft/wal"} {
		if _, err := os.Stat(filepath.Join(dir, "data", f)); err != nil {
			t.Fatal(err)
		}
	}
}
