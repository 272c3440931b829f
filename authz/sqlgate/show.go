package sqlgate

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// showStmt accepts SHOW DATABASES | SCHEMAS [LIKE 'p'], SHOW TABLES [FROM|IN
// s] [LIKE 'p'] and SHOW COLUMNS FROM t [FROM s]; every other SHOW, and FULL,
// EXTENDED, WHERE and column LIKE, are refused.
func showStmt(n *ast.ShowStmt, def string) (*Statement, error) {
	switch {
	case n.Full:
		return nil, unsupported("SHOW FULL is not supported")
	case n.Extended:
		return nil, unsupported("SHOW EXTENDED is not supported")
	case n.Where != nil:
		return nil, unsupported("SHOW … WHERE is not supported")
	case n.Limit != nil:
		return nil, unsupported("SHOW … LIMIT is not supported")
	}
	switch n.Tp {
	case ast.ShowDatabases:
		st := &Statement{kind: KindShowDatabases}
		if err := st.setPattern(n.Pattern); err != nil {
			return nil, err
		}
		return st, nil
	case ast.ShowTables:
		schema := def
		if n.DBName != "" {
			s, err := ident(n.DBName)
			if err != nil {
				return nil, err
			}
			schema = s
		}
		if schema == "" {
			return nil, newErr(ErrorKindNoSchema, "no schema selected for SHOW TABLES; use SHOW TABLES FROM <schema>")
		}
		st := &Statement{kind: KindShowTables, showSchema: schema}
		if err := st.setPattern(n.Pattern); err != nil {
			return nil, err
		}
		return st, nil
	case ast.ShowColumns:
		if n.Pattern != nil {
			return nil, unsupported("SHOW COLUMNS … LIKE is not supported")
		}
		return describe(n, def)
	case ast.ShowVariables, ast.ShowCollation, ast.ShowCharset:
		st := &Statement{kind: KindShowVariables}
		switch n.Tp {
		case ast.ShowCollation:
			st.kind = KindShowCollation
		case ast.ShowCharset:
			st.kind = KindShowCharset
		}
		if err := st.setPattern(n.Pattern); err != nil {
			return nil, err
		}
		return st, nil
	case ast.ShowWarnings, ast.ShowErrors:
		if n.CountWarningsOrErrors {
			return nil, unsupported("SHOW COUNT(*) WARNINGS and SHOW COUNT(*) ERRORS are not supported")
		}
		return &Statement{kind: KindShowWarnings}, nil
	}
	return nil, unsupported("SHOW %s is not supported (only SHOW DATABASES, SCHEMAS, TABLES, COLUMNS, VARIABLES, WARNINGS, ERRORS, COLLATION and CHARACTER SET)", showName(n))
}

// showName names a refused SHOW statement by its first keywords ("SESSION
// STATUS", "CREATE TABLE"), at most four.
func showName(n *ast.ShowStmt) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return "statement"
	}
	// The words after SHOW up to the first name or clause.
	words := strings.Fields(strings.TrimPrefix(b.String(), "SHOW "))
	var out []string
	for _, w := range words {
		if len(out) == 4 || len(w) > 32 || w != strings.ToUpper(w) || strings.ContainsAny(w, "`'\"()") || w == "FROM" || w == "IN" || w == "LIKE" || w == "WHERE" {
			break
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return "statement"
	}
	return strings.Join(out, " ")
}

// describe accepts DESCRIBE t / DESC t / SHOW COLUMNS FROM t [FROM s].
func describe(n *ast.ShowStmt, def string) (*Statement, error) {
	if n.Column != nil {
		return nil, unsupported("DESCRIBE of a single column is not supported")
	}
	if n.Table == nil {
		return nil, syntaxErr("missing table")
	}
	tn := *n.Table
	if n.DBName != "" && tn.Schema.O == "" {
		tn.Schema = ast.NewCIStr(n.DBName)
	}
	ref, err := targetRef(&tn, def)
	if err != nil {
		return nil, err
	}
	return &Statement{kind: KindDescribe, target: ref}, nil
}

// setPattern records a SHOW … LIKE 'pattern' (a string literal, lower-cased:
// names are lower-case). ESCAPE other than backslash and NOT LIKE are refused.
func (s *Statement) setPattern(p *ast.PatternLikeOrIlikeExpr) error {
	if p == nil {
		return nil
	}
	if p.Not || (p.EscapeExplicit && p.Escape != '\\') {
		return unsupported("SHOW … LIKE takes a plain pattern")
	}
	v, ok := p.Pattern.(*driver.ValueExpr)
	if !ok || v.Datum.Kind() != driver.KindString {
		return unsupported("SHOW … LIKE takes a string literal")
	}
	s.pattern = strings.ToLower(v.Datum.GetString())
	s.hasPattern = true
	return nil
}

// explainStmt accepts EXPLAIN <query> (default format, no ANALYZE): the query
// is walked like KindQuery; Render prints it.
func explainStmt(n *ast.ExplainStmt, def string, ck checked) (*Statement, error) {
	if show, ok := n.Stmt.(*ast.ShowStmt); ok && show.Tp == ast.ShowColumns {
		// DESCRIBE t / DESC t / EXPLAIN t
		return describe(show, def)
	}
	switch {
	case n.Analyze:
		return nil, unsupported("EXPLAIN ANALYZE is not supported")
	case n.Explore || n.SQLDigest != "" || n.PlanDigest != "":
		return nil, unsupported("this EXPLAIN form is not supported")
	case n.Format != "" && !strings.EqualFold(n.Format, "row") && !strings.EqualFold(n.Format, "traditional"):
		return nil, unsupported("EXPLAIN FORMAT=%s is not supported", n.Format)
	}
	switch q := n.Stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		w := newWalker(def)
		w.checked = ck
		if err := w.resultSet(q.(ast.ResultSetNode)); err != nil {
			return nil, err
		}
		return w.statement(KindExplain, q), nil
	}
	return nil, unsupported("EXPLAIN is supported for queries only")
}
