package sqlgate_test

import (
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestDatetimeFunctionAnswers runs the date and time functions of
// funcs_more_datetime.go on DuckDB and compares each with MySQL 8.0's
// documented answer (as text: CAST(… AS CHAR)).
func TestDatetimeFunctionAnswers(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	tests := []struct{ expr, want string }{
		// string literals as temporal arguments
		{"YEAR('2024-02-29')", "2024"},
		{"YEAR('2024-13-01')", "<nil>"},
		{"DAYOFMONTH('2024-02-29 10:00:00')", "29"},
		{"DAYNAME('2024-01-01')", "Monday"},
		{"MONTHNAME('2008-02-03')", "February"},
		{"DAYOFWEEK('2007-02-03')", "7"},
		{"WEEKDAY('2008-02-03 22:23:00')", "6"},
		{"QUARTER('2008-04-01')", "2"},
		{"LAST_DAY('2004-02-05')", "2004-02-29"},
		{"LAST_DAY('2003-03-32')", "<nil>"},
		{"LAST_DAY('2024-02-30')", "<nil>"},
		{"DAYNAME(NULL)", "<nil>"},
		{"DATE_FORMAT(NULL, '')", "<nil>"},
		{"DATE_FORMAT(NULL, '%D')", "<nil>"},
		{"DATE('2003-12-31 01:02:03')", "2003-12-31"},
		{"HOUR('10:05:03')", "10"},
		{"HOUR('272:59:59')", "272"},
		{"MINUTE('2008-02-03 10:05:03')", "5"},
		{"SECOND('10:05:03')", "3"},
		{"MICROSECOND('12:00:00.123456')", "123456"},
		{"MICROSECOND('2019-12-31 23:59:59.000010')", "10"},
		{"MICROSECOND(TIMESTAMP '2019-12-31 23:59:59.000010')", "10"},
		{"TIME_TO_SEC('22:23:00')", "80580"},
		{"TIME_TO_SEC('-00:00:01')", "-1"},
		{"TIME_TO_SEC(TIMESTAMP '2024-01-01 00:39:38')", "2378"},
		{"UNIX_TIMESTAMP('2015-11-13 10:20:19')", "1447410019"},
		{"UNIX_TIMESTAMP('2015-11-13 10:20:19.012')", "1447410019.012"},
		{"UNIX_TIMESTAMP('2024-01-01')", "1704067200"},
		// weeks
		{"WEEK('2008-02-20')", "7"},
		{"WEEK('2008-02-20', 1)", "8"},
		{"WEEK('2008-12-31', 1)", "53"},
		{"WEEK('2000-01-01', 2)", "52"},
		{"WEEKOFYEAR('2008-02-20')", "8"},
		{"CONCAT(WEEK('2024-01-01', 0), WEEK('2024-01-01', 1), WEEK('2024-01-01', 2), WEEK('2024-01-01', 3), WEEK('2024-01-01', 4), WEEK('2024-01-01', 5), WEEK('2024-01-01', 6), WEEK('2024-01-01', 7))", "015311111"},
		{"CONCAT_WS(',', WEEK('2024-12-31', 0), WEEK('2024-12-31', 1), WEEK('2024-12-31', 2), WEEK('2024-12-31', 3), WEEK('2024-12-31', 4), WEEK('2024-12-31', 5), WEEK('2024-12-31', 6), WEEK('2024-12-31', 7))", "52,53,52,1,53,53,1,53"},
		{"CONCAT_WS(',', WEEK('2021-01-03', 0), WEEK('2021-01-03', 1), WEEK('2021-01-03', 2), WEEK('2021-01-03', 3), WEEK('2021-01-03', 4), WEEK('2021-01-03', 5), WEEK('2021-01-03', 6), WEEK('2021-01-03', 7))", "1,0,1,53,1,0,1,52"},
		{"CONCAT_WS(',', YEARWEEK('1987-01-01'), YEARWEEK('2024-01-01'), YEARWEEK('2024-12-31', 1), YEARWEEK('2021-01-03', 3), YEARWEEK('2021-01-03', 0))", "198652,202353,202501,202053,202101"},
		{"DATE_FORMAT('1999-01-01', '%X %V')", "1998 52"},
		{"DATE_FORMAT('2024-01-01', '%D %u %v %x')", "1st 01 01 2024"},
		{"DATE_FORMAT('1900-10-04 22:23:00', '%D %y %a %d %m %b %j')", "4th 00 Thu 04 10 Oct 277"},
		{"DATE_FORMAT('1997-10-04 22:23:00', '%H %k %I %r %T %S %w')", "22 22 10 10:23:00 PM 22:23:00 00 6"},
		{"CONCAT_WS(',', DATE_FORMAT('2024-01-02', '%D'), DATE_FORMAT('2024-01-03', '%D'), DATE_FORMAT('2024-01-11', '%D'), DATE_FORMAT('2024-01-22', '%D'), DATE_FORMAT('2024-01-23', '%D'))", "2nd,3rd,11th,22nd,23rd"},
		{"FROM_UNIXTIME(1447430881, '%Y %D %M %h:%i:%s %x')", "2015 13th November 04:08:01 2015"},
		// EXTRACT
		{"EXTRACT(YEAR_MONTH FROM '2019-07-02 01:02:03')", "201907"},
		{"EXTRACT(DAY_MINUTE FROM '2019-07-02 01:02:03')", "20102"},
		{"EXTRACT(MICROSECOND FROM '2003-01-02 10:30:00.000123')", "123"},
		{"EXTRACT(DAY_SECOND FROM '2024-03-05 14:07:09')", "5140709"},
		{"EXTRACT(HOUR_SECOND FROM '2024-03-05 14:07:09')", "140709"},
		{"EXTRACT(SECOND_MICROSECOND FROM '2024-03-05 14:07:09.5')", "9500000"},
		{"EXTRACT(WEEK FROM '2024-01-01')", "0"},
		// day numbers
		{"TO_DAYS(950501)", "728779"},
		{"TO_DAYS('2007-10-07')", "733321"},
		{"FROM_DAYS(730669)", "2000-07-03"},
		{"TO_SECONDS('2009-11-29 13:43:32')", "63426721412"},
		{"MAKEDATE(2011, 32)", "2011-02-01"},
		{"MAKEDATE(2011, 0)", "<nil>"},
		{"MAKEDATE(24, 60)", "2024-02-29"},
		// TIME values
		{"SEC_TO_TIME(2378)", "00:39:38"},
		{"MAKETIME(12, 15, 30)", "12:15:30"},
		{"MAKETIME(12, 60, 30)", "<nil>"},
		{"TIME('2003-12-31 01:02:03')", "01:02:03"},
		{"TIME '10:00:00'", "10:00:00"},
		{"TIMEDIFF('10:00:00', '09:30:15')", "00:29:45"},
		{"TIMEDIFF('2008-12-31 23:59:59', '2008-12-31 22:00:00')", "01:59:59"},
		{"TIMEDIFF(TIMESTAMP '2008-12-31 23:59:59', TIMESTAMP '2008-12-31 22:00:00')", "01:59:59"},
		{"TIME_FORMAT('100:00:00', '%H %k %h %I %l')", "100 100 04 04 4"},
		{"TIME_FORMAT('14:07:09', '%h:%i %p')", "02:07 PM"},
		{"TIME_FORMAT(TIMESTAMP '2024-01-01 14:07:09', '%r')", "02:07:09 PM"},
		{"ADDTIME('2007-12-31 23:59:59', '1 1:1:1')", "2008-01-02 01:01:00"},
		{"SUBTIME('2007-12-31 23:59:59', '1:1:1')", "2007-12-31 22:58:58"},
		{"ADDTIME(TIMESTAMP '2007-12-31 23:59:59', '1:1:1')", "2008-01-01 01:01:00"},
		{"TIMESTAMP('2003-12-31')", "2003-12-31 00:00:00"},
		{"TIMESTAMP('2003-12-31 12:00:00', '12:00:00')", "2004-01-01 00:00:00"},
		{"TIMESTAMPADD(MINUTE, 1, '2003-01-02')", "2003-01-02 00:01:00"},
		{"DATE_ADD('2018-12-31 23:59:59', INTERVAL '1:1' MINUTE_SECOND)", "2019-01-01 00:01:00"},
		{"DATE_ADD('1900-01-01 00:00:00', INTERVAL '-1 10' DAY_HOUR)", "1899-12-30 14:00:00"},
		{"DATE_ADD('2024-01-31', INTERVAL '1-1' YEAR_MONTH)", "2025-02-28"},
		{"DATE_SUB('2024-01-01 00:00:00', INTERVAL '1:10' DAY_SECOND)", "2023-12-31 23:58:50"},
		{"DATE_ADD('2024-01-01 00:00:00.5', INTERVAL 1 SECOND)", "2024-01-01 00:00:01.500000"},
		{"DATE_ADD('1995-01-01', INTERVAL '3' MONTH)", "1995-04-01"}, // a quoted count, as TPC-H writes it
		{"DATE_SUB('1998-12-01', INTERVAL ' -108 ' DAY)", "1999-03-19"},
		{"DATE_ADD('1994-01-01', INTERVAL '1' YEAR)", "1995-01-01"},
		// computed by the gate (foldDateArith): MySQL's month ends and ranges
		{"DATE_SUB('2024-03-31', INTERVAL 1 MONTH)", "2024-02-29"},
		{"DATE_ADD('2023-01-31', INTERVAL '1' QUARTER)", "2023-04-30"},
		{"DATE_ADD('2024-02-29', INTERVAL 1 YEAR)", "2025-02-28"},
		{"DATE_ADD('2024-12-31', INTERVAL 2 WEEK)", "2025-01-14"},
		{"DATE_SUB('2024-01-01', INTERVAL -1 DAY)", "2024-01-02"},
		{"DATE_ADD('2024-01-01 10:00:00', INTERVAL 1 DAY)", "2024-01-02 10:00:00"},
		{"DATE_ADD('2024-01-31 23:59:59.25', INTERVAL 1 MONTH)", "2024-02-29 23:59:59.250000"},
		{"DATE_ADD('9999-12-31', INTERVAL 1 DAY)", "<nil>"},
		{"DATE_ADD('9999-01-31', INTERVAL 1 YEAR)", "<nil>"},
		{"DATE_ADD('2024-01-01', INTERVAL 1 MICROSECOND)", "2024-01-01 00:00:00.000001"},
		{"DATE_ADD('9999-12-31', INTERVAL 1 DAY)", "<nil>"},
		{"DATE_ADD(NULL, INTERVAL 1 DAY)", "<nil>"},
		{"DATE_ADD('2024-02-30', INTERVAL 1 DAY)", "<nil>"},
		{"TIMESTAMPADD(WEEK, 1, '2003-01-02')", "2003-01-09"},
		{"CONVERT_TZ('2004-01-01 12:00:00', '+00:00', '+10:00')", "2004-01-01 22:00:00"},
		{"CONVERT_TZ('2004-01-01 12:00:00', '+01:00', '-02:30')", "2004-01-01 08:30:00"},
		{"CONVERT_TZ('1960-01-01 12:00:00', '+00:00', '+10:00')", "1960-01-01 12:00:00"},
		{"PERIOD_ADD(200801, 2)", "200803"},
		{"PERIOD_ADD(2401, 12)", "202501"},
		{"PERIOD_DIFF(200802, 200703)", "11"},
		{"TO_DAYS(20241301)", "<nil>"},
		{"DATEDIFF(UTC_DATE(), CURDATE())", "0"},
		{"TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())", "0"},
	}
	for _, tt := range tests {
		got, err := policyRun(t, g, db, nil, "SELECT CAST("+tt.expr+" AS CHAR)")
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s = %v, want %s", tt.expr, got, tt.want)
		}
	}
}

// TestDatetimeFunctionRefusals: what the gate cannot answer as MySQL does
// is refused, at translation or (for values known only then) at run time.
func TestDatetimeFunctionRefusals(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	db := policyDB(t)
	for _, expr := range []string{
		"YEAR('2008-00-00')",               // MySQL's fuzzy date
		"YEAR('10:05:03')",                 // MySQL reads it as 2010-05-03
		"HOUR('2024-01-01')",               // a date read as a time
		"HOUR('900:00:00')",                // MySQL clips to 838:59:59
		"WEEK('2024-01-01', -1)",           // mode not a non-negative literal
		"WEEK('2024-01-01', id)",           // mode not a literal
		"WEEK('2024-01-01', 1, 2)",         // arity
		"YEARWEEK()",                       // arity
		"MAKEDATE(2011)",                   // arity
		"SEC_TO_TIME(86400)",               // beyond DuckDB's TIME
		"SEC_TO_TIME(-1)",                  // negative TIME
		"SEC_TO_TIME(id * 100000)",         // beyond DuckDB's TIME, at run time
		"MAKETIME(25, 0, 0)",               // beyond DuckDB's TIME, at run time
		"TIMEDIFF('09:00:00', '10:00:00')", // negative TIME
		"TIMEDIFF('10:00:00', '2024-01-01 09:00:00')",
		"TIME('30:00:00')",
		"TIME_FORMAT('10:00:00', '%Y')",
		"ADDTIME('2007-12-31 23:59:59.5', '1:1:1')",
		"ADDTIME(id, '1:1:1')", // not a DATETIME, at run time
		"CONVERT_TZ('2004-01-01 12:00:00', 'UTC', 'MET')",
		"PERIOD_ADD(200813, 1)", // month 13, at run time
		"PERIOD_DIFF(2008.5, 200801)",
		"FROM_DAYS(1)",                          // MySQL's zero date, at run time
		"UNIX_TIMESTAMP('1960-01-01 00:00:00')", // MySQL answers 0
		"DATE_FORMAT('2024-01-01', '%Q')",
		"EXTRACT(HOUR FROM '10:00:00')",
		"CURTIME(3)",
		"DATE_FORMAT('2024-01-01', '')",               // the engine's strftime refuses an empty format
		"TIME_FORMAT('10:00:00', REPEAT('%r', 3000))", // not a literal format
		"TIME_FORMAT('10:00:00', '" + strings.Repeat("%r", 3000) + "')", // beyond the string limit
		"DATE_ADD('2024-01-01', INTERVAL '1:2:3' MINUTE_SECOND)",        // too many parts
		"DATE_ADD('2024-01-01', INTERVAL '1.5' SECOND_MICROSECOND)",
		"DATE_ADD('2024-01-01', INTERVAL 'a' DAY_HOUR)",
		"DATE_ADD('2024-01-01', INTERVAL '1.5' DAY)", // MySQL reads a prefix with a warning
		"DATE_ADD('2024-01-01', INTERVAL '3x' MONTH)",
		"DATE_ADD('2024-01-01', INTERVAL '' MONTH)",
		"DATE_ADD('0001-01-01', INTERVAL -1 DAY)",
	} {
		q := "SELECT " + expr + " FROM people"
		if got, err := policyRun(t, g, db, nil, q); err == nil {
			t.Errorf("%s answered %v; want a refusal", expr, got)
		}
	}
}

// TestDatetimeTranslations pins the printed form of some translations:
// column arguments keep the plain DuckDB call.
func TestDatetimeTranslations(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT hour(a), year(a), dayname(a) FROM t": `SELECT hour("a") AS "hour(a)",year("a") AS "year(a)",dayname("a") AS "dayname(a)" FROM "lg_rel"."t_0" AS "t"`,
		"SELECT year('2024-1-5'), year(20240105)":    `SELECT year(CAST('2024-01-05' AS DATE)) AS "year('2024-1-5')",year(CAST('2024-01-05' AS DATE)) AS "year(20240105)"`,
		"SELECT hour('10:05:03'), minute(NULL)":      `SELECT 10 AS "hour('10:05:03')",CAST(NULL AS BIGINT) AS "minute(NULL)"`,
		"SELECT year('2024-02-30')":                  `SELECT year(CAST(NULL AS DATE)) AS "year('2024-02-30')"`,
	} {
		_, out, err := parseRender(t, sql)
		if err != nil {
			t.Errorf("%s: %v", sql, err)
			continue
		}
		if out != want {
			t.Errorf("%s:\ngot  %s\nwant %s", sql, out, want)
		}
	}
}
