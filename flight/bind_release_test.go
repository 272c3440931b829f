package flight

import (
	"testing"
	"time"
)

// TestEngineReleasesSupersededVersions: the Flight layer ends the context
// it binds a statement's versions under once the statement ends, so once a
// later version of a table is committed and read, the embedded engine
// gives back the earlier one (here an in-memory copy) and keeps the
// current one.
func TestEngineReleasesSupersededVersions(t *testing.T) {
	l := newLake(t, nil)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	seedOrders(t, cl)
	latest := func() string {
		var id string
		l.cat.locked(func(c *lakeCatalog) {
			vs := c.tables[tableName("sales.orders")].versions
			id = vs[len(vs)-1].ID()
		})
		return id
	}
	read := func(want int) {
		t.Helper()
		rows, err := runQuery(ctx, cl, "SELECT id FROM sales.orders")
		if err != nil || len(rows) != want {
			t.Fatalf("read %d rows, %v; want %d", len(rows), err, want)
		}
	}
	engine, ok := l.srv.cfg.Backend.(interface {
		InMemory(tenant string, ids []string) bool
	})
	if !ok {
		t.Fatal("the lake's engine does not report in-memory copies")
	}
	read(2)
	v1 := latest()
	if !engine.InMemory("acme", []string{v1}) {
		t.Fatalf("%s is not held after a read", v1)
	}
	if _, err := cl.ExecuteUpdate(ctx, "INSERT INTO sales.orders VALUES (3, 1.0)"); err != nil {
		t.Fatal(err)
	}
	read(3)
	v2 := latest()
	if v2 == v1 {
		t.Fatalf("the insert committed no new version (%s)", v1)
	}
	// The statements' contexts end on the server's side as their calls
	// end, which the client may see first: wait, bounded, for the release.
	deadline := time.Now().Add(30 * time.Second)
	for engine.InMemory("acme", []string{v1}) {
		if time.Now().After(deadline) {
			t.Fatalf("%s, superseded by %s and read by no statement, is still held", v1, v2)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !engine.InMemory("acme", []string{v2}) {
		t.Fatalf("the current version %s was given back", v2)
	}
	read(3)
}
