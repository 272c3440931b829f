package sqlgate_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"lakegate/authz/sqlgate"
)

// TestLikeIgnoresCaseAndAccents: LIKE compares as MySQL's default collation
// does, ignoring case and accents, on ASCII and other strings, with and
// without an escape character, on a column and on an expression. Every
// answer is checked against the plain form (strip_accents on both sides,
// ILIKE) run on the same engine, and against MySQL 8.0's answer where the
// test names one.
func TestLikeIgnoresCaseAndAccents(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	values := []string{"Café", "CAFE", "cafe\u0301", "caffè latte", "x_y", "X%Y", "naïve", "", "ÉCOLE"}
	db := openTestDB(t, "duckdb", "", `CREATE SCHEMA lg_rel`, `CREATE TABLE lg_rel.w (id INTEGER, s VARCHAR)`)
	for i, v := range values {
		if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (?, ?)`, i, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (99, NULL)`); err != nil {
		t.Fatal(err)
	}
	rel := sqlgate.Relation{Schema: "lg_rel", Name: "w", Columns: []string{"id", "s"}, Types: []string{"INTEGER", "VARCHAR"}}
	tests := []struct {
		cond, ref string
		mysql     []string // MySQL 8.0's ids, when given
	}{
		{"s LIKE 'caf%'", "strip_accents(s) ILIKE 'caf%'", []string{"0", "1", "2", "3"}},
		{"s LIKE '%E'", "strip_accents(s) ILIKE '%E'", []string{"0", "1", "2", "3", "6", "8"}},
		{"s LIKE '%É'", "strip_accents(s) ILIKE '%E'", []string{"0", "1", "2", "3", "6", "8"}},
		{"s NOT LIKE 'caf%'", "strip_accents(s) NOT ILIKE 'caf%'", nil},
		{"s LIKE '_afe'", "strip_accents(s) ILIKE '_afe'", nil},
		{"s LIKE 'x\\_y'", `strip_accents(s) ILIKE 'x\_y' ESCAPE '\'`, []string{"4"}},
		{"s LIKE 'x|%y' ESCAPE '|'", `strip_accents(s) ILIKE 'x|%y' ESCAPE '|'`, []string{"5"}},
		{"concat(s, '!') LIKE '%e!'", "strip_accents(s || '!') ILIKE '%e!'", []string{"0", "1", "2", "3", "6", "8"}},
		{"s LIKE '%IVE'", "strip_accents(s) ILIKE '%ive'", []string{"6"}},
		{"s LIKE ''", "strip_accents(s) ILIKE ''", []string{"7"}},
		{"s LIKE 'école'", "strip_accents(s) ILIKE 'ecole'", []string{"8"}},
	}
	for _, cond := range []string{"s LIKE 'xa%y' ESCAPE 'a'", "s NOT LIKE 'XA%Y' ESCAPE 'A'", "s LIKE 'xé%y' ESCAPE 'é'"} {
		if _, err := g.Parse("SELECT id FROM w WHERE "+cond, "s"); err == nil {
			t.Errorf("%s: a letter as the escape character was accepted", cond)
		}
	}
	for _, tc := range tests {
		t.Run(tc.cond, func(t *testing.T) {
			got, out := runOver(t, g, db, rel, "SELECT id FROM w WHERE "+tc.cond+" ORDER BY id")
			want, err := queryStrings(db, fmt.Sprintf("SELECT id FROM lg_rel.w WHERE %s ORDER BY id", tc.ref))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v, the plain form %v\n%s", got, want, out)
			}
			if tc.mysql != nil && !slices.Equal(got, tc.mysql) {
				t.Fatalf("got %v, MySQL %v", got, tc.mysql)
			}
		})
	}
}

// likeASCIIValues are the values the ASCII form of LIKE is checked on:
// ASCII of either case, newlines, the RE2 metacharacters, accented and
// decomposed letters, characters whose lower-case or accent-free form is
// ASCII (the Kelvin sign, ſ, ﬁ), a multi-byte character where _ stands,
// and NULL.
var likeASCIIValues = []string{
	"Café", "CAFE", "cafe\u0301", "caffè latte", "x_y", "X%Y", "naïve", "", "ÉCOLE",
	"special requests", "SPECIAL\nREQUESTS", "Special pending Requests!", "spécial réquests",
	"a.c", "abc", "A*C", "[x]", "(x)", "a\\b", "$^", "a|b", "\u212Aelvin", "kelvin", "ſpecial", "ﬁle", "file",
	"PROMO BRUSHED", "promo", "xPROMO", "Brand#34", "brand#34", "BRAND#3", "a\u00e9c", "a\u00c9c", "aéc",
	"LARGE BRUSHED TIN", "large brushed", "%", "_", "a%b", "a_b",
}

// likeASCIIPatterns are ASCII patterns, with the escape clause to use.
var likeASCIIPatterns = []struct{ pat, escape string }{
	{"%special%requests%", ""}, {"caf%", ""}, {"%E", ""}, {"_afe", ""}, {"PROMO%", ""}, {"%BRUSHED%", ""},
	{"Brand#34", ""}, {"brand#3_", ""}, {"%#%", ""}, {"a.c", ""}, {"A*C", ""}, {"[x]", ""}, {"(x)", ""},
	{"%$^%", ""}, {"a|b", ""}, {"%", ""}, {"", ""}, {"%%", ""}, {"_", ""}, {"kelvin", ""}, {"%LVIN", ""},
	{"file", ""}, {"special%", ""}, {"a_c", ""}, {"%a%b%", ""}, {`x\_y`, `\`}, {`a\%b`, `\`}, {`a\\b`, `\`},
	{"x|%y", "|"}, {"a||b", "|"}, {"%|_", "|"}, {"X!%Y", "!"}, {"%special%\n%", ""},
}

// TestLikeASCIIForm: a text column against an ASCII pattern is matched by
// the cheaper form (an ASCII value against a pattern that ignores ASCII
// case: regexp_matches, or LIKE when the pattern holds no letter), and
// answers exactly as the folded form lower(strip_accents(v)) LIKE
// lower(strip_accents(p)) on every value, NOT LIKE included; a pattern
// that is not ASCII or longer than 1 KiB, or an expression in place of the
// column, keeps the folded form.
func TestLikeASCIIForm(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := likeASCIIDB(t)
	rel := sqlgate.Relation{Schema: "lg_rel", Name: "w", Columns: []string{"id", "s"}, Types: []string{"INTEGER", "VARCHAR"}}
	for _, p := range likeASCIIPatterns {
		for _, not := range []string{"", "NOT "} {
			lit := "'" + strings.ReplaceAll(strings.ReplaceAll(p.pat, `\`, `\\`), "\n", `\n`) + "'"
			esc := ""
			if p.escape != "" {
				esc = " ESCAPE '" + strings.ReplaceAll(p.escape, `\`, `\\`) + "'"
			}
			cond := "s " + not + "LIKE " + lit + esc
			t.Run(cond, func(t *testing.T) {
				got, out := runOver(t, g, db, rel, "SELECT id FROM w WHERE "+cond+" ORDER BY id")
				if !strings.Contains(out, "strlen(") {
					t.Errorf("the ASCII form is not used:\n%s", out)
				}
				want := likeFolded(t, db, not, p.pat, p.escape)
				if !slices.Equal(got, want) {
					t.Fatalf("got %v, the folded form %v\n%s", got, want, out)
				}
			})
		}
	}
	long := "%" + strings.Repeat("Ab", 2<<10) + "%"
	for _, cond := range []string{"s LIKE 'café%'", "concat(s, '') LIKE 'caf%'", "s LIKE concat('caf', '%')", "s LIKE '" + long + "'"} {
		t.Run(cond[:min(len(cond), 40)], func(t *testing.T) {
			got, out := runOver(t, g, db, rel, "SELECT id FROM w WHERE "+cond+" ORDER BY id")
			if strings.Contains(out, "strlen(") {
				t.Errorf("the ASCII form is used:\n%.300s", out)
			}
			if cond == "s LIKE '"+long+"'" && len(got) != 0 {
				t.Errorf("a long pattern matched %v", got)
			}
		})
	}
}

// TestLikeASCIIFormGenerated checks the ASCII form against the folded form
// on patterns generated from a fixed seed: letters of either case,
// wildcards, escapes and RE2 metacharacters.
func TestLikeASCIIFormGenerated(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := likeASCIIDB(t)
	rel := sqlgate.Relation{Schema: "lg_rel", Name: "w", Columns: []string{"id", "s"}, Types: []string{"INTEGER", "VARCHAR"}}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbBcCeEkKsSpP%%__|.*[]()$^+?{}#\\ \n"
	for range 300 {
		var b strings.Builder
		for range rng.IntN(7) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		pat := b.String()
		// MySQL's default escape character, \, or an explicit |; a
		// pattern may not end in an escape character that escapes nothing.
		esc, escClause := `\`, ""
		if rng.IntN(2) == 0 {
			esc, escClause = "|", " ESCAPE '|'"
		}
		if n := len(pat) - len(strings.TrimRight(pat, esc)); n%2 == 1 {
			pat += esc
		}
		not := []string{"", "NOT "}[rng.IntN(2)]
		lit := "'" + strings.ReplaceAll(strings.ReplaceAll(pat, `\`, `\\`), "\n", `\n`) + "'"
		cond := "s " + not + "LIKE " + lit + escClause
		got, out := runOver(t, g, db, rel, "SELECT id FROM w WHERE "+cond+" ORDER BY id")
		want := likeFolded(t, db, not, pat, esc)
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, the folded form %v\n%s", cond, got, want, out)
		}
	}
}

// likeASCIIDB is a DuckDB with lg_rel.w(id, s) holding likeASCIIValues
// and a NULL.
func likeASCIIDB(t *testing.T) *sql.DB {
	t.Helper()
	db := openTestDB(t, "duckdb", "", `CREATE SCHEMA lg_rel`, `CREATE TABLE lg_rel.w (id INTEGER, s VARCHAR)`)
	for i, v := range likeASCIIValues {
		if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (?, ?)`, i, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (99, NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// likeFolded runs the folded form of [NOT] LIKE pat ESCAPE esc on the
// engine directly, with the pattern bound as a parameter.
func likeFolded(t testing.TB, db *sql.DB, not, pat, esc string) []string {
	t.Helper()
	q := "SELECT id FROM lg_rel.w WHERE " + not + "(lower(strip_accents(s)) LIKE lower(strip_accents(?))"
	args := []any{pat}
	if esc != "" && strings.Contains(pat, esc) {
		q += " ESCAPE ?"
		args = append(args, esc)
	}
	q += ") ORDER BY id"
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s %q: %v", q, pat, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(id))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzLikeASCIIForm: whatever the value and the pattern, LIKE answers as
// its folded form lower(strip_accents(v)) LIKE lower(strip_accents(p))
// run on the engine directly, also with the facts the engine finds for an
// ASCII value (Relation.ASCII, NoUpper) (the escape character is MySQL's default \,
// or | or ! when escape names one).
func FuzzLikeASCIIForm(f *testing.F) {
	for _, s := range []struct {
		value, pat string
		escape     byte
	}{
		{"Special Requests", "%special%requests%", 0}, {"café", "CAF_", 0}, {"x_y", `x\_y`, 0},
		{"a|%b", "a||%%", '|'}, {"ÉCOLE", "%cole", 0}, {"\u212Aelvin", "kelvin", 0}, {"a.b*c", "%.B*%", '!'},
		{"line\nbreak", "LINE%BREAK", 0}, {"", "", 0}, {"[x]", "[X]", 0},
	} {
		f.Add(s.value, s.pat, s.escape)
	}
	g := sqlgate.New(sqlgate.Config{})
	db := openTestDB(f, "duckdb", "", `CREATE SCHEMA lg_rel`, `CREATE TABLE lg_rel.w (id INTEGER, s VARCHAR)`)
	rel := sqlgate.Relation{Schema: "lg_rel", Name: "w", Columns: []string{"id", "s"}, Types: []string{"INTEGER", "VARCHAR"}}
	f.Fuzz(func(t *testing.T, value, pat string, escape byte) {
		// Text the engine stores and MySQL's lexer reads back as sent.
		if !utf8.ValidString(value) || !utf8.ValidString(pat) || strings.ContainsRune(value+pat, 0) || len(pat) > 200 {
			return
		}
		esc, escClause := `\`, ""
		if escape == '|' || escape == '!' {
			esc, escClause = string(escape), " ESCAPE '"+string(escape)+"'"
		}
		if n := len(pat) - len(strings.TrimRight(pat, esc)); n%2 == 1 {
			pat += esc
		}
		if _, err := db.Exec(`DELETE FROM lg_rel.w`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (1, ?)`, value); err != nil {
			t.Fatal(err)
		}
		lit := "'" + strings.NewReplacer(`\`, `\\`, "'", "''", "\n", `\n`, "\r", `\r`, "\t", `\t`, "\x1a", `\Z`).Replace(pat) + "'"
		rels := []sqlgate.Relation{rel}
		if isASCII(value) { // and the facts the engine would find for it
			facts := rel
			noUpper, noLower := lacking(value)
			facts.ASCII, facts.NoUpper, facts.NoLower = []bool{false, true}, []uint32{0, noUpper}, []uint32{0, noLower}
			rels = append(rels, facts)
		}
		for _, not := range []string{"", "NOT "} {
			st, err := g.Parse("SELECT id FROM w WHERE s "+not+"LIKE "+lit+escClause, "s")
			if err != nil {
				return // refused (a limit), which is not this fuzzer's concern
			}
			for _, rel := range rels {
				m := map[sqlgate.TableRef]sqlgate.Relation{}
				for _, r := range st.Tables() {
					m[r] = rel
				}
				out, err := st.Render(m)
				if err != nil {
					return
				}
				got, err := queryStrings(db, out)
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if want := likeFolded(t, db, not, pat, esc); !slices.Equal(got, want) {
					t.Fatalf("%q %sLIKE %q: got %v, the folded form %v\n%s", value, not, pat, got, want, out)
				}
			}
		}
	})
}

// TestLikeCaseLetters: over a column whose values are ASCII and whose
// letters Relation.NoUpper and NoLower tell truthfully, LIKE answers as its
// folded form for every listed and generated pattern, NOT LIKE included,
// whether the pattern's letters occur in one case only (an exact form), a
// few in the other case (looked for first) or many (the ASCII form).
func TestLikeCaseLetters(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	var ascii []string
	for _, v := range likeASCIIValues {
		if isASCII(v) {
			ascii = append(ascii, v)
		}
	}
	sets := map[string][]string{
		"all":        ascii,
		"lower case": slices.DeleteFunc(slices.Clone(ascii), func(v string) bool { return v != strings.ToLower(v) }),
		"few upper":  {"Special requests", "special Requests", "pending deposits", "a.c", "x_y", "%", "Tiresias", "abc"},
		"one upper":  {"pending deposits", "Tiresias sleeps", "deposiTs pending", "final", ""},
		"upper case": {"ABC", "PROMO", "SPECIAL REQUESTS", "X%Y", "A*C", "MEDIUM POLISHED TIN"},
		"few lower":  {"ABC", "PROMO", "SPECIAL REQUESTs", "X%Y", "A*c", "MEDIUM POLISHED TIN"},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "aAbBcCeEpPrRsStT%%__|.*#\\ "
	pats := slices.Clone(likeASCIIPatterns)
	for range 150 {
		var b strings.Builder
		for range rng.IntN(7) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		pat := b.String()
		if n := len(pat) - len(strings.TrimRight(pat, `\`)); n%2 == 1 {
			pat += `\`
		}
		pats = append(pats, struct{ pat, escape string }{pat, `\`})
	}
	pats = append(pats, struct{ pat, escape string }{"%pending%deposits%", ""}, struct{ pat, escape string }{"%TIRESIAS%", ""})
	for name, values := range sets {
		t.Run(name, func(t *testing.T) {
			db := openTestDB(t, "duckdb", "", `CREATE SCHEMA lg_rel`, `CREATE TABLE lg_rel.w (id INTEGER, s VARCHAR)`, `INSERT INTO lg_rel.w VALUES (99, NULL)`)
			for i, v := range values {
				if _, err := db.Exec(`INSERT INTO lg_rel.w VALUES (?, ?)`, i, v); err != nil {
					t.Fatal(err)
				}
			}
			noUpper, noLower := lacking(values...)
			rel := sqlgate.Relation{Schema: "lg_rel", Name: "w", Columns: []string{"id", "s"}, Types: []string{"INTEGER", "VARCHAR"},
				ASCII: []bool{false, true}, NoUpper: []uint32{0, noUpper}, NoLower: []uint32{0, noLower}}
			forms := map[string]int{}
			for _, p := range pats {
				for _, not := range []string{"", "NOT "} {
					lit := "'" + strings.ReplaceAll(strings.ReplaceAll(p.pat, `\`, `\\`), "\n", `\n`) + "'"
					esc := ""
					if p.escape != "" && p.escape != `\` {
						esc = " ESCAPE '" + p.escape + "'"
					}
					cond := "s " + not + "LIKE " + lit + esc
					got, out := runOver(t, g, db, rel, "SELECT id FROM w WHERE "+cond+" ORDER BY id")
					switch {
					case strings.Contains(out, "contains("):
						forms["looked for"]++
					case strings.Contains(out, "regexp_matches"):
						forms["ASCII"]++
					default:
						forms["exact"]++
					}
					escape := p.escape
					if escape == "" {
						escape = `\`
					}
					if want := likeFolded(t, db, not, p.pat, escape); !slices.Equal(got, want) {
						t.Errorf("%s: got %v, the folded form %v\n%s", cond, got, want, out)
					}
				}
			}
			t.Logf("%v", forms)
		})
	}
}

// lacking returns the letters that none of values holds in upper case,
// and in lower case, as Relation.NoUpper and NoLower hold them.
func lacking(values ...string) (noUpper, noLower uint32) {
	noUpper, noLower = 1<<26-1, 1<<26-1
	for _, v := range values {
		for _, c := range []byte(v) {
			switch {
			case 'A' <= c && c <= 'Z':
				noUpper &^= 1 << (c - 'A')
			case 'a' <= c && c <= 'z':
				noLower &^= 1 << (c - 'a')
			}
		}
	}
	return noUpper, noLower
}

// isASCII reports whether s holds ASCII only.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
