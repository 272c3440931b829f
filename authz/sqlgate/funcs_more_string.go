package sqlgate

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// The rewrites of MySQL's string, regular-expression, numeric, bit,
// information and miscellaneous functions of the function table (funcs.go).
// The same rule holds: a form that cannot give MySQL's answer is refused, at
// the gate or, where the answer depends on a value or a type the gate cannot
// see, by the engine at run time (error('…')).

// ---- helpers ----

// text and num print constant text of this package as a string or number
// literal.
func text(s string) *litExpr { return &litExpr{text: s, isText: true} }
func num(n int64) *litExpr   { return &litExpr{text: strconv.FormatInt(n, 10)} }

// runErr is a refusal the engine raises at run time, for a value the gate
// could not see.
func runErr(msg string) string { return "error('" + strings.ReplaceAll(msg, "'", "''") + "')" }

// intTypes are DuckDB's integer types, as typeof names them.
const intTypes = "('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'UHUGEINT', 'BOOLEAN')"

// strArg is MySQL's string of e (see mysqlStr). Refused at run time: a
// BLOB (DuckDB's text of one is not its bytes) and a DATETIME or TIME
// (MySQL prints as many fractional digits as the column declares, DuckDB
// none for a whole second).
func strArg(e ast.ExprNode) ast.ExprNode {
	if _, ok := e.(*binaryText); ok {
		return tx(runErr("binary strings are not supported here"))
	}
	if _, ok := textLit(e); ok {
		return e
	}
	if _, ok := intLit(e); ok || isNullLit(e) {
		return mysqlStr(e)
	}
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (typeof(", r[0], ") = 'BLOB') THEN "+runErr("binary strings are not supported here")+" WHEN ((typeof(", r[0], ") LIKE 'TIMESTAMP%') OR (typeof(", r[0], ") LIKE 'TIME%')) THEN "+
			runErr("a DATETIME or TIME as a string is not supported here (MySQL prints its declared fractional digits); use DATE_FORMAT")+" ELSE ", mysqlStr(r[0]), " END")
	})
}

// u64Arg is MySQL's unsigned 64-bit integer of e, as a HUGEINT in
// 0 … 2^64-1: integers and booleans as two's complement, DECIMALs rounded
// half away from zero (as both do), strings holding an integer. DOUBLEs
// (MySQL rounds them to even), other strings (MySQL reads their integer
// prefix) and values outside 64 bits are refused at run time.
func u64Arg(e ast.ExprNode) ast.ExprNode {
	if n, ok := intLit(e); ok {
		return tx("(CAST(", num(n), " AS HUGEINT) & 18446744073709551615)")
	}
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN ((typeof(", r[0], ") IN "+intTypes+") OR (typeof(", r[0], ") LIKE 'DECIMAL%') OR ((typeof(", r[0],
			") = 'VARCHAR') AND regexp_full_match(CAST(", r[0], " AS VARCHAR), '\\s*[+-]?[0-9]{1,20}\\s*'))) AND (CAST(", r[0],
			" AS HUGEINT) BETWEEN -9223372036854775808 AND 18446744073709551615) THEN (CAST(", r[0], " AS HUGEINT) & 18446744073709551615) ELSE "+
				runErr("this argument must be an integer of at most 64 bits (a DOUBLE or a non-integer string is not supported)")+" END")
	})
}

// capped makes the engine refuse a string e longer than DefaultStringBytes
// once built, for a function whose result may outgrow its arguments (the
// limit pass counts it as wide as its widest argument): every such result
// stays bounded, nested or not.
func capped(fn string, e ast.ExprNode) ast.ExprNode {
	return letx([]ast.ExprNode{e}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (strlen(", r[0], ") > "+strconv.Itoa(DefaultStringBytes)+") THEN "+engineCheck(DefaultStringBytes, fn)+" ELSE ", r[0], " END")
	})
}

// ---- numbers and bits ----

// rwUnitDomain: ASIN/ACOS are NULL outside -1 … 1 in MySQL, an error in
// DuckDB.
func rwUnitDomain(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return &tmplExpr{parts: []any{"CASE WHEN (", r[0], " BETWEEN -1 AND 1) THEN " + name + "(", r[0], ") END"}, dbl: true}
	}), nil
}

// rwAtan: ATAN(y, x) is ATAN2(y, x).
func rwAtan(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) == 2 {
		return &callExpr{name: "atan2", args: args, dbl: true}, nil
	}
	return &callExpr{name: "atan", args: args, dbl: true}, nil
}

// rwBitCount: the set bits of the unsigned 64-bit value (DuckDB counts
// within the argument's own width: BIT_COUNT(-1) would be 32).
func rwBitCount(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return tx("CAST(bit_count(CAST(", u64Arg(args[0]), " AS UBIGINT)) AS BIGINT)"), nil
}

// rwRadix: BIN(N), OCT(N): the digits of N as an unsigned 64-bit integer.
// A DECIMAL is refused: MySQL reads N as CONV does.
func rwRadix(code string, args []ast.ExprNode) (ast.ExprNode, error) {
	if isDouble(args[0]) {
		return nil, unsupported("BIN and OCT of a DOUBLE are not supported")
	}
	return letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (typeof(", r[0], ") LIKE 'DECIMAL%') THEN "+runErr("BIN and OCT of a DECIMAL are not supported")+" ELSE format('{:"+code+"}', CAST(", u64Arg(r[0]), " AS UBIGINT)) END")
	}), nil
}

// rwCRC32: the CRC-32 (IEEE, as zlib's) of the string's bytes, computed
// bit by bit over the bytes read from its hex form: DuckDB has no CRC-32.
func rwCRC32(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	h := tx("hex(", strArg(args[0]), ")")
	if _, ok := args[0].(*binaryText); ok {
		h = tx("hex(", args[0], ")")
	}
	return letx([]ast.ExprNode{h}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL ELSE xor(list_reduce(list_transform(range(0, strlen(", r[0], "), 2), lambda __lg_i: CAST(('0x' || substring(", r[0],
			", (__lg_i + 1), 2)) AS BIGINT)), lambda __lg_a, __lg_b: list_reduce(range(8), lambda __lg_c, __lg_d: xor((__lg_c >> 1), (3988292384 & (-(__lg_c & 1)))), xor(__lg_a, __lg_b)), CAST(4294967295 AS BIGINT)), 4294967295) END")
	}), nil
}

// rwSoundex: MySQL's SOUNDEX (not truncated to four characters): the
// first letter, then the codes of the following letters, a vowel's (0)
// dropped and a code equal to the last one kept skipped, padded with 0 to
// four characters; non-letters are ignored. A string with a non-ASCII
// character (a letter to MySQL, treated as a vowel) is refused at run time.
func rwSoundex(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	const letters, codes = "'ABCDEFGHIJKLMNOPQRSTUVWXYZ'", "'01230120022455012623010202'"
	return letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		// L: the letters, upper-cased; C: the first letter's code, then the
		// other letters' codes without vowels. A code equal to the one
		// before it in C is skipped (it equals the last one kept).
		l := tx("upper(regexp_replace(", r[0], ", '[^A-Za-z]', '', 'g'))")
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN regexp_matches(", r[0], ", '[^\\x00-\\x7F]') THEN "+runErr("SOUNDEX of a non-ASCII string is not supported")+
			" ELSE ", letx([]ast.ExprNode{l}, func(l []ast.ExprNode) *tmplExpr {
			c := tx("list_prepend(translate(left(", l[0], ", 1), "+letters+", "+codes+"), string_split(replace(translate(substring(", l[0], ", 2), "+letters+", "+codes+"), '0', ''), ''))")
			return tx("CASE WHEN (", l[0], " = '') THEN '' ELSE ", letx([]ast.ExprNode{l[0], c}, func(q []ast.ExprNode) *tmplExpr {
				out := tx("(left(", q[0], ", 1) || array_to_string(list_transform(range(2, (len(", q[1], ") + 1)), lambda __lg_i: CASE WHEN (", q[1], "[__lg_i] = ", q[1], "[(__lg_i - 1)]) THEN '' ELSE ", q[1], "[__lg_i] END), ''))")
				return letx([]ast.ExprNode{out}, func(o []ast.ExprNode) *tmplExpr {
					return tx("CASE WHEN (length(", o[0], ") < 4) THEN rpad(", o[0], ", 4, '0') ELSE ", o[0], " END")
				})
			}), " END")
		}), " END")
	}), nil
}

// rwConv: CONV(N, from, to) with literal bases. MySQL reads N as a string:
// leading whitespace, a sign, then the longest run of digits of the base
// (a negative from base reads a signed number); it prints the value as an
// unsigned 64-bit integer (signed for a negative to base) in the to base,
// with upper-case letters. A base outside 2 … 36 gives NULL. No digits,
// and a value beyond 64 bits (which MySQL clips), are refused at run time.
func rwConv(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	fb, fok := intLit(args[1])
	tb, tok := intLit(args[2])
	if !fok || !tok {
		return nil, unsupported("CONV takes integer literal bases")
	}
	from, to := max(fb, -fb), max(tb, -tb)
	if from < 2 || from > 36 || to < 2 || to > 36 {
		return tx("CAST(NULL AS VARCHAR)"), nil
	}
	const alpha = "0123456789abcdefghijklmnopqrstuvwxyz"
	d := alpha[from-1 : from]
	class := "0-" + d
	if from > 10 {
		class = "0-9a-" + d + "A-" + strings.ToUpper(d)
	}
	// Digits that cannot overflow a HUGEINT while read: from^k < 2^126.
	maxDigits := int(126 / math.Log2(float64(from)))
	// The powers of the to base up to 2^64, highest first.
	var pows []string
	for p := uint64(1); ; p *= uint64(to) {
		pows = append([]string{strconv.FormatUint(p, 10)}, pows...)
		if p > (1<<64-1)/uint64(to) {
			break
		}
	}
	digitsOf := func(x ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", x, " = 0) THEN '0' ELSE ltrim(array_to_string(list_transform(CAST(["+strings.Join(pows, ", ")+"] AS HUGEINT[]), lambda __lg_p: substring('"+
			strings.ToUpper(alpha)+"', (CAST(((", x, " // __lg_p) % "+strconv.FormatInt(to, 10)+") AS BIGINT) + 1), 1)), ''), '0') END")
	}
	tooBig := runErr("CONV of a value beyond 64 bits is not supported")
	re := text(`^[ \t\n\r\x0B\x0C]*([+-]?)([` + class + `]*)`)
	return letx([]ast.ExprNode{tx("regexp_extract(", strArg(args[0]), ", ", re, ", ['s', 'd'])")}, func(r []ast.ExprNode) *tmplExpr {
		sign, dg := tx(r[0], ".s"), tx(r[0], ".d")
		v := tx("list_reduce(list_transform(string_split(", dg, ", ''), lambda __lg_c: (strpos('"+alpha+"', lower(__lg_c)) - 1)), lambda __lg_a, __lg_b: ((__lg_a * "+
			strconv.FormatInt(from, 10)+") + __lg_b), CAST(0 AS HUGEINT))")
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN (", dg, " = '') THEN "+runErr("CONV of a string without digits is not supported")+
			" WHEN (length(", dg, ") > "+strconv.Itoa(maxDigits)+") THEN "+tooBig+" ELSE ", letx([]ast.ExprNode{sign, v}, func(q []ast.ExprNode) *tmplExpr {
			limit := tx("18446744073709551615")
			if fb < 0 { // a signed value: -2^63 … 2^63-1
				limit = tx("CASE WHEN (", q[0], " = '-') THEN 9223372036854775808 ELSE 9223372036854775807 END")
			}
			u := tx("CASE WHEN (", q[0], " = '-') THEN ((18446744073709551616 - ", q[1], ") % 18446744073709551616) ELSE ", q[1], " END")
			return tx("CASE WHEN (", q[1], " > ", limit, ") THEN "+tooBig+" ELSE ", letx([]ast.ExprNode{u}, func(w []ast.ExprNode) *tmplExpr {
				if tb > 0 {
					return digitsOf(w[0])
				}
				return tx("CASE WHEN (", w[0], " >= 9223372036854775808) THEN ('-' || ", digitsOf(tx("(18446744073709551616 - ", w[0], ")")), ") ELSE ", digitsOf(w[0]), " END")
			}), " END")
		}), " END")
	}), nil
}

// ---- strings ----

func rwBitLength(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return tx("(strlen(", strArg(args[0]), ") * 8)"), nil
}

// rwOrd: the bytes of the first character's UTF-8 encoding read as a
// big-endian number (MySQL's ORD for utf8mb4); 0 for ”.
func rwOrd(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{tx("CAST(unicode(", strArg(args[0]), ") AS BIGINT)")}, func(r []ast.ExprNode) *tmplExpr {
		c := r[0]
		return tx("CASE WHEN (", c, " IS NULL) THEN NULL WHEN (", c, " < 0) THEN 0 WHEN (", c, " < 128) THEN ", c,
			" WHEN (", c, " < 2048) THEN (((192 | (", c, " >> 6)) * 256) + (128 | (", c, " & 63)))",
			" WHEN (", c, " < 65536) THEN (((((224 | (", c, " >> 12)) * 256) + (128 | ((", c, " >> 6) & 63))) * 256) + (128 | (", c, " & 63)))",
			" ELSE (((((((240 | (", c, " >> 18)) * 256) + (128 | ((", c, " >> 12) & 63))) * 256) + (128 | ((", c, " >> 6) & 63))) * 256) + (128 | (", c, " & 63))) END")
	}), nil
}

// rwHex: HEX of a string is the hex of its bytes; of a number, of the
// number rounded half away from zero to a 64-bit integer. A binary string
// is read as its bytes only where the gate made it (UNHEX, FROM_BASE64,
// UUID_TO_BIN); a BLOB column is refused at run time (strArg).
func rwHex(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if _, ok := args[0].(*binaryText); ok {
		return capped("HEX", &callExpr{name: "hex", args: args}), nil
	}
	if _, ok := textLit(args[0]); ok {
		return capped("HEX", &callExpr{name: "hex", args: args}), nil
	}
	if n, ok := intLit(args[0]); ok {
		return tx("hex(CAST((CAST(", num(n), " AS HUGEINT) & 18446744073709551615) AS UBIGINT))"), nil
	}
	return capped("HEX", letx(args, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN (typeof(", r[0], ") IN ('VARCHAR', 'BLOB')) THEN hex(", strArg(r[0]),
			") WHEN (typeof(", r[0], ") IN ('DOUBLE', 'FLOAT')) THEN hex(CAST(CAST(round(CAST(", r[0], " AS DOUBLE)) AS BIGINT) AS UBIGINT)) ELSE hex(CAST(", u64Arg(r[0]), " AS UBIGINT)) END")
	})), nil
}

// binaryText is a binary string (BLOB) the gate made: HEX, TO_BASE64 and
// BIN_TO_UUID read its bytes; other string functions refuse it.
type binaryText struct{ *tmplExpr }

// rwUnhex: NULL for a non-hex digit; an odd count reads as if led by 0.
// The result is a binary string (BLOB), as MySQL's.
func rwUnhex(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return &binaryText{letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) OR (NOT regexp_full_match(", r[0], ", '[0-9A-Fa-f]*')) THEN NULL WHEN ((strlen(", r[0],
			") % 2) = 1) THEN unhex(('0' || ", r[0], ")) ELSE unhex(", r[0], ") END")
	})}, nil
}

// rwToBase64: MySQL breaks the encoding into lines of 76 characters.
func rwToBase64(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	enc := tx("to_base64(encode(", strArg(args[0]), "))")
	if _, ok := args[0].(*binaryText); ok {
		enc = tx("to_base64(", args[0], ")")
	}
	return capped("TO_BASE64", letx([]ast.ExprNode{enc}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (strlen(", r[0], ") <= 76) THEN ", r[0], " ELSE rtrim(regexp_replace(", r[0], ", '(.{76})', '\\1' || chr(10), 'g'), chr(10)) END")
	})), nil
}

// rwFromBase64: decodes after dropping the whitespace MySQL ignores; NULL
// for a character outside the alphabet; padding MySQL's manual does not
// describe is refused at run time.
func rwFromBase64(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	s := tx("regexp_replace(", strArg(args[0]), ", '[ \\t\\n\\r]', '', 'g')")
	return &binaryText{letx([]ast.ExprNode{s}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN regexp_full_match(", r[0], ", '([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?') THEN from_base64(", r[0],
			") WHEN regexp_full_match(", r[0], ", '[A-Za-z0-9+/=]*') THEN "+runErr("FROM_BASE64 of this padding is not supported")+" ELSE NULL END")
	})}, nil
}

// rwInsert: INSERT(s, pos, len, new) as MySQL's: s unchanged for pos
// below 1 or beyond its length in bytes (so, for a string of multi-byte
// characters, a pos past the last character appends new); a negative len
// or one beyond the length in bytes replaces the rest. Positions and
// lengths count characters otherwise.
func rwInsert(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	vals := []ast.ExprNode{strArg(args[0]), args[1], args[2], strArg(args[3])}
	return capped("INSERT", letx(vals, func(r []ast.ExprNode) *tmplExpr {
		return nullIfAny(r, "CASE WHEN (NOT (typeof(", r[1], ") IN "+intTypes+")) OR (NOT (typeof(", r[2], ") IN "+intTypes+")) THEN "+
			runErr("INSERT takes integer positions and lengths")+" WHEN (", r[1], " < 1) OR (", r[1], " > strlen(", r[0], ")) THEN ", r[0],
			" WHEN (", r[2], " < 0) OR (", r[2], " > strlen(", r[0], ")) THEN (substring(", r[0], ", 1, (", r[1], " - 1)) || ", r[3],
			") ELSE ((substring(", r[0], ", 1, (", r[1], " - 1)) || ", r[3], ") || substring(", r[0], ", (", r[1], " + ", r[2], "))) END")
	})), nil
}

// rwElt: ELT(n, s1, s2, …) is sn as a string, NULL for n outside 1 … k.
func rwElt(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	vals := []ast.ExprNode{args[0]}
	for _, a := range args[1:] {
		vals = append(vals, strArg(a))
	}
	return letx(vals, func(r []ast.ExprNode) *tmplExpr {
		parts := []any{"CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN (NOT (typeof(", r[0], ") IN " + intTypes + ")) THEN " + runErr("ELT takes an integer index")}
		for i, x := range r[1:] {
			parts = append(parts, " WHEN (", r[0], " = "+strconv.Itoa(i+1)+") THEN ", x)
		}
		return tx(append(parts, " ELSE NULL END")...)
	}), nil
}

// rwFindInSet: the 1-based place of s in the comma-separated list, compared
// as the default collation does (case and accents folded); 0 when absent,
// for an empty list, when s holds a comma, or when the list has fewer
// bytes than s (MySQL does not search then: FIND_IN_SET('é', 'e') is 0).
func rwFindInSet(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{strArg(args[0]), strArg(args[1])}, func(r []ast.ExprNode) *tmplExpr {
		return nullIfAny(r, "CASE WHEN (", r[1], " = '') OR (strpos(", r[0], ", ',') > 0) OR (strlen(", r[1], ") < strlen(", r[0], ")) THEN 0 ELSE CAST(coalesce(list_position(string_split(lower(strip_accents(", r[1],
			")), ','), lower(strip_accents(", r[0], "))), 0) AS BIGINT) END")
	}), nil
}

// rwMakeSet: the strings whose bit is set in bits, joined by commas; NULL
// strings skipped.
func rwMakeSet(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) > 65 {
		return nil, unsupported("MAKE_SET takes at most 64 strings")
	}
	vals := []ast.ExprNode{u64Arg(args[0])}
	for _, a := range args[1:] {
		vals = append(vals, strArg(a))
	}
	return capped("MAKE_SET", letx(vals, func(r []ast.ExprNode) *tmplExpr {
		parts := []any{"CASE WHEN (", r[0], " IS NULL) THEN NULL ELSE concat_ws(','"}
		for i, x := range r[1:] {
			parts = append(parts, ", CASE WHEN (((", r[0], " >> "+strconv.Itoa(i)+") & 1) = 1) THEN ", x, " END")
		}
		return tx(append(parts, ") END")...)
	})), nil
}

// rwExportSet: EXPORT_SET(bits, on, off[, sep[, n]]): on or off for each of
// the n (at most 64) low bits, joined by sep (a comma by default).
func rwExportSet(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	n := int64(64)
	if len(args) == 5 {
		var ok bool
		if n, ok = intLit(args[4]); !ok {
			return nil, unsupported("EXPORT_SET takes an integer literal count of bits")
		}
		if n < 0 || n > 64 {
			n = 64 // MySQL reads it unsigned and clips it to 64
		}
	}
	sep := ast.ExprNode(text(","))
	if len(args) >= 4 {
		sep = strArg(args[3])
	}
	vals := []ast.ExprNode{u64Arg(args[0]), strArg(args[1]), strArg(args[2]), sep}
	return capped("EXPORT_SET", letx(vals, func(r []ast.ExprNode) *tmplExpr {
		ns := strconv.FormatInt(n, 10)
		return nullIfAny(r, "CASE WHEN (("+ns+" * (greatest(strlen(", r[1], "), strlen(", r[2], ")) + strlen(", r[3], "))) > "+strconv.Itoa(DefaultStringBytes)+") THEN "+engineCheck(DefaultStringBytes, "EXPORT_SET")+
			" ELSE array_to_string(list_transform(range("+ns+"), lambda __lg_i: (CASE WHEN (__lg_i = 0) THEN '' ELSE ", r[3], " END || CASE WHEN (((", r[0], " >> __lg_i) & 1) = 1) THEN ", r[1], " ELSE ", r[2], " END)), '') END")
	})), nil
}

// rwQuote: the string quoted for an SQL statement (\, ' NUL and ^Z
// escaped); the word NULL for NULL.
func rwQuote(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return capped("QUOTE", letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN 'NULL' ELSE ('''' || replace(replace(replace(replace(", r[0],
			", '\\', '\\\\'), '''', '\\'''), chr(0), '\\0'), chr(26), '\\Z') || '''') END")
	})), nil
}

// rwStrcmp: -1, 0 or 1 as the default collation (utf8mb4_0900_ai_ci)
// orders the strings. Strings equal without case and accents are equal.
// Otherwise the first character where they differ decides; where it is not
// a space, a digit or a letter (whose order the byte order of the folded
// strings keeps), the answer is refused at run time.
func rwStrcmp(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{strArg(args[0]), strArg(args[1])}, func(r []ast.ExprNode) *tmplExpr {
		fold := []ast.ExprNode{tx("lower(strip_accents(", r[0], "))"), tx("lower(strip_accents(", r[1], "))")}
		return nullIfAny(r, letx(fold, func(f []ast.ExprNode) *tmplExpr {
			i := tx("list_position(list_transform(range(1, (greatest(length(", f[0], "), length(", f[1], ")) + 1)), lambda __lg_i: (substring(", f[0],
				", __lg_i, 1) = substring(", f[1], ", __lg_i, 1))), false)")
			return tx("CASE WHEN (", f[0], " = ", f[1], ") THEN 0 ELSE ", letx([]ast.ExprNode{tx("substring(", f[0], ", ", i, ", 1)"), tx("substring(", f[1], ", ", i, ", 1)")},
				func(c []ast.ExprNode) *tmplExpr {
					return tx("CASE WHEN (NOT regexp_full_match((", c[0], " || ", c[1], "), '[ 0-9a-z]*')) THEN "+runErr("STRCMP of strings that first differ in a character other than a space, a digit or a letter is not supported")+
						" WHEN (", c[0], " < ", c[1], ") THEN -1 ELSE 1 END")
				}), " END")
		}))
	}), nil
}

// rwSHA2: SHA2(s, 256) (or 0, which means 256); other lengths MySQL knows
// are refused (the engine has no SHA-224/384/512), unknown ones are NULL.
func rwSHA2(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	n, ok := intLit(args[1])
	if !ok {
		return nil, unsupported("SHA2 takes an integer literal hash length")
	}
	switch n {
	case 0, 256:
		return &callExpr{name: "sha256", args: []ast.ExprNode{strArg(args[0])}}, nil
	case 224, 384, 512:
		return nil, unsupported("SHA2 with a hash length of %d is not supported (only 256)", n)
	}
	return tx("CAST(NULL AS VARCHAR)"), nil
}

// ---- regular expressions ----

// regexpOpts are the options of one REGEXP_* call.
type regexpOpts struct {
	ci, multi, dotall bool
	dollar            bool // $ outside a class
	anchor            bool // ^, \A, \b, \B: meaning depends on what precedes the start
	shorthand         bool // \d \w \s \b and their negations: ASCII in RE2, Unicode in ICU
}

// foldSpecial holds the characters whose full case folding (ICU's, in a
// case-insensitive match) differs from the simple one (RE2's).
const foldSpecial = `\x{DF}\x{130}\x{149}\x{1F0}\x{390}\x{3B0}\x{587}\x{1E96}-\x{1E9E}\x{1F50}-\x{1FFF}\x{FB00}-\x{FB17}`

// translateRegexp checks that a MySQL (ICU) pattern means the same to RE2,
// refusing what it cannot vouch for: back references, octal and other
// escapes that differ, nested or combined classes, inline flags other than
// i, m and s, lookaround (RE2 has none), and odd repetitions.
func translateRegexp(p string, o *regexpOpts) error {
	bad := func(what string) error {
		return unsupported("regular expressions with %s are not supported", what)
	}
	inClass := false
	classStart := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(p[i:])
			if o.ci && isFoldSpecial(r) {
				return bad("this character in a case-insensitive match")
			}
			i += size - 1
			continue
		}
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return bad("a trailing backslash")
			}
			i++
			e := p[i]
			switch {
			case strings.IndexByte("dDwWsS", e) >= 0:
				o.shorthand = true
			case e == 'b' || e == 'B':
				if inClass {
					return bad(`\b in a class`)
				}
				o.shorthand, o.anchor = true, true
			case e == 'A':
				o.anchor = true
			case strings.IndexByte("tnrfz", e) >= 0:
			case e == 'x' || e == 'p' || e == 'P':
				// \xhh, \x{h…}, \p{…}: the same in both (RE2 refuses the
				// properties it lacks)
			case e == 'Q':
				j := strings.Index(p[i+1:], `\E`)
				if j < 0 {
					return bad(`\Q without \E`)
				}
				i += j + 2
			case e < utf8.RuneSelf && (e >= '0' && e <= '9' || e >= 'a' && e <= 'z' || e >= 'A' && e <= 'Z'):
				return bad(`\` + string(e))
			}
		case inClass:
			switch {
			case c == '[' && i+1 < len(p) && p[i+1] == ':':
				o.shorthand = true // [[:alpha:]] is Unicode in ICU, ASCII in RE2
				j := strings.Index(p[i:], ":]")
				if j < 0 {
					return bad("an unterminated character class")
				}
				i += j + 1
			case c == '[':
				return bad("nested character classes")
			case c == '&' && i+1 < len(p) && p[i+1] == '&', c == '-' && i+1 < len(p) && p[i+1] == '-':
				return bad("set operations in a class")
			case c == ']' && i > classStart:
				inClass = false
			}
		case c == '[':
			inClass = true
			classStart = i + 1
			if classStart < len(p) && p[classStart] == '^' {
				classStart++
			}
			if classStart < len(p) && p[classStart] == ']' {
				return bad("a class starting with ]")
			}
		case c == '(' && i+1 < len(p) && p[i+1] == '?':
			j := i + 2
			for j < len(p) && strings.IndexByte("ims-", p[j]) >= 0 {
				j++
			}
			if j >= len(p) || p[j] != ':' && p[j] != ')' || j == i+2 && p[j] == ')' {
				return bad("(? groups other than (?:…) and the flags i, m and s")
			}
		case c == '{':
			j := i + 1
			for j < len(p) && (p[j] >= '0' && p[j] <= '9' || p[j] == ',') {
				j++
			}
			if j == i+1 || j >= len(p) || p[j] != '}' || p[i+1] == ',' || strings.Count(p[i+1:j], ",") > 1 {
				return bad("a { that is not a repetition")
			}
			i = j
		case c == '$':
			o.dollar = true
		case c == '^':
			o.anchor = true
		}
	}
	if inClass {
		return bad("an unterminated character class")
	}
	return nil
}

func isFoldSpecial(r rune) bool {
	switch {
	case r == 0xDF, r == 0x130, r == 0x149, r == 0x1F0, r == 0x390, r == 0x3B0, r == 0x587,
		r >= 0x1E96 && r <= 0x1E9E, r >= 0x1F50 && r <= 0x1FFF, r >= 0xFB00 && r <= 0xFB17:
		return true
	}
	return false
}

// regexpIntArg reads an optional integer literal argument of REGEXP_*.
func regexpIntArg(args []ast.ExprNode, i int, def, min int64, what string) (int64, error) {
	if i >= len(args) {
		return def, nil
	}
	n, ok := intLit(args[i])
	if !ok || n < min {
		return 0, unsupported("the %s of a REGEXP function must be an integer literal of at least %d", what, min)
	}
	return n, nil
}

// rwRegexp translates REGEXP_LIKE, REGEXP_SUBSTR, REGEXP_INSTR and
// REGEXP_REPLACE (fn is like, substr, instr or replace). The pattern (and
// the replacement, the position, occurrence and return option, and the
// match type) must be literals. MySQL's regular expressions are ICU's,
// case-insensitive under the default collation; RE2 means the same for the
// patterns translateRegexp accepts over subjects without the characters on
// which the two differ: ICU's other line terminators (\r, \x0B, \x0C,
// \x85, \u2028, \u2029), a final \n before which ICU's $ also matches,
// non-ASCII characters where \d \w \s \b are Unicode in ICU, and the
// characters whose full case folding differs. A subject holding one is
// refused at run time, as is a pattern matching the empty string (the
// engines step past an empty match differently).
func rwRegexp(fn string, args []ast.ExprNode) (ast.ExprNode, error) {
	pat, ok := textLit(args[1])
	if !ok {
		return nil, unsupported("REGEXP functions take a string literal pattern")
	}
	o := regexpOpts{ci: !binaryColl(args[0])}
	rest := args[2:]
	var repl string
	if fn == "replace" {
		if repl, ok = textLit(args[2]); !ok || strings.ContainsAny(repl, `\$`) {
			return nil, unsupported("REGEXP_REPLACE takes a string literal replacement without \\ or $")
		}
		rest = args[3:]
	}
	// The trailing match type, where this function takes one.
	nNum := map[string]int{"like": 0, "substr": 2, "instr": 3, "replace": 2}[fn]
	if len(rest) > nNum {
		mt, ok := textLit(rest[nNum])
		if !ok {
			return nil, unsupported("the match type of a REGEXP function must be a string literal")
		}
		for _, c := range mt {
			switch c {
			case 'c':
				o.ci = false
			case 'i':
				o.ci = true
			case 'm':
				o.multi = true
			case 'n':
				o.dotall = true
			default:
				return nil, unsupported("REGEXP match type %q is not supported (c, i, m and n are)", string(c))
			}
		}
		rest = rest[:nNum]
	}
	if err := translateRegexp(pat, &o); err != nil {
		return nil, err
	}
	pos, err := regexpIntArg(rest, 0, 1, 1, "position")
	if err != nil {
		return nil, err
	}
	occDef, occMin := int64(1), int64(1)
	if fn == "replace" {
		occDef, occMin = 0, 0 // 0: every match
	}
	occ, err := regexpIntArg(rest, 1, occDef, occMin, "occurrence")
	if err != nil {
		return nil, err
	}
	ret, err := regexpIntArg(rest, 2, 0, 0, "return option")
	if err != nil || ret > 1 {
		return nil, unsupported("the return option of REGEXP_INSTR must be 0 or 1")
	}
	if pos > 1 && o.anchor {
		return nil, unsupported("REGEXP functions with a position and an anchor (^, \\A, \\b, \\B) are not supported")
	}
	flags := ""
	if o.ci {
		flags += "i"
	}
	if o.multi {
		flags += "m"
	}
	if o.dotall {
		flags += "s"
	}
	if flags != "" {
		pat = "(?" + flags + ")" + pat
	}
	P := text(pat)
	guard := `[\r\x0B\x0C\x{85}\x{2028}\x{2029}`
	if o.ci {
		guard += foldSpecial
	}
	if o.shorthand {
		guard += `\x{80}-\x{10FFFF}`
	}
	guard += "]"
	if o.dollar && !o.multi {
		guard += `|\n\z`
	}
	G := text(guard)
	sub := func(s ast.ExprNode) ast.ExprNode {
		if pos == 1 {
			return s
		}
		return tx("substring(", s, ", "+strconv.FormatInt(pos, 10)+")")
	}
	k := strconv.FormatInt(occ, 10)
	body := func(s ast.ExprNode) *tmplExpr {
		if fn == "like" {
			return tx("CAST(regexp_matches(", s, ", ", P, ") AS BIGINT)")
		}
		// S: the subject, M: its matches (bound once).
		return letx([]ast.ExprNode{s, tx("regexp_extract_all(", sub(s), ", ", P, ")")}, func(r []ast.ExprNode) *tmplExpr {
			S, M := r[0], r[1]
			out := []any{"CASE WHEN list_contains(", M, ", '') THEN " + runErr("REGEXP functions with a pattern that matches an empty string are not supported") + " "}
			if pos > 1 {
				out = append(out, "WHEN ("+strconv.FormatInt(pos, 10)+" > length(", S, ")) THEN "+runErr("the position of a REGEXP function is past the end of the string")+" ")
			}
			// split binds S, M and the pieces between the matches.
			split := func(f func(S, M, sp ast.ExprNode) *tmplExpr) *tmplExpr {
				return letx([]ast.ExprNode{S, M, tx("regexp_split_to_array(", sub(S), ", ", P, ")")}, func(q []ast.ExprNode) *tmplExpr {
					return f(q[0], q[1], q[2])
				})
			}
			switch fn {
			case "substr":
				out = append(out, "ELSE ", M, "["+k+"] END")
			case "instr":
				out = append(out, "WHEN ("+k+" > len(", M, ")) THEN 0 ELSE ", split(func(_, M, sp ast.ExprNode) *tmplExpr {
					parts := []any{"CAST((((" + strconv.FormatInt(pos-1, 10) + " + coalesce(list_sum(list_transform(", sp, "[1:" + k + "], lambda __lg_i: length(__lg_i))), 0)) + coalesce(list_sum(list_transform(",
						M, "[1:" + strconv.FormatInt(occ-1, 10) + "], lambda __lg_i: length(__lg_i))), 0)) + 1)"}
					if ret == 1 {
						parts = append(parts, " + length(", M, "["+k+"])")
					}
					return tx(append(parts, " AS BIGINT)")...)
				}), " END")
			case "replace":
				limit := strconv.Itoa(DefaultStringBytes)
				out = append(out, "WHEN ((strlen(", S, ") + (len(", M, ") * "+strconv.Itoa(len(repl))+")) > "+limit+") THEN "+engineCheck(DefaultStringBytes, "REGEXP_REPLACE")+" ELSE ")
				if pos > 1 {
					out = append(out, "(substring(", S, ", 1, "+strconv.FormatInt(pos-1, 10)+") || ")
				}
				if occ == 0 {
					out = append(out, "regexp_replace(", sub(S), ", ", P, ", ", text(repl), ", 'g')")
				} else {
					out = append(out, split(func(_, M, sp ast.ExprNode) *tmplExpr {
						return tx("array_to_string(list_transform(range(1, (len(", sp, ") + 1)), lambda __lg_i: (", sp, "[__lg_i] || CASE WHEN (__lg_i > len(", M,
							")) THEN '' WHEN (__lg_i = "+k+") THEN ", text(repl), " ELSE ", M, "[__lg_i] END)), '')")
					}))
				}
				if pos > 1 {
					out = append(out, ")")
				}
				out = append(out, " END")
			}
			return tx(out...)
		})
	}
	return letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN regexp_matches(", r[0], ", ", G, ") THEN "+
			runErr("REGEXP functions on strings with \\r, \\x0B, \\x0C, \\x85, \\u2028, \\u2029, a final newline before $, non-ASCII characters with \\d \\w \\s \\b, or characters whose case folding differs are not supported")+
			" ELSE ", body(r[0]), " END")
	}), nil
}

// ---- information ----

// rwVersion: VERSION() is @@version.
func rwVersion(string, []ast.ExprNode) (ast.ExprNode, error) {
	return &sessionText{tmplExpr: tx(text(ServerVersion))}, nil
}

// sessionText is the value of an information function (utf8mb3 in MySQL,
// so CHARSET and COLLATION refuse it).
type sessionText struct{ *tmplExpr }

// sessionDatabase is the internal name DATABASE() and SCHEMA() are replaced
// with before the walk (substituteSession), its argument the session's
// schema: the walker knows no session.
const sessionDatabase = "'lakegate`.(database"

// substituteSession replaces DATABASE() and SCHEMA() with the session's
// schema (NULL when there is none), as a call the walker translates.
// callsSessionSchema reports whether sql may call DATABASE() or SCHEMA():
// a cheap check before substituteSession walks the tree (most statements
// call neither).
func callsSessionSchema(sql string) bool {
	return containsFold(sql, "database") || containsFold(sql, "schema")
}

// containsFold reports whether sub (lower-case ASCII) is in s, ignoring
// ASCII case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

func substituteSession(stmt ast.StmtNode, def string) {
	stmt.Accept(&sessionSubst{def: def})
}

type sessionSubst struct{ def string }

func (*sessionSubst) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (v *sessionSubst) Leave(n ast.Node) (ast.Node, bool) {
	x, ok := n.(*ast.FuncCallExpr)
	if !ok || x.Schema.O != "" || len(x.Args) != 0 || x.FnName.L != "database" && x.FnName.L != "schema" {
		return n, true
	}
	var val any
	if v.def != "" {
		val = v.def
	}
	return &ast.FuncCallExpr{FnName: ast.NewCIStr(sessionDatabase), Args: []ast.ExprNode{ast.NewValueExpr(val, "", "")}}, true
}

func rwSessionDatabase(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if isNullLit(args[0]) {
		return &sessionText{tmplExpr: tx("CAST(NULL AS VARCHAR)")}, nil
	}
	if _, ok := textLit(args[0]); !ok {
		return nil, unsupported("DATABASE() is not supported here")
	}
	return &sessionText{tmplExpr: tx(args[0])}, nil
}

// rwCharset: CHARSET(x) and COLLATION(x) (value the name of the default
// character set or collation, printed as duck): a string's is the
// connection's (utf8mb4, utf8mb4_0900_ai_ci), anything else's binary. Only
// literals and columns are accepted: other expressions carry MySQL
// derivations (utf8mb3 of information functions, explicit collations) the
// gate does not model.
func rwCharset(name string, args []ast.ExprNode) (ast.ExprNode, error) {
	switch a := args[0].(type) {
	case *litExpr:
		if a.isText {
			return text(name), nil
		}
		return text("binary"), nil
	case *ast.ColumnNameExpr:
		return tx("CASE WHEN (typeof(", a, ") = 'VARCHAR') THEN ", text(name), " ELSE 'binary' END"), nil
	}
	return nil, unsupported("CHARSET and COLLATION take a column or a literal")
}

// rwCoercibility: a string literal is coercible (4), NULL ignorable (6), a
// number numeric (5); a column of strings implicit (2), of numbers or
// times numeric (5). Other expressions are refused, as in rwCharset.
func rwCoercibility(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	switch a := args[0].(type) {
	case *litExpr:
		switch {
		case a.isText:
			return num(4), nil
		case isNullLit(a):
			return num(6), nil
		}
		return num(5), nil
	case *ast.ColumnNameExpr:
		return tx("CASE WHEN (typeof(", a, ") IN ('VARCHAR', 'BLOB')) THEN 2 ELSE 5 END"), nil
	}
	return nil, unsupported("COERCIBILITY takes a column or a literal")
}

// ---- miscellaneous ----

// rwInetAton: a dotted IPv4 address as a number, with MySQL's short forms
// (a.b is a.0.0.b, an empty part is 0); NULL for a part over 255, a
// character other than digits and dots, a trailing dot, or more than four
// parts.
func rwInetAton(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		s := r[0]
		return tx("CASE WHEN (", s, " IS NULL) OR (NOT regexp_full_match(", s, ", '[0-9.]+')) OR (", s, " LIKE '%.') OR ((strlen(", s, ") - strlen(replace(", s, ", '.', ''))) > 3) OR regexp_matches(", s,
			", '(^|\\.)0*([3-9][0-9][0-9]|2[6-9][0-9]|25[6-9]|[1-9][0-9][0-9][0-9]+)(\\.|$)') THEN NULL ELSE ", letx([]ast.ExprNode{tx("list_transform(string_split(", s, ", '.'), lambda __lg_i: coalesce(CAST(nullif(__lg_i, '') AS BIGINT), 0))")},
				func(p []ast.ExprNode) *tmplExpr {
					return tx("CASE len(", p[0], ") WHEN 1 THEN ", p[0], "[1] WHEN 2 THEN ((", p[0], "[1] * 16777216) + ", p[0], "[2]) WHEN 3 THEN (((", p[0], "[1] * 16777216) + (", p[0], "[2] * 65536)) + ", p[0],
						"[3]) ELSE ((((", p[0], "[1] * 16777216) + (", p[0], "[2] * 65536)) + (", p[0], "[3] * 256)) + ", p[0], "[4]) END")
				}), " END")
	}), nil
}

// ipv4RE and ipv6RE match what MySQL's str_to_ipv4 and str_to_ipv6 accept:
// four dotted parts of one to three digits up to 255; eight groups of one
// to four hex digits, or fewer around one :: (which stands for at least
// one group), the last two groups possibly written as an IPv4 address, at
// most 39 characters (checked apart).
var ipv4RE, ipv6RE = func() (string, string) {
	b := `([0-9]{1,2}|[01][0-9][0-9]|2[0-4][0-9]|25[0-5])`
	v4 := "(" + b + `\.){3}` + b
	h := "[0-9A-Fa-f]{1,4}"
	alts := []string{"(" + h + ":){7}" + h, "(" + h + ":){6}" + v4}
	for k := 0; k <= 7; k++ {
		left := ""
		if k > 0 {
			left = h + "(:" + h + "){" + strconv.Itoa(k-1) + "}"
		}
		right := ""
		if k < 7 {
			right = "(" + h + "(:" + h + "){0," + strconv.Itoa(6-k) + "})?"
		}
		alts = append(alts, left+"::"+right)
		if k <= 5 {
			alts = append(alts, left+"::("+h+":){0,"+strconv.Itoa(5-k)+"}"+v4)
		}
	}
	return v4, "(" + strings.Join(alts, "|") + ")"
}()

// rwIsIPv6: 1 for what INET6_ATON reads as an IPv6 address, else 0 (also
// for NULL).
func rwIsIPv6(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN coalesce(((strlen(", r[0], ") <= 39) AND regexp_full_match(", r[0], ", ", text(ipv6RE), ")), false) THEN 1 ELSE 0 END")
	}), nil
}

// rwInet6Aton: the 4 bytes of an IPv4 address or the 16 of an IPv6
// address, NULL for anything else.
func rwInet6Aton(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return &binaryText{letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		s := r[0]
		v4hex := func(e ast.ExprNode) *tmplExpr {
			return tx("array_to_string(list_transform(string_split(", e, ", '.'), lambda __lg_i: lpad(lower(hex(CAST(__lg_i AS BIGINT))), 2, '0')), '')")
		}
		// The groups as hex: those before ::, zeros for the gap, those
		// after; an IPv4 tail is two groups.
		grp := func(e ast.ExprNode) *tmplExpr {
			return tx("CASE WHEN (", e, " = '') THEN [] ELSE list_transform(string_split(", e, ", ':'), lambda __lg_g: CASE WHEN (strpos(__lg_g, '.') > 0) THEN ",
				v4hex(tx("__lg_g")), " ELSE lpad(lower(__lg_g), 4, '0') END) END")
		}
		return tx("CASE WHEN (", s, " IS NULL) THEN NULL WHEN regexp_full_match(", s, ", ", text(ipv4RE), ") THEN unhex(", v4hex(s), ") WHEN coalesce(((strlen(", s, ") <= 39) AND regexp_full_match(", s, ", ", text(ipv6RE), ")), false) THEN ",
			letx([]ast.ExprNode{grp(tx("split_part(", s, ", '::', 1)")), grp(tx("CASE WHEN (strpos(", s, ", '::') > 0) THEN split_part(", s, ", '::', 2) ELSE '' END"))}, func(g []ast.ExprNode) *tmplExpr {
				return tx("unhex(((array_to_string(", g[0], ", '') || repeat('0', (32 - strlen((array_to_string(", g[0], ", '') || array_to_string(", g[1], ", '')))))) || array_to_string(", g[1], ", '')))")
			}), " ELSE NULL END")
	})}, nil
}

// rwInet6Ntoa: the text of 4 or 16 bytes as MySQL prints it (lower-case
// groups without leading zeros, the first longest run of zero groups as
// ::, the IPv4-compatible and IPv4-mapped forms with a dotted tail); NULL
// for other lengths and for a literal (not a binary string). Only binary
// strings the gate made are accepted.
func rwInet6Ntoa(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	if _, ok := args[0].(*binaryText); !ok {
		if _, ok := args[0].(*litExpr); ok {
			return tx("CAST(NULL AS VARCHAR)"), nil
		}
		return nil, unsupported("INET6_NTOA takes the result of INET6_ATON, UNHEX or FROM_BASE64")
	}
	return letx([]ast.ExprNode{tx("lower(hex(", args[0], "))")}, func(r []ast.ExprNode) *tmplExpr {
		h := r[0]
		v4 := func(h ast.ExprNode, from int) *tmplExpr {
			parts := []any{"concat_ws('.'"}
			for i := 0; i < 4; i++ {
				parts = append(parts, ", CAST(CAST(('0x' || substring(", h, ", "+strconv.Itoa(from+2*i)+", 2)) AS BIGINT) AS VARCHAR)")
			}
			return tx(append(parts, ")")...)
		}
		words := tx("list_transform(range(0, 8), lambda __lg_i: CAST(('0x' || substring(", h, ", ((__lg_i * 4) + 1), 4)) AS BIGINT))")
		v6 := letx([]ast.ExprNode{h, words}, func(w []ast.ExprNode) *tmplExpr {
			// Z: for each word, the length of the run of zero words
			// starting there (0 for a non-zero word).
			runs := tx("list_transform(range(1, 9), lambda __lg_i: CASE WHEN (", w[1], "[__lg_i] <> 0) THEN 0 ELSE coalesce((list_position(list_transform(range(__lg_i, 9), lambda __lg_j: (", w[1],
				"[__lg_j] <> 0)), true) - 1), (9 - __lg_i)) END)")
			return letx([]ast.ExprNode{w[0], w[1], runs}, func(q []ast.ExprNode) *tmplExpr {
				// gp: where the first longest run starts (0: none).
				return letx([]ast.ExprNode{q[0], q[1], q[2], tx("CASE WHEN (list_max(", q[2], ") = 0) THEN 0 ELSE list_position(", q[2], ", list_max(", q[2], ")) END")}, func(q []ast.ExprNode) *tmplExpr {
					H, W, Z, gp := q[0], q[1], q[2], q[3]
					gl := tx("CASE WHEN (", gp, " = 0) THEN 0 ELSE ", Z, "[", gp, "] END")
					word := func(i string) *tmplExpr { return tx("lower(hex(", W, "[", i, "]))") }
					left := tx("array_to_string(list_transform(range(1, ", gp, "), lambda __lg_i: ", word("__lg_i"), "), ':')")
					right := tx("array_to_string(list_transform(range((", gp, " + ", gl, "), 9), lambda __lg_i: ", word("__lg_i"), "), ':')")
					all := tx("array_to_string(list_transform(range(1, 9), lambda __lg_i: ", word("__lg_i"), "), ':')")
					return tx("CASE WHEN (", gp, " = 1) AND ((", gl, " = 6) OR ((", gl, " = 5) AND (", W, "[6] = 65535))) THEN (CASE WHEN (", gl, " = 6) THEN '::' ELSE '::ffff:' END || ", v4(H, 25),
						") WHEN (", gp, " = 0) THEN ", all, " ELSE ((", left, " || '::') || ", right, ") END")
				})
			})
		})
		return tx("CASE WHEN (", h, " IS NULL) THEN NULL WHEN (strlen(", h, ") = 8) THEN ", v4(h, 1), " WHEN (strlen(", h, ") = 32) THEN ", v6, " ELSE NULL END")
	}), nil
}

// rwIsIPv4Form: IS_IPV4_COMPAT (16 bytes ::a.b.c.d: the first 12 zero,
// the last four neither 0.0.0.0 nor 0.0.0.1) and IS_IPV4_MAPPED (16 bytes
// ::ffff:a.b.c.d); 0 for other lengths and literals.
func rwIsIPv4Form(mapped bool) func(string, []ast.ExprNode) (ast.ExprNode, error) {
	return func(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
		if _, ok := args[0].(*binaryText); !ok {
			if _, ok := args[0].(*litExpr); ok {
				return num(0), nil
			}
			return nil, unsupported("IS_IPV4_COMPAT and IS_IPV4_MAPPED take the result of INET6_ATON, UNHEX or FROM_BASE64")
		}
		return letx([]ast.ExprNode{tx("lower(hex(", args[0], "))")}, func(r []ast.ExprNode) *tmplExpr {
			if mapped {
				return tx("CASE WHEN coalesce(((strlen(", r[0], ") = 32) AND (left(", r[0], ", 24) = '00000000000000000000ffff')), false) THEN 1 ELSE 0 END")
			}
			return tx("CASE WHEN coalesce(((strlen(", r[0], ") = 32) AND (left(", r[0], ", 24) = '000000000000000000000000') AND (right(", r[0], ", 8) NOT IN ('00000000', '00000001'))), false) THEN 1 ELSE 0 END")
		}), nil
	}
}

// rwInetNtoa: the dotted form of a number in 0 … 2^32-1, else NULL.
func rwInetNtoa(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{u64Arg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		n := r[0]
		return tx("CASE WHEN (", n, " IS NULL) OR (", n, " > 4294967295) THEN NULL ELSE concat_ws('.', (", n, " >> 24), ((", n, " >> 16) & 255), ((", n, " >> 8) & 255), (", n, " & 255)) END")
	}), nil
}

// rwIsIPv4: four dot-separated parts of one to three digits, each at most
// 255; 0 for NULL.
func rwIsIPv4(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN coalesce(regexp_full_match(", r[0], ", ", text(ipv4RE), "), false) THEN 1 ELSE 0 END")
	}), nil
}

const uuidRE = `[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[0-9A-Fa-f]{32}|\{[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\}`

// rwIsUUID: the three string forms MySQL parses; NULL for NULL.
func rwIsUUID(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	return letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN regexp_full_match(", r[0], ", ", text(uuidRE), ") THEN 1 ELSE 0 END")
	}), nil
}

// uuidSwap reads the optional swap flag (a literal 0 or 1).
func uuidSwap(args []ast.ExprNode) (bool, error) {
	if len(args) < 2 {
		return false, nil
	}
	n, ok := intLit(args[1])
	if !ok || n < 0 || n > 1 {
		return false, unsupported("the swap flag of UUID_TO_BIN and BIN_TO_UUID must be 0 or 1")
	}
	return n == 1, nil
}

// rwUUIDToBin: the 16 bytes of a UUID string (time-low and time-high
// swapped with the flag); an invalid UUID is an error, as in MySQL.
func rwUUIDToBin(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	swap, err := uuidSwap(args)
	if err != nil {
		return nil, err
	}
	return &binaryText{letx([]ast.ExprNode{strArg(args[0])}, func(r []ast.ExprNode) *tmplExpr {
		h := letx([]ast.ExprNode{tx("regexp_replace(", r[0], ", '[{}-]', '', 'g')")}, func(h []ast.ExprNode) *tmplExpr {
			if swap {
				return tx("unhex((((substring(", h[0], ", 13, 4) || substring(", h[0], ", 9, 4)) || substring(", h[0], ", 1, 8)) || substring(", h[0], ", 17)))")
			}
			return tx("unhex(", h[0], ")")
		})
		return tx("CASE WHEN (", r[0], " IS NULL) THEN NULL WHEN regexp_full_match(", r[0], ", ", text(uuidRE), ") THEN ", h, " ELSE "+runErr("Incorrect string value for UUID_TO_BIN")+" END")
	})}, nil
}

// rwBinToUUID: the lower-case string form of 16 bytes; other lengths are
// an error, as in MySQL.
func rwBinToUUID(_ string, args []ast.ExprNode) (ast.ExprNode, error) {
	swap, err := uuidSwap(args)
	if err != nil {
		return nil, err
	}
	h := tx("lower(hex(", strArg(args[0]), "))")
	if _, ok := args[0].(*binaryText); ok {
		h = tx("lower(hex(", args[0], "))")
	}
	return letx([]ast.ExprNode{h}, func(r []ast.ExprNode) *tmplExpr {
		h := r[0]
		var f [5]*tmplExpr
		if swap {
			f = [5]*tmplExpr{tx("substring(", h, ", 9, 8)"), tx("substring(", h, ", 5, 4)"), tx("substring(", h, ", 1, 4)"), tx("substring(", h, ", 17, 4)"), tx("substring(", h, ", 21, 12)")}
		} else {
			f = [5]*tmplExpr{tx("substring(", h, ", 1, 8)"), tx("substring(", h, ", 9, 4)"), tx("substring(", h, ", 13, 4)"), tx("substring(", h, ", 17, 4)"), tx("substring(", h, ", 21, 12)")}
		}
		return tx("CASE WHEN (", h, " IS NULL) THEN NULL WHEN (strlen(", h, ") <> 32) THEN "+runErr("Incorrect string value for BIN_TO_UUID")+" ELSE concat_ws('-', ", f[0], ", ", f[1], ", ", f[2], ", ", f[3], ", ", f[4], ") END")
	}), nil
}

// ---- limits ----

// moreStringWidth bounds, for the limit pass (limitpass.go), the result of
// the functions of this file that build a string longer than their
// arguments, from the arguments' widths; ok is false for any other. Beyond
// StringBytes or copies copies of column values, the result counts as
// StringBytes: the translation makes the engine refuse a longer one
// (capped, or the checks of REGEXP_REPLACE and EXPORT_SET before building).
//
// It runs before the walker checks the number of arguments: it must read
// only the arguments there are.
func moreStringWidth(name string, x *ast.FuncCallExpr, widths []width, strict width, copies int64) (width, bool) {
	arg := func(i int) width {
		if i < len(widths) {
			return widths[i]
		}
		return width{}
	}
	scale := func(w width, k, plus int64) width { return width{w.a*k + plus, w.m * k} }
	var w width
	switch name {
	case "hex":
		w = scale(arg(0), 2, 16)
	case "to_base64", "quote":
		w = scale(arg(0), 2, 4)
	case "insert_func":
		w = arg(0).plus(arg(3))
	case "make_set":
		w = width{a: int64(len(widths))}
		for i := 1; i < len(widths); i++ {
			w = w.plus(widths[i])
		}
	case "export_set":
		n := int64(64)
		if len(x.Args) == 5 {
			if k, ok := literalInt(x.Args[4]); ok && k >= 0 && k < 64 {
				n = k
			}
		}
		sep := width{a: 1}
		if len(widths) >= 4 {
			sep = arg(3)
		}
		w = scale(arg(1).wider(arg(2)).plus(sep), n, 0)
	case "regexp_replace":
		// Every match is at least one character (an empty match is
		// refused), so each byte of the subject becomes at most the
		// replacement.
		if len(x.Args) < 3 {
			return width{}, true // refused by the walker
		}
		r, ok := literalText(x.Args[2])
		if !ok {
			return strict, true
		}
		w = scale(arg(0), max(int64(len(r)), 1), 0)
	case "bin", "oct", "conv", "sha2", "version", "charset", "collation", "bin_to_uuid", "inet_ntoa", "inet6_ntoa":
		w = width{a: 65}
	default:
		return width{}, false
	}
	if w.a > strict.a || w.m > copies {
		w = width{a: max(strict.a, int64(DefaultStringBytes))}
	}
	return w, true
}
