package sqlgate

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// Dialect is the SQL dialect a Statement is printed in.
//
// DialectDuckDB, the embedded engine, gets the full translation of MySQL
// semantics (see the package documentation). The upstream dialects are for
// Flight SQL engines lakegate governs but does not run: they get a portable
// core of SELECT printed without translation — columns, literals,
// comparison, logical and arithmetic operators, IN, BETWEEN, LIKE, IS NULL,
// CASE, subqueries, joins, set operations, CTEs, GROUP BY, HAVING, ORDER BY,
// LIMIT, and the functions and aggregates of the function table that have
// a portable form (fnSpec.port: COUNT, SUM, MIN, MAX, AVG, …) — and refuse
// everything else, since the gate cannot
// vouch for what another engine would make of it.
type Dialect uint8

// Dialects.
const (
	DialectDuckDB Dialect = iota
	// DialectMySQL is for MySQL-compatible engines (Apache Doris,
	// StarRocks): backquoted names, backslash-escaped strings.
	DialectMySQL
	// DialectSQLite is for SQLite (arrow-go's example Flight SQL server):
	// double-quoted names; division is made non-integer and % is refused,
	// as SQLite's differ from MySQL's; string comparisons are SQLite's
	// (case-sensitive), not MySQL's.
	DialectSQLite
)

// String returns "duckdb", "mysql" or "sqlite".
func (d Dialect) String() string {
	switch d {
	case DialectDuckDB:
		return "duckdb"
	case DialectMySQL:
		return "mysql"
	case DialectSQLite:
		return "sqlite"
	}
	return fmt.Sprintf("Dialect(%d)", uint8(d))
}

// fence is the clause that closes a row filter's derived table so that no
// predicate of the statement around it is evaluated before the filter: a
// LIMIT or OFFSET that keeps every row, through which engines do not push
// filters (DuckDB, MySQL, Doris and StarRocks do not push a predicate into a
// subquery with a LIMIT; SQLite neither flattens nor pushes into one).
func (d Dialect) fence() string {
	switch d {
	case DialectMySQL:
		return " LIMIT 9223372036854775807" // MySQL has no OFFSET without LIMIT
	case DialectSQLite:
		return " LIMIT -1 OFFSET 0" // -1: no limit
	default:
		return " OFFSET 0"
	}
}

// ParseDialect reports the Dialect named s ("mysql", "sqlite", "duckdb").
func ParseDialect(s string) (Dialect, error) {
	for _, d := range []Dialect{DialectDuckDB, DialectMySQL, DialectSQLite} {
		if s == d.String() {
			return d, nil
		}
	}
	return 0, fmt.Errorf("sqlgate: unknown dialect %q", s)
}

// ParseFor is Parse for a statement to be printed in dialect d. Upstream
// dialects accept queries only (KindQuery), in the portable core described
// at Dialect. Their statements are held to the same Limits, but carry no
// size checks for the engine (limits.go): an upstream engine's memory is
// its own, and the rows it returns pass the gateway's message checks.
func (g *Gate) ParseFor(sql, defaultSchema string, d Dialect) (*Statement, error) {
	if d == DialectDuckDB {
		return g.Parse(sql, defaultSchema)
	}
	if d != DialectMySQL && d != DialectSQLite {
		return nil, fmt.Errorf("sqlgate: unknown dialect %d", d)
	}
	def, stmt, ck, err := g.parseChecked(sql, defaultSchema)
	if err != nil {
		return nil, err
	}
	switch n := stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		w := newWalker(def)
		w.dialect, w.checked = d, ck
		if err := w.resultSet(n.(ast.ResultSetNode)); err != nil {
			return nil, err
		}
		st := w.statement(KindQuery, n)
		st.dialect, st.gate = d, g
		return st, nil
	}
	return nil, unsupported("only queries are supported on tables of an upstream engine")
}

// Dialect returns the dialect the statement prints in.
func (s *Statement) Dialect() Dialect { return s.dialect }

// restoreFlagsFor are the printer flags of dialect d.
func restoreFlagsFor(d Dialect) format.RestoreFlags {
	if d == DialectMySQL {
		return format.RestoreStringSingleQuotes | format.RestoreStringEscapeBackslash |
			format.RestoreNameBackQuotes | format.RestoreKeyWordUppercase |
			format.RestoreStringWithoutCharset | format.RestoreSpacesAroundBinaryOperation |
			format.RestoreBracketAroundBinaryOperation
	}
	return restoreFlags
}

// checkOutput is the last check of printed SQL: the DuckDB lexical rules
// (which SQLite shares for everything the printer emits), or for MySQL, that
// the text parses back as exactly one query.
func (s *Statement) checkOutput(out string) error {
	if s.dialect != DialectMySQL {
		return CheckLexical(out)
	}
	stmt, err := s.gate.parseOne(out)
	if err != nil {
		return fmt.Errorf("sqlgate: internal error: printed MySQL does not parse: %w", err)
	}
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return nil
	}
	return fmt.Errorf("sqlgate: internal error: printed MySQL is not a query")
}

// portableOps are the binary operators of the upstream dialects.
var portableOps = map[opcode.Op]string{
	opcode.LogicAnd: "AND", opcode.LogicOr: "OR",
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=",
	opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/", opcode.Mod: "%",
}

// portableBinary walks a binary operator for an upstream dialect.
func (w *walker) portableBinary(x *ast.BinaryOperationExpr) (ast.ExprNode, error) {
	op, ok := portableOps[x.Op]
	if !ok {
		return nil, unsupported("operator %q is not supported on tables of an upstream engine", x.Op.String())
	}
	var err error
	n := &binExpr{op: op}
	if n.l, err = w.expr(x.L); err != nil {
		return nil, err
	}
	if n.r, err = w.expr(x.R); err != nil {
		return nil, err
	}
	if w.dialect == DialectSQLite {
		switch x.Op {
		case opcode.Div:
			// SQLite divides integers as integers; MySQL never does.
			n.l = tx("CAST(", n.l, " AS REAL)")
		case opcode.Mod:
			return nil, unsupported("%% is not supported on tables of this upstream engine")
		}
	}
	return n, nil
}

// portableCall walks a scalar function call for an upstream dialect: the
// function table's portable form (fnSpec.port), printed untranslated.
func (w *walker) portableCall(x *ast.FuncCallExpr) (ast.ExprNode, error) {
	name := x.FnName.L
	spec, ok := functions[name]
	if !ok || spec.port == nil || spec.kind != fnScalar {
		return nil, unsupported("function %q is not supported on tables of an upstream engine", name)
	}
	f := spec.port
	if len(x.Args) < f.min || (f.max >= 0 && len(x.Args) > f.max) {
		return nil, unsupported("wrong number of arguments to %q", name)
	}
	if err := w.exprs(x.Args); err != nil {
		return nil, err
	}
	printed := f.mysql
	if w.dialect == DialectSQLite {
		printed = f.sqlite
		if printed == "||" {
			parts := []any{"("}
			for i, a := range x.Args {
				if i > 0 {
					parts = append(parts, " || ")
				}
				parts = append(parts, a)
			}
			return tx(append(parts, ")")...), nil
		}
	}
	return &callExpr{name: printed, args: x.Args}, nil
}

// portableAggregate walks an aggregate call for an upstream dialect: one
// argument, no ORDER BY, the function table's portable form.
func (w *walker) portableAggregate(x *ast.AggregateFuncExpr, name string) (ast.ExprNode, error) {
	spec, ok := functions[name]
	if !ok || spec.port == nil || spec.kind != fnAggregate || x.Order != nil {
		return nil, unsupported("aggregate %q is not supported on tables of an upstream engine", name)
	}
	if w.sel == nil {
		return nil, unsupported("aggregate functions are not supported %s", w.context())
	}
	if len(x.Args) != 1 {
		return nil, unsupported("%s takes one argument on tables of an upstream engine", name)
	}
	if err := w.exprs(x.Args); err != nil {
		return nil, err
	}
	w.sel.aggs++
	printed := spec.port.mysql
	if w.dialect == DialectSQLite {
		printed = spec.port.sqlite
	}
	return &callExpr{name: printed, args: x.Args, distinct: x.Distinct}, nil
}

// plainLikeExpr is LIKE as an upstream dialect has it, with MySQL's escape
// character (backslash) made explicit where it is not the default.
type plainLikeExpr struct {
	gateExpr
	not    bool
	sqlite bool
	v, pat ast.ExprNode
}

func (n *plainLikeExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	if n.not {
		ctx.WritePlain(" NOT LIKE ")
	} else {
		ctx.WritePlain(" LIKE ")
	}
	if err := n.pat.Restore(ctx); err != nil {
		return err
	}
	if n.sqlite {
		ctx.WritePlain(` ESCAPE '\'`)
	}
	ctx.WritePlain(")")
	return nil
}
func (n *plainLikeExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }
