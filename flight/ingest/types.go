package ingest

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// ColumnError reports a column the writer refuses, and why. Column is the
// dotted path of the offending field from the top-level column ("tags",
// "s.inner", "m.value").
type ColumnError struct {
	Column string
	Type   arrow.DataType // the offending (possibly nested) type
	Reason string         // what to do instead, e.g. "cast to timestamp[ms]"
	Err    error          // ErrUnsupportedType
}

func (e *ColumnError) Error() string {
	msg := fmt.Sprintf("ingest: column %q: %v: %s", e.Column, e.Type, e.Err)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

func (e *ColumnError) Unwrap() error { return e.Err }

// CheckSchema reports whether every column of s can be written: nil, an
// error wrapping ErrMalformed for a schema without columns, or a
// *ColumnError wrapping ErrUnsupportedType for the first column that
// cannot. Supported: bool; signed and unsigned 8–64-bit integers; float32,
// float64; utf8, large_utf8, binary, large_binary, fixed_size_binary;
// date32; time32[ms], time64[us]; timestamp[ms|us] with or without a time
// zone and timestamp[ns] without one; decimal128; dictionaries of utf8 or
// binary values; list, large_list, struct and map (with a supported
// primitive key) of supported types; and the arrow.uuid extension.
// Everything else is refused, because pqarrow cannot write it or one of
// pqarrow and DuckDB would read it back as another type or with less
// precision: null, float16, views, date64, time32[s], time64[ns],
// timestamp[s], timestamp[ns] with a time zone (DuckDB's TIMESTAMP WITH
// TIME ZONE is microseconds), durations, intervals, decimal32/64/256,
// dictionaries of other values, fixed_size_list, unions, run-end encoding
// and other extension types. The error's Reason says what to cast to.
func CheckSchema(s *arrow.Schema) error {
	if s == nil {
		return errors.New("ingest: nil schema")
	}
	if s.NumFields() == 0 {
		// Parquet stores a row count only through columns: the rows of a
		// batch without any would be recorded and never stored.
		return fmt.Errorf("%w: a table needs at least one column", ErrMalformed)
	}
	for _, f := range s.Fields() {
		if err := checkType(f.Name, f.Type); err != nil {
			return err
		}
	}
	return nil
}

func checkType(col string, t arrow.DataType) error {
	bad := func(reason string) error {
		return &ColumnError{Column: col, Type: t, Reason: reason, Err: ErrUnsupportedType}
	}
	switch t := t.(type) {
	case *arrow.BooleanType,
		*arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Int64Type,
		*arrow.Uint8Type, *arrow.Uint16Type, *arrow.Uint32Type, *arrow.Uint64Type,
		*arrow.Float32Type, *arrow.Float64Type,
		*arrow.StringType, *arrow.LargeStringType, *arrow.BinaryType, *arrow.LargeBinaryType,
		*arrow.FixedSizeBinaryType, *arrow.Date32Type, *arrow.Decimal128Type:
		return nil
	case *arrow.Time32Type:
		if t.Unit == arrow.Second {
			return bad("Parquet has no seconds unit; cast to time32[ms]")
		}
		return nil
	case *arrow.Time64Type:
		if t.Unit == arrow.Nanosecond {
			return bad("DuckDB's TIME has microseconds and would truncate; cast to time64[us]")
		}
		return nil
	case *arrow.TimestampType:
		if t.Unit == arrow.Second {
			return bad("Parquet has no seconds unit; cast to timestamp[ms]")
		}
		if t.Unit == arrow.Nanosecond && t.TimeZone != "" {
			return bad("DuckDB's TIMESTAMP WITH TIME ZONE has microseconds and would truncate; cast to timestamp[us, tz=" + t.TimeZone + "]")
		}
		return nil
	case *arrow.Date64Type:
		return bad("read back as date32; cast to date32")
	case *arrow.Decimal256Type:
		return bad("DuckDB decimals stop at precision 38; cast to decimal128 or a string")
	case *arrow.DictionaryType:
		switch t.ValueType.(type) {
		case *arrow.StringType, *arrow.LargeStringType, *arrow.BinaryType, *arrow.LargeBinaryType:
			return nil
		}
		return bad("only dictionaries of strings or binary read back as dictionaries; decode it")
	case *arrow.StringViewType, *arrow.BinaryViewType:
		return bad("view types are not written by pqarrow; cast to utf8 or binary")
	case *arrow.ListType:
		return checkType(col+"."+t.ElemField().Name, t.Elem())
	case *arrow.LargeListType:
		return checkType(col+"."+t.ElemField().Name, t.Elem())
	case *arrow.StructType:
		if t.NumFields() == 0 {
			return bad("Parquet has no empty groups")
		}
		for _, f := range t.Fields() {
			if err := checkType(col+"."+f.Name, f.Type); err != nil {
				return err
			}
		}
		return nil
	case *arrow.MapType:
		switch t.KeyType().(type) {
		case *arrow.StructType, *arrow.ListType, *arrow.LargeListType, *arrow.MapType, *arrow.DictionaryType:
			return bad("map keys must be primitive")
		}
		if err := checkType(col+".key", t.KeyType()); err != nil {
			return err
		}
		return checkType(col+".value", t.ItemType())
	case arrow.ExtensionType:
		if t.ExtensionName() == "arrow.uuid" {
			return nil
		}
		return bad("extension types are not kept; write the storage type")
	case *arrow.FixedSizeListType:
		return bad("DuckDB reads it back as a list; cast to list")
	case *arrow.Float16Type:
		return bad("DuckDB does not read Parquet float16; cast to float32")
	case *arrow.NullType:
		return bad("give the column a concrete type")
	}
	return bad("not representable in Parquet as the same type")
}
