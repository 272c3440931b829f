package metasrv_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/rest_answers.golden from the answers")

// goldenVolatile matches what differs between runs: times, minted storage
// ids (and the data paths under them) and the node's generated names.
var goldenVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)"`), `"<time>"`},
	{regexp.MustCompile(`"storageId":"[^"]*"`), `"storageId":"<sid>"`},
	{regexp.MustCompile(`tables/[0-9a-f-]{8,}/`), `tables/<sid>/`},
	{regexp.MustCompile(`\\"storageId\\":\\"[^"\\]*\\"`), `\"storageId\":\"<sid>\"`},
}

// TestRESTAnswersGolden pins the bytes of every REST endpoint's success
// answer (the envelope's field order, null versus [] and omitted fields
// included): the answers are typed Go values on both sides, and a field
// moved in a struct changes what every client reads.
// go test -run TestRESTAnswersGolden -update rewrites the golden file.
func TestRESTAnswersGolden(t *testing.T) {
	n := explainNode(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAcmeAdmin, body: body}
	}
	op := func(method, path string, body any) call {
		return call{method: method, path: path, token: tokAdmin, body: body}
	}
	tbl := "/catalogs/lake/schemas/sales/tables/orders"
	calls := []call{
		// metalakes
		op("POST", "/api/metalakes", map[string]any{"name": "g2", "comment": "two", "owner": "bob@acme", "properties": map[string]string{"k": "v"}}),
		op("GET", "/api/metalakes", nil),
		op("GET", "/api/metalakes/g2", nil),
		op("PUT", "/api/metalakes/g2", map[string]any{"updates": []map[string]any{{"@type": "updateComment", "newComment": "2"}}}),
		op("DELETE", "/api/metalakes/g2?force=true", nil),
		op("DELETE", "/api/metalakes/g2", nil),
		{method: "GET", path: "/api/whoami", token: tokAcmeAdmin},
		{method: "GET", path: "/api/whoami", token: tokBob},
		// catalogs, schemas, tables, versions
		a("GET", "/catalogs", nil),
		a("GET", "/catalogs?details=true", nil),
		a("POST", "/catalogs", map[string]any{"name": "c2", "comment": "c", "properties": map[string]string{"a": "b"}}),
		a("GET", "/catalogs/c2", nil),
		a("PUT", "/catalogs/c2", map[string]any{"updates": []map[string]any{{"@type": "setProperty", "property": "x", "value": "y"}}}),
		a("GET", "/catalogs/lake/schemas", nil),
		a("GET", "/catalogs/lake/schemas?details=true", nil),
		a("POST", "/catalogs/c2/schemas", map[string]any{"name": "s2"}),
		a("GET", "/catalogs/c2/schemas/s2", nil),
		a("PUT", "/catalogs/c2/schemas/s2", map[string]any{"updates": []map[string]any{{"@type": "updateComment", "newComment": "s"}}}),
		a("POST", "/catalogs/c2/schemas/s2/tables", map[string]any{"name": "t2", "columns": []map[string]any{{"name": "id", "type": "BIGINT", "nullable": false}}}),
		a("GET", "/catalogs/c2/schemas/s2/tables", nil),
		a("GET", "/catalogs/c2/schemas/s2/tables?details=true", nil),
		a("GET", "/catalogs/c2/schemas/s2/tables/t2", nil),
		a("PUT", "/catalogs/c2/schemas/s2/tables/t2", map[string]any{"updates": []map[string]any{{"@type": "addColumn", "fieldName": []string{"n"}, "type": "VARCHAR"}}}),
		a("POST", "/catalogs/c2/schemas/s2/tables/t2/versions", map[string]any{"base": 0, "files": []any{}}),
		a("GET", "/catalogs/c2/schemas/s2/tables/t2/versions", nil),
		a("DELETE", "/catalogs/c2/schemas/s2/tables/t2", nil),
		a("DELETE", "/catalogs/c2/schemas/s2/tables/t2", nil),
		a("DELETE", "/catalogs/c2?force=true", nil),
		a("GET", tbl, nil),
		// tags
		a("GET", "/tags", nil),
		a("GET", "/tags?details=true", nil),
		a("POST", "/tags", map[string]any{"name": "pii", "comment": "p", "allowedValues": []string{"high", "low"}}),
		a("GET", "/tags/pii", nil),
		a("PUT", "/tags/pii", map[string]any{"updates": []map[string]any{{"@type": "setProperty", "property": "x", "value": "y"}}}),
		a("POST", "/objects/table/lake.sales.orders/tags", map[string]any{"tagsToAdd": []string{"dept"}}),
		{method: "POST", path: ml + "/objects/column/lake.sales.orders.card/tags", token: tokAcmeAdmin,
			header: map[string]string{"Content-Type": "application/vnd.gravitino.v2+json"},
			body:   `{"tagsToAdd":[{"name":"pii","value":"high"}]}`},
		a("GET", "/tags/dept/objects", nil),
		a("GET", "/tags/pii/objects?value=high", nil),
		a("GET", "/objects/column/lake.sales.orders.card/tags", nil),
		a("GET", "/objects/column/lake.sales.orders.card/tags?details=true", nil),
		// policies
		a("POST", "/policies", map[string]any{"name": "mask", "comment": "m", "policyType": "column_mask", "content": map[string]any{"mask": "REDACT"}}),
		a("GET", "/policies", nil),
		a("GET", "/policies?details=true", nil),
		a("GET", "/policies/mask", nil),
		a("PUT", "/policies/mask", map[string]any{"updates": []map[string]any{{"@type": "updateComment", "newComment": "mm"}}}),
		a("PATCH", "/policies/mask", map[string]any{"enable": false}),
		a("PATCH", "/policies/mask", map[string]any{"enable": true}),
		a("PUT", "/tags/pii/policies/mask", map[string]any{"selector": map[string]any{"type": "TAG_VALUE", "value": "high"}}),
		a("PUT", "/tags/dept/policies/mask", nil),
		a("GET", "/policies/mask/tags", nil),
		a("GET", "/policies/mask/tags?details=true", nil),
		a("GET", "/tags/pii/policies", nil),
		a("GET", "/tags/pii/policies?details=true", nil),
		a("GET", "/objects/column/lake.sales.orders.card/policies", nil),
		a("GET", "/objects/column/lake.sales.orders.card/policies?details=true", nil),
		a("DELETE", "/tags/dept/policies/mask", nil),
		a("DELETE", "/tags/pii/policies/mask", nil),
		a("DELETE", "/policies/mask", nil),
		a("DELETE", "/policies/mask", nil),
		a("DELETE", "/tags/pii", nil),
		a("DELETE", "/tags/pii", nil),
		// domains
		a("POST", "/domains", map[string]any{"name": "Sales", "comment": "s", "backingTag": map[string]any{"name": "d_sales", "create": true}}),
		a("POST", "/domains", map[string]any{"name": "Orders", "backingTag": map[string]any{"name": "d_orders", "create": true}, "parent": "Sales"}),
		a("GET", "/domains", nil),
		a("GET", "/domains?details=true", nil),
		a("GET", "/domains/Orders", nil),
		a("PUT", "/domains/Orders", map[string]any{"updates": []map[string]any{{"@type": "setProperty", "property": "k", "value": "v"}}}),
		a("PATCH", "/domains/Sales", map[string]any{"status": "published"}),
		a("PATCH", "/domains/Orders", map[string]any{"status": "published"}),
		a("POST", "/objects/table/lake.sales.orders/tags", map[string]any{"tagsToAdd": []string{"d_orders"}}),
		a("GET", "/domains/Sales/subdomains", nil),
		a("GET", "/domains/Sales/subdomains?details=true", nil),
		a("GET", "/domains/Sales/objects", nil),
		a("GET", "/objects/table/lake.sales.orders/domains", nil),
		a("GET", "/objects/table/lake.sales.orders/domains?details=true", nil),
		a("DELETE", "/domains/Orders/parent", nil),
		a("PUT", "/domains/Orders/parent", map[string]any{"parent": "Sales"}),
		a("PUT", "/domains/Orders/backingTag", map[string]any{"backingTag": map[string]any{"name": "dept"}}),
		a("DELETE", "/domains/Orders", nil),
		a("DELETE", "/domains/Orders", nil),
		// roles, users, groups, grants, owners
		a("POST", "/roles", map[string]any{"name": "r2", "properties": map[string]string{"p": "q"}, "securableObjects": []map[string]any{{"fullName": "lake", "type": "CATALOG",
			"privileges": []map[string]any{{"name": "USE_CATALOG", "condition": "ALLOW"}}}}}),
		a("GET", "/roles", nil),
		a("GET", "/roles/r2", nil),
		a("PUT", "/permissions/roles/r2/schema/lake.sales/grant", map[string]any{"privileges": []map[string]any{{"name": "use_schema", "condition": "allow"}}}),
		a("PUT", "/permissions/roles/r2/schema/lake.sales/revoke", map[string]any{"privileges": []map[string]any{{"name": "use_schema", "condition": "allow"}}}),
		a("POST", "/users", map[string]any{"name": "dan"}),
		a("POST", "/groups", map[string]any{"name": "g"}),
		a("GET", "/users", nil),
		a("GET", "/users?details=true", nil),
		a("GET", "/groups", nil),
		a("GET", "/groups?details=true", nil),
		a("GET", "/users/dan", nil),
		a("GET", "/groups/g", nil),
		a("PUT", "/permissions/users/dan/grant", map[string]any{"roleNames": []string{"r2"}}),
		a("PUT", "/permissions/groups/g/grant", map[string]any{"roleNames": []string{"r2"}}),
		a("PUT", "/permissions/groups/g/revoke", map[string]any{"roleNames": []string{"r2"}}),
		a("PUT", "/permissions/users/dan/revoke", map[string]any{"roleNames": []string{"r2"}}),
		a("GET", "/owners/table/lake.sales.orders", nil),
		a("PUT", "/owners/table/lake.sales.orders", map[string]any{"name": "dan", "type": "USER"}),
		a("DELETE", "/users/dan", nil),
		a("DELETE", "/groups/g", nil),
		a("DELETE", "/groups/g", nil),
		a("DELETE", "/roles/r2", nil),
		a("DELETE", "/roles/r2", nil),
		// explain, preview, events
		a("GET", "/access/explain?user=bob@acme&privilege=SELECT_TABLE&object=TABLE:lake.sales.orders", nil),
		a("GET", "/access/explain?user=nobody&privilege=SELECT_TABLE&object=TABLE:lake.sales.orders", nil),
		a("POST", "/access/preview?limit=1", map[string]any{"commands": []map[string]any{{"type": "AssociateTagsV2",
			"body": map[string]any{"object": map[string]any{"type": "SCHEMA", "fullName": "lake.hr"}, "tagsToAdd": []map[string]any{{"name": "dept"}}}}}}),
		a("POST", "/access/preview", map[string]any{"commands": []map[string]any{{"type": "CreateUser", "body": map[string]any{"name": "zed"}}}}),
		a("GET", "/events?limit=3", nil),
	}
	var b strings.Builder
	for _, c := range calls {
		r := do(t, n, c)
		if r.status != 200 {
			t.Errorf("%s %s: HTTP %d: %s", c.method, c.path, r.status, r.raw)
		}
		body := string(r.raw)
		for _, v := range goldenVolatile {
			body = v.re.ReplaceAllString(body, v.with)
		}
		fmt.Fprintf(&b, "%s %s\n%s\n", c.method, strings.TrimPrefix(c.path, ml), body)
	}
	path := filepath.Join("testdata", "rest_answers.golden")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("answers differ from %s at line %d:\ngot  %s\nwant %s", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("answers differ from %s in length: %d lines, want %d", path, len(gl), len(wl))
	}
}
