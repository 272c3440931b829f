package metasrv_test

import (
	"reflect"
	"strings"
	"testing"
)

// alterTree creates catalog lake (properties a=1, b=2), schema lake.sales
// (a=1) and table lake.sales.orders (format=parquet), all owned by alice,
// and returns a caller for alice.
func alterTree(t *testing.T, n *node) func(method, path string, body any) call {
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	must(t, n, a("POST", "/catalogs", `{"name":"lake","comment":"main","properties":{"a":"1","b":"2"}}`))
	must(t, n, a("POST", "/catalogs/lake/schemas", `{"name":"sales","comment":"money","properties":{"a":"1"}}`))
	must(t, n, a("POST", "/catalogs/lake/schemas/sales/tables",
		`{"name":"orders","comment":"orders","columns":[{"name":"id","type":"bigint"}],"properties":{"format":"parquet"}}`))
	return a
}

func propsOf(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}

// TestAlterCommentAndProperties covers updateComment, setProperty and
// removeProperty on catalogs, schemas and tables: the answer is the object
// as GET shows it, with the audit updated.
func TestAlterCommentAndProperties(t *testing.T) {
	n := single(t)
	a := alterTree(t, n)
	type obj struct {
		path, field string
		props       map[string]string // before
	}
	objs := []obj{
		{"/catalogs/lake", "catalog", map[string]string{"a": "1", "b": "2"}},
		{"/catalogs/lake/schemas/sales", "schema", map[string]string{"a": "1"}},
		{"/catalogs/lake/schemas/sales/tables/orders", "table", map[string]string{"format": "parquet"}},
	}
	for _, o := range objs {
		cases := []struct {
			name    string
			updates string
			comment any // nil: absent
			props   func(map[string]string) map[string]string
		}{
			{"updateComment", `[{"@type":"updateComment","newComment":"new"}]`, "new", nil},
			{"setProperty", `[{"@type":"setProperty","property":"x","value":"y"}]`, "new",
				func(p map[string]string) map[string]string { p["x"] = "y"; return p }},
			{"setProperty replaces", `[{"@type":"setProperty","property":"x","value":"z"}]`, "new",
				func(p map[string]string) map[string]string { p["x"] = "z"; return p }},
			{"removeProperty", `[{"@type":"removeProperty","property":"x"}]`, "new",
				func(p map[string]string) map[string]string { delete(p, "x"); return p }},
			{"removeProperty of a missing key", `[{"@type":"removeProperty","property":"nope"}]`, "new", nil},
			{"all, last wins", `[{"@type":"setProperty","property":"k","value":"1"},{"@type":"updateComment","newComment":"c1"},
				{"@type":"removeProperty","property":"k"},{"@type":"setProperty","property":"m","value":"2"},
				{"@type":"updateComment","newComment":"c2"},{"@type":"removeProperty","property":"m"},{"@type":"setProperty","property":"m","value":"3"}]`,
				"c2", func(p map[string]string) map[string]string { p["m"] = "3"; return p }},
			{"clear comment", `[{"@type":"updateComment","newComment":""}]`, nil, nil},
		}
		want := o.props
		for _, tc := range cases {
			t.Run(o.field+"/"+tc.name, func(t *testing.T) {
				if tc.props != nil {
					want = tc.props(cloneProps(want))
				}
				r := must(t, n, a("PUT", o.path, `{"updates":`+tc.updates+`}`))
				got := r.body[o.field].(map[string]any)
				if got["comment"] != tc.comment || !reflect.DeepEqual(propsOf(got["properties"]), nilIfEmpty(want)) {
					t.Fatalf("answer %s, want comment %v properties %v", r.raw, tc.comment, want)
				}
				audit := got["audit"].(map[string]any)
				if audit["lastModifier"] != "alice@acme" || audit["lastModifiedTime"] == nil || audit["creator"] != "alice@acme" {
					t.Fatalf("audit %v", audit)
				}
				// The answer is what GET shows.
				g := must(t, n, a("GET", o.path, nil))
				if !reflect.DeepEqual(g.body[o.field], r.body[o.field]) {
					t.Fatalf("GET %s differs from PUT %s", g.raw, r.raw)
				}
			})
		}
	}
	// The table keeps its columns and version; the catalog its type.
	r := must(t, n, a("GET", "/catalogs/lake/schemas/sales/tables/orders", nil))
	if tb := r.body["table"].(map[string]any); len(tb["columns"].([]any)) != 1 || tb["version"] != float64(0) {
		t.Fatalf("table %s", r.raw)
	}
	if c := must(t, n, a("GET", "/catalogs/lake", nil)).body["catalog"].(map[string]any); c["type"] != "managed" {
		t.Fatalf("catalog %v", c)
	}
}

func cloneProps(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// TestAlterWithRenameAndColumns mixes comment and property updates with a
// rename and column updates in one request.
func TestAlterWithRenameAndColumns(t *testing.T) {
	n := single(t)
	a := alterTree(t, n)
	r := must(t, n, a("PUT", "/catalogs/lake/schemas/sales/tables/orders", `{"updates":[
		{"@type":"rename","newName":"orders2"},
		{"@type":"setProperty","property":"owner","value":"ops"},
		{"@type":"addColumn","fieldName":["note"],"type":"varchar"},
		{"@type":"updateComment","newComment":"renamed"}]}`))
	tb := r.body["table"].(map[string]any)
	if tb["name"] != "orders2" || tb["comment"] != "renamed" || propsOf(tb["properties"])["owner"] != "ops" || len(tb["columns"].([]any)) != 2 {
		t.Fatalf("alter: %s", r.raw)
	}
	r = must(t, n, a("PUT", "/catalogs/lake", `{"updates":[{"@type":"updateComment","newComment":"x"},{"@type":"rename","newName":"lake2"}]}`))
	if c := r.body["catalog"].(map[string]any); c["name"] != "lake2" || c["comment"] != "x" {
		t.Fatalf("alter catalog: %s", r.raw)
	}
	r = must(t, n, a("PUT", "/catalogs/lake2/schemas/sales", `{"updates":[{"@type":"rename","newName":"sales2"},{"@type":"removeProperty","property":"a"}]}`))
	if s := r.body["schema"].(map[string]any); s["name"] != "sales2" || s["properties"] != nil {
		t.Fatalf("alter schema: %s", r.raw)
	}
}

// TestAlterAtomic checks that a request with one bad update changes nothing,
// and the error codes of bad updates.
func TestAlterAtomic(t *testing.T) {
	n := single(t)
	a := alterTree(t, n)
	must(t, n, a("POST", "/catalogs/lake/schemas", `{"name":"other"}`))
	must(t, n, a("POST", "/catalogs", `{"name":"taken"}`))
	paths := []string{"/catalogs/lake", "/catalogs/lake/schemas/sales", "/catalogs/lake/schemas/sales/tables/orders"}
	before := map[string]string{}
	var gen uint64
	for _, p := range paths {
		r := must(t, n, a("GET", p, nil))
		before[p] = string(r.raw)
		gen = r.gen()
	}
	set := `{"@type":"setProperty","property":"x","value":"y"},{"@type":"updateComment","newComment":"changed"}`
	cases := []struct {
		path    string
		updates string
		status  int
		code    int
	}{
		// Rejected in the command: the proposal is undone as a whole.
		{paths[0], set + `,{"@type":"rename","newName":"taken"}`, 409, 1004},
		{paths[1], set + `,{"@type":"rename","newName":"other"}`, 409, 1004},
		{paths[2], set + `,{"@type":"deleteColumn","fieldName":["nope"]}`, 404, 1003},
		{paths[2], set + `,{"@type":"addColumn","fieldName":["id"],"type":"int"}`, 409, 1004},
		{paths[2], `{"@type":"addColumn","fieldName":["note"],"type":"int"},` + set + `,{"@type":"renameColumn","oldFieldName":["nope"],"newFieldName":"z"}`, 404, 1003},
		// Rejected before proposing.
		{paths[0], set + `,{"@type":"rename","newName":"lake.x"}`, 400, 1001},
		{paths[0], set + `,{"@type":"explode"}`, 400, 1001},
		{paths[0], set + `,{"@type":"setProperty","property":"","value":"v"}`, 400, 1001},
		{paths[1], set + `,{"@type":"removeProperty"}`, 400, 1001},
		{paths[0], set + `,{"@type":"addColumn","fieldName":["c"],"type":"int"}`, 405, 1006},
		{paths[1], set + `,{"@type":"deleteColumn","fieldName":["c"]}`, 405, 1006},
		{paths[2], `{"@type":"updateComment","newComment":"x","bogus":1}`, 400, 1001},
	}
	for _, tc := range cases {
		expect(t, n, a("PUT", tc.path, `{"updates":[`+tc.updates+`]}`), tc.status, tc.code)
	}
	expect(t, n, a("PUT", paths[0], `{"updates":[]}`), 400, 1001)
	expect(t, n, a("PUT", "/catalogs/nope", `{"updates":[`+set+`]}`), 404, 1003)
	expect(t, n, a("PUT", "/catalogs/lake/schemas/sales/tables/nope", `{"updates":[`+set+`]}`), 404, 1003)
	for _, p := range paths {
		r := must(t, n, a("GET", p, nil))
		if string(r.raw) != before[p] {
			t.Fatalf("%s changed by rejected requests:\n%s\n%s", p, before[p], r.raw)
		}
		if r.gen() != gen {
			t.Fatalf("generation moved from %d to %d", gen, r.gen())
		}
	}
}

// TestAlterPermission: a caller who can see the object but owns neither it
// nor an ancestor gets 403; one who cannot see it 404, as for a missing
// object; an owner of an ancestor may alter.
func TestAlterPermission(t *testing.T) {
	n := single(t)
	a := alterTree(t, n)
	bob := func(path, body string) call { return call{method: "PUT", path: ml + path, token: tokBob, body: body} }
	upd := `{"updates":[{"@type":"setProperty","property":"x","value":"y"}]}`
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	must(t, n, a("POST", "/catalogs/lake/schemas", `{"name":"hidden"}`))
	// Invisible: 404 exactly as missing.
	r1 := expect(t, n, bob("/catalogs/lake", upd), 404, 1003)
	r2 := expect(t, n, bob("/catalogs/missing", upd), 404, 1003)
	if strings.ReplaceAll(string(r1.raw), "lake", "missing") != string(r2.raw) {
		t.Fatalf("invisible and missing answers differ: %s vs %s", r1.raw, r2.raw)
	}
	expect(t, n, call{method: "PUT", path: ml + "/catalogs/lake", token: tokEve, body: upd}, 404, 1003)
	// Visible, not owned: 403.
	must(t, n, a("POST", "/roles", `{"name":"reader","securableObjects":[
		{"fullName":"lake","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"lake.sales","type":"schema","privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"},{"name":"SELECT_TABLE","condition":"ALLOW"},{"name":"MODIFY_TABLE","condition":"ALLOW"}]}]}`))
	must(t, n, a("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["reader"]}`))
	expect(t, n, bob("/catalogs/lake", upd), 403, 1008)
	expect(t, n, bob("/catalogs/lake/schemas/sales", upd), 403, 1008)
	expect(t, n, bob("/catalogs/lake/schemas/sales/tables/orders", upd), 403, 1008)
	expect(t, n, bob("/catalogs/lake/schemas/hidden", upd), 404, 1003)
	// Owner of the schema: may alter it and its tables, not the catalog.
	must(t, n, a("PUT", "/owners/schema/lake.sales", `{"name":"bob@acme","type":"USER"}`))
	must(t, n, bob("/catalogs/lake/schemas/sales", upd))
	r := must(t, n, bob("/catalogs/lake/schemas/sales/tables/orders", upd))
	if tb := r.body["table"].(map[string]any); propsOf(tb["properties"])["x"] != "y" || tb["audit"].(map[string]any)["lastModifier"] != "bob@acme" {
		t.Fatalf("bob's alter: %s", r.raw)
	}
	expect(t, n, bob("/catalogs/lake", upd), 403, 1008)
}
