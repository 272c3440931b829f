package sqlgate_test

import (
	"errors"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestJSONFunctionAnswers runs the JSON functions of funcs_more_json.go on
// DuckDB and compares each with MySQL 8.0's documented answer.
func TestJSONFunctionAnswers(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	tests := []struct{ expr, want string }{
		{`JSON_OBJECT('id', 87, 'name', 'carrot')`, `{"id": 87, "name": "carrot"}`},
		{`JSON_OBJECT('name', 'carrot', 'id', 87, 'a', NULL)`, `{"a": null, "id": 87, "name": "carrot"}`},
		{`JSON_OBJECT('bb', 1, 'a', 2, 'c', 3)`, `{"a": 2, "c": 3, "bb": 1}`},
		{`JSON_OBJECT()`, `{}`},
		{`JSON_ARRAY()`, `[]`},
		// A DECIMAL keeps its scale in JSON_ARRAYAGG, as in JSON_ARRAY.
		{`JSON_ARRAYAGG(x) FROM (SELECT CAST(9.7 AS DECIMAL(4,2)) AS x UNION ALL SELECT NULL) AS t`, `[9.70, null]`},
		{`JSON_ARRAYAGG(x) FROM (SELECT 'a"b' AS x) AS t`, `["a\"b"]`},
		{`JSON_ARRAYAGG(x) FROM (SELECT DATE '2024-01-02' AS x) AS t`, `["2024-01-02"]`},
		{`JSON_ARRAY(1, 'abc', NULL, TRUE, 'a"b', -2, 1.50)`, `[1, "abc", null, true, "a\"b", -2, 1.50]`},
		{`JSON_ARRAY(JSON_ARRAY(1, 2), JSON_OBJECT('k', 'v'))`, `[[1, 2], {"k": "v"}]`},
		{`JSON_ARRAY(DATE '2024-01-02', CAST(12.5 AS DECIMAL(10,2)), 'x\ny')`, `["2024-01-02", 12.50, "x\ny"]`},
		{`JSON_VALID('{"a": 1}')`, `1`},
		{`JSON_VALID('hello')`, `0`},
		{`JSON_VALID('[1,]')`, `0`},
		{`JSON_VALID('"hello"')`, `1`},
		{`JSON_VALID(NULL)`, `<nil>`},
		{`JSON_TYPE('[1]')`, `ARRAY`},
		{`JSON_TYPE('{"a": [10, true]}')`, `OBJECT`},
		{`JSON_TYPE(JSON_EXTRACT('{"a": [10, true]}', '$.a[1]'))`, `BOOLEAN`},
		{`JSON_TYPE('1.5')`, `DOUBLE`},
		{`JSON_TYPE('"x"')`, `STRING`},
		{`JSON_TYPE('null')`, `NULL`},
		{`JSON_TYPE('1')`, `INTEGER`},
		{`JSON_TYPE('-1')`, `INTEGER`},
		{`JSON_TYPE('18446744073709551615')`, `UNSIGNED INTEGER`},
		{`JSON_LENGTH('[1, 2, {"a": 3}]')`, `3`},
		{`JSON_LENGTH('{"a": 1, "b": {"c": 30}}')`, `2`},
		{`JSON_LENGTH('{"a": 1, "b": {"c": 30}}', '$.b')`, `1`},
		{`JSON_LENGTH('5')`, `1`},
		{`JSON_LENGTH(NULL)`, `<nil>`},
		{`JSON_LENGTH('{"a": 1}', '$.x')`, `<nil>`},
		{`JSON_KEYS('{"a": 1, "b": {"c": 30}}')`, `["a", "b"]`},
		{`JSON_KEYS('{"a": 1, "b": {"c": 30}}', '$.b')`, `["c"]`},
		{`JSON_KEYS('{"bb": 1, "a": 2, "B": 3}')`, `["B", "a", "bb"]`},
		{`JSON_KEYS('[1]')`, `<nil>`},
		{`JSON_CONTAINS_PATH('{"a": 1, "b": 2}', 'one', '$.a', '$.e')`, `1`},
		{`JSON_CONTAINS_PATH('{"a": 1, "b": 2}', 'all', '$.a', '$.e')`, `0`},
		{`JSON_QUOTE('null')`, `"null"`},
		{`JSON_QUOTE('"null"')`, `"\"null\""`},
		{`JSON_QUOTE('[1, 2, 3]')`, `"[1, 2, 3]"`},
		{`JSON_UNQUOTE('"abc"')`, `abc`},
		{`JSON_UNQUOTE('abc')`, `abc`},
		{`JSON_UNQUOTE('"a\\tb"')`, "a\tb"},
		{`JSON_EXTRACT('[10, 20, [30, 40]]', '$[1]')`, `20`},
		{`CAST(JSON_EXTRACT('{"a": "x"}', '$.a') AS CHAR)`, `"x"`},
		{`JSON_EXTRACT('{"a": "x"}', '$.b')`, `<nil>`},
		{`JSON_UNQUOTE(JSON_EXTRACT('{"a": "x"}', '$.a'))`, `x`},
		{`JSON_UNQUOTE(JSON_EXTRACT('{"a": null}', '$.a'))`, `null`}, // MySQL: the text null
	}
	for _, tt := range tests {
		got, err := policyRun(t, g, db, nil, "SELECT "+tt.expr)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s = %q, want %q", tt.expr, got, tt.want)
		}
	}
	// Values from columns.
	got, err := policyRun(t, g, db, nil, "SELECT JSON_OBJECT('id', id, 'name', name) FROM people ORDER BY id LIMIT 1")
	if err != nil || len(got) != 1 || got[0] != `{"id": 1, "name": "ann"}` {
		t.Errorf("JSON_OBJECT of columns = %q, %v", got, err)
	}
}

// TestJSONFunctionRefusals: what DuckDB reads or prints differently from
// MySQL is refused, at translation or at run time.
func TestJSONFunctionRefusals(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	for _, expr := range []string{
		`JSON_LENGTH('not json')`,                             // MySQL: Invalid JSON text
		`JSON_LENGTH('[1,]')`,                                 // DuckDB reads it
		`JSON_LENGTH('{"a": 1, "a": 2}')`,                     // duplicate keys
		`JSON_LENGTH(CONCAT('[1, ', 'NaN]'))`,                 // at run time
		`JSON_VALID(CONCAT('[1, ', '2,]'))`,                   // at run time: DuckDB says valid
		`JSON_LENGTH('5', '$[0]')`,                            // MySQL: [0] of a scalar is the scalar
		`JSON_EXTRACT('{"a": 1}', '$[0]')`,                    // likewise
		`JSON_EXTRACT('{"a": 1.5}', '$.a')`,                   // a DOUBLE
		`JSON_EXTRACT('{"a": 1, "a": 2}', '$.a')`,             // MySQL keeps the last duplicate, DuckDB the first
		`JSON_EXTRACT('[1, 2,]', '$[0]')`,                     // MySQL: Invalid JSON text
		`JSON_EXTRACT(CONCAT('{"a": 1, ', '"a": 2}'), '$.a')`, // at run time
		`JSON_EXTRACT(CONCAT('[1, ', 'NaN]'), '$[0]')`,        // at run time
		`JSON_EXTRACT('{"a": [1]}', '$.a')`,                   // an array
		`JSON_EXTRACT('{"a": 1}', 'a')`,                       // MySQL: invalid path
		`JSON_EXTRACT('{"a": 1}', '$.*')`,                     // wildcard
		`JSON_EXTRACT('{"a": 1}', '$.a', '$.b')`,              // several paths
		`JSON_KEYS('{"a": 1}', '$."a b"')`,                    // quoted member
		`JSON_OBJECT('a', 1, 'a', 2)`,                         // duplicate keys
		`JSON_OBJECT(name, 1) FROM people`,                    // key not a literal
		`JSON_OBJECT('a')`,                                    // odd
		`JSON_ARRAY(1.5E0)`,                                   // a DOUBLE
		`JSON_ARRAY(id > 1) FROM people`,                      // a boolean
		`JSON_ARRAY(CAST(1 AS DOUBLE))`,                       // a DOUBLE, at run time
		`JSON_QUOTE(5)`,                                       // not a string
		`JSON_QUOTE(id) FROM people`,                          // not a string, at run time
		`JSON_UNQUOTE(name) FROM people`,                      // not of JSON_EXTRACT
		`JSON_CONTAINS_PATH('{"a": 1}', 'some', '$.a')`,
		`JSON_ARRAYAGG(x) FROM (SELECT 2.5E0 AS x) AS t`,                           // a DOUBLE, at run time
		`JSON_ARRAYAGG(x) FROM (SELECT TIMESTAMP '2024-01-02 03:04:05' AS x) AS t`, // a DATETIME, at run time
		`JSON_ARRAYAGG(x) FROM (SELECT id > 1 AS x FROM people) AS t`,              // a boolean, at run time
	} {
		if got, err := policyRun(t, g, db, nil, "SELECT "+expr); err == nil {
			t.Errorf("%s answered %v; want a refusal", expr, got)
		}
	}
}

// TestJSONLiteralFunctions: the functions computed in the gate of literal
// arguments give MySQL's documented answers, and refuse columns.
func TestJSONLiteralFunctions(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	for expr, want := range map[string]string{
		`JSON_DEPTH('{}')`:              `1`,
		`JSON_DEPTH('[10, 20]')`:        `2`,
		`JSON_DEPTH('[10, {"a": 20}]')`: `3`,
		`JSON_DEPTH('1')`:               `1`,
		`JSON_CONTAINS('{"a": 1, "b": 2, "c": {"d": 4}}', '1', '$.a')`:                           `1`,
		`JSON_CONTAINS('{"a": 1, "b": 2, "c": {"d": 4}}', '1', '$.b')`:                           `0`,
		`JSON_CONTAINS('{"a": 1, "b": 2, "c": {"d": 4}}', '{"d": 4}', '$.c')`:                    `1`,
		`JSON_CONTAINS('[1, 2, 3]', '[1, 3]')`:                                                   `1`,
		`JSON_CONTAINS('{"a": 1}', '1', '$.x')`:                                                  `<nil>`,
		`JSON_SET('{"a": 1}', '$.b', 2)`:                                                         `{"a": 1, "b": 2}`,
		`JSON_SET('{"a": 1, "b": [2, 3]}', '$.a', 10, '$.c', '[true, false]')`:                   `{"a": 10, "b": [2, 3], "c": "[true, false]"}`,
		`JSON_INSERT('{"a": 1}', '$.a', 5, '$.c', 3)`:                                            `{"a": 1, "c": 3}`,
		`JSON_REPLACE('{"a": 1}', '$.a', 5, '$.c', 3)`:                                           `{"a": 5}`,
		`JSON_REMOVE('[1, 2, 3]', '$[1]')`:                                                       `[1, 3]`,
		`JSON_REMOVE('{"a": 1, "b": 2}', '$.a', '$.x')`:                                          `{"b": 2}`,
		`JSON_ARRAY_APPEND('[1, 2]', '$', 3)`:                                                    `[1, 2, 3]`,
		`JSON_ARRAY_APPEND('{"a": 1}', '$.a', 2)`:                                                `{"a": [1, 2]}`,
		`JSON_ARRAY_INSERT('[1, 2]', '$[0]', 0)`:                                                 `[0, 1, 2]`,
		`JSON_ARRAY_INSERT('[1, 2]', '$[9]', 0)`:                                                 `[1, 2, 0]`,
		`JSON_MERGE_PRESERVE('[1, 2]', '[true, false]')`:                                         `[1, 2, true, false]`,
		`JSON_MERGE_PRESERVE('{"a": 1}', '{"a": 2, "b": 3}')`:                                    `{"a": [1, 2], "b": 3}`,
		`JSON_MERGE_PRESERVE('1', '{"a": 1}')`:                                                   `[1, {"a": 1}]`,
		`JSON_MERGE_PATCH('{"a": 1, "b": 2}', '{"b": null, "c": 3}')`:                            `{"a": 1, "c": 3}`,
		`JSON_MERGE_PATCH('[1, 2]', '[true, false]')`:                                            `[true, false]`,
		`JSON_OVERLAPS('[1, 3, 5, 7]', '[2, 5, 7]')`:                                             `1`,
		`JSON_OVERLAPS('[1, 3, 5, 7]', '[2, 6]')`:                                                `0`,
		`JSON_OVERLAPS('{"a": 1, "b": 10}', '{"c": 1, "b": 10}')`:                                `1`,
		`JSON_OVERLAPS('5', '[2, 5]')`:                                                           `1`,
		`JSON_SEARCH('["abc", [{"k": "10"}, "def"], {"x": "abc"}, {"y": "bcd"}]', 'one', 'abc')`: `"$[0]"`,
		`JSON_SEARCH('["abc", [{"k": "10"}, "def"], {"x": "abc"}, {"y": "bcd"}]', 'all', 'abc')`: `["$[0]", "$[2].x"]`,
		`JSON_SEARCH('["abc", [{"k": "10"}, "def"], {"x": "abc"}, {"y": "bcd"}]', 'all', '10')`:  `"$[1][0].k"`,
		`JSON_SEARCH('["abc", [{"k": "10"}, "def"], {"x": "abc"}, {"y": "bcd"}]', 'all', '%b%')`: `["$[0]", "$[2].x", "$[3].y"]`,
		`JSON_SEARCH('["abc"]', 'all', 'x')`:                                                     `<nil>`,
		`JSON_PRETTY('{"b": [1, 2], "a": {}}')`:                                                  "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2\n  ]\n}",
		`JSON_VALUE('{"a": "x"}', '$.a')`:                                                        `x`,
	} {
		got, err := policyRun(t, g, db, nil, "SELECT "+expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s = %q, want %q", expr, got, want)
		}
	}
	for _, expr := range []string{
		`JSON_DEPTH(name) FROM people`,
		`JSON_SET('{"a": 1}', '$.b', JSON_ARRAY(1))`,
		`JSON_SET('1', '$[1]', 2)`, // MySQL wraps the scalar
		`JSON_SET('{"a": 1.5}', '$.b', 2)`,
		`JSON_REMOVE('[1]', '$')`,
		`JSON_SEARCH('["ABC"]', 'one', 'abc')`, // the collation decides
		`JSON_SEARCH('["é"]', 'one', 'e')`,
		`JSON_MERGE_PATCH(NULL, '{"a": 1}')`,
		`JSON_CONTAINS('[1]', '1', '$[*]')`,
	} {
		if got, err := policyRun(t, g, db, nil, "SELECT "+expr); err == nil {
			t.Errorf("%s answered %v; want a refusal", expr, got)
		}
	}
}

// TestJSONBuildersLimited: JSON_ARRAY, JSON_OBJECT and JSON_QUOTE build a
// string from their arguments, escaped (up to twice as long): fed their own
// result by a recursive CTE, or doubled through CTEs, they must meet the
// engine's string limit as CONCAT does, not grow without bound.
func TestJSONBuildersLimited(t *testing.T) {
	db := engineDB(t)
	g := sqlgate.New(sqlgate.Config{})
	for _, c := range []struct{ sql, fn string }{
		{"WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT json_array(s, s), k + 1 FROM r WHERE k < 16) SELECT max(length(s)) FROM r", "JSON_ARRAY"},
		{"WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT json_array(s), k + 1 FROM r WHERE k < 40) SELECT max(length(s)) FROM r", "JSON_ARRAY"},
		{"WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT json_object('a', s, 'b', s), k + 1 FROM r WHERE k < 16) SELECT max(length(s)) FROM r", "JSON_OBJECT"},
		{"WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT json_quote(s), k + 1 FROM r WHERE k < 40) SELECT max(length(s)) FROM r", "JSON_QUOTE"},
		{strings.ReplaceAll(doubling("SELECT v AS s FROM big", 7), "concat(s, s)", "json_array(s, s)"), "JSON_ARRAY"},
	} {
		if _, err := g.Parse(c.sql, "s"); err != nil {
			if !errors.Is(err, sqlgate.ErrLimit) {
				t.Errorf("%s: %v, want a limit", c.sql, err)
			}
			continue // refused before the engine
		}
		_, err := runRendered(t, db, g, c.sql)
		if err == nil {
			t.Errorf("%s: no error", c.sql)
			continue
		}
		msg := err.Error()
		if i := strings.Index(msg, "Invalid Input Error: "); i > 0 {
			msg = msg[i:]
		}
		le, ok := sqlgate.EngineLimit(msg)
		if !ok || !strings.Contains(le.Error(), "bytes for a string "+c.fn+" builds") {
			t.Errorf("%s: %v, want the engine's %s limit", c.sql, err, c.fn)
		}
	}
	// Under the limit the answer is unchanged.
	got, err := runRendered(t, db, g, "WITH RECURSIVE r (s, k) AS (SELECT 'x', 1 UNION ALL SELECT json_array(s, k), k + 1 FROM r WHERE k < 3) SELECT s FROM r WHERE k = 3")
	if err != nil || len(got) != 1 || got[0] != `["[\"x\", 1]", 2]` {
		t.Fatalf("recursive JSON_ARRAY = %q, %v", got, err)
	}
	// A literal result computed in the gate is bounded too.
	if _, err := g.Parse("SELECT json_pretty('"+strings.Repeat("[", 100)+strings.Repeat("]", 100)+"')", "s"); err != nil {
		t.Fatalf("JSON_PRETTY of depth 100: %v", err)
	}
}
