package sqlgate

import "fmt"

// ErrorKind classifies a gate refusal. ErrorKindLimit means ResourceExhausted
// to clients, every other kind InvalidArgument; the message is user-facing.
type ErrorKind int

// Error kinds, one per sentinel below.
const (
	ErrorKindSyntax ErrorKind = iota + 1
	ErrorKindUnsupported
	ErrorKindTooLarge
	ErrorKindNoSchema
	ErrorKindLimit
	ErrorKindUnknownColumn
)

// Error is a refusal of client SQL. Msg is user-facing and starts with
// "sqlgate: ". errors.Is matches an *Error against the sentinel of its Kind.
type Error struct {
	Kind ErrorKind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is reports whether target is an *Error of the same Kind (the sentinels are).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind
}

// Sentinels for errors.Is. Every error returned by Parse is an *Error matching
// exactly one of them.
var (
	// ErrSyntax: the text is not one well-formed statement (empty, NUL byte,
	// invalid UTF-8, parse error, several statements, bad identifier).
	ErrSyntax = &Error{Kind: ErrorKindSyntax, Msg: "sqlgate: syntax error"}
	// ErrUnsupported: well-formed, but the statement kind, a clause, a
	// function, an operator, a literal or a cast is not on the allow-list.
	ErrUnsupported = &Error{Kind: ErrorKindUnsupported, Msg: "sqlgate: unsupported statement"}
	// ErrTooLarge: the text is longer than Config.MaxSQLBytes.
	ErrTooLarge = &Error{Kind: ErrorKindTooLarge, Msg: "sqlgate: statement too large"}
	// ErrNoSchema: an unqualified table name and no default schema.
	ErrNoSchema = &Error{Kind: ErrorKindNoSchema, Msg: "sqlgate: no schema selected"}
	// ErrLimit: the statement exceeds one of the Limits (limits.go) — at
	// Parse, or when the engine runs it (EngineLimit). The message names the
	// limit.
	ErrLimit = &Error{Kind: ErrorKindLimit, Msg: "sqlgate: statement exceeds a limit"}
	// ErrUnknownColumn: a column reference no table of the statement has
	// (CheckColumns, columns.go); the message is MySQL's ("Unknown column 'x' in
	// 'field list'").
	ErrUnknownColumn = &Error{Kind: ErrorKindUnknownColumn, Msg: "sqlgate: unknown column"}
)

func newErr(k ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: "sqlgate: " + fmt.Sprintf(format, args...)}
}

func syntaxErr(format string, args ...any) *Error {
	return newErr(ErrorKindSyntax, format, args...)
}

func unsupported(format string, args ...any) *Error {
	return newErr(ErrorKindUnsupported, format, args...)
}
