package sqlgate

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // runs every row's translation
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// fnExamples is one query per row of the function table, over ft (columns
// of every type the rows take). TestFunctionTable fails for a row without
// one, so a row is never added untested.
var fnExamples = map[string]string{
	"weekofyear": "WEEKOFYEAR(dt)", "yearweek": "YEARWEEK(dt)", "to_days": "TO_DAYS(dt)", "to_seconds": "TO_SECONDS(ts)",
	"from_days": "FROM_DAYS(739000)", "makedate": "MAKEDATE(2024, 32)", "microsecond": "MICROSECOND(ts)", "time_to_sec": "TIME_TO_SEC('10:05:03')",
	"sec_to_time": "SEC_TO_TIME(3661)", "maketime": "MAKETIME(10, 5, 3)", "timediff": "TIMEDIFF('10:05:03', '09:00:00')",
	"time_format": "TIME_FORMAT('10:05:03', '%H')", "addtime": "ADDTIME('2024-01-02 10:05:03', '01:00:00')", "subtime": "SUBTIME('2024-01-02 10:05:03', '01:00:00')",
	"timestamp": "TIMESTAMP(dt)", "timestampadd": "TIMESTAMPADD(DAY, 1, dt)", "convert_tz": "CONVERT_TZ(ts, '+00:00', '+01:00')",
	"period_add": "PERIOD_ADD(202401, 2)", "period_diff": "PERIOD_DIFF(202403, 202401)", "utc_time": "UTC_TIME()", "utc_date": "UTC_DATE()",
	"localtime": "LOCALTIME()", "localtimestamp": "LOCALTIMESTAMP()", "utc_timestamp": "UTC_TIMESTAMP()", "sysdate": "SYSDATE()",
	"json_valid": "JSON_VALID(j)", "json_type": "JSON_TYPE('[1]')", "json_length": "JSON_LENGTH('[1, 2]')", "json_keys": `JSON_KEYS('{"a": 1}')`,
	"json_contains_path": `JSON_CONTAINS_PATH('{"a": 1}', 'one', '$.a')`, "json_quote": "JSON_QUOTE(s)", "json_array": "JSON_ARRAY(n, s)",
	"json_object": "JSON_OBJECT('k', n)", "json_value": `JSON_VALUE('{"a": 1}', '$.a')`, "json_depth": "JSON_DEPTH('[1]')",
	"json_pretty": "JSON_PRETTY('[1]')", "json_contains": "JSON_CONTAINS('[1, 2]', '1')", "json_overlaps": "JSON_OVERLAPS('[1]', '[1]')",
	"json_merge_preserve": "JSON_MERGE_PRESERVE('[1]', '[2]')", "json_merge": "JSON_MERGE('[1]', '[2]')", "json_merge_patch": `JSON_MERGE_PATCH('{}', '{"a": 1}')`,
	"json_set": "JSON_SET('{}', '$.a', 1)", "json_insert": "JSON_INSERT('{}', '$.a', 1)", "json_replace": `JSON_REPLACE('{"a": 1}', '$.a', 2)`,
	"json_array_append": "JSON_ARRAY_APPEND('[1]', '$', 2)", "json_array_insert": "JSON_ARRAY_INSERT('[1]', '$[0]', 2)",
	"json_remove": "JSON_REMOVE('[1, 2]', '$[0]')", "json_search": `JSON_SEARCH('["a"]', 'one', 'a')`,
	"abs": "ABS(n)", "round": "ROUND(d, 1)", "floor": "FLOOR(d)", "ceil": "CEIL(d)", "ceiling": "CEILING(d)",
	"truncate": "TRUNCATE(d, 1)", "sign": "SIGN(n)", "mod": "MOD(n, 3)", "pow": "POW(n, 2)", "power": "POWER(n, 2)",
	"exp": "EXP(x)", "pi": "PI()", "rand": "RAND()", "sqrt": "SQRT(x)", "ln": "LN(x)", "log10": "LOG10(x)", "log2": "LOG2(x)",
	"log": "LOG(x)", "greatest": "GREATEST(n, 2)", "least": "LEAST(n, 2)",
	"coalesce": "COALESCE(s, 'z')", "nullif": "NULLIF(n, 1)", "ifnull": "IFNULL(s, 'z')", "if": "IF(n > 1, 'a', 'b')",
	"isnull": "ISNULL(s)", "field": "FIELD(s, 'a', 'b')",
	"lower": "LOWER(s)", "lcase": "LCASE(s)", "upper": "UPPER(s)", "ucase": "UCASE(s)", "trim": "TRIM(s)", "ltrim": "LTRIM(s)",
	"rtrim": "RTRIM(s)", "substring": "SUBSTRING(s, 2)", "substr": "SUBSTR(s, 2, 1)", "mid": "MID(s, 2, 1)", "left": "LEFT(s, 2)",
	"right": "RIGHT(s, 2)", "lpad": "LPAD(s, 5, '*')", "rpad": "RPAD(s, 5, '*')", "replace": "REPLACE(s, 'a', 'b')",
	"reverse": "REVERSE(s)", "repeat": "REPEAT(s, 2)", "space": "SPACE(3)", "concat": "CONCAT(s, n)", "concat_ws": "CONCAT_WS('-', s, n)",
	"locate": "LOCATE('b', s)", "position": "POSITION('b' IN s)", "instr": "INSTR(s, 'b')", "substring_index": "SUBSTRING_INDEX(s, 'b', 1)",
	"length": "LENGTH(s)", "octet_length": "OCTET_LENGTH(s)", "char_length": "CHAR_LENGTH(s)", "character_length": "CHARACTER_LENGTH(s)",
	"ascii": "ASCII(s)", "char_func": "CHAR(65)", "md5": "MD5(s)", "sha1": "SHA1(s)", "sha": "SHA(s)", "format": "FORMAT(d, 1)",
	"uuid": "UUID()", "json_extract": "JSON_EXTRACT(j, '$.a')", "json_unquote": "JSON_UNQUOTE(JSON_EXTRACT(j, '$.a'))",
	"any_value": "ANY_VALUE(s) FROM ft GROUP BY n",
	"year":      "YEAR(dt)", "month": "MONTH(dt)", "day": "DAY(dt)", "dayofmonth": "DAYOFMONTH(dt)", "hour": "HOUR(ts)",
	"minute": "MINUTE(ts)", "second": "SECOND(ts)", "quarter": "QUARTER(dt)", "dayofyear": "DAYOFYEAR(dt)", "dayname": "DAYNAME(dt)",
	"monthname": "MONTHNAME(dt)", "last_day": "LAST_DAY(dt)", "dayofweek": "DAYOFWEEK(dt)", "weekday": "WEEKDAY(dt)", "week": "WEEK(dt)",
	"date": "DATE(ts)", "unix_timestamp": "UNIX_TIMESTAMP(dt)", "from_unixtime": "FROM_UNIXTIME(n)", "curdate": "CURDATE()",
	"current_date": "CURRENT_DATE()", "now": "NOW()", "current_timestamp": "CURRENT_TIMESTAMP()", "datediff": "DATEDIFF(ts, dt)",
	"date_format": "DATE_FORMAT(dt, '%Y')", "str_to_date": "STR_TO_DATE('2024-01-02', '%Y-%m-%d')",
	"date_add": "DATE_ADD(dt, INTERVAL 1 DAY)", "adddate": "ADDDATE(dt, INTERVAL 1 MONTH)", "date_sub": "DATE_SUB(dt, INTERVAL 1 DAY)",
	"subdate": "SUBDATE(dt, INTERVAL 1 YEAR)", "timestampdiff": "TIMESTAMPDIFF(DAY, dt, ts)", "extract": "EXTRACT(YEAR FROM dt)",
	"'tidb`.(dateliteral": "DATE '2024-01-02'", "'tidb`.(timeliteral": "TIME '12:34:56'", "time": "TIME(ts)",
	"curtime": "CURTIME()", "current_time": "CURRENT_TIME()", "'tidb`.(timestampliteral": "TIMESTAMP '2024-01-02 03:04:05'",
	"sin": "SIN(x)", "cos": "COS(x)", "tan": "TAN(x)", "cot": "COT(x)", "asin": "ASIN(0.5)", "acos": "ACOS(0.5)",
	"atan": "ATAN(x)", "atan2": "ATAN2(x, 1)", "degrees": "DEGREES(x)", "radians": "RADIANS(x)", "bit_count": "BIT_COUNT(n)",
	"bit_length": "BIT_LENGTH(s)", "ord": "ORD(s)", "hex": "HEX(s)", "unhex": "UNHEX('4142')", "to_base64": "TO_BASE64(s)",
	"from_base64": "FROM_BASE64('YWJj')", "insert_func": "INSERT(s, 2, 1, 'x')", "elt": "ELT(n, 'a', 'b')",
	"find_in_set": "FIND_IN_SET('b', 'a,b')", "make_set": "MAKE_SET(n, 'a', 'b')", "export_set": "EXPORT_SET(n, 'Y', 'N', ',', 4)",
	"quote": "QUOTE(s)", "bin": "BIN(n)", "oct": "OCT(n)", "conv": "CONV('ff', 16, 10)", "crc32": "CRC32(s)",
	"soundex": "SOUNDEX(s)", "strcmp": "STRCMP(s, 'abd')", "sha2": "SHA2(s, 256)", "regexp_like": "REGEXP_LIKE(s, 'b')",
	"regexp_substr": "REGEXP_SUBSTR(s, 'b.')", "regexp_instr": "REGEXP_INSTR(s, 'c')", "regexp_replace": "REGEXP_REPLACE(s, 'b', 'x')",
	"version": "VERSION()", "charset": "CHARSET(s)", "collation": "COLLATION(s)", "coercibility": "COERCIBILITY(s)",
	sessionDatabase: "DATABASE()", "inet_aton": "INET_ATON('10.0.0.1')", "inet_ntoa": "INET_NTOA(n)", "is_ipv4": "IS_IPV4('10.0.0.1')",
	"is_ipv6": "IS_IPV6('::1')", "inet6_aton": "INET6_ATON('10.0.0.1')", "inet6_ntoa": "INET6_NTOA(INET6_ATON('10.0.0.1'))",
	"is_ipv4_compat": "IS_IPV4_COMPAT(INET6_ATON('::10.0.0.1'))", "is_ipv4_mapped": "IS_IPV4_MAPPED(INET6_ATON('::ffff:10.0.0.1'))",
	"is_uuid": "IS_UUID(s)", "uuid_to_bin": "UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db')",
	"bin_to_uuid": "BIN_TO_UUID(UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db'))",
	"grouping":    "GROUPING(n) FROM ft GROUP BY n WITH ROLLUP",
	"count":       "COUNT(s)", "sum": "SUM(n)", "avg": "AVG(d)", "min": "MIN(d)", "max": "MAX(s)", "stddev_pop": "STDDEV_POP(x)",
	"stddev": "STDDEV(x)", "std": "STD(x)", "stddev_samp": "STDDEV_SAMP(x)", "var_pop": "VAR_POP(x)", "variance": "VARIANCE(x)",
	"var_samp": "VAR_SAMP(x)", "bit_and": "BIT_AND(n)", "bit_or": "BIT_OR(n)", "bit_xor": "BIT_XOR(n)", "group_concat": "GROUP_CONCAT(s)",
	"json_arrayagg": "JSON_ARRAYAGG(s)",
	"row_number":    "ROW_NUMBER() OVER (ORDER BY n)", "rank": "RANK() OVER (ORDER BY n)", "dense_rank": "DENSE_RANK() OVER (ORDER BY n)",
	"lag": "LAG(n) OVER (ORDER BY n)", "lead": "LEAD(n) OVER (ORDER BY n)", "first_value": "FIRST_VALUE(n) OVER (ORDER BY n)",
	"last_value": "LAST_VALUE(n) OVER (ORDER BY n)", "nth_value": "NTH_VALUE(n, 1) OVER (ORDER BY n)", "ntile": "NTILE(2) OVER (ORDER BY n)",
	"percent_rank": "PERCENT_RANK() OVER (ORDER BY n)", "cume_dist": "CUME_DIST() OVER (ORDER BY n)",
}

var ftRel = Relation{
	Schema: "lg_rel", Name: "ft",
	Columns: []string{"s", "n", "d", "dt", "ts", "x", "j"},
	Types:   []string{"VARCHAR", "BIGINT", "DECIMAL(12,2)", "DATE", "TIMESTAMP", "DOUBLE", "VARCHAR"},
}

// engineClass is the MySQL type class of a DuckDB result type, as the
// function table's rules name them.
func engineClass(duck string) retRule {
	switch {
	case duck == "VARCHAR":
		return retString
	case duck == "DOUBLE":
		return retDouble
	case duck == "DATE":
		return retDate
	case duck == "TIMESTAMP":
		return retDatetime
	case duck == "TIME":
		return retTime
	case duck == "BOOLEAN":
		return retBool
	case strings.HasPrefix(duck, "U") && strings.HasSuffix(duck, "INT"):
		return retUint
	case strings.HasSuffix(duck, "INT") || strings.HasSuffix(duck, "INTEGER"):
		return retInt
	}
	return retUnknown
}

// TestFunctionTable drives every row of the function table: the arity
// bounds are refused at each end, the row's example translates and runs on
// DuckDB with the result type the row's rule gives (where it gives one),
// and an upstream dialect prints the row's portable form or refuses it
// naming the function.
func TestFunctionTable(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE SCHEMA lg_rel; CREATE TABLE lg_rel.ft AS SELECT 'abc' AS s, CAST(2 AS BIGINT) AS n, CAST(1.25 AS DECIMAL(12,2)) AS d,
		DATE '2024-01-02' AS dt, TIMESTAMP '2024-01-02 03:04:05' AS ts, CAST(2.5 AS DOUBLE) AS x, '{"a": 1}' AS j`); err != nil {
		t.Fatal(err)
	}
	g := New(Config{})
	names := make([]string, 0, len(functions))
	for name := range functions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := functions[name]
		// Arity, at each end.
		if spec.min > 0 {
			if _, err := lookupFunc(name, spec.min-1, spec.kind); err == nil || !strings.Contains(err.Error(), "does not take") {
				t.Errorf("%s with %d arguments: %v", name, spec.min-1, err)
			}
		}
		if spec.max >= 0 {
			if _, err := lookupFunc(name, spec.max+1, spec.kind); err == nil || !strings.Contains(err.Error(), "does not take") {
				t.Errorf("%s with %d arguments: %v", name, spec.max+1, err)
			}
		}
		if _, err := lookupFunc(name, max(spec.min, 0), spec.kind); err != nil {
			t.Errorf("%s with %d arguments: %v", name, spec.min, err)
		}
		ex, ok := fnExamples[name]
		if !ok {
			t.Errorf("function table row %q has no example in fnExamples", name)
			continue
		}
		q := "SELECT " + ex
		if !strings.Contains(ex, " FROM ft") {
			q += " FROM ft"
		}
		// The DuckDB translation runs, with the row's type.
		st, err := g.Parse(q, "sales")
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		rels := map[TableRef]Relation{{Schema: "sales", Name: "ft"}: ftRel}
		out, err := st.Render(rels)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		rows, err := db.Query(out)
		if err != nil {
			t.Errorf("%s: %v\n%s", q, err, out)
			continue
		}
		cts, err := rows.ColumnTypes()
		for rows.Next() {
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		// The type pass agrees with the engine, DECIMAL scale included.
		ty := &typer{info: st.types, rel: rels, memo: make(map[ast.Node]mtype)}
		if cols := ty.outputs(st.root); len(cols) != 1 || !agrees(cols[0].t, cts[0].DatabaseTypeName()) {
			t.Errorf("%s: the type pass infers %v, the engine's type is %s", q, cols, cts[0].DatabaseTypeName())
		}
		switch spec.ret {
		case retInt, retUint, retString, retDouble, retDate, retDatetime, retTime, retBool:
			if got := engineClass(cts[0].DatabaseTypeName()); got != spec.ret {
				t.Errorf("%s: the engine's type is %s, the table's rule %d", q, cts[0].DatabaseTypeName(), spec.ret)
			}
		}
		// The upstream dialects: the portable form, or a refusal naming
		// the function.
		for _, d := range []Dialect{DialectMySQL, DialectSQLite} {
			if name == "mod" {
				continue // the parser reads MOD(a, b) as a % b: portableOps
			}
			st, err := g.ParseFor(q, "sales", d)
			if spec.port == nil {
				if err == nil || !strings.Contains(err.Error(), "upstream engine") {
					t.Errorf("%s on %s: %v, want a refusal", q, d, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s on %s: %v", q, d, err)
				continue
			}
			out, err := st.Render(rels)
			want := spec.port.mysql
			if d == DialectSQLite {
				want = spec.port.sqlite
			}
			if err != nil || !strings.Contains(out, want) {
				t.Errorf("%s on %s: %q, %v; want %s", q, d, out, err, want)
			}
		}
	}
	for name := range fnExamples {
		if _, ok := functions[name]; !ok {
			t.Errorf("fnExamples has %q, which is not in the function table", name)
		}
	}
}

var updateDocs = flag.Bool("update-docs", false, "rewrite the function table of docs/dialect.md from the function table")

// docFuncName is how the docs name a row: the parser's internal names as
// the client writes them.
func docFuncName(name string) string {
	switch name {
	case "char_func":
		return "CHAR"
	case "'tidb`.(dateliteral":
		return "DATE '…'"
	case "'tidb`.(timestampliteral":
		return "TIMESTAMP '…'"
	case "'tidb`.(timeliteral":
		return "TIME '…'"
	}
	return strings.ToUpper(name)
}

// typedResults are the result types of the rows that type themselves.
var typedResults = map[string]string{
	"round":          "the argument's: DECIMAL(…,d) of a DECIMAL (half away from zero), BIGINT, DOUBLE (half to even)",
	"truncate":       "the argument's: DECIMAL(…,d) of a DECIMAL, BIGINT, DOUBLE",
	"sum":            "DECIMAL(38,0) of integers, DECIMAL(38,s) of DECIMAL(p,s), DOUBLE of DOUBLE",
	"avg":            "DECIMAL(38,s+4) of exact values (half away from zero), DOUBLE of DOUBLE",
	"unix_timestamp": "BIGINT of a DATE or DATETIME",
	"floor":          "the argument's: BIGINT of an integer and of a DECIMAL whose result has fewer than 20 digits, else DECIMAL(…,0); DOUBLE",
	"ceil":           "the argument's: BIGINT of an integer and of a DECIMAL whose result has fewer than 20 digits, else DECIMAL(…,0); DOUBLE",
	"ceiling":        "the argument's: BIGINT of an integer and of a DECIMAL whose result has fewer than 20 digits, else DECIMAL(…,0); DOUBLE",
}

var ruleResults = map[retRule]string{
	retUnknown:  "the engine's (not inferred)",
	retInt:      "BIGINT",
	retUint:     "BIGINT UNSIGNED",
	retBool:     "BOOLEAN",
	retDouble:   "DOUBLE",
	retString:   "VARCHAR",
	retDate:     "DATE",
	retDatetime: "DATETIME",
	retTime:     "TIME",
	retArg0:     "the first argument's",
	retUnify:    "the arguments' (when they have one type)",
	retUnify12:  "the second and third arguments' (when they have one type)",
}

// functionTableDoc is the function table as the docs print it.
func functionTableDoc() string {
	names := make([]string, 0, len(functions))
	for name := range functions {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return docFuncName(names[i]) < docFuncName(names[j]) })
	var b strings.Builder
	b.WriteString("| Function | Arguments | Where | MySQL result type | DuckDB | Upstream (MySQL, SQLite) |\n|---|---|---|---|---|---|\n")
	for _, name := range names {
		s := functions[name]
		args := strconv.Itoa(s.min)
		switch {
		case s.max < 0:
			args += " or more"
		case s.max != s.min:
			args += " to " + strconv.Itoa(s.max)
		}
		switch name {
		case "char_func":
			args = "1" // the parser adds the USING argument
		case "group_concat":
			args = "1 or more" // the parser adds the SEPARATOR
		}
		where := map[fnKind]string{fnScalar: "scalar", fnAggregate: "aggregate, window", fnWindow: "window"}[s.kind]
		res := ruleResults[s.ret]
		if s.ret == retTyped {
			res = typedResults[name]
		}
		duck := "rewritten (translate.go)"
		if s.rw == nil {
			duck = "`" + s.duck + "`"
		}
		up := "refused"
		if s.port != nil {
			up = "`" + s.port.mysql + "`, `" + strings.ReplaceAll(s.port.sqlite, "|", `\|`) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", docFuncName(name), args, where, res, duck, up)
	}
	return b.String()
}

const (
	docTableStart = "<!-- The table below is generated from funcs.go: go test ./authz/sqlgate -run TestFunctionTableDocumented -update-docs -->\n"
	docTableEnd   = "<!-- end of the generated table -->\n"
)

// TestFunctionTableDocumented: the function table of docs/dialect.md is the
// function table of funcs.go.
func TestFunctionTableDocumented(t *testing.T) {
	const path = "../../docs/dialect.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, docTableStart), strings.Index(doc, docTableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated function table", path)
	}
	want := functionTableDoc()
	got := doc[i+len(docTableStart) : j]
	if got == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc[:i+len(docTableStart)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the function table of %s is not funcs.go's; run with -update-docs", path)
}
