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
