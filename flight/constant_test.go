package flight

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
)

// TestConstantStatementKept: a constant statement (the SELECT 1 connection
// pools send) runs on the engine once; later runs — plain or prepared, by
// the same caller or another of another tenant — answer the same rows with
// the same schema from the kept result. A statement that is not constant
// (a function, a table) runs on the engine every time.
func TestConstantStatementKept(t *testing.T) {
	l, rec := recordingLake(t)
	cl := l.client(t)
	seedOrders(t, cl)
	rec.take()
	alice, carol := bearerCtx(aliceToken), bearerCtx(carolToken)
	for _, c := range []struct {
		sql      string
		constant bool
	}{
		{"SELECT 1", true},
		{"select -1.5 AS x, 'y', NULL, TRUE from dual", true},
		{"SELECT now() IS NOT NULL", false},
		{"SELECT 1 + 1", false},
		{"SELECT count(*) FROM sales.orders", false},
	} {
		t.Run(c.sql, func(t *testing.T) {
			var first string
			for i, run := range []func() (string, error){
				func() (string, error) { return runDescribed(alice, cl, c.sql, false) },
				func() (string, error) { return runDescribed(alice, cl, c.sql, false) },
				func() (string, error) { return runDescribed(alice, cl, c.sql, true) },
				func() (string, error) { return runDescribed(carol, cl, c.sql, false) },
			} {
				got, err := run()
				if strings.Contains(c.sql, "sales.") && i == 3 { // carol may not read sales
					if err == nil {
						t.Fatal("carol read sales.orders")
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = got
				} else if got != first && !strings.Contains(c.sql, "now()") {
					t.Fatalf("run %d: %s\nfirst run: %s", i+1, got, first)
				}
				ran := slices.ContainsFunc(rec.take(), func(s string) bool { return !strings.Contains(s, "json_serialize_sql") })
				if want := i == 0 || !c.constant; ran != want {
					t.Fatalf("run %d: ran on the engine %v, want %v", i+1, ran, want)
				}
			}
		})
	}
}

// runDescribed runs sql, prepared or plain, and prints the schema of its
// stream and its rows.
func runDescribed(ctx context.Context, cl *flightsql.Client, sql string, prepared bool) (string, error) {
	var info *flight.FlightInfo
	var err error
	if prepared {
		var prep *flightsql.PreparedStatement
		if prep, err = cl.Prepare(ctx, sql); err != nil {
			return "", err
		}
		defer prep.Close(ctx)
		info, err = prep.Execute(ctx)
	} else {
		info, err = cl.Execute(ctx, sql)
	}
	if err != nil {
		return "", err
	}
	rdr, err := cl.DoGet(ctx, info.GetEndpoint()[0].GetTicket())
	if err != nil {
		return "", err
	}
	defer rdr.Release()
	var b strings.Builder
	fmt.Fprintln(&b, rdr.Schema())
	for rdr.Next() {
		fmt.Fprintln(&b, rdr.RecordBatch())
	}
	return b.String(), rdr.Err()
}
