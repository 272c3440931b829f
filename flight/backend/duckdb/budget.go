package duckdb

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/duckdb/duckdb-go/v2/mapping"

	"lakegate/flight/backend"
)

// The memory budget (Config.MemoryBudget) bounds what the tenant engines
// together may hold. Each open tenant reserves from it:
//
//   - IdleTenantBytes while it runs nothing and holds no in-memory copy of
//     a table version: the measured cost of an idle instance (its catalog,
//     its connections, its worker thread);
//   - IdleTenantBytes plus its whole MemoryLimit from the moment a
//     statement (a query, a Describe, a view change of Bind) starts until
//     the last one ends: DuckDB's memory_limit bounds its buffer manager;
//   - while idle with in-memory copies of table versions, IdleTenantBytes
//     plus what its buffer manager holds then (the copies), measured when
//     they change.
//
// The reservation cannot start smaller and grow with the instance's actual
// use: memory_limit cannot be raised after lock_configuration, and the
// lockdown must not be undone. So a tenant is either idle (cheap) or holds
// its full limit.
//
// When a reservation does not fit, idle tenants (no running statement, not
// handed out within evictGrace) are closed, least recently used first, if
// that frees enough; otherwise the caller waits until a reservation is
// given back, for at most Config.MemoryWait and while its context lasts,
// and then fails with ErrMemoryBudget.

// ErrMemoryBudget reports that a statement or a tenant's instance found the
// memory budget held by other tenants' running statements until its
// context ended. It wraps backend.ErrMemoryBudget (ResourceExhausted to
// clients).
var ErrMemoryBudget = fmt.Errorf("duckdb: %w", backend.ErrMemoryBudget)

// errEvicted reports a statement that started on a tenant instance the
// budget closed after it was handed out (see evictGrace); the budget was
// under pressure, so it is the budget's answer.
var errEvicted = fmt.Errorf("%w (the tenant's engine was closed to make room)", ErrMemoryBudget)

// evictGrace protects a tenant handed out this recently from eviction: a
// caller binds a statement's versions and then executes it in two calls,
// and the instance must not change in between (its views would be
// missing). The gap is that of two consecutive calls of one request.
const evictGrace = time.Second

// DefaultIdleTenantBytes is Config.IdleTenantBytes when it is zero: the
// resident memory one idle tenant instance costs, measured by
// BenchmarkIdleTenants (docs/performance.md) and rounded up.
const DefaultIdleTenantBytes = 3 << 20

// BudgetStats is a snapshot of the memory budget.
type BudgetStats struct {
	// Budget is Config.MemoryBudget (0: none).
	Budget int64
	// Reserved is what the open tenants hold of it.
	Reserved int64
	// Open and Active count the open tenant instances and those holding
	// more than their idle cost: their memory limit while they run
	// statements, their copies' memory while they hold in-memory copies.
	Open, Active int
	// Evicted counts the idle instances closed to make room; Refused the
	// reservations that gave up when their context ended.
	Evicted, Refused uint64
}

// budget is the engine's accounting, guarded by Engine.mu.
type budget struct {
	total    int64         // Config.MemoryBudget; 0: unbounded
	used     int64         // the sum of every open tenant's held
	changed  chan struct{} // closed (and replaced) when used goes down
	evicted  uint64
	refused  uint64
	idle     int64  // Config.IdleTenantBytes
	limitFor int64  // a tenant's full reservation: idle + its memory limit
	onWait   func() // tests: called (under Engine.mu) when a reservation starts to wait
}

// Budget returns a snapshot of the memory budget.
func (e *Engine) Budget() BudgetStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := BudgetStats{Budget: e.budget.total, Reserved: e.budget.used, Evicted: e.budget.evicted, Refused: e.budget.refused}
	for _, s := range e.tenants {
		st.Open++
		if s.held > e.budget.idle {
			st.Active++
		}
	}
	return st
}

// OpenTenants reports how many tenant instances are open or opening.
func (e *Engine) OpenTenants() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.tenants)
}

// giveBack returns n bytes of s's reservation to the budget and wakes the
// waiters. The caller holds e.mu.
func (e *Engine) giveBack(s *tenantSlot, n int64) {
	if n <= 0 {
		return
	}
	s.held -= n
	e.budget.used -= n
	e.wakeBudgetWaiters()
}

// wakeBudgetWaiters wakes the reservations waiting for room to look
// again. The caller holds e.mu.
func (e *Engine) wakeBudgetWaiters() {
	if e.budget.changed != nil {
		close(e.budget.changed)
		e.budget.changed = nil
	}
}

// reserve makes s hold at least want bytes of the budget, evicting idle
// tenants to make room, and waiting (bounded by ctx) when none can be. It
// fails with errEvicted if s itself is evicted or closed meanwhile. The
// caller holds e.mu, which reserve releases while it waits and while it
// closes evicted instances.
func (e *Engine) reserve(ctx context.Context, s *tenantSlot, want int64) error {
	var timer *time.Timer
	var deadline <-chan time.Time // MemoryWait, from the first wait on
	waitedOut := false
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if e.closed {
			return ErrClosed
		}
		if s.gone {
			return errEvicted
		}
		need := want - s.held
		if need <= 0 {
			return nil
		}
		if e.budget.total == 0 || e.budget.used+need <= e.budget.total {
			s.held += need
			e.budget.used += need
			return nil
		}
		victims, wake := e.victims(e.budget.used+need-e.budget.total, s)
		if victims != nil {
			var ts []*tenant
			for _, v := range victims {
				ts = append(ts, e.evict(v))
			}
			e.budget.evicted += uint64(len(victims))
			e.mu.Unlock()
			for _, t := range ts {
				t.log.Info("tenant engine closed to make room in the memory budget")
				_ = t.close()
			}
			e.mu.Lock()
			continue
		}
		if ctx.Err() != nil || waitedOut {
			e.budget.refused++
			// Not the context's error: the wait is over, but the answer
			// is the budget's (ResourceExhausted, not Canceled).
			return fmt.Errorf("%w (no room came free in time)", ErrMemoryBudget)
		}
		if e.budget.changed == nil {
			e.budget.changed = make(chan struct{})
		}
		changed := e.budget.changed
		if e.budget.onWait != nil {
			e.budget.onWait()
		}
		var tick <-chan time.Time
		if wake > 0 {
			if timer == nil {
				timer = time.NewTimer(wake)
			} else {
				timer.Reset(wake)
			}
			tick = timer.C
		}
		if deadline == nil {
			wait := time.NewTimer(e.cfg.MemoryWait)
			defer wait.Stop()
			deadline = wait.C
		}
		e.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		case <-tick:
		case <-deadline:
			waitedOut = true
		}
		e.mu.Lock()
	}
}

// victims returns the idle tenants to evict, least recently used first,
// that free at least need bytes together, or nil if all of them would not;
// then wake is when the next tenant leaves its grace period (0: none is in
// it). A tenant is idle when it has finished opening, runs no statement
// and was handed out more than evictGrace ago. The caller holds e.mu.
func (e *Engine) victims(need int64, except *tenantSlot) (_ []*tenantSlot, wake time.Duration) {
	now := e.now()
	var idle []*tenantSlot
	var free int64
	for _, s := range e.tenants {
		if s == except || s.active > 0 || s.held == 0 {
			continue
		}
		if _, ok := s.open(); !ok {
			continue
		}
		if age := now.Sub(s.used); age <= evictGrace {
			if w := evictGrace - age + time.Millisecond; wake == 0 || w < wake {
				wake = w
			}
			continue
		}
		idle = append(idle, s)
		free += s.held
	}
	if free < need {
		return nil, wake
	}
	slices.SortFunc(idle, func(a, b *tenantSlot) int { return a.used.Compare(b.used) })
	var out []*tenantSlot
	for _, s := range idle {
		if need <= 0 {
			break
		}
		out = append(out, s)
		need -= s.held
	}
	return out, wake
}

// evict removes s from the engine and gives back its reservation, returning
// its instance for the caller to close outside e.mu. The caller holds e.mu.
func (e *Engine) evict(s *tenantSlot) *tenant {
	s.gone = true
	if e.tenants[s.id] == s {
		delete(e.tenants, s.id)
	}
	e.giveBack(s, s.held)
	return s.t
}

// activate reserves the tenant's full share before a statement runs on it
// and counts the statement; deactivate ends it. Every statement runs
// between the two (stmt begin and end).
func (t *tenant) activate(ctx context.Context) error {
	e := t.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	s := t.slot
	if err := e.reserve(ctx, s, e.budget.limitFor); err != nil {
		return err
	}
	s.active++
	return nil
}

// deactivate ends a statement started by activate. When the tenant's last
// statement ends it gives back its memory limit, keeping what its
// in-memory copies take in its buffer manager: measured (bufferBytes) the
// first time its copies are seen to have changed, then kept until they
// change again. A view change (Bind) holds t.mu around its statements:
// then the copies cannot be read and the whole limit is kept until the
// next statement ends, or the sweep (SettleBudget).
func (t *tenant) deactivate() {
	e := t.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	s := t.slot
	s.active--
	if s.active > 0 || s.gone {
		return
	}
	if e.settle(s) {
		return
	}
	copies, ok := t.copyBytes()
	if !ok {
		return
	}
	e.mu.Unlock()
	mem, err := t.bufferBytes()
	e.mu.Lock()
	if err != nil {
		t.log.Warn("measuring the memory of in-memory table versions", "error", err)
		return
	}
	s.copies, s.copyMem = copies, mem
	if s.active == 0 && !s.gone {
		e.settle(s)
	}
}

// settle shrinks an idle tenant's reservation to what it holds idle, if
// that is known: IdleTenantBytes, plus the measured memory of its copies
// if it holds any. It reports false when the copies changed since they
// were measured. The caller holds e.mu and s runs no statement.
func (e *Engine) settle(s *tenantSlot) bool {
	t := s.t
	if t == nil {
		return true
	}
	copies, ok := t.copyBytes()
	if !ok {
		return true // a view change is under way: keep the limit until it ends
	}
	target := e.budget.idle
	if copies > 0 {
		if copies != s.copies {
			return false
		}
		target = min(e.budget.idle+s.copyMem, e.budget.limitFor)
	}
	if s.held > target {
		e.giveBack(s, s.held-target)
	}
	return true
}

// copyBytes reads the file bytes of the tenant's in-memory copies, unless
// a view change holds t.mu (then ok is false: it never waits for it, and
// is called under Engine.mu, which a view change takes inside t.mu).
func (t *tenant) copyBytes() (n int64, ok bool) {
	if !t.mu.TryLock() {
		return 0, false
	}
	defer t.mu.Unlock()
	return t.materialized, true
}

// bufferBytes asks DuckDB how much its buffer manager holds: with no
// statement running and the external file cache off, the in-memory copies.
func (t *tenant) bufferBytes() (int64, error) {
	c, err := t.pool.get("", 0)
	if err != nil {
		return 0, err
	}
	defer t.pool.put(c, true)
	var res mapping.Result
	defer mapping.DestroyResult(&res)
	if mapping.Query(c.c, "SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()", &res) == mapping.StateError {
		return 0, resultError(&res)
	}
	chunk := mapping.FetchChunk(res)
	defer mapping.DestroyDataChunk(&chunk)
	if mapping.DataChunkGetSize(chunk) != 1 {
		return 0, fmt.Errorf("duckdb: duckdb_memory(): %d rows, want 1", mapping.DataChunkGetSize(chunk))
	}
	vec := mapping.DataChunkGetVector(chunk, 0)
	return *(*int64)(mapping.VectorGetData(vec)), nil
}

// SettleBudget shrinks the reservation of every idle tenant to what it
// holds (after DropIdleCopies: its idle cost once its copies are gone),
// and returns the budget's snapshot.
func (e *Engine) SettleBudget() BudgetStats {
	e.mu.Lock()
	for _, s := range e.tenants {
		if s.active == 0 && !s.gone {
			if _, ok := s.open(); ok {
				e.settle(s)
			}
		}
	}
	e.mu.Unlock()
	return e.Budget()
}
