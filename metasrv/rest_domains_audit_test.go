package metasrv_test

import (
	"strings"
	"testing"
)

// TestBackingTagConflictHidesDraft: the 409 of a conflicting backing tag
// names the domain holding the tag only to a caller who may see it. Before,
// tom, steward of Mine only, read "TAG sec already backs DOMAIN
// SecretProject", a DRAFT domain he cannot see.
func TestBackingTagConflictHidesDraft(t *testing.T) {
	n := domainNode(t)
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	must(t, n, alice("POST", "/tags", map[string]any{"name": "sec"}))
	must(t, n, alice("POST", "/domains", `{"name":"SecretProject","backingTag":{"name":"sec"}}`))
	must(t, n, alice("PUT", "/owners/tag/sec", `{"name":"tom@acme","type":"USER"}`))
	must(t, n, alice("POST", "/domains", `{"name":"Mine","backingTag":{"name":"mine","create":true}}`))
	must(t, n, alice("POST", "/roles", `{"name":"mine-steward","securableObjects":[
		{"fullName":"Mine","type":"domain","privileges":[{"name":"MANAGE_DOMAIN","condition":"ALLOW"}]}]}`))
	must(t, n, alice("PUT", "/permissions/users/tom@acme/grant", `{"roleNames":["mine-steward"]}`))
	expect(t, n, as(tokTom, "GET", "/domains/SecretProject", nil), 404, 1003)

	set := `{"backingTag":{"name":"sec"}}`
	r := expectErr(t, n, as(tokTom, "PUT", "/domains/Mine/backingTag", set), 409, 1004, "BackingTagAlreadyBoundException",
		"TAG sec already backs another domain")
	if strings.Contains(string(r.raw), "SecretProject") {
		t.Fatalf("the 409 names a domain tom cannot see: %s", r.raw)
	}
	// Who may see it reads its name.
	expectErr(t, n, alice("PUT", "/domains/Mine/backingTag", set), 409, 1004, "BackingTagAlreadyBoundException",
		"TAG sec already backs DOMAIN SecretProject")
}

// TestDomainObjectsScopeIncludesSubdomains: domains= naming the domain
// itself selects its whole scope, the members of its visible subdomains
// included; naming a subdomain selects that subdomain. Before,
// domains=Finance listed only Finance's own members.
func TestDomainObjectsScopeIncludesSubdomains(t *testing.T) {
	n := domainNode(t)
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	steward := func(method, path string, body any) call { return as(tokSteward, method, path, body) }
	must(t, n, alice("POST", "/catalogs", map[string]any{"name": "cat"}))
	must(t, n, alice("POST", "/catalogs/cat/schemas", map[string]any{"name": "db"}))
	for _, tb := range []string{"ledger", "trades", "other"} {
		must(t, n, alice("POST", "/catalogs/cat/schemas/db/tables", map[string]any{"name": tb, "columns": []any{map[string]any{"name": "id", "type": "int"}}}))
	}
	must(t, n, steward("POST", "/domains", `{"name":"Finance","backingTag":{"name":"finance","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"Trading","backingTag":{"name":"trading","create":true},"parent":"Finance"}`))
	must(t, n, alice("POST", "/objects/table/cat.db.ledger/tags", `{"tagsToAdd":["finance"]}`))
	must(t, n, alice("POST", "/objects/table/cat.db.trades/tags", `{"tagsToAdd":["trading"]}`))
	whole := []string{"cat.db.ledger: direct", "cat.db.trades: via_subdomain domain:Trading"}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/domains/Finance/objects", whole},
		{"/domains/Finance/objects?domains=Finance", whole},
		{"/domains/Finance/objects?domains=Finance&domains=nope", whole},
		{"/domains/Finance/objects?domains=Trading", whole[1:]},
		{"/domains/Finance/objects?domains=nope", []string{}},
		{"/domains/Trading/objects?domains=Trading", []string{"cat.db.trades: direct"}},
		{"/domains/Trading/objects?domains=Finance", []string{}},
	} {
		wantList(t, tc.path, fmtMembers(t, must(t, n, alice("GET", tc.path, nil))), tc.want)
	}
}
