package duckdb

import (
	"context"
	"fmt"
)

// ConnsInUse reports how many pooled connections of tenant are checked out.
func (e *Engine) ConnsInUse(tenant string) int {
	t, err := e.tenant(context.Background(), tenant)
	if err != nil {
		return -1
	}
	return t.pool.inUseCount()
}

// DirectPath reports whether Execute copies sql's result itself (the direct
// path) rather than through DuckDB's Arrow conversion.
func (e *Engine) DirectPath(tenant, sql string) (bool, error) {
	t, err := e.tenant(context.Background(), tenant)
	if err != nil {
		return false, err
	}
	s, err := t.begin(context.Background())
	if err != nil {
		return false, err
	}
	defer s.end()
	schema, err := s.start(sql, nil, false)
	if err != nil {
		return false, s.err(err)
	}
	return directLayout(&s.res, schema) != nil, nil
}

// ViewGen reports tenant's view generation, which moves on with every view
// DDL statement the engine runs (-1 if the tenant cannot be opened).
func (e *Engine) ViewGen(tenant string) int64 {
	t, err := e.tenant(context.Background(), tenant)
	if err != nil {
		return -1
	}
	return int64(t.gen.Load())
}

// VerifyUncached runs the statement check on sql without the cache of
// verified statements.
func (e *Engine) VerifyUncached(ctx context.Context, tenant, sql string) error {
	t, err := e.tenant(ctx, tenant)
	if err != nil {
		return err
	}
	js, err := t.serialize(ctx, sql)
	if err != nil {
		return err
	}
	if p := statementProblem(js); p != "" {
		return fmt.Errorf("%w: %s", ErrUnverified, p)
	}
	return nil
}

// Prepares reports how many statements DuckDB prepared for tenant (-1 if
// the tenant cannot be opened).
func (e *Engine) Prepares(tenant string) int64 {
	t, err := e.tenant(context.Background(), tenant)
	if err != nil {
		return -1
	}
	return int64(t.pool.prepares.Load())
}
