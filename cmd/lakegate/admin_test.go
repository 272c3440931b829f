package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv"
	"lakegate/metasrv/raftnode"
)

// startAdminMetasrv runs a single bootstrapped metasrv node in-process and
// returns its base URL.
func startAdminMetasrv(t *testing.T) string {
	t.Helper()
	h := func(s string) []string { return []string{authz.HashToken(s).String()} }
	return startTestMetasrv(t, []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: h("tok-admin")},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: h("tok-alice")},
	})
}

// startTestMetasrv runs a single bootstrapped metasrv node in-process with
// the principals specs, stopped at t's cleanup, and returns its base URL
// once it leads.
func startTestMetasrv(t *testing.T, specs []authz.PrincipalSpec) string {
	t.Helper()
	b, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := authz.ParsePrincipalMap(b)
	if err != nil {
		t.Fatal(err)
	}
	return startMetasrvWith(t, func(c *metasrv.Config) { c.Principals = pm })
}

// startMetasrvWith runs a single bootstrapped metasrv node in-process with
// the configuration set gives (its principals), stopped at t's cleanup,
// and returns its base URL once it leads.
func startMetasrvWith(t *testing.T, set func(*metasrv.Config)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := metasrv.DefaultConfig()
	cfg.NodeID, cfg.DataDir, cfg.RaftAddr, cfg.HTTPAddr = "n1", filepath.Join(t.TempDir(), "data"), "127.0.0.1:0", ln.Addr().String()
	cfg.Bootstrap, cfg.PeerScheme = true, "http"
	set(&cfg)
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
		if err := srv.Shutdown(sctx); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	for !srv.Node().IsLeader() || srv.Node().Barrier(ctx) != nil {
		select {
		case <-ctx.Done():
			t.Fatal("no leader")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return "http://" + ln.Addr().String()
}

func TestAdminEndToEnd(t *testing.T) {
	t.Setenv("LAKEGATE_METASRV", "")
	t.Setenv("LAKEGATE_TOKEN", "")
	t.Setenv("LAKEGATE_METALAKE", "")
	server := startAdminMetasrv(t)
	admin := func(token string, args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"admin", "--server", server, "--token", token}, args...), &out, &errOut)
		return out.String(), errOut.String(), err
	}
	ok := func(token string, args ...string) string {
		t.Helper()
		out, errOut, err := admin(token, args...)
		if err != nil {
			t.Fatalf("admin %q: %v\n%s", args, err, errOut)
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

	// Cluster status as admin: one leader.
	contains(ok("tok-admin", "cluster", "status"), "Leader", "n1", "SUFFRAGE", "voter", "REACHABLE", "yes", "(leader)")
	out := ok("tok-admin", "cluster", "status", "--json")
	var st struct {
		ID      string
		Servers []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.ID != "n1" || len(st.Servers) != 1 {
		t.Fatalf("--json status: %v: %s", err, out)
	}
	// Removing a node that is not a member fails with the server's message.
	if _, _, err := admin("tok-admin", "cluster", "remove-node", "nope"); err == nil || errors.Is(err, errUsage) ||
		!strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "404") {
		t.Fatalf("remove-node of a non-member: %v", err)
	}

	// Metalake (admin), then everything inside it as its owner.
	contains(ok("tok-admin", "metalake", "create", "acme", "--owner", "alice@acme", "--comment", "Acme Corp", "--property", "region=eu"),
		"acme", "alice@acme", "region=eu")
	contains(ok("tok-admin", "metalake", "list"), "NAME", "acme", "Acme Corp")
	alice := func(args ...string) string {
		t.Helper()
		return ok("tok-alice", append([]string{"--metalake", "acme"}, args...)...)
	}
	contains(alice("catalog", "create", "lake", "--comment", "main lake"), "lake", "managed")
	contains(alice("catalog", "list"), "lake", "main lake")
	// Without --metalake a command works in the caller's own metalake, as
	// whoami tells it; an operator has none and is told so.
	contains(ok("tok-alice", "whoami"), "alice@acme", "acme", "user", "sales")
	contains(ok("tok-alice", "catalog", "list"), "lake", "main lake")
	if _, _, err := admin("tok-admin", "catalog", "list"); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--metalake") || !strings.Contains(err.Error(), "operator") {
		t.Fatalf("an operator's catalog list without --metalake: %v", err)
	}
	contains(alice("schema", "create", "lake.sales"), "sales")
	// Flags after positional arguments and names needing escapes.
	contains(alice("schema", "create", "lake.a b", "--comment", "spaced"), "a b", "spaced")
	contains(alice("schema", "list", "lake"), "sales", "a b")
	contains(alice("schema", "get", "lake.a b"), "spaced")
	contains(alice("catalog", "create", "tmp"), "tmp")
	contains(alice("catalog", "alter", "tmp", "--rename", "tmp2"), "tmp2")
	contains(alice("schema", "create", "tmp2.s1"), "s1")
	contains(alice("schema", "alter", "tmp2.s1", "--rename", "s2"), "s2")
	contains(alice("schema", "list", "tmp2"), "s2")
	// Comment and property updates, with or without a rename.
	contains(alice("catalog", "alter", "tmp2", "--comment", "scratch", "--set", "team=data", "--set", "tier=gold"),
		"scratch", "team=data, tier=gold")
	out = alice("catalog", "alter", "tmp2", "--unset", "tier", "--set", "team=ops", "--rename", "tmp3")
	contains(out, "tmp3", "team=ops")
	if strings.Contains(out, "tier") {
		t.Fatalf("tier not removed:\n%s", out)
	}
	contains(alice("catalog", "alter", "tmp3", "--rename", "tmp2", "--comment", ""), "tmp2")
	if out := alice("catalog", "get", "tmp2"); strings.Contains(out, "scratch") || !strings.Contains(out, "team=ops") {
		t.Fatalf("after clearing the comment:\n%s", out)
	}
	contains(alice("schema", "alter", "tmp2.s2", "--comment", "second", "--set", "k=v", "--set", "x=1"), "second", "k=v, x=1")
	out = alice("schema", "alter", "tmp2.s2", "--unset", "x", "--unset", "missing")
	contains(out, "second", "k=v")
	if strings.Contains(out, "x=1") {
		t.Fatalf("x not removed:\n%s", out)
	}
	// A rejected alter changes nothing.
	if _, _, err := admin("tok-alice", "--metalake", "acme", "schema", "alter", "tmp2.s2", "--set", "k=w", "--rename", "a.b"); err == nil ||
		errors.Is(err, errUsage) || !strings.Contains(err.Error(), "400") {
		t.Fatalf("bad rename: %v", err)
	}
	contains(alice("schema", "get", "tmp2.s2"), "k=v")
	contains(alice("catalog", "drop", "tmp2", "--cascade"), "dropped catalog tmp2")
	// An upstream catalog: type and engine properties; invalid ones are
	// refused by the server with the property named, also on alter.
	contains(alice("catalog", "create", "eng", "--type", "upstream", "--property", "upstream.address=engine.internal:32010",
		"--property", "upstream.dialect=mysql", "--property", "upstream.credentials=engine.json"),
		"eng", "upstream", "upstream.address=engine.internal:32010", "upstream.credentials=engine.json")
	contains(alice("catalog", "list"), "eng", "upstream")
	if _, _, err := admin("tok-alice", "--metalake", "acme", "catalog", "create", "eng2", "--type", "upstream",
		"--property", "upstream.address=engine.internal:0", "--property", "upstream.dialect=mysql"); err == nil ||
		errors.Is(err, errUsage) || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "upstream.address") {
		t.Fatalf("bad upstream address: %v", err)
	}
	if _, _, err := admin("tok-alice", "--metalake", "acme", "catalog", "alter", "eng", "--unset", "upstream.dialect"); err == nil ||
		!strings.Contains(err.Error(), "upstream.dialect") {
		t.Fatalf("removing upstream.dialect: %v", err)
	}
	contains(alice("catalog", "alter", "eng", "--set", "upstream.tls=false"), "upstream.tls=false")
	contains(alice("catalog", "drop", "eng", "--cascade"), "dropped catalog eng")
	contains(alice("tag", "create", "dept", "--allowed-values", "finance,hr", "--comment", "owning department"), "finance,hr")
	contains(alice("tag", "create", "pii"), "(any)")
	contains(alice("tag", "list"), "dept", "finance,hr", "pii", "(any)")
	contains(alice("tag", "attach", "schema", "lake.sales", "dept=finance", "pii"), "dept, pii")
	contains(alice("tag", "list", "schema", "lake.sales"), "dept", "finance", "INHERITED")
	contains(alice("tag", "objects", "dept", "--value", "finance"), "lake.sales")
	contains(alice("tag", "detach", "schema", "lake.sales", "pii"), "now carries: dept")
	contains(alice("role", "create", "reader"), "role reader")
	contains(alice("grant", "reader", "schema", "lake.sales", "use_schema,select_table"), "lake.sales", "use_schema, select_table")
	contains(alice("grant", "reader", "catalog", "lake", "use_catalog"), "use_catalog")
	contains(alice("revoke", "reader", "schema", "lake.sales", "select_table"), "use_schema")
	contains(alice("role", "list"), "reader")
	contains(alice("user", "create", "bob@acme"), "bob@acme")
	contains(alice("user", "grant-role", "bob@acme", "reader"), "reader")
	contains(alice("user", "list"), "bob@acme", "reader")
	contains(alice("policy", "list"), "NAME")
	contains(alice("policy", "create", "eu_rows", "--type", "row_filter", "--content", `{"expression":"region = 'EU'"}`, "--comment", "EU only"),
		"eu_rows", "row_filter", "region = 'EU'", "EU only", "true")
	contains(alice("policy", "alter", "eu_rows", "--comment", "EU and UK", "--content", `{"expression":"region IN ('EU','UK')"}`),
		"EU and UK", "region IN ('EU','UK')")
	contains(alice("policy", "disable", "eu_rows"), "policy eu_rows disabled")
	contains(alice("policy", "list"), "eu_rows", "false")
	contains(alice("policy", "enable", "eu_rows"), "policy eu_rows enabled")
	contains(alice("policy", "alter", "eu_rows", "--rename", "geo_rows"), "geo_rows")
	contains(alice("policy", "get", "geo_rows"), "geo_rows", "true", "EU and UK")
	contains(alice("policy", "attach", "geo_rows", "dept=finance"), "policy geo_rows attached to tag dept=finance")
	contains(alice("policy", "list"), "geo_rows")
	contains(alice("policy", "detach", "geo_rows", "dept"), "policy geo_rows detached from tag dept")
	out = alice("policy", "create", "mask", "--type", "column_mask", "--content", `{"mask":"redact"}`, "--disabled", "--json")
	var pol struct {
		Code   int
		Policy struct {
			Name    string
			Enabled bool
		}
	}
	if err := json.Unmarshal([]byte(out), &pol); err != nil || pol.Code != 0 || pol.Policy.Name != "mask" || pol.Policy.Enabled {
		t.Fatalf("--json policy create: %v: %s", err, out)
	}
	contains(alice("policy", "delete", "mask"), "dropped policy mask")
	contains(alice("policy", "delete", "mask"), "does not exist")
	// Table versions: a table without data has none.
	createTable(t, server, "tok-alice", "/api/metalakes/acme/catalogs/lake/schemas/sales/tables",
		`{"name":"orders","columns":[{"name":"id","type":"bigint","nullable":false}]}`)
	contains(alice("table", "versions", "lake.sales.orders"), "VERSION", "ROWS", "ACTOR")
	out = alice("table", "versions", "lake.sales.orders", "--json")
	var vs struct {
		Code     int
		Versions []any
	}
	if err := json.Unmarshal([]byte(out), &vs); err != nil || vs.Code != 0 || vs.Versions == nil || len(vs.Versions) != 0 {
		t.Fatalf("--json table versions: %v: %s", err, out)
	}
	if _, _, err := admin("tok-alice", "--metalake", "acme", "table", "versions", "lake.sales.nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("versions of a missing table: %v", err)
	}
	contains(alice("events", "--limit", "5"), "OPERATION", "alice@acme")
	if out := alice("events", "--since", "1000000"); strings.Contains(out, "alice@acme") {
		t.Fatalf("events --since in the future:\n%s", out)
	}

	// --json prints the raw body, which parses.
	var tags struct {
		Code int
		Tags []struct{ Name string }
	}
	out = alice("tag", "list", "--json")
	if err := json.Unmarshal([]byte(out), &tags); err != nil || tags.Code != 0 || len(tags.Tags) != 2 {
		t.Fatalf("--json tag list: %v: %s", err, out)
	}

	// Errors: Gravitino's message, not a usage error.
	_, _, err := admin("tok-alice", "--metalake", "acme", "catalog", "create", "lake")
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "AlreadyExistsException") {
		t.Fatalf("duplicate catalog: %v", err)
	}
	_, _, err = admin("tok-alice", "--metalake", "acme", "tag", "attach", "schema", "lake.sales", "dept=nope")
	if err == nil || !strings.Contains(err.Error(), "IllegalArgumentException") {
		t.Fatalf("disallowed tag value: %v", err)
	}
	_, _, err = admin("wrong-token", "--metalake", "acme", "catalog", "list")
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("bad token: %v", err)
	}
	_, _, err = admin("wrong-token", "cluster", "status")
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Fatalf("bad token on cluster status: %v", err)
	}
	_, _, err = admin("tok-alice", "cluster", "status")
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("user on cluster status: %v", err)
	}

	// Drops.
	contains(alice("schema", "drop", "lake.a b"), "dropped schema lake.a b")
	contains(alice("schema", "drop", "lake.a b"), "does not exist")
	contains(ok("tok-admin", "metalake", "drop", "acme", "--force"), "dropped metalake acme")
}

// createTable POSTs a table body to path on server as token (the admin
// command has no table create).
func createTable(t *testing.T, server, token, path, body string) {
	t.Helper()
	req, err := http.NewRequest("POST", server+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("create table: HTTP %d: %s", resp.StatusCode, raw)
	}
}

func TestAdminUsage(t *testing.T) {
	t.Setenv("LAKEGATE_TOKEN", "t")
	t.Setenv("LAKEGATE_METALAKE", "")
	for _, args := range [][]string{
		{"admin"},
		{"admin", "bogus"},
		{"admin", "catalog", "frobnicate"},
		{"admin", "catalog", "get"}, // missing NAME
		{"admin", "--metalake", "m", "schema", "get", "x"}, // not CATALOG.SCHEMA
		{"admin", "--metalake", "m", "grant", "r", "schema", "c.s"},
		{"admin", "--nope", "cluster", "status"},
		{"admin", "cluster", "remove-node"},
		{"admin", "--token", "", "cluster", "status"},
		{"admin", "--metalake", "m", "policy", "create", "p", "--content", "{}"},                          // no --type
		{"admin", "--metalake", "m", "policy", "create", "p", "--type", "row_filter", "--content", "[1]"}, // not an object
		{"admin", "--metalake", "m", "policy", "alter", "p"},                                              // no update
		{"admin", "--metalake", "m", "policy", "enable"},                                                  // missing NAME
		{"admin", "--metalake", "m", "catalog", "alter", "c"},                                             // no update
		{"admin", "--metalake", "m", "schema", "alter", "c.s"},                                            // no update
		{"admin", "--metalake", "m", "catalog", "alter", "c", "--set", "novalue"},                         // not K=V
		{"admin", "--metalake", "m", "catalog", "alter", "c", "--set", "=v"},                              // empty key
		{"admin", "--metalake", "m", "catalog", "alter", "c", "--unset", ""},                              // empty key
		{"admin", "--metalake", "m", "schema", "alter", "c.s", "--set", "k=v", "--unset", "k"},            // set and unset
		{"admin", "--metalake", "m", "schema", "alter", "c", "--rename", "x"},                             // not CATALOG.SCHEMA
		{"admin", "--metalake", "m", "table", "versions", "c.s"},                                          // not CATALOG.SCHEMA.TABLE
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); !errors.Is(err, errUsage) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
}

func TestAdminDomains(t *testing.T) {
	t.Setenv("LAKEGATE_METASRV", "")
	t.Setenv("LAKEGATE_TOKEN", "")
	t.Setenv("LAKEGATE_METALAKE", "")
	server := startAdminMetasrv(t)
	admin := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append([]string{"admin", "--server", server, "--token", "tok-alice", "--metalake", "acme"}, args...), &out, &errOut)
		return out.String(), err
	}
	alice := func(args ...string) string {
		t.Helper()
		out, err := admin(args...)
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
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"admin", "--server", server, "--token", "tok-admin", "metalake", "create", "acme", "--owner", "alice@acme"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	contains(alice("catalog", "create", "cat"), "cat")
	contains(alice("schema", "create", "cat.db"), "db")
	for _, tb := range []string{"trades", "ledger"} {
		createTable(t, server, "tok-alice", "/api/metalakes/acme/catalogs/cat/schemas/db/tables", `{"name":"`+tb+`","columns":[{"name":"id","type":"int"}]}`)
	}
	contains(alice("domain", "create", "Finance", "--new-tag", "finance", "--comment", "money", "--property", "k=v"),
		"Finance", "draft", "finance", "alice@acme", "money", "k=v")
	contains(alice("domain", "create", "Trading", "--new-tag", "trading", "--parent", "Finance"), "Trading", "parent", "Finance")
	contains(alice("tag", "create", "region", "--allowed-values", "eu,us"), "region")
	contains(alice("domain", "create", "Markets", "--tag", "region=eu"), "Markets", "region=eu")
	contains(alice("domain", "list"), "NAME", "Finance", "Trading", "Markets", "region=eu", "draft")
	contains(alice("domain", "list", "--under", "Finance"), "Trading")
	// C6: a subdomain is not published under a DRAFT parent.
	if _, err := admin("domain", "publish", "Trading"); err == nil || errors.Is(err, errUsage) ||
		!strings.Contains(err.Error(), "C6") || !strings.Contains(err.Error(), "400") {
		t.Fatalf("publish under a draft: %v", err)
	}
	contains(alice("domain", "publish", "Finance"), "published")
	contains(alice("domain", "publish", "Trading"), "published")
	contains(alice("domain", "unpublish", "Trading"), "draft")
	contains(alice("domain", "alter", "Markets", "--comment", "mkts", "--set", "a=b", "--rename", "Mkts"), "Mkts", "mkts", "a=b")
	contains(alice("tag", "attach", "table", "cat.db.trades", "trading"), "trading")
	contains(alice("tag", "attach", "schema", "cat.db", "finance"), "finance")
	contains(alice("domain", "members", "Finance"), "RELATIONS", "cat.db.ledger", "inherited from schema cat.db",
		"cat.db.trades", "via subdomain Trading")
	out2 := alice("domain", "members", "Finance", "--domains", "Trading", "--types", "table", "--name-contains", "TRA")
	contains(out2, "cat.db.trades")
	if strings.Contains(out2, "ledger") {
		t.Fatalf("members with scopes:\n%s", out2)
	}
	contains(alice("domain", "of", "table", "cat.db.trades"), "Finance", "Trading", "direct", "via subdomain Trading")
	contains(alice("domain", "move", "Trading", "Mkts"), "Trading", "Mkts")
	contains(alice("domain", "members", "Mkts"), "cat.db.trades", "via subdomain Trading")
	contains(alice("domain", "detach", "Trading"), "Trading")
	if out := alice("domain", "get", "Trading"); strings.Contains(out, "parent") {
		t.Fatalf("detached:\n%s", out)
	}
	contains(alice("domain", "set-tag", "Mkts", "--remove"), "(none)")
	contains(alice("domain", "set-tag", "Mkts", "region=us"), "region=us")
	// --json prints the raw body.
	var d struct {
		Code   int
		Domain struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(alice("domain", "get", "Finance", "--json")), &d); err != nil || d.Code != 0 || d.Domain.Status != "published" {
		t.Fatalf("--json domain get: %v %+v", err, d)
	}
	if _, err := admin("domain", "create", "Finance", "--new-tag", "f2"); err == nil || !strings.Contains(err.Error(), "DomainAlreadyExistsException") {
		t.Fatalf("duplicate domain: %v", err)
	}
	contains(alice("domain", "delete", "Trading"), "dropped domain Trading")
	contains(alice("domain", "delete", "Trading"), "does not exist")
	contains(alice("events", "--limit", "50"), "CreateDomain", "PublishDomain", "SetDomainParent", "DropDomain")

	for _, args := range [][]string{
		{"domain", "create", "X"},                                 // no tag
		{"domain", "create", "X", "--tag", "a", "--new-tag", "b"}, // both
		{"domain", "create", "X", "--tag", "=v"},                  // empty tag name
		{"domain", "move", "X"},                                   // no parent
		{"domain", "alter", "X"},                                  // no update
		{"domain", "set-tag", "X"},                                // neither tag nor --remove
		{"domain", "set-tag", "X", "t", "--remove"},               // both
		{"domain", "of", "table"},                                 // no full name
		{"domain", "frobnicate", "X"},                             // unknown verb
	} {
		if _, err := admin(args...); !errors.Is(err, errUsage) {
			t.Errorf("%q: got %v, want a usage error", args, err)
		}
	}
}

// TestClusterStatusReachability: a member that did not answer its own
// status is shown unreachable; a follower shows when it last heard from
// the leader.
func TestClusterStatusReachability(t *testing.T) {
	var out bytes.Buffer
	a := &admin{stdout: &out}
	st := raftnode.Status{ID: "n1", State: "Leader", Leader: raftnode.Peer{ID: "n1"}, Servers: []raftnode.Server{
		{Peer: raftnode.Peer{ID: "n1", HTTPAddr: "a:1"}, Suffrage: "Voter"},
		{Peer: raftnode.Peer{ID: "n2", HTTPAddr: "b:1"}, Suffrage: "Voter"},
		{Peer: raftnode.Peer{ID: "n3", HTTPAddr: "c:1"}, Suffrage: "Voter"},
	}}
	views := map[string]*raftnode.Status{
		"n1": {State: "Leader", AppliedIndex: 9},
		"n2": {State: "Follower", AppliedIndex: 8, LastContact: time.Now().Add(-2 * time.Second)},
	}
	a.printStatusOf(st, views)
	lines := strings.Split(out.String(), "\n")
	want := map[string][]string{"n1 ": {"yes", "(leader)", "9"}, "n2 ": {"yes", "ago", "8"}, "n3 ": {"no"}}
	for prefix, words := range want {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				found = true
				for _, w := range words {
					if !strings.Contains(l, w) {
						t.Errorf("row %q lacks %q", l, w)
					}
				}
			}
		}
		if !found {
			t.Errorf("no row for %s in:\n%s", prefix, out.String())
		}
	}
}

// TestEventCommandDetail: an event of a grant or revoke says what was given
// or taken, on what, to or from whom.
func TestEventCommandDetail(t *testing.T) {
	enc := func(c catalog.Command) json.RawMessage {
		b, err := catalog.EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	table := catalog.Object{Type: catalog.ObjectTable, Name: "lake.sales.orders"}
	cases := []struct {
		raw  json.RawMessage
		want string
	}{
		{enc(catalog.GrantPrivileges{Role: "analyst", Object: table, Privileges: []catalog.PrivilegeCondition{
			{Name: catalog.PrivSelectTable, Condition: catalog.Allow}, {Name: catalog.PrivModifyTable, Condition: catalog.Deny}}}),
			"SELECT_TABLE, MODIFY_TABLE (DENY) on table lake.sales.orders to role analyst"},
		{enc(catalog.RevokePrivileges{Role: "analyst", Object: table, Privileges: []catalog.PrivilegeCondition{{Name: catalog.PrivSelectTable, Condition: catalog.Allow}}}),
			"SELECT_TABLE on table lake.sales.orders from role analyst"},
		{enc(catalog.GrantRoles{Grantee: catalog.Owner{Type: catalog.OwnerUser, Name: "bob"}, Roles: []string{"a", "b"}}), "roles a, b to bob"},
		{enc(catalog.SetOwner{Object: table, Owner: catalog.Owner{Type: catalog.OwnerGroup, Name: "data-eng"}}),
			"owner of table lake.sales.orders set to group data-eng"},
		{enc(catalog.CreateRole{Name: "x"}), ""},
		{nil, ""},
		{json.RawMessage(`{"v":9}`), ""},
	}
	for _, c := range cases {
		if got := commandDetail(c.raw); got != c.want {
			t.Errorf("commandDetail(%s) = %q, want %q", c.raw, got, c.want)
		}
	}
}

func TestEventRows(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	table := catalog.Object{Type: catalog.ObjectTable, Name: "lake.sales.orders"}
	demo := catalog.Object{Type: catalog.ObjectMetalake, Name: "demo"}
	grant, err := catalog.EncodeCommand(catalog.GrantPrivileges{Role: "analyst", Object: table,
		Privileges: []catalog.PrivilegeCondition{{Name: catalog.PrivSelectTable, Condition: catalog.Allow}}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		e    metasrv.Event
		want string // the row's cells joined by " | "
	}{
		{"applied grant", metasrv.Event{Metalake: "demo", Event: catalog.Event{Index: 42, Time: at, Actor: "admin@demo",
			Operation: "GrantPrivileges", Target: table, Outcome: catalog.Success}, Command: grant},
			"42 | 2026-12-02 09:30:00 | admin@demo | GrantPrivileges | table lake.sales.orders | success | SELECT_TABLE on table lake.sales.orders to role analyst"},
		{"rejected before the log", metasrv.Event{Metalake: "demo", Event: catalog.Event{Time: at, Actor: "bob@demo",
			Operation: "Privileges", Target: demo, Outcome: catalog.Failure,
			Detail: `metasrv: bad request: request body: catalog: invalid argument: unknown privilege "SELECT_EVERYTHING"`},
			Request: "PUT /api/metalakes/{m}/permissions/roles/{role}/{type}/{fullName}/grant", Reason: "bad_request"},
			`- | 2026-12-02 09:30:00 | bob@demo | PUT /api/metalakes/{m}/permissions/roles/{role}/{type}/{fullName}/grant | metalake demo | rejected: bad request | request body: catalog: invalid argument: unknown privilege "SELECT_EVERYTHING"`},
		{"forged header, delegated", metasrv.Event{Metalake: "demo", Event: catalog.Event{Time: at, Actor: "bob@demo",
			Operation: "DropRole", Target: demo, Outcome: catalog.Failure, Detail: "metasrv: forbidden: forwarding headers from a user principal"},
			Delegator: "svc", Request: "DELETE /api/metalakes/{m}/roles/{role}", Reason: "forbidden"},
			"- | 2026-12-02 09:30:00 | bob@demo (via svc) | DELETE /api/metalakes/{m}/roles/{role} | metalake demo | rejected: forbidden | forwarding headers from a user principal"},
		{"rejected internal request without a route", metasrv.Event{Metalake: "demo", Event: catalog.Event{Time: at, Actor: "svc",
			Operation: "ResolveTables", Target: demo, Outcome: catalog.Failure, Detail: "metasrv: bad request: subject must be a user name"},
			Reason: "bad_request"},
			"- | 2026-12-02 09:30:00 | svc | ResolveTables | metalake demo | rejected: bad request | subject must be a user name"},
		{"pre-event", metasrv.Event{Metalake: "demo", Event: catalog.Event{Time: at, Actor: "alice@demo",
			Operation: "SetDomainParent", Target: catalog.Object{Type: catalog.ObjectDomain, Name: "Trading"}, Outcome: metasrv.OutcomePre,
			Detail: `parent -> "Markets"`}},
			`- | 2026-12-02 09:30:00 | alice@demo | SetDomainParent | domain Trading | pre | parent -> "Markets"`},
	}
	for _, c := range cases {
		if got := strings.Join(eventRow(c.e), " | "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
