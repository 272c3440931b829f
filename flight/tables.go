package flight

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"lakegate/flight/backend"
	"lakegate/stage"
)

// TableFiles makes committed table files available to the engine and opens
// tenants' child stages for writing; tablefiles.Files implements it.
type TableFiles interface {
	// Acquire localizes the files of every version, in order; release when
	// the statement no longer reads them.
	Acquire(ctx context.Context, tenant string, versions []backend.TableVersion) ([]backend.LocalTable, func(), error)
	// Store returns the tenant's child stage.
	Store(ctx context.Context, tenant string) (stage.Store, error)
}

// Arrow types of catalog column types, for discovery. Tables lakegate
// writes record Arrow type names (DataType.String()); tables created through
// the REST API may use Gravitino's names.
var (
	simpleArrowTypes = map[string]arrow.DataType{
		"bool": arrow.FixedWidthTypes.Boolean, "boolean": arrow.FixedWidthTypes.Boolean,
		"int8": arrow.PrimitiveTypes.Int8, "byte": arrow.PrimitiveTypes.Int8,
		"int16": arrow.PrimitiveTypes.Int16, "short": arrow.PrimitiveTypes.Int16,
		"int32": arrow.PrimitiveTypes.Int32, "integer": arrow.PrimitiveTypes.Int32,
		"int64": arrow.PrimitiveTypes.Int64, "long": arrow.PrimitiveTypes.Int64,
		"uint8": arrow.PrimitiveTypes.Uint8, "uint16": arrow.PrimitiveTypes.Uint16,
		"uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
		"float16": arrow.FixedWidthTypes.Float16, "float32": arrow.PrimitiveTypes.Float32, "float": arrow.PrimitiveTypes.Float32,
		"float64": arrow.PrimitiveTypes.Float64, "double": arrow.PrimitiveTypes.Float64,
		"utf8": arrow.BinaryTypes.String, "string": arrow.BinaryTypes.String, "varchar": arrow.BinaryTypes.String,
		"large_utf8": arrow.BinaryTypes.LargeString, "utf8_view": arrow.BinaryTypes.StringView,
		"binary": arrow.BinaryTypes.Binary, "large_binary": arrow.BinaryTypes.LargeBinary,
		"date32": arrow.FixedWidthTypes.Date32, "date": arrow.FixedWidthTypes.Date32, "date64": arrow.FixedWidthTypes.Date64,
		"time64[us]": arrow.FixedWidthTypes.Time64us, "time32[ms]": arrow.FixedWidthTypes.Time32ms,
		"null": arrow.Null,
	}
	timestampTypeRE = regexp.MustCompile(`^timestamp\[(s|ms|us|ns)(?:, tz=([A-Za-z0-9_/+:-]{1,64}))?\]$`)
	decimalTypeRE   = regexp.MustCompile(`^decimal(?:128)?\((\d{1,2}), ?(\d{1,2})\)$`)
)

// arrowType maps a catalog column type to an Arrow type. An unknown type is
// reported as a string column carrying the catalog's type name in the
// field metadata, so discovery never fails on one table.
func arrowType(name string) (arrow.DataType, bool) {
	if t, ok := simpleArrowTypes[strings.ToLower(name)]; ok {
		return t, true
	}
	if m := timestampTypeRE.FindStringSubmatch(name); m != nil {
		unit := map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}[m[1]]
		return &arrow.TimestampType{Unit: unit, TimeZone: m[2]}, true
	}
	if m := decimalTypeRE.FindStringSubmatch(strings.ToLower(name)); m != nil {
		p, _ := strconv.Atoi(m[1])
		sc, _ := strconv.Atoi(m[2])
		if p >= 1 && p <= 38 && sc <= p {
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(sc)}, true
		}
	}
	return arrow.BinaryTypes.String, false
}

// arrowSchema is the Arrow schema of a table version's columns.
func arrowSchema(cols []backend.Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		t, ok := arrowType(c.Type)
		fields[i] = arrow.Field{Name: c.Name, Type: t, Nullable: true}
		if !ok {
			fields[i].Metadata = arrow.NewMetadata([]string{"lakegate.catalog_type"}, []string{c.Type})
		}
	}
	return arrow.NewSchema(fields, nil)
}

// catalogType is the catalog column type recorded for an Arrow type.
func catalogType(t arrow.DataType) string { return t.String() }

// columnsOf returns the catalog columns of an Arrow schema: lower-cased
// names, which must be distinct identifiers.
func columnsOf(schema *arrow.Schema) ([]backend.Column, error) {
	if schema.NumFields() == 0 {
		return nil, fmt.Errorf("%w: a table needs at least one column", errBadRequest)
	}
	cols := make([]backend.Column, schema.NumFields())
	seen := make(map[string]bool, len(cols))
	for i, f := range schema.Fields() {
		name := strings.ToLower(f.Name)
		if !columnNameRE.MatchString(name) {
			return nil, fmt.Errorf("%w: column %d: names are 1–64 of [a-z0-9_], starting with a letter or _", errBadRequest, i+1)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: column %s appears twice", errBadRequest, name)
		}
		seen[name] = true
		cols[i] = backend.Column{Name: name, Type: catalogType(f.Type)}
	}
	return cols, nil
}

var columnNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,63}$`)
