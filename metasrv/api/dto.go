package api

import (
	"encoding/json"
	"time"

	"lakegate/catalog"
)

// The REST API's objects as they appear on the wire (Gravitino's shapes,
// with lakegate's additions marked), in the answers of /api/metalakes/….

// MetalakeDTO is a metalake.
type MetalakeDTO struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	Owner      string            `json:"owner,omitempty"`
	Audit      catalog.Audit     `json:"audit"`
}

// CatalogDTO is a catalog.
type CatalogDTO struct {
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	Provider   string            `json:"provider"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	Audit      catalog.Audit     `json:"audit"`
}

// SchemaDTO is a schema.
type SchemaDTO struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	Audit      catalog.Audit     `json:"audit"`
}

// ColumnDTO is a column of a table (REST; the internal API's is Column).
type ColumnDTO struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Comment  string `json:"comment,omitempty"`
	Nullable *bool  `json:"nullable,omitempty"`
}

// TableDTO is a table.
type TableDTO struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Columns    []ColumnDTO       `json:"columns"`
	Properties map[string]string `json:"properties,omitempty"`
	Audit      catalog.Audit     `json:"audit"`
	// StorageID (lakegate) is the table's directory under the tenant's
	// stage, "tables/<storageId>/…"; omitted for a table without one.
	StorageID string `json:"storageId,omitempty"`
	// Version (lakegate) is the table's current version (0: no data yet).
	Version uint64 `json:"version"`
}

// VersionDTO is one retained version of a table.
type VersionDTO struct {
	Version uint64      `json:"version"`
	Rows    int64       `json:"rows"`
	Files   []DataFile  `json:"files"`
	Columns []ColumnDTO `json:"columns"`
	Actor   string      `json:"actor"`
	Time    time.Time   `json:"time"`
}

// ObjectDTO is a metadata object: its full name and lower-case type.
type ObjectDTO struct {
	FullName string `json:"fullName"`
	Type     string `json:"type"`
}

// OwnerDTO is an owner: a user or group name and its lower-case type.
type OwnerDTO struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// TagDTO is a tag; Inherited and AssignmentValues are set only in an
// object's context.
type TagDTO struct {
	Name          string            `json:"name"`
	Comment       string            `json:"comment,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
	AllowedValues *[]string         `json:"allowedValues,omitempty"` // absent: any value
	Audit         *catalog.Audit    `json:"audit,omitempty"`
	// In an object's context:
	Inherited        *bool     `json:"inherited,omitempty"`
	AssignmentValues *[]string `json:"assignmentValues,omitempty"`
}

// PolicyContentDTO is a policy's content: the catalog's content with
// privilege names in lower case.
type PolicyContentDTO struct {
	Privileges      []string        `json:"privileges,omitempty"`
	ApplicableRoles []string        `json:"applicable_roles,omitempty"`
	ExemptRoles     []string        `json:"exempt_roles,omitempty"`
	Expression      string          `json:"expression,omitempty"`
	Mask            string          `json:"mask,omitempty"`
	Custom          json.RawMessage `json:"custom,omitempty"`
}

// PolicyDTO is a policy; Inherited, Tag, Selector and Source are set only
// for an object's derived policies.
type PolicyDTO struct {
	Name       string           `json:"name"`
	Comment    string           `json:"comment,omitempty"`
	PolicyType string           `json:"policyType"`
	Enabled    bool             `json:"enabled"`
	Content    PolicyContentDTO `json:"content"`
	Audit      *catalog.Audit   `json:"audit,omitempty"`
	// In an object's context (derived policies):
	Inherited *bool        `json:"inherited,omitempty"`
	Tag       string       `json:"tag,omitempty"`
	Selector  *SelectorDTO `json:"selector,omitempty"`
	Source    *ObjectDTO   `json:"source,omitempty"`
}

// SelectorDTO is an attachment's selector; presence selectors are written
// as null.
type SelectorDTO struct {
	Type  string `json:"type"`
	Value string `json:"value,omitempty"`
}

// AssociationDTO is one policy-tag attachment in a details listing.
type AssociationDTO struct {
	Policy   string       `json:"policy,omitempty"`
	Tag      string       `json:"tag,omitempty"`
	Selector *SelectorDTO `json:"selector"`
}

// BackingTagDTO is a domain's backing tag.
type BackingTagDTO struct {
	Name   string `json:"name"`
	Value  string `json:"value,omitempty"`
	Create bool   `json:"create,omitempty"`
}

// DomainDTO is a domain.
type DomainDTO struct {
	Name        string            `json:"name"`
	Comment     string            `json:"comment,omitempty"`
	Properties  map[string]string `json:"properties,omitempty"`
	Status      string            `json:"status"` // draft | published
	Owner       OwnerDTO          `json:"owner"`
	Parent      string            `json:"parent,omitempty"`
	BackingTag  *BackingTagDTO    `json:"backingTag,omitempty"`
	Audit       catalog.Audit     `json:"audit"`
	ParentAudit *catalog.Audit    `json:"parentAudit,omitempty"`
	// In an object's context (GET /objects/{type}/{fullName}/domains):
	Relations []RelationDTO `json:"relations,omitempty"`
}

// RelationDTO is one reason an object is in a domain's scope.
type RelationDTO struct {
	Type   string     `json:"type"` // direct | inherited | via_subdomain
	Source *ObjectDTO `json:"source,omitempty"`
}

// MemberDTO is a member of a domain's scope.
type MemberDTO struct {
	FullName  string        `json:"fullName"`
	Type      string        `json:"type"`
	Relations []RelationDTO `json:"relations"`
}

// RoleDTO is a role and its grants, one SecurableDTO per object.
type RoleDTO struct {
	Name             string            `json:"name"`
	Properties       map[string]string `json:"properties,omitempty"`
	SecurableObjects []SecurableDTO    `json:"securableObjects"`
	Audit            catalog.Audit     `json:"audit"`
}

// SecurableDTO is the privileges a role holds on one object.
type SecurableDTO struct {
	FullName   string         `json:"fullName"`
	Type       string         `json:"type"`
	Privileges []PrivilegeDTO `json:"privileges"`
}

// PrivilegeDTO is one granted privilege (lower-case name) and its
// condition (allow or deny).
type PrivilegeDTO struct {
	Name      string `json:"name"`
	Condition string `json:"condition"`
}

// UserDTO is a user and its roles.
type UserDTO struct {
	Name  string        `json:"name"`
	Roles []string      `json:"roles"`
	Audit catalog.Audit `json:"audit"`
}

// GroupDTO is a group, its roles and users.
type GroupDTO struct {
	Name  string        `json:"name"`
	Roles []string      `json:"roles"`
	Users []string      `json:"users,omitempty"`
	Audit catalog.Audit `json:"audit"`
}

// WhoamiDTO is the answer of GET /api/whoami.
type WhoamiDTO struct {
	Name   string `json:"name"`
	Tenant string `json:"tenant"`
	Role   string `json:"role"`
	// Namespaces are the namespace grants of a user; a tenant admin reads
	// every namespace of its tenant; empty for the other roles.
	Namespaces []string `json:"namespaces"`
	// Metalake is the metalake the caller works in by default (its
	// tenant's), empty for an operator (every metalake, none by default)
	// and the roles that are not a tenant's.
	Metalake string `json:"metalake"`
	// DelegatedBy names the query service acting for the user, on a
	// delegated request.
	DelegatedBy string `json:"delegatedBy,omitempty"`
}

// GatewayDTO is what a gateway adds to a decision: the principal map's
// gate (the principal may run SQL, and the object's schema is among its
// namespaces) runs before metasrv is asked.
type GatewayDTO struct {
	InPrincipalMap bool `json:"inPrincipalMap"`
	// Providers names the identity providers a user not listed in the
	// principal map signs in through (its tenant's); its namespaces are
	// then their rules' for the groups metasrv holds it in.
	Providers  []string `json:"providers,omitempty"`
	Role       string   `json:"role,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
	MayQuery   bool     `json:"mayQuery"`
	// Namespace is the object's schema, the gateway's namespace ("" for
	// objects outside a schema).
	Namespace        string `json:"namespace,omitempty"`
	NamespaceGranted *bool  `json:"namespaceGranted,omitempty"`
	// Allowed: a statement through a gateway passes both gates.
	Allowed bool   `json:"allowed"`
	Note    string `json:"note"`
}
