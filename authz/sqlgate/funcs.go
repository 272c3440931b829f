package sqlgate

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/types"
)

// fnKind says where a function may appear.
type fnKind uint8

const (
	fnScalar    fnKind = iota + 1
	fnAggregate        // plain aggregate; also allowed with OVER (...)
	fnWindow           // only with OVER (...)
)

// fnSpec is one allow-listed function: the DuckDB name printed for it and the
// accepted argument count (max < 0: no upper bound).
type fnSpec struct {
	duck     string
	min, max int
	kind     fnKind
}

// functions is the allow-list, keyed by the lower-case MySQL name. Extend it
// one line at a time, and only with a DuckDB function that gives MySQL's
// answer: a refusal is better than a silently different result. Deliberately
// absent: CONCAT (NULL semantics), GREATEST/LEAST (DuckDB ignores NULLs),
// two-argument TRIM (MySQL strips a string, DuckDB a character set), time
// functions (session time zone), anything reading files, sequences or state.
var functions = map[string]fnSpec{
	// scalar
	"abs":              {"abs", 1, 1, fnScalar},
	"round":            {"round", 1, 2, fnScalar},
	"floor":            {"floor", 1, 1, fnScalar},
	"ceil":             {"ceil", 1, 1, fnScalar},
	"ceiling":          {"ceil", 1, 1, fnScalar},
	"coalesce":         {"coalesce", 1, -1, fnScalar},
	"nullif":           {"nullif", 2, 2, fnScalar},
	"ifnull":           {"ifnull", 2, 2, fnScalar},
	"if":               {"if", 3, 3, fnScalar},
	"lower":            {"lower", 1, 1, fnScalar},
	"lcase":            {"lower", 1, 1, fnScalar},
	"upper":            {"upper", 1, 1, fnScalar},
	"ucase":            {"upper", 1, 1, fnScalar},
	"trim":             {"trim", 1, 1, fnScalar},
	"ltrim":            {"ltrim", 1, 1, fnScalar},
	"rtrim":            {"rtrim", 1, 1, fnScalar},
	"substring":        {"substring", 2, 3, fnScalar},
	"substr":           {"substring", 2, 3, fnScalar},
	"replace":          {"replace", 3, 3, fnScalar},
	"length":           {"strlen", 1, 1, fnScalar},
	"char_length":      {"length", 1, 1, fnScalar},
	"character_length": {"length", 1, 1, fnScalar},
	"year":             {"year", 1, 1, fnScalar},
	"month":            {"month", 1, 1, fnScalar},
	"day":              {"day", 1, 1, fnScalar},
	"dayofmonth":       {"day", 1, 1, fnScalar},
	// aggregate
	"count": {"count", 1, 1, fnAggregate},
	"sum":   {"sum", 1, 1, fnAggregate},
	"avg":   {"avg", 1, 1, fnAggregate},
	"min":   {"min", 1, 1, fnAggregate},
	"max":   {"max", 1, 1, fnAggregate},
	// window
	"row_number": {"row_number", 0, 0, fnWindow},
	"rank":       {"rank", 0, 0, fnWindow},
	"dense_rank": {"dense_rank", 0, 0, fnWindow},
}

// lookupFunc returns the spec for name if it is allowed in a position that
// accepts the given kinds.
func lookupFunc(name string, nargs int, kinds ...fnKind) (fnSpec, error) {
	spec, ok := functions[name]
	if ok {
		ok = false
		for _, k := range kinds {
			if spec.kind == k {
				ok = true
			}
		}
	}
	if !ok {
		return fnSpec{}, unsupported("function %s is not supported", quoteFuncName(name))
	}
	if nargs < spec.min || spec.max >= 0 && nargs > spec.max {
		return fnSpec{}, unsupported("function %q does not take %d arguments", name, nargs)
	}
	return spec, nil
}

// quoteFuncName names a refused function for the message; the parser's
// internal names for literal syntax are reported as what the user wrote.
func quoteFuncName(name string) string {
	switch name {
	case "'tidb`.(dateliteral", "'tidb`.(timeliteral", "'tidb`.(timestampliteral":
		return "DATE/TIME/TIMESTAMP literal"
	}
	for i := 0; i < len(name); i++ {
		if !isIdentByte(name[i]) {
			return "(unnamed)"
		}
	}
	return fmt.Sprintf("%q", name)
}

// castType maps the target of CAST/CONVERT to a DuckDB type name. Only types
// whose conversion gives MySQL's answer are accepted.
func castType(tp *types.FieldType) (string, error) {
	switch tp.GetType() {
	case mysql.TypeLonglong:
		if mysql.HasUnsignedFlag(tp.GetFlag()) {
			return "", unsupported("CAST to UNSIGNED is not supported")
		}
		return "BIGINT", nil
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
		if tp.GetCharset() == "binary" {
			return "", unsupported("CAST to BINARY is not supported")
		}
		if tp.GetFlen() != types.UnspecifiedLength {
			return "", unsupported("CAST to CHAR(n) is not supported")
		}
		return "VARCHAR", nil
	case mysql.TypeNewDecimal:
		p, s := tp.GetFlen(), tp.GetDecimal()
		if p == types.UnspecifiedLength {
			p = 10
		}
		if s == types.UnspecifiedLength {
			s = 0
		}
		if p < 1 || p > 38 || s < 0 || s > p {
			return "", unsupported("CAST to DECIMAL(%d,%d) is not supported (precision 1 to 38)", p, s)
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", p, s), nil
	case mysql.TypeDate:
		return "DATE", nil
	case mysql.TypeDatetime:
		return "TIMESTAMP", nil
	case mysql.TypeDouble:
		return "DOUBLE", nil
	}
	return "", unsupported("CAST to %s is not supported", types.TypeStr(tp.GetType()))
}
