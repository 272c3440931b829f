// Package backend defines the seam between the Flight SQL layer and the engines
// that execute authorized SQL. The Flight layer resolves a statement's table
// references through a Backend, renders canonical SQL against the relations it
// gets back, and asks the Backend to describe or execute exactly that SQL.
//
// A Backend never sees client text: every SQL string it receives was printed by
// the SQL gate from an authorized, rewritten AST.
//
// The package holds only the interfaces and the types crossing the seam; the
// engines live in its subpackages (duckdb, upstream) and must never import
// package flight.
package backend
