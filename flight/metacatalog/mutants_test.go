package metacatalog

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"lakegate/flight/backend"
	"lakegate/metasrv/client"
)

// TestResolveCarriesPolicies checks that the policy metasrv answers for a
// table reaches the gateway whole, with the names of its policies: a row
// filter alone, masks alone, both, or neither (no policy at all). The fake answers as metasrv does for a caller
// under row_filter and column_mask policies, which the shared fake never
// does.
func TestResolveCarriesPolicies(t *testing.T) {
	filter := "region = 'EU'"
	answers := map[string]map[string]any{
		"filtered": {"rowFilter": filter, "rowFilterPolicy": "eu_rows", "roles": []string{"r"}},
		"masked":   {"columnMasks": []map[string]any{{"column": "id", "mask": "REDACT", "policy": "hide_id"}}, "roles": []string{"r"}},
		"both": {"rowFilter": filter, "rowFilterPolicy": "eu_rows",
			"columnMasks": []map[string]any{{"column": "id", "mask": "NULL", "policy": "null_id"}}, "roles": []string{"r"}},
		"plain": {},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		results := []any{}
		for _, name := range []string{"filtered", "masked", "both", "plain"} {
			res := map[string]any{"fullName": "lake.sales." + name, "storageId": "st-" + name, "version": 1,
				"columns": []map[string]any{{"name": "id", "type": "BIGINT", "nullable": true}}, "files": []any{}}
			for k, v := range answers[name] {
				res[k] = v
			}
			results = append(results, res)
		}
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "generation": 7, "results": results})
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Addrs: []string{srv.URL}, Token: "lg_test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	var refs []backend.TableRef
	for _, name := range []string{"filtered", "masked", "both", "plain"} {
		refs = append(refs, backend.TableRef{Name: backend.TableName{Schema: "sales", Name: name}})
	}
	got, err := New(c).Resolve(t.Context(), backend.Caller{Tenant: "acme", Subject: "bob", Catalog: "lake"}, refs)
	if err != nil || len(got) != 4 {
		t.Fatalf("Resolve = %v, %v", got, err)
	}
	want := []*backend.TablePolicy{
		{RowFilter: filter, FilterPolicy: "eu_rows", Roles: []string{"r"}},
		{Masks: []backend.ColumnMask{{Column: "id", Mask: "REDACT", Policy: "hide_id"}}, Roles: []string{"r"}},
		{RowFilter: filter, FilterPolicy: "eu_rows", Masks: []backend.ColumnMask{{Column: "id", Mask: "NULL", Policy: "null_id"}}, Roles: []string{"r"}},
		nil,
	}
	for i, v := range got {
		if v == nil {
			t.Fatalf("%s unavailable", refs[i].Name.Name)
		}
		if !v.Policy.Equal(want[i]) {
			t.Errorf("%s: policy %+v, want %+v", refs[i].Name.Name, v.Policy, want[i])
		}
	}
}

// TestListWithoutDecisionWindow checks that a Catalog that reuses no
// decisions lists a tenant's tables (nothing is stored for reuse).
func TestListWithoutDecisionWindow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "generation": 3, "schemas": []string{"sales"},
			"tables": []map[string]any{{"schema": "sales", "table": "orders", "storageId": "st-orders", "version": 1,
				"columns": []map[string]any{{"name": "id", "type": "BIGINT", "nullable": true}}}}})
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Addrs: []string{srv.URL}, Token: "lg_test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	l, err := New(c).List(t.Context(), backend.Caller{Tenant: "acme", Subject: "bob", Catalog: "lake"})
	if err != nil || len(l.Tables) != 1 || l.Tables[0].Name != (backend.TableName{Schema: "sales", Name: "orders"}) {
		t.Fatalf("List = %+v, %v", l, err)
	}
}

// TestTablePolicyEqualNames: policies with the same expressions from
// differently named policies are not Equal (the access log records the
// names of the plan a prepared statement keeps).
func TestTablePolicyEqualNames(t *testing.T) {
	base := backend.TablePolicy{RowFilter: "a = 1", FilterPolicy: "p",
		Masks: []backend.ColumnMask{{Column: "c", Mask: "HASH", Policy: "m"}}, Roles: []string{"r"}}
	other := func(f func(*backend.TablePolicy)) *backend.TablePolicy {
		c := base
		c.Masks = append([]backend.ColumnMask(nil), base.Masks...)
		f(&c)
		return &c
	}
	for _, tc := range []struct {
		name string
		q    *backend.TablePolicy
		want bool
	}{
		{"same", other(func(*backend.TablePolicy) {}), true},
		{"filter policy renamed", other(func(p *backend.TablePolicy) { p.FilterPolicy = "p2" }), false},
		{"mask policy renamed", other(func(p *backend.TablePolicy) { p.Masks[0].Policy = "m2" }), false},
		{"filter changed", other(func(p *backend.TablePolicy) { p.RowFilter = "a = 2" }), false},
		{"nil", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := base.Equal(tc.q); got != tc.want {
				t.Fatalf("Equal = %v, want %v", got, tc.want)
			}
		})
	}
}
