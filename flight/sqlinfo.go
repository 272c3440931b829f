package flight

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
)

// registerSQLInfo records the facts clients (the JDBC driver in particular)
// ask for before their first query. The dialect is MySQL's as parsed by the
// gate, not the engine's.
func registerSQLInfo(s *Server, version string) error {
	info := map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:           "lakegate",
		flightsql.SqlInfoFlightSqlServerVersion:        version,
		flightsql.SqlInfoFlightSqlServerArrowVersion:   "18",
		flightsql.SqlInfoFlightSqlServerReadOnly:       true,
		flightsql.SqlInfoFlightSqlServerSql:            true,
		flightsql.SqlInfoFlightSqlServerSubstrait:      false,
		flightsql.SqlInfoFlightSqlServerTransaction:    int32(flightsql.SqlTransactionNone),
		flightsql.SqlInfoFlightSqlServerCancel:         true,
		flightsql.SqlInfoFlightSqlServerBulkIngestion:  false,
		flightsql.SqlInfoDDLCatalog:                    false,
		flightsql.SqlInfoDDLSchema:                     false,
		flightsql.SqlInfoDDLTable:                      false,
		flightsql.SqlInfoIdentifierCase:                int64(flightsql.SqlCaseSensitivityCaseInsensitive),
		flightsql.SqlInfoIdentifierQuoteChar:           "`",
		flightsql.SqlInfoQuotedIdentifierCase:          int64(flightsql.SqlCaseSensitivityCaseInsensitive),
		flightsql.SqlInfoAllTablesAreASelectable:       false,
		flightsql.SqlInfoNullOrdering:                  int64(flightsql.SqlNullOrderingSortLow),
		flightsql.SqlInfoSearchStringEscape:            `\`,
		flightsql.SqlInfoExtraNameChars:                "",
		flightsql.SqlInfoSupportsColumnAliasing:        true,
		flightsql.SqlInfoNullPlusNullIsNull:            true,
		flightsql.SqlInfoSupportsTableCorrelationNames: true,
		flightsql.SqlInfoSupportsExpressionsInOrderBy:  true,
		flightsql.SqlInfoSupportsLikeEscapeClause:      true,
		flightsql.SqlInfoSupportsNonNullableColumns:    true,
		flightsql.SqlInfoSchemaTerm:                    "schema",
		flightsql.SqlInfoCatalogTerm:                   "catalog",
		flightsql.SqlInfoProcedureTerm:                 "procedure",
		flightsql.SqlInfoCatalogAtStart:                true,
		flightsql.SqlInfoSelectForUpdateSupported:      false,
		flightsql.SqlInfoStoredProceduresSupported:     false,
		flightsql.SqlInfoCorrelatedSubqueriesSupported: true,
		flightsql.SqlInfoMaxStatementLen:               int64(s.cfg.MaxSQLBytes),
		flightsql.SqlInfoMaxStatements:                 int64(1),
		flightsql.SqlInfoTransactionsSupported:         false,
	}
	for id, v := range info {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return err
		}
	}
	return nil
}

// xdbcType is one row of GetXdbcTypeInfo.
type xdbcType struct {
	name       string
	dataType   int32 // java.sql.Types
	columnSize int32
	prefix     string
	suffix     string
	caseSens   bool
	fixedScale bool
}

// JDBC type codes (java.sql.Types).
const (
	jdbcBit       = -7
	jdbcTinyInt   = -6
	jdbcBigInt    = -5
	jdbcVarBinary = -3
	jdbcInteger   = 4
	jdbcSmallInt  = 5
	jdbcFloat     = 6
	jdbcDouble    = 8
	jdbcDecimal   = 3
	jdbcVarChar   = 12
	jdbcDate      = 91
	jdbcTime      = 92
	jdbcTimestamp = 93
)

var xdbcTypes = []xdbcType{
	{name: "BOOLEAN", dataType: jdbcBit, columnSize: 1},
	{name: "TINYINT", dataType: jdbcTinyInt, columnSize: 3},
	{name: "BIGINT", dataType: jdbcBigInt, columnSize: 19},
	{name: "BLOB", dataType: jdbcVarBinary, columnSize: 1 << 30, prefix: "x'", suffix: "'"},
	{name: "DECIMAL", dataType: jdbcDecimal, columnSize: 38, fixedScale: true},
	{name: "INTEGER", dataType: jdbcInteger, columnSize: 10},
	{name: "SMALLINT", dataType: jdbcSmallInt, columnSize: 5},
	{name: "FLOAT", dataType: jdbcFloat, columnSize: 24},
	{name: "DOUBLE", dataType: jdbcDouble, columnSize: 53},
	{name: "VARCHAR", dataType: jdbcVarChar, columnSize: 1 << 30, prefix: "'", suffix: "'", caseSens: true},
	{name: "DATE", dataType: jdbcDate, columnSize: 10, prefix: "DATE '", suffix: "'"},
	{name: "TIME", dataType: jdbcTime, columnSize: 15, prefix: "TIME '", suffix: "'"},
	{name: "TIMESTAMP", dataType: jdbcTimestamp, columnSize: 26, prefix: "TIMESTAMP '", suffix: "'"},
}

// GetFlightInfoXdbcTypeInfo answers with a ticket for DoGetXdbcTypeInfo.
func (s *Server) GetFlightInfoXdbcTypeInfo(ctx context.Context, _ flightsql.GetXdbcTypeInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(ctx, desc, schema_ref.XdbcTypeInfo)
}

// DoGetXdbcTypeInfo lists the SQL types results can carry.
func (s *Server) DoGetXdbcTypeInfo(ctx context.Context, cmd flightsql.GetXdbcTypeInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	if _, err := principalOf(ctx); err != nil {
		return nil, nil, toStatus(err)
	}
	b := array.NewRecordBuilder(s.mem, schema_ref.XdbcTypeInfo)
	defer b.Release()
	str := func(i int) *array.StringBuilder { return b.Field(i).(*array.StringBuilder) }
	i32 := func(i int) *array.Int32Builder { return b.Field(i).(*array.Int32Builder) }
	boolean := func(i int) *array.BooleanBuilder { return b.Field(i).(*array.BooleanBuilder) }
	optStr := func(i int, v string) {
		if v == "" {
			str(i).AppendNull()
		} else {
			str(i).Append(v)
		}
	}
	for _, t := range xdbcTypes {
		if want := cmd.GetDataType(); want != nil && *want != t.dataType {
			continue
		}
		str(0).Append(t.name)
		i32(1).Append(t.dataType)
		i32(2).Append(t.columnSize)
		optStr(3, t.prefix)
		optStr(4, t.suffix)
		b.Field(5).AppendNull()          // create_params
		i32(6).Append(1)                 // nullable: columnNullable
		boolean(7).Append(t.caseSens)    // case_sensitive
		i32(8).Append(3)                 // searchable: typePredBasic|typePredChar
		boolean(9).Append(false)         // unsigned_attribute
		boolean(10).Append(t.fixedScale) // fixed_prec_scale
		boolean(11).Append(false)        // auto_increment
		str(12).Append(t.name)           // local_type_name
		i32(13).AppendNull()             // minimum_scale
		i32(14).AppendNull()             // maximum_scale
		i32(15).Append(t.dataType)       // sql_data_type
		i32(16).AppendNull()             // datetime_subcode
		i32(17).AppendNull()             // num_prec_radix
		i32(18).AppendNull()             // interval_precision
	}
	return oneBatch(schema_ref.XdbcTypeInfo, b)
}
