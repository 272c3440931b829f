package sqlgate

import (
	"fmt"
	"io"
	"math/bits"
	"regexp"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// The gate replaces every allowed expression operator with one of the nodes
// below, so that their printed form is decided here and not by the MySQL
// printer: every operator node prints with its own outer parentheses, so
// MySQL and DuckDB precedence never matter, and unary operands are always
// parenthesised, so "- -x" can never print as a DuckDB comment. Structural
// nodes (SELECT, JOIN, ORDER BY, CASE, ...) keep TiDB's printer, with their
// expression slots filled by these nodes. Once a tree holds these nodes it must
// not be walked with ast.Visitor again: their Accept does not descend.

type gateExpr struct {
	ast.TexprNode
}

func (*gateExpr) Format(w io.Writer) { _, _ = io.WriteString(w, "<sqlgate expression>") }

func restoreAll(ctx *format.RestoreCtx, sep string, es []ast.ExprNode) error {
	for i, e := range es {
		if i > 0 {
			ctx.WritePlain(sep)
		}
		if err := e.Restore(ctx); err != nil {
			return err
		}
	}
	return nil
}

// litExpr is a literal. Strings are written with RestoreCtx.WriteString
// (single quotes, quotes doubled, no backslash escapes); anything else is text
// produced by this package (numbers, TRUE, NULL), never client text.
type litExpr struct {
	gateExpr
	text    string
	isText  bool
	isFloat bool         // a MySQL approximate-value (DOUBLE) literal such as 2.5E0
	of      ast.ExprNode // a letx reference: the value it stands for (types.go)
}

func (n *litExpr) Restore(ctx *format.RestoreCtx) error {
	if n.isText {
		ctx.WriteString(n.text)
	} else {
		ctx.WritePlain(n.text)
	}
	return nil
}
func (n *litExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// paramExpr is a parameter marker, printed numbered ($1, $2, … in the
// order of the markers in the statement's text) so that the printed SQL may
// place it anywhere, and more than once (pushdown.go), and still bind the
// value the client bound to that marker.
type paramExpr struct {
	gateExpr
	offset int // the marker's byte offset in the statement's text
	n      int // its position among the statement's markers, from 1
}

func (n *paramExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("$" + strconv.Itoa(n.n))
	return nil
}
func (n *paramExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

type binExpr struct {
	gateExpr
	op   string // DuckDB operator, from binaryOps
	l, r ast.ExprNode
}

func (n *binExpr) Restore(ctx *format.RestoreCtx) error {
	l, r := n.l, n.r
	if comparison[n.op] {
		l, r = comparedWith(ctx, l, r), comparedWith(ctx, r, l)
		rb, _ := ctx.In.(*renderBuf)
		if bl, br, ok := rb.bytesCompared(l, r); ok { // facts.go
			l, r = bl, br
		} else if br, bl, ok := rb.bytesCompared(r, l); ok {
			l, r = bl, br
		}
	}
	ctx.WritePlain("(")
	if err := l.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(" " + n.op + " ")
	if err := r.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(")")
	return nil
}
func (n *binExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// comparison holds the comparison operators of binaryOps (DuckDB's).
var comparison = map[string]bool{"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true, "IS NOT DISTINCT FROM": true}

type unaryExpr struct {
	gateExpr
	op string // "-", "+" or "NOT "
	v  ast.ExprNode
}

func (n *unaryExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("(" + n.op + "(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain("))")
	return nil
}
func (n *unaryExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

type isNullExpr struct {
	gateExpr
	not bool
	v   ast.ExprNode
}

func (n *isNullExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	if n.not {
		ctx.WritePlain(" IS NOT NULL)")
	} else {
		ctx.WritePlain(" IS NULL)")
	}
	return nil
}
func (n *isNullExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

type inExpr struct {
	gateExpr
	not  bool
	v    ast.ExprNode
	list []ast.ExprNode
	sub  *ast.SubqueryExpr // prints its own parentheses
}

func (n *inExpr) Restore(ctx *format.RestoreCtx) error {
	if rb, _ := ctx.In.(*renderBuf); n.sub == nil && rb.foldedASCII(n.v) {
		// Compared as bytes with the lower-cased literals (facts.go).
		bytes := &inExpr{not: n.not, v: asBytes(n.v), list: make([]ast.ExprNode, len(n.list))}
		ok := true
		for i, it := range n.list {
			if bytes.list[i], ok = loweredLit(it); !ok {
				break
			}
		}
		if ok {
			return bytes.Restore(ctx) // bytes.v is no column: no recursion
		}
	}
	ctx.WritePlain("(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	if n.not {
		ctx.WritePlain(" NOT IN ")
	} else {
		ctx.WritePlain(" IN ")
	}
	if n.sub != nil {
		if err := n.sub.Restore(ctx); err != nil {
			return err
		}
	} else {
		ctx.WritePlain("(")
		if err := restoreAll(ctx, ", ", n.list); err != nil {
			return err
		}
		ctx.WritePlain(")")
	}
	ctx.WritePlain(")")
	return nil
}
func (n *inExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// likeExpr prints ILIKE: MySQL's default collation makes LIKE
// case-insensitive, and DuckDB's LIKE ignores the default collation.
type likeExpr struct {
	gateExpr
	not    bool
	v, pat ast.ExprNode
	escape string // "" = no escape character
	cs     bool   // case-sensitive (an explicit binary collation): LIKE
}

func (n *likeExpr) Restore(ctx *format.RestoreCtx) error {
	op := " LIKE "
	if n.not {
		op = " NOT LIKE "
	}
	if n.cs {
		return n.print(ctx, n.v, op, n.pat)
	}
	rb, _ := ctx.In.(*renderBuf)
	if rb != nil && rb.hasFact(n.v, factFolded) {
		// Every value is its own fold (facts.go): only the pattern is
		// folded.
		return n.print(ctx, n.v, op, tx("lower(strip_accents(", n.pat, "))"))
	}
	// MySQL's default collation ignores case and accents: both sides are
	// compared lower-cased and without accents (strip_accents, as the
	// engine's collation). Lower-case LIKE rather than ILIKE: the engine
	// turns LIKE 'p%' and '%p%' into prefix and substring searches, and its
	// ILIKE measured twice as slow. (The walker refuses an escape character
	// that is a letter: it would be lower-cased with the pattern.)
	foldedForm := &likeExpr{v: tx("lower(strip_accents(", n.v, "))"), pat: tx("lower(strip_accents(", n.pat, "))"), escape: n.escape, cs: true}
	ascii, ok := n.asciiForms(ctx)
	if !ok {
		return n.print(ctx, foldedForm.v, op, foldedForm.pat)
	}
	asciiForm := ascii.fold
	if rb != nil && rb.hasFact(n.v, factASCII) {
		// Every value is ASCII (facts.go).
		asciiForm = n.caseForm(rb, ascii)
		if n.not {
			ctx.WritePlain("(NOT ")
		}
		if err := asciiForm.Restore(ctx); err != nil {
			return err
		}
		if n.not {
			ctx.WritePlain(")")
		}
		return nil
	}
	// A text column against an ASCII pattern: lower() copies every string
	// it folds, so an ASCII value (strlen = length) is matched as it is by
	// a form that ignores ASCII case without copying (a scan of TPC-H's
	// o_comment with NOT LIKE '%special%requests%': 1.8× → 1.4× the
	// case-sensitive LIKE); any other value is folded as above. For an
	// ASCII value v the fold is v with A–Z lower-cased, so both forms
	// answer alike; NULL goes to the ELSE branch and stays NULL.
	if n.not {
		ctx.WritePlain("(NOT ")
	}
	ctx.WritePlain("CASE WHEN (strlen(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(") = length(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(")) THEN ")
	if err := asciiForm.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(" ELSE ")
	if err := foldedForm.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(" END")
	if n.not {
		ctx.WritePlain(")")
	}
	return nil
}

// caseForm is the match of n.v, a column whose every value is ASCII,
// against the pattern of ascii. A value without an upper-case letter of the
// pattern is matched alike by the case-sensitive LIKE of the lower-cased
// pattern (its other upper-case letters meet only % and _, which take
// either case), and one without a lower-case letter of it by the LIKE of
// the upper-cased pattern. The letters the column lacks in a case
// (Relation.NoUpper, NoLower) need no look; a value holding one of at most
// maxCaseProbes others is matched by the ASCII form, and with more others
// every value is.
func (n *likeExpr) caseForm(rb *renderBuf, ascii asciiLike) ast.ExprNode {
	upper := ascii.letters &^ rb.noCase(n.v, true)
	lower := ascii.letters &^ rb.noCase(n.v, false)
	probe, toLower := upper, true
	if bits.OnesCount32(lower) < bits.OnesCount32(upper) {
		probe, toLower = lower, false
	}
	exact := ascii.exact(toLower)
	switch {
	case probe == 0:
		return exact
	case bits.OnesCount32(probe) > maxCaseProbes:
		return ascii.fold
	}
	var look []any
	for i := range 26 {
		if probe&(1<<i) == 0 {
			continue
		}
		if len(look) > 0 {
			look = append(look, " OR ")
		}
		c := byte('a' + i)
		if toLower {
			c = byte('A' + i)
		}
		look = append(look, "contains(", n.v, ", '"+string(c)+"')")
	}
	return tx("CASE WHEN (", tx(look...), ") THEN ", ascii.fold, " ELSE ", exact, " END")
}

// asciiLike holds matches of an ASCII value of a text column against an
// ASCII pattern that ignore ASCII case (likeExpr.asciiForms).
type asciiLike struct {
	// fold matches any ASCII value: the pattern itself (LIKE) when it
	// holds no letter, so that case cannot matter, or an RE2 expression
	// with [xX] for each letter (regexp_matches, which copies nothing).
	fold ast.ExprNode
	// v, pat and escape are the column, the pattern and the escape
	// character, for exact.
	v      ast.ExprNode
	pat    string
	escape string
	// letters is the set of letters of the pattern, bit i for the i-th
	// letter of the alphabet in either case.
	letters uint32
}

// exact is the case-sensitive LIKE of the pattern lower-cased (toLower)
// or upper-cased: it matches as fold does a value that holds none of the
// pattern's letters in the other case.
func (a asciiLike) exact(toLower bool) ast.ExprNode {
	// The walker refuses an escape character that is a letter, so changing
	// the pattern's case keeps its escapes.
	b := []byte(a.pat)
	for i, c := range b {
		if 'a' <= c|0x20 && c|0x20 <= 'z' {
			if toLower {
				b[i] = c | 0x20
			} else {
				b[i] = c &^ 0x20
			}
		}
	}
	return &likeExpr{v: a.v, pat: &litExpr{text: string(b), isText: true}, escape: a.escape, cs: true}
}

// asciiForms returns the ASCII forms of the match when n.v is a text
// column (printed several times, so nothing costlier) and n.pat an ASCII
// literal. ok is false for anything else, for a pattern longer than
// maxASCIILikePattern, and for one ending in its escape character, which
// the engine refuses.
func (n *likeExpr) asciiForms(ctx *format.RestoreCtx) (_ asciiLike, ok bool) {
	if _, col := n.v.(*ast.ColumnNameExpr); !col || typeOfCtx(ctx.In, n.v).kind != tString {
		return asciiLike{}, false
	}
	pat, re, letters, ok := n.asciiPattern()
	if !ok {
		return asciiLike{}, false
	}
	a := asciiLike{v: n.v, pat: pat, escape: n.escape, letters: letters}
	if letters == 0 {
		a.fold = a.exact(true)
	} else {
		a.fold = tx("regexp_matches(", n.v, ", ", &litExpr{text: re, isText: true}, ")")
	}
	return a, true
}

// asciiPattern returns n's pattern when it is an ASCII text literal of at
// most maxASCIILikePattern bytes that does not end in its escape character,
// with its RE2 translation and its letters (likeRegexp).
func (n *likeExpr) asciiPattern() (pat, re string, letters uint32, ok bool) {
	pat, ok = asciiTextLit(n.pat)
	if !ok || len(pat) > maxASCIILikePattern {
		return "", "", 0, false
	}
	re, letters, ok = likeRegexp(pat, n.escape)
	return pat, re, letters, ok
}

// maxCaseProbes bounds the letters likeExpr looks for in a value before
// choosing between the ASCII form and the exact match: each is a substring
// search of every value.
const maxCaseProbes = 2

// maxASCIILikePattern bounds the patterns asciiForm translates: a letter
// becomes four bytes of RE2 that the engine compiles for the statement, so
// a long pattern (up to the gate's literal limit) keeps the folded form,
// whose size does not grow with the pattern's letters.
const maxASCIILikePattern = 1 << 10

// likeRegexp translates an ASCII LIKE pattern with escape character esc
// ("" for none) to an RE2 expression matching what the pattern matches
// once A–Z are lower-cased on both sides: % is .*, _ is ., a letter x is
// [xX], anything else itself; anchored where the pattern does not start or
// end with %. letters is the set of the pattern's letters (bit i for 'a'+i,
// in either case). ok is false for a non-ASCII pattern or one ending in its
// escape character.
func likeRegexp(pat, esc string) (re string, letters uint32, ok bool) {
	type token struct {
		any bool   // %
		re  string // otherwise
	}
	var toks []token
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		if c >= 0x80 {
			return "", 0, false
		}
		literal := false
		if esc != "" && c == esc[0] {
			if i+1 == len(pat) || pat[i+1] >= 0x80 {
				return "", 0, false
			}
			i++
			c, literal = pat[i], true
		}
		switch {
		case !literal && c == '%':
			if len(toks) == 0 || !toks[len(toks)-1].any {
				toks = append(toks, token{any: true})
			}
		case !literal && c == '_':
			toks = append(toks, token{re: "."})
		case 'a' <= c|0x20 && c|0x20 <= 'z':
			letters |= 1 << (c | 0x20 - 'a')
			toks = append(toks, token{re: "[" + string(c|0x20) + string(c&^0x20) + "]"})
		default:
			toks = append(toks, token{re: regexp.QuoteMeta(string(c))})
		}
	}
	var b strings.Builder
	b.WriteString("(?s)")
	if len(toks) == 0 || !toks[0].any {
		b.WriteString(`\A`)
	}
	for i, t := range toks {
		switch {
		case !t.any:
			b.WriteString(t.re)
		case i > 0 && i < len(toks)-1:
			b.WriteString(".*")
		}
	}
	if len(toks) == 0 || !toks[len(toks)-1].any {
		b.WriteString(`\z`)
	}
	return b.String(), letters, true
}

// print prints (v op pat [ESCAPE e]).
func (n *likeExpr) print(ctx *format.RestoreCtx, v ast.ExprNode, op string, pat ast.ExprNode) error {
	ctx.WritePlain("(")
	if err := v.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(op)
	if err := pat.Restore(ctx); err != nil {
		return err
	}
	if n.escape != "" {
		ctx.WritePlain(" ESCAPE ")
		ctx.WriteString(n.escape)
	}
	ctx.WritePlain(")")
	return nil
}

func (n *likeExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

type betweenExpr struct {
	gateExpr
	not       bool
	v, lo, hi ast.ExprNode
}

func (n *betweenExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	if n.not {
		ctx.WritePlain(" NOT BETWEEN ")
	} else {
		ctx.WritePlain(" BETWEEN ")
	}
	if err := comparedWith(ctx, n.lo, n.v).Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(" AND ")
	if err := comparedWith(ctx, n.hi, n.v).Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(")")
	return nil
}
func (n *betweenExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// cmpSubExpr is "l op ANY|ALL (subquery)".
type cmpSubExpr struct {
	gateExpr
	op  string
	all bool
	l   ast.ExprNode
	sub *ast.SubqueryExpr
}

func (n *cmpSubExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("(")
	if err := n.l.Restore(ctx); err != nil {
		return err
	}
	if n.all {
		ctx.WritePlain(" " + n.op + " ALL ")
	} else {
		ctx.WritePlain(" " + n.op + " ANY ")
	}
	if err := n.sub.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(")")
	return nil
}
func (n *cmpSubExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

type existsExpr struct {
	gateExpr
	not bool
	sub *ast.SubqueryExpr
}

func (n *existsExpr) Restore(ctx *format.RestoreCtx) error {
	if n.not {
		ctx.WritePlain("(NOT EXISTS ")
	} else {
		ctx.WritePlain("(EXISTS ")
	}
	if err := n.sub.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(")")
	return nil
}
func (n *existsExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// callExpr is an allow-listed function call; name comes from the functions
// table, never from the client.
type callExpr struct {
	gateExpr
	name     string
	args     []ast.ExprNode
	star     bool // count(*)
	distinct bool
	over     *ast.WindowSpec // non-nil: window call
	sep      ast.ExprNode    // string_agg: the separator, printed after args
	order    []*ast.ByItem   // ORDER BY inside the call (string_agg)
	dbl      bool            // MySQL's result is a DOUBLE (see isDouble)
}

func (n *callExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain(n.name + "(")
	if n.distinct {
		ctx.WritePlain("DISTINCT ")
	}
	if n.star {
		ctx.WritePlain("*")
	} else if err := restoreAll(ctx, ", ", n.args); err != nil {
		return err
	}
	if n.sep != nil {
		ctx.WritePlain(", ")
		if err := n.sep.Restore(ctx); err != nil {
			return err
		}
	}
	if len(n.order) > 0 {
		ctx.WritePlain(" ORDER BY ")
		for i, it := range n.order {
			if i > 0 {
				ctx.WritePlain(", ")
			}
			if err := it.Restore(ctx); err != nil {
				return err
			}
		}
	}
	ctx.WritePlain(")")
	if n.over != nil {
		ctx.WritePlain(" OVER ")
		if err := n.over.Restore(ctx); err != nil {
			return err
		}
	}
	return nil
}
func (n *callExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

type castExpr struct {
	gateExpr
	v   ast.ExprNode
	typ string // from castType
}

func (n *castExpr) Restore(ctx *format.RestoreCtx) error {
	ctx.WritePlain("CAST(")
	if err := n.v.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(" AS " + n.typ + ")")
	return nil
}
func (n *castExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

func acceptLeaf(n ast.Node, v ast.Visitor) (ast.Node, bool) {
	nn, skip := v.Enter(n)
	if skip {
		return v.Leave(nn)
	}
	return v.Leave(nn)
}

// relSource stands for a real table in FROM. It prints the relation the caller
// resolved for ref, with the alias the query uses for it; it can only be
// printed by Render (the relation map travels in the writer).
type relSource struct {
	ast.TableSource
	ref   TableRef
	alias string
	// push are the conjuncts of the WHERE of the SELECT this table is the
	// only FROM item of that a row filter's derived table may repeat
	// inside its fence (pushdown.go).
	push []pushable
}

func (n *relSource) Restore(ctx *format.RestoreCtx) error {
	rb, ok := ctx.In.(*renderBuf)
	if !ok {
		return fmt.Errorf("sqlgate: internal error: table printed outside Render")
	}
	rel, ok := rb.rel[n.ref]
	if !ok {
		rb.fail(fmt.Errorf("sqlgate: no relation for table %q", n.ref.String()))
		return rb.err
	}
	if rel.Policy != nil {
		if err := restorePolicy(ctx, rb, &rel, n.alias, n.push); err != nil {
			rb.fail(err)
			return err
		}
		return nil
	}
	ctx.WriteName(rel.Schema)
	ctx.WritePlain(".")
	ctx.WriteName(rel.Name)
	ctx.WritePlain(" AS ")
	ctx.WriteName(n.alias)
	return nil
}
func (n *relSource) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// renderBuf is the RestoreWriter used by Render; it carries the relation map
// to relSource nodes so that a Statement's tree is never mutated by Render.
type renderBuf struct {
	strings.Builder
	rel     map[TableRef]Relation
	err     error
	caller  *Caller // while a policy's expressions are printed
	dialect Dialect
	// kinds, when not nil (RenderPushed), receives per parameter the kind
	// of value it must be bound to for the parameters pushed behind row
	// filters; pushed reports whether there was any.
	kinds  []ParamKind
	pushed bool
	info   *typeInfo // the statement's type information (types.go)
	ty     *typer    // the type pass, made when first needed
	// rawGroups allows grouping text keys by bytes (facts.go); raw
	// holds the decision per key once made.
	rawGroups bool
	raw       map[*groupKey]bool
}

func (b *renderBuf) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// limitExpr fills Limit.Count so that TiDB's "LIMIT offset,count" prints as
// DuckDB's "LIMIT count OFFSET offset".
type limitExpr struct {
	gateExpr
	count, offset ast.ExprNode
}

func (n *limitExpr) Restore(ctx *format.RestoreCtx) error {
	if err := n.count.Restore(ctx); err != nil {
		return err
	}
	ctx.WritePlain(" OFFSET ")
	return n.offset.Restore(ctx)
}
func (n *limitExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// tmplExpr prints fixed text of this package interleaved with child
// expressions: parts holds strings (constant text written here, never client
// text) and ast.ExprNode children. Most MySQL-to-DuckDB translations are one.
type tmplExpr struct {
	gateExpr
	parts []any
	dbl   bool // MySQL's result is a DOUBLE (see isDouble)
	bin   bool // an explicit binary collation (see binaryColl)
}

func (n *tmplExpr) Restore(ctx *format.RestoreCtx) error {
	for _, p := range n.parts {
		switch p := p.(type) {
		case string:
			ctx.WritePlain(p)
		case ast.ExprNode:
			if err := p.Restore(ctx); err != nil {
				return err
			}
		default:
			return fmt.Errorf("sqlgate: internal error: bad template part %T", p)
		}
	}
	return nil
}
func (n *tmplExpr) Accept(v ast.Visitor) (ast.Node, bool) { return acceptLeaf(n, v) }

// tx builds a tmplExpr from constant text and child expressions.
func tx(parts ...any) *tmplExpr { return &tmplExpr{parts: parts} }

// letx evaluates each of vals once and gives body references to them, so a
// translation may use an argument several times without printing it several
// times (which would grow the output exponentially under nesting):
//
//	(list_transform([struct_pack(f0 := v0, …)], lambda __lg_v: body)[1])
//
// with __lg_v['f0'], … for the references in body.
//
// The references are only valid inside body; vals are printed outside the
// lambda, so nested letx never see each other's parameter. A reference is
// __lg_v['f0'], not __lg_v.f0: in HAVING, DuckDB binds the dotted form as a
// column of a table __lg_v.
func letx(vals []ast.ExprNode, body func(refs []ast.ExprNode) *tmplExpr) *tmplExpr {
	parts := []any{"(list_transform([struct_pack("}
	refs := make([]ast.ExprNode, len(vals))
	for i, v := range vals {
		f := "f" + strconv.Itoa(i)
		if i > 0 {
			parts = append(parts, ", ")
		}
		parts = append(parts, f+" := ", v)
		refs[i] = &litExpr{text: "__lg_v['" + f + "']", of: v}
	}
	b := body(refs)
	parts = append(parts, ")], lambda __lg_v: ", b, ")[1])")
	return &tmplExpr{parts: parts, dbl: b.dbl}
}

// nullIfAny prints CASE WHEN a IS NULL OR … THEN NULL ELSE body END.
func nullIfAny(refs []ast.ExprNode, body ...any) *tmplExpr {
	parts := []any{"CASE WHEN "}
	for i, r := range refs {
		if i > 0 {
			parts = append(parts, " OR ")
		}
		parts = append(parts, "(", r, " IS NULL)")
	}
	parts = append(parts, " THEN NULL ELSE ")
	parts = append(parts, body...)
	return tx(append(parts, " END")...)
}
