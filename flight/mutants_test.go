package flight

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
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

// mutantPrincipal returns a principal of tenant acme with role and
// namespaces.
func mutantPrincipal(t *testing.T, id string, role authz.Role, namespaces ...string) *authz.Principal {
	t.Helper()
	pid, err := authz.ParsePrincipalID(id)
	if err != nil {
		t.Fatal(err)
	}
	tenant, _ := authz.ParseTenantID("acme")
	var ns []authz.Namespace
	for _, n := range namespaces {
		x, err := authz.ParseNamespace(n)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, x)
	}
	p, err := authz.NewPrincipal(pid, tenant, role, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

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
	s, _ := metricsServer(t, cat, nil)
	alice := mutantPrincipal(t, "alice@acme", authz.RoleUser, "sales")
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
			got, err := s.resolveRead(context.Background(), alice, refsOf(c.refs...))
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
	s, _ := metricsServer(t, cat, nil)
	cases := []struct {
		p       *authz.Principal
		schemas []string
		tables  []string
	}{
		{mutantPrincipal(t, "alice@acme", authz.RoleUser, "sales"), []string{"sales"}, []string{"sales.items", "sales.orders"}},
		{mutantPrincipal(t, "carol@acme", authz.RoleUser, "hr", "empty"), []string{"empty", "hr"}, []string{"hr.people"}},
		{mutantPrincipal(t, "dan@acme", authz.RoleUser, "nothing"), nil, nil},
		{mutantPrincipal(t, "admin@acme", authz.RoleTenantAdmin), []string{"empty", "hr", "ops", "sales"},
			[]string{"hr.people", "ops.jobs", "sales.items", "sales.orders"}},
		{mutantPrincipal(t, "op@acme", authz.RoleOperator), nil, nil},
	}
	for _, c := range cases {
		t.Run(c.p.ID().String(), func(t *testing.T) {
			ctx := authz.WithPrincipal(context.Background(), c.p)
			l, err := s.visible(ctx, c.p)
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
	alice := mutantPrincipal(t, "alice@acme", authz.RoleUser, "sales")
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
			s, _ := metricsServer(t, cat, nil)
			pinned := c.pinned(t, cat)
			c.change(cat)
			err := s.reauthorize(context.Background(), alice, pinned)
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
	s, _ := metricsServer(t, newGovCatalog("sales.orders"), nil)
	payload, err := encodePayload(&plan{}) // no statement: an empty result
	if err != nil {
		t.Fatal(err)
	}
	handle, err := s.cfg.Tickets.Seal(nil, ticket.Claims{Principal: "alice@acme", Tenant: "acme",
		Expiry: s.cfg.Now().Add(time.Minute), Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	alice := mutantPrincipal(t, "alice@acme", authz.RoleUser, "sales")
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
		{mutantPrincipal(t, "carol@acme", authz.RoleUser, "sales"), false},
		{mutantPrincipal(t, "alice2@acme", authz.RoleUser, "sales"), false},
		{mutantPrincipal(t, "admin@acme", authz.RoleTenantAdmin), false},
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
