package sqlgate

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
)

// Write statements. The gate never prints CREATE, INSERT or DROP for the
// engine: it validates the target, walks the query part with the same
// allow-list as a read, and Render prints only that query part (for INSERT …
// VALUES, a query producing the rows). The caller creates, appends to or drops
// the target itself.

// createTableAs accepts CREATE TABLE [IF NOT EXISTS] t [AS] <query> and
// nothing else of CREATE TABLE.
func createTableAs(n *ast.CreateTableStmt, def string, ck checked) (*Statement, error) {
	switch {
	case n.TemporaryKeyword != ast.TemporaryNone:
		return nil, unsupported("temporary tables are not supported")
	case n.ReferTable != nil:
		return nil, unsupported("CREATE TABLE … LIKE is not supported")
	case len(n.Cols) > 0 || len(n.Constraints) > 0:
		return nil, unsupported("column definitions are not supported; use CREATE TABLE … AS SELECT")
	case len(n.Options) > 0 || n.Partition != nil || len(n.SplitIndex) > 0:
		return nil, unsupported("table options are not supported in CREATE TABLE")
	case n.OnDuplicate != ast.OnDuplicateKeyHandlingError:
		return nil, unsupported("IGNORE and REPLACE are not supported in CREATE TABLE … AS SELECT")
	case n.Select == nil:
		return nil, unsupported("CREATE TABLE is only supported as CREATE TABLE … AS SELECT")
	}
	target, err := targetRef(n.Table, def)
	if err != nil {
		return nil, err
	}
	w := newWalker(def)
	w.checked = ck
	if err := w.resultSet(n.Select); err != nil {
		return nil, err
	}
	st := w.statement(KindCreateTableAs, n.Select)
	st.target, st.ifNotExists = target, n.IfNotExists
	return st, nil
}

// insert accepts INSERT INTO t [(cols)] <query> and INSERT INTO t [(cols)]
// VALUES (…), ….
func insert(n *ast.InsertStmt, def string, ck checked) (*Statement, error) {
	switch {
	case n.IsReplace:
		return nil, unsupported("REPLACE is not supported")
	case n.IgnoreErr:
		return nil, unsupported("INSERT IGNORE is not supported")
	case n.Setlist:
		return nil, unsupported("INSERT … SET is not supported; use INSERT … VALUES")
	case len(n.OnDuplicate) > 0:
		return nil, unsupported("ON DUPLICATE KEY UPDATE is not supported")
	case len(n.PartitionNames) > 0:
		return nil, unsupported("PARTITION (…) is not supported")
	case n.Priority != mysql.NoPriority:
		return nil, unsupported("LOW_PRIORITY, HIGH_PRIORITY and DELAYED are not supported")
	}
	// Optimizer hints (INSERT /*+ … */) are dropped, as for SELECT.
	var tn *ast.TableName
	if n.Table != nil {
		if j := n.Table.TableRefs; j != nil && j.Right == nil {
			if ts, ok := j.Left.(*ast.TableSource); ok && ts.AsName.O == "" {
				tn, _ = ts.Source.(*ast.TableName)
			}
		}
	}
	if tn == nil {
		return nil, unsupported("INSERT into anything but a table is not supported")
	}
	target, err := targetRef(tn, def)
	if err != nil {
		return nil, err
	}
	var columns []string
	if n.Columns != nil {
		if len(n.Columns) == 0 {
			return nil, unsupported("an empty INSERT column list is not supported")
		}
		columns = make([]string, 0, len(n.Columns))
		seen := make(map[string]bool, len(n.Columns))
		for _, c := range n.Columns {
			if c == nil {
				return nil, syntaxErr("missing column name")
			}
			if c.Schema.O != "" || c.Table.O != "" {
				return nil, unsupported("qualified names in the INSERT column list are not supported")
			}
			name, err := ident(c.Name.O)
			if err != nil {
				return nil, err
			}
			if seen[name] {
				return nil, syntaxErr("column %q is listed twice", name)
			}
			seen[name] = true
			columns = append(columns, name)
		}
	}
	w := newWalker(def)
	w.checked = ck
	var root ast.Node
	switch {
	case n.Select != nil && len(n.Lists) == 0:
		if err := w.resultSet(n.Select); err != nil {
			return nil, err
		}
		root = n.Select
	case n.Select == nil && len(n.Lists) > 0:
		v, err := w.values(n.Lists, columns)
		if err != nil {
			return nil, err
		}
		root = v
	default:
		return nil, syntaxErr("INSERT needs a query or VALUES")
	}
	st := w.statement(KindInsert, root)
	st.target, st.columns = target, columns
	return st, nil
}

// values walks the rows of INSERT … VALUES with the expression allow-list
// and returns the query Render prints for them.
func (w *walker) values(rows [][]ast.ExprNode, columns []string) (*valuesQuery, error) {
	arity := len(rows[0])
	if arity == 0 {
		return nil, unsupported("empty VALUES rows are not supported")
	}
	if columns != nil && arity != len(columns) {
		return nil, syntaxErr("column count does not match value count at row 1")
	}
	for i, row := range rows {
		if len(row) != arity {
			return nil, syntaxErr("column count does not match value count at row %d", i+1)
		}
		if err := w.exprs(row); err != nil {
			return nil, err
		}
	}
	names := columns
	if names == nil {
		names = make([]string, arity)
		for i := range names {
			names[i] = fmt.Sprintf("col%d", i+1)
		}
	}
	return &valuesQuery{rows: rows, columns: names}, nil
}

// dropTable accepts DROP TABLE [IF EXISTS] t with exactly one table.
func dropTable(n *ast.DropTableStmt, def, sql string) (*Statement, error) {
	switch {
	case n.IsView:
		return nil, unsupported("DROP VIEW is not supported")
	case n.TemporaryKeyword != ast.TemporaryNone:
		return nil, unsupported("DROP TEMPORARY TABLE is not supported")
	case len(n.Tables) != 1:
		return nil, unsupported("DROP TABLE takes exactly one table")
	case hasRestrictOrCascade(sql):
		return nil, unsupported("RESTRICT and CASCADE are not supported in DROP TABLE")
	}
	target, err := targetRef(n.Tables[0], def)
	if err != nil {
		return nil, err
	}
	return &Statement{kind: KindDropTable, target: target, ifExists: n.IfExists}, nil
}

// hasRestrictOrCascade reports whether a parsed DROP TABLE ends with the
// RESTRICT or CASCADE keyword, which the parser accepts and drops from the
// tree. The parser's own lexer (through Normalize, which prints keywords bare
// and identifiers in backticks, and reads executable comments as code) finds
// the last token.
func hasRestrictOrCascade(sql string) bool {
	toks := strings.Fields(parser.Normalize(sql, "ON"))
	for len(toks) > 0 && toks[len(toks)-1] == ";" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) < 2 {
		return false
	}
	switch toks[len(toks)-1] {
	case "restrict", "cascade":
	default:
		return false
	}
	switch toks[len(toks)-2] {
	case "table", "tables", "exists", ".":
		return false // the keyword is the table name
	}
	return true
}

// targetRef validates the table a write statement creates, writes or drops,
// with the rules of a table read (a target is never a CTE).
func targetRef(tn *ast.TableName, def string) (TableRef, error) {
	switch {
	case tn == nil:
		return TableRef{}, syntaxErr("missing table")
	case tn.AsOf != nil:
		return TableRef{}, unsupported("AS OF is not supported")
	case len(tn.PartitionNames) > 0:
		return TableRef{}, unsupported("PARTITION (…) is not supported")
	case tn.TableSample != nil:
		return TableRef{}, unsupported("TABLESAMPLE is not supported")
	case len(tn.IndexHints) > 0:
		return TableRef{}, unsupported("index hints are not supported")
	}
	name, err := ident(tn.Name.O)
	if err != nil {
		return TableRef{}, err
	}
	schema, err := optIdent(tn.Schema.O)
	if err != nil {
		return TableRef{}, err
	}
	if schema == "" {
		if def == "" {
			return TableRef{}, newErr(ErrorKindNoSchema, "no schema selected for table %q", name)
		}
		schema = def
	}
	return TableRef{Schema: schema, Name: name}, nil
}

// valuesQuery prints the rows of INSERT … VALUES as a query:
//
//	SELECT * FROM (VALUES (…), (…)) AS "__lg_values" ("c1", "c2")
//
// Its expressions are gate nodes (walked by the allow-list); its column names
// are the INSERT column list or col1…colN.
type valuesQuery struct {
	gateExpr
	rows    [][]ast.ExprNode
	columns []string
}

func (n *valuesQuery) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("SELECT * FROM (VALUES ")
	for i, row := range n.rows {
		if i > 0 {
			ctx.WritePlain(", ")
		}
		ctx.WritePlain("(")
		if err := restoreAll(ctx, ", ", row); err != nil {
			return err
		}
		ctx.WritePlain(")")
	}
	ctx.WritePlain(") AS ")
	ctx.WriteName(valuesAlias)
	ctx.WritePlain(" (")
	for i, c := range n.columns {
		if i > 0 {
			ctx.WritePlain(", ")
		}
		ctx.WriteName(c)
	}
	ctx.WritePlain(")")
	return nil
}
func (n *valuesQuery) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// valuesAlias names the VALUES list in the query printed for INSERT … VALUES.
const valuesAlias = "__lg_values"
