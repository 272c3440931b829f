package sqlgate_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

// TestSetAttacks: SET of anything that would change what the gateway does,
// of a global, a user variable or a variable not on the list, is refused,
// naming what it refuses.
func TestSetAttacks(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for sql, want := range map[string]string{
		"SET GLOBAL max_connections = 1":                            "SET GLOBAL max_connections is not supported",
		"SET @@global.sql_mode = ''":                                "SET GLOBAL sql_mode is not supported",
		"SET @x = 1":                                                "SET @x is not supported",
		"SET @x := (SELECT 1)":                                      "SET @x is not supported",
		"SET max_execution_time = 0":                                "SET max_execution_time is not supported",
		"SET SESSION secure_file_priv = ''":                         "SET secure_file_priv is not supported",
		"SET sql_safe_updates = 0":                                  "SET sql_safe_updates is not supported",
		"SET sql_mode = 'ANSI_QUOTES'":                              "SET sql_mode = 'ANSI_QUOTES' is not supported",
		"SET sql_mode = 'PIPES_AS_CONCAT'":                          "SET sql_mode = 'PIPES_AS_CONCAT' is not supported",
		"SET sql_mode = 'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES'": "SET sql_mode = 'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES' is not supported",
		"SET sql_mode = 'ANSI'":                                     "SET sql_mode = 'ANSI' is not supported",
		"SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')":         "SET sql_mode takes a literal value",
		"SET sql_mode = (SELECT secret FROM hr.employees)":          "SET sql_mode takes a literal value",
		"SET autocommit = 0":                                        "SET autocommit = '0' is not supported",
		"SET autocommit = OFF":                                      "SET autocommit = 'OFF' is not supported",
		"SET NAMES latin1":                                          "SET NAMES 'latin1' is not supported",
		"SET NAMES utf8mb4 COLLATE utf8mb4_bin":                     "SET NAMES … COLLATE 'utf8mb4_bin' is not supported",
		"SET CHARACTER SET binary":                                  "SET CHARACTER SET 'binary' is not supported",
		"SET character_set_results = latin1":                        "SET character_set_results = 'latin1' is not supported",
		"SET collation_connection = utf8mb4_bin":                    "SET collation_connection = 'utf8mb4_bin' is not supported",
		"SET time_zone = 'Europe/Paris'":                            "SET time_zone = 'Europe/Paris' is not supported",
		"SET TRANSACTION ISOLATION LEVEL READ COMMITTED":            "SET TRANSACTION is not supported",
		"SET transaction_isolation = 'READ-UNCOMMITTED'":            "SET transaction_isolation = 'READ-UNCOMMITTED' is not supported",
		"SET SESSION TRANSACTION READ ONLY":                         "SET tx_read_only = '1' is not supported",
		"SET autocommit = 1, sql_mode = 'ANSI_QUOTES'":              "SET sql_mode = 'ANSI_QUOTES' is not supported",
		"SET PASSWORD = 'x'":                                        "SET PASSWORD is not supported",
		"SET sql_mode = '" + strings.Repeat("A", 200) + "'":         "is not supported",
	} {
		st, err := g.Parse(sql, "s")
		if !errors.Is(err, sqlgate.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, %v; want a refusal saying %q", sql, st, err, want)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Errorf("Parse(%q): message of %d bytes", sql, len(err.Error()))
		}
	}
}

// TestSetAccepted: the SET forms drivers send, with values that change
// nothing, are a no-op statement of KindSet.
func TestSetAccepted(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, sql := range []string{
		"SET NAMES utf8mb4",
		"SET NAMES utf8",
		"set names 'utf8mb4' collate 'utf8mb4_0900_ai_ci'",
		"SET NAMES DEFAULT",
		"SET CHARACTER SET utf8mb4",
		"SET CHARSET utf8mb4",
		"SET autocommit = 1",
		"SET autocommit=ON",
		"SET autocommit = true",
		"SET @@autocommit = 1",
		"SET @@session.autocommit = DEFAULT",
		"SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
		"SET LOCAL sql_mode = ''",
		"SET sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
		"SET sql_mode = 'traditional'",
		"SET character_set_client = utf8mb4, character_set_connection = 'utf8mb4', character_set_results = NULL",
		"SET collation_connection = 'utf8mb4_0900_ai_ci'",
		"SET time_zone = '+00:00'",
		"SET time_zone = 'UTC'",
		"SET transaction_isolation = 'REPEATABLE-READ'",
		"SET tx_read_only = 0",
	} {
		st, err := g.Parse(sql, "")
		if err != nil || st.Kind() != sqlgate.KindSet || st.IsShow() || st.IsWrite() || len(st.Tables()) != 0 {
			t.Errorf("Parse(%q) = %v, %v; want a KindSet no-op", sql, st, err)
		}
	}
}

// TestSystemVariableAttacks: @@ of a variable that is not on the list —
// paths, host names, ports, the engine's settings — is refused naming it,
// wherever it appears; user variables stay refused.
func TestSystemVariableAttacks(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for sql, want := range map[string]string{
		"SELECT @@hostname":                             "unknown system variable 'hostname'",
		"SELECT @@global.datadir":                       "unknown system variable 'datadir'",
		"SELECT @@basedir":                              "unknown system variable 'basedir'",
		"SELECT @@secure_file_priv":                     "unknown system variable 'secure_file_priv'",
		"SELECT @@port":                                 "unknown system variable 'port'",
		"SELECT @@pid_file":                             "unknown system variable 'pid_file'",
		"SELECT @@server_uuid":                          "unknown system variable 'server_uuid'",
		"SELECT @@tmpdir":                               "unknown system variable 'tmpdir'",
		"SELECT @@version_compile_os":                   "unknown system variable 'version_compile_os'",
		"SELECT @@memory_limit":                         "unknown system variable 'memory_limit'",
		"SELECT a FROM t WHERE a = @@home_directory":    "unknown system variable 'home_directory'",
		"SELECT * FROM t WHERE a IN (SELECT @@threads)": "unknown system variable 'threads'",
		"SELECT @x":                                     "a user or system variable (@x, @@x) is not supported",
		"SELECT @x := 1":                                "a user or system variable (@x, @@x) is not supported",
	} {
		_, err := g.Parse(sql, "s")
		if !errors.Is(err, sqlgate.ErrUnsupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want a refusal saying %q", sql, err, want)
		}
	}
	// A variable's value is a literal the limits see.
	if _, err := g.Parse("SELECT REPEAT(@@version, 100000000)", ""); !errors.Is(err, sqlgate.ErrLimit) {
		t.Errorf("REPEAT of a variable: %v, want ErrLimit", err)
	}
}

// TestSystemVariables: @@x becomes its fixed value as a literal; a select
// field that is a variable is named by its text, as MySQL names it.
func TestSystemVariables(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{MaxSQLBytes: 4096})
	for sql, want := range map[string]string{
		"SELECT @@version":                           `SELECT '8.0.36-lakegate' AS "@@version"`,
		"SELECT @@version_comment":                   `SELECT 'lakegate' AS "@@version_comment"`,
		"SELECT @@session.transaction_isolation":     `SELECT 'REPEATABLE-READ' AS "@@session.transaction_isolation"`,
		"SELECT @@tx_isolation":                      `SELECT 'REPEATABLE-READ' AS "@@tx_isolation"`,
		"SELECT @@character_set_client":              `SELECT 'utf8mb4' AS "@@character_set_client"`,
		"SELECT @@max_allowed_packet":                `SELECT 4096 AS "@@max_allowed_packet"`,
		"SELECT @@GLOBAL.max_allowed_packet":         `SELECT 4096 AS "@@global.max_allowed_packet"`,
		"SELECT @@autocommit, @@sql_mode":            `SELECT 1 AS "@@autocommit",'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION' AS "@@sql_mode"`,
		"SELECT @@version AS v":                      `SELECT '8.0.36-lakegate' AS "v"`,
		"SELECT @@version, a FROM t":                 `SELECT '8.0.36-lakegate' AS "@@version","a" FROM "lg_rel"."t_0" AS "t"`,
		"SELECT CONCAT(@@version_comment, a) FROM t": `AS "CONCAT(@@version_comment, a)" FROM "lg_rel"."t_0" AS "t"`,
	} {
		st, err := g.Parse(sql, "s")
		if err != nil {
			t.Errorf("Parse(%q): %v", sql, err)
			continue
		}
		out, err := st.Render(rels(st))
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("Render(%q) = %s, %v; want %s", sql, out, err, want)
		}
	}
	vars := g.SystemVariables()
	if !slices.IsSortedFunc(vars, func(a, b sqlgate.SystemVariable) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("SystemVariables is not sorted")
	}
	for _, v := range vars {
		if strings.ContainsAny(v.Value, "/\\") {
			t.Errorf("%s = %q looks like a path", v.Name, v.Value)
		}
		if v.Bool && v.Value != "ON" && v.Value != "OFF" {
			t.Errorf("%s: a boolean shown as %q", v.Name, v.Value)
		}
	}
}

// TestSessionShowKinds: SHOW VARIABLES, WARNINGS, ERRORS, COLLATION and
// CHARACTER SET are answered by the caller (IsShow), with their LIKE
// pattern.
func TestSessionShowKinds(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	for _, tt := range []struct {
		sql     string
		kind    sqlgate.Kind
		pattern string
		hasPat  bool
	}{
		{"SHOW VARIABLES", sqlgate.KindShowVariables, "", false},
		{"SHOW SESSION VARIABLES LIKE 'Version%'", sqlgate.KindShowVariables, "version%", true},
		{"SHOW GLOBAL VARIABLES LIKE 'max\\_allowed%'", sqlgate.KindShowVariables, `max\_allowed%`, true},
		{"SHOW WARNINGS", sqlgate.KindShowWarnings, "", false},
		{"SHOW ERRORS", sqlgate.KindShowWarnings, "", false},
		{"SHOW COLLATION", sqlgate.KindShowCollation, "", false},
		{"SHOW COLLATION LIKE 'utf8mb4%'", sqlgate.KindShowCollation, "utf8mb4%", true},
		{"SHOW CHARACTER SET", sqlgate.KindShowCharset, "", false},
		{"SHOW CHARSET LIKE 'utf%'", sqlgate.KindShowCharset, "utf%", true},
	} {
		st, err := g.Parse(tt.sql, "")
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.sql, err)
			continue
		}
		pat, has := st.ShowPattern()
		if st.Kind() != tt.kind || !st.IsShow() || pat != tt.pattern || has != tt.hasPat {
			t.Errorf("Parse(%q) = %v %q %v", tt.sql, st.Kind(), pat, has)
		}
	}
	for sql, want := range map[string]string{
		"SHOW VARIABLES WHERE variable_name = 'version'": "SHOW … WHERE is not supported",
		"SHOW WARNINGS LIMIT 1":                          "syntax error",
		"SHOW COUNT(*) WARNINGS":                         "SHOW COUNT(*) WARNINGS",
		"SHOW STATUS":                                    "SHOW SESSION STATUS is not supported",
		"SHOW GRANTS":                                    "SHOW GRANTS is not supported",
		"SHOW PROCESSLIST":                               "SHOW PROCESSLIST is not supported",
		"SHOW CREATE TABLE s.t":                          "SHOW CREATE TABLE is not supported",
		"SHOW VARIABLES NOT LIKE 'x'":                    "", // TiDB has no NOT LIKE here: a syntax error
	} {
		_, err := g.Parse(sql, "s")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want a refusal saying %q", sql, err, want)
		}
	}
}

// TestSyntaxErrorMessages: a syntax error says so, with the line, the column
// and the token the parser stopped at; a table function or a file name where
// a table belongs is refused naming the construct.
func TestSyntaxErrorMessages(t *testing.T) {
	g := sqlgate.New(sqlgate.Config{})
	long := "SELECT a FROM t WHERE a = = 1 AND b = '" + strings.Repeat("x", 3000) + "'"
	for _, tt := range []struct {
		sql, want string
		kind      error
	}{
		{"SELEC * FROM sales.orders", `sqlgate: syntax error at line 1 column 5 near "SELEC"`, sqlgate.ErrSyntax},
		{"SELECT 1 FROM t WHERE a = = 1", `sqlgate: syntax error at line 1 column 27 near "="`, sqlgate.ErrSyntax},
		{"SELECT 1 FROM t WHERE a <=> <=> 1", `sqlgate: syntax error at line 1 column 31 near "<=>"`, sqlgate.ErrSyntax},
		{"SELECT a\nFROM t\nWHERE a = = 1", `sqlgate: syntax error at line 3 column 12 near "="`, sqlgate.ErrSyntax},
		{"SELECT a FROM t WHERE", `sqlgate: syntax error at line 1 column 21: the statement ends too early`, sqlgate.ErrSyntax},
		{"SELECT 'abc", `sqlgate: syntax error at line 1 column 11 near "'abc"`, sqlgate.ErrSyntax},
		{"SELECT a FROM `t", "sqlgate: syntax error at line 1 column 16 near \"`t\"", sqlgate.ErrSyntax},
		{"SELECT ñandú FROM t WHERE a = = 1", `near "="`, sqlgate.ErrSyntax},
		{"SELECT a FROM t WHERE b = 'x' 'y' \"zz", `near "\"zz"`, sqlgate.ErrSyntax},
		{"COPY t TO '/tmp/x'", `sqlgate: syntax error at line 1 column 4 near "COPY"`, sqlgate.ErrSyntax},
		{"ATTACH '/tmp/x.db'", `near "ATTACH"`, sqlgate.ErrSyntax},
		{"PRAGMA version", `near "PRAGMA"`, sqlgate.ErrSyntax},
		{"INSTALL httpfs", `near "INSTALL"`, sqlgate.ErrSyntax},
		{long, `sqlgate: syntax error at line 1 column 27 near "="`, sqlgate.ErrSyntax},
		{"SELECT " + strings.Repeat("a", 300) + " FROM t WHERE", "the statement ends too early", sqlgate.ErrSyntax},
		{"SELECT * FROM read_parquet('/etc/passwd')", `sqlgate: table function read_parquet(…) is not supported: a query reads catalog tables only`, sqlgate.ErrUnsupported},
		{"SELECT * FROM t, read_csv_auto('/etc/passwd')", `table function read_csv_auto(…) is not supported`, sqlgate.ErrUnsupported},
		{"SELECT * FROM t JOIN main.glob('*') ON true", `table function main.glob(…) is not supported`, sqlgate.ErrUnsupported},
		{"SELECT * FROM t LEFT JOIN Read_JSON ('x') ON true", `table function read_json(…) is not supported`, sqlgate.ErrUnsupported},
		{"SELECT * FROM '/etc/passwd'", `sqlgate: reading a file by name ('/etc/passwd') is not supported`, sqlgate.ErrUnsupported},
		{"SELECT * FROM t JOIN \"x.parquet\" ON true", `reading a file by name ("x.parquet") is not supported`, sqlgate.ErrUnsupported},
		{"UPDATE t SET a = 1", `sqlgate: UPDATE is not supported`, sqlgate.ErrUnsupported},
		{"LOAD DATA INFILE '/etc/passwd' INTO TABLE t", `sqlgate: LOAD DATA is not supported`, sqlgate.ErrUnsupported},
		{"DELETE FROM t", `sqlgate: DELETE is not supported`, sqlgate.ErrUnsupported},
	} {
		_, err := g.Parse(tt.sql, "s")
		if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%.60q) = %v, want %v saying %q", tt.sql, err, tt.kind, tt.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("Parse(%.60q): a message of %d bytes", tt.sql, len(err.Error()))
		}
	}
}
