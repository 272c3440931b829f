package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// Budget tests use tenants with a 64 MB memory limit that reserve 1 MiB
// while idle, and a budget of one tenant at its limit plus idle room for
// extra, in units of idle reservations (times two: 5 is 2.5 of them).
const (
	budgetLimit = "64MB"
	budgetIdle  = 1 << 20
	budgetFull  = 64e6 + budgetIdle
)

// fakeClock is an engine clock the test moves on.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Pass moves the clock past the grace that protects a tenant just used
// from eviction.
func (c *fakeClock) Pass() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(2 * time.Second)
}

// newBudgetEngine returns an engine whose budget holds one tenant at its
// limit and halfIdles/2 idle reservations besides, on a clock the test
// moves.
func newBudgetEngine(t *testing.T, halfIdles int64) (*duckdb.Engine, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e, _ := newEngine(t, func(c *duckdb.Config) {
		c.MemoryLimit = budgetLimit
		c.IdleTenantBytes = budgetIdle
		c.MemoryBudget = budgetFull + halfIdles*budgetIdle/2
		c.MemoryWait = time.Hour // waits end by the test's doing, not the clock's
		c.Threads = 1
		c.Now = clock.Now
	})
	return e, clock
}

// wantOpen checks which tenants have an open instance.
func wantOpen(t *testing.T, e *duckdb.Engine, open map[string]bool) {
	t.Helper()
	for tenant, want := range open {
		if got := e.TenantOpen(tenant); got != want {
			t.Errorf("tenant %s open = %v, want %v", tenant, got, want)
		}
	}
}

// wantWithinBudget checks the accounting's invariant.
func wantWithinBudget(t *testing.T, e *duckdb.Engine) duckdb.BudgetStats {
	t.Helper()
	st := e.Budget()
	if st.Reserved > st.Budget || st.Reserved < 0 {
		t.Fatalf("reserved %d of a budget of %d", st.Reserved, st.Budget)
	}
	return st
}

// TestBudgetEvictsLeastRecentlyUsed: when a tenant's statement needs its
// memory limit and the budget is full of idle tenants, the least recently
// used idle tenant is closed to make room, and only that one.
func TestBudgetEvictsLeastRecentlyUsed(t *testing.T) {
	e, clock := newBudgetEngine(t, 3) // one at its limit, two idle, and half an idle one
	for _, tenant := range []string{"a", "b"} {
		mustQuery(t, e, tenant, "SELECT 1 AS x")
		clock.Pass()
	}
	if st := wantWithinBudget(t, e); st.Reserved != 2*budgetIdle || st.Evicted != 0 {
		t.Fatalf("after two idle tenants: %+v", st)
	}
	mustQuery(t, e, "a", "SELECT 2 AS x") // a is now used more recently than b
	clock.Pass()
	r := mustQuery(t, e, "c", "SELECT 3 AS x")
	if r.values[0][0] != int32(3) {
		t.Fatalf("c answered %v", r.values)
	}
	st := wantWithinBudget(t, e)
	if st.Evicted != 1 || st.Open != 2 || st.Reserved != 2*budgetIdle {
		t.Fatalf("after c: %+v, want b evicted and two idle tenants", st)
	}
	wantOpen(t, e, map[string]bool{"a": true, "b": false, "c": true})
}

// TestBudgetNeverEvictsRunning: a tenant whose statement is still being
// read is never evicted; another tenant that needs room waits, and fails
// with ErrMemoryBudget (ResourceExhausted) when its context ends, while
// the running statement reads on unharmed. Once it ends, the other runs.
func TestBudgetNeverEvictsRunning(t *testing.T) {
	e, clock := newBudgetEngine(t, 2)
	mustQuery(t, e, "b", "SELECT 1 AS x") // b is open and idle
	rr, err := e.Execute(context.Background(), "a", "SELECT range AS n FROM range(300000)", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	rows := rr.RecordBatch().NumRows()
	clock.Pass()

	ctx, cancel := context.WithCancel(context.Background())
	e.OnBudgetWait(cancel) // b's statement gives up as soon as it has to wait
	_, err = query(ctx, e, "b", "SELECT 2 AS x")
	e.OnBudgetWait(nil)
	if !errors.Is(err, duckdb.ErrMemoryBudget) || !errors.Is(err, backend.ErrResources) || !errors.Is(err, backend.ErrMemoryBudget) {
		t.Fatalf("b's statement: %v, want ErrMemoryBudget wrapping backend.ErrResources", err)
	}
	wantOpen(t, e, map[string]bool{"a": true, "b": true})
	if st := wantWithinBudget(t, e); st.Refused != 1 || st.Evicted != 0 {
		t.Fatalf("%+v, want one refusal and no eviction", st)
	}

	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	if rr.Err() != nil || rows != 300000 {
		t.Fatalf("a read %d rows: %v", rows, rr.Err())
	}
	rr.Release()
	if r := mustQuery(t, e, "b", "SELECT 2 AS x"); r.values[0][0] != int32(2) {
		t.Fatalf("b answered %v", r.values)
	}
	wantWithinBudget(t, e)
}

// TestBudgetWaitsForRoom: a statement that finds the budget held by a
// running statement waits for it to end, then runs.
func TestBudgetWaitsForRoom(t *testing.T) {
	e, _ := newBudgetEngine(t, 2)
	mustQuery(t, e, "b", "SELECT 1 AS x")
	rr, err := e.Execute(context.Background(), "a", "SELECT 1 AS x", nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	var once sync.Once
	e.OnBudgetWait(func() { once.Do(func() { close(waiting) }) })
	done := make(chan error, 1)
	go func() {
		r, err := query(context.Background(), e, "b", "SELECT 7 AS x")
		if err == nil && r.values[0][0] != int32(7) {
			err = fmt.Errorf("b answered %v", r.values)
		}
		done <- err
	}()
	<-waiting
	rr.Release() // a's statement ends: b's gets its room
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := wantWithinBudget(t, e); st.Evicted != 0 || st.Refused != 0 {
		t.Fatalf("%+v", st)
	}
}

// TestBudgetEvictedTenantReopens: an idle tenant holding an in-memory copy
// reserves what the copy takes (more than its idle cost, less than its
// limit); evicted, it opens again on its next call and answers from its
// files as before.
func TestBudgetEvictedTenantReopens(t *testing.T) {
	e, clock := newBudgetEngine(t, 2)
	rel := bindTable(t, e, "a", "t@1", "SELECT range AS n, 'v' || range AS s FROM range(10)")
	sql := "SELECT count(*) AS c, max(s) AS top FROM " + relSQL(rel)
	want := []any{int64(10), "v9"}
	check := func() {
		t.Helper()
		r := mustQuery(t, e, "a", sql)
		if fmt.Sprint(r.values[0]) != fmt.Sprint(want) {
			t.Fatalf("a answered %v, want %v", r.values[0], want)
		}
	}
	check()
	if !e.InMemory("a", []string{"t@1"}) {
		t.Fatal("the version was not copied into memory")
	}
	if st := wantWithinBudget(t, e); st.Active != 1 || st.Reserved <= budgetIdle || st.Reserved >= budgetFull {
		t.Fatalf("a holds a copy: %+v, want more than its idle cost and less than its limit", st)
	}
	clock.Pass()
	mustQuery(t, e, "b", "SELECT 1 AS x") // needs the room of a's copy
	wantOpen(t, e, map[string]bool{"a": false, "b": true})
	if e.InMemory("a", []string{"t@1"}) {
		t.Fatal("an evicted tenant's copy is still reported in memory")
	}
	clock.Pass()
	bindTable(t, e, "a", "t@1", "SELECT range AS n, 'v' || range AS s FROM range(10)")
	check()
	if st := wantWithinBudget(t, e); st.Evicted != 1 || st.Active != 1 {
		t.Fatalf("%+v, want a evicted once and holding its copy again", st)
	}
}

// TestBudgetConcurrent: tenants racing for a budget that holds one at its
// limit all get their answers (each waits its turn) and the reservations
// never exceed the budget (run with -race).
func TestBudgetConcurrent(t *testing.T) {
	e, _ := newBudgetEngine(t, 8)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tenant := fmt.Sprintf("t%d", g%4)
			for i := range 5 {
				r, err := query(context.Background(), e, tenant, fmt.Sprintf("SELECT %d AS x", i))
				if err == nil && r.values[0][0] != int32(i) {
					err = fmt.Errorf("%s answered %v", tenant, r.values)
				}
				if err != nil {
					errs <- err
				}
				if st := e.Budget(); st.Reserved > st.Budget {
					errs <- fmt.Errorf("reserved %d of %d", st.Reserved, st.Budget)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := wantWithinBudget(t, e); st.Open != 4 || st.Reserved != 4*budgetIdle || st.Active != 0 {
		t.Fatalf("at rest: %+v", st)
	}
}

// TestBudgetValidate: a budget must hold one tenant at its limit.
func TestBudgetValidate(t *testing.T) {
	for _, c := range []struct {
		budget int64
		ok     bool
	}{
		{0, true},
		{budgetFull, true},
		{budgetFull - 1, false},
		{-1, false},
	} {
		err := duckdb.Config{Root: "x", MemoryLimit: budgetLimit, IdleTenantBytes: budgetIdle, MemoryBudget: c.budget}.Validate()
		if (err == nil) != c.ok {
			t.Errorf("budget %d: %v", c.budget, err)
		}
	}
	for s, want := range map[string]int64{"1GB": 1e9, "512MiB": 512 << 20, "1.5GB": 15e8, "100 B": 100, "4096bytes": 4096} {
		if got, err := duckdb.ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
}

// TestIdleTenantKeepsNoFileCache: a tenant that has scanned a version's
// files holds none of their bytes once its statement ends. DuckDB's
// external file cache would keep them in the buffer manager up to the
// memory limit, while the budget counts an idle tenant at
// IdleTenantBytes.
func TestIdleTenantKeepsNoFileCache(t *testing.T) {
	e, _ := newEngine(t, func(c *duckdb.Config) { c.MaterializeBytes = -1 })
	rel := bindTable(t, e, "acme", "big@1", "SELECT range AS n, md5(range::VARCHAR) AS s FROM range(300000)")
	if r := mustQuery(t, e, "acme", "SELECT count(DISTINCT s) AS c FROM "+relSQL(rel)); r.values[0][0] != int64(300000) {
		t.Fatalf("count = %v", r.values)
	}
	r := mustQuery(t, e, "acme", "SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT AS b FROM duckdb_memory() WHERE tag = 'EXTERNAL_FILE_CACHE'")
	if r.values[0][0] != int64(0) {
		t.Fatalf("the idle tenant keeps %v bytes of file cache", r.values[0][0])
	}
}

// TestBudgetWaiterEndsWithClose: a statement waiting for room fails with
// ErrClosed when the engine closes, without waiting for its context.
func TestBudgetWaiterEndsWithClose(t *testing.T) {
	e, _ := newBudgetEngine(t, 2)
	mustQuery(t, e, "b", "SELECT 1 AS x")
	rr, err := e.Execute(context.Background(), "a", "SELECT 1 AS x", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	waiting := make(chan struct{})
	var once sync.Once
	e.OnBudgetWait(func() { once.Do(func() { close(waiting) }) })
	done := make(chan error, 1)
	go func() {
		_, err := query(context.Background(), e, "b", "SELECT 2 AS x")
		done <- err
	}()
	<-waiting
	closed := make(chan error, 1)
	go func() { closed <- e.Close() }()
	if err := <-done; !errors.Is(err, duckdb.ErrClosed) {
		t.Fatalf("the waiting statement: %v, want ErrClosed", err)
	}
	rr.Release() // Close waits for outstanding readers' connections only to close the database
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// TestBudgetWaitIsBounded: a statement that has to wait for room waits at
// most MemoryWait, even under a context without a deadline.
func TestBudgetWaitIsBounded(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e, _ := newEngine(t, func(c *duckdb.Config) {
		c.MemoryLimit, c.IdleTenantBytes, c.MemoryBudget = budgetLimit, budgetIdle, budgetFull+budgetIdle
		c.MemoryWait = time.Nanosecond // any wait at all runs out
		c.Threads = 1
		c.Now = clock.Now
	})
	mustQuery(t, e, "b", "SELECT 1 AS x")
	rr, err := e.Execute(context.Background(), "a", "SELECT 1 AS x", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	clock.Pass()
	if _, err := query(context.Background(), e, "b", "SELECT 2 AS x"); !errors.Is(err, duckdb.ErrMemoryBudget) {
		t.Fatalf("b's statement: %v, want ErrMemoryBudget", err)
	}
	if st := wantWithinBudget(t, e); st.Refused != 1 {
		t.Fatalf("%+v", st)
	}
}
