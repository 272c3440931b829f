package authz_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"lakegate/authz"
)

// The tests in this file each close mutants of authz that the rest of the
// suite let survive (docs/testing.md).

// TestAuthenticateTokenLengthBound checks the bound on presented tokens: a
// configured token of exactly the limit authenticates, one byte more never
// does (it is not even hashed).
func TestAuthenticateTokenLengthBound(t *testing.T) {
	const limit = 4096
	p := mustPrincipal(t, "alice@acme", "acme", authz.RoleUser, []string{"sales"}, nil)
	for _, c := range []struct {
		n  int
		ok bool
	}{{limit - 1, true}, {limit, true}, {limit + 1, false}} {
		tok := strings.Repeat("x", c.n)
		m, err := (&authz.PrincipalMap{}).With(p, authz.HashToken(tok))
		if err != nil {
			t.Fatal(err)
		}
		got, err := authz.NewAuthenticator(m).Authenticate(tok)
		if ok := err == nil && got == p; ok != c.ok {
			t.Errorf("a configured token of %d bytes: %v, %v; want ok=%v", c.n, got, err, c.ok)
		}
	}
}

// TestIDCharacterBounds checks each end of every character range of ids:
// the first and last letter and digit are accepted, the characters next to
// them are not.
func TestIDCharacterBounds(t *testing.T) {
	for _, s := range []string{"a", "z", "A", "Z", "0", "9", "aZ09", "a_b-c"} {
		if _, err := authz.ParseTenantID(s); err != nil {
			t.Errorf("ParseTenantID(%q): %v", s, err)
		}
		if _, err := authz.ParsePrincipalID(s + "@x.y:z"); err != nil {
			t.Errorf("ParsePrincipalID(%q): %v", s+"@x.y:z", err)
		}
	}
	for _, c := range []string{"`", "{", "@", "[", "/", ":", " ", "~", "\x7f"} {
		if _, err := authz.ParseTenantID("a" + c + "b"); err == nil {
			t.Errorf("ParseTenantID accepts %q", "a"+c+"b")
		}
	}
	for _, c := range []string{"`", "{", "[", "/", ";", " ", "?"} {
		if _, err := authz.ParsePrincipalID("a" + c + "b"); err == nil {
			t.Errorf("ParsePrincipalID accepts %q", "a"+c+"b")
		}
	}
}

// TestNewPrincipalRejects checks every refusal of NewPrincipal: a grant
// that has no effect for the role is refused, not ignored.
func TestNewPrincipalRejects(t *testing.T) {
	id, _ := authz.ParsePrincipalID("p")
	tenant, _ := authz.ParseTenantID("acme")
	ns, _ := authz.ParseNamespace("sales")
	other, _ := authz.ParseTenantID("other")
	cases := []struct {
		name     string
		id       authz.PrincipalID
		tenant   authz.TenantID
		role     authz.Role
		ns       []authz.Namespace
		delegate []authz.TenantID
		ok       bool
	}{
		{"user", id, tenant, authz.RoleUser, []authz.Namespace{ns}, nil, true},
		{"query service", id, tenant, authz.RoleQueryService, nil, []authz.TenantID{other}, true},
		{"tenant admin", id, tenant, authz.RoleTenantAdmin, nil, nil, true},
		{"zero id", authz.PrincipalID{}, tenant, authz.RoleUser, []authz.Namespace{ns}, nil, false},
		{"zero tenant", id, authz.TenantID{}, authz.RoleUser, []authz.Namespace{ns}, nil, false},
		{"zero role", id, tenant, 0, nil, nil, false},
		{"role past the last", id, tenant, authz.RoleOperator + 1, nil, nil, false},
		{"user without namespaces", id, tenant, authz.RoleUser, nil, nil, false},
		{"tenant admin with namespaces", id, tenant, authz.RoleTenantAdmin, []authz.Namespace{ns}, nil, false},
		{"user with delegate tenants", id, tenant, authz.RoleUser, []authz.Namespace{ns}, []authz.TenantID{other}, false},
		{"tenant admin with delegate tenants", id, tenant, authz.RoleTenantAdmin, nil, []authz.TenantID{other}, false},
		{"zero namespace", id, tenant, authz.RoleUser, []authz.Namespace{ns, {}}, nil, false},
		{"zero delegate tenant", id, tenant, authz.RoleQueryService, nil, []authz.TenantID{other, {}}, false},
	}
	for _, c := range cases {
		p, err := authz.NewPrincipal(c.id, c.tenant, c.role, c.ns, c.delegate)
		if ok := err == nil && p != nil; ok != c.ok {
			t.Errorf("%s: NewPrincipal = %v, %v; want ok=%v", c.name, p, err, c.ok)
		}
		if !c.ok && !errors.Is(err, authz.ErrInvalidPrincipal) {
			t.Errorf("%s: error %v does not wrap ErrInvalidPrincipal", c.name, err)
		}
	}
}

// TestMapErrorForm checks MapError's message parts and that it unwraps to
// its cause as well as ErrInvalidMap.
func TestMapErrorForm(t *testing.T) {
	cases := []struct {
		e    *authz.MapError
		want string
	}{
		{&authz.MapError{Index: -1, Rule: "r"}, "authz: invalid principal map: r"},
		{&authz.MapError{Line: 0, Index: -1, Rule: "r"}, "authz: invalid principal map: r"},
		{&authz.MapError{Line: 1, Index: -1, Rule: "r"}, "authz: invalid principal map: line 1: r"},
		{&authz.MapError{Index: 0, Rule: "r"}, "authz: invalid principal map: principals[0]: r"},
		{&authz.MapError{Index: 2, Principal: "bob", Rule: "r", Err: io.EOF}, "authz: invalid principal map: principals[2] (bob): r: EOF"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", *c.e, got, c.want)
		}
		if !errors.Is(c.e, authz.ErrInvalidMap) {
			t.Errorf("%+v does not wrap ErrInvalidMap", *c.e)
		}
		if c.e.Err != nil && !errors.Is(c.e, c.e.Err) {
			t.Errorf("%+v does not wrap its cause", *c.e)
		}
	}
}

// TestParsePrincipalMapMessages checks the messages of map-level refusals:
// they name no principal index, and YAML errors redact echoed input that
// the long-run filter alone would let through, yet keep YAML's indicators.
func TestParsePrincipalMapMessages(t *testing.T) {
	cases := []struct {
		in       string
		want     string // the message contains it
		mustNot  string // the message does not contain it ("" for nothing)
		notIndex bool
	}{
		{"", "empty: no principals", "", true},
		{"principals: []\n", "empty: no principals", "", true},
		{"principals: []\n---\nprincipals: []\n", "exactly one YAML document", "", true},
		{"principals: \"my secret pass\"\n", "map: line 1: YAML: cannot unmarshal !!str <redacted>", "secret", true},
		{"principals: 'short pw'\n", "<redacted>", "pw", true},
		{"principals:\n  - id: a\n   x: [\n", "'-'", "", true},
		{strings.Repeat("#", 1<<20+1), "larger than", "", true},
		{"principals:\n  - id: a\n    tenant: acme\n    role: operator\n    tokens: [{sha256: abc}]\n",
			"sha256 must be 64 hex characters, got 3", "", false},
		{"principals:\n  - id: a\n    tenant: acme\n    role: operator\n    tokens: [{sha256: " + strings.Repeat("g", 64) + "}]\n",
			"sha256 must be 64 hex characters, found a non-hex character", "", false},
	}
	for _, c := range cases {
		_, err := authz.ParsePrincipalMap([]byte(c.in))
		if err == nil {
			t.Errorf("%.40q: accepted", c.in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || (c.mustNot != "" && strings.Contains(msg, c.mustNot)) ||
			(c.notIndex && strings.Contains(msg, "principals[")) {
			t.Errorf("%.40q: %q; want it to contain %q and not %q", c.in, msg, c.want, c.mustNot)
		}
	}
	// A map of exactly the size limit is read (and refused for its content).
	_, err := authz.ParsePrincipalMap([]byte(strings.Repeat("#", 1<<20)))
	if err == nil || strings.Contains(err.Error(), "larger than") {
		t.Errorf("a map of exactly 1 MiB: %v", err)
	}
}

// TestValidTokenFormatStrict checks that a token whose last character
// carries bits past the 32 bytes is not of NewToken's form.
func TestValidTokenFormatStrict(t *testing.T) {
	good := "lg_" + strings.Repeat("A", 43)
	if !authz.ValidTokenFormat(good) {
		t.Fatalf("%s refused", good)
	}
	for _, tok := range []string{
		"lg_" + strings.Repeat("A", 42) + "B", // non-zero trailing bits
		"lg_" + strings.Repeat("A", 42),
		"lg_" + strings.Repeat("A", 44),
		"xx_" + strings.Repeat("A", 43),
		"lg_" + strings.Repeat("A", 42) + "=",
	} {
		if authz.ValidTokenFormat(tok) {
			t.Errorf("ValidTokenFormat(%q) = true", tok)
		}
	}
}

func mustPrincipal(t *testing.T, id, tenant string, role authz.Role, namespaces, delegate []string) *authz.Principal {
	t.Helper()
	pid, err := authz.ParsePrincipalID(id)
	if err != nil {
		t.Fatal(err)
	}
	tid, err := authz.ParseTenantID(tenant)
	if err != nil {
		t.Fatal(err)
	}
	var ns []authz.Namespace
	for _, n := range namespaces {
		x, err := authz.ParseNamespace(n)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, x)
	}
	var dt []authz.TenantID
	for _, d := range delegate {
		x, err := authz.ParseTenantID(d)
		if err != nil {
			t.Fatal(err)
		}
		dt = append(dt, x)
	}
	p, err := authz.NewPrincipal(pid, tid, role, ns, dt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
