package accesslog

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Column names of system.access_events, in Event's field order.
const (
	ColTime           = "time"
	ColRequestID      = "request_id"
	ColTenant         = "tenant"
	ColPrincipal      = "principal"
	ColGateway        = "gateway"
	ColClientAddr     = "client_addr"
	ColKind           = "kind"
	ColStatement      = "statement"
	ColCatalog        = "catalog"
	ColTablesRead     = "tables_read"
	ColTablesWritten  = "tables_written"
	ColFilterPolicies = "filter_policies"
	ColMaskPolicies   = "mask_policies"
	ColDecision       = "decision"
	ColDenyReason     = "deny_reason"
	ColRows           = "rows"
	ColBytes          = "bytes"
	ColDurationMS     = "duration_ms"
	ColErrorClass     = "error_class"
)

// columns is built once: the schema is immutable and shared.
var columns = func() *arrow.Schema {
	str := func(name string) arrow.Field {
		return arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	return arrow.NewSchema([]arrow.Field{
		// A naive microsecond timestamp holding UTC: DuckDB reads it as
		// TIMESTAMP (a time zone would make it TIMESTAMP WITH TIME ZONE).
		{Name: ColTime, Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		str(ColRequestID), str(ColTenant), str(ColPrincipal), str(ColGateway),
		str(ColClientAddr), str(ColKind), str(ColStatement), str(ColCatalog),
		str(ColTablesRead), str(ColTablesWritten), str(ColFilterPolicies), str(ColMaskPolicies),
		str(ColDecision), str(ColDenyReason),
		{Name: ColRows, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColBytes, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: ColDurationMS, Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		str(ColErrorClass),
	}, nil)
}()

// Columns returns the columns of system.access_events as an Arrow schema:
// time TIMESTAMP (µs, UTC, no time zone), the strings as VARCHAR, rows and
// bytes BIGINT, duration_ms DOUBLE. The result is shared: do not modify it.
func Columns() *arrow.Schema { return columns }

// TablesColumn renders tables as the tables_read/tables_written column:
// "schema.table@version", comma-separated ("@0" when not authorized).
func TablesColumn(tables []Table) string {
	if len(tables) == 0 {
		return ""
	}
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteByte(',')
		}
		if t.Schema != "" {
			b.WriteString(t.Schema)
			b.WriteByte('.')
		}
		b.WriteString(t.Name)
		b.WriteByte('@')
		b.WriteString(strconv.FormatUint(t.Version, 10))
	}
	return b.String()
}

// policiesColumns renders the filter_policies and mask_policies columns:
// the distinct policy names of the tables read, comma-separated, in order
// of first appearance.
func policiesColumns(tables []Table) (filters, masks string) {
	var f, m []string
	seen := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, t := range tables {
		if t.FilterPolicy != "" && !seen(f, t.FilterPolicy) {
			f = append(f, t.FilterPolicy)
		}
		for _, p := range t.MaskPolicies {
			if p != "" && !seen(m, p) {
				m = append(m, p)
			}
		}
	}
	return strings.Join(f, ","), strings.Join(m, ",")
}

// Encode writes events as one Parquet file (zstd, one row group) with the
// columns of Columns, in the order given. Strings that are not valid UTF-8
// are repaired (invalid bytes replaced by U+FFFD) so every reader accepts
// the file.
func Encode(events []Event) ([]byte, error) {
	return encode([][]Event{events}, len(events))
}

// encode encodes the events of chunks, count in all, as one file.
func encode(chunks [][]Event, count int) ([]byte, error) {
	rec := record(chunks, count)
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(int64(count)+1),
		parquet.WithCreatedBy("lakegate"),
	)
	w, err := pqarrow.NewFileWriter(columns, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("accesslog: parquet writer: %w", err)
	}
	if err := w.Write(rec); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("accesslog: encode %d events: %w", count, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("accesslog: close parquet file: %w", err)
	}
	return buf.Bytes(), nil
}

// record builds the Arrow record of the events of chunks.
func record(chunks [][]Event, count int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, columns)
	defer b.Release()
	b.Reserve(count)
	ts := b.Field(0).(*array.TimestampBuilder)
	s := func(i int, v string) {
		b.Field(i).(*array.StringBuilder).Append(strings.ToValidUTF8(v, "\uFFFD"))
	}
	rows := b.Field(15).(*array.Int64Builder)
	byts := b.Field(16).(*array.Int64Builder)
	dur := b.Field(17).(*array.Float64Builder)
	for _, events := range chunks {
		for i := range events {
			appendEvent(ts, s, rows, byts, dur, &events[i])
		}
	}
	return b.NewRecordBatch()
}

// appendEvent appends one event's row.
func appendEvent(ts *array.TimestampBuilder, s func(int, string), rows, byts *array.Int64Builder, dur *array.Float64Builder, e *Event) {
	ts.Append(arrow.Timestamp(e.Time.UTC().UnixMicro()))
	s(1, e.RequestID)
	s(2, e.Tenant)
	s(3, e.Principal)
	s(4, e.Gateway)
	s(5, e.ClientAddr)
	s(6, e.Kind)
	s(7, e.Statement)
	s(8, e.Catalog)
	s(9, TablesColumn(e.Read))
	s(10, TablesColumn(e.Written))
	f, m := policiesColumns(e.Read)
	s(11, f)
	s(12, m)
	s(13, string(e.Decision))
	s(14, e.DenyReason)
	rows.Append(e.Rows)
	byts.Append(e.Bytes)
	dur.Append(float64(e.Duration) / float64(1e6))
	s(18, e.ErrorClass)
}
