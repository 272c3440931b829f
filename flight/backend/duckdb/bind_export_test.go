package duckdb

import "context"

// WaitReleases waits until the leases of the tenant's Binds whose contexts
// are done by now have been released (and the superseded versions they
// held dropped).
func (e *Engine) WaitReleases(tenant string) {
	t, err := e.tenant(context.Background(), tenant)
	if err != nil {
		return
	}
	t.mu.Lock()
	var done []chan struct{}
	for l := range t.use.leases {
		if l.ctx.Err() != nil {
			done = append(done, l.done)
		}
	}
	t.mu.Unlock()
	for _, c := range done {
		<-c
	}
}
