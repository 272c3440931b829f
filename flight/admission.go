package flight

import (
	"context"
	"errors"
	"sync"
	"time"

	"lakegate/authz"
)

// errTooManyQueries reports a statement that could not be admitted: its
// tenant's or the global concurrency limit stayed full for the whole queue
// deadline, or its context ended while it waited. toStatus maps it to
// ResourceExhausted.
var errTooManyQueries = errors.New("too many concurrent queries; try again")

// admission bounds concurrent work of one kind, per tenant and overall. A
// request first takes a permit of its tenant's semaphore, then a global one;
// it either gets both within the queue deadline or holds nothing. Waiters are
// not served in any particular order. A Server has two: one for executing
// statements, one for planning them and listing what a caller may see (see
// Server.admitPlanning), so neither kind of work can hold the permits the other
// needs.
type admission struct {
	// work names what the permits are for in metrics: workExecute or
	// workPlan.
	work      string
	perTenant int
	timeout   time.Duration
	global    chan struct{}
	// metrics counts outcomes; nil counts nothing. Set before first use.
	metrics *Metrics
	// yield, if set, is asked to give back a permit held by work that
	// need not run (a speculation, speculate.go) when a request finds no
	// free permit: one of tenant's, or with anyTenant of any tenant's for a
	// global permit. It reports whether it gave one back. Set before first
	// use.
	yield func(tenant string, anyTenant bool) bool

	mu sync.Mutex
	// tenants holds one semaphore per tenant, created on first use. Tenants
	// come from the principal map, so the map is bounded by it.
	tenants map[string]chan struct{}
}

// newAdmission returns an admission for work with perTenant permits per
// tenant, global permits in all, and a queue deadline of timeout. All must be
// positive.
func newAdmission(work string, perTenant, global int, timeout time.Duration) *admission {
	return &admission{
		work:      work,
		perTenant: perTenant,
		timeout:   timeout,
		global:    make(chan struct{}, global),
		tenants:   map[string]chan struct{}{},
	}
}

func (a *admission) tenantSem(tenant string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	sem, ok := a.tenants[tenant]
	if !ok {
		sem = make(chan struct{}, a.perTenant)
		a.tenants[tenant] = sem
	}
	return sem
}

// acquire waits for a permit of tenant's semaphore and then a global one. On
// success the returned release frees both; it is safe to call more than once
// and from any goroutine. On failure it holds nothing and returns
// errTooManyQueries when the queue deadline passed, or ctx's error when the
// caller went away or cancelled the query while it was queued.
func (a *admission) acquire(ctx context.Context, tenant string) (release func(), err error) {
	defer func() { a.metrics.admitted(a.work, err) }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	timer := time.NewTimer(a.timeout)
	defer timer.Stop()
	sem := a.tenantSem(tenant)
	if err := a.wait(ctx, timer.C, sem, tenant, false); err != nil {
		return nil, err
	}
	if err := a.wait(ctx, timer.C, a.global, tenant, true); err != nil {
		<-sem
		return nil, err
	}
	return a.releaser(sem), nil
}

// tryAcquire is acquire without a queue: it takes tenant's permit and a
// global one if both are free now, and otherwise holds nothing and returns
// errTooManyQueries without counting a rejection (nobody waited).
func (a *admission) tryAcquire(_ context.Context, tenant string) (func(), error) {
	sem := a.tenantSem(tenant)
	if !take(sem) {
		return nil, errTooManyQueries
	}
	if !take(a.global) {
		<-sem
		return nil, errTooManyQueries
	}
	a.metrics.admitted(a.work, nil)
	return a.releaser(sem), nil
}

// releaser returns the release of a tenant permit of sem and a global one:
// safe to call more than once and from any goroutine.
func (a *admission) releaser(sem chan struct{}) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			<-a.global
			<-sem
		})
	}
}

// wait takes one permit of sem unless the deadline fires or ctx ends first.
// Before it queues, it asks yield for a permit of tenant (any tenant's with
// anyTenant).
func (a *admission) wait(ctx context.Context, deadline <-chan time.Time, sem chan struct{}, tenant string, anyTenant bool) error {
	// Prefer a free permit over an already-fired deadline or ended context.
	if take(sem) || a.yield != nil && a.yield(tenant, anyTenant) && take(sem) {
		return nil
	}
	select {
	case sem <- struct{}{}:
		return nil
	case <-deadline:
		return errTooManyQueries
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take takes a permit of sem if one is free now.
func take(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		return false
	}
}

// admitPlanning takes a planning permit of p's tenant for the work of one request
// before any execution: parsing and gating a statement, authorizing it
// through the catalog and describing it in the engine, or listing what the
// caller may see (GetDbSchemas, GetTables, SHOW). These calls hold no
// execution permit, so without their own bound a tenant could keep every core
// of the replica planning; they have their own permits so that a tenant's
// running queries never make its next statement wait to be planned. Callers
// take it at the RPC's entry, once: a permit is never taken while holding
// another of the same kind.
func (s *Server) admitPlanning(ctx context.Context, p *authz.Principal) (release func(), err error) {
	return s.admitPlan.acquire(ctx, p.Tenant().String())
}
