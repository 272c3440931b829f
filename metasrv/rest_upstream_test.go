package metasrv_test

import (
	"strings"
	"testing"
)

// upstreamProps are valid properties of an upstream catalog.
func upstreamProps() map[string]string {
	return map[string]string{
		"upstream.address":     "mysql-flight.internal:32010",
		"upstream.dialect":     "mysql",
		"upstream.tls":         "false",
		"upstream.credentials": "mysql-flight.json",
	}
}

func TestUpstreamCatalogREST(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	// bad expects a 400 whose message names want.
	bad := func(c call, want string) {
		t.Helper()
		r := expect(t, n, c, 400, 1001)
		if msg, _ := r.body["message"].(string); !strings.Contains(msg, want) {
			t.Fatalf("%s %s: message %q lacks %q", c.method, c.path, msg, want)
		}
	}
	with := func(k, v string) map[string]string {
		p := upstreamProps()
		if v == "\x00" {
			delete(p, k)
		} else {
			p[k] = v
		}
		return p
	}
	cat := func(name string, props map[string]string) map[string]any {
		return map[string]any{"name": name, "type": "upstream", "properties": props}
	}

	// Valid: all properties; the minimum (tls defaults to true, no
	// credentials); IP literals; the type read case-insensitively.
	r := must(t, n, a("POST", "/catalogs", cat("eng", upstreamProps())))
	if c := r.body["catalog"].(map[string]any); c["type"] != "upstream" || c["provider"] != "lakegate" {
		t.Fatalf("upstream catalog: %s", r.raw)
	}
	must(t, n, a("POST", "/catalogs", cat("eng2", map[string]string{"upstream.address": "10.0.0.7:443", "upstream.dialect": "sqlite"})))
	must(t, n, a("POST", "/catalogs", map[string]any{"name": "eng3", "type": "UPSTREAM",
		"properties": map[string]string{"upstream.address": "[::1]:8815", "upstream.dialect": "mysql", "upstream.tls": "true"}}))
	must(t, n, a("POST", "/catalogs", cat("eng4", with("upstream.credentials", "\x00"))))

	// Invalid, property by property: each answer names the property.
	for _, c := range []struct {
		k, v, want string
	}{
		{"upstream.address", "\x00", "upstream.address"},
		{"upstream.address", "nohost", "upstream.address"},
		{"upstream.address", "host:0", "upstream.address"},
		{"upstream.address", "host:65536", "upstream.address"},
		{"upstream.address", "host:+80", "upstream.address"},
		{"upstream.address", "host:http", "upstream.address"},
		{"upstream.address", ":80", "upstream.address"},
		{"upstream.address", "bad_host:80", "upstream.address"},
		{"upstream.address", "-bad.example:80", "upstream.address"},
		{"upstream.address", "a..b:80", "upstream.address"},
		{"upstream.address", "host/x:80", "upstream.address"},
		{"upstream.address", "[example.com]:80", "upstream.address"},
		{"upstream.address", "user@host:80", "upstream.address"},
		{"upstream.dialect", "\x00", "upstream.dialect"},
		{"upstream.dialect", "postgres", "upstream.dialect"},
		{"upstream.dialect", "MySQL", "upstream.dialect"},
		{"upstream.tls", "yes", "upstream.tls"},
		{"upstream.tls", "", "upstream.tls"},
		{"upstream.credentials", "", "upstream.credentials"},
		{"upstream.credentials", "../etc/passwd", "upstream.credentials"},
		{"upstream.credentials", "a..b", "upstream.credentials"},
		{"upstream.credentials", ".hidden", "upstream.credentials"},
		{"upstream.credentials", "dir/file", "upstream.credentials"},
		{"upstream.credentials", strings.Repeat("a", 129), "upstream.credentials"},
		{"upstream.password", "hunter2", "upstream.password"},
	} {
		bad(a("POST", "/catalogs", cat("badeng", with(c.k, c.v))), c.want)
	}
	expect(t, n, a("GET", "/catalogs/badeng", nil), 404, 1003)
	bad(a("POST", "/catalogs", map[string]any{"name": "x", "type": "hive"}), "catalog type")

	// A managed catalog may not carry upstream.* properties, at creation
	// or later.
	bad(a("POST", "/catalogs", map[string]any{"name": "lake", "properties": map[string]string{"upstream.address": "h:1"}}), "upstream.address")
	must(t, n, a("POST", "/catalogs", map[string]any{"name": "lake", "properties": map[string]string{"team": "data"}}))
	bad(a("PUT", "/catalogs/lake", map[string]any{"updates": []any{
		map[string]any{"@type": "setProperty", "property": "upstream.dialect", "value": "mysql"}}}), "upstream.dialect")

	// Alterations of an upstream catalog are validated against the
	// properties they leave; valid ones apply.
	set := func(k, v string) map[string]any {
		return map[string]any{"updates": []any{map[string]any{"@type": "setProperty", "property": k, "value": v}}}
	}
	remove := func(k string) map[string]any {
		return map[string]any{"updates": []any{map[string]any{"@type": "removeProperty", "property": k}}}
	}
	bad(a("PUT", "/catalogs/eng", set("upstream.address", "h:99999")), "upstream.address")
	bad(a("PUT", "/catalogs/eng", remove("upstream.dialect")), "upstream.dialect")
	bad(a("PUT", "/catalogs/eng", set("upstream.credentials", "../x")), "upstream.credentials")
	bad(a("PUT", "/catalogs/eng", set("upstream.token", "secret")), "upstream.token")
	// Removed then set again in one request: the result is what counts.
	must(t, n, a("PUT", "/catalogs/eng", map[string]any{"updates": []any{
		map[string]any{"@type": "removeProperty", "property": "upstream.address"},
		map[string]any{"@type": "setProperty", "property": "upstream.address", "value": "engine.example.com:443"},
		map[string]any{"@type": "removeProperty", "property": "upstream.tls"},
		map[string]any{"@type": "setProperty", "property": "owner_team", "value": "bi"},
	}}))
	r = must(t, n, a("GET", "/catalogs/eng", nil))
	if p := r.body["catalog"].(map[string]any)["properties"].(map[string]any); p["upstream.address"] != "engine.example.com:443" ||
		p["upstream.tls"] != nil || p["owner_team"] != "bi" {
		t.Fatalf("altered catalog: %s", r.raw)
	}

	// Tables of an upstream catalog carry upstream_name.
	must(t, n, a("POST", "/catalogs/eng/schemas", map[string]any{"name": "sales"}))
	tables := "/catalogs/eng/schemas/sales/tables"
	cols := []any{map[string]any{"name": "id", "type": "int"}}
	table := func(name string, props map[string]string) map[string]any {
		return map[string]any{"name": name, "columns": cols, "properties": props}
	}
	bad(a("POST", tables, table("t0", nil)), "upstream_name")
	for _, un := range []string{"", "orders", "a.b.c", "shop.", ".orders", "1shop.orders", "shop.or-ders", "shop.$x",
		"shop." + strings.Repeat("x", 65), "shop.or ders"} {
		bad(a("POST", tables, table("t0", map[string]string{"upstream_name": un})), "upstream_name")
	}
	must(t, n, a("POST", tables, table("orders", map[string]string{"upstream_name": "shop.orders"})))
	must(t, n, a("POST", tables, table("items", map[string]string{"upstream_name": "_s.i$tem_1"})))
	// No data: no storage id, no files (even none), no versions.
	for _, body := range []map[string]any{
		{"name": "t1", "columns": cols, "properties": map[string]string{"upstream_name": "shop.t1"}, "storageId": "mine"},
		{"name": "t1", "columns": cols, "properties": map[string]string{"upstream_name": "shop.t1"}, "files": []any{}},
	} {
		bad(a("POST", tables, body), "hold no data")
	}
	bad(a("POST", tables+"/orders/versions", map[string]any{"base": 0, "files": []any{}}), "hold no data")
	r = must(t, n, a("GET", tables+"/orders", nil))
	if tb := r.body["table"].(map[string]any); tb["version"] != float64(0) {
		t.Fatalf("upstream table: %s", r.raw)
	}
	// Table property updates keep upstream_name valid.
	bad(a("PUT", tables+"/orders", remove("upstream_name")), "upstream_name")
	bad(a("PUT", tables+"/orders", set("upstream_name", "shop.orders.x")), "upstream_name")
	must(t, n, a("PUT", tables+"/orders", map[string]any{"updates": []any{
		map[string]any{"@type": "setProperty", "property": "upstream_name", "value": "shop.orders_v2"},
		map[string]any{"@type": "setProperty", "property": "owner_team", "value": "bi"},
		map[string]any{"@type": "rename", "newName": "orders2"},
	}}))
	r = must(t, n, a("GET", tables+"/orders2", nil))
	if p := r.body["table"].(map[string]any)["properties"].(map[string]any); p["upstream_name"] != "shop.orders_v2" {
		t.Fatalf("altered table: %s", r.raw)
	}

	// A managed catalog's tables: no upstream_name needed, data allowed.
	must(t, n, a("POST", "/catalogs/lake/schemas", map[string]any{"name": "sales"}))
	must(t, n, a("POST", "/catalogs/lake/schemas/sales/tables", table("plain", nil)))
	must(t, n, a("POST", "/catalogs/lake/schemas/sales/tables/plain/versions", map[string]any{"base": 0, "files": []any{}}))

	// Someone who may not see the catalog learns nothing from validation:
	// the answer is apply's, as for a managed catalog.
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	r1 := do(t, n, call{method: "POST", path: ml + tables, token: tokBob, body: table("t9", nil)})
	r2 := do(t, n, call{method: "POST", path: ml + "/catalogs/lake/schemas/sales/tables", token: tokBob, body: table("t9", nil)})
	if r1.status == 400 || r1.status != r2.status || r1.code() != r2.code() {
		t.Fatalf("invisible upstream catalog: HTTP %d %s vs managed HTTP %d %s", r1.status, r1.raw, r2.status, r2.raw)
	}
}
