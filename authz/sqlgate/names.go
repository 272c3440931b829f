package sqlgate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Result column names.
//
// The engine names an unaliased select expression by its own printing of
// it, which for the gate's output is the rewritten text: translated
// functions and, through a scalar subquery, a table's row filter, its masks
// and its storage id. MySQL names it by the text the client wrote. So the
// walker gives every select field of every SELECT an explicit alias taken
// from the client's text before the field is rewritten (fieldName): every
// level, because the names of a derived table or CTE surface through *, and
// the first branch of a set operation names its result. Nothing the gate
// prints can then become a name. A column reference needs no alias: the
// engine names it by its column name, as MySQL does (lower-cased, as every
// identifier the gate prints). A wildcard expands to the column names of
// its tables, and a policy's derived table keeps each masked column's name.

// maxNameBytes is where MySQL cuts a name it makes from the text of an
// expression (MAX_ALIAS_NAME, in bytes); the gate cuts at the last whole
// character before it.
const maxNameBytes = 256

// maxAliasChars is MySQL's limit on a column alias the client writes; a
// longer one is refused, as MySQL refuses it.
const maxAliasChars = 256

// checkAlias refuses a client's column alias longer than MySQL allows.
func checkAlias(as string) error {
	if utf8.RuneCountInString(as) > maxAliasChars {
		return unsupported("a column alias longer than %d characters is not supported", maxAliasChars)
	}
	return nil
}

// fieldName returns the name MySQL gives the unaliased select field f,
// computed from the client's text before f is walked, or "" when the
// engine gives f that name itself (a column reference, parenthesised or
// not). The name is one line of valid UTF-8 of at most maxNameBytes bytes.
func fieldName(f *ast.SelectField) (string, error) {
	inner, plus := f.Expr, false
	for stripped := true; stripped; {
		switch x := inner.(type) {
		case *ast.ParenthesesExpr:
			inner = x.Expr
		case *ast.UnaryOperationExpr:
			// MySQL drops a unary plus: +a is named as a.
			if stripped = x.Op == opcode.Plus; stripped {
				inner, plus = x.V, true
			}
		default:
			stripped = false
		}
	}
	var name string
	switch x := inner.(type) {
	case *ast.ColumnNameExpr:
		if !plus || x.Name == nil {
			return "", nil
		}
		// The gate prints (+(a)), which the engine names "+(a)".
		name = strings.ToLower(x.Name.Name.O)
	case *test_driver.ValueExpr:
		name = literalName(x, f)
	default:
		name = exprText(f)
	}
	name = cleanName(name)
	if name == "" {
		// Only a string literal of spaces has an empty name in MySQL, which
		// the engine cannot print: it keeps its quoted text, as the engine
		// would name it.
		v, ok := inner.(*test_driver.ValueExpr)
		if !ok || v.Kind() != test_driver.KindString {
			return "", unsupported("a select expression without a name is not supported; give it an alias")
		}
		name = capName("'" + strings.Map(lineRune, v.GetString()) + "'")
	}
	if reservedName(name) {
		return "", unsupported("column name %q uses a reserved prefix; give it an alias", name)
	}
	return name, nil
}

// literalName is MySQL's name of a literal: a string is named by its value
// (the first of adjacent strings), NULL, TRUE and FALSE by the keyword, a
// number by its text.
func literalName(v *test_driver.ValueExpr, f *ast.SelectField) string {
	switch v.Kind() {
	case test_driver.KindString:
		s := v.GetString()
		if off := v.GetProjectionOffset(); off >= 0 && off <= len(s) {
			s = s[:off]
		}
		return s
	case test_driver.KindNull:
		return "NULL"
	case test_driver.KindInt64:
		if v.Type.GetFlag()&mysql.IsBooleanFlag != 0 {
			if v.GetInt64() != 0 {
				return "TRUE"
			}
			return "FALSE"
		}
	}
	// The text without the parentheses and unary plus around the number.
	t := exprText(f)
	t = strings.TrimLeft(t, " \t\r\n+(")
	return strings.TrimRight(t, " \t\r\n)")
}

// exprText is the client's text of f's expression: as the parser recorded
// it, without executable-comment markers and without the comments and
// spaces after it; if the parser recorded none, the parser's printing of
// the expression as the client wrote it (never the gate's rewrite: f is not
// walked yet).
func exprText(f *ast.SelectField) string {
	if t := stripComments(f.Text()); t != "" {
		return t
	}
	var b strings.Builder
	if err := f.Expr.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return ""
	}
	return b.String()
}

// stripComments removes the markers of executable comments (/*!50000 …
// */: their content is code) and the comments and spaces at the end of s,
// the text of one expression. Comments inside it stay, as in MySQL's names.
func stripComments(s string) string {
	end := 0          // offset after the last character of a token
	var markers []int // start and end offsets of executable-comment markers
	inExec := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = quoteEnd(s, i)
			end = i
		case strings.HasPrefix(s[i:], "/*!"):
			j := i + 3
			if j < len(s) && s[j] == 'M' {
				j++
			}
			for k := 0; k < 6 && j < len(s) && s[j] >= '0' && s[j] <= '9'; k++ {
				j++
			}
			markers = append(markers, i, j)
			inExec, i = true, j
		case strings.HasPrefix(s[i:], "*/") && (inExec || !strings.HasPrefix(s[i+2:], "*")):
			// The end of an executable comment, which may have begun
			// before the expression ("*/" is no operator, but "*/*" is
			// "*" and a comment).
			markers = append(markers, i, i+2)
			inExec, i = false, i+2
		case strings.HasPrefix(s[i:], "/*"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
		case c == '#' || strings.HasPrefix(s[i:], "--") && (i+2 == len(s) || s[i+2] <= ' '):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(s)
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			i++
			end = i
		}
	}
	if len(markers) == 0 {
		return s[:end]
	}
	var b strings.Builder
	from := 0
	for k := 0; k < len(markers) && markers[k] < end; k += 2 {
		b.WriteString(s[from:markers[k]])
		from = markers[k+1]
	}
	if from < end {
		b.WriteString(s[from:end])
	}
	return b.String()
}

// quoteEnd returns the index after the quoted token that starts at s[i]: a
// doubled quote stays inside, and in strings a backslash escapes the next
// byte; an unterminated token runs to the end.
func quoteEnd(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// cleanName makes s safe to print as a name, as MySQL makes names: control
// characters become spaces (a name is one line), leading characters that
// are neither letters, marks, numbers, punctuation nor symbols are dropped,
// and the result is cut to maxNameBytes.
func cleanName(s string) string {
	s = strings.Map(lineRune, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.TrimLeftFunc(s, func(r rune) bool {
		return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
	})
	return capName(s)
}

// lineRune maps control characters to spaces.
func lineRune(r rune) rune {
	if unicode.IsControl(r) {
		return ' '
	}
	return r
}

// capName cuts s to at most maxNameBytes bytes at a character boundary.
func capName(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	cut := maxNameBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// reservedName reports whether a name uses a prefix the gate reserves for
// its own names (see checkIdent), in any case.
func reservedName(name string) bool {
	l := strings.ToLower(name)
	return strings.HasPrefix(l, "__lg") || strings.HasPrefix(l, "__cte")
}
