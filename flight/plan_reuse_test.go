package flight

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"lakegate/authz"
	"lakegate/flight/backend"
)

// TestStatementPlanReuseIsPerCaller: a plan reused for one principal is
// never another's, and never outlives the caller's grant. carol, who may not
// read namespace sales, runs the text alice's plan was made for and is
// refused as for a missing table; alice's SELECT 1 is planned once and
// answered again from its plan; once the grant on the table is withdrawn,
// alice's kept plan is refused as for a missing table.
func TestStatementPlanReuseIsPerCaller(t *testing.T) {
	l, counter := countingLake(t)
	cl := l.client(t)
	seedOrders(t, cl)
	const text = "SELECT id, amount FROM sales.orders ORDER BY id"
	for range 2 {
		if _, err := runQuery(bearerCtx(aliceToken), cl, text); err != nil {
			t.Fatal(err)
		}
	}
	_, err := runQuery(bearerCtx(carolToken), cl, text)
	checkStatus(t, err, codes.NotFound, "table sales.orders does not exist")

	before := counter.describes.Load()
	for i := range 3 {
		rows, err := runQuery(bearerCtx(aliceToken), cl, "SELECT 1 AS one")
		if err != nil || !slices.EqualFunc(rows, [][]string{{"1"}}, slices.Equal) {
			t.Fatalf("run %d: %v, %v", i, rows, err)
		}
	}
	if n := counter.describes.Load() - before; n != 1 {
		t.Errorf("three runs of SELECT 1 described it %d times, want 1", n)
	}

	// The grant on the table withdrawn: alice's next run of the text her
	// plan was kept for is refused as for a missing table.
	l.cat.hide("sales.orders")
	_, err = runQuery(bearerCtx(aliceToken), cl, text)
	checkStatus(t, err, codes.NotFound, "table sales.orders does not exist")
}

// TestStatementPlanReuseCarriesNoCaller: a policy that reads the caller
// (current_user()) is printed into the plan's SQL for the principal it was
// made for, so another principal of the same namespace, under the same
// policy, running the same text, gets a plan of its own: bob never reads
// alice's rows through her kept plan.
func TestStatementPlanReuseCarriesNoCaller(t *testing.T) {
	const bobToken = "lg_bob_token"
	l := newLake(t, func(c *Config) {
		pm, err := c.Principals.With(principalIn(t, "bob@acme", "sales"), authz.HashToken(bobToken))
		if err != nil {
			t.Fatal(err)
		}
		c.Principals = pm
	})
	cl := l.client(t)
	seedOrders(t, cl)
	l.cat.set("sales.orders", func(tb *lakeTable) {
		tb.versions[len(tb.versions)-1].Policy = &backend.TablePolicy{RowFilter: "current_user() = 'alice@acme'", FilterPolicy: "alice_only"}
	})
	const text = "SELECT id, amount FROM sales.orders ORDER BY id"
	for range 2 {
		rows, err := runQuery(bearerCtx(aliceToken), cl, text)
		if err != nil || len(rows) != 2 {
			t.Fatalf("alice: %v, %v", rows, err)
		}
	}
	rows, err := runQuery(bearerCtx(bobToken), cl, text)
	if err != nil || len(rows) != 0 {
		t.Fatalf("bob read %v (%v) through the row filter that keeps only alice's rows", rows, err)
	}
}
