package metasrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// Sentinel errors. The REST layer maps each (and catalog's) to one Gravitino
// code in writeError.
var (
	// ErrInvalidProposal: log entry bytes that cannot be decoded.
	ErrInvalidProposal = errors.New("metasrv: invalid proposal")
	// ErrBadRequest: a malformed request (body, parameters, names).
	ErrBadRequest = errors.New("metasrv: bad request")
	// ErrUnauthenticated: no or unknown credential.
	ErrUnauthenticated = errors.New("metasrv: unauthenticated")
	// ErrForbidden: the caller may not do this (and may know the target
	// exists).
	ErrForbidden = errors.New("metasrv: forbidden")
	// ErrNotFound: no such resource (or the caller may not see it).
	ErrNotFound = errors.New("metasrv: not found")
	// ErrJoinRefused: the cluster does not admit this node (Server.Join;
	// the answer was 401 or 403, so retrying changes nothing).
	ErrJoinRefused = errors.New("metasrv: join refused")
	// ErrUnsupported: an operation metasrv does not support.
	ErrUnsupported = errors.New("metasrv: unsupported operation")
	// ErrUnavailable: no leader, or a bounded wait ran out; retry.
	ErrUnavailable = errors.New("metasrv: temporarily unavailable")
)

// mapError is the one mapping from errors to Gravitino codes and HTTP
// statuses. A missing object and one the caller may not see map to the same
// answer; anything unexpected becomes 1002 with a generic message.
func mapError(err error) (status int, body api.ErrorBody) {
	if status, body, ok := mapDomainError(err); ok {
		return status, body
	}
	switch {
	case errors.Is(err, catalog.ErrVersionConflict):
		return http.StatusConflict, envelope(api.CodeConcurrentModification, "ConcurrentModificationException", err.Error())
	case errors.Is(err, catalog.ErrInvalidName), errors.Is(err, catalog.ErrInvalidArgument),
		errors.Is(err, catalog.ErrInvalidCommand), errors.Is(err, ErrBadRequest),
		errors.Is(err, authz.ErrInvalidTenantID):
		return http.StatusBadRequest, envelope(api.CodeIllegalArgument, "IllegalArgumentException", err.Error())
	case errors.Is(err, catalog.ErrNotFound), errors.Is(err, ErrNotFound):
		return http.StatusNotFound, envelope(api.CodeNotFound, "NotFoundException", err.Error())
	case errors.Is(err, catalog.ErrAlreadyExists):
		return http.StatusConflict, envelope(api.CodeAlreadyExists, "AlreadyExistsException", err.Error())
	case errors.Is(err, catalog.ErrNonEmpty):
		return http.StatusConflict, envelope(api.CodeNonEmpty, "NonEmptyException", err.Error())
	case errors.Is(err, catalog.ErrInUse):
		return http.StatusConflict, envelope(api.CodeInUse, "InUseException", err.Error())
	case errors.Is(err, ErrUnsupported):
		return http.StatusMethodNotAllowed, envelope(api.CodeUnsupported, "UnsupportedOperationException", err.Error())
	case errors.Is(err, catalog.ErrForbidden), errors.Is(err, ErrForbidden):
		return http.StatusForbidden, envelope(api.CodeForbidden, "ForbiddenException", err.Error())
	case errors.Is(err, ErrUnauthenticated):
		return http.StatusUnauthorized, envelope(api.CodeUnauthorized, "UnauthorizedException", "unauthenticated")
	case errors.Is(err, ErrUnavailable), errors.Is(err, raftnode.ErrNotLeader), errors.Is(err, raftnode.ErrNoLeader),
		errors.Is(err, raftnode.ErrOutcomeUnknown), errors.Is(err, raftnode.ErrClosed),
		errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, envelope(api.CodeInternal, "ServiceUnavailableException", "service unavailable, retry: "+err.Error())
	}
	return http.StatusInternalServerError, envelope(api.CodeInternal, "RuntimeException", "internal error")
}

// mapDomainError maps a *catalog.DomainError to the answer of its rule: NoSuchDomain and NoSuchTag 404 / 1003; DomainAlreadyExists,
// TagAlreadyExists and BackingTagAlreadyBound 409 / 1004; NonEmptyDomain
// 409 / 1005; C1–C6 400 / 1001 (the message names the rule). The type is
// the rule's Gravitino exception name.
func mapDomainError(err error) (int, api.ErrorBody, bool) {
	var de *catalog.DomainError
	if !errors.As(err, &de) {
		return 0, api.ErrorBody{}, false
	}
	msg := err.Error()
	switch de.Rule {
	case catalog.RuleNoSuchDomain, catalog.RuleNoSuchTag:
		return http.StatusNotFound, envelope(api.CodeNotFound, de.Rule+"Exception", msg), true
	case catalog.RuleDomainAlreadyExists, catalog.RuleTagAlreadyExists, catalog.RuleBackingTagAlreadyBound:
		return http.StatusConflict, envelope(api.CodeAlreadyExists, de.Rule+"Exception", msg), true
	case catalog.RuleNonEmptyDomain:
		return http.StatusConflict, envelope(api.CodeNonEmpty, de.Rule+"Exception", msg), true
	case catalog.RuleC1, catalog.RuleC2, catalog.RuleC3, catalog.RuleC4, catalog.RuleC5, catalog.RuleC6:
		return http.StatusBadRequest, envelope(api.CodeIllegalArgument, "IllegalArgumentException", msg), true
	}
	return 0, api.ErrorBody{}, false
}

// envelope is the error body of a Gravitino code, type and message.
func envelope(code int, typ, msg string) api.ErrorBody {
	return api.ErrorBody{Code: code, Type: typ, Message: msg}
}

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadRequest}, args...)...)
}

// checkMetalakeName validates a metalake name: it is a tenant id.
func checkMetalakeName(name string) error {
	if _, err := authz.ParseTenantID(name); err != nil {
		return fmt.Errorf("%w: metalake name must be a tenant id (1-64 of [A-Za-z0-9_-], alphanumeric at both ends)", ErrBadRequest)
	}
	return nil
}

// checkProperties bounds metalake properties.
func checkProperties(m map[string]string) error {
	if len(m) > 256 {
		return badRequest("more than 256 properties")
	}
	for k, v := range m {
		if k == "" || len(k) > 256 || len(v) > 4096 {
			return badRequest("property names must be 1-256 bytes and values at most 4096")
		}
	}
	return nil
}

// writeJSON writes v as the response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
