package integration_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// sqliteServerPkg is arrow-go's example Flight SQL server over SQLite: the
// upstream engine of these tests, run as its own process.
const sqliteServerPkg = "github.com/apache/arrow-go/v18/arrow/flight/flightsql/example/cmd/sqlite_flightsql_server"

var sqliteServer struct {
	once sync.Once
	bin  string
	err  error
}

// sqliteServerBin builds the example server once per test binary.
func sqliteServerBin(t testing.TB) string {
	t.Helper()
	sqliteServer.once.Do(func() {
		sqliteServer.bin = filepath.Join(filepath.Dir(lakegateBin), "sqlite_flightsql_server")
		build := exec.Command("go", "build", "-o", sqliteServer.bin, sqliteServerPkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		sqliteServer.err = build.Run()
	})
	if sqliteServer.err != nil {
		t.Fatalf("building the SQLite Flight SQL server: %v", sqliteServer.err)
	}
	return sqliteServer.bin
}

// upstreamProc is one running example server.
type upstreamProc struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// startUpstream runs the example server on addr (host:port) and waits for
// its start line.
func startUpstream(t testing.TB, addr string) *upstreamProc {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(sqliteServerBin(t), "-host", host, "-port", port)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &upstreamProc{addr: addr, cmd: cmd, done: make(chan struct{})}
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "Starting SQLite Flight SQL Server") {
				ok = true
				started <- true
			}
		}
		if !ok {
			started <- false
		}
	}()
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	select {
	case ok := <-started:
		if !ok {
			t.Fatal("the SQLite Flight SQL server exited before it started")
		}
	case <-time.After(startTimeout):
		t.Fatal("the SQLite Flight SQL server did not start")
	}
	return p
}

func (p *upstreamProc) stop() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	<-p.done
}

// TestUpstream governs arrow-go's example SQLite Flight SQL server as an
// upstream catalog: registered tables are queried through the gateway with
// ADBC, with a row filter and a mask; unregistered ones are missing; the
// engine's address and tickets never reach clients; an engine that goes
// down answers Unavailable and comes back without a gateway restart.
func TestUpstream(t *testing.T) {
	upAddr := freeLoopbackAddr(t)
	up := startUpstream(t, upAddr)
	creds := t.TempDir()
	if err := os.WriteFile(filepath.Join(creds, "sqlite.token"), []byte("upstream-secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--upstream-allow", upAddr, "--upstream-credentials-dir", creds)
	env, node := serveMetasrv(t, srv)
	const ml = "/api/metalakes/demo"
	admin := func(method, path string, body any) { env.must(t, node, method, path, body) }
	ctx := context.Background()

	admin("POST", ml+"/catalogs", map[string]any{"name": "ext", "type": "upstream", "comment": "SQLite engine",
		"properties": map[string]string{"upstream.address": upAddr, "upstream.dialect": "sqlite",
			"upstream.tls": "false", "upstream.credentials": "sqlite.token"}})
	admin("POST", ml+"/catalogs/ext/schemas", map[string]any{"name": "sales"})
	admin("POST", ml+"/catalogs/ext/schemas/sales/tables", map[string]any{"name": "ints",
		"columns": []map[string]any{{"name": "id", "type": "int64"}, {"name": "keyname", "type": "utf8"},
			{"name": "value", "type": "int64"}, {"name": "foreignid", "type": "int64"}},
		"properties": map[string]string{"upstream_name": "main.intTable"}})
	admin("PUT", ml+"/permissions/roles/sales_analyst/catalog/ext/grant", map[string]any{"privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}})
	admin("PUT", ml+"/permissions/roles/sales_analyst/schema/ext.sales/grant", map[string]any{"privileges": []map[string]string{
		{"name": "USE_SCHEMA", "condition": "ALLOW"}, {"name": "SELECT_TABLE", "condition": "ALLOW"}}})

	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	if err := analyst.conn.(adbc.PostInitOptions).SetOption(adbc.OptionKeyCurrentCatalog, "ext"); err != nil {
		t.Fatal(err)
	}

	// JDBC prepares every statement: prepared queries work on upstream
	// tables, and follow policy changes (checked again below).
	prepared := analyst.prepare(t, "SELECT keyname FROM sales.ints WHERE id = 1")
	if got := firstCell(t, ctx, prepared); got != "one" {
		t.Fatalf("prepared: %q", got)
	}

	t.Run("registered table", func(t *testing.T) {
		wantRows(t, analyst.mustRows(t, "SELECT keyname, value FROM sales.ints ORDER BY id"),
			[]string{"one", "1"}, []string{"zero", "0"}, []string{"negative one", "-1"}, []string{"NULL", "NULL"})
		wantRows(t, analyst.mustRows(t, "SELECT count(*), sum(value) FROM sales.ints WHERE keyname LIKE '%o%'"), []string{"3", "0"})
	})

	t.Run("unregistered table is missing", func(t *testing.T) {
		_, _, err := analyst.query(ctx, "SELECT * FROM sales.foreigntable")
		_, _, missing := analyst.query(ctx, "SELECT * FROM sales.no_such_table")
		if adbcStatus(err) != adbc.StatusNotFound || err.Error() != strings.ReplaceAll(missing.Error(), "no_such_table", "foreigntable") {
			t.Fatalf("unregistered: %v; missing: %v", err, missing)
		}
	})

	t.Run("upstream tables are read-only", func(t *testing.T) {
		admin("PUT", ml+"/permissions/roles/sales_analyst/schema/ext.sales/grant", map[string]any{"privileges": []map[string]string{
			{"name": "CREATE_TABLE", "condition": "ALLOW"}, {"name": "MODIFY_TABLE", "condition": "ALLOW"}}})
		for _, sql := range []string{
			"CREATE TABLE sales.copy AS SELECT 1 AS a",
			"INSERT INTO sales.ints VALUES (9, 'nine', 9, NULL)",
			"DROP TABLE sales.ints",
		} {
			_, err := analyst.exec(ctx, sql)
			if err == nil || adbcStatus(err) == adbc.StatusInternal || adbcStatus(err) == adbc.StatusUnknown || strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("%s: %v", sql, err)
			}
		}
		if _, err := analyst.exec(ctx, "CREATE TABLE sales.copy AS SELECT 1 AS a"); err == nil || !strings.Contains(err.Error(), "upstream catalog hold no data") {
			t.Errorf("CTAS into the upstream catalog: %v", err)
		}
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.ints"), []string{"4"})
	})

	t.Run("mixing engines is refused", func(t *testing.T) {
		// sales.orders of the lake catalog is not in ext: from ext it is
		// missing, and there is no way to name the other catalog in SQL.
		if _, _, err := analyst.query(ctx, "SELECT * FROM sales.ints JOIN sales.orders ON TRUE"); adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("join with a table of another catalog: %v", err)
		}
	})

	t.Run("filter and mask", func(t *testing.T) {
		admin("POST", ml+"/tags", map[string]any{"name": "upstream_rows"})
		admin("POST", ml+"/tags", map[string]any{"name": "upstream_pii"})
		admin("POST", ml+"/policies", map[string]any{"name": "nonneg", "policyType": "row_filter",
			"content": map[string]any{"expression": "value >= 0"}})
		admin("POST", ml+"/policies", map[string]any{"name": "hide_key", "policyType": "column_mask",
			"content": map[string]any{"mask": "REDACT"}})
		admin("PUT", ml+"/tags/upstream_rows/policies/nonneg", nil)
		admin("PUT", ml+"/tags/upstream_pii/policies/hide_key", nil)
		admin("POST", ml+"/objects/table/ext.sales.ints/tags", map[string]any{"tagsToAdd": []string{"upstream_rows"}})
		admin("POST", ml+"/objects/column/ext.sales.ints.keyname/tags", map[string]any{"tagsToAdd": []string{"upstream_pii"}})
		wantRows(t, analyst.mustRows(t, "SELECT id, keyname, value FROM sales.ints ORDER BY id"),
			[]string{"1", "***", "1"}, []string{"2", "***", "0"})
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.ints WHERE keyname = 'one'"), []string{"0"})
		wantRows(t, analyst.mustRows(t, "SELECT max(id) FROM sales.ints"), []string{"2"})
		// A statement prepared before the mask is re-authorized when it
		// runs; its result would now have another shape than announced, so
		// it is refused and must be prepared again.
		rdr, _, err := prepared.ExecuteQuery(ctx)
		if err == nil {
			for rdr.Next() {
			}
			err = rdr.Err()
			rdr.Release()
		}
		if err == nil || !strings.Contains(err.Error(), "prepare it again") {
			t.Fatalf("the statement prepared before the mask: %v", err)
		}
		if got := firstCell(t, ctx, analyst.prepare(t, "SELECT keyname FROM sales.ints WHERE id = 1")); got != "***" {
			t.Fatalf("prepared after the mask: %q", got)
		}
		admin("POST", ml+"/objects/table/ext.sales.ints/tags", map[string]any{"tagsToRemove": []string{"upstream_rows"}})
		admin("POST", ml+"/objects/column/ext.sales.ints.keyname/tags", map[string]any{"tagsToRemove": []string{"upstream_pii"}})
	})

	t.Run("engine address and tickets stay inside", func(t *testing.T) {
		conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		cl := flightsqlClient(conn)
		actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+srv.token(t, "analyst@demo"))
		// The session catalog travels in the session cookie; set it here.
		var hdr metadata.MD
		if _, err := cl.SetSessionOptions(actx, &flight.SetSessionOptionsRequest{SessionOptions: map[string]*flight.SessionOptionValue{
			"catalog": stringOption("ext")}}, grpc.Header(&hdr)); err != nil {
			t.Fatal(err)
		}
		actx = metadata.AppendToOutgoingContext(actx, "cookie", cookieNameValue(hdr.Get("set-cookie")[0]))
		info, err := cl.Execute(actx, "SELECT keyname FROM sales.ints")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := strings.Cut(upAddr, ":")
		raw, err := proto.Marshal(info)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), upAddr) || strings.Contains(string(raw), port) {
			t.Fatal("the FlightInfo carries the engine's address")
		}
		for _, ep := range info.Endpoint {
			if len(ep.Location) != 0 {
				t.Fatalf("endpoint locations %v", ep.Location)
			}
			if tk := string(ep.Ticket.GetTicket()); strings.Contains(tk, upAddr) || strings.Contains(tk, port) || strings.Contains(tk, "intTable") {
				t.Fatalf("the ticket carries the engine's address or names")
			}
		}
		// Discovery lists what the catalog registers, not what the engine has.
		tinfo, err := cl.GetTables(actx, &flightsql.GetTablesOpts{})
		if err != nil {
			t.Fatal(err)
		}
		trdr, err := cl.DoGet(actx, tinfo.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for trdr.Next() {
			rec := trdr.RecordBatch()
			for i := range int(rec.NumRows()) {
				listed = append(listed, rec.Column(0).ValueStr(i)+"."+rec.Column(1).ValueStr(i)+"."+rec.Column(2).ValueStr(i))
			}
		}
		trdr.Release()
		if !slices.Equal(listed, []string{"ext.sales.ints"}) {
			t.Fatalf("GetTables in the upstream catalog: %v", listed)
		}
		// A ticket the engine issued, presented to the gateway, is refused.
		upConn, err := grpc.NewClient(upAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer upConn.Close()
		upInfo, err := (&flightsql.Client{Client: flight.NewClientFromConn(upConn, nil)}).Execute(ctx, "SELECT * FROM intTable")
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := cl.DoGet(actx, upInfo.Endpoint[0].Ticket)
		if err == nil {
			for rdr.Next() {
			}
			err = rdr.Err()
			rdr.Release()
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("an engine ticket at the gateway: %v", err)
		}
	})

	t.Run("engine down and back", func(t *testing.T) {
		up.stop()
		_, _, err := analyst.query(ctx, "SELECT count(*) FROM sales.ints")
		if adbcStatus(err) != adbc.StatusIO || !strings.Contains(err.Error(), "Unavailable") || strings.Contains(err.Error(), upAddr) {
			t.Fatalf("engine down: %v", err)
		}
		startUpstream(t, upAddr)
		if _, err := analyst.exec(ctx, "CREATE TABLE sales.copy AS SELECT 1 AS a"); err == nil || !strings.Contains(err.Error(), "upstream catalog hold no data") {
			t.Errorf("CTAS into the upstream catalog: %v", err)
		}
		wantRows(t, analyst.mustRows(t, "SELECT count(*) FROM sales.ints"), []string{"4"})
	})
}
