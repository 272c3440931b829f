// Package sqlgate is the only path from client SQL text to engine SQL.
//
// Clients write MySQL-flavoured SQL; the engine is DuckDB. The two grammars
// disagree (backslash escapes, comments, quoting, CTE scoping, names that are
// file reads), so client text is never passed to the engine. Instead:
//
//	st, err := gate.Parse(sql, session.Schema) // one statement, allow-listed
//	refs := st.Tables()                        // real tables read, MySQL CTE scoping
//	// caller: namespace gate, then resolve each ref to a Relation (or refuse);
//	// if st.IsWrite(), also authorize st.Target() for writing
//	out, err := st.Render(rels)                // rewritten, printed, lexically checked
//	// caller: execute out with st.NumParams() parameters (for a write, write
//	// its result to st.Target(); for DROP TABLE, drop in the catalog)
//
// Parse accepts exactly one of (Statement.Kind):
//
//   - KindQuery: SELECT, a set operation (UNION/EXCEPT/INTERSECT) or WITH …
//     SELECT;
//   - KindUse: USE <schema>;
//   - KindCreateTableAs: CREATE TABLE [IF NOT EXISTS] [schema.]t [AS] <query>,
//     with no column definitions, constraints, table options, partitioning,
//     IGNORE/REPLACE, TEMPORARY or LIKE;
//   - KindInsert: INSERT [INTO] [schema.]t [(c1, …)] <query> or … VALUES
//     (…), (…) (VALUE too), with no ON DUPLICATE KEY UPDATE, REPLACE, SET,
//     IGNORE, PARTITION or priority; VALUES rows have one arity (the column
//     list's, if any) and hold expressions of the same allow-list as SELECT
//     (parameter markers and subqueries included), but no DEFAULT, column
//     references, aggregates or window functions;
//   - KindDropTable: DROP TABLE [IF EXISTS] [schema.]t, one table, no
//     TEMPORARY, RESTRICT or CASCADE;
//   - KindCreateView: CREATE [OR REPLACE] VIEW [schema.]v [(c1, …)] AS
//     <query>, with no ALGORITHM, DEFINER, SQL SECURITY or CHECK OPTION: a
//     session view (views.go), which the caller keeps for the session
//     (Statement.ApplyTo) and passes to ParseWith; KindDropView: DROP VIEW
//     [IF EXISTS] [schema.]v, one view;
//   - KindShowDatabases: SHOW DATABASES | SHOW SCHEMAS [LIKE 'p'];
//   - KindShowTables: SHOW TABLES [FROM|IN s] [LIKE 'p'] (ShowSchema,
//     ShowPattern);
//   - KindDescribe: DESCRIBE t | DESC t | EXPLAIN t | SHOW COLUMNS FROM|IN t
//     [FROM|IN s] (Target);
//   - KindExplain: EXPLAIN [FORMAT=ROW|TRADITIONAL] <query>: walked like
//     KindQuery (Tables, Render print the query); no ANALYZE;
//   - KindSet: SET [SESSION|LOCAL] of a variable of SettableVariables to a
//     literal that changes nothing the gateway does, SET NAMES and SET
//     CHARACTER SET utf8mb4 (session.go): a no-op;
//   - KindShowVariables, KindShowWarnings (SHOW WARNINGS | ERRORS),
//     KindShowCollation, KindShowCharset [LIKE 'p'].
//
// The SHOW kinds and KindDescribe (IsShow) are answered by the caller: from
// its authorized catalog view, never from the engine's catalog, or from the
// gate's fixed values (SystemVariables); SHOW FULL, EXTENDED, WHERE, LIMIT,
// NOT LIKE, column LIKE and every other SHOW are refused. A system variable
// in a statement (@@x) is replaced by its fixed value before the statement
// is walked; one not in SystemVariables is refused. A syntax error names the
// line, the column and the token the parser stopped at (syntax.go).
//
// Everything else — other statements (UPDATE, DELETE, ALTER, TRUNCATE,
// CREATE VIEW, …), SELECT … INTO, locking reads, AS OF, PARTITION,
// TABLESAMPLE, user variables, hex/bit literals, charset introducers,
// and any function, operator or cast not on the allow-list (see functions in
// funcs.go) — is refused with an *Error whose message is user-facing.
// Identifiers are lower-cased; names starting with "__lg" or "__cte" are
// reserved.
//
// A write's Target (the created, written or dropped table) is validated like
// a table read and qualified with the default schema; it is never a CTE, and
// it is not in Tables unless the statement also reads it. The gate never
// prints CREATE, INSERT or DROP: Render prints the query part only (for
// INSERT … VALUES, SELECT * FROM (VALUES …) AS "__lg_values" (<INSERT
// columns, or col1…colN>); for DROP TABLE, ""), and the caller creates,
// appends to (aligning columns) or drops the target itself, after
// authorizing it for writing and every table of Tables for reading.
//
// Tables lists every real table the query reads, from FROM, joins, derived
// tables, every kind of subquery and CTE bodies, with MySQL's CTE scoping: a
// name is a CTE only where a CTE of that name is in scope (a non-recursive
// CTE does not see itself or later CTEs; inner WITH clauses shadow outer
// ones; a qualified name is never a CTE).
//
// Render rewrites the tree and prints it: CTEs become __cte<n>_<name>, every
// real table becomes the caller's relation (keeping the client's alias, or
// the table name as alias), schema.table.column becomes alias.column,
// operators are printed fully parenthesised, MySQL idioms are translated
// (LIMIT a,b, DIV, <=>, division by zero, CAST types, JOIN without ON, LIKE's
// backslash escape, WITH ROLLUP, row equality, IS TRUE, XOR, bit operators,
// and the function table of funcs.go with its rewrites in translate.go),
// optimizer and index hints and SQL_CALC_FOUND_ROWS are dropped, every
// select field without an alias gets MySQL's name for it, taken from the
// client's text, as an explicit alias (names.go: no rewritten text, row
// filter, mask or relation name becomes a result column name; not in INSERT,
// whose rows are never shown), and the output must pass CheckLexical before
// it is returned.
//
// MySQL's default collation is case- and accent-insensitive; the engine
// carries it with default_collation='nocase.noaccent', and the gate covers
// what DuckDB does not collate: LIKE compares both sides lower-cased and
// without accents (an ASCII value of a text column against an ASCII pattern
// is matched without folding it; LIKE itself under an explicit binary
// COLLATE), REGEXP and LOCATE/INSTR fold case, and DISTINCT
// aggregates compare folded text. A rewrite that needs an argument more
// than once binds it once in a DuckDB lambda (letx), so output size stays
// linear. Render infers MySQL result types from the relations' column
// types (types.go) and prints AVG, SUM, /, ROUND, TRUNCATE and
// UNIX_TIMESTAMP with MySQL's type where every operand's type is known
// (typed.go), DuckDB's form otherwise. Where the answer depends on a type
// the gate cannot see, the rewrite makes the engine fail rather than answer
// differently (see rwRound, rwDateAdd, numOperand).
//
// Row filters and column masks (policy.go): a Relation may carry a Policy,
// prepared with PrepareRowFilter and PrepareMask (the same parser, walker and
// allow-list, restricted to the table's own columns, plus current_user(),
// current_tenant() and has_role()); Render then prints every read of the
// table as a derived table selecting the masked columns under the filter,
// fenced (Dialect.fence) so that no predicate of the statement runs on a row
// the filter removes; conjuncts that cannot fail are repeated inside the
// fence (pushdown.go). CheckRowFilter and CheckMask validate policy text where it is written.
//
// Upstream dialects (dialect.go): ParseFor prints a portable core of SELECT
// for MySQL-compatible engines and SQLite without translating MySQL
// semantics, refusing everything else.
//
// Limits (limits.go, limitpass.go): before the walker, Parse and ParseFor
// check the statement against Config.Limits — set-operation branches,
// expression nodes, literals, nesting of expressions, queries and
// subqueries, tables per FROM clause, the size of literals and of the
// strings functions build, the copies of column values one string holds,
// and the bytes of the values computed per row — and refuse it with
// ErrLimit (ResourceExhausted to clients), naming the limit. Where a size
// is not known from literals (REPEAT or REPLACE of a column, a CONCAT of
// parameters or in a recursive CTE) Render prints a check that makes the
// engine fail with the same kind of message; EngineLimit recognises it.
// The caller binds no string parameter longer than Limits.LiteralBytes
// (ParamLimit).
//
// Caller obligations: gate and resolve every TableRef before Render, with the
// same answer for a missing and a forbidden table; run the engine with an
// empty default schema so that anything misclassified fails to resolve.
//
// This package must never pass client text through to its output, nor return
// printed SQL that has not passed CheckLexical.
//
// A Gate and a Statement are safe for concurrent use.
package sqlgate
