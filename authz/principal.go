package authz

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Principal is an authenticated identity. It is immutable after construction
// and safe for use from multiple goroutines.
type Principal struct {
	id              PrincipalID
	tenant          TenantID
	role            Role
	namespaces      []Namespace // sorted, unique
	delegateTenants []TenantID  // sorted, unique

	// Set only for principals authenticated by a JWT (method AuthJWT).
	method AuthMethod
	groups []string  // sorted, unique: the token's groups claim
	expiry time.Time // the token's exp
	issuer string    // the token's iss
}

// AuthMethod says how a principal was authenticated.
type AuthMethod uint8

const (
	// AuthStatic is a static bearer token from the principal map (the zero value).
	AuthStatic AuthMethod = iota
	// AuthJWT is a JWT signed by an OIDC provider configured in the map.
	AuthJWT
)

// String returns "static" or "jwt".
func (m AuthMethod) String() string {
	switch m {
	case AuthStatic:
		return "static"
	case AuthJWT:
		return "jwt"
	}
	return "AuthMethod(" + fmt.Sprint(uint8(m)) + ")"
}

// NewPrincipal validates and builds a Principal. A user needs at least one
// namespace grant; only users may have namespace grants and only query
// services may have delegate tenants (a grant that has no effect is refused
// rather than silently ignored). Namespaces and delegate tenants are
// de-duplicated and sorted. The slices are copied.
func NewPrincipal(id PrincipalID, tenant TenantID, role Role, namespaces []Namespace, delegateTenants []TenantID) (*Principal, error) {
	switch {
	case id == PrincipalID{}:
		return nil, fmt.Errorf("%w: zero principal id", ErrInvalidPrincipal)
	case tenant == TenantID{}:
		return nil, fmt.Errorf("%w: zero tenant id", ErrInvalidPrincipal)
	case !role.valid():
		return nil, fmt.Errorf("%w: invalid role %s", ErrInvalidPrincipal, role)
	case role == RoleUser && len(namespaces) == 0:
		return nil, fmt.Errorf("%w: role user needs at least one namespace", ErrInvalidPrincipal)
	case role != RoleUser && len(namespaces) > 0:
		return nil, fmt.Errorf("%w: only role user may have namespaces, not %s", ErrInvalidPrincipal, role)
	case role != RoleQueryService && len(delegateTenants) > 0:
		return nil, fmt.Errorf("%w: only role query_service may have delegate tenants, not %s", ErrInvalidPrincipal, role)
	}
	if slices.Contains(namespaces, Namespace{}) {
		return nil, fmt.Errorf("%w: zero namespace", ErrInvalidPrincipal)
	}
	if slices.Contains(delegateTenants, TenantID{}) {
		return nil, fmt.Errorf("%w: zero delegate tenant", ErrInvalidPrincipal)
	}
	p := &Principal{id: id, tenant: tenant, role: role}
	if len(namespaces) > 0 {
		p.namespaces = slices.Clone(namespaces)
		slices.SortFunc(p.namespaces, func(a, b Namespace) int { return strings.Compare(a.s, b.s) })
		p.namespaces = slices.Compact(p.namespaces)
	}
	if len(delegateTenants) > 0 {
		p.delegateTenants = slices.Clone(delegateTenants)
		slices.SortFunc(p.delegateTenants, func(a, b TenantID) int { return strings.Compare(a.s, b.s) })
		p.delegateTenants = slices.Compact(p.delegateTenants)
	}
	return p, nil
}

// ID returns the principal's id.
func (p *Principal) ID() PrincipalID { return p.id }

// Tenant returns the principal's own tenant.
func (p *Principal) Tenant() TenantID { return p.tenant }

// Role returns the principal's role.
func (p *Principal) Role() Role { return p.role }

// Namespaces returns a sorted copy of the namespace grants (nil if none).
func (p *Principal) Namespaces() []Namespace { return slices.Clone(p.namespaces) }

// DelegateTenants returns a sorted copy of the tenants a query service may
// act for (nil if none).
func (p *Principal) DelegateTenants() []TenantID { return slices.Clone(p.delegateTenants) }

// AuthMethod says how the principal was authenticated.
func (p *Principal) AuthMethod() AuthMethod { return p.method }

// Groups returns a sorted copy of the groups named by the JWT that
// authenticated the principal (nil for static tokens and tokens without
// groups).
func (p *Principal) Groups() []string { return slices.Clone(p.groups) }

// Expiry returns the expiry of the JWT that authenticated the principal, or
// the zero time for a static token (which does not expire).
func (p *Principal) Expiry() time.Time { return p.expiry }

// Issuer returns the issuer of the JWT that authenticated the principal, or
// "" for a static token.
func (p *Principal) Issuer() string { return p.issuer }

// MayQuery reports whether the principal may run SQL at all on the Flight
// gateway: users and tenant admins (operators have no data access).
func (p *Principal) MayQuery() bool { return p.role == RoleUser || p.role == RoleTenantAdmin }

// AdministersTenant reports whether the principal is the tenant admin of
// tenant t (its own tenant; a tenant admin administers no other).
func (p *Principal) AdministersTenant(t string) bool {
	return p.role == RoleTenantAdmin && p.tenant.s == t
}

// MayReadNamespace reports whether the principal may read the namespace
// (schema) ns of its own tenant. ns is the raw schema name from SQL; it is
// compared case-insensitively, and an invalid name is never readable. Users
// may read their grants, tenant admins any valid namespace, other roles none. The
// caller must scope the lookup to p.Tenant().
func (p *Principal) MayReadNamespace(ns string) bool {
	n, err := ParseNamespace(ns)
	if err != nil {
		return false
	}
	switch p.role {
	case RoleTenantAdmin:
		return true
	case RoleUser:
		_, found := slices.BinarySearchFunc(p.namespaces, n, func(a, b Namespace) int { return strings.Compare(a.s, b.s) })
		return found
	default:
		return false
	}
}

// LogValue implements slog.LogValuer: id, tenant and role only.
func (p *Principal) LogValue() slog.Value {
	if p == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.String("id", p.id.s),
		slog.String("tenant", p.tenant.s),
		slog.String("role", p.role.String()),
	)
}
