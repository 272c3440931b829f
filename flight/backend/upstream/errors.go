package upstream

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/flight/backend"
)

// Errors returned by the Pool for targets and configuration. Failures of the
// engine itself are *Error values wrapping backend sentinels.
var (
	// ErrNotAllowed reports a target address or an endpoint location that
	// is not in Config.Allow. Nothing was sent to it.
	ErrNotAllowed = errors.New("upstream: address not allowed")
	// ErrInvalidTarget reports a malformed Target: an address that is not
	// host:port with a port in 1..65535, or a credentials name that is not
	// a plain file name.
	ErrInvalidTarget = errors.New("upstream: invalid target")
	// ErrCredentials reports that a credentials file could not be used:
	// missing, unreadable, not a regular file, too large, empty, or not a
	// token. The error names the file, never its content.
	ErrCredentials = errors.New("upstream: credentials unusable")
	// ErrNoSchema reports that the engine described no result schema for a
	// statement without being asked to run it (no GetExecuteSchema and no
	// schema in its FlightInfo).
	ErrNoSchema = errors.New("upstream: engine reported no result schema")
	// ErrClosed reports a call on a closed Pool.
	ErrClosed = errors.New("upstream: pool closed")
)

// Error is a failure of the upstream engine or of the connection to it. Its
// text names neither the engine's address nor anything the engine said: at
// most the gRPC code name.
type Error struct {
	// Op is the step that failed: "connect", "schema", "execute" or "read".
	Op string
	// Code is the gRPC code the call ended with; codes.OK when the failure
	// was not a gRPC status (an unreadable response).
	Code codes.Code
	// Err is backend.ErrUnavailable, ErrQuery, ErrResources, ErrCanceled or
	// ErrDeadline.
	Err error
}

func (e *Error) Error() string {
	var msg string
	switch e.Err {
	case backend.ErrUnavailable:
		msg = "upstream engine unavailable"
	case backend.ErrCanceled:
		msg = "query canceled"
	case backend.ErrDeadline:
		msg = "query deadline exceeded"
	default:
		if e.Code == codes.OK {
			msg = "upstream engine sent an invalid response"
		} else {
			msg = "upstream engine refused the query (" + e.Code.String() + ")"
		}
	}
	return "upstream: " + e.Op + ": " + msg
}

// Unwrap returns the backend sentinel.
func (e *Error) Unwrap() error { return e.Err }

// classify turns the error of a call made under ctx into an *Error. The
// caller's context decides first: a call that failed because ctx ended is a
// cancellation or a deadline whatever the transport said.
func classify(ctx context.Context, op string, err error) *Error {
	switch ctx.Err() {
	case context.Canceled:
		return &Error{Op: op, Code: codes.Canceled, Err: backend.ErrCanceled}
	case context.DeadlineExceeded:
		return &Error{Op: op, Code: codes.DeadlineExceeded, Err: backend.ErrDeadline}
	}
	st, ok := status.FromError(err)
	if !ok {
		return &Error{Op: op, Code: codes.OK, Err: backend.ErrQuery}
	}
	e := &Error{Op: op, Code: st.Code()}
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		// Could not connect, the connection broke or timed out, or the
		// connection was closed under the call: retrying may succeed.
		e.Err = backend.ErrUnavailable
	case codes.ResourceExhausted:
		e.Err = backend.ErrResources
	default:
		e.Err = backend.ErrQuery
	}
	return e
}

// invalid is the *Error for a response the package cannot use.
func invalid(op string) *Error {
	return &Error{Op: op, Code: codes.OK, Err: backend.ErrQuery}
}
