package flight

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"lakegate/authz/sqlgate"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

// Planning SHOW, DESCRIBE and EXPLAIN: what each one is (showQuery), its
// result schema, and the rows the caller may see. payload.go carries them in
// tickets; show.go answers them when they run.

// maxShowPattern bounds a LIKE pattern carried in a ticket.
const maxShowPattern = 1024

// Show kinds in a showQuery.
const (
	showDatabases = "databases"
	showTables    = "tables"
	showColumns   = "columns"
	showExplain   = "explain"
	// Answered from fixed values (sqlgate.SystemVariables, the one
	// character set and collation); no warnings are ever kept.
	showVariables = "variables"
	showWarnings  = "warnings"
	showCollation = "collation"
	showCharset   = "charset"
)

// showQuery is a SHOW, DESCRIBE or EXPLAIN statement as its ticket carries it.
type showQuery struct {
	Kind    string  `json:"kind"`
	Schema  string  `json:"schema,omitempty"`  // tables, columns
	Table   string  `json:"table,omitempty"`   // columns
	Pattern *string `json:"pattern,omitempty"` // databases, tables
	// SQL and Tables: explain (the rendered query and its pinned versions).
	SQL    string                 `json:"sql,omitempty"`
	Tables []backend.TableVersion `json:"tables,omitempty"`
	// Access: the statement as the access log records it (payload.go).
	Access accessedStatement `json:"access,omitzero"`
}

// describeSchema is DESCRIBE's result, MySQL's column names.
var describeSchema = arrow.NewSchema([]arrow.Field{
	{Name: "Field", Type: arrow.BinaryTypes.String},
	{Name: "Type", Type: arrow.BinaryTypes.String},
	{Name: "Null", Type: arrow.BinaryTypes.String},
	{Name: "Key", Type: arrow.BinaryTypes.String},
	{Name: "Default", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "Extra", Type: arrow.BinaryTypes.String},
}, nil)

// Fixed SHOW results, MySQL's column names and types.
var (
	variablesSchema = arrow.NewSchema([]arrow.Field{
		{Name: "Variable_name", Type: arrow.BinaryTypes.String},
		{Name: "Value", Type: arrow.BinaryTypes.String},
	}, nil)
	warningsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "Level", Type: arrow.BinaryTypes.String},
		{Name: "Code", Type: arrow.PrimitiveTypes.Int64},
		{Name: "Message", Type: arrow.BinaryTypes.String},
	}, nil)
	collationSchema = arrow.NewSchema([]arrow.Field{
		{Name: "Collation", Type: arrow.BinaryTypes.String},
		{Name: "Charset", Type: arrow.BinaryTypes.String},
		{Name: "Id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "Default", Type: arrow.BinaryTypes.String},
		{Name: "Compiled", Type: arrow.BinaryTypes.String},
		{Name: "Sortlen", Type: arrow.PrimitiveTypes.Int64},
		{Name: "Pad_attribute", Type: arrow.BinaryTypes.String},
	}, nil)
	charsetSchema = arrow.NewSchema([]arrow.Field{
		{Name: "Charset", Type: arrow.BinaryTypes.String},
		{Name: "Description", Type: arrow.BinaryTypes.String},
		{Name: "Default collation", Type: arrow.BinaryTypes.String},
		{Name: "Maxlen", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	// The rows of SHOW COLLATION and SHOW CHARACTER SET: the one collation
	// the gateway compares with and its character set (MySQL's values).
	collationRow = []string{sqlgate.Collation, sqlgate.Charset, "255", "Yes", "Yes", "0", "NO PAD"}
	charsetRow   = []string{sqlgate.Charset, "UTF-8 Unicode", sqlgate.Collation, "4"}
)

// explainSchema is EXPLAIN's result: one column "plan"; the first row is the
// SQL the gateway runs, the second the engine's plan of it.
var explainSchema = arrow.NewSchema([]arrow.Field{{Name: "plan", Type: arrow.BinaryTypes.String}}, nil)

// showSchema returns the result schema of q (MySQL's column names: a LIKE
// pattern is part of the name, as in MySQL).
func showSchema(q *showQuery) *arrow.Schema {
	name := ""
	switch q.Kind {
	case showColumns:
		return describeSchema
	case showExplain:
		return explainSchema
	case showVariables:
		return variablesSchema
	case showWarnings:
		return warningsSchema
	case showCollation:
		return collationSchema
	case showCharset:
		return charsetSchema
	case showDatabases:
		name = "Database"
	case showTables:
		name = "Tables_in_" + q.Schema
	}
	if q.Pattern != nil {
		name += " (" + *q.Pattern + ")"
	}
	return arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.BinaryTypes.String}}, nil)
}

func ptrTo(s string) *string { return &s }

func ptrsTo(row []string) []*string {
	out := make([]*string, len(row))
	for i := range row {
		out[i] = &row[i]
	}
	return out
}

// mysqlType is the MySQL type name DESCRIBE shows for a catalog column type
// (an Arrow type name for the tables lakegate writes, or Gravitino's): the
// one place the Arrow→MySQL direction is decided. A type without a MySQL
// counterpart keeps the catalog's name.
func mysqlType(catalog string) string {
	t, ok := arrowType(catalog)
	if !ok {
		return strings.ToLower(catalog)
	}
	switch t := t.(type) {
	case *arrow.BooleanType:
		return "tinyint(1)"
	case *arrow.Int8Type:
		return "tinyint"
	case *arrow.Int16Type:
		return "smallint"
	case *arrow.Int32Type:
		return "int"
	case *arrow.Int64Type:
		return "bigint"
	case *arrow.Uint8Type:
		return "tinyint unsigned"
	case *arrow.Uint16Type:
		return "smallint unsigned"
	case *arrow.Uint32Type:
		return "int unsigned"
	case *arrow.Uint64Type:
		return "bigint unsigned"
	case *arrow.Float16Type, *arrow.Float32Type:
		return "float"
	case *arrow.Float64Type:
		return "double"
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		// Arrow strings have no declared length.
		return "text"
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return "blob"
	case *arrow.Date32Type, *arrow.Date64Type:
		return "date"
	case *arrow.Time32Type:
		return "time(3)"
	case *arrow.Time64Type:
		return "time(6)"
	case *arrow.TimestampType:
		// MySQL keeps at most microseconds; a zone makes it a TIMESTAMP
		// (an instant), none a DATETIME.
		base := "datetime"
		if t.TimeZone != "" {
			base = "timestamp"
		}
		switch t.Unit {
		case arrow.Second:
			return base
		case arrow.Millisecond:
			return base + "(3)"
		}
		return base + "(6)"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case *arrow.NullType:
		return "null"
	}
	return strings.ToLower(catalog)
}

// planShow plans a SHOW, DESCRIBE or EXPLAIN statement. The SHOW kinds are
// answered once here so that an error (a schema or table the caller may not
// see) is reported at planning, as for a query.
func (pn *planner) planShow(ctx context.Context, w who, stmt *sqlgate.Statement) (*plan, error) {
	q := &showQuery{}
	switch stmt.Kind() {
	case sqlgate.KindShowDatabases:
		q.Kind = showDatabases
	case sqlgate.KindShowTables:
		q.Kind, q.Schema = showTables, stmt.ShowSchema()
	case sqlgate.KindDescribe:
		t := stmt.Target()
		q.Kind, q.Schema, q.Table = showColumns, t.Schema, t.Name
	case sqlgate.KindExplain:
		return pn.planExplain(ctx, w, stmt)
	case sqlgate.KindShowVariables:
		q.Kind = showVariables
	case sqlgate.KindShowWarnings:
		q.Kind = showWarnings
	case sqlgate.KindShowCollation:
		q.Kind = showCollation
	case sqlgate.KindShowCharset:
		q.Kind = showCharset
	default:
		return nil, fmt.Errorf("%w: %s is not a SHOW statement", errBadRequest, stmt.Kind())
	}
	if pat, ok := stmt.ShowPattern(); ok {
		if len(pat) > maxShowPattern {
			return nil, fmt.Errorf("%w: the LIKE pattern is longer than %d bytes", errBadRequest, maxShowPattern)
		}
		q.Pattern = &pat
	}
	if _, err := pn.Show(ctx, w, q); err != nil {
		return nil, err
	}
	return &plan{schema: showSchema(q), show: q}, nil
}

// planExplain authorizes, binds and renders the query of EXPLAIN exactly as
// Plan does for the query itself.
func (pn *planner) planExplain(ctx context.Context, w who, stmt *sqlgate.Statement) (*plan, error) {
	if stmt.NumParams() > 0 {
		return nil, fmt.Errorf("%w: EXPLAIN of a statement with parameters is not supported", errBadRequest)
	}
	tables, err := pn.ResolveStatement(ctx, w, stmt)
	if err != nil {
		return nil, err
	}
	if up, err := upstreamOf(tables); err != nil || up != nil {
		return nil, fmt.Errorf("%w: EXPLAIN is not supported on tables of an upstream engine", errBadRequest)
	}
	for _, v := range tables {
		if v.Policy != nil {
			// The plan would show the filter and the masks, which the
			// caller may not be allowed to read.
			return nil, &policyError{table: v.Name.String(), explain: true}
		}
	}
	r, release, err := pn.Render(ctx, w, stmt, tables)
	if err != nil {
		return nil, err
	}
	defer release()
	q := &showQuery{Kind: showExplain, SQL: r.sql, Tables: tables}
	return &plan{schema: explainSchema, show: q}, nil
}

// Show answers a SHOW kind from the caller's authorized catalog view.
// A nil cell is NULL.
func (pn *planner) Show(ctx context.Context, w who, q *showQuery) ([][]*string, error) {
	var rows [][]*string
	match := func(name string) bool { return likeMatch(q.Pattern, name) }
	switch q.Kind {
	case showDatabases:
		l, err := pn.Visible(ctx, w)
		if err != nil {
			return nil, err
		}
		for _, sc := range l.Schemas {
			if match(sc) {
				rows = append(rows, []*string{ptrTo(sc)})
			}
		}
	case showTables:
		if !w.p.MayReadNamespace(q.Schema) {
			return nil, deny(reasonNamespace, &notFoundError{kind: "schema", name: q.Schema})
		}
		l, err := pn.Visible(ctx, w)
		if err != nil {
			return nil, err
		}
		found := false
		for _, sc := range l.Schemas {
			found = found || sc == q.Schema
		}
		if !found {
			return nil, deny(reasonPrivilege, &notFoundError{kind: "schema", name: q.Schema})
		}
		for _, t := range l.Tables {
			if t.Name.Schema == q.Schema && match(t.Name.Name) {
				rows = append(rows, []*string{ptrTo(t.Name.Name)})
			}
		}
	case showColumns:
		// The same resolution as a query reading the table: a table the
		// caller may not read and a missing one give the same NotFound.
		tv, err := pn.resolve(ctx, w, []sqlgate.TableRef{{Schema: q.Schema, Name: q.Table}})
		if err != nil {
			return nil, err
		}
		for _, c := range tv[0].Columns {
			rows = append(rows, []*string{ptrTo(c.Name), ptrTo(mysqlType(c.Type)), ptrTo("YES"), ptrTo(""), nil, ptrTo("")})
		}
	case showVariables:
		for _, v := range pn.gate.SystemVariables() {
			if match(v.Name) {
				rows = append(rows, []*string{ptrTo(v.Name), ptrTo(v.Value)})
			}
		}
	case showWarnings:
		// Statements either succeed or fail with an error: none leaves a
		// warning.
	case showCollation:
		if match(collationRow[0]) {
			rows = append(rows, ptrsTo(collationRow))
		}
	case showCharset:
		if match(charsetRow[0]) {
			rows = append(rows, ptrsTo(charsetRow))
		}
	default:
		return nil, ticket.ErrInvalid
	}
	return rows, nil
}
