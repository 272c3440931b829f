package sqlgate

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// A row filter's derived table is fenced (Dialect.fence), so the engine
// cannot push the statement's predicates into the table scan and point
// lookups on a large filtered table become scans. A conjunct that cannot
// fail on any row and sees only what the caller may see anyway is safe on
// either side of the fence, so restorePolicy repeats it inside, next to the
// filter, where the scan can use it: a column of the table that is not
// masked, compared with a literal of the column's own kind (an integer with
// an integer column, a string with a VARCHAR column), or IS [NOT] NULL. The
// statement's WHERE is printed unchanged: the inner copy only removes rows
// the outer one would remove.
//
// A column compared with a parameter is repeated too, but only in the text
// RenderPushed prints, which comes with the kind of value each such
// parameter must be bound to: DuckDB converts a bound value of another kind
// ('abc' for a BIGINT column) at every row it compares, so inside the fence
// it would fail on rows the filter hides. The caller runs that text only
// when the bound values have those kinds, and Render's otherwise.

// pushable is one such conjunct of a single-table SELECT's WHERE.
type pushable struct {
	col   string       // the column, unqualified
	lit   *litExpr     // the literal compared with; nil for IS [NOT] NULL and parameters
	param *paramExpr   // the parameter compared with, if any
	inner ast.ExprNode // the conjunct over policyAlias, as printed inside
}

// ParamKind is the kind of value a parameter must be bound to for the text
// RenderPushed printed to be run (see there).
type ParamKind uint8

const (
	// ParamAny: the text places no condition on the parameter.
	ParamAny ParamKind = iota
	// ParamInteger: a signed integer of at most 64 bits, or NULL.
	ParamInteger
	// ParamText: a string, or NULL.
	ParamText
)

func (k ParamKind) String() string {
	switch k {
	case ParamInteger:
		return "integer"
	case ParamText:
		return "text"
	}
	return "any"
}

// comparisons are the operators a pushable conjunct may use.
var comparisons = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true}

// pushableConjuncts appends to out the conjuncts of where, a walked WHERE
// of a SELECT whose only FROM item is the table aliased alias, that compare
// one of its columns with a literal. Whether one is pushed is decided when
// it is printed, against the relation's types and masks.
func pushableConjuncts(where ast.ExprNode, alias string, out []pushable) []pushable {
	switch x := where.(type) {
	case *ast.ParenthesesExpr:
		return pushableConjuncts(x.Expr, alias, out)
	case *binExpr:
		if x.op == "AND" {
			return pushableConjuncts(x.r, alias, pushableConjuncts(x.l, alias, out))
		}
		if !comparisons[x.op] {
			return out
		}
		if col, ok := ownColumn(x.l, alias); ok {
			switch v := x.r.(type) {
			case *litExpr:
				return append(out, pushable{col: col, lit: v, inner: &binExpr{op: x.op, l: innerColumn(col), r: v}})
			case *paramExpr:
				return append(out, pushable{col: col, param: v, inner: &binExpr{op: x.op, l: innerColumn(col), r: v}})
			}
		}
		if col, ok := ownColumn(x.r, alias); ok {
			switch v := x.l.(type) {
			case *litExpr:
				return append(out, pushable{col: col, lit: v, inner: &binExpr{op: x.op, l: v, r: innerColumn(col)}})
			case *paramExpr:
				return append(out, pushable{col: col, param: v, inner: &binExpr{op: x.op, l: v, r: innerColumn(col)}})
			}
		}
	case *isNullExpr:
		if col, ok := ownColumn(x.v, alias); ok {
			return append(out, pushable{col: col, inner: &isNullExpr{not: x.not, v: innerColumn(col)}})
		}
	}
	return out
}

// ownColumn reports the column e names when it is a column of the table
// aliased alias: qualified by that alias, or unqualified (inside its own
// SELECT an unqualified name resolves to the only table of FROM first; a
// name that is not one of its columns is never pushed).
func ownColumn(e ast.ExprNode, alias string) (string, bool) {
	c, ok := e.(*ast.ColumnNameExpr)
	if !ok || c.Name == nil || c.Name.Schema.O != "" {
		return "", false
	}
	if t := c.Name.Table.O; t != "" && t != alias {
		return "", false
	}
	return c.Name.Name.O, true
}

func innerColumn(col string) *ast.ColumnNameExpr {
	return &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: cistr(policyAlias), Name: cistr(col)}}
}

// integerTypes are the engine's integer column types.
var integerTypes = map[string]bool{
	"TINYINT": true, "SMALLINT": true, "INTEGER": true, "BIGINT": true, "HUGEINT": true,
	"UTINYINT": true, "USMALLINT": true, "UINTEGER": true, "UBIGINT": true, "UHUGEINT": true,
}

// paramIntegerTypes are the integer column types a BIGINT value is
// compared with by widening the column (UBIGINT and the 128-bit types are
// not: their comparison with BIGINT goes through conversions this list does
// not vouch for).
var paramIntegerTypes = map[string]bool{
	"TINYINT": true, "SMALLINT": true, "INTEGER": true, "BIGINT": true,
	"UTINYINT": true, "USMALLINT": true, "UINTEGER": true,
}

// fits reports whether p cannot fail on a value of a column of type typ,
// and for a parameter the kind its bound value must have for that to hold:
// DuckDB compares an integer literal or a BIGINT value with an integer
// column, and a string with a VARCHAR column, without converting the
// column's values (at most widening them), and IS NULL reads no value.
func (p *pushable) fits(typ string) (bool, ParamKind) {
	typ = strings.ToUpper(typ)
	switch {
	case p.param != nil && typ == "VARCHAR":
		return true, ParamText
	case p.param != nil:
		return paramIntegerTypes[typ], ParamInteger
	case p.lit == nil:
		return true, ParamAny
	case p.lit.isText:
		return typ == "VARCHAR", ParamAny
	}
	return !p.lit.isFloat && isInteger(p.lit.text) && integerTypes[typ], ParamAny
}

// isInteger reports whether s is a decimal integer without sign.
func isInteger(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// restorePushed prints, after a row filter, " AND <conjunct>" for each of
// push that may run on the rows the filter hides: a column of rel, not
// masked, of a type the literal fits. Only for DuckDB, whose types rel
// carries. Parameters are pushed only when rb collects their kinds
// (RenderPushed).
func restorePushed(ctx *format.RestoreCtx, rb *renderBuf, rel *Relation, push []pushable) error {
	if rb.dialect != DialectDuckDB {
		return nil
	}
	for i := range push {
		p := &push[i]
		if p.param != nil && rb.kinds == nil {
			continue
		}
		col := indexOf(rel.Columns, p.col)
		if col < 0 || col >= len(rel.Types) {
			continue
		}
		ok, kind := p.fits(rel.Types[col])
		if !ok || len(rel.Policy.Masks) > 0 && rel.Policy.Masks[col] != nil {
			continue
		}
		if p.param != nil {
			n := p.param.n - 1
			if n < 0 || n >= len(rb.kinds) || rb.kinds[n] != ParamAny && rb.kinds[n] != kind {
				continue // two columns of different kinds: keep it outside
			}
			rb.kinds[n] = kind
			rb.pushed = true
		}
		ctx.WritePlain(" AND ")
		if err := p.inner.Restore(ctx); err != nil {
			return err
		}
	}
	return nil
}

func indexOf(cols []string, name string) int {
	for i, c := range cols {
		if c == name {
			return i
		}
	}
	return -1
}
