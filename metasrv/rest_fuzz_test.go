package metasrv_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// fuzzRoutes are the write routes of the REST API under ml; "{}" takes the
// fuzzed path segment.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/catalogs"}, {"PUT", "/catalogs/{}"}, {"DELETE", "/catalogs/{}"},
	{"POST", "/catalogs/lake/schemas"}, {"PUT", "/catalogs/lake/schemas/{}"}, {"DELETE", "/catalogs/lake/schemas/{}"},
	{"POST", "/catalogs/lake/schemas/s/tables"}, {"PUT", "/catalogs/lake/schemas/s/tables/{}"},
	{"POST", "/catalogs/lake/schemas/s/tables/{}"}, {"DELETE", "/catalogs/lake/schemas/s/tables/{}"},
	{"POST", "/tags"}, {"PUT", "/tags/{}"}, {"DELETE", "/tags/{}"},
	{"POST", "/objects/{}/lake/tags"}, {"POST", "/objects/table/{}/tags"},
	{"POST", "/roles"}, {"DELETE", "/roles/{}"},
	{"PUT", "/permissions/roles/{}/catalog/lake/grant"}, {"PUT", "/permissions/roles/r/{}/lake.s/revoke"},
	{"PUT", "/permissions/users/{}/grant"}, {"PUT", "/permissions/groups/{}/revoke"},
	{"POST", "/users"}, {"DELETE", "/users/{}"}, {"POST", "/groups"}, {"DELETE", "/groups/{}"},
	{"PUT", "/owners/{}/lake"},
	{"POST", "/policies"}, {"PUT", "/policies/{}"}, {"PATCH", "/policies/{}"}, {"DELETE", "/policies/{}"},
	{"PUT", "/tags/pii/policies/{}"}, {"DELETE", "/tags/{}/policies/p"},
	{"POST", "/domains"}, {"PUT", "/domains/{}"}, {"PATCH", "/domains/{}"}, {"DELETE", "/domains/{}"},
	{"PUT", "/domains/{}/parent"}, {"DELETE", "/domains/{}/parent"}, {"PUT", "/domains/{}/backingTag"},
	{"PUT", ""},
}

// FuzzRESTWrite sends hostile writes to a node as alice, the metalake's
// owner: any write route, any name in the path, any body, either content
// type. Every answer must be a success or one of Gravitino's error codes,
// never an internal error, and a refused write must leave the metalake
// exactly as it was.
func FuzzRESTWrite(f *testing.F) {
	for _, seed := range []struct {
		route uint8
		seg   string
		body  string
		v2    bool
	}{
		{0, "", `{"name":"c2","type":"managed"}`, false},
		{1, "lake", `{"updates":[{"@type":"updateComment","newComment":"x"}]}`, false},
		{4, "s", `{"updates":[{"@type":"setProperty","property":"k","value":"v"}]}`, false},
		{6, "", `{"name":"t2","columns":[{"name":"id","type":"bigint"}]}`, false},
		{10, "", `{"name":"t","allowedValues":["a","b"]}`, false},
		{13, "catalog", `{"tagsToAdd":["pii"]}`, false},
		{13, "catalog", `{"tagsToAdd":[{"name":"pii","value":"x"}]}`, true},
		{15, "", `{"name":"r2","securableObjects":[{"fullName":"lake","type":"catalog","privileges":[{"name":"use_catalog","condition":"allow"}]}]}`, false},
		{17, "r", `{"privileges":[{"name":"use_catalog","condition":"deny"}]}`, false},
		{19, "bob@acme", `{"roleNames":["r"]}`, false},
		{25, "catalog", `{"name":"bob@acme","type":"user"}`, false},
		{26, "", `{"name":"p","policyType":"system_access_control","content":{"privileges":["SELECT_TABLE"],"applicable_roles":["r"]}}`, false},
		{26, "", `{"name":"rows","policyType":"row_filter","content":{"expression":"id > 0"}}`, false},
		{28, "p", `{"enable":false}`, false},
		{30, "p", ``, false},
		{32, "", `{"name":"Finance","backingTag":{"name":"finance","create":true}}`, false},
		{39, "", `{"updates":[{"@type":"setProperty","property":"a","value":"b"}]}`, false},
		{0, "x", `{"name":"a b"}`, false},
		{11, "pii", `{"updates":[{"@type":"rename","newName":"pii"}]} trailing`, false},
		{5, "s%2Fx", `null`, false},
	} {
		f.Add(seed.route, seed.seg, []byte(seed.body), seed.v2)
	}
	n := fuzzLake(f)
	f.Fuzz(func(t *testing.T, route uint8, seg string, body []byte, v2 bool) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		c := as(tokAlice, rt.method, strings.ReplaceAll(rt.path, "{}", url.PathEscape(seg)), body)
		if v2 {
			c.header = map[string]string{"Content-Type": "application/vnd.gravitino.v2+json"}
		}
		before := lakeBytes(t, n)
		r := do(t, n, c)
		if r.status >= http.StatusInternalServerError {
			t.Fatalf("%s %s %q: HTTP %d: %s", c.method, c.path, body, r.status, r.raw)
		}
		if r.status >= http.StatusBadRequest && r.code() == 0 {
			t.Fatalf("%s %s %q: HTTP %d without an error code: %s", c.method, c.path, body, r.status, r.raw)
		}
		if r.status != http.StatusOK && !bytes.Equal(before, lakeBytes(t, n)) {
			t.Fatalf("%s %s %q: refused (HTTP %d) but changed the metalake", c.method, c.path, body, r.status)
		}
	})
}

// fuzzLake starts a node whose metalake acme holds, as alice made them,
// catalog lake, schema lake.s, table lake.s.t, tag pii, role r and user
// bob@acme: the objects the fuzzed requests name.
func fuzzLake(f *testing.F) *node {
	n := single(f)
	for _, c := range []struct {
		path string
		body any
	}{
		{"/catalogs", map[string]any{"name": "lake", "type": "managed"}},
		{"/catalogs/lake/schemas", map[string]any{"name": "s"}},
		{"/catalogs/lake/schemas/s/tables", map[string]any{"name": "t", "columns": []any{map[string]any{"name": "id", "type": "bigint"}}}},
		{"/tags", map[string]any{"name": "pii"}},
		{"/roles", map[string]any{"name": "r"}},
		{"/users", map[string]any{"name": "bob@acme"}},
	} {
		must(f, n, as(tokAlice, "POST", c.path, c.body))
	}
	return n
}

// requestTargetSafe percent-encodes the bytes a request line cannot carry
// (controls, space, '#', non-ASCII), so that any fuzzed query string
// reaches the API instead of being refused by net/http's request parser.
func requestTargetSafe(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if c := q[i]; c <= ' ' || c >= 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// lakeBytes is the persisted form of metalake acme on n.
func lakeBytes(t *testing.T, n *node) []byte {
	t.Helper()
	l, ok := n.FSM().Lake("acme")
	if !ok {
		t.Fatal("metalake acme is gone")
	}
	b, err := l.Snapshot.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzReads are read routes under a metalake ("%s"); "{}" takes the
// fuzzed path segment, and every one also gets the fuzzed query string.
var fuzzReads = []string{
	"", "/catalogs", "/catalogs/{}", "/catalogs/lake/schemas", "/catalogs/lake/schemas/{}",
	"/catalogs/lake/schemas/s/tables", "/catalogs/lake/schemas/s/tables/{}",
	"/tags", "/tags/{}", "/tags/{}/objects", "/tags/{}/policies",
	"/objects/{}/lake/tags", "/objects/table/{}/tags", "/objects/catalog/{}/policies", "/objects/{}/lake/domains",
	"/owners/{}/lake", "/roles", "/roles/{}", "/users", "/users/{}", "/groups", "/groups/{}",
	"/policies", "/policies/{}", "/policies/{}/tags",
	"/domains", "/domains/{}", "/domains/{}/objects", "/domains/{}/subdomains",
	"/events", "/{}",
}

// FuzzRESTRead sends hostile reads: any read route, any path segment, any
// query string. The owner never gets an internal error, and every error
// carries a Gravitino code. A user of another tenant gets, for each
// request, exactly the answer (status, code and message, the metalake's
// name aside) she gets for a metalake that does not exist: one tenant
// cannot tell another's objects, or the metalake itself, from nothing.
func FuzzRESTRead(f *testing.F) {
	for _, seed := range []struct {
		route      uint8
		seg, query string
	}{
		{1, "", ""}, {2, "lake", ""}, {2, "lake", "details=true"}, {5, "", "details=false"},
		{6, "t", ""}, {8, "pii", ""}, {9, "pii", "value=x"}, {11, "catalog", "details=true"},
		{15, "catalog", ""}, {17, "r", ""}, {29, "", "since=0&limit=5"}, {29, "", "since=-1"},
		{29, "", "limit=99999999999999999999"}, {0, "", "details=maybe"}, {30, "%00", ""},
	} {
		f.Add(seed.route, seed.seg, seed.query)
	}
	n := fuzzLake(f)
	must(f, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "other", "owner": "eve@other"}})
	const missing = "nosuchlake"
	f.Fuzz(func(t *testing.T, route uint8, seg, query string) {
		rest := strings.ReplaceAll(fuzzReads[int(route)%len(fuzzReads)], "{}", url.PathEscape(seg))
		if query != "" {
			rest += "?" + requestTargetSafe(query)
		}
		r := do(t, n, call{method: "GET", path: ml + rest, token: tokAlice})
		if r.status >= http.StatusInternalServerError || (r.status >= http.StatusBadRequest && r.code() == 0) {
			t.Fatalf("GET %s: HTTP %d: %s", ml+rest, r.status, r.raw)
		}
		theirs := do(t, n, call{method: "GET", path: ml + rest, token: tokEve})
		none := do(t, n, call{method: "GET", path: "/api/metalakes/" + missing + rest, token: tokEve})
		if theirs.status == http.StatusOK || theirs.status != none.status || theirs.code() != none.code() ||
			strings.ReplaceAll(theirs.message(), "acme", missing) != none.message() {
			t.Fatalf("GET %s as another tenant: HTTP %d %s; for a missing metalake: HTTP %d %s", rest, theirs.status, theirs.raw, none.status, none.raw)
		}
	})
}
