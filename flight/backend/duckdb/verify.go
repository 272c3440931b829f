package duckdb

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// ErrUnverified reports a statement the engine's own parser sees reading a
// relation the SQL gate did not issue, calling a table function, or being
// something else than one statement. The gate printed it, so this is a gate
// bug: the statement is refused and the caller should log it.
var ErrUnverified = errors.New("duckdb: statement failed verification")

// verifyCache remembers statements that passed verification, by SHA-256,
// so a ticket's DoGet after its planning's Describe pays once. It is
// bounded: past maxVerified entries it starts over.
type verifyCache struct {
	mu sync.Mutex
	m  map[[32]byte]struct{}
}

const maxVerified = 10_000

func (c *verifyCache) seen(k [32]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[k]
	return ok
}

func (c *verifyCache) add(k [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxVerified {
		c.m = make(map[[32]byte]struct{})
	}
	c.m[k] = struct{}{}
}

// verify is the second line of defence behind the SQL gate (SQL_GATE.md):
// DuckDB's own parser (json_serialize_sql) must see exactly one statement
// whose relations are all gate-issued — views in lg_rel, the gate's renamed
// CTEs (__cte…), derived tables — and no table function. It costs a parse
// and a JSON walk per statement not seen before.
func (t *tenant) verify(ctx context.Context, sql string) error {
	if t.eng.cfg.NoVerify {
		return nil
	}
	key := sha256.Sum256([]byte(sql))
	if t.verified.seen(key) {
		return nil
	}
	// EXPLAIN of a statement (the gateway's EXPLAIN) is checked as the
	// statement: one SELECT, so never EXPLAIN ANALYZE.
	js, err := t.serialize(ctx, strings.TrimPrefix(sql, "EXPLAIN "))
	if err != nil {
		return err
	}
	if problem := statementProblem(js); problem != "" {
		t.log.Error("statement failed verification: the SQL gate printed a statement reading outside what it issued", "problem", problem)
		return fmt.Errorf("%w: %s", ErrUnverified, problem)
	}
	t.verified.add(key)
	return nil
}

// serialize returns json_serialize_sql of sql.
func (t *tenant) serialize(ctx context.Context, sql string) (string, error) {
	s, err := t.begin(ctx)
	if err != nil {
		return "", err
	}
	defer s.end()
	// Nulls and empty values are left out: smaller to decode, and a missing
	// name is read as "".
	schema, err := s.start("SELECT CAST(json_serialize_sql(?::VARCHAR, skip_null := true, skip_empty := true) AS VARCHAR)", []any{sql}, true)
	if err != nil {
		return "", s.err(err)
	}
	rec, err := s.fetch(schema)
	if err != nil {
		return "", s.err(err)
	}
	if rec == nil {
		return "", fmt.Errorf("%w: no serialization", ErrUnverified)
	}
	defer rec.Release()
	col, ok := rec.Column(0).(*array.String)
	if !ok || col.Len() != 1 {
		return "", fmt.Errorf("%w: unexpected serialization", ErrUnverified)
	}
	js := strings.Clone(col.Value(0))
	// Drain: the statement must run to completion to be kept for reuse.
	for {
		r, err := s.fetch(schema)
		if err != nil || r == nil {
			break
		}
		r.Release()
	}
	return js, nil
}

// statementProblem says what is wrong with a json_serialize_sql document,
// or "" when it is one statement over gate-issued relations only. A text
// DuckDB's parser refuses is a problem too: the gate printed it.
func statementProblem(js string) string {
	var doc struct {
		Error      bool  `json:"error"`
		Statements []any `json:"statements"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		return "the serialization is not JSON"
	}
	if doc.Error {
		return "DuckDB's parser refuses the statement"
	}
	if len(doc.Statements) != 1 {
		return fmt.Sprintf("%d statements", len(doc.Statements))
	}
	return relationProblem(doc.Statements[0])
}

// relationProblem walks a serialized statement for table references.
func relationProblem(v any) string {
	switch n := v.(type) {
	case map[string]any:
		switch n["type"] {
		case "BASE_TABLE":
			schema, _ := n["schema_name"].(string)
			table, _ := n["table_name"].(string)
			catalog, _ := n["catalog_name"].(string)
			switch {
			case catalog == "" && schema == relSchema && table != "":
			case catalog == "" && schema == "" && strings.HasPrefix(table, "__cte"):
			default:
				return fmt.Sprintf("relation %q.%q.%q is not gate-issued", catalog, schema, table)
			}
		case "TABLE_FUNCTION":
			return "a table function"
		}
		for _, c := range n {
			if p := relationProblem(c); p != "" {
				return p
			}
		}
	case []any:
		for _, c := range n {
			if p := relationProblem(c); p != "" {
				return p
			}
		}
	}
	return ""
}
