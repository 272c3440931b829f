package metasrv_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"lakegate/catalog"
	"lakegate/metasrv"
)

// demoLikeSeed is a metalake with a catalog, a schema, a user and a role
// granted to it, as `lakegate serve` seeds its demo.
func demoLikeSeed(lake string) metasrv.Seed {
	return metasrv.Seed{Metalake: lake, Operator: "root", Owner: "alice@acme", Comment: "seeded",
		Commands: []catalog.Command{
			catalog.CreateCatalog{Name: "lake", Type: "managed"},
			catalog.CreateSchema{Name: "lake.sales"},
			catalog.CreateUser{Name: "bob@acme"},
			catalog.CreateRole{Name: "reader", Grants: []catalog.Grant{
				{Object: catalog.Catalog("lake"), Privilege: catalog.PrivUseCatalog, Condition: catalog.Allow},
				{Object: catalog.Schema("lake.sales"), Privilege: catalog.PrivSelectTable, Condition: catalog.Allow},
			}},
			catalog.GrantRoles{Grantee: catalog.Owner{Type: catalog.OwnerUser, Name: "bob@acme"}, Roles: []string{"reader"}},
		}}
}

// TestBootstrapRefusesWhatRESTRefuses: each seed holds one write that REST
// refuses (the same write sent as a request answers the status shown);
// Bootstrap refuses the whole seed with the same kind of error, proposes
// nothing — the metalake is not even created — and audits the refusal.
func TestBootstrapRefusesWhatRESTRefuses(t *testing.T) {
	n := single(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const lake = "seeded"
	alice := func(method, path string, body any) call {
		return call{method: method, path: ml + path, token: tokAlice, body: body}
	}
	with := func(edit func(*metasrv.Seed)) metasrv.Seed {
		s := demoLikeSeed(lake)
		edit(&s)
		return s
	}
	cases := []struct {
		name   string
		seed   metasrv.Seed
		rest   call // the same write through REST; zero: none exists
		status int
		want   error  // the sentinel Bootstrap's error wraps
		shown  string // in the error text
	}{
		{"invisible character in a catalog name",
			with(func(s *metasrv.Seed) { s.Commands[0] = catalog.CreateCatalog{Name: "lake\u200b", Type: "managed"} }),
			alice("POST", "/catalogs", map[string]any{"name": "lake\u200b"}), 400, catalog.ErrInvalidName, `"lakeU+200B"`},
		{"direction override in a schema name",
			with(func(s *metasrv.Seed) { s.Commands[1] = catalog.CreateSchema{Name: "lake.\u202eselas"} }),
			alice("POST", "/catalogs/lake/schemas", map[string]any{"name": "\u202eselas"}), 400, catalog.ErrInvalidName, `"U+202Eselas"`},
		{"line separator in a user name",
			with(func(s *metasrv.Seed) { s.Commands[2] = catalog.CreateUser{Name: "bob\u2028"} }),
			alice("POST", "/users", map[string]any{"name": "bob\u2028"}), 400, catalog.ErrInvalidName, `"bobU+2028"`},
		{"invisible mark in the owner",
			with(func(s *metasrv.Seed) { s.Owner = "carol\u200e" }),
			call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": lake, "owner": "carol\u200e"}}, 400, catalog.ErrInvalidName, "U+200E"},
		{"a metalake name that is no tenant id",
			with(func(s *metasrv.Seed) { s.Metalake = "no such/tenant" }),
			call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "no such/tenant", "owner": "alice@acme"}}, 400, metasrv.ErrBadRequest, "tenant id"},
		{"an unknown catalog type",
			with(func(s *metasrv.Seed) { s.Commands[0] = catalog.CreateCatalog{Name: "lake", Type: "hive"} }),
			alice("POST", "/catalogs", map[string]any{"name": "lake2", "type": "hive"}), 400, metasrv.ErrBadRequest, "catalog type"},
		{"a role granting on an object that does not exist",
			with(func(s *metasrv.Seed) {
				s.Commands[3] = catalog.CreateRole{Name: "reader", Grants: []catalog.Grant{
					{Object: catalog.Catalog("nowhere"), Privilege: catalog.PrivUseCatalog, Condition: catalog.Allow}}}
			}),
			alice("POST", "/roles", `{"name":"r2","securableObjects":[{"type":"catalog","fullName":"nowhere","privileges":[{"name":"USE_CATALOG","condition":"ALLOW"}]}]}`),
			404, catalog.ErrNotFound, "nowhere"},
		{"created by someone who is no operator",
			with(func(s *metasrv.Seed) { s.Operator = "alice@acme" }),
			call{method: "POST", path: "/api/metalakes", token: tokAlice, body: map[string]any{"name": lake, "owner": "alice@acme"}}, 403, metasrv.ErrForbidden, "no operator"},
		{"created by an unknown principal",
			with(func(s *metasrv.Seed) { s.Operator = "mallory" }),
			call{}, 0, metasrv.ErrForbidden, "no operator"},
		{"a command that is no seed command",
			with(func(s *metasrv.Seed) {
				s.Commands = append(s.Commands, catalog.CreateTable{Name: "lake.sales.t", Columns: []catalog.ColumnDef{{Name: "id", Type: "int64"}}})
			}),
			call{}, 0, metasrv.ErrBadRequest, "not a seed command"},
		{"a seed that starts with a grant",
			with(func(s *metasrv.Seed) { s.Commands = s.Commands[4:] }),
			call{}, 0, metasrv.ErrBadRequest, "first command creates"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.rest.method != "" {
				if r := do(t, n, c.rest); r.status != c.status {
					t.Fatalf("REST answers %d to the same write, want %d: %s", r.status, c.status, r.raw)
				}
			}
			err := n.Bootstrap(ctx, c.seed)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.shown) {
				t.Fatalf("Bootstrap: %v, want an error wrapping %v that shows %q", err, c.want, c.shown)
			}
			if strings.ContainsAny(err.Error(), "\u200b\u202e\u2028\u200e") {
				t.Errorf("the error holds the refused character: %q", err)
			}
			if _, ok := n.FSM().Lake(c.seed.Metalake); ok {
				t.Fatalf("metalake %q exists after a refused seed", c.seed.Metalake)
			}
		})
	}
	found := false
	for _, e := range n.Audit().Events(lake, 0, 0, 1000) {
		if e.Operation == "Bootstrap" && e.Outcome == catalog.Failure && strings.Contains(e.Detail, `"lakeU+200B"`) {
			found = true
		}
	}
	if !found {
		t.Error("no audit event for the refused seed")
	}
}

// TestBootstrapAppliesOnce: a seed creates its metalake and governance; a
// second Bootstrap changes nothing; a metalake whose governance is missing
// (a start interrupted between the two proposals) gets it; what the seed
// made is what REST shows.
func TestBootstrapAppliesOnce(t *testing.T) {
	n := startSolo(t, principals(t), "n1")
	waitLeader(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.Bootstrap(ctx, demoLikeSeed("acme")); err != nil {
		t.Fatal(err)
	}
	gen, _ := n.Generation("acme")
	if err := n.Bootstrap(ctx, demoLikeSeed("acme")); err != nil {
		t.Fatal(err)
	}
	if g, _ := n.Generation("acme"); g != gen {
		t.Fatalf("a second Bootstrap moved the generation from %d to %d", gen, g)
	}
	r := must(t, n, call{method: "GET", path: ml, token: tokAlice})
	if m := r.body["metalake"].(map[string]any); m["owner"] != "alice@acme" || m["comment"] != "seeded" {
		t.Fatalf("metalake: %s", r.raw)
	}
	r = must(t, n, call{method: "GET", path: ml + "/users/bob@acme", token: tokAlice})
	if roles, _ := r.body["user"].(map[string]any)["roles"].([]any); len(roles) != 1 || roles[0] != "reader" {
		t.Fatalf("user: %s", r.raw)
	}
	must(t, n, call{method: "GET", path: ml + "/catalogs/lake/schemas/sales", token: tokAlice})

	// Interrupted: the metalake exists, its governance does not.
	must(t, n, call{method: "POST", path: "/api/metalakes", token: tokAdmin, body: map[string]any{"name": "other", "owner": "eve@other"}})
	seed := demoLikeSeed("other")
	seed.Owner = "eve@other"
	if err := n.Bootstrap(ctx, seed); err != nil {
		t.Fatal(err)
	}
	must(t, n, call{method: "GET", path: "/api/metalakes/other/catalogs/lake", token: tokEve})
}
