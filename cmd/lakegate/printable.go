package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable returns s as it may go to a terminal in a table: tabs and line
// feeds become spaces (they would break the columns), and control
// characters (C0 but those two, DEL, C1), format characters (bidirectional
// overrides and isolates, zero-width characters), line and paragraph
// separators and bytes that are not UTF-8 are written as Go escapes (\x1b,
// \u202e, \xff). A value read from a table, written by anyone who may write
// it, then cannot move the cursor, clear the screen, set the window title or
// the clipboard, overwrite the line, or reorder the text around it.
func printable(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = s[i] >= 0x20 && s[i] < 0x7f
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || r == '\n':
			b.WriteByte(' ')
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
