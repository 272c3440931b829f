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

// pushable is one such conjunct of a single-table SELECT's WHERE.
type pushable struct {
	col   string       // the column, unqualified
	lit   *litExpr     // the literal compared with; nil for IS [NOT] NULL
	inner ast.ExprNode // the conjunct over policyAlias, as printed inside
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
			if lit, ok := x.r.(*litExpr); ok {
				return append(out, pushable{col: col, lit: lit, inner: &binExpr{op: x.op, l: innerColumn(col), r: lit}})
			}
		}
		if col, ok := ownColumn(x.r, alias); ok {
			if lit, ok := x.l.(*litExpr); ok {
				return append(out, pushable{col: col, lit: lit, inner: &binExpr{op: x.op, l: lit, r: innerColumn(col)}})
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

// fits reports whether p cannot fail on a value of a column of type typ:
// DuckDB compares an integer literal with an integer column, and a string
// literal with a VARCHAR column, without converting the column's values
// (at most widening them), and IS NULL reads no value.
func (p *pushable) fits(typ string) bool {
	if p.lit == nil {
		return true
	}
	typ = strings.ToUpper(typ)
	if p.lit.isText {
		return typ == "VARCHAR"
	}
	return !p.lit.isFloat && isInteger(p.lit.text) && integerTypes[typ]
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
// carries.
func restorePushed(ctx *format.RestoreCtx, d Dialect, rel *Relation, push []pushable) error {
	if d != DialectDuckDB {
		return nil
	}
	for i := range push {
		p := &push[i]
		col := indexOf(rel.Columns, p.col)
		if col < 0 || col >= len(rel.Types) || !p.fits(rel.Types[col]) {
			continue
		}
		if len(rel.Policy.Masks) > 0 && rel.Policy.Masks[col] != nil {
			continue
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
