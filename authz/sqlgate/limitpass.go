package sqlgate

import (
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// The check of Limits before the walker (limits.go has the limits and the
// checks printed for the engine): one walk of the parsed statement that
// counts its shape and bounds the width of every value.

// checked is what checkLimits found for the walker: the limits, and the
// calls whose result the engine must check against StringBytes because
// the gate cannot bound it (a string built from more than ColumnCopies
// copies of column values).
type checked struct {
	lim    Limits
	capped map[*ast.FuncCallExpr]bool
}

// checkLimits checks stmt against lim (with defaults filled in).
func checkLimits(stmt ast.StmtNode, lim Limits) (checked, error) {
	p := &limitPass{lim: lim}
	if err := p.stmt(stmt); err != nil {
		return checked{}, err
	}
	if p.rowBytes > int64(lim.RowBytes) {
		return checked{}, limitErr("%d bytes of computed values per row (the statement computes up to %d)", lim.RowBytes, p.rowBytes)
	}
	return checked{lim: lim, capped: p.capped}, nil
}

// width bounds a value: up to a bytes the statement introduces (literals,
// parameters, strings functions build from them) plus up to m copies of
// column values (data, which the tenant stored: counted, not sized).
type width struct{ a, m int64 }

func (w width) plus(o width) width  { return width{w.a + o.a, w.m + o.m} }
func (w width) wider(o width) width { return width{max(w.a, o.a), max(w.m, o.m)} }

// column is a table's column: one copy of stored data.
var column = width{m: 1}

// lpShape is what a query block returns: its columns' names ("" when the
// gate cannot know them) and widths. anyCols stands for columns of unknown
// names (SELECT * of a table), of width anyW.
type lpShape struct {
	names   []string
	widths  []width
	anyCols bool
	anyW    width
}

func (s *lpShape) max() width {
	if s == nil {
		return column
	}
	m := s.anyW
	for _, w := range s.widths {
		m = m.wider(w)
	}
	return m
}

// col is the width of column name: the widest column of that name, else of
// the columns of unknown name (which may be it), else nothing (no such
// column). A table's column is one copy of data.
func (s *lpShape) col(name string) width {
	if s == nil {
		return column
	}
	found, w := false, width{}
	for i, n := range s.names {
		if n == name {
			found, w = true, w.wider(s.widths[i])
		}
	}
	if found {
		return w
	}
	m := width{}
	if s.anyCols {
		m = s.anyW
	}
	for i, n := range s.names {
		if n == "" {
			m = m.wider(s.widths[i])
		}
	}
	return m
}

// merge widens s to hold o's columns too, position by position (set
// operations; names are the first branch's).
func (s *lpShape) merge(o *lpShape) {
	if o == nil {
		return
	}
	for i, w := range o.widths {
		if i < len(s.widths) {
			s.widths[i] = s.widths[i].wider(w)
		} else {
			s.names = append(s.names, o.names[i])
			s.widths = append(s.widths, w)
		}
	}
	s.anyCols = s.anyCols || o.anyCols
	s.anyW = s.anyW.wider(o.anyW)
}

// lpBinding is one FROM source: shape nil for a table.
type lpBinding struct {
	alias string
	shape *lpShape
}

type lpScope struct {
	parent   *lpScope
	bindings []lpBinding
	aliases  *lpShape // the select list, for ORDER BY, GROUP BY and HAVING
}

type lpCTE struct {
	name  string
	shape *lpShape
}

type lpFrame struct {
	parent *lpFrame
	ctes   []*lpCTE
}

// limitPass walks the parsed statement (before the walker rewrites it),
// counting and measuring. It refuses nothing the walker would accept except
// for a limit, and it is conservative where it cannot tell: a column it
// cannot place is as wide as the widest it could be.
type limitPass struct {
	lim        Limits
	nodes      int
	literals   int
	operands   int
	rowBytes   int64
	depth      int // any nesting, for maxDepth
	queryDepth int
	subqDepth  int
	recursive  int  // inside the body of a recursive CTE
	grew       bool // a function that can grow a string, in a recursive body
	frame      *lpFrame
	scope      *lpScope
	capped     map[*ast.FuncCallExpr]bool
}

func (p *limitPass) push() error {
	p.depth++
	if p.depth > maxDepth {
		return limitErr("%d levels of nesting", maxDepth)
	}
	return nil
}

func (p *limitPass) pop() { p.depth-- }

func (p *limitPass) literal() error {
	p.literals++
	if p.literals > p.lim.Literals {
		return limitErr("%d literals and parameters", p.lim.Literals)
	}
	return nil
}

func (p *limitPass) node() error {
	p.nodes++
	if p.nodes > p.lim.Nodes {
		return limitErr("%d expression nodes (operators, functions, column references, subqueries and tables)", p.lim.Nodes)
	}
	return nil
}

func (p *limitPass) stmt(n ast.StmtNode) error {
	switch n := n.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		_, err := p.block(n.(ast.ResultSetNode), true)
		return err
	case *ast.InsertStmt:
		if n.Select != nil {
			_, err := p.block(n.Select, true)
			return err
		}
		// VALUES rows are constants: each is returned once, so only the
		// size of each value and the shape count.
		for _, row := range n.Lists {
			for _, e := range row {
				if _, _, err := p.expr(e, 0); err != nil {
					return err
				}
			}
		}
	case *ast.CreateTableStmt:
		if n.Select != nil {
			_, err := p.block(n.Select, true)
			return err
		}
	case *ast.ExplainStmt:
		if n.Stmt != nil {
			return p.stmt(n.Stmt)
		}
	}
	return nil
}

// block measures one query block; top marks the statement's result (its
// rows are returned, so constants it returns count for every row).
func (p *limitPass) block(n ast.ResultSetNode, top bool) (*lpShape, error) {
	if err := p.push(); err != nil {
		return nil, err
	}
	defer p.pop()
	p.queryDepth++
	defer func() { p.queryDepth-- }()
	if p.queryDepth > p.lim.QueryDepth {
		return nil, limitErr("%d levels of nested queries", p.lim.QueryDepth)
	}
	if err := p.node(); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case *ast.SelectStmt:
		return p.selectStmt(n, top)
	case *ast.SetOprStmt:
		if n.With != nil {
			pop, err := p.with(n.With)
			if err != nil {
				return nil, err
			}
			defer pop()
		}
		var sh *lpShape
		if n.SelectList != nil {
			var err error
			if sh, err = p.setList(n.SelectList, top); err != nil {
				return nil, err
			}
		}
		if err := p.orderLimit(n.OrderBy, n.Limit, sh); err != nil {
			return nil, err
		}
		return sh, nil
	}
	// Anything else is refused by the walker; count what it holds.
	return nil, p.generic(n, 0)
}

func (p *limitPass) setList(l *ast.SetOprSelectList, top bool) (*lpShape, error) {
	if err := p.push(); err != nil {
		return nil, err
	}
	defer p.pop()
	if l.With != nil {
		pop, err := p.with(l.With)
		if err != nil {
			return nil, err
		}
		defer pop()
	}
	sh := &lpShape{}
	// The branches run as pipelines of their own: a row holds the values
	// of one branch at a time.
	before, widest := p.rowBytes, int64(0)
	for _, s := range l.Selects {
		var b *lpShape
		var err error
		p.rowBytes = before
		switch s := s.(type) {
		case *ast.SelectStmt:
			p.operands++
			if p.operands > p.lim.SetOperands {
				return nil, limitErr("%d UNION, EXCEPT and INTERSECT branches", p.lim.SetOperands)
			}
			b, err = p.selectStmt(s, top)
		case *ast.SetOprSelectList:
			b, err = p.setList(s, top)
		default:
			err = p.generic(s, 0)
		}
		if err != nil {
			return nil, err
		}
		sh.merge(b)
		widest = max(widest, p.rowBytes-before)
	}
	p.rowBytes = before + widest
	return sh, p.orderLimit(l.OrderBy, l.Limit, sh)
}

func (p *limitPass) orderLimit(ob *ast.OrderByClause, l *ast.Limit, sh *lpShape) error {
	if ob == nil && l == nil {
		return nil
	}
	defer p.pushScope(sh)()
	if ob != nil {
		if err := p.byItems(ob.Items); err != nil {
			return err
		}
	}
	if l != nil {
		return p.exprs(0, l.Count, l.Offset)
	}
	return nil
}

// exprs measures expressions whose value is not kept (nil ones skipped).
func (p *limitPass) exprs(d int, es ...ast.ExprNode) error {
	for _, e := range es {
		if e != nil {
			if _, _, err := p.expr(e, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// pushScope opens a scope whose select-list aliases are sh.
func (p *limitPass) pushScope(sh *lpShape) func() {
	sc := &lpScope{parent: p.scope, aliases: sh}
	p.scope = sc
	return func() { p.scope = sc.parent }
}

func (p *limitPass) with(wc *ast.WithClause) (func(), error) {
	f := &lpFrame{parent: p.frame}
	p.frame = f
	closeScope := func() { p.frame = f.parent }
	for _, cte := range wc.CTEs {
		if cte == nil || cte.Query == nil || cte.Query.Query == nil {
			continue
		}
		c := &lpCTE{name: strings.ToLower(cte.Name.O)}
		var sh *lpShape
		var err error
		if wc.IsRecursive {
			f.ctes = append(f.ctes, c) // a recursive CTE sees itself
			sh, err = p.recursiveBody(c, cte.Query.Query)
		} else {
			sh, err = p.block(cte.Query.Query, false)
		}
		if err != nil {
			closeScope()
			return nil, err
		}
		if sh == nil {
			sh = &lpShape{}
		}
		for i, name := range cte.ColNameList {
			if i < len(sh.names) {
				sh.names[i] = strings.ToLower(name.O)
			}
		}
		c.shape = sh
		if !wc.IsRecursive {
			f.ctes = append(f.ctes, c)
		}
	}
	return closeScope, nil
}

// recursiveBody measures the body of a recursive CTE c, whose values feed
// back into it. Without a function that can grow a string (growsInRecursion,
// REPEAT, REPLACE) its values are at most the widest it takes from elsewhere,
// which a first pass (reading c as empty) finds; with one they are at most
// StringBytes, which the engine enforces there (capBuilt, rwRepeat,
// rwReplace). Inside another recursive body the second bound is used at
// once, so that nested ones are measured once each.
func (p *limitPass) recursiveBody(c *lpCTE, body ast.ResultSetNode) (*lpShape, error) {
	p.recursive++
	defer func() { p.recursive-- }()
	strict := &lpShape{anyCols: true, anyW: width{a: int64(p.lim.StringBytes)}}
	if p.recursive > 1 {
		c.shape = strict
		return p.block(body, false)
	}
	nodes, literals, operands, rowBytes, grew, capped := p.nodes, p.literals, p.operands, p.rowBytes, p.grew, len(p.capped)
	c.shape = &lpShape{anyCols: true}
	p.grew = false
	first, err := p.block(body, false)
	if err != nil {
		return nil, err
	}
	if p.grew || len(p.capped) > capped {
		c.shape = strict
	} else {
		c.shape = &lpShape{anyCols: true, anyW: first.max()}
	}
	p.nodes, p.literals, p.operands, p.rowBytes, p.grew = nodes, literals, operands, rowBytes, grew
	return p.block(body, false)
}

func (p *limitPass) lookupCTE(name string) (*lpCTE, bool) {
	for f := p.frame; f != nil; f = f.parent {
		for i := len(f.ctes) - 1; i >= 0; i-- {
			if f.ctes[i].name == name {
				return f.ctes[i], true
			}
		}
	}
	return nil, false
}

func (p *limitPass) selectStmt(n *ast.SelectStmt, top bool) (*lpShape, error) {
	if n.With != nil {
		pop, err := p.with(n.With)
		if err != nil {
			return nil, err
		}
		defer pop()
	}
	defer p.pushScope(nil)()
	if n.From != nil && n.From.TableRefs != nil {
		if err := p.from(n.From.TableRefs); err != nil {
			return nil, err
		}
	}
	// A statement's result repeats a constant it returns in every row (a
	// column it returns is a value counted where it was made); a SELECT
	// without FROM returns one row.
	perRow := top && n.From != nil
	sh := &lpShape{}
	if n.Fields != nil {
		for _, f := range n.Fields.Fields {
			if f == nil {
				continue
			}
			if wc := f.WildCard; wc != nil {
				table := strings.ToLower(wc.Table.O)
				for _, b := range p.scope.bindings {
					if table != "" && b.alias != table {
						continue
					}
					if b.shape == nil {
						sh.anyCols, sh.anyW = true, sh.anyW.wider(column)
						continue
					}
					sh.names = append(sh.names, b.shape.names...)
					sh.widths = append(sh.widths, b.shape.widths...)
					sh.anyCols = sh.anyCols || b.shape.anyCols
					sh.anyW = sh.anyW.wider(b.shape.anyW)
				}
				continue
			}
			w, site, err := p.expr(f.Expr, 0)
			if err != nil {
				return nil, err
			}
			if perRow && !site && constant(f.Expr) {
				p.rowBytes += w.a // one value, copied into every row returned
			}
			name := strings.ToLower(f.AsName.O)
			if name == "" {
				if c, ok := f.Expr.(*ast.ColumnNameExpr); ok && c.Name != nil {
					name = strings.ToLower(c.Name.Name.O)
				}
			}
			sh.names = append(sh.names, name)
			sh.widths = append(sh.widths, w)
		}
	}
	p.scope.aliases = sh
	if err := p.exprs(0, n.Where, havingExpr(n.Having)); err != nil {
		return nil, err
	}
	if n.GroupBy != nil {
		if err := p.byItems(n.GroupBy.Items); err != nil {
			return nil, err
		}
	}
	for i := range n.WindowSpecs {
		if err := p.windowSpec(&n.WindowSpecs[i]); err != nil {
			return nil, err
		}
	}
	if n.OrderBy != nil {
		if err := p.byItems(n.OrderBy.Items); err != nil {
			return nil, err
		}
	}
	if n.Limit != nil {
		if err := p.exprs(0, n.Limit.Count, n.Limit.Offset); err != nil {
			return nil, err
		}
	}
	return sh, nil
}

func havingExpr(h *ast.HavingClause) ast.ExprNode {
	if h == nil {
		return nil
	}
	return h.Expr
}

func (p *limitPass) byItems(items []*ast.ByItem) error {
	for _, it := range items {
		if it != nil {
			if err := p.exprs(0, it.Expr); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *limitPass) windowSpec(ws *ast.WindowSpec) error {
	if ws.PartitionBy != nil {
		if err := p.byItems(ws.PartitionBy.Items); err != nil {
			return err
		}
	}
	if ws.OrderBy != nil {
		if err := p.byItems(ws.OrderBy.Items); err != nil {
			return err
		}
	}
	if fr := ws.Frame; fr != nil {
		return p.exprs(0, fr.Extent.Start.Expr, fr.Extent.End.Expr)
	}
	return nil
}

// from binds the FROM items of the current scope.
func (p *limitPass) from(n ast.ResultSetNode) error {
	if err := p.push(); err != nil {
		return err
	}
	defer p.pop()
	switch n := n.(type) {
	case *ast.Join:
		if n.Left != nil {
			if err := p.from(n.Left); err != nil {
				return err
			}
		}
		if n.Right != nil {
			if err := p.from(n.Right); err != nil {
				return err
			}
		}
		if n.On != nil {
			return p.exprs(0, n.On.Expr)
		}
		return nil
	case *ast.TableSource:
		if err := p.node(); err != nil {
			return err
		}
		if _, ok := n.Source.(*ast.Join); !ok && len(p.scope.bindings) >= p.lim.JoinTables {
			return limitErr("%d tables in one FROM clause", p.lim.JoinTables)
		}
		alias := strings.ToLower(n.AsName.O)
		switch src := n.Source.(type) {
		case *ast.TableName:
			name := strings.ToLower(src.Name.O)
			if alias == "" {
				alias = name
			}
			var sh *lpShape
			if src.Schema.O == "" {
				if c, ok := p.lookupCTE(name); ok {
					sh = c.shape
				}
			}
			p.scope.bindings = append(p.scope.bindings, lpBinding{alias: alias, shape: sh})
			return nil
		case *ast.Join:
			return p.from(src)
		case nil:
			return nil
		default:
			sh, err := p.block(src, false)
			if err != nil {
				return err
			}
			if sh == nil {
				sh = &lpShape{}
			}
			for i, c := range n.ColumnNames {
				if i < len(sh.names) {
					sh.names[i] = strings.ToLower(c.O)
				}
			}
			p.scope.bindings = append(p.scope.bindings, lpBinding{alias: alias, shape: sh})
			return nil
		}
	case nil:
		return nil
	}
	return p.generic(n, 0)
}

// columnWidth is the width of a column reference: a table's column is one
// copy of data; a column of a CTE or derived table as wide as its
// expression; a name the pass cannot place, the widest it could be.
func (p *limitPass) columnWidth(cn *ast.ColumnName) width {
	if cn == nil {
		return width{}
	}
	name := strings.ToLower(cn.Name.O)
	if table := strings.ToLower(cn.Table.O); table != "" {
		for sc := p.scope; sc != nil; sc = sc.parent {
			for _, b := range sc.bindings {
				if b.alias == table {
					return b.shape.col(name)
				}
			}
		}
	}
	// A bare name (or one whose table is out of sight) may be any
	// column in scope, or a select-list alias.
	var w width
	for sc := p.scope; sc != nil; sc = sc.parent {
		for _, b := range sc.bindings {
			w = w.wider(b.shape.col(name))
		}
		if sc.aliases != nil {
			w = w.wider(sc.aliases.col(name))
		}
	}
	return w
}

// literalText returns a string literal's value.
func literalText(e ast.ExprNode) (string, bool) {
	v, ok := e.(*test_driver.ValueExpr)
	if !ok || v.Kind() != test_driver.KindString {
		return "", false
	}
	return v.GetString(), true
}

// literalInt returns an integer literal's value.
func literalInt(e ast.ExprNode) (int64, bool) {
	if u, ok := e.(*ast.UnaryOperationExpr); ok && u.Op == opcode.Minus {
		v, ok := literalInt(u.V)
		return -v, ok
	}
	v, ok := e.(*test_driver.ValueExpr)
	if !ok {
		return 0, false
	}
	switch v.Kind() {
	case test_driver.KindInt64:
		return v.GetInt64(), true
	case test_driver.KindUint64:
		return int64(min(v.GetUint64(), 1<<62)), true
	}
	return 0, false
}

// expr measures e at expression depth d: w is the width of its value; site
// reports an expression evaluated per row into a value of its own (whose
// introduced bytes are added to the row's here).
func (p *limitPass) expr(e ast.ExprNode, d int) (w width, site bool, err error) {
	if e == nil {
		return width{}, false, nil
	}
	if err := p.push(); err != nil {
		return width{}, false, err
	}
	defer p.pop()
	switch x := e.(type) {
	case *test_driver.ValueExpr:
		if err := p.literal(); err != nil {
			return width{}, false, err
		}
		if s, ok := literalText(x); ok {
			return width{a: int64(len(s))}, false, p.stringLiteral(len(s))
		}
		return width{}, false, nil
	case *test_driver.ParamMarkerExpr:
		return width{a: int64(p.lim.LiteralBytes)}, false, p.literal()
	case *ast.ParenthesesExpr:
		return p.expr(x.Expr, d)
	case *ast.SubqueryExpr:
		if err := p.node(); err != nil {
			return width{}, false, err
		}
		p.subqDepth++
		defer func() { p.subqDepth-- }()
		if p.subqDepth > p.lim.SubqueryDepth {
			return width{}, false, limitErr("%d levels of nested subqueries", p.lim.SubqueryDepth)
		}
		sh, err := p.block(x.Query, false)
		if err != nil {
			return width{}, false, err
		}
		w := sh.max()
		p.rowBytes += w.a
		return w, true, nil
	}
	if err := p.node(); err != nil {
		return width{}, false, err
	}
	switch x := e.(type) {
	case *ast.ColumnNameExpr:
		return p.columnWidth(x.Name), false, nil
	case *ast.FuncCallExpr:
		d += FuncDepth
		if rowVarying(x) {
			p.rowBytes += CallRowBytes
		}
	case *ast.AggregateFuncExpr, *ast.WindowFuncExpr, *ast.FuncCastExpr:
		d += FuncDepth
		p.rowBytes += CallRowBytes
	case *ast.CaseExpr:
		d++
		p.rowBytes += CallRowBytes
	case *ast.SetCollationExpr, *ast.TimeUnitExpr, *ast.TrimDirectionExpr:
		d++
	default:
		d++
		p.rowBytes += OperatorRowBytes
	}
	if d > p.lim.ExprDepth {
		return width{}, false, limitErr("%d levels of nested expressions", p.lim.ExprDepth)
	}
	var args []ast.ExprNode
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		// A chain of one AND or OR is flat for the engine.
		dl, dr := d, d
		if x.Op == opcode.LogicAnd || x.Op == opcode.LogicOr {
			if l, ok := x.L.(*ast.BinaryOperationExpr); ok && l.Op == x.Op {
				dl = d - 1
			}
			if r, ok := x.R.(*ast.BinaryOperationExpr); ok && r.Op == x.Op {
				dr = d - 1
			}
		}
		if err := p.exprs(dl, x.L); err != nil {
			return width{}, false, err
		}
		return width{}, false, p.exprs(dr, x.R) // a number or a truth value
	case *ast.FuncCallExpr:
		return p.call(x, d)
	case *ast.AggregateFuncExpr:
		w, err := p.widestArg(x.Args, d)
		if err != nil {
			return width{}, false, err
		}
		if x.Order != nil {
			if err := p.byItems(x.Order.Items); err != nil {
				return width{}, false, err
			}
		}
		name := strings.ToLower(x.F)
		switch {
		case nonString[name]:
			w = width{}
		case p.recursive > 0 && growsInRecursion[name]:
			w = width{a: int64(p.lim.StringBytes)} // capped by the engine (capBuilt)
			p.grew = true
		case growsInRecursion[name]:
			// One value of many rows, held by the engine's tracked
			// aggregate state: like stored data.
			w = column
		}
		return p.site(w)
	case *ast.WindowFuncExpr:
		w, err := p.widestArg(x.Args, d)
		if err != nil {
			return width{}, false, err
		}
		if err := p.windowSpec(&x.Spec); err != nil {
			return width{}, false, err
		}
		if nonString[strings.ToLower(x.Name)] {
			w = width{}
		}
		return p.site(w)
	case *ast.FuncCastExpr:
		w, _, err := p.expr(x.Expr, d)
		if err != nil {
			return width{}, false, err
		}
		return p.site(w)
	case *ast.CaseExpr:
		if err := p.exprs(d, x.Value); err != nil {
			return width{}, false, err
		}
		var w width
		for _, wc := range x.WhenClauses {
			if wc == nil {
				continue
			}
			if err := p.node(); err != nil { // the engine's planning time grows with their square
				return width{}, false, err
			}
			if err := p.exprs(d, wc.Expr); err != nil {
				return width{}, false, err
			}
			rw, _, err := p.expr(wc.Result, d)
			if err != nil {
				return width{}, false, err
			}
			w = w.wider(rw)
		}
		if x.ElseClause != nil {
			ew, _, err := p.expr(x.ElseClause, d)
			if err != nil {
				return width{}, false, err
			}
			w = w.wider(ew)
		}
		return p.site(w)
	case *ast.SetCollationExpr:
		w, _, err := p.expr(x.Expr, d)
		return w, false, err
	case *ast.PatternInExpr:
		if err := p.exprs(d, x.Expr); err != nil {
			return width{}, false, err
		}
		if err := p.exprs(d, x.List...); err != nil {
			return width{}, false, err
		}
		return width{}, false, p.exprs(d, x.Sel)
	case *ast.ExistsSubqueryExpr:
		return width{}, false, p.exprs(d, x.Sel)
	case *ast.CompareSubqueryExpr:
		args = []ast.ExprNode{x.L, x.R}
	case *ast.UnaryOperationExpr:
		args = []ast.ExprNode{x.V}
	case *ast.BetweenExpr:
		args = []ast.ExprNode{x.Expr, x.Left, x.Right}
	case *ast.IsNullExpr:
		args = []ast.ExprNode{x.Expr}
	case *ast.IsTruthExpr:
		args = []ast.ExprNode{x.Expr}
	case *ast.PatternLikeOrIlikeExpr:
		args = []ast.ExprNode{x.Expr, x.Pattern}
	case *ast.PatternRegexpExpr:
		args = []ast.ExprNode{x.Expr, x.Pattern}
	case *ast.RowExpr:
		args = x.Values
	case *ast.TimeUnitExpr, *ast.TrimDirectionExpr:
		return width{}, false, nil
	default:
		// Refused by the walker: count what it holds.
		return width{}, false, p.generic(e, d)
	}
	return width{}, false, p.exprs(d, args...) // a number or a truth value
}

// widestArg measures the arguments of a function whose result is made of
// one of them (LOWER, COALESCE, MIN, LAG, …): as wide as the widest.
func (p *limitPass) widestArg(args []ast.ExprNode, d int) (width, error) {
	var w width
	for _, a := range args {
		aw, _, err := p.expr(a, d)
		if err != nil {
			return width{}, err
		}
		w = w.wider(aw)
	}
	return w, nil
}

// site records an expression evaluated per row into a value of its own (a
// function's result, a CASE, a cast) of width w: its introduced bytes are
// added to the row's.
func (p *limitPass) site(w width) (width, bool, error) {
	p.rowBytes += w.a
	return w, true, nil
}

func (p *limitPass) stringLiteral(n int) error {
	if n > p.lim.LiteralBytes {
		return limitErr("%d bytes for a string literal", p.lim.LiteralBytes)
	}
	return nil
}

// call measures a function call. Functions whose result can outgrow their
// arguments get their bound here: exact from literals (refused over
// StringBytes), else StringBytes, which the engine then checks.
func (p *limitPass) call(x *ast.FuncCallExpr, d int) (width, bool, error) {
	name := x.FnName.L
	fn := strings.ToUpper(name)
	n := len(x.Args)
	switch name {
	case "concat", "greatest", "least":
		// Printed as a chain of n-1 operators or rewrites.
		d += max(n-1, 0)
		if d > p.lim.ExprDepth {
			return width{}, false, limitErr("%d levels of nested expressions", p.lim.ExprDepth)
		}
	}
	widths := make([]width, n)
	var sum, widest width
	for i, a := range x.Args {
		aw, _, err := p.expr(a, d)
		if err != nil {
			return width{}, false, err
		}
		widths[i] = aw
		sum, widest = sum.plus(aw), widest.wider(aw)
	}
	strict := width{a: int64(p.lim.StringBytes)}
	tooLong := limitErr("%s", stringLimitMsg(p.lim.StringBytes, fn))
	w := widest // a function made of one of its arguments
	switch name {
	case "repeat":
		if n == 2 {
			s, sok := literalText(x.Args[0])
			k, kok := literalInt(x.Args[1])
			switch {
			case sok && kok:
				if k > 0 && int64(len(s)) > strict.a/k {
					return width{}, false, tooLong
				}
				w = width{a: int64(len(s)) * max(k, 0)}
			case kok && k <= 1:
				w = widths[0]
			default:
				w = strict // checked by the engine (rwRepeat)
				p.grew = p.grew || p.recursive > 0
			}
		}
	case "space":
		if k, ok := literalInt(x.Args[0]); ok && n == 1 {
			if k > strict.a {
				return width{}, false, tooLong
			}
			w = width{a: max(k, 0)}
		}
	case "lpad", "rpad":
		// The result has the literal length in characters, up to 4 bytes
		// each (the walker refuses a length that is not a literal).
		if k, ok := literalInt(x.Args[1]); ok && n == 3 {
			if k > strict.a/utf8.UTFMax {
				return width{}, false, limitErr("%s (%d characters)", stringLimitMsg(p.lim.StringBytes, fn), strict.a/utf8.UTFMax)
			}
			w = width{a: max(k, 0) * utf8.UTFMax}
		}
	case "replace":
		if n == 3 {
			s, sok := literalText(x.Args[0])
			from, fok := literalText(x.Args[1])
			to, tok := literalText(x.Args[2])
			switch {
			case fok && tok && (len(to) <= len(from) || from == ""):
				w = widths[0]
			case sok && fok && tok:
				if w = (width{a: int64(len(strings.ReplaceAll(s, from, to)))}); w.a > strict.a {
					return width{}, false, tooLong
				}
			default:
				w = strict // checked by the engine (rwReplace)
				p.grew = p.grew || p.recursive > 0
			}
		}
	case "concat", "concat_ws", "json_array", "json_object", "json_quote":
		w = sum
		if name == "concat_ws" && n > 2 {
			sep := widths[0]
			w = sum.plus(width{sep.a * int64(n-3), sep.m * int64(n-3)})
		}
		if strings.HasPrefix(name, "json_") {
			// JSON text escapes every value (up to twice its bytes) and
			// adds quotes and separators.
			w = width{a: 2*sum.a + 8*int64(n) + 2, m: 2 * sum.m}
		}
		// Where the gate cannot bound the result — in a recursive CTE, or
		// beyond StringBytes or ColumnCopies (parameters, columns doubled
		// through CTEs) — the engine checks it (capBuilt).
		if p.recursive > 0 || w.a > strict.a || w.m > int64(p.lim.ColumnCopies) {
			if p.capped == nil {
				p.capped = make(map[*ast.FuncCallExpr]bool)
			}
			p.capped[x] = true
			w = strict
			p.grew = p.grew || p.recursive > 0
		}
	case "date_format":
		// A format character prints at most 6 (%r: "12:00:00 AM" for two).
		if n == 2 {
			if w = (width{a: 6 * widths[1].a}); w.a > strict.a {
				return width{}, false, tooLong
			}
		}
	case "format":
		w = width{a: 64 + 40} // a number of at most 38 digits, separators, 30 decimals
	default:
		if fw, ok := fixedString[name]; ok {
			w = width{a: fw}
		} else if nonString[name] {
			w = width{}
		} else if mw, ok := moreStringWidth(name, x, widths, strict, int64(p.lim.ColumnCopies)); ok {
			w = mw // funcs_more_string.go
		}
	}
	if !rowVarying(x) {
		return w, false, nil // evaluated once, not per row
	}
	return p.site(w)
}

// nonString are the allowed functions (scalar, aggregate, window) whose
// result is not a string: a number, a date or time, a truth value.
var nonString = map[string]bool{
	"abs": true, "round": true, "floor": true, "ceil": true, "ceiling": true, "truncate": true, "sign": true,
	"mod": true, "pow": true, "power": true, "exp": true, "pi": true, "rand": true, "sqrt": true, "ln": true,
	"log10": true, "log2": true, "log": true, "isnull": true, "field": true, "locate": true, "position": true,
	"instr": true, "length": true, "octet_length": true, "char_length": true, "character_length": true,
	"ascii": true, "year": true, "month": true, "day": true, "dayofmonth": true, "hour": true, "minute": true,
	"second": true, "quarter": true, "dayofyear": true, "last_day": true, "dayofweek": true, "weekday": true,
	"week": true, "date": true, "unix_timestamp": true, "from_unixtime": true, "curdate": true,
	"current_date": true, "now": true, "current_timestamp": true, "datediff": true, "str_to_date": true,
	"date_add": true, "adddate": true, "date_sub": true, "subdate": true, "timestampdiff": true, "extract": true,
	"'tidb`.(dateliteral": true, "'tidb`.(timestampliteral": true,
	"count": true, "sum": true, "avg": true, "stddev_pop": true, "stddev": true, "std": true, "stddev_samp": true,
	"var_pop": true, "variance": true, "var_samp": true, "bit_and": true, "bit_or": true, "bit_xor": true,
	"row_number": true, "rank": true, "dense_rank": true, "ntile": true, "percent_rank": true, "cume_dist": true,
}

// fixedString are the allowed functions whose result is a string of at
// most so many bytes, whatever their arguments.
var fixedString = map[string]int64{
	"md5": 32, "sha1": 40, "sha": 40, "uuid": 36, "dayname": 9, "monthname": 9, "char_func": 1,
}

// volatile are the allowed functions whose value changes from row to row
// without a column.
var volatile = map[string]bool{"rand": true, "uuid": true, "now": true, "current_timestamp": true, "curdate": true, "current_date": true}

// rowVarying reports whether a call may take a different value in every row:
// one of its arguments is not a literal or parameter, or it is volatile.
func rowVarying(x *ast.FuncCallExpr) bool {
	if volatile[x.FnName.L] {
		return true
	}
	for _, a := range x.Args {
		if !constant(a) {
			return true
		}
	}
	return false
}

// constant reports an expression of literals and parameters only.
func constant(e ast.ExprNode) bool {
	switch x := e.(type) {
	case *test_driver.ValueExpr, *test_driver.ParamMarkerExpr, *ast.TimeUnitExpr, *ast.TrimDirectionExpr:
		return true
	case *ast.ParenthesesExpr:
		return constant(x.Expr)
	case *ast.UnaryOperationExpr:
		return constant(x.V)
	case *ast.BinaryOperationExpr:
		return constant(x.L) && constant(x.R)
	case *ast.FuncCallExpr:
		return !rowVarying(x)
	}
	return false
}

// generic counts the children of a node the pass does not model (the
// walker refuses them), so that no nesting or size escapes it.
func (p *limitPass) generic(n ast.Node, d int) error {
	v := &childVisitor{root: n}
	n.Accept(v)
	for _, c := range v.kids {
		switch c := c.(type) {
		case ast.ResultSetNode:
			if _, err := p.block(c, false); err != nil {
				return err
			}
		case ast.ExprNode:
			if err := p.exprs(d, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// childVisitor collects the direct children of root.
type childVisitor struct {
	root ast.Node
	kids []ast.Node
}

func (v *childVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if n == v.root {
		return n, false
	}
	v.kids = append(v.kids, n)
	return n, true
}

func (v *childVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }
