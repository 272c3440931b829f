package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/metasrv"
)

// TestAdminPrincipalsReload: `lakegate admin principals reload` reloads the
// metasrv node's map file as an operator and prints the generation; a user
// is refused; a malformed file is refused with why and the map in force
// stays.
func TestAdminPrincipalsReload(t *testing.T) {
	t.Setenv("LAKEGATE_METASRV", "")
	t.Setenv("LAKEGATE_TOKEN", "")
	h := func(s string) []string { return []string{authz.HashToken(s).String()} }
	doc, err := authz.EncodePrincipalMap([]authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: h("tok-admin")},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: h("tok-alice")},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "principals.yaml")
	write := func(b []byte) {
		if err := os.WriteFile(path+".new", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	write(doc)
	pp := newProcessPrincipals(path, slog.New(slog.DiscardHandler))
	ps, err := pp.load(nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := metasrv.DefaultConfig()
	cfg.NodeID, cfg.DataDir, cfg.RaftAddr, cfg.HTTPAddr = "n1", filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", ln.Addr().String()
	cfg.Bootstrap, cfg.Authn, cfg.PeerScheme = true, ps, "http"
	cfg.ReloadPrincipals = func() error { return pp.reload("operator") }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := metasrv.New(ctx, cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-served
	})
	server := "http://" + ln.Addr().String()
	admin := func(token string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"admin", "--server", server, "--token", token, "principals", "reload"}, &out, &errOut)
		return out.String(), err
	}
	if out, err := admin("tok-admin"); err != nil || !strings.Contains(out, "principal map generation 2") {
		t.Fatalf("operator's reload: %q, %v", out, err)
	}
	if _, err := admin("tok-alice"); err == nil {
		t.Error("a user's reload succeeded")
	}
	write([]byte("principals: [{id: x, tenant: acme, role: superuser}]\n"))
	if _, err := admin("tok-admin"); err == nil || !strings.Contains(err.Error(), "previous principal map stays in force") {
		t.Errorf("malformed map: %v", err)
	}
	if ps.Generation() != 2 {
		t.Errorf("generation %d after a refused reload, want 2", ps.Generation())
	}
	if acc, ref := ps.Reloads(); acc != 1 || ref != 1 {
		t.Errorf("reloads accepted %d refused %d, want 1 and 1", acc, ref)
	}
}
