package sqlgate

// CheckLexical scans sql with DuckDB's lexical rules and refuses anything the
// gate's printer never produces but DuckDB would read as more than one
// statement, a comment, a prefixed or dollar-quoted literal, or a positional
// reference. It is the last step of Render and must pass before any text is
// handed to the engine.
//
// Single-quoted strings (a doubled quote escapes a quote) may hold any byte
// but NUL.
// Double-quoted identifiers ("" escapes a quote) may not hold NUL or control
// characters. Outside quotes it refuses "--", "/*", ";", "$" (except in a
// numbered parameter: "$", a digit other than 0 and digits, not after an
// identifier character and not followed by one or by "$"), "#", "\",
// backtick, NUL, control characters other than space, tab and newline,
// non-ASCII bytes, and a quote directly after an identifier character, "&" or
// another quoted token (E'…', x'…', b'…', U&'…', U&"…", typed literals). An
// unterminated quote is refused.
func CheckLexical(sql string) error {
	const (
		outside = iota
		inString
		inIdent
	)
	state := outside
	var prev byte // previous byte outside quotes (0 at start, or after a quoted token: the closing quote)
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		if c == 0 {
			return lexErr("NUL byte")
		}
		switch state {
		case inString:
			if c == '\'' {
				if i+1 < len(sql) && sql[i+1] == '\'' {
					i++
					continue
				}
				state, prev = outside, '\''
			}
			continue
		case inIdent:
			if c == '"' {
				if i+1 < len(sql) && sql[i+1] == '"' {
					i++
					continue
				}
				state, prev = outside, '"'
				continue
			}
			if c < 0x20 || c == 0x7f {
				return lexErr("control character in a quoted identifier")
			}
			continue
		}
		switch {
		case c == '\'' || c == '"':
			if isIdentByte(prev) || prev == '&' || prev == '\'' || prev == '"' {
				return lexErr("prefixed or adjacent quoted literal")
			}
			if c == '\'' {
				state = inString
			} else {
				state = inIdent
			}
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			return lexErr(`"--" outside quotes`)
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			return lexErr(`"/*" outside quotes`)
		case c == '$' && !isIdentByte(prev) && i+1 < len(sql) && sql[i+1] >= '1' && sql[i+1] <= '9':
			// A numbered parameter ($1): digits, and then neither an
			// identifier character nor another "$" (a dollar quote's tag).
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			if j < len(sql) && (isIdentByte(sql[j]) || sql[j] == '$') {
				return lexErr(`"$" outside quotes`)
			}
			i, c = j-1, sql[j-1]
		case c == ';' || c == '$' || c == '#' || c == '\\' || c == '`':
			return lexErr("%q outside quotes", string(c))
		case c == ' ' || c == '\t' || c == '\n':
		case c < 0x20 || c == 0x7f:
			return lexErr("control character outside quotes")
		case c >= 0x80:
			return lexErr("non-ASCII byte outside quotes")
		}
		prev = c
	}
	if state != outside {
		return lexErr("unterminated quoted token")
	}
	return nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func lexErr(format string, args ...any) *Error {
	return unsupported("rendered SQL failed the lexical check: "+format, args...)
}
