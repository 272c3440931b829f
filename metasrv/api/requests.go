package api

import (
	"encoding/json"

	"lakegate/catalog"
)

// Bodies of REST writes (what a caller sends). The create bodies' optional fields carry omitempty so that a
// caller sends only what it sets (an update's fields do not: an empty
// comment or value is an update's meaning); the server decodes strictly.

// CreateCatalogRequest is the body of POST /api/metalakes/{m}/catalogs.
type CreateCatalogRequest struct {
	Name string `json:"name"`
	// Type is "managed" (the default) or "upstream".
	Type string `json:"type,omitempty"`
	// Provider, when set, must be "lakegate".
	Provider   string            `json:"provider,omitempty"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
}

// CreateSchemaRequest is the body of POST …/catalogs/{c}/schemas.
type CreateSchemaRequest struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
}

// CreateTableRequest is the body of POST …/schemas/{s}/tables.
type CreateTableRequest struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Columns    []ColumnDTO       `json:"columns"`
	Properties map[string]string `json:"properties,omitempty"`
	// StorageID and Files (lakegate) are the table's storage id and its
	// first version's data files; either starts it at version 1. A
	// gateway's only (query_service delegation). Files is sent when not
	// nil, even empty.
	StorageID string     `json:"storageId,omitempty"`
	Files     []DataFile `json:"files,omitzero"`
}

// CommitVersionRequest is the body of POST …/tables/{t}/versions.
type CommitVersionRequest struct {
	// Base is the version the commit was prepared against. Required (0
	// for a table without data yet).
	Base *uint64 `json:"base"`
	// Replace makes Files the whole new version; otherwise they are
	// appended to the base version's files.
	Replace bool `json:"replace"`
	// Columns, when present, are the new version's columns.
	Columns []ColumnDTO `json:"columns,omitempty"`
	Files   []DataFile  `json:"files"`
}

// AlterRequest is the body of a PUT that alters an object: its updates,
// applied in order, all or nothing. U is the object's update: metasrv's
// Update (metalakes, catalogs, schemas, tables, tags), DomainUpdate or
// PolicyUpdate.
type AlterRequest[U any] struct {
	Updates []U `json:"updates"`
}

// DomainUpdate is one update of PUT …/domains/{domain}: rename,
// updateComment, setProperty or removeProperty.
type DomainUpdate struct {
	Type       string `json:"@type"`
	NewName    string `json:"newName"`
	NewComment string `json:"newComment"`
	Property   string `json:"property"`
	Value      string `json:"value"`
}

// PolicyUpdate is one update of PUT …/policies/{policy}: rename,
// updateComment or updateContent (with the policy's type).
type PolicyUpdate struct {
	Type       string                 `json:"@type"`
	NewName    string                 `json:"newName"`
	NewComment string                 `json:"newComment"`
	PolicyType string                 `json:"policyType"`
	NewContent *catalog.PolicyContent `json:"newContent"`
}

// CreateMetalakeRequest is the body of POST /api/metalakes.
type CreateMetalakeRequest struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// Owner is the user name of the metalake's owner; empty: the caller.
	Owner string `json:"owner,omitempty"`
}

// CreateTagRequest is the body of POST …/tags.
type CreateTagRequest struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// AllowedValues, when present, are the values an assignment may carry
	// (empty: none, a valueless tag); absent: any value.
	AllowedValues *[]string `json:"allowedValues,omitempty"`
}

// CreatePolicyRequest is the body of POST …/policies.
type CreatePolicyRequest struct {
	Name       string `json:"name"`
	Comment    string `json:"comment,omitempty"`
	PolicyType string `json:"policyType"`
	// Enabled is true when absent.
	Enabled *bool `json:"enabled,omitempty"`
	// Content is a catalog.PolicyContent as the caller wrote it: the server
	// reads it as strictly as the body (no unknown or repeated members).
	Content json.RawMessage `json:"content,omitempty"`
}

// SetPolicyEnabledRequest is the body of PATCH …/policies/{policy}.
type SetPolicyEnabledRequest struct {
	Enable *bool `json:"enable"` // required
}

// AttachPolicyRequest is the optional body of PUT
// …/tags/{tag}/policies/{policy}: no body, {} or a null selector attach by
// the tag's presence.
type AttachPolicyRequest struct {
	Selector *SelectorRequest `json:"selector,omitempty"`
}

// SelectorRequest is an attachment's selector: {"type":"TAG_VALUE",
// "value":v} matches value v; {"type":"ALL_VALUES"} matches presence.
type SelectorRequest struct {
	Type  string  `json:"type"`
	Value *string `json:"value,omitempty"`
}

// AssociateTagsRequest is the body of POST …/objects/{type}/{fullName}/tags
// as application/json or the Gravitino v1 media type: tag names.
type AssociateTagsRequest struct {
	TagsToAdd    []string `json:"tagsToAdd,omitempty"`
	TagsToRemove []string `json:"tagsToRemove,omitempty"`
}

// AssociateTagsV2Request is that body as MediaV2: name/value pairs.
type AssociateTagsV2Request struct {
	TagsToAdd    []catalog.TagValue `json:"tagsToAdd,omitempty"`
	TagsToRemove []catalog.TagValue `json:"tagsToRemove,omitempty"`
}

// CreateDomainRequest is the body of POST …/domains.
type CreateDomainRequest struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	BackingTag *BackingTagDTO    `json:"backingTag"` // required
	Parent     string            `json:"parent,omitempty"`
}

// SetDomainStatusRequest is the body of PATCH …/domains/{domain}.
type SetDomainStatusRequest struct {
	Status *string `json:"status"` // required: draft or published, any case
}

// SetDomainParentRequest is the body of PUT …/domains/{domain}/parent.
type SetDomainParentRequest struct {
	Parent string `json:"parent"`
}

// SetDomainBackingTagRequest is the body of PUT
// …/domains/{domain}/backingTag. BackingTag is required; null removes the
// backing tag (a json.RawMessage tells absent from null).
type SetDomainBackingTagRequest struct {
	BackingTag json.RawMessage `json:"backingTag"`
}

// CreateRoleRequest is the body of POST …/roles: the role and its first
// grants.
type CreateRoleRequest struct {
	Name             string            `json:"name"`
	Properties       map[string]string `json:"properties,omitempty"`
	SecurableObjects []SecurableDTO    `json:"securableObjects,omitempty"`
}

// PrivilegesRequest is the body of PUT
// …/permissions/roles/{role}/{type}/{fullName}/grant (or /revoke). A
// privilege's name and condition are read in any case.
type PrivilegesRequest struct {
	Privileges []PrivilegeDTO `json:"privileges"`
}

// RoleNamesRequest is the body of PUT
// …/permissions/{users|groups}/{name}/grant (or /revoke).
type RoleNamesRequest struct {
	RoleNames []string `json:"roleNames"`
}

// CreatePrincipalRequest is the body of POST …/users and POST …/groups.
type CreatePrincipalRequest struct {
	Name string `json:"name"`
}

// SetOwnerRequest is the body of PUT …/owners/{type}/{fullName}: the new
// owner, its type USER or GROUP in any case.
type SetOwnerRequest = OwnerDTO

// PreviewRequest is the body of POST …/access/preview: governance
// commands applied, in order, to a discarded copy of the metalake, as the
// caller or as user As.
type PreviewRequest struct {
	As       string           `json:"as,omitempty"`
	Commands []PreviewCommand `json:"commands"`
}

// PreviewCommand is one command of a preview: the name of its catalog
// type (GrantPrivileges, AttachPolicy, …) and its body as
// catalog.EncodeCommand writes it.
type PreviewCommand struct {
	Type string          `json:"type"`
	Body json.RawMessage `json:"body"`
}
