package ingest_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2"

	"lakegate/flight/ingest"
	"lakegate/stage/stagetest"
)

// DuckDB reads the files with the SQL types matching what was written:
// time zones as TIMESTAMP WITH TIME ZONE, nanoseconds as TIMESTAMP_NS
// (exactly, checked on a value),
// decimals with their precision, dictionaries and large strings as VARCHAR.
func TestDuckDBReadsFiles(t *testing.T) {
	b := stagetest.Local(t)
	st := b.Open(t, "acme")
	var recs []arrow.RecordBatch
	for i := range 3 {
		rec := mixedBatch(t, memory.DefaultAllocator, i*100, 100)
		defer rec.Release()
		recs = append(recs, rec)
	}
	cfg := newConfig(t, st, mixed)
	cfg.TargetFileBytes = 1
	files, rows, err := ingest.Copy(t.Context(), cfg, mustReader(t, mixed, recs...))
	if err != nil || len(files) != 3 {
		t.Fatal(files, err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	paths := "["
	for i, f := range files {
		if i > 0 {
			paths += ","
		}
		paths += "'" + filepath.Join(b.Abs("tenants/acme"), f.Key) + "'"
	}
	paths += "]"
	want := map[string]string{
		"id": "BIGINT", "f": "DOUBLE", "s": "VARCHAR", "ls": "VARCHAR", "b": "BOOLEAN", "u32": "UINTEGER",
		"ts_utc": "TIMESTAMP WITH TIME ZONE", "ts_paris": "TIMESTAMP WITH TIME ZONE", "ts_ns": "TIMESTAMP_NS", "ts_local": "TIMESTAMP",
		"d": "DATE", "tm": "TIME", "dec": "DECIMAL(20,4)", "dict": "VARCHAR", "bin": "BLOB", "fsb": "BLOB",
		"list": "INTEGER[]", "st": "STRUCT(a BIGINT, b VARCHAR)", "m": "MAP(VARCHAR, BIGINT)", "uuid": "UUID",
	}
	got := map[string]string{}
	rs, err := db.QueryContext(t.Context(), "DESCRIBE SELECT * FROM read_parquet("+paths+")")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		got[vals[0].(string)] = vals[1].(string)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	for col, typ := range want {
		if got[col] != typ {
			t.Errorf("DuckDB reads %s as %q, want %q", col, got[col], typ)
		}
	}
	if len(got) != len(want) {
		t.Errorf("DuckDB columns %v", got)
	}
	var n int64
	var sum float64
	var dec, ts string
	err = db.QueryRowContext(t.Context(), "SELECT count(*), sum(f), max(dec)::VARCHAR, max(ts_ns)::VARCHAR FROM read_parquet("+paths+")").Scan(&n, &sum, &dec, &ts)
	if err != nil {
		t.Fatal(err)
	}
	var wantSum float64
	for i := range 300 {
		if i%5 != 4 {
			wantSum += float64(i) * 1.5
		}
	}
	if n != rows || sum != wantSum || dec != "298000.0298" || ts != "2023-11-14 22:13:20.000000298" {
		t.Errorf("DuckDB read count %d sum %v max(dec) %s max(ts) %s", n, sum, dec, ts)
	}
}
