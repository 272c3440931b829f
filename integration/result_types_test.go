package integration_test

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestResultTypes: through the gateway, with the ADBC client, results carry
// MySQL's types as the Arrow types JDBC/ADBC clients read back (AVG and "/"
// of exact values a decimal128 of scale + 4, SUM of integers a decimal128
// of scale 0, ROUND of a DECIMAL a decimal128 of scale d, UNIX_TIMESTAMP and
// DIV an int64, POW a float64, CAST targets), in the schema of the
// FlightInfo and in the stream, and ROUND(AVG(decimal), 2) answers for any
// grouping with MySQL's values.
func TestResultTypes(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	admin := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))
	// A table with a DECIMAL(12,2) column, as the conformance corpus has.
	if _, err := admin.exec(ctx, "CREATE TABLE sales.rt_orders AS SELECT id, customer_id, status, order_date, CAST(amount AS DECIMAL(12,2)) AS total FROM sales.orders"); err != nil {
		t.Fatal(err)
	}
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	rpc, rpcCtx := flightSQLAs(t, srv, srv.token(t, "analyst@demo"))

	for _, tc := range []struct {
		query string
		types []string // Arrow types of the result columns
	}{
		{"SELECT AVG(amount), AVG(customer_id), SUM(customer_id), SUM(amount) FROM sales.orders",
			[]string{"decimal(38, 6)", "decimal(38, 4)", "decimal(38, 0)", "decimal(38, 2)"}},
		{"SELECT ROUND(AVG(total), 2), ROUND(total, 1), TRUNCATE(total, 3) FROM sales.rt_orders GROUP BY total",
			[]string{"decimal(38, 2)", "decimal(12, 1)", "decimal(38, 3)"}},
		{"SELECT amount / 3, id / 4, 7 / 2, 7 DIV 2, POW(2, 3), SQRT(amount) FROM sales.orders WHERE id = 1",
			[]string{"decimal(38, 6)", "decimal(38, 4)", "decimal(38, 4)", "int64", "float64", "float64"}},
		{"SELECT UNIX_TIMESTAMP(order_date), UNIX_TIMESTAMP(CAST(order_date AS DATETIME)) FROM sales.orders WHERE id = 1",
			[]string{"int64", "int64"}},
		{"SELECT CAST(amount AS SIGNED), CAST(id AS UNSIGNED), CAST(amount AS DECIMAL(10,3)), CAST(amount AS CHAR), CAST(order_date AS DATETIME), CAST('2024-01-02 03:04:05' AS DATE), CAST('12:34:56' AS TIME) FROM sales.orders WHERE id = 1",
			[]string{"int64", "uint64", "decimal(10, 3)", "utf8", "timestamp[us]", "date32", "time64[us]"}},
		{"SELECT AVG(a) FROM (SELECT amount AS a FROM sales.orders) d", []string{"decimal(38, 6)"}},
	} {
		check := func(where string, s *arrow.Schema) {
			t.Helper()
			var got []string
			for _, f := range s.Fields() {
				got = append(got, f.Type.String())
			}
			if strings.Join(got, ", ") != strings.Join(tc.types, ", ") {
				t.Errorf("%s: %s types %s, want %s", tc.query, where, strings.Join(got, ", "), strings.Join(tc.types, ", "))
			}
		}
		// The FlightInfo's schema (planned, not run) and the stream's.
		info, err := rpc.Execute(rpcCtx, tc.query)
		if err != nil {
			t.Errorf("%s: Execute: %v", tc.query, err)
			continue
		}
		check("FlightInfo", schemaOf(t, info.GetSchema()))
		s, rows, err := analyst.query(ctx, tc.query)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		if len(rows) == 0 {
			t.Errorf("%s: no rows", tc.query)
		}
		check("stream", s)
	}

	// UNIX_TIMESTAMP is an integer, not 1.7041536e+09.
	wantRows(t, analyst.mustRows(t, "SELECT UNIX_TIMESTAMP(order_date) FROM sales.orders WHERE id = 365"), []string{"1704067200"})

	// ROUND(AVG(total), 2) for any grouping, with MySQL's value: the exact
	// average rounded half away from zero to 6 digits, then to 2.
	for _, group := range []string{"", " GROUP BY status", " GROUP BY customer_id", " GROUP BY order_date", " GROUP BY id % 7", " GROUP BY total"} {
		for _, table := range []string{"sales.rt_orders", "sales.orders"} {
			col := "total"
			if table == "sales.orders" {
				col = "amount"
				group = strings.ReplaceAll(group, "total", "amount")
			}
			q := "SELECT ROUND(AVG(" + col + "), 2), SUM(" + col + "), COUNT(" + col + ") FROM " + table + group
			_, rows, err := analyst.query(ctx, q)
			if err != nil {
				t.Errorf("%s: %v", q, err)
				continue
			}
			for _, r := range rows {
				got, ok := new(big.Rat).SetString(r[0])
				if want := mysqlRoundAvg(t, r[1], r[2]); !ok || got.Cmp(want) != 0 {
					t.Errorf("%s: ROUND(AVG) = %s for SUM %s, COUNT %s; want %s", q, r[0], r[1], r[2], want.FloatString(2))
				}
			}
		}
	}
}

// mysqlRoundAvg is MySQL's ROUND(AVG(x), 2) of a DECIMAL(…,2) column from
// its SUM and COUNT: the quotient rounded half away from zero to scale 6,
// then to scale 2.
func mysqlRoundAvg(t *testing.T, sum, count string) *big.Rat {
	t.Helper()
	s, ok1 := new(big.Rat).SetString(sum)
	n, ok2 := new(big.Rat).SetString(count)
	if !ok1 || !ok2 || n.Sign() == 0 {
		t.Fatalf("SUM %q, COUNT %q", sum, count)
	}
	round := func(r *big.Rat, scale int64) *big.Rat {
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(scale), nil))
		x := new(big.Rat).Mul(r, p)
		num, den := x.Num(), x.Denom()
		q, m := new(big.Int).QuoRem(new(big.Int).Abs(num), den, new(big.Int))
		if new(big.Int).Mul(m, big.NewInt(2)).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		if num.Sign() < 0 {
			q.Neg(q)
		}
		return new(big.Rat).Quo(new(big.Rat).SetInt(q), p)
	}
	return round(round(new(big.Rat).Quo(s, n), 6), 2)
}
