package backend

import (
	"context"
	"errors"
)

// Errors returned by a Catalog besides ErrNotFound (a table that is missing
// or that the caller may not use, indistinguishably).
var (
	// ErrPolicyConflict reports that the policies applying to the caller on
	// a table disagree (two row filters, two masks on a column). The
	// statement must be refused.
	ErrPolicyConflict = errors.New("backend: conflicting policies")
	// ErrVersionConflict reports a commit whose base version is no longer
	// the table's current version.
	ErrVersionConflict = errors.New("backend: version conflict")
	// ErrExists reports a table that already exists.
	ErrExists = errors.New("backend: table exists")
	// ErrCatalogUnavailable reports that the catalog could not be reached or
	// did not answer in time.
	ErrCatalogUnavailable = errors.New("backend: catalog unavailable")
	// ErrForbidden reports a write the caller may not make on a table it may
	// see.
	ErrForbidden = errors.New("backend: forbidden")
	// ErrRefused reports a request the catalog refused as invalid, such as a
	// write into a catalog whose tables hold no data here (an upstream
	// catalog). Its message is the catalog's and safe to show.
	ErrRefused = errors.New("backend: refused")
)

// Caller is who a Catalog call is made for: the end user's tenant and
// principal id, and the catalog the session uses.
type Caller struct {
	Tenant  string
	Subject string
	Catalog string
}

// TableRef is one table reference of a statement and whether the statement
// writes it.
type TableRef struct {
	Name  TableName
	Write bool
	// Version asks for that retained version instead of the current one
	// (0); a version that is gone resolves like a missing table.
	Version uint64
}

// Listing is what a caller may see of a catalog.
type Listing struct {
	// Schemas the caller may see, sorted (including empty ones).
	Schemas []string
	// Tables the caller may read, sorted by schema then name; Files unset.
	Tables []TableVersion
}

// Commit is a new version of a table written by the caller.
type Commit struct {
	Name TableName
	// Base is the version the write builds on (0 with Create).
	Base uint64
	// Create makes a new table whose first version is Files.
	Create bool
	// Replace makes Files the whole new version; otherwise they are
	// appended to Base's files.
	Replace   bool
	StorageID string // with Create: the new table's storage id
	Columns   []Column
	Files     []DataFile
}

// Governance is the governance side of the gateway: it resolves and authorizes
// a caller's table references, lists what the caller may see, and commits
// writes. Every decision is taken for the caller (the end user), never for
// the gateway. Implementations are safe for use from multiple goroutines.
type Governance interface {
	// List returns what the caller may see. The listing's slices may be
	// shared with other callers: never modify them.
	List(ctx context.Context, c Caller) (Listing, error)
	// Resolve returns, in order, the current version of every reference the
	// caller may use (read, or write when Write is set), and nil for every
	// other one: a missing table and a forbidden one are both nil. The
	// versions' slices and policies may be shared with other callers
	// (decisions reused at the same generation): never modify them.
	Resolve(ctx context.Context, c Caller, refs []TableRef) ([]*TableVersion, error)
	// Commit records a new version and returns its number. A stale Base
	// fails with ErrVersionConflict, an existing table on Create with
	// ErrExists; nothing changes on failure.
	Commit(ctx context.Context, c Caller, cm Commit) (uint64, error)
	// Drop drops a table; false if it did not exist (or is not visible).
	Drop(ctx context.Context, c Caller, name TableName) (bool, error)
	// Generation returns the tenant's current governance generation: it
	// moves with every change to the tenant's catalog, so an authorization
	// taken at the same generation still holds.
	Generation(ctx context.Context, tenant string) (uint64, error)
}
