package flight

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"lakegate/authz"
	"lakegate/flight/backend"
)

// TestStatementPlanReuseAcrossChanges runs one plain statement again and
// again (GetFlightInfo + DoGet) while its table and policies change under
// it: its plan is reused (no parse, render or Describe) while nothing it
// depends on changed, and never across a change. A row filter or a mask set
// between two runs applies to the very next one, and so does its removal; a
// new version is read by the next run; a dropped table fails the next run as
// a missing one. Another principal running the same text gets its own
// answer, never the plan of the first.
func TestStatementPlanReuseAcrossChanges(t *testing.T) {
	var counter *describeCounter
	l := newLake(t, func(c *Config) {
		counter = &describeCounter{Backend: c.Backend}
		c.Backend = counter
	})
	cl := l.client(t)
	seedOrders(t, cl)
	ctx := bearerCtx(aliceToken)
	const text = "SELECT id, amount FROM sales.orders ORDER BY id"
	setPolicy := func(p *backend.TablePolicy) {
		l.cat.set("sales.orders", func(tb *lakeTable) { tb.versions[len(tb.versions)-1].Policy = p })
	}
	both := [][]string{{"1", "1.5"}, {"2", "2.5"}}
	for _, step := range []struct {
		name     string
		change   func()
		want     [][]string
		code     codes.Code
		describe bool // the run plans the statement again
	}{
		{"first", func() {}, both, codes.OK, true},
		{"unchanged", func() {}, both, codes.OK, false},
		{"generation moved, nothing else", func() { l.cat.set("sales.orders", func(*lakeTable) {}) }, both, codes.OK, false},
		{"row filter set", func() { setPolicy(&backend.TablePolicy{RowFilter: "id <> 2", FilterPolicy: "no_two"}) }, [][]string{{"1", "1.5"}}, codes.OK, true},
		{"row filter kept", func() {}, [][]string{{"1", "1.5"}}, codes.OK, false},
		{"mask set", func() {
			setPolicy(&backend.TablePolicy{Masks: []backend.ColumnMask{{Column: "amount", Mask: "NULL", Policy: "hide_amount"}}})
		}, [][]string{{"1", "(null)"}, {"2", "(null)"}}, codes.OK, true},
		{"policies removed", func() { setPolicy(nil) }, both, codes.OK, true},
		{"new version", func() {
			if _, err := cl.ExecuteUpdate(ctx, "INSERT INTO sales.orders VALUES (3, 3.5)"); err != nil {
				t.Fatal(err)
			}
		}, append(slices.Clone(both), []string{"3", "3.5"}), codes.OK, true},
		{"table dropped", func() {
			if _, err := cl.ExecuteUpdate(ctx, "DROP TABLE sales.orders"); err != nil {
				t.Fatal(err)
			}
		}, nil, codes.NotFound, false},
	} {
		step.change()
		before := counter.describes.Load()
		rows, err := runQuery(ctx, cl, text)
		if step.code != codes.OK {
			checkStatus(t, err, step.code, "table sales.orders does not exist")
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if !slices.EqualFunc(rows, step.want, slices.Equal) {
			t.Errorf("%s: rows %v, want %v", step.name, rows, step.want)
		}
		if planned := counter.describes.Load() > before; planned != step.describe {
			t.Errorf("%s: planned again = %v, want %v", step.name, planned, step.describe)
		}
	}
}

// TestStatementPlanReuseIsPerCaller: a plan reused for one principal is
// never another's, and never outlives the caller's grant. carol, who may not
// read namespace sales, runs the text alice's plan was made for and is
// refused as for a missing table; alice's SELECT 1 is planned once and
// answered again from its plan; once the grant on the table is withdrawn,
// alice's kept plan is refused as for a missing table.
func TestStatementPlanReuseIsPerCaller(t *testing.T) {
	var counter *describeCounter
	l := newLake(t, func(c *Config) {
		counter = &describeCounter{Backend: c.Backend}
		c.Backend = counter
	})
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
