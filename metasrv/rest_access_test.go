package metasrv_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestCreateRoleChecksGrants: creating a role with initial grants needs,
// for each securable object, what granting on it directly needs, and is
// refused exactly as the direct grant is; an object the creator cannot see
// answers exactly as a missing one. Before, dave, holding CREATE_ROLE only,
// created a role with MANAGE_GRANTS, MANAGE_USERS and CREATE_POLICY on the
// metalake and SELECT_TABLE on a schema he cannot see (200), and the same
// call answered 200 for a hidden table and 404 for a missing one.
func TestCreateRoleChecksGrants(t *testing.T) {
	n := domainNode(t)
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	dave := func(method, path string, body any) call { return as(tokDave, method, path, body) }
	must(t, n, alice("POST", "/catalogs", map[string]any{"name": "cat"}))
	must(t, n, alice("POST", "/catalogs", map[string]any{"name": "dark"}))
	for _, sc := range []string{"db", "secret"} {
		must(t, n, alice("POST", "/catalogs/cat/schemas", map[string]any{"name": sc}))
	}
	for _, tb := range []string{"db.open", "db.hidden", "db.mine", "secret.t"} {
		sc, name, _ := strings.Cut(tb, ".")
		must(t, n, alice("POST", "/catalogs/cat/schemas/"+sc+"/tables", map[string]any{"name": name, "columns": []any{map[string]any{"name": "id", "type": "int"}}}))
	}
	must(t, n, alice("PUT", "/owners/table/cat.db.mine", `{"name":"dave@acme","type":"USER"}`))
	for _, tg := range []string{"pub", "sec"} {
		must(t, n, alice("POST", "/tags", map[string]any{"name": tg}))
	}
	for _, p := range []string{"vp", "hp"} {
		must(t, n, alice("POST", "/policies", map[string]any{"name": p, "policyType": "custom", "content": map[string]any{"custom": 1}}))
	}
	steward := func(method, path string, body any) call { return as(tokSteward, method, path, body) }
	must(t, n, steward("POST", "/domains", `{"name":"Draft","backingTag":{"name":"draft","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"Pub","backingTag":{"name":"pubd","create":true}}`))
	must(t, n, steward("PATCH", "/domains/Pub", `{"status":"published"}`))
	must(t, n, alice("POST", "/roles", `{"name":"daves","securableObjects":[
		{"fullName":"acme","type":"metalake","privileges":[{"name":"CREATE_ROLE","condition":"ALLOW"},{"name":"USE_DOMAIN","condition":"ALLOW"}]},
		{"fullName":"cat","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"cat.db","type":"schema","privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"}]},
		{"fullName":"cat.db.open","type":"table","privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]},
		{"fullName":"pub","type":"tag","privileges":[{"name":"VIEW_TAG","condition":"ALLOW"}]},
		{"fullName":"vp","type":"policy","privileges":[{"name":"VIEW_POLICY","condition":"ALLOW"}]}]}`))
	must(t, n, alice("PUT", "/permissions/users/dave@acme/grant", `{"roleNames":["daves"]}`))

	// The finding's role: refused, and not created.
	expect(t, n, dave("POST", "/roles", `{"name":"attack","securableObjects":[
		{"fullName":"acme","type":"metalake","privileges":[{"name":"MANAGE_GRANTS","condition":"ALLOW"},{"name":"MANAGE_USERS","condition":"ALLOW"},{"name":"CREATE_POLICY","condition":"ALLOW"}]},
		{"fullName":"cat.secret","type":"schema","privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}]}`), 403, 1008)
	expect(t, n, alice("GET", "/roles/attack", nil), 404, 1003)

	type securable struct{ typ, name, priv string }
	hidden := []securable{
		{"catalog", "dark", "USE_CATALOG"},
		{"schema", "cat.secret", "SELECT_TABLE"},
		{"table", "cat.db.hidden", "SELECT_TABLE"},
		{"table", "cat.secret.t", "MODIFY_TABLE"},
		{"tag", "sec", "APPLY_TAG"},
		{"policy", "hp", "APPLY_POLICY"},
		{"domain", "Draft", "USE_DOMAIN"},
	}
	cases := append([]securable{
		{"metalake", "acme", "MANAGE_GRANTS"},
		{"metalake", "acme", "MANAGE_USERS"},
		{"metalake", "acme", "CREATE_POLICY"},
		{"catalog", "cat", "CREATE_SCHEMA"},
		{"schema", "cat.db", "SELECT_TABLE"},
		{"table", "cat.db.open", "MODIFY_TABLE"},
		{"table", "cat.db.mine", "SELECT_TABLE"}, // his own: permitted
		{"tag", "pub", "APPLY_TAG"},
		{"policy", "vp", "APPLY_POLICY"},
		{"domain", "Pub", "MANAGE_DOMAIN"},
	}, hidden...)
	roleBody := func(i int, c securable) string {
		return fmt.Sprintf(`{"name":"r%d","securableObjects":[{"fullName":%q,"type":%q,"privileges":[{"name":%q,"condition":"ALLOW"}]}]}`, i, c.name, c.typ, c.priv)
	}
	must(t, n, dave("POST", "/roles", `{"name":"own"}`))
	for i, c := range cases {
		cr := do(t, n, dave("POST", "/roles", roleBody(i, c)))
		gp := do(t, n, dave("PUT", "/permissions/roles/own/"+c.typ+"/"+c.name+"/grant", fmt.Sprintf(`{"privileges":[{"name":%q,"condition":"ALLOW"}]}`, c.priv)))
		if cr.status != gp.status || cr.code() != gp.code() || cr.body["type"] != gp.body["type"] {
			t.Errorf("%v: CreateRole answers %d %s, the direct grant %d %s", c, cr.status, cr.raw, gp.status, gp.raw)
		}
		if c.name == "cat.db.mine" {
			if cr.status != http.StatusOK {
				t.Errorf("%v: %s", c, cr.raw)
			}
		} else if cr.status != http.StatusForbidden && cr.status != http.StatusNotFound {
			t.Errorf("%v: want 403 or 404: %s", c, cr.raw)
		}
	}
	// Hidden objects answer byte for byte as missing ones: the same calls
	// after alice drops them.
	before := map[securable]resp{}
	for i, c := range hidden {
		before[c] = expect(t, n, dave("POST", "/roles", roleBody(100+i, c)), 404, 1003)
	}
	must(t, n, alice("DELETE", "/catalogs/dark", nil))
	must(t, n, alice("DELETE", "/catalogs/cat/schemas/secret?cascade=true", nil))
	must(t, n, alice("DELETE", "/catalogs/cat/schemas/db/tables/hidden", nil))
	must(t, n, alice("DELETE", "/tags/sec", nil))
	must(t, n, alice("DELETE", "/policies/hp", nil))
	must(t, n, steward("DELETE", "/domains/Draft", nil))
	for i, c := range hidden {
		after := do(t, n, dave("POST", "/roles", roleBody(100+i, c)))
		if b := before[c]; after.status != b.status || string(after.raw) != string(b.raw) {
			t.Errorf("%v: hidden %d %s, missing %d %s", c, b.status, b.raw, after.status, after.raw)
		}
	}
}

// TestSystemAccessControlPrivileges: a system_access_control policy lists
// only the privileges a tag can confer (CREATE_SCHEMA, CREATE_TABLE,
// SELECT_TABLE, MODIFY_TABLE), on create and on updateContent; others are
// 400 and nothing changes. Before, create_catalog was accepted.
func TestSystemAccessControlPrivileges(t *testing.T) {
	n := single(t)
	a := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	must(t, n, a("POST", "/roles", `{"name":"analyst"}`))
	body := func(name, priv string) string {
		return fmt.Sprintf(`{"name":%q,"policyType":"system_access_control","content":{"privileges":[%q],"applicable_roles":["analyst"]}}`, name, priv)
	}
	for i, p := range []string{"create_schema", "CREATE_TABLE", "select_table", "modify_table"} {
		must(t, n, a("POST", "/policies", body(fmt.Sprintf("ok%d", i), p)))
	}
	for _, p := range []string{"create_catalog", "manage_grants", "manage_users", "create_role", "apply_tag", "view_policy", "use_domain", "use_catalog", "use_schema"} {
		r := expect(t, n, a("POST", "/policies", body("bad", p)), 400, 1001)
		if r.body["type"] != "IllegalArgumentException" {
			t.Fatalf("%s: %s", p, r.raw)
		}
	}
	expect(t, n, a("GET", "/policies/bad", nil), 404, 1003)
	expect(t, n, a("PUT", "/policies/ok0", `{"updates":[{"@type":"updateContent","policyType":"system_access_control","newContent":{"privileges":["select_table","create_catalog"],"applicable_roles":["analyst"]}}]}`), 400, 1001)
	r := must(t, n, a("GET", "/policies/ok0", nil))
	if got := r.body["policy"].(map[string]any)["content"].(map[string]any)["privileges"].([]any); len(got) != 1 || got[0] != "create_schema" {
		t.Fatalf("content changed: %s", r.raw)
	}
	must(t, n, a("PUT", "/policies/ok0", `{"updates":[{"@type":"updateContent","policyType":"system_access_control","newContent":{"privileges":["select_table","modify_table"],"applicable_roles":["analyst"]}}]}`))
}
