package sqlgate

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// Facts about a column's values that make MySQL's collation cheaper to
// carry, with the same answers (Relation.FoldUnique, Folded, ASCII, NoUpper,
// NoLower). The engine finds them, exactly, per table version and column;
// the gate uses them only for a table read without a row filter (they cover
// every row, and the form a statement takes must not depend on rows its
// caller cannot read) and a column without a mask (a mask changes the
// values).
//
// LIKE on a folded column. The gate compares lower(strip_accents(v)) with
// the pattern folded alike (likeExpr). When every value of the column is
// its own fold, lower(strip_accents(v)) is v, and the column is compared
// as it is: the engine then runs a literal pattern as a substring or
// prefix search over the stored values. When every value is ASCII, an
// ASCII pattern is matched by its ASCII form alone, without the test of
// each value that chooses between it and the fold; and when the values hold
// the pattern's letters in one case only (Relation.NoUpper, NoLower), by
// the case-sensitive LIKE of the pattern in that case, which the engine
// pushes into its scan. A comparison of folded ASCII text with ASCII
// literals compares bytes (see "Comparisons of folded text" below).
//
// Grouping by text under MySQL's collation. The engine groups a text column
// by its folded value (default_collation) and carries one original value
// per group along: for every row it lower-cases and strips accents. When
// no two values of the column fold to the same text (Relation.FoldUnique),
// grouping by the bytes forms exactly the same groups, each with its one
// value, and costs what a case-sensitive engine pays. So a SELECT whose
// GROUP BY names such a column prints the key as (col COLLATE c), and each
// reference to the column outside aggregates — which the engine would
// otherwise refuse as not grouped — as ((col COLLATE c) COLLATE
// nocase.noaccent): the same value, ordered under MySQL's collation again
// (by ORDER BY, by name, alias or position).
//
// That value carries the collation explicitly, where the column carried
// the default: the engine refuses to compare it with a value of another
// explicit collation, and passes the collation on through functions, set
// operations and enclosing queries. So the walker marks keys only where
// neither can happen (markGroupKeys): in the statement's own SELECT (not a
// derived table, CTE, subquery or member of a set operation), where the
// key is a plain column reference, the query has no ROLLUP, and every
// reference to a column of that name outside aggregates is a whole select
// field or a whole ORDER BY item (not inside an expression, a window or a
// nested query). Render then prints the raw form only where the key and
// all those references resolve to the same column of a real table that
// FoldUnique marks, read without a row filter or mask (factUsable); in any
// other case both print as written.

// engineCollation is the engine's name for MySQL's default collation, the
// engine's default_collation.
const engineCollation = "nocase.noaccent"

// Clauses of a SELECT, for the references markGroupKeys looks at.
const (
	clauseInput  uint8 = iota // FROM, WHERE, GROUP BY: before grouping
	clauseOutput              // select list, HAVING, WINDOW, ORDER BY
)

// groupKey is a GROUP BY item that may group by the column's bytes.
type groupKey struct {
	gateExpr
	col *ast.ColumnNameExpr
	sc  *selScope
}

func (n *groupKey) Restore(ctx *format.RestoreCtx) error {
	if rb, ok := ctx.In.(*renderBuf); ok && rb.rawKey(n) {
		ctx.WritePlain("(")
		if err := n.col.Restore(ctx); err != nil {
			return err
		}
		ctx.WritePlain(" COLLATE c)")
		return nil
	}
	return n.col.Restore(ctx)
}
func (n *groupKey) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }
func (n *groupKey) mysqlType(t *typer) mtype              { return t.typeOf(n.col) }

// keyRef is a whole select field or ORDER BY item naming a column that is
// also a groupKey of its SELECT.
type keyRef struct {
	gateExpr
	col *ast.ColumnNameExpr
	sc  *selScope
	// name is set for a select field without an alias: the name the
	// engine gives the bare column, which the raw form prints as its
	// alias.
	name string
}

func (n *keyRef) Restore(ctx *format.RestoreCtx) error {
	if rb, ok := ctx.In.(*renderBuf); ok && rb.rawRef(n) {
		ctx.WritePlain("((")
		if err := n.col.Restore(ctx); err != nil {
			return err
		}
		ctx.WritePlain(" COLLATE c) COLLATE " + engineCollation + ")")
		if n.name != "" {
			ctx.WritePlain(" AS ")
			ctx.WriteName(n.name)
		}
		return nil
	}
	return n.col.Restore(ctx)
}
func (n *keyRef) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }
func (n *keyRef) mysqlType(t *typer) mtype              { return t.typeOf(n.col) }

// noteColumn records, for markGroupKeys, a column reference of the SELECT
// being walked: outside aggregates in its output clauses, and by name in
// every enclosing SELECT.
func (w *walker) noteColumn(cn *ast.ColumnName) {
	sc := w.sel
	if sc.clause == clauseOutput && w.aggArg == 0 {
		sc.outside = append(sc.outside, cn)
	}
	for p := sc.parent; p != nil; p = p.parent {
		if p.nested == nil {
			p.nested = make(map[string]bool)
		}
		p.nested[cn.Name.L] = true
	}
}

// markGroupKeys replaces the GROUP BY items of n that may group by bytes
// with groupKey, and the references that must follow them with keyRef (see
// above). It runs once every clause of n is walked.
func (w *walker) markGroupKeys(n *ast.SelectStmt) {
	sc := w.sel
	if n != w.root || n.GroupBy == nil || n.GroupBy.Rollup || w.dialect != DialectDuckDB || w.pol != nil {
		return
	}
	// slots counts, per name, the references that are a whole select field
	// or a whole ORDER BY item.
	slots := map[string]int{}
	for _, f := range n.Fields.Fields {
		if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
			slots[c.Name.Name.L]++
		}
	}
	if n.OrderBy != nil {
		for _, it := range n.OrderBy.Items {
			if c, ok := it.Expr.(*ast.ColumnNameExpr); ok {
				slots[c.Name.Name.L]++
			}
		}
	}
	outside := map[string]int{}
	for _, cn := range sc.outside {
		outside[cn.Name.L]++
	}
	eligible := map[string]bool{}
	for _, it := range n.GroupBy.Items {
		c, ok := it.Expr.(*ast.ColumnNameExpr)
		if !ok {
			continue
		}
		name := c.Name.Name.L
		if sc.nested[name] || outside[name] != slots[name] {
			continue
		}
		eligible[name] = true
		k := &groupKey{col: c, sc: sc}
		sc.keys = append(sc.keys, k)
		w.groupKeys = append(w.groupKeys, k)
		it.Expr = k
	}
	if len(eligible) == 0 {
		return
	}
	ref := func(e ast.ExprNode) ast.ExprNode {
		if c, ok := e.(*ast.ColumnNameExpr); ok && eligible[c.Name.Name.L] {
			r := &keyRef{col: c, sc: sc}
			sc.refs = append(sc.refs, r)
			return r
		}
		return e
	}
	for _, f := range n.Fields.Fields {
		if c, ok := f.Expr.(*ast.ColumnNameExpr); ok && eligible[c.Name.Name.L] {
			f.Expr = ref(f.Expr)
			if r, ok := f.Expr.(*keyRef); ok && f.AsName.L == "" {
				r.name = c.Name.Name.L
			}
		}
	}
	if n.OrderBy != nil {
		for _, it := range n.OrderBy.Items {
			it.Expr = ref(it.Expr)
		}
	}
}

// realColumn resolves a column reference of SELECT scope sc to a column
// of a real table: its reference and index. It fails where the engine might
// bind the name otherwise: an unqualified name matching no source column,
// more than one, or a select-list alias for another expression.
func (rb *renderBuf) realColumn(cn *ast.ColumnName, sc *selScope) (TableRef, int, bool) {
	if sc == nil {
		return TableRef{}, 0, false
	}
	name, table := cn.Name.L, cn.Table.L
	ref, idx, found := TableRef{}, -1, false
	for _, b := range sc.bindings {
		if table != "" && b.alias != table {
			continue
		}
		if !b.real {
			// A derived table or CTE: the name is not a real table's
			// column if the source is named, and may not be if the source
			// may have it.
			if table != "" || rb.sourceHas(b, name) {
				return TableRef{}, 0, false
			}
			continue
		}
		r, ok := rb.rel[b.ref]
		if !ok {
			return TableRef{}, 0, false
		}
		for i, c := range r.Columns {
			if strings.EqualFold(c, name) {
				if found {
					return TableRef{}, 0, false // ambiguous, or a USING join
				}
				ref, idx, found = b.ref, i, true
			}
		}
	}
	if !found {
		return TableRef{}, 0, false
	}
	if sc.stmt != nil && sc.stmt.Fields != nil {
		for _, f := range sc.stmt.Fields.Fields {
			if f.AsName.L != name {
				continue
			}
			var fc *ast.ColumnName
			switch e := f.Expr.(type) {
			case *ast.ColumnNameExpr:
				fc = e.Name
			case *keyRef:
				fc = e.col.Name
			}
			if fc == nil || fc.Name.L != name || fc.Table.L != "" && table != "" && fc.Table.L != table {
				return TableRef{}, 0, false // the alias of another expression
			}
		}
	}
	return ref, idx, true
}

// sourceHas reports whether a derived table or CTE source may have a column
// named name (when its columns are not known, it may).
func (rb *renderBuf) sourceHas(b binding, name string) bool {
	if rb.ty == nil {
		rb.ty = &typer{info: rb.info, rel: rb.rel, memo: make(map[ast.Node]mtype)}
	}
	cols := rb.ty.sourceCols(b)
	if cols == nil {
		return true
	}
	for _, c := range cols {
		if c.name == name {
			return true
		}
	}
	return false
}

// rawKey reports whether k prints as a grouping by the column's bytes.
func (rb *renderBuf) rawKey(k *groupKey) bool {
	if !rb.rawGroups {
		return false
	}
	if v, ok := rb.raw[k]; ok {
		return v
	}
	v := rb.foldUniqueKey(k)
	if rb.raw == nil {
		rb.raw = make(map[*groupKey]bool)
	}
	rb.raw[k] = v
	return v
}

// foldUniqueKey reports whether k and every reference of its name in its
// SELECT resolve to one unmasked text column of a real table that
// Relation.FoldUnique marks.
func (rb *renderBuf) foldUniqueKey(k *groupKey) bool {
	ref, r, i, ok := rb.textColumn(k.col.Name, k.sc)
	if !ok || i >= len(r.FoldUnique) || !r.FoldUnique[i] {
		return false
	}
	for _, x := range k.sc.refs {
		if x.col.Name.Name.L != k.col.Name.Name.L {
			continue
		}
		if xr, xi, ok := rb.realColumn(x.col.Name, x.sc); !ok || xr != ref || xi != i {
			return false
		}
	}
	return true
}

// factUsable reports whether the facts of column i of r may be used: not
// when a mask replaces the values (it may make them collide or change their
// letters), nor when a row filter hides rows, since a fact covers every row
// of the version and the form a statement takes must not depend on rows
// its caller cannot read.
func factUsable(r Relation, i int) bool {
	if r.Policy == nil {
		return true
	}
	return r.Policy.Filter == nil && (i >= len(r.Policy.Masks) || r.Policy.Masks[i] == nil)
}

// rawRef reports whether x names a key of its SELECT grouped by bytes.
func (rb *renderBuf) rawRef(x *keyRef) bool {
	for _, k := range x.sc.keys {
		if k.col.Name.Name.L == x.col.Name.Name.L && rb.rawKey(k) {
			return true
		}
	}
	return false
}

// hasFact reports whether e is a column reference to an unmasked text
// column of a real table read without a row filter that fact (a field of
// Relation) marks.
func (rb *renderBuf) hasFact(e ast.ExprNode, fact func(*Relation) []bool) bool {
	r, i, ok := rb.factColumn(e)
	if !ok {
		return false
	}
	marks := fact(&r)
	return i < len(marks) && marks[i]
}

// noCase returns Relation.NoUpper (upper) or NoLower of e's column when
// hasFact would use a fact of it, and 0 (nothing known) otherwise.
func (rb *renderBuf) noCase(e ast.ExprNode, upper bool) uint32 {
	r, i, ok := rb.factColumn(e)
	marks := r.NoLower
	if upper {
		marks = r.NoUpper
	}
	if !ok || i >= len(marks) {
		return 0
	}
	return marks[i] & allLetters
}

// allLetters is the set of the 26 letters, as Relation.NoUpper holds them.
const allLetters = 1<<26 - 1

// factColumn resolves e, when it is a column reference to an unmasked text
// column of a real table read without a row filter, to its relation and
// the column's index in it.
func (rb *renderBuf) factColumn(e ast.ExprNode) (Relation, int, bool) {
	c, ok := e.(*ast.ColumnNameExpr)
	if !ok || rb.info == nil || rb.dialect != DialectDuckDB {
		return Relation{}, 0, false
	}
	_, r, i, ok := rb.textColumn(c.Name, rb.info.cols[c.Name])
	return r, i, ok
}

// textColumn resolves col, written in scope sc, when it names an unmasked
// text column of a real table read without a row filter (the columns facts
// are used for), to the table, its relation and the column's index in it.
func (rb *renderBuf) textColumn(col *ast.ColumnName, sc *selScope) (TableRef, Relation, int, bool) {
	ref, i, ok := rb.realColumn(col, sc)
	if !ok {
		return TableRef{}, Relation{}, 0, false
	}
	r := rb.rel[ref]
	if i >= len(r.Types) || !strings.EqualFold(r.Types[i], "VARCHAR") || !factUsable(r, i) {
		return TableRef{}, Relation{}, 0, false
	}
	return ref, r, i, true
}

// factFoldUnique, factFolded and factASCII select a fact for hasFact.
func factFoldUnique(r *Relation) []bool { return r.FoldUnique }
func factFolded(r *Relation) []bool     { return r.Folded }
func factASCII(r *Relation) []bool      { return r.ASCII }

// ColumnRef names a column of a table of a statement.
type ColumnRef struct {
	Table  TableRef
	Column string // as in Relation.Columns
}

// GroupKeys returns the text columns of rel's tables that the statement
// groups by, or counts the distinct values of, and that Render would group
// or count by their bytes if Relation.FoldUnique marked them (of a table
// without a row filter, not masked, used only where the rewrite covers),
// each once. The caller learns FoldUnique for these alone: finding it
// costs a scan of the column.
func (s *Statement) GroupKeys(rel map[TableRef]Relation) []ColumnRef {
	var cols []scopedColumn
	if s.kind == KindQuery {
		for _, k := range s.groupKeys {
			cols = append(cols, scopedColumn{k.col.Name, k.sc})
		}
	}
	for _, d := range s.distincts {
		cols = append(cols, s.scoped(d.v))
	}
	return s.factColumns(rel, cols)
}

// LikeColumns returns the text columns of rel's tables that the statement
// compares with LIKE under the collation and whose LIKE Render would print
// without folding the column if Relation.Folded (or ASCII) marked them (of
// a table without a row filter, not masked), each once. The caller learns
// those facts for these alone: finding them may scan the column.
func (s *Statement) LikeColumns(rel map[TableRef]Relation) []ColumnRef {
	var cols []scopedColumn
	for _, n := range s.likes {
		cols = append(cols, s.scoped(n.v))
	}
	return s.factColumns(rel, cols)
}

// LikeLetters returns, for the columns LikeColumns names, the letters of
// the ASCII literal patterns the statement compares them with (bit i for
// the i-th letter of the alphabet, in either case; columns compared with
// no such pattern are left out). The caller learns Relation.NoUpper and
// NoLower for these letters alone, for the columns it knows to be ASCII.
func (s *Statement) LikeLetters(rel map[TableRef]Relation) map[ColumnRef]uint32 {
	rb := s.factBuf(rel)
	out := map[ColumnRef]uint32{}
	for _, n := range s.likes {
		_, _, letters, ok := n.asciiPattern()
		col := s.scoped(n.v)
		ref, r, i, found := rb.textColumn(col.name, col.sc)
		if !ok || letters == 0 || !found {
			continue
		}
		out[ColumnRef{Table: ref, Column: r.Columns[i]}] |= letters
	}
	return out
}

// scopedColumn is a column reference and the SELECT scope it was written in.
type scopedColumn struct {
	name *ast.ColumnName
	sc   *selScope
}

// scoped is the column reference e (a *ast.ColumnNameExpr) with its scope.
func (s *Statement) scoped(e ast.ExprNode) scopedColumn {
	c := e.(*ast.ColumnNameExpr)
	var sc *selScope
	if s.types != nil {
		sc = s.types.cols[c.Name]
	}
	return scopedColumn{c.Name, sc}
}

// factBuf is the render state that resolves the statement's columns in
// rel, as Render would.
func (s *Statement) factBuf(rel map[TableRef]Relation) *renderBuf {
	return &renderBuf{rel: rel, dialect: s.dialect, info: s.types}
}

// factColumns resolves cols to the unmasked text columns of real tables
// read without a row filter, each once.
func (s *Statement) factColumns(rel map[TableRef]Relation, cols []scopedColumn) []ColumnRef {
	rb := s.factBuf(rel)
	var out []ColumnRef
	for _, col := range cols {
		ref, r, i, ok := rb.textColumn(col.name, col.sc)
		if !ok {
			continue
		}
		if c := (ColumnRef{Table: ref, Column: r.Columns[i]}); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Comparisons of folded text. Under the collation the engine compares
// lower(strip_accents(x)) of both sides, per row. When x is a column whose
// values are ASCII and their own fold (Relation.ASCII and Folded), or a
// substring, left, right or lower of one (which keep that), and the other
// side is an ASCII text literal, folding x changes nothing and folding the
// literal is A–Z lower-cased: the comparison (=, <>, <, <=, >, >=, <=>, IN
// of such literals) answers alike with x compared as bytes, (x COLLATE c),
// against the lower-cased literal — the engine then runs a plain string
// comparison. Only the comparison takes the explicit collation; its result
// is a boolean, so it reaches nothing else.

// foldedOperand is the column at the root of e when e is a column or a
// chain of substring, left, right and lower calls on one whose other
// arguments are not text (the walker's view: facts are not known yet).
func foldedOperand(e ast.ExprNode) (*ast.ColumnNameExpr, bool) {
	for {
		switch n := e.(type) {
		case *ast.ColumnNameExpr:
			return n, true
		case *callExpr:
			if !foldKeeping[n.name] || n.distinct || n.star || n.over != nil || len(n.args) == 0 {
				return nil, false
			}
			for _, a := range n.args[1:] {
				if l, ok := a.(*litExpr); !ok || l.isText || l.of != nil {
					return nil, false
				}
			}
			e = n.args[0]
		default:
			return nil, false
		}
	}
}

// foldKeeping names the engine's functions whose result is ASCII and its
// own fold when their first argument is, the others being numbers.
var foldKeeping = map[string]bool{"substring": true, "left": true, "right": true, "lower": true}

// asciiTextLit returns the text of e when e is an ASCII text literal.
func asciiTextLit(e ast.ExprNode) (string, bool) {
	l, ok := e.(*litExpr)
	if !ok || !l.isText || l.of != nil || !isASCII(l.text) {
		return "", false
	}
	return l.text, true
}

// noteCompare records for CompareColumns the column at the root of x when
// x is compared with ASCII text literals only (others).
func (w *walker) noteCompare(x ast.ExprNode, others ...ast.ExprNode) {
	if w.pol != nil || len(others) == 0 {
		return
	}
	for _, o := range others {
		if _, ok := asciiTextLit(o); !ok {
			return
		}
	}
	if c, ok := foldedOperand(x); ok {
		w.compares = append(w.compares, c)
	}
}

// CompareColumns returns the text columns of rel's tables at the root of
// an operand that the statement compares with ASCII text literals, and
// whose comparison Render would print as bytes if Relation.ASCII and Folded
// marked them (of a table without a row filter, not masked), each once.
func (s *Statement) CompareColumns(rel map[TableRef]Relation) []ColumnRef {
	var cols []scopedColumn
	for _, c := range s.compares {
		cols = append(cols, s.scoped(c))
	}
	return s.factColumns(rel, cols)
}

// foldedASCII reports whether every value of e is ASCII and its own fold,
// by the facts of the column at its root.
func (rb *renderBuf) foldedASCII(e ast.ExprNode) bool {
	c, ok := foldedOperand(e)
	if !ok || rb == nil {
		return false
	}
	r, i, ok := rb.factColumn(c)
	return ok && i < len(r.Folded) && r.Folded[i] && i < len(r.ASCII) && r.ASCII[i]
}

// bytesCompared returns the operand e printed to compare as bytes, and the
// literal lit lower-cased, when e is folded ASCII text and lit an ASCII
// text literal (see above).
func (rb *renderBuf) bytesCompared(e, lit ast.ExprNode) (ast.ExprNode, ast.ExprNode, bool) {
	low, ok := loweredLit(lit)
	if !ok || !rb.foldedASCII(e) {
		return nil, nil, false
	}
	return asBytes(e), low, true
}

// asBytes is e compared as bytes.
func asBytes(e ast.ExprNode) ast.ExprNode { return tx("(", e, " COLLATE c)") }

// loweredLit is lit lower-cased when lit is an ASCII text literal.
func loweredLit(lit ast.ExprNode) (ast.ExprNode, bool) {
	text, ok := asciiTextLit(lit)
	if !ok {
		return nil, false
	}
	return &litExpr{text: strings.ToLower(text), isText: true}, true
}
