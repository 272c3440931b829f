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

// fnSpec is one row of the function table: the DuckDB name printed for it,
// the accepted argument count (max < 0: no upper bound), where it may
// appear, optionally rw, which builds the DuckDB form from the walked
// arguments (TIME UNIT and TRIM direction arguments are passed unwalked)
// when a rename is not enough, MySQL's result type (the type pass), and the
// portable form for upstream dialects, if any. The walker, the type pass,
// the upstream dialects, the tests and the function table of
// docs/dialect.md are all driven by it.
type fnSpec struct {
	duck     string
	min, max int
	kind     fnKind
	rw       func(name string, args []ast.ExprNode) (ast.ExprNode, error)
	ret      retRule   // MySQL's result type, for the type pass (types.go)
	port     *portForm // what an upstream dialect prints; nil: refused there
}

// portForm is a function's portable form for the upstream dialects
// (dialect.go): the same MySQL semantics, untranslated: the name each
// dialect prints and the argument counts it is accepted with there. A
// SQLite name "||" prints the arguments joined with ||.
type portForm struct {
	mysql, sqlite string
	min, max      int
}

// double reports whether MySQL's result is a DOUBLE (ROUND then rounds half
// to even).
func (s fnSpec) double() bool { return s.ret == retDouble }

// functions is the allow-list, keyed by the lower-case MySQL name. Extend it
// one line at a time, and only with a DuckDB form that gives MySQL's answer:
// a refusal is better than a silently different result. The rewrites (rw*)
// are in translate.go; a row whose result type depends on its arguments'
// types beyond what ret models prints a typed node (typed.go) or is
// retUnknown. Each row needs an example in fnExamples
// (functable_internal_test.go), and docs/dialect.md's function table is
// regenerated from this one. Deliberately absent: functions reading files,
// sequences, session state or variables.
var functions = map[string]fnSpec{
	// scalar: numbers
	"abs":      {"abs", 1, 1, fnScalar, nil, retArg0, &portForm{"ABS", "abs", 1, 1}},
	"round":    {"round", 1, 2, fnScalar, rwRound, retTyped, nil},
	"floor":    {"floor", 1, 1, fnScalar, rwFloor, retTyped, nil},
	"ceil":     {"ceil", 1, 1, fnScalar, rwFloor, retTyped, nil},
	"ceiling":  {"ceil", 1, 1, fnScalar, rwFloor, retTyped, nil},
	"truncate": {"trunc", 2, 2, fnScalar, rwTruncate, retTyped, nil},
	"sign":     {"sign", 1, 1, fnScalar, nil, retInt, nil},
	"mod":      {"%", 2, 2, fnScalar, rwMod, retUnknown, nil},
	"pow":      {"pow", 2, 2, fnScalar, rwFinite, retDouble, nil},
	"power":    {"pow", 2, 2, fnScalar, rwFinite, retDouble, nil},
	"exp":      {"exp", 1, 1, fnScalar, rwFinite, retDouble, nil},
	"pi":       {"pi", 0, 0, fnScalar, nil, retDouble, nil},
	"rand":     {"random", 0, 0, fnScalar, nil, retDouble, nil},
	"sqrt":     {"sqrt", 1, 1, fnScalar, rwDomain(">= 0"), retDouble, nil},
	"ln":       {"ln", 1, 1, fnScalar, rwDomain("> 0"), retDouble, nil},
	"log10":    {"log10", 1, 1, fnScalar, rwDomain("> 0"), retDouble, nil},
	"log2":     {"log2", 1, 1, fnScalar, rwDomain("> 0"), retDouble, nil},
	"log":      {"log", 1, 2, fnScalar, rwLog, retDouble, nil},
	"greatest": {"greatest", 2, -1, fnScalar, rwNullIfAnyNull, retUnify, nil},
	"least":    {"least", 2, -1, fnScalar, rwNullIfAnyNull, retUnify, nil},
	// scalar: control flow and NULL
	"coalesce": {"coalesce", 1, -1, fnScalar, nil, retUnify, &portForm{"COALESCE", "coalesce", 1, -1}},
	"nullif":   {"nullif", 2, 2, fnScalar, nil, retArg0, &portForm{"NULLIF", "nullif", 2, 2}},
	"ifnull":   {"ifnull", 2, 2, fnScalar, nil, retUnify, &portForm{"IFNULL", "ifnull", 2, 2}},
	"if":       {"if", 3, 3, fnScalar, nil, retUnify12, nil},
	"isnull":   {"", 1, 1, fnScalar, rwIsNull, retBool, nil},
	"field":    {"", 2, -1, fnScalar, rwField, retInt, nil},
	// scalar: strings
	"lower":            {"lower", 1, 1, fnScalar, nil, retString, &portForm{"LOWER", "lower", 1, 1}},
	"lcase":            {"lower", 1, 1, fnScalar, nil, retString, nil},
	"upper":            {"upper", 1, 1, fnScalar, nil, retString, &portForm{"UPPER", "upper", 1, 1}},
	"ucase":            {"upper", 1, 1, fnScalar, nil, retString, nil},
	"trim":             {"trim", 1, 3, fnScalar, rwTrim, retString, &portForm{"TRIM", "trim", 1, 1}},
	"ltrim":            {"ltrim", 1, 1, fnScalar, nil, retString, nil},
	"rtrim":            {"rtrim", 1, 1, fnScalar, nil, retString, nil},
	"substring":        {"substring", 2, 3, fnScalar, rwSubstring, retString, &portForm{"SUBSTRING", "substr", 2, 3}},
	"substr":           {"substring", 2, 3, fnScalar, rwSubstring, retString, &portForm{"SUBSTRING", "substr", 2, 3}},
	"mid":              {"substring", 3, 3, fnScalar, rwSubstring, retString, nil},
	"left":             {"left", 2, 2, fnScalar, rwLeftRight, retString, nil},
	"right":            {"right", 2, 2, fnScalar, rwLeftRight, retString, nil},
	"lpad":             {"lpad", 3, 3, fnScalar, rwPad, retString, nil},
	"rpad":             {"rpad", 3, 3, fnScalar, rwPad, retString, nil},
	"replace":          {"replace", 3, 3, fnScalar, nil, retString, &portForm{"REPLACE", "replace", 3, 3}},
	"reverse":          {"reverse", 1, 1, fnScalar, nil, retString, nil},
	"repeat":           {"repeat", 2, 2, fnScalar, nil, retString, nil},
	"space":            {"", 1, 1, fnScalar, rwSpace, retString, nil},
	"concat":           {"", 1, -1, fnScalar, rwConcat, retString, &portForm{"CONCAT", "||", 1, -1}},
	"concat_ws":        {"concat_ws", 2, -1, fnScalar, rwConcatWS, retString, nil},
	"locate":           {"", 2, 2, fnScalar, rwLocate(false), retInt, nil},
	"position":         {"", 2, 2, fnScalar, rwLocate(false), retInt, nil},
	"instr":            {"", 2, 2, fnScalar, rwLocate(true), retInt, nil},
	"substring_index":  {"", 3, 3, fnScalar, rwSubstringIndex, retString, nil},
	"length":           {"strlen", 1, 1, fnScalar, nil, retInt, nil},
	"octet_length":     {"strlen", 1, 1, fnScalar, nil, retInt, nil},
	"char_length":      {"length", 1, 1, fnScalar, nil, retInt, &portForm{"CHAR_LENGTH", "length", 1, 1}},
	"character_length": {"length", 1, 1, fnScalar, nil, retInt, nil},
	"ascii":            {"", 1, 1, fnScalar, rwASCII, retInt, nil},
	"char_func":        {"", 2, 2, fnScalar, rwChar, retString, nil},
	"md5":              {"md5", 1, 1, fnScalar, nil, retString, nil},
	"sha1":             {"sha1", 1, 1, fnScalar, nil, retString, nil},
	"sha":              {"sha1", 1, 1, fnScalar, nil, retString, nil},
	"format":           {"", 2, 2, fnScalar, rwFormat, retString, nil},
	"uuid":             {"", 0, 0, fnScalar, rwUUID, retString, nil},
	"json_extract":     {"json_extract", 2, 2, fnScalar, rwJSONExtract, retUnknown, nil},
	"json_unquote":     {"json_extract_string", 1, 1, fnScalar, rwJSONUnquoteMore, retString, nil},
	"any_value":        {"any_value", 1, 1, fnScalar, nil, retArg0, nil}, // aggregated queries only (walk.go)
	// scalar: dates and times (the engine runs in UTC)
	"year":                     {"year", 1, 1, fnScalar, rwDatePart, retInt, nil},
	"month":                    {"month", 1, 1, fnScalar, rwDatePart, retInt, nil},
	"day":                      {"day", 1, 1, fnScalar, rwDatePart, retInt, nil},
	"dayofmonth":               {"day", 1, 1, fnScalar, rwDatePart, retInt, nil},
	"hour":                     {"hour", 1, 1, fnScalar, rwTimePart, retInt, nil},
	"minute":                   {"minute", 1, 1, fnScalar, rwTimePart, retInt, nil},
	"second":                   {"second", 1, 1, fnScalar, rwTimePart, retInt, nil},
	"quarter":                  {"quarter", 1, 1, fnScalar, rwDatePart, retInt, nil},
	"dayofyear":                {"dayofyear", 1, 1, fnScalar, rwDatePart, retInt, nil},
	"dayname":                  {"dayname", 1, 1, fnScalar, rwDatePart, retString, nil},
	"monthname":                {"monthname", 1, 1, fnScalar, rwDatePart, retString, nil},
	"last_day":                 {"last_day", 1, 1, fnScalar, rwDatePart, retDate, nil},
	"dayofweek":                {"", 1, 1, fnScalar, rwDateTmpl("DAYOFWEEK", "(dayofweek(", ") + 1)"), retInt, nil},
	"weekday":                  {"", 1, 1, fnScalar, rwDateTmpl("WEEKDAY", "(isodow(", ") - 1)"), retInt, nil},
	"week":                     {"", 1, 2, fnScalar, rwWeek, retInt, nil},
	"date":                     {"", 1, 1, fnScalar, rwDateTmpl("DATE", "CAST(", " AS DATE)"), retDate, nil},
	"unix_timestamp":           {"epoch", 0, 1, fnScalar, rwUnixTimestamp, retTyped, nil},
	"from_unixtime":            {"", 1, 2, fnScalar, rwFromUnixtime, retDatetime, nil},
	"curdate":                  {"", 0, 0, fnScalar, rwTmpl("current_date"), retDate, nil},
	"current_date":             {"", 0, 0, fnScalar, rwTmpl("current_date"), retDate, nil},
	"now":                      {"", 0, 0, fnScalar, rwTmpl("CAST(date_trunc('second', current_timestamp) AS TIMESTAMP)"), retDatetime, nil},
	"curtime":                  {"", 0, 0, fnScalar, rwTmpl(nowTime), retTime, nil},
	"current_time":             {"", 0, 0, fnScalar, rwTmpl(nowTime), retTime, nil},
	"time":                     {"", 1, 1, fnScalar, rwTime, retTime, nil},
	"current_timestamp":        {"", 0, 0, fnScalar, rwTmpl("CAST(date_trunc('second', current_timestamp) AS TIMESTAMP)"), retDatetime, nil},
	"datediff":                 {"", 2, 2, fnScalar, rwTmpl("date_diff('day', CAST(", 1, " AS DATE), CAST(", 0, " AS DATE))"), retInt, nil},
	"date_format":              {"", 2, 2, fnScalar, rwDateFormatMore, retString, nil},
	"str_to_date":              {"", 2, 2, fnScalar, rwStrToDate, retUnknown, nil},
	"date_add":                 {"", 3, 3, fnScalar, rwDateAddMore(false), retUnknown, nil},
	"adddate":                  {"", 3, 3, fnScalar, rwDateAddMore(false), retUnknown, nil},
	"date_sub":                 {"", 3, 3, fnScalar, rwDateAddMore(true), retUnknown, nil},
	"subdate":                  {"", 3, 3, fnScalar, rwDateAddMore(true), retUnknown, nil},
	"timestampdiff":            {"", 3, 3, fnScalar, rwTimestampDiff, retInt, nil},
	"extract":                  {"", 2, 2, fnScalar, rwExtractMore, retInt, nil},
	"'tidb`.(dateliteral":      {"", 1, 1, fnScalar, rwTypedLiteral("DATE"), retDate, nil},
	"'tidb`.(timestampliteral": {"", 1, 1, fnScalar, rwTypedLiteral("TIMESTAMP"), retDatetime, nil},
	"'tidb`.(timeliteral":      {"", 1, 1, fnScalar, rwTimeLiteral, retTime, nil},
	// scalar: string, regular-expression, numeric, bit, information and
	// miscellaneous functions whose rewrites are in funcs_more_string.go
	// numbers: MySQL's results are DOUBLE
	"sin":     {"sin", 1, 1, fnScalar, nil, retDouble, nil},
	"cos":     {"cos", 1, 1, fnScalar, nil, retDouble, nil},
	"tan":     {"tan", 1, 1, fnScalar, nil, retDouble, nil},
	"cot":     {"cot", 1, 1, fnScalar, nil, retDouble, nil}, // COT(0): an error in both
	"asin":    {"asin", 1, 1, fnScalar, rwUnitDomain, retDouble, nil},
	"acos":    {"acos", 1, 1, fnScalar, rwUnitDomain, retDouble, nil},
	"atan":    {"atan", 1, 2, fnScalar, rwAtan, retDouble, nil},
	"atan2":   {"atan2", 2, 2, fnScalar, rwAtan, retDouble, nil},
	"degrees": {"degrees", 1, 1, fnScalar, nil, retDouble, nil},
	"radians": {"radians", 1, 1, fnScalar, nil, retDouble, nil},
	// bits
	"bit_count": {"", 1, 1, fnScalar, rwBitCount, retInt, nil},
	// strings
	"bit_length":     {"", 1, 1, fnScalar, rwBitLength, retInt, nil},
	"ord":            {"", 1, 1, fnScalar, rwOrd, retInt, nil},
	"hex":            {"", 1, 1, fnScalar, rwHex, retString, nil},
	"unhex":          {"", 1, 1, fnScalar, rwUnhex, retUnknown, nil},
	"to_base64":      {"", 1, 1, fnScalar, rwToBase64, retString, nil},
	"from_base64":    {"", 1, 1, fnScalar, rwFromBase64, retUnknown, nil},
	"insert_func":    {"", 4, 4, fnScalar, rwInsert, retString, nil},
	"elt":            {"", 2, -1, fnScalar, rwElt, retString, nil},
	"find_in_set":    {"", 2, 2, fnScalar, rwFindInSet, retInt, nil},
	"make_set":       {"", 2, -1, fnScalar, rwMakeSet, retString, nil},
	"export_set":     {"", 3, 5, fnScalar, rwExportSet, retString, nil},
	"quote":          {"", 1, 1, fnScalar, rwQuote, retString, nil},
	"bin":            {"b", 1, 1, fnScalar, rwRadix, retString, nil},
	"oct":            {"o", 1, 1, fnScalar, rwRadix, retString, nil},
	"conv":           {"", 3, 3, fnScalar, rwConv, retString, nil},
	"crc32":          {"", 1, 1, fnScalar, rwCRC32, retInt, nil},
	"soundex":        {"", 1, 1, fnScalar, rwSoundex, retString, nil},
	"strcmp":         {"", 2, 2, fnScalar, rwStrcmp, retInt, nil},
	"sha2":           {"", 2, 2, fnScalar, rwSHA2, retString, nil},
	"regexp_like":    {"like", 2, 3, fnScalar, rwRegexp, retInt, nil},
	"regexp_substr":  {"substr", 2, 5, fnScalar, rwRegexp, retString, nil},
	"regexp_instr":   {"instr", 2, 6, fnScalar, rwRegexp, retInt, nil},
	"regexp_replace": {"replace", 3, 6, fnScalar, rwRegexp, retString, nil},
	// information
	"version":       {"", 0, 0, fnScalar, rwVersion, retString, nil},
	"charset":       {"utf8mb4", 1, 1, fnScalar, rwCharset, retString, nil},
	"collation":     {Collation, 1, 1, fnScalar, rwCharset, retString, nil},
	"coercibility":  {"", 1, 1, fnScalar, rwCoercibility, retInt, nil},
	sessionDatabase: {"", 1, 1, fnScalar, rwSessionDatabase, retUnknown, nil},
	// miscellaneous
	"inet_aton":      {"", 1, 1, fnScalar, rwInetAton, retInt, nil},
	"inet_ntoa":      {"", 1, 1, fnScalar, rwInetNtoa, retString, nil},
	"is_ipv4":        {"", 1, 1, fnScalar, rwIsIPv4, retInt, nil},
	"is_ipv6":        {"", 1, 1, fnScalar, rwIsIPv6, retInt, nil},
	"inet6_aton":     {"", 1, 1, fnScalar, rwInet6Aton, retUnknown, nil},
	"inet6_ntoa":     {"", 1, 1, fnScalar, rwInet6Ntoa, retString, nil},
	"is_ipv4_compat": {"", 1, 1, fnScalar, rwIsIPv4Form(false), retInt, nil},
	"is_ipv4_mapped": {"", 1, 1, fnScalar, rwIsIPv4Form(true), retInt, nil},
	"is_uuid":        {"", 1, 1, fnScalar, rwIsUUID, retInt, nil},
	"uuid_to_bin":    {"", 1, 2, fnScalar, rwUUIDToBin, retUnknown, nil},
	"bin_to_uuid":    {"", 1, 2, fnScalar, rwBinToUUID, retString, nil},
	"grouping":       {"grouping", 1, -1, fnScalar, nil, retInt, nil},
	// scalar: date, time and JSON functions whose rewrites are in
	// funcs_more_datetime.go and funcs_more_json.go
	"weekofyear":          {"", 1, 1, fnScalar, rwWeekOfYear, retInt, nil},
	"yearweek":            {"", 1, 2, fnScalar, rwYearWeek, retInt, nil},
	"to_days":             {"", 1, 1, fnScalar, rwToDays, retInt, nil},
	"to_seconds":          {"", 1, 1, fnScalar, rwToSeconds, retInt, nil},
	"from_days":           {"", 1, 1, fnScalar, rwFromDays, retDate, nil},
	"makedate":            {"", 2, 2, fnScalar, rwMakeDate, retDate, nil},
	"microsecond":         {"microsecond", 1, 1, fnScalar, rwTimePart, retInt, nil},
	"time_to_sec":         {"time_to_sec", 1, 1, fnScalar, rwTimePart, retUnknown, nil},
	"sec_to_time":         {"", 1, 1, fnScalar, rwSecToTime, retTime, nil},
	"maketime":            {"", 3, 3, fnScalar, rwMakeTime, retTime, nil},
	"timediff":            {"", 2, 2, fnScalar, rwTimeDiff, retTime, nil},
	"time_format":         {"", 2, 2, fnScalar, rwTimeFormat, retString, nil},
	"addtime":             {"", 2, 2, fnScalar, rwAddTime(false), retUnknown, nil},
	"subtime":             {"", 2, 2, fnScalar, rwAddTime(true), retUnknown, nil},
	"timestamp":           {"", 1, 2, fnScalar, rwTimestamp, retDatetime, nil},
	"timestampadd":        {"", 3, 3, fnScalar, rwTimestampAdd, retUnknown, nil},
	"convert_tz":          {"", 3, 3, fnScalar, rwConvertTZ, retUnknown, nil},
	"period_add":          {"", 2, 2, fnScalar, rwPeriod(true), retInt, nil},
	"period_diff":         {"", 2, 2, fnScalar, rwPeriod(false), retInt, nil},
	"utc_time":            {"", 0, 0, fnScalar, rwTmpl(nowTime), retTime, nil},
	"utc_date":            {"", 0, 0, fnScalar, rwTmpl("current_date"), retDate, nil},
	"localtime":           {"", 0, 0, fnScalar, rwTmpl(nowStamp), retDatetime, nil},
	"localtimestamp":      {"", 0, 0, fnScalar, rwTmpl(nowStamp), retDatetime, nil},
	"utc_timestamp":       {"", 0, 0, fnScalar, rwTmpl(nowStamp), retDatetime, nil},
	"sysdate":             {"", 0, 0, fnScalar, rwTmpl(nowStamp), retDatetime, nil},
	"json_valid":          {"", 1, 1, fnScalar, rwJSONValid, retInt, nil},
	"json_type":           {"", 1, 1, fnScalar, rwJSONType, retString, nil},
	"json_length":         {"", 1, 2, fnScalar, rwJSONLength, retInt, nil},
	"json_keys":           {"", 1, 2, fnScalar, rwJSONKeys, retUnknown, nil},
	"json_contains_path":  {"", 3, -1, fnScalar, rwJSONContainsPath, retInt, nil},
	"json_quote":          {"", 1, 1, fnScalar, rwJSONQuote, retUnknown, nil},
	"json_array":          {"", 0, -1, fnScalar, rwJSONArray, retUnknown, nil},
	"json_object":         {"", 0, -1, fnScalar, rwJSONObject, retUnknown, nil},
	"json_value":          {"", 2, 2, fnScalar, rwJSONValue, retUnknown, nil},
	"json_depth":          {"json_depth", 1, 1, fnScalar, rwJVDepth, retInt, nil},
	"json_pretty":         {"json_pretty", 1, 1, fnScalar, rwJVPretty, retUnknown, nil},
	"json_contains":       {"json_contains", 2, 3, fnScalar, rwJVContains, retInt, nil},
	"json_overlaps":       {"json_overlaps", 2, 2, fnScalar, rwJVOverlaps, retInt, nil},
	"json_merge_preserve": {"json_merge_preserve", 2, -1, fnScalar, rwJVMerge(false), retUnknown, nil},
	"json_merge":          {"json_merge", 2, -1, fnScalar, rwJVMerge(false), retUnknown, nil},
	"json_merge_patch":    {"json_merge_patch", 2, -1, fnScalar, rwJVMerge(true), retUnknown, nil},
	"json_set":            {"json_set", 3, -1, fnScalar, rwJVModify("json_set"), retUnknown, nil},
	"json_insert":         {"json_insert", 3, -1, fnScalar, rwJVModify("json_insert"), retUnknown, nil},
	"json_replace":        {"json_replace", 3, -1, fnScalar, rwJVModify("json_replace"), retUnknown, nil},
	"json_array_append":   {"json_array_append", 3, -1, fnScalar, rwJVModify("json_array_append"), retUnknown, nil},
	"json_array_insert":   {"json_array_insert", 3, -1, fnScalar, rwJVModify("json_array_insert"), retUnknown, nil},
	"json_remove":         {"json_remove", 2, -1, fnScalar, rwJVRemove, retUnknown, nil},
	"json_search":         {"json_search", 3, -1, fnScalar, rwJVSearch, retUnknown, nil},
	// aggregate
	"count":         {"count", 1, -1, fnAggregate, nil, retInt, &portForm{"count", "count", 1, 1}},
	"sum":           {"sum", 1, 1, fnAggregate, nil, retTyped, &portForm{"sum", "sum", 1, 1}},
	"avg":           {"avg", 1, 1, fnAggregate, nil, retTyped, &portForm{"avg", "avg", 1, 1}},
	"min":           {"min", 1, 1, fnAggregate, nil, retArg0, &portForm{"min", "min", 1, 1}},
	"max":           {"max", 1, 1, fnAggregate, nil, retArg0, &portForm{"max", "max", 1, 1}},
	"stddev_pop":    {"stddev_pop", 1, 1, fnAggregate, nil, retDouble, nil},
	"stddev":        {"stddev_pop", 1, 1, fnAggregate, nil, retDouble, nil},
	"std":           {"stddev_pop", 1, 1, fnAggregate, nil, retDouble, nil},
	"stddev_samp":   {"stddev_samp", 1, 1, fnAggregate, nil, retDouble, nil},
	"var_pop":       {"var_pop", 1, 1, fnAggregate, nil, retDouble, nil},
	"variance":      {"var_pop", 1, 1, fnAggregate, nil, retDouble, nil},
	"var_samp":      {"var_samp", 1, 1, fnAggregate, nil, retDouble, nil},
	"bit_and":       {"bit_and", 1, 1, fnAggregate, nil, retUint, nil},
	"bit_or":        {"bit_or", 1, 1, fnAggregate, nil, retUint, nil},
	"bit_xor":       {"bit_xor", 1, 1, fnAggregate, nil, retUint, nil},
	"group_concat":  {"string_agg", 2, -1, fnAggregate, nil, retString, nil},
	"json_arrayagg": {"string_agg", 1, 1, fnAggregate, nil, retString, nil},
	// window
	"row_number":   {"row_number", 0, 0, fnWindow, nil, retInt, nil},
	"rank":         {"rank", 0, 0, fnWindow, nil, retInt, nil},
	"dense_rank":   {"dense_rank", 0, 0, fnWindow, nil, retInt, nil},
	"lag":          {"lag", 1, 3, fnWindow, nil, retUnknown, nil},
	"lead":         {"lead", 1, 3, fnWindow, nil, retUnknown, nil},
	"first_value":  {"first_value", 1, 1, fnWindow, nil, retArg0, nil},
	"last_value":   {"last_value", 1, 1, fnWindow, nil, retArg0, nil},
	"nth_value":    {"nth_value", 2, 2, fnWindow, nil, retArg0, nil},
	"ntile":        {"ntile", 1, 1, fnWindow, nil, retInt, nil},
	"percent_rank": {"percent_rank", 0, 0, fnWindow, nil, retDouble, nil},
	"cume_dist":    {"cume_dist", 0, 0, fnWindow, nil, retDouble, nil},
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
