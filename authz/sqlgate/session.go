package sqlgate

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Session statements and system variables.
//
// Clients and drivers send SET and read system variables when they connect.
// The gateway has no per-session settings of its own besides the schema: the
// values below are fixed and describe what the gate and the engine do. SET
// of a listed variable is accepted as a no-op only when the value changes
// nothing the gateway does (the fixed value, or an sql_mode whose modes do
// not change how a statement is read or answered); every other SET is
// refused, naming the variable or the value. @@x in a statement is replaced
// by its fixed value as a literal before the statement is walked; a variable
// not listed is refused, so no server state (paths, host names, ports) can
// be read through one.

// SystemVariable is a system variable the gateway answers with a fixed value.
type SystemVariable struct {
	// Name is lower-case, as SHOW VARIABLES lists it.
	Name string
	// Value is the text SHOW VARIABLES shows.
	Value string
	// Int is set for a numeric variable: SELECT @@name gives the number.
	Int *int64
	// Bool is set for an ON/OFF variable: SELECT @@name gives 1 or 0.
	Bool bool
}

// Fixed values.
const (
	// ServerVersion is @@version: the MySQL version whose dialect the gate
	// reads, marked as lakegate's.
	ServerVersion = "8.0.36-lakegate"
	// Charset is the only character set: all text is UTF-8.
	Charset = "utf8mb4"
	// Collation is MySQL's default collation, the one the engine carries
	// (nocase.noaccent).
	Collation = "utf8mb4_0900_ai_ci"
	// SQLMode is MySQL 8's default sql_mode, the one the gate reads
	// statements with.
	SQLMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
	// Isolation is @@transaction_isolation: every statement reads one
	// snapshot of its tables; there are no multi-statement transactions.
	Isolation = "REPEATABLE-READ"
)

// SystemVariables returns the variables the gateway answers, sorted by name.
// The caller owns the returned slice.
func (g *Gate) SystemVariables() []SystemVariable { return slices.Clone(g.vars) }

// systemVariables builds the table; max_allowed_packet is the gate's
// MaxSQLBytes.
func systemVariables(maxSQL int) []SystemVariable {
	num := func(v int64) *int64 { return &v }
	onOff := func(b bool) string {
		if b {
			return "ON"
		}
		return "OFF"
	}
	vars := []SystemVariable{
		{Name: "auto_increment_increment", Value: "1", Int: num(1)},
		{Name: "autocommit", Value: onOff(true), Int: num(1), Bool: true},
		{Name: "character_set_client", Value: Charset},
		{Name: "character_set_connection", Value: Charset},
		{Name: "character_set_database", Value: Charset},
		{Name: "character_set_results", Value: Charset},
		{Name: "character_set_server", Value: Charset},
		{Name: "collation_connection", Value: Collation},
		{Name: "collation_database", Value: Collation},
		{Name: "collation_server", Value: Collation},
		{Name: "lower_case_table_names", Value: "1", Int: num(1)},
		{Name: "max_allowed_packet", Value: strconv.Itoa(maxSQL), Int: num(int64(maxSQL))},
		{Name: "sql_mode", Value: SQLMode},
		{Name: "system_time_zone", Value: "UTC"},
		{Name: "time_zone", Value: "UTC"},
		{Name: "transaction_isolation", Value: Isolation},
		{Name: "transaction_read_only", Value: onOff(false), Int: num(0), Bool: true},
		{Name: "tx_isolation", Value: Isolation},
		{Name: "tx_read_only", Value: onOff(false), Int: num(0), Bool: true},
		{Name: "version", Value: ServerVersion},
		{Name: "version_comment", Value: "lakegate"},
	}
	return vars
}

// systemVariable looks a variable up by lower-case name.
func (g *Gate) systemVariable(name string) (SystemVariable, bool) {
	vars := g.vars
	i, ok := slices.BinarySearchFunc(vars, name, func(v SystemVariable, n string) int { return strings.Compare(v.Name, n) })
	if !ok {
		return SystemVariable{}, false
	}
	return vars[i], true
}

// substituteVariables replaces every system variable of stmt (@@x,
// @@session.x, @@global.x) by its fixed value as a literal, before the
// limits and the walker see the statement. A select field that is a
// variable keeps MySQL's name for it (its text, "@@version") as an alias.
// User variables (@x) are left for the walker, which refuses them.
func (g *Gate) substituteVariables(stmt ast.StmtNode) error {
	v := &varSubst{g: g}
	stmt.Accept(v)
	return v.err
}

type varSubst struct {
	g   *Gate
	err error
}

func (v *varSubst) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	if f, ok := n.(*ast.SelectField); ok && f.AsName.L == "" && f.Expr != nil {
		inner := f.Expr
		for p, ok := inner.(*ast.ParenthesesExpr); ok; p, ok = inner.(*ast.ParenthesesExpr) {
			inner = p.Expr
		}
		if x, ok := inner.(*ast.VariableExpr); ok && x.IsSystem {
			if name := capName(cleanName(exprText(f))); name != "" {
				f.AsName = ast.NewCIStr(name)
			}
		}
	}
	return n, false
}

func (v *varSubst) Leave(n ast.Node) (ast.Node, bool) {
	x, ok := n.(*ast.VariableExpr)
	if v.err != nil || !ok || !x.IsSystem {
		return n, v.err == nil
	}
	name := strings.ToLower(x.Name)
	sv, ok := v.g.systemVariable(name)
	switch {
	case !ok:
		v.err = unsupported("unknown system variable '%s' (SHOW VARIABLES lists the ones the gateway answers)", name)
		return n, false
	case x.Value != nil:
		v.err = unsupported("assigning system variable '%s' in an expression is not supported", name)
		return n, false
	case sv.Int != nil:
		return ast.NewValueExpr(*sv.Int, "", ""), true
	}
	return ast.NewValueExpr(sv.Value, "", ""), true
}

// hasVariables reports whether stmt reads a system variable (a cheap check
// before substituteVariables: most statements read none).
func hasVariables(sql string) bool { return strings.Contains(sql, "@@") }

// sqlModesAccepted are the sql_mode flags that change nothing the gate reads
// or the engine answers for the statements the gate accepts (the strict and
// zero-date modes concern writes of invalid values, which the engine
// refuses anyway). ANSI_QUOTES, PIPES_AS_CONCAT, NO_BACKSLASH_ESCAPES,
// IGNORE_SPACE, HIGH_NOT_PRECEDENCE, REAL_AS_FLOAT and the combination modes
// (ANSI, …) would change how a statement is read or answered: SET of them is
// refused.
var sqlModesAccepted = map[string]bool{
	"ONLY_FULL_GROUP_BY": true, "STRICT_TRANS_TABLES": true, "STRICT_ALL_TABLES": true,
	"NO_ZERO_IN_DATE": true, "NO_ZERO_DATE": true, "ERROR_FOR_DIVISION_BY_ZERO": true,
	"NO_ENGINE_SUBSTITUTION": true, "NO_AUTO_CREATE_USER": true, "TRADITIONAL": true,
}

// settable lists the variables SET accepts and, for each, whether a value
// (upper-cased literal text; "DEFAULT" for DEFAULT) is accepted.
var settable = map[string]func(v string) bool{
	"autocommit":               oneOf("1", "ON", "TRUE", "DEFAULT"),
	"sql_mode":                 sqlModeAccepted,
	"character_set_client":     oneOf("UTF8MB4", "UTF8", "UTF8MB3", "DEFAULT"),
	"character_set_connection": oneOf("UTF8MB4", "UTF8", "UTF8MB3", "DEFAULT"),
	"character_set_results":    oneOf("UTF8MB4", "UTF8", "UTF8MB3", "NULL", "DEFAULT"),
	"collation_connection":     oneOf(strings.ToUpper(Collation), "DEFAULT"),
	"time_zone":                oneOf("UTC", "+00:00", "SYSTEM", "DEFAULT"),
	"transaction_isolation":    oneOf(Isolation, "DEFAULT"),
	"tx_isolation":             oneOf(Isolation, "DEFAULT"),
	"transaction_read_only":    oneOf("0", "OFF", "FALSE", "DEFAULT"),
	"tx_read_only":             oneOf("0", "OFF", "FALSE", "DEFAULT"),
}

func oneOf(vals ...string) func(string) bool {
	return func(v string) bool { return slices.Contains(vals, v) }
}

func sqlModeAccepted(v string) bool {
	if v == "DEFAULT" || v == "" {
		return true
	}
	for _, m := range strings.Split(v, ",") {
		if !sqlModesAccepted[strings.TrimSpace(m)] {
			return false
		}
	}
	return true
}

// SettableVariables lists the variables SET accepts, sorted.
func SettableVariables() []string {
	out := make([]string, 0, len(settable))
	for k := range settable {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// setStmt accepts SET of the settable variables with a value that changes
// nothing, SET NAMES and SET CHARACTER SET utf8mb4 (KindSet: a no-op).
func setStmt(n *ast.SetStmt) (*Statement, error) {
	for _, a := range n.Variables {
		if err := checkAssignment(a); err != nil {
			return nil, err
		}
	}
	return &Statement{kind: KindSet}, nil
}

func checkAssignment(a *ast.VariableAssignment) error {
	switch a.Name {
	case ast.SetNames, ast.SetCharset:
		what := "SET NAMES"
		if a.Name == ast.SetCharset {
			what = "SET CHARACTER SET"
		}
		cs, ok := setValueText(a.Value)
		if !ok || !oneOf("UTF8MB4", "UTF8", "UTF8MB3", "DEFAULT")(strings.ToUpper(cs)) {
			return unsupported("%s %s is not supported: the gateway speaks %s only", what, shortValue(cs, ok), Charset)
		}
		if a.ExtendValue != nil {
			if coll, ok := setValueText(a.ExtendValue); !ok || !strings.EqualFold(coll, Collation) {
				return unsupported("%s … COLLATE %s is not supported: comparisons follow %s", what, shortValue(coll, ok), Collation)
			}
		}
		return nil
	}
	name := strings.ToLower(a.Name)
	switch {
	case !a.IsSystem:
		return unsupported("SET @%s is not supported: user variables are not supported", name)
	case a.IsGlobal || a.IsInstance:
		return unsupported("SET GLOBAL %s is not supported: only session variables can be set", name)
	case name == "tx_isolation_one_shot" || name == "tx_read_only_one_shot":
		return unsupported("SET TRANSACTION is not supported: there are no transactions")
	}
	ok, known := settable[name]
	if !known {
		return unsupported("SET %s is not supported (SET accepts %s)", name, strings.Join(SettableVariables(), ", "))
	}
	v, lit := setValueText(a.Value)
	if !lit {
		return unsupported("SET %s takes a literal value", name)
	}
	if !ok(strings.ToUpper(v)) {
		return unsupported("SET %s = %s is not supported: it would change what the gateway does", name, shortValue(v, true))
	}
	return nil
}

// setValueText is the text of a SET value as the client wrote it: a string
// or number literal, a bare word (ON, utf8mb4), DEFAULT or NULL. Callers
// compare it upper-cased.
func setValueText(e ast.Node) (string, bool) {
	switch x := e.(type) {
	case nil:
		return "DEFAULT", true
	case *ast.DefaultExpr:
		return "DEFAULT", x.Name == nil
	case *ast.ColumnNameExpr:
		if x.Name.Table.L == "" && x.Name.Schema.L == "" {
			return x.Name.Name.O, true
		}
	case *driver.ValueExpr:
		switch x.Kind() {
		case driver.KindNull:
			return "NULL", true
		case driver.KindString:
			return x.GetString(), true
		case driver.KindInt64:
			return strconv.FormatInt(x.GetInt64(), 10), true
		case driver.KindUint64:
			return strconv.FormatUint(x.GetUint64(), 10), true
		}
	}
	return "", false
}

// shortValue prints a refused value for a message, bounded.
func shortValue(v string, ok bool) string {
	if !ok {
		return "(an expression)"
	}
	const limit = 64
	if len(v) > limit {
		cut := limit
		for cut > 0 && (v[cut]&0xC0) == 0x80 {
			cut--
		}
		v = v[:cut] + "…"
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}
