package flight

import (
	"errors"
	"sync"
	"testing"
	"time"

	"lakegate/authz"
)

// TestPreparedStoreSameIDTwoTenants: users of two tenants with the same id
// (JWT users created on sign-in by each tenant's provider; authz keeps them
// apart by tenant) share neither prepared statements nor the per-principal
// bound: one tenant's user filling its bound leaves the other's intact.
func TestPreparedStoreSameIDTwoTenants(t *testing.T) {
	ps := newPreparedStore(time.Minute, time.Now, newSpeculations(new(sync.WaitGroup)))
	user := func(tenant string) *authz.Principal {
		id, _ := authz.ParsePrincipalID("dana")
		tid, _ := authz.ParseTenantID(tenant)
		ns, _ := authz.ParseNamespace("public")
		p, err := authz.NewPrincipal(id, tid, authz.RoleUser, []authz.Namespace{ns}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	acme, globex := user("acme"), user("globex")
	for i := 0; i < maxPreparedPerPrincipal; i++ {
		if _, err := ps.add(globex, &plan{}, nil); err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	if _, err := ps.add(globex, &plan{}, nil); !errors.Is(err, errTooManyPrepared) {
		t.Fatalf("over the bound: %v", err)
	}
	id, err := ps.add(acme, &plan{sql: "SELECT 1"}, nil)
	if err != nil {
		t.Fatalf("another tenant's user with the same id filled this one's bound: %v", err)
	}
	if _, ok := ps.get(globex, id); ok {
		t.Error("another tenant's user with the same id uses the statement")
	}
	ps.remove(globex, id)
	if _, ok := ps.get(acme, id); !ok {
		t.Error("another tenant's user with the same id closed the statement")
	}
}
