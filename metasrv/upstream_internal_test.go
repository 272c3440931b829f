package metasrv

import (
	"encoding/json"
	"testing"

	"lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// TestResolveUpstreamFailsClosed: resolve answers an upstream table only
// while its catalog's engine properties and its upstream_name are valid,
// even when they reached the catalog without the REST layer's checks.
func TestResolveUpstreamFailsClosed(t *testing.T) {
	valid := map[string]string{UpstreamAddress: "engine:32010", UpstreamDialect: "sqlite", UpstreamCredentials: "e.json"}
	cols := []catalog.ColumnDef{{Name: "id", Type: "int"}}
	for _, c := range []struct {
		name      string
		catProps  map[string]string
		tableName string // upstream_name; "" for none
		want      *DescriptorUpstream
	}{
		{"valid", valid, "main.t", &DescriptorUpstream{Address: "engine:32010", Dialect: "sqlite", TLS: true, Credentials: "e.json", Name: "main.t"}},
		{"no address", map[string]string{UpstreamDialect: "mysql"}, "main.t", nil},
		{"bad dialect", map[string]string{UpstreamAddress: "engine:1", UpstreamDialect: "oracle"}, "main.t", nil},
		{"bad tls", map[string]string{UpstreamAddress: "engine:1", UpstreamDialect: "mysql", UpstreamTLS: "no"}, "main.t", nil},
		{"bad credentials", map[string]string{UpstreamAddress: "engine:1", UpstreamDialect: "mysql", UpstreamCredentials: "../k"}, "main.t", nil},
		{"unknown property", map[string]string{UpstreamAddress: "engine:1", UpstreamDialect: "mysql", "upstream.password": "x"}, "main.t", nil},
		{"no upstream_name", valid, "", nil},
		{"bad upstream_name", valid, "a.b.c", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tprops map[string]string
			if c.tableName != "" {
				tprops = map[string]string{UpstreamNameProperty: c.tableName}
			}
			s := catalogtest.New(t, "acme", "alice")
			s = catalogtest.Apply(t, s, "alice",
				catalog.CreateCatalog{Name: "eng", Type: catalogUpstream, Properties: c.catProps},
				catalog.CreateSchema{Name: "eng.s"},
				catalog.CreateTable{Name: "eng.s.t", Columns: cols, Properties: tprops})
			for _, priv := range []catalog.Privilege{catalog.PrivSelectTable, catalog.PrivModifyTable} {
				raw, err := resolveRef(s, "alice", true, "eng", ResolveRef{Schema: "s", Table: "t"}, priv)
				if err != nil {
					t.Fatal(err)
				}
				if c.want == nil || priv == catalog.PrivModifyTable {
					if string(raw) != string(unavailableResult) {
						t.Fatalf("%s: %s", priv, raw)
					}
					continue
				}
				var d TableDescriptor
				if err := json.Unmarshal(raw, &d); err != nil || d.Upstream == nil || *d.Upstream != *c.want ||
					len(d.Files) != 0 || d.Files == nil || d.Version != 0 {
					t.Fatalf("%s: %s (%v)", priv, raw, err)
				}
			}
		})
	}
}
