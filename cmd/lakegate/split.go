package main

import (
	"strings"
	"unicode"
)

// Scripts are split into statements on the client, since the gateway runs
// one statement per call. The split follows the lexical rules of the
// gate's parser (TiDB's, MySQL's default SQL mode): a ; ends a statement
// only outside '…' and "…" strings (backslash escapes, doubled quotes),
// `…` identifiers (doubled backticks) and comments (# and -- to the end of
// the line, -- only when a space, a control character or the end follows;
// /* … */). An executable comment /*! … */ is code to the parser, so
// quotes and comments inside it count, but a ; inside it does not split:
// the whole text goes to the gateway, which refuses a second statement.

// lexMode is where the scanner stands: in code or inside a quoted string,
// identifier or comment.
type lexMode byte

const (
	inCode     lexMode = iota
	inSingle           // '…'
	inDouble           // "…"
	inBacktick         // `…`
	inBlock            // /* … */
	inLine             // # or -- comment, to the end of the line
)

// segment is a piece of a script between statement-ending semicolons:
// src[start:end], without the ;. code reports whether it holds anything
// but spaces and comments.
type segment struct {
	start, end int
	code       bool
}

// scanScript splits src at the semicolons that end statements. Every
// segment but the last ended with a ;; the last is the text after the
// final ; and mode is the lexical state at the end of src (inCode when
// nothing is left open). bang reports an executable comment left open.
func scanScript(src string) (segs []segment, mode lexMode, bang bool) {
	start, code := 0, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch mode {
		case inSingle, inDouble:
			quote := byte('\'')
			if mode == inDouble {
				quote = '"'
			}
			switch {
			case c == '\\':
				i++ // the escaped byte
			case c == quote && i+1 < len(src) && src[i+1] == quote:
				i++ // a doubled quote
			case c == quote:
				mode = inCode
			}
			continue
		case inBacktick:
			if c == '`' {
				if i+1 < len(src) && src[i+1] == '`' {
					i++
				} else {
					mode = inCode
				}
			}
			continue
		case inBlock:
			if c == '*' && i+1 < len(src) && src[i+1] == '/' {
				i++
				mode = inCode
			}
			continue
		case inLine:
			if c == '\n' {
				mode = inCode
			}
			continue
		}
		switch {
		case c == '\'':
			mode, code = inSingle, true
		case c == '"':
			mode, code = inDouble, true
		case c == '`':
			mode, code = inBacktick, true
		case c == '#':
			mode = inLine
		case c == '-' && strings.HasPrefix(src[i:], "--") && (i+2 == len(src) || unicode.IsSpace(rune(src[i+2]))):
			mode = inLine
			i++
		case c == '/' && strings.HasPrefix(src[i:], "/*!"):
			bang, code = true, true
			i += 2
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			mode = inBlock
			i++
		case c == '*' && bang && strings.HasPrefix(src[i:], "*/"):
			bang = false
			i++
		case c == ';' && !bang:
			segs = append(segs, segment{start: start, end: i, code: code})
			start, code = i+1, false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		default:
			code = true
		}
	}
	if mode == inLine {
		mode = inCode // the end of the input ends the comment
	}
	return append(segs, segment{start: start, end: len(src), code: code}), mode, bang
}

// firstKeyword returns the first word of a statement in upper case,
// skipping spaces, comments and opening parentheses; "" when it starts
// with anything else.
func firstKeyword(stmt string) string {
	i := 0
	for i < len(stmt) {
		c := stmt[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '(':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(stmt[i:], "--") && (i+2 == len(stmt) || unicode.IsSpace(rune(stmt[i+2])))):
			nl := strings.IndexByte(stmt[i:], '\n')
			if nl < 0 {
				return ""
			}
			i += nl + 1
		case strings.HasPrefix(stmt[i:], "/*!"):
			i += 3
			for i < len(stmt) && stmt[i] >= '0' && stmt[i] <= '9' {
				i++
			}
		case strings.HasPrefix(stmt[i:], "/*"):
			end := strings.Index(stmt[i+2:], "*/")
			if end < 0 {
				return ""
			}
			i += 2 + end + 2
		default:
			j := i
			for j < len(stmt) && (stmt[j]|0x20 >= 'a' && stmt[j]|0x20 <= 'z') {
				j++
			}
			return strings.ToUpper(stmt[i:j])
		}
	}
	return ""
}

// statementKind says which RPC runs a statement.
type statementKind int

const (
	kindQuery  statementKind = iota // Execute, then DoGet the rows
	kindUpdate                      // ExecuteUpdate: CREATE, INSERT, DROP
	kindUse                         // ExecuteUpdate; the session's schema changes
)

// kindOf picks the RPC for a statement by its first keyword. It only picks
// the RPC: the gateway parses and authorizes the statement either way.
func kindOf(stmt string) statementKind {
	switch firstKeyword(stmt) {
	case "CREATE", "INSERT", "DROP":
		return kindUpdate
	case "USE":
		return kindUse
	}
	return kindQuery
}

// isUpdate reports whether a statement changes data (CREATE, INSERT, DROP)
// and so goes through ExecuteUpdate instead of a query.
func isUpdate(sql string) bool { return kindOf(sql) == kindUpdate }
