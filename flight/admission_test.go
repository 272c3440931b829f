package flight

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// long is a queue deadline no test should reach.
const long = time.Minute

func mustAcquire(t *testing.T, a *admission, tenant string) func() {
	t.Helper()
	release, err := a.acquire(context.Background(), tenant)
	if err != nil {
		t.Fatalf("acquire(%q): %v", tenant, err)
	}
	return release
}

// held reports the permits taken from tenant's semaphore and the global one.
func held(a *admission, tenant string) (int, int) {
	return len(a.tenantSem(tenant)), len(a.global)
}

func TestAdmissionPerTenantLimit(t *testing.T) {
	// A free permit is taken even with a tiny deadline, and a held one is never
	// available, so the results do not depend on timing.
	a := newAdmission(workExecute, 1, 10, time.Millisecond)
	relA := mustAcquire(t, a, "a")
	defer relA()
	if _, err := a.acquire(context.Background(), "a"); !errors.Is(err, errTooManyQueries) {
		t.Fatalf("second query of tenant a: err = %v, want errTooManyQueries", err)
	}
	relB := mustAcquire(t, a, "b")
	defer relB()
	if tn, g := held(a, "a"); tn != 1 || g != 2 {
		t.Fatalf("held = tenant %d, global %d; want 1, 2", tn, g)
	}
}

func TestAdmissionGlobalLimit(t *testing.T) {
	a := newAdmission(workExecute, 2, 2, time.Millisecond)
	relA := mustAcquire(t, a, "a")
	defer relA()
	relB := mustAcquire(t, a, "b")
	defer relB()
	for _, tenant := range []string{"a", "c"} {
		if _, err := a.acquire(context.Background(), tenant); !errors.Is(err, errTooManyQueries) {
			t.Fatalf("tenant %s over the global limit: err = %v, want errTooManyQueries", tenant, err)
		}
	}
	// The failed attempts took their tenant permit first and gave it back.
	if tn, g := held(a, "a"); tn != 1 || g != 2 {
		t.Fatalf("tenant a: held = tenant %d, global %d; want 1, 2", tn, g)
	}
	if tn, _ := held(a, "c"); tn != 0 {
		t.Fatalf("tenant c holds %d permits after failing, want 0", tn)
	}
}

func TestAdmissionQueueDeadline(t *testing.T) {
	a := newAdmission(workExecute, 1, 1, 20*time.Millisecond)
	rel := mustAcquire(t, a, "a")
	start := time.Now()
	_, err := a.acquire(context.Background(), "b")
	if !errors.Is(err, errTooManyQueries) {
		t.Fatalf("err = %v, want errTooManyQueries", err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("failed after %s, before the queue deadline", d)
	}
	if tn, g := held(a, "b"); tn != 0 || g != 1 {
		t.Fatalf("after the deadline: held = tenant %d, global %d; want 0, 1", tn, g)
	}
	rel()
	if tn, g := held(a, "a"); tn != 0 || g != 0 {
		t.Fatalf("after release: held = tenant %d, global %d; want 0, 0", tn, g)
	}
	mustAcquire(t, a, "b")()
}

func TestAdmissionContextCancelledWhileQueued(t *testing.T) {
	for _, blockOn := range []string{"tenant", "global"} {
		t.Run(blockOn, func(t *testing.T) {
			a := newAdmission(workExecute, 1, 1, long)
			holder := "x"
			if blockOn == "tenant" {
				holder = "a"
			}
			rel := mustAcquire(t, a, holder)
			defer rel()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := a.acquire(ctx, "a")
				done <- err
			}()
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			case <-time.After(long / 2):
				t.Fatal("acquire did not return after its context was cancelled")
			}
			want := 0
			if holder == "a" {
				want = 1
			}
			if tn, g := held(a, "a"); tn != want || g != 1 {
				t.Fatalf("held = tenant %d, global %d; want %d, 1", tn, g, want)
			}
		})
	}
}

func TestAdmissionReleaseIdempotentAndWakesWaiter(t *testing.T) {
	a := newAdmission(workExecute, 1, 1, long)
	rel := mustAcquire(t, a, "a")
	got := make(chan func(), 1)
	errc := make(chan error, 1)
	go func() {
		r, err := a.acquire(context.Background(), "a")
		if err != nil {
			errc <- err
			return
		}
		got <- r
	}()
	rel()
	var relWaiter func()
	select {
	case relWaiter = <-got:
	case err := <-errc:
		t.Fatalf("waiter: %v", err)
	case <-time.After(long / 2):
		t.Fatal("waiter did not proceed after release")
	}
	// A second call of the first release must not free the waiter's permits.
	rel()
	if tn, g := held(a, "a"); tn != 1 || g != 1 {
		t.Fatalf("after double release: held = tenant %d, global %d; want 1, 1", tn, g)
	}
	relWaiter()
	relWaiter()
	if tn, g := held(a, "a"); tn != 0 || g != 0 {
		t.Fatalf("after releasing all: held = tenant %d, global %d; want 0, 0", tn, g)
	}
}

func TestAdmissionStress(t *testing.T) {
	const perTenant, global, tenants, workers, rounds = 2, 3, 4, 32, 50
	a := newAdmission(workExecute, perTenant, global, long)
	var total atomic.Int32
	var byTenant [tenants]atomic.Int32
	var violations atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ti := w % tenants
			tenant := fmt.Sprintf("t%d", ti)
			for range rounds {
				release, err := a.acquire(context.Background(), tenant)
				if err != nil {
					t.Errorf("acquire: %v", err)
					return
				}
				if n := total.Add(1); n > global {
					violations.Add(1)
				}
				if n := byTenant[ti].Add(1); n > perTenant {
					violations.Add(1)
				}
				byTenant[ti].Add(-1)
				total.Add(-1)
				release()
				release()
			}
		})
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d times more holders than the limits", v)
	}
	if g := len(a.global); g != 0 {
		t.Fatalf("%d global permits leaked", g)
	}
	for ti := range tenants {
		if tn, _ := held(a, fmt.Sprintf("t%d", ti)); tn != 0 {
			t.Fatalf("tenant t%d leaked %d permits", ti, tn)
		}
	}
}

func TestAdmissionErrorStatus(t *testing.T) {
	for _, err := range []error{errTooManyQueries, fmt.Errorf("admission: %w", errTooManyQueries)} {
		st := status.Convert(toStatus(err))
		if st.Code() != codes.ResourceExhausted || st.Message() != "too many concurrent queries; try again" {
			t.Errorf("toStatus(%v) = %v %q, want ResourceExhausted", err, st.Code(), st.Message())
		}
	}
}

func TestConfigValidateAdmission(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative per tenant", Config{MaxConcurrentPerTenant: -1}, "MaxConcurrentPerTenant is negative"},
		{"negative global", Config{MaxConcurrent: -1}, "MaxConcurrent is negative"},
		{"negative queue timeout", Config{QueueTimeout: -time.Second}, "QueueTimeout is negative"},
		{"per tenant above global", Config{MaxConcurrentPerTenant: 8, MaxConcurrent: 4}, "exceeds"},
		{"per tenant above default global", Config{MaxConcurrentPerTenant: 17}, "exceeds"},
		{"global below default per tenant", Config{MaxConcurrent: 2}, "exceeds"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	ok := Config{MaxConcurrentPerTenant: 2, MaxConcurrent: 2}
	if err := ok.Validate(); err != nil && strings.Contains(err.Error(), "Concurrent") {
		t.Errorf("valid limits rejected: %v", err)
	}
}

// TestPlanningAdmission: planning a statement and listing tables take a
// planning permit of the caller's tenant, before any call to the catalog;
// with none free the caller gets ResourceExhausted, and a tenant's running
// statements (execution permits) never hold up its planning.
func TestPlanningAdmission(t *testing.T) {
	cat := &metricsCatalog{schemas: []string{"sales"}}
	s, _ := newTestServer(t, cat, func(c *Config) {
		c.MaxConcurrentPerTenant = 1
		c.QueueTimeout = time.Millisecond // a held permit never frees up here
	})
	plan := func() error {
		return unary(s, withToken(aliceToken), methodGetFlightInfo, func(ctx context.Context) error {
			_, err := s.GetFlightInfoStatement(ctx, query("SELECT * FROM sales.orders"), nil)
			return err
		})
	}
	list := func() error {
		return unary(s, withToken(aliceToken), methodDoGet, func(ctx context.Context) error {
			_, ch, err := s.DoGetTables(ctx, getTables{})
			drain(ch)
			return err
		})
	}
	wantCode := func(what string, err error, want codes.Code) {
		t.Helper()
		if got := status.Code(err); got != want {
			t.Fatalf("%s: code %v (%v), want %v", what, got, err, want)
		}
	}

	// Every execution permit of the tenant held: planning goes on.
	release := mustAcquire(t, s.admitExecute, "acme")
	wantCode("plan while the tenant's queries run", plan(), codes.NotFound) // planned: the table is not visible
	wantCode("list while the tenant's queries run", list(), codes.OK)
	release()
	if n := cat.resolveCalls(); n != 1 {
		t.Fatalf("catalog resolves = %d, want 1", n)
	}

	// Every planning permit of the tenant held: refused before the catalog.
	release = mustAcquire(t, s.admitPlan, "acme")
	wantCode("plan without a planning permit", plan(), codes.ResourceExhausted)
	wantCode("list without a planning permit", list(), codes.ResourceExhausted)
	if n := cat.resolveCalls(); n != 1 {
		t.Fatalf("catalog resolves = %d after refused planning, want still 1", n)
	}
	if tn, g := held(s.admitExecute, "acme"); tn != 0 || g != 0 {
		t.Fatalf("execution permits held = tenant %d, global %d; want 0, 0", tn, g)
	}
	release()

	// Planning gives its permit back, whatever the outcome.
	wantCode("plan", plan(), codes.NotFound)
	wantCode("list", list(), codes.OK)
	if tn, g := held(s.admitPlan, "acme"); tn != 0 || g != 0 {
		t.Fatalf("planning permits held after planning = tenant %d, global %d; want 0, 0", tn, g)
	}
}
