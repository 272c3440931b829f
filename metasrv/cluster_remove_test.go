package metasrv_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestClusterRemove(t *testing.T) {
	nodes, leader := startCluster(t, principals(t), 3)
	var follower, victim *node
	for _, n := range nodes {
		switch {
		case n == leader:
		case follower == nil:
			follower = n
		default:
			victim = n
		}
	}
	remove := func(n *node, token string, body any) resp {
		return do(t, n, call{method: "POST", path: "/cluster/remove", token: token, body: body})
	}
	for _, c := range []struct {
		name   string
		token  string
		body   any
		status int
	}{
		{"no token", "", map[string]string{"id": victim.id}, http.StatusUnauthorized},
		{"user", tokAlice, map[string]string{"id": victim.id}, http.StatusForbidden},
		{"unknown field", tokAdmin, `{"id":"n3","x":1}`, http.StatusBadRequest},
		{"no id", tokAdmin, `{}`, http.StatusBadRequest},
		{"unknown id", tokAdmin, map[string]string{"id": "nope"}, http.StatusNotFound},
	} {
		// On the leader and through a follower (forwarded) alike.
		for _, n := range []*node{leader, follower} {
			r := remove(n, c.token, c.body)
			if r.status != c.status || r.body["error"] == nil {
				t.Errorf("%s via %s: want HTTP %d with an error, got %d: %s", c.name, n.id, c.status, r.status, r.raw)
			}
		}
	}
	if r := do(t, leader, call{method: "GET", path: "/cluster/remove", token: tokAdmin}); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
		t.Errorf("GET: HTTP %d Allow %q", r.status, r.header.Get("Allow"))
	}
	if len(leader.Node().Status().Servers) != 3 {
		t.Fatalf("rejected removes changed the configuration: %+v", leader.Node().Status().Servers)
	}

	// A follower forwards the remove to the leader.
	r := remove(follower, tokAdmin, map[string]string{"id": victim.id})
	if r.status != http.StatusOK {
		t.Fatalf("remove %s via %s: HTTP %d: %s", victim.id, follower.id, r.status, r.raw)
	}
	var st struct {
		Servers []struct{ ID string }
	}
	if err := json.Unmarshal(r.raw, &st); err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Servers {
		if s.ID == victim.id {
			t.Fatalf("answer still lists %s: %s", victim.id, r.raw)
		}
	}
	if len(st.Servers) != 2 {
		t.Fatalf("answer: %s", r.raw)
	}
	for _, s := range leader.Node().Status().Servers {
		if s.ID == victim.id {
			t.Fatalf("leader still lists %s", victim.id)
		}
	}
	// Removing it again: it is no longer a member.
	if r := remove(leader, tokPeer, map[string]string{"id": victim.id}); r.status != http.StatusNotFound {
		t.Fatalf("second remove: HTTP %d: %s", r.status, r.raw)
	}
	// The remaining two still accept writes.
	must(t, follower, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "acme", "owner": "alice@acme"}})
}
