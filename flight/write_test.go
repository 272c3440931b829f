package flight

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"

	"lakegate/flight/backend"
)

// Tests of the write paths (write.go) through a Flight SQL client of a lake:
// bulk ingest, the write statements and their refusals, and what a failed
// commit leaves behind.

var (
	ordersSchema = schemaOf("id", arrow.PrimitiveTypes.Int64, "amount", arrow.PrimitiveTypes.Float64)
	ordersRows   = `[{"id":1,"amount":1.5},{"id":2,"amount":2.5}]`
)

// seedOrders creates sales.orders (id BIGINT, amount DOUBLE) with rows 1
// and 2 as alice.
func seedOrders(t testing.TB, cl *flightsql.Client) {
	t.Helper()
	if n, err := ingestJSON(bearerCtx(aliceToken), cl, ordersSchema, ordersRows, ingestOpts("sales", "orders", ingestCreate)); err != nil || n != 2 {
		t.Fatalf("seeding sales.orders: %d, %v", n, err)
	}
}

// withOpts returns the ingest options o changed by f.
func withOpts(o *flightsql.ExecuteIngestOpts, f func(*flightsql.ExecuteIngestOpts)) *flightsql.ExecuteIngestOpts {
	f(o)
	return o
}

// TestIngest runs bulk ingest (ExecuteIngest) in every mode, with the
// casts and column matching of appends, and its refusals; at the end the
// stage holds only the files of committed versions.
func TestIngest(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	for _, name := range []string{"secret", "readonly"} {
		if _, err := ingestJSON(bearerCtx(aliceToken), cl, ordersSchema, ordersRows, ingestOpts("sales", name, ingestCreate)); err != nil {
			t.Fatal(err)
		}
	}
	l.cat.hide("sales.secret")
	l.cat.set("sales.readonly", func(t *lakeTable) { t.readOnly = true })

	idNote := schemaOf("id", arrow.PrimitiveTypes.Int64, "note", arrow.BinaryTypes.String)
	// The cases run in order: the ones on sales.orders build on each other.
	cases := []struct {
		name   string
		token  string // alice if ""
		schema *arrow.Schema
		rows   string
		opts   *flightsql.ExecuteIngestOpts
		code   codes.Code
		msg    string
		n      int64
		check  string     // a query run afterwards as alice
		want   [][]string // its rows
	}{
		{name: "create", schema: idNote, rows: `[{"id":1,"note":"a"},{"id":2,"note":null}]`, opts: ingestOpts("sales", "notes", ingestCreate),
			n: 2, check: "SELECT id, note FROM sales.notes ORDER BY id", want: [][]string{{"1", "a"}, {"2", "(null)"}}},
		{name: "create names the table in lower case", schema: idNote, rows: `[{"id":1,"note":"a"}]`, opts: ingestOpts("Sales", "Upper", ingestCreate),
			n: 1, check: "SELECT note FROM sales.upper", want: [][]string{{"a"}}},
		{name: "create in the session's catalog named", schema: idNote, rows: `[{"id":1,"note":"a"}]`,
			opts: withOpts(ingestOpts("sales", "named", ingestCreate), func(o *flightsql.ExecuteIngestOpts) { o.Catalog = ptr("lake") }),
			n:    1, check: "SELECT id FROM sales.named", want: [][]string{{"1"}}},
		{name: "create of an existing table", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("sales", "orders", ingestCreate),
			code: codes.AlreadyExists, msg: "table sales.orders already exists"},
		{name: "append matches columns by name and casts them",
			schema: schemaOf("amount", arrow.PrimitiveTypes.Float32, "ID", arrow.PrimitiveTypes.Int32), rows: `[{"amount":3.5,"ID":3}]`,
			opts: ingestOpts("sales", "orders", ingestAppend), n: 1,
			check: "SELECT id, amount FROM sales.orders ORDER BY id", want: [][]string{{"1", "1.5"}, {"2", "2.5"}, {"3", "3.5"}}},
		{name: "append fills columns by position when the names differ",
			schema: schemaOf("x", arrow.PrimitiveTypes.Int64, "y", arrow.PrimitiveTypes.Float64), rows: `[{"x":4,"y":4.5}]`,
			opts: ingestOpts("sales", "orders", ingestAppend), n: 1,
			check: "SELECT count(*), max(id) FROM sales.orders", want: [][]string{{"4", "4"}}},
		{name: "append of values the columns cannot hold",
			schema: schemaOf("id", arrow.BinaryTypes.String, "amount", arrow.PrimitiveTypes.Float64), rows: `[{"id":"x","amount":1}]`,
			opts: ingestOpts("sales", "orders", ingestAppend), code: codes.InvalidArgument, msg: "column id: cannot store utf8 values as int64"},
		{name: "append of another number of columns",
			schema: schemaOf("x", arrow.PrimitiveTypes.Int64), rows: `[{"x":1}]`,
			opts: ingestOpts("sales", "orders", ingestAppend), code: codes.InvalidArgument, msg: "the table has 2 columns, 1 values given"},
		{name: "create_append appends to an existing table", schema: ordersSchema, rows: `[{"id":5,"amount":5.5}]`,
			opts: ingestOpts("sales", "orders", ingestCreateAppend), n: 1,
			check: "SELECT count(*), max(id) FROM sales.orders", want: [][]string{{"5", "5"}}},
		{name: "create_append creates a missing table", schema: ordersSchema, rows: `[{"id":6,"amount":6.5}]`,
			opts: ingestOpts("sales", "fresh", ingestCreateAppend), n: 1,
			check: "SELECT id, amount FROM sales.fresh", want: [][]string{{"6", "6.5"}}},
		{name: "replace makes the rows and columns the whole table", schema: idNote, rows: `[{"id":9,"note":"new"}]`,
			opts: ingestOpts("sales", "orders", ingestReplace), n: 1,
			check: "SELECT * FROM sales.orders", want: [][]string{{"9", "new"}}},
		{name: "replace creates a missing table", schema: idNote, rows: `[{"id":1,"note":"r"}]`,
			opts: ingestOpts("sales", "replaced", ingestReplace), n: 1,
			check: "SELECT * FROM sales.replaced", want: [][]string{{"1", "r"}}},
		{name: "an empty stream creates an empty table", schema: idNote, rows: `[]`,
			opts: ingestOpts("sales", "empty", ingestCreate), n: 0,
			check: "SELECT count(*) FROM sales.empty", want: [][]string{{"0"}}},

		// Refusals. A table the caller may not write looks missing.
		{name: "append to a missing table", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("sales", "nope", ingestAppend),
			code: codes.NotFound, msg: "table sales.nope does not exist"},
		{name: "append to a table not granted", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("sales", "secret", ingestAppend),
			code: codes.NotFound, msg: "table sales.secret does not exist"},
		{name: "append to a table granted for reading only", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("sales", "readonly", ingestAppend),
			code: codes.NotFound, msg: "table sales.readonly does not exist"},
		{name: "create outside the namespace grants", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("hr", "people", ingestCreate),
			code: codes.NotFound, msg: "table hr.people does not exist"},
		{name: "a principal that may not run SQL", token: oscarToken, schema: ordersSchema, rows: ordersRows, opts: ingestOpts("sales", "ops", ingestCreate),
			code: codes.PermissionDenied, msg: "this principal may not run queries"},
		{name: "another catalog", schema: ordersSchema, rows: ordersRows,
			opts: withOpts(ingestOpts("sales", "x", ingestCreate), func(o *flightsql.ExecuteIngestOpts) { o.Catalog = ptr("other") }),
			code: codes.NotFound, msg: "catalog other does not exist"},
		{name: "a transaction", schema: ordersSchema, rows: ordersRows,
			opts: withOpts(ingestOpts("sales", "x", ingestCreate), func(o *flightsql.ExecuteIngestOpts) { o.TransactionId = []byte("tx") }),
			code: codes.InvalidArgument, msg: "transactions and temporary tables are not supported"},
		{name: "a temporary table", schema: ordersSchema, rows: ordersRows,
			opts: withOpts(ingestOpts("sales", "x", ingestCreate), func(o *flightsql.ExecuteIngestOpts) { o.Temporary = true }),
			code: codes.InvalidArgument, msg: "transactions and temporary tables are not supported"},
		{name: "replace without create", schema: ordersSchema, rows: ordersRows,
			opts: withOpts(ingestOpts("sales", "orders", ingestReplace), func(o *flightsql.ExecuteIngestOpts) {
				o.TableDefinitionOptions.IfNotExist = 2 // TABLE_NOT_EXIST_OPTION_FAIL
			}),
			code: codes.InvalidArgument, msg: "unsupported table definition options"},
		{name: "no schema and none in the session", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("", "x", ingestCreate),
			code: codes.InvalidArgument, msg: "no schema: name one or set the session's schema"},
		{name: "a table name no table may have", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("sales", "bad-name", ingestCreate),
			code: codes.InvalidArgument, msg: "table names are 1–64 of [a-z0-9_]"},
		{name: "a schema name no schema may have", schema: ordersSchema, rows: ordersRows, opts: ingestOpts("9sales", "x", ingestCreate),
			code: codes.InvalidArgument, msg: "schema names are 1–64 of [a-z0-9_]"},
		{name: "a column type lakegate cannot store", schema: schemaOf("d", arrow.FixedWidthTypes.MonthInterval), rows: `[{"d":{"months":1}}]`,
			opts: ingestOpts("sales", "intervals", ingestCreate), code: codes.InvalidArgument, msg: "unsupported column type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = aliceToken
			}
			n, err := ingestJSON(bearerCtx(token), cl, tc.schema, tc.rows, tc.opts)
			checkStatus(t, err, tc.code, tc.msg)
			if err != nil {
				return
			}
			if n != tc.n {
				t.Errorf("%d rows ingested, want %d", n, tc.n)
			}
			if tc.check != "" {
				if got := mustQuery(t, bearerCtx(aliceToken), cl, tc.check); !slices.EqualFunc(got, tc.want, slices.Equal) {
					t.Errorf("%s = %v, want %v", tc.check, got, tc.want)
				}
			}
		})
	}
	// Only the writes that succeeded committed, and every file in the
	// stage belongs to a committed version.
	var committed []string
	for _, cm := range l.cat.committed() {
		for _, f := range cm.Files {
			committed = append(committed, "tables/"+strings.TrimPrefix(f.Key, "tables/"))
		}
	}
	slices.Sort(committed)
	if got := l.dataFiles(t); !slices.Equal(got, committed) {
		t.Errorf("stage holds %v, committed %v", got, committed)
	}
}

// TestIngestDeniedLikeMissing checks that every ingest mode answers a
// table the caller may not write, for each reason, exactly as a table that
// does not exist.
func TestIngestDeniedLikeMissing(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	if _, err := ingestJSON(bearerCtx(carolToken), cl, ordersSchema, ordersRows, ingestOpts("hr", "people", ingestCreate)); err != nil {
		t.Fatal(err)
	}
	if _, err := ingestJSON(bearerCtx(aliceToken), cl, ordersSchema, ordersRows, ingestOpts("sales", "people", ingestCreate)); err != nil {
		t.Fatal(err)
	}
	l.cat.hide("sales.people")
	ctx := bearerCtx(aliceToken)
	answer := func(schema, table string) string {
		_, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts(schema, table, ingestAppend))
		return fmt.Sprint(err)
	}
	missing := answer("sales", "nobody")
	for _, denied := range []struct{ schema, table string }{
		{"hr", "people"},    // outside alice's namespace grants
		{"sales", "people"}, // not granted by the catalog
		{"hr", "nobody"},    // missing, outside the grants
		{"HR", "People"},    // the same, named in upper case
	} {
		got := strings.ReplaceAll(answer(denied.schema, denied.table), strings.ToLower(denied.schema+"."+denied.table), "sales.nobody")
		if got != missing {
			t.Errorf("append to %s.%s: %q; to a missing table: %q", denied.schema, denied.table, got, missing)
		}
	}
	// carol's table is untouched.
	if got := mustQuery(t, bearerCtx(carolToken), cl, "SELECT count(*) FROM hr.people"); got[0][0] != "2" {
		t.Errorf("hr.people has %v rows", got)
	}
}

// TestIngestSessionSchema checks that an ingest naming no schema writes
// into the session's schema (USE), and that a USE the caller may not make
// changes nothing.
func TestIngestSessionSchema(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	startSession(t, ctx, cl)
	_, err := cl.ExecuteUpdate(ctx, "USE hr")
	checkStatus(t, err, codes.NotFound, "schema hr does not exist")
	if _, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts("", "t", ingestCreate)); err == nil {
		t.Fatal("an ingest without a schema succeeded after a refused USE")
	}
	if _, err := cl.ExecuteUpdate(ctx, "USE sales"); err != nil {
		t.Fatal(err)
	}
	if n, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts("", "t", ingestCreate)); err != nil || n != 2 {
		t.Fatalf("ingest: %d, %v", n, err)
	}
	if got := mustQuery(t, ctx, cl, "SELECT count(*) FROM sales.t"); got[0][0] != "2" {
		t.Errorf("sales.t has %v rows", got)
	}
}

// TestIngestCommitFailures checks what the catalog's answers to a commit
// make of a write: an append that lost a race retries on the new version,
// a write whose table changed or whose commit failed fails and deletes the
// files it wrote.
func TestIngestCommitFailures(t *testing.T) {
	cases := []struct {
		name string
		mode string
		// hook answers the i-th commit attempt (from 1) of the write into
		// table ("sales.<name>").
		hook     func(c *lakeCatalog, table string, i int) error
		attempts int
		code     codes.Code
		msg      string // with %s for the table's name
		rows     string // count(*) of the table afterwards; "" if none
	}{
		{name: "an append that lost a race retries", mode: ingestAppend,
			hook: func(c *lakeCatalog, table string, i int) error {
				if i == 1 {
					c.appendVersionLocked(table, false)
					return backend.ErrVersionConflict
				}
				return nil
			},
			attempts: 2, rows: "4"},
		{name: "an append to a table replaced meanwhile", mode: ingestAppend,
			hook: func(c *lakeCatalog, table string, i int) error {
				c.appendVersionLocked(table, true)
				return backend.ErrVersionConflict
			},
			attempts: 1, code: codes.Aborted, msg: "the table changed during the write; retry", rows: "0"},
		{name: "an append that keeps losing gives up", mode: ingestAppend,
			hook:     func(*lakeCatalog, string, int) error { return backend.ErrVersionConflict },
			attempts: maxCommitAttempts, code: codes.Aborted, msg: "the table changed during the write; retry", rows: "2"},
		{name: "a replace that lost a race", mode: ingestReplace,
			hook:     func(*lakeCatalog, string, int) error { return backend.ErrVersionConflict },
			attempts: 1, code: codes.Aborted, rows: "2"},
		{name: "a create that lost a race", mode: ingestCreate,
			hook:     func(*lakeCatalog, string, int) error { return backend.ErrExists },
			attempts: 1, code: codes.AlreadyExists, msg: "table %s already exists"},
		{name: "the catalog is unavailable", mode: ingestAppend,
			hook:     func(*lakeCatalog, string, int) error { return backend.ErrCatalogUnavailable },
			attempts: 1, code: codes.Unavailable, msg: "the metadata service is unavailable; retry", rows: "2"},
		{name: "the catalog refuses the write", mode: ingestCreate,
			hook:     func(*lakeCatalog, string, int) error { return fmt.Errorf("%w: no data here", backend.ErrRefused) },
			attempts: 1, code: codes.InvalidArgument, msg: "refused: no data here"},
	}
	l := newLake(t, nil)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case writes its own table: one of two rows, or (create)
			// a new one.
			table := fmt.Sprintf("t%d", i)
			if tc.mode != ingestCreate {
				if _, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts("sales", table, ingestCreate)); err != nil {
					t.Fatal(err)
				}
			}
			before := l.dataFiles(t)
			attempts := 0
			l.cat.locked(func(c *lakeCatalog) {
				c.commitHook = func(backend.Commit) error {
					attempts++
					return tc.hook(c, "sales."+table, attempts)
				}
			})
			defer l.cat.locked(func(c *lakeCatalog) { c.commitHook = nil })
			n, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts("sales", table, tc.mode))
			msg := tc.msg
			if strings.Contains(msg, "%s") {
				msg = fmt.Sprintf(msg, "sales."+table)
			}
			checkStatus(t, err, tc.code, msg)
			if attempts != tc.attempts {
				t.Errorf("%d commit attempts, want %d", attempts, tc.attempts)
			}
			if err != nil {
				if got := l.dataFiles(t); !slices.Equal(got, before) {
					t.Errorf("the failed write left files: stage %v, before %v", got, before)
				}
			} else if n != 2 {
				t.Errorf("%d rows ingested, want 2", n)
			}
			if tc.rows != "" {
				l.cat.locked(func(c *lakeCatalog) { c.commitHook = nil })
				if got := mustQuery(t, ctx, cl, "SELECT count(*) FROM sales."+table); got[0][0] != tc.rows {
					t.Errorf("sales.%s has %v rows, want %s", table, got, tc.rows)
				}
			}
		})
	}
}

// appendVersionLocked adds a version of table "schema.name" with the same
// files, as another writer's commit would (with a new storage id when
// replaced: a table dropped and created again). The caller holds c.mu.
func (c *lakeCatalog) appendVersionLocked(name string, replaced bool) {
	t := c.tables[tableName(name)]
	v := t.versions[len(t.versions)-1]
	v.Version++
	if replaced {
		v.StorageID = "replaced"
		v.Files = nil
	}
	t.versions = append(t.versions, v)
	c.gen++
}

// TestIngestCatalogFailures checks that an ingest whose target the catalog
// cannot resolve fails as unavailable.
func TestIngestCatalogFailures(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	l.cat.locked(func(c *lakeCatalog) { c.resolveErr = fmt.Errorf("%w: metasrv down", backend.ErrCatalogUnavailable) })
	_, err := ingestJSON(bearerCtx(aliceToken), cl, ordersSchema, ordersRows, ingestOpts("sales", "orders", ingestAppend))
	checkStatus(t, err, codes.Unavailable, "the metadata service is unavailable; retry")
}

// TestWriteStatements runs the write statements through ExecuteUpdate (and
// the statements ExecuteUpdate refuses), in order, over sales.orders and
// carol's hr.people.
func TestWriteStatements(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	if _, err := ingestJSON(bearerCtx(carolToken), cl, ordersSchema, ordersRows, ingestOpts("hr", "people", ingestCreate)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"secret", "readonly"} {
		if _, err := ingestJSON(bearerCtx(aliceToken), cl, ordersSchema, ordersRows, ingestOpts("sales", name, ingestCreate)); err != nil {
			t.Fatal(err)
		}
	}
	l.cat.hide("sales.secret")
	l.cat.set("sales.readonly", func(t *lakeTable) { t.readOnly = true })
	l.cat.put(backend.TableVersion{Name: tableName("sales.remote"), StorageID: "remote", Columns: ordersSchemaColumns,
		Upstream: &backend.UpstreamTable{Address: "engine:1", Dialect: "mysql", Name: "shop.orders"}})

	cases := []struct {
		name  string
		token string // alice if ""
		sql   string
		code  codes.Code
		msg   string
		n     int64
		check string     // a query run afterwards as the same principal
		want  [][]string // its rows
	}{
		{name: "create table as select", sql: "CREATE TABLE sales.big AS SELECT id, amount FROM sales.orders WHERE amount > 2",
			n: 1, check: "SELECT id, amount FROM sales.big", want: [][]string{{"2", "2.5"}}},
		{name: "create table as select of an existing table", sql: "CREATE TABLE sales.big AS SELECT 1 AS id",
			code: codes.AlreadyExists, msg: "table sales.big already exists"},
		{name: "create table if not exists of an existing table", sql: "CREATE TABLE IF NOT EXISTS sales.big AS SELECT 1 AS id",
			n: 0, check: "SELECT count(*) FROM sales.big", want: [][]string{{"1"}}},
		{name: "insert values", sql: "INSERT INTO sales.big VALUES (7, 7.5), (8, NULL)",
			n: 2, check: "SELECT id, amount FROM sales.big ORDER BY id", want: [][]string{{"2", "2.5"}, {"7", "7.5"}, {"8", "(null)"}}},
		{name: "insert into listed columns", sql: "INSERT INTO sales.big (amount) VALUES (9.5)",
			n: 1, check: "SELECT id, amount FROM sales.big WHERE amount = 9.5", want: [][]string{{"(null)", "9.5"}}},
		{name: "insert select", sql: "INSERT INTO sales.big SELECT id, amount FROM sales.orders",
			n: 2, check: "SELECT count(*) FROM sales.big", want: [][]string{{"6"}}},
		{name: "insert naming no schema, with none in the session", sql: "INSERT INTO big VALUES (10, 10.5)",
			code: codes.InvalidArgument, msg: `no schema selected for table "big"`},
		{name: "insert into a column the table lacks", sql: "INSERT INTO sales.big (nope) VALUES (1)",
			code: codes.InvalidArgument, msg: "the table has no column nope"},
		{name: "insert of a value the column cannot hold", sql: "INSERT INTO sales.big VALUES ('x', 1)",
			code: codes.InvalidArgument, msg: "column id: cannot store"},
		{name: "insert of too few values", sql: "INSERT INTO sales.big VALUES (1)",
			code: codes.InvalidArgument, msg: "the table has 2 columns, 1 values given"},
		{name: "insert with a parameter", sql: "INSERT INTO sales.big VALUES (?, 1.0)",
			code: codes.InvalidArgument, msg: "parameters in write statements are not supported"},
		{name: "insert reading an upstream table", sql: "INSERT INTO sales.big SELECT id, amount FROM sales.remote",
			code: codes.InvalidArgument, msg: "writes cannot read tables of an upstream engine"},
		{name: "create table as select of an upstream table", sql: "CREATE TABLE sales.copy AS SELECT * FROM sales.remote",
			code: codes.InvalidArgument, msg: "writes cannot read tables of an upstream engine"},
		{name: "a name no table may have", sql: "CREATE TABLE sales.`bad-name` AS SELECT 1 AS id",
			code: codes.InvalidArgument, msg: "table names are 1–64 of [a-z0-9_]"},

		// A table the caller may not write, or read, looks missing.
		{name: "insert into a missing table", sql: "INSERT INTO sales.missing VALUES (1, 1.0)",
			code: codes.NotFound, msg: "table sales.missing does not exist"},
		{name: "insert into a table not granted", sql: "INSERT INTO sales.secret VALUES (1, 1.0)",
			code: codes.NotFound, msg: "table sales.secret does not exist"},
		{name: "insert into a table granted for reading only", sql: "INSERT INTO sales.readonly VALUES (1, 1.0)",
			code: codes.NotFound, msg: "table sales.readonly does not exist"},
		{name: "insert outside the namespace grants", sql: "INSERT INTO hr.people VALUES (1, 1.0)",
			code: codes.NotFound, msg: "table hr.people does not exist"},
		{name: "insert reading a table outside the namespace grants", sql: "INSERT INTO sales.big SELECT id, amount FROM hr.people",
			code: codes.NotFound, msg: "table hr.people does not exist"},
		{name: "insert reading a table not granted", sql: "INSERT INTO sales.big SELECT id, amount FROM sales.secret",
			code: codes.NotFound, msg: "table sales.secret does not exist"},
		{name: "drop outside the namespace grants", sql: "DROP TABLE hr.people",
			code: codes.NotFound, msg: "table hr.people does not exist"},
		{name: "drop of a table not granted", sql: "DROP TABLE sales.secret",
			code: codes.NotFound, msg: "table sales.secret does not exist"},
		{name: "drop of a missing table", sql: "DROP TABLE sales.missing",
			code: codes.NotFound, msg: "table sales.missing does not exist"},
		{name: "drop if exists of a missing table", sql: "DROP TABLE IF EXISTS sales.missing"},
		{name: "drop", sql: "DROP TABLE sales.big",
			check: "SELECT count(*) FROM sales.orders", want: [][]string{{"2"}}},
		{name: "the dropped table is gone", sql: "DROP TABLE sales.big",
			code: codes.NotFound, msg: "table sales.big does not exist"},
		{name: "carol's table is untouched", token: carolToken, sql: "INSERT INTO hr.people SELECT id + 10, amount FROM hr.people",
			n: 2, check: "SELECT count(*) FROM hr.people", want: [][]string{{"4"}}},

		// What ExecuteUpdate does not run.
		{name: "a query", sql: "SELECT * FROM sales.orders",
			code: codes.InvalidArgument, msg: "queries return rows; run them with ExecuteQuery"},
		{name: "a principal that may not run SQL", token: oscarToken, sql: "DROP TABLE sales.orders",
			code: codes.PermissionDenied, msg: "this principal may not run queries"},
		{name: "SQL the gate refuses", sql: "DELETE FROM sales.orders", code: codes.InvalidArgument, msg: "DELETE is not supported"},
		{name: "a SET that changes nothing", sql: "SET NAMES utf8mb4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = aliceToken
			}
			ctx := bearerCtx(token)
			n, err := cl.ExecuteUpdate(ctx, tc.sql)
			checkStatus(t, err, tc.code, tc.msg)
			if err != nil {
				return
			}
			if n != tc.n {
				t.Errorf("%d rows written, want %d", n, tc.n)
			}
			if tc.check != "" {
				if got := mustQuery(t, ctx, cl, tc.check); !slices.EqualFunc(got, tc.want, slices.Equal) {
					t.Errorf("%s = %v, want %v", tc.check, got, tc.want)
				}
			}
		})
	}
}

var ordersSchemaColumns = []backend.Column{{Name: "id", Type: "int64"}, {Name: "amount", Type: "float64"}}

// TestWriteRefusedAsQuery checks that a write sent as a query (GetFlightInfo)
// is refused and writes nothing.
func TestWriteRefusedAsQuery(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	_, err := cl.Execute(ctx, "INSERT INTO sales.orders VALUES (3, 3.5)")
	checkStatus(t, err, codes.InvalidArgument, "changes data; run it with ExecuteUpdate")
	if got := mustQuery(t, ctx, cl, "SELECT count(*) FROM sales.orders"); got[0][0] != "2" {
		t.Errorf("sales.orders has %v rows", got)
	}
}

// TestPreparedWrite checks that a prepared write (JDBC prepares every
// statement) runs, authorized, at ExecuteUpdate.
func TestPreparedWrite(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	cases := []struct {
		name  string
		token string
		sql   string
		code  codes.Code
		msg   string
		n     int64
		count string // rows of sales.orders afterwards
	}{
		{name: "insert", token: aliceToken, sql: "INSERT INTO sales.orders VALUES (3, 3.5)", n: 1, count: "3"},
		{name: "insert with a parameter", token: aliceToken, sql: "INSERT INTO sales.orders VALUES (?, 3.5)",
			code: codes.InvalidArgument, msg: "parameters in write statements are not supported", count: "3"},
		{name: "insert outside the namespace grants", token: carolToken, sql: "INSERT INTO sales.orders VALUES (4, 4.5)",
			code: codes.NotFound, msg: "table sales.orders does not exist", count: "3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := bearerCtx(tc.token)
			prep, err := cl.Prepare(ctx, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			defer prep.Close(ctx)
			n, err := prep.ExecuteUpdate(ctx)
			checkStatus(t, err, tc.code, tc.msg)
			if err == nil && n != tc.n {
				t.Errorf("%d rows written, want %d", n, tc.n)
			}
			if got := mustQuery(t, bearerCtx(aliceToken), cl, "SELECT count(*) FROM sales.orders"); got[0][0] != tc.count {
				t.Errorf("sales.orders has %v rows, want %s", got, tc.count)
			}
		})
	}
}

// TestDropCatalogFailure checks that a DROP the catalog could not answer
// fails as unavailable and drops nothing.
func TestDropCatalogFailure(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	l.cat.locked(func(c *lakeCatalog) { c.dropErr = fmt.Errorf("%w: metasrv down", backend.ErrCatalogUnavailable) })
	_, err := cl.ExecuteUpdate(ctx, "DROP TABLE sales.orders")
	checkStatus(t, err, codes.Unavailable, "the metadata service is unavailable; retry")
	if got := mustQuery(t, ctx, cl, "SELECT count(*) FROM sales.orders"); got[0][0] != "2" {
		t.Errorf("sales.orders has %v rows", got)
	}
}

// TestCreateIfNotExistsLostRace: CREATE TABLE IF NOT EXISTS … AS SELECT
// whose commit finds that another writer created the table meanwhile has
// written nothing: it reports 0 rows and deletes its files, as when the
// table existed at the start.
func TestCreateIfNotExistsLostRace(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	before := l.dataFiles(t)
	l.cat.locked(func(c *lakeCatalog) {
		c.commitHook = func(backend.Commit) error { return backend.ErrExists }
	})
	n, err := cl.ExecuteUpdate(ctx, "CREATE TABLE IF NOT EXISTS sales.raced AS SELECT id FROM sales.orders")
	l.cat.locked(func(c *lakeCatalog) { c.commitHook = nil })
	if err != nil || n != 0 {
		t.Fatalf("lost race: %d rows, %v; want 0 rows and no error", n, err)
	}
	if got := l.dataFiles(t); !slices.Equal(got, before) {
		t.Fatalf("the write that did not commit left files: stage %v, before %v", got, before)
	}
}
