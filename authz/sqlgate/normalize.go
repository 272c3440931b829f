package sqlgate

import (
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
)

// MaxNormalizedBytes bounds Normalize's result; a longer one is cut and
// ends with TruncatedMarker.
const MaxNormalizedBytes = 64 << 10

// TruncatedMarker ends a normalised statement that was cut for length.
const TruncatedMarker = " /* truncated */"

// RedactedMarker ends a normalised statement cut at a quote or comment
// that survived normalisation (see Normalize).
const RedactedMarker = " /* redacted */"

// Normalize returns sql with every literal replaced by "?", so that no
// value typed into a statement is kept: the text the access log stores.
//
// It is the TiDB lexer's normalisation (parser.Normalize): tokens joined
// by single spaces, keywords and identifiers lowercased, identifiers
// backquoted; string, number, hex, bit and date literals become "?" (a
// charset introducer "(_charset)"), lists of them "...", so IN (1, 2, 3)
// reads "in ( ... )"; comments and optimizer hints are dropped, and the
// code of executable comments (/*! … */) is normalised like the rest.
// Integers right after ORDER BY or GROUP BY are column positions, not
// values, and stay. Text after a lexical error (an unterminated string, for
// one) is dropped.
//
// Defence in depth: a quote or comment opener in the result can only come
// from an identifier that contains one, or from a lexer path that let
// text through; the result is then cut before it and ends with
// RedactedMarker. A result longer than MaxNormalizedBytes is cut at a
// character boundary and ends with TruncatedMarker. The result is valid
// UTF-8.
func Normalize(sql string) string {
	// "ON" is pingcap/errors' RedactLogEnable: literals become "?".
	out := parser.Normalize(sql, "ON")
	out = strings.ToValidUTF8(out, "?")
	if i := suspect(out); i >= 0 {
		out = strings.TrimRight(out[:i], " ") + RedactedMarker
	}
	if len(out) > MaxNormalizedBytes {
		cut := MaxNormalizedBytes - len(TruncatedMarker)
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + TruncatedMarker
	}
	return out
}

// suspect returns the index of the first quote or comment opener in a
// normalised statement, or -1.
func suspect(s string) int {
	i := strings.IndexAny(s, `'"`)
	if j := strings.Index(s, "/*"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	return i
}
