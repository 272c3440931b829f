package sqlgate

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/format"
)

// restoreFlags print names double-quoted, strings single-quoted with quotes
// doubled and no backslash escapes or charset introducers, and binary
// operations bracketed.
const restoreFlags = format.RestoreStringSingleQuotes |
	format.RestoreNameDoubleQuotes |
	format.RestoreKeyWordUppercase |
	format.RestoreStringWithoutCharset |
	format.RestoreSpacesAroundBinaryOperation |
	format.RestoreBracketAroundBinaryOperation

// Render prints the statement as DuckDB SQL, with every real table replaced
// by the relation rel holds for it (printed "schema"."name" AS "alias", the
// alias being the client's or the table name) and every CTE renamed to
// __cte<n>_<name>. rel must hold every table of Tables(); a missing one is a
// caller bug and an error. The output has passed CheckLexical.
//
// Render refuses (ErrUnsupported) a bare column name that is also a table
// alias anywhere in the statement unless it is a column (per rel) of a real
// table in the FROM clause of its own SELECT: DuckDB would otherwise bind it
// to the whole row of the aliased table. This is conservative: such a name
// that is a column of a derived table or CTE is refused too; qualify it.
//
// For a write, Render prints only the query part, never CREATE, INSERT or
// DROP: for KindCreateTableAs and INSERT … <query>, the query; for INSERT …
// VALUES, a query producing the rows,
//
//	SELECT * FROM (VALUES (…), (…)) AS "__lg_values" ("c1", "c2")
//
// whose columns are named after the INSERT column list, or col1…colN without
// one, and column types inferred by DuckDB from the values (a column of
// parameters and NULLs only may need a cast to the target's type); for
// KindDropTable, "" (there is nothing for the engine to run). The
// caller writes the query's result to Target (for an INSERT, aligning its
// columns, by name or by position, to the target's). Render refuses KindUse.
//
// Render does not modify the Statement and may be called concurrently.
func (s *Statement) Render(rel map[TableRef]Relation) (string, error) {
	out, _, err := s.render(rel, false)
	return out, err
}

// RenderPushed is Render that also repeats, behind a row filter's fence
// (pushdown.go), the statement's comparisons of an unmasked column with a
// parameter, so that a prepared point lookup on a filtered table uses the
// scan's zone maps as one with a literal does. That text is safe only when
// each such parameter is bound to a value of the kind kinds gives for it
// (one per parameter; ParamAny places no condition): the caller must check
// the bound values and run Render's text otherwise. sql is "" when no
// parameter was pushed.
func (s *Statement) RenderPushed(rel map[TableRef]Relation) (sql string, kinds []ParamKind, err error) {
	if s.numParams == 0 || s.kind != KindQuery || s.dialect != DialectDuckDB || !anyRowFilter(rel) {
		return "", nil, nil
	}
	out, kinds, err := s.render(rel, true)
	if err != nil || kinds == nil {
		return "", nil, err
	}
	return out, kinds, nil
}

// render prints the statement over rel; with pushParams it also pushes
// parameters and returns their kinds (nil if none was pushed).
func (s *Statement) render(rel map[TableRef]Relation, pushParams bool) (string, []ParamKind, error) {
	switch s.kind {
	case KindQuery, KindCreateTableAs, KindInsert, KindExplain:
	case KindDropTable:
		return "", nil, nil
	default:
		return "", nil, fmt.Errorf("sqlgate: Render called on a statement of kind %s", s.kind)
	}
	for _, t := range s.tables {
		r, ok := rel[t]
		if !ok {
			return "", nil, fmt.Errorf("sqlgate: no relation for table %q", t.String())
		}
		if err := checkEngineIdent(r.Schema); err != nil {
			return "", nil, err
		}
		if err := checkEngineIdent(r.Name); err != nil {
			return "", nil, err
		}
	}
	for _, c := range s.checks {
		if !hasColumn(rel, c) {
			return "", nil, unsupported("column %q has the same name as a table alias and is not a column of a table in its FROM clause; qualify it", c.name)
		}
	}
	buf := &renderBuf{rel: rel, dialect: s.dialect, info: s.types, rawGroups: s.kind == KindQuery}
	if pushParams {
		buf.kinds = make([]ParamKind, s.numParams)
	}
	buf.Grow(256)
	err := s.root.Restore(format.NewRestoreCtx(restoreFlagsFor(s.dialect), buf))
	if buf.err != nil {
		return "", nil, buf.err
	}
	if err != nil {
		return "", nil, fmt.Errorf("sqlgate: internal error printing the query: %w", err)
	}
	out := buf.String()
	if err := s.checkOutput(out); err != nil {
		return "", nil, err
	}
	if !buf.pushed {
		return out, nil, nil
	}
	return out, buf.kinds, nil
}

// anyRowFilter reports whether some relation of rel is read through a row
// filter (the only place parameters are pushed).
func anyRowFilter(rel map[TableRef]Relation) bool {
	for _, r := range rel {
		if r.Policy != nil && r.Policy.Filter != nil {
			return true
		}
	}
	return false
}

func hasColumn(rel map[TableRef]Relation, c colCheck) bool {
	for _, t := range c.scope {
		for _, col := range rel[t].Columns {
			if strings.EqualFold(col, c.name) {
				return true
			}
		}
	}
	return false
}

func checkEngineIdent(s string) error {
	if s == "" {
		return fmt.Errorf("sqlgate: empty engine identifier in relation")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("sqlgate: control character in engine identifier")
		}
	}
	return nil
}
