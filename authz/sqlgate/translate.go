package sqlgate

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// This file holds the translations of the function table (funcs.go) and the
// helpers of the operator translations in walk.go. Every one prints only
// constant text of this package and the client's (walked) arguments, and
// refuses what it cannot translate exactly.

// intLit returns the value of an integer literal (as printed by literal),
// possibly negated.
func intLit(e ast.ExprNode) (int64, bool) {
	if u, ok := e.(*unaryExpr); ok && u.op == "-" {
		v, ok := intLit(u.v)
		return -v, ok && v >= 0
	}
	l, ok := e.(*litExpr)
	if !ok || l.isText || l.isFloat {
		return 0, false
	}
	s := strings.TrimSuffix(strings.TrimPrefix(l.text, "("), ")")
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// textLit returns the value of a string literal.
func textLit(e ast.ExprNode) (string, bool) {
	l, ok := e.(*litExpr)
	if !ok || !l.isText {
		return "", false
	}
	return l.text, true
}

func isNullLit(e ast.ExprNode) bool {
	l, ok := e.(*litExpr)
	return ok && !l.isText && l.text == "NULL"
}

// isDouble reports whether MySQL evaluates e as a DOUBLE, as far as the gate
// can tell without column types: float literals, DOUBLE functions and casts,
// and arithmetic involving them.
func isDouble(e ast.ExprNode) bool {
	switch n := e.(type) {
	case *litExpr:
		return n.isFloat
	case *callExpr:
		return n.dbl
	case *tmplExpr:
		return n.dbl
	case *castExpr:
		return n.typ == "DOUBLE"
	case *unaryExpr:
		return n.op != "NOT " && isDouble(n.v)
	case *binExpr:
		switch n.op {
		case "+", "-", "*", "/", "%":
			return isDouble(n.l) || isDouble(n.r)
		}
	case *ast.ParenthesesExpr:
		return isDouble(n.Expr)
	case *divExpr:
		return isDouble(n.l) || isDouble(n.r)
	case *numAggExpr:
		return isDouble(n.arg())
	case *roundExpr:
		return isDouble(n.v)
	}
	return false
}

// mysqlStr converts e to text the way MySQL does when it needs a string
// (CONCAT, GROUP_CONCAT, LPAD): DOUBLEs without DuckDB's ".0" and "e+",
// booleans as 0/1.
func mysqlStr(e ast.ExprNode) ast.ExprNode {
	if _, ok := textLit(e); ok {
		return e
	}
	if _, ok := intLit(e); ok {
		return tx("CAST(", e, " AS VARCHAR)")
	}
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN typeof(", r[0], ") IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(", r[0],
			" AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(", r[0], ") = 'BOOLEAN' THEN CAST(CAST(", r[0],
			" AS INTEGER) AS VARCHAR) ELSE CAST(", r[0], " AS VARCHAR) END")
	})
}

// foldKey is the value a DISTINCT aggregate compares: MySQL's default
// collation ignores case and accents, which DuckDB's DISTINCT aggregates do
// not (they ignore the default collation).
func foldKey(e ast.ExprNode) *foldKeyExpr { return &foldKeyExpr{v: e} }

// foldKeyExpr prints foldKey's value: e itself where the type pass knows e
// is a number or a temporal value (equal values print alike, and folding
// their text would only cost: a string cast and a fold per row), and e
// cast to text, lower-cased and without accents otherwise.
type foldKeyExpr struct {
	gateExpr
	v ast.ExprNode
}

func (n *foldKeyExpr) Restore(ctx *format.RestoreCtx) error {
	if rb, ok := ctx.In.(*renderBuf); ok && rb.hasFact(n.v, factFoldUnique) {
		// No two values are equal under the collation (facts.go): the
		// distinct values are the distinct folded values.
		return n.v.Restore(ctx)
	}
	switch typeOfCtx(ctx.In, n.v).kind {
	case tInt, tBool, tDecimal, tDate, tDatetime, tTime:
		return n.v.Restore(ctx)
	}
	return foldText(n.v).Restore(ctx)
}

// foldText is e cast to text, lower-cased and without accents: the key of
// a DISTINCT of several values, which the engine compares as one list of
// one element type.
func foldText(e ast.ExprNode) *tmplExpr {
	return tx("lower(strip_accents(CAST(", e, " AS VARCHAR)))")
}
func (n *foldKeyExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// datetimeLit matches a string literal MySQL reads as a DATETIME with a time
// part when compared with a DATE.
var datetimeLit = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{1,2}(:\d{1,2}(\.\d{1,6})?)?$`)

// cmpOperand casts a DATETIME string literal compared with a non-literal to
// TIMESTAMP: MySQL compares a DATE with it as a DATETIME, while DuckDB would
// cast the string to DATE and drop the time.
//
// Likewise a string literal holding a non-integer number is cast to DOUBLE:
// MySQL compares a number with a string as DOUBLEs, while DuckDB casts the
// string to the other side's type, rounding '3.5' to 4 for an integer.
func cmpOperand(e, other ast.ExprNode) ast.ExprNode {
	s, ok := textLit(e)
	if !ok {
		return e
	}
	if _, ok := other.(*litExpr); ok {
		return e
	}
	if t := strings.TrimSpace(s); t == "" || !strings.ContainsAny(t[:1], "0123456789+-.") {
		return e // cheap filter: neither pattern can match
	}
	switch {
	case len(s) >= 12 && datetimeLit.MatchString(s):
		return &castExpr{v: e, typ: "TIMESTAMP"}
	case strings.ContainsAny(s, ".eE") && fracNumberLit.MatchString(s):
		return &castExpr{v: e, typ: "DOUBLE"}
	}
	return e
}

// fracNumberLit matches a number with a fraction or an exponent.
var fracNumberLit = regexp.MustCompile(`^\s*[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)\s*$`)

// numOperand makes DuckDB refuse a non-number operand of + and -: MySQL's
// + and - are numeric (a DATE is the number YYYYMMDD), DuckDB's do date
// arithmetic. Unary plus exists in DuckDB for numbers only.
func numOperand(e ast.ExprNode) ast.ExprNode {
	switch n := e.(type) {
	case *litExpr:
		if !n.isText {
			return e
		}
	case *paramExpr, *unaryExpr, *divExpr, *numAggExpr:
		return e // numeric only
	case *binExpr:
		switch n.op {
		case "+", "-", "*", "/", "%":
			return e // already numeric, or refused by DuckDB
		}
	}
	return &unaryExpr{op: "+", v: e}
}

// intDiv is MySQL's a DIV b: the quotient truncated to an integer, exact for
// integers and decimals (DuckDB's // divides a DECIMAL), NULL for b = 0.
func intDiv(a, b ast.ExprNode) ast.ExprNode {
	return letx([]ast.ExprNode{a, b}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CAST(round(((", r[0], " - (", r[0], " % nullif(", r[1], ", 0))) // nullif(", r[1], ", 0))) AS BIGINT)")
	})
}

func rwTmpl(parts ...any) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		out := make([]any, len(parts))
		for i, p := range parts {
			if k, ok := p.(int); ok {
				out[i] = args[k]
			} else {
				out[i] = p
			}
		}
		return tx(out...), nil
	}
}

// rwRound: MySQL rounds a DOUBLE half to even and an exact value half away
// from zero; DuckDB's round is half away from zero for both. A DOUBLE the
// gate can see (a float literal, a DOUBLE function) is rounded half to even.
// Otherwise the MySQL type is unknown (column types are not known here, and
// DuckDB computes AVG and / in DOUBLE where MySQL uses DECIMAL), so a DuckDB
// DOUBLE that is at (or within 1e-9 of) a tie is refused at run time: only
// ties round differently.
func rwRound(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d := ast.ExprNode(&litExpr{text: "0"})
	if len(args) == 2 {
		if _, ok := intLit(args[1]); !ok {
			return nil, unsupported("ROUND takes an integer literal as its second argument")
		}
		d = args[1]
	}
	if isDouble(args[0]) {
		return &tmplExpr{parts: []any{"round_even(", args[0], ", ", d, ")"}, dbl: true}, nil
	}
	dv, _ := intLit(d)
	return &roundExpr{v: args[0], d: d, dv: dv, untyped: letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN ((typeof(", r[0], ") IN ('DOUBLE', 'FLOAT')) AND (abs(((abs((", r[0], " * pow(10, ", d,
			"))) - trunc(abs((", r[0], " * pow(10, ", d, "))))) - 0.5)) < 1e-9)) THEN error('ROUND of an inexact value at a tie is ambiguous (MySQL rounds a DOUBLE half to even, a DECIMAL half away from zero); CAST it to DECIMAL or DOUBLE') ELSE round(",
			r[0], ", ", d, ") END")
	})}, nil
}

// rwTruncate: TRUNCATE(x, d) keeps x's type (roundExpr).
func rwTruncate(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	dv, ok := intLit(args[1])
	if !ok {
		return nil, unsupported("TRUNCATE takes an integer literal as its second argument")
	}
	return &roundExpr{trunc: true, v: args[0], d: args[1], dv: dv, untyped: &callExpr{name: "trunc", args: args, dbl: isDouble(args[0])}}, nil
}

// rwFloor: FLOOR and CEIL keep an integer or a DOUBLE; of a DECIMAL they
// are a BIGINT when the result fits (floorExpr).
func rwFloor(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	return &floorExpr{fn: name, v: args[0]}, nil
}

func rwMod(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return &binExpr{op: "%", l: args[0], r: &callExpr{name: "nullif", args: []ast.ExprNode{args[1], &litExpr{text: "0"}}}}, nil
}

// rwDomain: MySQL returns NULL outside the function's domain.
func rwDomain(cond string) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(name string, args []ast.ExprNode) (ast.ExprNode, error) {
		return letx(args, func(r []ast.ExprNode) *tmplExpr {
			return &tmplExpr{parts: []any{"CASE WHEN (", r[0], " " + cond + ") THEN " + name + "(", r[0], ") END"}, dbl: true}
		}), nil
	}
}

// rwFinite: MySQL raises "DOUBLE value is out of range" where DuckDB's
// EXP and POW overflow to infinity; the engine is made to fail the same way
// rather than answer inf.
func rwFinite(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	call := []any{name + "("}
	for i, a := range args {
		if i > 0 {
			call = append(call, ", ")
		}
		call = append(call, a)
	}
	call = append(call, ")")
	return letx([]ast.ExprNode{&tmplExpr{parts: call, dbl: true}}, func(r []ast.ExprNode) *tmplExpr {
		return &tmplExpr{parts: []any{"CASE WHEN isinf(", r[0], ") THEN error('DOUBLE value is out of range in " + name + "()') ELSE ", r[0], " END"}, dbl: true}
	}), nil
}

// rwLog: LOG(x) is the natural logarithm, LOG(b, x) base b; NULL outside the
// domain.
func rwLog(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) == 1 {
		return rwDomain("> 0")("ln", args)
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return &tmplExpr{parts: []any{"CASE WHEN ((", r[0], " > 0) AND (", r[0], " <> 1) AND (", r[1], " > 0)) THEN log(", r[0], ", ", r[1], ") END"}, dbl: true}
	}), nil
}

// rwNullIfAnyNull: MySQL's GREATEST/LEAST are NULL if any argument is
// (DuckDB's ignore NULLs) and compare strings with the collation (DuckDB's
// do not). Folded pairwise, each argument bound once.
func rwNullIfAnyNull(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	cmp := " >= "
	if name == "least" {
		cmp = " <= "
	}
	dbl := isDouble(args[0])
	cur := args[0]
	for _, a := range args[1:] {
		dbl = dbl || isDouble(a)
		cur = letx([]ast.ExprNode{cur, a}, func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN (", r[0], " IS NULL) OR (", r[1], " IS NULL) THEN NULL WHEN (", r[0], cmp, r[1], ") THEN ", r[0], " ELSE ", r[1], " END")
		})
	}
	out := cur.(*tmplExpr)
	out.dbl = dbl
	return out, nil
}

func rwIsNull(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return &isNullExpr{v: args[0]}, nil
}

// rwField: FIELD(s, a, b, …) is the 1-based index of s among a, b, …
// (compared with the collation), 0 if absent or NULL.
func rwField(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		parts := []any{"CASE"}
		for i, x := range r[1:] {
			parts = append(parts, " WHEN (", r[0], " = ", x, ") THEN "+strconv.Itoa(i+1))
		}
		parts = append(parts, " ELSE 0 END")
		return tx(parts...)
	}), nil
}

// rwTrim: TRIM(s) trims spaces (as DuckDB's trim); TRIM([dir] r FROM s)
// removes repetitions of the string r, which DuckDB's character-set trim
// matches only for a one-character r.
func rwTrim(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) == 1 {
		return &callExpr{name: "trim", args: args}, nil
	}
	dir := ast.TrimBothDefault
	if len(args) == 3 {
		d, ok := args[2].(*ast.TrimDirectionExpr)
		if !ok {
			return nil, unsupported("this form of TRIM is not supported")
		}
		dir = d.Direction
	}
	r, ok := textLit(args[1])
	if !ok || utf8.RuneCountInString(r) != 1 {
		return nil, unsupported("TRIM of anything but a one-character string literal is not supported")
	}
	name := "trim"
	switch dir {
	case ast.TrimLeading:
		name = "ltrim"
	case ast.TrimTrailing:
		name = "rtrim"
	}
	return &callExpr{name: name, args: args[:2]}, nil
}

// rwSubstring: MySQL gives ” for position 0, a negative length, or a
// negative position before the start; DuckDB counts from the start, takes
// preceding characters, or clamps.
func rwSubstring(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	p, pok := intLit(args[1])
	l, lok := int64(0), true
	if len(args) == 3 {
		l, lok = intLit(args[2])
	}
	if pok && p >= 1 && lok && l >= 0 {
		return &callExpr{name: "substring", args: args}, nil
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		parts := []any{"CASE WHEN (", r[0], " IS NULL) OR (", r[1], " IS NULL)"}
		if len(r) == 3 {
			parts = append(parts, " OR (", r[2], " IS NULL)")
		}
		parts = append(parts, " THEN NULL WHEN (", r[1], " = 0) OR ((0 - ", r[1], ") > length(", r[0], "))")
		if len(r) == 3 {
			parts = append(parts, " OR (", r[2], " <= 0)")
		}
		parts = append(parts, " THEN '' ELSE substring(", r[0], ", ", r[1])
		if len(r) == 3 {
			parts = append(parts, ", ", r[2])
		}
		parts = append(parts, ") END")
		return tx(parts...)
	}), nil
}

// rwLeftRight: MySQL gives ” for a negative length; DuckDB counts from the
// other end.
func rwLeftRight(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	if n, ok := intLit(args[1]); ok && n >= 0 {
		return &callExpr{name: name, args: args}, nil
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[1], " < 0) THEN "+name+"(", r[0], ", 0) ELSE "+name+"(", r[0], ", ", r[1], ") END")
	}), nil
}

// rwPad: LPAD/RPAD with a literal length and a literal non-empty padding
// (MySQL returns NULL for a negative length or empty padding).
func rwPad(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	n, ok := intLit(args[1])
	pad, pok := textLit(args[2])
	if !ok || n < 0 || !pok || pad == "" {
		return nil, unsupported("%s takes a non-negative integer literal length and a non-empty string literal padding", strings.ToUpper(name))
	}
	return &callExpr{name: name, args: []ast.ExprNode{mysqlStr(args[0]), args[1], args[2]}}, nil
}

func rwSpace(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	n, ok := intLit(args[0])
	if !ok || n < 0 || n > 1<<20 {
		return nil, unsupported("SPACE takes a non-negative integer literal")
	}
	return tx("repeat(' ', ", args[0], ")"), nil
}

// rwConcat: MySQL's CONCAT is NULL if any argument is, like DuckDB's ||.
func rwConcat(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	for _, a := range args {
		if isNullLit(a) {
			// NULL, as a string: DuckDB folds 'a' || NULL to a NULL it
			// types INTEGER.
			return &castExpr{v: a, typ: "VARCHAR"}, nil
		}
	}
	parts := []any{"("}
	for i, a := range args {
		if i > 0 {
			parts = append(parts, " || ")
		}
		parts = append(parts, mysqlStr(a))
	}
	return tx(append(parts, ")")...), nil
}

// rwConcatWS: both skip NULL arguments.
func rwConcatWS(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	out := []ast.ExprNode{args[0]}
	for _, a := range args[1:] {
		out = append(out, mysqlStr(a))
	}
	return &callExpr{name: "concat_ws", args: out}, nil
}

// rwLocate: LOCATE(sub, s), POSITION(sub IN s), INSTR(s, sub) compare with
// MySQL's case- and accent-insensitive collation.
func rwLocate(instr bool) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		s, sub := args[1], args[0]
		if instr {
			s, sub = args[0], args[1]
		}
		return tx("instr(lower(strip_accents(", s, ")), lower(strip_accents(", sub, ")))"), nil
	}
}

// rwSubstringIndex: SUBSTRING_INDEX(s, delim, n) with a literal delimiter and
// count.
func rwSubstringIndex(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, ok := textLit(args[1])
	n, nok := intLit(args[2])
	if !ok || d == "" || !nok {
		return nil, unsupported("SUBSTRING_INDEX takes a non-empty string literal delimiter and an integer literal count")
	}
	switch {
	case n == 0:
		return tx("substring(", args[0], ", 1, 0)"), nil
	case n > 0:
		return tx("array_to_string(string_split(", args[0], ", ", args[1], ")[1:", args[2], "], ", args[1], ")"), nil
	}
	return tx("array_to_string(string_split(", args[0], ", ", args[1], ")[", args[2], ":], ", args[1], ")"), nil
}

// rwASCII: MySQL gives the first byte; refused (at run time) for a non-ASCII
// first character.
func rwASCII(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN (ascii(", r[0], ") < 128) THEN ascii(", r[0],
			") ELSE error('ASCII of a non-ASCII character is not supported') END")
	}), nil
}

// rwChar: CHAR(n) for one code in 0..127 (MySQL skips NULL).
func rwChar(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if !isNullLit(args[1]) {
		return nil, unsupported("CHAR … USING is not supported")
	}
	return letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN '' WHEN (", r[0], " BETWEEN 0 AND 127) THEN chr(CAST(", r[0],
			" AS INTEGER)) ELSE error('CHAR of a code outside 0 to 127 is not supported') END")
	}), nil
}

// rwFormat: FORMAT(x, d) rounds half away from zero and groups thousands.
func rwFormat(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	d, ok := intLit(args[1])
	if !ok || d < 0 || d > 30 {
		return nil, unsupported("FORMAT takes an integer literal from 0 to 30 as its second argument")
	}
	if isDouble(args[0]) {
		return nil, unsupported("FORMAT of a DOUBLE is not supported")
	}
	return letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
		ds := strconv.FormatInt(d, 10)
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL ELSE format('{:,."+ds+"f}', CAST(round(", r[0], ", "+ds+") AS DECIMAL(38,"+ds+"))) END")
	}), nil
}

func rwUUID(string, []ast.ExprNode) (ast.ExprNode, error) {
	return tx("CAST(gen_random_uuid() AS VARCHAR)"), nil
}

// dateFormatCodes maps MySQL DATE_FORMAT specifiers to DuckDB strftime.
var dateFormatCodes = map[byte]string{
	'Y': "%Y", 'y': "%y", 'm': "%m", 'c': "%-m", 'd': "%d", 'e': "%-d", 'H': "%H", 'k': "%-H",
	'h': "%I", 'I': "%I", 'l': "%-I", 'i': "%M", 's': "%S", 'S': "%S", 'p': "%p", 'M': "%B",
	'b': "%b", 'W': "%A", 'a': "%a", 'j': "%j", 'f': "%f", 'T': "%H:%M:%S", 'r': "%I:%M:%S %p",
	'U': "%U", 'w': "%w", '%': "%%", // not %u: MySQL's week 1 has four days, C's starts on a Monday
}

// translateFormat translates a MySQL format; hasDate/hasTime say which parts
// it reads.
func translateFormat(f string, parse bool) (out string, hasDate, hasTime bool, err error) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(f) {
			return "", false, false, unsupported("date format ends with %%")
		}
		i++
		code, ok := dateFormatCodes[f[i]]
		if !ok || parse && strings.Contains("UuwWajp", string(f[i])) {
			return "", false, false, unsupported("date format specifier %%%c is not supported", f[i])
		}
		if parse {
			code = strings.ReplaceAll(code, "-", "")
		}
		switch f[i] {
		case 'Y', 'y', 'm', 'c', 'd', 'e', 'M', 'b', 'j':
			hasDate = true
		case 'H', 'k', 'h', 'I', 'l', 'i', 's', 'S', 'f', 'T', 'r':
			hasTime = true
		}
		b.WriteString(code)
	}
	return b.String(), hasDate, hasTime, nil
}

func rwDateFormat(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	f, ok := textLit(args[1])
	if !ok {
		return nil, unsupported("DATE_FORMAT takes a string literal format")
	}
	if _, ok := textLit(args[0]); ok {
		return nil, unsupported("DATE_FORMAT of a string literal is not supported; CAST it to DATE or DATETIME")
	}
	out, _, _, err := translateFormat(f, false)
	if err != nil {
		return nil, err
	}
	return tx("strftime(", args[0], ", ", &litExpr{text: out, isText: true}, ")"), nil
}

func rwStrToDate(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	f, ok := textLit(args[1])
	if !ok {
		return nil, unsupported("STR_TO_DATE takes a string literal format")
	}
	out, hasDate, hasTime, err := translateFormat(f, true)
	if err != nil {
		return nil, err
	}
	call := tx("strptime(", args[0], ", ", &litExpr{text: out, isText: true}, ")")
	switch {
	case hasDate && hasTime:
		return call, nil
	case hasDate:
		return tx("CAST(", call, " AS DATE)"), nil
	}
	return nil, unsupported("STR_TO_DATE without a date part is not supported")
}

// intervalFuncs maps MySQL INTERVAL units to DuckDB interval constructors.
var intervalFuncs = map[ast.TimeUnitType]string{
	ast.TimeUnitMicrosecond: "to_microseconds", ast.TimeUnitSecond: "to_seconds", ast.TimeUnitMinute: "to_minutes",
	ast.TimeUnitHour: "to_hours", ast.TimeUnitDay: "to_days", ast.TimeUnitWeek: "to_weeks",
	ast.TimeUnitMonth: "to_months", ast.TimeUnitYear: "to_years",
}

func interval(n ast.ExprNode, u *ast.TimeUnitExpr) (ast.ExprNode, bool, error) {
	if l, ok := n.(*litExpr); ok {
		if l.isText {
			// MySQL reads a quoted count ('3' MONTH, as TPC-H writes it)
			// as the number it spells; anything else is refused rather
			// than read as MySQL's warning-and-prefix would.
			v, err := strconv.ParseInt(strings.TrimSpace(l.text), 10, 64)
			if err != nil {
				return nil, false, unsupported("INTERVAL takes an integer")
			}
			n = &litExpr{text: strconv.FormatInt(v, 10)}
		} else if l.isFloat || strings.Contains(l.text, ".") {
			return nil, false, unsupported("INTERVAL takes an integer")
		}
	}
	if u.Unit == ast.TimeUnitQuarter {
		return tx("to_months((3 * CAST(", n, " AS INTEGER)))"), true, nil
	}
	f, ok := intervalFuncs[u.Unit]
	if !ok {
		return nil, false, unsupported("INTERVAL unit %s is not supported", u.Unit.String())
	}
	dateUnit := u.Unit >= ast.TimeUnitDay
	if u.Unit == ast.TimeUnitMicrosecond || u.Unit == ast.TimeUnitSecond {
		return tx(f+"(CAST(", n, " AS BIGINT))"), false, nil
	}
	return tx(f+"(CAST(", n, " AS INTEGER))"), dateUnit, nil
}

var diffUnits = map[ast.TimeUnitType]string{
	ast.TimeUnitMicrosecond: "microsecond", ast.TimeUnitSecond: "second", ast.TimeUnitMinute: "minute",
	ast.TimeUnitHour: "hour", ast.TimeUnitDay: "day", ast.TimeUnitWeek: "week", ast.TimeUnitMonth: "month",
	ast.TimeUnitQuarter: "quarter", ast.TimeUnitYear: "year",
}

func tsArg(e ast.ExprNode) ast.ExprNode {
	if _, ok := textLit(e); ok {
		return &castExpr{v: e, typ: "TIMESTAMP"}
	}
	return e
}

// rwTimestampDiff: TIMESTAMPDIFF(unit, a, b) counts whole units elapsed from
// a to b, as DuckDB's date_sub (date_diff counts boundaries).
func rwTimestampDiff(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	u, ok := args[0].(*ast.TimeUnitExpr)
	if !ok {
		return nil, unsupported("TIMESTAMPDIFF takes a unit")
	}
	name, ok := diffUnits[u.Unit]
	if !ok {
		return nil, unsupported("TIMESTAMPDIFF unit %s is not supported", u.Unit.String())
	}
	switch u.Unit {
	case ast.TimeUnitMonth, ast.TimeUnitQuarter, ast.TimeUnitYear:
		// MySQL counts calendar months, less one when the end's day and
		// time of month are before the start's (DuckDB's date_sub treats
		// month ends differently: Jan 31 to Feb 29 is one month).
		per := map[ast.TimeUnitType]string{ast.TimeUnitMonth: "1", ast.TimeUnitQuarter: "3", ast.TimeUnitYear: "12"}[u.Unit]
		return letx([]ast.ExprNode{tsArg(args[1]), tsArg(args[2])}, func(r []ast.ExprNode) *tmplExpr {
			a := tx("CAST(", r[0], " AS TIMESTAMP)")
			b := tx("CAST(", r[1], " AS TIMESTAMP)")
			m := tx("(((year(", b, ") * 12) + month(", b, ")) - ((year(", a, ") * 12) + month(", a, ")))")
			da := tx("(", a, " - date_trunc('month', ", a, "))")
			db := tx("(", b, " - date_trunc('month', ", b, "))")
			return tx("CAST(trunc((CASE WHEN ((", m, " > 0) AND (", db, " < ", da, ")) THEN (", m, " - 1) WHEN ((", m, " < 0) AND (", db, " > ", da,
				")) THEN (", m, " + 1) ELSE ", m, " END) / "+per+") AS BIGINT)")
		}), nil
	}
	return tx("date_sub('"+name+"', ", tsArg(args[1]), ", ", tsArg(args[2]), ")"), nil
}

var extractUnits = map[ast.TimeUnitType]string{
	ast.TimeUnitSecond: "second", ast.TimeUnitMinute: "minute", ast.TimeUnitHour: "hour", ast.TimeUnitDay: "day",
	ast.TimeUnitMonth: "month", ast.TimeUnitQuarter: "quarter", ast.TimeUnitYear: "year",
}

func rwExtract(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	u, ok := args[0].(*ast.TimeUnitExpr)
	if !ok {
		return nil, unsupported("EXTRACT takes a unit")
	}
	name, ok := extractUnits[u.Unit]
	if !ok {
		return nil, unsupported("EXTRACT of %s is not supported", u.Unit.String())
	}
	return tx("date_part('"+name+"', ", args[1], ")"), nil
}

// rwTypedLiteral: DATE '…' and TIMESTAMP '…'.
func rwTypedLiteral(typ string) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		if _, ok := textLit(args[0]); !ok {
			return nil, unsupported("%s literal is not supported", typ)
		}
		return &castExpr{v: args[0], typ: typ}, nil
	}
}

// collations maps the MySQL collations COLLATE accepts to DuckDB's: binary
// ones compare bytes, the default-like ones fold case and accents.
func collation(name string) (string, error) {
	n := strings.ToLower(name)
	switch {
	case n == "binary" || strings.HasSuffix(n, "_bin") || strings.HasSuffix(n, "_as_cs"):
		return "c", nil
	case n == "utf8mb4_0900_ai_ci" || n == "utf8mb4_general_ci" || n == "utf8mb4_unicode_ci" ||
		n == "utf8_general_ci" || n == "utf8mb3_general_ci" || n == "utf8_unicode_ci":
		return engineCollation, nil
	case strings.HasSuffix(n, "_as_ci"):
		return "nocase", nil
	}
	return "", unsupported("COLLATE %s is not supported", quoteFuncName(n))
}

// binaryColl reports whether e carries an explicit case-sensitive collation
// (LIKE and REGEXP are then case-sensitive).
func binaryColl(e ast.ExprNode) bool {
	t, ok := e.(*tmplExpr)
	return ok && t.bin
}

// rowCompare expands (a, b) = (x, y) to a = x AND b = y, and <> to OR of
// <>, which is MySQL's meaning including NULLs.
func rowCompare(op string, l, r []ast.ExprNode) (ast.ExprNode, error) {
	if len(l) != len(r) {
		return nil, unsupported("row constructors of different sizes")
	}
	join := "AND"
	if op == "<>" {
		join = "OR"
	}
	var out ast.ExprNode
	for i := range l {
		c := &binExpr{op: op, l: cmpOperand(l[i], r[i]), r: cmpOperand(r[i], l[i])}
		if out == nil {
			out = c
		} else {
			out = &binExpr{op: join, l: out, r: c}
		}
	}
	return out, nil
}

// jsonExtract is the node rwJSON returns, so that JSON_UNQUOTE can recognise
// its argument.
type jsonExtract struct {
	*tmplExpr
	doc, path ast.ExprNode
}

// rowIn expands (a, b) IN ((x, y), …) with literal rows to an OR of row
// equalities, binding a and b once.
func rowIn(not bool, l []ast.ExprNode, rows [][]ast.ExprNode) (ast.ExprNode, error) {
	for _, r := range rows {
		if len(r) != len(l) {
			return nil, unsupported("row constructors of different sizes")
		}
		for _, v := range r {
			if _, ok := v.(*litExpr); !ok {
				return nil, unsupported("(…) IN ((…), …) takes rows of literals")
			}
		}
	}
	out := letx(l, func(refs []ast.ExprNode) *tmplExpr {
		parts := []any{"("}
		for i, r := range rows {
			if i > 0 {
				parts = append(parts, " OR ")
			}
			c, _ := rowCompare("=", refs, r)
			parts = append(parts, c)
		}
		return tx(append(parts, ")")...)
	})
	if not {
		return &unaryExpr{op: "NOT ", v: out}, nil
	}
	return out, nil
}

// rowInSub: (a, b) IN (SELECT x, y …) with MySQL's answer — TRUE when a row
// of the subquery equals (a, b), else NULL when one might (a comparison is
// NULL), else FALSE — over one copy of the subquery, each operand printed
// once (DuckDB's own row IN answers NULL where MySQL answers FALSE):
//
//	(SELECT CASE max(coalesce(CAST(<(a, b) = (c1, c2)> AS INTEGER) * 2, 1))
//	  WHEN 2 THEN TRUE WHEN 1 THEN NULL ELSE FALSE END
//	 FROM (<subquery>) AS "__lg_in" ("__lg_c1", "__lg_c2"))
//
// The subquery must be one SELECT with exactly as many plain fields as the
// row has values.
func rowInSub(not bool, l []ast.ExprNode, sub *ast.SubqueryExpr) (ast.ExprNode, error) {
	sel, ok := sub.Query.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != len(l) {
		return nil, unsupported("(…) IN (subquery) takes a SELECT with as many columns as the row")
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return nil, unsupported("(…) IN (subquery) takes a SELECT without *")
		}
	}
	refs := make([]ast.ExprNode, len(l))
	names := make([]string, len(l))
	for i := range l {
		names[i] = `"__lg_c` + strconv.Itoa(i+1) + `"`
		refs[i] = &litExpr{text: `"__lg_in".` + names[i]}
	}
	cmp, err := rowCompare("=", l, refs)
	if err != nil {
		return nil, err
	}
	out := tx("(SELECT CASE max(coalesce(CAST(", cmp, " AS INTEGER) * 2, 1)) WHEN 2 THEN TRUE WHEN 1 THEN NULL ELSE FALSE END FROM ",
		sub, ` AS "__lg_in" (`+strings.Join(names, ", ")+"))")
	if not {
		return &unaryExpr{op: "NOT ", v: out}, nil
	}
	return out, nil
}
