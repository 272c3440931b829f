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
	dbl      bool    // MySQL's result is a DOUBLE (ROUND then rounds half to even)
	ret      retRule // MySQL's result type, for the type pass (types.go)
}

// functions is the allow-list, keyed by the lower-case MySQL name. Extend it
// one line at a time, and only with a DuckDB form that gives MySQL's answer:
// a refusal is better than a silently different result. The rewrites (rw*)
// are in translate.go. Deliberately absent: functions reading files,
// sequences, session state or variables, and those whose MySQL result type
// depends on argument types the gate cannot see.
var functions = map[string]fnSpec{
	// scalar: numbers
	"abs":      {"abs", 1, 1, fnScalar, nil, false, retArg0},
	"round":    {"round", 1, 2, fnScalar, rwRound, false, retTyped},
	"floor":    {"floor", 1, 1, fnScalar, nil, false, retFloor},
	"ceil":     {"ceil", 1, 1, fnScalar, nil, false, retFloor},
	"ceiling":  {"ceil", 1, 1, fnScalar, nil, false, retFloor},
	"truncate": {"trunc", 2, 2, fnScalar, rwTruncate, false, retTyped},
	"sign":     {"sign", 1, 1, fnScalar, nil, false, retInt},
	"mod":      {"%", 2, 2, fnScalar, rwMod, false, retUnknown},
	"pow":      {"pow", 2, 2, fnScalar, nil, true, retDouble},
	"power":    {"pow", 2, 2, fnScalar, nil, true, retDouble},
	"exp":      {"exp", 1, 1, fnScalar, nil, true, retDouble},
	"pi":       {"pi", 0, 0, fnScalar, nil, true, retDouble},
	"rand":     {"random", 0, 0, fnScalar, nil, true, retDouble},
	"sqrt":     {"sqrt", 1, 1, fnScalar, rwDomain(">= 0"), true, retDouble},
	"ln":       {"ln", 1, 1, fnScalar, rwDomain("> 0"), true, retDouble},
	"log10":    {"log10", 1, 1, fnScalar, rwDomain("> 0"), true, retDouble},
	"log2":     {"log2", 1, 1, fnScalar, rwDomain("> 0"), true, retDouble},
	"log":      {"log", 1, 2, fnScalar, rwLog, true, retDouble},
	"greatest": {"greatest", 2, -1, fnScalar, rwNullIfAnyNull, false, retUnify},
	"least":    {"least", 2, -1, fnScalar, rwNullIfAnyNull, false, retUnify},
	// scalar: control flow and NULL
	"coalesce": {"coalesce", 1, -1, fnScalar, nil, false, retUnify},
	"nullif":   {"nullif", 2, 2, fnScalar, nil, false, retArg0},
	"ifnull":   {"ifnull", 2, 2, fnScalar, nil, false, retUnify},
	"if":       {"if", 3, 3, fnScalar, nil, false, retUnify12},
	"isnull":   {"", 1, 1, fnScalar, rwIsNull, false, retBool},
	"field":    {"", 2, -1, fnScalar, rwField, false, retInt},
	// scalar: strings
	"lower":            {"lower", 1, 1, fnScalar, nil, false, retString},
	"lcase":            {"lower", 1, 1, fnScalar, nil, false, retString},
	"upper":            {"upper", 1, 1, fnScalar, nil, false, retString},
	"ucase":            {"upper", 1, 1, fnScalar, nil, false, retString},
	"trim":             {"trim", 1, 3, fnScalar, rwTrim, false, retString},
	"ltrim":            {"ltrim", 1, 1, fnScalar, nil, false, retString},
	"rtrim":            {"rtrim", 1, 1, fnScalar, nil, false, retString},
	"substring":        {"substring", 2, 3, fnScalar, rwSubstring, false, retString},
	"substr":           {"substring", 2, 3, fnScalar, rwSubstring, false, retString},
	"mid":              {"substring", 3, 3, fnScalar, rwSubstring, false, retString},
	"left":             {"left", 2, 2, fnScalar, rwLeftRight, false, retString},
	"right":            {"right", 2, 2, fnScalar, rwLeftRight, false, retString},
	"lpad":             {"lpad", 3, 3, fnScalar, rwPad, false, retString},
	"rpad":             {"rpad", 3, 3, fnScalar, rwPad, false, retString},
	"replace":          {"replace", 3, 3, fnScalar, nil, false, retString},
	"reverse":          {"reverse", 1, 1, fnScalar, nil, false, retString},
	"repeat":           {"repeat", 2, 2, fnScalar, nil, false, retString},
	"space":            {"", 1, 1, fnScalar, rwSpace, false, retString},
	"concat":           {"", 1, -1, fnScalar, rwConcat, false, retString},
	"concat_ws":        {"concat_ws", 2, -1, fnScalar, rwConcatWS, false, retString},
	"locate":           {"", 2, 2, fnScalar, rwLocate(false), false, retInt},
	"position":         {"", 2, 2, fnScalar, rwLocate(false), false, retInt},
	"instr":            {"", 2, 2, fnScalar, rwLocate(true), false, retInt},
	"substring_index":  {"", 3, 3, fnScalar, rwSubstringIndex, false, retString},
	"length":           {"strlen", 1, 1, fnScalar, nil, false, retInt},
	"octet_length":     {"strlen", 1, 1, fnScalar, nil, false, retInt},
	"char_length":      {"length", 1, 1, fnScalar, nil, false, retInt},
	"character_length": {"length", 1, 1, fnScalar, nil, false, retInt},
	"ascii":            {"", 1, 1, fnScalar, rwASCII, false, retInt},
	"char_func":        {"", 2, 2, fnScalar, rwChar, false, retString},
	"md5":              {"md5", 1, 1, fnScalar, nil, false, retString},
	"sha1":             {"sha1", 1, 1, fnScalar, nil, false, retString},
	"sha":              {"sha1", 1, 1, fnScalar, nil, false, retString},
	"format":           {"", 2, 2, fnScalar, rwFormat, false, retString},
	"uuid":             {"", 0, 0, fnScalar, rwUUID, false, retString},
	"json_extract":     {"json_extract", 2, 2, fnScalar, rwJSON, false, retUnknown},
	"json_unquote":     {"json_extract_string", 1, 1, fnScalar, rwJSONUnquote, false, retString},
	"any_value":        {"any_value", 1, 1, fnScalar, nil, false, retArg0}, // aggregated queries only (walk.go)
	// scalar: dates and times (the engine runs in UTC)
	"year":                     {"year", 1, 1, fnScalar, nil, false, retInt},
	"month":                    {"month", 1, 1, fnScalar, nil, false, retInt},
	"day":                      {"day", 1, 1, fnScalar, nil, false, retInt},
	"dayofmonth":               {"day", 1, 1, fnScalar, nil, false, retInt},
	"hour":                     {"hour", 1, 1, fnScalar, nil, false, retInt},
	"minute":                   {"minute", 1, 1, fnScalar, nil, false, retInt},
	"second":                   {"second", 1, 1, fnScalar, nil, false, retInt},
	"quarter":                  {"quarter", 1, 1, fnScalar, nil, false, retInt},
	"dayofyear":                {"dayofyear", 1, 1, fnScalar, nil, false, retInt},
	"dayname":                  {"dayname", 1, 1, fnScalar, nil, false, retString},
	"monthname":                {"monthname", 1, 1, fnScalar, nil, false, retString},
	"last_day":                 {"last_day", 1, 1, fnScalar, nil, false, retDate},
	"dayofweek":                {"", 1, 1, fnScalar, rwTmpl("(dayofweek(", 0, ") + 1)"), false, retInt},
	"weekday":                  {"", 1, 1, fnScalar, rwTmpl("(isodow(", 0, ") - 1)"), false, retInt},
	"week":                     {"", 1, 1, fnScalar, rwTmpl("CAST(strftime(", 0, ", '%U') AS INTEGER)"), false, retInt},
	"date":                     {"", 1, 1, fnScalar, rwTmpl("CAST(", 0, " AS DATE)"), false, retDate},
	"unix_timestamp":           {"epoch", 1, 1, fnScalar, rwUnixTime, false, retTyped},
	"from_unixtime":            {"", 1, 1, fnScalar, rwTmpl("CAST(to_timestamp(", 0, ") AS TIMESTAMP)"), false, retDatetime},
	"curdate":                  {"", 0, 0, fnScalar, rwTmpl("current_date"), false, retDate},
	"current_date":             {"", 0, 0, fnScalar, rwTmpl("current_date"), false, retDate},
	"now":                      {"", 0, 0, fnScalar, rwTmpl("CAST(date_trunc('second', current_timestamp) AS TIMESTAMP)"), false, retDatetime},
	"current_timestamp":        {"", 0, 0, fnScalar, rwTmpl("CAST(date_trunc('second', current_timestamp) AS TIMESTAMP)"), false, retDatetime},
	"datediff":                 {"", 2, 2, fnScalar, rwTmpl("date_diff('day', CAST(", 1, " AS DATE), CAST(", 0, " AS DATE))"), false, retInt},
	"date_format":              {"", 2, 2, fnScalar, rwDateFormat, false, retString},
	"str_to_date":              {"", 2, 2, fnScalar, rwStrToDate, false, retUnknown},
	"date_add":                 {"", 3, 3, fnScalar, rwDateAdd(false), false, retUnknown},
	"adddate":                  {"", 3, 3, fnScalar, rwDateAdd(false), false, retUnknown},
	"date_sub":                 {"", 3, 3, fnScalar, rwDateAdd(true), false, retUnknown},
	"subdate":                  {"", 3, 3, fnScalar, rwDateAdd(true), false, retUnknown},
	"timestampdiff":            {"", 3, 3, fnScalar, rwTimestampDiff, false, retInt},
	"extract":                  {"", 2, 2, fnScalar, rwExtract, false, retInt},
	"'tidb`.(dateliteral":      {"", 1, 1, fnScalar, rwTypedLiteral("DATE"), false, retDate},
	"'tidb`.(timestampliteral": {"", 1, 1, fnScalar, rwTypedLiteral("TIMESTAMP"), false, retDatetime},
	// aggregate
	"count":         {"count", 1, -1, fnAggregate, nil, false, retInt},
	"sum":           {"sum", 1, 1, fnAggregate, nil, false, retTyped},
	"avg":           {"avg", 1, 1, fnAggregate, nil, false, retTyped},
	"min":           {"min", 1, 1, fnAggregate, nil, false, retArg0},
	"max":           {"max", 1, 1, fnAggregate, nil, false, retArg0},
	"stddev_pop":    {"stddev_pop", 1, 1, fnAggregate, nil, true, retDouble},
	"stddev":        {"stddev_pop", 1, 1, fnAggregate, nil, true, retDouble},
	"std":           {"stddev_pop", 1, 1, fnAggregate, nil, true, retDouble},
	"stddev_samp":   {"stddev_samp", 1, 1, fnAggregate, nil, true, retDouble},
	"var_pop":       {"var_pop", 1, 1, fnAggregate, nil, true, retDouble},
	"variance":      {"var_pop", 1, 1, fnAggregate, nil, true, retDouble},
	"var_samp":      {"var_samp", 1, 1, fnAggregate, nil, true, retDouble},
	"bit_and":       {"bit_and", 1, 1, fnAggregate, nil, false, retInt},
	"bit_or":        {"bit_or", 1, 1, fnAggregate, nil, false, retInt},
	"bit_xor":       {"bit_xor", 1, 1, fnAggregate, nil, false, retInt},
	"group_concat":  {"string_agg", 2, -1, fnAggregate, nil, false, retString},
	"json_arrayagg": {"string_agg", 1, 1, fnAggregate, nil, false, retString},
	// window
	"row_number":   {"row_number", 0, 0, fnWindow, nil, false, retInt},
	"rank":         {"rank", 0, 0, fnWindow, nil, false, retInt},
	"dense_rank":   {"dense_rank", 0, 0, fnWindow, nil, false, retInt},
	"lag":          {"lag", 1, 3, fnWindow, nil, false, retUnknown},
	"lead":         {"lead", 1, 3, fnWindow, nil, false, retUnknown},
	"first_value":  {"first_value", 1, 1, fnWindow, nil, false, retArg0},
	"last_value":   {"last_value", 1, 1, fnWindow, nil, false, retArg0},
	"nth_value":    {"nth_value", 2, 2, fnWindow, nil, false, retArg0},
	"ntile":        {"ntile", 1, 1, fnWindow, nil, false, retInt},
	"percent_rank": {"percent_rank", 0, 0, fnWindow, nil, true, retDouble},
	"cume_dist":    {"cume_dist", 0, 0, fnWindow, nil, true, retDouble},
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
	case mysql.TypeDuration:
		if d := tp.GetDecimal(); d > 0 && d != types.UnspecifiedLength {
			return "", unsupported("CAST to TIME(%d) is not supported", d)
		}
		return "TIME", nil
	case mysql.TypeJSON:
		// MySQL prints JSON normalised (", ", ": "), DuckDB compactly.
		return "", unsupported("CAST to json is not supported")
	}
	return "", unsupported("CAST to %s is not supported", types.TypeStr(tp.GetType()))
}
