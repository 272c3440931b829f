package flight

import (
	"strings"
	"testing"
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
	b, err := encodeShow(&showQuery{Kind: showTables, Schema: "sales"})
	if err != nil || !isShowPayload(b) {
		t.Fatalf("encodeShow: %v", err)
	}
	pl := &plan{sql: "SELECT 1"}
	qb, err := encodePayload(pl)
	if err != nil || isShowPayload(qb) {
		t.Fatalf("a query payload is a show payload: %v", err)
	}
	if _, err := decodePayload(b); err == nil {
		t.Fatal("a show payload decodes as a query payload")
	}
}
