package duckdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"lakegate/flight/backend"
)

// ColumnFact reports whether fact holds for the text column column of the
// table version id: backend.FactFoldUnique, that no two distinct values
// are equal under the engine's collation (default_collation), so grouping
// by their bytes forms the collation's groups; backend.FactFolded, that
// every value is its own fold (lower(strip_accents(v)), the gate's fold for
// LIKE), so a LIKE needs to fold only its pattern; backend.FactASCII, that
// every value is ASCII; backend.FactLacks(l), that no value holds the
// letter l. The answer is exact: the engine groups the column both ways and
// compares the counts, or looks for a value that folds to other bytes, is
// not ASCII or holds the letter. A version's data never changes, so the
// first call for a version, column and fact scans the column and later
// ones answer from memory, until the version is dropped. FactFoldUnique
// is answered false, without grouping, for a column of more distinct
// values (estimated) than Config.FoldUniqueValues.
//
// The caller must hold the version bound (Bind) for the tenant while the
// call runs. The answer covers every row of the version: the gate uses it
// only for callers who read the table without a row filter.
func (e *Engine) ColumnFact(ctx context.Context, tenantID, id, column string, fact backend.ColumnFact) (bool, error) {
	rel, col := relSchema+"."+quoteIdent("v_"+id), quoteIdent(column)
	var sql string
	switch fact {
	case backend.FactFoldUnique:
		sql = "SELECT (SELECT count(*) FROM (SELECT 1 FROM " + rel + " GROUP BY (" + col + " COLLATE c))) = " +
			"(SELECT count(*) FROM (SELECT 1 FROM " + rel + " GROUP BY " + col + "))"
	case backend.FactFolded:
		sql = "SELECT count(*) = 0 FROM (SELECT 1 FROM " + rel + " WHERE (" + col + " COLLATE c) <> " +
			"(lower(strip_accents(" + col + ")) COLLATE c) LIMIT 1)"
	case backend.FactASCII:
		sql = "SELECT count(*) = 0 FROM (SELECT 1 FROM " + rel + " WHERE strlen(" + col + ") <> length(" + col + ") LIMIT 1)"
	default:
		l, ok := fact.Letter()
		if !ok {
			return false, fmt.Errorf("duckdb: column facts: unknown fact %d", fact)
		}
		// contains of one byte is a memchr: a scan at memory speed that
		// stops at the first value holding it.
		sql = "SELECT count(*) = 0 FROM (SELECT 1 FROM " + rel + " WHERE contains(" + col + ", '" + string(l) + "') LIMIT 1)"
	}
	t, err := e.tenant(ctx, tenantID)
	if err != nil {
		return false, err
	}
	key := factKey{column: column, fact: fact}
	t.mu.Lock()
	_, bound := t.bound[id]
	v, known := t.facts[id][key]
	t.mu.Unlock()
	switch {
	case !bound:
		return false, fmt.Errorf("duckdb: column facts: table version %q is not bound", id)
	case known:
		return v, nil
	}
	if v, err = t.checkFact(ctx, fact, sql, rel, col); err != nil {
		return false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.bound[id]; ok { // not dropped meanwhile: forget would not see it
		if t.facts == nil {
			t.facts = make(map[string]map[factKey]bool)
		}
		if t.facts[id] == nil {
			t.facts[id] = make(map[factKey]bool)
		}
		t.facts[id][key] = v
	}
	return v, nil
}

// checkFact runs sql, the query that answers fact for column col of
// relation rel; a FactFoldUnique of a column of more distinct values than
// Config.FoldUniqueValues (estimated) is false without it.
func (t *tenant) checkFact(ctx context.Context, fact backend.ColumnFact, sql, rel, col string) (bool, error) {
	if fact == backend.FactFoldUnique {
		limit := t.eng.cfg.FoldUniqueValues
		if limit == 0 {
			limit = DefaultFoldUniqueValues
		}
		few, err := t.queryBool(ctx, "SELECT approx_count_distinct("+col+") <= "+strconv.Itoa(limit)+" FROM "+rel)
		if err != nil || !few {
			return false, err
		}
	}
	return t.queryBool(ctx, sql)
}

// factKey names a column fact of a version.
type factKey struct {
	column string
	fact   backend.ColumnFact
}

// queryBool runs sql, a query of one BOOLEAN value, and returns it (NULL
// is false).
func (t *tenant) queryBool(ctx context.Context, sql string) (bool, error) {
	var v, seen bool
	err := t.readAll(ctx, sql, func(rec arrow.RecordBatch) error {
		col, ok := rec.Column(0).(*array.Boolean)
		if !ok {
			return fmt.Errorf("duckdb: column facts: unexpected %s", rec.Column(0).DataType())
		}
		if rec.NumRows() > 0 && !seen {
			v, seen = col.IsValid(0) && col.Value(0), true
		}
		return nil
	})
	switch {
	case err != nil:
		return false, err
	case !seen:
		return false, errors.New("duckdb: column facts: no row")
	}
	return v, nil
}
