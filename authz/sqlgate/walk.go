package sqlgate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// cteDef is one common table expression of a WITH clause.
type cteDef struct {
	name, renamed string
	recursive     bool
	refs          int  // references resolved to this CTE
	inAnchor      bool // walking a non-recursive branch of its own body
	body          ast.ResultSetNode
	cols          []ast.CIStr // the CTE's column list
}

// cteFrame holds the CTEs of one WITH clause that are visible at the current
// point of the walk (MySQL scoping: CTE i sees CTEs 0..i-1, and itself when
// the WITH is RECURSIVE; inner WITH clauses shadow outer ones).
type cteFrame struct {
	parent *cteFrame
	defs   []*cteDef
}

// selScope is one SELECT (or set operation) block: the table sources of its
// FROM clause, in order.
type selScope struct {
	parent   *selScope
	stmt     *ast.SelectStmt // nil for the ORDER BY of a set operation
	bindings []binding
	real     []TableRef // real tables among the sources
	aggs     int        // aggregate calls (not window calls) in this SELECT
	using    bool       // a join of its FROM has USING or is NATURAL (types.go)
	anyValue bool       // ANY_VALUE is used in this SELECT
	// What markGroupKeys needs (facts.go): the clause being walked,
	// the column references outside aggregates in the output clauses, the
	// names referenced from nested SELECTs, and the keys and references
	// marked.
	clause  uint8
	outside []*ast.ColumnName
	nested  map[string]bool
	keys    []*groupKey
	refs    []*keyRef
}

// binding is one FROM source: its alias and, for a real table, its reference.
type binding struct {
	alias string
	real  bool
	ref   TableRef
	src   ast.ResultSetNode // a derived table's or CTE's query (type pass)
	cols  []ast.CIStr       // its column list, if any
}

// walker validates the tree against the allow-list, extracts real tables,
// and rewrites it in place into the form Render prints. It visits each
// SELECT's FROM clause before its other clauses.
type walker struct {
	defSchema string
	tables    map[TableRef]struct{}
	frame     *cteFrame
	sel       *selScope
	cteSeq    int
	params    []*paramExpr // every marker walked, numbered by statement
	depth     int
	pending   []colCheck // bare column references
	anchors   map[ast.Node]*cteDef
	named     []*ast.SelectField    // fields given their MySQL name (names.go)
	pol       *policyScope          // walking a row filter or mask (policy.go)
	dialect   Dialect               // an upstream dialect walks the portable core (dialect.go)
	checked   checked               // the sizes the engine checks (limits.go)
	recursive int                   // walking the body of a recursive CTE
	types     typeInfo              // for the type pass at Render (types.go)
	aggArg    int                   // walking the arguments of an aggregate (of this query block)
	winArg    int                   // walking the arguments of a window function
	groupKeys []*groupKey           // GROUP BY items that may group by bytes (facts.go)
	root      ast.Node              // the statement's own query
	likes     []*likeExpr           // LIKEs of a column under the collation (facts.go)
	compares  []*ast.ColumnNameExpr // roots of operands compared with text literals (facts.go)
	distincts []*foldKeyExpr        // COUNT(DISTINCT column)s (facts.go)
}

func newWalker(defSchema string) *walker {
	return &walker{
		defSchema: defSchema,
		tables:    make(map[TableRef]struct{}),
		anchors:   make(map[ast.Node]*cteDef),
		types: typeInfo{
			cols:  make(map[*ast.ColumnName]*selScope),
			sels:  make(map[*ast.SelectStmt]*selScope),
			calls: make(map[ast.ExprNode]callType),
		},
	}
}

// noteCall records how the type pass types a call's result node.
func (w *walker) noteCall(n ast.ExprNode, rule retRule, args []ast.ExprNode) {
	if rule != retUnknown {
		w.types.calls[n] = callType{rule: rule, args: args}
	}
}

// numberParams numbers the markers walked by their place in the text (the
// order in which clients bind values) and returns how many distinct markers
// there are. The walker visits FROM before the select list, so the order of
// the walk is not the order of the text.
func (w *walker) numberParams() int {
	offsets := make([]int, 0, len(w.params))
	for _, p := range w.params {
		offsets = append(offsets, p.offset)
	}
	slices.Sort(offsets)
	offsets = slices.Compact(offsets)
	for _, p := range w.params {
		i, _ := slices.BinarySearch(offsets, p.offset)
		p.n = i + 1
	}
	return len(offsets)
}

func (w *walker) statement(kind Kind, root ast.Node) *Statement {
	if kind == KindInsert {
		// The rows of an INSERT are never shown, and the caller aligns
		// them to the target by name when every name is one of its
		// columns: a string literal named by its value must not make
		// 'b', 'a' fill columns b and a rather than a and b.
		for _, f := range w.named {
			f.AsName = ast.CIStr{}
		}
	}
	st := &Statement{kind: kind, numParams: w.numberParams(), root: root, types: &w.types, groupKeys: w.groupKeys, likes: w.likes, compares: w.compares, distincts: w.distincts}
	st.tables = make([]TableRef, 0, len(w.tables))
	for t := range w.tables {
		st.tables = append(st.tables, t)
	}
	slices.SortFunc(st.tables, func(a, b TableRef) int {
		if c := strings.Compare(a.Schema, b.Schema); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	st.checks = w.pending
	return st
}

// context names where an expression outside any SELECT is, for messages.
func (w *walker) context() string {
	if w.pol != nil {
		return "in a policy expression"
	}
	return "in VALUES"
}

func (w *walker) push() error {
	w.depth++
	if w.depth > maxDepth {
		return unsupported("statement is nested too deeply")
	}
	return nil
}

func (w *walker) pop() { w.depth-- }

// ident lower-cases and validates an identifier.
func ident(s string) (string, error) {
	s = strings.ToLower(s)
	return s, checkIdent(s)
}

// optIdent is ident for optional names ("" stays "").
func optIdent(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	return ident(s)
}

func cistr(s string) ast.CIStr { return ast.CIStr{O: s, L: s} }

// ---- queries ----

func (w *walker) resultSet(n ast.ResultSetNode) error {
	if w.pol != nil {
		return unsupported("subqueries are not allowed in a policy expression")
	}
	if err := w.push(); err != nil {
		return err
	}
	defer w.pop()
	// A query block inside an aggregate's argument has aggregates of its
	// own.
	aggArg, winArg := w.aggArg, w.winArg
	w.aggArg, w.winArg = 0, 0
	defer func() { w.aggArg, w.winArg = aggArg, winArg }()
	switch n := n.(type) {
	case *ast.SelectStmt:
		return w.selectStmt(n)
	case *ast.SetOprStmt:
		return w.setOpr(n)
	case nil:
		return syntaxErr("missing query")
	}
	return unsupported("%s is not supported here", nodeName(n))
}

func (w *walker) pushScope() func() {
	sc := &selScope{parent: w.sel}
	w.sel = sc
	return func() { w.sel = sc.parent }
}

func (w *walker) selectStmt(n *ast.SelectStmt) error {
	switch {
	case n.Kind != ast.SelectStmtKindSelect:
		return unsupported("TABLE and VALUES statements are not supported")
	case n.SelectIntoOpt != nil:
		return unsupported("SELECT … INTO is not supported")
	case n.LockInfo != nil && n.LockInfo.LockType != ast.SelectLockNone:
		return unsupported("locking reads (FOR UPDATE, LOCK IN SHARE MODE) are not supported")
	case len(n.Lists) > 0:
		return unsupported("VALUES lists are not supported")
	case n.Fields == nil || len(n.Fields.Fields) == 0:
		return syntaxErr("empty select list")
	}
	// Optimizer hints, result-cache switches and SQL_CALC_FOUND_ROWS are
	// dropped: they do not change the rows, and DuckDB has no syntax for
	// them (FOUND_ROWS() is not supported).
	explicitAll := n.SelectStmtOpts != nil && n.SelectStmtOpts.ExplicitAll
	n.SelectStmtOpts = &ast.SelectStmtOpts{SQLCache: true, ExplicitAll: explicitAll, Distinct: n.Distinct}
	n.TableHints = nil
	n.LockInfo = nil

	if n.With != nil {
		popWith, err := w.with(n.With)
		if err != nil {
			return err
		}
		defer popWith()
	}
	defer w.pushScope()()
	w.sel.stmt = n
	w.types.sels[n] = w.sel

	if n.From != nil {
		if n.From.TableRefs == nil {
			return syntaxErr("empty FROM clause")
		}
		item, err := w.fromItem(n.From.TableRefs)
		if err != nil {
			return err
		}
		if j, ok := item.(*ast.Join); ok {
			n.From.TableRefs = j
		} else {
			n.From.TableRefs = &ast.Join{Left: item}
		}
	}
	w.sel.clause = clauseOutput
	for _, f := range n.Fields.Fields {
		if err := w.field(f); err != nil {
			return err
		}
	}
	w.sel.clause = clauseInput
	var err error
	if n.Where != nil {
		if n.Where, err = w.expr(n.Where); err != nil {
			return err
		}
	}
	if n.GroupBy != nil {
		if err := w.byItems(n.GroupBy.Items, true); err != nil {
			return err
		}
		if n.GroupBy.Rollup && w.dialect != DialectDuckDB {
			return unsupported("WITH ROLLUP is not supported on tables of an upstream engine")
		}
		if n.GroupBy.Rollup {
			// GROUP BY a, b WITH ROLLUP is DuckDB's GROUP BY ROLLUP (a, b).
			parts := []any{"ROLLUP ("}
			for i, it := range n.GroupBy.Items {
				if it.Desc {
					return unsupported("WITH ROLLUP with DESC is not supported")
				}
				if _, ok := it.Expr.(*ast.PositionExpr); ok {
					return unsupported("WITH ROLLUP with a positional reference is not supported")
				}
				if i > 0 {
					parts = append(parts, ", ")
				}
				parts = append(parts, it.Expr)
			}
			n.GroupBy = &ast.GroupByClause{Items: []*ast.ByItem{{Expr: tx(append(parts, ")")...), NullOrder: true}}}
		}
	}
	w.sel.clause = clauseOutput
	if n.Having != nil {
		if n.Having.Expr, err = w.expr(n.Having.Expr); err != nil {
			return err
		}
	}
	for i := range n.WindowSpecs {
		if n.WindowSpecs[i].Name.O == "" {
			return syntaxErr("unnamed window definition")
		}
		if err := w.windowSpec(&n.WindowSpecs[i]); err != nil {
			return err
		}
	}
	if n.OrderBy != nil {
		if err := w.byItems(n.OrderBy.Items, true); err != nil {
			return err
		}
		n.OrderBy = dropNullOrder(n.OrderBy)
	}
	w.markGroupKeys(n)
	w.sel.clause = clauseInput
	if err := w.limit(n.Limit); err != nil {
		return err
	}
	if w.sel.anyValue && n.GroupBy == nil && w.sel.aggs == 0 {
		return unsupported("ANY_VALUE in a query that is not aggregated is not supported")
	}
	if n.From != nil && n.Where != nil && n.From.TableRefs.Right == nil {
		if rs, ok := n.From.TableRefs.Left.(*relSource); ok {
			rs.push = pushableConjuncts(n.Where, rs.alias, nil)
		}
	}
	if n.From == nil && n.Where != nil {
		// TiDB prints "FROM DUAL", which DuckDB does not have.
		n.From = &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{
			Source: &ast.SelectStmt{
				SelectStmtOpts: &ast.SelectStmtOpts{SQLCache: true},
				Kind:           ast.SelectStmtKindSelect,
				Fields:         &ast.FieldList{Fields: []*ast.SelectField{{Expr: &litExpr{text: "1"}}}},
			},
			AsName: cistr("__lg_dual"),
		}}}
	}
	return nil
}

func (w *walker) setOpr(n *ast.SetOprStmt) error {
	if n.With != nil {
		popWith, err := w.with(n.With)
		if err != nil {
			return err
		}
		defer popWith()
	}
	if n.SelectList == nil {
		return syntaxErr("empty set operation")
	}
	if err := w.setOprList(n.SelectList); err != nil {
		return err
	}
	defer w.pushScope()()
	if n.OrderBy != nil {
		if err := w.byItems(n.OrderBy.Items, true); err != nil {
			return err
		}
	}
	return w.limit(n.Limit)
}

func (w *walker) setOprList(l *ast.SetOprSelectList) error {
	if err := w.push(); err != nil {
		return err
	}
	defer w.pop()
	if l.With != nil {
		popWith, err := w.with(l.With)
		if err != nil {
			return err
		}
		defer popWith()
	}
	if len(l.Selects) == 0 {
		return syntaxErr("empty set operation")
	}
	for _, s := range l.Selects {
		d := w.anchors[s]
		if d != nil {
			d.inAnchor = true
		}
		var err error
		switch s := s.(type) {
		case *ast.SelectStmt:
			err = w.selectStmt(s)
		case *ast.SetOprSelectList:
			err = w.setOprList(s)
		default:
			err = unsupported("%s is not supported in a set operation", nodeName(s))
		}
		if d != nil {
			d.inAnchor = false
		}
		if err != nil {
			return err
		}
	}
	defer w.pushScope()()
	if l.OrderBy != nil {
		if err := w.byItems(l.OrderBy.Items, true); err != nil {
			return err
		}
	}
	return w.limit(l.Limit)
}

// setOpType returns the set operator in front of a member of a set operation.
func setOpType(n ast.Node) *ast.SetOprType {
	switch n := n.(type) {
	case *ast.SelectStmt:
		return n.AfterSetOperator
	case *ast.SetOprSelectList:
		return n.AfterSetOperator
	}
	return nil
}

// with opens the scope of a WITH clause, walks its CTE bodies with MySQL
// scoping, renames every CTE to __cte<n>_<name>, and returns the function
// that closes the scope.
func (w *walker) with(wc *ast.WithClause) (func(), error) {
	f := &cteFrame{parent: w.frame}
	w.frame = f
	closeScope := func() { w.frame = f.parent }
	if err := w.ctes(wc, f); err != nil {
		closeScope()
		return nil, err
	}
	return closeScope, nil
}

func (w *walker) ctes(wc *ast.WithClause, f *cteFrame) error {
	seen := make(map[string]bool, len(wc.CTEs))
	for _, cte := range wc.CTEs {
		name, err := ident(cte.Name.O)
		if err != nil {
			return err
		}
		if seen[name] {
			return syntaxErr("CTE %q is defined twice", name)
		}
		seen[name] = true
		for i, c := range cte.ColNameList {
			col, err := ident(c.O)
			if err != nil {
				return err
			}
			cte.ColNameList[i] = cistr(col)
		}
		if cte.Query == nil || cte.Query.Query == nil {
			return syntaxErr("CTE %q has no query", name)
		}
		w.cteSeq++
		body := cte.Query.Query
		d := &cteDef{name: name, renamed: fmt.Sprintf("__cte%d_%s", w.cteSeq, name), recursive: wc.IsRecursive, body: body, cols: cte.ColNameList}
		var branches []ast.Node
		if d.recursive {
			f.defs = append(f.defs, d) // a recursive CTE sees itself
			if so, ok := body.(*ast.SetOprStmt); ok && so.SelectList != nil {
				branches = so.SelectList.Selects
				// Only the last branch may refer to the CTE itself.
				for _, b := range branches[:max(len(branches)-1, 0)] {
					w.anchors[b] = d
				}
			}
		}
		if d.recursive {
			w.recursive++ // strings built here are capped (limits.go)
		}
		err = w.resultSet(body)
		if d.recursive {
			w.recursive--
		}
		for _, b := range branches {
			delete(w.anchors, b)
		}
		if err != nil {
			return err
		}
		if d.recursive && d.refs > 0 {
			w.types.anchored(body)
			if len(branches) < 2 {
				return unsupported("recursive CTE %q without UNION is not supported", name)
			}
			for _, b := range branches[1:] {
				if t := setOpType(b); t == nil || (*t != ast.Union && *t != ast.UnionAll) {
					return unsupported("recursive CTE %q must combine its parts with UNION", name)
				}
			}
		}
		if !d.recursive {
			f.defs = append(f.defs, d) // visible to later CTEs and the body only
		}
		cte.Name = cistr(d.renamed)
	}
	return nil
}

func (w *walker) lookupCTE(name string) *cteDef {
	for f := w.frame; f != nil; f = f.parent {
		for i := len(f.defs) - 1; i >= 0; i-- {
			if f.defs[i].name == name {
				return f.defs[i]
			}
		}
	}
	return nil
}

// ---- FROM ----

// fromItem walks one FROM item and returns its replacement: joins with no
// right side are flattened, real tables become relSource nodes.
func (w *walker) fromItem(n ast.ResultSetNode) (ast.ResultSetNode, error) {
	if err := w.push(); err != nil {
		return nil, err
	}
	defer w.pop()
	switch n := n.(type) {
	case *ast.Join:
		if n.Right == nil {
			if n.Left == nil {
				return nil, syntaxErr("empty join")
			}
			return w.fromItem(n.Left)
		}
		return n, w.join(n)
	case *ast.TableSource:
		return w.tableSource(n)
	case nil:
		return nil, syntaxErr("missing table")
	}
	return nil, unsupported("%s is not supported in FROM", nodeName(n))
}

func (w *walker) join(j *ast.Join) error {
	var err error
	if j.Left, err = w.fromItem(j.Left); err != nil {
		return err
	}
	if j.Right, err = w.fromItem(j.Right); err != nil {
		return err
	}
	if j.Tp == 0 && (j.StraightJoin || j.NaturalJoin) {
		j.Tp = ast.CrossJoin
	}
	j.StraightJoin = false // a hint: STRAIGHT_JOIN is an inner join
	switch j.Tp {
	case ast.CrossJoin, ast.LeftJoin, ast.RightJoin:
	default:
		return unsupported("join type is not supported")
	}
	if len(j.Using) > 0 || j.NaturalJoin {
		w.sel.using = true
	}
	for i, c := range j.Using {
		name, err := ident(c.Name.O)
		if err != nil {
			return err
		}
		j.Using[i] = &ast.ColumnName{Name: cistr(name)}
	}
	if j.On != nil {
		if j.On.Expr, err = w.expr(j.On.Expr); err != nil {
			return err
		}
	} else if len(j.Using) == 0 && !j.NaturalJoin {
		// MySQL's JOIN without a condition is a cross join; DuckDB needs ON.
		j.On = &ast.OnCondition{Expr: &litExpr{text: "TRUE"}}
	}
	return nil
}

func (w *walker) tableSource(ts *ast.TableSource) (ast.ResultSetNode, error) {
	alias, err := optIdent(ts.AsName.O)
	if err != nil {
		return nil, err
	}
	for i, c := range ts.ColumnNames {
		col, err := ident(c.O)
		if err != nil {
			return nil, err
		}
		ts.ColumnNames[i] = cistr(col)
	}
	switch src := ts.Source.(type) {
	case *ast.TableName:
		if len(ts.ColumnNames) > 0 || ts.Lateral {
			return nil, unsupported("column lists and LATERAL apply to derived tables only")
		}
		return w.tableName(ts, src, alias)
	case *ast.SelectStmt, *ast.SetOprStmt:
		if alias == "" {
			return nil, syntaxErr("every derived table must have its own alias")
		}
		if err := w.resultSet(src); err != nil {
			return nil, err
		}
		ts.AsName = cistr(alias)
		if err := w.bind(alias, nil); err != nil {
			return nil, err
		}
		w.bindSource(src, ts.ColumnNames)
		return ts, nil
	case *ast.Join:
		if alias != "" || len(ts.ColumnNames) > 0 || ts.Lateral {
			return nil, unsupported("an alias on a parenthesized join is not supported")
		}
		return w.fromItem(src)
	}
	return nil, unsupported("%s is not supported in FROM", nodeName(ts.Source))
}

func (w *walker) tableName(ts *ast.TableSource, tn *ast.TableName, alias string) (ast.ResultSetNode, error) {
	switch {
	case tn.AsOf != nil:
		return nil, unsupported("AS OF is not supported")
	case len(tn.PartitionNames) > 0:
		return nil, unsupported("PARTITION (…) is not supported")
	case tn.TableSample != nil:
		return nil, unsupported("TABLESAMPLE is not supported")
	}
	tn.IndexHints = nil // USE/FORCE/IGNORE INDEX do not change the answer
	name, err := ident(tn.Name.O)
	if err != nil {
		return nil, err
	}
	schema, err := optIdent(tn.Schema.O)
	if err != nil {
		return nil, err
	}
	if alias == "" {
		alias = name
	}
	if schema == "" {
		if d := w.lookupCTE(name); d != nil {
			if d.inAnchor {
				return nil, unsupported("recursive CTE %q refers to itself in its non-recursive part", name)
			}
			d.refs++
			*tn = ast.TableName{Name: cistr(d.renamed)}
			ts.AsName = cistr(alias)
			if err := w.bind(alias, nil); err != nil {
				return nil, err
			}
			w.bindSource(d.body, d.cols)
			return ts, nil
		}
		if w.defSchema == "" {
			return nil, newErr(ErrorKindNoSchema, "no schema selected for table %q", name)
		}
		schema = w.defSchema
	}
	ref := TableRef{Schema: schema, Name: name}
	w.tables[ref] = struct{}{}
	if err := w.bind(alias, &ref); err != nil {
		return nil, err
	}
	return &relSource{ref: ref, alias: alias}, nil
}

func (w *walker) bind(alias string, real *TableRef) error {
	sc := w.sel
	for _, b := range sc.bindings {
		if b.alias == alias {
			return unsupported("table alias %q is used twice in one FROM clause; give the tables distinct aliases", alias)
		}
	}
	b := binding{alias: alias}
	if real != nil {
		b.real, b.ref = true, *real
		sc.real = append(sc.real, *real)
	}
	sc.bindings = append(sc.bindings, b)
	return nil
}

// bindSource gives the binding just made the query of its derived table or
// CTE, for the type pass.
func (w *walker) bindSource(src ast.ResultSetNode, cols []ast.CIStr) {
	b := &w.sel.bindings[len(w.sel.bindings)-1]
	b.src, b.cols = src, cols
}

// qualified resolves the table part of a schema.table.column reference to the
// alias the rewritten query uses for it (the table name: the reference is only
// valid in MySQL for an unaliased table).
func (w *walker) qualified(schema, table string) (string, error) {
	ref := TableRef{Schema: schema, Name: table}
	for sc := w.sel; sc != nil; sc = sc.parent {
		for _, b := range sc.bindings {
			if b.real && b.ref == ref && b.alias == table {
				return table, nil
			}
		}
	}
	return "", unsupported("unknown table %q in a qualified column reference", ref.String())
}

// ---- select list, ORDER BY, LIMIT, windows ----

// field walks one select field. An expression without an alias gets its
// MySQL name as one (names.go), taken before the expression is rewritten.
func (w *walker) field(f *ast.SelectField) error {
	as, err := optIdent(f.AsName.O)
	if err != nil {
		return err
	}
	if err := checkAlias(as); err != nil {
		return err
	}
	if as == "" && f.WildCard == nil && f.Expr != nil {
		if as, err = fieldName(f); err != nil {
			return err
		}
		if as != "" {
			w.named = append(w.named, f)
		}
	}
	f.AsName = cistr(as)
	if wc := f.WildCard; wc != nil {
		table, err := optIdent(wc.Table.O)
		if err != nil {
			return err
		}
		schema, err := optIdent(wc.Schema.O)
		if err != nil {
			return err
		}
		if schema != "" {
			if table, err = w.qualified(schema, table); err != nil {
				return err
			}
		}
		f.WildCard = &ast.WildCardField{Table: cistr(table)}
		return nil
	}
	f.Expr, err = w.expr(f.Expr)
	return err
}

func (w *walker) byItems(items []*ast.ByItem, positions bool) error {
	for _, it := range items {
		if p, ok := it.Expr.(*ast.PositionExpr); ok {
			if !positions || p.P != nil || p.N < 1 {
				return unsupported("this positional reference is not supported")
			}
			continue
		}
		var err error
		if it.Expr, err = w.expr(it.Expr); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) limit(l *ast.Limit) error {
	if l == nil {
		return nil
	}
	if l.Offset == nil {
		count, err := w.limitValue(l.Count)
		l.Count = count
		return err
	}
	pc, p1 := l.Count.(*test_driver.ParamMarkerExpr)
	po, p2 := l.Offset.(*test_driver.ParamMarkerExpr)
	if p1 && p2 && po.Offset < pc.Offset {
		// "LIMIT ?, ?" prints as "LIMIT ? OFFSET ?", which would swap them.
		return unsupported("parameter markers for both LIMIT offset and count are not supported; use LIMIT ? OFFSET ?")
	}
	offset, err := w.limitValue(l.Offset)
	if err != nil {
		return err
	}
	count, err := w.limitValue(l.Count)
	if err != nil {
		return err
	}
	l.Count, l.Offset = &limitExpr{count: count, offset: offset}, nil
	return nil
}

func (w *walker) limitValue(e ast.ExprNode) (ast.ExprNode, error) {
	switch e.(type) {
	case *test_driver.ParamMarkerExpr, *test_driver.ValueExpr:
		return w.expr(e)
	}
	return nil, unsupported("LIMIT takes integer literals or parameter markers")
}

func (w *walker) windowSpec(ws *ast.WindowSpec) error {
	if w.dialect != DialectDuckDB {
		return unsupported("windows are not supported on tables of an upstream engine")
	}
	name, err := optIdent(ws.Name.O)
	if err != nil {
		return err
	}
	ref, err := optIdent(ws.Ref.O)
	if err != nil {
		return err
	}
	ws.Name, ws.Ref = cistr(name), cistr(ref)
	if ws.PartitionBy != nil {
		if err := w.byItems(ws.PartitionBy.Items, false); err != nil {
			return err
		}
	}
	if ws.OrderBy != nil {
		if err := w.byItems(ws.OrderBy.Items, false); err != nil {
			return err
		}
	}
	if fr := ws.Frame; fr != nil {
		if fr.Type != ast.Rows && fr.Type != ast.Ranges {
			return unsupported("window frame type is not supported")
		}
		for _, b := range []*ast.FrameBound{&fr.Extent.Start, &fr.Extent.End} {
			if b.Expr != nil {
				if b.Expr, err = w.expr(b.Expr); err != nil {
					return err
				}
			}
			if b.Unit != ast.TimeUnitInvalid {
				if b.Expr == nil || fr.Type != ast.Ranges {
					return unsupported("INTERVAL window frame bounds need RANGE")
				}
				iv, _, err := interval(b.Expr, &ast.TimeUnitExpr{Unit: b.Unit})
				if err != nil {
					return err
				}
				b.Expr, b.Unit = iv, ast.TimeUnitInvalid
			}
		}
	}
	return nil
}

// ---- expressions ----

// binaryOps maps allowed MySQL binary operators to DuckDB's.
var binaryOps = map[opcode.Op]string{
	opcode.LogicAnd:   "AND",
	opcode.LogicOr:    "OR",
	opcode.EQ:         "=",
	opcode.NE:         "<>",
	opcode.LT:         "<",
	opcode.LE:         "<=",
	opcode.GT:         ">",
	opcode.GE:         ">=",
	opcode.NullEQ:     "IS NOT DISTINCT FROM",
	opcode.Plus:       "+",
	opcode.Minus:      "-",
	opcode.Mul:        "*",
	opcode.Div:        "/",
	opcode.Mod:        "%",
	opcode.IntDiv:     "//",
	opcode.And:        "&",
	opcode.Or:         "|",
	opcode.Xor:        "xor",
	opcode.LeftShift:  "<<",
	opcode.RightShift: ">>",
	opcode.LogicXor:   "XOR",
}

var comparisonOps = map[opcode.Op]string{
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
}

func (w *walker) exprs(es []ast.ExprNode) error {
	for i, e := range es {
		var err error
		if es[i], err = w.expr(e); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) subquery(e ast.ExprNode) (*ast.SubqueryExpr, error) {
	sq, ok := e.(*ast.SubqueryExpr)
	if !ok || sq.Query == nil {
		return nil, unsupported("a subquery is expected here")
	}
	return sq, w.resultSet(sq.Query)
}

// caseExpr walks the parts of a CASE expression in place.
func (w *walker) caseExpr(x *ast.CaseExpr) (ast.ExprNode, error) {
	var err error
	if x.Value != nil {
		if x.Value, err = w.expr(x.Value); err != nil {
			return nil, err
		}
	}
	if len(x.WhenClauses) == 0 {
		return nil, syntaxErr("CASE without WHEN")
	}
	for _, wc := range x.WhenClauses {
		if wc.Expr, err = w.expr(wc.Expr); err != nil {
			return nil, err
		}
		if wc.Result, err = w.expr(wc.Result); err != nil {
			return nil, err
		}
	}
	if x.ElseClause != nil {
		if x.ElseClause, err = w.expr(x.ElseClause); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// column lower-cases a column reference, rewrites schema.table.column to
// alias.column, and records bare names for the alias check.
func (w *walker) column(cn *ast.ColumnName) error {
	if cn == nil {
		return syntaxErr("missing column name")
	}
	if w.pol != nil {
		return w.policyColumn(cn)
	}
	if w.sel == nil {
		// Only the rows of INSERT … VALUES are walked outside a SELECT.
		return unsupported("column references are not supported in VALUES")
	}
	name, err := ident(cn.Name.O)
	if err != nil {
		return err
	}
	table, err := optIdent(cn.Table.O)
	if err != nil {
		return err
	}
	schema, err := optIdent(cn.Schema.O)
	if err != nil {
		return err
	}
	if schema != "" {
		if table, err = w.qualified(schema, table); err != nil {
			return err
		}
	}
	*cn = ast.ColumnName{Table: cistr(table), Name: cistr(name)}
	w.types.cols[cn] = w.sel
	w.noteColumn(cn)
	if table == "" && w.aliasVisible(name) {
		real := w.sel.real
		w.pending = append(w.pending, colCheck{name: name, scope: real[:len(real):len(real)]})
	}
	return nil
}

// aliasVisible reports whether a FROM source named name is visible where
// the walk is: in this SELECT or an enclosing one, which is where DuckDB
// could bind a bare name to a source's whole row (an earlier source of an
// enclosing FROM included: DuckDB joins a derived table laterally when it
// refers to one). A source inside a derived table or CTE is out of sight,
// so a column of that table's result may share its name.
func (w *walker) aliasVisible(name string) bool {
	for sc := w.sel; sc != nil; sc = sc.parent {
		for _, b := range sc.bindings {
			if b.alias == name {
				return true
			}
		}
	}
	return false
}

// literal converts a MySQL literal to a printed DuckDB literal.
func literal(x *test_driver.ValueExpr) (ast.ExprNode, error) {
	var s string
	switch x.Kind() {
	case test_driver.KindNull:
		return &litExpr{text: "NULL"}, nil
	case test_driver.KindInt64:
		if x.Type.GetFlag()&mysql.IsBooleanFlag != 0 {
			if x.GetInt64() != 0 {
				return &litExpr{text: "TRUE"}, nil
			}
			return &litExpr{text: "FALSE"}, nil
		}
		s = strconv.FormatInt(x.GetInt64(), 10)
	case test_driver.KindUint64:
		s = strconv.FormatUint(x.GetUint64(), 10)
		if x.GetUint64() > math.MaxInt64 {
			// MySQL's BIGINT UNSIGNED, whose arithmetic overflows past
			// 2^64 - 1; DuckDB would read the digits as a HUGEINT.
			return &litExpr{text: "CAST(" + s + " AS UBIGINT)"}, nil
		}
	case test_driver.KindFloat32, test_driver.KindFloat64:
		f := x.GetFloat64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, unsupported("non-finite number literal")
		}
		s = strconv.FormatFloat(f, 'e', -1, 64)
		if f < 0 {
			s = "(" + s + ")"
		}
		return &litExpr{text: s, isFloat: true}, nil
	case test_driver.KindMysqlDecimal:
		s = x.GetMysqlDecimal().String()
		for i := 0; i < len(s); i++ {
			if c := s[i]; (c < '0' || c > '9') && c != '.' && c != '-' {
				return nil, unsupported("decimal literal is not supported")
			}
		}
	case test_driver.KindString:
		if x.Type.GetFlag()&mysql.UnderScoreCharsetFlag != 0 {
			switch x.Type.GetCharset() {
			case "utf8", "utf8mb4":
			default:
				return nil, unsupported("character set introducers other than _utf8mb4 are not supported")
			}
		}
		v := x.GetString()
		if strings.IndexByte(v, 0) >= 0 {
			return nil, syntaxErr("string literal contains a NUL character")
		}
		if !utf8.ValidString(v) {
			return nil, syntaxErr("string literal is not valid UTF-8")
		}
		return &litExpr{text: v, isText: true}, nil
	case test_driver.KindBinaryLiteral, test_driver.KindMysqlBit:
		return nil, unsupported("hexadecimal and bit literals are not supported")
	default:
		return nil, unsupported("this kind of literal is not supported")
	}
	if strings.HasPrefix(s, "-") {
		s = "(" + s + ")"
	}
	return &litExpr{text: s}, nil
}

// nodeName names a refused construct for a user-facing message.
func nodeName(n ast.Node) string {
	switch n.(type) {
	case *ast.VariableExpr:
		return "a user or system variable (@x, @@x)"
	case *ast.RowExpr:
		return "a row constructor"
	case *ast.PatternRegexpExpr:
		return "REGEXP"
	case *ast.IsTruthExpr:
		return "IS TRUE / IS FALSE"
	case *ast.SetCollationExpr:
		return "COLLATE"
	case *ast.MatchAgainst:
		return "MATCH … AGAINST"
	case *ast.DefaultExpr:
		return "DEFAULT"
	case *ast.ValuesExpr:
		return "VALUES()"
	case *ast.PositionExpr:
		return "a positional reference"
	case *ast.TimeUnitExpr:
		return "INTERVAL units"
	case *ast.TableNameExpr:
		return "a table name as an argument"
	case *ast.SelectStmt, *ast.SetOprStmt:
		return "a query"
	}
	s := fmt.Sprintf("%T", n)
	s = strings.TrimPrefix(s, "*ast.")
	s = strings.TrimSuffix(s, "Expr")
	return "expression " + strings.TrimSuffix(s, "Stmt")
}

// dropNullOrder removes ORDER BY NULL items (MySQL: no ordering; DuckDB
// refuses a constant ORDER BY).
func dropNullOrder(ob *ast.OrderByClause) *ast.OrderByClause {
	items := ob.Items[:0]
	for _, it := range ob.Items {
		if !isNullLit(it.Expr) {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		return nil
	}
	ob.Items = items
	return ob
}

// aggregate finishes the translation of an aggregate call whose arguments
// have been walked.
func (w *walker) aggregate(name string, n *callExpr, x *ast.AggregateFuncExpr) (ast.ExprNode, error) {
	switch name {
	case "count":
		if !n.distinct {
			if len(n.args) > 1 {
				return nil, syntaxErr("COUNT takes one argument")
			}
			return n, nil
		}
		// DuckDB's DISTINCT aggregates ignore the default collation; MySQL's
		// compare case- and accent-insensitively. COUNT(DISTINCT a, b)
		// skips rows where any is NULL.
		if len(n.args) == 1 {
			fk := foldKey(n.args[0])
			if _, col := n.args[0].(*ast.ColumnNameExpr); col && w.pol == nil {
				w.distincts = append(w.distincts, fk) // GroupKeys (facts.go)
			}
			n.args = []ast.ExprNode{fk}
			return n, nil
		}
		n.args = []ast.ExprNode{letx(n.args, func(r []ast.ExprNode) *tmplExpr {
			key := []any{"["}
			for i, a := range r {
				if i > 0 {
					key = append(key, ", ")
				}
				key = append(key, foldText(a))
			}
			return nullIfAny(r, append(key, "]")...)
		})}
		return n, nil
	case "bit_and", "bit_or", "bit_xor":
		// MySQL's are on unsigned 64-bit integers and never NULL: all ones
		// (BIT_AND) or 0 for no rows.
		empty := "0"
		if name == "bit_and" {
			empty = "18446744073709551615"
		}
		n.args = []ast.ExprNode{&castExpr{v: n.args[0], typ: "UBIGINT"}}
		return tx("coalesce(", n, ", CAST("+empty+" AS UBIGINT))"), nil
	case "sum", "avg":
		// MySQL's types (typed.go).
		return &numAggExpr{avg: name == "avg", call: n}, nil
	case "json_arrayagg":
		// MySQL prints the array with ", " between elements and null for
		// NULL; NULL for no rows.
		if n.distinct {
			return nil, unsupported("JSON_ARRAYAGG(DISTINCT …) is not supported")
		}
		// A DECIMAL keeps its scale ([9.70]); strings, integers and dates
		// are to_json's; any other type (DOUBLE, DATETIME, TIME, boolean)
		// prints differently in DuckDB and is refused at run time.
		v := n.args[0]
		return tx("('[' || string_agg(coalesce(CASE WHEN (typeof(", v, ") LIKE 'DECIMAL%') THEN CAST(", v,
			" AS VARCHAR) WHEN (typeof(", v, ") IN ('VARCHAR', 'TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'HUGEINT', 'DATE', 'NULL')) THEN CAST(to_json(", v,
			") AS VARCHAR) ELSE error('JSON_ARRAYAGG of a ' || typeof(", v, ") || ' is not supported') END, 'null'), ', ') || ']')"), nil
	case "group_concat":
		// The last argument is the separator.
		vals, sep := n.args[:len(n.args)-1], n.args[len(n.args)-1]
		if _, ok := textLit(sep); !ok {
			return nil, unsupported("GROUP_CONCAT takes a string literal SEPARATOR")
		}
		var key ast.ExprNode
		if n.distinct {
			// DuckDB requires ORDER BY to use the DISTINCT argument itself.
			if len(vals) != 1 {
				return nil, unsupported("GROUP_CONCAT(DISTINCT …) of several expressions is not supported")
			}
			key = vals[0]
		} else if len(vals) == 1 {
			key = mysqlStr(vals[0])
		} else {
			parts := []any{"("}
			for i, v := range vals {
				if i > 0 {
					parts = append(parts, " || ")
				}
				parts = append(parts, mysqlStr(v))
			}
			key = tx(append(parts, ")")...)
		}
		n.args, n.sep = []ast.ExprNode{key}, sep
		if x.Order != nil {
			if err := w.byItems(x.Order.Items, false); err != nil {
				return nil, err
			}
			n.order = x.Order.Items
		}
		return n, nil
	}
	return n, nil
}

// in walks an IN over a subquery or a list (not a row constructor): its
// operand, then the subquery or every item of the list.
func (w *walker) in(x *ast.PatternInExpr) (*inExpr, error) {
	n := &inExpr{not: x.Not}
	var err error
	if n.v, err = w.expr(x.Expr); err != nil {
		return nil, err
	}
	if x.Sel != nil {
		if n.sub, err = w.subquery(x.Sel); err != nil {
			return nil, err
		}
		return n, nil
	}
	if len(x.List) == 0 {
		return nil, syntaxErr("empty IN list")
	}
	n.list = x.List
	if err := w.exprs(n.list); err != nil {
		return nil, err
	}
	w.noteCompare(n.v, n.list...) // CompareColumns (facts.go)
	return n, nil
}

// between walks the three operands of a BETWEEN.
func (w *walker) between(x *ast.BetweenExpr) (*betweenExpr, error) {
	n := &betweenExpr{not: x.Not}
	var err error
	if n.v, err = w.expr(x.Expr); err != nil {
		return nil, err
	}
	if n.lo, err = w.expr(x.Left); err != nil {
		return nil, err
	}
	if n.hi, err = w.expr(x.Right); err != nil {
		return nil, err
	}
	return n, nil
}

// unaryOps are the prefix operators every dialect prints as MySQL writes
// them.
var unaryOps = map[opcode.Op]string{opcode.Minus: "-", opcode.Plus: "+", opcode.Not: "NOT ", opcode.Not2: "NOT "}
