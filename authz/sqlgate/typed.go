package sqlgate

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// The nodes whose printed form depends on the MySQL types of their operands
// (types.go). Each decides at Render, from the inferred types, between the
// form that gives MySQL's type and value and the untyped form the gate
// prints when a type is not known. They build what they print per Render,
// so a Statement's tree is never mutated.

// pow10 is 10^e as an integer literal (0 <= e <= 38).
func pow10(e int) string { return "1" + strings.Repeat("0", e) }

// unitLit is 10^-s as a DECIMAL literal of scale s (s >= 1).
func unitLit(s int) string { return "0." + strings.Repeat("0", s-1) + "1" }

// scaledInt is the exact value e of scale s as an integer: e * 10^s.
func scaledInt(e ast.ExprNode, s int) ast.ExprNode {
	if s == 0 {
		return tx("CAST(", e, " AS HUGEINT)")
	}
	return tx("CAST((", e, " * "+pow10(s)+") AS HUGEINT)")
}

// divScale is MySQL's scale of a quotient whose dividend has scale s
// (div_precision_increment = 4, at most 30).
func divScale(s int) int { return min(s+4, maxScale) }

// exactQuotient is MySQL's exact quotient a / b of the integers num and den
// (a and b scaled by 10^ns and 10^ds): a DECIMAL of scale divScale(ns),
// rounded half away from zero, NULL when b is 0. ok is false when the
// scaling does not fit.
func exactQuotient(num ast.ExprNode, ns int, den ast.ExprNode, ds int) (ast.ExprNode, bool) {
	rs := divScale(ns)
	e := ds + rs - ns // quotient * 10^rs = num * 10^e / den
	if e < 0 || e > maxScale {
		return nil, false
	}
	if e > 0 {
		num = tx("(", num, " * "+pow10(e)+")")
	}
	return letx([]ast.ExprNode{num, den}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[1], " = 0) THEN NULL ELSE CAST((CAST(((sign(", r[0], ") * sign(", r[1], ")) * (((2 * abs(", r[0],
			")) + abs(", r[1], ")) // (2 * abs(", r[1], ")))) AS DECIMAL(38,0)) * "+unitLit(rs)+") AS DECIMAL(38,"+strconv.Itoa(rs)+")) END")
	}), true
}

// numAggExpr is SUM or AVG, plain or over a window. MySQL's SUM of integers
// is a DECIMAL of scale 0 and AVG of exact values a DECIMAL of the
// argument's scale + 4, rounded half away from zero; DuckDB's are HUGEINT
// and DOUBLE.
type numAggExpr struct {
	gateExpr
	avg  bool
	call *callExpr // DuckDB's sum(…) or avg(…): the untyped form
}

func (n *numAggExpr) arg() ast.ExprNode { return n.call.args[0] }

func (n *numAggExpr) mysqlType(t *typer) mtype {
	a := t.typeOf(n.arg())
	switch {
	case a.kind == tDouble:
		return doubleT
	case !a.exact():
		return unknownT
	case n.avg:
		return decimalT(divScale(a.scaleOf()))
	}
	return decimalT(a.scaleOf())
}

// typed returns the form of MySQL's type for an argument of type a, or
// nil for the untyped form.
func (n *numAggExpr) typed(a mtype) ast.ExprNode {
	if !a.exact() {
		return nil
	}
	if !n.avg {
		if a.kind == tDecimal {
			return nil // DuckDB's SUM of a DECIMAL(p,s) is a DECIMAL(38,s)
		}
		return tx("CAST(", n.call, " AS DECIMAL(38,0))")
	}
	sum := &callExpr{name: "sum", args: n.call.args, distinct: n.call.distinct, over: n.call.over}
	cnt := &callExpr{name: "count", args: n.call.args, distinct: n.call.distinct, over: n.call.over}
	q, ok := exactQuotient(scaledInt(sum, a.scaleOf()), a.scaleOf(), cnt, 0)
	if !ok {
		return nil
	}
	return q
}

func (n *numAggExpr) Restore(ctx *format.RestoreCtx) error {
	if t := n.typed(typeOfCtx(ctx.In, n.arg())); t != nil {
		return t.Restore(ctx)
	}
	return n.call.Restore(ctx)
}
func (n *numAggExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// divExpr is MySQL's a / b: of exact values, a DECIMAL of a's scale + 4,
// rounded half away from zero; NULL when b is 0. Untyped, DuckDB's
// DOUBLE division.
type divExpr struct {
	gateExpr
	l, r ast.ExprNode
}

func (n *divExpr) mysqlType(t *typer) mtype {
	l, r := t.typeOf(n.l), t.typeOf(n.r)
	switch {
	case l.kind == tDouble && (r.exact() || r.kind == tDouble), r.kind == tDouble && l.exact():
		return doubleT
	case !l.exact() || !r.exact():
		return unknownT
	}
	if _, ok := exactQuotient(n.l, l.scaleOf(), n.r, r.scaleOf()); !ok {
		return unknownT
	}
	return decimalT(divScale(l.scaleOf()))
}

func (n *divExpr) Restore(ctx *format.RestoreCtx) error {
	l, r := typeOfCtx(ctx.In, n.l), typeOfCtx(ctx.In, n.r)
	if l.exact() && r.exact() {
		if q, ok := exactQuotient(scaledInt(n.l, l.scaleOf()), l.scaleOf(), scaledInt(n.r, r.scaleOf()), r.scaleOf()); ok {
			return q.Restore(ctx)
		}
	}
	return (&binExpr{op: "/", l: n.l, r: &callExpr{name: "nullif", args: []ast.ExprNode{n.r, &litExpr{text: "0"}}}}).Restore(ctx)
}
func (n *divExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// roundExpr is ROUND(v, d) or TRUNCATE(v, d) with an integer literal d.
// MySQL keeps v's type: a DECIMAL gets scale d (rounded half away from
// zero, as DuckDB's round of a DECIMAL), an integer stays an integer, a
// DOUBLE is rounded half to even. Untyped, the form of untyped (rwRound's
// check at run time).
type roundExpr struct {
	gateExpr
	trunc   bool
	v, d    ast.ExprNode
	dv      int64
	untyped ast.ExprNode
}

func (n *roundExpr) mysqlType(t *typer) mtype {
	switch a := t.typeOf(n.v); a.kind {
	case tInt, tDouble:
		return a
	case tDecimal:
		if n.dv > maxScale {
			return unknownT
		}
		return decimalT(int(max(n.dv, 0)))
	}
	return unknownT
}

func (n *roundExpr) Restore(ctx *format.RestoreCtx) error {
	fn := "round("
	if n.trunc {
		fn = "trunc("
	}
	switch a := typeOfCtx(ctx.In, n.v); {
	case a.kind == tDecimal && n.dv <= maxScale:
		if n.dv > int64(a.scale) {
			// MySQL gives the result d digits of scale; DuckDB keeps the
			// argument's.
			return tx("CAST(", n.v, " AS DECIMAL(38,"+strconv.FormatInt(n.dv, 10)+"))").Restore(ctx)
		}
		return tx(fn, n.v, ", ", n.d, ")").Restore(ctx)
	case a.kind == tInt:
		return tx(fn, n.v, ", ", n.d, ")").Restore(ctx)
	case a.kind == tDouble && !n.trunc:
		return tx("round_even(", n.v, ", ", n.d, ")").Restore(ctx)
	}
	return n.untyped.Restore(ctx)
}
func (n *roundExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// unixTimeExpr is UNIX_TIMESTAMP(v). Of a DATE or a DATETIME MySQL gives an
// integer (0 outside its range, 1970 to 3001); a fraction of a second, which
// MySQL's DATETIME(0) has not, is refused at run time. Untyped, DuckDB's
// epoch (a DOUBLE).
type unixTimeExpr struct {
	gateExpr
	v ast.ExprNode
}

func (n *unixTimeExpr) mysqlType(t *typer) mtype {
	if a := t.typeOf(n.v); a.kind == tDate || a.kind == tDatetime {
		return intT
	}
	return unknownT
}

func (n *unixTimeExpr) Restore(ctx *format.RestoreCtx) error {
	if a := typeOfCtx(ctx.In, n.v); a.kind == tDate || a.kind == tDatetime {
		us := tx("epoch_us(CAST(", n.v, " AS TIMESTAMP))")
		return letx([]ast.ExprNode{us}, func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN ((", r[0], " < 0) OR (", r[0], " > 32536850047999999)) THEN 0 WHEN ((", r[0],
				" % 1000000) <> 0) THEN error('UNIX_TIMESTAMP of a DATETIME with a fraction of a second is not supported') ELSE (",
				r[0], " // 1000000) END")
		}).Restore(ctx)
	}
	return tx("epoch(", n.v, ")").Restore(ctx)
}
func (n *unixTimeExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// timeCastExpr is CAST(v AS TIME): MySQL's TIME has no fraction of a second
// (it rounds one away), so one is refused at run time.
type timeCastExpr struct {
	gateExpr
	v ast.ExprNode
}

func (n *timeCastExpr) Restore(ctx *format.RestoreCtx) error {
	return letx([]ast.ExprNode{&castExpr{v: n.v, typ: "TIME"}}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN ((microsecond(", r[0], ") % 1000000) <> 0) THEN error('CAST to TIME of a value with a fraction of a second is not supported') ELSE ",
			r[0], " END")
	}).Restore(ctx)
}
func (n *timeCastExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// floorExpr is FLOOR(v) or CEIL(v). MySQL keeps an integer (DuckDB's is a
// DOUBLE, so an integer is printed as itself) or a DOUBLE; of a
// DECIMAL(p,s) it gives a BIGINT when the result's digits (with sign and
// point, less the scale) are fewer than 20, else a DECIMAL(…,0), as DuckDB
// does for all. The precision is known for columns, literals and CASTs.
type floorExpr struct {
	gateExpr
	fn string // "floor" or "ceil"
	v  ast.ExprNode
}

// toInt reports whether MySQL's result for an argument of type a is a
// BIGINT where DuckDB's is a DECIMAL.
func (n *floorExpr) toInt(a mtype) bool {
	if a.kind != tDecimal || a.prec == 0 {
		return false
	}
	length := a.prec + 1 // the sign
	if a.scale > 0 {
		length++ // the point
	}
	return length-a.scale < 20
}

func (n *floorExpr) mysqlType(t *typer) mtype {
	switch a := t.typeOf(n.v); {
	case a.kind == tInt || a.kind == tDouble:
		return a
	case a.kind == tBool, n.toInt(a):
		return intT
	case a.kind == tDecimal:
		return decimalT(0)
	}
	return unknownT
}

func (n *floorExpr) Restore(ctx *format.RestoreCtx) error {
	call := &callExpr{name: n.fn, args: []ast.ExprNode{n.v}}
	switch a := typeOfCtx(ctx.In, n.v); {
	case a.kind == tInt:
		// DuckDB's floor of an integer is a DOUBLE, inexact beyond 2^53.
		return n.v.Restore(ctx)
	case a.kind == tBool:
		return (&castExpr{v: n.v, typ: "BIGINT"}).Restore(ctx)
	case n.toInt(a):
		return tx("CAST(", call, " AS BIGINT)").Restore(ctx)
	}
	return call.Restore(ctx)
}
func (n *floorExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// stringResult is a rewrite's result that MySQL types as a string where the
// printed form does not say so to the type pass (DATE_ADD of a string is a
// string, as MySQL gives it).
type stringResult struct {
	gateExpr
	v ast.ExprNode
}

func (n *stringResult) mysqlType(*typer) mtype                { return stringT }
func (n *stringResult) Restore(ctx *format.RestoreCtx) error  { return n.v.Restore(ctx) }
func (n *stringResult) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// comparedWith is operand e as it prints in a comparison with other. MySQL
// compares a DATE or DATETIME with a string by reading the string as a
// DATETIME (a DATE is its midnight), and a string that is no datetime
// matches nothing; DuckDB refuses to compare a DATE with a VARCHAR that is
// not a literal, and reads a literal as the other side's type. So a
// string expression is read as a TIMESTAMP (TRY_CAST: NULL when it is no
// datetime). A literal is left to the engine, which reads a date as MySQL
// does (and can prune files by it); the walker has cast one with a time of
// day (cmpOperand).
func comparedWith(ctx *format.RestoreCtx, e, other ast.ExprNode) ast.ExprNode {
	if k := typeOfCtx(ctx.In, other).kind; k != tDate && k != tDatetime {
		return e
	}
	if _, ok := textLit(e); ok || typeOfCtx(ctx.In, e).kind != tString {
		return e
	}
	return tx("TRY_CAST(", e, " AS TIMESTAMP)")
}
