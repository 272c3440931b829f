package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Gravitino error codes of the envelope (0 is success).
const (
	CodeIllegalArgument = 1001
	CodeInternal        = 1002
	CodeNotFound        = 1003
	CodeAlreadyExists   = 1004
	CodeNonEmpty        = 1005
	CodeUnsupported     = 1006
	CodeForbidden       = 1008
	CodeInUse           = 1010
	CodeUnauthorized    = 1011
	// CodeConcurrentModification: a table version commit whose base is not
	// the table's current version.
	CodeConcurrentModification = 1012
)

// ErrorBody is Gravitino's error envelope, the body of every error answer
// of the REST and internal APIs (never with a stack).
type ErrorBody struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Sentinels errors.Is matches an *Error against (by HTTP status, and for
// 409 by code). A client's failover errors wrap ErrUnavailable too.
var (
	// ErrUnauthenticated: HTTP 401, the token is unknown.
	ErrUnauthenticated = errors.New("metasrv client: unauthenticated")
	// ErrForbidden: HTTP 403 (e.g. a tenant outside the token's
	// delegate_tenants, or a write the subject may see but not do).
	ErrForbidden = errors.New("metasrv client: forbidden")
	// ErrNotFound: HTTP 404, missing or invisible to the caller.
	ErrNotFound = errors.New("metasrv client: not found")
	// ErrBadRequest: HTTP 400 or 413.
	ErrBadRequest = errors.New("metasrv client: bad request")
	// ErrUnavailable: HTTP 503, or no node could be reached. For a write
	// it may mean that the outcome is unknown.
	ErrUnavailable = errors.New("metasrv client: unavailable")
	// ErrAlreadyExists: HTTP 409 with code 1004.
	ErrAlreadyExists = errors.New("metasrv client: already exists")
	// ErrVersionConflict: HTTP 409 with code 1012, a version commit whose
	// base is not the table's current version; nothing was changed.
	ErrVersionConflict = errors.New("metasrv client: version conflict")
)

// Error is a non-2xx answer of metasrv as its callers see it.
type Error struct {
	Status  int    // HTTP status
	Code    int    // Gravitino code (1001, 1003, 1008, …); 0 when the body had none
	Type    string // Gravitino exception type, e.g. NoSuchDomainException
	Message string // metasrv's message
}

// Error reads "message (HTTP 404 Not Found, NotFoundException 1003)".
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	if e.Type != "" {
		return fmt.Sprintf("%s (HTTP %d %s, %s %d)", msg, e.Status, http.StatusText(e.Status), e.Type, e.Code)
	}
	return fmt.Sprintf("%s (HTTP %d %s)", msg, e.Status, http.StatusText(e.Status))
}

// Is matches the sentinel for the status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrUnauthenticated:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrBadRequest:
		return e.Status == http.StatusBadRequest || e.Status == http.StatusRequestEntityTooLarge
	case ErrUnavailable:
		return e.Status == http.StatusServiceUnavailable
	case ErrAlreadyExists:
		return e.Status == http.StatusConflict && e.Code == CodeAlreadyExists
	case ErrVersionConflict:
		return e.Status == http.StatusConflict && e.Code == CodeConcurrentModification
	}
	return false
}

// DecodeError decodes the error answer body of HTTP status: the envelope's
// code, type and message, or the cluster endpoints' {"error": …} as the
// message. Nothing else of the body is kept, so a body that is not an
// envelope leaves Message empty: a caller that shows answers only to its
// own operator may fill it from the body.
func DecodeError(status int, body []byte) *Error {
	e := &Error{Status: status}
	var env struct {
		ErrorBody
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil {
		e.Code, e.Type, e.Message = env.Code, env.Type, env.Message
		if e.Message == "" {
			e.Message = env.Error
		}
	}
	return e
}
