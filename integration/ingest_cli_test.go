package integration_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// cliResult is one finished lakegate subprocess.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the lakegate binary with args and waits for it.
func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lakegateBin, args...)
	cmd.Env = append(os.Environ(), "LAKEGATE_TOKEN=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("lakegate %q: %v", args, err)
	}
	return res
}

// writeCLIParquet writes n rows (id int64 from 0, name utf8, amount
// float64, ts timestamp[us]) to path in row groups of 4096 rows.
func writeCLIParquet(t *testing.T, path string, n int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(schema, f,
		parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(4096)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%100 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("name %d", i))
		}
		b.Field(2).(*array.Float64Builder).Append(float64(i) * 0.25)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(base + int64(i)*1_000_000))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

var summaryRE = regexp.MustCompile(`^loaded (\d+) rows \([0-9.]+ MB\) into (\S+) in [0-9.]+ s \([0-9.]+ MB/s\)\n$`)

// TestIngestCLI drives `lakegate ingest` as a subprocess against a running
// gateway and checks the loaded rows with `lakegate sql`.
func TestIngestCLI(t *testing.T) {
	srv := startServe(t)
	token := srv.token(t, "analyst@demo")
	conn := []string{"--addr", srv.Addr, "--token", token}
	dir := t.TempDir()
	pq := filepath.Join(dir, "loaded.parquet")
	writeCLIParquet(t, pq, 10000)

	ingest := func(t *testing.T, mode, path string, extra ...string) cliResult {
		t.Helper()
		args := append([]string{"ingest"}, conn...)
		args = append(args, "--mode", mode)
		args = append(args, extra...)
		return runCLI(t, append(args, path, "sales.cli_loaded")...)
	}
	wantLoaded := func(t *testing.T, r cliResult, rows int) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("ingest exited %d:\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		m := summaryRE.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no summary line in %q", r.stdout)
		}
		if m[1] != fmt.Sprint(rows) || m[2] != "sales.cli_loaded" {
			t.Fatalf("summary %q, want %d rows into sales.cli_loaded", strings.TrimSpace(r.stdout), rows)
		}
		// stderr is not a terminal here: no progress line.
		if strings.Contains(r.stderr, "\r") {
			t.Errorf("progress drawn without a terminal: %q", r.stderr)
		}
	}
	// query returns count(*) and sum(id) of the table through `lakegate sql`.
	query := func(t *testing.T) string {
		t.Helper()
		args := append([]string{"sql"}, conn...)
		args = append(args, "--format", "csv", "SELECT count(*) AS n, sum(id) AS s FROM sales.cli_loaded")
		r := runCLI(t, args...)
		if r.code != 0 {
			t.Fatalf("sql exited %d:\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 2 || lines[0] != "n,s" {
			t.Fatalf("sql printed %q", r.stdout)
		}
		return lines[1]
	}

	const sum10k = 9999 * 10000 / 2 // ids 0..9999
	t.Run("create", func(t *testing.T) {
		wantLoaded(t, ingest(t, "create", pq), 10000)
		if got, want := query(t), fmt.Sprintf("10000,%d", sum10k); got != want {
			t.Fatalf("count, sum = %s, want %s", got, want)
		}
	})
	t.Run("append", func(t *testing.T) {
		wantLoaded(t, ingest(t, "append", pq, "--batch-rows", "1000"), 10000)
		if got, want := query(t), fmt.Sprintf("20000,%d", 2*sum10k); got != want {
			t.Fatalf("count, sum = %s, want %s", got, want)
		}
	})
	t.Run("create again fails", func(t *testing.T) {
		r := ingest(t, "create", pq)
		if r.code == 0 {
			t.Fatalf("second create succeeded: %s", r.stdout)
		}
		if !strings.Contains(r.stderr, "already exists") || !strings.HasPrefix(r.stderr, "lakegate: ingest: ") {
			t.Fatalf("stderr %q, want a lakegate: ingest: … already exists message", r.stderr)
		}
		if !strings.Contains(r.stderr, "--mode append") {
			t.Errorf("stderr %q does not suggest --mode append", r.stderr)
		}
		if got, want := query(t), fmt.Sprintf("20000,%d", 2*sum10k); got != want {
			t.Fatalf("after the failed create: count, sum = %s, want %s", got, want)
		}
	})
	t.Run("replace from CSV", func(t *testing.T) {
		csvPath := filepath.Join(dir, "replacement.csv")
		var sb strings.Builder
		sb.WriteString("ID,Name,Amount\n")
		const csvRows = 1234
		for i := range csvRows {
			fmt.Fprintf(&sb, "%d,csv %d,%d.5\n", i+1, i, i)
		}
		if err := os.WriteFile(csvPath, []byte(sb.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		wantLoaded(t, ingest(t, "replace", csvPath, "--batch-rows", "500"), csvRows)
		if got, want := query(t), fmt.Sprintf("%d,%d", csvRows, csvRows*(csvRows+1)/2); got != want {
			t.Fatalf("count, sum = %s, want %s", got, want)
		}
	})
	t.Run("bad column name fails before connecting", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(bad, []byte("id,Order Date\n1,x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"ingest", "--addr", "127.0.0.1:1", "--token", token, bad, "sales.cli_bad"}
		r := runCLI(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, `column 2 ("Order Date")`) {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	// sqlCSV runs one query through `lakegate sql --format csv` and returns
	// its lines.
	sqlCSV := func(t *testing.T, query string) []string {
		t.Helper()
		r := runCLI(t, append(append([]string{"sql"}, conn...), "--format", "csv", query)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d:\nstdout: %s\nstderr: %s", query, r.code, r.stdout, r.stderr)
		}
		return strings.Split(strings.TrimSpace(r.stdout), "\n")
	}
	t.Run("CSV types come back through SQL", func(t *testing.T) {
		typed := filepath.Join(dir, "typed.csv")
		var sb strings.Builder
		sb.WriteString("id,price,ok,day,at,qty,note\n")
		const n = 3000
		for i := range n {
			fmt.Fprintf(&sb, "%d,747.06,%v,2024-01-%02d,2024-01-%02d 10:30:00.25,%d,n%d\n", i, i%2 == 0, i%28+1, i%28+1, i, i)
		}
		if err := os.WriteFile(typed, []byte(sb.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		// Flags after the positional arguments; qty given by --schema.
		r := runCLI(t, append([]string{"ingest", typed, "sales.cli_typed", "--batch-rows", "700", "--schema", "qty:decimal(12,3)"}, conn...)...)
		if r.code != 0 {
			t.Fatalf("ingest exited %d:\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
		desc := strings.Join(sqlCSV(t, "DESCRIBE sales.cli_typed"), "\n")
		for _, want := range []string{"id,bigint", "price,\"decimal(18,2)\"", "ok,tinyint(1)", "day,date", "at,datetime(6)", "qty,\"decimal(12,3)\"", "note,text"} {
			if !strings.Contains(desc, want) {
				t.Errorf("DESCRIBE lacks %q:\n%s", want, desc)
			}
		}
		// 3000 × 747.06 sums to 2241180 exactly; as float64 it drifts
		// (2241180.0000001267).
		got := sqlCSV(t, "SELECT sum(price) AS s, sum(qty) AS q, sum(CASE WHEN ok THEN 1 ELSE 0 END) AS t, min(day) AS d, max(at) AS a FROM sales.cli_typed")
		if want := []string{"s,q,t,d,a", "2241180.00,4498500.000,1500,2024-01-01,2024-01-28T10:30:00.25"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("CSV value beyond the sample fails with its line", func(t *testing.T) {
		bad := filepath.Join(dir, "late.csv")
		if err := os.WriteFile(bad, []byte("id,price\n1,1.50\n2,2.25\n3,n/a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, append([]string{"ingest", "--sample-rows", "2", bad, "sales.cli_late"}, conn...)...)
		want := `line 4, column price: "n/a" is not a DECIMAL(18,2)`
		if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "--sample-rows") || !strings.Contains(r.stderr, "nothing was loaded") {
			t.Fatalf("exit %d, stderr %q; want %q", r.code, r.stderr, want)
		}
		if lines := sqlCSV(t, "SHOW TABLES FROM sales LIKE 'cli_late'"); len(lines) > 1 {
			t.Errorf("the failed load created a table: %q", lines)
		}
	})
	t.Run("append to a missing table suggests create_append", func(t *testing.T) {
		r := runCLI(t, append([]string{"ingest", pq, "sales.cli_missing", "--mode", "append"}, conn...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "--mode create_append") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("semicolon file suggests the delimiter", func(t *testing.T) {
		semi := filepath.Join(dir, "semi.csv")
		if err := os.WriteFile(semi, []byte("id;name\n1;a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, append([]string{"ingest", semi, "sales.cli_semi"}, conn...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "--csv-delimiter ';'") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("usage", func(t *testing.T) {
		r := runCLI(t, append(append([]string{"ingest"}, conn...), pq)...)
		if r.code != 2 {
			t.Fatalf("exit %d, want 2; stderr %q", r.code, r.stderr)
		}
	})
}

// TestSQLCLIWrites: `lakegate sql` sends writes through ExecuteUpdate and
// reports the rows written.
func TestSQLCLIWrites(t *testing.T) {
	srv := startServe(t)
	conn := []string{"sql", "--addr", srv.Addr, "--token", srv.token(t, "analyst@demo")}
	for _, c := range []struct{ sql, want string }{
		{"CREATE TABLE sales.cli_ctas AS SELECT id FROM sales.orders WHERE id <= 4", "(4 rows written)"},
		{"INSERT INTO sales.cli_ctas VALUES (100)", "(1 rows written)"},
		{"SELECT count(*) AS n FROM sales.cli_ctas", "5"},
		{"DROP TABLE sales.cli_ctas", "(0 rows written)"},
	} {
		r := runCLI(t, append(conn, "--format", "csv", c.sql)...)
		if r.code != 0 || !strings.Contains(r.stdout, c.want) {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", c.sql, r.code, r.stdout, r.stderr)
		}
	}
}
