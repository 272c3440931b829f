package sqlgate

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the parser
)

// Config configures a Gate. The zero value is valid.
type Config struct {
	// MaxSQLBytes bounds the client text. Zero or negative means 1 MiB.
	MaxSQLBytes int
	// Limits bound the shape and the string sizes of a statement (limits.go);
	// a zero field means its default.
	Limits Limits
}

const defaultMaxSQLBytes = 1 << 20

// Gate parses and authorizes-to-be client SQL. It is safe for concurrent use:
// parsers (not goroutine-safe) are pooled.
type Gate struct {
	max      int
	limits   Limits
	pool     sync.Pool
	policies policyCache
	vars     []SystemVariable // sorted by name
}

// New returns a Gate.
func New(cfg Config) *Gate {
	g := &Gate{max: cfg.MaxSQLBytes, limits: cfg.Limits.withDefaults()}
	if g.max <= 0 {
		g.max = defaultMaxSQLBytes
	}
	g.vars = systemVariables(g.max)
	g.pool.New = func() any {
		p := parser.New()
		p.SetSQLMode(mysql.ModeNone) // MySQL defaults: "…" is a string, backslash escapes, || is OR
		p.EnableWindowFunc(true)
		return p
	}
	return g
}

// TableRef names a real table as the client referenced it: lower-cased, with
// Schema taken from the default schema when the name was unqualified.
type TableRef struct {
	Schema, Name string
}

// String returns "schema.name".
func (r TableRef) String() string { return r.Schema + "." + r.Name }

// Kind is the kind of an accepted statement.
type Kind int

// Statement kinds. KindCreateTableAs, KindInsert and KindDropTable are the
// write kinds (Statement.IsWrite).
const (
	KindQuery         Kind = iota + 1 // SELECT, set operation, WITH … SELECT
	KindUse                           // USE <schema>
	KindCreateTableAs                 // CREATE TABLE [IF NOT EXISTS] t [AS] <query>
	KindInsert                        // INSERT INTO t [(cols)] <query> | VALUES (…), …
	KindDropTable                     // DROP TABLE [IF EXISTS] t
	KindShowDatabases                 // SHOW DATABASES | SHOW SCHEMAS [LIKE 'p']
	KindShowTables                    // SHOW TABLES [FROM s] [LIKE 'p']
	KindDescribe                      // DESCRIBE t | DESC t | SHOW COLUMNS FROM t
	KindExplain                       // EXPLAIN <query>
	KindSet                           // SET of a session variable, a no-op (session.go)
	KindShowVariables                 // SHOW [SESSION|GLOBAL] VARIABLES [LIKE 'p']
	KindShowWarnings                  // SHOW WARNINGS | SHOW ERRORS: never any
	KindShowCollation                 // SHOW COLLATION [LIKE 'p']
	KindShowCharset                   // SHOW CHARACTER SET | SHOW CHARSET [LIKE 'p']
	KindCreateView                    // CREATE [OR REPLACE] VIEW v [(cols)] AS <query>: a session view (views.go)
	KindDropView                      // DROP VIEW [IF EXISTS] v
)

// String returns a short lower-case name of the kind ("query", "use",
// "create table as", "insert", "drop table").
func (k Kind) String() string {
	switch k {
	case KindQuery:
		return "query"
	case KindUse:
		return "use"
	case KindCreateTableAs:
		return "create table as"
	case KindInsert:
		return "insert"
	case KindDropTable:
		return "drop table"
	case KindShowDatabases:
		return "show databases"
	case KindShowTables:
		return "show tables"
	case KindDescribe:
		return "describe"
	case KindExplain:
		return "explain"
	case KindSet:
		return "set"
	case KindShowVariables:
		return "show variables"
	case KindShowWarnings:
		return "show warnings"
	case KindShowCollation:
		return "show collation"
	case KindShowCharset:
		return "show character set"
	case KindCreateView:
		return "create view"
	case KindDropView:
		return "drop view"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Relation is what the caller resolved a TableRef to: the engine identifier
// (printed as "Schema"."Name"), the table's column names and, when a row
// filter or column masks apply to the caller, the Policy.
type Relation struct {
	Schema, Name string
	Columns      []string
	// Types are the engine's types of Columns, in order ("VARCHAR",
	// "BIGINT", "DECIMAL(10,2)", …). A masked column needs its type: masks
	// keep it.
	Types []string
	// Policy, when set, is applied wherever the table is read (see
	// policy.go).
	Policy *Policy
	// FoldUnique, when set, has one entry per column: true when no two
	// distinct values of the column, as stored (before any mask), are
	// equal under the engine's collation, so that grouping by their bytes
	// forms the collation's groups (facts.go). It is not used for a
	// masked column or a table read through a row filter (the fact covers
	// rows the caller may not read). Statement.GroupKeys names the columns
	// worth finding it for.
	FoldUnique []bool
	// Folded, when set, has one entry per column: true when every value of
	// the column, as stored, is its own fold (lower(strip_accents(v))), so
	// that LIKE compares the column as it is (facts.go); used and not
	// used as FoldUnique. Statement.LikeColumns names the columns worth
	// finding it for.
	Folded []bool
	// ASCII, when set, has one entry per column: true when every value of
	// the column is ASCII, so that LIKE with an ASCII pattern needs no
	// test of each value for it (likeExpr); used and not used as
	// FoldUnique, for the columns Statement.LikeColumns names.
	ASCII []bool
	// NoUpper and NoLower, when set, have one entry per column: the
	// letters that no value of the column holds in upper case, and in
	// lower case, as sets (bit i for the i-th letter of the alphabet; zero
	// when nothing is known). For a column that ASCII marks, a LIKE whose
	// pattern's letters occur in one case only matches as the
	// case-sensitive LIKE of the pattern put in that case, which the
	// engine runs as a substring or prefix search (likeExpr); used and not
	// used as FoldUnique. Statement.LikeLetters names the letters worth
	// finding them for.
	NoUpper, NoLower []uint32
}

// Statement is one accepted statement. It is immutable after Parse; Tables,
// Render and the other methods may be called from several goroutines.
type Statement struct {
	kind        Kind
	useSchema   string
	view        View // KindCreateView
	orReplace   bool // KindCreateView
	tables      []TableRef
	numParams   int
	root        ast.Node   // rewritten query (part); never mutated after Parse
	types       *typeInfo  // what the type pass needs at Render (types.go)
	checks      []colCheck // bare column names that are also table aliases
	target      TableRef   // write kinds
	ifNotExists bool       // KindCreateTableAs
	ifExists    bool       // KindDropTable
	columns     []string   // KindInsert
	showSchema  string     // KindShowTables
	pattern     string     // KindShowDatabases, KindShowTables: LIKE pattern
	hasPattern  bool
	cols        *colInfo              // column references, for CheckColumns (columns.go)
	dialect     Dialect               // the dialect Render prints (ParseFor)
	gate        *Gate                 // set with an upstream dialect: checks the output
	groupKeys   []*groupKey           // GROUP BY items that may group by bytes (facts.go)
	likes       []*likeExpr           // LIKEs of a column under the collation (facts.go)
	compares    []*ast.ColumnNameExpr // roots of operands compared with text literals (facts.go)
	distincts   []*foldKeyExpr        // COUNT(DISTINCT column)s (facts.go)
}

// colCheck is a bare column reference whose name is also a table alias
// somewhere in the statement. DuckDB binds such a name to the whole row of the
// aliased table when no relation in scope has a column of that name; Render
// refuses unless one of scope's real tables has the column.
type colCheck struct {
	name  string
	scope []TableRef
}

// Parse accepts exactly one SELECT / set operation / WITH … SELECT query, USE
// <schema>, CREATE TABLE … AS <query>, INSERT … <query> | VALUES, or DROP
// TABLE (see the package documentation), and returns it with its real table
// references extracted.
// defaultSchema qualifies unqualified table names ("" = none: such names fail
// with ErrNoSchema). Every error is an *Error.
func (g *Gate) Parse(sql, defaultSchema string) (*Statement, error) {
	return g.ParseWith(sql, defaultSchema, nil)
}

// ParseWith is Parse in a session that has made views (in the order they
// were made): a statement that reads one reads its query in its place
// (views.go), and CREATE VIEW and DROP VIEW are accepted.
func (g *Gate) ParseWith(sql, defaultSchema string, views []View) (*Statement, error) {
	def, stmt, ck, err := g.parseChecked(sql, defaultSchema)
	if err != nil {
		return nil, err
	}
	if cv, ok := stmt.(*ast.CreateViewStmt); ok {
		return g.createView(cv, sql, def, views)
	}
	read, err := g.withViews(stmt, def, views)
	if err != nil {
		return nil, err
	}
	if read != "" {
		// The views' queries are part of the statement now: its limits,
		// session variables and cheap text checks are those of the whole.
		if hasVariables(read) {
			if err := g.substituteVariables(stmt); err != nil {
				return nil, err
			}
		}
		if ck, err = checkLimits(stmt, g.limits); err != nil {
			return nil, err
		}
		sql += "\n" + read
	}
	var cols *colInfo
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.ExplainStmt, *ast.InsertStmt, *ast.CreateTableStmt:
		// Before the walker rewrites the tree (columns.go).
		cols = collectColumns(stmt)
	}
	st, err := g.parse(stmt, def, ck, sql)
	if err != nil {
		return nil, err
	}
	st.cols = cols
	return st, nil
}

// parse builds the Statement of one parsed, checked statement.
func (g *Gate) parse(stmt ast.StmtNode, def string, ck checked, sql string) (*Statement, error) {
	if callsSessionSchema(sql) {
		substituteSession(stmt, def) // DATABASE(), SCHEMA() (funcs_more_string.go)
	}
	switch n := stmt.(type) {
	case *ast.UseStmt:
		name := strings.ToLower(n.DBName)
		if err := checkIdent(name); err != nil {
			return nil, err
		}
		return &Statement{kind: KindUse, useSchema: name}, nil
	case *ast.SelectStmt, *ast.SetOprStmt:
		w := newWalker(def)
		w.checked, w.root = ck, n
		if err := w.resultSet(n.(ast.ResultSetNode)); err != nil {
			return nil, err
		}
		return w.statement(KindQuery, n), nil
	case *ast.CreateTableStmt:
		return createTableAs(n, def, ck)
	case *ast.InsertStmt:
		return insert(n, def, ck)
	case *ast.DropTableStmt:
		if n.IsView {
			return dropView(n, def)
		}
		return dropTable(n, def, sql)
	case *ast.ShowStmt:
		return showStmt(n, def)
	case *ast.ExplainStmt:
		return explainStmt(n, def, ck)
	case *ast.SetStmt:
		return setStmt(n)
	}
	return nil, unsupported("%s is not supported (only SELECT, USE, SET, CREATE TABLE … AS SELECT, INSERT, DROP TABLE, SHOW, DESCRIBE and EXPLAIN are)", statementName(stmt))
}

// statementName names a refused statement for its message ("UPDATE",
// "LOAD DATA", "SET PASSWORD").
func statementName(stmt ast.StmtNode) string {
	switch stmt.(type) {
	case *ast.SetPwdStmt:
		return "SET PASSWORD"
	case *ast.SetRoleStmt:
		return "SET ROLE"
	case *ast.SetDefaultRoleStmt:
		return "SET DEFAULT ROLE"
	case *ast.SetResourceGroupStmt:
		return "SET RESOURCE GROUP"
	}
	label := ast.GetStmtLabel(stmt)
	if label == "" || label == "other" {
		return "this statement"
	}
	// "LoadData" → "LOAD DATA"
	var b strings.Builder
	for i, r := range label {
		if i > 0 && 'A' <= r && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// parseChecked bounds and checks the text and the default schema, parses
// exactly one statement and checks it against the gate's Limits.
func (g *Gate) parseChecked(sql, defaultSchema string) (string, ast.StmtNode, checked, error) {
	if strings.TrimSpace(sql) == "" {
		return "", nil, checked{}, syntaxErr("empty statement")
	}
	if len(sql) > g.max {
		return "", nil, checked{}, newErr(ErrorKindTooLarge, "statement is larger than %d bytes", g.max)
	}
	if strings.IndexByte(sql, 0) >= 0 {
		return "", nil, checked{}, syntaxErr("statement contains a NUL byte")
	}
	if !utf8.ValidString(sql) {
		return "", nil, checked{}, syntaxErr("statement is not valid UTF-8")
	}
	def := strings.ToLower(defaultSchema)
	if def != "" {
		if err := checkIdent(def); err != nil {
			return "", nil, checked{}, err
		}
	}
	stmt, err := g.parseOne(sql)
	if err != nil {
		return "", nil, checked{}, err
	}
	switch stmt.(type) {
	case *ast.SetStmt, *ast.ShowStmt:
	default:
		if hasVariables(sql) {
			if err := g.substituteVariables(stmt); err != nil {
				return "", nil, checked{}, err
			}
		}
	}
	ck, err := checkLimits(stmt, g.limits)
	if err != nil {
		return "", nil, checked{}, err
	}
	return def, stmt, ck, nil
}

func (g *Gate) parseOne(sql string) (stmt ast.StmtNode, err error) {
	p := g.pool.Get().(*parser.Parser)
	defer func() {
		if r := recover(); r != nil {
			// The parser's state is unknown: drop it rather than pool it.
			stmt, err = nil, syntaxErr("statement could not be parsed")
			return
		}
		g.pool.Put(p)
	}()
	stmts, _, perr := p.Parse(sql, "", "")
	if perr != nil {
		return nil, syntaxError(sql, perr)
	}
	switch len(stmts) {
	case 0:
		return nil, syntaxErr("empty statement")
	case 1:
		return stmts[0], nil
	}
	return nil, syntaxErr("exactly one statement is allowed, got %d", len(stmts))
}

// parseMessage shortens the parser's message ("line 1 column 9 near …").
func parseMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "You have an error in your SQL syntax; "); i >= 0 {
		msg = msg[i+len("You have an error in your SQL syntax; "):]
		msg = strings.TrimPrefix(msg, "check the manual that corresponds to your TiDB version for the right syntax to use ")
	}
	const limit = 200
	if len(msg) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// Kind returns the statement kind.
func (s *Statement) Kind() Kind { return s.kind }

// UseSchema returns the lower-cased target of USE (KindUse only).
func (s *Statement) UseSchema() string { return s.useSchema }

// Tables returns the distinct real tables the statement reads, sorted: for a
// write, the tables of its query part (or of subqueries in VALUES), not the
// target, unless the query reads the target too. The caller owns the
// returned slice.
func (s *Statement) Tables() []TableRef { return slices.Clone(s.tables) }

// IsWrite reports whether the statement creates, writes or drops a table
// (KindCreateTableAs, KindInsert, KindDropTable).
func (s *Statement) IsWrite() bool {
	switch s.kind {
	case KindCreateTableAs, KindInsert, KindDropTable:
		return true
	}
	return false
}

// Target returns the table a write statement creates (KindCreateTableAs),
// appends to (KindInsert) or drops (KindDropTable), or the table DESCRIBE
// describes (KindDescribe): lower-cased, validated
// like a table read, its schema taken from the default schema when the name
// was unqualified. It is the zero TableRef for other kinds. The caller must
// authorize a write target for writing (a DESCRIBE target for reading); it
// is not in Tables unless also read.
func (s *Statement) Target() TableRef { return s.target }

// IfNotExists reports CREATE TABLE IF NOT EXISTS (KindCreateTableAs).
func (s *Statement) IfNotExists() bool { return s.ifNotExists }

// IfExists reports DROP TABLE IF EXISTS (KindDropTable).
func (s *Statement) IfExists() bool { return s.ifExists }

// Columns returns the INSERT column list (KindInsert), lower-cased, in the
// client's order, without duplicates; nil when the statement has none (the
// query's columns then map to the target's columns by position). For INSERT
// … <query> the gate does not check that the query has as many columns as
// the list: the caller aligns the result to the target and refuses a
// mismatch. The caller owns the returned slice.
func (s *Statement) Columns() []string { return slices.Clone(s.columns) }

// ShowSchema returns the schema of SHOW TABLES (KindShowTables): the FROM
// schema, lower-cased, or the default schema.
func (s *Statement) ShowSchema() string { return s.showSchema }

// ShowPattern returns the lower-cased LIKE pattern of SHOW DATABASES or SHOW
// TABLES (SQL LIKE: % any run, _ one character, \ escapes) and whether there
// was one.
func (s *Statement) ShowPattern() (string, bool) { return s.pattern, s.hasPattern }

// IsShow reports whether the statement is answered by the caller rather
// than the engine: from the catalog view (KindShowDatabases, KindShowTables,
// KindDescribe) or from fixed values (KindShowVariables, KindShowWarnings,
// KindShowCollation, KindShowCharset).
func (s *Statement) IsShow() bool {
	switch s.kind {
	case KindShowDatabases, KindShowTables, KindDescribe, KindShowVariables, KindShowWarnings, KindShowCollation, KindShowCharset:
		return true
	}
	return false
}

// NumParams returns the number of "?" parameter markers.
func (s *Statement) NumParams() int { return s.numParams }

// checkIdent validates a lower-cased identifier.
func checkIdent(name string) error {
	if name == "" {
		return syntaxErr("empty identifier")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return syntaxErr("identifier contains a control character")
		}
	}
	if strings.HasPrefix(name, "__lg") || strings.HasPrefix(name, "__cte") {
		return unsupported("identifier %q uses a reserved prefix", name)
	}
	return nil
}
