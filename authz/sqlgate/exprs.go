package sqlgate

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// The walk of expressions: expr dispatches on the kind of expression to one
// method per kind, and each method decides what every dialect prints —
// DuckDB's translation of MySQL semantics, or an upstream dialect's
// portable core (dialect.go) — or refuses. Functions of every kind are
// looked up in the one function table (funcs.go).

// expr validates e against the allow-list and returns its replacement.
func (w *walker) expr(e ast.ExprNode) (ast.ExprNode, error) {
	if e == nil {
		return nil, syntaxErr("missing expression")
	}
	if err := w.push(); err != nil {
		return nil, err
	}
	defer w.pop()
	switch x := e.(type) {
	case *ast.ColumnNameExpr:
		return x, w.column(x.Name)
	case *ast.ParenthesesExpr:
		return w.parentheses(x)
	case *ast.IsNullExpr:
		return w.isNull(x)
	case *ast.CompareSubqueryExpr:
		return w.compareSubquery(x)
	case *ast.ExistsSubqueryExpr:
		return w.exists(x)
	case *ast.SubqueryExpr:
		return w.scalarSubquery(x)
	case *ast.CaseExpr:
		return w.caseExpr(x)
	case *test_driver.ParamMarkerExpr:
		return w.param(x)
	case *test_driver.ValueExpr:
		return literal(x)
	case *ast.SetCollationExpr:
		return w.collate(x)
	case *ast.BinaryOperationExpr:
		return w.binaryOp(x)
	case *ast.UnaryOperationExpr:
		return w.unaryOp(x)
	case *ast.PatternInExpr:
		return w.patternIn(x)
	case *ast.IsTruthExpr:
		return w.isTruth(x)
	case *ast.PatternRegexpExpr:
		return w.regexp(x)
	case *ast.PatternLikeOrIlikeExpr:
		return w.like(x)
	case *ast.BetweenExpr:
		return w.betweenOp(x)
	case *ast.FuncCallExpr:
		return w.funcCall(x)
	case *ast.AggregateFuncExpr:
		return w.aggregateCall(x)
	case *ast.WindowFuncExpr:
		return w.windowCall(x)
	case *ast.FuncCastExpr:
		return w.cast(x)
	}
	return nil, w.refuse(e)
}

// upstream reports whether the walk prints an upstream dialect.
func (w *walker) upstream() bool { return w.dialect != DialectDuckDB }

// refuse is the refusal of an expression the dialect does not have.
func (w *walker) refuse(e ast.Node) error {
	if w.upstream() {
		return unsupported("%s is not supported on tables of an upstream engine", nodeName(e))
	}
	return unsupported("%s is not supported", nodeName(e))
}

func (w *walker) parentheses(x *ast.ParenthesesExpr) (ast.ExprNode, error) {
	var err error
	x.Expr, err = w.expr(x.Expr)
	return x, err
}

func (w *walker) isNull(x *ast.IsNullExpr) (ast.ExprNode, error) {
	var err error
	n := &isNullExpr{not: x.Not}
	n.v, err = w.expr(x.Expr)
	return n, err
}

func (w *walker) compareSubquery(x *ast.CompareSubqueryExpr) (ast.ExprNode, error) {
	op, ok := comparisonOps[x.Op]
	if !ok || w.dialect == DialectSQLite {
		return nil, unsupported("operator %q is not supported with ANY/ALL here", x.Op.String())
	}
	var err error
	n := &cmpSubExpr{op: op, all: x.All}
	if n.l, err = w.expr(x.L); err != nil {
		return nil, err
	}
	n.sub, err = w.subquery(x.R)
	return n, err
}

func (w *walker) exists(x *ast.ExistsSubqueryExpr) (ast.ExprNode, error) {
	var err error
	n := &existsExpr{not: x.Not}
	n.sub, err = w.subquery(x.Sel)
	return n, err
}

func (w *walker) scalarSubquery(x *ast.SubqueryExpr) (ast.ExprNode, error) {
	n, err := w.subquery(x)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (w *walker) param(x *test_driver.ParamMarkerExpr) (ast.ExprNode, error) {
	if w.upstream() {
		return nil, unsupported("parameters are not supported on tables of an upstream engine")
	}
	if w.pol != nil {
		return nil, unsupported("parameters are not allowed in a policy expression")
	}
	p := &paramExpr{offset: x.Offset}
	w.params = append(w.params, p)
	return p, nil
}

func (w *walker) collate(x *ast.SetCollationExpr) (ast.ExprNode, error) {
	if w.upstream() {
		return nil, w.refuse(x)
	}
	coll, err := collation(x.Collate)
	if err != nil {
		return nil, err
	}
	v, err := w.expr(x.Expr)
	if err != nil {
		return nil, err
	}
	t := tx("(", v, " COLLATE "+coll+")")
	t.bin = coll == "c"
	return t, nil
}

func (w *walker) binaryOp(x *ast.BinaryOperationExpr) (ast.ExprNode, error) {
	if w.upstream() {
		return w.portableBinary(x)
	}
	op, ok := binaryOps[x.Op]
	if !ok {
		return nil, unsupported("operator %q is not supported", x.Op.String())
	}
	lr, lok := x.L.(*ast.RowExpr)
	rr, rok := x.R.(*ast.RowExpr)
	if lok && rok && (x.Op == opcode.EQ || x.Op == opcode.NE) {
		if err := w.exprs(lr.Values); err != nil {
			return nil, err
		}
		if err := w.exprs(rr.Values); err != nil {
			return nil, err
		}
		return rowCompare(op, lr.Values, rr.Values)
	}
	var err error
	n := &binExpr{op: op}
	if n.l, err = w.expr(x.L); err != nil {
		return nil, err
	}
	if n.r, err = w.expr(x.R); err != nil {
		return nil, err
	}
	switch x.Op {
	case opcode.IntDiv:
		return intDiv(n.l, n.r), nil
	case opcode.Div:
		// Exact for exact values (typed.go); NULL for division by zero.
		return &divExpr{l: n.l, r: n.r}, nil
	case opcode.Mod:
		// MySQL yields NULL for division by zero.
		n.r = &callExpr{name: "nullif", args: []ast.ExprNode{n.r, &litExpr{text: "0"}}}
	case opcode.Plus, opcode.Minus:
		n.l, n.r = numOperand(n.l), numOperand(n.r)
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
		n.l, n.r = cmpOperand(n.l, n.r), cmpOperand(n.r, n.l)
		w.noteCompare(n.l, n.r) // CompareColumns (facts.go)
		w.noteCompare(n.r, n.l)
	case opcode.LogicXor:
		// NULL if either is NULL, else true when exactly one is true.
		n.op = "<>"
		n.l, n.r = &castExpr{v: n.l, typ: "BOOLEAN"}, &castExpr{v: n.r, typ: "BOOLEAN"}
	case opcode.And, opcode.Or, opcode.Xor, opcode.LeftShift, opcode.RightShift:
		// MySQL's bit operations are on unsigned 64-bit integers.
		l, r := &castExpr{v: n.l, typ: "UBIGINT"}, &castExpr{v: n.r, typ: "UBIGINT"}
		if x.Op == opcode.Xor {
			return &callExpr{name: "xor", args: []ast.ExprNode{l, r}}, nil
		}
		n.l, n.r = l, r
	}
	return n, nil
}

func (w *walker) unaryOp(x *ast.UnaryOperationExpr) (ast.ExprNode, error) {
	var err error
	n := &unaryExpr{}
	switch op, ok := unaryOps[x.Op]; {
	case ok:
		n.op = op
	case x.Op == opcode.BitNeg && !w.upstream():
		n.op = "~"
		if n.v, err = w.expr(x.V); err != nil {
			return nil, err
		}
		n.v = &castExpr{v: n.v, typ: "UBIGINT"}
		return n, nil
	case w.upstream():
		return nil, unsupported("operator %q is not supported on tables of an upstream engine", x.Op.String())
	default:
		return nil, unsupported("operator %q is not supported", x.Op.String())
	}
	n.v, err = w.expr(x.V)
	return n, err
}

func (w *walker) patternIn(x *ast.PatternInExpr) (ast.ExprNode, error) {
	row, isRow := x.Expr.(*ast.RowExpr)
	switch {
	case isRow && w.upstream():
		return nil, unsupported("row constructors are not supported on tables of an upstream engine")
	case isRow && x.Sel != nil:
		if err := w.exprs(row.Values); err != nil {
			return nil, err
		}
		sub, err := w.subquery(x.Sel)
		if err != nil {
			return nil, err
		}
		return rowInSub(x.Not, row.Values, sub)
	case isRow:
		if err := w.exprs(row.Values); err != nil {
			return nil, err
		}
		rows := make([][]ast.ExprNode, len(x.List))
		for i, e := range x.List {
			r, ok := e.(*ast.RowExpr)
			if !ok {
				return nil, unsupported("a row constructor is not supported here")
			}
			if err := w.exprs(r.Values); err != nil {
				return nil, err
			}
			rows[i] = r.Values
		}
		return rowIn(x.Not, row.Values, rows)
	}
	n, err := w.in(x)
	if err != nil {
		return nil, err
	}
	if !w.upstream() {
		for i := range n.list {
			n.list[i] = cmpOperand(n.list[i], n.v)
		}
	}
	return n, nil
}

func (w *walker) isTruth(x *ast.IsTruthExpr) (ast.ExprNode, error) {
	if w.upstream() {
		return nil, w.refuse(x)
	}
	v, err := w.expr(x.Expr)
	if err != nil {
		return nil, err
	}
	what := " IS TRUE)"
	switch {
	case x.True == 0 && !x.Not:
		what = " IS FALSE)"
	case x.True == 0:
		what = " IS NOT FALSE)"
	case x.Not:
		what = " IS NOT TRUE)"
	}
	return tx("(CAST(", v, " AS BOOLEAN)"+what), nil
}

// regexp: MySQL's REGEXP is case-insensitive under its default collation.
func (w *walker) regexp(x *ast.PatternRegexpExpr) (ast.ExprNode, error) {
	if w.upstream() {
		return nil, w.refuse(x)
	}
	v, err := w.expr(x.Expr)
	if err != nil {
		return nil, err
	}
	p, err := w.expr(x.Pattern)
	if err != nil {
		return nil, err
	}
	flags := ", 'i')"
	if binaryColl(v) || binaryColl(p) {
		flags = ", 'c')"
	}
	m := tx("regexp_matches(", v, ", ", p, flags)
	if x.Not {
		return &unaryExpr{op: "NOT ", v: m}, nil
	}
	return m, nil
}

func (w *walker) like(x *ast.PatternLikeOrIlikeExpr) (ast.ExprNode, error) {
	var err error
	if w.upstream() {
		if !x.IsLike || x.EscapeExplicit {
			return nil, unsupported("ILIKE and LIKE … ESCAPE are not supported on tables of an upstream engine")
		}
		n := &plainLikeExpr{not: x.Not, sqlite: w.dialect == DialectSQLite}
		if n.v, err = w.expr(x.Expr); err != nil {
			return nil, err
		}
		n.pat, err = w.expr(x.Pattern)
		return n, err
	}
	if !x.IsLike {
		return nil, unsupported("ILIKE is not supported")
	}
	n := &likeExpr{not: x.Not, escape: `\`}
	if x.EscapeExplicit {
		switch {
		case x.Escape == 0:
			n.escape = ""
		case x.Escape < 0x80:
			n.escape = string(rune(x.Escape))
		default:
			return nil, unsupported("non-ASCII LIKE escape characters are not supported")
		}
	}
	if n.v, err = w.expr(x.Expr); err != nil {
		return nil, err
	}
	if n.pat, err = w.expr(x.Pattern); err != nil {
		return nil, err
	}
	n.cs = binaryColl(n.v) || binaryColl(n.pat)
	if _, col := n.v.(*ast.ColumnNameExpr); col && !n.cs && w.pol == nil {
		w.likes = append(w.likes, n) // LikeColumns (facts.go)
	}
	if !n.cs && strings.ToLower(n.escape) != strings.ToUpper(n.escape) {
		// The comparison ignores case (likeExpr), so a letter could not
		// stand apart from its other case as the escape character.
		return nil, unsupported("a letter as the LIKE escape character is not supported; use a symbol such as '|'")
	}
	if l, ok := n.pat.(*litExpr); ok && l.isText && l.of == nil && !strings.Contains(l.text, n.escape) {
		// An escape character the pattern does not hold changes nothing,
		// and the engine's LIKE … ESCAPE is a general matcher: without it,
		// '%p%' and 'p%' become substring and prefix searches (a scan of
		// TPC-H's o_comment: 1.8× faster).
		n.escape = ""
	}
	return n, nil
}

func (w *walker) betweenOp(x *ast.BetweenExpr) (ast.ExprNode, error) {
	n, err := w.between(x)
	if err != nil {
		return nil, err
	}
	if !w.upstream() {
		n.lo, n.hi = cmpOperand(n.lo, n.v), cmpOperand(n.hi, n.v)
	}
	return n, nil
}

// funcCall walks a scalar function call: the function table's translation
// (or portable form), typed for the type pass.
func (w *walker) funcCall(x *ast.FuncCallExpr) (ast.ExprNode, error) {
	name := x.FnName.L
	if x.Schema.O != "" {
		return nil, unsupported("qualified function names are not supported")
	}
	if w.pol != nil {
		if n, ok, err := w.callerFunc(x); ok {
			return n, err
		}
	}
	if w.upstream() {
		return w.portableCall(x)
	}
	spec, err := lookupFunc(name, len(x.Args), fnScalar)
	if err != nil {
		return nil, err
	}
	args := make([]ast.ExprNode, len(x.Args))
	for i, a := range x.Args {
		switch a.(type) {
		case *ast.TimeUnitExpr, *ast.TrimDirectionExpr:
			if spec.rw == nil {
				return nil, unsupported("%s is not supported", nodeName(a))
			}
			args[i] = a // validated by spec.rw
			continue
		}
		if args[i], err = w.expr(a); err != nil {
			return nil, err
		}
	}
	if n, ok, err := w.limitedCall(x, name, spec, args); ok {
		if err == nil {
			w.noteCall(n, spec.ret, args)
		}
		return n, err
	}
	if spec.rw != nil {
		n, err := spec.rw(spec.duck, args)
		if err != nil {
			return nil, err
		}
		w.noteCall(n, spec.ret, args)
		return n, nil
	}
	if name == "any_value" {
		// An aggregate in DuckDB; in MySQL a per-row value unless the
		// SELECT is aggregated (checked at the end of the SELECT).
		if w.sel == nil {
			return nil, unsupported("ANY_VALUE is not supported here")
		}
		w.sel.anyValue = true
	}
	n := &callExpr{name: spec.duck, args: args, dbl: spec.double()}
	w.noteCall(n, spec.ret, args)
	return n, nil
}

// aggregateCall walks an aggregate call (not over a window).
func (w *walker) aggregateCall(x *ast.AggregateFuncExpr) (ast.ExprNode, error) {
	name := strings.ToLower(x.F)
	if w.upstream() {
		return w.portableAggregate(x, name)
	}
	if w.sel == nil {
		return nil, unsupported("aggregate functions are not supported %s", w.context())
	}
	if x.Order != nil && name != "group_concat" {
		return nil, unsupported("ORDER BY inside %q is not supported", name)
	}
	spec, err := lookupFunc(name, len(x.Args), fnAggregate)
	if err != nil {
		return nil, err
	}
	if w.aggArg > 0 {
		// MySQL rejects them too; and the typed AVG prints its argument
		// twice, so nesting would double the output at every level.
		return nil, unsupported("aggregate functions cannot be nested")
	}
	n := &callExpr{name: spec.duck, args: x.Args, distinct: x.Distinct, dbl: spec.double()}
	w.aggArg++
	err = w.exprs(n.args)
	w.aggArg--
	if err != nil {
		return nil, err
	}
	w.sel.aggs++
	a, err := w.aggregate(name, n, x)
	if err != nil {
		return nil, err
	}
	if w.recursive > 0 && growsInRecursion[name] {
		a = w.capBuilt(strings.ToUpper(name), a)
	}
	w.noteCall(a, spec.ret, n.args)
	return a, nil
}

// windowCall walks a window function or an aggregate over a window.
func (w *walker) windowCall(x *ast.WindowFuncExpr) (ast.ExprNode, error) {
	if w.upstream() {
		return nil, w.refuse(x)
	}
	name := strings.ToLower(x.Name)
	if w.sel == nil {
		return nil, unsupported("window functions are not supported %s", w.context())
	}
	if x.IgnoreNull || x.FromLast || x.Distinct {
		return nil, unsupported("IGNORE NULLS, FROM LAST and DISTINCT in window functions are not supported")
	}
	spec, err := lookupFunc(name, len(x.Args), fnWindow, fnAggregate)
	if err != nil {
		return nil, err
	}
	if name == "group_concat" || name == "json_arrayagg" || name == "count" && len(x.Args) > 1 || strings.HasPrefix(name, "bit_") {
		return nil, unsupported("%q is not supported as a window function", name)
	}
	if w.aggArg > 0 || w.winArg > 0 {
		return nil, unsupported("window functions cannot be nested in aggregate or window functions")
	}
	n := &callExpr{name: spec.duck, args: x.Args, over: &x.Spec, dbl: spec.double()}
	w.winArg++
	err = w.exprs(n.args)
	w.winArg--
	if err != nil {
		return nil, err
	}
	if err := w.windowSpec(&x.Spec); err != nil {
		return nil, err
	}
	if name == "sum" || name == "avg" {
		return &numAggExpr{avg: name == "avg", call: n}, nil
	}
	w.noteCall(n, spec.ret, n.args)
	return n, nil
}

func (w *walker) cast(x *ast.FuncCastExpr) (ast.ExprNode, error) {
	if w.upstream() {
		return nil, w.refuse(x)
	}
	if x.FunctionType != ast.CastFunction && x.FunctionType != ast.CastConvertFunction {
		return nil, unsupported("the BINARY operator is not supported")
	}
	typ, err := castType(x.Tp)
	if err != nil {
		return nil, err
	}
	n := &castExpr{typ: typ}
	if n.v, err = w.expr(x.Expr); err != nil {
		return nil, err
	}
	switch typ {
	case "TIME":
		return &timeCastExpr{v: n.v}, nil
	case "VARCHAR":
		// MySQL prints a DOUBLE without ".0" and a boolean as 0/1.
		return mysqlStr(n.v), nil
	case "BIGINT", "UBIGINT":
		if s, ok := textLit(n.v); ok {
			// MySQL reads the integer prefix of a string ('2.5' is 2),
			// DuckDB rounds it.
			if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
				return nil, unsupported("CAST of a string that is not an integer to SIGNED/UNSIGNED is not supported")
			}
		}
	}
	return n, nil
}
