package sqlgate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// This file and limitpass.go bound what one statement may ask of the
// engine, before the walker sees it. DuckDB's memory_limit covers what its buffer manager
// allocates (hash tables, sorts, aggregate states, materialized CTEs) but
// not the strings its expressions build, which it holds for 2,048 rows at a
// time on every thread; and it plans a statement without checking for
// interrupts, in time that grows with the cube of expression nesting and
// exponentially with nested scalar subqueries. So:
//
//   - the shape of a statement is bounded (set-operation branches, nodes,
//     nesting of expressions, queries and subqueries), which bounds the
//     engine's planning time and memory;
//   - a literal or parameter is at most LiteralBytes, and every string a
//     function builds at most StringBytes, checked here when the size
//     follows from literals and by the engine otherwise (rwRepeat and
//     rwReplace before building it, capBuilt right after);
//   - the bytes of the values a statement computes per row — a fixed cost
//     for every expression evaluated per row, plus the string bytes it
//     introduces — are at most RowBytes, so that the 2,048 rows of them the
//     engine holds per thread stay well below its memory limit.
//
// A size counts the bytes a statement introduces (literals, parameters,
// what functions build from them) and the copies of column values it holds:
// those are data the tenant stored, which a string may repeat at most
// ColumnCopies times before the engine checks it. A column of a CTE or
// derived table is as wide as its expression.

// Limits bound one statement. A zero field means its default (DefaultLimits).
type Limits struct {
	// SetOperands bounds the SELECTs combined by UNION, EXCEPT and
	// INTERSECT in one statement.
	SetOperands int
	// Nodes bounds the expression nodes of a statement: operators,
	// functions, column references, CASE branches, subqueries, query blocks
	// and table references.
	Nodes int
	// Literals bounds the literals and parameter markers of a statement (an
	// IN list, the rows of INSERT … VALUES): the engine plans each as a
	// value of its own.
	Literals int
	// ExprDepth bounds the nesting of expressions, counted as the engine
	// sees them after translation: an operator is one level, a function call
	// FuncDepth levels (translations wrap arguments in several calls), and
	// the arguments of CONCAT, GREATEST and LEAST one more level each (they
	// print as a chain). Parentheses and chains of one AND or OR do not
	// nest.
	ExprDepth int
	// JoinTables bounds the tables and derived tables of one FROM clause:
	// the engine's join planning time grows steeply beyond a few dozen.
	JoinTables int
	// QueryDepth bounds the nesting of query blocks: derived tables, CTE
	// bodies and subqueries.
	QueryDepth int
	// SubqueryDepth bounds the nesting of subqueries in expressions (scalar,
	// IN, EXISTS, ANY/ALL), whose planning time doubles with each level.
	SubqueryDepth int
	// LiteralBytes bounds a string literal, and a parameter value (checked
	// when it is bound).
	LiteralBytes int
	// StringBytes bounds the result of every function that builds a string
	// longer than its arguments: REPEAT, LPAD, RPAD, SPACE, REPLACE,
	// CONCAT, CONCAT_WS, DATE_FORMAT. It is checked at the gate when the
	// size follows from literals, and otherwise by the engine before (REPEAT,
	// REPLACE) or right after (CONCAT, CONCAT_WS) it builds the string.
	StringBytes int
	// RowBytes bounds the bytes per row of the values a statement computes:
	// every expression evaluated per row costs OperatorRowBytes (an
	// operator) or CallRowBytes (a function call, a cast, a CASE: their
	// translations hold several values), plus the string bytes it
	// introduces, and a constant the statement returns with every row its
	// size.
	RowBytes int
	// ColumnCopies bounds the copies of column values a string may be built
	// from (CONCAT of a CONCAT of … through CTEs doubles them at every
	// step); the result of a CONCAT or CONCAT_WS beyond it is checked by the
	// engine against StringBytes instead.
	ColumnCopies int
}

// Defaults of Limits. Each was chosen so that its worst case stays cheap
// for the engine (docs/security.md, Memory and statement limits) while every
// query of the dialect corpus passes.
const (
	DefaultSetOperands   = 1000
	DefaultNodes         = 3000
	DefaultLiterals      = 50000
	DefaultExprDepth     = 64
	DefaultJoinTables    = 32
	DefaultQueryDepth    = 32
	DefaultSubqueryDepth = 8
	DefaultLiteralBytes  = 64 << 10
	DefaultStringBytes   = 32 << 10
	DefaultRowBytes      = 64 << 10
	DefaultColumnCopies  = 64
)

// FuncDepth is the ExprDepth levels a function call counts: with the
// default, 16 nested calls.
const FuncDepth = 4

// The RowBytes an expression evaluated per row costs besides the strings it
// builds: the engine's value of an operator (up to a 16-byte string
// header), and the several values of a function call's translation
// (measured: 700 CASTs to CHAR of an integer over 250,000 rows hold about
// 100 bytes a row each on each thread).
const (
	OperatorRowBytes = 16
	CallRowBytes     = 128
)

// maxDepth bounds any nesting the walker follows (parentheses included), and
// so its recursion and the printer's.
const maxDepth = 1000

// DefaultLimits returns Limits with every default.
func DefaultLimits() Limits {
	return Limits{}.withDefaults()
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.SetOperands, DefaultSetOperands)
	def(&l.Nodes, DefaultNodes)
	def(&l.Literals, DefaultLiterals)
	def(&l.ExprDepth, DefaultExprDepth)
	def(&l.JoinTables, DefaultJoinTables)
	def(&l.QueryDepth, DefaultQueryDepth)
	def(&l.SubqueryDepth, DefaultSubqueryDepth)
	def(&l.LiteralBytes, DefaultLiteralBytes)
	def(&l.StringBytes, DefaultStringBytes)
	def(&l.RowBytes, DefaultRowBytes)
	def(&l.ColumnCopies, DefaultColumnCopies)
	return l
}

// limitErr is a refusal for a limit: "statement exceeds the limit of …".
func limitErr(format string, args ...any) *Error {
	return newErr(ErrorKindLimit, "statement exceeds the limit of "+format, args...)
}

// engineLimitMarker starts the message of every limit the engine checks:
// DuckDB reports error('<text>') as "Invalid Input Error: <text>".
const engineLimitMarker = "sqlgate: statement exceeds the limit of "

// EngineLimit recognises the engine's error for a limit the gate made it
// check (a string built by REPEAT or REPLACE, …) and returns it as an
// ErrLimit *Error with the same message; ok is false for any other message.
func EngineLimit(msg string) (*Error, bool) {
	rest, ok := strings.CutPrefix(msg, "Invalid Input Error: "+engineLimitMarker)
	if !ok {
		return nil, false
	}
	rest, _, _ = strings.Cut(rest, "\n")
	return &Error{Kind: ErrorKindLimit, Msg: engineLimitMarker + rest}, true
}

// ParamLimit is the refusal of a parameter value longer than LiteralBytes
// (n counts from 1); the engine checks it when it binds the value.
func ParamLimit(n, limit int) *Error {
	return limitErr("%d bytes for a string (parameter %d)", limit, n)
}

// stringLimitMsg names the string limit for what a function builds.
func stringLimitMsg(limit int, fn string) string {
	return fmt.Sprintf("%d bytes for a string %s builds", limit, fn)
}

// engineCheck prints error('<limit message>') for the engine to raise.
func engineCheck(limit int, fn string) string {
	return "error('" + engineLimitMarker + stringLimitMsg(limit, fn) + "')"
}

// ---- checks while walking (printed into the statement) ----

// rwRepeat: REPEAT(s, n). With literal arguments the gate checked the size
// (limitPass); otherwise the engine checks len(s) × n against StringBytes
// before building the string.
func (w *walker) rwRepeat(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	s, sok := textLit(args[0])
	n, nok := intLit(args[1])
	if sok && nok {
		return &callExpr{name: "repeat", args: args}, nil
	}
	limit := strconv.Itoa(w.stringBytes())
	check := engineCheck(w.stringBytes(), "REPEAT")
	if sok {
		if len(s) == 0 {
			return &callExpr{name: "repeat", args: args}, nil
		}
		// len(s) is known: compare n with limit / len(s).
		return letx(args[1:], func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN (CAST(", r[0], " AS BIGINT) > "+strconv.Itoa(w.stringBytes()/len(s))+") THEN "+check+" ELSE repeat(", args[0], ", ", r[0], ") END")
		}), nil
	}
	if nok {
		if n <= 1 {
			return &callExpr{name: "repeat", args: args}, nil // no longer than s
		}
		return letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN (strlen(", r[0], ") > "+strconv.FormatInt(int64(w.stringBytes())/n, 10)+") THEN "+check+" ELSE repeat(", r[0], ", ", args[1], ") END")
		}), nil
	}
	// len(s) × n > limit ⟺ len(s) > limit // n for n ≥ 1 (no overflow).
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN ((CAST(", r[1], " AS BIGINT) > 1) AND (strlen(", r[0], ") > ("+limit+" // CAST(", r[1], " AS BIGINT)))) THEN "+check+" ELSE repeat(", r[0], ", ", r[1], ") END")
	}), nil
}

// rwReplace: REPLACE(s, from, to) grows s when to is longer than from. The
// engine checks the exact size of the result — len(s) plus the growth of
// each occurrence, counted by what is left of s without them — before
// building it. A REPLACE that cannot grow (or whose size the gate checked)
// prints as is.
func (w *walker) rwReplace(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	_, sok := textLit(args[0])
	from, fok := textLit(args[1])
	to, tok := textLit(args[2])
	if fok && tok && (len(to) <= len(from) || from == "" || sok) {
		return &callExpr{name: "replace", args: args}, nil
	}
	limit := strconv.Itoa(w.stringBytes())
	check := engineCheck(w.stringBytes(), "REPLACE")
	if fok && tok {
		grow := strconv.Itoa(len(to) - len(from))
		return letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN ((strlen(", r[0], ") + (((strlen(", r[0], ") - strlen(replace(", r[0], ", ", args[1], ", ''))) // "+strconv.Itoa(len(from))+") * "+grow+")) > "+limit+") THEN "+check+" ELSE replace(", r[0], ", ", args[1], ", ", args[2], ") END")
		}), nil
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN ((strlen(", r[1], ") > 0) AND (strlen(", r[2], ") > strlen(", r[1], ")) AND ((strlen(", r[0], ") + (((strlen(", r[0], ") - strlen(replace(", r[0], ", ", r[1], ", ''))) // strlen(", r[1], ")) * (strlen(", r[2], ") - strlen(", r[1], ")))) > "+limit+")) THEN "+check+" ELSE replace(", r[0], ", ", r[1], ", ", r[2], ") END")
	}), nil
}

// limitedCall prints the calls whose result size the engine must check:
// REPEAT and REPLACE always (rwRepeat, rwReplace); the functions of
// growsInRecursion in a recursive CTE, and where checkLimits found more than
// ColumnCopies copies of column values. ok is false for any other call.
func (w *walker) limitedCall(x *ast.FuncCallExpr, name string, spec fnSpec, args []ast.ExprNode) (ast.ExprNode, bool, error) {
	var n ast.ExprNode
	var err error
	switch {
	case name == "repeat" && len(args) == 2:
		n, err = w.rwRepeat(spec.duck, args)
	case name == "replace" && len(args) == 3:
		n, err = w.rwReplace(spec.duck, args)
	case growsInRecursion[name] && (w.recursive > 0 || w.checked.capped[x]):
		if spec.rw != nil {
			n, err = spec.rw(spec.duck, args)
		} else {
			n = &callExpr{name: spec.duck, args: args, dbl: spec.double()}
		}
		if err == nil {
			n = w.capBuilt(strings.ToUpper(name), n)
		}
	default:
		return nil, false, nil
	}
	return n, true, err
}

// capBuilt makes the engine refuse a string e longer than StringBytes once
// built, for a CONCAT or CONCAT_WS whose size the gate cannot bound: in a
// recursive CTE (where a string can double with every step), of parameters,
// or of column values doubled through CTEs. The string is built before it is
// checked: it is as long as its arguments together, each of them bounded
// (by StringBytes or LiteralBytes, or ColumnCopies copies of stored values).
func (w *walker) capBuilt(fn string, e ast.ExprNode) ast.ExprNode {
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (strlen(", r[0], ") > "+strconv.Itoa(w.stringBytes())+") THEN "+engineCheck(w.stringBytes(), fn)+" ELSE ", r[0], " END")
	})
}

// growsInRecursion lists the functions that join their arguments (or, for
// the aggregates, rows) into one string: fed their own result by a recursive
// CTE, or a column doubled through CTEs, they grow a string without bound,
// so there the engine checks their result (capBuilt). REPEAT and REPLACE
// are checked anyway; LPAD, RPAD and SPACE build at most their literal
// length.
var growsInRecursion = map[string]bool{"concat": true, "concat_ws": true, "group_concat": true, "json_arrayagg": true,
	"json_array": true, "json_object": true, "json_quote": true}

func (w *walker) stringBytes() int {
	if w.checked.lim.StringBytes > 0 {
		return w.checked.lim.StringBytes
	}
	return DefaultStringBytes
}
