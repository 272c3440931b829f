package integration_test

import (
	"context"
	"net/http"
	"testing"
)

// TestJWTGroupOwnedMetalake: end to end through the gateway, a JWT user of
// a metalake whose owner is a group is synced like any other — created on
// first sight, joined to its token's groups, its group's role letting it
// read a table — because the sync is the user's own, on the strength of
// the verified token, not the owner's. Before, metasrv refused the sync
// (the metalake's owner is not a user) and the user could read nothing.
func TestJWTGroupOwnedMetalake(t *testing.T) {
	s := startOIDCServe(t)
	ctx := context.Background()
	admin := s.token(t, "admin@demo") // the demo metalake's owner, until it hands it to a group
	ml := "/api/metalakes/demo"
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", ml + "/groups", map[string]any{"name": "analysts"}},
		{"POST", ml + "/groups", map[string]any{"name": "stewards"}},
		{"POST", ml + "/roles", map[string]any{"name": "sales_reader", "securableObjects": []map[string]any{
			{"fullName": "lake", "type": "CATALOG", "privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}},
			{"fullName": "lake.sales", "type": "SCHEMA", "privileges": []map[string]string{
				{"name": "USE_SCHEMA", "condition": "ALLOW"}, {"name": "SELECT_TABLE", "condition": "ALLOW"}}}}}},
		{"PUT", ml + "/permissions/groups/analysts/grant", map[string]any{"roleNames": []string{"sales_reader"}}},
		{"PUT", ml + "/owners/metalake/demo", map[string]any{"name": "stewards", "type": "GROUP"}},
	} {
		if code, body := s.rest(t, w.method, w.path, admin, w.body); code != http.StatusOK {
			t.Fatalf("%s %s: HTTP %d %s", w.method, w.path, code, body)
		}
	}
	c := s.claims("gus@demo")
	c["groups"] = []string{"analysts"}
	conn, err := dial(t, s.uri(), bearer(s.iss.Token(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := conn.query(ctx, "SELECT count(*) FROM sales.orders")
	if err != nil {
		t.Fatalf("gus reads sales.orders: %v", err)
	}
	if rows[0][0] != "5000" {
		t.Errorf("gus counts %s orders, want 5000", rows[0][0])
	}
}
