package duckdb

import "context"

// ConnsInUse reports how many pooled connections of tenant are checked out.
func (e *Engine) ConnsInUse(tenant string) int {
	t, err := e.tenant(context.Background(), tenant)
	if err != nil {
		return -1
	}
	return t.db.Stats().InUse
}
