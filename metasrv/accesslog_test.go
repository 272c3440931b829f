package metasrv_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"lakegate/catalog"
	"lakegate/metasrv/api"
	"lakegate/metasrv/client"
	"lakegate/metasrv/raftnode"
)

const (
	alPath = "/internal/v1/metalakes/acme/access-log"
	alSID  = "0123456789abcdef0123456789abcdef"
)

func alFiles(sid string, names ...string) []api.DataFile {
	var out []api.DataFile
	for _, n := range names {
		out = append(out, api.DataFile{Path: "tables/" + sid + "/seg/" + n + ".parquet", Size: 10, Rows: 2, SHA256: strings.Repeat("ab", 32)})
	}
	return out
}

func alBody(sid string, names ...string) api.CommitAccessLogRequest {
	return api.CommitAccessLogRequest{Catalog: "lake", StorageID: sid, Files: alFiles(sid, names...)}
}

// TestAccessLogCommitAuth: only a query_service delegated for the tenant,
// as itself, commits the tenant's access log; everything else is refused
// like on the other internal endpoints, and audited.
func TestAccessLogCommitAuth(t *testing.T) {
	n := startDelegationNode(t)
	governedLake(t, n)
	dh := map[string]string{api.DelegateTenantHeader: "acme", api.DelegateUserHeader: "alice@acme"}
	for _, tc := range []struct {
		name   string
		token  string
		header map[string]string
		status int
		detail string
	}{
		{"no token", "", nil, http.StatusUnauthorized, ""},
		{"the tenant's owner", tokAlice, nil, http.StatusForbidden, "for query_service principals"},
		{"a user", tokBob, nil, http.StatusForbidden, "for query_service principals"},
		{"an operator", tokAdmin, nil, http.StatusForbidden, "for query_service principals"},
		{"another tenant's gateway", tokGWOther, nil, http.StatusForbidden, "not a delegate"},
		{"the gateway for a user", tokGW, dh, http.StatusForbidden, "without delegation headers"},
		{"the gateway naming a caller", tokGW, map[string]string{api.CallerHeader: "alice@acme"}, http.StatusForbidden, "forwarding headers"},
		{"a peer forwarding as another node", tokPeer, map[string]string{api.CallerHeader: "gw", raftnode.ForwardedHeader: "n2"}, http.StatusForbidden, "member of the cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, n, call{method: "POST", path: alPath, token: tc.token, header: tc.header, body: alBody(alSID, "a")})
			if r.status != tc.status {
				t.Fatalf("HTTP %d: %s", r.status, r.raw)
			}
			if tc.detail != "" && !strings.Contains(r.message(), tc.detail) {
				t.Fatalf("message %q lacks %q", r.message(), tc.detail)
			}
		})
	}
	if _, ok := n.FSM().Lake("acme"); !ok {
		t.Fatal("no acme")
	}
	if l, _ := n.FSM().Lake("acme"); hasObject(l.Snapshot, catalog.Schema("lake.system")) {
		t.Fatal("a refused commit created the schema")
	}
	if !auditHas(n, "gw-other", "", "not a delegate") {
		t.Fatal("another tenant's gateway not audited")
	}
	// The tenant's gateway, as itself: accepted.
	r := must(t, n, call{method: "POST", path: alPath, token: tokGW, body: alBody(alSID, "a")})
	if r.body["version"] != float64(1) || r.body["storageId"] != alSID {
		t.Fatalf("commit: %s", r.raw)
	}
}

func hasObject(s *catalog.Snapshot, o catalog.Object) bool {
	_, ok := s.Object(o)
	return ok
}

// TestAccessLogCommitCreatesOnceThenAppends: the first commit creates the
// schema and the table (owner: the metalake's owner), each commit is one
// proposal (one generation), audited as CommitAccessLog by the owner on
// the gateway's behalf; the client reads the table's storage id.
func TestAccessLogCommitCreatesOnceThenAppends(t *testing.T) {
	n := startDelegationNode(t)
	governedLake(t, n)
	c, err := client.New(client.Config{Addrs: []string{n.addr}, Scheme: "http", Token: tokGW})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	ctx := t.Context()
	if sid, v, err := c.AccessLogTable(ctx, "acme", "lake"); err != nil || sid != "" || v != 0 {
		t.Fatalf("before: %q %d %v", sid, v, err)
	}
	v1, g1, err := c.CommitAccessLog(ctx, "acme", "lake", alSID, alFiles(alSID, "a"))
	if err != nil || v1 != 1 {
		t.Fatalf("first commit: %d %v", v1, err)
	}
	if sid, v, err := c.AccessLogTable(ctx, "acme", "lake"); err != nil || sid != alSID || v != 1 {
		t.Fatalf("after: %q %d %v", sid, v, err)
	}
	v2, g2, err := c.CommitAccessLog(ctx, "acme", "lake", alSID, alFiles(alSID, "b", "c"))
	if err != nil || v2 != 2 || g2 != g1+1 {
		t.Fatalf("second commit: version %d generation %d after %d: %v", v2, g2, g1, err)
	}
	l, _ := n.FSM().Lake("acme")
	for _, o := range []catalog.Object{catalog.Schema("lake.system"), catalog.Table("lake.system.access_events")} {
		if ow, ok := l.Snapshot.Owner(o); !ok || ow != (catalog.Owner{Type: catalog.OwnerUser, Name: "alice@acme"}) {
			t.Fatalf("owner of %s: %v %v", o, ow, ok)
		}
	}
	_, ver, _ := l.Snapshot.TableVersion("lake.system.access_events", 0)
	if len(ver.Files) != 3 || ver.Rows != 6 || len(ver.Columns) != len(api.AccessLogColumns()) {
		t.Fatalf("version 2: %+v", ver)
	}
	commits := 0
	for _, e := range n.Audit().Events("acme", 0, 0, 1000) {
		if e.Operation == "CommitAccessLog" && e.Outcome == "success" {
			commits++
			if e.Actor != "alice@acme" || e.Delegator != "gw" || e.Target.Name != "lake.system.access_events" {
				t.Fatalf("audit event %+v", e)
			}
		}
	}
	if commits != 2 {
		t.Fatalf("%d CommitAccessLog events", commits)
	}
	// Files under another storage id: a conflict, nothing committed.
	if _, _, err := c.CommitAccessLog(ctx, "acme", "lake", "fedcba9876543210fedcba9876543210",
		alFiles("fedcba9876543210fedcba9876543210", "d")); !isStatus(err, client.ErrVersionConflict) {
		t.Fatalf("another storage id: %v", err)
	}
	// Bad bodies.
	for _, b := range []any{
		api.CommitAccessLogRequest{Catalog: "lake", StorageID: alSID},
		api.CommitAccessLogRequest{Catalog: "", StorageID: alSID, Files: alFiles(alSID, "e")},
		api.CommitAccessLogRequest{Catalog: "nope", StorageID: alSID, Files: alFiles(alSID, "e")},
		`{"catalog":"lake","storageId":"x","files":[],"extra":1}`,
	} {
		r := do(t, n, call{method: "POST", path: alPath, token: tokGW, body: b})
		if r.status != http.StatusBadRequest && r.status != http.StatusNotFound {
			t.Fatalf("%v: HTTP %d %s", b, r.status, r.raw)
		}
	}
	if _, v, _ := c.AccessLogTable(ctx, "acme", "lake"); v != 2 {
		t.Fatalf("a refused commit moved the version to %d", v)
	}
}

func isStatus(err error, want error) bool {
	return err != nil && errors.Is(err, want)
}

// TestAccessLogSecondTenant: a gateway of another tenant cannot commit into
// or read the first tenant's access log, whatever the body says.
func TestAccessLogSecondTenant(t *testing.T) {
	n := startDelegationNode(t)
	governedLake(t, n)
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "other", "owner": "eve@other"}})
	other, err := client.New(client.Config{Addrs: []string{n.addr}, Scheme: "http", Token: tokGWOther})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.CloseIdleConnections)
	if _, _, err := other.CommitAccessLog(t.Context(), "acme", "lake", alSID, alFiles(alSID, "a")); !isStatus(err, client.ErrForbidden) {
		t.Fatalf("commit into acme: %v", err)
	}
	if _, _, err := other.AccessLogTable(t.Context(), "acme", "lake"); !isStatus(err, client.ErrForbidden) {
		t.Fatalf("read acme's: %v", err)
	}
	// The acme gateway cannot commit into other's either.
	r := do(t, n, call{method: "POST", path: "/internal/v1/metalakes/other/access-log", token: tokGW, body: alBody(alSID, "a")})
	if r.status != http.StatusForbidden {
		t.Fatalf("acme's gateway into other: HTTP %d %s", r.status, r.raw)
	}
	if l, _ := n.FSM().Lake("acme"); hasObject(l.Snapshot, catalog.Schema("lake.system")) {
		t.Fatal("a refused commit created the schema")
	}
}

// TestSystemSchemaReadOnlyREST: no REST write touches a system schema,
// not even the metalake owner's, and a delegated user's version commit is
// refused too; the table is governed like any other (a grant, then a
// resolve through the internal API).
func TestSystemSchemaReadOnlyREST(t *testing.T) {
	n := startDelegationNode(t)
	governedLake(t, n)
	must(t, n, call{method: "POST", path: alPath, token: tokGW, body: alBody(alSID, "a")})
	as := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	tbl := "/catalogs/lake/schemas/system/tables/access_events"
	cols := []any{map[string]any{"name": "id", "type": "int"}}
	for _, tc := range []struct {
		name string
		c    call
	}{
		{"create the schema", as("POST", "/catalogs/lake/schemas", map[string]any{"name": "system"})},
		{"create it in another case", as("POST", "/catalogs/lake/schemas", map[string]any{"name": "SYSTEM"})},
		{"drop the schema", as("DELETE", "/catalogs/lake/schemas/system?cascade=true", nil)},
		{"alter the schema", as("PUT", "/catalogs/lake/schemas/system", `{"updates":[{"@type":"setProperty","property":"k","value":"v"}]}`)},
		{"create a table", as("POST", "/catalogs/lake/schemas/system/tables", map[string]any{"name": "t", "columns": cols})},
		{"drop the table", as("DELETE", tbl, nil)},
		{"alter the table", as("PUT", tbl, `{"updates":[{"@type":"setProperty","property":"k","value":"v"}]}`)},
		{"add a column", as("PUT", tbl, `{"updates":[{"@type":"addColumn","fieldName":["x"],"type":"string"}]}`)},
		{"rename the table away", as("PUT", tbl, `{"updates":[{"@type":"rename","newName":"t2","newSchemaName":"sales"}]}`)},
		{"move a table in", as("PUT", "/catalogs/lake/schemas/sales/tables/orders", `{"updates":[{"@type":"rename","newName":"orders","newSchemaName":"system"}]}`)},
		{"commit a version", as("POST", tbl+"/versions", map[string]any{"base": 1})},
		{"a gateway's delegated commit", call{method: "POST", path: ml + tbl + "/versions", token: tokGW,
			header: map[string]string{api.DelegateTenantHeader: "acme", api.DelegateUserHeader: "alice@acme"},
			body:   map[string]any{"base": 1, "files": alFiles(alSID, "b")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := expect(t, n, tc.c, http.StatusForbidden, api.CodeForbidden)
			if !strings.Contains(r.message(), "access log and is read-only") {
				t.Fatalf("message: %s", r.raw)
			}
		})
	}
	l, _ := n.FSM().Lake("acme")
	if _, v, ok := l.Snapshot.TableVersion("lake.system.access_events", 0); !ok || v.Version != 1 {
		t.Fatalf("the access log changed: %+v %v", v, ok)
	}
	// Governed like any table: granted to reader (bob), it resolves.
	must(t, n, as("PUT", "/permissions/roles/reader/schema/lake.system/grant", `{"privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"}]}`))
	must(t, n, as("PUT", "/permissions/roles/reader/table/lake.system.access_events/grant", `{"privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}`))
	body := map[string]any{"subject": "bob@acme", "catalog": "lake", "refs": []map[string]any{{"schema": "system", "table": "access_events", "privilege": "SELECT_TABLE"}}}
	res := results(t, rawResolve(t, n, tokGW, body, nil))
	var d api.TableDescriptor
	if err := json.Unmarshal(res[0], &d); err != nil || d.StorageID != alSID || len(d.Files) != 1 {
		t.Fatalf("resolve: %s", res[0])
	}
	// Writing it is not: MODIFY_TABLE resolves nothing for bob.
	body["refs"] = []map[string]any{{"schema": "system", "table": "access_events", "privilege": "MODIFY_TABLE"}}
	if res := results(t, rawResolve(t, n, tokGW, body, nil)); !bytes.Equal(res[0], api.UnavailableResult) {
		t.Fatalf("modify: %s", res[0])
	}
}

// TestAccessLogCommitForwarded: a follower forwards the commit to the
// leader, which checks the gateway again.
func TestAccessLogCommitForwarded(t *testing.T) {
	n1 := withAcme(t, startDNode(t, "n1", true))
	n2 := startDNode(t, "n2", false)
	if err := n2.Join(t.Context(), n1.addr); err != nil {
		t.Fatal(err)
	}
	leader, follower := n1, n2
	if waitLeader(t, n1, n2) == n2 {
		leader, follower = n2, n1
	}
	governedLake(t, leader)
	for _, tc := range []struct {
		name   string
		token  string
		status int
	}{
		{"another tenant's gateway", tokGWOther, http.StatusForbidden},
		{"the tenant's gateway", tokGW, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, follower, call{method: "POST", path: alPath, token: tc.token, body: alBody(alSID, "a")})
			if r.status != tc.status {
				t.Fatalf("HTTP %d: %s", r.status, r.raw)
			}
		})
	}
	l, _ := leader.FSM().Lake("acme")
	if _, v, ok := l.Snapshot.TableVersion("lake.system.access_events", 0); !ok || v.Version != 1 {
		t.Fatalf("on the leader: %+v %v", v, ok)
	}
}
