package sqlgate

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
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

// fnSpec is one allow-listed function: the DuckDB name printed for it, the
// accepted argument count (max < 0: no upper bound), and optionally rw, which
// builds the DuckDB form from the walked arguments (TIME UNIT and TRIM
// direction arguments are passed unwalked) when a rename is not enough.
type fnSpec struct {
	duck     string
	min, max int
	kind     fnKind
	rw       func(name string, args []ast.ExprNode) (ast.ExprNode, error)
	dbl      bool // MySQL's result is a DOUBLE (ROUND then rounds half to even)
}

// functions is the allow-list, keyed by the lower-case MySQL name. Extend it
// one line at a time, and only with a DuckDB form that gives MySQL's answer:
// a refusal is better than a silently different result. The rewrites (rw*)
// are in translate.go. Deliberately absent: functions reading files,
// sequences, session state or variables, and those whose MySQL result type
// depends on argument types the gate cannot see.
var functions = map[string]fnSpec{
	// scalar: numbers
	"abs":      {"abs", 1, 1, fnScalar, nil, false},
	"round":    {"round", 1, 2, fnScalar, rwRound, false},
	"floor":    {"floor", 1, 1, fnScalar, nil, false},
	"ceil":     {"ceil", 1, 1, fnScalar, nil, false},
	"ceiling":  {"ceil", 1, 1, fnScalar, nil, false},
	"truncate": {"trunc", 2, 2, fnScalar, rwTruncate, false},
	"sign":     {"sign", 1, 1, fnScalar, nil, false},
	"mod":      {"%", 2, 2, fnScalar, rwMod, false},
	"pow":      {"pow", 2, 2, fnScalar, nil, true},
	"power":    {"pow", 2, 2, fnScalar, nil, true},
	"exp":      {"exp", 1, 1, fnScalar, nil, true},
	"pi":       {"pi", 0, 0, fnScalar, nil, true},
	"rand":     {"random", 0, 0, fnScalar, nil, true},
	"sqrt":     {"sqrt", 1, 1, fnScalar, rwDomain(">= 0"), true},
	"ln":       {"ln", 1, 1, fnScalar, rwDomain("> 0"), true},
	"log10":    {"log10", 1, 1, fnScalar, rwDomain("> 0"), true},
	"log2":     {"log2", 1, 1, fnScalar, rwDomain("> 0"), true},
	"log":      {"log", 1, 2, fnScalar, rwLog, true},
	"greatest": {"greatest", 2, -1, fnScalar, rwNullIfAnyNull, false},
	"least":    {"least", 2, -1, fnScalar, rwNullIfAnyNull, false},
	// scalar: control flow and NULL
	"coalesce": {"coalesce", 1, -1, fnScalar, nil, false},
	"nullif":   {"nullif", 2, 2, fnScalar, nil, false},
	"ifnull":   {"ifnull", 2, 2, fnScalar, nil, false},
	"if":       {"if", 3, 3, fnScalar, nil, false},
	"isnull":   {"", 1, 1, fnScalar, rwIsNull, false},
	"field":    {"", 2, -1, fnScalar, rwField, false},
	// scalar: strings
	"lower":            {"lower", 1, 1, fnScalar, nil, false},
	"lcase":            {"lower", 1, 1, fnScalar, nil, false},
	"upper":            {"upper", 1, 1, fnScalar, nil, false},
	"ucase":            {"upper", 1, 1, fnScalar, nil, false},
	"trim":             {"trim", 1, 3, fnScalar, rwTrim, false},
	"ltrim":            {"ltrim", 1, 1, fnScalar, nil, false},
	"rtrim":            {"rtrim", 1, 1, fnScalar, nil, false},
	"substring":        {"substring", 2, 3, fnScalar, rwSubstring, false},
	"substr":           {"substring", 2, 3, fnScalar, rwSubstring, false},
	"mid":              {"substring", 3, 3, fnScalar, rwSubstring, false},
	"left":             {"left", 2, 2, fnScalar, rwLeftRight, false},
	"right":            {"right", 2, 2, fnScalar, rwLeftRight, false},
	"lpad":             {"lpad", 3, 3, fnScalar, rwPad, false},
	"rpad":             {"rpad", 3, 3, fnScalar, rwPad, false},
	"replace":          {"replace", 3, 3, fnScalar, nil, false},
	"reverse":          {"reverse", 1, 1, fnScalar, nil, false},
	"repeat":           {"repeat", 2, 2, fnScalar, nil, false},
	"space":            {"", 1, 1, fnScalar, rwSpace, false},
	"concat":           {"", 1, -1, fnScalar, rwConcat, false},
	"concat_ws":        {"concat_ws", 2, -1, fnScalar, rwConcatWS, false},
	"locate":           {"", 2, 2, fnScalar, rwLocate(false), false},
	"position":         {"", 2, 2, fnScalar, rwLocate(false), false},
	"instr":            {"", 2, 2, fnScalar, rwLocate(true), false},
	"substring_index":  {"", 3, 3, fnScalar, rwSubstringIndex, false},
	"length":           {"strlen", 1, 1, fnScalar, nil, false},
	"octet_length":     {"strlen", 1, 1, fnScalar, nil, false},
	"char_length":      {"length", 1, 1, fnScalar, nil, false},
	"character_length": {"length", 1, 1, fnScalar, nil, false},
	"ascii":            {"", 1, 1, fnScalar, rwASCII, false},
	"char_func":        {"", 2, 2, fnScalar, rwChar, false},
	"md5":              {"md5", 1, 1, fnScalar, nil, false},
	"sha1":             {"sha1", 1, 1, fnScalar, nil, false},
	"sha":              {"sha1", 1, 1, fnScalar, nil, false},
	"format":           {"", 2, 2, fnScalar, rwFormat, false},
	"uuid":             {"", 0, 0, fnScalar, rwUUID, false},
	"json_extract":     {"json_extract", 2, 2, fnScalar, rwJSON, false},
	"json_unquote":     {"json_extract_string", 1, 1, fnScalar, rwJSONUnquote, false},
	"any_value":        {"any_value", 1, 1, fnScalar, nil, false}, // aggregated queries only (walk.go)
	// scalar: dates and times (the engine runs in UTC)
	"year":                     {"year", 1, 1, fnScalar, nil, false},
	"month":                    {"month", 1, 1, fnScalar, nil, false},
	"day":                      {"day", 1, 1, fnScalar, nil, false},
	"dayofmonth":               {"day", 1, 1, fnScalar, nil, false},
	"hour":                     {"hour", 1, 1, fnScalar, nil, false},
	"minute":                   {"minute", 1, 1, fnScalar, nil, false},
	"second":                   {"second", 1, 1, fnScalar, nil, false},
	"quarter":                  {"quarter", 1, 1, fnScalar, nil, false},
	"dayofyear":                {"dayofyear", 1, 1, fnScalar, nil, false},
	"dayname":                  {"dayname", 1, 1, fnScalar, nil, false},
	"monthname":                {"monthname", 1, 1, fnScalar, nil, false},
	"last_day":                 {"last_day", 1, 1, fnScalar, nil, false},
	"dayofweek":                {"", 1, 1, fnScalar, rwTmpl("(dayofweek(", 0, ") + 1)"), false},
	"weekday":                  {"", 1, 1, fnScalar, rwTmpl("(isodow(", 0, ") - 1)"), false},
	"week":                     {"", 1, 1, fnScalar, rwTmpl("CAST(strftime(", 0, ", '%U') AS INTEGER)"), false},
	"date":                     {"", 1, 1, fnScalar, rwTmpl("CAST(", 0, " AS DATE)"), false},
	"unix_timestamp":           {"epoch", 1, 1, fnScalar, nil, false},
	"from_unixtime":            {"", 1, 1, fnScalar, rwTmpl("CAST(to_timestamp(", 0, ") AS TIMESTAMP)"), false},
	"curdate":                  {"", 0, 0, fnScalar, rwTmpl("current_date"), false},
	"current_date":             {"", 0, 0, fnScalar, rwTmpl("current_date"), false},
	"now":                      {"", 0, 0, fnScalar, rwTmpl("CAST(date_trunc('second', current_timestamp) AS TIMESTAMP)"), false},
	"current_timestamp":        {"", 0, 0, fnScalar, rwTmpl("CAST(date_trunc('second', current_timestamp) AS TIMESTAMP)"), false},
	"datediff":                 {"", 2, 2, fnScalar, rwTmpl("date_diff('day', CAST(", 1, " AS DATE), CAST(", 0, " AS DATE))"), false},
	"date_format":              {"", 2, 2, fnScalar, rwDateFormat, false},
	"str_to_date":              {"", 2, 2, fnScalar, rwStrToDate, false},
	"date_add":                 {"", 3, 3, fnScalar, rwDateAdd(false), false},
	"adddate":                  {"", 3, 3, fnScalar, rwDateAdd(false), false},
	"date_sub":                 {"", 3, 3, fnScalar, rwDateAdd(true), false},
	"subdate":                  {"", 3, 3, fnScalar, rwDateAdd(true), false},
	"timestampdiff":            {"", 3, 3, fnScalar, rwTimestampDiff, false},
	"extract":                  {"", 2, 2, fnScalar, rwExtract, false},
	"'tidb`.(dateliteral":      {"", 1, 1, fnScalar, rwTypedLiteral("DATE"), false},
	"'tidb`.(timestampliteral": {"", 1, 1, fnScalar, rwTypedLiteral("TIMESTAMP"), false},
	// aggregate
	"count":         {"count", 1, -1, fnAggregate, nil, false},
	"sum":           {"sum", 1, 1, fnAggregate, nil, false},
	"avg":           {"avg", 1, 1, fnAggregate, nil, false},
	"min":           {"min", 1, 1, fnAggregate, nil, false},
	"max":           {"max", 1, 1, fnAggregate, nil, false},
	"stddev_pop":    {"stddev_pop", 1, 1, fnAggregate, nil, true},
	"stddev":        {"stddev_pop", 1, 1, fnAggregate, nil, true},
	"std":           {"stddev_pop", 1, 1, fnAggregate, nil, true},
	"stddev_samp":   {"stddev_samp", 1, 1, fnAggregate, nil, true},
	"var_pop":       {"var_pop", 1, 1, fnAggregate, nil, true},
	"variance":      {"var_pop", 1, 1, fnAggregate, nil, true},
	"var_samp":      {"var_samp", 1, 1, fnAggregate, nil, true},
	"bit_and":       {"bit_and", 1, 1, fnAggregate, nil, false},
	"bit_or":        {"bit_or", 1, 1, fnAggregate, nil, false},
	"bit_xor":       {"bit_xor", 1, 1, fnAggregate, nil, false},
	"group_concat":  {"string_agg", 2, -1, fnAggregate, nil, false},
	"json_arrayagg": {"string_agg", 1, 1, fnAggregate, nil, false},
	// window
	"row_number":   {"row_number", 0, 0, fnWindow, nil, false},
	"rank":         {"rank", 0, 0, fnWindow, nil, false},
	"dense_rank":   {"dense_rank", 0, 0, fnWindow, nil, false},
	"lag":          {"lag", 1, 3, fnWindow, nil, false},
	"lead":         {"lead", 1, 3, fnWindow, nil, false},
	"first_value":  {"first_value", 1, 1, fnWindow, nil, false},
	"last_value":   {"last_value", 1, 1, fnWindow, nil, false},
	"nth_value":    {"nth_value", 2, 2, fnWindow, nil, false},
	"ntile":        {"ntile", 1, 1, fnWindow, nil, false},
	"percent_rank": {"percent_rank", 0, 0, fnWindow, nil, true},
	"cume_dist":    {"cume_dist", 0, 0, fnWindow, nil, true},
}

// lookupFunc returns the spec for name if it is allowed in a position that
// accepts the given kinds.
func lookupFunc(name string, nargs int, kinds ...fnKind) (fnSpec, error) {
	spec, ok := lookupMore(name)
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
			return "UBIGINT", nil
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
