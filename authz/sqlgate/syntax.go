package sqlgate

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Syntax errors. The parser reports the line and column where it stopped
// and the rest of the statement from the token it could not take; the
// client is told "syntax error at line L column C near "<that token>"", as
// MySQL names the place (MySQL quotes the rest of the statement; one token
// is enough to find it and keeps the message short). A syntax error that is
// a construct DuckDB has and MySQL has not — a table function or a file
// name where a table belongs — is refused naming the construct instead.

// parserPos matches the parser's "line L column C near "" in its message.
var parserPos = regexp.MustCompile(`line (\d+) column (\d+) near "`)

// fromBefore matches text ending where a table name belongs, followed by a
// name: the name is group 1 ("FROM read_parquet", "JOIN x.glob", ", t").
var fromBefore = regexp.MustCompile(`(?is)(?:\bFROM|\bJOIN|,)\s*([\p{L}_][\p{L}\p{N}_$.]*)?\s*$`)

// syntaxError turns the parser's error for sql into the gate's message.
func syntaxError(sql string, perr error) *Error {
	msg := perr.Error()
	m := parserPos.FindStringSubmatchIndex(msg)
	if m == nil {
		return syntaxErr("syntax error: %s", parseMessage(perr))
	}
	line, col := msg[m[2]:m[3]], msg[m[4]:m[5]]
	off, ok := nearOffset(sql, msg[m[1]:])
	if !ok {
		return syntaxErr("syntax error at line %s column %s", line, col)
	}
	tok := firstToken(sql[off:])
	if tok == "" {
		return syntaxErr("syntax error at line %s column %s: the statement ends too early", line, col)
	}
	if f := fromBefore.FindStringSubmatch(sql[:off]); f != nil {
		switch {
		case tok == "(" && f[1] != "":
			return unsupported("table function %s(…) is not supported: a query reads catalog tables only", strings.ToLower(f[1]))
		case f[1] == "" && (tok[0] == '\'' || tok[0] == '"'):
			return unsupported("reading a file by name (%s) is not supported: a query reads catalog tables only", tok)
		}
	}
	return syntaxErr("syntax error at line %s column %s near %s", line, col, strconv.Quote(tok))
}

// totalLength matches the parser's note on a cut rest of the statement.
var totalLength = regexp.MustCompile(`\(total length (\d+)\)\s*$`)

// nearOffset finds where in sql the parser's quoted rest of the statement
// starts. rest is the message after `near "`: the rest of sql (cut at 2048
// bytes), a quote, the parser's own words and, when cut, "(total length
// N)".
func nearOffset(sql, rest string) (int, bool) {
	if m := totalLength.FindStringSubmatch(rest); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n > 0 && n <= len(sql) {
			return len(sql) - n, true
		}
		return 0, false
	}
	for off := 0; off <= len(sql); off++ {
		tail := sql[off:]
		if len(rest) > len(tail) && rest[len(tail)] == '"' && strings.HasPrefix(rest, tail) {
			return off, true
		}
	}
	return 0, false
}

// maxTokenBytes bounds the token quoted in a message.
const maxTokenBytes = 64

// multiOps are operators of more than one character, longest first.
var multiOps = []string{"<=>", "->>", "<=", ">=", "<>", "!=", ":=", "||", "&&", "<<", ">>", "->"}

// firstToken returns the first token of s (after spaces): a quoted string or
// identifier, a word, an operator, or one character; "" at the end.
func firstToken(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if s == "" {
		return ""
	}
	end := 0
	switch c := s[0]; {
	case c == '\'' || c == '"' || c == '`':
		end = len(s)
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' && c != '`' {
				i++
				continue
			}
			if s[i] == c {
				if i+1 < len(s) && s[i+1] == c {
					i++
					continue
				}
				end = i + 1
				break
			}
		}
	case isWordByte(s, 0):
		for end < len(s) && isWordByte(s, end) {
			_, n := utf8.DecodeRuneInString(s[end:])
			end += n
		}
	default:
		for _, op := range multiOps {
			if strings.HasPrefix(s, op) {
				return op
			}
		}
		_, end = utf8.DecodeRuneInString(s)
	}
	tok := s[:end]
	if len(tok) > maxTokenBytes {
		cut := maxTokenBytes
		for cut > 0 && !utf8.RuneStart(tok[cut]) {
			cut--
		}
		tok = tok[:cut] + "…"
	}
	return tok
}

// isWordByte reports whether the character at s[i] belongs to a word
// (identifier or number).
func isWordByte(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r == '_' || r == '$' || r == '.' && i > 0 || unicode.IsLetter(r) || unicode.IsDigit(r)
}
