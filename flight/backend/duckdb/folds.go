package duckdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// FoldUnique reports whether no two distinct values of the text column
// column of the table version id are equal under the engine's collation
// (default_collation): grouping by the values' bytes then forms exactly
// the collation's groups, which the SQL gate uses to group by bytes
// (sqlgate.Relation.FoldUnique). The answer is exact: the engine groups
// the column both ways and compares the counts. A version's data never
// changes, so the first call for a version and column scans it and later
// ones answer from memory, until the version is dropped.
//
// The caller must hold the version bound (Bind) for the tenant while the
// call runs. The answer covers every row of the version: the gate uses it
// only for callers who read the table without a row filter.
func (e *Engine) FoldUnique(ctx context.Context, tenantID, id, column string) (bool, error) {
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return false, err
	}
	t.mu.Lock()
	_, bound := t.bound[id]
	v, known := t.folds[id][column]
	t.mu.Unlock()
	switch {
	case !bound:
		return false, fmt.Errorf("duckdb: fold facts: table version %q is not bound", id)
	case known:
		return v, nil
	}
	rel, col := relSchema+"."+quoteIdent("v_"+id), quoteIdent(column)
	v, err = t.queryBool(ctx, "SELECT (SELECT count(*) FROM (SELECT 1 FROM "+rel+" GROUP BY ("+col+" COLLATE c))) = "+
		"(SELECT count(*) FROM (SELECT 1 FROM "+rel+" GROUP BY "+col+"))")
	if err != nil {
		return false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.bound[id]; ok { // not dropped meanwhile: forget would not see it
		if t.folds == nil {
			t.folds = make(map[string]map[string]bool)
		}
		if t.folds[id] == nil {
			t.folds[id] = make(map[string]bool)
		}
		t.folds[id][column] = v
	}
	return v, nil
}

// queryBool runs sql, a query of one BOOLEAN value, and returns it (NULL
// is false).
func (t *tenant) queryBool(ctx context.Context, sql string) (bool, error) {
	s, err := t.begin(ctx)
	if err != nil {
		return false, err
	}
	defer s.end()
	schema, err := s.start(sql, nil, false)
	if err != nil {
		return false, s.err(err)
	}
	var v, seen bool
	for {
		rec, err := s.fetch(schema)
		if err != nil {
			return false, s.err(err)
		}
		if rec == nil {
			if !seen {
				return false, errors.New("duckdb: fold facts: no row")
			}
			return v, nil
		}
		col, ok := rec.Column(0).(*array.Boolean)
		if ok && rec.NumRows() > 0 && !seen {
			v, seen = col.IsValid(0) && col.Value(0), true
		}
		rec.Release()
		if !ok {
			return false, fmt.Errorf("duckdb: fold facts: unexpected %s", schema.Field(0).Type)
		}
	}
}
