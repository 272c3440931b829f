package catalog

import (
	"errors"
	"strings"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them (test with errors.Is); metasrv maps each to one Gravitino error code.
var (
	// ErrInvalidName reports a name that violates the naming rules; the error
	// is a *NameError.
	ErrInvalidName = errors.New("catalog: invalid name")
	// ErrInvalidArgument reports a command or request that breaks a rule
	// (bad value, unbindable privilege, ALLOW and DENY together, …).
	ErrInvalidArgument = errors.New("catalog: invalid argument")
	// ErrNotFound reports a missing object, or one the caller may not see.
	ErrNotFound = errors.New("catalog: not found")
	// ErrAlreadyExists reports a duplicate name or an existing association.
	ErrAlreadyExists = errors.New("catalog: already exists")
	// ErrNonEmpty reports a drop of a catalog or schema that still has
	// children, without cascade.
	ErrNonEmpty = errors.New("catalog: not empty")
	// ErrForbidden reports an actor that may not run a command.
	ErrForbidden = errors.New("catalog: forbidden")
	// ErrInUse reports a drop refused because something references the
	// target; for roles the error is an *InUseError naming the policies.
	ErrInUse = errors.New("catalog: in use")
	// ErrConflictingPolicies reports two different row filters on one table,
	// or two different masks on one column, applying to one caller. Callers
	// must refuse the query (fail closed).
	ErrConflictingPolicies = errors.New("catalog: conflicting policies")
	// ErrInvalidCommand reports command bytes that cannot be decoded: bad
	// envelope, unknown version or type, unknown fields.
	ErrInvalidCommand = errors.New("catalog: invalid command")
	// ErrInvalidSnapshot reports snapshot bytes that cannot be restored.
	ErrInvalidSnapshot = errors.New("catalog: invalid snapshot")
	// ErrVersionConflict reports a CommitTableVersion whose base is not the
	// table's current version: another commit came first. The caller may
	// re-read the table, rebase its change and retry.
	ErrVersionConflict = errors.New("catalog: version conflict")
)

// NameError describes a rejected name.
type NameError struct {
	Name   string // the rejected name (may be long; printed quoted, truncated)
	Reason string // the rule violated
}

func (e *NameError) Error() string {
	n := e.Name
	if len(n) > 64 {
		n = n[:64] + "…"
	}
	return ErrInvalidName.Error() + " " + quote(n) + ": " + e.Reason
}

// Unwrap returns ErrInvalidName.
func (e *NameError) Unwrap() error { return ErrInvalidName }

// Error describes a failed command or lookup: the operation, its target and
// the cause, which wraps one of the sentinels.
type Error struct {
	Op     string // command operation, e.g. "CreateTable"
	Target string // target object, e.g. "table c.s.t"; may be empty
	Err    error  // the cause; wraps a sentinel
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("catalog: ")
	b.WriteString(e.Op)
	if e.Target != "" {
		b.WriteString(" ")
		b.WriteString(e.Target)
	}
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(e.Err.Error(), "catalog: "))
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// InUseError reports a role that cannot be dropped because enabled policies
// name it.
type InUseError struct {
	Role     string
	Policies []string // sorted
}

func (e *InUseError) Error() string {
	return ErrInUse.Error() + ": role " + quote(e.Role) + " is named by enabled policies " + strings.Join(quoteAll(e.Policies), ", ")
}

// Unwrap returns ErrInUse.
func (e *InUseError) Unwrap() error { return ErrInUse }

func quote(s string) string { return `"` + s + `"` }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}

// errf wraps a sentinel with a detail message.
type detailError struct {
	err    error
	detail string
}

func (e *detailError) Error() string { return e.err.Error() + ": " + e.detail }
func (e *detailError) Unwrap() error { return e.err }

func errf(sentinel error, detail string) error { return &detailError{sentinel, detail} }
