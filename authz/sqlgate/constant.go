package sqlgate

import "github.com/pingcap/tidb/pkg/parser/ast"

// Constant reports whether the result of the statement's rendering is fixed
// by the rendered text alone: a query of one SELECT without FROM (or FROM
// DUAL), clauses, parameters or functions, whose printed fields are
// literals, possibly negated (a value the gate answers itself, such as
// @@version, is printed as a literal) — the SELECT 1 that connection pools
// send to check a connection. Running the rendering again gives the same
// rows, of the same types, for any caller, so the result of one run may
// stand for every later run of the same rendered text.
func (s *Statement) Constant() bool {
	if s.kind != KindQuery || s.numParams != 0 || len(s.tables) != 0 {
		return false
	}
	sel, ok := s.root.(*ast.SelectStmt)
	if !ok || sel.Kind != ast.SelectStmtKindSelect || sel.Fields == nil || sel.From != nil || sel.Where != nil ||
		sel.GroupBy != nil || sel.Having != nil || sel.WindowSpecs != nil || sel.OrderBy != nil || sel.Limit != nil ||
		sel.LockInfo != nil || sel.With != nil || sel.SelectIntoOpt != nil || sel.TableHints != nil {
		return false
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil || !constantLiteral(f.Expr) {
			return false
		}
	}
	return len(sel.Fields.Fields) > 0
}

// constantLiteral reports whether e is a literal, or a literal negated.
func constantLiteral(e ast.ExprNode) bool {
	switch n := e.(type) {
	case *litExpr:
		return n.of == nil
	case *unaryExpr:
		return (n.op == "-" || n.op == "+") && constantLiteral(n.v)
	}
	return false
}
