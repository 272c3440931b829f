package metasrv_test

import (
	"encoding/json"
	"strings"
	"testing"

	"lakegate/metasrv"
	"lakegate/metasrv/api"
)

// TestRejectedRequestEvents: a request refused before it reaches the log
// is an event that names the REST operation it was routed to (method and
// route template, as docs/rest.md writes it) and the class of the refusal,
// so that `admin events` can say what was refused and why. Before, such an
// event said only "Privileges" on "metalake acme": neither grant nor
// revoke, nor on what route. The template, not the path, is recorded, and
// neither the token nor the body is.
func TestRejectedRequestEvents(t *testing.T) {
	n := single(t)
	const secret = "lg_SECRETsecretSECRETsecretSECRETsecret00000"
	cases := []struct {
		name          string
		c             call
		status        int
		op, request   string
		reason        string
		detailContain string
	}{
		{name: "grant of an unknown privilege",
			c: as(tokAlice, "PUT", "/permissions/roles/analyst/table/lake.sales.orders/grant",
				`{"privileges":[{"name":"SELECT_EVERYTHING","condition":"ALLOW"}]}`),
			status: 400, op: "Privileges", reason: "bad_request", detailContain: "SELECT_EVERYTHING",
			request: "PUT /api/metalakes/{m}/permissions/roles/{role}/{type}/{fullName}/grant"},
		{name: "malformed body",
			c:      as(tokAlice, "POST", "/roles", `{"name":`),
			status: 400, op: "CreateRole", reason: "bad_request",
			request: "POST /api/metalakes/{m}/roles"},
		{name: "body with an unknown field holding a secret",
			c:      as(tokAlice, "PUT", "/owners/table/lake.sales.orders", `{"name":"bob@acme","type":"USER","password":"`+secret+`"}`),
			status: 400, op: "SetOwner", reason: "bad_request",
			request: "PUT /api/metalakes/{m}/owners/{type}/{fullName}"},
		{name: "forged caller header",
			c: call{method: "DELETE", path: "/api/metalakes/acme/roles/analyst", token: tokBob,
				header: map[string]string{api.CallerHeader: "alice@acme"}},
			status: 403, op: "DropRole", reason: "forbidden",
			request: "DELETE /api/metalakes/{m}/roles/{role}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r := do(t, n, c.c); r.status != c.status {
				t.Fatalf("HTTP %d, want %d: %s", r.status, c.status, r.raw)
			}
			r := must(t, n, as(tokAlice, "GET", "/events?limit=1000", nil))
			for _, s := range []string{secret, tokAlice, tokBob} {
				if strings.Contains(string(r.raw), s) {
					t.Fatalf("the events hold %q: %s", s, r.raw)
				}
			}
			var b struct{ Events []metasrv.Event }
			if err := json.Unmarshal(r.raw, &b); err != nil {
				t.Fatal(err)
			}
			for _, e := range b.Events { // newest first
				if e.Index != 0 || e.Outcome != "failure" || e.Operation != c.op {
					continue
				}
				if e.Request != c.request || e.Reason != c.reason || !strings.Contains(e.Detail, c.detailContain) {
					t.Fatalf("event %+v: request %q reason %q, want %q %q (detail with %q)", e, e.Request, e.Reason, c.request, c.reason, c.detailContain)
				}
				return
			}
			t.Fatalf("no rejected %s event in %s", c.op, r.raw)
		})
	}
	// An applied request's events name no REST operation and no reason:
	// the catalog's operation says what happened.
	must(t, n, as(tokAlice, "POST", "/roles", `{"name":"analyst"}`))
	r := must(t, n, as(tokAlice, "GET", "/events?limit=1", nil))
	var b struct{ Events []metasrv.Event }
	if err := json.Unmarshal(r.raw, &b); err != nil || len(b.Events) == 0 {
		t.Fatalf("events: %v %s", err, r.raw)
	}
	if e := b.Events[0]; e.Index == 0 || e.Request != "" || e.Reason != "" {
		t.Fatalf("applied event %+v has request %q reason %q", e, e.Request, e.Reason)
	}
}
