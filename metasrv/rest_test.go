package metasrv_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"lakegate/metasrv/raftnode"
)

const ml = "/api/metalakes/acme"

func names(r resp) []string {
	var out []string
	for _, v := range r.body["names"].([]any) {
		out = append(out, v.(string))
	}
	return out
}

func TestMetalakes(t *testing.T) {
	n := single(t)
	r := must(t, n, call{method: "GET", path: ml, token: tokAlice})
	if m := r.body["metalake"].(map[string]any); m["name"] != "acme" || m["comment"] != "Acme" || m["owner"] != "alice@acme" {
		t.Fatalf("metalake: %s", r.raw)
	}
	expect(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme"}}, 409, 1004)
	expect(t, n, call{method: "POST", path: "/api/metalakes", token: tokAlice, body: map[string]any{"name": "evil"}}, 403, 1008)
	expect(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "bad name"}}, 400, 1001)
	expect(t, n, call{method: "GET", path: ml, token: tokEve}, 404, 1003)
	expect(t, n, call{method: "GET", path: ml, token: "wrong"}, 401, 1011)
	expect(t, n, call{method: "GET", path: ml}, 401, 1011)
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "other", "owner": "eve@other"}})
	// Each tenant lists only its own; the admin lists all.
	if ls := must(t, n, call{method: "GET", path: "/api/metalakes", token: tokEve}).body["metalakes"].([]any); len(ls) != 1 {
		t.Fatalf("eve lists %v", ls)
	}
	if ls := must(t, n, call{method: "GET", path: "/api/metalakes", token: tokAdmin}).body["metalakes"].([]any); len(ls) != 2 {
		t.Fatalf("admin lists %v", ls)
	}
	r = must(t, n, call{method: "PUT", path: ml, token: tokAdmin, body: `{"updates":[{"@type":"setProperty","property":"k","value":"v"},{"@type":"updateComment","newComment":"c2"}]}`})
	if m := r.body["metalake"].(map[string]any); m["comment"] != "c2" || m["properties"].(map[string]any)["k"] != "v" {
		t.Fatalf("alter: %s", r.raw)
	}
	expect(t, n, call{method: "PUT", path: ml, token: tokAdmin, body: `{"updates":[{"@type":"rename","newName":"x"}]}`}, 405, 1006)
	expect(t, n, call{method: "PUT", path: ml, token: tokAlice, body: `{"updates":[]}`}, 403, 1008)
	expect(t, n, call{method: "DELETE", path: "/api/metalakes/other", token: tokAlice}, 404, 1003)
	if r := must(t, n, call{method: "DELETE", path: "/api/metalakes/other", token: tokAdmin}); r.body["dropped"] != true {
		t.Fatalf("drop: %s", r.raw)
	}
	if r := must(t, n, call{method: "DELETE", path: "/api/metalakes/other", token: tokAdmin}); r.body["dropped"] != false {
		t.Fatalf("second drop: %s", r.raw)
	}
}

func TestTreeObjects(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	r := must(t, n, a("POST", "/catalogs", map[string]any{"name": "lake", "type": "managed", "comment": "c"}))
	if c := r.body["catalog"].(map[string]any); c["name"] != "lake" || c["provider"] != "lakegate" || c["audit"].(map[string]any)["creator"] != "alice@acme" {
		t.Fatalf("catalog: %s", r.raw)
	}
	must(t, n, a("POST", "/catalogs/lake/schemas", map[string]any{"name": "sales"}))
	r = must(t, n, a("POST", "/catalogs/lake/schemas/sales/tables", map[string]any{"name": "orders",
		"columns": []any{map[string]any{"name": "id", "type": "bigint", "nullable": false}, map[string]any{"name": "amount", "type": "decimal(10,2)"}}}))
	tb := r.body["table"].(map[string]any)
	if cols := tb["columns"].([]any); len(cols) != 2 || cols[0].(map[string]any)["nullable"] != false || cols[1].(map[string]any)["nullable"] != true {
		t.Fatalf("table: %s", r.raw)
	}
	gen := r.gen()
	// Conflicts, not found, bad bodies: right code, no state change.
	expect(t, n, a("POST", "/catalogs", map[string]any{"name": "lake"}), 409, 1004)
	expect(t, n, a("GET", "/catalogs/nope", nil), 404, 1003)
	expect(t, n, a("GET", "/catalogs/lake/schemas/nope/tables/orders", nil), 404, 1003)
	expect(t, n, a("POST", "/catalogs/nope/schemas", map[string]any{"name": "s"}), 404, 1003)
	for _, bad := range []call{
		a("POST", "/catalogs", `{"name":"c2","bogus":1}`),
		a("POST", "/catalogs", `{"name":42}`),
		a("POST", "/catalogs", `{"name":"a.b"}`),
		a("POST", "/catalogs", `{"name":""}`),
		a("POST", "/catalogs", `{"name":"c2"} {}`),
		a("POST", "/catalogs", `not json`),
		a("POST", "/catalogs", `{"name":"c2","comment":"`+strings.Repeat("x", 1<<20)+`"}`),
		a("POST", "/catalogs/lake/schemas/sales/tables", `{"name":"t2","columns":[{"name":"c"}]}`),
		a("PUT", "/catalogs/lake/schemas/sales/tables/orders", `{"updates":[{"@type":"explode"}]}`),
	} {
		expect(t, n, bad, 400, 1001)
	}
	if g := must(t, n, a("GET", "/catalogs/lake", nil)).gen(); g != gen {
		t.Fatalf("generation moved from %d to %d after rejected requests", gen, g)
	}
	// Lists.
	r = must(t, n, a("GET", "/catalogs/lake/schemas/sales/tables", nil))
	if ids := r.body["identifiers"].([]any); len(ids) != 1 || ids[0].(map[string]any)["name"] != "orders" {
		t.Fatalf("list tables: %s", r.raw)
	}
	if cs := must(t, n, a("GET", "/catalogs?details=true", nil)).body["catalogs"].([]any); len(cs) != 1 {
		t.Fatalf("list catalogs: %v", cs)
	}
	// Alter: columns and rename.
	r = must(t, n, a("PUT", "/catalogs/lake/schemas/sales/tables/orders", `{"updates":[
		{"@type":"addColumn","fieldName":["note"],"type":"varchar"},
		{"@type":"renameColumn","oldFieldName":["amount"],"newFieldName":"total"},
		{"@type":"deleteColumn","fieldName":["id"]},
		{"@type":"rename","newName":"orders2"}]}`))
	tb = r.body["table"].(map[string]any)
	if tb["name"] != "orders2" || len(tb["columns"].([]any)) != 2 || tb["columns"].([]any)[0].(map[string]any)["name"] != "total" {
		t.Fatalf("alter table: %s", r.raw)
	}
	expect(t, n, a("PUT", "/catalogs/lake", `{"updates":[{"@type":"addColumn","fieldName":["x"],"type":"int"}]}`), 405, 1006)
	// Names with spaces and slashes, URL-encoded.
	must(t, n, a("POST", "/catalogs/lake/schemas", map[string]any{"name": "a b/c"}))
	must(t, n, a("GET", "/catalogs/lake/schemas/a%20b%2Fc", nil))
	// Delete: non-empty needs cascade; missing answers dropped:false.
	expect(t, n, a("DELETE", "/catalogs/lake/schemas/sales", nil), 409, 1005)
	if r := must(t, n, a("DELETE", "/catalogs/lake/schemas/sales?cascade=true", nil)); r.body["dropped"] != true {
		t.Fatalf("drop: %s", r.raw)
	}
	if r := must(t, n, a("DELETE", "/catalogs/lake/schemas/sales", nil)); r.body["dropped"] != false {
		t.Fatalf("drop missing: %s", r.raw)
	}
	// Cross-tenant and invisible: 404 exactly like a missing object.
	expect(t, n, call{method: "GET", path: ml + "/catalogs/lake", token: tokEve}, 404, 1003)
	expect(t, n, call{method: "POST", path: ml + "/catalogs", token: tokEve, body: map[string]any{"name": "x"}}, 404, 1003)
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	rb := expect(t, n, call{method: "GET", path: ml + "/catalogs/lake", token: tokBob}, 404, 1003)
	rm := expect(t, n, call{method: "GET", path: ml + "/catalogs/missing", token: tokBob}, 404, 1003)
	if strings.Contains(string(rb.raw), "lake") != strings.Contains(string(rm.raw), "missing") {
		t.Fatalf("invisible and missing answers differ in shape: %s vs %s", rb.raw, rm.raw)
	}
	expect(t, n, call{method: "POST", path: ml + "/catalogs", token: tokBob, body: map[string]any{"name": "x"}}, 403, 1008)
}

func TestTagsAndAssociations(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	createLakeSalesOrders(t, n)
	r := must(t, n, a("POST", "/tags", map[string]any{"name": "dept", "allowedValues": []string{"finance", "hr"}}))
	if av := r.body["tag"].(map[string]any)["allowedValues"].([]any); len(av) != 2 {
		t.Fatalf("tag: %s", r.raw)
	}
	must(t, n, a("POST", "/tags", map[string]any{"name": "pii"}))
	r = must(t, n, a("POST", "/tags", map[string]any{"name": "flag", "allowedValues": []string{}}))
	if av, ok := r.body["tag"].(map[string]any)["allowedValues"].([]any); !ok || len(av) != 0 {
		t.Fatalf("no-value tag must keep allowedValues []: %s", r.raw)
	}
	expect(t, n, a("POST", "/tags", map[string]any{"name": "pii"}), 409, 1004)
	if got := names(must(t, n, a("GET", "/tags", nil))); !slices.Equal(got, []string{"dept", "flag", "pii"}) {
		t.Fatalf("tags %v", got)
	}
	must(t, n, a("PUT", "/tags/pii", `{"updates":[{"@type":"updateComment","newComment":"personal"},{"@type":"setProperty","property":"p","value":"1"}]}`))
	if c := must(t, n, a("GET", "/tags/pii", nil)).body["tag"].(map[string]any)["comment"]; c != "personal" {
		t.Fatalf("comment %v", c)
	}

	tbl := "/objects/table/lake.sales.orders/tags"
	v2 := map[string]string{"Content-Type": "application/vnd.gravitino.v2+json", "Accept": "application/vnd.gravitino.v2+json"}
	// v1: names only; a tag with an allowed-values list needs a value.
	r = must(t, n, a("POST", tbl, map[string]any{"tagsToAdd": []string{"pii"}}))
	if got := names(r); !slices.Equal(got, []string{"pii"}) {
		t.Fatalf("v1 add: %s", r.raw)
	}
	expect(t, n, a("POST", tbl, map[string]any{"tagsToAdd": []string{"pii"}}), 409, 1004)
	expect(t, n, a("POST", tbl, map[string]any{"tagsToAdd": []string{"dept"}}), 400, 1001)
	expect(t, n, a("POST", tbl, map[string]any{"tagsToAdd": []string{"nope"}}), 404, 1003)
	expect(t, n, a("POST", tbl, map[string]any{"tagsToAdd": []string{"flag"}, "tagsToRemove": []string{"flag"}}), 400, 1001)
	// v2: pairs.
	c := a("POST", tbl, map[string]any{"tagsToAdd": []any{map[string]any{"name": "dept", "value": "finance"}}})
	c.header = v2
	if got := names(must(t, n, c)); !slices.Equal(got, []string{"dept", "pii"}) {
		t.Fatalf("v2 add: %v", got)
	}
	for _, bad := range []map[string]any{
		{"tagsToAdd": []any{map[string]any{"name": "dept", "value": "legal"}}},                                                                    // not allowed
		{"tagsToAdd": []any{map[string]any{"name": "dept"}}},                                                                                      // needs a value
		{"tagsToAdd": []any{map[string]any{"name": "flag", "value": "x"}}},                                                                        // no value allowed
		{"tagsToAdd": []any{map[string]any{"name": "pii", "value": "a"}, map[string]any{"name": "pii"}}},                                          // with and without
		{"tagsToAdd": []any{map[string]any{"name": "dept", "value": "hr"}}, "tagsToRemove": []any{map[string]any{"name": "dept", "value": "hr"}}}, // both lists
	} {
		c := a("POST", tbl, bad)
		c.header = v2
		expect(t, n, c, 400, 1001)
	}
	c = a("POST", tbl, `{"tagsToAdd":["pii"]}`) // v1 body under the v2 type
	c.header = v2
	expect(t, n, c, 400, 1001)
	// Inherited tags on the column; objects carrying a tag with a value.
	must(t, n, a("POST", "/objects/schema/lake.sales/tags", map[string]any{"tagsToAdd": []string{"flag"}}))
	r = must(t, n, a("GET", "/objects/column/lake.sales.orders.id/tags?details=true", nil))
	tags := r.body["tags"].([]any)
	if len(tags) != 3 {
		t.Fatalf("effective tags: %s", r.raw)
	}
	for _, x := range tags {
		m := x.(map[string]any)
		if m["inherited"] != true {
			t.Fatalf("column tag not inherited: %s", r.raw)
		}
		if m["name"] == "dept" && m["assignmentValues"].([]any)[0] != "finance" {
			t.Fatalf("values: %s", r.raw)
		}
	}
	r = must(t, n, a("GET", "/tags/dept/objects?value=finance", nil))
	if objs := r.body["metadataObjects"].([]any); len(objs) != 1 || objs[0].(map[string]any)["type"] != "table" || objs[0].(map[string]any)["fullName"] != "lake.sales.orders" {
		t.Fatalf("objects: %s", r.raw)
	}
	if objs := must(t, n, a("GET", "/tags/dept/objects?value=hr", nil)).body["metadataObjects"].([]any); len(objs) != 0 {
		t.Fatalf("value filter: %v", objs)
	}
	// Another tenant and a user without VIEW_TAG see nothing.
	expect(t, n, call{method: "GET", path: ml + "/tags/pii", token: tokEve}, 404, 1003)
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	expect(t, n, call{method: "GET", path: ml + "/tags/pii", token: tokBob}, 404, 1003)
	if got := must(t, n, call{method: "GET", path: ml + "/tags", token: tokBob}).body["names"].([]any); len(got) != 0 {
		t.Fatalf("bob sees tags %v", got)
	}
	// Rename, drop.
	must(t, n, a("PUT", "/tags/pii", `{"updates":[{"@type":"rename","newName":"pii2"}]}`))
	expect(t, n, a("GET", "/tags/pii", nil), 404, 1003)
	if r := must(t, n, a("DELETE", "/tags/pii2", nil)); r.body["dropped"] != true {
		t.Fatalf("drop tag: %s", r.raw)
	}
	if got := names(must(t, n, a("GET", tbl, nil))); !slices.Equal(got, []string{"dept", "flag"}) {
		t.Fatalf("after drop: %v", got)
	}
}

func TestRolesUsersGrants(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	bob := func(method, path string) call { return call{method: method, path: ml + path, token: tokBob} }
	createLakeSalesOrders(t, n)
	r := must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	if r.body["user"].(map[string]any)["name"] != "bob@acme" {
		t.Fatalf("user: %s", r.raw)
	}
	expect(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}), 409, 1004)
	r = must(t, n, a("POST", "/roles", `{"name":"reader","securableObjects":[
		{"fullName":"lake","type":"CATALOG","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"lake.sales","type":"schema","privileges":[{"name":"use_schema","condition":"allow"}]}]}`))
	if so := r.body["role"].(map[string]any)["securableObjects"].([]any); len(so) != 2 || so[0].(map[string]any)["type"] != "catalog" {
		t.Fatalf("role: %s", r.raw)
	}
	expect(t, n, a("POST", "/roles", `{"name":"bad","securableObjects":[{"fullName":"lake","type":"catalog","privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"},{"name":"SELECT_TABLE","condition":"DENY"}]}]}`), 400, 1001)
	expect(t, n, a("POST", "/roles", `{"name":"bad","securableObjects":[{"fullName":"lake","type":"catalog","privileges":[{"name":"NOPE","condition":"ALLOW"}]}]}`), 400, 1001)
	expect(t, n, a("PUT", "/permissions/roles/reader/catalog/lake/grant", `{"privileges":[{"name":"MANAGE_USERS","condition":"ALLOW"}]}`), 400, 1001)
	r = must(t, n, a("PUT", "/permissions/roles/reader/table/lake.sales.orders/grant", `{"privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}`))
	if so := r.body["role"].(map[string]any)["securableObjects"].([]any); len(so) != 3 {
		t.Fatalf("grant: %s", r.raw)
	}
	// Before the role binding bob sees nothing; after it, the table.
	expect(t, n, bob("GET", "/catalogs/lake/schemas/sales/tables/orders"), 404, 1003)
	r = must(t, n, a("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["reader"]}`))
	if roles := r.body["user"].(map[string]any)["roles"].([]any); len(roles) != 1 {
		t.Fatalf("grant roles: %s", r.raw)
	}
	must(t, n, bob("GET", "/catalogs/lake/schemas/sales/tables/orders"))
	must(t, n, bob("GET", "/roles/reader"))
	must(t, n, bob("GET", "/users/bob@acme"))
	expect(t, n, bob("GET", "/users/alice@acme"), 404, 1003)
	expect(t, n, a("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["nope"]}`), 404, 1003)
	// Owners.
	if o := must(t, n, a("GET", "/owners/table/lake.sales.orders", nil)).body["owner"].(map[string]any); o["name"] != "alice@acme" || o["type"] != "user" {
		t.Fatalf("owner %v", o)
	}
	must(t, n, a("PUT", "/owners/table/lake.sales.orders", `{"name":"bob@acme","type":"USER"}`))
	if o := must(t, n, bob("GET", "/owners/table/lake.sales.orders")).body["owner"].(map[string]any); o["name"] != "bob@acme" {
		t.Fatalf("owner %v", o)
	}
	// Revoke: bob loses the table again.
	must(t, n, a("PUT", "/permissions/roles/reader/table/lake.sales.orders/revoke", `{"privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}`))
	must(t, n, a("PUT", "/permissions/users/bob@acme/revoke", `{"roleNames":["reader"]}`))
	expect(t, n, bob("GET", "/roles/reader"), 404, 1003)
	if got := names(must(t, n, a("GET", "/roles", nil))); !slices.Equal(got, []string{"reader"}) {
		t.Fatalf("roles %v", got)
	}
	// Groups.
	must(t, n, a("POST", "/groups", map[string]any{"name": "analysts"}))
	r = must(t, n, a("PUT", "/permissions/groups/analysts/grant", `{"roleNames":["reader"]}`))
	if r.body["group"].(map[string]any)["roles"].([]any)[0] != "reader" {
		t.Fatalf("group grant: %s", r.raw)
	}
	if r := must(t, n, a("DELETE", "/groups/analysts", nil)); r.body["dropped"] != true {
		t.Fatalf("drop group: %s", r.raw)
	}
	if r := must(t, n, a("DELETE", "/roles/reader", nil)); r.body["dropped"] != true {
		t.Fatalf("drop role: %s", r.raw)
	}
	if r := must(t, n, a("DELETE", "/users/nobody", nil)); r.body["dropped"] != false {
		t.Fatalf("drop missing user: %s", r.raw)
	}
}

func TestForwardingHeadersAndEvents(t *testing.T) {
	n := single(t)
	must(t, n, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}})
	expect(t, n, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}}, 409, 1004)
	// A user forging forwarding headers is rejected and audited.
	for _, h := range []map[string]string{
		{"Lakegate-Caller": "alice@acme"},
		{raftnode.ForwardedHeader: "n9"},
		{"Lakegate-Delegate-Tenant": "acme", "Lakegate-Delegate-User": "alice@acme"},
	} {
		expect(t, n, call{method: "POST", path: ml + "/catalogs", token: tokBob, body: map[string]any{"name": "x"}, header: h}, 403, 1008)
	}
	// A peer without a caller is refused too; with one it acts as the caller.
	expect(t, n, call{method: "GET", path: ml + "/catalogs", token: tokPeer}, 403, 1008)
	must(t, n, call{method: "GET", path: ml + "/catalogs/lake", token: tokPeer, header: map[string]string{"Lakegate-Caller": "alice@acme"}})
	expect(t, n, call{method: "GET", path: ml + "/catalogs/lake", token: tokPeer, header: map[string]string{"Lakegate-Caller": "eve@other"}}, 404, 1003)

	expect(t, n, call{method: "GET", path: ml + "/events", token: tokBob}, 404, 1003) // bob is no user of acme yet
	r := must(t, n, call{method: "GET", path: ml + "/events", token: tokAlice})
	evs := r.body["events"].([]any)
	var ops []string
	for _, e := range evs {
		m := e.(map[string]any)
		ops = append(ops, m["operation"].(string)+"/"+m["outcome"].(string))
	}
	want := []string{"ListCatalogs/failure", "CreateCatalog/failure", "CreateCatalog/failure", "CreateCatalog/failure", "CreateCatalog/failure", "CreateCatalog/success", "CreateMetalake/success"}
	if !slices.Equal(ops, want) {
		t.Fatalf("events %v, want %v", ops, want)
	}
	// The 409 was applied (it has an index); the forged ones were not.
	if evs[4].(map[string]any)["index"].(float64) == 0 || evs[1].(map[string]any)["index"].(float64) != 0 {
		t.Fatalf("indexes: %s", r.raw)
	}
	last := uint64(evs[5].(map[string]any)["index"].(float64))
	r = must(t, n, call{method: "GET", path: ml + "/events?since=" + itoa(last), token: tokAlice})
	if got := r.body["events"].([]any); len(got) != 1 {
		t.Fatalf("since: %s", r.raw)
	}
	if r := must(t, n, call{method: "GET", path: ml + "/events?limit=2", token: tokAdmin}); len(r.body["events"].([]any)) != 2 {
		t.Fatalf("limit: %s", r.raw)
	}
	expect(t, n, call{method: "GET", path: "/api/nope", token: tokAlice}, http.StatusNotFound, 1003)
}

func itoa(u uint64) string {
	const d = "0123456789"
	if u < 10 {
		return d[u : u+1]
	}
	return itoa(u/10) + d[u%10:u%10+1]
}

// TestWrongMethod checks that a known route under another method gets
// Gravitino's unsupported-operation envelope (405 / 1006) with an Allow
// header, and an unknown path 404 / 1003, under /api and /internal alike.
func TestWrongMethod(t *testing.T) {
	n := single(t)
	for _, c := range []struct {
		method, path, allow string
	}{
		{"PATCH", ml + "/catalogs", "GET, HEAD, POST"},
		{"POST", ml + "/catalogs/lake", "GET, HEAD, PUT, DELETE"},
		{"DELETE", "/api/metalakes", "GET, HEAD, POST"},
		{"GET", "/internal/v1/metalakes/acme/resolve", "POST"},
	} {
		r := expect(t, n, call{method: c.method, path: c.path, token: tokAlice}, 405, 1006)
		if got := r.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
		if r.body["type"] != "UnsupportedOperationException" {
			t.Errorf("%s %s: %s", c.method, c.path, r.raw)
		}
	}
	expect(t, n, call{method: "GET", path: ml + "/nothing/here", token: tokAlice}, 404, 1003)
	expect(t, n, call{method: "GET", path: "/internal/v1/nothing", token: tokAlice}, 404, 1003)
}

// TestConcurrentWrites sends racing writes through the leader's batcher:
// pairs of requests create the same catalog, so exactly one of each pair
// succeeds and the other gets 409, whatever entries they were batched into,
// and every success carries its own result.
func TestConcurrentWrites(t *testing.T) {
	n := single(t)
	const pairs = 40
	type answer struct {
		name   string
		status int
		got    string
	}
	out := make(chan answer, 2*pairs)
	var wg sync.WaitGroup
	for i := range 2 * pairs {
		wg.Go(func() {
			name := fmt.Sprintf("k%02d", i/2)
			r := do(t, n, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": name}})
			a := answer{name: name, status: r.status}
			if c, ok := r.body["catalog"].(map[string]any); ok {
				a.got, _ = c["name"].(string)
			}
			out <- a
		})
	}
	wg.Wait()
	close(out)
	ok := map[string]int{}
	for a := range out {
		switch a.status {
		case 200:
			if a.got != a.name {
				t.Errorf("create %s answered catalog %q", a.name, a.got)
			}
			ok[a.name]++
		case 409:
		default:
			t.Errorf("create %s: HTTP %d", a.name, a.status)
		}
	}
	for i := range pairs {
		if name := fmt.Sprintf("k%02d", i); ok[name] != 1 {
			t.Errorf("%s created %d times", name, ok[name])
		}
	}
}

// TestNamesThatDoNotLookLikeThemselves: a name (or tag value) with an
// invisible or direction-changing character, a space other than U+0020 or
// a space at either end is refused wherever a write introduces it, with the
// character shown as its code point and nothing changed.
func TestNamesThatDoNotLookLikeThemselves(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	createLakeSalesOrders(t, n)
	must(t, n, a("POST", "/tags", map[string]any{"name": "dept"}))
	must(t, n, a("POST", "/policies", map[string]any{"name": "eu_rows", "policyType": "row_filter", "content": map[string]any{"expression": "region = 'EU'"}}))
	gen := must(t, n, a("GET", "/catalogs/lake", nil)).gen()
	v2 := map[string]string{"Content-Type": "application/vnd.gravitino.v2+json", "Accept": "application/vnd.gravitino.v2+json"}
	for _, tt := range []struct {
		c     call
		shown string
	}{
		{a("POST", "/catalogs", map[string]any{"name": "lake\u200b"}), `"lakeU+200B"`},
		{a("POST", "/catalogs/lake/schemas", map[string]any{"name": "\u202eselas"}), `"U+202Eselas"`},
		{a("POST", "/catalogs/lake/schemas/sales/tables", map[string]any{"name": "t", "columns": []any{map[string]any{"name": "a\u00a0b", "type": "int"}}}), `"aU+00A0b"`},
		{a("PUT", "/catalogs/lake/schemas/sales/tables/orders", `{"updates":[{"@type":"rename","newName":"orders "}]}`), `"orders "`},
		{a("POST", "/tags", map[string]any{"name": "region", "allowedValues": []string{"EU\u2066"}}), `"EUU+2066"`},
		{a("PUT", "/tags/dept", `{"updates":[{"@type":"rename","newName":"de\u200dpt"}]}`), `"deU+200Dpt"`},
		{call{method: "POST", path: ml + "/objects/table/lake.sales.orders/tags", token: tokAlice, header: v2,
			body: `{"tagsToAdd":[{"name":"dept","value":"finance\ufeff"}]}`}, `"financeU+FEFF"`},
		{a("POST", "/policies", map[string]any{"name": "\u3164", "policyType": "row_filter", "content": map[string]any{"expression": "region = 'EU'"}}), `"U+3164"`},
		{a("POST", "/users", map[string]any{"name": "bob\u2028"}), `"bobU+2028"`},
		{a("POST", "/tags", map[string]any{"name": ".."}), `".."`},
		// A policy expression reads as something else ("Trojan Source").
		{a("POST", "/policies", map[string]any{"name": "mine", "policyType": "row_filter", "content": map[string]any{"expression": "owner = current_user() \u202e-- "}}), "U+202E at byte offset 23"},
		{a("PUT", "/policies/eu_rows", `{"updates":[{"@type":"updateContent","policyType":"row_filter","newContent":{"expression":"region = 'EU\u200b'"}}]}`), "U+200B at byte offset 12"},
	} {
		r := expect(t, n, tt.c, 400, 1001)
		msg, _ := r.body["message"].(string)
		if !strings.Contains(msg, tt.shown) || strings.ContainsAny(msg, "\u200b\u202e\u00a0\u2066\u200d\ufeff\u3164\u2028") {
			t.Errorf("%s %s: message %q, want the name shown as %q and no refused character", tt.c.method, tt.c.path, msg, tt.shown)
		}
	}
	if g := must(t, n, a("GET", "/catalogs/lake", nil)).gen(); g != gen {
		t.Fatalf("generation moved from %d to %d after rejected requests", gen, g)
	}
	// Each refusal is audited, with the name shown as in the answer.
	found := false
	for _, e := range must(t, n, a("GET", "/events", nil)).body["events"].([]any) {
		m := e.(map[string]any)
		if m["operation"] == "CreateCatalog" && m["outcome"] == "failure" && strings.Contains(m["detail"].(string), `"lakeU+200B"`) {
			found = true
		}
	}
	if !found {
		t.Error("no audit event for the refused catalog name")
	}
	expect(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme2", "owner": "carol\u200e"}}, 400, 1001)
	// Names outside the rule's reach are still taken: spaces inside, any script.
	must(t, n, a("POST", "/catalogs", map[string]any{"name": "data lake ünïcode 日本"}))
}

// createLakeSalesOrders creates, as alice, catalog lake, schema lake.sales and
// table lake.sales.orders (id int).
func createLakeSalesOrders(t *testing.T, n *node) {
	t.Helper()
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/catalogs", map[string]any{"name": "lake"}},
		{"/catalogs/lake/schemas", map[string]any{"name": "sales"}},
		{"/catalogs/lake/schemas/sales/tables", map[string]any{"name": "orders", "columns": []any{map[string]any{"name": "id", "type": "int"}}}},
	} {
		must(t, n, call{method: "POST", path: ml + c.path, token: tokAlice, body: c.body})
	}
}

// TestBodiesReadOneWay: encoding/json accepts, without a word, JSON that
// other parsers read differently — the second of two members with one name
// wins, a member named in another case (or by Unicode case folding: ſ for
// s) sets the declared field, and bytes that are not UTF-8 or a lone
// surrogate escape become U+FFFD. A proxy or reviewer reading the same
// body could then check one value while metasrv acts on another. metasrv
// refuses such bodies.
func TestBodiesReadOneWay(t *testing.T) {
	n := single(t)
	a := func(method, path, body string) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	createLakeSalesOrders(t, n)
	must(t, n, a("POST", "/tags", `{"name":"dept"}`))
	v2 := map[string]string{"Content-Type": "application/vnd.gravitino.v2+json", "Accept": "application/vnd.gravitino.v2+json"}
	gen := must(t, n, a("GET", "/catalogs/lake", "")).gen()
	for _, tt := range []struct {
		c    call
		want string
	}{
		{a("POST", "/catalogs", `{"name":"a","name":"b"}`), `"name" appears twice`},
		{a("POST", "/catalogs", `{"name":"a","NAME":"b"}`), `"NAME"`},
		{a("POST", "/catalogs", `{"Name":"b"}`), `"Name" is not "name"`},
		{a("POST", "/catalogs", `{"name":"c","properties":{"k":"1","k":"2"}}`), `"k" appears twice`},
		{a("POST", "/catalogs", "{\"name\":\"caf\xff\"}"), "not UTF-8"},
		{a("POST", "/catalogs", `{"name":"a\udc00"}`), "not UTF-8"},
		{a("POST", "/catalogs", "{\"name\":\"c\",\"comment\":\"\xc3\"}"), "not UTF-8"},
		{call{method: "POST", path: ml + "/objects/catalog/lake/tags", token: tokAlice, header: v2,
			body: `{"tag\u017fToAdd":[{"name":"dept","value":"x"}]}`}, `"tagſToAdd" is not "tagsToAdd"`},
		{call{method: "POST", path: ml + "/objects/catalog/lake/tags", token: tokAlice, header: v2,
			body: `{"tagsToAdd":[{"name":"dept","value":"x","value":"y"}]}`}, `"value" appears twice`},
		// Inside a value decoded later (a policy's content).
		{a("POST", "/policies", `{"name":"p","policyType":"row_filter","content":{"expression":"region = 'EU'","expression":"true"}}`), `"expression" appears twice`},
		{a("PUT", "/catalogs/lake", `{"updates":[{"@type":"setProperty","property":"k","value":"1","value":"2"}]}`), `"value" appears twice`},
		{a("POST", "/policies", `{"name":"p","policyType":"row_filter","content":{"Expression":"true"}}`), `"Expression" is not "expression"`},
		{a("POST", "/policies", `{"name":"p","policyType":"row_filter","content":{"expression":"true","x":1}}`), `unknown field "x"`},
		// Inside nested objects of the typed bodies.
		{a("POST", "/domains", `{"name":"D","backingTag":{"name":"dept","Value":"x"}}`), `"Value" is not "value"`},
		{a("PUT", "/domains/D/backingTag", `{"backingTag":{"name":"dept","nme":"x"}}`), `unknown field "nme"`},
		{a("POST", "/roles", `{"name":"r","securableObjects":[{"fullName":"lake","type":"catalog","privileges":[{"Name":"use_catalog","condition":"allow"}]}]}`), `"Name" is not "name"`},
		{a("POST", "/roles", `{"name":"r","securableObjects":[{"fullName":"lake","type":"catalog","privileges":[{"name":"use_all","condition":"allow"}]}]}`), `unknown privilege`},
		{a("PUT", "/owners/catalog/lake", `{"name":"bob@acme","type":"robot"}`), `unknown owner type`},
	} {
		r := expect(t, n, tt.c, 400, 1001)
		if msg, _ := r.body["message"].(string); !strings.Contains(msg, tt.want) {
			t.Errorf("%s %s %q: message %q, want it to say %q", tt.c.method, tt.c.path, tt.c.body, msg, tt.want)
		}
	}
	if g := must(t, n, a("GET", "/catalogs/lake", "")).gen(); g != gen {
		t.Fatalf("generation moved from %d to %d after refused requests", gen, g)
	}
	// What stays accepted: U+FFFD written as such, a surrogate pair, the
	// same member name in different objects, map keys differing in case.
	must(t, n, a("POST", "/catalogs", `{"name":"ok","comment":"\ufffd \ud83d\ude00","properties":{"k":"1","K":"2"}}`))
	must(t, n, call{method: "POST", path: ml + "/objects/catalog/ok/tags", token: tokAlice, header: v2,
		body: `{"tagsToAdd":[{"name":"dept","value":"x"}],"tagsToRemove":[{"name":"dept","value":"y"}]}`})
}
