package flight

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lakegate/flight/backend"
)

// Tests of discovery (discovery.go, and SHOW and DESCRIBE in show.go)
// through a Flight SQL client of a lake: what each principal is shown, the
// Flight SQL filters, and that a table or schema the caller may not see is
// answered exactly as one that does not exist.

// newDiscoveryLake returns a lake with sales.orders and sales.items
// (alice's), sales.secret (granted to no one), hr.people (carol's) and the
// upstream table sales.remote.
func newDiscoveryLake(t *testing.T) *lake {
	t.Helper()
	l := newLake(t, nil)
	cl := l.client(t)
	for _, w := range []struct{ token, schema, table string }{
		{aliceToken, "sales", "orders"}, {aliceToken, "sales", "items"}, {aliceToken, "sales", "secret"}, {carolToken, "hr", "people"},
	} {
		if _, err := ingestJSON(bearerCtx(w.token), cl, ordersSchema, ordersRows, ingestOpts(w.schema, w.table, ingestCreate)); err != nil {
			t.Fatal(err)
		}
	}
	l.cat.hide("sales.secret")
	up := remoteEngine
	up.Name = "shop.orders"
	l.cat.put(backend.TableVersion{Name: tableName("sales.remote"), StorageID: "st-remote", Columns: remoteColumns, Upstream: &up})
	return l
}

// discover runs a discovery call and fetches its rows.
func discover(ctx context.Context, cl *flightsql.Client, call func(context.Context, *flightsql.Client) (*flight.FlightInfo, error)) ([][]string, error) {
	info, err := call(ctx, cl)
	if err != nil {
		return nil, err
	}
	return fetch(ctx, cl, info)
}

// listTables, listSchemas, getCatalogs and getTableTypes are discovery
// calls for discover.
func listTables(o *flightsql.GetTablesOpts) func(context.Context, *flightsql.Client) (*flight.FlightInfo, error) {
	return func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
		return cl.GetTables(ctx, o)
	}
}

func listSchemas(o *flightsql.GetDBSchemasOpts) func(context.Context, *flightsql.Client) (*flight.FlightInfo, error) {
	return func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
		return cl.GetDBSchemas(ctx, o)
	}
}

func getCatalogs(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
	return cl.GetCatalogs(ctx)
}

func getTableTypes(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
	return cl.GetTableTypes(ctx)
}

// keyCalls are the key commands, each for table schema.name.
func keyCalls(schema, name string) map[string]func(context.Context, *flightsql.Client) (*flight.FlightInfo, error) {
	ref := flightsql.TableRef{Catalog: ptr("lake"), DBSchema: &schema, Table: name}
	other := flightsql.TableRef{Catalog: ptr("lake"), DBSchema: ptr("sales"), Table: "orders"}
	return map[string]func(context.Context, *flightsql.Client) (*flight.FlightInfo, error){
		"primary keys": func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
			return cl.GetPrimaryKeys(ctx, ref)
		},
		"imported keys": func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
			return cl.GetImportedKeys(ctx, ref)
		},
		"exported keys": func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
			return cl.GetExportedKeys(ctx, ref)
		},
		"cross reference": func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
			return cl.GetCrossReference(ctx, other, ref)
		},
	}
}

// first returns the first n cells of every row, joined with ".".
func first(rows [][]string, n int) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, strings.Join(r[:min(n, len(r))], "."))
	}
	return out
}

// discoveryCase is a discovery call made by the principal of token, and
// its answer: the first cols cells of each row joined with ".", or code.
type discoveryCase struct {
	name  string
	token string
	call  func(context.Context, *flightsql.Client) (*flight.FlightInfo, error)
	cols  int
	want  []string
	code  codes.Code
}

// TestDiscovery checks what each principal is shown by the Flight SQL
// discovery commands, under their filters.
func TestDiscovery(t *testing.T) {
	l := newDiscoveryLake(t)
	cl := l.client(t)
	all := []string{"lake.sales.items.TABLE", "lake.sales.orders.TABLE", "lake.sales.remote.TABLE"}
	cases := []discoveryCase{
		{name: "catalogs", token: aliceToken, call: getCatalogs, cols: 1, want: []string{"lake"}},
		{name: "table types", token: aliceToken, call: getTableTypes, cols: 1, want: []string{"TABLE"}},
		{name: "schemas of alice", token: aliceToken, call: listSchemas(&flightsql.GetDBSchemasOpts{}), cols: 2, want: []string{"lake.sales"}},
		{name: "schemas of carol", token: carolToken, call: listSchemas(&flightsql.GetDBSchemasOpts{}), cols: 2, want: []string{"lake.hr"}},
		{name: "schemas of a principal that may not run SQL", token: oscarToken, call: listSchemas(&flightsql.GetDBSchemasOpts{}), cols: 2, want: []string{}},
		{name: "schemas matching a pattern", token: aliceToken, call: listSchemas(&flightsql.GetDBSchemasOpts{DbSchemaFilterPattern: ptr("s_l%")}), cols: 2, want: []string{"lake.sales"}},
		{name: "schemas outside the grants by pattern", token: aliceToken, call: listSchemas(&flightsql.GetDBSchemasOpts{DbSchemaFilterPattern: ptr("hr")}), cols: 2, want: []string{}},
		{name: "schemas of another catalog", token: aliceToken, call: listSchemas(&flightsql.GetDBSchemasOpts{Catalog: ptr("other")}), cols: 2, want: []string{}},
		{name: "tables of alice", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{}), cols: 4, want: all},
		{name: "tables of carol", token: carolToken, call: listTables(&flightsql.GetTablesOpts{}), cols: 4, want: []string{"lake.hr.people.TABLE"}},
		{name: "tables of a principal that may not run SQL", token: oscarToken, call: listTables(&flightsql.GetTablesOpts{}), cols: 4, want: []string{}},
		{name: "tables of the catalog named", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{Catalog: ptr("lake")}), cols: 4, want: all},
		{name: "tables of another catalog", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{Catalog: ptr("other")}), cols: 4, want: []string{}},
		{name: "tables without a catalog", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{Catalog: ptr("")}), cols: 4, want: []string{}},
		{name: "tables by name pattern", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{TableNameFilterPattern: ptr("%e_s")}), cols: 4, want: []string{"lake.sales.items.TABLE", "lake.sales.orders.TABLE"}},
		{name: "tables by schema pattern", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{DbSchemaFilterPattern: ptr("sales")}), cols: 4, want: all},
		{name: "tables of type table", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{TableTypes: []string{"VIEW", "table"}}), cols: 4, want: all},
		{name: "tables of type view", token: aliceToken, call: listTables(&flightsql.GetTablesOpts{TableTypes: []string{"VIEW"}}), cols: 4, want: []string{}},
		{name: "a wrong token", token: "lg_wrong", call: listTables(&flightsql.GetTablesOpts{}), code: codes.Unauthenticated},
		{name: "catalogs with a wrong token", token: "lg_wrong", call: getCatalogs, code: codes.Unauthenticated},
	}
	for name, call := range keyCalls("sales", "orders") {
		cases = append(cases, discoveryCase{name: name + " of a table", token: aliceToken, call: call, cols: 1, want: []string{}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := discover(bearerCtx(tc.token), cl, tc.call)
			checkStatus(t, err, tc.code, "")
			if err != nil {
				return
			}
			if got := first(rows, tc.cols); !slices.Equal(got, tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDiscoveryTableSchemas checks the Arrow schemas GetTables includes
// when asked: the catalog's columns of each table shown.
func TestDiscoveryTableSchemas(t *testing.T) {
	l := newDiscoveryLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	rows, err := discover(ctx, cl, listTables(&flightsql.GetTablesOpts{IncludeSchema: true, TableNameFilterPattern: ptr("%r%")}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*arrow.Schema{
		"orders": schemaOf("id", arrow.PrimitiveTypes.Int64, "amount", arrow.PrimitiveTypes.Float64),
		"remote": schemaOf("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String, "amount", arrow.PrimitiveTypes.Float64),
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %v", first(rows, 4))
	}
	for _, r := range rows {
		raw, err := base64.StdEncoding.DecodeString(r[4])
		if err != nil {
			t.Fatal(err)
		}
		got, err := flight.DeserializeSchema(raw, l.mem)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want[r[2]]) {
			t.Errorf("%s: schema %v, want %v", r[2], got, want[r[2]])
		}
	}
}

// TestDiscoveryDeniedLikeMissing checks that every discovery call asking
// for a table or schema the caller may not see answers exactly as for one
// that does not exist: the same rows (none) and the same schema.
func TestDiscoveryDeniedLikeMissing(t *testing.T) {
	l := newDiscoveryLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	answer := func(t *testing.T, call func(context.Context, *flightsql.Client) (*flight.FlightInfo, error)) string {
		t.Helper()
		info, err := call(ctx, cl)
		if err != nil {
			return err.Error()
		}
		rows, err := fetch(ctx, cl, info)
		return fmt.Sprintf("schema %x rows %v err %v", info.GetSchema(), rows, err)
	}
	for _, hidden := range []struct{ schema, table string }{
		{"sales", "secret"}, // not granted by the catalog
		{"hr", "people"},    // outside alice's namespace grants
	} {
		calls := map[string]func(schema, table string) func(context.Context, *flightsql.Client) (*flight.FlightInfo, error){
			"tables by name": func(schema, table string) func(context.Context, *flightsql.Client) (*flight.FlightInfo, error) {
				return listTables(&flightsql.GetTablesOpts{DbSchemaFilterPattern: &schema, TableNameFilterPattern: &table, IncludeSchema: true})
			},
			"schemas by name": func(schema, _ string) func(context.Context, *flightsql.Client) (*flight.FlightInfo, error) {
				return listSchemas(&flightsql.GetDBSchemasOpts{DbSchemaFilterPattern: &schema})
			},
		}
		for _, keys := range []string{"primary keys", "imported keys", "exported keys", "cross reference"} {
			calls[keys] = func(schema, table string) func(context.Context, *flightsql.Client) (*flight.FlightInfo, error) {
				return keyCalls(schema, table)[keys]
			}
		}
		if hidden.schema == "sales" {
			delete(calls, "schemas by name") // alice may see the schema sales
		}
		for name, call := range calls {
			t.Run(hidden.schema+"."+hidden.table+" "+name, func(t *testing.T) {
				missingSchema := hidden.schema
				if name == "schemas by name" {
					missingSchema = "nope"
				}
				denied, missing := answer(t, call(hidden.schema, hidden.table)), answer(t, call(missingSchema, "nope"))
				if denied != missing {
					t.Errorf("denied: %s\nmissing: %s", denied, missing)
				}
			})
		}
	}
}

// TestDiscoveryCatalogFailures checks that a catalog that cannot list
// makes the listings fail as unavailable, while the answers that need no
// catalog are still given.
func TestDiscoveryCatalogFailures(t *testing.T) {
	l := newDiscoveryLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	l.cat.locked(func(c *lakeCatalog) { c.listErr = fmt.Errorf("%w: metasrv down", backend.ErrCatalogUnavailable) })
	for name, call := range map[string]func(context.Context, *flightsql.Client) (*flight.FlightInfo, error){
		"schemas": listSchemas(&flightsql.GetDBSchemasOpts{}),
		"tables":  listTables(&flightsql.GetTablesOpts{}),
	} {
		_, err := discover(ctx, cl, call)
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "the metadata service is unavailable; retry") {
			t.Errorf("%s: %v, want Unavailable", name, err)
		}
	}
	if rows, err := discover(ctx, cl, getCatalogs); err != nil || len(rows) != 1 {
		t.Errorf("catalogs: %v, %v", rows, err)
	}
	if rows, err := discover(ctx, cl, getTableTypes); err != nil || len(rows) != 1 {
		t.Errorf("table types: %v, %v", rows, err)
	}
}

// TestShowStatements checks the SHOW and DESCRIBE statements, discovery in
// SQL: what alice is shown, and a schema or table she may not see answered
// as a missing one.
func TestShowStatements(t *testing.T) {
	l := newDiscoveryLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	startSession(t, ctx, cl)
	columns := [][]string{{"id", "bigint", "YES", "", "(null)", ""}, {"amount", "double", "YES", "", "(null)", ""}}
	cases := []struct {
		sql  string
		want [][]string
		code codes.Code
		msg  string
	}{
		{sql: "SHOW DATABASES", want: [][]string{{"sales"}}},
		{sql: "SHOW SCHEMAS LIKE 'h%'", want: [][]string{}},
		{sql: "SHOW TABLES FROM sales", want: [][]string{{"items"}, {"orders"}, {"remote"}}},
		{sql: "SHOW TABLES FROM sales LIKE 's%'", want: [][]string{}},
		{sql: "SHOW TABLES", code: codes.InvalidArgument, msg: "no schema selected for SHOW TABLES"},
		{sql: "SHOW TABLES FROM hr", code: codes.NotFound, msg: "schema hr does not exist"},
		{sql: "SHOW TABLES FROM nope", code: codes.NotFound, msg: "schema nope does not exist"},
		{sql: "SHOW COLUMNS FROM sales.orders", want: columns},
		{sql: "DESCRIBE sales.orders", want: columns},
		{sql: "DESCRIBE sales.secret", code: codes.NotFound, msg: "table sales.secret does not exist"},
		{sql: "DESCRIBE hr.people", code: codes.NotFound, msg: "table hr.people does not exist"},
		{sql: "DESCRIBE sales.nope", code: codes.NotFound, msg: "table sales.nope does not exist"},
		{sql: "SHOW VARIABLES LIKE 'version%'", want: [][]string{{"version", "8.0.36-lakegate"}, {"version_comment", "lakegate"}}},
		{sql: "SHOW WARNINGS", want: [][]string{}},
		{sql: "SHOW COLLATION LIKE 'nope'", want: [][]string{}},
		{sql: "SHOW CHARACTER SET", want: [][]string{{"utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", "4"}}},
		{sql: "EXPLAIN SELECT id FROM sales.orders WHERE id = ?", code: codes.InvalidArgument, msg: "EXPLAIN of a statement with parameters is not supported"},
		{sql: "EXPLAIN SELECT id FROM sales.secret", code: codes.NotFound, msg: "table sales.secret does not exist"},
		{sql: "USE sales"},
		{sql: "SHOW TABLES LIKE 'o%'", want: [][]string{{"orders"}}},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			rows, err := runQuery(ctx, cl, tc.sql)
			checkStatus(t, err, tc.code, tc.msg)
			if err == nil && tc.want != nil && !slices.EqualFunc(rows, tc.want, slices.Equal) {
				t.Errorf("rows %q, want %q", rows, tc.want)
			}
		})
	}
}

// TestExplain checks EXPLAIN: the gateway's SQL and the engine's plan of a
// table read without a policy, and a refusal for a table read through one
// (the plan would show its filter).
func TestExplain(t *testing.T) {
	l := newDiscoveryLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	rows := mustQuery(t, ctx, cl, "EXPLAIN SELECT id FROM sales.orders WHERE id = 1")
	if len(rows) != 2 || !strings.HasPrefix(rows[0][0], "SELECT") || !strings.Contains(rows[1][0], "SCAN") {
		t.Errorf("EXPLAIN answered %q", rows)
	}
	if strings.Contains(rows[1][0], l.root) {
		t.Errorf("the engine's plan names the data root: %q", rows[1][0])
	}
	l.cat.set("sales.orders", func(t *lakeTable) {
		t.versions[len(t.versions)-1].Policy = &backend.TablePolicy{RowFilter: "amount < 2"}
	})
	_, err := runQuery(ctx, cl, "EXPLAIN SELECT id FROM sales.orders")
	checkStatus(t, err, codes.FailedPrecondition, "EXPLAIN is not available for table sales.orders")
}

// TestDiscoverySessionCatalog checks that discovery answers in the
// session's catalog: the one SetSessionOptions chose, asked of the catalog
// for the caller, until the session is closed.
func TestDiscoverySessionCatalog(t *testing.T) {
	l := newDiscoveryLake(t)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	options := func(t *testing.T) map[string]string {
		t.Helper()
		res, err := cl.GetSessionOptions(ctx, &flight.GetSessionOptionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for name, v := range res.GetSessionOptions() {
			out[name] = v.GetStringValue()
		}
		return out
	}
	if got := options(t); got["catalog"] != "lake" || got["tenant"] != "acme" || got["schema"] != "" {
		t.Errorf("options before any were set: %v", got)
	}
	values, err := flight.NewSessionOptionValues(map[string]any{"catalog": "Other", "schema": "sales", "tenant": "evil", "bogus": "x"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: values})
	if err != nil {
		t.Fatal(err)
	}
	if errs := res.GetErrors(); len(errs) != 2 || errs["tenant"] == nil || errs["bogus"] == nil {
		t.Errorf("SetSessionOptions errors %v, want tenant and bogus refused", errs)
	}
	bad, _ := flight.NewSessionOptionValues(map[string]any{"schema": "no such/schema", "catalog": int64(1)})
	if res, err := cl.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: bad}); err != nil || len(res.GetErrors()) != 2 {
		t.Errorf("invalid values: %v, %v", res.GetErrors(), err)
	}
	if got := options(t); got["catalog"] != "other" || got["tenant"] != "acme" || got["schema"] != "sales" {
		t.Errorf("options after SetSessionOptions: %v", got)
	}
	if rows, err := discover(ctx, cl, getCatalogs); err != nil || !slices.Equal(first(rows, 1), []string{"other"}) {
		t.Errorf("catalogs: %v, %v", rows, err)
	}
	rows, err := discover(ctx, cl, listTables(&flightsql.GetTablesOpts{Catalog: ptr("other"), TableNameFilterPattern: ptr("orders")}))
	if err != nil || !slices.Equal(first(rows, 4), []string{"other.sales.orders.TABLE"}) {
		t.Errorf("tables: %v, %v", rows, err)
	}
	if c := l.cat.lastCaller(); c != (backend.Caller{Tenant: "acme", Subject: "alice@acme", Catalog: "other"}) {
		t.Errorf("the catalog was asked for %+v", c)
	}
	if rows, err := discover(ctx, cl, listTables(&flightsql.GetTablesOpts{Catalog: ptr("lake")})); err != nil || len(rows) != 0 {
		t.Errorf("tables of the default catalog: %v, %v", rows, err)
	}
	// The unqualified name resolves in the session's schema.
	if got := mustQuery(t, ctx, cl, "SELECT count(*) FROM orders"); got[0][0] != "2" {
		t.Errorf("count = %v", got)
	}
	if _, err := cl.CloseSession(ctx, &flight.CloseSessionRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := options(t); got["catalog"] != "lake" || got["schema"] != "" {
		t.Errorf("options after CloseSession: %v", got)
	}
}

// TestXdbcTypeInfo checks the SQL types listed to JDBC and ODBC clients,
// all or one.
func TestXdbcTypeInfo(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	typeInfo := func(dataType *int32) func(context.Context, *flightsql.Client) (*flight.FlightInfo, error) {
		return func(ctx context.Context, cl *flightsql.Client) (*flight.FlightInfo, error) {
			return cl.GetXdbcTypeInfo(ctx, dataType)
		}
	}
	all, err := discover(ctx, cl, typeInfo(nil))
	if err != nil {
		t.Fatal(err)
	}
	names := first(all, 1)
	for _, want := range []string{"BIGINT", "DOUBLE", "VARCHAR", "TIMESTAMP"} {
		if !slices.Contains(names, want) {
			t.Errorf("types %v lack %s", names, want)
		}
	}
	bigint := int32(-5) // java.sql.Types.BIGINT
	one, err := discover(ctx, cl, typeInfo(&bigint))
	if err != nil || !slices.Equal(first(one, 2), []string{"BIGINT.-5"}) {
		t.Errorf("BIGINT alone: %v, %v", first(one, 2), err)
	}
	_, err = discover(bearerCtx("lg_wrong"), cl, typeInfo(nil))
	checkStatus(t, err, codes.Unauthenticated, "")
}
