package sqlgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// jsonFunctions: MySQL's JSON functions, consulted by lookupMore like
// datetimeFunctions. MySQL prints JSON with ", " and ": " and object keys
// sorted by length, then bytes; DuckDB's JSON reader is more lenient than
// MySQL's (trailing commas, NaN, Infinity, numbers beyond a DOUBLE, any
// depth) and keeps the first of duplicate keys where MySQL keeps the last. So
// a literal document is checked here with a strict reader, a document from
// a column is refused at run time where DuckDB could read what MySQL
// rejects, and the functions that print JSON print MySQL's text or refuse.
var jsonFunctions = map[string]fnSpec{
	"json_valid":         {duck: "", min: 1, max: 1, kind: fnScalar, rw: rwJSONValid},
	"json_type":          {duck: "", min: 1, max: 1, kind: fnScalar, rw: rwJSONType},
	"json_length":        {duck: "", min: 1, max: 2, kind: fnScalar, rw: rwJSONLength},
	"json_keys":          {duck: "", min: 1, max: 2, kind: fnScalar, rw: rwJSONKeys},
	"json_contains_path": {duck: "", min: 3, max: -1, kind: fnScalar, rw: rwJSONContainsPath},
	"json_extract":       {duck: "json_extract", min: 2, max: 2, kind: fnScalar, rw: rwJSONExtract},
	"json_unquote":       {duck: "json_extract_string", min: 1, max: 1, kind: fnScalar, rw: rwJSONUnquoteMore},
	"json_quote":         {duck: "", min: 1, max: 1, kind: fnScalar, rw: rwJSONQuote},
	"json_array":         {duck: "", min: 0, max: -1, kind: fnScalar, rw: rwJSONArray},
	"json_object":        {duck: "", min: 0, max: -1, kind: fnScalar, rw: rwJSONObject},
}

// jsonText is JSON text printed as MySQL prints it (built by JSON_ARRAY or
// JSON_OBJECT), embedded as is in an enclosing JSON value.
type jsonText struct {
	*tmplExpr
}

// jsonSuspect matches text DuckDB reads as JSON and MySQL does not (or
// might not): NaN and Infinity, trailing commas, exponents of three digits.
const jsonSuspect = `(^|[\[,:])\s*[-+]?(?i:nan|inf)|,\s*[\]}]|[eE][+]?\d{3}`

// jsonCtrl matches control characters DuckDB escapes as \u00XX (upper-case
// hex digits); MySQL's case is not pinned, so these are refused.
const jsonCtrl = `[\x00-\x07\x0b\x0e-\x1f]`

// strictJSON checks s as MySQL's reader does: RFC 8259, depth at most 100,
// numbers within a DOUBLE; duplicate keys are reported apart (MySQL keeps
// the last, DuckDB the first).
func strictJSON(s string) (valid, dupKeys bool) {
	if !json.Valid([]byte(s)) {
		return false, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	type level struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return true, dupKeys
		}
		if err != nil {
			return false, false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.wantKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					dupKeys = true
				}
				top.keys[k] = true
				top.wantKey = false
				continue
			}
		}
		if top != nil && top.obj {
			top.wantKey = true
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &level{obj: true, keys: map[string]bool{}, wantKey: true})
			case '[':
				stack = append(stack, &level{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].wantKey = true
				}
			}
			if len(stack) > 100 {
				return false, false
			}
		case json.Number:
			if f, err := strconv.ParseFloat(string(t), 64); err != nil || math.IsInf(f, 0) {
				return false, false
			}
		}
	}
}

// jsonDoc prepares a JSON document argument: a literal is checked here (an
// invalid one is MySQL's error: refused), JSON built by this file is passed,
// anything else is guarded at run time.
func jsonDoc(fn string, e ast.ExprNode) (ast.ExprNode, error) {
	if s, ok := textLit(e); ok {
		valid, dup := strictJSON(s)
		switch {
		case !valid:
			return nil, unsupported("%s of invalid JSON text is refused (MySQL: Invalid JSON text)", fn)
		case dup:
			return nil, unsupported("%s of JSON text with duplicate keys is not supported", fn)
		}
		return e, nil
	}
	switch e.(type) {
	case *jsonText, *jsonExtract:
		return e, nil
	}
	if isNullLit(e) {
		return e, nil
	}
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN regexp_matches(", r[0], ", '"+jsonSuspect+"') OR ((strlen(", r[0], ") - strlen(regexp_replace(", r[0],
			", '[\\[{]', '', 'g'))) > 100) THEN error('"+fn+" of this JSON text is not supported (NaN, Infinity, trailing commas, large exponents or depth)') ELSE ", r[0], " END")
	}), nil
}

var jsonPathRe = regexp.MustCompile(`^\$((\.[A-Za-z_][A-Za-z0-9_]*)|(\[[0-9]{1,9}\]))*$`)
var jsonStepRe = regexp.MustCompile(`\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]`)

// jsonPath reads a literal path of member names and array indexes (no
// wildcards, ranges, last or quoted names).
func jsonPath(fn string, e ast.ExprNode) (string, error) {
	p, ok := textLit(e)
	if !ok || !jsonPathRe.MatchString(p) {
		return "", unsupported("%s takes a string literal path of .names and [indexes]", fn)
	}
	return p, nil
}

// pathGuard refuses at run time what DuckDB reads differently along path:
// MySQL reads [0] of a non-array as the value itself (DuckDB: missing), and
// an object with duplicate keys by its last (DuckDB: its first).
func pathGuard(fn string, doc ast.ExprNode, path string) []any {
	var out []any
	steps := jsonStepRe.FindAllStringIndex(path, -1)
	for _, st := range steps {
		prefix := textNode(path[:st[0]])
		if path[st[0]] == '[' {
			out = append(out, " OR (coalesce(json_type(", doc, ", ", prefix, "), 'ARRAY') <> 'ARRAY')")
		} else {
			out = append(out, " OR ", dupKeys(doc, prefix))
		}
	}
	return out
}

// dupKeys is true when the object at path has a key twice.
func dupKeys(doc, path ast.ExprNode) *tmplExpr {
	return tx("coalesce((json_type(", doc, ", ", path, ") = 'OBJECT') AND (len(json_keys(", doc, ", ", path,
		")) <> len(list_distinct(list_transform(json_keys(", doc, ", ", path, "), lambda __lg_k: encode(__lg_k))))), false)")
}

// jsonCall builds a function of a guarded document at a literal path:
// body gets the document reference and the path literal.
func jsonCall(fn string, doc ast.ExprNode, path string, body func(d, p ast.ExprNode) []any) *tmplExpr {
	return letx([]ast.ExprNode{doc}, func(r []ast.ExprNode) *tmplExpr {
		p := textNode(path)
		parts := []any{"CASE WHEN (FALSE"}
		parts = append(parts, pathGuard(fn, r[0], path)...)
		parts = append(parts, ") THEN error('"+fn+" of this document is not supported (an index of a non-array, or duplicate keys)') ELSE ")
		parts = append(parts, body(r[0], p)...)
		return tx(append(parts, " END")...)
	})
}

func docAndPath(fn string, args []ast.ExprNode) (ast.ExprNode, string, error) {
	d, err := jsonDoc(fn, args[0])
	if err != nil {
		return nil, "", err
	}
	p := "$"
	if len(args) > 1 {
		if p, err = jsonPath(fn, args[1]); err != nil {
			return nil, "", err
		}
	}
	return d, p, nil
}

func rwJSONValid(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if s, ok := textLit(args[0]); ok {
		valid, _ := strictJSON(s)
		if valid {
			return intNode(1), nil
		}
		return intNode(0), nil
	}
	if isNullLit(args[0]) {
		return typedNull("INTEGER"), nil
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN NOT json_valid(", r[0], ") THEN 0 WHEN regexp_matches(", r[0], ", '"+jsonSuspect+
			"') OR ((strlen(", r[0], ") - strlen(regexp_replace(", r[0], ", '[\\[{]', '', 'g'))) > 100) THEN error('JSON_VALID of this text is not supported (NaN, Infinity, trailing commas, large exponents or depth)') ELSE 1 END")
	}), nil
}

// rwJSONType: MySQL's names of DuckDB's JSON types; a positive integer
// beyond a BIGINT is MySQL's UNSIGNED INTEGER.
func rwJSONType(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := jsonDoc("JSON_TYPE", args[0])
	if err != nil {
		return nil, err
	}
	return letx([]ast.ExprNode{d}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE json_type(", r[0], ") WHEN 'VARCHAR' THEN 'STRING' WHEN 'BIGINT' THEN 'INTEGER' WHEN 'UBIGINT' THEN CASE WHEN (TRY_CAST(json_extract_string(", r[0],
			", '$') AS BIGINT) IS NULL) THEN 'UNSIGNED INTEGER' ELSE 'INTEGER' END WHEN 'DOUBLE' THEN 'DOUBLE' WHEN 'BOOLEAN' THEN 'BOOLEAN' WHEN 'NULL' THEN 'NULL' WHEN 'OBJECT' THEN 'OBJECT' WHEN 'ARRAY' THEN 'ARRAY' ",
			"ELSE error('JSON_TYPE of this value is not supported') END")
	}), nil
}

// rwJSONLength: elements of an array, members of an object, 1 for a scalar,
// NULL when the path is missing.
func rwJSONLength(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, p, err := docAndPath("JSON_LENGTH", args)
	if err != nil {
		return nil, err
	}
	return jsonCall("JSON_LENGTH", d, p, func(d, p ast.ExprNode) []any {
		return []any{"CAST(CASE json_type(", d, ", ", p, ") WHEN 'ARRAY' THEN json_array_length(", d, ", ", p, ") WHEN 'OBJECT' THEN CASE WHEN ", dupKeys(d, p),
			" THEN error('JSON_LENGTH of an object with duplicate keys is not supported') ELSE len(json_keys(", d, ", ", p, ")) END WHEN NULL THEN NULL ELSE CASE WHEN (json_type(", d, ", ", p, ") IS NULL) THEN NULL ELSE 1 END END AS BIGINT)"}
	}), nil
}

// rwJSONKeys: the keys of an object as a JSON array in MySQL's order
// (length, then bytes); NULL for anything but an object.
func rwJSONKeys(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, p, err := docAndPath("JSON_KEYS", args)
	if err != nil {
		return nil, err
	}
	return jsonCall("JSON_KEYS", d, p, func(d, p ast.ExprNode) []any {
		return []any{"CASE WHEN (coalesce(json_type(", d, ", ", p, "), '') <> 'OBJECT') THEN NULL WHEN ", dupKeys(d, p),
			" THEN error('JSON_KEYS of an object with duplicate keys is not supported') WHEN list_bool_or(list_transform(json_keys(", d, ", ", p, "), lambda __lg_k: regexp_matches(__lg_k, '" + jsonCtrl +
				"'))) THEN error('JSON_KEYS of keys with control characters is not supported') ELSE ('[' || array_to_string(list_transform(list_sort(list_transform(json_keys(", d, ", ", p,
			"), lambda __lg_k: {'l': strlen(__lg_k), 'b': encode(__lg_k)})), lambda __lg_s: CAST(to_json(decode(__lg_s.b)) AS VARCHAR)), ', ') || ']') END"}
	}), nil
}

// rwJSONContainsPath: 1 when one (or all) of the literal paths exist.
func rwJSONContainsPath(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, err := jsonDoc("JSON_CONTAINS_PATH", args[0])
	if err != nil {
		return nil, err
	}
	mode, ok := textLit(args[1])
	join := ""
	switch strings.ToLower(mode) {
	case "one":
		join = " OR "
	case "all":
		join = " AND "
	}
	if !ok || join == "" {
		return nil, unsupported("JSON_CONTAINS_PATH takes 'one' or 'all' as a string literal")
	}
	var paths []string
	for _, a := range args[2:] {
		p, err := jsonPath("JSON_CONTAINS_PATH", a)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return letx([]ast.ExprNode{d}, func(r []ast.ExprNode) *tmplExpr {
		parts := []any{"CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN (FALSE"}
		for _, p := range paths {
			parts = append(parts, pathGuard("JSON_CONTAINS_PATH", r[0], p)...)
		}
		parts = append(parts, ") THEN error('JSON_CONTAINS_PATH of this document is not supported (an index of a non-array, or duplicate keys)') WHEN (")
		for i, p := range paths {
			if i > 0 {
				parts = append(parts, join)
			}
			parts = append(parts, "(json_type(", r[0], ", ", textNode(p), ") IS NOT NULL)")
		}
		return tx(append(parts, ") THEN 1 ELSE 0 END")...)
	}), nil
}

// rwJSONExtract: JSON_EXTRACT(doc, path) of a scalar other than a DOUBLE
// (MySQL prints objects and arrays with spaces and DOUBLEs its own way;
// refused at run time), along a path DuckDB reads as MySQL does.
func rwJSONExtract(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, p, err := docAndPath("JSON_EXTRACT", args)
	if err != nil {
		return nil, err
	}
	out := jsonCall("JSON_EXTRACT", d, p, func(d, pl ast.ExprNode) []any {
		return []any{"CASE WHEN (json_type(", d, ", ", pl, ") IN ('OBJECT', 'ARRAY', 'DOUBLE')) THEN error('JSON objects, arrays and DOUBLEs as results are not supported') WHEN (json_type(", d, ", ", pl,
			") = 'VARCHAR') AND regexp_matches(json_extract_string(", d, ", ", pl, "), '" + jsonCtrl + "') THEN error('JSON strings with control characters as results are not supported') ELSE json_extract(", d, ", ", pl, ") END"}
	})
	// JSON_UNQUOTE (->>) of it reads the same document and path.
	return &jsonExtract{tmplExpr: out, doc: d, path: textNode(p)}, nil
}

// rwJSONUnquoteMore: JSON_UNQUOTE of JSON_EXTRACT (->>), or of a literal
// (a JSON string literal is decoded here; other text is returned as is).
func rwJSONUnquoteMore(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	if j, ok := args[0].(*jsonExtract); ok {
		p, _ := textLit(j.path)
		return jsonCall("JSON_UNQUOTE", j.doc, p, func(d, pl ast.ExprNode) []any {
			return []any{"CASE WHEN (json_type(", d, ", ", pl, ") IN ('OBJECT', 'ARRAY', 'DOUBLE')) THEN error('JSON objects, arrays and DOUBLEs as results are not supported') ELSE json_extract_string(", d, ", ", pl, ") END"}
		}), nil
	}
	s, ok := textLit(args[0])
	if !ok {
		if isNullLit(args[0]) {
			return typedNull("VARCHAR"), nil
		}
		return nil, unsupported("JSON_UNQUOTE is supported only of JSON_EXTRACT (->>) and of string literals")
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var out string
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			return nil, unsupported("JSON_UNQUOTE of invalid JSON text is refused (MySQL: Invalid JSON text)")
		}
		return textNode(out), nil
	}
	return args[0], nil
}

// quoteJSON prints s as a MySQL JSON string; ok is false for control
// characters other than \b \f \n \r \t.
func quoteJSON(s string) (string, bool) {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				return "", false
			}
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String(), true
}

// rwJSONQuote: JSON_QUOTE of a string.
func rwJSONQuote(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if s, ok := textLit(args[0]); ok {
		q, ok := quoteJSON(s)
		if !ok {
			return nil, unsupported("JSON_QUOTE of control characters is not supported")
		}
		return textNode(q), nil
	}
	if isNullLit(args[0]) {
		return typedNull("VARCHAR"), nil
	}
	if _, ok := args[0].(*litExpr); ok {
		return nil, unsupported("JSON_QUOTE takes a string")
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN (typeof(", r[0], ") <> 'VARCHAR') THEN error('JSON_QUOTE takes a string') WHEN regexp_matches(CAST(", r[0], " AS VARCHAR), '"+jsonCtrl+
			"') THEN error('JSON_QUOTE of control characters is not supported') ELSE CAST(to_json(CAST(", r[0], " AS VARCHAR)) AS VARCHAR) END")
	}), nil
}

// jsonValue is the MySQL JSON text of an SQL value, as JSON_ARRAY and
// JSON_OBJECT print it: literals here, other values by their DuckDB type at
// run time (strings, integers, DECIMALs, DATEs; DOUBLEs, DATETIMEs and
// booleans, whose MySQL printing or type the gate cannot match, refused).
func jsonValue(fn string, e ast.ExprNode) (ast.ExprNode, error) {
	switch n := e.(type) {
	case *jsonText:
		return n.tmplExpr, nil
	case *litExpr:
		switch {
		case n.isText:
			q, ok := quoteJSON(n.text)
			if !ok {
				return nil, unsupported("%s of control characters is not supported", fn)
			}
			return textNode(q), nil
		case n.isFloat:
			return nil, unsupported("%s of a DOUBLE is not supported", fn)
		case n.text == "NULL":
			return textNode("null"), nil
		case n.text == "TRUE":
			return textNode("true"), nil
		case n.text == "FALSE":
			return textNode("false"), nil
		}
		if decimalLitRe.MatchString(n.text) {
			return textNode(n.text), nil
		}
	case *unaryExpr:
		if l, ok := n.v.(*litExpr); ok && n.op == "-" && !l.isText && !l.isFloat && decimalLitRe.MatchString(l.text) {
			return textNode("-" + l.text), nil
		}
	}
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN 'null' WHEN (typeof(", r[0], ") = 'VARCHAR') THEN CASE WHEN regexp_matches(CAST(", r[0], " AS VARCHAR), '"+jsonCtrl+
			"') THEN error('"+fn+" of control characters is not supported') ELSE CAST(to_json(", r[0], ") AS VARCHAR) END ",
			"WHEN ((typeof(", r[0], ") IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT')) OR (typeof(", r[0], ") LIKE 'DECIMAL(%')) THEN CAST(", r[0], " AS VARCHAR) ",
			"WHEN (typeof(", r[0], ") = 'DATE') THEN ('\"' || CAST(", r[0], " AS VARCHAR) || '\"') ELSE error('"+fn+" of this type is not supported') END")
	}), nil
}

var decimalLitRe = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

func rwJSONArray(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	parts := []any{"('['"}
	for i, a := range args {
		v, err := jsonValue("JSON_ARRAY", a)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			parts = append(parts, " || ', '")
		}
		parts = append(parts, " || ", v)
	}
	return &jsonText{tx(append(parts, " || ']')")...)}, nil
}

// rwJSONObject: keys must be string literals, sorted here as MySQL sorts
// them (length, then bytes); duplicate keys are refused.
func rwJSONObject(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args)%2 != 0 {
		return nil, unsupported("JSON_OBJECT takes pairs of keys and values")
	}
	type member struct {
		key string
		val ast.ExprNode
	}
	var ms []member
	seen := map[string]bool{}
	for i := 0; i < len(args); i += 2 {
		k, ok := textLit(args[i])
		if !ok {
			return nil, unsupported("JSON_OBJECT takes string literal keys")
		}
		if seen[k] {
			return nil, unsupported("JSON_OBJECT with duplicate keys is not supported")
		}
		seen[k] = true
		v, err := jsonValue("JSON_OBJECT", args[i+1])
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{k, v})
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if len(ms[i].key) != len(ms[j].key) {
			return len(ms[i].key) < len(ms[j].key)
		}
		return bytes.Compare([]byte(ms[i].key), []byte(ms[j].key)) < 0
	})
	parts := []any{"('{'"}
	for i, m := range ms {
		q, ok := quoteJSON(m.key)
		if !ok {
			return nil, unsupported("JSON_OBJECT of control characters is not supported")
		}
		if i > 0 {
			parts = append(parts, " || ', '")
		}
		parts = append(parts, " || ", textNode(q+": "), " || ", m.val)
	}
	return &jsonText{tx(append(parts, " || '}')")...)}, nil
}
