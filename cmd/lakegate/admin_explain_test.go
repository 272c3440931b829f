package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"lakegate/authz"
)

// startExplainMetasrv runs a single metasrv node whose map holds the
// operator root, acmeadmin@acme (tenant admin of acme) and bob@acme (a user
// with namespace sales), and returns its base URL.
func startExplainMetasrv(t *testing.T) string {
	t.Helper()
	h := func(s string) []string { return []string{authz.HashToken(s).String()} }
	return startTestMetasrv(t, []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: h("tok-admin")},
		{ID: "acmeadmin@acme", Tenant: "acme", Role: "tenant_admin", TokenHashes: h("tok-acme-admin")},
		{ID: "bob@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: h("tok-bob")},
	})
}

// TestAdminExplainAndDryRun: `admin explain` prints the deciding chain;
// `--dry-run` on every governance command prints what it would change and
// changes nothing.
func TestAdminExplainAndDryRun(t *testing.T) {
	t.Setenv("LAKEGATE_METASRV", "")
	t.Setenv("LAKEGATE_TOKEN", "")
	t.Setenv("LAKEGATE_METALAKE", "")
	server := startExplainMetasrv(t)
	admin := func(token string, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"admin", "--server", server, "--token", token, "--metalake", "acme"}, args...), &out, &errOut)
		return out.String(), err
	}
	ok := func(token string, args ...string) string {
		t.Helper()
		out, err := admin(token, args...)
		if err != nil {
			t.Fatalf("admin %q: %v", args, err)
		}
		return out
	}
	contains := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Fatalf("output lacks %q:\n%s", w, out)
			}
		}
	}
	const boss = "tok-acme-admin"
	ok("tok-admin", "metalake", "create", "acme", "--owner", "acmeadmin@acme")
	ok(boss, "user", "create", "bob@acme")
	ok(boss, "catalog", "create", "lake")
	ok(boss, "schema", "create", "lake.sales")
	req, _ := http.NewRequest("POST", server+"/api/metalakes/acme/catalogs/lake/schemas/sales/tables",
		strings.NewReader(`{"name":"orders","columns":[{"name":"id","type":"BIGINT"},{"name":"card","type":"VARCHAR"}]}`))
	req.Header.Set("Authorization", "Bearer "+boss)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("create table: %v %v", resp, err)
	}
	ok(boss, "role", "create", "analyst")
	ok(boss, "grant", "analyst", "catalog", "lake", "use_catalog,use_schema")
	ok(boss, "user", "grant-role", "bob@acme", "analyst")
	ok(boss, "tag", "create", "dept")

	// Denied so far: no grant, no tag.
	contains(ok(boss, "explain", "bob@acme", "select_table", "table:lake.sales.orders"),
		"decision:", "denied (no grant)", "rule:", "no grant allows SELECT_TABLE", "gateway:", "refused (namespace sales granted)",
		"ROLE", "analyst", "USE_CATALOG", "catalog lake", "OWNER", "user acmeadmin@acme")

	// Every governance command previews and changes nothing.
	for _, tc := range []struct {
		args []string
		typ  string
	}{
		{[]string{"tag", "create", "region", "--allowed-values", "eu,us"}, "CreateTag"},
		{[]string{"tag", "drop", "dept"}, "DropTag"},
		{[]string{"tag", "attach", "schema", "lake.sales", "dept"}, "AssociateTagsV2"},
		{[]string{"tag", "detach", "schema", "lake.sales", "dept"}, "AssociateTagsV2"},
		{[]string{"policy", "create", "rows", "--type", "row_filter", "--content", `{"expression":"id > 0"}`}, "CreatePolicy"},
		{[]string{"grant", "analyst", "table", "lake.sales.orders", "select_table", "--deny"}, "GrantPrivileges"},
		{[]string{"revoke", "analyst", "catalog", "lake", "use_catalog"}, "RevokePrivileges"},
		{[]string{"role", "create", "auditor"}, "CreateRole"},
		{[]string{"role", "drop", "analyst"}, "DropRole"},
		{[]string{"user", "create", "carol"}, "CreateUser"},
		{[]string{"user", "grant-role", "bob@acme", "analyst"}, "GrantRoles"},
		{[]string{"user", "revoke-role", "bob@acme", "analyst"}, "RevokeRoles"},
	} {
		out := ok(boss, append(tc.args, "--dry-run")...)
		contains(out, "dry run of "+tc.typ+": nothing was changed")
	}
	contains(ok(boss, "revoke", "analyst", "catalog", "lake", "use_catalog", "--dry-run"),
		"bob@acme", "catalog lake", "USE_CATALOG", "loses", "allowed by grant", "no grant")
	contains(ok(boss, "role", "list"), "analyst")
	if out := ok(boss, "role", "list"); strings.Contains(out, "auditor") {
		t.Fatalf("a dry run created a role:\n%s", out)
	}
	if out := ok(boss, "policy", "list"); strings.Contains(out, "rows") {
		t.Fatalf("a dry run created a policy:\n%s", out)
	}

	// The acceptance scenario from the command line: attaching the tag of
	// a system_access_control policy lists the new reader.
	ok(boss, "policy", "create", "sales-read", "--type", "system_access_control",
		"--content", `{"privileges":["SELECT_TABLE"],"applicable_roles":["analyst"]}`, "--disabled")
	for _, args := range [][]string{
		{"policy", "enable", "sales-read"}, {"policy", "attach", "sales-read", "dept"},
		{"policy", "alter", "sales-read", "--comment", "c"},
	} {
		contains(ok(boss, append(args, "--dry-run")...), "dry run of")
	}
	ok(boss, "policy", "enable", "sales-read")
	ok(boss, "policy", "attach", "sales-read", "dept")
	out := ok(boss, "tag", "attach", "schema", "lake.sales", "dept", "--dry-run")
	contains(out, "it would change 1 privileges", "bob@acme", "table lake.sales.orders", "SELECT_TABLE", "gains", "no grant", "allowed by tag policy")
	contains(ok(boss, "explain", "bob@acme", "SELECT_TABLE", "table:lake.sales.orders"), "denied (no grant)")
	var lines int
	for _, l := range strings.Split(strings.TrimSpace(ok(boss, "--json", "tag", "attach", "schema", "lake.sales", "dept", "--dry-run")), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil || v["preview"] == nil {
			t.Fatalf("--json dry run: %q: %v", l, err)
		}
		lines++
	}
	if lines != 1 {
		t.Fatalf("--json dry run printed %d pages", lines)
	}
	for _, args := range [][]string{{"policy", "disable", "sales-read"}, {"policy", "detach", "sales-read", "dept"}, {"policy", "delete", "sales-read"}} {
		contains(ok(boss, append(args, "--dry-run")...), "dry run of")
	}

	// Applied, then explained: the deciding chain names the tag and policy.
	ok(boss, "tag", "attach", "schema", "lake.sales", "dept")
	contains(ok(boss, "explain", "bob@acme", "SELECT_TABLE", "table:lake.sales.orders"),
		"allowed (allowed by tag policy)", "policy sales-read", "gateway:", "allowed (namespace sales granted)",
		"TAG", "dept", "schema lake.sales", "sales-read", "confers the privilege")
	// bob about himself (no VIEW_TAG: the tag and policy go unnamed); about
	// anyone else, refused.
	self := ok("tok-bob", "explain", "bob@acme", "SELECT_TABLE", "table:lake.sales.orders")
	contains(self, "allowed (allowed by tag policy)")
	if strings.Contains(self, "sales-read") || strings.Contains(self, "dept") {
		t.Errorf("bob's own explanation names what he may not view:\n%s", self)
	}
	if _, err := admin("tok-bob", "explain", "acmeadmin@acme", "SELECT_TABLE", "table:lake.sales.orders"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("bob about another user: %v", err)
	}
	// Previews are the tenant's admins'.
	if _, err := admin("tok-bob", "tag", "attach", "schema", "lake.sales", "dept", "--dry-run"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("bob's dry run: %v", err)
	}
	for _, args := range [][]string{
		{"explain", "bob@acme", "SELECT_TABLE", "lake.sales.orders"},
		{"explain", "bob@acme", "SELECT_TABLE"},
	} {
		if _, err := admin(boss, args...); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	// Not a governance command: --dry-run is an unknown flag there.
	if _, err := admin(boss, "catalog", "create", "other", "--dry-run"); !errors.Is(err, errUsage) {
		t.Errorf("catalog create --dry-run: %v", err)
	}
}
