package metasrv_test

import (
	"encoding/json"
	"strings"
	"testing"

	"lakegate/metasrv"
)

// The table property parquet.compression takes zstd, snappy or
// uncompressed, at creation and when set later; anything else is refused
// with a message naming the property. The value reaches the gateway in the
// table's descriptor.
func TestTableCodecProperty(t *testing.T) {
	n := startDelegationNode(t)
	governedLake(t, n)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	bad := func(c call) {
		t.Helper()
		r := expect(t, n, c, 400, 1001)
		if msg, _ := r.body["message"].(string); !strings.Contains(msg, metasrv.TableCodecProperty) {
			t.Fatalf("%s %s: message %q does not name %s", c.method, c.path, msg, metasrv.TableCodecProperty)
		}
	}
	cols := []any{map[string]any{"name": "id", "type": "long"}}
	table := func(name, codec string) map[string]any {
		return map[string]any{"name": name, "columns": cols, "properties": map[string]string{metasrv.TableCodecProperty: codec}}
	}
	set := func(v string) map[string]any {
		return map[string]any{"updates": []any{map[string]any{"@type": "setProperty", "property": metasrv.TableCodecProperty, "value": v}}}
	}
	for _, v := range []string{"gzip", "ZSTD", "", " snappy", "lz4", "none"} {
		bad(a("POST", "/catalogs/lake/schemas/sales/tables", table("t_bad", v)))
		bad(a("PUT", "/catalogs/lake/schemas/sales/tables/orders", set(v)))
	}
	expect(t, n, a("GET", "/catalogs/lake/schemas/sales/tables/t_bad", nil), 404, 1003)
	for i, v := range []string{"zstd", "snappy", "uncompressed"} {
		must(t, n, a("POST", "/catalogs/lake/schemas/sales/tables", table("t_"+v, v)))
		if i > 0 {
			must(t, n, a("PUT", "/catalogs/lake/schemas/sales/tables/t_zstd", set(v)))
		}
	}
	must(t, n, a("PUT", "/catalogs/lake/schemas/sales/tables/orders", set("snappy")))
	res := results(t, rawResolve(t, n, tokGW, refsBody("bob@acme", "orders", "pii_t"), nil))
	for i, want := range []string{"snappy", ""} {
		var d metasrv.TableDescriptor
		if err := json.Unmarshal(res[i], &d); err != nil || d.Codec != want {
			t.Errorf("descriptor %d: %s (%v), want codec %q", i, res[i], err, want)
		}
	}
}
