package api_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"lakegate/metasrv/api"
)

// TestResolveResultDecodes: ResolveResult reads each of the three answers
// a resolve entry may be, as the server encodes them.
func TestResolveResultDecodes(t *testing.T) {
	conflict, err := json.Marshal(api.ConflictResult{Error: api.ConflictError, Table: "lake.s.t"})
	if err != nil {
		t.Fatal(err)
	}
	filter := "region = 'eu'"
	d := api.TableDescriptor{FullName: "lake.s.t", Columns: []api.Column{{Name: "id", Type: "BIGINT"}},
		StorageID: "st", Version: 2, Files: []api.DataFile{{Path: "tables/st/a.parquet", Size: 10, Rows: 1, SHA256: "ab"}},
		RowFilter: &filter, ColumnMasks: []api.ColumnMask{{Column: "id", Mask: "0"}}, Roles: []string{"analyst"},
		Upstream: &api.Upstream{Address: "db:3306", Dialect: "mysql", Name: "s.t"}}
	desc, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		raw  json.RawMessage
		want api.ResolveResult
	}{
		{"unavailable", api.UnavailableResult, api.ResolveResult{Unavailable: true}},
		{"conflict", conflict, api.ResolveResult{Error: api.ConflictError, TableDescriptor: api.TableDescriptor{}}},
		{"descriptor", desc, api.ResolveResult{TableDescriptor: d}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got api.ResolveResult
			if err := json.Unmarshal(tc.raw, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
