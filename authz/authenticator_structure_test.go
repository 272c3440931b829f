package authz_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestLookupIsBranchFree holds the structure that makes Authenticator.lookup
// constant-time, since its timing cannot be asserted: one loop over every
// configured hash whose body has no branch, no early exit and no comparison
// (a comparison compiles to a flag that invites a branch), only arithmetic
// accumulated into the result; before the loop, only the token's length may
// end the lookup; after it, one return.
func TestLookupIsBranchFree(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "authenticator.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lookup *ast.FuncDecl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "lookup" && fd.Recv != nil {
			lookup = fd
		}
	}
	if lookup == nil {
		t.Fatal("authenticator.go has no method lookup")
	}
	checkLookup(t, fset, lookup)
}

// checkLookup reports every way fd departs from the branch-free shape.
func checkLookup(t *testing.T, fset *token.FileSet, fd *ast.FuncDecl) {
	t.Helper()
	body := fd.Body.List
	loop := -1
	for i, st := range body {
		ast.Inspect(st, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.RangeStmt:
				if loop >= 0 || n != st {
					t.Errorf("%s: lookup has a second or nested loop", fset.Position(n.Pos()))
				}
				loop = i
			case *ast.ForStmt:
				t.Errorf("%s: lookup loops with a condition (it must range over every hash)", fset.Position(n.Pos()))
			}
			return true
		})
	}
	if loop < 0 {
		t.Fatal("lookup has no loop over the hashes")
	}
	rs := body[loop].(*ast.RangeStmt)
	if sel, ok := rs.X.(*ast.SelectorExpr); !ok || sel.Sel.Name != "hashes" {
		t.Errorf("%s: the loop ranges over %s, not every configured hash", fset.Position(rs.X.Pos()), exprString(rs.X))
	}

	// Before the loop: only the presented token's length may end lookup.
	for _, st := range body[:loop] {
		ast.Inspect(st, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IfStmt:
				ast.Inspect(n.Cond, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok && id.Name != "len" && id.Name != "token" && id.Name != "maxPresentedTokenLen" {
						t.Errorf("%s: a condition before the loop depends on %s, not only on the token's length", fset.Position(id.Pos()), id.Name)
					}
					return true
				})
			case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.BranchStmt, *ast.GoStmt, *ast.DeferStmt:
				t.Errorf("%s: unexpected %T before the loop", fset.Position(n.Pos()), n)
			}
			return true
		})
	}

	// The loop body: assignments of arithmetic only.
	accumulated := map[string]bool{}
	for _, st := range rs.Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			switch st.Tok {
			case token.DEFINE, token.ASSIGN:
			case token.OR_ASSIGN:
				for _, l := range st.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						accumulated[id.Name] = true
					}
				}
			default:
				t.Errorf("%s: the loop body assigns with %s (only :=, = and |= accumulate without loss)", fset.Position(st.Pos()), st.Tok)
			}
			for _, e := range append(append([]ast.Expr{}, st.Lhs...), st.Rhs...) {
				checkBranchFree(t, fset, e)
			}
		default:
			t.Errorf("%s: the loop body holds a %T; only assignments are branch-free", fset.Position(st.Pos()), st)
		}
	}
	for _, v := range []string{"sel", "found"} {
		if !accumulated[v] {
			t.Errorf("the loop does not OR every entry into %s", v)
		}
	}

	// After the loop: one return of the accumulated values.
	after := body[loop+1:]
	if len(after) != 1 {
		t.Fatalf("lookup has %d statements after the loop, want one return", len(after))
	}
	if _, ok := after[0].(*ast.ReturnStmt); !ok {
		t.Errorf("%s: lookup ends with a %T, want a return", fset.Position(after[0].Pos()), after[0])
	}
}

// checkBranchFree reports anything in e that compares, short-circuits,
// calls a function (other than a conversion to uint64) or hides code.
func checkBranchFree(t *testing.T, fset *token.FileSet, e ast.Expr) {
	t.Helper()
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			switch n.Op {
			case token.XOR, token.OR, token.AND, token.SUB, token.ADD, token.SHR, token.SHL, token.AND_NOT:
			default:
				t.Errorf("%s: %s in the loop body (compare or short-circuit: a data-dependent branch)", fset.Position(n.OpPos), n.Op)
			}
		case *ast.UnaryExpr:
			if n.Op != token.SUB && n.Op != token.XOR && n.Op != token.AND {
				t.Errorf("%s: unary %s in the loop body", fset.Position(n.OpPos), n.Op)
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); !ok || id.Name != "uint64" {
				t.Errorf("%s: call of %s in the loop body (it may branch or exit early)", fset.Position(n.Pos()), exprString(n.Fun))
			}
		case *ast.FuncLit, *ast.CompositeLit, *ast.TypeAssertExpr, *ast.SliceExpr:
			t.Errorf("%s: %T in the loop body", fset.Position(n.Pos()), n)
		}
		return true
	})
}

// exprString names simple expressions for messages.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.SliceExpr:
		return exprString(e.X) + "[…]"
	}
	return "an expression"
}
