package api

import "lakegate/catalog"

// Bodies of REST writes (what a caller sends) and the answers that are not
// one object. The create bodies' optional fields carry omitempty so that a
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
