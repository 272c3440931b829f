package integration_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestQueries(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	hr := mustDial(t, srv.uri(), bearer(srv.token(t, "hr@demo")))
	admin := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))

	t.Run("analyst reads sales.orders", func(t *testing.T) {
		_, rows, err := analyst.query(ctx, "SELECT id, status FROM sales.orders WHERE id <= 3 ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		want := [][]string{{"1", "shipped"}, {"2", "returned"}, {"3", "new"}}
		if !slices.EqualFunc(rows, want, slices.Equal) {
			t.Fatalf("rows = %v, want %v", rows, want)
		}
	})

	t.Run("denied looks exactly like missing", func(t *testing.T) {
		for _, c := range []struct{ denied, missing string }{
			{"SELECT * FROM hr.employees", "SELECT * FROM hr.nosuchtable"},
			{"SELECT ssn FROM hr.employees WHERE id = 1", "SELECT ssn FROM hr.nosuchtable WHERE id = 1"},
			{"SELECT * FROM sales.orders o JOIN hr.employees e ON o.id = e.id", "SELECT * FROM sales.orders o JOIN hr.nosuchtable e ON o.id = e.id"},
			{"SELECT * FROM HR.Employees", "SELECT * FROM HR.nosuchtable"},
		} {
			_, _, errDenied := analyst.query(ctx, c.denied)
			_, _, errMissing := analyst.query(ctx, c.missing)
			if errDenied == nil || errMissing == nil {
				t.Fatalf("%q: %v; %q: %v", c.denied, errDenied, c.missing, errMissing)
			}
			if adbcStatus(errDenied) != adbcStatus(errMissing) || adbcStatus(errDenied) != adbc.StatusNotFound {
				t.Errorf("codes differ: denied %v, missing %v", adbcStatus(errDenied), adbcStatus(errMissing))
			}
			got := strings.ReplaceAll(errDenied.Error(), "employees", "nosuchtable")
			if got != errMissing.Error() {
				t.Errorf("messages differ:\ndenied:  %s\nmissing: %s", errDenied, errMissing)
			}
		}
	})

	t.Run("hr reads employees, not sales", func(t *testing.T) {
		_, rows, err := hr.query(ctx, "SELECT count(*) FROM hr.employees")
		if err != nil || rows[0][0] != "500" {
			t.Fatalf("count = %v, %v", rows, err)
		}
		if _, _, err := hr.query(ctx, "SELECT * FROM sales.orders"); adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("hr reading sales: %v", err)
		}
	})

	t.Run("admin reads every namespace of its tenant", func(t *testing.T) {
		_, rows, err := admin.query(ctx, "SELECT (SELECT count(*) FROM hr.employees), (SELECT count(*) FROM sales.customers)")
		if err != nil || rows[0][0] != "500" || rows[0][1] != "2000" {
			t.Fatalf("rows = %v, %v", rows, err)
		}
	})

	t.Run("discovery shows only granted namespaces", func(t *testing.T) {
		schemas, tables := objects(t, analyst)
		if !slices.Equal(schemas, []string{"sales"}) {
			t.Errorf("analyst schemas = %v", schemas)
		}
		if !slices.Equal(tables, []string{"sales.customers", "sales.orders"}) {
			t.Errorf("analyst tables = %v", tables)
		}
		schemas, _ = objects(t, admin)
		// The access log's schema shows once its first batch is written.
		schemas = slices.DeleteFunc(schemas, func(s string) bool { return s == "system" })
		if !slices.Equal(schemas, []string{"hr", "sales"}) {
			t.Errorf("admin schemas = %v", schemas)
		}
		sch, err := analyst.conn.GetTableSchema(ctx, nil, ptr("sales"), "orders")
		if err != nil {
			t.Fatal(err)
		}
		if names := fieldNames(sch); !slices.Equal(names, []string{"id", "customer_id", "order_date", "amount", "status"}) {
			t.Errorf("orders columns = %v", names)
		}
		if _, err := analyst.conn.GetTableSchema(ctx, nil, ptr("hr"), "employees"); err == nil {
			t.Error("analyst got the schema of hr.employees")
		}
	})

	t.Run("prepared statement with a bound parameter", func(t *testing.T) {
		stmt, err := analyst.conn.NewStatement()
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		if err := stmt.SetSqlQuery("SELECT id, status FROM sales.orders WHERE id = ? ORDER BY id"); err != nil {
			t.Fatal(err)
		}
		if err := stmt.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{42, 43} {
			params := int64Record(t, id)
			if err := stmt.Bind(ctx, params); err != nil {
				t.Fatal(err)
			}
			params.Release()
			rdr, _, err := stmt.ExecuteQuery(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			for rdr.Next() {
				rec := rdr.RecordBatch()
				for r := 0; r < int(rec.NumRows()); r++ {
					got = append(got, []string{rec.Column(0).ValueStr(r), rec.Column(1).ValueStr(r)})
				}
			}
			rdr.Release()
			status := []string{"new", "shipped", "returned"}[id%3]
			if want := [][]string{{strconv.FormatInt(id, 10), status}}; !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("id %d: rows = %v, want %v", id, got, want)
			}
		}
	})

	t.Run("prepared statement reports typed parameters", func(t *testing.T) {
		cl, mdCtx := flightSQLAs(t, srv, srv.token(t, "analyst@demo"))
		prep, err := cl.Prepare(mdCtx, "SELECT id, status FROM sales.orders WHERE id = ?")
		if err != nil {
			t.Fatal(err)
		}
		defer prep.Close(mdCtx)
		ps := prep.ParameterSchema()
		if ps == nil || ps.NumFields() != 1 {
			t.Fatalf("parameter schema = %v, want one field", ps)
		}
		if typ := ps.Field(0).Type; !arrow.TypeEqual(typ, arrow.PrimitiveTypes.Int64) {
			t.Fatalf("parameter type = %v, want int64", typ)
		}
	})

	t.Run("USE sets the default schema for the session", func(t *testing.T) {
		c := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
		if _, _, err := c.query(ctx, "SELECT count(*) FROM orders"); adbcStatus(err) != adbc.StatusInvalidArgument {
			t.Fatalf("unqualified before USE: %v", err)
		}
		if _, _, err := c.query(ctx, "USE sales"); err != nil {
			t.Fatal(err)
		}
		_, rows, err := c.query(ctx, "SELECT count(*) FROM orders")
		if err != nil || rows[0][0] != "5000" {
			t.Fatalf("after USE: %v, %v", rows, err)
		}
		if _, _, err := c.query(ctx, "USE hr"); adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("USE of an ungranted schema: %v", err)
		}
	})

	t.Run("schema session option", func(t *testing.T) {
		c := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
		if err := c.conn.(adbc.PostInitOptions).SetOption("adbc.flight.sql.session.option.schema", "sales"); err != nil {
			t.Fatal(err)
		}
		_, rows, err := c.query(ctx, "SELECT count(*) FROM customers")
		if err != nil || rows[0][0] != "2000" {
			t.Fatalf("with schema option: %v, %v", rows, err)
		}
	})

	t.Run("a million rows arrive complete and typed", func(t *testing.T) {
		stmt, err := analyst.conn.NewStatement()
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		if err := stmt.SetSqlQuery("SELECT o.id, o.amount, o.order_date, c.name FROM sales.orders o CROSS JOIN sales.customers c WHERE c.id <= 200"); err != nil {
			t.Fatal(err)
		}
		rdr, n, err := stmt.ExecuteQuery(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		wantTypes := []arrow.DataType{arrow.PrimitiveTypes.Int64, &arrow.Decimal128Type{Precision: 10, Scale: 2}, arrow.FixedWidthTypes.Date32, arrow.BinaryTypes.String}
		for i, f := range rdr.Schema().Fields() {
			if !arrow.TypeEqual(f.Type, wantTypes[i]) {
				t.Errorf("column %s type %s, want %s", f.Name, f.Type, wantTypes[i])
			}
		}
		var rows, sum int64
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rows += rec.NumRows()
			ids := rec.Column(0).(*array.Int64)
			for i := 0; i < ids.Len(); i++ {
				sum += ids.Value(i)
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		if rows != 1_000_000 || sum != 200*5000*5001/2 {
			t.Fatalf("rows = %d (reported %d), sum(id) = %d", rows, n, sum)
		}
	})
}

// objects lists schema and table names from ADBC GetObjects.
func objects(t *testing.T, c *client) (schemas, tables []string) {
	t.Helper()
	rdr, err := c.conn.GetObjects(context.Background(), adbc.ObjectDepthTables, nil, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		dbSchemas := rec.Column(1).(*array.List)
		schemaStructs := dbSchemas.ListValues().(*array.Struct)
		schemaNames := schemaStructs.Field(0).(*array.String)
		schemaTables := schemaStructs.Field(1).(*array.List)
		tableStructs := schemaTables.ListValues().(*array.Struct)
		tableNames := tableStructs.Field(0).(*array.String)
		for i := 0; i < schemaNames.Len(); i++ {
			schemas = append(schemas, schemaNames.Value(i))
			start, end := schemaTables.ValueOffsets(i)
			for j := start; j < end; j++ {
				tables = append(tables, schemaNames.Value(i)+"."+tableNames.Value(int(j)))
			}
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(schemas)
	slices.Sort(tables)
	return schemas, tables
}

func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

func int64Record(t *testing.T, v int64) arrow.RecordBatch { return paramRecord(t, v) }

// paramRecord is a one-row record of one parameter, an int64 or a string.
func paramRecord(t *testing.T, v any) arrow.RecordBatch {
	t.Helper()
	typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if _, ok := v.(string); ok {
		typ = arrow.BinaryTypes.String
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "p1", Type: typ}}, nil))
	defer b.Release()
	switch v := v.(type) {
	case int64:
		b.Field(0).(*array.Int64Builder).Append(v)
	case string:
		b.Field(0).(*array.StringBuilder).Append(v)
	default:
		t.Fatalf("paramRecord: %T", v)
	}
	return b.NewRecordBatch()
}

func ptr[T any](v T) *T { return &v }
