package duckdb_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// BenchmarkExecuteSelectStar10M streams SELECT * of a 10M-row, 4-column
// Parquet table through Execute (coalesced batches), like SQL_GATE §6.
func BenchmarkExecuteSelectStar10M(b *testing.B) {
	if testing.Short() {
		b.Skip("writes and scans a 10M-row table (~10 s); skipped under -short")
	}
	e, _ := newEngine(b)
	rel := bindTable(b, e, "acme", "t@1", `SELECT range AS id, range * 0.5 AS amount,
		range % 1000 AS bucket, (range * 7) % 100003 AS other FROM range(10000000)`)
	benchDrain(b, e, "SELECT * FROM "+relSQL(rel))
}

// BenchmarkExecuteStrings2M streams a 2M-row Parquet table of a BIGINT and
// two VARCHAR columns (one held inline by DuckDB, ≤ 12 bytes, one mostly
// longer) through Execute.
func BenchmarkExecuteStrings2M(b *testing.B) {
	e, _ := newEngine(b)
	rel := bindTable(b, e, "acme", "s@1", `SELECT range AS id, 'c-' || (range % 100000) AS name,
		repeat('x', (range % 50)::INTEGER) AS note FROM range(2000000)`)
	benchDrain(b, e, "SELECT * FROM "+relSQL(rel))
}

// benchDrain runs sql once per iteration and drains it, reporting rows/s
// and MB/s of Arrow buffers.
func benchDrain(b *testing.B, e *duckdb.Engine, sql string) {
	ctx := context.Background()
	var rows, bytes int64
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		rr, err := e.Execute(ctx, "acme", sql, nil)
		if err != nil {
			b.Fatal(err)
		}
		for rr.Next() {
			rec := rr.RecordBatch()
			rows += rec.NumRows()
			for _, col := range rec.Columns() {
				for _, buf := range col.Data().Buffers() {
					if buf != nil {
						bytes += int64(buf.Len())
					}
				}
			}
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		rr.Release()
	}
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(rows)/sec, "rows/s")
	b.ReportMetric(float64(bytes)/sec/1e6, "MB/s")
}

// BenchmarkDescribeExecuteSelect1 is the engine's share of a SELECT 1 over
// Flight SQL: Describe (GetFlightInfo) then Execute and drain (DoGet).
func BenchmarkDescribeExecuteSelect1(b *testing.B) {
	ctx := context.Background()
	e, _ := newEngine(b)
	if _, err := query(ctx, e, "acme", "SELECT 1"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.Describe(ctx, "acme", "SELECT 1", 0); err != nil {
			b.Fatal(err)
		}
		rr, err := e.Execute(ctx, "acme", "SELECT 1", nil)
		if err != nil {
			b.Fatal(err)
		}
		for rr.Next() {
		}
		if err := rr.Err(); err != nil {
			b.Fatal(err)
		}
		rr.Release()
	}
}

// BenchmarkMaskedSelectStar10M compares SELECT * of a 10M-row table with a
// text column read plainly and through column masks (REDACT on one text
// column, LAST4 on another), rendered by the SQL gate as the gateway does.
// The ratio of the two rows/s is the cost of masking.
func BenchmarkMaskedSelectStar10M(b *testing.B) {
	if testing.Short() {
		b.Skip("writes and scans a 10M-row table; skipped under -short")
	}
	ctx := context.Background()
	e, _ := newEngine(b)
	rel := bindTable(b, e, "acme", "m@1", `SELECT range AS id, range % 1000 AS bucket,
		lpad(CAST(range % 1000000000 AS VARCHAR), 9, '0') AS ssn, 'card-' || (range * 7919) % 10000000 AS card
		FROM range(10000000)`)
	g := sqlgate.New(sqlgate.Config{})
	st, err := g.Parse("SELECT * FROM t", "s")
	if err != nil {
		b.Fatal(err)
	}
	cols := []string{"id", "bucket", "ssn", "card"}
	redact, _ := g.PrepareMask("REDACT", "ssn", cols, sqlgate.DialectDuckDB)
	last4, _ := g.PrepareMask("LAST4", "card", cols, sqlgate.DialectDuckDB)
	for _, c := range []struct {
		name string
		pol  *sqlgate.Policy
	}{
		{"plain", nil},
		{"masked", &sqlgate.Policy{Masks: []*sqlgate.Mask{nil, nil, redact, last4}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			sql, err := st.Render(map[sqlgate.TableRef]sqlgate.Relation{st.Tables()[0]: {
				Schema: rel.Schema, Name: rel.Name, Columns: cols, Types: rel.Types, Policy: c.pol}})
			if err != nil {
				b.Fatal(err)
			}
			var rows int64
			start := time.Now()
			for b.Loop() {
				rr, err := e.Execute(ctx, "acme", sql, nil)
				if err != nil {
					b.Fatal(err)
				}
				for rr.Next() {
					rows += rr.RecordBatch().NumRows()
				}
				if err := rr.Err(); err != nil {
					b.Fatal(err)
				}
				rr.Release()
			}
			b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

// BenchmarkVerifyJoin5 is the statement check (json_serialize_sql and the
// walk of its tree) on what the SQL gate prints for a 5-table join with
// aggregates, a CTE-free GROUP BY and ORDER BY: the cost it adds to a
// statement the engine has not seen before.
func BenchmarkVerifyJoin5(b *testing.B) {
	ctx := context.Background()
	e, _ := newEngine(b, verifying)
	g := sqlgate.New(sqlgate.Config{})
	st, err := g.Parse(`SELECT o.id, c.name, p.name, s.name, sum(l.qty * l.price) AS revenue, count(DISTINCT o.id)
		FROM orders o JOIN customers c ON o.cid = c.id JOIN items l ON l.oid = o.id
		JOIN products p ON p.id = l.pid JOIN suppliers s ON s.id = p.sid
		WHERE o.day >= '2024-01-01' AND o.status IN ('shipped', 'delivered') AND c.name LIKE 'a%'
		GROUP BY o.id, c.name, p.name, s.name ORDER BY revenue DESC LIMIT 100`, "s")
	if err != nil {
		b.Fatal(err)
	}
	rel := map[sqlgate.TableRef]sqlgate.Relation{}
	for i, r := range st.Tables() {
		rel[r] = sqlgate.Relation{Schema: "lg_rel", Name: "v_t" + string(rune('a'+i)) + "@1"}
	}
	sql, err := st.Render(rel)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := e.VerifyUncached(ctx, "acme", sql); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPointLookup is the engine's share of the gateway's point query
// (integration BenchmarkPointQuery): Bind of a 5,000-row version small
// enough to be copied into memory, then Execute and drain of SELECT … WHERE
// id = ? with one bound value, as a prepared statement's DoGet does.
func BenchmarkPointLookup(b *testing.B) {
	ctx := context.Background()
	for _, threads := range []int{1, 2} {
		b.Run("threads="+strconv.Itoa(threads), func(b *testing.B) {
			e, _ := newEngine(b, func(c *duckdb.Config) { c.Threads = threads; c.NoVerify = false })
			rel := bindTable(b, e, "acme", "orders@1", `SELECT range AS id, range % 500 AS customer_id,
				round(range * 1.37, 2) AS amount, ['new', 'paid', 'shipped'][range % 3 + 1] AS status FROM range(1, 5001)`)
			sql := "SELECT id, customer_id, amount, status FROM " + relSQL(rel) + " WHERE id = ?"
			local := []backend.LocalTable{{ID: "orders@1"}}
			i := int64(0)
			for b.Loop() {
				i++
				if _, err := e.Bind(ctx, "acme", local); err != nil {
					b.Fatal(err)
				}
				res, err := query(ctx, e, "acme", sql, 1+i%5000)
				if err != nil || res.rows != 1 {
					b.Fatalf("%v rows, %v", res, err)
				}
			}
		})
	}
}
