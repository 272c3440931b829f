package metasrv_test

import (
	"encoding/json"
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

// domainEvent is an audit event as GET /events answers it.
type domainEvent struct {
	Index                             uint64
	Operation, Outcome, Actor, Detail string
	Target                            struct{ Type, FullName string }
}

// TestDomainPreEvents: every domain operation records a pre-event (its
// operation, actor and target, outcome pre, index 0) before it is decided,
// followed by its success or failure: writes that succeed, fail in the
// state machine, are refused at the door (a bad body) or answered without
// proposing, and the owner and grant endpoints on a domain. Before, there
// were no pre-events.
func TestDomainPreEvents(t *testing.T) {
	n := domainNode(t)
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	steward := func(method, path string, body any) call { return as(tokSteward, method, path, body) }
	dave := func(method, path string, body any) call { return as(tokDave, method, path, body) }
	must(t, n, steward("POST", "/domains", `{"name":"Finance","backingTag":{"name":"finance","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"Markets","backingTag":{"name":"markets","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"Trading","backingTag":{"name":"trading","create":true},"parent":"Finance"}`))
	must(t, n, steward("PUT", "/domains/Finance", `{"updates":[{"@type":"updateComment","newComment":"money"}]}`))
	must(t, n, steward("PATCH", "/domains/Finance", `{"status":"published"}`))
	must(t, n, steward("PATCH", "/domains/Finance", `{"status":"draft"}`))
	expect(t, n, steward("PATCH", "/domains/Finance", `{"status":"bogus"}`), 400, 1001)                                       // refused at the door
	expect(t, n, steward("POST", "/domains", `{"name":"Fi\u200bnance","backingTag":{"name":"f2","create":true}}`), 400, 1001) // a name that does not look like itself
	expect(t, n, steward("PUT", "/domains/Trading/parent", `{"parent":"Trading"}`), 400, 1001)                                // C1, in the state machine
	must(t, n, steward("PUT", "/domains/Trading/parent", `{"parent":"Markets"}`))
	must(t, n, steward("DELETE", "/domains/Trading/parent", nil))
	must(t, n, alice("POST", "/tags", map[string]any{"name": "fin2"}))
	must(t, n, alice("PUT", "/domains/Finance/backingTag", `{"backingTag":{"name":"fin2"}}`))
	must(t, n, steward("PUT", "/domains/Finance/backingTag", `{"backingTag":null}`))
	must(t, n, alice("PUT", "/owners/domain/Markets", `{"name":"tom@acme","type":"USER"}`))
	must(t, n, alice("POST", "/roles", `{"name":"fin"}`))
	must(t, n, alice("PUT", "/permissions/roles/fin/domain/Finance/grant", `{"privileges":[{"name":"USE_DOMAIN","condition":"ALLOW"}]}`))
	expect(t, n, dave("PATCH", "/domains/Markets", `{"status":"published"}`), 404, 1003) // invisible to dave
	if r := must(t, n, dave("DELETE", "/domains/Markets", nil)); r.body["dropped"] != false {
		t.Fatalf("dave drops Markets: %s", r.raw)
	}
	must(t, n, steward("DELETE", "/domains/Trading", nil))

	r := must(t, n, alice("GET", "/events?limit=1000", nil))
	var b struct{ Events []domainEvent }
	if err := json.Unmarshal(r.raw, &b); err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{"CreateDomain": true, "AlterDomain": true, "PublishDomain": true, "UnpublishDomain": true,
		"SetDomainStatus": true, "SetDomainParent": true, "DetachDomain": true, "SetDomainBackingTag": true, "DropDomain": true,
		"SetOwner": true, "GrantPrivileges": true}
	pending := map[string]int{}
	seen := map[string]bool{}
	for i := len(b.Events) - 1; i >= 0; i-- { // oldest first
		e := b.Events[i]
		if !checked[e.Operation] {
			continue
		}
		key := e.Actor + " " + e.Operation + " " + e.Target.Type + ":" + e.Target.FullName
		switch e.Outcome {
		case "pre":
			if e.Index != 0 {
				t.Errorf("pre-event with index %d: %+v", e.Index, e)
			}
			pending[key]++
		case "success", "failure":
			if pending[key] == 0 {
				t.Errorf("no pre-event before %s/%s (%s)", key, e.Outcome, e.Detail)
				continue
			}
			pending[key]--
			seen[e.Operation+"/"+e.Outcome] = true
		}
	}
	for k, v := range pending {
		if v != 0 {
			t.Errorf("%d pre-events of %s without outcome", v, k)
		}
	}
	for _, w := range []string{"CreateDomain/success", "CreateDomain/failure", "AlterDomain/success", "PublishDomain/success", "UnpublishDomain/success",
		"SetDomainStatus/failure", "SetDomainParent/failure", "SetDomainParent/success", "DetachDomain/success",
		"SetDomainBackingTag/success", "SetOwner/success", "GrantPrivileges/success", "PublishDomain/failure",
		"DropDomain/failure", "DropDomain/success"} {
		if !seen[w] {
			t.Errorf("no %s with its pre-event in %s", w, r.raw)
		}
	}
	// A pre-event says what is asked for.
	for _, e := range b.Events {
		if e.Outcome == "pre" && e.Operation == "SetDomainParent" && e.Target.FullName == "Trading" && e.Detail == `parent -> "Markets"` {
			return
		}
	}
	t.Errorf("no pre-event of the move to Markets in %s", r.raw)
}
