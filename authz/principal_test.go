package authz_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"lakegate/authz"
)

func TestNewPrincipal(t *testing.T) {
	id, acme, plat := mustID(t, "alice@acme"), mustTenant(t, "acme"), mustTenant(t, "platform")
	tests := []struct {
		name      string
		id        authz.PrincipalID
		tenant    authz.TenantID
		role      authz.Role
		ns        []authz.Namespace
		delegates []authz.TenantID
		ok        bool
	}{
		{"user", id, acme, authz.RoleUser, mustNS(t, "sales"), nil, true},
		{"user without namespaces", id, acme, authz.RoleUser, nil, nil, false},
		{"user with delegates", id, acme, authz.RoleUser, mustNS(t, "sales"), []authz.TenantID{plat}, false},
		{"query service", id, plat, authz.RoleQueryService, nil, []authz.TenantID{acme}, true},
		{"query service without delegates", id, plat, authz.RoleQueryService, nil, nil, true},
		{"query service with namespaces", id, plat, authz.RoleQueryService, mustNS(t, "sales"), nil, false},
		{"metadata peer", id, plat, authz.RoleMetadataPeer, nil, nil, true},
		{"metadata peer with delegates", id, plat, authz.RoleMetadataPeer, nil, []authz.TenantID{acme}, false},
		{"tenant admin", id, acme, authz.RoleTenantAdmin, nil, nil, true},
		{"tenant admin with namespaces", id, acme, authz.RoleTenantAdmin, mustNS(t, "sales"), nil, false},
		{"tenant admin with delegates", id, acme, authz.RoleTenantAdmin, nil, []authz.TenantID{plat}, false},
		{"operator", id, plat, authz.RoleOperator, nil, nil, true},
		{"operator with namespaces", id, plat, authz.RoleOperator, mustNS(t, "sales"), nil, false},
		{"operator with delegates", id, plat, authz.RoleOperator, nil, []authz.TenantID{acme}, false},
		{"zero id", authz.PrincipalID{}, acme, authz.RoleTenantAdmin, nil, nil, false},
		{"zero tenant", id, authz.TenantID{}, authz.RoleTenantAdmin, nil, nil, false},
		{"zero role", id, acme, 0, nil, nil, false},
		{"unknown role", id, acme, authz.RoleOperator + 1, nil, nil, false},
		{"zero namespace", id, acme, authz.RoleUser, []authz.Namespace{{}}, nil, false},
		{"zero delegate", id, plat, authz.RoleQueryService, nil, []authz.TenantID{{}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := authz.NewPrincipal(tt.id, tt.tenant, tt.role, tt.ns, tt.delegates)
			if tt.ok != (err == nil) {
				t.Fatalf("NewPrincipal error = %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, authz.ErrInvalidPrincipal) {
					t.Errorf("error %v does not wrap ErrInvalidPrincipal", err)
				}
				return
			}
			if p.ID() != tt.id || p.Tenant() != tt.tenant || p.Role() != tt.role {
				t.Errorf("got %v/%v/%v", p.ID(), p.Tenant(), p.Role())
			}
		})
	}
}

func TestPrincipalImmutableSortedDeduped(t *testing.T) {
	ns := mustNS(t, "Sales", "hr", "SALES", "finance")
	p, err := authz.NewPrincipal(mustID(t, "a"), mustTenant(t, "acme"), authz.RoleUser, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	ns[0] = mustNS(t, "evil")[0] // caller's slice must not alias
	got := p.Namespaces()
	want := mustNS(t, "finance", "hr", "sales")
	if !slices.Equal(got, want) {
		t.Fatalf("Namespaces() = %v, want %v", got, want)
	}
	got[0] = mustNS(t, "evil")[0] // returned copy must not alias
	if !slices.Equal(p.Namespaces(), want) {
		t.Fatal("Namespaces() returned an aliased slice")
	}

	dts := []authz.TenantID{mustTenant(t, "b"), mustTenant(t, "a"), mustTenant(t, "b")}
	q, err := authz.NewPrincipal(mustID(t, "gw"), mustTenant(t, "platform"), authz.RoleQueryService, nil, dts)
	if err != nil {
		t.Fatal(err)
	}
	dts[0] = mustTenant(t, "evil")
	d := q.DelegateTenants()
	if !slices.Equal(d, []authz.TenantID{mustTenant(t, "a"), mustTenant(t, "b")}) {
		t.Fatalf("DelegateTenants() = %v", d)
	}
	d[0] = mustTenant(t, "evil")
	if q.DelegateTenants()[0] != mustTenant(t, "a") {
		t.Fatal("DelegateTenants() returned an aliased slice")
	}
}

func TestMayQueryAndReadNamespace(t *testing.T) {
	acme := mustTenant(t, "acme")
	mk := func(role authz.Role, ns []authz.Namespace, d []authz.TenantID) *authz.Principal {
		p, err := authz.NewPrincipal(mustID(t, "p"), acme, role, ns, d)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := mk(authz.RoleUser, mustNS(t, "sales", "hr.eu"), nil)
	admin := mk(authz.RoleTenantAdmin, nil, nil)
	operator := mk(authz.RoleOperator, nil, nil)
	qs := mk(authz.RoleQueryService, nil, []authz.TenantID{acme})
	peer := mk(authz.RoleMetadataPeer, nil, nil)

	for _, tt := range []struct {
		p     *authz.Principal
		query bool
		read  map[string]bool
	}{
		{user, true, map[string]bool{"sales": true, "SALES": true, "Sales": true, "hr.eu": true, "HR.EU": true, "hr": false, "sales2": false, "": false, ".": false, "sales\x00": false, "ſales": false, "sales ": false}},
		{admin, true, map[string]bool{"sales": true, "anything": true, "": false, "..": false, "a/b": false}},
		{qs, false, map[string]bool{"sales": false}},
		{peer, false, map[string]bool{"sales": false}},
		// An operator runs the deployment and reads no data.
		{operator, false, map[string]bool{"sales": false, "anything": false}},
	} {
		if got := tt.p.MayQuery(); got != tt.query {
			t.Errorf("%v MayQuery() = %v, want %v", tt.p.Role(), got, tt.query)
		}
		for ns, want := range tt.read {
			if got := tt.p.MayReadNamespace(ns); got != want {
				t.Errorf("%v MayReadNamespace(%q) = %v, want %v", tt.p.Role(), ns, got, want)
			}
		}
	}
}

// TestAdministersTenant: a tenant admin administers its own tenant and no
// other; no other role administers any tenant, its own included.
func TestAdministersTenant(t *testing.T) {
	for _, tt := range []struct {
		role   authz.Role
		tenant string
		want   bool
	}{
		{authz.RoleTenantAdmin, "acme", true},
		{authz.RoleTenantAdmin, "globex", false},
		{authz.RoleTenantAdmin, "", false},
		{authz.RoleTenantAdmin, "ACME", false},
		{authz.RoleOperator, "acme", false},
		{authz.RoleOperator, "globex", false},
		{authz.RoleUser, "acme", false},
		{authz.RoleQueryService, "acme", false},
		{authz.RoleMetadataPeer, "acme", false},
	} {
		var ns []authz.Namespace
		if tt.role == authz.RoleUser {
			ns = mustNS(t, "sales")
		}
		p, err := authz.NewPrincipal(mustID(t, "p"), mustTenant(t, "acme"), tt.role, ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.AdministersTenant(tt.tenant); got != tt.want {
			t.Errorf("%v of acme AdministersTenant(%q) = %v, want %v", tt.role, tt.tenant, got, tt.want)
		}
	}
}

func TestPrincipalLogValue(t *testing.T) {
	p, err := authz.NewPrincipal(mustID(t, "alice@acme"), mustTenant(t, "acme"), authz.RoleUser, mustNS(t, "secret-ns"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("auth", "principal", p)
	got := buf.String()
	for _, want := range []string{"principal.id=alice@acme", "principal.tenant=acme", "principal.role=user"} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "secret-ns") {
		t.Errorf("log %q contains namespaces", got)
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if p, ok := authz.PrincipalFrom(ctx); ok || p != nil {
		t.Fatalf("PrincipalFrom(empty) = %v, %v", p, ok)
	}
	p, err := authz.NewPrincipal(mustID(t, "a"), mustTenant(t, "acme"), authz.RoleTenantAdmin, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx = authz.WithPrincipal(ctx, p)
	// A foreign key with the same underlying shape must not collide.
	type contextKey struct{ name string }
	ctx = context.WithValue(ctx, &contextKey{"principal"}, "x")
	if got, ok := authz.PrincipalFrom(ctx); !ok || got != p {
		t.Fatalf("PrincipalFrom = %v, %v; want %v", got, ok, p)
	}
}
