package flight

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/flight/backend"
)

// TestMySQLMessages: the engine's messages MySQL has words for reach the
// client in MySQL's words, never the engine's (no candidates, no hints),
// with the code unchanged; others keep the engine's class and first line.
func TestMySQLMessages(t *testing.T) {
	for _, tt := range []struct{ engine, want string }{
		{`Binder Error: Referenced column "nosuchcol" not found in FROM clause!`, "Unknown column 'nosuchcol'"},
		{`Binder Error: Table "o" does not have a column named "nosuchcol"`, "Unknown column 'o.nosuchcol'"},
		{`Binder Error: Referenced table "x" not found!`, "Unknown table 'x'"},
		{`Binder Error: Ambiguous reference to column name "id" (use: "o.id" or "c.id")`, "Column 'id' is ambiguous"},
		{`Binder Error: Ambiguous reference to table "o1" (duplicate alias "o1", explicitly alias one of the tables using "AS my_alias")`, "Not unique table/alias: 'o1'"},
		{`Binder Error: column "status" must appear in the GROUP BY clause or must be part of an aggregate function.`, "'status' isn't in GROUP BY"},
		{`Binder Error: ORDER term out of range - should be between 1 and 1`, "Unknown column position in 'order clause'"},
		{`Binder Error: GROUP BY term out of range - should be between 1 and 1`, "Unknown column position in 'group statement'"},
		{`Binder Error: WHERE clause cannot contain aggregates!`, "Invalid use of group function"},
		{`Binder Error: Set operations can only apply to expressions with the same number of result columns`, "The used SELECT statements have a different number of columns"},
		{`Binder Error: No function matches the given name and argument types 'sum(VARCHAR)'. You might need to add explicit type casts.`, "Incorrect argument types (VARCHAR) to function sum; CAST the arguments"},
		{`Binder Error: No function matches the given name and argument types '+(TIMESTAMP, INTEGER_LITERAL)'. You might need to add explicit type casts.`, "Incorrect argument types (DATETIME, INTEGER) to operator +; CAST the arguments"},
		{`Binder Error: No function matches the given name and argument types 'f()'. You might need to add explicit type casts.`, "Incorrect argument types () to function f; CAST the arguments"},
		{`Conversion Error: Could not convert string 'abc' to INT32 when casting from source column status`, "Truncated incorrect INTEGER value: 'abc'"},
		{`Conversion Error: Could not convert string '3abc' to INT64`, "Truncated incorrect BIGINT value: '3abc'"},
		{`Out of Range Error: Overflow in addition of INT64 (9223372036854775807 + 1)!`, "BIGINT value is out of range in '(9223372036854775807 + 1)'"},
		{`Invalid Input Error: ROUND of an inexact value at a tie is ambiguous`, "query failed: Invalid Input Error: ROUND of an inexact value at a tie is ambiguous"},
		{`Binder Error (details withheld: the statement reads a table through a row filter or column mask)`, "query failed: Binder Error (details withheld: the statement reads a table through a row filter or column mask)"},
	} {
		st := status.Convert(toStatus(fmt.Errorf("%w: %s", backend.ErrQuery, tt.engine)))
		if st.Code() != codes.InvalidArgument || st.Message() != tt.want {
			t.Errorf("%s:\n got %v %q\nwant InvalidArgument %q", tt.engine, st.Code(), st.Message(), tt.want)
		}
		if strings.Contains(st.Message(), "Candidate") || strings.Contains(st.Message(), "Binder Error:") {
			t.Errorf("%s: the engine's text reached the client: %q", tt.engine, st.Message())
		}
	}
	// A message naming a gateway relation is withheld before it is
	// rewritten: the relation's name never surfaces.
	err := withheld(nil, fmt.Errorf("%w: Binder Error: Table \"v_03d470a8ac606d2e00\" does not have a column named \"x\"", backend.ErrQuery))
	if msg := status.Convert(toStatus(err)).Message(); strings.Contains(msg, "v_03d4") {
		t.Errorf("internal name surfaced: %q", msg)
	}
}
