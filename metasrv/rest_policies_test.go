package metasrv_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"lakegate/catalog"
	"lakegate/metasrv"
)

func TestPolicies(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	must(t, n, a("POST", "/roles", map[string]any{"name": "analyst"}))
	r := must(t, n, a("POST", "/policies", `{"name":"fin_rows","comment":"c","policyType":"ROW_FILTER",
		"content":{"expression":"region = 'EU'","applicable_roles":["analyst"]}}`))
	p := r.body["policy"].(map[string]any)
	if p["name"] != "fin_rows" || p["policyType"] != "row_filter" || p["enabled"] != true || p["comment"] != "c" ||
		p["content"].(map[string]any)["expression"] != "region = 'EU'" || p["audit"].(map[string]any)["creator"] != "alice@acme" {
		t.Fatalf("create: %s", r.raw)
	}
	r = must(t, n, a("POST", "/policies", map[string]any{"name": "off", "policyType": "custom", "enabled": false, "content": map[string]any{"custom": map[string]any{"k": 1}}}))
	if p := r.body["policy"].(map[string]any); p["enabled"] != false || p["content"].(map[string]any)["custom"].(map[string]any)["k"] != 1.0 {
		t.Fatalf("create disabled: %s", r.raw)
	}
	gen := r.gen()
	expect(t, n, a("POST", "/policies", map[string]any{"name": "off", "policyType": "custom", "content": map[string]any{"custom": 1}}), 409, 1004)
	for _, bad := range []call{
		a("POST", "/policies", `{"name":"p2","policyType":"custom","content":{"custom":1},"bogus":1}`),
		a("POST", "/policies", `{"name":"p2","policyType":"nope","content":{"custom":1}}`),
		a("POST", "/policies", `{"name":"p2","content":{"custom":1}}`),
		a("POST", "/policies", `{"name":"p2","policyType":"custom","content":{"custom":1,"x":2}}`),
		a("POST", "/policies", `{"name":"p2","policyType":"row_filter","content":{"mask":"NULL"}}`),
		a("POST", "/policies", `{"name":"p2","policyType":"custom","enabled":"yes","content":{"custom":1}}`),
		a("POST", "/policies", `{"name":"","policyType":"custom","content":{"custom":1}}`),
		a("POST", "/policies", ``),
		a("PUT", "/policies/off", `{"updates":[{"@type":"explode"}]}`),
		a("PUT", "/policies/off", `{"updates":[]}`),
		a("PUT", "/policies/off", `{"updates":[{"@type":"updateContent","policyType":"custom"}]}`),
		a("PUT", "/policies/off", `{"updates":[{"@type":"updateContent","policyType":"row_filter","newContent":{"expression":"1=1"}}]}`),
		a("PATCH", "/policies/off", `{}`),
		a("PATCH", "/policies/off", `{"enable":"true"}`),
	} {
		expect(t, n, bad, 400, 1001)
	}
	expect(t, n, a("POST", "/policies", `{"name":"p2","policyType":"row_filter","content":{"expression":"1=1","applicable_roles":["ghost"]}}`), 404, 1003)
	if g := must(t, n, a("GET", "/policies/off", nil)).gen(); g != gen {
		t.Fatalf("generation moved from %d to %d after rejected requests", gen, g)
	}
	// List, get, alter, enable, disable.
	if got := names(must(t, n, a("GET", "/policies", nil))); !slices.Equal(got, []string{"fin_rows", "off"}) {
		t.Fatalf("policies %v", got)
	}
	if ps := must(t, n, a("GET", "/policies?details=true", nil)).body["policies"].([]any); len(ps) != 2 || ps[1].(map[string]any)["policyType"] != "custom" {
		t.Fatalf("details: %v", ps)
	}
	r = must(t, n, a("PUT", "/policies/off", `{"updates":[{"@type":"updateComment","newComment":"x"},
		{"@type":"updateContent","policyType":"CUSTOM","newContent":{"custom":[1,2]}},{"@type":"rename","newName":"off2"}]}`))
	if p := r.body["policy"].(map[string]any); p["name"] != "off2" || p["comment"] != "x" || len(p["content"].(map[string]any)["custom"].([]any)) != 2 {
		t.Fatalf("alter: %s", r.raw)
	}
	expect(t, n, a("GET", "/policies/off", nil), 404, 1003)
	must(t, n, a("PATCH", "/policies/off2", `{"enable":true}`))
	if must(t, n, a("GET", "/policies/off2", nil)).body["policy"].(map[string]any)["enabled"] != true {
		t.Fatal("enable did not stick")
	}
	must(t, n, a("PATCH", "/policies/off2", `{"enable":false}`))
	if must(t, n, a("GET", "/policies/off2", nil)).body["policy"].(map[string]any)["enabled"] != false {
		t.Fatal("disable did not stick")
	}
	expect(t, n, a("PATCH", "/policies/nope", `{"enable":true}`), 404, 1003)
	// A role named by an enabled policy cannot be dropped; the 409 names it.
	r = expect(t, n, a("DELETE", "/roles/analyst", nil), 409, 1010)
	if !strings.Contains(r.body["message"].(string), "fin_rows") {
		t.Fatalf("in use: %s", r.raw)
	}
	// Delete.
	if r := must(t, n, a("DELETE", "/policies/off2", nil)); r.body["dropped"] != true {
		t.Fatalf("drop: %s", r.raw)
	}
	if r := must(t, n, a("DELETE", "/policies/off2", nil)); r.body["dropped"] != false {
		t.Fatalf("second drop: %s", r.raw)
	}
	// Other tenants and users without VIEW_POLICY see nothing.
	expect(t, n, call{method: "GET", path: ml + "/policies/fin_rows", token: tokEve}, 404, 1003)
	expect(t, n, call{method: "GET", path: ml + "/policies", token: tokEve}, 404, 1003)
	expect(t, n, call{method: "POST", path: ml + "/policies", token: tokEve, body: map[string]any{"name": "x", "policyType": "custom", "content": map[string]any{"custom": 1}}}, 404, 1003)
	expect(t, n, call{method: "PATCH", path: ml + "/policies/fin_rows", token: tokEve, body: map[string]any{"enable": false}}, 404, 1003)
	expect(t, n, call{method: "DELETE", path: ml + "/policies/fin_rows", token: tokEve}, 404, 1003)
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	expect(t, n, call{method: "GET", path: ml + "/policies/fin_rows", token: tokBob}, 404, 1003)
	if got := must(t, n, call{method: "GET", path: ml + "/policies", token: tokBob}).body["names"].([]any); len(got) != 0 {
		t.Fatalf("bob sees policies %v", got)
	}
}

func TestPolicyAttachments(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	must(t, n, a("POST", "/catalogs", map[string]any{"name": "lake"}))
	must(t, n, a("POST", "/catalogs/lake/schemas", map[string]any{"name": "sales"}))
	for _, tb := range []string{"orders", "staff"} {
		must(t, n, a("POST", "/catalogs/lake/schemas/sales/tables", map[string]any{"name": tb, "columns": []any{map[string]any{"name": "id", "type": "int"}}}))
	}
	must(t, n, a("POST", "/tags", map[string]any{"name": "dept", "allowedValues": []string{"finance", "hr"}}))
	must(t, n, a("POST", "/tags", map[string]any{"name": "pii"}))
	v2 := map[string]string{"Content-Type": "application/vnd.gravitino.v2+json", "Accept": "application/vnd.gravitino.v2+json"}
	for tb, v := range map[string]string{"orders": "finance", "staff": "hr"} {
		c := a("POST", "/objects/table/lake.sales."+tb+"/tags", map[string]any{"tagsToAdd": []any{map[string]any{"name": "dept", "value": v}}})
		c.header = v2
		must(t, n, c)
	}
	must(t, n, a("POST", "/objects/schema/lake.sales/tags", map[string]any{"tagsToAdd": []string{"pii"}}))
	must(t, n, a("POST", "/policies", map[string]any{"name": "fin", "policyType": "row_filter", "content": map[string]any{"expression": "amount < 1000"}}))
	must(t, n, a("POST", "/policies", map[string]any{"name": "mask", "policyType": "column_mask", "content": map[string]any{"mask": "redact"}}))
	must(t, n, a("POST", "/policies", map[string]any{"name": "any", "policyType": "custom", "content": map[string]any{"custom": true}}))

	// Value selector, presence (no body) and ALL_VALUES (presence).
	r := must(t, n, a("PUT", "/tags/dept/policies/fin", `{"selector":{"type":"TAG_VALUE","value":"finance"}}`))
	if r.body["policy"] != "fin" || r.body["tag"] != "dept" || r.body["selector"].(map[string]any)["value"] != "finance" || r.body["selector"].(map[string]any)["type"] != "tag_value" {
		t.Fatalf("attach: %s", r.raw)
	}
	r = must(t, n, a("PUT", "/tags/pii/policies/mask", nil))
	if sel, ok := r.body["selector"]; !ok || sel != nil {
		t.Fatalf("presence attach: %s", r.raw)
	}
	must(t, n, a("PUT", "/tags/dept/policies/any", `{"selector":{"type":"all_values"}}`))
	gen := r.gen()
	for _, bad := range []call{
		a("PUT", "/tags/dept/policies/fin", `{"selector":{"type":"TAG_VALUE"}}`),
		a("PUT", "/tags/dept/policies/fin", `{"selector":{"type":"ALL_VALUES","value":"x"}}`),
		a("PUT", "/tags/dept/policies/fin", `{"selector":{"type":"SOME"}}`),
		a("PUT", "/tags/dept/policies/fin", `{"selector":{"type":"TAG_VALUE","value":"legal"}}`), // not an allowed value
		a("PUT", "/tags/dept/policies/fin", `{"selector":{"type":"TAG_VALUE","value":"finance"},"x":1}`),
		a("PUT", "/tags/dept/policies/fin", `[]`),
	} {
		expect(t, n, bad, 400, 1001)
	}
	expect(t, n, a("PUT", "/tags/nope/policies/fin", nil), 404, 1003)
	expect(t, n, a("PUT", "/tags/dept/policies/nope", nil), 404, 1003)
	if g := must(t, n, a("GET", "/tags/dept", nil)).gen(); g < gen+1 {
		t.Fatalf("generation %d, want ≥ %d", g, gen+1)
	}
	gen = must(t, n, a("GET", "/tags/dept", nil)).gen()

	// Listings both ways.
	if got := names(must(t, n, a("GET", "/tags/dept/policies", nil))); !slices.Equal(got, []string{"any", "fin"}) {
		t.Fatalf("tag policies %v", got)
	}
	r = must(t, n, a("GET", "/tags/dept/policies?details=true", nil))
	as := r.body["associations"].([]any)
	if len(as) != 2 || as[0].(map[string]any)["policy"] != "any" || as[0].(map[string]any)["selector"] != nil ||
		as[1].(map[string]any)["selector"].(map[string]any)["value"] != "finance" {
		t.Fatalf("tag policies details: %s", r.raw)
	}
	if got := names(must(t, n, a("GET", "/policies/fin/tags", nil))); !slices.Equal(got, []string{"dept"}) {
		t.Fatalf("policy tags %v", got)
	}
	r = must(t, n, a("GET", "/policies/mask/tags?details=true", nil))
	if as := r.body["associations"].([]any); len(as) != 1 || as[0].(map[string]any)["tag"] != "pii" {
		t.Fatalf("policy tags details: %s", r.raw)
	}

	// Derived: the value selector applies to dept=finance, not dept=hr.
	if got := names(must(t, n, a("GET", "/objects/table/lake.sales.orders/policies", nil))); !slices.Equal(got, []string{"any", "fin", "mask"}) {
		t.Fatalf("orders policies %v", got)
	}
	if got := names(must(t, n, a("GET", "/objects/table/lake.sales.staff/policies", nil))); !slices.Equal(got, []string{"any", "mask"}) {
		t.Fatalf("staff policies %v", got)
	}
	r = must(t, n, a("GET", "/objects/column/lake.sales.orders.id/policies?details=true", nil))
	for _, x := range r.body["policies"].([]any) {
		m := x.(map[string]any)
		if m["inherited"] != true {
			t.Fatalf("column policy not inherited: %s", r.raw)
		}
		if m["name"] == "fin" && (m["tag"] != "dept" || m["selector"].(map[string]any)["value"] != "finance" || m["source"].(map[string]any)["fullName"] != "lake.sales.orders") {
			t.Fatalf("derived details: %s", r.raw)
		}
	}
	r = must(t, n, a("GET", "/objects/table/lake.sales.orders/policies?details=true", nil))
	for _, x := range r.body["policies"].([]any) {
		m := x.(map[string]any)
		if want := m["name"] == "mask"; m["inherited"] != want {
			t.Fatalf("inherited: %s", r.raw)
		}
	}
	// Disabled policies are not in effect.
	must(t, n, a("PATCH", "/policies/any", `{"enable":false}`))
	if got := names(must(t, n, a("GET", "/objects/table/lake.sales.staff/policies", nil))); !slices.Equal(got, []string{"mask"}) {
		t.Fatalf("after disable %v", got)
	}
	expect(t, n, a("GET", "/objects/table/lake.sales.nope/policies", nil), 404, 1003)
	expect(t, n, a("GET", "/objects/bogus/lake/policies", nil), 400, 1001)

	// Repeating an attach replaces the selector; detach, and a missing
	// relation is a no-op.
	must(t, n, a("PUT", "/tags/dept/policies/fin", `{"selector":{"type":"TAG_VALUE","value":"hr"}}`))
	if got := names(must(t, n, a("GET", "/objects/table/lake.sales.staff/policies", nil))); !slices.Equal(got, []string{"fin", "mask"}) {
		t.Fatalf("after replace %v", got)
	}
	r = must(t, n, a("DELETE", "/tags/dept/policies/fin", nil))
	if r.body["policy"] != "fin" || r.body["tag"] != "dept" {
		t.Fatalf("detach: %s", r.raw)
	}
	must(t, n, a("DELETE", "/tags/dept/policies/fin", nil))
	if got := names(must(t, n, a("GET", "/policies/fin/tags", nil))); len(got) != 0 {
		t.Fatalf("after detach %v", got)
	}
	expect(t, n, a("DELETE", "/tags/dept/policies/nope", nil), 404, 1003)

	// Cross-tenant: 404 everywhere; a user without VIEW_POLICY sees no
	// derived policies and cannot attach.
	eve := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokEve, body: body}
	}
	for _, c := range []call{
		eve("GET", "/tags/dept/policies", nil),
		eve("GET", "/policies/mask/tags", nil),
		eve("GET", "/objects/table/lake.sales.orders/policies", nil),
		eve("PUT", "/tags/pii/policies/mask", nil),
		eve("DELETE", "/tags/pii/policies/mask", nil),
	} {
		expect(t, n, c, 404, 1003)
	}
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	must(t, n, a("POST", "/roles", `{"name":"reader","securableObjects":[
		{"fullName":"lake","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"lake.sales","type":"schema","privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"},{"name":"SELECT_TABLE","condition":"ALLOW"}]}]}`))
	must(t, n, a("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["reader"]}`))
	must(t, n, call{method: "GET", path: ml + "/catalogs/lake/schemas/sales/tables/orders", token: tokBob})
	if got := must(t, n, call{method: "GET", path: ml + "/objects/table/lake.sales.orders/policies", token: tokBob}).body["names"].([]any); len(got) != 0 {
		t.Fatalf("bob sees policies %v", got)
	}
	expect(t, n, call{method: "PUT", path: ml + "/tags/pii/policies/mask", token: tokBob}, 404, 1003)
	if g := must(t, n, a("GET", "/tags/pii", nil)).gen(); g <= gen {
		t.Fatalf("generation did not advance: %d", g)
	}
}

// TestPolicyContentCheck: Config.CheckPolicy refuses row_filter and
// column_mask content before anything is proposed, on create and on an
// alteration of the content; nil accepts what the catalog accepts.
func TestPolicyContentCheck(t *testing.T) {
	var mu sync.Mutex
	var seen []catalog.PolicyContent
	configHook = func(c *metasrv.Config) {
		c.CheckPolicy = func(typ catalog.PolicyType, content catalog.PolicyContent) error {
			mu.Lock()
			seen = append(seen, content)
			mu.Unlock()
			if typ != catalog.PolicyRowFilter && typ != catalog.PolicyColumnMask {
				return fmt.Errorf("checked a %s policy", typ)
			}
			if strings.Contains(content.Expression, "forbidden") || strings.Contains(content.Mask, "forbidden") {
				return errors.New("sqlcheck: forbidden is not allowed here")
			}
			return nil
		}
	}
	t.Cleanup(func() { configHook = nil })
	n := single(t)
	configHook = nil
	calls := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	refused := func(c call) {
		t.Helper()
		r := expect(t, n, c, 400, 1001)
		if r.body["type"] != "IllegalArgumentException" || !strings.Contains(r.body["message"].(string), "sqlcheck: forbidden is not allowed here") {
			t.Fatalf("%s %s: %s", c.method, c.path, r.raw)
		}
	}
	content := func(name string) map[string]any {
		t.Helper()
		return must(t, n, a("GET", "/policies/"+name, nil)).body["policy"].(map[string]any)["content"].(map[string]any)
	}

	// Create refused: nothing is created.
	refused(a("POST", "/policies", `{"name":"bad_rows","policyType":"row_filter","content":{"expression":"forbidden = 1"}}`))
	expect(t, n, a("GET", "/policies/bad_rows", nil), 404, 1003)
	refused(a("POST", "/policies", `{"name":"bad_mask","policyType":"COLUMN_MASK","content":{"mask":"forbidden || 'x'"}}`))
	expect(t, n, a("GET", "/policies/bad_mask", nil), 404, 1003)

	// Accepted: created; the hook sees the content as the catalog keeps it.
	must(t, n, a("POST", "/policies", `{"name":"rows","policyType":"row_filter","content":{"expression":"region = 'EU'"}}`))
	must(t, n, a("POST", "/policies", `{"name":"mask","policyType":"column_mask","content":{"mask":"redact"}}`))
	mu.Lock()
	last := seen[len(seen)-1]
	mu.Unlock()
	if last.Mask != catalog.MaskRedact {
		t.Fatalf("hook saw mask %q, want %q", last.Mask, catalog.MaskRedact)
	}
	if c := content("mask"); c["mask"] != catalog.MaskRedact {
		t.Fatalf("mask content %v", c)
	}

	// An alteration to refused content leaves the old content (and the
	// other updates of the request are not applied either).
	refused(a("PUT", "/policies/rows", `{"updates":[{"@type":"updateContent","policyType":"row_filter","newContent":{"expression":"forbidden = 2"}}]}`))
	refused(a("PUT", "/policies/rows", `{"updates":[{"@type":"updateComment","newComment":"changed"},
		{"@type":"updateContent","policyType":"row_filter","newContent":{"expression":"region = 'US'"}},
		{"@type":"updateContent","policyType":"row_filter","newContent":{"expression":"forbidden = 3"}}]}`))
	refused(a("PUT", "/policies/mask", `{"updates":[{"@type":"updateContent","policyType":"column_mask","newContent":{"mask":"forbidden"}}]}`))
	if c := content("rows"); c["expression"] != "region = 'EU'" {
		t.Fatalf("refused alteration changed the content: %v", c)
	}
	if p := must(t, n, a("GET", "/policies/rows", nil)).body["policy"].(map[string]any); p["comment"] != nil {
		t.Fatalf("refused alteration changed the comment: %v", p)
	}
	if c := content("mask"); c["mask"] != catalog.MaskRedact {
		t.Fatalf("refused alteration changed the mask: %v", c)
	}

	// An alteration that leaves the content alone is not checked.
	before := calls()
	must(t, n, a("PUT", "/policies/rows", `{"updates":[{"@type":"updateComment","newComment":"c"},{"@type":"rename","newName":"rows2"}]}`))
	if calls() != before {
		t.Fatal("hook called for an alteration without a content change")
	}
	// An accepted alteration applies.
	must(t, n, a("PUT", "/policies/rows2", `{"updates":[{"@type":"updateContent","policyType":"ROW_FILTER","newContent":{"expression":"region = 'US'"}}]}`))
	if c := content("rows2"); c["expression"] != "region = 'US'" {
		t.Fatalf("accepted alteration: %v", c)
	}
	// Other policy types are left to the catalog.
	before = calls()
	must(t, n, a("POST", "/policies", `{"name":"cust","policyType":"custom","content":{"custom":{"forbidden":true}}}`))
	if calls() != before {
		t.Fatal("hook called for a custom policy")
	}

	// Nil hook: the catalog decides alone.
	n2 := single(t)
	must(t, n2, a("POST", "/policies", `{"name":"bad_rows","policyType":"row_filter","content":{"expression":"forbidden = 1"}}`))
	must(t, n2, a("PUT", "/policies/bad_rows", `{"updates":[{"@type":"updateContent","policyType":"row_filter","newContent":{"expression":"forbidden = 2"}}]}`))
}

// TestObjectPoliciesRedactHiddenTags: with details, the policies of an
// object name the tag they come through (with its selector and source) only
// to a caller who may view the tag, through the nearest such tag; a policy
// reached only through tags the caller may not view keeps its inherited
// flag and nothing of the tag. Before, bob, without VIEW_TAG on ztag, read
// "tag":"ztag" and its selector value.
func TestObjectPoliciesRedactHiddenTags(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	createLakeSalesOrders(t, n)
	must(t, n, a("POST", "/tags", map[string]any{"name": "ztag", "allowedValues": []string{"xsecret"}}))
	must(t, n, a("POST", "/tags", map[string]any{"name": "vis"}))
	for _, p := range []string{"only-hidden", "both"} {
		must(t, n, a("POST", "/policies", map[string]any{"name": p, "policyType": "custom", "content": map[string]any{"custom": 1}}))
	}
	must(t, n, a("PUT", "/tags/ztag/policies/only-hidden", `{"selector":{"type":"TAG_VALUE","value":"xsecret"}}`))
	must(t, n, a("PUT", "/tags/ztag/policies/both", nil))
	must(t, n, a("PUT", "/tags/vis/policies/both", nil))
	c := a("POST", "/objects/table/lake.sales.orders/tags", `{"tagsToAdd":[{"name":"ztag","value":"xsecret"}]}`)
	c.header = map[string]string{"Content-Type": "application/vnd.gravitino.v2+json", "Accept": "application/vnd.gravitino.v2+json"}
	must(t, n, c)
	must(t, n, a("POST", "/objects/schema/lake.sales/tags", `{"tagsToAdd":["vis"]}`))
	must(t, n, a("POST", "/users", map[string]any{"name": "bob@acme"}))
	must(t, n, a("POST", "/roles", `{"name":"look","securableObjects":[
		{"fullName":"lake","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"lake.sales","type":"schema","privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"},{"name":"SELECT_TABLE","condition":"ALLOW"}]},
		{"fullName":"vis","type":"tag","privileges":[{"name":"VIEW_TAG","condition":"ALLOW"}]},
		{"fullName":"only-hidden","type":"policy","privileges":[{"name":"VIEW_POLICY","condition":"ALLOW"}]},
		{"fullName":"both","type":"policy","privileges":[{"name":"VIEW_POLICY","condition":"ALLOW"}]}]}`))
	must(t, n, a("PUT", "/permissions/users/bob@acme/grant", `{"roleNames":["look"]}`))

	format := func(r resp) []string {
		out := []string{}
		for _, x := range r.body["policies"].([]any) {
			p := x.(map[string]any)
			out = append(out, fmt.Sprintf("%v inherited=%v tag=%v selector=%v source=%v", p["name"], p["inherited"], p["tag"], p["selector"], p["source"]))
		}
		return out
	}
	const path = "/objects/table/lake.sales.orders/policies?details=true"
	r := must(t, n, call{method: "GET", path: ml + path, token: tokBob})
	if got, want := format(r), []string{
		"both inherited=true tag=vis selector=<nil> source=map[fullName:lake.sales type:schema]",
		"only-hidden inherited=false tag=<nil> selector=<nil> source=<nil>",
	}; !slices.Equal(got, want) {
		t.Fatalf("bob:\ngot  %q\nwant %q", got, want)
	}
	if strings.Contains(string(r.raw), "ztag") || strings.Contains(string(r.raw), "xsecret") {
		t.Fatalf("the hidden tag shows: %s", r.raw)
	}
	if got, want := format(must(t, n, a("GET", path, nil))), []string{
		"both inherited=false tag=ztag selector=<nil> source=map[fullName:lake.sales.orders type:table]",
		"only-hidden inherited=false tag=ztag selector=map[type:tag_value value:xsecret] source=map[fullName:lake.sales.orders type:table]",
	}; !slices.Equal(got, want) {
		t.Fatalf("alice:\ngot  %q\nwant %q", got, want)
	}
}
