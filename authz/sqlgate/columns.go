package sqlgate

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Unknown columns.
//
// The engine reports a column that no table has in its own words, naming
// its candidates. MySQL says "Unknown column 'x' in 'where clause'". Parse
// records every column reference of the client's statement, with the
// clause it is in, and every name a reference may mean besides a table's
// column: select-list aliases and the names MySQL gives unaliased fields
// (the columns of a derived table or CTE), CTE column lists, and table
// names and aliases. CheckColumns, given every table's columns, refuses a
// reference whose column name is none of these. The check is
// deliberately by name across the whole statement, not by scope: it refuses
// only what cannot resolve anywhere, and leaves the rest (a column of
// another table than the one named, an ambiguous name) to the engine.

// colRef is one column reference as the client wrote it, lower-cased.
type colRef struct {
	schema, table, name string
	clause              string // MySQL's name of the clause: "field list", "where clause", …
}

// text is the reference as MySQL prints it in the message:
// [schema.][table.]column.
func (r colRef) text() string {
	switch {
	case r.table == "":
		return r.name
	case r.schema == "":
		return r.table + "." + r.name
	}
	return r.schema + "." + r.table + "." + r.name
}

// colInfo is what checkColumns needs of a statement.
type colInfo struct {
	refs  []colRef
	names map[string]bool // names a reference may mean besides a table column
}

// collectColumns records the column references of stmt and the names they
// may mean. It reads the client's tree before the walker rewrites it.
func collectColumns(stmt ast.Node) *colInfo {
	c := &colCollector{info: &colInfo{}}
	c.v.c = c
	c.visit(stmt, "field list")
	return c.info
}

type colCollector struct {
	info *colInfo
	v    colVisitor // reused: one visitor, its clause saved around each visit
}

// visit records the references under n, in clause unless a SELECT below
// says otherwise.
func (c *colCollector) visit(n ast.Node, clause string) {
	if n == nil {
		return
	}
	saved := c.v.clause
	c.v.clause = clause
	n.Accept(&c.v)
	c.v.clause = saved
}

type colVisitor struct {
	c      *colCollector
	clause string
}

func (v *colVisitor) Enter(n ast.Node) (ast.Node, bool) {
	c := v.c
	switch x := n.(type) {
	case *ast.SelectStmt:
		c.selectStmt(x)
		return n, true
	case *ast.ColumnNameExpr:
		c.ref(x.Name, v.clause)
		return n, true
	case *ast.OnCondition:
		c.visit(x.Expr, "on clause")
		return n, true
	case *ast.Join:
		for _, u := range x.Using {
			c.ref(u, "from clause")
		}
	case *ast.TableSource:
		c.name(x.AsName.L)
	case *ast.TableName:
		c.name(x.Name.L)
	case *ast.CommonTableExpression:
		c.name(x.Name.L)
		for _, col := range x.ColNameList {
			c.name(col.L)
		}
	case *ast.SetOprStmt:
		if x.OrderBy != nil {
			// ORDER BY of a set operation names the result's columns.
			for _, it := range x.OrderBy.Items {
				c.visit(it.Expr, "order clause")
			}
			if x.With != nil {
				c.visit(x.With, v.clause)
			}
			if x.SelectList != nil {
				c.visit(x.SelectList, v.clause)
			}
			return n, true
		}
	}
	return n, false
}

func (v *colVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// selectStmt records one SELECT clause by clause, in MySQL's clause names.
func (c *colCollector) selectStmt(s *ast.SelectStmt) {
	if s.With != nil {
		c.visit(s.With, "field list")
	}
	if s.From != nil {
		c.visit(s.From, "from clause")
	}
	if s.Fields != nil {
		for _, f := range s.Fields.Fields {
			if f.WildCard != nil {
				continue
			}
			if f.AsName.L != "" {
				c.name(f.AsName.L)
			} else if _, isCol := stripParens(f.Expr).(*ast.ColumnNameExpr); !isCol {
				// Named by its text: a derived table's or a CTE's column,
				// and ORDER BY may use the name.
				if name, err := fieldName(f); err == nil {
					c.name(strings.ToLower(name))
				}
			}
			c.visit(f.Expr, "field list")
		}
	}
	c.visit(s.Where, "where clause")
	if s.GroupBy != nil {
		for _, it := range s.GroupBy.Items {
			c.visit(it.Expr, "group statement")
		}
	}
	if s.Having != nil {
		c.visit(s.Having.Expr, "having clause")
	}
	if s.WindowSpecs != nil {
		for i := range s.WindowSpecs {
			c.visit(&s.WindowSpecs[i], "window clause")
		}
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			c.visit(it.Expr, "order clause")
		}
	}
}

func stripParens(e ast.ExprNode) ast.ExprNode {
	for p, ok := e.(*ast.ParenthesesExpr); ok; p, ok = e.(*ast.ParenthesesExpr) {
		e = p.Expr
	}
	return e
}

func (c *colCollector) name(n string) {
	if n == "" {
		return
	}
	if c.info.names == nil {
		c.info.names = make(map[string]bool)
	}
	c.info.names[n] = true
}

func (c *colCollector) ref(n *ast.ColumnName, clause string) {
	if n == nil {
		return
	}
	c.info.refs = append(c.info.refs, colRef{schema: n.Schema.L, table: n.Table.L, name: n.Name.L, clause: clause})
}

// CheckColumns refuses (ErrUnknownColumn) the first column reference whose
// column name is no column of the statement's tables — columns gives the
// columns of each table of Tables, as resolved for the caller — and no
// other name of the statement, in MySQL's words: "Unknown column 'x' in
// 'where clause'". A table without columns in the map turns the check off
// (the engine decides). Call it after every table resolved, so that it
// never answers for a table the caller may not read.
func (s *Statement) CheckColumns(columns map[TableRef][]string) error {
	if s.cols == nil || len(s.cols.refs) == 0 {
		return nil
	}
	known := make(map[string]bool)
	for _, t := range s.tables {
		cols := columns[t]
		if len(cols) == 0 {
			return nil
		}
		for _, c := range cols {
			known[strings.ToLower(c)] = true
		}
	}
	for _, r := range s.cols.refs {
		if !known[r.name] && !s.cols.names[r.name] {
			return newErr(ErrorKindUnknownColumn, "Unknown column '%s' in '%s'", capName(r.text()), r.clause)
		}
	}
	return nil
}
