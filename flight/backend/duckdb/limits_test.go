package duckdb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// gateSQL renders client SQL through the gate, reading s.t as rel.
func gateSQL(t *testing.T, sql string, rel backend.Relation, cols ...string) string {
	t.Helper()
	st, err := sqlgate.New(sqlgate.Config{}).Parse(sql, "s")
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rels := map[sqlgate.TableRef]sqlgate.Relation{}
	for _, r := range st.Tables() {
		rels[r] = sqlgate.Relation{Schema: rel.Schema, Name: rel.Name, Columns: cols}
	}
	out, err := st.Render(rels)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantLimit checks that err is a statement limit: backend.ErrResources (so
// ResourceExhausted) wrapping sqlgate.ErrLimit, whose message names it.
func wantLimit(t *testing.T, err error, limit string) {
	t.Helper()
	var ge *sqlgate.Error
	if !errors.Is(err, backend.ErrResources) || !errors.Is(err, sqlgate.ErrLimit) || !errors.As(err, &ge) {
		t.Fatalf("err = %v, want ErrResources wrapping sqlgate.ErrLimit", err)
	}
	if want := "sqlgate: statement exceeds the limit of " + limit; ge.Msg != want {
		t.Fatalf("message %q, want %q", ge.Msg, want)
	}
}

// TestEngineStringLimits: a string the gate made the engine check fails the
// statement as a limit before it is built — when it runs, and when the
// engine folds it while planning — and the connection is reused cleanly.
func TestEngineStringLimits(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t, verifying)
	rel := bindTable(t, e, "acme", "t@1", "SELECT range AS n, 'ab' AS s FROM range(3)")
	for _, c := range []struct{ sql, limit string }{
		{"SELECT length(repeat(s, n * 100000)) FROM t", "32768 bytes for a string REPEAT builds"},
		{"SELECT length(repeat(repeat('x', 1000), 1000))", "32768 bytes for a string REPEAT builds"},
		{"SELECT length(replace(concat(s, repeat('ab', 10000)), 'a', 'xyz')) FROM t", "32768 bytes for a string REPLACE builds"},
		{"WITH RECURSIVE r (v, k) AS (SELECT 'x', 1 UNION ALL SELECT concat(v, v), k + 1 FROM r WHERE k < 64) SELECT max(length(v)) FROM r", "32768 bytes for a string CONCAT builds"},
	} {
		_, err := query(ctx, e, "acme", gateSQL(t, c.sql, rel, "n", "s"))
		wantLimit(t, err, c.limit)
	}
	// Under the limit nothing changes.
	r := mustQuery(t, e, "acme", gateSQL(t, "SELECT repeat(s, n) AS v FROM t ORDER BY n", rel, "n", "s"))
	if got := []any{r.values[0][0], r.values[1][0], r.values[2][0]}; got[0] != "" || got[1] != "ab" || got[2] != "abab" {
		t.Fatalf("repeat = %q", got)
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

// TestParameterLimit: a string or blob parameter longer than MaxParamBytes
// (by default the gate's literal limit) is refused as a limit, naming the
// parameter; one of exactly that size is bound.
func TestParameterLimit(t *testing.T) {
	ctx := context.Background()
	e, _ := newEngine(t)
	n := sqlgate.DefaultLiteralBytes
	if r := mustQuery(t, e, "acme", "SELECT length($1::VARCHAR) AS l", strings.Repeat("x", n)); r.values[0][0] != int64(n) {
		t.Fatalf("length = %v", r.values)
	}
	_, err := query(ctx, e, "acme", "SELECT length($1::VARCHAR), $2::VARCHAR", "x", strings.Repeat("x", n+1))
	wantLimit(t, err, "65536 bytes for a string (parameter 2)")
	_, err = query(ctx, e, "acme", "SELECT octet_length($1::BLOB)", make([]byte, n+1))
	wantLimit(t, err, "65536 bytes for a string (parameter 1)")

	small, _ := newEngine(t, func(c *duckdb.Config) { c.MaxParamBytes = 10 })
	_, err = query(ctx, small, "acme", "SELECT $1::VARCHAR", "12345678901")
	wantLimit(t, err, "10 bytes for a string (parameter 1)")
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

// TestTempDirectoryLimit: each tenant's instance may spill at most
// MaxTempSize, not DuckDB's default of 90% of the free disk.
func TestTempDirectoryLimit(t *testing.T) {
	e, _ := newEngine(t, func(c *duckdb.Config) { c.MaxTempSize = "2GB" })
	r := mustQuery(t, e, "acme", "SELECT current_setting('max_temp_directory_size')::VARCHAR AS v")
	if got := r.values[0][0].(string); !strings.HasPrefix(got, "1.8 GiB") {
		t.Fatalf("max_temp_directory_size = %q", got)
	}
	if err := (duckdb.Config{Root: "x", MaxTempSize: "2GB; SET x=1"}).Validate(); err == nil {
		t.Fatal("an injected MaxTempSize validated")
	}
}

// TestPlanningDeadline: the engine checks for an interrupt between the
// phases of a statement (preparing, starting, each chunk), not inside them;
// a statement whose deadline passes while it is prepared fails with
// ErrDeadline before it starts, and the instance and its connections are
// fine.
func TestPlanningDeadline(t *testing.T) {
	e, _ := newEngine(t)
	mustQuery(t, e, "acme", "SELECT 1") // open the tenant first
	// 4,000 UNION branches (four times the gate's limit) take the engine
	// seconds to plan, and their planning time grows with their square.
	long := "SELECT 1" + strings.Repeat(" UNION ALL SELECT 1", 3999)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := query(ctx, e, "acme", long)
	wantErr(t, err, backend.ErrDeadline)
	if r := mustQuery(t, e, "acme", "SELECT 42 AS x"); r.values[0][0] != int32(42) {
		t.Fatal(r.values)
	}
	if in := e.ConnsInUse("acme"); in != 0 {
		t.Errorf("%d connections still in use", in)
	}
}

// TestBatchesOfLargeRows: a batch ends with the row that takes it to
// backend.MinBatchBytes, even inside one of the engine's 2,048-row chunks,
// so that a result of large rows streams in messages a client accepts
// (before, one chunk of 60 KB strings made a 120 MB batch, which the ADBC
// client refused: "received message larger than max"). Values and NULLs
// come through the split chunks unchanged, on the direct path and on
// DuckDB's own conversion (a LIST column).
func TestBatchesOfLargeRows(t *testing.T) {
	e, _ := newEngine(t)
	const row = 60_000
	for _, c := range []struct {
		name, sql string
		maxBytes  int
	}{
		{"direct", "SELECT range AS id, CASE WHEN range % 3 = 0 THEN NULL ELSE repeat(chr(CAST(65 + range % 26 AS INTEGER)), 60000) END AS s FROM range(5000)",
			backend.MinBatchBytes + row},
		{"converted", "SELECT range AS id, CASE WHEN range % 3 = 0 THEN NULL ELSE repeat(chr(CAST(65 + range % 26 AS INTEGER)), 60000) END AS s, [range] AS l FROM range(5000)",
			2*backend.MinBatchBytes + row},
	} {
		t.Run(c.name, func(t *testing.T) {
			rr, err := e.Execute(context.Background(), "acme", c.sql, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Release()
			var next int64
			for rr.Next() {
				rec := rr.RecordBatch()
				bytes := 0
				for i := range int(rec.NumRows()) {
					id := value(rec.Column(0), i).(int64)
					s := value(rec.Column(1), i)
					switch {
					case id != next:
						t.Fatalf("row %d has id %d", next, id)
					case id%3 == 0 && s != nil:
						t.Fatalf("row %d: %v, want NULL", id, s)
					case id%3 != 0 && (s == nil || len(s.(string)) != row || s.(string)[0] != byte(65+id%26)):
						t.Fatalf("row %d: wrong value", id)
					}
					if s != nil {
						bytes += row
					}
					next++
				}
				if bytes > c.maxBytes {
					t.Errorf("a batch of %d rows holds %d bytes of strings", rec.NumRows(), bytes)
				}
			}
			if err := rr.Err(); err != nil || next != 5000 {
				t.Fatalf("%d rows, %v", next, err)
			}
		})
	}
}
