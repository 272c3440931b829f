package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	server := startMetasrvWith(t, func(c *metasrv.Config) {
		c.Authn = ps
		c.ReloadPrincipals = func() error { return pp.reload("operator") }
	})
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
