package flight

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
)

// tableType is the only table type lakegate reports.
const tableType = "TABLE"

// catalogMatches applies a Flight SQL catalog filter to catalog, the
// session's: nil matches every catalog, "" matches tables without one (none
// here).
func catalogMatches(filter *string, catalog string) bool {
	return filter == nil || *filter == catalog
}

func (s *Server) commandInfo(ctx context.Context, desc *flight.FlightDescriptor, schema *arrow.Schema) (*flight.FlightInfo, error) {
	if _, err := principalOf(ctx); err != nil {
		return nil, toStatus(err)
	}
	return s.flightInfo(desc, schema, desc.GetCmd()), nil
}

// GetFlightInfoCatalogs answers with a ticket for DoGetCatalogs.
func (s *Server) GetFlightInfoCatalogs(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.Catalogs)
}

// DoGetCatalogs lists the catalog of the caller's session (the default
// catalog unless the session chose another).
func (s *Server) DoGetCatalogs(ctx context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	b := array.NewRecordBuilder(s.mem, schema_ref.Catalogs)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(s.whoIs(ctx, p).caller.Catalog)
	return oneBatch(schema_ref.Catalogs, b)
}

// GetFlightInfoSchemas answers with a ticket for DoGetDBSchemas.
func (s *Server) GetFlightInfoSchemas(ctx context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.DBSchemas)
}

// DoGetDBSchemas lists the schemas the caller may read.
func (s *Server) DoGetDBSchemas(ctx context.Context, cmd flightsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return nil, nil, toStatus(err)
	}
	a := accessFrom(ctx)
	a.statementIs(accessGetSchemas, "")
	release, err := s.admitPlanning(ctx, p)
	if err != nil {
		return nil, nil, s.fail(ctx, "admit", err)
	}
	defer release()
	w := s.whoIs(ctx, p)
	l, err := s.planner.Visible(ctx, w)
	if err != nil {
		return nil, nil, s.fail(ctx, "schemas", err)
	}
	b := array.NewRecordBuilder(s.mem, schema_ref.DBSchemas)
	defer b.Release()
	catalog := w.caller.Catalog
	if catalogMatches(cmd.GetCatalog(), catalog) {
		for _, sc := range l.Schemas {
			if !likeMatch(cmd.GetDBSchemaFilterPattern(), sc) {
				continue
			}
			b.Field(0).(*array.StringBuilder).Append(catalog)
			b.Field(1).(*array.StringBuilder).Append(sc)
		}
	}
	a.addRows(int64(b.Field(0).Len()))
	return oneBatch(schema_ref.DBSchemas, b)
}

// GetFlightInfoTables answers with a ticket for DoGetTables.
func (s *Server) GetFlightInfoTables(ctx context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	return s.commandInfo(ctx, desc, schema)
}

// DoGetTables lists the tables the caller may read, with their Arrow schemas
// when asked.
func (s *Server) DoGetTables(ctx context.Context, cmd flightsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if err := s.admitAccess(p.Tenant().String()); err != nil {
		return nil, nil, toStatus(err)
	}
	a := accessFrom(ctx)
	a.statementIs(accessGetTables, "")
	release, err := s.admitPlanning(ctx, p)
	if err != nil {
		return nil, nil, s.fail(ctx, "admit", err)
	}
	defer release()
	w := s.whoIs(ctx, p)
	l, err := s.planner.Visible(ctx, w)
	if err != nil {
		return nil, nil, s.fail(ctx, "tables", err)
	}
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	catalog := w.caller.Catalog
	if catalogMatches(cmd.GetCatalog(), catalog) && typeRequested(cmd.GetTableTypes()) {
		for _, t := range l.Tables {
			if !likeMatch(cmd.GetDBSchemaFilterPattern(), t.Name.Schema) || !likeMatch(cmd.GetTableNameFilterPattern(), t.Name.Name) {
				continue
			}
			b.Field(0).(*array.StringBuilder).Append(catalog)
			b.Field(1).(*array.StringBuilder).Append(t.Name.Schema)
			b.Field(2).(*array.StringBuilder).Append(t.Name.Name)
			b.Field(3).(*array.StringBuilder).Append(tableType)
			if cmd.GetIncludeSchema() {
				b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(arrowSchema(t.Columns), s.mem))
			}
		}
	}
	a.addRows(int64(b.Field(0).Len()))
	return oneBatch(schema, b)
}

func typeRequested(types []string) bool {
	if len(types) == 0 {
		return true
	}
	for _, t := range types {
		if strings.EqualFold(t, tableType) {
			return true
		}
	}
	return false
}

// GetFlightInfoTableTypes answers with a ticket for DoGetTableTypes.
func (s *Server) GetFlightInfoTableTypes(ctx context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.TableTypes)
}

// DoGetTableTypes lists the table types.
func (s *Server) DoGetTableTypes(ctx context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if _, err := principalOf(ctx); err != nil {
		return nil, nil, toStatus(err)
	}
	b := array.NewRecordBuilder(s.mem, schema_ref.TableTypes)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(tableType)
	return oneBatch(schema_ref.TableTypes, b)
}

// lakegate tables have no primary or foreign keys. JDBC and ODBC clients ask
// anyway when they show a table (DatabaseMetaData.getPrimaryKeys,
// getImportedKeys, getExportedKeys, getCrossReference); they get each
// command's empty result, the same for any table — visible, hidden or
// missing — rather than Unimplemented.

// GetFlightInfoPrimaryKeys answers with a ticket for DoGetPrimaryKeys.
func (s *Server) GetFlightInfoPrimaryKeys(ctx context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.PrimaryKeys)
}

// DoGetPrimaryKeys answers no keys.
func (s *Server) DoGetPrimaryKeys(ctx context.Context, _ flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.noRows(ctx, schema_ref.PrimaryKeys)
}

// GetFlightInfoImportedKeys answers with a ticket for DoGetImportedKeys.
func (s *Server) GetFlightInfoImportedKeys(ctx context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.ImportedKeys)
}

// DoGetImportedKeys answers no keys.
func (s *Server) DoGetImportedKeys(ctx context.Context, _ flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.noRows(ctx, schema_ref.ImportedKeys)
}

// GetFlightInfoExportedKeys answers with a ticket for DoGetExportedKeys.
func (s *Server) GetFlightInfoExportedKeys(ctx context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.ExportedKeys)
}

// DoGetExportedKeys answers no keys.
func (s *Server) DoGetExportedKeys(ctx context.Context, _ flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.noRows(ctx, schema_ref.ExportedKeys)
}

// GetFlightInfoCrossReference answers with a ticket for DoGetCrossReference.
func (s *Server) GetFlightInfoCrossReference(ctx context.Context, _ flightsql.CrossTableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.CrossReference)
}

// DoGetCrossReference answers no keys.
func (s *Server) DoGetCrossReference(ctx context.Context, _ flightsql.CrossTableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.noRows(ctx, schema_ref.CrossReference)
}

// noRows answers an authenticated caller a result of schema with no rows.
func (s *Server) noRows(ctx context.Context, schema *arrow.Schema) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if _, err := principalOf(ctx); err != nil {
		return nil, nil, toStatus(err)
	}
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	return oneBatch(schema, b)
}

// oneBatch returns a closed channel holding the builder's record.
func oneBatch(schema *arrow.Schema, b *array.RecordBuilder) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: b.NewRecordBatch()}
	close(ch)
	return schema, ch, nil
}

// likeMatch applies a Flight SQL filter pattern (SQL LIKE: % any run, _ one
// character, \ escapes). A nil pattern matches everything.
func likeMatch(pattern *string, s string) bool {
	if pattern == nil {
		return true
	}
	return like([]rune(*pattern), []rune(s))
}

// like matches in O(len(p)·len(s)) time, so a hostile pattern cannot make
// discovery exponential.
func like(p, s []rune) bool {
	// Compile the pattern into tokens: literal rune, '_' (any one), '%' (any run).
	type tok struct {
		r    rune
		kind byte // 'l' literal, '_' one, '%' run
	}
	toks := make([]tok, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '%':
			toks = append(toks, tok{kind: '%'})
		case '_':
			toks = append(toks, tok{kind: '_'})
		case '\\':
			if i+1 < len(p) {
				i++
			}
			toks = append(toks, tok{kind: 'l', r: p[i]})
		default:
			toks = append(toks, tok{kind: 'l', r: p[i]})
		}
	}
	// cur[j] reports whether toks[:i] matches s[:j].
	cur := make([]bool, len(s)+1)
	next := make([]bool, len(s)+1)
	cur[0] = true
	for _, t := range toks {
		clear(next)
		for j := 0; j <= len(s); j++ {
			switch t.kind {
			case '%':
				next[j] = cur[j] || (j > 0 && next[j-1])
			case '_':
				next[j] = j > 0 && cur[j-1]
			default:
				next[j] = j > 0 && cur[j-1] && s[j-1] == t.r
			}
		}
		cur, next = next, cur
	}
	return cur[len(s)]
}
