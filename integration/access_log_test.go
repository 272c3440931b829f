package integration_test

import (
	"context"
	"strings"
	"testing"
)

// TestAccessLogAcrossSIGTERM: statements of three users — a read, a CTAS,
// a denial and a refused write into schema system — are batched under an
// hour's flush interval, so only the flush of a graceful stop (SIGTERM)
// can write them; after a restart on the same data directory the tenant
// admin reads every one of them in system.access_events through the
// gateway, with no literal of a statement, and a user without a grant
// cannot read the table at all.
func TestAccessLogAcrossSIGTERM(t *testing.T) {
	dataDir := t.TempDir()
	args := []string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--access-log-flush", "1h"}
	s := startServeArgs(t, dataDir, args...)
	ctx := context.Background()
	analyst := mustDial(t, s.uri(), bearer(s.token(t, "analyst@demo")))
	hr := mustDial(t, s.uri(), bearer(s.token(t, "hr@demo")))
	admin := mustDial(t, s.uri(), bearer(s.token(t, "admin@demo")))

	const literal = "secret-literal-42"
	if _, _, err := analyst.query(ctx, "SELECT count(*) FROM sales.orders WHERE status = '"+literal+"'"); err != nil {
		t.Fatal(err)
	}
	if _, err := analyst.exec(ctx, "CREATE TABLE sales.big_orders AS SELECT * FROM sales.orders"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hr.query(ctx, "SELECT * FROM sales.orders WHERE status = '"+literal+"'"); err == nil {
		t.Fatal("hr@demo read sales.orders")
	}
	if _, err := admin.exec(ctx, "DROP TABLE system.access_events"); err == nil || !strings.Contains(err.Error(), "table system.access_events is read-only") {
		t.Fatalf("dropping system.access_events: %v, want it read-only", err)
	}
	s.stop(t)

	s = startServeArgs(t, dataDir, args...)
	admin = mustDial(t, s.uri(), bearer(s.token(t, "admin@demo")))
	rows := admin.mustRows(t, "SELECT principal, kind, tables_read, tables_written, decision, deny_reason, statement FROM system.access_events ORDER BY time")
	want := [][]string{
		{"analyst@demo", "query", "sales.orders@1", "", "allowed", ""},
		{"analyst@demo", "create table as", "sales.orders@1", "sales.big_orders@1", "allowed", ""},
		{"hr@demo", "query", "sales.orders@0", "", "denied", "namespace"},
		{"admin@demo", "drop table", "", "system.access_events@0", "denied", "privilege"},
	}
	if len(rows) != len(want) {
		t.Fatalf("events:\n%v\nwant %d", rows, len(want))
	}
	for i, w := range want {
		if got := rows[i][:len(w)]; strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("event %d: %q, want %q", i, got, w)
		}
		if strings.Contains(strings.Join(rows[i], "|"), literal) {
			t.Errorf("event %d holds the statement's literal: %q", i, rows[i])
		}
	}
	for _, i := range []int{0, 2} {
		if !strings.HasSuffix(rows[i][6], "from `sales` . `orders` where status = ?") {
			t.Errorf("event %d: statement %q, want it normalised", i, rows[i][6])
		}
	}
	analyst = mustDial(t, s.uri(), bearer(s.token(t, "analyst@demo")))
	if _, _, err := analyst.query(ctx, "SELECT count(*) FROM system.access_events"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("analyst@demo reading system.access_events: %v, want it missing", err)
	}
}
