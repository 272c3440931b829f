package metasrv_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"lakegate/metasrv"
)

// FuzzResolveBody sends arbitrary resolve bodies from a gateway delegated
// for acme. Every answer is 200 with one result per reference, or a client
// error; nothing is written; and for bob every table other than the three he
// may read — forbidden or missing alike — answers with the same
// "unavailable" bytes, whatever else the request holds.
func FuzzResolveBody(f *testing.F) {
	for _, seed := range []string{
		`{"subject":"bob@acme","catalog":"lake","refs":[{"schema":"sales","table":"orders","privilege":"SELECT_TABLE"}]}`,
		`{"subject":"bob@acme","catalog":"lake","refs":[{"schema":"sales","table":"secret","privilege":"SELECT_TABLE"},{"schema":"sales","table":"nosuch","privilege":"MODIFY_TABLE"}]}`,
		`{"subject":"bob@acme","catalog":"lake","refs":[{"schema":"sales","table":"pii_t","privilege":"select_table","version":1},{"schema":"sales","table":"conf","privilege":"SELECT_TABLE"}]}`,
		`{"subject":"alice@acme","catalog":"lake","minGeneration":1,"refs":[]}`,
		`{"subject":"bob@acme","catalog":"lake","minGeneration":1000000,"refs":[]}`,
		`{"subject":"bob@acme","catalog":"LAKE","refs":[{"schema":"SALES","table":"Secret","privilege":"SELECT_TABLE"}]}`,
		`{"subject":"bob@acme","catalog":"lake","refs":[{"schema":"sales","table":"orders","privilege":"CREATE_TABLE"}]}`,
		`{"subject":"","catalog":"lake","refs":null}`,
		`{"subject":"bob@acme","catalog":"lake","refs":[{}],"extra":1}`,
		`[]`, ``,
	} {
		f.Add([]byte(seed))
	}
	configHook = func(c *metasrv.Config) { c.ReadWaitTimeout = time.Millisecond } // minGeneration waits end at once
	n := startDelegationNode(f)
	configHook = nil
	governedLake(f, n)
	unavailable := results(f, rawResolve(f, n, tokGW, refsBody("bob@acme", "nosuch"), nil))[0]
	readable := map[string]bool{"orders": true, "pii_t": true, "conf": true}
	applied := n.Node().AppliedIndex()
	l, _ := n.FSM().Lake("acme")
	gen := l.Snapshot.Generation()
	f.Fuzz(func(t *testing.T, body []byte) {
		r := rawResolve(t, n, tokGW, body, nil)
		switch r.status {
		case http.StatusOK:
			var req metasrv.ResolveRequest
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatalf("answered 200 to a body that does not decode: %q", body)
			}
			res := results(t, r)
			if len(res) != len(req.Refs) {
				t.Fatalf("%d refs, %d results: %s", len(req.Refs), len(res), r.raw)
			}
			for i, ref := range req.Refs {
				if req.Subject == "bob@acme" && !readable[ref.Table] && !bytes.Equal(res[i], unavailable) {
					t.Fatalf("bob's ref %+v answered %s, not like a missing table (%s)", ref, res[i], unavailable)
				}
			}
		case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound:
		case http.StatusServiceUnavailable:
			// Only a minGeneration the metalake has not reached waits, and
			// then answers 503.
			var req metasrv.ResolveRequest
			if err := json.Unmarshal(body, &req); err != nil || req.MinGeneration <= gen {
				t.Fatalf("body %q: HTTP 503 %s", body, r.raw)
			}
		default:
			t.Fatalf("body %q: HTTP %d %s", body, r.status, r.raw)
		}
		if got := n.Node().AppliedIndex(); got != applied {
			t.Fatalf("a resolve moved the applied index from %d to %d", applied, got)
		}
	})
}
