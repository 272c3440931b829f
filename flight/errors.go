package flight

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ingest"
	"lakegate/flight/ticket"
)

// Errors the planner returns; toStatus maps them to gRPC codes.
var (
	// errNotFound is used for missing and for denied tables alike.
	errNotFound = errors.New("not found")
	// errNotQuerier reports a principal whose role may not run SQL.
	errNotQuerier = errors.New("this principal may not run queries")
	// errBadRequest reports malformed input other than SQL.
	errBadRequest = errors.New("bad request")
	// errCanceledByClient reports a statement cancelled with CancelFlightInfo.
	errCanceledByClient = errors.New("query was cancelled")
	// errAlreadyExists reports a create of a table that exists.
	errAlreadyExists = errors.New("already exists")
	// errStale: a prepared statement that must be prepared again.
	errStale = errors.New("stale prepared statement")
	// errConflict reports a write that lost a race it cannot retry.
	errConflict = errors.New("conflict")
)

// notFoundError names an object that does not exist or is not visible to the
// caller; both cases produce the same value, so the same code and text.
type notFoundError struct {
	kind, name string
}

func (e *notFoundError) Error() string { return e.kind + " " + e.name + " does not exist" }

func (e *notFoundError) Is(target error) bool { return target == errNotFound }

// tableNotFound is the one error for a table that is missing or not granted.
func tableNotFound(schema, name string) error {
	return &notFoundError{kind: "table", name: schema + "." + name}
}

// unauthenticatedMessage is shared by every authentication failure, including
// tickets, so none can be told apart.
const unauthenticatedMessage = "unauthenticated"

// toStatus maps an error from the planner, the gate, the backend or the ticket
// ring to a gRPC status. It is the only place that chooses codes; anything not
// recognised becomes Internal with a generic message (details go to the log).
// An authorization denial (see denialReason) comes back as a *deniedStatus:
// the same status, carrying the reason to the metrics interceptor.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	st := statusOf(err)
	if reason := denialReason(err); reason != "" {
		return &deniedStatus{st: status.Convert(st), reason: reason}
	}
	return st
}

// statusOf is toStatus without the denial reason.
func statusOf(err error) error {
	var gateErr *sqlgate.Error
	switch {
	case errors.Is(err, authz.ErrUnauthenticated), errors.Is(err, ticket.ErrInvalid):
		return status.Error(codes.Unauthenticated, unauthenticatedMessage)
	case errors.Is(err, errAccessLogUnavailable):
		// The access log cannot keep the statement's event (its spool is
		// full): the statement is refused before planning (fail closed),
		// with nothing of the log's own error.
		return status.Error(codes.Unavailable, errAccessLogUnavailable.Error())
	case errors.As(err, new(*errReadOnly)):
		// The same answer whether the table exists or not.
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, errNotFound), errors.Is(err, backend.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, errNotQuerier):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, errAlreadyExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, errStale):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, errConflict), errors.Is(err, backend.ErrVersionConflict):
		return status.Error(codes.Aborted, "the table changed during the write; retry")
	case errors.Is(err, backend.ErrPolicyConflict):
		// The table is named (the caller may read it), the policies not.
		return status.Error(codes.FailedPrecondition, strings.TrimPrefix(err.Error(), "backend: ")+"; ask its owner")
	case errors.As(err, new(*policyError)):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, backend.ErrForbidden):
		return status.Error(codes.PermissionDenied, "permission denied")
	case errors.Is(err, backend.ErrRefused):
		return status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "backend: "))
	case errors.Is(err, backend.ErrUnavailable):
		return status.Error(codes.Unavailable, "the engine is unavailable; retry")
	case errors.Is(err, backend.ErrCatalogUnavailable):
		return status.Error(codes.Unavailable, "the metadata service is unavailable; retry")
	case errors.Is(err, ingest.ErrUnsupportedType), errors.Is(err, ingest.ErrMalformed):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, sqlgate.ErrLimit) && errors.As(err, &gateErr):
		// A statement limit, from the gate or checked by the engine: the
		// message names the limit (and never a value).
		return status.Error(codes.ResourceExhausted, gateErr.Msg)
	case errors.As(err, &gateErr):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, errBadRequest):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, backend.ErrMemoryBudget):
		return status.Error(codes.ResourceExhausted, "the server's memory is held by other queries; retry")
	case errors.Is(err, errCanceledByClient), errors.Is(err, backend.ErrCanceled), errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "query was cancelled")
	case errors.Is(err, backend.ErrDeadline), errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "query exceeded its deadline")
	case errors.Is(err, ticket.ErrTooLarge):
		return status.Error(codes.InvalidArgument, "statement too large")
	case errors.Is(err, errTooManySessions), errors.Is(err, errTooManyPrepared):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, errTooManyQueries):
		return status.Error(codes.ResourceExhausted, errTooManyQueries.Error())
	case errors.Is(err, backend.ErrResources):
		return status.Error(codes.ResourceExhausted, "query exceeded the engine's resource limits")
	case errors.Is(err, backend.ErrQuery):
		// The backend scrubs paths and physical names; drop its package
		// prefix and say in MySQL's words what MySQL has words for.
		return status.Error(codes.InvalidArgument, mysqlMessage(strings.TrimPrefix(err.Error(), "backend: ")))
	default:
		return status.Error(codes.Internal, "internal error")
	}
}

// errTooManySessions reports that the session table is full.
var errTooManySessions = errors.New("too many open sessions")

// isInternal reports whether st is an Internal status (worth logging).
func isInternal(st error) bool {
	s, ok := status.FromError(st)
	return ok && s.Code() == codes.Internal
}

// errTooManyPrepared reports that a principal has too many open statements.
var errTooManyPrepared = errors.New("too many open prepared statements")

// Denial reasons: the values of the reason label of
// lakegate_authz_denials_total. Clients never see them; they get the same
// answer whatever the reason (see notFoundError).
const (
	// reasonUnauthenticated: a missing, malformed or unknown credential.
	reasonUnauthenticated = "unauthenticated"
	// reasonNamespace: the local gate refused: a schema outside the
	// principal's namespace grants, or a role that may not run SQL.
	reasonNamespace = "namespace"
	// reasonPrivilege: the catalog refused: a table it reports unavailable
	// (missing and forbidden are the same answer), or a forbidden operation.
	reasonPrivilege = "privilege"
	// reasonTenant: a catalog other than the session's (ingest naming
	// another catalog).
	reasonTenant = "tenant"
	// reasonPolicyConflict: the policies applying to a table conflict.
	reasonPolicyConflict = "policy_conflict"
	// reasonTicket: a ticket or prepared statement handle that does not open
	// (forged, expired, retired key, or another principal's).
	reasonTicket = "ticket"
)

// denialReasons lists every reason, in documentation order.
var denialReasons = [...]string{reasonUnauthenticated, reasonNamespace, reasonPrivilege, reasonTenant, reasonPolicyConflict, reasonTicket}

// deniedError marks err as an authorization denial for reason, decided
// where the error is made. It changes neither the text nor, through
// toStatus, the code the client sees.
type deniedError struct {
	reason string
	err    error
}

func (e *deniedError) Error() string { return e.err.Error() }
func (e *deniedError) Unwrap() error { return e.err }

// deny marks err as a denial for reason (one of denialReasons).
func deny(reason string, err error) error { return &deniedError{reason: reason, err: err} }

// denialReason classifies err: the reason given to deny where the decision
// was made wins; errors that are denials by nature are classified by kind;
// anything else ("") is not a denial.
func denialReason(err error) string {
	var (
		d  *deniedError
		nf *notFoundError
	)
	switch {
	case errors.As(err, &d):
		return d.reason
	case errors.Is(err, authz.ErrUnauthenticated):
		return reasonUnauthenticated
	case errors.Is(err, ticket.ErrInvalid):
		return reasonTicket
	case errors.Is(err, backend.ErrPolicyConflict), errors.As(err, new(*policyError)):
		return reasonPolicyConflict
	case errors.Is(err, backend.ErrForbidden):
		return reasonPrivilege
	case errors.Is(err, errNotQuerier):
		return reasonNamespace
	case errors.As(err, &nf) && nf.kind == catalogKind:
		return reasonTenant
	}
	return ""
}

// catalogKind is the notFoundError kind of a catalog name other than the
// default one: every tenant sees only its own catalog under that name.
const catalogKind = "catalog"

// deniedStatus is what toStatus returns for a denial. To gRPC and to
// clients it is exactly the plain status (GRPCStatus, Error and errors.Is
// all answer as the status does); the reason is only read by the metrics
// interceptor.
type deniedStatus struct {
	st     *status.Status
	reason string
}

func (e *deniedStatus) Error() string              { return e.st.Err().Error() }
func (e *deniedStatus) GRPCStatus() *status.Status { return e.st }
func (e *deniedStatus) Unwrap() error              { return e.st.Err() }

// policyError refuses a statement because of the policy of a table it reads:
// the row filter or a mask cannot be applied to the table's columns, or
// (explain) EXPLAIN would print them. The message names the table, never an
// expression: the caller may not be allowed to read the policy.
type policyError struct {
	table   string
	explain bool
	err     error // why the policy could not be prepared (logged, not shown)
}

func (e *policyError) Error() string {
	if e.explain {
		return "EXPLAIN is not available for table " + e.table + ": a row filter or column mask applies to you"
	}
	return "a row filter or column mask on table " + e.table + " cannot be applied to its columns; ask its owner"
}

func (e *policyError) Unwrap() error { return e.err }

// withheld hides the engine's message of a failed query that reads a table
// through a policy: it could quote a filter or mask expression, or a value
// from a row the filter hides. The error class ("Conversion Error") stays.
// A message naming one of the gate's internal relations or names (a table's
// storage relation, a renamed CTE) is withheld the same way, whatever the
// statement reads: those names are the gateway's, not the client's.
func withheld(tables []backend.TableVersion, err error) error {
	if err == nil || !errors.Is(err, backend.ErrQuery) ||
		!slices.ContainsFunc(tables, func(v backend.TableVersion) bool { return v.Policy != nil }) && !namesInternals(err.Error()) {
		return err
	}
	class := "error"
	msg := strings.TrimPrefix(err.Error(), "backend: query failed: ")
	if i := strings.Index(msg, " Error:"); i > 0 && i < 40 && !strings.ContainsAny(msg[:i], "'\"\n") {
		class = msg[:i] + " Error"
	}
	return fmt.Errorf("%w: %s (details withheld: the statement reads a table through a row filter or column mask)", backend.ErrQuery, class)
}

// internalNames are markers of names the engine sees and clients never
// write: the schemas of table relations and of the empty default, the
// prefixes of renamed CTEs and of the gate's own aliases, and the
// relation of a table version (v_ and its storage id).
var internalNames = regexp.MustCompile(`(?i)lg_rel|lg_empty|__lg|__cte|\bv_[0-9a-f]{16,}`)

// namesInternals reports whether an engine message names something of the
// gateway's own (internalNames).
func namesInternals(msg string) bool { return internalNames.MatchString(msg) }

// engineMessages rewrite the engine's messages that MySQL has its own
// words for (its error texts, with the engine's names and values in
// them); the engine's candidates and hints are not kept. Messages the gate
// can check first (unknown columns: sqlgate.Statement.CheckColumns) reach
// this only where the gate could not tell.
var engineMessages = []struct {
	re  *regexp.Regexp
	out func(m []string) string
}{
	{regexp.MustCompile(`^Binder Error: Referenced column "([^"]*)" not found`), func(m []string) string {
		return "Unknown column '" + m[1] + "'"
	}},
	{regexp.MustCompile(`^Binder Error: Table "([^"]*)" does not have a column named "([^"]*)"`), func(m []string) string {
		return "Unknown column '" + m[1] + "." + m[2] + "'"
	}},
	{regexp.MustCompile(`^Binder Error: Referenced table "([^"]*)" not found`), func(m []string) string {
		return "Unknown table '" + m[1] + "'"
	}},
	{regexp.MustCompile(`^Binder Error: Ambiguous reference to column name "([^"]*)"`), func(m []string) string {
		return "Column '" + m[1] + "' is ambiguous"
	}},
	{regexp.MustCompile(`^Binder Error: Ambiguous reference to table "([^"]*)"`), func(m []string) string {
		return "Not unique table/alias: '" + m[1] + "'"
	}},
	{regexp.MustCompile(`^Binder Error: column "([^"]*)" must appear in the GROUP BY clause`), func(m []string) string {
		return "'" + m[1] + "' isn't in GROUP BY"
	}},
	{regexp.MustCompile(`^Binder Error: (ORDER|GROUP BY) term out of range`), func(m []string) string {
		if m[1] == "ORDER" {
			return "Unknown column position in 'order clause'"
		}
		return "Unknown column position in 'group statement'"
	}},
	{regexp.MustCompile(`^Binder Error: (?:WHERE|GROUP BY|JOIN|HAVING) clause cannot contain aggregates`), func([]string) string {
		return "Invalid use of group function"
	}},
	{regexp.MustCompile(`^Binder Error: Set operations can only apply to expressions with the same number of result columns`), func([]string) string {
		return "The used SELECT statements have a different number of columns"
	}},
	{regexp.MustCompile(`^Binder Error: No function matches the given name and argument types '([^'(]*)\(([^']*)\)'`), func(m []string) string {
		what := "function " + m[1]
		if !funcNameRE.MatchString(m[1]) {
			what = "operator " + m[1]
		}
		var types []string
		for _, t := range strings.Split(m[2], ", ") {
			if t != "" {
				types = append(types, mysqlTypeWord(t))
			}
		}
		return "Incorrect argument types (" + strings.Join(types, ", ") + ") to " + what + "; CAST the arguments"
	}},
	{regexp.MustCompile(`^Conversion Error: Could not convert string '(.*)' to ([A-Z0-9_]+)`), func(m []string) string {
		return "Truncated incorrect " + mysqlTypeWord(m[2]) + " value: '" + m[1] + "'"
	}},
	{regexp.MustCompile(`^Out of Range Error: Overflow in \w+ of ([A-Z0-9_]+) \((.*)\)!?$`), func(m []string) string {
		return mysqlTypeWord(m[1]) + " value is out of range in '(" + m[2] + ")'"
	}},
}

// mysqlMessage rewrites an engine message ("query failed: <Class> Error:
// …") that MySQL has words for (engineMessages); any other is returned as
// it is.
func mysqlMessage(msg string) string {
	body, ok := strings.CutPrefix(msg, "query failed: ")
	if !ok {
		return msg
	}
	for _, e := range engineMessages {
		if m := e.re.FindStringSubmatch(body); m != nil {
			return e.out(m)
		}
	}
	return msg
}

// funcNameRE matches a function name (an operator is anything else).
var funcNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// mysqlTypeWord names an engine type as MySQL's messages do.
func mysqlTypeWord(t string) string {
	switch t {
	case "INTEGER_LITERAL":
		return "INTEGER"
	case "STRING_LITERAL", "VARCHAR":
		return "VARCHAR"
	case "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS":
		return "DATETIME"
	case "INT8", "TINYINT":
		return "TINYINT"
	case "INT16", "SMALLINT":
		return "SMALLINT"
	case "INT32", "INTEGER":
		return "INTEGER"
	case "INT64", "BIGINT":
		return "BIGINT"
	case "UINT8", "UINT16", "UINT32", "UINT64", "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT":
		return "BIGINT UNSIGNED"
	case "FLOAT", "DOUBLE":
		return "DOUBLE"
	case "TIMESTAMP":
		return "DATETIME"
	}
	return t
}
