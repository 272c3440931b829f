package sqlgate_test

import (
	"slices"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestTranslations pins the printed DuckDB form of every translated MySQL
// function and operator (funcs.go, translate.go). Each form is checked
// against MySQL's answer by the conformance harness
// (integration/testdata/conformance).
func TestTranslations(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT a FROM t WHERE a = 'x' COLLATE utf8mb4_bin AND a LIKE 'y%' COLLATE utf8mb4_bin AND a REGEXP 'z' AND b NOT RLIKE 'w' COLLATE binary",
			"SELECT \"a\" FROM \"lg_rel\".\"t_0\" AS \"t\" WHERE ((((\"a\" = ('x' COLLATE c)) AND (\"a\" LIKE ('y%' COLLATE c) ESCAPE '\\')) AND regexp_matches(\"a\", 'z', 'i')) AND (NOT (regexp_matches(\"b\", ('w' COLLATE c), 'c'))))"},
		{"SELECT a + b, a - 1, a * 2 + 1, d >= '2023-01-08 12:00:00', d BETWEEN '2023-01-01' AND '2023-01-02 10:00', d IN ('2023-01-01 00:00:01') FROM t",
			"SELECT ((+(\"a\")) + (+(\"b\"))),((+(\"a\")) - 1),((\"a\" * 2) + 1),(\"d\" >= CAST('2023-01-08 12:00:00' AS TIMESTAMP)),(\"d\" BETWEEN '2023-01-01' AND CAST('2023-01-02 10:00' AS TIMESTAMP)),(\"d\" IN (CAST('2023-01-01 00:00:01' AS TIMESTAMP))) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT round(2.5E0), round(sqrt(a), 1), truncate(a, 2), log(a), log(2, a), ln(a), log10(a), log2(a), sqrt(a), pow(a, 2), pi(), rand(), exp(a), sign(a), mod(a, 3) FROM t",
			"SELECT round_even(2.5e+00, 0),round_even((list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 >= 0) THEN sqrt(__lg_v.f0) END)[1]), 1),trunc(\"a\", 2),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 > 0) THEN ln(__lg_v.f0) END)[1]),(list_transform([struct_pack(f0 := 2, f1 := \"a\")], lambda __lg_v: CASE WHEN ((__lg_v.f0 > 0) AND (__lg_v.f0 <> 1) AND (__lg_v.f1 > 0)) THEN log(__lg_v.f0, __lg_v.f1) END)[1]),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 > 0) THEN ln(__lg_v.f0) END)[1]),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 > 0) THEN log10(__lg_v.f0) END)[1]),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 > 0) THEN log2(__lg_v.f0) END)[1]),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 >= 0) THEN sqrt(__lg_v.f0) END)[1]),pow(\"a\", 2),pi(),random(),exp(\"a\"),sign(\"a\"),(\"a\" % nullif(3, 0)) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT greatest(a, b), least(a, 1), isnull(a), field(a, 'x', 'y') FROM t",
			"SELECT (list_transform([struct_pack(f0 := \"a\", f1 := \"b\")], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) OR (__lg_v.f1 IS NULL) THEN NULL WHEN (__lg_v.f0 >= __lg_v.f1) THEN __lg_v.f0 ELSE __lg_v.f1 END)[1]),(list_transform([struct_pack(f0 := \"a\", f1 := 1)], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) OR (__lg_v.f1 IS NULL) THEN NULL WHEN (__lg_v.f0 <= __lg_v.f1) THEN __lg_v.f0 ELSE __lg_v.f1 END)[1]),(\"a\" IS NULL),(list_transform([struct_pack(f0 := \"a\", f1 := 'x', f2 := 'y')], lambda __lg_v: CASE WHEN (__lg_v.f0 = __lg_v.f1) THEN 1 WHEN (__lg_v.f0 = __lg_v.f2) THEN 2 ELSE 0 END)[1]) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT concat(a, 'x', 1), concat_ws(',', a, b), left(a, 2), right(a, b), lpad(a, 5, '0'), rpad(a, 3, '.'), reverse(a), repeat(a, 2), space(3) FROM t",
			"SELECT ((list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1]) || 'x' || CAST(1 AS VARCHAR)),concat_ws(',', (list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1]), (list_transform([struct_pack(f0 := \"b\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1])),left(\"a\", 2),(list_transform([struct_pack(f0 := \"a\", f1 := \"b\")], lambda __lg_v: CASE WHEN (__lg_v.f1 < 0) THEN right(__lg_v.f0, 0) ELSE right(__lg_v.f0, __lg_v.f1) END)[1]),lpad((list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1]), 5, '0'),rpad((list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1]), 3, '.'),reverse(\"a\"),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (strlen(__lg_v.f0) > 16384) THEN error('sqlgate: statement exceeds the limit of 32768 bytes for a string REPEAT builds') ELSE repeat(__lg_v.f0, 2) END)[1]),repeat(' ', 3) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT locate('x', a), position('y' IN a), instr(a, 'z'), substring_index(a, '.', 2), substring_index(a, '.', -1), substring_index(a, '.', 0) FROM t",
			"SELECT instr(lower(strip_accents(\"a\")), lower(strip_accents('x'))),instr(lower(strip_accents(\"a\")), lower(strip_accents('y'))),instr(lower(strip_accents(\"a\")), lower(strip_accents('z'))),array_to_string(string_split(\"a\", '.')[1:2], '.'),array_to_string(string_split(\"a\", '.')[(-(1)):], '.'),substring(\"a\", 1, 0) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT substring(a, 0), substring(a, -2, 1), mid(a, b, 2), ascii(a), char(65), md5(a), sha1(a), format(a, 2), uuid(), trim(LEADING '0' FROM a), trim(TRAILING 'x' FROM a), trim('y' FROM a) FROM t",
			"SELECT (list_transform([struct_pack(f0 := \"a\", f1 := 0)], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) OR (__lg_v.f1 IS NULL) THEN NULL WHEN (__lg_v.f1 = 0) OR ((0 - __lg_v.f1) > length(__lg_v.f0)) THEN '' ELSE substring(__lg_v.f0, __lg_v.f1) END)[1]),(list_transform([struct_pack(f0 := \"a\", f1 := (-(2)), f2 := 1)], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) OR (__lg_v.f1 IS NULL) OR (__lg_v.f2 IS NULL) THEN NULL WHEN (__lg_v.f1 = 0) OR ((0 - __lg_v.f1) > length(__lg_v.f0)) OR (__lg_v.f2 <= 0) THEN '' ELSE substring(__lg_v.f0, __lg_v.f1, __lg_v.f2) END)[1]),(list_transform([struct_pack(f0 := \"a\", f1 := \"b\", f2 := 2)], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) OR (__lg_v.f1 IS NULL) OR (__lg_v.f2 IS NULL) THEN NULL WHEN (__lg_v.f1 = 0) OR ((0 - __lg_v.f1) > length(__lg_v.f0)) OR (__lg_v.f2 <= 0) THEN '' ELSE substring(__lg_v.f0, __lg_v.f1, __lg_v.f2) END)[1]),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) THEN NULL WHEN (ascii(__lg_v.f0) < 128) THEN ascii(__lg_v.f0) ELSE error('ASCII of a non-ASCII character is not supported') END)[1]),(list_transform([struct_pack(f0 := 65)], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) THEN '' WHEN (__lg_v.f0 BETWEEN 0 AND 127) THEN chr(CAST(__lg_v.f0 AS INTEGER)) ELSE error('CHAR of a code outside 0 to 127 is not supported') END)[1]),md5(\"a\"),sha1(\"a\"),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) THEN NULL ELSE format('{:,.2f}', CAST(round(__lg_v.f0, 2) AS DECIMAL(38,2))) END)[1]),CAST(gen_random_uuid() AS VARCHAR),ltrim(\"a\", '0'),rtrim(\"a\", 'x'),trim(\"a\", 'y') FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT hour(a), minute(a), second(a), quarter(a), dayofyear(a), dayname(a), monthname(a), last_day(a), dayofweek(a), weekday(a), week(a), date(a), unix_timestamp(a), from_unixtime(a), curdate(), now() FROM t",
			"SELECT hour(\"a\"),minute(\"a\"),second(\"a\"),quarter(\"a\"),dayofyear(\"a\"),dayname(\"a\"),monthname(\"a\"),last_day(\"a\"),(dayofweek(\"a\") + 1),(isodow(\"a\") - 1),CAST(strftime(\"a\", '%U') AS INTEGER),CAST(\"a\" AS DATE),epoch(\"a\"),CAST(to_timestamp(\"a\") AS TIMESTAMP),current_date,CAST(date_trunc('second', current_timestamp) AS TIMESTAMP) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT datediff('2025-01-01', a), date_format(a, '%Y-%m-%d %H:%i:%s %W %e %%'), str_to_date(a, '%d/%m/%Y'), str_to_date(a, '%Y-%m-%d %H:%i'), DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00' FROM t",
			"SELECT date_diff('day', CAST(\"a\" AS DATE), CAST('2025-01-01' AS DATE)),strftime(\"a\", '%Y-%m-%d %H:%M:%S %A %-d %%'),CAST(strptime(\"a\", '%d/%m/%Y') AS DATE),strptime(\"a\", '%Y-%m-%d %H:%M'),CAST('2024-01-01' AS DATE),CAST('2024-01-01 10:00:00' AS TIMESTAMP) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT date_add(a, INTERVAL 7 DAY), date_sub(a, INTERVAL 1 MONTH), a + INTERVAL 1 QUARTER, date_add(a, INTERVAL 2 HOUR), date_add('2024-01-31', INTERVAL 1 MONTH), adddate('2024-01-01 10:00:00', INTERVAL 1 DAY) FROM t",
			"SELECT CAST(((\"a\" + 0) + to_days(CAST(7 AS INTEGER))) AS DATE),CAST(((\"a\" + 0) - to_months(CAST(1 AS INTEGER))) AS DATE),CAST(((\"a\" + 0) + to_months((3 * CAST(1 AS INTEGER)))) AS DATE),(\"a\" + to_hours(CAST(2 AS INTEGER))),CAST(CAST(((CAST('2024-01-31' AS DATE) + 0) + to_months(CAST(1 AS INTEGER))) AS DATE) AS VARCHAR),CAST((CAST('2024-01-01 10:00:00' AS TIMESTAMP) + to_days(CAST(1 AS INTEGER))) AS VARCHAR) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT timestampdiff(HOUR, a, '2025-01-01 00:00:00'), timestampdiff(YEAR, a, b), extract(YEAR FROM a), extract(SECOND FROM a) FROM t",
			"SELECT date_sub('hour', \"a\", CAST('2025-01-01 00:00:00' AS TIMESTAMP)),(list_transform([struct_pack(f0 := \"a\", f1 := \"b\")], lambda __lg_v: CAST(trunc((CASE WHEN (((((year(CAST(__lg_v.f1 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f1 AS TIMESTAMP))) - ((year(CAST(__lg_v.f0 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f0 AS TIMESTAMP)))) > 0) AND ((CAST(__lg_v.f1 AS TIMESTAMP) - date_trunc('month', CAST(__lg_v.f1 AS TIMESTAMP))) < (CAST(__lg_v.f0 AS TIMESTAMP) - date_trunc('month', CAST(__lg_v.f0 AS TIMESTAMP))))) THEN ((((year(CAST(__lg_v.f1 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f1 AS TIMESTAMP))) - ((year(CAST(__lg_v.f0 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f0 AS TIMESTAMP)))) - 1) WHEN (((((year(CAST(__lg_v.f1 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f1 AS TIMESTAMP))) - ((year(CAST(__lg_v.f0 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f0 AS TIMESTAMP)))) < 0) AND ((CAST(__lg_v.f1 AS TIMESTAMP) - date_trunc('month', CAST(__lg_v.f1 AS TIMESTAMP))) > (CAST(__lg_v.f0 AS TIMESTAMP) - date_trunc('month', CAST(__lg_v.f0 AS TIMESTAMP))))) THEN ((((year(CAST(__lg_v.f1 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f1 AS TIMESTAMP))) - ((year(CAST(__lg_v.f0 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f0 AS TIMESTAMP)))) + 1) ELSE (((year(CAST(__lg_v.f1 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f1 AS TIMESTAMP))) - ((year(CAST(__lg_v.f0 AS TIMESTAMP)) * 12) + month(CAST(__lg_v.f0 AS TIMESTAMP)))) END) / 12) AS BIGINT))[1]),date_part('year', \"a\"),date_part('second', \"a\") FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT count(DISTINCT a, b), group_concat(a), group_concat(DISTINCT a ORDER BY a DESC SEPARATOR '|'), group_concat(a, b ORDER BY b), stddev(a), variance(a), std(a), stddev_samp(a), var_samp(a), bit_and(a), bit_or(a), bit_xor(a), any_value(b) FROM t",
			"SELECT count(DISTINCT (list_transform([struct_pack(f0 := \"a\", f1 := \"b\")], lambda __lg_v: CASE WHEN (__lg_v.f0 IS NULL) OR (__lg_v.f1 IS NULL) THEN NULL ELSE [lower(strip_accents(CAST(__lg_v.f0 AS VARCHAR))), lower(strip_accents(CAST(__lg_v.f1 AS VARCHAR)))] END)[1])),string_agg((list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1]), ','),string_agg(DISTINCT \"a\", '|' ORDER BY \"a\" DESC),string_agg(((list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1]) || (list_transform([struct_pack(f0 := \"b\")], lambda __lg_v: CASE WHEN typeof(__lg_v.f0) IN ('DOUBLE', 'FLOAT') THEN regexp_replace(regexp_replace(CAST(__lg_v.f0 AS VARCHAR), '\\.0$', ''), 'e\\+', 'e') WHEN typeof(__lg_v.f0) = 'BOOLEAN' THEN CAST(CAST(__lg_v.f0 AS INTEGER) AS VARCHAR) ELSE CAST(__lg_v.f0 AS VARCHAR) END)[1])), ',' ORDER BY \"b\"),stddev_pop(\"a\"),var_pop(\"a\"),stddev_pop(\"a\"),stddev_samp(\"a\"),var_samp(\"a\"),coalesce(bit_and(CAST(\"a\" AS UBIGINT)), CAST(18446744073709551615 AS UBIGINT)),coalesce(bit_or(CAST(\"a\" AS UBIGINT)), CAST(0 AS UBIGINT)),coalesce(bit_xor(CAST(\"a\" AS UBIGINT)), CAST(0 AS UBIGINT)),any_value(\"b\") FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT lag(a) OVER w, lead(a, 2, 0) OVER w, first_value(a) OVER w, last_value(a) OVER w, nth_value(a, 2) OVER w, ntile(4) OVER w, percent_rank() OVER w, cume_dist() OVER w, count(*) OVER (ORDER BY d RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW) FROM t WINDOW w AS (ORDER BY a)",
			"SELECT lag(\"a\") OVER \"w\",lead(\"a\", 2, 0) OVER \"w\",first_value(\"a\") OVER \"w\",last_value(\"a\") OVER \"w\",nth_value(\"a\", 2) OVER \"w\",ntile(4) OVER \"w\",percent_rank() OVER \"w\",cume_dist() OVER \"w\",count(1) OVER (ORDER BY \"d\" RANGE BETWEEN to_days(CAST(1 AS INTEGER)) PRECEDING AND CURRENT ROW) FROM \"lg_rel\".\"t_0\" AS \"t\" WINDOW \"w\" AS (ORDER BY \"a\")"},
		{"SELECT a IS TRUE, a IS NOT FALSE, a XOR b, a & b, a | b, a ^ b, a << 2, a >> 1, ~a, (a, b) = (1, 'x'), (a, b) <> (1, 2), 7 DIV 2 FROM t",
			"SELECT (CAST(\"a\" AS BOOLEAN) IS TRUE),(CAST(\"a\" AS BOOLEAN) IS NOT FALSE),(CAST(\"a\" AS BOOLEAN) <> CAST(\"b\" AS BOOLEAN)),(CAST(\"a\" AS UBIGINT) & CAST(\"b\" AS UBIGINT)),(CAST(\"a\" AS UBIGINT) | CAST(\"b\" AS UBIGINT)),xor(CAST(\"a\" AS UBIGINT), CAST(\"b\" AS UBIGINT)),(CAST(\"a\" AS UBIGINT) << CAST(2 AS UBIGINT)),(CAST(\"a\" AS UBIGINT) >> CAST(1 AS UBIGINT)),(~(CAST(\"a\" AS UBIGINT))),((\"a\" = 1) AND (\"b\" = 'x')),((\"a\" <> 1) OR (\"b\" <> 2)),(list_transform([struct_pack(f0 := 7, f1 := 2)], lambda __lg_v: CAST(round(((__lg_v.f0 - (__lg_v.f0 % nullif(__lg_v.f1, 0))) // nullif(__lg_v.f1, 0))) AS BIGINT))[1]) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT SQL_CALC_FOUND_ROWS a, count(*) FROM t USE INDEX (i) GROUP BY a, b WITH ROLLUP ORDER BY NULL",
			"SELECT \"a\",count(1) FROM \"lg_rel\".\"t_0\" AS \"t\" GROUP BY ROLLUP (\"a\", \"b\")"},
		{"SELECT CAST(a AS UNSIGNED), CAST('42' AS SIGNED) FROM t",
			"SELECT CAST(\"a\" AS UBIGINT),CAST('42' AS BIGINT) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT (a, b) IN ((1, 'x'), (2, 'y')), (a, b) NOT IN ((3, NULL)), a->>'$.k', json_extract(a, '$.k[0]') FROM t",
			"SELECT (list_transform([struct_pack(f0 := \"a\", f1 := \"b\")], lambda __lg_v: (((__lg_v.f0 = 1) AND (__lg_v.f1 = 'x')) OR ((__lg_v.f0 = 2) AND (__lg_v.f1 = 'y'))))[1]),(NOT ((list_transform([struct_pack(f0 := \"a\", f1 := \"b\")], lambda __lg_v: (((__lg_v.f0 = 3) AND (__lg_v.f1 = NULL))))[1]))),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (json_type(__lg_v.f0, '$.k') IN ('OBJECT', 'ARRAY')) THEN error('JSON objects and arrays as results are not supported') ELSE json_extract_string(__lg_v.f0, '$.k') END)[1]),(list_transform([struct_pack(f0 := \"a\")], lambda __lg_v: CASE WHEN (json_type(__lg_v.f0, '$.k[0]') IN ('OBJECT', 'ARRAY')) THEN error('JSON objects and arrays as results are not supported') ELSE json_extract(__lg_v.f0, '$.k[0]') END)[1]) FROM \"lg_rel\".\"t_0\" AS \"t\""},
		{"SELECT a FROM t WHERE a = '3.5' AND b IN ('1e3', '7') AND c <> '2023-01-08 12:00'",
			"SELECT \"a\" FROM \"lg_rel\".\"t_0\" AS \"t\" WHERE (((\"a\" = CAST('3.5' AS DOUBLE)) AND (\"b\" IN (CAST('1e3' AS DOUBLE), '7'))) AND (\"c\" <> CAST('2023-01-08 12:00' AS TIMESTAMP)))"},
		{"SELECT json_arrayagg(a) FROM t",
			"SELECT ('[' || string_agg(coalesce(CAST(to_json(\"a\") AS VARCHAR), 'null'), ', ') || ']') FROM \"lg_rel\".\"t_0\" AS \"t\""},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			_, out, err := parseRender(t, tt.sql)
			if err != nil {
				t.Fatal(err)
			}
			if out != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

// TestRowInSubquery: (a, b) IN (SELECT …) answers as MySQL does, NULLs
// included, on real DuckDB.
func TestRowInSubquery(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	sub := "(SELECT person, CASE WHEN oid = 10 THEN NULL ELSE '444-55-6666' END FROM orders)"
	for q, want := range map[string][]string{
		"SELECT id, (id, ssn) IN " + sub + " FROM people ORDER BY id":                                                     {"1 <nil>", "2 true", "3 false", "4 <nil>"},
		"SELECT id, (id, ssn) NOT IN " + sub + " FROM people ORDER BY id":                                                 {"1 <nil>", "2 false", "3 true", "4 <nil>"},
		"SELECT id FROM people WHERE (id, region) IN (SELECT person, 'EU' FROM orders WHERE amount < 10) ORDER BY id":     {"1", "3"},
		"SELECT id FROM people WHERE (id, region) NOT IN (SELECT person, 'EU' FROM orders WHERE amount < 10) ORDER BY id": {"2", "4"},
		"SELECT id FROM people WHERE (id, region) IN (SELECT person, 'EU' FROM orders WHERE amount > 100)":                nil,
	} {
		got, err := policyRun(t, g, db, nil, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{
		"SELECT id FROM people WHERE (id, region) IN (SELECT * FROM orders)",
		"SELECT id FROM people WHERE (id, region) IN (SELECT person FROM orders)",
		"SELECT id FROM people WHERE (id, region) IN (SELECT person, 'a' FROM orders UNION SELECT 1, 'b')",
	} {
		if _, err := policyRun(t, g, db, nil, q); err == nil {
			t.Errorf("%s accepted", q)
		}
	}
}
