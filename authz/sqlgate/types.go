package sqlgate

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// The type pass. MySQL types some results differently from DuckDB: AVG of
// exact values and "/" are DECIMAL with four more digits of scale, SUM of
// integers is DECIMAL, UNIX_TIMESTAMP of a DATE or DATETIME is an integer.
// Which form prints MySQL's type depends on the operand types, which the
// gate learns only at Render (Relation.Types). So the walker records where
// each column reference was written (its SELECT scope) and which rule of
// the function table types each call, and Render infers MySQL types bottom
// up, on demand, as the type-dependent nodes (numAggExpr, divExpr,
// roundExpr, unixTimeExpr) print. A type the pass cannot infer is tUnknown,
// and those nodes then print the untyped form (DuckDB's type; never a
// different value).
//
// The pass only claims a type where the printed DuckDB expression has the
// same one (in particular the same DECIMAL scale): the exact forms rescale
// their operands to integers by that scale.

// tkind is a kind of MySQL value.
type tkind uint8

const (
	tUnknown  tkind = iota
	tNull           // the NULL literal: takes the other type in a union
	tInt            // signed or unsigned integer (DuckDB's integer types)
	tBool           // a truth value (MySQL: an integer 0/1; DuckDB: BOOLEAN)
	tDecimal        // exact, with scale
	tDouble         // approximate
	tString         // character string
	tDate           // DATE
	tDatetime       // DATETIME (DuckDB TIMESTAMP)
	tTime           // TIME
)

// mtype is an inferred MySQL type.
type mtype struct {
	kind  tkind
	scale int // tDecimal
	prec  int // tDecimal: the precision when it is known (a column, a literal, a CAST), else 0
}

// maxScale is MySQL's largest DECIMAL scale.
const maxScale = 30

func (t mtype) exact() bool {
	return t.kind == tInt || t.kind == tBool || t.kind == tDecimal && t.scale <= maxScale
}

// scaleOf is the scale of an exact type (integers: 0).
func (t mtype) scaleOf() int {
	if t.kind == tDecimal {
		return t.scale
	}
	return 0
}

// String names the type in MySQL's terms (tests and messages).
func (t mtype) String() string {
	switch t.kind {
	case tNull:
		return "NULL"
	case tInt:
		return "BIGINT"
	case tBool:
		return "BOOLEAN"
	case tDecimal:
		if t.prec > 0 {
			return "DECIMAL(" + strconv.Itoa(t.prec) + "," + strconv.Itoa(t.scale) + ")"
		}
		return "DECIMAL(," + strconv.Itoa(t.scale) + ")"
	case tDouble:
		return "DOUBLE"
	case tString:
		return "VARCHAR"
	case tDate:
		return "DATE"
	case tDatetime:
		return "DATETIME"
	case tTime:
		return "TIME"
	}
	return "unknown"
}

var (
	unknownT  = mtype{}
	intT      = mtype{kind: tInt}
	boolT     = mtype{kind: tBool}
	doubleT   = mtype{kind: tDouble}
	stringT   = mtype{kind: tString}
	dateT     = mtype{kind: tDate}
	datetimeT = mtype{kind: tDatetime}
)

func decimalT(scale int) mtype {
	if scale < 0 || scale > maxScale {
		return unknownT
	}
	return mtype{kind: tDecimal, scale: scale}
}

// engineType maps an engine type string of Relation.Types (or a CAST
// target printed by the gate) to its MySQL type.
func engineType(s string) mtype {
	s = strings.ToUpper(strings.TrimSpace(s))
	switch s {
	case "BIGINT", "INTEGER", "INT", "SMALLINT", "TINYINT", "HUGEINT",
		"UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT", "INT8", "INT4", "INT2", "INT1":
		return intT
	case "DOUBLE", "FLOAT", "REAL", "FLOAT8", "FLOAT4":
		return doubleT
	case "VARCHAR", "TEXT", "STRING":
		return stringT
	case "DATE":
		return dateT
	case "TIMESTAMP", "DATETIME", "TIMESTAMP_US":
		return datetimeT
	case "TIME":
		return mtype{kind: tTime}
	case "BOOLEAN", "BOOL":
		return boolT
	}
	if rest, ok := strings.CutPrefix(s, "DECIMAL("); ok {
		if i := strings.IndexByte(rest, ','); i > 0 && strings.HasSuffix(rest, ")") {
			p, err1 := strconv.Atoi(strings.TrimSpace(rest[:i]))
			sc, err2 := strconv.Atoi(strings.TrimSpace(rest[i+1 : len(rest)-1]))
			if err1 == nil && err2 == nil && p >= 1 && p <= 38 && sc >= 0 && sc <= p {
				return mtype{kind: tDecimal, scale: sc, prec: p}
			}
		}
	}
	return unknownT
}

// retRule is how the function table types a call's result from its
// arguments (funcs.go).
type retRule uint8

const (
	retUnknown  retRule = iota // depends on more than the gate models
	retInt                     // an integer
	retUint                    // an unsigned 64-bit integer
	retBool                    // a truth value
	retDouble                  // DOUBLE
	retString                  // a string
	retDate                    // DATE
	retDatetime                // DATETIME
	retTime                    // TIME
	retArg0                    // the first argument's type (ABS, MIN, MAX, NULLIF)
	retUnify                   // the common type of all arguments (COALESCE, IFNULL)
	retUnify12                 // the common type of the second and third (IF)
	retTyped                   // the node types itself (roundExpr, numAggExpr, …)
)

// callType is what the walker records about a function call for the type
// pass: its rule and its walked arguments.
type callType struct {
	rule retRule
	args []ast.ExprNode
}

// typeInfo is what the walk leaves for the type pass.
type typeInfo struct {
	cols  map[*ast.ColumnName]*selScope // scope of each column reference
	sels  map[*ast.SelectStmt]*selScope // scope of each SELECT
	calls map[ast.ExprNode]callType     // function calls by result node
	rec   map[ast.Node]bool             // bodies of recursive CTEs that refer to themselves
}

// anchored records the body of a recursive CTE: MySQL and DuckDB type its
// columns by its first, non-recursive part.
func (ti *typeInfo) anchored(body ast.Node) {
	if ti.rec == nil {
		ti.rec = make(map[ast.Node]bool)
	}
	ti.rec[body] = true
}

// outCol is one output column of a result set.
type outCol struct {
	name string
	t    mtype
}

// typer infers types during one Render.
type typer struct {
	info  *typeInfo
	rel   map[TableRef]Relation
	memo  map[ast.Node]mtype
	outs  map[ast.Node][]outCol
	inOut map[ast.Node]bool // result sets being typed (recursive CTEs)
}

// typeOf returns the MySQL type of a walked expression printed by Render.
func (rb *renderBuf) typeOf(e ast.ExprNode) mtype {
	if rb.info == nil || rb.dialect != DialectDuckDB {
		return unknownT
	}
	if rb.ty == nil {
		rb.ty = &typer{info: rb.info, rel: rb.rel, memo: make(map[ast.Node]mtype)}
	}
	return rb.ty.typeOf(e)
}

// typeOfCtx is typeOf for a node being printed; unknown outside Render.
func typeOfCtx(w any, e ast.ExprNode) mtype {
	rb, ok := w.(*renderBuf)
	if !ok {
		return unknownT
	}
	return rb.typeOf(e)
}

func (t *typer) typeOf(e ast.ExprNode) mtype {
	if e == nil {
		return unknownT
	}
	if r, ok := t.memo[e]; ok {
		return r
	}
	r := t.infer(e)
	t.memo[e] = r
	return r
}

func (t *typer) infer(e ast.ExprNode) mtype {
	if ct, ok := t.info.calls[e]; ok && ct.rule != retTyped {
		return t.byRule(ct)
	}
	switch n := e.(type) {
	case *ast.ColumnNameExpr:
		return t.column(n.Name)
	case *ast.ParenthesesExpr:
		return t.typeOf(n.Expr)
	case *litExpr:
		return t.literal(n)
	case *binExpr:
		return t.binary(n)
	case *unaryExpr:
		switch n.op {
		case "-", "+":
			v := t.typeOf(n.v)
			if v.kind == tBool {
				return intT
			}
			return v
		case "~":
			return intT
		}
		return boolT
	case *castExpr:
		if n.typ == "TIME" {
			return mtype{kind: tTime}
		}
		return engineType(n.typ)
	case *timeCastExpr:
		return mtype{kind: tTime}
	case *callExpr:
		switch {
		case n.dbl:
			return doubleT
		case n.name == "nullif" && len(n.args) == 2:
			return t.typeOf(n.args[0])
		case n.name == "count":
			return intT
		}
		return unknownT
	case *tmplExpr:
		if n.dbl {
			return doubleT
		}
		return unknownT
	case *jsonExtract:
		return unknownT
	case *isNullExpr, *inExpr, *likeExpr, *betweenExpr, *cmpSubExpr, *existsExpr:
		return boolT
	case *ast.CaseExpr:
		var r mtype
		first := true
		for _, wc := range n.WhenClauses {
			r, first = t.unify(r, t.typeOf(wc.Result), first), false
		}
		if n.ElseClause != nil {
			r = t.unify(r, t.typeOf(n.ElseClause), first)
		} else {
			r = t.unify(r, mtype{kind: tNull}, first)
		}
		return r
	case *ast.SubqueryExpr:
		if cols := t.outputs(n.Query); len(cols) == 1 {
			return cols[0].t
		}
		return unknownT
	case typedExpr:
		return n.mysqlType(t)
	}
	return unknownT
}

// typedExpr is a node that types itself (the type-dependent nodes).
type typedExpr interface {
	mysqlType(t *typer) mtype
}

// unify is the common type of a union of values (CASE, COALESCE, set
// operations): the same kind only, as DuckDB may widen a mix differently.
func (t *typer) unify(a, b mtype, first bool) mtype {
	switch {
	case first:
		return b
	case a.kind == tNull:
		return b
	case b.kind == tNull:
		return a
	case a == b:
		return a
	case a.kind == tDecimal && b.kind == tDecimal && a.scale == b.scale:
		return decimalT(a.scale) // the precision may differ
	case a.kind == tDecimal && b.kind == tInt:
		// MySQL's and DuckDB's common type of a DECIMAL and an integer
		// keep the DECIMAL's scale (CASE … THEN price ELSE 0 END).
		return decimalT(a.scale)
	case a.kind == tInt && b.kind == tDecimal:
		return decimalT(b.scale)
	}
	return unknownT
}

func (t *typer) byRule(ct callType) mtype {
	switch ct.rule {
	case retInt, retUint:
		return intT
	case retBool:
		return boolT
	case retDouble:
		return doubleT
	case retString:
		return stringT
	case retDate:
		return dateT
	case retDatetime:
		return datetimeT
	case retTime:
		return mtype{kind: tTime}
	case retArg0:
		if len(ct.args) > 0 {
			return t.typeOf(ct.args[0])
		}
	case retUnify, retUnify12:
		args := ct.args
		if ct.rule == retUnify12 {
			if len(args) != 3 {
				return unknownT
			}
			args = args[1:]
		}
		var r mtype
		for i, a := range args {
			r = t.unify(r, t.typeOf(a), i == 0)
		}
		if r.kind == tNull {
			return unknownT
		}
		return r
	}
	return unknownT
}

// literal types a printed literal as DuckDB parses it: an integer, a
// DECIMAL with as many digits of scale as written, a DOUBLE (E notation), a
// string, a truth value; a reference bound by letx has its value's type.
func (t *typer) literal(n *litExpr) mtype {
	if n.of != nil {
		return t.typeOf(n.of)
	}
	switch {
	case n.isText:
		return stringT
	case n.isFloat:
		return doubleT
	case n.text == "NULL":
		return mtype{kind: tNull}
	case n.text == "TRUE" || n.text == "FALSE":
		return boolT
	}
	s := strings.TrimSuffix(strings.TrimPrefix(n.text, "("), ")")
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return unknownT
	}
	digits, scale, dot := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
			if dot {
				scale++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return unknownT
		}
	}
	if !dot {
		if digits > 38 {
			return unknownT
		}
		return intT
	}
	if digits > 38 || scale > maxScale {
		return unknownT // DuckDB reads it as a DOUBLE
	}
	return mtype{kind: tDecimal, scale: scale, prec: digits}
}

// binary types the arithmetic DuckDB does as MySQL does: + - * of
// integers and DECIMALs (scales as in both), % of integers, anything with a
// DOUBLE is a DOUBLE; comparisons and logic are truth values.
func (t *typer) binary(n *binExpr) mtype {
	switch n.op {
	case "+", "-", "*", "%":
	case "//", "&", "|", "<<", ">>":
		return unknownT
	default:
		return boolT
	}
	l, r := t.typeOf(n.l), t.typeOf(n.r)
	if l.kind == tDouble && (r.exact() || r.kind == tDouble) || r.kind == tDouble && l.exact() {
		return doubleT
	}
	if !l.exact() || !r.exact() {
		return unknownT
	}
	if l.kind != tDecimal && r.kind != tDecimal {
		return intT
	}
	switch n.op {
	case "*":
		return decimalT(l.scaleOf() + r.scaleOf())
	case "%":
		return unknownT // DuckDB's % of DECIMALs of different scales is a DOUBLE
	}
	return decimalT(max(l.scaleOf(), r.scaleOf()))
}

// column types a column reference: the column of the FROM source of its own
// SELECT it names (an unqualified name only in its own SELECT, and not when
// it could be a select-list alias; a qualified one in enclosing SELECTs
// too).
func (t *typer) column(cn *ast.ColumnName) mtype {
	sc := t.info.cols[cn]
	if sc == nil {
		return unknownT
	}
	name, table := cn.Name.L, cn.Table.L
	if table == "" {
		if sc.stmt != nil && sc.stmt.Fields != nil {
			for _, f := range sc.stmt.Fields.Fields {
				if f.AsName.L == name {
					return unknownT // ORDER BY, HAVING and DuckDB may bind the alias
				}
			}
		}
		found, r := false, unknownT
		for _, b := range sc.bindings {
			for _, c := range t.sourceCols(b) {
				if c.name == name {
					if found {
						return unknownT // ambiguous, or USING
					}
					found, r = true, c.t
				}
			}
		}
		return r
	}
	for s := sc; s != nil; s = s.parent {
		for _, b := range s.bindings {
			if b.alias == table {
				for _, c := range t.sourceCols(b) {
					if c.name == name {
						return c.t
					}
				}
				return unknownT
			}
		}
	}
	return unknownT
}

// sourceCols are the columns of one FROM source.
func (t *typer) sourceCols(b binding) []outCol {
	if b.real {
		r, ok := t.rel[b.ref]
		if !ok {
			return nil
		}
		out := make([]outCol, len(r.Columns))
		for i, c := range r.Columns {
			out[i].name = strings.ToLower(c)
			if i < len(r.Types) {
				out[i].t = engineType(r.Types[i])
			}
		}
		return out
	}
	if b.src == nil {
		return nil
	}
	cols := t.outputs(b.src)
	if len(b.cols) > 0 {
		if len(b.cols) != len(cols) {
			return nil
		}
		renamed := make([]outCol, len(cols))
		for i := range cols {
			renamed[i] = outCol{name: b.cols[i].L, t: cols[i].t}
		}
		return renamed
	}
	return cols
}

// outputs are the names and types of a result set's columns; nil when not
// known.
func (t *typer) outputs(rs ast.Node) []outCol {
	if cols, ok := t.outs[rs]; ok {
		return cols
	}
	if t.inOut[rs] {
		return nil // a recursive CTE's own reference
	}
	if t.outs == nil {
		t.outs, t.inOut = make(map[ast.Node][]outCol), make(map[ast.Node]bool)
	}
	t.inOut[rs] = true
	cols := t.computeOutputs(rs)
	delete(t.inOut, rs)
	t.outs[rs] = cols
	return cols
}

func (t *typer) computeOutputs(rs ast.Node) []outCol {
	switch n := rs.(type) {
	case *ast.SelectStmt:
		sc := t.info.sels[n]
		if sc == nil || n.Fields == nil {
			return nil
		}
		var out []outCol
		for _, f := range n.Fields.Fields {
			if f.WildCard != nil && sc.using {
				return nil // * lists a USING or NATURAL join's columns once, first
			}
			if f.WildCard != nil {
				found := false
				for _, b := range sc.bindings {
					if f.WildCard.Table.L != "" && f.WildCard.Table.L != b.alias {
						continue
					}
					cols := t.sourceCols(b)
					if cols == nil {
						return nil
					}
					out = append(out, cols...)
					found = true
				}
				if !found {
					return nil
				}
				continue
			}
			name := f.AsName.L
			if name == "" {
				if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
					name = c.Name.Name.L
				}
			}
			out = append(out, outCol{name: name, t: t.typeOf(f.Expr)})
		}
		return out
	case *ast.SetOprStmt:
		if n.SelectList == nil || len(n.SelectList.Selects) == 0 {
			return nil
		}
		if t.info.rec[n] {
			return t.outputs(n.SelectList.Selects[0])
		}
		return t.computeOutputs(n.SelectList)
	case *ast.SetOprSelectList:
		var out []outCol
		for i, s := range n.Selects {
			cols := t.outputs(s)
			if cols == nil {
				return nil
			}
			if i == 0 {
				out = append([]outCol(nil), cols...)
				continue
			}
			if len(cols) != len(out) {
				return nil
			}
			for j := range out {
				out[j].t = t.unify(out[j].t, cols[j].t, false)
			}
		}
		return out
	}
	return nil
}
