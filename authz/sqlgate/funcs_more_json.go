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

// The rewrites of MySQL's JSON functions of the function table (funcs.go).

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
			// MySQL unquotes a JSON null to the text null.
			return []any{"CASE WHEN (json_type(", d, ", ", pl, ") IN ('OBJECT', 'ARRAY', 'DOUBLE')) THEN error('JSON objects, arrays and DOUBLEs as results are not supported') WHEN (json_type(", d, ", ", pl,
				") = 'NULL') THEN 'null' ELSE json_extract_string(", d, ", ", pl, ") END"}
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

// rwJSONValue: JSON_VALUE(doc, path) without RETURNING is the scalar as
// text (a JSON null is SQL NULL).
func rwJSONValue(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, p, err := docAndPath("JSON_VALUE", args)
	if err != nil {
		return nil, err
	}
	return jsonCall("JSON_VALUE", d, p, func(d, pl ast.ExprNode) []any {
		return []any{"CASE WHEN (json_type(", d, ", ", pl, ") IN ('OBJECT', 'ARRAY', 'DOUBLE')) THEN error('JSON objects, arrays and DOUBLEs as results are not supported') WHEN (json_type(", d, ", ", pl,
			") = 'VARCHAR') AND regexp_matches(json_extract_string(", d, ", ", pl, "), '" + jsonCtrl + "') THEN error('JSON strings with control characters as results are not supported') ELSE json_extract_string(", d, ", ", pl, ") END"}
	}), nil
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

// The functions below compute MySQL's answer here, of literal arguments only
// (a document from a column is refused): a small model of MySQL's JSON
// values, printed as MySQL prints them (DOUBLEs refused).

// jv is a JSON value: kind 'o' object, 'a' array, 's' string, 'n' number,
// 'b' boolean (s "true"/"false"), 'z' null. A number keeps its text; dbl
// marks a DOUBLE (a fraction or exponent in JSON text).
type jv struct {
	kind byte
	s    string
	dbl  bool
	arr  []*jv
	keys []string // MySQL's order: length, then bytes
	obj  map[string]*jv
}

func keyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func (v *jv) set(k string, x *jv) {
	if _, ok := v.obj[k]; !ok {
		i := sort.Search(len(v.keys), func(i int) bool { return !keyLess(v.keys[i], k) })
		v.keys = append(v.keys, "")
		copy(v.keys[i+1:], v.keys[i:])
		v.keys[i] = k
	}
	v.obj[k] = x
}

func (v *jv) del(k string) {
	if _, ok := v.obj[k]; !ok {
		return
	}
	delete(v.obj, k)
	for i, x := range v.keys {
		if x == k {
			v.keys = append(v.keys[:i], v.keys[i+1:]...)
			break
		}
	}
}

func (v *jv) clone() *jv {
	c := *v
	if v.arr != nil {
		c.arr = make([]*jv, len(v.arr))
		for i, x := range v.arr {
			c.arr[i] = x.clone()
		}
	}
	if v.obj != nil {
		c.keys = append([]string(nil), v.keys...)
		c.obj = map[string]*jv{}
		for k, x := range v.obj {
			c.obj[k] = x.clone()
		}
	}
	return &c
}

func newObj() *jv { return &jv{kind: 'o', obj: map[string]*jv{}} }

// parseJV reads strict JSON text (checked by strictJSON first).
func parseJV(s string) (*jv, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var read func() (*jv, error)
	read = func() (*jv, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '[' {
				v := &jv{kind: 'a', arr: []*jv{}}
				for dec.More() {
					x, err := read()
					if err != nil {
						return nil, err
					}
					v.arr = append(v.arr, x)
				}
				_, err := dec.Token()
				return v, err
			}
			v := newObj()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				x, err := read()
				if err != nil {
					return nil, err
				}
				v.set(kt.(string), x)
			}
			_, err := dec.Token()
			return v, err
		case string:
			return &jv{kind: 's', s: t}, nil
		case json.Number:
			return &jv{kind: 'n', s: string(t), dbl: strings.ContainsAny(string(t), ".eE")}, nil
		case bool:
			return &jv{kind: 'b', s: strconv.FormatBool(t)}, nil
		}
		return &jv{kind: 'z'}, nil
	}
	return read()
}

// print writes v as MySQL prints JSON; indent >= 0 is JSON_PRETTY's form.
func (v *jv) print(b *strings.Builder, indent int) error {
	nl := func(n int) {
		if indent >= 0 {
			b.WriteString("\n" + strings.Repeat("  ", n))
		}
	}
	switch v.kind {
	case 'o', 'a':
		open, end, n := "{", "}", len(v.keys)
		if v.kind == 'a' {
			open, end, n = "[", "]", len(v.arr)
		}
		b.WriteString(open)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
				if indent < 0 {
					b.WriteString(" ")
				}
			}
			nl(indent + 1)
			x := &jv{}
			if v.kind == 'a' {
				x = v.arr[i]
			} else {
				q, ok := quoteJSON(v.keys[i])
				if !ok {
					return unsupported("JSON with control characters is not supported")
				}
				b.WriteString(q + ": ")
				x = v.obj[v.keys[i]]
			}
			next := indent
			if indent >= 0 {
				next = indent + 1
			}
			if err := x.print(b, next); err != nil {
				return err
			}
		}
		if n > 0 {
			nl(indent)
		}
		b.WriteString(end)
	case 's':
		q, ok := quoteJSON(v.s)
		if !ok {
			return unsupported("JSON with control characters is not supported")
		}
		b.WriteString(q)
	case 'n':
		if v.dbl {
			return unsupported("JSON DOUBLEs as results are not supported")
		}
		b.WriteString(v.s)
	case 'b':
		b.WriteString(v.s)
	default:
		b.WriteString("null")
	}
	return nil
}

func (v *jv) text(indent int) (string, error) {
	var b strings.Builder
	err := v.print(&b, indent)
	return b.String(), err
}

// equal compares scalars as MySQL's JSON comparison does (numbers by value,
// strings by bytes), and containers element by element.
func (v *jv) equal(o *jv) bool {
	if v.kind != o.kind {
		return false
	}
	switch v.kind {
	case 'n':
		if !v.dbl && !o.dbl {
			return v.s == o.s || numCmp(v.s, o.s)
		}
		return numCmp(v.s, o.s)
	case 'a':
		if len(v.arr) != len(o.arr) {
			return false
		}
		for i := range v.arr {
			if !v.arr[i].equal(o.arr[i]) {
				return false
			}
		}
		return true
	case 'o':
		if len(v.keys) != len(o.keys) {
			return false
		}
		for k, x := range v.obj {
			y, ok := o.obj[k]
			if !ok || !x.equal(y) {
				return false
			}
		}
		return true
	}
	return v.s == o.s
}

func numCmp(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// contains is MySQL's JSON_CONTAINS(target, candidate).
func (v *jv) contains(c *jv) bool {
	switch v.kind {
	case 'a':
		if c.kind == 'a' {
			for _, x := range c.arr {
				if !v.contains(x) {
					return false
				}
			}
			return true
		}
		for _, x := range v.arr {
			if x.contains(c) {
				return true
			}
		}
		return false
	case 'o':
		if c.kind != 'o' {
			return false
		}
		for k, x := range c.obj {
			y, ok := v.obj[k]
			if !ok || !y.contains(x) {
				return false
			}
		}
		return true
	}
	return c.kind != 'a' && c.kind != 'o' && v.equal(c)
}

func (v *jv) depth() int {
	d := 0
	for _, x := range v.arr {
		d = max(d, x.depth())
	}
	for _, x := range v.obj {
		d = max(d, x.depth())
	}
	if len(v.arr) > 0 || len(v.obj) > 0 {
		return d + 1
	}
	return 1
}

// jvStep is one step of a literal path: a member name, or an index.
type jvStep struct {
	key string
	idx int
}

func parsePath(p string) []jvStep {
	var out []jvStep
	for _, m := range jsonStepRe.FindAllString(p, -1) {
		if m[0] == '.' {
			out = append(out, jvStep{key: m[1:], idx: -1})
		} else {
			n, _ := strconv.Atoi(m[1 : len(m)-1])
			out = append(out, jvStep{idx: n})
		}
	}
	return out
}

// errJVIndex: an index of a non-array (MySQL reads [0] of it as the value
// itself): not modelled, refused.
var errJVIndex = unsupported("JSON paths indexing a non-array are not supported")

// at returns the value at steps, or nil when missing.
func (v *jv) at(steps []jvStep) (*jv, error) {
	for _, s := range steps {
		switch {
		case s.idx < 0:
			if v.kind != 'o' {
				return nil, nil
			}
			v = v.obj[s.key]
		case v.kind != 'a':
			return nil, errJVIndex
		case s.idx < len(v.arr):
			v = v.arr[s.idx]
		default:
			return nil, nil
		}
		if v == nil {
			return nil, nil
		}
	}
	return v, nil
}

// jvArg reads a literal argument as a JSON document (a string literal
// parsed) or, when asValue, as an SQL value turned into JSON (a string
// literal is a JSON string). ok is false for SQL NULL.
func jvArg(fn string, e ast.ExprNode, asValue bool) (v *jv, ok bool, err error) {
	l, isLit := e.(*litExpr)
	if u, isNeg := e.(*unaryExpr); isNeg && u.op == "-" && asValue {
		if n, isNum := u.v.(*litExpr); isNum && !n.isText && !n.isFloat && decimalLitRe.MatchString(n.text) {
			return &jv{kind: 'n', s: "-" + n.text}, true, nil
		}
	}
	if !isLit || l.isFloat {
		return nil, false, unsupported("%s takes literal arguments", fn)
	}
	switch {
	case l.text == "NULL" && !l.isText:
		return nil, false, nil
	case !l.isText && asValue && (l.text == "TRUE" || l.text == "FALSE"):
		return &jv{kind: 'b', s: strings.ToLower(l.text)}, true, nil
	case !l.isText && asValue && decimalLitRe.MatchString(l.text):
		return &jv{kind: 'n', s: l.text}, true, nil
	case !l.isText:
		return nil, false, unsupported("%s takes literal arguments", fn)
	case asValue:
		return &jv{kind: 's', s: l.text}, true, nil
	}
	valid, dup := strictJSON(l.text)
	switch {
	case !valid:
		return nil, false, unsupported("%s of invalid JSON text is refused (MySQL: Invalid JSON text)", fn)
	case dup:
		return nil, false, unsupported("%s of JSON text with duplicate keys is not supported", fn)
	}
	v, err = parseJV(l.text)
	return v, err == nil, err
}

// jvResult prints a JSON result (as text, MySQL's JSON type read by a
// client as a string).
func jvResult(v *jv, indent int) (ast.ExprNode, error) {
	s, err := v.text(indent)
	if err != nil {
		return nil, err
	}
	if len(s) > DefaultStringBytes {
		// JSON_PRETTY indents: its text may be far longer than its input.
		return nil, limitErr("%s", stringLimitMsg(DefaultStringBytes, "JSON"))
	}
	return textNode(s), nil
}

func rwJVDepth(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	v, ok, err := jvArg("JSON_DEPTH", args[0], false)
	if err != nil || !ok {
		return typedNull("BIGINT"), err
	}
	return intNode(int64(v.depth())), nil
}

func rwJVPretty(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	v, ok, err := jvArg("JSON_PRETTY", args[0], false)
	if err != nil || !ok {
		return typedNull("VARCHAR"), err
	}
	return jvResult(v, 0)
}

func rwJVContains(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	t, tok, err := jvArg("JSON_CONTAINS", args[0], false)
	if err != nil {
		return nil, err
	}
	c, cok, err := jvArg("JSON_CONTAINS", args[1], false)
	if err != nil {
		return nil, err
	}
	if len(args) == 3 {
		p, err := jsonPath("JSON_CONTAINS", args[2])
		if err != nil {
			return nil, err
		}
		if tok {
			if t, err = t.at(parsePath(p)); err != nil {
				return nil, err
			}
			tok = t != nil
		}
	}
	if !tok || !cok {
		return typedNull("INTEGER"), nil
	}
	if t.contains(c) {
		return intNode(1), nil
	}
	return intNode(0), nil
}

// rwJVOverlaps: two arrays share an element, two objects a member, an
// array holds the scalar, or two scalars are equal.
func rwJVOverlaps(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	a, aok, err := jvArg("JSON_OVERLAPS", args[0], false)
	if err != nil {
		return nil, err
	}
	b, bok, err := jvArg("JSON_OVERLAPS", args[1], false)
	if err != nil {
		return nil, err
	}
	if !aok || !bok {
		return typedNull("INTEGER"), nil
	}
	if b.kind == 'a' && a.kind != 'a' {
		a, b = b, a
	}
	hit := false
	switch {
	case a.kind == 'a' && b.kind == 'a':
		for _, x := range a.arr {
			for _, y := range b.arr {
				hit = hit || x.equal(y)
			}
		}
	case a.kind == 'a':
		for _, x := range a.arr {
			hit = hit || x.equal(b)
		}
	case a.kind == 'o' && b.kind == 'o':
		for k, x := range a.obj {
			if y, ok := b.obj[k]; ok && x.equal(y) {
				hit = true
			}
		}
	default:
		hit = a.equal(b)
	}
	if hit {
		return intNode(1), nil
	}
	return intNode(0), nil
}

func mergePreserve(a, b *jv) *jv {
	switch {
	case a.kind == 'o' && b.kind == 'o':
		out := a.clone()
		for _, k := range b.keys {
			if x, ok := out.obj[k]; ok {
				out.set(k, mergePreserve(x, b.obj[k]))
			} else {
				out.set(k, b.obj[k].clone())
			}
		}
		return out
	}
	wrap := func(x *jv) []*jv {
		if x.kind == 'a' {
			return x.clone().arr
		}
		return []*jv{x.clone()}
	}
	return &jv{kind: 'a', arr: append(wrap(a), wrap(b)...)}
}

// mergePatch is RFC 7396, as MySQL's JSON_MERGE_PATCH.
func mergePatch(a, b *jv) *jv {
	if b.kind != 'o' {
		return b.clone()
	}
	out := newObj()
	if a.kind == 'o' {
		out = a.clone()
	}
	for _, k := range b.keys {
		x := b.obj[k]
		if x.kind == 'z' {
			out.del(k)
			continue
		}
		if y, ok := out.obj[k]; ok {
			out.set(k, mergePatch(y, x))
		} else {
			out.set(k, mergePatch(&jv{kind: 'z'}, x))
		}
	}
	return out
}

func rwJVMerge(patch bool) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(name string, args []ast.ExprNode) (ast.ExprNode, error) {
		fn := strings.ToUpper(name)
		var acc *jv
		null := false
		for _, a := range args {
			v, ok, err := jvArg(fn, a, false)
			if err != nil {
				return nil, err
			}
			switch {
			case !ok:
				null = true
			case acc == nil:
				acc = v
			case patch:
				acc = mergePatch(acc, v)
			default:
				acc = mergePreserve(acc, v)
			}
		}
		if null {
			// JSON_MERGE_PATCH(NULL, '{…}') is not NULL in every case:
			// only an all-literal non-NULL form is answered.
			if patch {
				return nil, unsupported("%s with NULL arguments is not supported", fn)
			}
			return typedNull("VARCHAR"), nil
		}
		return jvResult(acc, -1)
	}
}

// rwJVModify: JSON_SET, JSON_INSERT, JSON_REPLACE, JSON_ARRAY_APPEND and
// JSON_ARRAY_INSERT of literal path/value pairs, applied in order.
func rwJVModify(name string) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		fn := strings.ToUpper(name)
		if len(args)%2 != 1 {
			return nil, unsupported("%s takes pairs of paths and values", fn)
		}
		doc, ok, err := jvArg(fn, args[0], false)
		if err != nil {
			return nil, err
		}
		null := !ok
		for i := 1; i < len(args); i += 2 {
			if isNullLit(args[i]) {
				null = true
				continue
			}
			p, err := jsonPath(fn, args[i])
			if err != nil {
				return nil, err
			}
			val, vok, err := jvArg(fn, args[i+1], true)
			if err != nil {
				return nil, err
			}
			if !vok {
				val = &jv{kind: 'z'}
			}
			steps := parsePath(p)
			if null {
				continue
			}
			if len(steps) == 0 {
				switch name {
				case "json_set", "json_replace":
					doc = val
				case "json_array_append":
					doc = mergePreserve(doc, &jv{kind: 'a', arr: []*jv{val}})
				case "json_array_insert":
					return nil, unsupported("%s takes a path ending in an array index", fn)
				}
				continue
			}
			parent, err := doc.at(steps[:len(steps)-1])
			if err != nil {
				return nil, err
			}
			if parent == nil {
				continue // a missing path changes nothing
			}
			last := steps[len(steps)-1]
			if name == "json_array_append" {
				t, err := parent.at([]jvStep{last})
				if err != nil {
					return nil, err
				}
				if t == nil {
					continue
				}
				nv := mergePreserve(t, &jv{kind: 'a', arr: []*jv{val}})
				if last.idx < 0 {
					parent.obj[last.key] = nv
				} else {
					parent.arr[last.idx] = nv
				}
				continue
			}
			if name == "json_array_insert" {
				if last.idx < 0 {
					return nil, unsupported("%s takes a path ending in an array index", fn)
				}
				if parent.kind != 'a' {
					continue
				}
				at := min(last.idx, len(parent.arr))
				parent.arr = append(parent.arr[:at], append([]*jv{val}, parent.arr[at:]...)...)
				continue
			}
			if last.idx < 0 {
				if parent.kind != 'o' {
					continue
				}
				_, exists := parent.obj[last.key]
				if exists && name != "json_insert" || !exists && name != "json_replace" {
					parent.set(last.key, val)
				}
				continue
			}
			if parent.kind != 'a' {
				return nil, errJVIndex
			}
			exists := last.idx < len(parent.arr)
			switch {
			case exists && name != "json_insert":
				parent.arr[last.idx] = val
			case !exists && name != "json_replace":
				parent.arr = append(parent.arr, val)
			}
		}
		if null {
			return typedNull("VARCHAR"), nil
		}
		return jvResult(doc, -1)
	}
}

func rwJVRemove(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	doc, ok, err := jvArg("JSON_REMOVE", args[0], false)
	if err != nil {
		return nil, err
	}
	null := !ok
	for _, a := range args[1:] {
		if isNullLit(a) {
			null = true
			continue
		}
		p, err := jsonPath("JSON_REMOVE", a)
		if err != nil {
			return nil, err
		}
		steps := parsePath(p)
		if len(steps) == 0 {
			return nil, unsupported("JSON_REMOVE of '$' is refused (MySQL: an error)")
		}
		if null {
			continue
		}
		parent, err := doc.at(steps[:len(steps)-1])
		if err != nil {
			return nil, err
		}
		last := steps[len(steps)-1]
		switch {
		case parent == nil:
		case last.idx < 0 && parent.kind == 'o':
			parent.del(last.key)
		case last.idx >= 0 && parent.kind == 'a':
			if last.idx < len(parent.arr) {
				parent.arr = append(parent.arr[:last.idx], parent.arr[last.idx+1:]...)
			}
		case last.idx >= 0:
			return nil, errJVIndex
		}
	}
	if null {
		return typedNull("VARCHAR"), nil
	}
	return jvResult(doc, -1)
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// likeASCII is LIKE with % and _ and the escape \ for ASCII text, case
// folded or not.
func likeASCII(s, pat string, fold bool) bool {
	if fold {
		s, pat = strings.ToLower(s), strings.ToLower(pat)
	}
	var m func(i, j int) bool
	m = func(i, j int) bool {
		for j < len(pat) {
			switch c := pat[j]; {
			case c == '%':
				for k := i; k <= len(s); k++ {
					if m(k, j+1) {
						return true
					}
				}
				return false
			case c == '_':
				if i >= len(s) {
					return false
				}
				i, j = i+1, j+1
			default:
				if c == '\\' && j+1 < len(pat) {
					j++
					c = pat[j]
				}
				if i >= len(s) || s[i] != c {
					return false
				}
				i, j = i+1, j+1
			}
		}
		return i == len(s)
	}
	return m(0, 0)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// rwJVSearch: JSON_SEARCH(doc, 'one'|'all', pattern) of literals: the paths
// of the strings matching the LIKE pattern (ASCII only), in document order.
func rwJVSearch(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) > 3 {
		return nil, unsupported("JSON_SEARCH with an escape character or paths is not supported")
	}
	doc, ok, err := jvArg("JSON_SEARCH", args[0], false)
	if err != nil {
		return nil, err
	}
	mode, mok := textLit(args[1])
	pat, pok := textLit(args[2])
	mode = strings.ToLower(mode)
	if !mok || mode != "one" && mode != "all" || !pok && !isNullLit(args[2]) {
		return nil, unsupported("JSON_SEARCH takes 'one' or 'all' and a string literal")
	}
	if !ok || !pok {
		return typedNull("VARCHAR"), nil
	}
	if !isASCII(pat) {
		return nil, unsupported("JSON_SEARCH of non-ASCII text is not supported")
	}
	var found []string
	var walk func(v *jv, path string) error
	walk = func(v *jv, path string) error {
		switch v.kind {
		case 's':
			if !isASCII(v.s) {
				return unsupported("JSON_SEARCH of non-ASCII text is not supported")
			}
			// The collation of the comparison (utf8mb4_bin or the default,
			// case-insensitive one) is not pinned: a match that depends
			// on it is refused.
			m := likeASCII(v.s, pat, false)
			if m != likeASCII(v.s, pat, true) {
				return unsupported("JSON_SEARCH where letter case decides a match is not supported")
			}
			if m {
				found = append(found, path)
			}
		case 'a':
			for i, x := range v.arr {
				if err := walk(x, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		case 'o':
			for _, k := range v.keys {
				if !identRe.MatchString(k) {
					return unsupported("JSON_SEARCH of keys that need quoting is not supported")
				}
				if err := walk(v.obj[k], path+"."+k); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc, "$"); err != nil {
		return nil, err
	}
	switch {
	case len(found) == 0:
		return typedNull("VARCHAR"), nil
	case len(found) == 1 || mode == "one":
		q, _ := quoteJSON(found[0])
		return textNode(q), nil
	}
	out := &jv{kind: 'a'}
	for _, p := range found {
		out.arr = append(out.arr, &jv{kind: 's', s: p})
	}
	return jvResult(out, -1)
}
