package metasrv_test

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
	"testing"

	"lakegate/authz"
)

// explainNode starts a node whose map adds acmeadmin@acme, the tenant admin
// of acme, who owns metalake acme and builds: users bob@acme and
// alice@acme (in the map, namespaces [sales]) and carol (not in the map);
// catalog lake with schemas sales (tag dept) and hr, tables
// lake.sales.orders(id, card) and lake.hr.staff(id); role analyst (USE on
// lake) held by bob and carol; policy sales-read (system_access_control,
// SELECT_TABLE for analyst) attached to tag dept; tag hrtag, assigned
// nowhere, with sales-read attached too.
func explainNode(t *testing.T) *node {
	t.Helper()
	specs := append(harnessSpecs(),
		authz.PrincipalSpec{ID: "acmeadmin@acme", Tenant: "acme", Role: "tenant_admin", TokenHashes: tokenHashes(tokAcmeAdmin)})
	n := startSolo(t, principalMap(t, specs), "n1")
	waitLeader(t, n)
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "acmeadmin@acme"}})
	a := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAcmeAdmin, body: body}
	}
	for _, c := range []call{
		a("POST", "/users", map[string]any{"name": "bob@acme"}),
		a("POST", "/users", map[string]any{"name": "alice@acme"}),
		a("POST", "/users", map[string]any{"name": "carol"}),
		a("POST", "/catalogs", map[string]any{"name": "lake"}),
		a("POST", "/catalogs/lake/schemas", map[string]any{"name": "sales"}),
		a("POST", "/catalogs/lake/schemas", map[string]any{"name": "hr"}),
		a("POST", "/catalogs/lake/schemas/sales/tables", map[string]any{"name": "orders",
			"columns": []map[string]any{{"name": "id", "type": "BIGINT"}, {"name": "card", "type": "VARCHAR"}}}),
		a("POST", "/catalogs/lake/schemas/hr/tables", map[string]any{"name": "staff", "columns": []map[string]any{{"name": "id", "type": "BIGINT"}}}),
		a("POST", "/roles", map[string]any{"name": "analyst", "securableObjects": []map[string]any{{"fullName": "lake", "type": "CATALOG",
			"privileges": []map[string]any{{"name": "USE_CATALOG", "condition": "ALLOW"}, {"name": "USE_SCHEMA", "condition": "ALLOW"}}}}}),
		a("PUT", "/permissions/users/bob@acme/grant", map[string]any{"roleNames": []string{"analyst"}}),
		a("PUT", "/permissions/users/carol/grant", map[string]any{"roleNames": []string{"analyst"}}),
		a("POST", "/tags", map[string]any{"name": "dept"}),
		a("POST", "/tags", map[string]any{"name": "hrtag"}),
		a("POST", "/policies", map[string]any{"name": "sales-read", "policyType": "system_access_control", "enabled": true,
			"content": map[string]any{"privileges": []string{"SELECT_TABLE"}, "applicable_roles": []string{"analyst"}}}),
		a("PUT", "/tags/dept/policies/sales-read", nil),
		a("PUT", "/tags/hrtag/policies/sales-read", nil),
		a("POST", "/objects/schema/lake.sales/tags", map[string]any{"tagsToAdd": []string{"dept"}}),
	} {
		must(t, n, c)
	}
	return n
}

func explainPath(user, priv, object string) string {
	q := url.Values{"user": {user}, "privilege": {priv}, "object": {object}}
	return ml + "/access/explain?" + q.Encode()
}

// TestExplainAccessWhoMay: the tenant's admins explain any user's access;
// a user explains only its own, and asking about anyone else — existing or
// not — is the same refusal.
func TestExplainAccessWhoMay(t *testing.T) {
	n := explainNode(t)
	orders := explainPath("bob@acme", "select_table", "TABLE:lake.sales.orders")
	r := must(t, n, call{method: "GET", path: orders, token: tokAcmeAdmin})
	e := r.body["explanation"].(map[string]any)
	if e["allowed"] != true || e["reason"] != "allowed by tag policy" || e["decidedBy"].(map[string]any)["policy"] != "sales-read" ||
		!strings.Contains(e["rule"].(string), "policy sales-read") || len(e["tags"].([]any)) != 1 {
		t.Fatalf("tenant admin's explanation: %s", r.raw)
	}
	g := r.body["gateway"].(map[string]any)
	if g["inPrincipalMap"] != true || g["role"] != "user" || g["namespace"] != "sales" || g["namespaceGranted"] != true ||
		g["mayQuery"] != true || g["allowed"] != true || !slices.Equal(toStrings(g["namespaces"]), []string{"sales"}) {
		t.Fatalf("gateway part: %s", r.raw)
	}
	// The operator gets the same answer, byte for byte; so does a repeat.
	if op := must(t, n, call{method: "GET", path: orders, token: tokAdmin}); !bytes.Equal(op.raw, r.raw) {
		t.Errorf("operator and tenant admin differ:\n%s\n%s", op.raw, r.raw)
	}
	if again := must(t, n, call{method: "GET", path: orders, token: tokAcmeAdmin}); !bytes.Equal(again.raw, r.raw) {
		t.Errorf("two answers to one question differ")
	}
	// bob about himself: the decision, without the tag and policy he may
	// not view.
	self := must(t, n, call{method: "GET", path: orders, token: tokBob})
	se := self.body["explanation"].(map[string]any)
	if se["allowed"] != true || se["reason"] != "allowed by tag policy" || se["tags"] != nil ||
		strings.Contains(string(self.raw), "sales-read") || strings.Contains(string(self.raw), "dept") {
		t.Errorf("bob's own explanation: %s", self.raw)
	}
	// bob about anyone else, alice (not an admin) about bob: refused, the
	// same whether the user exists.
	refusal := expect(t, n, call{method: "GET", path: explainPath("carol", "SELECT_TABLE", "TABLE:lake.sales.orders"), token: tokBob}, 403, 1008)
	ghost := expect(t, n, call{method: "GET", path: explainPath("ghost", "SELECT_TABLE", "TABLE:lake.sales.orders"), token: tokBob}, 403, 1008)
	if !bytes.Equal(refusal.raw, ghost.raw) {
		t.Errorf("refusals differ for an existing and a missing user:\n%s\n%s", refusal.raw, ghost.raw)
	}
	expect(t, n, call{method: "GET", path: orders, token: tokAlice}, 403, 1008)
	// Another tenant's principal does not reach acme at all.
	expect(t, n, call{method: "GET", path: orders, token: tokEve}, 404, 1003)
	expect(t, n, call{method: "GET", path: orders}, 401, 1011)

	// A user outside the principal map is explained, and said to be so.
	r = must(t, n, call{method: "GET", path: explainPath("carol", "SELECT_TABLE", "TABLE:lake.sales.orders"), token: tokAcmeAdmin})
	if g := r.body["gateway"].(map[string]any); g["inPrincipalMap"] != false || g["allowed"] != false || !strings.Contains(g["note"].(string), "principal map") {
		t.Errorf("carol: %s", r.raw)
	}
	if r.body["explanation"].(map[string]any)["allowed"] != true {
		t.Errorf("carol's decision: %s", r.raw)
	}
	// A namespace outside the grants: the decision may allow, the gateway
	// does not.
	must(t, n, call{method: "POST", path: ml + "/objects/schema/lake.hr/tags", token: tokAcmeAdmin, body: map[string]any{"tagsToAdd": []string{"dept"}}})
	r = must(t, n, call{method: "GET", path: explainPath("bob@acme", "SELECT_TABLE", "table:lake.hr.staff"), token: tokAcmeAdmin})
	if g := r.body["gateway"].(map[string]any); r.body["explanation"].(map[string]any)["allowed"] != true ||
		g["namespace"] != "hr" || g["namespaceGranted"] != false || g["allowed"] != false {
		t.Errorf("outside the namespaces: %s", r.raw)
	}

	for _, bad := range []string{
		ml + "/access/explain?privilege=SELECT_TABLE&object=TABLE:lake.sales.orders",
		explainPath("bob@acme", "FLY", "TABLE:lake.sales.orders"),
		explainPath("bob@acme", "SELECT_TABLE", "lake.sales.orders"),
		explainPath("bob@acme", "SELECT_TABLE", "SHELF:lake.sales.orders"),
		explainPath("bob@acme", "SELECT_TABLE", "USER:bob@acme"),
	} {
		expect(t, n, call{method: "GET", path: bad, token: tokAcmeAdmin}, 400, 1001)
	}
	expect(t, n, call{method: "POST", path: orders, token: tokAcmeAdmin, body: "{}"}, 405, 1006)
}

// TestExplainAccessHiddenIsMissing: a user explaining its access to an
// object it may not see gets, byte for byte, the answer for a missing one.
func TestExplainAccessHiddenIsMissing(t *testing.T) {
	n := explainNode(t)
	for _, tc := range []struct{ priv, hidden, missing string }{
		{"SELECT_TABLE", "TABLE:lake.hr.staff", "TABLE:lake.hr.nope"},
		{"MODIFY_TABLE", "TABLE:lake.hr.staff", "TABLE:lake.hr.nope"},
		{"SELECT_TABLE", "COLUMN:lake.hr.staff.id", "COLUMN:lake.hr.nope.id"},
		{"APPLY_TAG", "TAG:hrtag", "TAG:nope"},
		{"VIEW_POLICY", "POLICY:sales-read", "POLICY:nope"},
	} {
		hidden := must(t, n, call{method: "GET", path: explainPath("bob@acme", tc.priv, tc.hidden), token: tokBob})
		missing := must(t, n, call{method: "GET", path: explainPath("bob@acme", tc.priv, tc.missing), token: tokBob})
		_, hname, _ := strings.Cut(tc.hidden, ":")
		_, mname, _ := strings.Cut(tc.missing, ":")
		if got := strings.ReplaceAll(string(hidden.raw), hname, mname); got != string(missing.raw) {
			t.Errorf("%s %s:\n%s\nmissing:\n%s", tc.priv, tc.hidden, hidden.raw, missing.raw)
		}
		if hidden.body["explanation"].(map[string]any)["reason"] != "no such object" {
			t.Errorf("%s %s: %s", tc.priv, tc.hidden, hidden.raw)
		}
		// An admin sees it.
		if r := must(t, n, call{method: "GET", path: explainPath("bob@acme", tc.priv, tc.hidden), token: tokAcmeAdmin}); r.body["explanation"].(map[string]any)["reason"] == "no such object" {
			t.Errorf("admin: %s", r.raw)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestPreviewAccess: a preview answers what a governance command would
// change and changes nothing; it is the tenant's admins'; a command the
// write would refuse is refused alike.
func TestPreviewAccess(t *testing.T) {
	n := explainNode(t)
	attach := map[string]any{"commands": []map[string]any{{"type": "AssociateTagsV2",
		"body": map[string]any{"object": map[string]any{"type": "SCHEMA", "fullName": "lake.hr"}, "tagsToAdd": []map[string]any{{"name": "dept"}}}}}}
	before := must(t, n, call{method: "GET", path: ml, token: tokAcmeAdmin}).gen()
	r := must(t, n, call{method: "POST", path: ml + "/access/preview", token: tokAcmeAdmin, body: attach})
	p := r.body["preview"].(map[string]any)
	var got []string
	for _, c := range p["privileges"].([]any) {
		c := c.(map[string]any)
		got = append(got, c["user"].(string)+" "+c["object"].(map[string]any)["fullName"].(string)+" "+c["privilege"].(string)+" "+
			map[bool]string{true: "gained", false: "lost"}[c["gained"].(bool)])
	}
	if want := []string{"bob@acme lake.hr.staff SELECT_TABLE gained", "carol lake.hr.staff SELECT_TABLE gained"}; !slices.Equal(got, want) {
		t.Fatalf("preview: %v, want %v\n%s", got, want, r.raw)
	}
	if p["privilegesTotal"] != 2.0 || r.body["next"] != nil {
		t.Errorf("totals: %s", r.raw)
	}
	if g := must(t, n, call{method: "GET", path: ml, token: tokAcmeAdmin}).gen(); g != before || r.gen() != before {
		t.Errorf("generation %d → %d (answered at %d): the preview applied something", before, g, r.gen())
	}
	if e := must(t, n, call{method: "GET", path: explainPath("bob@acme", "SELECT_TABLE", "TABLE:lake.hr.staff"), token: tokAcmeAdmin}); e.body["explanation"].(map[string]any)["allowed"] != false {
		t.Errorf("after the preview bob reads lake.hr.staff: %s", e.raw)
	}
	// Paged.
	r = must(t, n, call{method: "POST", path: ml + "/access/preview?limit=1", token: tokAcmeAdmin, body: attach})
	if p := r.body["preview"].(map[string]any); len(p["privileges"].([]any)) != 1 || p["privilegesTotal"] != 2.0 || r.body["next"] != 1.0 {
		t.Errorf("first page: %s", r.raw)
	}
	r = must(t, n, call{method: "POST", path: ml + "/access/preview?limit=1&offset=1", token: tokAcmeAdmin, body: attach})
	if p := r.body["preview"].(map[string]any); len(p["privileges"].([]any)) != 1 || r.body["next"] != nil ||
		p["privileges"].([]any)[0].(map[string]any)["user"] != "carol" {
		t.Errorf("second page: %s", r.raw)
	}

	// The tenant's admins only.
	expect(t, n, call{method: "POST", path: ml + "/access/preview", token: tokBob, body: attach}, 403, 1008)
	expect(t, n, call{method: "POST", path: ml + "/access/preview", token: tokAlice, body: attach}, 403, 1008)
	expect(t, n, call{method: "POST", path: ml + "/access/preview", token: tokEve, body: attach}, 404, 1003)

	// Refused as the write would be: a missing tag, and the write of the
	// operator, who is no user of the metalake.
	missingTag := map[string]any{"commands": []map[string]any{{"type": "AttachPolicy", "body": map[string]any{"tag": "nope", "policy": "sales-read"}}}}
	pr := expect(t, n, call{method: "POST", path: ml + "/access/preview", token: tokAcmeAdmin, body: missingTag}, 404, 1003)
	wr := expect(t, n, call{method: "PUT", path: ml + "/tags/nope/policies/sales-read", token: tokAcmeAdmin}, 404, 1003)
	if pr.message() != wr.message() {
		t.Errorf("preview %q, write %q", pr.message(), wr.message())
	}
	expect(t, n, call{method: "POST", path: ml + "/access/preview", token: tokAdmin, body: attach}, 403, 1008)
	// As another user: what bob's own write would do.
	asBob := map[string]any{"as": "bob@acme", "commands": attach["commands"]}
	expect(t, n, call{method: "POST", path: ml + "/access/preview", token: tokAcmeAdmin, body: asBob}, 404, 1003)

	for _, bad := range []any{
		`{}`,
		`{"commands":[]}`,
		`{"commands":[{"type":"Explode","body":{}}]}`,
		`{"commands":[{"type":"CreateCatalog","body":{"name":"x"}}]}`,
		`{"commands":[{"type":"DisablePolicy","body":{"name":"sales-read","bogus":1}}]}`,
		`{"commands":[{"type":"DisablePolicy"}]}`,
		`{"commands":[{"type":"DisablePolicy","body":{"name":"sales-read"}}],"bogus":1}`,
		`{"commands":[{"type":"GrantPrivileges","body":{"role":"analyst","object":{"type":"CATALOG","fullName":"lake"},"privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}}]}x`,
	} {
		expect(t, n, call{method: "POST", path: ml + "/access/preview", token: tokAcmeAdmin, body: bad}, 400, 1001)
	}
	for _, q := range []string{"?limit=0", "?limit=10001", "?offset=-1", "?limit=x"} {
		expect(t, n, call{method: "POST", path: ml + "/access/preview" + q, token: tokAcmeAdmin, body: attach}, 400, 1001)
	}
	// A sequence, and every kind of governance command the preview takes.
	seq := map[string]any{"commands": []map[string]any{
		{"type": "DisablePolicy", "body": map[string]any{"name": "sales-read"}},
		{"type": "EnablePolicy", "body": map[string]any{"name": "sales-read"}},
		{"type": "RevokeRoles", "body": map[string]any{"grantee": map[string]any{"type": "USER", "name": "carol"}, "roles": []string{"analyst"}}},
	}}
	r = must(t, n, call{method: "POST", path: ml + "/access/preview", token: tokAcmeAdmin, body: seq})
	// carol loses USE_CATALOG, USE_SCHEMA on both schemas and the read of
	// orders; the policy is as it was.
	if p := r.body["preview"].(map[string]any); p["privilegesTotal"] != 4.0 {
		t.Errorf("sequence: %s", r.raw)
	}
}
