package api_test

import (
	"encoding/json"
	"reflect"
	"strings"
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
		RowFilter: &filter, RowFilterPolicy: "eu-rows", ColumnMasks: []api.ColumnMask{{Column: "id", Mask: "0", Policy: "hide-id"}},
		Roles:    []string{"analyst"},
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

// TestDescriptorPolicyNames: the policy names travel with the filter and
// the masks, and a descriptor without policies carries no name keys (a
// gateway that predates them reads the same bytes).
func TestDescriptorPolicyNames(t *testing.T) {
	filter := "region = 'eu'"
	for _, tc := range []struct {
		name     string
		d        api.TableDescriptor
		has, not []string
	}{
		{"named", api.TableDescriptor{FullName: "lake.s.t", RowFilter: &filter, RowFilterPolicy: "eu-rows",
			ColumnMasks: []api.ColumnMask{{Column: "id", Mask: "HASH", Policy: "hide-id"}}},
			[]string{`"rowFilterPolicy":"eu-rows"`, `"policy":"hide-id"`}, nil},
		{"none", api.TableDescriptor{FullName: "lake.s.t", ColumnMasks: []api.ColumnMask{}},
			nil, []string{"rowFilterPolicy", `"policy"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.d)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range tc.has {
				if !strings.Contains(string(b), h) {
					t.Errorf("%s lacks %s", b, h)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(string(b), n) {
					t.Errorf("%s has %s", b, n)
				}
			}
			var got api.ResolveResult
			if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got.TableDescriptor, tc.d) {
				t.Fatalf("round trip: %+v %v", got.TableDescriptor, err)
			}
		})
	}
}
