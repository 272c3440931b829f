package sqlgate_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"lakegate/authz/sqlgate"
)

// Statements whose literals hold a secret: the normalised text must hold
// none of them.
func TestNormalizeDropsEveryLiteral(t *testing.T) {
	for _, c := range []struct {
		sql     string
		secrets []string
	}{
		{`SELECT * FROM people WHERE ssn = '123-45-6789'`, []string{"123-45-6789"}},
		{`SELECT * FROM t WHERE a = "dquoted-secret"`, []string{"dquoted-secret"}},
		{`SELECT * FROM t WHERE b = x'5345435245' OR b = X'5345435246'`, []string{"5345435245", "5345435246"}},
		{`SELECT * FROM t WHERE b = 0x5345435245`, []string{"5345435245"}},
		{`SELECT * FROM t WHERE b = b'1011011101' OR b = 0b1011011100`, []string{"1011011101", "1011011100"}},
		{`SELECT * FROM t WHERE n = _utf8mb4'charset-secret'`, []string{"charset-secret"}},
		{`SELECT * FROM t WHERE n = N'national-secret'`, []string{"national-secret"}},
		{`SELECT * FROM t WHERE d > NOW() - INTERVAL '37' MONTH`, []string{"37"}},
		{`SELECT * FROM t WHERE d = DATE '2019-03-14' AND ts = TIMESTAMP '2019-03-14 15:09:26'`, []string{"2019-03-14", "15:09:26"}},
		{`SELECT * FROM t /*! WHERE s = 'exec-comment-secret' */`, []string{"exec-comment-secret"}},
		{`SELECT * FROM t /*!50000 WHERE s = 'versioned-secret' */`, []string{"versioned-secret"}},
		{`SELECT /*+ hint('hint-secret') */ a FROM t`, []string{"hint-secret"}},
		{"SELECT a FROM t -- 'dash-comment-secret'\nWHERE a = 1", []string{"dash-comment-secret"}},
		{"SELECT a FROM t # hash-comment-secret\nWHERE a = 1", []string{"hash-comment-secret"}},
		{`SELECT a FROM t /* block-comment-secret */`, []string{"block-comment-secret"}},
		{`SELECT a FROM t WHERE id IN (314159, 271828, 161803)`, []string{"314159", "271828", "161803"}},
		{`SELECT a FROM t WHERE id IN ('in-secret-1', 'in-secret-2')`, []string{"in-secret-1", "in-secret-2"}},
		{`SELECT a FROM t WHERE x = -98765.4321e3 AND y = .5772156`, []string{"98765", "4321", "5772156"}},
		{`SELECT a FROM t LIMIT 8675309 OFFSET 5551212`, []string{"8675309", "5551212"}},
		{`SELECT a FROM t WHERE s = 'it\'s-escaped-secret' AND r = 'quote''doubled-secret'`, []string{"escaped-secret", "doubled-secret"}},
		{`SELECT a FROM t WHERE s = 'adjacent' 'concatenated-secret'`, []string{"adjacent", "concatenated-secret"}},
		{`INSERT INTO t VALUES (1, 'row-secret-1'), (2, 'row-secret-2')`, []string{"row-secret-1", "row-secret-2"}},
		{`UPDATE t SET pw = 'hunter2-secret' WHERE id = 77777`, []string{"hunter2-secret", "77777"}},
		{`SELECT a FROM t WHERE s = 'unterminated-secret`, []string{"unterminated-secret"}},
		{`SELECT a FROM t WHERE s = 'a'; SELECT 'second-statement-secret'`, []string{"second-statement-secret"}},
		{`SELECT a FROM t WHERE j->'$.json-path-secret' = 1`, []string{"json-path-secret"}},
		{`SELECT @v := 'assigned-secret'`, []string{"assigned-secret"}},
		{`SELECT a FROM t WHERE s LIKE '%like-secret%' ESCAPE '!'`, []string{"like-secret"}},
		{`SELECT a FROM t WHERE s = CONCAT('con', 'cat-secret')`, []string{"cat-secret"}},
		{`INSERT /*+ SET_VAR(x='insert-hint-secret') */ INTO t VALUES (1)`, []string{"insert-hint-secret"}},
		{`UPDATE /*+ hint('update-hint-secret') */ t SET a = 1`, []string{"update-hint-secret"}},
		{`SELECT a FROM t /*T! WHERE s = 'tidb-comment-secret' */`, []string{"tidb-comment-secret"}},
		{`SELECT a FROM t /*T![clustered_index] WHERE s = 'feature-secret' */`, []string{"feature-secret"}},
		{`SELECT a FROM t /* unterminated 'comment-secret'`, []string{"comment-secret"}},
		{`SELECT a FROM t WHERE s = _binary 'binary-secret' COLLATE utf8mb4_bin`, []string{"binary-secret"}},
		{`SELECT a FROM t WHERE s = 'a' AND u = "it's ""double"" secret"`, []string{"double", "secret"}},
	} {
		got := sqlgate.Normalize(c.sql)
		for _, s := range c.secrets {
			if strings.Contains(strings.ToLower(got), strings.ToLower(s)) {
				t.Errorf("Normalize(%q) = %q: holds %q", c.sql, got, s)
			}
		}
	}
}

// Normalize keeps the statement's shape: keywords, identifiers and
// operators, literals as "?".
func TestNormalizeKeepsTheShape(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{"SELECT a, b FROM sales.orders WHERE id = 42", "select `a` , `b` from `sales` . `orders` where `id` = ?"},
		{"select * from t where a in (1, 2, 3)", "select * from `t` where `a` in ( ... )"},
		{"SELECT `Weird Name` FROM t LIMIT 10", "select `weird name` from `t` limit ?"},
		{"SELECT a FROM t WHERE b = ?", "select `a` from `t` where `b` = ?"},
		{"", ""},
		{"SELECT a, `it's` FROM t WHERE b = 1", "select `a` , `it" + sqlgate.RedactedMarker},
		{"SELECT a FROM `x/*y` WHERE b = 1", "select `a` from `x" + sqlgate.RedactedMarker},
	} {
		if got := sqlgate.Normalize(c.sql); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.sql, got, c.want)
		}
	}
}

func TestNormalizeBoundsItsLength(t *testing.T) {
	long := "SELECT " + strings.Repeat("aé, ", 40<<10) + "b FROM t"
	got := sqlgate.Normalize(long)
	if len(got) > sqlgate.MaxNormalizedBytes {
		t.Fatalf("%d bytes, want at most %d", len(got), sqlgate.MaxNormalizedBytes)
	}
	if !strings.HasSuffix(got, sqlgate.TruncatedMarker) || !utf8.ValidString(got) {
		t.Fatalf("cut without the marker or inside a character: …%q", got[len(got)-40:])
	}
}

// BenchmarkNormalize measures Normalize on a point query: every statement
// pays it when the access log is on.
func BenchmarkNormalize(b *testing.B) {
	sql := "SELECT id, name, email FROM sales.customers WHERE id = 42 AND region IN ('eu', 'us') LIMIT 1"
	b.ReportAllocs()
	for b.Loop() {
		_ = sqlgate.Normalize(sql)
	}
}
