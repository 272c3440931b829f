package metasrv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"lakegate/metasrv"
	"lakegate/metasrv/client"
)

// upstreamLake adds to governedLake an upstream catalog eng with tables
// sales.orders (plain), sales.pii_t (tagged pii: row filter and masks) and
// sales.secret (no grant), readable by bob's role reader; reader may also
// MODIFY orders, which an upstream table never allows.
func upstreamLake(t *testing.T, n *node) {
	t.Helper()
	governedLake(t, n)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	must(t, n, a("POST", "/catalogs", map[string]any{"name": "eng", "type": "upstream", "properties": upstreamProps()}))
	must(t, n, a("POST", "/catalogs/eng/schemas", map[string]any{"name": "sales"}))
	cols := []any{map[string]any{"name": "id", "type": "int", "nullable": false}, map[string]any{"name": "region", "type": "string"}}
	for _, tb := range []string{"orders", "pii_t", "secret"} {
		must(t, n, a("POST", "/catalogs/eng/schemas/sales/tables", map[string]any{"name": tb, "columns": cols,
			"properties": map[string]string{"upstream_name": "shop." + tb}}))
	}
	must(t, n, a("PUT", "/permissions/roles/reader/catalog/eng/grant", `{"privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]}`))
	must(t, n, a("PUT", "/permissions/roles/reader/schema/eng.sales/grant", `{"privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"}]}`))
	for _, tb := range []string{"orders", "pii_t"} {
		must(t, n, a("PUT", "/permissions/roles/reader/table/eng.sales."+tb+"/grant", `{"privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}`))
	}
	must(t, n, a("PUT", "/permissions/roles/reader/table/eng.sales.orders/grant", `{"privileges":[{"name":"MODIFY_TABLE","condition":"ALLOW"}]}`))
	must(t, n, a("PUT", "/permissions/roles/reader/table/lake.sales.orders/grant", `{"privileges":[{"name":"MODIFY_TABLE","condition":"ALLOW"}]}`))
	must(t, n, a("POST", "/objects/table/eng.sales.pii_t/tags", map[string]any{"tagsToAdd": []string{"pii"}}))
}

func TestResolveUpstream(t *testing.T) {
	n := startDelegationNode(t)
	upstreamLake(t, n)
	ref := func(tb, priv string) map[string]any {
		return map[string]any{"schema": "sales", "table": tb, "privilege": priv}
	}
	res := results(t, rawResolve(t, n, tokGW, map[string]any{"subject": "bob@acme", "catalog": "eng", "refs": []any{
		ref("orders", "SELECT_TABLE"), ref("pii_t", "SELECT_TABLE"), ref("orders", "MODIFY_TABLE"),
		ref("secret", "SELECT_TABLE"), ref("nope", "SELECT_TABLE"),
		map[string]any{"schema": "sales", "table": "orders", "privilege": "SELECT_TABLE", "version": 1},
	}}, nil))
	want := metasrv.DescriptorUpstream{Address: "mysql-flight.internal:32010", Dialect: "mysql", TLS: false,
		Credentials: "mysql-flight.json", Name: "shop.orders"}
	var d metasrv.TableDescriptor
	if err := json.Unmarshal(res[0], &d); err != nil || d.FullName != "eng.sales.orders" || d.Upstream == nil ||
		*d.Upstream != want || d.Version != 0 || len(d.Columns) != 2 || d.RowFilter != nil || d.Roles != nil {
		t.Fatalf("orders: %s (%v)", res[0], err)
	}
	if !strings.Contains(string(res[0]), `"upstream":{"address":"mysql-flight.internal:32010","dialect":"mysql","tls":false,"credentials":"mysql-flight.json","name":"shop.orders"}`) ||
		!strings.Contains(string(res[0]), `"files":[]`) {
		t.Fatalf("orders shape: %s", res[0])
	}
	// The tagged table: filter, masks and roles exactly as for a managed
	// table, plus the engine.
	d = metasrv.TableDescriptor{}
	if err := json.Unmarshal(res[1], &d); err != nil || d.Upstream == nil || d.Upstream.Name != "shop.pii_t" ||
		d.RowFilter == nil || *d.RowFilter != "region = 'EU'" || len(d.ColumnMasks) != 2 ||
		d.ColumnMasks[0] != (metasrv.DescriptorMask{Column: "id", Mask: "REDACT", Policy: "redact_all"}) || !slices.Equal(d.Roles, []string{"reader"}) {
		t.Fatalf("pii_t: %s (%v)", res[1], err)
	}
	// Writes, forbidden, missing, and versions: the same unavailable bytes.
	for _, i := range []int{2, 3, 4, 5} {
		if string(res[i]) != `{"unavailable":true}` {
			t.Fatalf("result %d: %s", i, res[i])
		}
	}
	// A managed table resolved in the same way carries no upstream.
	managed := results(t, rawResolve(t, n, tokGW, refsBody("bob@acme", "orders"), nil))
	if bytes.Contains(managed[0], []byte(`"upstream"`)) {
		t.Fatalf("managed orders: %s", managed[0])
	}

	// The client decodes it.
	c := newClient(t, tokGW, n)
	cr, err := c.Resolve(context.Background(), "acme", "bob@acme", "eng", []client.Ref{
		{Schema: "sales", Table: "orders", Privilege: client.SelectTable},
		{Schema: "sales", Table: "pii_t", Privilege: client.SelectTable},
		{Schema: "sales", Table: "orders", Privilege: client.ModifyTable},
	})
	if err != nil {
		t.Fatal(err)
	}
	o, p := cr.Refs[0].Table, cr.Refs[1].Table
	if o == nil || o.Upstream == nil || *o.Upstream != (client.Upstream{Address: want.Address, Dialect: "mysql", TLS: false,
		Credentials: "mysql-flight.json", Name: "shop.orders"}) || len(o.Files) != 0 {
		t.Fatalf("client orders: %+v", o)
	}
	if p == nil || p.Upstream == nil || p.Upstream.Name != "shop.pii_t" || p.RowFilter == nil || !slices.Equal(p.Roles, []string{"reader"}) {
		t.Fatalf("client pii_t: %+v", p)
	}
	if !cr.Refs[2].Unavailable {
		t.Fatalf("client MODIFY_TABLE: %+v", cr.Refs[2])
	}
	// Control: the same grant of MODIFY_TABLE on a managed table resolves.
	mr, err := c.Resolve(context.Background(), "acme", "bob@acme", "lake", []client.Ref{
		{Schema: "sales", Table: "orders", Privilege: client.SelectTable},
		{Schema: "sales", Table: "orders", Privilege: client.ModifyTable},
	})
	if err != nil || mr.Refs[0].Table == nil || mr.Refs[0].Table.Upstream != nil || mr.Refs[1].Table == nil {
		t.Fatalf("client managed orders: %+v (%v)", mr, err)
	}
}
