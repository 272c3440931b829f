package flight

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
)

// Tests of queries and prepared statements over the embedded engine through
// a Flight SQL client of a lake.

// executePrepared binds params (a JSON array of one object, nil for none)
// of schema to prep, executes it and fetches its rows.
func executePrepared(ctx context.Context, cl *flightsql.Client, prep *flightsql.PreparedStatement, schema *arrow.Schema, params string) ([][]string, error) {
	if schema != nil {
		rec, _, err := array.RecordFromJSON(cl.Alloc, schema, strings.NewReader(params))
		if err != nil {
			return nil, err
		}
		prep.SetParameters(rec) // retained until the next binding or Close
		rec.Release()
	}
	info, err := prep.Execute(ctx)
	if err != nil {
		return nil, err
	}
	return fetch(ctx, cl, info)
}

// TestPreparedParameters binds a parameter of every Arrow type the gateway
// accepts (and one it does not) to a prepared query.
func TestPreparedParameters(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	prep, err := cl.Prepare(ctx, "SELECT count(*) FROM sales.orders WHERE ? IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close(ctx)
	cases := []struct {
		typ   arrow.DataType
		value string // JSON
		want  string // count(*)
		code  codes.Code
		msg   string
	}{
		{typ: arrow.FixedWidthTypes.Boolean, value: "true", want: "2"},
		{typ: arrow.PrimitiveTypes.Int8, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Int16, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Int32, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Int64, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Uint8, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Uint16, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Uint32, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Uint64, value: "1", want: "2"},
		{typ: arrow.PrimitiveTypes.Float32, value: "1.5", want: "2"},
		{typ: arrow.PrimitiveTypes.Float64, value: "1.5", want: "2"},
		{typ: arrow.BinaryTypes.String, value: `"x"`, want: "2"},
		{typ: arrow.BinaryTypes.LargeString, value: `"x"`, want: "2"},
		{typ: arrow.BinaryTypes.Binary, value: `"eA=="`, want: "2"},
		{typ: arrow.FixedWidthTypes.Date32, value: `"2024-01-02"`, want: "2"},
		{typ: arrow.FixedWidthTypes.Timestamp_us, value: "1704164645000000", want: "2"},
		{typ: arrow.Null, value: "null", want: "0"},
		{typ: arrow.PrimitiveTypes.Int64, value: "null", want: "0"},
		{typ: arrow.FixedWidthTypes.MonthInterval, value: `{"months":1}`, code: codes.InvalidArgument, msg: "is not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.typ.String()+" "+tc.value, func(t *testing.T) {
			rows, err := executePrepared(ctx, cl, prep, schemaOf("parameter_1", tc.typ), `[{"parameter_1":`+tc.value+`}]`)
			checkStatus(t, err, tc.code, tc.msg)
			if err == nil && (len(rows) != 1 || rows[0][0] != tc.want) {
				t.Errorf("rows %v, want [[%s]]", rows, tc.want)
			}
		})
	}
}

// TestPreparedQuery checks a prepared query over its life: its schemas,
// executions with and without the parameters it needs, a revoked grant
// between executions, another principal presenting its handle, and Close.
func TestPreparedQuery(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	prep, err := cl.Prepare(ctx, "SELECT id, amount FROM sales.orders WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	if got := prep.DatasetSchema(); !got.Equal(ordersSchema) {
		t.Errorf("dataset schema %v", got)
	}
	if got := prep.ParameterSchema(); got.NumFields() != 1 {
		t.Errorf("parameter schema %v", got)
	}
	res, err := prep.GetSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := flight.DeserializeSchema(res.GetSchema(), l.mem); err != nil || !got.Equal(ordersSchema) {
		t.Errorf("GetSchema: %v, %v", got, err)
	}
	param := schemaOf("parameter_1", arrow.PrimitiveTypes.Int64)

	_, err = executePrepared(ctx, cl, prep, nil, "")
	checkStatus(t, err, codes.InvalidArgument, "the statement has 1 parameters, 0 were bound")
	rows, err := executePrepared(ctx, cl, prep, param, `[{"parameter_1":2}]`)
	if err != nil || !slices.EqualFunc(rows, [][]string{{"2", "2.5"}}, slices.Equal) {
		t.Fatalf("id = 2: %v, %v", rows, err)
	}
	// A new version is read at the next execution.
	if _, err := cl.ExecuteUpdate(ctx, "INSERT INTO sales.orders VALUES (2, 9.5)"); err != nil {
		t.Fatal(err)
	}
	rows, err = executePrepared(ctx, cl, prep, param, `[{"parameter_1":2}]`)
	if err != nil || len(rows) != 2 {
		t.Fatalf("id = 2 after an insert: %v, %v", rows, err)
	}

	// Another principal presenting the handle gets nothing.
	other, err := cl.LoadPreparedStatementFromResult(&flightsql.CreatePreparedStatementResult{PreparedStatementHandle: prep.Handle()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Execute(bearerCtx(carolToken))
	checkStatus(t, err, codes.Unauthenticated, "unauthenticated")

	// The grant withdrawn: the table is missing at the next execution.
	l.cat.hide("sales.orders")
	_, err = executePrepared(ctx, cl, prep, param, `[{"parameter_1":2}]`)
	checkStatus(t, err, codes.NotFound, "table sales.orders does not exist")

	// Closed, the handle opens no statement.
	if err := prep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = other.Execute(ctx)
	checkStatus(t, err, codes.NotFound, "prepared statement handle does not exist")
}

// TestStatementSchema checks GetExecuteSchema: the schema of a query
// without running it, and a table not granted answered as a missing one.
func TestStatementSchema(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	res, err := cl.GetExecuteSchema(ctx, "SELECT id, amount FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := flight.DeserializeSchema(res.GetSchema(), l.mem); err != nil || !got.Equal(ordersSchema) {
		t.Errorf("schema %v, %v", got, err)
	}
	_, err = cl.GetExecuteSchema(bearerCtx(carolToken), "SELECT id FROM sales.orders")
	checkStatus(t, err, codes.NotFound, "table sales.orders does not exist")
}

// TestCancelFlightInfo checks that a query cancelled before its DoGet does
// not run, that only the principal it was issued to may cancel it, and
// that a request naming no query is refused.
func TestCancelFlightInfo(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	info, err := cl.Execute(ctx, "SELECT id FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.CancelFlightInfo(bearerCtx(carolToken), &flight.CancelFlightInfoRequest{Info: info})
	checkStatus(t, err, codes.Unauthenticated, "unauthenticated")
	_, err = cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: &flight.FlightInfo{}})
	checkStatus(t, err, codes.InvalidArgument, "no endpoint to cancel")
	_, err = cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: &flight.FlightInfo{
		Endpoint: []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: []byte("forged")}}}}})
	checkStatus(t, err, codes.Unauthenticated, "unauthenticated")
	res, err := cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info})
	if err != nil || res.GetStatus() != flight.CancelStatusCancelled {
		t.Fatalf("cancel: %v, %v", res, err)
	}
	_, err = fetch(ctx, cl, info)
	checkStatus(t, err, codes.Canceled, "query was cancelled")

	// A constant statement whose result is kept (constant.go) is
	// cancelled alike.
	mustQuery(t, ctx, cl, "SELECT 1")
	if info, err = cl.Execute(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if res, err := cl.CancelFlightInfo(ctx, &flight.CancelFlightInfoRequest{Info: info}); err != nil || res.GetStatus() != flight.CancelStatusCancelled {
		t.Fatalf("cancel: %v, %v", res, err)
	}
	_, err = fetch(ctx, cl, info)
	checkStatus(t, err, codes.Canceled, "query was cancelled")
}
