package flight

import (
	"context"
	"slices"
	"sync"

	"lakegate/flight/backend"
)

// A client that runs the same statement again (a dashboard, a health check,
// SELECT 1) gets the plan made for it the last time, instead of a parse,
// a render and a Describe, as long as nothing it depends on changed: the
// same text from the same principal in the same session (default catalog
// and schema, no session views), whose tables resolve for the caller, now,
// to the same versions under the same policies. The tables are resolved
// again at every run, through the catalog, exactly as a new plan would be:
// a grant revoked, a table dropped, a policy or a version changed fails or
// plans the statement again. Only queries over the engine are kept (not
// SHOW, USE, writes, views, or statements over an upstream engine).

// maxReusedPlans and maxReusedPlanBytes bound the plans the planner keeps:
// when either would be exceeded, it forgets them all and starts again. A
// plan also keeps its parsed statement, several times the size of its
// text, so only statements of at most maxReusedText bytes are kept.
const (
	maxReusedPlans     = 256
	maxReusedPlanBytes = 2 << 20 // statement texts and their rendered SQL
	maxReusedText      = 4 << 10
)

// planKey is what a plan may be reused for.
type planKey struct {
	tenant, subject, catalog, schema, text string
}

// reusedPlans holds plans by planKey.
type reusedPlans struct {
	mu    sync.Mutex
	plans map[planKey]*plan
	bytes int
}

// keyFor returns the key of text planned for w, and false when a plan for
// it is never kept (a session with views of its own).
func keyFor(w who, text string) (planKey, bool) {
	if len(w.views) > 0 || len(text) > maxReusedText {
		return planKey{}, false
	}
	return planKey{tenant: w.caller.Tenant, subject: w.caller.Subject, catalog: w.caller.Catalog, schema: w.schema, text: text}, true
}

// reusable reports whether pl may be kept: a query over the engine.
func reusable(pl *plan) bool {
	return pl.sql != "" && pl.stmt != nil && pl.show == nil && pl.write == nil && pl.view == nil &&
		pl.use == "" && pl.text == "" && pl.numParams == 0
}

func (rp *reusedPlans) get(k planKey) *plan {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.plans[k]
}

func (rp *reusedPlans) put(k planKey, pl *plan) {
	n := len(k.text) + len(pl.sql) + len(pl.pushed)
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if old := rp.plans[k]; old != nil {
		rp.bytes -= len(k.text) + len(old.sql) + len(old.pushed)
	}
	if rp.plans == nil || len(rp.plans) >= maxReusedPlans || rp.bytes+n > maxReusedPlanBytes {
		rp.plans, rp.bytes = make(map[planKey]*plan), 0
	}
	if n > maxReusedPlanBytes {
		return
	}
	rp.plans[k] = pl
	rp.bytes += n
}

// forget drops the plan kept for k if it is pl.
func (rp *reusedPlans) forget(k planKey, pl *plan) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.plans[k] == pl {
		delete(rp.plans, k)
		rp.bytes -= len(k.text) + len(pl.sql) + len(pl.pushed)
	}
}

// reuse returns the plan kept for k if its tables resolve for w, now, to
// the same versions under the same policies; nil when there is none or
// something changed (then it is forgotten); or the error resolving them
// gives, which a new plan would give too.
func (pn *planner) reuse(ctx context.Context, w who, k planKey) (*plan, error) {
	pl := pn.reused.get(k)
	if pl == nil {
		return nil, nil
	}
	a := accessFrom(ctx)
	if a != nil {
		if pl.access.Kind == "" {
			return nil, nil // kept while no access was recorded
		}
		a.statementIs(pl.access.Kind, pl.access.Statement)
	}
	tables, err := pn.resolve(ctx, w, pl.stmt.Tables())
	if err != nil {
		pn.reused.forget(k, pl)
		return nil, err
	}
	if !slices.EqualFunc(tables, pl.tables, func(a, b backend.TableVersion) bool { return a.Same(&b) }) {
		pn.reused.forget(k, pl)
		return nil, nil
	}
	return pl, nil
}
