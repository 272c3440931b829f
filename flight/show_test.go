package flight

import (
	"context"
	"slices"
	"strings"
	"testing"

	"lakegate/authz/sqlgate"
)

func TestScrubPlan(t *testing.T) {
	for in, want := range map[string]string{
		"│ READ_PARQUET /data/tenants/acme/stage/t/part-0.parquet │": "│ READ_PARQUET <path> │",
		"Files: '/var/lib/x/y.parquet', 's3://bucket/key.parquet'":   "Files: '<path>', '<path>'",
		"(a / NULLIF(b, 0))": "(a / NULLIF(b, 0))",
		"│ Filters: id<=3 │": "│ Filters: id<=3 │",
	} {
		if got := scrubPlan(in); got != want {
			t.Errorf("scrubPlan(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShowSchema(t *testing.T) {
	pat := "ord%"
	for _, tt := range []struct {
		q    showQuery
		want string
	}{
		{showQuery{Kind: showDatabases}, "Database"},
		{showQuery{Kind: showDatabases, Pattern: &pat}, "Database (ord%)"},
		{showQuery{Kind: showTables, Schema: "sales"}, "Tables_in_sales"},
		{showQuery{Kind: showTables, Schema: "sales", Pattern: &pat}, "Tables_in_sales (ord%)"},
		{showQuery{Kind: showColumns, Schema: "s", Table: "t"}, "Field,Type,Null,Key,Default,Extra"},
		{showQuery{Kind: showExplain}, "plan"},
	} {
		var names []string
		for _, f := range showSchema(&tt.q).Fields() {
			names = append(names, f.Name)
		}
		if got := strings.Join(names, ","); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.q, got, tt.want)
		}
	}
}

func TestShowPayload(t *testing.T) {
	b, err := encodeShow(&showQuery{Kind: showTables, Schema: "sales"}, accessedStatement{})
	if err != nil || !isShowPayload(b) {
		t.Fatalf("encodeShow: %v", err)
	}
	pl := &plan{sql: "SELECT 1"}
	qb, err := encodePayload(pl, accessedStatement{})
	if err != nil || isShowPayload(qb) {
		t.Fatalf("a query payload is a show payload: %v", err)
	}
	if _, err := decodePayload(b); err == nil {
		t.Fatal("a show payload decodes as a query payload")
	}
}

// TestMySQLType: DESCRIBE shows MySQL's type names for the catalog's
// (Arrow's or Gravitino's) column types.
func TestMySQLType(t *testing.T) {
	for catalog, want := range map[string]string{
		"bool":                  "tinyint(1)",
		"boolean":               "tinyint(1)",
		"int8":                  "tinyint",
		"int16":                 "smallint",
		"int32":                 "int",
		"integer":               "int",
		"int64":                 "bigint",
		"long":                  "bigint",
		"uint8":                 "tinyint unsigned",
		"uint16":                "smallint unsigned",
		"uint32":                "int unsigned",
		"uint64":                "bigint unsigned",
		"float16":               "float",
		"float32":               "float",
		"float64":               "double",
		"double":                "double",
		"utf8":                  "text",
		"large_utf8":            "text",
		"utf8_view":             "text",
		"string":                "text",
		"binary":                "blob",
		"large_binary":          "blob",
		"date32":                "date",
		"date64":                "date",
		"time32[ms]":            "time(3)",
		"time64[us]":            "time(6)",
		"timestamp[s]":          "datetime",
		"timestamp[ms]":         "datetime(3)",
		"timestamp[us]":         "datetime(6)",
		"timestamp[ns]":         "datetime(6)",
		"timestamp[us, tz=UTC]": "timestamp(6)",
		"decimal(12, 2)":        "decimal(12,2)",
		"decimal128(38, 0)":     "decimal(38,0)",
		"null":                  "null",
		"list<item: int64>":     "list<item: int64>",
		"GEOMETRY":              "geometry",
	} {
		if got := mysqlType(catalog); got != want {
			t.Errorf("mysqlType(%q) = %q, want %q", catalog, got, want)
		}
	}
}

// TestFixedShows: SHOW VARIABLES, WARNINGS, COLLATION and CHARACTER SET are
// answered from fixed values, with MySQL's columns; LIKE filters the names.
func TestFixedShows(t *testing.T) {
	pn := &planner{gate: sqlgate.New(sqlgate.Config{MaxSQLBytes: 1 << 20})}
	pat := func(p string) *string { return &p }
	for _, tt := range []struct {
		q       showQuery
		columns string
		first   []string // column 0 of the rows
	}{
		{showQuery{Kind: showVariables, Pattern: pat("version%")}, "Variable_name,Value", []string{"version", "version_comment"}},
		{showQuery{Kind: showVariables, Pattern: pat("max\\_allowed\\_packet")}, "Variable_name,Value", []string{"max_allowed_packet"}},
		{showQuery{Kind: showVariables, Pattern: pat("hostname")}, "Variable_name,Value", nil},
		{showQuery{Kind: showWarnings}, "Level,Code,Message", nil},
		{showQuery{Kind: showCollation}, "Collation,Charset,Id,Default,Compiled,Sortlen,Pad_attribute", []string{"utf8mb4_0900_ai_ci"}},
		{showQuery{Kind: showCollation, Pattern: pat("latin1%")}, "Collation,Charset,Id,Default,Compiled,Sortlen,Pad_attribute", nil},
		{showQuery{Kind: showCharset, Pattern: pat("utf8%")}, "Charset,Description,Default collation,Maxlen", []string{"utf8mb4"}},
	} {
		var names []string
		for _, f := range showSchema(&tt.q).Fields() {
			names = append(names, f.Name)
		}
		if got := strings.Join(names, ","); got != tt.columns {
			t.Errorf("%+v: columns %s, want %s", tt.q, got, tt.columns)
		}
		rows, err := pn.Show(context.Background(), who{}, &tt.q)
		if err != nil {
			t.Fatalf("%+v: %v", tt.q, err)
		}
		var first []string
		for _, r := range rows {
			if len(r) != len(names) {
				t.Fatalf("%+v: row %v has %d cells", tt.q, r, len(r))
			}
			first = append(first, *r[0])
		}
		if !slices.Equal(first, tt.first) {
			t.Errorf("%+v: rows %v, want %v", tt.q, first, tt.first)
		}
	}
	rows, _ := pn.Show(context.Background(), who{}, &showQuery{Kind: showVariables, Pattern: pat("max_allowed_packet")})
	if len(rows) != 1 || *rows[0][1] != "1048576" {
		t.Errorf("max_allowed_packet: %v", rows)
	}
}
