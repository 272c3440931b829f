package authz_test

import (
	"errors"
	"strings"
	"testing"

	"lakegate/authz"
)

type validatorCase struct {
	in   string
	want string // String() of the accepted value; "" means rejected
}

func TestParseValueObjects(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name   string
		parse  func(string) (string, error)
		sentry error
		cases  []validatorCase
	}{
		{
			name: "PrincipalID",
			parse: func(s string) (string, error) {
				v, err := authz.ParsePrincipalID(s)
				return v.String(), err
			},
			sentry: authz.ErrInvalidPrincipalID,
			cases: []validatorCase{
				{"alice@acme", "alice@acme"},
				{"Alice.B_c-d:e@f", "Alice.B_c-d:e@f"},
				{"a", "a"},
				{"-", "-"},
				{long(128), long(128)},
				{long(129), ""},
				{"", ""},
				{"alice bob", ""},
				{"alice\x00", ""},
				{"\x00", ""},
				{"alice/acme", ""},
				{"älice", ""},
				{"alice\u200b", ""},
				{"alice\n", ""},
				{"a+b", ""},
				{"lg_secret*", ""},
				{".", ""},
				{"..", ""},
				{"...", "..."},
				{".a", ".a"},
			},
		},
		{
			name: "TenantID",
			parse: func(s string) (string, error) {
				v, err := authz.ParseTenantID(s)
				return v.String(), err
			},
			sentry: authz.ErrInvalidTenantID,
			cases: []validatorCase{
				{"acme", "acme"},
				{"Acme_Corp-2", "Acme_Corp-2"},
				{"a", "a"},
				{"7", "7"},
				{"a-b", "a-b"},
				{long(64), long(64)},
				{long(65), ""},
				{"", ""},
				{"-", ""},
				{"_acme", ""},
				{"acme-", ""},
				{"ac.me", ""},
				{"ac@me", ""},
				{"acme\x00", ""},
				{"acmé", ""},
				{"ａcme", ""}, // full-width a
				{" acme", ""},
			},
		},
		{
			name: "Namespace",
			parse: func(s string) (string, error) {
				v, err := authz.ParseNamespace(s)
				return v.String(), err
			},
			sentry: authz.ErrInvalidNamespace,
			cases: []validatorCase{
				{"sales", "sales"},
				{"Sales", "sales"},
				{"SALES.EU_2-x", "sales.eu_2-x"},
				{"...", "..."},
				{".hidden", ".hidden"},
				{"a", "a"},
				{long(128), long(128)},
				{long(129), ""},
				{"", ""},
				{".", ""},
				{"..", ""},
				{"sa les", ""},
				{"sales/eu", ""},
				{"sales\x00", ""},
				{"ſales", ""}, // long s: ToLower-folds to nothing ASCII but must be rejected
				{"K", "k"},
				{"\u212a", ""}, // Kelvin sign
				{"sales;drop", ""},
				{`"sales"`, ""},
			},
		},
	}
	for _, tt := range tests {
		for _, c := range tt.cases {
			got, err := tt.parse(c.in)
			if c.want == "" {
				if err == nil {
					t.Errorf("%s(%q) = %q, want error", tt.name, c.in, got)
					continue
				}
				if !errors.Is(err, tt.sentry) {
					t.Errorf("%s(%q) error %v does not wrap %v", tt.name, c.in, err, tt.sentry)
				}
				// Inputs shorter than 4 bytes (".", "-") occur in the rule text itself.
				if len(c.in) >= 4 && strings.Contains(err.Error(), c.in) {
					t.Errorf("%s(%q) error %q echoes the input", tt.name, c.in, err)
				}
				if got != "" {
					t.Errorf("%s(%q) returned non-zero value %q with error", tt.name, c.in, got)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s(%q): unexpected error %v", tt.name, c.in, err)
				continue
			}
			if got != c.want {
				t.Errorf("%s(%q) = %q, want %q", tt.name, c.in, got, c.want)
			}
		}
	}
}

func TestValueObjectsCompareByValue(t *testing.T) {
	a1, _ := authz.ParseNamespace("Sales")
	a2, _ := authz.ParseNamespace("sales")
	if a1 != a2 {
		t.Error("namespaces differing only in case are not equal")
	}
	p1, _ := authz.ParsePrincipalID("Alice")
	p2, _ := authz.ParsePrincipalID("alice")
	if p1 == p2 {
		t.Error("principal ids are case-sensitive, but compared equal")
	}
	if (authz.TenantID{}) == mustTenant(t, "acme") {
		t.Error("zero tenant equals a valid one")
	}
}

func TestParseRole(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want authz.Role
	}{
		{"user", authz.RoleUser},
		{"query_service", authz.RoleQueryService},
		{"metadata_peer", authz.RoleMetadataPeer},
		{"tenant_admin", authz.RoleTenantAdmin},
		{"operator", authz.RoleOperator},
	} {
		got, err := authz.ParseRole(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRole(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tt.in)
		}
	}
	for _, bad := range []string{"", "Admin", "ADMIN", "root", "user ", "query-service", "superuser\x00"} {
		_, err := authz.ParseRole(bad)
		if !errors.Is(err, authz.ErrInvalidRole) {
			t.Errorf("ParseRole(%q) error = %v, want ErrInvalidRole", bad, err)
		}
		if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseRole(%q) error %q echoes the input", bad, err)
		}
	}
	// "admin" names no role: it is refused with a message that says which
	// two roles to write instead, so an old map fails to load rather than
	// load with a principal more or less powerful than its author meant.
	_, err := authz.ParseRole("admin")
	if !errors.Is(err, authz.ErrRetiredRole) || !errors.Is(err, authz.ErrInvalidRole) {
		t.Errorf("ParseRole(admin) error = %v, want ErrRetiredRole", err)
	} else if !strings.Contains(err.Error(), "tenant_admin") || !strings.Contains(err.Error(), "operator") {
		t.Errorf("ParseRole(admin) error %q does not name the roles that replace it", err)
	}
	if got := authz.Role(0).String(); got != "Role(0)" {
		t.Errorf("Role(0).String() = %q", got)
	}
	if got := authz.Role(9).String(); got != "Role(9)" {
		t.Errorf("Role(9).String() = %q", got)
	}
}

func mustTenant(t testing.TB, s string) authz.TenantID {
	t.Helper()
	v, err := authz.ParseTenantID(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustID(t testing.TB, s string) authz.PrincipalID {
	t.Helper()
	v, err := authz.ParsePrincipalID(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustNS(t testing.TB, ss ...string) []authz.Namespace {
	t.Helper()
	var out []authz.Namespace
	for _, s := range ss {
		v, err := authz.ParseNamespace(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
