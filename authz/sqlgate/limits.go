package sqlgate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// This file bounds what one statement may ask of the engine, before the
// walker sees it. DuckDB's memory_limit covers what its buffer manager
// allocates (hash tables, sorts, aggregate states, materialized CTEs) but
// not the strings its expressions build, which it holds for 2,048 rows at a
// time on every thread; and it plans a statement without checking for
// interrupts, in time that grows with the cube of expression nesting and
// exponentially with nested scalar subqueries. So:
//
//   - the shape of a statement is bounded (set-operation branches, nodes,
//     nesting of expressions, queries and subqueries), which bounds the
//     engine's planning time and memory;
//   - every string a statement brings (a literal, a parameter) or makes a
//     function build is at most StringBytes, checked here when the size
//     follows from literals and by the engine otherwise (rwRepeat,
//     rwReplace, capBuilt): the check runs before the string is built;
//   - the string bytes a statement introduces per row, added over every
//     expression that is evaluated per row, are at most RowStringBytes, so
//     that 2,048 rows of them stay far below the engine's memory limit.
//
// Sizes count bytes the statement introduces: a column of a table is data,
// bounded by what the tenant stored, and counts nothing; a column of a CTE
// or derived table counts what its expression may introduce.

// Limits bound one statement. A zero field means its default (DefaultLimits).
type Limits struct {
	// SetOperands bounds the SELECTs combined by UNION, EXCEPT and
	// INTERSECT in one statement.
	SetOperands int
	// Nodes bounds the expression nodes of a statement: operators,
	// functions, column references, CASE branches, subqueries, query blocks
	// and table references.
	Nodes int
	// Literals bounds the literals and parameter markers of a statement (an
	// IN list, the rows of INSERT … VALUES): the engine plans each as a
	// value of its own.
	Literals int
	// ExprDepth bounds the nesting of expressions, counted as the engine
	// sees them after translation: an operator is one level, a function call
	// FuncDepth levels (translations wrap arguments in several calls), and
	// the arguments of CONCAT, GREATEST and LEAST one more level each (they
	// print as a chain). Parentheses and chains of one AND or OR do not
	// nest.
	ExprDepth int
	// JoinTables bounds the tables and derived tables of one FROM clause:
	// the engine's join planning time grows steeply beyond a few dozen.
	JoinTables int
	// QueryDepth bounds the nesting of query blocks: derived tables, CTE
	// bodies and subqueries.
	QueryDepth int
	// SubqueryDepth bounds the nesting of subqueries in expressions (scalar,
	// IN, EXISTS, ANY/ALL), whose planning time doubles with each level.
	SubqueryDepth int
	// StringBytes bounds every string a statement brings or builds: a
	// string literal, a parameter value (checked when it is bound), and the
	// result of REPEAT, LPAD, RPAD, SPACE, REPLACE, CONCAT, CONCAT_WS,
	// DATE_FORMAT and any other expression whose size follows from the
	// statement.
	StringBytes int
	// RowStringBytes bounds the string bytes a statement introduces per row:
	// the sizes of the expressions evaluated per row, added up, and of the
	// literals and parameters it returns with every row.
	RowStringBytes int
}

// Defaults of Limits. Each was chosen so that its worst case stays cheap
// for the engine (docs/security.md, Memory and statement limits) while every
// query of the dialect corpus passes.
const (
	DefaultSetOperands    = 1000
	DefaultNodes          = 3000
	DefaultLiterals       = 50000
	DefaultExprDepth      = 64
	DefaultJoinTables     = 32
	DefaultQueryDepth     = 32
	DefaultSubqueryDepth  = 8
	DefaultStringBytes    = 64 << 10
	DefaultRowStringBytes = 128 << 10
)

// FuncDepth is the ExprDepth levels a function call counts: with the
// default, 16 nested calls.
const FuncDepth = 4

// maxDepth bounds any nesting the walker follows (parentheses included), and
// so its recursion and the printer's.
const maxDepth = 1000

// DefaultLimits returns Limits with every default.
func DefaultLimits() Limits {
	return Limits{}.withDefaults()
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.SetOperands, DefaultSetOperands)
	def(&l.Nodes, DefaultNodes)
	def(&l.Literals, DefaultLiterals)
	def(&l.ExprDepth, DefaultExprDepth)
	def(&l.JoinTables, DefaultJoinTables)
	def(&l.QueryDepth, DefaultQueryDepth)
	def(&l.SubqueryDepth, DefaultSubqueryDepth)
	def(&l.StringBytes, DefaultStringBytes)
	def(&l.RowStringBytes, DefaultRowStringBytes)
	return l
}

// limitErr is a refusal for a limit: "statement exceeds the limit of …".
func limitErr(format string, args ...any) *Error {
	return newErr(ErrorKindLimit, "statement exceeds the limit of "+format, args...)
}

// engineLimitMarker starts the message of every limit the engine checks:
// DuckDB reports error('<text>') as "Invalid Input Error: <text>".
const engineLimitMarker = "sqlgate: statement exceeds the limit of "

// EngineLimit recognises the engine's error for a limit the gate made it
// check (a string built by REPEAT or REPLACE, …) and returns it as an
// ErrLimit *Error with the same message; ok is false for any other message.
func EngineLimit(msg string) (*Error, bool) {
	rest, ok := strings.CutPrefix(msg, "Invalid Input Error: "+engineLimitMarker)
	if !ok {
		return nil, false
	}
	rest, _, _ = strings.Cut(rest, "\n")
	return &Error{Kind: ErrorKindLimit, Msg: engineLimitMarker + rest}, true
}

// ParamLimit is the refusal of a parameter value longer than StringBytes
// (n counts from 1); the engine checks it when it binds the value.
func ParamLimit(n, limit int) *Error {
	return limitErr("%d bytes for a string (parameter %d)", limit, n)
}

// stringLimitMsg names the string limit for what a function builds.
func stringLimitMsg(limit int, fn string) string {
	return fmt.Sprintf("%d bytes for a string %s builds", limit, fn)
}

// engineCheck prints error('<limit message>') for the engine to raise.
func engineCheck(limit int, fn string) string {
	return "error('" + engineLimitMarker + stringLimitMsg(limit, fn) + "')"
}

// ---- checks while walking (printed into the statement) ----

// rwRepeat: REPEAT(s, n). With literal arguments the gate checked the size
// (limitPass); otherwise the engine checks len(s) × n against StringBytes
// before building the string.
func (w *walker) rwRepeat(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	s, sok := textLit(args[0])
	n, nok := intLit(args[1])
	if sok && nok {
		return &callExpr{name: "repeat", args: args}, nil
	}
	limit := strconv.Itoa(w.stringBytes())
	check := engineCheck(w.stringBytes(), "REPEAT")
	if sok {
		if len(s) == 0 {
			return &callExpr{name: "repeat", args: args}, nil
		}
		// len(s) is known: compare n with limit / len(s).
		return letx(args[1:], func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN (CAST(", r[0], " AS BIGINT) > "+strconv.Itoa(w.stringBytes()/len(s))+") THEN "+check+" ELSE repeat(", args[0], ", ", r[0], ") END")
		}), nil
	}
	if nok {
		if n <= 1 {
			return &callExpr{name: "repeat", args: args}, nil // no longer than s
		}
		return letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN (strlen(", r[0], ") > "+strconv.FormatInt(int64(w.stringBytes())/n, 10)+") THEN "+check+" ELSE repeat(", r[0], ", ", args[1], ") END")
		}), nil
	}
	// len(s) × n > limit ⟺ len(s) > limit // n for n ≥ 1 (no overflow).
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN ((CAST(", r[1], " AS BIGINT) > 1) AND (strlen(", r[0], ") > ("+limit+" // CAST(", r[1], " AS BIGINT)))) THEN "+check+" ELSE repeat(", r[0], ", ", r[1], ") END")
	}), nil
}

// rwReplace: REPLACE(s, from, to) grows s when to is longer than from. The
// engine checks the exact size of the result — len(s) plus the growth of
// each occurrence, counted by what is left of s without them — before
// building it. A REPLACE that cannot grow (or whose size the gate checked)
// prints as is.
func (w *walker) rwReplace(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	s, sok := textLit(args[0])
	from, fok := textLit(args[1])
	to, tok := textLit(args[2])
	plain := &callExpr{name: "replace", args: args}
	if fok && tok && (len(to) <= len(from) || from == "" || sok) {
		_ = s
		return plain, nil
	}
	limit := strconv.Itoa(w.stringBytes())
	check := engineCheck(w.stringBytes(), "REPLACE")
	if fok && tok {
		grow := strconv.Itoa(len(to) - len(from))
		return letx(args[:1], func(r []ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN ((strlen(", r[0], ") + (((strlen(", r[0], ") - strlen(replace(", r[0], ", ", args[1], ", ''))) // "+strconv.Itoa(len(from))+") * "+grow+")) > "+limit+") THEN "+check+" ELSE replace(", r[0], ", ", args[1], ", ", args[2], ") END")
		}), nil
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN ((strlen(", r[1], ") > 0) AND (strlen(", r[2], ") > strlen(", r[1], ")) AND ((strlen(", r[0], ") + (((strlen(", r[0], ") - strlen(replace(", r[0], ", ", r[1], ", ''))) // strlen(", r[1], ")) * (strlen(", r[2], ") - strlen(", r[1], ")))) > "+limit+")) THEN "+check+" ELSE replace(", r[0], ", ", r[1], ", ", r[2], ") END")
	}), nil
}

// limitedCall prints the calls whose result size the engine must check:
// REPEAT and REPLACE always (rwRepeat, rwReplace), and in a recursive CTE
// the functions of growsInRecursion. ok is false for any other call.
func (w *walker) limitedCall(name string, spec fnSpec, args []ast.ExprNode) (ast.ExprNode, bool, error) {
	var n ast.ExprNode
	var err error
	switch {
	case name == "repeat" && len(args) == 2:
		n, err = w.rwRepeat(spec.duck, args)
	case name == "replace" && len(args) == 3:
		n, err = w.rwReplace(spec.duck, args)
	case w.recursive > 0 && growsInRecursion[name]:
		if spec.rw != nil {
			n, err = spec.rw(spec.duck, args)
		} else {
			n = &callExpr{name: spec.duck, args: args, dbl: spec.dbl}
		}
		if err == nil {
			n = w.capBuilt(strings.ToUpper(name), n)
		}
	default:
		return nil, false, nil
	}
	return n, true, err
}

// capBuilt makes the engine refuse a string e longer than StringBytes once
// built. It is for strings built in a recursive CTE, which can double with
// every step: each is then at most twice the limit before it is refused.
func (w *walker) capBuilt(fn string, e ast.ExprNode) ast.ExprNode {
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (strlen(", r[0], ") > "+strconv.Itoa(w.stringBytes())+") THEN "+engineCheck(w.stringBytes(), fn)+" ELSE ", r[0], " END")
	})
}

// growsInRecursion lists the functions whose result can be longer than
// their arguments together, so that a recursive CTE feeding its own output
// back could grow a string without bound; in a recursive CTE their results
// are capped (capBuilt). REPEAT and REPLACE are checked anyway; LPAD, RPAD
// and SPACE build at most their literal length.
var growsInRecursion = map[string]bool{"concat": true, "concat_ws": true, "group_concat": true, "json_arrayagg": true}

func (w *walker) stringBytes() int {
	if w.limits.StringBytes > 0 {
		return w.limits.StringBytes
	}
	return DefaultStringBytes
}

// ---- the check before walking ----

// checkLimits checks stmt against lim (with defaults filled in).
func checkLimits(stmt ast.StmtNode, lim Limits) error {
	p := &limitPass{lim: lim}
	if err := p.stmt(stmt); err != nil {
		return err
	}
	if p.rowBytes > int64(lim.RowStringBytes) {
		return limitErr("%d bytes of strings per row (the statement introduces up to %d)", lim.RowStringBytes, p.rowBytes)
	}
	return nil
}

// lpShape is what a query block returns: its columns' names ("" when the
// gate cannot know them) and the string bytes each may introduce. A table's
// columns (anyCols with width 0) are data.
type lpShape struct {
	names   []string
	widths  []int64
	anyCols bool  // columns beyond names, of unknown names (SELECT * of a table)
	anyW    int64 // their width
}

func (s *lpShape) max() int64 {
	if s == nil {
		return 0
	}
	m := s.anyW
	for _, w := range s.widths {
		m = max(m, w)
	}
	return m
}

func (s *lpShape) sum() int64 {
	if s == nil {
		return 0
	}
	n := s.anyW
	for _, w := range s.widths {
		n += w
	}
	return n
}

// col is the width of column name: the widest column of that name, else of
// the columns of unknown name (which may be it), else 0 (no such column).
func (s *lpShape) col(name string) int64 {
	if s == nil {
		return 0
	}
	found, w := false, int64(0)
	for i, n := range s.names {
		if n == name {
			found, w = true, max(w, s.widths[i])
		}
	}
	if found {
		return w
	}
	m := s.anyW
	for i, n := range s.names {
		if n == "" {
			m = max(m, s.widths[i])
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
			s.widths[i] = max(s.widths[i], w)
		} else {
			s.names = append(s.names, o.names[i])
			s.widths = append(s.widths, w)
		}
	}
	s.anyCols = s.anyCols || o.anyCols
	s.anyW = max(s.anyW, o.anyW)
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
// cannot resolve is as wide as the widest it could be.
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

// value checks the width of one value the statement builds.
func (p *limitPass) value(g int64, what string) error {
	if g > int64(p.lim.StringBytes) {
		return limitErr("%s", stringLimitMsg(p.lim.StringBytes, what))
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
	for _, s := range l.Selects {
		var b *lpShape
		var err error
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
	}
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
		for _, e := range []ast.ExprNode{l.Count, l.Offset} {
			if e != nil {
				if _, _, err := p.expr(e, 0); err != nil {
					return err
				}
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
	strict := &lpShape{anyCols: true, anyW: int64(p.lim.StringBytes)}
	if p.recursive > 1 {
		c.shape = strict
		return p.block(body, false)
	}
	nodes, literals, operands, rowBytes, grew := p.nodes, p.literals, p.operands, p.rowBytes, p.grew
	c.shape = &lpShape{anyCols: true}
	p.grew = false
	first, err := p.block(body, false)
	if err != nil {
		return nil, err
	}
	if p.grew {
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
	// A statement's result repeats what it returns for every row it
	// returns; a SELECT without FROM returns one.
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
						sh.anyCols = true
						continue
					}
					sh.names = append(sh.names, b.shape.names...)
					sh.widths = append(sh.widths, b.shape.widths...)
					sh.anyCols = sh.anyCols || b.shape.anyCols
					sh.anyW = max(sh.anyW, b.shape.anyW)
					if perRow {
						p.rowBytes += b.shape.sum()
					}
				}
				continue
			}
			g, site, err := p.expr(f.Expr, 0)
			if err != nil {
				return nil, err
			}
			if perRow && !site {
				p.rowBytes += g // a constant or a column, copied into every row
			}
			name := strings.ToLower(f.AsName.O)
			if name == "" {
				if c, ok := f.Expr.(*ast.ColumnNameExpr); ok && c.Name != nil {
					name = strings.ToLower(c.Name.Name.O)
				}
			}
			sh.names = append(sh.names, name)
			sh.widths = append(sh.widths, g)
		}
	}
	p.scope.aliases = sh
	for _, e := range []ast.ExprNode{n.Where, havingExpr(n.Having)} {
		if e != nil {
			if _, _, err := p.expr(e, 0); err != nil {
				return nil, err
			}
		}
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
		for _, e := range []ast.ExprNode{n.Limit.Count, n.Limit.Offset} {
			if e != nil {
				if _, _, err := p.expr(e, 0); err != nil {
					return nil, err
				}
			}
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
		if it == nil || it.Expr == nil {
			continue
		}
		if _, _, err := p.expr(it.Expr, 0); err != nil {
			return err
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
		for _, e := range []ast.ExprNode{fr.Extent.Start.Expr, fr.Extent.End.Expr} {
			if e != nil {
				if _, _, err := p.expr(e, 0); err != nil {
					return err
				}
			}
		}
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
		if n.On != nil && n.On.Expr != nil {
			if _, _, err := p.expr(n.On.Expr, 0); err != nil {
				return err
			}
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

// column is the width of a column reference: a column of a table counts
// nothing; one of a CTE or derived table what its expression may
// introduce; a name the pass cannot place, the widest it could be.
func (p *limitPass) column(cn *ast.ColumnName) int64 {
	if cn == nil {
		return 0
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
	var w int64
	for sc := p.scope; sc != nil; sc = sc.parent {
		for _, b := range sc.bindings {
			w = max(w, b.shape.col(name))
		}
		w = max(w, sc.aliases.col(name))
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
		u := v.GetUint64()
		if u > 1<<62 {
			return 1 << 62, true
		}
		return int64(u), true
	}
	return 0, false
}

// expr measures e at expression depth d: g is the string bytes its value
// may introduce; site reports an expression evaluated per row into a value
// of its own (its g is added to the row's bytes here).
func (p *limitPass) expr(e ast.ExprNode, d int) (g int64, site bool, err error) {
	if e == nil {
		return 0, false, nil
	}
	if err := p.push(); err != nil {
		return 0, false, err
	}
	defer p.pop()
	switch x := e.(type) {
	case *test_driver.ValueExpr:
		if err := p.literal(); err != nil {
			return 0, false, err
		}
		if s, ok := literalText(x); ok {
			return int64(len(s)), false, p.stringLiteral(len(s))
		}
		return 0, false, nil
	case *test_driver.ParamMarkerExpr:
		return int64(p.lim.StringBytes), false, p.literal()
	case *ast.ParenthesesExpr:
		return p.expr(x.Expr, d)
	case *ast.SubqueryExpr:
		if err := p.node(); err != nil {
			return 0, false, err
		}
		p.subqDepth++
		defer func() { p.subqDepth-- }()
		if p.subqDepth > p.lim.SubqueryDepth {
			return 0, false, limitErr("%d levels of nested subqueries", p.lim.SubqueryDepth)
		}
		sh, err := p.block(x.Query, false)
		if err != nil {
			return 0, false, err
		}
		g := sh.max()
		p.rowBytes += g
		return g, true, nil
	}
	if err := p.node(); err != nil {
		return 0, false, err
	}
	switch x := e.(type) {
	case *ast.ColumnNameExpr:
		return p.column(x.Name), false, nil
	case *ast.FuncCallExpr, *ast.AggregateFuncExpr, *ast.WindowFuncExpr, *ast.FuncCastExpr:
		d += FuncDepth
	default:
		d++
	}
	if d > p.lim.ExprDepth {
		return 0, false, limitErr("%d levels of nested expressions", p.lim.ExprDepth)
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
		if _, err := p.operand(x.L, dl); err != nil {
			return 0, false, err
		}
		if _, err := p.operand(x.R, dr); err != nil {
			return 0, false, err
		}
		return 0, false, nil // a number or a truth value
	case *ast.FuncCallExpr:
		return p.call(x, d)
	case *ast.AggregateFuncExpr:
		g, err := p.sumArgs(x.Args, d)
		if err != nil {
			return 0, false, err
		}
		if nonString[strings.ToLower(x.F)] {
			g = 0
		}
		if x.Order != nil {
			if err := p.byItems(x.Order.Items); err != nil {
				return 0, false, err
			}
		}
		if p.recursive > 0 && growsInRecursion[strings.ToLower(x.F)] {
			g = int64(p.lim.StringBytes)
			p.grew = true
		}
		return p.site(g, strings.ToUpper(x.F))
	case *ast.WindowFuncExpr:
		g, err := p.sumArgs(x.Args, d)
		if err != nil {
			return 0, false, err
		}
		if nonString[strings.ToLower(x.Name)] {
			g = 0
		}
		if err := p.windowSpec(&x.Spec); err != nil {
			return 0, false, err
		}
		return p.site(g, strings.ToUpper(x.Name))
	case *ast.FuncCastExpr:
		g, err := p.operand(x.Expr, d)
		if err != nil {
			return 0, false, err
		}
		return p.site(g, "CAST")
	case *ast.CaseExpr:
		var g int64
		if _, err := p.operand(x.Value, d); err != nil {
			return 0, false, err
		}
		for _, wc := range x.WhenClauses {
			if wc == nil {
				continue
			}
			if err := p.node(); err != nil { // the engine's planning time grows with their square
				return 0, false, err
			}
			if _, err := p.operand(wc.Expr, d); err != nil {
				return 0, false, err
			}
			rg, err := p.operand(wc.Result, d)
			if err != nil {
				return 0, false, err
			}
			g = max(g, rg)
		}
		eg, err := p.operand(x.ElseClause, d)
		if err != nil {
			return 0, false, err
		}
		return p.site(max(g, eg), "CASE")
	case *ast.SetCollationExpr:
		g, err := p.operand(x.Expr, d)
		return g, false, err
	case *ast.PatternInExpr:
		if _, err := p.operand(x.Expr, d); err != nil {
			return 0, false, err
		}
		for _, it := range x.List {
			if _, err := p.operand(it, d); err != nil {
				return 0, false, err
			}
		}
		if x.Sel != nil {
			if _, err := p.operand(x.Sel, d); err != nil {
				return 0, false, err
			}
		}
		return 0, false, nil
	case *ast.ExistsSubqueryExpr:
		_, err := p.operand(x.Sel, d)
		return 0, false, err
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
		return 0, false, nil
	default:
		// Refused by the walker: count what it holds.
		return 0, false, p.generic(e, d)
	}
	for _, a := range args {
		if _, err := p.operand(a, d); err != nil {
			return 0, false, err
		}
	}
	return 0, false, nil // a number or a truth value
}

// operand measures an argument: its width (nil counts nothing).
func (p *limitPass) operand(e ast.ExprNode, d int) (int64, error) {
	if e == nil {
		return 0, nil
	}
	g, _, err := p.expr(e, d)
	return g, err
}

func (p *limitPass) sumArgs(args []ast.ExprNode, d int) (int64, error) {
	var g int64
	for _, a := range args {
		ag, err := p.operand(a, d)
		if err != nil {
			return 0, err
		}
		g += ag
	}
	return g, nil
}

// site records an expression evaluated per row that makes a value of g
// bytes (a string function's result, a CASE, a cast): g must fit
// StringBytes, and is added to the row's bytes.
func (p *limitPass) site(g int64, what string) (int64, bool, error) {
	if err := p.value(g, what); err != nil {
		return 0, false, err
	}
	p.rowBytes += g
	return g, true, nil
}

func (p *limitPass) stringLiteral(n int) error {
	if n > p.lim.StringBytes {
		return limitErr("%d bytes for a string literal", p.lim.StringBytes)
	}
	return nil
}

// call measures a function call. Functions whose result can outgrow their
// arguments get their bound here: exact from literals (refused over
// StringBytes), else StringBytes, which the engine then checks.
func (p *limitPass) call(x *ast.FuncCallExpr, d int) (int64, bool, error) {
	name := x.FnName.L
	fn := strings.ToUpper(name)
	n := len(x.Args)
	switch name {
	case "concat", "greatest", "least":
		// Printed as a chain of n-1 operators or rewrites.
		d += max(n-1, 0)
		if d > p.lim.ExprDepth {
			return 0, false, limitErr("%d levels of nested expressions", p.lim.ExprDepth)
		}
	}
	widths := make([]int64, n)
	var sum int64
	for i, a := range x.Args {
		g, err := p.operand(a, d)
		if err != nil {
			return 0, false, err
		}
		widths[i] = g
		sum += g
	}
	strict := int64(p.lim.StringBytes)
	g := sum
	switch name {
	case "repeat":
		if n == 2 {
			s, sok := literalText(x.Args[0])
			k, kok := literalInt(x.Args[1])
			switch {
			case sok && kok:
				if k > 0 && int64(len(s)) > strict/k {
					return 0, false, limitErr("%s", stringLimitMsg(p.lim.StringBytes, fn))
				}
				g = int64(len(s)) * max(k, 0)
			case kok && k <= 1:
				g = widths[0]
			default:
				g = strict // checked by the engine (rwRepeat)
			}
		}
	case "space":
		if k, ok := literalInt(x.Args[0]); ok && n == 1 {
			if k > strict {
				return 0, false, limitErr("%s", stringLimitMsg(p.lim.StringBytes, fn))
			}
			g = max(k, 0)
		} else {
			g = strict
		}
	case "lpad", "rpad":
		// The result has the literal length in characters, up to 4 bytes
		// each (the walker refuses a length that is not a literal).
		if k, ok := literalInt(x.Args[1]); ok && n == 3 {
			if k > strict/utf8.UTFMax {
				return 0, false, limitErr("%s (%d characters)", stringLimitMsg(p.lim.StringBytes, fn), strict/utf8.UTFMax)
			}
			g = max(k, 0) * utf8.UTFMax
		} else {
			g = strict
		}
	case "replace":
		if n == 3 {
			s, sok := literalText(x.Args[0])
			from, fok := literalText(x.Args[1])
			to, tok := literalText(x.Args[2])
			switch {
			case fok && tok && (len(to) <= len(from) || from == ""):
				g = widths[0]
			case sok && fok && tok:
				g = int64(len(strings.ReplaceAll(s, from, to)))
			default:
				g = strict // checked by the engine (rwReplace)
			}
		}
	case "concat_ws":
		if n > 2 {
			g = sum + widths[0]*int64(n-2)
		}
	case "date_format":
		// A format character prints at most 6 (%r: "12:00:00 AM" for two).
		if n == 2 {
			g = widths[0] + 6*widths[1]
		}
	case "format":
		g = 64 + 40 // a number of at most 38 digits, separators, 30 decimals
	default:
		if w, ok := fixedString[name]; ok {
			g = w
		} else if nonString[name] {
			g = 0
		}
	}
	if p.recursive > 0 && (growsInRecursion[name] || g == strict && (name == "repeat" || name == "replace")) {
		g = strict // capped by the engine (capBuilt, rwRepeat, rwReplace)
		p.grew = true
	}
	if g > strict {
		return 0, false, limitErr("%s", stringLimitMsg(p.lim.StringBytes, fn))
	}
	if !p.rowVarying(x) {
		return g, false, nil // evaluated once, not per row
	}
	return p.site(g, fn)
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

// rowVarying reports whether a call may take a different value in every row:
// one of its arguments is not a literal or parameter, or it is volatile.
func (p *limitPass) rowVarying(x *ast.FuncCallExpr) bool {
	switch x.FnName.L {
	case "rand", "uuid", "now", "current_timestamp", "curdate", "current_date":
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
		switch x.FnName.L {
		case "rand", "uuid", "now", "current_timestamp", "curdate", "current_date":
			return false
		}
		for _, a := range x.Args {
			if !constant(a) {
				return false
			}
		}
		return true
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
			if _, _, err := p.expr(c, d); err != nil {
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
