package metasrv_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lakegate/authz"
)

// Domain test tokens: steward@acme (MANAGE_DOMAIN + CREATE_TAG through a
// role), tom@acme (a table owner), bea@acme (a browser) and dave@acme (no
// privilege).
const (
	tokSteward = "tok-steward"
	tokTom     = "tok-tom"
	tokBea     = "tok-bea"
	tokDave    = "tok-dave"
)

// domainNode starts a single node whose principal map adds the domain
// users to the harness's, with metalake acme owned by alice, the users
// created and steward holding MANAGE_DOMAIN and CREATE_TAG on acme.
func domainNode(t *testing.T) *node {
	t.Helper()
	specs := []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: tokenHashes(tokAdmin)},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: tokenHashes(tokAlice)},
		{ID: "eve@other", Tenant: "other", Role: "user", Namespaces: []string{"x"}, TokenHashes: tokenHashes(tokEve)},
		peerSpec("n1"), peerSpec("n2"), peerSpec("n3"),
	}
	for _, u := range []struct{ id, tok string }{{"steward@acme", tokSteward}, {"tom@acme", tokTom}, {"bea@acme", tokBea}, {"dave@acme", tokDave}} {
		specs = append(specs, authz.PrincipalSpec{ID: u.id, Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: tokenHashes(u.tok)})
	}
	pm := principalMap(t, specs)
	n := withAcme(t, startSolo(t, pm, "n1"))
	for _, u := range []string{"steward@acme", "tom@acme", "bea@acme", "dave@acme"} {
		must(t, n, as(tokAlice, "POST", "/users", map[string]any{"name": u}))
	}
	must(t, n, as(tokAlice, "POST", "/roles", `{"name":"steward","securableObjects":[
		{"fullName":"acme","type":"metalake","privileges":[{"name":"MANAGE_DOMAIN","condition":"ALLOW"},{"name":"CREATE_TAG","condition":"ALLOW"}]}]}`))
	must(t, n, as(tokAlice, "PUT", "/permissions/users/steward@acme/grant", `{"roleNames":["steward"]}`))
	return n
}

// as is a call on metalake acme with token.
func as(token, method, path string, body any) call {
	return call{method: method, path: ml + path, token: token, body: body}
}

// expectErr is expect that also checks the error type and that the
// message contains each of msg.
func expectErr(t *testing.T, n *node, c call, status, code int, typ string, msg ...string) resp {
	t.Helper()
	r := expect(t, n, c, status, code)
	if typ != "" && r.body["type"] != typ {
		t.Fatalf("%s %s: want type %s: %s", c.method, c.path, typ, r.raw)
	}
	for _, m := range msg {
		if !strings.Contains(r.body["message"].(string), m) {
			t.Fatalf("%s %s: message lacks %q: %s", c.method, c.path, m, r.raw)
		}
	}
	return r
}

// fmtMembers formats a metadataObjects answer with relations as
// "fullName: relation source, …" lines.
func fmtMembers(t *testing.T, r resp) []string {
	t.Helper()
	var b struct {
		MetadataObjects []struct {
			FullName, Type string
			Relations      []struct {
				Type   string
				Source *struct{ FullName, Type string }
			}
		}
	}
	if err := json.Unmarshal(r.raw, &b); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, m := range b.MetadataObjects {
		if m.Type != "table" {
			t.Fatalf("member type %q: %s", m.Type, r.raw)
		}
		var rels []string
		for _, rel := range m.Relations {
			s := rel.Type
			if rel.Source != nil {
				s += " " + rel.Source.Type + ":" + rel.Source.FullName
			}
			rels = append(rels, s)
		}
		out = append(out, m.FullName+": "+strings.Join(rels, ", "))
	}
	return out
}

func wantList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

func domainOf(r resp) map[string]any { return r.body["domain"].(map[string]any) }

// TestDomainScenario is the domain design's usage scenario over REST.
func TestDomainScenario(t *testing.T) {
	n := domainNode(t)
	alice := func(method, path string, body any) call { return as(tokAlice, method, path, body) }
	steward := func(method, path string, body any) call { return as(tokSteward, method, path, body) }
	must(t, n, alice("POST", "/catalogs", map[string]any{"name": "cat"}))
	must(t, n, alice("POST", "/catalogs/cat/schemas", map[string]any{"name": "db"}))
	for _, tb := range []string{"trades", "ledger", "secret"} {
		must(t, n, alice("POST", "/catalogs/cat/schemas/db/tables", map[string]any{"name": tb, "columns": []any{map[string]any{"name": "id", "type": "int"}}}))
		must(t, n, alice("PUT", "/owners/table/cat.db."+tb, `{"name":"tom@acme","type":"USER"}`))
	}
	must(t, n, alice("PUT", "/owners/schema/cat.db", `{"name":"tom@acme","type":"USER"}`))

	// The steward creates Finance (new tag finance) and its subdomain
	// Trading (new tag trading), and Markets.
	r := must(t, n, steward("POST", "/domains", `{"name":"Finance","comment":"money","properties":{"k":"v"},"backingTag":{"name":"finance","create":true}}`))
	d := domainOf(r)
	if d["name"] != "Finance" || d["status"] != "draft" || d["comment"] != "money" || d["backingTag"].(map[string]any)["name"] != "finance" ||
		d["owner"].(map[string]any)["name"] != "steward@acme" || d["audit"].(map[string]any)["creator"] != "steward@acme" || d["parent"] != nil {
		t.Fatalf("create Finance: %s", r.raw)
	}
	r = must(t, n, steward("POST", "/domains", `{"name":"Trading","backingTag":{"name":"trading","create":true},"parent":"Finance"}`))
	if d := domainOf(r); d["parent"] != "Finance" || d["parentAudit"].(map[string]any)["creator"] != "steward@acme" {
		t.Fatalf("create Trading: %s", r.raw)
	}
	must(t, n, steward("POST", "/domains", `{"name":"Markets","backingTag":{"name":"markets","create":true}}`))
	if o := must(t, n, steward("GET", "/tags/finance", nil)).body["tag"].(map[string]any); o["allowedValues"] == nil {
		t.Fatalf("backing tag takes no value: %v", o)
	}
	// DRAFT: invisible to everyone but stewards; a subdomain cannot be
	// published under a DRAFT parent.
	expectErr(t, n, as(tokDave, "GET", "/domains/Finance", nil), 404, 1003, "NoSuchDomainException")
	if got := names(must(t, n, as(tokDave, "GET", "/domains", nil))); len(got) != 0 {
		t.Fatalf("dave lists %v", got)
	}
	expectErr(t, n, steward("PATCH", "/domains/Trading", `{"status":"published"}`), 400, 1001, "IllegalArgumentException", "C6")
	for _, dn := range []string{"Finance", "Trading", "Markets"} {
		if d := domainOf(must(t, n, steward("PATCH", "/domains/"+dn, `{"status":"PUBLISHED"}`))); d["status"] != "published" {
			t.Fatalf("publish %s: %v", dn, d)
		}
	}
	wantList(t, "steward lists", names(must(t, n, steward("GET", "/domains", nil))), []string{"Finance", "Markets", "Trading"})
	wantList(t, "subdomains", names(must(t, n, steward("GET", "/domains/Finance/subdomains", nil))), []string{"Trading"})

	// The table owner tags trades with trading: a member of Trading, and
	// of Finance via the subdomain.
	must(t, n, alice("POST", "/roles", `{"name":"tagger","securableObjects":[
		{"fullName":"cat","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"finance","type":"tag","privileges":[{"name":"APPLY_TAG","condition":"ALLOW"}]},
		{"fullName":"trading","type":"tag","privileges":[{"name":"APPLY_TAG","condition":"ALLOW"}]}]}`))
	must(t, n, alice("PUT", "/permissions/users/tom@acme/grant", `{"roleNames":["tagger"]}`))
	must(t, n, as(tokTom, "POST", "/objects/table/cat.db.trades/tags", `{"tagsToAdd":["trading"]}`))
	wantList(t, "Trading", fmtMembers(t, must(t, n, alice("GET", "/domains/Trading/objects", nil))), []string{"cat.db.trades: direct"})
	wantList(t, "Finance", fmtMembers(t, must(t, n, alice("GET", "/domains/Finance/objects", nil))),
		[]string{"cat.db.trades: via_subdomain domain:Trading"})

	// Tagging the schema finance makes every table in it a Finance member,
	// inherited from the schema, one created afterwards included.
	must(t, n, as(tokTom, "POST", "/objects/schema/cat.db/tags", `{"tagsToAdd":["finance"]}`))
	must(t, n, alice("POST", "/catalogs/cat/schemas/db/tables", map[string]any{"name": "later", "columns": []any{map[string]any{"name": "id", "type": "int"}}}))
	wantList(t, "Finance after the schema tag", fmtMembers(t, must(t, n, alice("GET", "/domains/Finance/objects", nil))), []string{
		"cat.db.later: inherited schema:cat.db",
		"cat.db.ledger: inherited schema:cat.db",
		"cat.db.secret: inherited schema:cat.db",
		"cat.db.trades: inherited schema:cat.db, via_subdomain domain:Trading",
	})
	// Scope selection, filters.
	wantList(t, "domains=Trading", fmtMembers(t, must(t, n, alice("GET", "/domains/Finance/objects?domains=Trading", nil))),
		[]string{"cat.db.trades: via_subdomain domain:Trading"})
	wantList(t, "domains=Finance&domains=Trading", fmtMembers(t, must(t, n, alice("GET", "/domains/Finance/objects?domains=Finance&domains=Trading&nameContains=TRAD", nil))),
		[]string{"cat.db.trades: inherited schema:cat.db, via_subdomain domain:Trading"})
	wantList(t, "all scopes ignored", fmtMembers(t, must(t, n, alice("GET", "/domains/Finance/objects?domains=Markets&domains=nope", nil))), []string{})
	if got := fmtMembers(t, must(t, n, alice("GET", "/domains/Finance/objects?types=table,TABLE", nil))); len(got) != 4 {
		t.Fatalf("types=table: %v", got)
	}
	expect(t, n, alice("GET", "/domains/Finance/objects?types=schema", nil), 400, 1001)
	expect(t, n, alice("GET", "/domains/Finance/objects?types=bogus", nil), 400, 1001)
	expectErr(t, n, alice("GET", "/domains/Nope/objects", nil), 404, 1003, "NoSuchDomainException")
	// Domains of an object.
	wantList(t, "domains of trades", names(must(t, n, alice("GET", "/objects/table/cat.db.trades/domains", nil))), []string{"Finance", "Trading"})
	r = must(t, n, alice("GET", "/objects/table/cat.db.trades/domains?details=true", nil))
	ds := r.body["domains"].([]any)
	if len(ds) != 2 || len(ds[0].(map[string]any)["relations"].([]any)) != 2 || ds[1].(map[string]any)["relations"].([]any)[0].(map[string]any)["type"] != "direct" {
		t.Fatalf("domains of trades, details: %s", r.raw)
	}
	expect(t, n, alice("GET", "/objects/schema/cat.db/domains", nil), 400, 1001)
	expect(t, n, alice("GET", "/objects/table/cat.db.nope/domains", nil), 404, 1003)

	// A USE_DOMAIN holder on Finance browses it and gets only the tables it
	// can see; it sees Trading through Finance, not Markets.
	must(t, n, alice("POST", "/roles", `{"name":"fin-browser","securableObjects":[
		{"fullName":"Finance","type":"domain","privileges":[{"name":"USE_DOMAIN","condition":"ALLOW"}]},
		{"fullName":"cat","type":"catalog","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]},
		{"fullName":"cat.db","type":"schema","privileges":[{"name":"USE_SCHEMA","condition":"ALLOW"}]},
		{"fullName":"cat.db.ledger","type":"table","privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}]}`))
	must(t, n, alice("PUT", "/permissions/users/bea@acme/grant", `{"roleNames":["fin-browser"]}`))
	bea := func(method, path string) call { return as(tokBea, method, path, nil) }
	wantList(t, "bea browses Finance", fmtMembers(t, must(t, n, bea("GET", "/domains/Finance/objects"))), []string{"cat.db.ledger: inherited schema:cat.db"})
	wantList(t, "bea lists", names(must(t, n, bea("GET", "/domains"))), []string{"Finance", "Trading"})
	expect(t, n, bea("GET", "/domains/Markets"), 404, 1003)
	expect(t, n, bea("GET", "/objects/table/cat.db.trades/domains"), 404, 1003) // she cannot see the table
	wantList(t, "domains of ledger for bea", names(must(t, n, bea("GET", "/objects/table/cat.db.ledger/domains"))), []string{"Finance"})
	expect(t, n, as(tokBea, "PATCH", "/domains/Finance", `{"status":"draft"}`), 403, 1008)

	// Trading moves under Markets: its members list under Markets, nothing
	// retagged; bea loses Trading with the old parent.
	r = must(t, n, steward("PUT", "/domains/Trading/parent", `{"parent":"Markets"}`))
	if domainOf(r)["parent"] != "Markets" {
		t.Fatalf("move: %s", r.raw)
	}
	wantList(t, "Markets", fmtMembers(t, must(t, n, alice("GET", "/domains/Markets/objects", nil))),
		[]string{"cat.db.trades: via_subdomain domain:Trading"})
	wantList(t, "Finance after the move", fmtMembers(t, must(t, n, alice("GET", "/domains/Finance/objects", nil))), []string{
		"cat.db.later: inherited schema:cat.db", "cat.db.ledger: inherited schema:cat.db",
		"cat.db.secret: inherited schema:cat.db", "cat.db.trades: inherited schema:cat.db"})
	wantList(t, "trading objects", fmtMembersOf(t, must(t, n, alice("GET", "/tags/trading/objects", nil))), []string{"table:cat.db.trades"})
	expect(t, n, bea("GET", "/domains/Trading"), 404, 1003)

	// The catalog's events are the audit: success and failure, the move
	// with old and new parent.
	r = must(t, n, alice("GET", "/events?limit=1000", nil))
	var evs struct {
		Events []struct {
			Operation, Outcome, Actor, Detail string
			Target                            struct{ Type, FullName string }
		}
	}
	if err := json.Unmarshal(r.raw, &evs); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range evs.Events {
		if e.Target.Type == "DOMAIN" || e.Target.Type == "domain" {
			seen[e.Operation+"/"+e.Outcome+" "+e.Target.FullName+" "+e.Detail] = true
		}
	}
	for _, w := range []string{
		"CreateDomain/success Finance ", `CreateDomain/success Trading parent "Finance"`, "PublishDomain/success Finance ",
		"PublishDomain/failure Trading ", `SetDomainParent/success Trading parent "Finance" -> "Markets"`,
	} {
		found := false
		for k := range seen {
			if strings.HasPrefix(k, w) {
				found = true
			}
		}
		if !found {
			t.Fatalf("no event %q in %v", w, seen)
		}
	}
}

func fmtMembersOf(t *testing.T, r resp) []string {
	t.Helper()
	out := []string{}
	for _, x := range r.body["metadataObjects"].([]any) {
		m := x.(map[string]any)
		out = append(out, m["type"].(string)+":"+m["fullName"].(string))
	}
	return out
}

// TestDomainRules: C1–C6 and the other rejections over REST, with their
// codes; bad bodies change nothing.
func TestDomainRules(t *testing.T) {
	n := domainNode(t)
	steward := func(method, path string, body any) call { return as(tokSteward, method, path, body) }
	must(t, n, steward("POST", "/domains", `{"name":"A","backingTag":{"name":"a","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"B","backingTag":{"name":"b","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"S","backingTag":{"name":"s","create":true},"parent":"A"}`))

	// C1 not its own parent; C2 the parent is top-level; C3 a domain with
	// subdomains gets no parent.
	expectErr(t, n, steward("PUT", "/domains/A/parent", `{"parent":"A"}`), 400, 1001, "IllegalArgumentException", "C1")
	expectErr(t, n, steward("PUT", "/domains/B/parent", `{"parent":"S"}`), 400, 1001, "IllegalArgumentException", "C2")
	expectErr(t, n, steward("POST", "/domains", `{"name":"X","backingTag":{"name":"x","create":true},"parent":"S"}`), 400, 1001, "IllegalArgumentException", "C2")
	expectErr(t, n, steward("PUT", "/domains/A/parent", `{"parent":"B"}`), 400, 1001, "IllegalArgumentException", "C3")
	// C4: a parent is looked up in the addressed metalake only; a domain of
	// another metalake is no parent (404, like a missing one).
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "other", "owner": "eve@other"}})
	must(t, n, call{method: "POST", path: "/api/metalakes/other/domains", token: tokEve, body: `{"name":"Foreign","backingTag":{"name":"f","create":true}}`})
	expectErr(t, n, steward("PUT", "/domains/B/parent", `{"parent":"Foreign"}`), 404, 1003, "NoSuchDomainException", "Foreign")
	expect(t, n, call{method: "GET", path: "/api/metalakes/other/domains/A", token: tokEve}, 404, 1003)
	// C5 one parent: attaching S, a subdomain of A, to B moves it.
	r := must(t, n, steward("PUT", "/domains/S/parent", `{"parent":"B"}`))
	if domainOf(r)["parent"] != "B" {
		t.Fatalf("move: %s", r.raw)
	}
	if got := names(must(t, n, steward("GET", "/domains/A/subdomains", nil))); len(got) != 0 {
		t.Fatalf("A keeps %v", got)
	}
	wantList(t, "B's subdomains", names(must(t, n, steward("GET", "/domains/B/subdomains", nil))), []string{"S"})
	must(t, n, steward("PUT", "/domains/S/parent", `{"parent":"B"}`)) // the same parent: a no-op
	// C6: PUBLISHED only under PUBLISHED.
	expectErr(t, n, steward("PATCH", "/domains/S", `{"status":"published"}`), 400, 1001, "IllegalArgumentException", "C6")
	must(t, n, steward("PATCH", "/domains/B", `{"status":"published"}`))
	must(t, n, steward("PATCH", "/domains/S", `{"status":"published"}`))
	expectErr(t, n, steward("PATCH", "/domains/B", `{"status":"draft"}`), 400, 1001, "IllegalArgumentException", "C6")
	expectErr(t, n, steward("PUT", "/domains/S/parent", `{"parent":"A"}`), 400, 1001, "IllegalArgumentException", "C6")

	// Other rejections and their types.
	expectErr(t, n, steward("POST", "/domains", `{"name":"A","backingTag":{"name":"a2","create":true}}`), 409, 1004, "DomainAlreadyExistsException")
	expectErr(t, n, steward("POST", "/domains", `{"name":"C","backingTag":{"name":"a","create":true}}`), 409, 1004, "TagAlreadyExistsException")
	expectErr(t, n, steward("POST", "/domains", `{"name":"C","backingTag":{"name":"nope"}}`), 404, 1003, "NoSuchTagException")
	expectErr(t, n, steward("POST", "/domains", `{"name":"C","backingTag":{"name":"a"}}`), 409, 1004, "BackingTagAlreadyBoundException")
	expectErr(t, n, steward("DELETE", "/domains/B", nil), 409, 1005, "NonEmptyDomainException")
	expectErr(t, n, steward("PUT", "/domains/A/backingTag", `{"backingTag":{"name":"b"}}`), 409, 1004, "BackingTagAlreadyBoundException")
	expectErr(t, n, steward("PUT", "/domains/A/backingTag", `{"backingTag":{"name":"nope"}}`), 404, 1003, "NoSuchTagException")
	expect(t, n, as(tokDave, "POST", "/domains", `{"name":"D","backingTag":{"name":"d","create":true}}`), 403, 1008)

	// Bad bodies: 400 / 1001, nothing changes.
	before := must(t, n, steward("GET", "/domains?details=true", nil))
	for _, bad := range []call{
		steward("POST", "/domains", `{"name":"C","backingTag":{"name":"c","create":true},"bogus":1}`),
		steward("POST", "/domains", `{"name":"C","backingTag":{"name":"c","create":true,"color":"red"}}`),
		steward("POST", "/domains", `{"name":7,"backingTag":{"name":"c","create":true}}`),
		steward("POST", "/domains", `{"name":"C","backingTag":{"name":"c","create":"yes"}}`),
		steward("POST", "/domains", `{"name":"C","backingTag":"c"}`),
		steward("POST", "/domains", `{"name":"C"}`),
		steward("POST", "/domains", `{"name":"C","backingTag":null}`),
		steward("POST", "/domains", `{"name":"C","backingTag":{"name":"c","value":"v","create":true}}`),
		steward("POST", "/domains", `{"name":"","backingTag":{"name":"c","create":true}}`),
		steward("POST", "/domains", `{"name":"C","properties":{"k":1},"backingTag":{"name":"c","create":true}}`),
		steward("POST", "/domains", ``),
		steward("POST", "/domains", `{"name":"C","backingTag":{"name":"c","create":true}} {}`),
		steward("PUT", "/domains/A", `{"updates":[]}`),
		steward("PUT", "/domains/A", `{"updates":[{"@type":"explode"}]}`),
		steward("PUT", "/domains/A", `{"updates":[{"@type":"rename","newName":"A","extra":1}]}`),
		steward("PUT", "/domains/A", `{"updates":{"@type":"rename"}}`),
		steward("PUT", "/domains/A", `{"updates":[{"@type":"setProperty","value":"v"}]}`),
		steward("PATCH", "/domains/A", `{}`),
		steward("PATCH", "/domains/A", `{"status":"live"}`),
		steward("PATCH", "/domains/A", `{"status":true}`),
		steward("PUT", "/domains/A/parent", `{}`),
		steward("PUT", "/domains/A/parent", `{"parent":["B"]}`),
		steward("PUT", "/domains/A/backingTag", `{}`),
		steward("PUT", "/domains/A/backingTag", `{"backingTag":{"name":"b","create":true}}`),
		steward("PUT", "/domains/A/backingTag", `{"tag":"b"}`),
	} {
		expect(t, n, bad, 400, 1001)
	}
	after := must(t, n, steward("GET", "/domains?details=true", nil))
	if string(before.raw) != string(after.raw) || before.gen() != after.gen() {
		t.Fatalf("bad bodies changed state:\n%s\n%s", before.raw, after.raw)
	}

	// Alter, detach, backing tag replace and removal, delete.
	r = must(t, n, steward("PUT", "/domains/A", `{"updates":[{"@type":"rename","newName":"A/2"},{"@type":"updateComment","newComment":"c"},
		{"@type":"setProperty","property":"k","value":"v"},{"@type":"setProperty","property":"x","value":"y"},{"@type":"removeProperty","property":"x"}]}`))
	if d := domainOf(r); d["name"] != "A/2" || d["comment"] != "c" || len(d["properties"].(map[string]any)) != 1 {
		t.Fatalf("alter: %s", r.raw)
	}
	must(t, n, steward("GET", "/domains/A%2F2", nil))
	expect(t, n, steward("GET", "/domains/A", nil), 404, 1003)
	r = must(t, n, steward("DELETE", "/domains/S/parent", nil))
	if _, ok := domainOf(r)["parent"]; ok {
		t.Fatalf("detach: %s", r.raw)
	}
	must(t, n, steward("DELETE", "/domains/S/parent", nil)) // top-level: a no-op
	r = must(t, n, steward("PUT", "/domains/A%2F2/backingTag", `{"backingTag":null}`))
	if _, ok := domainOf(r)["backingTag"]; ok {
		t.Fatalf("remove backing tag: %s", r.raw)
	}
	r = must(t, n, steward("PUT", "/domains/A%2F2/backingTag", `{"backingTag":{"name":"a"}}`))
	if domainOf(r)["backingTag"].(map[string]any)["name"] != "a" {
		t.Fatalf("set backing tag: %s", r.raw)
	}
	if r := must(t, n, steward("DELETE", "/domains/B", nil)); r.body["dropped"] != true {
		t.Fatalf("drop: %s", r.raw)
	}
	if r := must(t, n, steward("DELETE", "/domains/B", nil)); r.body["dropped"] != false {
		t.Fatalf("second drop: %s", r.raw)
	}
	must(t, n, call{method: "GET", path: ml + "/tags/b", token: tokSteward}) // tags stay
}

// TestDomainDraftAndOwners: a DRAFT domain is a 404 to anyone but its
// stewards, on reads and writes; the parent's owner sets the child's owner
// and grants on it through the generic endpoints.
func TestDomainDraftAndOwners(t *testing.T) {
	n := domainNode(t)
	steward := func(method, path string, body any) call { return as(tokSteward, method, path, body) }
	must(t, n, steward("POST", "/domains", `{"name":"P","backingTag":{"name":"p","create":true}}`))
	must(t, n, steward("POST", "/domains", `{"name":"C","backingTag":{"name":"c","create":true},"parent":"P"}`))
	dave := func(method, path string, body any) call { return as(tokDave, method, path, body) }
	for _, c := range []call{
		dave("GET", "/domains/P", nil),
		dave("GET", "/domains/P/subdomains", nil),
		dave("GET", "/domains/P/objects", nil),
		dave("PATCH", "/domains/P", `{"status":"published"}`),
		dave("PUT", "/domains/P", `{"updates":[{"@type":"updateComment","newComment":"x"}]}`),
		dave("PUT", "/domains/C/parent", `{"parent":"P"}`),
		dave("DELETE", "/domains/C/parent", nil),
		dave("PUT", "/domains/P/backingTag", `{"backingTag":null}`),
		dave("GET", "/owners/domain/P", nil),
		dave("PUT", "/owners/domain/C", `{"name":"dave@acme","type":"USER"}`),
	} {
		expectErr(t, n, c, 404, 1003, "")
	}
	if r := must(t, n, dave("DELETE", "/domains/C", nil)); r.body["dropped"] != false {
		t.Fatalf("dave drops a DRAFT: %s", r.raw)
	}
	// Published, dave still has no USE_DOMAIN.
	must(t, n, steward("PATCH", "/domains/P", `{"status":"published"}`))
	expect(t, n, dave("GET", "/domains/P", nil), 404, 1003)

	// alice (metalake owner) gives P to tom; tom, the parent's owner, sets
	// C's owner and grants on C.
	must(t, n, as(tokAlice, "PUT", "/owners/domain/P", `{"name":"tom@acme","type":"USER"}`))
	if o := must(t, n, as(tokTom, "GET", "/owners/domain/C", nil)).body["owner"].(map[string]any); o["name"] != "steward@acme" || o["type"] != "user" {
		t.Fatalf("owner of C: %v", o)
	}
	if r := must(t, n, as(tokTom, "PUT", "/owners/domain/C", `{"name":"bea@acme","type":"USER"}`)); r.body["set"] != true {
		t.Fatalf("set owner: %s", r.raw)
	}
	if o := must(t, n, as(tokBea, "GET", "/owners/domain/C", nil)).body["owner"].(map[string]any); o["name"] != "bea@acme" {
		t.Fatalf("owner of C: %v", o)
	}
	must(t, n, as(tokAlice, "POST", "/roles", map[string]any{"name": "reader"}))
	r := must(t, n, as(tokTom, "PUT", "/permissions/roles/reader/domain/C/grant", `{"privileges":[{"name":"USE_DOMAIN","condition":"ALLOW"}]}`))
	so := r.body["role"].(map[string]any)["securableObjects"].([]any)
	if len(so) != 1 || so[0].(map[string]any)["type"] != "domain" || so[0].(map[string]any)["fullName"] != "C" {
		t.Fatalf("grant on C: %s", r.raw)
	}
	must(t, n, as(tokAlice, "PUT", "/permissions/users/dave@acme/grant", `{"roleNames":["reader"]}`))
	// C is DRAFT: USE_DOMAIN does not show it; published, it does.
	expect(t, n, dave("GET", "/domains/C", nil), 404, 1003)
	must(t, n, as(tokTom, "PATCH", "/domains/C", `{"status":"published"}`))
	must(t, n, dave("GET", "/domains/C", nil))
	expect(t, n, as(tokTom, "PUT", "/permissions/roles/reader/domain/C/grant", `{"privileges":[{"name":"SELECT_TABLE","condition":"ALLOW"}]}`), 400, 1001)
	// A DENY on the parent beats the ALLOW on the child.
	must(t, n, as(tokAlice, "PUT", "/permissions/roles/reader/domain/P/grant", `{"privileges":[{"name":"USE_DOMAIN","condition":"DENY"}]}`))
	expect(t, n, dave("GET", "/domains/C", nil), 404, 1003)
}

// TestDomainViaFollower: domain writes sent to a follower are forwarded to
// the leader and answered with the leader's domain or typed error; reads on
// the follower see them with minGeneration.
func TestDomainViaFollower(t *testing.T) {
	nodes, leader := startCluster(t, principals(t), 2)
	follower := nodes[0]
	if leader == follower {
		follower = nodes[1]
	}
	must(t, follower, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
	must(t, follower, as(tokAlice, "POST", "/domains", `{"name":"P","backingTag":{"name":"p","create":true}}`))
	r := must(t, follower, as(tokAlice, "POST", "/domains", `{"name":"C","backingTag":{"name":"c","create":true},"parent":"P"}`))
	if d := domainOf(r); d["parent"] != "P" || d["status"] != "draft" {
		t.Fatalf("create via follower: %s", r.raw)
	}
	expectErr(t, follower, as(tokAlice, "PATCH", "/domains/C", `{"status":"published"}`), 400, 1001, "IllegalArgumentException", "C6")
	expectErr(t, follower, as(tokAlice, "DELETE", "/domains/P", nil), 409, 1005, "NonEmptyDomainException")
	r = must(t, follower, as(tokAlice, "PATCH", "/domains/P", `{"status":"published"}`))
	gen := r.gen()
	r = must(t, follower, as(tokAlice, "GET", "/domains/P/subdomains?details=true&minGeneration="+strconv.FormatUint(gen, 10), nil))
	if ds := r.body["domains"].([]any); len(ds) != 1 || ds[0].(map[string]any)["name"] != "C" {
		t.Fatalf("subdomains on the follower: %s", r.raw)
	}
	if d := domainOf(must(t, follower, as(tokAlice, "GET", "/domains/P?minGeneration="+strconv.FormatUint(gen, 10), nil))); d["status"] != "published" {
		t.Fatalf("P on the follower: %v", d)
	}
}
