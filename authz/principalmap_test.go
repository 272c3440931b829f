package authz_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"lakegate/authz"
)

// Tokens and hashes used by the map tests. The error-text checks look for
// every one of them in every error.
var (
	tokAlice  = "lg_" + strings.Repeat("A", 43)
	tokAlice2 = "lg_" + strings.Repeat("B", 43)
	tokGW     = "lg_" + strings.Repeat("C", 43)
	hAlice    = authz.HashToken(tokAlice).String()
	hAlice2   = authz.HashToken(tokAlice2).String()
	hGW       = authz.HashToken(tokGW).String()
	secrets   = []string{tokAlice, tokAlice2, tokGW, hAlice, hAlice2, hGW, strings.ToUpper(hAlice), strings.ToUpper(hGW)}
)

const validMapTmpl = `# operators write this by hand
principals:
  - id: alice@acme            # PrincipalID
    tenant: acme              # TenantID
    role: user
    namespaces: [Sales, hr]
    tokens:
      - sha256: %s
      - sha256: %s
  - id: gateway-1
    tenant: platform
    role: query_service
    delegate_tenants: [acme]
    tokens: [{sha256: %s}]
`

var validMap = fmt.Sprintf(validMapTmpl, hAlice, strings.ToUpper(hAlice2), hGW)

// assertNoSecrets fails if msg contains a token or a token hash.
func assertNoSecrets(t *testing.T, msg string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(strings.ToLower(msg), strings.ToLower(s)) {
			t.Errorf("error %q contains a secret", msg)
		}
	}
	if regexp.MustCompile(`[0-9a-fA-F]{64}`).MatchString(msg) {
		t.Errorf("error %q contains a 64-hex string", msg)
	}
}

func TestParsePrincipalMapValid(t *testing.T) {
	m, err := authz.ParsePrincipalMap([]byte(validMap))
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 2 {
		t.Fatalf("Len() = %d", m.Len())
	}
	ps := m.Principals()
	if ps[0].ID().String() != "alice@acme" || ps[1].ID().String() != "gateway-1" {
		t.Fatalf("not sorted by id: %v, %v", ps[0].ID(), ps[1].ID())
	}
	if got := fmt.Sprint(ps[0].Namespaces()); got != "[hr sales]" {
		t.Errorf("namespaces = %s", got)
	}
	if ps[1].Role() != authz.RoleQueryService || fmt.Sprint(ps[1].DelegateTenants()) != "[acme]" {
		t.Errorf("gateway-1 = %v %v", ps[1].Role(), ps[1].DelegateTenants())
	}
	specs := authz.MapSpecs(m)
	if got, want := specs[0].TokenHashes, []string{hAlice, hAlice2}; !reflect.DeepEqual(got, want) {
		t.Errorf("hashes = %v, want %v (upper case normalised)", got, want)
	}
	for _, v := range []string{fmt.Sprint(m), fmt.Sprintf("%+v", m), fmt.Sprintf("%#v", m), fmt.Sprintf("%#v", authz.NewAuthenticator(m))} {
		assertNoSecrets(t, v)
	}
}

func TestParsePrincipalMapInvalid(t *testing.T) {
	p := func(body string) string { return "principals:\n" + body }
	user := func(id, hash string) string {
		return fmt.Sprintf("  - id: %s\n    tenant: acme\n    role: user\n    namespaces: [sales]\n    tokens: [{sha256: %s}]\n", id, hash)
	}
	tests := []struct {
		name string
		data string
		want string // substring of the error
	}{
		{"empty", "", "empty"},
		{"comment only", "# nothing\n", "empty"},
		{"null document", "~\n", "empty"},
		{"no principals", "principals: []\n", "empty"},
		{"unknown top-level field", "principals: []\nextra: " + hAlice + "\n", "YAML"},
		{"unknown principal field", p(user("a", hAlice) + "    password: " + tokAlice + "\n"), "not found"},
		{"unknown token field", p("  - {id: a, tenant: acme, role: operator, tokens: [{sha256: " + hAlice + ", token: " + tokAlice + "}]}\n"), "not found"},
		{"hash as field name", p(user("a", hAlice) + "    " + hGW + ": x\n"), "not found"},
		{"token as field name", p(user("a", hAlice) + "    " + tokGW + ": x\n"), "not found"},
		{"duplicate hash same principal", p("  - {id: a, tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}, {sha256: " + hAlice + "}]}\n"), "duplicate sha256"},
		{"duplicate hash differing case", p("  - {id: a, tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}, {sha256: " + strings.ToUpper(hAlice) + "}]}\n"), "duplicate sha256"},
		{"duplicate hash across principals", p(user("a", hAlice) + user("b", hAlice)), "duplicate sha256 (also principals[0].tokens[0])"},
		{"duplicate id", p(user("a", hAlice) + user("a", hGW)), "duplicate id"},
		{"user without namespaces", p("  - {id: a, tenant: acme, role: user, tokens: [{sha256: " + hAlice + "}]}\n"), "at least one namespace"},
		{"no tokens", p("  - {id: a, tenant: acme, role: operator}\n"), "at least one token"},
		{"empty tokens", p("  - {id: a, tenant: acme, role: operator, tokens: []}\n"), "at least one token"},
		{"hash too short", p(user("a", hAlice[:63])), "64 hex"},
		{"hash too long", p(user("a", hAlice+"0")), "64 hex"},
		{"hash not hex", p(user("a", "g"+hAlice[1:])), "non-hex"},
		{"token instead of hash", p(user("a", tokAlice)), "64 hex"},
		{"hash of empty token", p(user("a", authz.HashToken("").String())), "empty token"},
		{"hash as sequence", p("  - {id: a, tenant: acme, role: operator, tokens: [{sha256: [" + hAlice + "]}]}\n"), "YAML"},
		{"tokens as string", p("  - {id: a, tenant: acme, role: operator, tokens: " + hAlice + "}\n"), "YAML"},
		{"bad id", p(user("a/b", hAlice)), "principals[0]: id"},
		{"hash as id is not echoed", p("  - {id: " + hGW + ", tenant: acme, role: root, tokens: [{sha256: " + hAlice + "}]}\n"), "principals[0]: role"},
		{"token as id is not echoed", p("  - {id: " + tokGW + ", tenant: acme, role: root, tokens: [{sha256: " + hAlice + "}]}\n"), "principals[0]: role"},
		{"bad tenant", p("  - {id: a, tenant: -acme, role: operator, tokens: [{sha256: " + hAlice + "}]}\n"), "(a): tenant"},
		{"bad role", p("  - {id: a, tenant: acme, role: root, tokens: [{sha256: " + hAlice + "}]}\n"), "(a): role"},
		// The retired name: the map is refused, saying what to write.
		{"retired admin role", p("  - {id: a, tenant: acme, role: admin, tokens: [{sha256: " + hAlice + "}]}\n"), "write tenant_admin for a principal that administers its own tenant, or operator"},
		{"dot id", p("  - {id: '.', tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}]}\n"), "principals[0]: id"},
		{"dot-dot id", p("  - {id: '..', tenant: acme, role: operator, tokens: [{sha256: " + hAlice + "}]}\n"), "principals[0]: id"},
		{"bad namespace", p("  - {id: a, tenant: acme, role: user, namespaces: [..], tokens: [{sha256: " + hAlice + "}]}\n"), "namespaces[0]"},
		{"delegates on user", p("  - {id: a, tenant: acme, role: user, namespaces: [s], delegate_tenants: [b], tokens: [{sha256: " + hAlice + "}]}\n"), "delegate tenants"},
		{"multiple documents", validMap + "---\n" + validMap, "exactly one YAML document"},
		{"second empty document", validMap + "---\n", "exactly one YAML document"},
		{"duplicate key", "principals: []\nprincipals: []\n", "already defined"},
		{"syntax error", "principals:\n  - id: a\n   tenant: " + hAlice + "\n", "YAML"},
		{"unknown anchor", "principals: *" + hAlice + "\n", "YAML"},
		{"scalar document", hAlice + "\n", "YAML"},
		{"oversized", "principals: []\n#" + strings.Repeat("x", 1<<20), "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := authz.ParsePrincipalMap([]byte(tt.data))
			if err == nil {
				t.Fatalf("accepted: %v", m)
			}
			if !errors.Is(err, authz.ErrInvalidMap) {
				t.Errorf("error %v does not wrap ErrInvalidMap", err)
			}
			var me *authz.MapError
			if !errors.As(err, &me) {
				t.Errorf("error %T is not a *MapError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			t.Log(err)
			assertNoSecrets(t, err.Error())
		})
	}
}

func TestEncodePrincipalMapRoundTrip(t *testing.T) {
	specs := []authz.PrincipalSpec{
		{ID: "zed", Tenant: "acme", Role: "operator", TokenHashes: []string{strings.ToUpper(hGW)}},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales", "HR"}, TokenHashes: []string{hAlice, hAlice2}},
		{ID: "123", Tenant: "007", Role: "query_service", DelegateTenants: []string{"acme", "true"}, TokenHashes: []string{strings.Repeat("1", 64)}},
		{ID: "peer:1", Tenant: "platform", Role: "metadata_peer", TokenHashes: []string{strings.Repeat("e", 64)}},
	}
	data, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "delegate_tenants: []") || strings.Contains(string(data), "namespaces: []") {
		t.Errorf("empty lists not omitted:\n%s", data)
	}
	m, err := authz.ParsePrincipalMap(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	got := authz.MapSpecs(m)
	want := []authz.PrincipalSpec{
		{ID: "123", Tenant: "007", Role: "query_service", DelegateTenants: []string{"acme", "true"}, TokenHashes: []string{strings.Repeat("1", 64)}},
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"hr", "sales"}, TokenHashes: []string{hAlice, hAlice2}},
		{ID: "peer:1", Tenant: "platform", Role: "metadata_peer", TokenHashes: []string{strings.Repeat("e", 64)}},
		{ID: "zed", Tenant: "acme", Role: "operator", TokenHashes: []string{hGW}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v\n%s", got, want, data)
	}

	// Invalid specs are refused with the parser's error.
	_, err = authz.EncodePrincipalMap([]authz.PrincipalSpec{{ID: "a", Tenant: "acme", Role: "user", TokenHashes: []string{hAlice}}})
	if !errors.Is(err, authz.ErrInvalidMap) {
		t.Errorf("user without namespaces: err = %v", err)
	}
	_, err = authz.EncodePrincipalMap(nil)
	if !errors.Is(err, authz.ErrInvalidMap) {
		t.Errorf("empty: err = %v", err)
	}
}

func TestWritePrincipalMap(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "principals.yaml")
	specs := []authz.PrincipalSpec{{ID: "admin", Tenant: "platform", Role: "operator", TokenHashes: []string{hAlice}}}
	if err := authz.WritePrincipalMap(path, specs); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := authz.ParsePrincipalMap(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(authz.MapSpecs(m), specs) {
		t.Errorf("loaded %+v", authz.MapSpecs(m))
	}
	if err := authz.WritePrincipalMap(path, specs); !errors.Is(err, os.ErrExist) {
		t.Errorf("overwrite: err = %v, want ErrExist", err)
	}
	// Invalid specs create no file.
	bad := filepath.Join(dir, "bad.yaml")
	if err := authz.WritePrincipalMap(bad, nil); err == nil {
		t.Error("empty specs accepted")
	}
	if _, err := os.Lstat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad map file exists: %v", err)
	}
}

func TestPrincipalMapWith(t *testing.T) {
	m, err := authz.ParsePrincipalMap([]byte(validMap))
	if err != nil {
		t.Fatal(err)
	}
	newPrincipal := func(id string) *authz.Principal {
		pid, err := authz.ParsePrincipalID(id)
		if err != nil {
			t.Fatal(err)
		}
		tid, _ := authz.ParseTenantID("platform")
		acme, _ := authz.ParseTenantID("acme")
		p, err := authz.NewPrincipal(pid, tid, authz.RoleQueryService, nil, []authz.TenantID{acme})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tokNew := "lg_" + strings.Repeat("D", 43)
	got, err := m.With(newPrincipal("b-gateway"), authz.HashToken(tokNew))
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != m.Len()+1 || m.Len() != 2 {
		t.Fatalf("len = %d (original %d)", got.Len(), m.Len())
	}
	var ids []string
	for _, p := range got.Principals() {
		ids = append(ids, p.ID().String())
	}
	if want := []string{"alice@acme", "b-gateway", "gateway-1"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids = %v, want %v (sorted)", ids, want)
	}
	a := authz.NewAuthenticator(got)
	if p, err := a.Authenticate(tokNew); err != nil || p.ID().String() != "b-gateway" {
		t.Fatalf("new token: %v %v", p, err)
	}
	if p, err := a.Authenticate(tokAlice); err != nil || p.ID().String() != "alice@acme" {
		t.Fatalf("old token: %v %v", p, err)
	}
	if _, err := authz.NewAuthenticator(m).Authenticate(tokNew); err == nil {
		t.Fatal("the original map accepts the new token")
	}
	for name, tc := range map[string]struct {
		id string
		hs []authz.TokenHash
	}{
		"duplicate id":   {"gateway-1", []authz.TokenHash{authz.HashToken(tokNew)}},
		"reused hash":    {"x", []authz.TokenHash{authz.HashToken(tokGW)}},
		"no hash":        {"x", nil},
		"empty token":    {"x", []authz.TokenHash{authz.HashToken("")}},
		"duplicate hash": {"x", []authz.TokenHash{authz.HashToken(tokNew), authz.HashToken(tokNew)}},
	} {
		if _, err := m.With(newPrincipal(tc.id), tc.hs...); !errors.Is(err, authz.ErrInvalidMap) {
			t.Errorf("%s: err = %v, want ErrInvalidMap", name, err)
		}
	}
}
