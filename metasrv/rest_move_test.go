package metasrv_test

import (
	"encoding/json"
	"testing"

	"lakegate/catalog"
)

// TestMoveTableREST covers the table rename update's newSchemaName, which
// moves a table to another schema of its catalog: the table keeps its
// storage id, versions and columns; a missing target schema is 404 / 1003,
// a taken name 409 / 1004; a caller needs what catalog.RenameObject's
// permit requires (ownership of the table and CREATE_TABLE on the target
// schema); newSchemaName outside a table rename is 400; the applied
// command is on the audit event.
func TestMoveTableREST(t *testing.T) {
	n := single(t)
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	bob := func(method, path string, body any) call { return as(tokBob, method, path, body) }
	must(t, n, alice("POST", "/catalogs", `{"name":"lake"}`))
	for _, s := range []string{"sales", "archive"} {
		must(t, n, alice("POST", "/catalogs/lake/schemas", map[string]any{"name": s}))
	}
	// Two versions (without files: only a gateway registers files).
	created := must(t, n, alice("POST", "/catalogs/lake/schemas/sales/tables", map[string]any{"name": "orders",
		"columns": []any{map[string]any{"name": "id", "type": "bigint"}}}))
	sid, _ := created.body["table"].(map[string]any)["storageId"].(string)
	for base := range 2 {
		must(t, n, alice("POST", "/catalogs/lake/schemas/sales/tables/orders/versions", map[string]any{"base": base, "files": []any{}}))
	}
	const sales, archive = "/catalogs/lake/schemas/sales/tables/", "/catalogs/lake/schemas/archive/tables/"
	rename := func(name, schema string) string {
		u := map[string]string{"@type": "rename", "newName": name}
		if schema != "" {
			u["newSchemaName"] = schema
		}
		b, _ := json.Marshal(map[string]any{"updates": []any{u}})
		return string(b)
	}
	// wantTable checks GET of path: storage id sid, version 2, column id,
	// and two retained versions.
	wantTable := func(path string) {
		t.Helper()
		tb := must(t, n, alice("GET", path, nil)).body["table"].(map[string]any)
		cols, _ := tb["columns"].([]any)
		if tb["storageId"] != sid || tb["version"] != float64(2) || len(cols) != 1 {
			t.Fatalf("GET %s: %v", path, tb)
		}
		if vs := must(t, n, alice("GET", path+"/versions", nil)).body["versions"].([]any); len(vs) != 2 {
			t.Fatalf("GET %s/versions: %v", path, vs)
		}
	}

	// A move keeps the name; the answer and GET show the table at its new
	// place with its data.
	r := must(t, n, alice("PUT", sales+"orders", rename("orders", "archive")))
	if tb := r.body["table"].(map[string]any); tb["name"] != "orders" || tb["storageId"] != sid || tb["version"] != float64(2) {
		t.Fatalf("move answer: %s", r.raw)
	}
	wantTable(archive + "orders")
	expect(t, n, alice("GET", sales+"orders", nil), 404, 1003)
	// Move back and rename at once; then a later rename in the same
	// request keeps the new schema.
	must(t, n, alice("PUT", archive+"orders", rename("orders2", "sales")))
	wantTable(sales + "orders2")
	must(t, n, alice("PUT", sales+"orders2", `{"updates":[{"@type":"rename","newName":"o3","newSchemaName":"archive"},{"@type":"rename","newName":"orders"}]}`))
	wantTable(archive + "orders")

	// The audit events of the moves carry the commands.
	var page struct {
		Events []struct {
			Operation string          `json:"operation"`
			Outcome   string          `json:"outcome"`
			Command   json.RawMessage `json:"command"`
		}
	}
	if err := json.Unmarshal(must(t, n, alice("GET", "/events?limit=5", nil)).raw, &page); err != nil {
		t.Fatal(err)
	}
	var moved []catalog.RenameObject
	for _, e := range page.Events {
		if e.Operation == "RenameObject" && e.Outcome == "success" {
			c, err := catalog.DecodeCommand(e.Command)
			if err != nil {
				t.Fatalf("event command %s: %v", e.Command, err)
			}
			moved = append(moved, c.(catalog.RenameObject))
		}
	}
	// Newest first: the last request's two renames.
	want := []catalog.RenameObject{
		{Object: catalog.Table("lake.archive.o3"), NewName: "lake.archive.orders"},
		{Object: catalog.Table("lake.sales.orders2"), NewName: "lake.archive.o3"},
	}
	if len(moved) < 2 || moved[0] != want[0] || moved[1] != want[1] {
		t.Fatalf("RenameObject events: %+v, want %+v first", moved, want)
	}

	// Errors.
	expectErr(t, n, alice("PUT", archive+"orders", rename("orders", "nope")), 404, 1003, "", "lake.nope")
	must(t, n, alice("POST", "/catalogs/lake/schemas/sales/tables", map[string]any{"name": "orders", "columns": []any{}}))
	expect(t, n, alice("PUT", archive+"orders", rename("orders", "sales")), 409, 1004)
	wantTable(archive + "orders") // nothing applied
	expect(t, n, alice("PUT", "/catalogs/lake/schemas/sales", rename("s2", "archive")), 400, 1001)
	expect(t, n, alice("PUT", archive+"orders", `{"updates":[{"@type":"updateComment","newComment":"x","newSchemaName":"sales"}]}`), 400, 1001)
	expect(t, n, alice("PUT", archive+"orders", rename("orders", "bad.name")), 400, 1001)

	// bob owns lake.sales.mine. Without a privilege on lake.archive he
	// does not see it (404, as for a missing schema); seeing it is not
	// enough (403); with CREATE_TABLE on it the move goes through.
	must(t, n, alice("POST", "/users", map[string]any{"name": "bob@acme"}))
	must(t, n, alice("POST", "/catalogs/lake/schemas/sales/tables", map[string]any{"name": "mine", "columns": []any{}}))
	must(t, n, alice("PUT", "/owners/table/lake.sales.mine", `{"name":"bob@acme","type":"USER"}`))
	expectErr(t, n, bob("PUT", sales+"mine", rename("mine", "archive")), 404, 1003, "", "SCHEMA lake.archive")
	must(t, n, alice("POST", "/roles", `{"name":"reader","securableObjects":[
		{"fullName":"lake","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"lake.archive","type":"schema","privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"}]}]}`))
	must(t, n, alice("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["reader"]}`))
	expect(t, n, bob("PUT", sales+"mine", rename("mine", "archive")), 403, 1008)
	must(t, n, alice("GET", sales+"mine", nil))
	must(t, n, alice("POST", "/roles", `{"name":"archiver","securableObjects":[
		{"fullName":"lake.archive","type":"schema","privileges":[{"name":"CREATE_TABLE","condition":"ALLOW"}]}]}`))
	must(t, n, alice("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["archiver"]}`))
	must(t, n, bob("PUT", sales+"mine", rename("mine", "archive")))
	must(t, n, alice("GET", archive+"mine", nil))
	// Ownership of the table is required too: bob may create tables in
	// lake.archive but may not move lake.sales.orders (alice's, and
	// invisible to him).
	expect(t, n, bob("PUT", sales+"orders", rename("orders9", "archive")), 404, 1003)
	must(t, n, alice("GET", sales+"orders", nil))
}
