package authz

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors. Every error returned by this package wraps one of them
// (test with errors.Is). None of their messages, nor the messages of errors
// wrapping them, contain the rejected value, a token or a token hash.
var (
	// ErrUnauthenticated is the only error returned by Authenticate and
	// AuthenticateBasic; it does not say why authentication failed.
	ErrUnauthenticated = errors.New("authz: unauthenticated")
	// ErrInvalidPrincipalID reports a string that is not a valid PrincipalID.
	ErrInvalidPrincipalID = errors.New("authz: invalid principal id")
	// ErrInvalidTenantID reports a string that is not a valid TenantID.
	ErrInvalidTenantID = errors.New("authz: invalid tenant id")
	// ErrInvalidNamespace reports a string that is not a valid Namespace.
	ErrInvalidNamespace = errors.New("authz: invalid namespace")
	// ErrInvalidRole reports an unknown role name.
	ErrInvalidRole = errors.New("authz: invalid role")
	// ErrRetiredRole reports the role name "admin", which the map no
	// longer accepts (ParseRole says which roles replace it). It wraps
	// ErrInvalidRole.
	ErrRetiredRole = fmt.Errorf("%w: retired role", ErrInvalidRole)
	// ErrInvalidPrincipal reports an inconsistent principal (NewPrincipal).
	ErrInvalidPrincipal = errors.New("authz: invalid principal")
	// ErrInvalidMap reports a principal map whose content is rejected; the
	// error is a *MapError.
	ErrInvalidMap = errors.New("authz: invalid principal map")
	// ErrUnsafeMapFile reports a principal map file refused for its type,
	// permissions or size, before its content is read.
	ErrUnsafeMapFile = errors.New("authz: unsafe principal map file")
)

// MapError describes why a principal map was rejected. It never contains a
// token or a token hash.
type MapError struct {
	// Index is the position of the offending principal in the file's
	// principals list, or -1 when the error concerns the whole file.
	Index int
	// Principal is the offending principal's id when it is valid and safe to
	// print, else "".
	Principal string
	// Line is the 1-based line in the file, or 0 when unknown.
	Line int
	// Rule says which rule was violated.
	Rule string
	// Err is the underlying cause (for example ErrInvalidTenantID), or nil.
	Err error
}

func (e *MapError) Error() string {
	var b strings.Builder
	b.WriteString(ErrInvalidMap.Error())
	b.WriteString(": ")
	if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	if e.Index >= 0 {
		b.WriteString("principals[")
		b.WriteString(strconv.Itoa(e.Index))
		b.WriteString("]")
		if e.Principal != "" {
			b.WriteString(" (")
			b.WriteString(e.Principal)
			b.WriteString(")")
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Rule)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns ErrInvalidMap and, when set, the underlying cause.
func (e *MapError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidMap}
	}
	return []error{ErrInvalidMap, e.Err}
}
