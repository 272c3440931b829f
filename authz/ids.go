package authz

import (
	"fmt"
	"strconv"
	"strings"
)

// Length limits of the value objects, in bytes (all valid characters are ASCII).
const (
	maxPrincipalIDLen = 128
	maxTenantIDLen    = 64
	maxNamespaceLen   = 128
)

// PrincipalID identifies a principal: 1–128 characters of [A-Za-z0-9._@:-],
// neither "." nor "..", compared case-sensitively. The zero value is invalid. Comparable with ==.
type PrincipalID struct{ s string }

// ParsePrincipalID validates s as a PrincipalID. The error does not contain s.
func ParsePrincipalID(s string) (PrincipalID, error) {
	err := checkChars(s, maxPrincipalIDLen, isPrincipalIDChar)
	if err == nil && (s == "." || s == "..") {
		// A path segment's meaning, not a name: an id is written into
		// paths and URLs (audit, REST), where these two would move.
		err = fmt.Errorf(`"." and ".." are not ids`)
	}
	if err != nil {
		return PrincipalID{}, fmt.Errorf("%w: %v (want 1–%d of [A-Za-z0-9._@:-], not . or ..)", ErrInvalidPrincipalID, err, maxPrincipalIDLen)
	}
	return PrincipalID{s}, nil
}

// String returns the id; "" for the zero value.
func (id PrincipalID) String() string { return id.s }

// TenantID identifies a tenant: 1–64 characters of [A-Za-z0-9_-] starting and
// ending with a letter or digit, compared case-sensitively. The zero value is
// invalid. Comparable with ==.
type TenantID struct{ s string }

// ParseTenantID validates s as a TenantID. The error does not contain s.
func ParseTenantID(s string) (TenantID, error) {
	err := checkChars(s, maxTenantIDLen, isTenantIDChar)
	if err == nil && (!isAlnum(s[0]) || !isAlnum(s[len(s)-1])) {
		err = fmt.Errorf("first and last character must be a letter or digit")
	}
	if err != nil {
		return TenantID{}, fmt.Errorf("%w: %v (want 1–%d of [A-Za-z0-9_-], alphanumeric at both ends)", ErrInvalidTenantID, err, maxTenantIDLen)
	}
	return TenantID{s}, nil
}

// String returns the id; "" for the zero value.
func (t TenantID) String() string { return t.s }

// Namespace is a namespace (schema) grant: 1–128 characters of [A-Za-z0-9._-],
// neither "." nor "..". Namespaces are case-insensitive and stored lower-cased,
// so String returns the lower-cased form. The zero value is invalid.
// Comparable with ==.
type Namespace struct{ s string }

// ParseNamespace validates s as a Namespace and lower-cases it. The error does
// not contain s.
func ParseNamespace(s string) (Namespace, error) {
	err := checkChars(s, maxNamespaceLen, isNamespaceChar)
	if err == nil && (s == "." || s == "..") {
		err = fmt.Errorf(`must not be "." or ".."`)
	}
	if err != nil {
		return Namespace{}, fmt.Errorf("%w: %v (want 1–%d of [A-Za-z0-9._-])", ErrInvalidNamespace, err, maxNamespaceLen)
	}
	return Namespace{strings.ToLower(s)}, nil
}

// String returns the lower-cased namespace; "" for the zero value.
func (n Namespace) String() string { return n.s }

// checkChars checks length bounds and that every byte satisfies ok. Its error
// names the length or the offending byte offset, never the content.
func checkChars(s string, max int, ok func(byte) bool) error {
	if len(s) == 0 {
		return fmt.Errorf("empty")
	}
	if len(s) > max {
		return fmt.Errorf("length %d exceeds %d", len(s), max)
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return fmt.Errorf("character not allowed at byte offset %d", i)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isPrincipalIDChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '@' || c == ':' || c == '-'
}

func isTenantIDChar(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

func isNamespaceChar(c byte) bool { return isAlnum(c) || c == '.' || c == '_' || c == '-' }

// Role is what a principal is allowed to be. The zero value is invalid.
type Role uint8

// Roles. Their numeric values are not part of any file format; the map uses
// the names returned by String.
const (
	// RoleUser runs SQL within its tenant, limited to its namespace grants.
	RoleUser Role = iota + 1
	// RoleQueryService is a service that may act for the tenants it lists
	// as delegate tenants.
	RoleQueryService
	// RoleMetadataPeer is a metasrv node forwarding to another, or joining
	// a cluster that expects it.
	RoleMetadataPeer
	// RoleTenantAdmin administers its own tenant: every namespace and every
	// governance action inside it, nothing outside it.
	RoleTenantAdmin
	// RoleOperator runs the deployment: metalake lifecycle and cluster
	// membership. It has no data access through the gateway.
	RoleOperator
)

var roleNames = [...]string{
	RoleUser:         "user",
	RoleQueryService: "query_service",
	RoleMetadataPeer: "metadata_peer",
	RoleTenantAdmin:  "tenant_admin",
	RoleOperator:     "operator",
}

// ParseRole parses "user", "query_service", "metadata_peer", "tenant_admin"
// or "operator" (exact, lower case). The error does not contain s. The
// name "admin" is refused with ErrRetiredRole: read as either a tenant's
// admin or the deployment's operator, it would make some principal written
// for the other meaning silently more or less powerful.
func ParseRole(s string) (Role, error) {
	for r := RoleUser; r <= RoleOperator; r++ {
		if roleNames[r] == s {
			return r, nil
		}
	}
	if s == "admin" {
		return 0, fmt.Errorf("%w: role admin is no longer accepted: write tenant_admin for a principal that administers its own tenant, "+
			"or operator for one that creates and drops metalakes and runs the cluster (no data access)", ErrRetiredRole)
	}
	return 0, fmt.Errorf("%w: want one of user, query_service, metadata_peer, tenant_admin, operator", ErrInvalidRole)
}

// String returns the role's name as written in the principal map, or
// "Role(N)" for an invalid role.
func (r Role) String() string {
	if r.valid() {
		return roleNames[r]
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

func (r Role) valid() bool { return r >= RoleUser && r <= RoleOperator }
