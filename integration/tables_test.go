package integration_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ingestSchema is the shape of the rows the ingest tests load.
var ingestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

// ingestRows returns a reader of n rows with ids from first, in batches of
// 64Ki rows: id, id*0.5, "row <id>" (NULL for every 1000th), and a
// timestamp id seconds after 2024-01-01.
func ingestRows(mem memory.Allocator, first, n int64) array.RecordReader {
	const batch = 64 << 10
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var recs []arrow.RecordBatch
	for start := first; start < first+n; start += batch {
		end := min(start+batch, first+n)
		b := array.NewRecordBuilder(mem, ingestSchema)
		for id := start; id < end; id++ {
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).(*array.Float64Builder).Append(float64(id) * 0.5)
			if id%1000 == 0 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("row %d", id))
			}
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(base + id*1_000_000))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rdr, err := array.NewRecordReader(ingestSchema, recs)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		r.Release()
	}
	return rdr
}

// ingest loads rdr into schema.table with an ADBC bulk ingest in mode.
func (c *client) ingest(ctx context.Context, schema, table, mode string, rdr array.RecordReader) (int64, error) {
	stmt, err := c.conn.NewStatement()
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	for k, v := range map[string]string{
		adbc.OptionKeyIngestTargetTable:      table,
		adbc.OptionValueIngestTargetDBSchema: schema,
		adbc.OptionKeyIngestMode:             mode,
	} {
		if err := stmt.SetOption(k, v); err != nil {
			return 0, err
		}
	}
	if err := stmt.BindStream(ctx, rdr); err != nil {
		return 0, err
	}
	return stmt.ExecuteUpdate(ctx)
}

// exec runs a statement that returns no rows (ExecuteUpdate).
func (c *client) exec(ctx context.Context, sql string) (int64, error) {
	stmt, err := c.conn.NewStatement()
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery(sql); err != nil {
		return 0, err
	}
	return stmt.ExecuteUpdate(ctx)
}

func (c *client) mustRows(t *testing.T, sql string) [][]string {
	t.Helper()
	_, rows, err := c.query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

func wantRows(t *testing.T, got [][]string, want ...[]string) {
	t.Helper()
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("rows = %v, want %v", got, want)
	}
}

// stageFiles lists the regular files under the tenant's table directory.
func stageFiles(t *testing.T, dataDir string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(dataDir, "stage", "tenants", "demo", "tables")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestIngest drives the write path end to end with the ADBC driver: bulk
// ingest in every mode, concurrent appends, an interrupted upload, and the
// SQL writes (CTAS, INSERT, DROP), each checked by reading back through SQL.
func TestIngest(t *testing.T) {
	// Without the access log, whose own files would join the stage's.
	srv := startServe(t, "--access-log=false")
	ctx := context.Background()
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)

	const n = 1_000_000
	t.Run("create 1M rows", func(t *testing.T) {
		rdr := ingestRows(mem, 1, n)
		defer rdr.Release()
		got, err := analyst.ingest(ctx, "sales", "events", adbc.OptionValueIngestModeCreate, rdr)
		if err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Fatalf("ingest reported %d rows, want %d", got, n)
		}
		schema, rows, err := analyst.query(ctx, "SELECT count(*), sum(id), count(label), min(ts), max(amount) FROM sales.events")
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, rows, []string{"1000000", "500000500000", "999000", "2024-01-01T00:00:01Z", "500000"})
		_ = schema
		schema, rows, err = analyst.query(ctx, "SELECT * FROM sales.events WHERE id IN (1, 1000, 999999) ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range schema.Fields() {
			if !arrow.TypeEqual(f.Type, ingestSchema.Field(i).Type) || f.Name != ingestSchema.Field(i).Name {
				t.Errorf("column %d: %s %s, want %s %s", i, f.Name, f.Type, ingestSchema.Field(i).Name, ingestSchema.Field(i).Type)
			}
		}
		wantRows(t, rows,
			[]string{"1", "0.5", "row 1", "2024-01-01T00:00:01Z"},
			[]string{"1000", "500", "NULL", "2024-01-01T00:16:40Z"},
			[]string{"999999", "499999.5", "row 999999", "2024-01-12T13:46:39Z"})
	})

	t.Run("create again fails, append adds a version", func(t *testing.T) {
		rdr := ingestRows(mem, 1, 10)
		defer rdr.Release()
		if _, err := analyst.ingest(ctx, "sales", "events", adbc.OptionValueIngestModeCreate, rdr); adbcStatus(err) != adbc.StatusAlreadyExists {
			t.Fatalf("create of an existing table: %v (status %v)", err, adbcStatus(err))
		}
		rdr2 := ingestRows(mem, n+1, 1000)
		defer rdr2.Release()
		if got, err := analyst.ingest(ctx, "sales", "events", adbc.OptionValueIngestModeAppend, rdr2); err != nil || got != 1000 {
			t.Fatalf("append: %d, %v", got, err)
		}
		wantRows(t, analyst.mustRows(t, "SELECT count(*), max(id) FROM sales.events"), []string{"1001000", "1001000"})
	})

	t.Run("two concurrent appends both land", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
				rdr := ingestRows(mem, int64(2_000_000+i*10_000), 5000)
				defer rdr.Release()
				_, errs[i] = c.ingest(ctx, "sales", "events", adbc.OptionValueIngestModeAppend, rdr)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.events WHERE id >= 2000000"), []string{"10000"})
	})

	t.Run("replace swaps the rows", func(t *testing.T) {
		rdr := ingestRows(mem, 7, 3)
		defer rdr.Release()
		if got, err := analyst.ingest(ctx, "sales", "events", adbc.OptionValueIngestModeReplace, rdr); err != nil || got != 3 {
			t.Fatalf("replace: %d, %v", got, err)
		}
		wantRows(t, analyst.mustRows(t, "SELECT id FROM sales.events ORDER BY id"), []string{"7"}, []string{"8"}, []string{"9"})
	})

	t.Run("an interrupted upload changes nothing", func(t *testing.T) {
		before := stageFiles(t, srv.DataDir)
		cctx, cancel := context.WithCancel(ctx)
		rdr := &cancelAfter{RecordReader: ingestRows(mem, 100, 300_000), batches: 2, cancel: cancel}
		defer rdr.Release()
		if _, err := analyst.ingest(cctx, "sales", "events", adbc.OptionValueIngestModeAppend, rdr); err == nil {
			t.Fatal("an interrupted ingest succeeded")
		}
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.events"), []string{"3"})
		// The server notices the cancellation asynchronously; the files it
		// wrote go once it has (a failure bound, not a synchronisation).
		deadline := time.Now().Add(30 * time.Second)
		for !slices.Equal(stageFiles(t, srv.DataDir), before) {
			if time.Now().After(deadline) {
				t.Fatalf("files left behind:\nbefore %v\nafter  %v", before, stageFiles(t, srv.DataDir))
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("CTAS, INSERT and DROP", func(t *testing.T) {
		if _, err := analyst.exec(ctx, "CREATE TABLE sales.big_orders AS SELECT id, amount FROM sales.orders WHERE amount > 100"); err != nil {
			t.Fatal(err)
		}
		want := analyst.mustRows(t, "SELECT count(*), sum(amount) FROM sales.orders WHERE amount > 100")
		wantRows(t, analyst.mustRows(t, "SELECT count(*), sum(amount) FROM sales.big_orders"), want...)
		if n, err := analyst.exec(ctx, "INSERT INTO sales.big_orders (id, amount) VALUES (-1, 1.5), (-2, NULL)"); err != nil || n != 2 {
			t.Fatalf("insert values: %d, %v", n, err)
		}
		if n, err := analyst.exec(ctx, "INSERT INTO sales.big_orders (id) SELECT id FROM sales.orders WHERE id <= 3"); err != nil || n != 3 {
			t.Fatalf("insert select: %d, %v", n, err)
		}
		wantRows(t, analyst.mustRows(t, "SELECT id, amount FROM sales.big_orders WHERE id < 0 OR id <= 3 AND amount IS NULL ORDER BY id"),
			[]string{"-2", "NULL"}, []string{"-1", "1.5"}, []string{"1", "NULL"}, []string{"2", "NULL"}, []string{"3", "NULL"})
		if _, err := analyst.exec(ctx, "CREATE TABLE IF NOT EXISTS sales.big_orders AS SELECT 1 AS x"); err != nil {
			t.Fatalf("CTAS IF NOT EXISTS on an existing table: %v", err)
		}
		if _, err := analyst.exec(ctx, "DROP TABLE sales.big_orders"); err != nil {
			t.Fatal(err)
		}
		_, _, err := analyst.query(ctx, "SELECT * FROM sales.big_orders")
		if adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("read after drop: %v", err)
		}
		if _, err := analyst.exec(ctx, "DROP TABLE IF EXISTS sales.big_orders"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a prepared statement reads the current version", func(t *testing.T) {
		if _, err := analyst.exec(ctx, "CREATE TABLE sales.counter AS SELECT 1 AS n"); err != nil {
			t.Fatal(err)
		}
		stmt, err := analyst.conn.NewStatement()
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		if err := stmt.SetSqlQuery("SELECT count(*) FROM sales.counter"); err != nil {
			t.Fatal(err)
		}
		if err := stmt.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		count := func() string {
			rdr, _, err := stmt.ExecuteQuery(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer rdr.Release()
			if !rdr.Next() {
				t.Fatalf("no rows: %v", rdr.Err())
			}
			return rdr.RecordBatch().Column(0).ValueStr(0)
		}
		if got := count(); got != "1" {
			t.Fatalf("count = %s, want 1", got)
		}
		// A prepared write, as JDBC sends every update.
		ins, err := analyst.conn.NewStatement()
		if err != nil {
			t.Fatal(err)
		}
		defer ins.Close()
		if err := ins.SetSqlQuery("INSERT INTO sales.counter VALUES (2), (3)"); err != nil {
			t.Fatal(err)
		}
		if err := ins.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := ins.ExecuteUpdate(ctx); err != nil || n != 2 {
			t.Fatalf("prepared insert: %d, %v", n, err)
		}
		if got := count(); got != "3" {
			t.Fatalf("count after insert = %s, want 3", got)
		}
		if _, err := analyst.exec(ctx, "DROP TABLE sales.counter"); err != nil {
			t.Fatal(err)
		}
		rdr, _, err := stmt.ExecuteQuery(ctx)
		if err == nil { // the driver may report the DoGet failure on the stream
			for rdr.Next() {
			}
			err = rdr.Err()
			rdr.Release()
		}
		if adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("prepared statement on a dropped table: %v", err)
		}
		// A table that comes back with other columns: the prepared
		// statement's announced schema no longer holds, so it is refused
		// rather than streamed under it.
		if _, err := analyst.exec(ctx, "CREATE TABLE sales.counter2 AS SELECT 1 AS n"); err != nil {
			t.Fatal(err)
		}
		star := analyst.prepare(t, "SELECT * FROM sales.counter2")
		if _, err := analyst.exec(ctx, "DROP TABLE sales.counter2"); err != nil {
			t.Fatal(err)
		}
		if _, err := analyst.exec(ctx, "CREATE TABLE sales.counter2 AS SELECT 'x' AS n, 2 AS m"); err != nil {
			t.Fatal(err)
		}
		rdr, _, err = star.ExecuteQuery(ctx)
		if err == nil {
			for rdr.Next() {
			}
			err = rdr.Err()
			rdr.Release()
		}
		if err == nil || !strings.Contains(err.Error(), "prepare it again") {
			t.Fatalf("prepared statement after its table changed shape: %v", err)
		}
	})

	t.Run("writes are authorized like reads", func(t *testing.T) {
		for _, sql := range []string{
			"CREATE TABLE hr.copy AS SELECT 1 AS x",
			"INSERT INTO hr.employees (id) VALUES (1)",
			"DROP TABLE hr.employees",
			"CREATE TABLE sales.leak AS SELECT * FROM hr.employees",
		} {
			_, err := analyst.exec(ctx, sql)
			if adbcStatus(err) != adbc.StatusNotFound {
				t.Errorf("%s: %v (status %v), want NotFound", sql, err, adbcStatus(err))
			}
		}
		rdr := ingestRows(mem, 1, 10)
		defer rdr.Release()
		if _, err := analyst.ingest(ctx, "hr", "employees", adbc.OptionValueIngestModeAppend, rdr); adbcStatus(err) != adbc.StatusNotFound {
			t.Errorf("ingest into hr: %v", err)
		}
		hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
		wantRows(t, hr.mustRows(t, "SELECT count(*) FROM hr.employees"), []string{"500"})
	})
}

// cancelAfter cancels its context after handing out some batches, as a
// client that goes away midway.
type cancelAfter struct {
	array.RecordReader
	batches int
	cancel  context.CancelFunc
}

func (c *cancelAfter) Next() bool {
	if c.batches == 0 {
		c.cancel()
		return false
	}
	c.batches--
	return c.RecordReader.Next()
}

// TestTablesSurviveRestart: tables and their versions written through the
// gateway are still there after the all-in-one server restarts.
func TestTablesSurviveRestart(t *testing.T) {
	dataDir := t.TempDir()
	args := []string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0",
		"--access-log=false"} // the access log's own files would join the stage's
	srv := startServeArgs(t, dataDir, args...)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	for i, mode := range []string{adbc.OptionValueIngestModeCreate, adbc.OptionValueIngestModeAppend} {
		rdr := ingestRows(mem, int64(i*100), 100)
		if _, err := analyst.ingest(ctx, "sales", "kept", mode, rdr); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
	}
	srv.stop(t)
	committed := stageFiles(t, dataDir)

	// Files no version names, as a crashed write leaves them: the collector
	// that runs at start deletes the old one and keeps the young one.
	tables := filepath.Join(dataDir, "stage", "tenants", "demo", "tables")
	old := filepath.Join(tables, "0123abcd", strings.Repeat("a", 32), "part-0.parquet")
	young := filepath.Join(tables, "0123abcd", strings.Repeat("b", 32), "part-0.parquet")
	for _, p := range []string{old, young} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("orphan"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(old, time.Now().Add(-48*time.Hour), time.Now().Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}

	srv = startServeArgs(t, dataDir, args...)
	if strings.Contains(srv.Banner, "They are shown once") {
		t.Fatalf("restart recreated the demo:\n%s", srv.Banner)
	}
	analyst = mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	wantRows(t, analyst.mustRows(t, "SELECT count(*), count(DISTINCT id) FROM sales.kept"), []string{"200", "200"})
	wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.orders"), []string{"5000"})

	want := slices.Sorted(slices.Values(append(slices.Clone(committed), young)))
	deadline := time.Now().Add(30 * time.Second) // a failure bound, not synchronisation
	for got := stageFiles(t, dataDir); !slices.Equal(got, want); got = stageFiles(t, dataDir) {
		if time.Now().After(deadline) {
			t.Fatalf("after the start-up collection:\n got  %v\n want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
