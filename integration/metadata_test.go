package integration_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestMetadataRPCs covers what drivers ask before their first query:
// SqlInfo, table types, XDBC type info, and session options.
func TestMetadataRPCs(t *testing.T) {
	srv := startServe(t)
	ctx := context.Background()
	token := srv.token(t, "analyst@demo")
	c := mustDial(t, srv.uri(), bearer(token))

	t.Run("GetInfo", func(t *testing.T) {
		rdr, err := c.conn.GetInfo(ctx, []adbc.InfoCode{adbc.InfoVendorName, adbc.InfoVendorVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		got := map[uint32]string{}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			codes := rec.Column(0).(*array.Uint32)
			values := rec.Column(1).(*array.DenseUnion)
			for i := 0; i < codes.Len(); i++ {
				child := values.Field(values.ChildID(i))
				got[codes.Value(i)] = child.ValueStr(int(values.ValueOffset(i)))
			}
		}
		if got[uint32(adbc.InfoVendorName)] != "lakegate" {
			t.Fatalf("vendor name = %q (all: %v)", got[uint32(adbc.InfoVendorName)], got)
		}
	})

	t.Run("GetTableTypes", func(t *testing.T) {
		rdr, err := c.conn.GetTableTypes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		var types []string
		for rdr.Next() {
			col := rdr.RecordBatch().Column(0).(*array.String)
			for i := 0; i < col.Len(); i++ {
				types = append(types, col.Value(i))
			}
		}
		if !slices.Equal(types, []string{"TABLE"}) {
			t.Fatalf("table types = %v", types)
		}
	})

	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cl := flightsqlClient(conn)
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)

	t.Run("XdbcTypeInfo", func(t *testing.T) {
		info, err := cl.GetXdbcTypeInfo(authed, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := readStrings(t, cl, authed, info, 0)
		for _, want := range []string{"BIGINT", "VARCHAR", "TIMESTAMP", "DECIMAL"} {
			if !slices.Contains(names, want) {
				t.Errorf("type %s missing from %v", want, names)
			}
		}
		bigint := int32(-5)
		info, err = cl.GetXdbcTypeInfo(authed, &bigint)
		if err != nil {
			t.Fatal(err)
		}
		if names := readStrings(t, cl, authed, info, 0); !slices.Equal(names, []string{"BIGINT"}) {
			t.Errorf("filtered types = %v", names)
		}
	})

	// JDBC's DatabaseMetaData.getPrimaryKeys, getImportedKeys,
	// getExportedKeys and getCrossReference (asked by BI tools that show a
	// table): lakegate tables have no keys, so each answers no rows with the
	// command's schema — the same for a visible, a hidden and a missing
	// table — instead of Unimplemented.
	t.Run("keys", func(t *testing.T) {
		catalog := "lake"
		for _, tbl := range []string{"orders", "employees", "nope"} {
			schema := "sales"
			if tbl == "employees" {
				schema = "hr" // not analyst's
			}
			ref := flightsql.TableRef{Catalog: &catalog, DBSchema: &schema, Table: tbl}
			for name, get := range map[string]func() (*flight.FlightInfo, error){
				"primary":  func() (*flight.FlightInfo, error) { return cl.GetPrimaryKeys(authed, ref) },
				"imported": func() (*flight.FlightInfo, error) { return cl.GetImportedKeys(authed, ref) },
				"exported": func() (*flight.FlightInfo, error) { return cl.GetExportedKeys(authed, ref) },
				"cross": func() (*flight.FlightInfo, error) {
					return cl.GetCrossReference(authed, ref, flightsql.TableRef{Catalog: &catalog, DBSchema: &schema, Table: "customers"})
				},
			} {
				info, err := get()
				if err != nil {
					t.Fatalf("%s keys of %s.%s: %v", name, schema, tbl, err)
				}
				if rows := readStrings(t, cl, authed, info, 0); len(rows) != 0 {
					t.Errorf("%s keys of %s.%s: %v, want none", name, schema, tbl, rows)
				}
			}
		}
		if _, err := cl.GetPrimaryKeys(ctx, flightsql.TableRef{Table: "orders"}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("without a token: %v, want Unauthenticated", err)
		}
	})

	t.Run("session options round trip", func(t *testing.T) {
		// A session lives behind a cookie; carry it by hand here.
		var hdr metadata.MD
		set, err := cl.SetSessionOptions(authed, &flight.SetSessionOptionsRequest{SessionOptions: map[string]*flight.SessionOptionValue{
			"schema":  stringOption("sales"),
			"bogus":   stringOption("x"),
			"catalog": stringOption("not a name!"), // any valid name is accepted; this is not one
		}}, grpc.Header(&hdr))
		if err != nil {
			t.Fatal(err)
		}
		if len(set.GetErrors()) != 2 || set.GetErrors()["schema"] != nil {
			t.Fatalf("errors = %v", set.GetErrors())
		}
		cookies := hdr.Get("set-cookie")
		if len(cookies) != 1 {
			t.Fatalf("set-cookie = %v", cookies)
		}
		withSession := metadata.AppendToOutgoingContext(authed, "cookie", cookieNameValue(cookies[0]))
		got, err := cl.GetSessionOptions(withSession, &flight.GetSessionOptionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetSessionOptions()["schema"].GetStringValue() != "sales" || got.GetSessionOptions()["catalog"].GetStringValue() != "lake" {
			t.Fatalf("options = %v", got.GetSessionOptions())
		}
		// The session is bound to its principal: hr presenting the cookie
		// sees the defaults.
		hr := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+srv.token(t, "hr@demo"), "cookie", cookieNameValue(cookies[0]))
		if got, err := cl.GetSessionOptions(hr, &flight.GetSessionOptionsRequest{}); err != nil || got.GetSessionOptions()["schema"] != nil {
			t.Fatalf("hr with analyst's cookie: %v %v", got, err)
		}
		if _, err := cl.CloseSession(withSession, &flight.CloseSessionRequest{}); err != nil {
			t.Fatal(err)
		}
		if got, err := cl.GetSessionOptions(withSession, &flight.GetSessionOptionsRequest{}); err != nil || got.GetSessionOptions()["schema"] != nil {
			t.Fatalf("after CloseSession: %v %v", got, err)
		}
	})

	t.Run("USE through the update path", func(t *testing.T) {
		var hdr metadata.MD
		if _, err := cl.ExecuteUpdate(authed, "USE sales", grpc.Header(&hdr)); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.ExecuteUpdate(authed, "DELETE FROM sales.orders"); err == nil {
			t.Fatal("an update ran")
		}
	})
}

func stringOption(v string) *flight.SessionOptionValue {
	o, err := flight.NewSessionOptionValue(v)
	if err != nil {
		panic(err)
	}
	return &o
}

func cookieNameValue(setCookie string) string {
	for i := 0; i < len(setCookie); i++ {
		if setCookie[i] == ';' {
			return setCookie[:i]
		}
	}
	return setCookie
}

// readStrings fetches every endpoint of info and returns column col as text.
func readStrings(t *testing.T, cl *flightsql.Client, ctx context.Context, info *flight.FlightInfo, col int) []string {
	t.Helper()
	var out []string
	for _, ep := range info.GetEndpoint() {
		rdr, err := cl.DoGet(ctx, ep.GetTicket())
		if err != nil {
			t.Fatal(err)
		}
		for rdr.Next() {
			c := rdr.RecordBatch().Column(col)
			for i := 0; i < c.Len(); i++ {
				out = append(out, c.ValueStr(i))
			}
		}
		if err := rdr.Err(); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
	}
	return out
}
