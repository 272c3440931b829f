package sqlgate

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Row filters and column masks are SQL expressions written by policy
// authors in the gateway's dialect. They go through the same parser, walker
// and allow-list as queries, with three differences: they may reference only
// the columns of the table they apply to (unqualified), they may not contain
// subqueries, aggregates, window functions or parameters, and they may call
// current_user(), current_tenant() and has_role('name'), which print the
// Caller's values when the statement is rendered.
//
// A policy applies to a table through Relation.Policy: wherever the table is
// read, Render prints it as a derived table
//
//	(SELECT <masked columns> FROM <relation> AS "__lg_p" WHERE (<filter>) OFFSET 0) AS <alias>
//
// so that every other part of the statement (joins, subqueries, CTEs, set
// operations, CTAS and INSERT sources) sees only filtered, masked rows. The
// OFFSET 0 (Dialect.fence) is an optimization fence: engines do not push a
// predicate through a LIMIT or OFFSET, so none of the statement's own
// predicates runs on a row before the filter has removed it.

// Caller is who a statement is rendered for, as policy expressions see it.
type Caller struct {
	// User is what current_user() returns.
	User string
	// Tenant is what current_tenant() returns.
	Tenant string
	// Roles are the roles has_role('name') is true for.
	Roles []string
}

// Filter is a prepared row filter: a boolean expression over the columns of
// one table. It is immutable and safe for concurrent use.
type Filter struct {
	expr    ast.ExprNode
	dialect Dialect
}

// maskKind is the kind of a column mask.
type maskKind uint8

const (
	maskNull maskKind = iota + 1
	maskRedact
	maskHash
	maskLast4
	maskExpr
)

// Mask is a prepared column mask for one column. It is immutable and safe for
// concurrent use.
type Mask struct {
	kind    maskKind
	expr    ast.ExprNode // maskExpr
	dialect Dialect      // maskExpr
}

// Policy is what applies to one table for one caller: a row filter, masks
// and the caller the expressions are evaluated for.
type Policy struct {
	// Filter keeps the rows for which it is true; nil keeps every row.
	Filter *Filter
	// Masks is nil or has one entry per Relation.Columns; a nil entry
	// leaves its column unmasked.
	Masks []*Mask
	// Caller is who current_user(), current_tenant() and has_role() see.
	Caller Caller
}

// maskColumnPlaceholder is the identifier "{column}" of a mask expression is
// parsed as.
const maskColumnPlaceholder = "__lg_column"

// policyAlias is the alias of the physical relation inside the derived table
// a policy prints.
const policyAlias = "__lg_p"

// policyScope restricts the walk of a policy expression.
type policyScope struct {
	columns []string // the table's columns; nil: any name (CheckRowFilter, CheckMask)
	maskCol string   // the column "{column}" stands for ("" in a filter)
}

// CheckRowFilter reports whether expr is a valid row filter for some table:
// one expression of the query allow-list, without subqueries, aggregates,
// window functions or parameters. Column names are not checked (a filter is
// bound to tags, not to a table); PrepareRowFilter checks them against a
// table. Every error is an *Error whose message is meant for the policy's
// author.
func (g *Gate) CheckRowFilter(expr string) error {
	_, err := g.policyExpr(expr, &policyScope{}, DialectDuckDB)
	return err
}

// CheckMask reports whether mask is a valid column mask: NULL, REDACT, HASH,
// LAST4 (any case) or an expression over "{column}" as CheckRowFilter
// accepts it.
func (g *Gate) CheckMask(mask string) error {
	_, err := g.PrepareMask(mask, "column", nil, DialectDuckDB)
	return err
}

// PrepareRowFilter parses and translates a row filter for a table with the
// given columns, to be printed in dialect d (the dialect of the statements
// that read the table). A column the table does not have is an error.
func (g *Gate) PrepareRowFilter(expr string, columns []string, d Dialect) (*Filter, error) {
	key := policyKey{kind: "f", dialect: d, text: expr, columns: strings.Join(columns, "\x00")}
	if v, ok := g.policies.get(key); ok {
		return v.(*Filter), nil
	}
	if columns == nil {
		columns = []string{}
	}
	e, err := g.policyExpr(expr, &policyScope{columns: columns}, d)
	if err != nil {
		return nil, err
	}
	f := &Filter{expr: e, dialect: d}
	g.policies.put(key, f)
	return f, nil
}

// PrepareMask parses a mask of column of a table with the given columns:
// NULL, REDACT, HASH or LAST4 (any case), or an expression in which
// "{column}" (outside quotes) stands for the column and other columns of the
// table may be named, to be printed in dialect d. With columns nil, column
// names are not checked (CheckMask).
func (g *Gate) PrepareMask(mask, column string, columns []string, d Dialect) (*Mask, error) {
	switch strings.ToUpper(strings.TrimSpace(mask)) {
	case "NULL":
		return &Mask{kind: maskNull}, nil
	case "REDACT":
		return &Mask{kind: maskRedact}, nil
	case "HASH":
		return &Mask{kind: maskHash}, nil
	case "LAST4":
		return &Mask{kind: maskLast4}, nil
	}
	key := policyKey{kind: "m", dialect: d, text: mask, column: column, columns: strings.Join(columns, "\x00")}
	if columns != nil {
		if v, ok := g.policies.get(key); ok {
			return v.(*Mask), nil
		}
	}
	e, err := g.policyExpr(substituteColumn(mask), &policyScope{columns: columns, maskCol: column}, d)
	if err != nil {
		return nil, err
	}
	m := &Mask{kind: maskExpr, expr: e, dialect: d}
	if columns != nil {
		g.policies.put(key, m)
	}
	return m, nil
}

// policyExpr parses text as one expression and walks it under sc for
// dialect d.
func (g *Gate) policyExpr(text string, sc *policyScope, d Dialect) (ast.ExprNode, error) {
	switch {
	case strings.TrimSpace(text) == "":
		return nil, syntaxErr("empty expression")
	case len(text) > 4096:
		return nil, newErr(ErrorKindTooLarge, "expression is larger than 4096 bytes")
	case strings.IndexByte(text, 0) >= 0 || !utf8.ValidString(text):
		return nil, syntaxErr("expression contains a NUL byte or is not valid UTF-8")
	}
	stmt, err := g.parseOne("SELECT " + text)
	if err != nil {
		return nil, err
	}
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok || !bareSelect(sel) || len(sel.Fields.Fields) != 1 {
		return nil, syntaxErr("a policy expression must be exactly one expression")
	}
	f := sel.Fields.Fields[0]
	if f.WildCard != nil || f.AsName.O != "" || f.Expr == nil {
		return nil, syntaxErr("a policy expression must be exactly one expression")
	}
	w := newWalker("")
	w.pol, w.dialect = sc, d
	return w.expr(f.Expr)
}

// bareSelect reports whether sel is "SELECT <fields>" and nothing more, so
// that a policy's text cannot carry a FROM, WHERE or any other clause.
func bareSelect(sel *ast.SelectStmt) bool {
	opts := sel.SelectStmtOpts
	plainOpts := opts == nil || (!opts.Distinct && !opts.StraightJoin && !opts.CalcFoundRows &&
		!opts.SQLBigResult && !opts.SQLSmallResult && !opts.SQLBufferResult && opts.Priority == 0 && !opts.ExplicitAll)
	return plainOpts && sel.Kind == ast.SelectStmtKindSelect && sel.With == nil && sel.From == nil &&
		sel.Where == nil && sel.GroupBy == nil && sel.Having == nil && sel.WindowSpecs == nil &&
		sel.OrderBy == nil && sel.Limit == nil && sel.SelectIntoOpt == nil && sel.LockInfo == nil &&
		sel.TableHints == nil && len(sel.Lists) == 0 && !sel.Distinct && sel.Fields != nil && !sel.IsInBraces
}

// substituteColumn replaces "{column}" outside quoted strings and identifiers
// with the placeholder identifier.
func substituteColumn(s string) string {
	const token = "{column}"
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			b.WriteString(s[i:j])
			i = j
		case strings.HasPrefix(s[i:], token):
			b.WriteString("`" + maskColumnPlaceholder + "`")
			i += len(token)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// policyColumn resolves a column reference inside a policy expression.
func (w *walker) policyColumn(cn *ast.ColumnName) error {
	if cn.Table.O != "" || cn.Schema.O != "" {
		return unsupported("columns in a policy expression must not be qualified")
	}
	name := strings.ToLower(cn.Name.O)
	if name == maskColumnPlaceholder && w.pol.maskCol != "" {
		name = w.pol.maskCol
	} else {
		var err error
		if name, err = ident(cn.Name.O); err != nil {
			return err
		}
	}
	if w.pol.columns != nil && !slices.Contains(w.pol.columns, name) {
		return unsupported("column %q is not a column of the table", name)
	}
	*cn = ast.ColumnName{Table: cistr(policyAlias), Name: cistr(name)}
	return nil
}

// callerFunc translates current_user(), current_tenant() and has_role('r')
// in a policy expression; ok is false for any other function.
func (w *walker) callerFunc(x *ast.FuncCallExpr) (ast.ExprNode, bool, error) {
	switch x.FnName.L {
	case "current_user", "current_tenant":
		if len(x.Args) != 0 {
			return nil, true, unsupported("%s() takes no arguments", x.FnName.L)
		}
		return &callerExpr{fn: x.FnName.L}, true, nil
	case "has_role":
		if len(x.Args) != 1 {
			return nil, true, unsupported("has_role() takes one string literal")
		}
		v, ok := x.Args[0].(*test_driver.ValueExpr)
		if !ok || v.Kind() != test_driver.KindString {
			return nil, true, unsupported("has_role() takes one string literal")
		}
		return &callerExpr{fn: "has_role", role: v.GetString()}, true, nil
	}
	return nil, false, nil
}

// callerExpr prints a value of the Caller a statement is rendered for.
type callerExpr struct {
	gateExpr
	fn   string // current_user, current_tenant, has_role
	role string // has_role
}

func (n *callerExpr) Restore(ctx *format.RestoreCtx) error {
	rb, ok := ctx.In.(*renderBuf)
	if !ok || rb.caller == nil {
		return errInternalPolicy
	}
	switch n.fn {
	case "current_user":
		ctx.WriteString(rb.caller.User)
	case "current_tenant":
		ctx.WriteString(rb.caller.Tenant)
	default:
		if slices.Contains(rb.caller.Roles, n.role) {
			ctx.WritePlain("TRUE")
		} else {
			ctx.WritePlain("FALSE")
		}
	}
	return nil
}
func (n *callerExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

var errInternalPolicy = newErr(ErrorKindUnsupported, "internal error: a policy expression printed outside its table")

// engineTypeRE is the shape of an engine type a mask may cast to; a column
// of any other type is masked to NULL instead.
var engineTypeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*( [A-Z]+)*(\([0-9]{1,2}(, ?[0-9]{1,2})?\))?(\[\])*$`)

// restorePolicy prints a table read through its policy as a derived table.
func restorePolicy(ctx *format.RestoreCtx, rb *renderBuf, rel *Relation, alias string, push []pushable) error {
	pol := rel.Policy
	if len(pol.Masks) != 0 && len(pol.Masks) != len(rel.Columns) {
		return newErr(ErrorKindUnsupported, "internal error: masks do not match the table's columns")
	}
	if pol.Filter != nil && pol.Filter.dialect != rb.dialect {
		return newErr(ErrorKindUnsupported, "internal error: a row filter prepared for %s printed in %s", pol.Filter.dialect, rb.dialect)
	}
	for _, m := range pol.Masks {
		if m != nil && m.kind == maskExpr && m.dialect != rb.dialect {
			return newErr(ErrorKindUnsupported, "internal error: a mask prepared for %s printed in %s", m.dialect, rb.dialect)
		}
	}
	rb.caller = &pol.Caller
	defer func() { rb.caller = nil }()
	ctx.WritePlain("(SELECT ")
	for i, col := range rel.Columns {
		if i > 0 {
			ctx.WritePlain(", ")
		}
		var m *Mask
		if len(pol.Masks) > 0 {
			m = pol.Masks[i]
		}
		typ := ""
		if i < len(rel.Types) {
			typ = rel.Types[i]
		}
		if err := restoreMasked(ctx, rb.dialect, m, col, typ); err != nil {
			return err
		}
		ctx.WritePlain(" AS ")
		ctx.WriteName(col)
	}
	ctx.WritePlain(" FROM ")
	ctx.WriteName(rel.Schema)
	ctx.WritePlain(".")
	ctx.WriteName(rel.Name)
	ctx.WritePlain(" AS ")
	ctx.WriteName(policyAlias)
	if pol.Filter != nil {
		ctx.WritePlain(" WHERE (")
		if err := pol.Filter.expr.Restore(ctx); err != nil {
			return err
		}
		ctx.WritePlain(")")
		if err := restorePushed(ctx, rb, rel, push); err != nil {
			return err
		}
		// Without a fence the engine may push the statement's own
		// predicates down next to the filter and evaluate them first
		// (DuckDB orders filters by their measured cost): one that fails
		// on a value would then fail the statement because of a row the
		// filter hides, a one-bit oracle on hidden data.
		ctx.WritePlain(rb.dialect.fence())
	}
	ctx.WritePlain(") AS ")
	ctx.WriteName(alias)
	return nil
}

// restoreMasked prints one column of a policy's derived table. Masks keep the
// column's type: one that cannot produce a value of it yields NULL.
func restoreMasked(ctx *format.RestoreCtx, d Dialect, m *Mask, col, typ string) error {
	ref := func() {
		ctx.WriteName(policyAlias)
		ctx.WritePlain(".")
		ctx.WriteName(col)
	}
	typedNull := func() {
		ctx.WritePlain("CASE WHEN 1 = 0 THEN ")
		ref()
		ctx.WritePlain(" END")
	}
	if m == nil {
		ref()
		return nil
	}
	if typ == "" {
		return newErr(ErrorKindUnsupported, "internal error: the type of masked column %q is unknown", col)
	}
	str := typ == "VARCHAR"
	switch {
	case m.kind == maskNull, !str && m.kind != maskExpr:
		typedNull()
	case m.kind == maskRedact:
		ctx.WritePlain("'***'")
	case m.kind == maskHash:
		switch d {
		case DialectDuckDB:
			ctx.WritePlain("sha256(")
			ref()
			ctx.WritePlain(")")
		case DialectMySQL:
			ctx.WritePlain("SHA2(")
			ref()
			ctx.WritePlain(", 256)")
		default: // no SHA-256 in SQLite
			typedNull()
		}
	case m.kind == maskLast4:
		restoreLast4(ctx, d, ref)
	default:
		target, ok := castTarget(d, typ)
		if !ok {
			typedNull()
			return nil
		}
		if d == DialectDuckDB {
			ctx.WritePlain("TRY_CAST((")
		} else {
			ctx.WritePlain("CAST((") // neither MySQL's nor SQLite's CAST fails
		}
		if err := m.expr.Restore(ctx); err != nil {
			return err
		}
		ctx.WritePlain(") AS " + target + ")")
	}
	return nil
}

// restoreLast4 prints LAST4 of a text column: everything but the last four
// characters becomes '*'; a value of four characters or fewer is hidden
// whole.
func restoreLast4(ctx *format.RestoreCtx, d Dialect, ref func()) {
	length, stars, last4 := "length(", func(n func()) { ctx.WritePlain("repeat('*', "); n(); ctx.WritePlain(")") }, func() {
		ctx.WritePlain("right(")
		ref()
		ctx.WritePlain(", 4)")
	}
	switch d {
	case DialectMySQL:
		length = "CHAR_LENGTH("
	case DialectSQLite:
		// No repeat(): n zero bytes in hex are n "00" pairs.
		stars = func(n func()) { ctx.WritePlain("replace(hex(zeroblob("); n(); ctx.WritePlain(")), '00', '*')") }
		last4 = func() {
			ctx.WritePlain("substr(")
			ref()
			ctx.WritePlain(", -4)")
		}
	}
	n := func() { ctx.WritePlain(length); ref(); ctx.WritePlain(")") }
	ctx.WritePlain("CASE WHEN ")
	n()
	ctx.WritePlain(" <= 4 THEN ")
	stars(n)
	ctx.WritePlain(" ELSE ")
	if d == DialectMySQL {
		ctx.WritePlain("CONCAT(")
		stars(func() { n(); ctx.WritePlain(" - 4") })
		ctx.WritePlain(", ")
		last4()
		ctx.WritePlain(")")
	} else {
		stars(func() { n(); ctx.WritePlain(" - 4") })
		ctx.WritePlain(" || ")
		last4()
	}
	ctx.WritePlain(" END")
}

// castTarget is what an expression mask of a column of engine type typ is
// cast to in dialect d; false: the mask yields NULL instead.
func castTarget(d Dialect, typ string) (string, bool) {
	switch d {
	case DialectDuckDB:
		return typ, engineTypeRE.MatchString(typ)
	case DialectMySQL:
		switch typ {
		case "VARCHAR":
			return "CHAR", true
		case "BIGINT", "INTEGER", "SMALLINT", "TINYINT":
			return "SIGNED", true
		case "DOUBLE", "FLOAT":
			return "DOUBLE", true
		}
	case DialectSQLite:
		switch typ {
		case "VARCHAR":
			return "TEXT", true
		case "BIGINT", "INTEGER", "SMALLINT", "TINYINT":
			return "INTEGER", true
		case "DOUBLE", "FLOAT":
			return "REAL", true
		}
	}
	return "", false
}

// policyKey identifies a prepared policy expression.
type policyKey struct {
	kind                  string
	dialect               Dialect
	text, column, columns string
}

// policyCache holds prepared filters and masks, so that a policy is parsed
// once, not per query. It is bounded: past maxPrepared entries it starts
// over.
type policyCache struct {
	mu sync.RWMutex
	m  map[policyKey]any
}

const maxPrepared = 4096

func (c *policyCache) get(k policyKey) (any, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *policyCache) put(k policyKey, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxPrepared {
		c.m = make(map[policyKey]any)
	}
	c.m[k] = v
}
