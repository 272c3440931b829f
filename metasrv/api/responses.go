package api

import "lakegate/catalog"

// The REST API's success answers: Gravitino's envelopes, code 0 and the
// answer's objects under one key. The server encodes them and its callers
// decode them. encoding/json writes a struct's fields in their order; each
// envelope declares its fields in the order of their JSON names
// ("associations" before "code"), the order the REST API answers in
// (metasrv's testdata/rest_answers.golden pins every answer's bytes).

// BaseResponse is an answer with nothing but its code (PATCH …/policies/{p}).
type BaseResponse struct {
	Code int `json:"code"`
}

// CommitVersionResponse answers a version commit: the new version and the
// metalake generation it was applied at.
type CommitVersionResponse struct {
	Code       int    `json:"code"`
	Generation uint64 `json:"generation"`
	Version    uint64 `json:"version"`
}

// DropResponse answers a DELETE: whether something was dropped (false for
// what does not exist or the caller may not see).
type DropResponse struct {
	Code    int  `json:"code"`
	Dropped bool `json:"dropped"`
}

// MetalakeResponse answers a read or write of one metalake.
type MetalakeResponse struct {
	Code     int         `json:"code"`
	Metalake MetalakeDTO `json:"metalake"`
}

// MetalakeListResponse answers GET /api/metalakes.
type MetalakeListResponse struct {
	Code      int           `json:"code"`
	Metalakes []MetalakeDTO `json:"metalakes"`
}

// CatalogResponse answers a read or write of one catalog.
type CatalogResponse struct {
	Catalog CatalogDTO `json:"catalog"`
	Code    int        `json:"code"`
}

// CatalogListResponse answers GET …/catalogs?details=true.
type CatalogListResponse struct {
	Catalogs []CatalogDTO `json:"catalogs"`
	Code     int          `json:"code"`
}

// SchemaResponse answers a read or write of one schema.
type SchemaResponse struct {
	Code   int       `json:"code"`
	Schema SchemaDTO `json:"schema"`
}

// SchemaListResponse answers GET …/schemas?details=true.
type SchemaListResponse struct {
	Code    int         `json:"code"`
	Schemas []SchemaDTO `json:"schemas"`
}

// TableResponse answers a read or write of one table.
type TableResponse struct {
	Code  int      `json:"code"`
	Table TableDTO `json:"table"`
}

// TableListResponse answers GET …/tables?details=true.
type TableListResponse struct {
	Code   int        `json:"code"`
	Tables []TableDTO `json:"tables"`
}

// IdentifierDTO names one object of a collection (its last name part).
type IdentifierDTO struct {
	Name string `json:"name"`
}

// EntityListResponse answers a catalog, schema or table listing without
// details.
type EntityListResponse struct {
	Code        int             `json:"code"`
	Identifiers []IdentifierDTO `json:"identifiers"`
}

// NameListResponse answers a listing without details (tags, policies,
// domains, roles, users, groups, associations) and a tag association
// (the object's own tags after it).
type NameListResponse struct {
	Code  int      `json:"code"`
	Names []string `json:"names"`
}

// VersionListResponse answers GET …/tables/{t}/versions.
type VersionListResponse struct {
	Code     int          `json:"code"`
	Versions []VersionDTO `json:"versions"`
}

// TagResponse answers a read or write of one tag.
type TagResponse struct {
	Code int    `json:"code"`
	Tag  TagDTO `json:"tag"`
}

// TagListResponse answers a tag listing with details.
type TagListResponse struct {
	Code int      `json:"code"`
	Tags []TagDTO `json:"tags"`
}

// MetadataObjectListResponse answers GET …/tags/{tag}/objects.
type MetadataObjectListResponse struct {
	Code            int         `json:"code"`
	MetadataObjects []ObjectDTO `json:"metadataObjects"`
}

// PolicyResponse answers a read or write of one policy.
type PolicyResponse struct {
	Code   int       `json:"code"`
	Policy PolicyDTO `json:"policy"`
}

// PolicyListResponse answers a policy listing with details.
type PolicyListResponse struct {
	Code     int         `json:"code"`
	Policies []PolicyDTO `json:"policies"`
}

// AssociationListResponse answers a listing of a policy's tags or a tag's
// policies with details.
type AssociationListResponse struct {
	Associations []AssociationDTO `json:"associations"`
	Code         int              `json:"code"`
}

// AttachPolicyResponse answers PUT …/tags/{tag}/policies/{policy}: the
// attachment made; a presence selector is null.
type AttachPolicyResponse struct {
	Code     int          `json:"code"`
	Policy   string       `json:"policy"`
	Selector *SelectorDTO `json:"selector"`
	Tag      string       `json:"tag"`
}

// DetachPolicyResponse answers DELETE …/tags/{tag}/policies/{policy}.
type DetachPolicyResponse struct {
	Code   int    `json:"code"`
	Policy string `json:"policy"`
	Tag    string `json:"tag"`
}

// DomainResponse answers a read or write of one domain.
type DomainResponse struct {
	Code   int       `json:"code"`
	Domain DomainDTO `json:"domain"`
}

// DomainListResponse answers a domain listing with details.
type DomainListResponse struct {
	Code    int         `json:"code"`
	Domains []DomainDTO `json:"domains"`
}

// MemberListResponse answers GET …/domains/{domain}/objects.
type MemberListResponse struct {
	Code            int         `json:"code"`
	MetadataObjects []MemberDTO `json:"metadataObjects"`
}

// RoleResponse answers a read or write of one role (a privilege grant or
// revoke answers the role after it).
type RoleResponse struct {
	Code int     `json:"code"`
	Role RoleDTO `json:"role"`
}

// UserResponse answers a read or write of one user (a role grant or
// revoke answers the user after it).
type UserResponse struct {
	Code int     `json:"code"`
	User UserDTO `json:"user"`
}

// UserListResponse answers GET …/users?details=true.
type UserListResponse struct {
	Code  int       `json:"code"`
	Users []UserDTO `json:"users"`
}

// GroupResponse answers a read or write of one group.
type GroupResponse struct {
	Code  int      `json:"code"`
	Group GroupDTO `json:"group"`
}

// GroupListResponse answers GET …/groups?details=true.
type GroupListResponse struct {
	Code   int        `json:"code"`
	Groups []GroupDTO `json:"groups"`
}

// OwnerResponse answers GET …/owners/{type}/{fullName}.
type OwnerResponse struct {
	Code  int      `json:"code"`
	Owner OwnerDTO `json:"owner"`
}

// SetResponse answers PUT …/owners/{type}/{fullName}.
type SetResponse struct {
	Code int  `json:"code"`
	Set  bool `json:"set"`
}

// EventListResponse answers GET …/events; E is the server's event type
// (metasrv.Event), which this package cannot name.
type EventListResponse[E any] struct {
	Code   int `json:"code"`
	Events []E `json:"events"`
}

// WhoamiResponse answers GET /api/whoami.
type WhoamiResponse struct {
	Code      int       `json:"code"`
	Principal WhoamiDTO `json:"principal"`
}

// ExplainResponse answers GET …/access/explain: metasrv's explanation and
// what a gateway adds to it.
type ExplainResponse struct {
	Code        int                 `json:"code"`
	Explanation catalog.Explanation `json:"explanation"`
	Gateway     GatewayDTO          `json:"gateway"`
}

// PreviewResponse answers POST …/access/preview: one page of the changes;
// Next, when set, is the offset of the next page.
type PreviewResponse struct {
	Code    int          `json:"code"`
	Limit   int          `json:"limit"`
	Next    *int         `json:"next,omitempty"`
	Offset  int          `json:"offset"`
	Preview catalog.Diff `json:"preview"`
}
