package flight

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

// The tests in this file each close a mutant of a gateway decision that the
// rest of the suite let survive (docs/testing.md). They run over govCatalog,
// which grants more than the principal's namespaces allow and moves its
// generation as metasrv does, so the gateway's own checks are what decide.

// refsOf parses "schema.table" names as table references.
func refsOf(names ...string) []sqlgate.TableRef {
	out := make([]sqlgate.TableRef, len(names))
	for i, n := range names {
		out[i].Schema, out[i].Name, _ = strings.Cut(n, ".")
	}
	return out
}

// TestResolveReadChecksEveryReference checks that the namespace gate runs
// on every table a statement reads, wherever the table comes in the
// statement, before the catalog is asked (which here would grant it).
func TestResolveReadChecksEveryReference(t *testing.T) {
	cat := newGovCatalog("sales.orders", "sales.items", "hr.people")
	s, _ := newTestServer(t, cat, nil)
	alice := testPrincipal(t, "alice@acme", authz.RoleUser, "sales")
	cases := []struct {
		refs   []string
		denied string // "" when every table resolves
		reason string
	}{
		{[]string{"sales.orders"}, "", ""},
		{[]string{"sales.orders", "sales.items"}, "", ""},
		{[]string{"hr.people"}, "hr.people", reasonNamespace},
		{[]string{"hr.people", "sales.orders"}, "hr.people", reasonNamespace},
		{[]string{"sales.orders", "hr.people"}, "hr.people", reasonNamespace},
		{[]string{"sales.orders", "sales.items", "hr.people"}, "hr.people", reasonNamespace},
		{[]string{"sales.orders", "SALES.items", "Hr.people"}, "Hr.people", reasonNamespace},
		{[]string{"sales.orders", "sales.missing"}, "sales.missing", reasonPrivilege},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.refs, ","), func(t *testing.T) {
			before := cat.resolveCalls()
			got, err := s.planner.resolve(context.Background(), s.whoIs(context.Background(), alice), refsOf(c.refs...))
			if c.denied == "" {
				if err != nil || len(got) != len(c.refs) {
					t.Fatalf("resolveRead = %v, %v; want %d versions", got, err, len(c.refs))
				}
				return
			}
			if !errors.Is(err, errNotFound) || denialReason(err) != c.reason || !strings.Contains(err.Error(), c.denied) || got != nil {
				t.Fatalf("resolveRead = %v, %v (reason %q); want %s not found (%s)", got, err, denialReason(err), c.denied, c.reason)
			}
			if c.reason == reasonNamespace && cat.resolveCalls() != before {
				t.Fatal("a reference outside the namespaces reached the catalog")
			}
		})
	}
}

// getTables is a flightsql.GetTables with every filter unset.
type getTables struct{}

func (getTables) GetCatalog() *string                { return nil }
func (getTables) GetDBSchemaFilterPattern() *string  { return nil }
func (getTables) GetTableNameFilterPattern() *string { return nil }
func (getTables) GetTableTypes() []string            { return nil }
func (getTables) GetIncludeSchema() bool             { return false }

// TestDiscoveryNarrowsToNamespaces checks that the listing discovery shows
// (visible, and DoGetTables over it) keeps only the schemas and tables of
// the principal's namespace grants, though the catalog lists more.
func TestDiscoveryNarrowsToNamespaces(t *testing.T) {
	cat := newGovCatalog("sales.orders", "sales.items", "hr.people", "ops.jobs")
	cat.schemas = []string{"empty"}
	s, _ := newTestServer(t, cat, nil)
	cases := []struct {
		p       *authz.Principal
		schemas []string
		tables  []string
	}{
		{testPrincipal(t, "alice@acme", authz.RoleUser, "sales"), []string{"sales"}, []string{"sales.items", "sales.orders"}},
		{testPrincipal(t, "carol@acme", authz.RoleUser, "hr", "empty"), []string{"empty", "hr"}, []string{"hr.people"}},
		{testPrincipal(t, "dan@acme", authz.RoleUser, "nothing"), nil, nil},
		{testPrincipal(t, "admin@acme", authz.RoleTenantAdmin), []string{"empty", "hr", "ops", "sales"},
			[]string{"hr.people", "ops.jobs", "sales.items", "sales.orders"}},
		{testPrincipal(t, "op@acme", authz.RoleOperator), nil, nil},
	}
	for _, c := range cases {
		t.Run(c.p.ID().String(), func(t *testing.T) {
			ctx := authz.WithPrincipal(context.Background(), c.p)
			l, err := s.planner.Visible(ctx, s.whoIs(ctx, c.p))
			if err != nil {
				t.Fatal(err)
			}
			var tables []string
			for _, tb := range l.Tables {
				tables = append(tables, tb.Name.Schema+"."+tb.Name.Name)
			}
			if !slices.Equal(l.Schemas, c.schemas) || !slices.Equal(tables, c.tables) {
				t.Fatalf("visible = %v %v, want %v %v", l.Schemas, tables, c.schemas, c.tables)
			}
			_, ch, err := s.DoGetTables(ctx, getTables{})
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for chunk := range ch {
				rec := chunk.Data
				sc, tb := rec.Column(1).(*array.String), rec.Column(2).(*array.String)
				for i := range int(rec.NumRows()) {
					listed = append(listed, sc.Value(i)+"."+tb.Value(i))
				}
				rec.Release()
			}
			if !slices.Equal(listed, c.tables) {
				t.Fatalf("DoGetTables = %v, want %v", listed, c.tables)
			}
		})
	}
}

// TestReauthorizeWhenGenerationMoves checks a ticket's pinned versions
// against the catalog: at the generation they were decided at they stand;
// once the generation has moved (in either direction, or when unknown) they
// are resolved again, and a revoked grant, a new row filter or a table
// outside the namespaces fails the ticket.
func TestReauthorizeWhenGenerationMoves(t *testing.T) {
	alice := testPrincipal(t, "alice@acme", authz.RoleUser, "sales")
	cases := []struct {
		name   string
		pinned func(t *testing.T, c *govCatalog) []backend.TableVersion // planned
		change func(c *govCatalog)                                      // between planning and the ticket
		denied string                                                   // "" when the ticket stands
	}{
		{"unchanged", pinNow("sales.orders", "sales.items"), func(*govCatalog) {}, ""},
		{"moved, grants unchanged", pinNow("sales.orders", "sales.items"), (*govCatalog).touch, ""},
		{"moved, new version committed", pinNow("sales.orders"), func(c *govCatalog) { c.commit("sales.orders") }, ""},
		{"moved, grant revoked", pinNow("sales.orders", "sales.items"), func(c *govCatalog) { c.revoke("sales.items") }, "sales.items"},
		{"moved, first grant revoked", pinNow("sales.orders", "sales.items"), func(c *govCatalog) { c.revoke("sales.orders") }, "sales.orders"},
		{"moved, row filter added", pinNow("sales.orders"), func(c *govCatalog) { c.setFilter("sales.orders", "id = 1") }, "sales.orders"},
		{"moved back", pinNow("sales.orders"), func(c *govCatalog) {
			c.revoke("sales.orders")
			c.mu.Lock()
			c.gen = 0
			c.mu.Unlock()
		}, "sales.orders"},
		{"unknown generation", func(t *testing.T, c *govCatalog) []backend.TableVersion {
			v := pinNow("sales.orders")(t, c)
			v[0].Generation = 0
			return v
		}, func(c *govCatalog) {
			c.mu.Lock()
			delete(c.tables, backend.TableName{Schema: "sales", Name: "orders"})
			c.gen = 0 // the catalog too answers 0
			c.mu.Unlock()
		}, "sales.orders"},
		{"pinned outside the namespaces", func(t *testing.T, c *govCatalog) []backend.TableVersion {
			v := pinNow("sales.orders")(t, c)
			return append(v, backend.TableVersion{Name: backend.TableName{Schema: "hr", Name: "people"}, StorageID: "st-hr-people",
				Version: 1, Generation: v[0].Generation})
		}, (*govCatalog).touch, "hr.people"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := newGovCatalog("sales.orders", "sales.items", "hr.people")
			s, _ := newTestServer(t, cat, nil)
			pinned := c.pinned(t, cat)
			c.change(cat)
			err := s.planner.Reauthorize(context.Background(), s.whoIs(context.Background(), alice), pinned)
			if c.denied == "" {
				if err != nil {
					t.Fatalf("reauthorize: %v", err)
				}
				return
			}
			if !errors.Is(err, errNotFound) || !strings.Contains(err.Error(), c.denied) {
				t.Fatalf("reauthorize = %v, want %s not found", err, c.denied)
			}
		})
	}
}

// pinNow returns a pinner resolving tables now, as planning does.
func pinNow(tables ...string) func(t *testing.T, c *govCatalog) []backend.TableVersion {
	return func(t *testing.T, c *govCatalog) []backend.TableVersion {
		t.Helper()
		refs := make([]backend.TableRef, len(tables))
		for i, r := range refsOf(tables...) {
			refs[i].Name = backend.TableName{Schema: r.Schema, Name: r.Name}
		}
		got, err := c.Resolve(context.Background(), backend.Caller{}, refs)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]backend.TableVersion, len(got))
		for i, v := range got {
			if v == nil {
				t.Fatalf("%s not granted", tables[i])
			}
			out[i] = *v
		}
		return out
	}
}

// stmtTicket is a flightsql.StatementQueryTicket.
type stmtTicket []byte

func (h stmtTicket) GetStatementHandle() []byte { return h }

// TestTicketOnlyForItsPrincipal checks that a statement ticket is redeemed
// only by the principal it was issued to: any other one of the same tenant
// is answered exactly as for a forged ticket.
func TestTicketOnlyForItsPrincipal(t *testing.T) {
	s, _ := newTestServer(t, newGovCatalog("sales.orders"), nil)
	payload, err := encodePayload(&plan{}, accessedStatement{}) // no statement: an empty result
	if err != nil {
		t.Fatal(err)
	}
	alice := testPrincipal(t, "alice@acme", authz.RoleUser, "sales")
	handle, err := s.sealFor(alice, ticket.Claims{Principal: "alice@acme", Tenant: "acme",
		Expiry: s.cfg.Now().Add(time.Minute), Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	forged := append([]byte(nil), handle...)
	forged[len(forged)-1] ^= 1
	_, _, forgedErr := s.DoGetStatement(authz.WithPrincipal(context.Background(), alice), stmtTicket(forged))
	if forgedErr == nil {
		t.Fatal("a forged ticket was redeemed")
	}
	cases := []struct {
		p  *authz.Principal
		ok bool
	}{
		{alice, true},
		{testPrincipal(t, "carol@acme", authz.RoleUser, "sales"), false},
		{testPrincipal(t, "alice2@acme", authz.RoleUser, "sales"), false},
		{testPrincipal(t, "admin@acme", authz.RoleTenantAdmin), false},
	}
	for _, c := range cases {
		t.Run(c.p.ID().String(), func(t *testing.T) {
			_, ch, err := s.DoGetStatement(authz.WithPrincipal(context.Background(), c.p), stmtTicket(handle))
			if c.ok {
				if err != nil {
					t.Fatalf("the ticket's own principal: %v", err)
				}
				for range ch {
				}
				return
			}
			if err == nil || status.Code(err) != status.Code(forgedErr) || err.Error() != forgedErr.Error() {
				t.Fatalf("redeemed by %s: %v, want as a forged ticket: %v", c.p.ID(), err, forgedErr)
			}
		})
	}
}

// TestAuthenticateBasicOnlyOnHandshake checks that Basic credentials
// authenticate the Handshake and nothing else: any other RPC presenting
// them is refused as a wrong token is, while a bearer token works on both.
func TestAuthenticateBasicOnlyOnHandshake(t *testing.T) {
	s, _ := newTestServer(t, newGovCatalog(), nil)
	basic := func(id, token string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+token))
	}
	cases := []struct {
		name   string
		method string
		header string
		want   string // the principal authenticated, "" when refused
	}{
		{"basic on handshake", handshakeMethod, basic("alice@acme", aliceToken), "alice@acme"},
		{"basic on GetFlightInfo", methodGetFlightInfo, basic("alice@acme", aliceToken), ""},
		{"basic on DoGet", methodDoGet, basic("alice@acme", aliceToken), ""},
		{"basic on DoAction", methodDoAction, basic("alice@acme", aliceToken), ""},
		{"basic with another's id", handshakeMethod, basic("carol@acme", aliceToken), ""},
		{"basic with an empty id", handshakeMethod, basic("", aliceToken), ""},
		{"bearer on handshake", handshakeMethod, "Bearer " + aliceToken, "alice@acme"},
		{"bearer on GetFlightInfo", methodGetFlightInfo, "Bearer " + aliceToken, "alice@acme"},
		{"no header", methodGetFlightInfo, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md := metadata.MD{}
			if c.header != "" {
				md.Set("authorization", c.header)
			}
			ctx, creds, err := s.auth.authenticate(metadata.NewIncomingContext(context.Background(), md), c.method)
			if c.want == "" {
				if status.Code(err) != codes.Unauthenticated || ctx != nil || creds != (callCredentials{}) {
					t.Fatalf("authenticate = %v, %+v, %v; want Unauthenticated", ctx, creds, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("authenticate: %v", err)
			}
			if p, ok := authz.PrincipalFrom(ctx); !ok || p.ID().String() != c.want {
				t.Fatalf("authenticated %v, want %s", p, c.want)
			}
		})
	}
}

// discoveryFilter is a flightsql.GetTables (and GetDBSchemas) with filters.
type discoveryFilter struct {
	catalog, schema, table *string
	types                  []string
}

func (f discoveryFilter) GetCatalog() *string                { return f.catalog }
func (f discoveryFilter) GetDBSchemaFilterPattern() *string  { return f.schema }
func (f discoveryFilter) GetTableNameFilterPattern() *string { return f.table }
func (f discoveryFilter) GetTableTypes() []string            { return f.types }
func (f discoveryFilter) GetIncludeSchema() bool             { return false }

func ptr(s string) *string { return &s }

// rowsOf drains a DoGet* answer into rows of its first n string columns,
// joined with ".".
func rowsOf(t *testing.T, ch <-chan flight.StreamChunk, n int) []string {
	t.Helper()
	if ch == nil {
		t.Fatal("no stream to read") // ranging over it would block forever
	}
	var rows []string
	for chunk := range ch {
		if chunk.Err != nil {
			t.Fatal(chunk.Err)
		}
		rec := chunk.Data
		for i := range int(rec.NumRows()) {
			var cells []string
			for c := range n {
				cells = append(cells, rec.Column(c).(*array.String).Value(i))
			}
			rows = append(rows, strings.Join(cells, "."))
		}
		rec.Release()
	}
	return rows
}

// withSessionCatalog returns a context of p whose session has chosen
// catalog, through SetSessionOptions and the cookie it sends.
func withSessionCatalog(t *testing.T, s *Server, p *authz.Principal, catalog string) context.Context {
	t.Helper()
	hs := &headerStream{}
	opts, err := flight.NewSessionOptionValues(map[string]any{optCatalog: catalog})
	if err != nil {
		t.Fatal(err)
	}
	ctx := grpc.NewContextWithServerTransportStream(authz.WithPrincipal(context.Background(), p), hs)
	res, err := s.SetSessionOptions(ctx, &flight.SetSessionOptionsRequest{SessionOptions: opts})
	if err != nil || len(res.GetErrors()) != 0 {
		t.Fatalf("SetSessionOptions = %v, %v", res, err)
	}
	cookie := hs.md.Get("set-cookie")
	if len(cookie) != 1 {
		t.Fatalf("set-cookie = %v", cookie)
	}
	nameValue, _, _ := strings.Cut(cookie[0], ";")
	return metadata.NewIncomingContext(authz.WithPrincipal(context.Background(), p), metadata.Pairs("cookie", nameValue))
}

// TestDiscoveryFilters checks GetCatalogs, GetDbSchemas and GetTables
// against the Flight SQL filters: the catalog filter names the session's
// catalog ("" names tables without a catalog: none; unset: any), schema and
// table name patterns are SQL LIKE patterns that must all match, and the
// table types requested must include TABLE (case-insensitively; none
// requested: any).
func TestDiscoveryFilters(t *testing.T) {
	cat := newGovCatalog("sales.orders", "sales.items", "sales_eu.orders", "hr.people")
	cat.schemas = []string{"empty"}
	s, _ := newTestServer(t, cat, nil)
	admin := testPrincipal(t, "admin@acme", authz.RoleTenantAdmin)
	lake := authz.WithPrincipal(context.Background(), admin)
	other := withSessionCatalog(t, s, admin, "other")
	all := []string{"hr.people", "sales.items", "sales.orders", "sales_eu.orders"}
	cases := []struct {
		name    string
		ctx     context.Context
		f       discoveryFilter
		schemas []string // DoGetDBSchemas (catalog and schema filters only)
		tables  []string // DoGetTables
	}{
		{"no filter", lake, discoveryFilter{}, []string{"empty", "hr", "sales", "sales_eu"}, all},
		{"the session's catalog", lake, discoveryFilter{catalog: ptr("lake")}, []string{"empty", "hr", "sales", "sales_eu"}, all},
		{"another catalog", lake, discoveryFilter{catalog: ptr("other")}, nil, nil},
		{"no catalog", lake, discoveryFilter{catalog: ptr("")}, nil, nil},
		{"the session's chosen catalog", other, discoveryFilter{catalog: ptr("other")}, []string{"empty", "hr", "sales", "sales_eu"}, all},
		{"the default once another is chosen", other, discoveryFilter{catalog: ptr("lake")}, nil, nil},
		{"schema pattern", lake, discoveryFilter{schema: ptr("sales")}, []string{"sales"}, []string{"sales.items", "sales.orders"}},
		{"schema pattern with %", lake, discoveryFilter{schema: ptr("sales%")}, []string{"sales", "sales_eu"},
			[]string{"sales.items", "sales.orders", "sales_eu.orders"}},
		{"schema pattern with an escaped _", lake, discoveryFilter{schema: ptr("sales\\_%")}, []string{"sales_eu"}, []string{"sales_eu.orders"}},
		{"table pattern", lake, discoveryFilter{table: ptr("orders")}, []string{"empty", "hr", "sales", "sales_eu"},
			[]string{"sales.orders", "sales_eu.orders"}},
		{"both patterns", lake, discoveryFilter{schema: ptr("sales"), table: ptr("orders")}, []string{"sales"}, []string{"sales.orders"}},
		{"schema matches, table does not", lake, discoveryFilter{schema: ptr("hr"), table: ptr("orders")}, []string{"hr"}, nil},
		{"table matches, schema does not", lake, discoveryFilter{schema: ptr("hr"), table: ptr("items")}, []string{"hr"}, nil},
		{"patterns in another catalog", lake, discoveryFilter{catalog: ptr("other"), schema: ptr("sales"), table: ptr("orders")}, nil, nil},
		{"type TABLE", lake, discoveryFilter{types: []string{"TABLE"}}, []string{"empty", "hr", "sales", "sales_eu"}, all},
		{"type table", lake, discoveryFilter{types: []string{"table"}}, []string{"empty", "hr", "sales", "sales_eu"}, all},
		{"types VIEW and TABLE", lake, discoveryFilter{types: []string{"VIEW", "TABLE"}}, []string{"empty", "hr", "sales", "sales_eu"}, all},
		{"type VIEW", lake, discoveryFilter{types: []string{"VIEW"}}, []string{"empty", "hr", "sales", "sales_eu"}, nil},
		{"type VIEW in the session's catalog", lake, discoveryFilter{catalog: ptr("lake"), types: []string{"VIEW"}}, []string{"empty", "hr", "sales", "sales_eu"}, nil},
		{"type TABLE in another catalog", lake, discoveryFilter{catalog: ptr("other"), types: []string{"TABLE"}}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ch, err := s.DoGetDBSchemas(c.ctx, c.f)
			if err != nil {
				t.Fatalf("DoGetDBSchemas: %v", err)
			}
			if got := rowsOf(t, ch, 2); !slices.Equal(got, prefixed(s.whoIs(c.ctx, admin).caller.Catalog, c.schemas)) {
				t.Errorf("DoGetDBSchemas = %v, want %v", got, c.schemas)
			}
			_, ch, err = s.DoGetTables(c.ctx, c.f)
			if err != nil {
				t.Fatalf("DoGetTables: %v", err)
			}
			if got := rowsOf(t, ch, 3); !slices.Equal(got, prefixed(s.whoIs(c.ctx, admin).caller.Catalog, c.tables)) {
				t.Errorf("DoGetTables = %v, want %v", got, c.tables)
			}
		})
	}
}

// prefixed returns each name prefixed with catalog and a dot.
func prefixed(catalog string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, catalog+"."+n)
	}
	return out
}

// TestSessionCatalog checks the catalog a caller is in (DoGetCatalogs, and
// the catalog discovery rows name): the default one, or the one its session
// chose.
func TestSessionCatalog(t *testing.T) {
	s, _ := newTestServer(t, newGovCatalog("sales.orders"), func(c *Config) { c.DefaultCatalog = "lake" })
	alice := testPrincipal(t, "alice@acme", authz.RoleUser, "sales")
	cases := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"default", authz.WithPrincipal(context.Background(), alice), "lake"},
		{"chosen", withSessionCatalog(t, s, alice, "other"), "other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ch, err := s.DoGetCatalogs(c.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := rowsOf(t, ch, 1); !slices.Equal(got, []string{c.want}) {
				t.Errorf("DoGetCatalogs = %v, want [%s]", got, c.want)
			}
			_, ch, err = s.DoGetTables(c.ctx, getTables{})
			if err != nil {
				t.Fatal(err)
			}
			if got := rowsOf(t, ch, 3); !slices.Equal(got, []string{c.want + ".sales.orders"}) {
				t.Errorf("DoGetTables = %v, want [%s.sales.orders]", got, c.want)
			}
		})
	}
}

// TestDiscoveryCatalogFailure checks that discovery fails, rather than
// answering an empty listing, when the catalog cannot list.
func TestDiscoveryCatalogFailure(t *testing.T) {
	s, _ := newTestServer(t, &metricsCatalog{err: backend.ErrCatalogUnavailable}, nil)
	ctx := authz.WithPrincipal(context.Background(), testPrincipal(t, "alice@acme", authz.RoleUser, "sales"))
	cases := []struct {
		name string
		call func() (<-chan flight.StreamChunk, error)
	}{
		{"DoGetDBSchemas", func() (<-chan flight.StreamChunk, error) {
			_, ch, err := s.DoGetDBSchemas(ctx, discoveryFilter{})
			return ch, err
		}},
		{"DoGetTables", func() (<-chan flight.StreamChunk, error) {
			_, ch, err := s.DoGetTables(ctx, discoveryFilter{})
			return ch, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := c.call()
			if status.Code(err) != codes.Unavailable || ch != nil {
				t.Fatalf("%s = %v, %v; want Unavailable", c.name, ch, err)
			}
		})
	}
}

// relBackend binds every version as relation name in lg_rel, of BIGINT
// columns.
type relBackend struct {
	backend.Backend
	name string
}

func (b relBackend) Bind(_ context.Context, _ string, tables []backend.LocalTable) ([]backend.Relation, error) {
	out := make([]backend.Relation, len(tables))
	for i, lt := range tables {
		out[i] = backend.Relation{Schema: "lg_rel", Name: b.name, Types: slices.Repeat([]string{"BIGINT"}, len(lt.Columns))}
	}
	return out, nil
}

// TestRender checks the texts render gives a statement: a parameter
// compared with a column of a row-filtered table is pushed behind the filter
// too; and a statement the gate cannot print is refused, never run as an
// empty text.
func TestRender(t *testing.T) {
	cases := []struct {
		name     string
		sql      string
		relation string // as the engine binds the table
		filter   string
		pushed   bool
		fails    bool
	}{
		{"point lookup on a filtered table", "SELECT id FROM orders WHERE id = ?", "v_orders", "id > 0", true, false},
		{"point lookup on an unfiltered table", "SELECT id FROM orders WHERE id = ?", "v_orders", "", false, false},
		{"no parameter", "SELECT id FROM orders", "v_orders", "id > 0", false, false},
		{"a relation the gate refuses", "SELECT id FROM orders", "v_\x01", "", false, true},
		{"a relation the gate refuses, filtered", "SELECT id FROM orders WHERE id = ?", "v_\x01", "id > 0", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := &countingFiles{}
			s, _ := newTestServer(t, newGovCatalog(), func(cfg *Config) {
				cfg.Backend = relBackend{name: c.relation}
				cfg.Files = files
			})
			alice := testPrincipal(t, "alice@acme", authz.RoleUser, "sales")
			stmt, err := s.planner.gate.Parse(c.sql, "sales")
			if err != nil {
				t.Fatal(err)
			}
			v := backend.TableVersion{Name: backend.TableName{Schema: "sales", Name: "orders"}, StorageID: "st", Version: 1,
				Columns: []backend.Column{{Name: "id", Type: "BIGINT"}}}
			if c.filter != "" {
				v.Policy = &backend.TablePolicy{RowFilter: c.filter}
			}
			r, release, err := s.planner.Render(context.Background(), s.whoIs(context.Background(), alice), stmt, []backend.TableVersion{v})
			if c.fails {
				if err == nil || release != nil || r.sql != "" || r.pushed != "" {
					t.Fatalf("render = %+v, %v; want an error", r, err)
				}
				if files.released != files.acquired {
					t.Fatalf("files acquired %d, released %d", files.acquired, files.released)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			release()
			if !strings.Contains(r.sql, "lg_rel") || (c.filter != "" && !strings.Contains(r.sql, "> 0")) {
				t.Errorf("sql = %s", r.sql)
			}
			if got := r.pushed != "" && len(r.kinds) == 1; got != c.pushed {
				t.Errorf("pushed = %q %v, want pushed %v", r.pushed, r.kinds, c.pushed)
			}
		})
	}
}
