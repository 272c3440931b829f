package duckdb

// TenantOpen reports whether tenant's instance is open, without opening it.
func (e *Engine) TenantOpen(tenant string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.tenants[tenant]
	return ok
}

// OnBudgetWait makes f run (under the engine's lock: it must not call the
// engine) whenever a reservation starts to wait for room.
func (e *Engine) OnBudgetWait(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.budget.onWait = f
}
