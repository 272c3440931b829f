package sqlgate

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// Session views. CREATE VIEW makes a view that lives in the client's
// session, as a temporary table would: the gate keeps no catalog of its own,
// and a view stored in metasrv would need governance of its own (whose
// rights it runs with, who may see its text). A session view is the
// invoker's: a statement that reads one is parsed with the view's query in
// place, as a WITH query of the same name, so its tables are extracted,
// authorized and rewritten like every other table the statement reads.

// View is a session view made by CREATE VIEW.
type View struct {
	Ref     TableRef // the view's schema (the default schema when it was made, if not named) and name
	Columns []string // its column list, if it was given one
	Query   string   // its query, as MySQL text
}

// maxViewColumns bounds a view's column list.
const maxViewColumns = 4096

// createView accepts CREATE [OR REPLACE] VIEW v [(cols)] AS <query>. The
// query must be one the gate accepts, reading only tables and the views made
// before this one (views).
func (g *Gate) createView(n *ast.CreateViewStmt, sql, def string, views []View) (*Statement, error) {
	if n.Select == nil {
		return nil, syntaxErr("CREATE VIEW without a query")
	}
	// The parser fills in ALGORITHM, DEFINER, SQL SECURITY and CHECK
	// OPTION when they are not written, so the text says whether they
	// were: its keywords, as the parser's lexer reads them (identifiers
	// come back quoted, literals as ?).
	toks := strings.Fields(parser.Normalize(sql, "ON"))
	for len(toks) > 0 && toks[len(toks)-1] == ";" {
		toks = toks[:len(toks)-1]
	}
	head := toks
	if i := slices.Index(toks, "as"); i >= 0 {
		head = toks[:i]
	}
	for _, kw := range []string{"algorithm", "definer", "security"} {
		if slices.Contains(head, kw) {
			return nil, unsupported("%s is not supported in CREATE VIEW: a session view is its reader's, read with the reader's rights", strings.ToUpper(kw))
		}
	}
	if len(toks) >= 2 && toks[len(toks)-1] == "option" && toks[len(toks)-2] == "check" {
		return nil, unsupported("WITH CHECK OPTION is not supported: views are read-only")
	}
	ref, err := targetRef(n.ViewName, def)
	if err != nil {
		return nil, err
	}
	if len(n.Cols) > maxViewColumns {
		return nil, unsupported("a view may name at most %d columns", maxViewColumns)
	}
	v := View{Ref: ref}
	seen := make(map[string]bool, len(n.Cols))
	for _, c := range n.Cols {
		name, err := ident(c.O)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, newErr(ErrorKindSyntax, "duplicate column name %q in the view's column list", name)
		}
		seen[name] = true
		v.Columns = append(v.Columns, name)
	}
	var b strings.Builder
	if err := n.Select.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return nil, syntaxErr("the view's query could not be printed")
	}
	v.Query = b.String()
	// The query is checked now, as the statements that will read the
	// view will parse it: a view that cannot be read is refused at once.
	body, err := g.ParseWith(v.Query, def, earlierViews(views, ref))
	if err != nil {
		return nil, err
	}
	if body.kind != KindQuery {
		return nil, unsupported("a view's query must be a SELECT")
	}
	return &Statement{kind: KindCreateView, view: v, orReplace: n.OrReplace, target: ref}, nil
}

// earlierViews is views without ref (a view replaced by CREATE OR REPLACE
// may not read itself).
func earlierViews(views []View, ref TableRef) []View {
	for i, v := range views {
		if v.Ref == ref {
			return views[:i:i]
		}
	}
	return views
}

// dropView accepts DROP VIEW [IF EXISTS] v.
func dropView(n *ast.DropTableStmt, def string) (*Statement, error) {
	if len(n.Tables) != 1 {
		return nil, unsupported("DROP VIEW takes exactly one view")
	}
	ref, err := targetRef(n.Tables[0], def)
	if err != nil {
		return nil, err
	}
	return &Statement{kind: KindDropView, target: ref, ifExists: n.IfExists}, nil
}

// View returns the view a CREATE VIEW makes (KindCreateView).
func (s *Statement) View() View {
	v := s.view
	v.Columns = append([]string(nil), v.Columns...)
	return v
}

// OrReplace reports CREATE OR REPLACE VIEW (KindCreateView).
func (s *Statement) OrReplace() bool { return s.orReplace }

// withViews puts the session views that stmt reads in front of it as WITH
// queries of their names, each after the views it reads (views are in the
// order they were made, and a view reads only earlier ones). It returns
// the text of the views' queries it put in ("" if none).
func (g *Gate) withViews(stmt ast.StmtNode, def string, views []View) (string, error) {
	if len(views) == 0 {
		return "", nil
	}
	top := topQuery(stmt)
	if top == nil {
		return "", nil
	}
	refs := viewRefs(stmt, def, views)
	if len(refs.used) == 0 {
		return "", nil
	}
	// Bodies, and the views they read, transitively (earlier views only).
	need := make([]bool, len(views))
	bodies := make([]ast.ResultSetNode, len(views))
	var add func(i int) error
	add = func(i int) error {
		if need[i] {
			return nil
		}
		need[i] = true
		body, err := g.parseOne(views[i].Query)
		if err != nil {
			return err
		}
		rs, ok := body.(ast.ResultSetNode)
		if !ok {
			return unsupported("view %q does not hold a query", views[i].Ref.Name)
		}
		bodies[i] = rs
		inner := viewRefs(body, views[i].Ref.Schema, views[:i])
		if len(inner.ctes) > 0 || inner.clash {
			return unsupported("view %q has a WITH query named like a view; rename it", views[i].Ref.Name)
		}
		for j := range inner.used {
			if err := add(j); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range refs.used {
		if err := add(i); err != nil {
			return "", err
		}
	}
	for i, v := range views {
		if need[i] && refs.ctes[v.Ref.Name] {
			return "", unsupported("a WITH query is named like the view %q it hides; rename it", v.Ref.Name)
		}
	}
	var ctes []*ast.CommonTableExpression
	var read strings.Builder
	for i, v := range views {
		if !need[i] {
			continue
		}
		cte := &ast.CommonTableExpression{
			Name:  ast.NewCIStr(v.Ref.Name),
			Query: &ast.SubqueryExpr{Query: bodies[i]},
		}
		for _, c := range v.Columns {
			cte.ColNameList = append(cte.ColNameList, ast.NewCIStr(c))
		}
		ctes = append(ctes, cte)
		read.WriteString(v.Query)
		read.WriteByte('\n')
	}
	setWith(top, ctes)
	return read.String(), nil
}

// topQuery is the query of stmt that a WITH clause for the views it reads
// goes on: the statement itself, the query of an INSERT, CREATE TABLE … AS
// or EXPLAIN; nil for any other statement.
func topQuery(stmt ast.StmtNode) ast.ResultSetNode {
	switch n := stmt.(type) {
	case *ast.SelectStmt:
		return n
	case *ast.SetOprStmt:
		return n
	case *ast.ExplainStmt:
		return topQuery(n.Stmt)
	case *ast.InsertStmt:
		if n.Select != nil {
			return n.Select
		}
	case *ast.CreateTableStmt:
		if n.Select != nil {
			return n.Select
		}
	}
	return nil
}

// setWith puts ctes in front of top's own WITH queries.
func setWith(top ast.ResultSetNode, ctes []*ast.CommonTableExpression) {
	var w **ast.WithClause
	switch n := top.(type) {
	case *ast.SelectStmt:
		w = &n.With
	case *ast.SetOprStmt:
		w = &n.With
	default:
		return
	}
	if *w == nil {
		*w = &ast.WithClause{}
	}
	(*w).CTEs = append(ctes, (*w).CTEs...)
}

// viewUse is what viewRefs finds in a statement.
type viewUse struct {
	used  map[int]bool    // indexes of views read
	ctes  map[string]bool // names of its own WITH queries
	clash bool            // a view is read by a qualified name and a WITH query has its name
}

// viewRefs finds the views of views that stmt reads, by qualified name or by
// name in the default schema, and its WITH query names. A qualified reference
// to a view is made unqualified, so that it reads the WITH query the view
// becomes.
func viewRefs(stmt ast.Node, def string, views []View) viewUse {
	f := &viewFinder{def: def, views: views, use: viewUse{used: map[int]bool{}, ctes: map[string]bool{}}}
	stmt.Accept(f)
	for _, tn := range f.qualified {
		if f.use.ctes[tn.Name.L] {
			f.use.clash = true
		}
		tn.Schema = ast.CIStr{}
	}
	return f.use
}

type viewFinder struct {
	def       string
	views     []View
	use       viewUse
	qualified []*ast.TableName
}

func (f *viewFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.CommonTableExpression:
		f.use.ctes[strings.ToLower(n.Name.O)] = true
	case *ast.TableName:
		schema := strings.ToLower(n.Schema.O)
		if schema == "" {
			schema = f.def
		}
		name := strings.ToLower(n.Name.O)
		for i, v := range f.views {
			if v.Ref.Schema == schema && v.Ref.Name == name {
				f.use.used[i] = true
				if n.Schema.O != "" {
					f.qualified = append(f.qualified, n)
				}
			}
		}
	}
	return n, false
}

func (f *viewFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// MaxSessionViews bounds the views of one session.
const MaxSessionViews = 256

// ApplyTo returns a session's views (in the order they were made) after s:
// CREATE VIEW appends its view, CREATE OR REPLACE VIEW replaces its namesake
// in its place (the views that read it still come after it), DROP VIEW
// removes one. views is not modified. Other statements return views.
func (s *Statement) ApplyTo(views []View) ([]View, error) {
	switch s.kind {
	case KindCreateView:
		i := slices.IndexFunc(views, func(v View) bool { return v.Ref == s.view.Ref })
		switch {
		case i >= 0 && !s.orReplace:
			return nil, unsupported("view %q already exists in this session; use CREATE OR REPLACE VIEW", s.view.Ref.String())
		case i >= 0:
			out := slices.Clone(views)
			out[i] = s.View()
			return out, nil
		case len(views) >= MaxSessionViews:
			return nil, newErr(ErrorKindLimit, "a session may hold at most %d views", MaxSessionViews)
		}
		return append(slices.Clone(views), s.View()), nil
	case KindDropView:
		i := slices.IndexFunc(views, func(v View) bool { return v.Ref == s.target })
		if i < 0 {
			if s.ifExists {
				return views, nil
			}
			return nil, unsupported("unknown view %q", s.target.String())
		}
		return slices.Delete(slices.Clone(views), i, i+1), nil
	}
	return views, nil
}
