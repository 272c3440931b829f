package sqlgate_test

import (
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// quotedLiterals returns the contents of the quoted string literals of sql
// ('…' and "…", backslash escapes and doubled quotes honoured) and the text
// outside them, by a scanner written independently of the TiDB lexer.
// Backquoted identifiers, quoted user variable names (@'v') and comments
// are not literals; the contents of
// executable comments (/*! … */) and hints (/*+ … */) are scanned as code.
func quotedLiterals(sql string) (lits []string, outside string) {
	var out strings.Builder
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '`':
			j := i + 1
			for j < len(sql) {
				if sql[j] == '`' {
					if j+1 < len(sql) && sql[j+1] == '`' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			out.WriteString(sql[i:min(j+1, len(sql))])
			i = j + 1
		case c == '\'' || c == '"':
			// @'name' names a user variable: not a literal.
			isName := i > 0 && sql[i-1] == '@' && (i < 2 || sql[i-2] != '@')
			j := i + 1
			for j < len(sql) {
				if sql[j] == '\\' {
					j += 2
					continue
				}
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if isName {
				out.WriteString(sql[i:min(j+1, len(sql))])
			} else {
				lits = append(lits, sql[i+1:min(j, len(sql))])
				out.WriteByte(' ')
			}
			i = j + 1
		case c == '#' || c == '-' && strings.HasPrefix(sql[i:], "--") && (i+2 == len(sql) || sql[i+2] <= ' '):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return lits, out.String()
			}
			i += j
		case c == '/' && strings.HasPrefix(sql[i:], "/*") && !strings.HasPrefix(sql[i:], "/*!") && !strings.HasPrefix(sql[i:], "/*+"):
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return lits, out.String()
			}
			i += j + 4
		default:
			out.WriteByte(c)
			i++
		}
	}
	return lits, out.String()
}

// FuzzNormalize: Normalize never panics, stays within its bound, and its
// result holds no quoted literal of the input longer than 3 bytes, unless
// that text also stands outside every literal of the input (an identifier
// spelled like a value).
func FuzzNormalize(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	for _, s := range []string{
		`SELECT * FROM people WHERE ssn = '123-45-6789'`,
		`SELECT x'41', 0x41, b'01', _utf8mb4'abcd', N'efgh', INTERVAL '3' MONTH, DATE '2020-01-01'`,
		`SELECT 1 /*! , 'secret' */ FROM t`,
		`SELECT /*+ hint('hintval') */ a FROM t`,
		"SELECT `it''s` FROM t WHERE a = 'it\\'s secret'",
		`SELECT a FROM t WHERE a IN ('aaaa', 'bbbb') ORDER BY 2 LIMIT 10`,
		`SELECT a FROM t WHERE s = 'unterminated secret`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		got := sqlgate.Normalize(sql)
		if len(got) > sqlgate.MaxNormalizedBytes {
			t.Fatalf("%d bytes", len(got))
		}
		lgot := strings.ToLower(got)
		lits, outside := quotedLiterals(sql)
		outside = strings.ToLower(outside)
		for _, lit := range lits {
			l := strings.ToLower(strings.ToValidUTF8(lit, "?"))
			if len(strings.TrimSpace(l)) <= 3 || strings.Contains(outside, l) {
				continue
			}
			if strings.Contains(lgot, l) {
				t.Fatalf("Normalize(%q) = %q holds the literal %q", sql, got, lit)
			}
		}
	})
}
