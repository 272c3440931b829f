package metasrv_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"lakegate/catalog"
	"lakegate/metasrv/api"
	"lakegate/metasrv/client"
)

// peopleLake is governedLake plus table lake.sales.people (id, ssn) created
// by a gateway for alice with storage id "people" and one file, its column
// ssn tagged ssn_tag, masked by redact_all for everyone, and bob holding
// SELECT_TABLE and MODIFY_TABLE on it (not ownership): the demo's
// hr.employees and hr@demo.
func peopleLake(t *testing.T, n *node) *client.Client {
	t.Helper()
	governedLake(t, n)
	c := newClient(t, tokGW, n)
	cols := []client.Column{{Name: "id", Type: "bigint"}, {Name: "ssn", Type: "varchar", Nullable: true}}
	if _, err := c.CreateTable(context.Background(), "acme", "alice@acme", "lake", "sales", "people", cols, "people",
		[]client.DataFile{dataFile("people", "a", 3)}); err != nil {
		t.Fatal(err)
	}
	a := func(method, path string, body any) {
		must(t, n, call{method: method, path: ml + path, token: tokAlice, body: body})
	}
	a("POST", "/tags", map[string]any{"name": "ssn_tag"})
	a("PUT", "/tags/ssn_tag/policies/redact_all", nil)
	a("POST", "/objects/column/lake.sales.people.ssn/tags", map[string]any{"tagsToAdd": []string{"ssn_tag"}})
	a("PUT", "/permissions/roles/reader/table/lake.sales.people/grant",
		`{"privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"},{"name":"MODIFY_TABLE","condition":"ALLOW"}]}`)
	return c
}

// ssnMasked reports whether bob reads lake.sales.people's ssn masked.
func ssnMasked(t *testing.T, c *client.Client, gen uint64) bool {
	t.Helper()
	r := resolveOne(t, c, "bob@acme", gen, client.Ref{Schema: "sales", Table: "people"})
	if r.Table == nil {
		t.Fatalf("bob cannot read people: %+v", r)
	}
	return slices.ContainsFunc(r.Table.ColumnMasks, func(m client.ColumnMask) bool { return m.Column == "ssn" })
}

// TestColumnShedAttackREST is the review's attack over REST: bob, who may
// modify the table's data but does not own it, deletes the masked column
// and adds it again (one request or two, directly or through a gateway, or
// as a replace commit without it); the new column would carry no tag and
// the files' values would be read raw. Every way is refused, the owner's
// too while the files hold the column, and the mask stays.
func TestColumnShedAttackREST(t *testing.T) {
	n := startDelegationNode(t)
	c := peopleLake(t, n)
	tbl := ml + "/catalogs/lake/schemas/sales/tables/people"
	gen := must(t, n, call{method: "GET", path: tbl, token: tokAlice}).gen()
	if !ssnMasked(t, c, gen) {
		t.Fatal("ssn not masked for bob")
	}
	asGW := func(user string) map[string]string {
		return map[string]string{api.DelegateTenantHeader: "acme", api.DelegateUserHeader: user}
	}
	const (
		del    = `{"@type":"deleteColumn","fieldName":["ssn"]}`
		add    = `{"@type":"addColumn","fieldName":["ssn"],"type":"utf8"}`
		rename = `{"@type":"renameColumn","oldFieldName":["ssn"],"newFieldName":"ssn2"}`
	)
	cases := []struct {
		name         string
		c            call
		status, code int
	}{
		{"bob deletes and re-adds", call{method: "PUT", path: tbl, token: tokBob, body: `{"updates":[` + del + `,` + add + `]}`}, 403, 1008},
		{"bob deletes", call{method: "PUT", path: tbl, token: tokBob, body: `{"updates":[` + del + `]}`}, 403, 1008},
		{"bob renames", call{method: "PUT", path: tbl, token: tokBob, body: `{"updates":[` + rename + `]}`}, 403, 1008},
		{"bob adds another column", call{method: "PUT", path: tbl, token: tokBob,
			body: `{"updates":[{"@type":"addColumn","fieldName":["x"],"type":"int"}]}`}, 403, 1008},
		{"bob through a gateway", call{method: "PUT", path: tbl, token: tokGW, header: asGW("bob@acme"),
			body: `{"updates":[` + del + `,` + add + `]}`}, 403, 1008},
		{"bob replaces without ssn", call{method: "POST", path: tbl + "/versions", token: tokGW, header: asGW("bob@acme"),
			body: map[string]any{"base": 1, "replace": true, "columns": []any{map[string]any{"name": "id", "type": "bigint"}},
				"files": []client.DataFile{dataFile("people", "b", 3)}}}, 403, 1008},
		{"the owner deletes and re-adds", call{method: "PUT", path: tbl, token: tokAlice, body: `{"updates":[` + del + `,` + add + `]}`}, 409, 1010},
		{"the owner renames", call{method: "PUT", path: tbl, token: tokAlice, body: `{"updates":[` + rename + `]}`}, 409, 1010},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := expect(t, n, tc.c, tc.status, tc.code)
			if !ssnMasked(t, c, r.gen()) {
				t.Fatal("ssn lost its mask")
			}
		})
	}
	// What MODIFY_TABLE still does keeps the mask: appending, and
	// replacing the rows under the same columns.
	v, g, err := c.CommitVersion(context.Background(), "acme", "bob@acme", "lake", "sales", "people", 1, false, nil,
		[]client.DataFile{dataFile("people", "b", 2)})
	if err != nil || v != 2 || !ssnMasked(t, c, g) {
		t.Fatalf("bob's append: v%d %v", v, err)
	}
	cols := []client.Column{{Name: "id", Type: "bigint"}, {Name: "ssn", Type: "varchar", Nullable: true}}
	if v, g, err = c.CommitVersion(context.Background(), "acme", "bob@acme", "lake", "sales", "people", 2, true, cols,
		[]client.DataFile{dataFile("people", "c", 2)}); err != nil || v != 3 || !ssnMasked(t, c, g) {
		t.Fatalf("bob's replace: v%d %v", v, err)
	}
}

// TestStorageIDsFromTheServer: nobody but a gateway names a storage id or
// registers files; a table created over REST gets a minted storage id that
// no table of the metalake ever had — not one dropped, not one of the
// metalake's earlier life under the same name — so an owner who drops a
// masked table cannot create one on its files.
func TestStorageIDsFromTheServer(t *testing.T) {
	n := startDelegationNode(t)
	c := peopleLake(t, n)
	ctx := context.Background()
	tables := ml + "/catalogs/lake/schemas/sales/tables"
	cols := []any{map[string]any{"name": "id", "type": "bigint"}, map[string]any{"name": "ssn", "type": "varchar"}}
	old := dataFile("people", "a", 3)
	must(t, n, call{method: "DELETE", path: tables + "/people", token: tokAlice})

	// The review's attack: the owner re-creates the dropped table on its
	// storage id and files (a made-up SHA-256 did as well).
	fake := old
	fake.SHA256 = strings.Repeat("0", 64)
	for _, body := range []map[string]any{
		{"name": "people", "columns": cols, "storageId": "people", "files": []client.DataFile{old}},
		{"name": "people", "columns": cols, "storageId": "people", "files": []client.DataFile{fake}},
		{"name": "people", "columns": cols, "storageId": "people"},
		{"name": "people", "columns": cols, "files": []client.DataFile{old}},
		{"name": "people", "columns": cols, "files": []client.DataFile{}},
	} {
		r := expect(t, n, call{method: "POST", path: tables, token: tokAlice, body: body}, 400, 1001)
		if !strings.Contains(r.message(), "registered by a lakegate gateway") {
			t.Fatalf("refusal does not say why: %s", r.raw)
		}
	}
	seen := map[string]bool{"people": true}
	create := func(t *testing.T, n *node) (string, uint64) {
		t.Helper()
		r := must(t, n, call{method: "POST", path: tables, token: tokAlice, body: map[string]any{"name": "people", "columns": cols}})
		tb := r.body["table"].(map[string]any)
		sid, _ := tb["storageId"].(string)
		if seen[sid] || len(sid) != 17 || sid[0] != 't' || !strings.ContainsAny(sid[1:2], "89abcdef") || tb["version"] != float64(0) {
			t.Fatalf("created table: %s (seen %v)", r.raw, seen)
		}
		seen[sid] = true
		return sid, r.gen()
	}
	sid, _ := create(t, n)
	// Files cannot be committed to it over REST, old or new; a gateway's
	// must lie under its storage id.
	tbl := tables + "/people"
	expect(t, n, call{method: "POST", path: tbl + "/versions", token: tokAlice, body: map[string]any{"base": 0, "files": []client.DataFile{old}}}, 400, 1001)
	expect(t, n, call{method: "POST", path: tbl + "/versions", token: tokAlice, body: map[string]any{"base": 0,
		"files": []client.DataFile{dataFile(sid, "x", 1)}}}, 400, 1001)
	if _, _, err := c.CommitVersion(ctx, "acme", "alice@acme", "lake", "sales", "people", 0, false, nil, []client.DataFile{old}); err == nil {
		t.Fatal("a gateway committed the dropped table's file")
	}
	if v, _, err := c.CommitVersion(ctx, "acme", "alice@acme", "lake", "sales", "people", 0, false, nil, []client.DataFile{dataFile(sid, "x", 1)}); err != nil || v != 1 {
		t.Fatalf("a gateway's commit: v%d %v", v, err)
	}
	// Dropped and created again, three times: a new id each time.
	for range 3 {
		must(t, n, call{method: "DELETE", path: tbl, token: tokAlice})
		create(t, n)
	}
	// The metalake dropped and created again under the same name.
	must(t, n, call{method: "DELETE", path: ml + "?force=true", token: tokAdmin})
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
	must(t, n, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}})
	must(t, n, call{method: "POST", path: ml + "/catalogs/lake/schemas", token: tokAlice, body: map[string]any{"name": "sales"}})
	for range 2 {
		create(t, n)
		must(t, n, call{method: "DELETE", path: tbl, token: tokAlice})
	}
	// The rule level is in the log: the first table write raised it.
	type event struct {
		Operation string          `json:"operation"`
		Command   json.RawMessage `json:"command"`
	}
	var page struct {
		Events []event `json:"events"`
	}
	raw := must(t, n, call{method: "GET", path: ml + "/events?limit=100", token: tokAlice}).raw
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(page.Events, func(e event) bool {
		c, err := catalog.DecodeCommand(e.Command)
		return e.Operation == "SetRules" && err == nil && c == catalog.SetRules{Level: catalog.CurrentRules}
	}) {
		t.Fatalf("no SetRules event: %s", raw)
	}
	if l, ok := n.FSM().Lake("acme"); !ok || l.Snapshot.Rules() != catalog.CurrentRules {
		t.Fatal("metalake not at the current rule level")
	}
}
