// Package sqlgate is the only path from client SQL text to engine SQL.
//
// Clients write MySQL-flavoured SQL; the engine is DuckDB. The two grammars
// disagree (backslash escapes, comments, quoting, CTE scoping, names that are
// file reads), so client text is never passed to the engine. Instead:
//
//	st, err := gate.Parse(sql, session.Schema) // one statement, allow-listed
//	refs := st.Tables()                        // real tables, MySQL CTE scoping
//	// caller: namespace gate, then resolve each ref to a Relation (or refuse)
//	out, err := st.Render(rels)                // rewritten, printed, lexically checked
//	// caller: execute out with st.NumParams() parameters
//
// Parse accepts exactly one SELECT, set operation (UNION/EXCEPT/INTERSECT) or
// WITH … SELECT, or USE <schema>; everything else — other statements, SELECT …
// INTO, locking reads, AS OF, PARTITION, TABLESAMPLE, index hints, variables,
// hex/bit literals, charset introducers, and any function, operator or cast
// not on the allow-list (see functions in funcs.go) — is refused with an
// *Error whose message is user-facing. Identifiers are lower-cased; names
// starting with "__lg" or "__cte" are reserved.
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
// backslash escape), and the output must pass CheckLexical before it is
// returned.
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
