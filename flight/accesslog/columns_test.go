package accesslog

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func TestColumnsFollowEventFieldOrder(t *testing.T) {
	want := []string{"time", "request_id", "tenant", "principal", "gateway", "client_addr", "kind",
		"statement", "catalog", "tables_read", "tables_written", "filter_policies", "mask_policies",
		"decision", "deny_reason", "rows", "bytes", "duration_ms", "error_class"}
	s := Columns()
	if s.NumFields() != len(want) {
		t.Fatalf("%d columns, want %d", s.NumFields(), len(want))
	}
	for i, name := range want {
		f := s.Field(i)
		if f.Name != name {
			t.Errorf("column %d is %s, want %s", i, f.Name, name)
		}
		var wantType arrow.DataType = arrow.BinaryTypes.String
		switch name {
		case "time":
			wantType = &arrow.TimestampType{Unit: arrow.Microsecond}
		case "rows", "bytes":
			wantType = arrow.PrimitiveTypes.Int64
		case "duration_ms":
			wantType = arrow.PrimitiveTypes.Float64
		}
		if !arrow.TypeEqual(f.Type, wantType) {
			t.Errorf("column %s is %s, want %s", name, f.Type, wantType)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	events := []Event{
		{
			Time: t0, RequestID: "r1", Tenant: "acme", Principal: "bob", Gateway: "gw-1",
			ClientAddr: "10.0.0.1:5000", Kind: "query", Statement: "select * from `t` where `a` = ?",
			Catalog: "lake",
			Read: []Table{
				{Schema: "sales", Name: "orders", Version: 7, FilterPolicy: "region_filter", MaskPolicies: []string{"mask_email", "mask_ssn"}},
				{Schema: "sales", Name: "customers", Version: 3, FilterPolicy: "region_filter", MaskPolicies: []string{"mask_email"}},
			},
			Decision: Allowed, Rows: 42, Bytes: 4096, Duration: 1500 * time.Microsecond,
		},
		{
			Time: t0.Add(time.Second), RequestID: "r2", Tenant: "acme", Principal: "eve", Kind: "create table as",
			Read:     []Table{{Schema: "hr", Name: "salaries"}},
			Written:  []Table{{Schema: "scratch", Name: "copy"}},
			Decision: Denied, DenyReason: "privilege", ErrorClass: "NotFound",
			Statement: "bad \xff utf8",
		},
	}
	data, err := Encode(events)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pqfile.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if r.NumRowGroups() != 1 {
		t.Errorf("%d row groups, want 1", r.NumRowGroups())
	}
	cc, err := r.MetaData().RowGroup(0).ColumnChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := cc.Compression().String(); got != "ZSTD" {
		t.Errorf("compression %s, want ZSTD", got)
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	for i, f := range tbl.Schema().Fields() {
		if w := Columns().Field(i); f.Name != w.Name || !arrow.TypeEqual(f.Type, w.Type) {
			t.Fatalf("column %d read back as %s %s, want %s %s", i, f.Name, f.Type, w.Name, w.Type)
		}
	}
	rdr := array.NewTableReader(tbl, -1)
	defer rdr.Release()
	if !rdr.Next() {
		t.Fatal("no record")
	}
	rec := rdr.RecordBatch()
	str := func(col string, row int) string {
		return rec.Column(tbl.Schema().FieldIndices(col)[0]).(*array.String).Value(row)
	}
	for _, c := range []struct {
		col  string
		row  int
		want string
	}{
		{ColRequestID, 0, "r1"}, {ColTenant, 0, "acme"}, {ColPrincipal, 0, "bob"}, {ColGateway, 0, "gw-1"},
		{ColClientAddr, 0, "10.0.0.1:5000"}, {ColKind, 0, "query"}, {ColStatement, 0, "select * from `t` where `a` = ?"},
		{ColCatalog, 0, "lake"}, {ColTablesRead, 0, "sales.orders@7,sales.customers@3"}, {ColTablesWritten, 0, ""},
		{ColFilterPolicies, 0, "region_filter"}, {ColMaskPolicies, 0, "mask_email,mask_ssn"},
		{ColDecision, 0, "allowed"}, {ColDenyReason, 0, ""}, {ColErrorClass, 0, ""},
		{ColTablesRead, 1, "hr.salaries@0"}, {ColTablesWritten, 1, "scratch.copy@0"},
		{ColDecision, 1, "denied"}, {ColDenyReason, 1, "privilege"}, {ColErrorClass, 1, "NotFound"},
		{ColStatement, 1, "bad \uFFFD utf8"},
	} {
		if got := str(c.col, c.row); got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.col, got, c.want)
		}
	}
	ts := rec.Column(0).(*array.Timestamp).Value(0)
	if got := time.UnixMicro(int64(ts)).UTC(); !got.Equal(t0.Truncate(time.Microsecond)) {
		t.Errorf("time %v, want %v", got, t0.UTC())
	}
	if rows := rec.Column(15).(*array.Int64).Value(0); rows != 42 {
		t.Errorf("rows %d", rows)
	}
	if b := rec.Column(16).(*array.Int64).Value(0); b != 4096 {
		t.Errorf("bytes %d", b)
	}
	if d := rec.Column(17).(*array.Float64).Value(0); d != 1.5 {
		t.Errorf("duration_ms %v, want 1.5", d)
	}
}

func TestExpired(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	files := []FileInfo{
		{Path: "old", Version: 1, Newest: now.Add(-31 * 24 * time.Hour)},
		{Path: "edge", Version: 2, Newest: now.Add(-30 * 24 * time.Hour)},
		{Path: "new", Version: 3, Newest: now.Add(-time.Hour)},
	}
	for _, c := range []struct {
		name string
		keep time.Duration
		want []string
	}{
		{"30 days", 30 * 24 * time.Hour, []string{"old"}},
		{"1 minute", time.Minute, []string{"old", "edge", "new"}},
		{"forever", 0, nil},
		{"negative is forever", -time.Hour, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range Expired(files, now, c.keep) {
				got = append(got, f.Path)
			}
			equal(t, "expired", got, c.want)
		})
	}
}
