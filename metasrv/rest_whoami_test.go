package metasrv_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestWhoAmI: every authenticated caller learns its own name, tenant, role,
// namespaces and default metalake, and nothing else; no credential is
// answered without authentication.
func TestWhoAmI(t *testing.T) {
	n := single(t)
	cases := []struct {
		token string
		want  map[string]any
	}{
		{tokAlice, map[string]any{"name": "alice@acme", "tenant": "acme", "role": "user", "namespaces": []any{"sales"}, "metalake": "acme"}},
		{tokEve, map[string]any{"name": "eve@other", "tenant": "other", "role": "user", "namespaces": []any{"x"}, "metalake": "other"}},
		{tokAdmin, map[string]any{"name": "root", "tenant": "platform", "role": "operator", "namespaces": []any{}, "metalake": ""}},
	}
	for _, c := range cases {
		r := must(t, n, call{method: "GET", path: "/api/whoami", token: c.token})
		var body struct {
			Principal map[string]any `json:"principal"`
		}
		if err := json.Unmarshal(r.raw, &body); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(body.Principal, c.want) {
			t.Errorf("whoami: %v, want %v", body.Principal, c.want)
		}
		if strings.Contains(string(r.raw), c.token) {
			t.Errorf("whoami answers the token: %s", r.raw)
		}
	}
	expect(t, n, call{method: "GET", path: "/api/whoami"}, http.StatusUnauthorized, 1011)
	expect(t, n, call{method: "GET", path: "/api/whoami", token: "not-a-token"}, http.StatusUnauthorized, 1011)
}
