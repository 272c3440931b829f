package flight

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"

	"lakegate/authz"
	"lakegate/flight/accesslog"
	"lakegate/flight/backend"
	"lakegate/flight/clocktest"
)

// Tests of the access events the Server produces (access.go), through a
// Flight SQL client of a lake whose Config.AccessLog records them.

// recordingLog is an AccessLog that keeps every event and admits a tenant
// unless admitErr is set.
type recordingLog struct {
	mu       sync.Mutex
	events   []accesslog.Event
	admitErr error
	admitted []string
	// recorded is closed (and replaced) at each Record: a call's event is
	// recorded as the call ends, which a client may see after the reply
	// (an update's result is sent before its handler returns).
	recorded chan struct{}
}

func (r *recordingLog) Admit(tenant string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.admitted = append(r.admitted, tenant)
	return r.admitErr
}

func (r *recordingLog) Record(ev accesslog.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	if r.recorded != nil {
		close(r.recorded)
		r.recorded = nil
	}
}

// takeWait returns the events recorded since the last take once there are
// at least n, failing t if they are not recorded within a minute.
func (r *recordingLog) takeWait(t *testing.T, n int) []accesslog.Event {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		r.mu.Lock()
		if len(r.events) >= n {
			out := r.events
			r.events = nil
			r.mu.Unlock()
			return out
		}
		if r.recorded == nil {
			r.recorded = make(chan struct{})
		}
		ch := r.recorded
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d access events recorded, want %d", len(r.take()), n)
		}
	}
}

// take returns the events recorded since the last take.
func (r *recordingLog) take() []accesslog.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

func (r *recordingLog) refuse(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.admitErr = err
}

// accessLake is a lake recording its access events in the returned log,
// with sales.orders (2 rows, version 1) and sales.secret (granted to
// no one) created, and the events of creating them taken.
func accessLake(t *testing.T) (*lake, *flightsql.Client, *recordingLog) {
	t.Helper()
	rec := &recordingLog{}
	l := newLake(t, func(c *Config) {
		c.AccessLog = rec
		c.GatewayID = "gw@acme"
	})
	cl := l.client(t)
	seedOrders(t, cl)
	if _, err := ingestJSON(bearerCtx(aliceToken), cl, ordersSchema, ordersRows, ingestOpts("sales", "secret", ingestCreate)); err != nil {
		t.Fatal(err)
	}
	l.cat.hide("sales.secret")
	rec.take()
	return l, cl, rec
}

// table is an access event's table at version.
func table(name string, version uint64) accesslog.Table {
	n := tableName(name)
	return accesslog.Table{Schema: n.Schema, Name: n.Name, Version: version}
}

// TestAccessEvents runs one call of every kind that reaches authorization
// and checks that it produced exactly one event, with the fields the call
// determines.
func TestAccessEvents(t *testing.T) {
	_, cl, rec := accessLake(t)
	ctx := bearerCtx(aliceToken)
	cases := []struct {
		name string
		run  func(t *testing.T) error
		code codes.Code
		want accesslog.Event // Time, RequestID, ClientAddr, Duration checked apart; Bytes > 0 when wantBytes
		// wantBytes: the event counts bytes (returned or written).
		wantBytes bool
		// none: the call records no event (refused before authorization).
		none bool
	}{
		{
			name: "allowed query",
			run: func(t *testing.T) error {
				_, err := runQuery(ctx, cl, "SELECT id, amount FROM sales.orders")
				return err
			},
			want:      accesslog.Event{Kind: "query", Statement: "select `id` , `amount` from `sales` . `orders`", Read: []accesslog.Table{table("sales.orders", 1)}, Decision: accesslog.Allowed, Rows: 2},
			wantBytes: true,
		},
		{
			name: "table outside the namespaces",
			run: func(t *testing.T) error {
				_, err := runQuery(ctx, cl, "SELECT o.id FROM sales.orders o JOIN hr.salaries s ON o.id = s.id")
				return err
			},
			code: codes.NotFound,
			want: accesslog.Event{Kind: "query", Statement: "select `o` . `id` from `sales` . `orders` `o` join `hr` . `salaries` `s` on `o` . `id` = `s` . `id`", Read: []accesslog.Table{table("hr.salaries", 0), table("sales.orders", 0)},
				Decision: accesslog.Denied, DenyReason: reasonNamespace, ErrorClass: "NotFound"},
		},
		{
			name: "syntax error",
			run: func(t *testing.T) error {
				_, err := runQuery(ctx, cl, "SELEC * FROM sales.orders")
				return err
			},
			code: codes.InvalidArgument,
			none: true,
		},
		{
			name: "statement too large",
			run: func(t *testing.T) error {
				_, err := runQuery(ctx, cl, "SELECT '"+strings.Repeat("x", 1<<20)+"'")
				return err
			},
			code: codes.InvalidArgument,
			none: true,
		},
		{
			name: "table not granted",
			run: func(t *testing.T) error {
				_, err := runQuery(ctx, cl, "SELECT * FROM sales.secret WHERE id = 7")
				return err
			},
			code: codes.NotFound,
			want: accesslog.Event{Kind: "query", Statement: "select * from `sales` . `secret` where `id` = ?", Read: []accesslog.Table{table("sales.secret", 0)},
				Decision: accesslog.Denied, DenyReason: reasonPrivilege, ErrorClass: "NotFound"},
		},
		{
			name: "create table as",
			run: func(t *testing.T) error {
				_, err := cl.ExecuteUpdate(ctx, "CREATE TABLE sales.copy AS SELECT * FROM sales.orders")
				return err
			},
			want: accesslog.Event{Kind: "create table as", Statement: "create table `sales` . `copy` as select * from `sales` . `orders`", Read: []accesslog.Table{table("sales.orders", 1)},
				Written: []accesslog.Table{table("sales.copy", 1)}, Decision: accesslog.Allowed, Rows: 2},
			wantBytes: true,
		},
		{
			name: "insert",
			run: func(t *testing.T) error {
				_, err := cl.ExecuteUpdate(ctx, "INSERT INTO sales.copy VALUES (3, 3.5)")
				return err
			},
			want: accesslog.Event{Kind: "insert", Statement: "insert into `sales` . `copy` values ( ... )", Read: []accesslog.Table{},
				Written: []accesslog.Table{table("sales.copy", 2)}, Decision: accesslog.Allowed, Rows: 1},
			wantBytes: true,
		},
		{
			name: "ingest",
			run: func(t *testing.T) error {
				_, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts("sales", "orders", ingestAppend))
				return err
			},
			want:      accesslog.Event{Kind: "ingest", Written: []accesslog.Table{table("sales.orders", 2)}, Decision: accesslog.Allowed, Rows: 2},
			wantBytes: true,
		},
		{
			name: "drop table denied",
			run: func(t *testing.T) error {
				_, err := cl.ExecuteUpdate(ctx, "DROP TABLE sales.secret")
				return err
			},
			code: codes.NotFound,
			want: accesslog.Event{Kind: "drop table", Statement: "drop table `sales` . `secret`", Written: []accesslog.Table{table("sales.secret", 0)},
				Decision: accesslog.Denied, DenyReason: reasonPrivilege, ErrorClass: "NotFound"},
		},
		{
			name: "get tables",
			run: func(t *testing.T) error {
				info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{})
				if err != nil {
					return err
				}
				_, err = fetch(ctx, cl, info)
				return err
			},
			// sales.orders and sales.copy; sales.secret is hidden.
			want:      accesslog.Event{Kind: "get tables", Decision: accesslog.Allowed, Rows: 2},
			wantBytes: true,
		},
		{
			name: "get schemas",
			run: func(t *testing.T) error {
				info, err := cl.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{})
				if err != nil {
					return err
				}
				_, err = fetch(ctx, cl, info)
				return err
			},
			want:      accesslog.Event{Kind: "get schemas", Decision: accesslog.Allowed, Rows: 1},
			wantBytes: true,
		},
		{
			name: "describe",
			run: func(t *testing.T) error {
				_, err := runQuery(ctx, cl, "DESCRIBE sales.orders")
				return err
			},
			want:      accesslog.Event{Kind: "describe", Statement: "describe `sales` . `orders`", Read: []accesslog.Table{table("sales.orders", 2)}, Decision: accesslog.Allowed, Rows: 2},
			wantBytes: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(t)
			checkStatus(t, err, tc.code, "")
			got := rec.take()
			if tc.none {
				if len(got) != 0 {
					t.Fatalf("a statement refused before authorization recorded %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d events, want 1: %+v", len(got), got)
			}
			ev := got[0]
			checkCallFields(t, ev)
			if tc.wantBytes != (ev.Bytes > 0) {
				t.Errorf("Bytes = %d, want > 0: %v", ev.Bytes, tc.wantBytes)
			}
			want := tc.want
			want.Tenant, want.Principal, want.Gateway, want.Catalog = "acme", "alice@acme", "gw@acme", "lake"
			ev.Time, ev.RequestID, ev.ClientAddr, ev.Duration, ev.Bytes = want.Time, "", "", 0, 0
			if want.Read == nil && ev.Read != nil && len(ev.Read) == 0 {
				ev.Read = nil
			}
			if !sameEvent(ev, want) {
				t.Errorf("event\n%+v\nwant\n%+v", ev, want)
			}
		})
	}
}

// checkCallFields checks the fields every event takes from its call.
func checkCallFields(t *testing.T, ev accesslog.Event) {
	t.Helper()
	if ev.Time.IsZero() || ev.Time.Location().String() != "UTC" {
		t.Errorf("Time = %v, want a UTC time", ev.Time)
	}
	if ev.RequestID == "" {
		t.Error("no RequestID")
	}
	if !strings.HasPrefix(ev.ClientAddr, "127.0.0.1:") {
		t.Errorf("ClientAddr = %q, want the loopback client's", ev.ClientAddr)
	}
	if ev.Duration < 0 {
		t.Errorf("Duration = %v", ev.Duration)
	}
}

// sameTables compares the tables of events.
func sameTables(x, y []accesslog.Table) bool {
	return slices.EqualFunc(x, y, func(p, q accesslog.Table) bool {
		return p.Schema == q.Schema && p.Name == q.Name && p.Version == q.Version &&
			p.FilterPolicy == q.FilterPolicy && slices.Equal(p.MaskPolicies, q.MaskPolicies)
	})
}

// sameEvent compares events, nil and empty table lists alike.
func sameEvent(a, b accesslog.Event) bool {
	tables := sameTables
	ra, wa, rb, wb := a.Read, a.Written, b.Read, b.Written
	a.Read, a.Written, b.Read, b.Written = nil, nil, nil, nil
	return tables(ra, rb) && tables(wa, wb) && a.Kind == b.Kind && a.Statement == b.Statement &&
		a.Tenant == b.Tenant && a.Principal == b.Principal && a.Gateway == b.Gateway && a.Catalog == b.Catalog &&
		a.Decision == b.Decision && a.DenyReason == b.DenyReason && a.Rows == b.Rows && a.Bytes == b.Bytes &&
		a.ErrorClass == b.ErrorClass && a.RequestID == b.RequestID && a.ClientAddr == b.ClientAddr &&
		a.Time.Equal(b.Time) && a.Duration == b.Duration
}

// TestAccessPreparedExecutions: each execution of a prepared statement is
// one event; a prepared statement closed without being executed is
// recorded once, as its plan.
func TestAccessPreparedExecutions(t *testing.T) {
	_, cl, rec := accessLake(t)
	ctx := bearerCtx(aliceToken)
	prep, err := cl.Prepare(ctx, "SELECT id FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("preparing recorded %+v; its executions record it", got)
	}
	for i := range 2 {
		if _, err := executePrepared(ctx, cl, prep, nil, ""); err != nil {
			t.Fatal(err)
		}
		got := rec.take()
		if len(got) != 1 || got[0].Kind != "query" || got[0].Rows != 2 || got[0].Decision != accesslog.Allowed ||
			!sameTables(got[0].Read, []accesslog.Table{table("sales.orders", 1)}) {
			t.Fatalf("execution %d: events %+v, want one query of sales.orders@1 returning 2 rows", i+1, got)
		}
	}
	if err := prep.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("closing an executed statement recorded %+v", got)
	}

	unused, err := cl.Prepare(ctx, "SELECT amount FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := unused.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 || got[0].Kind != "query" || got[0].Rows != 0 || got[0].Decision != accesslog.Allowed ||
		!sameTables(got[0].Read, []accesslog.Table{table("sales.orders", 1)}) {
		t.Fatalf("a statement closed unexecuted: events %+v, want its plan", got)
	}
}

// TestAccessTicketNeverFetched: a planned ticket nobody fetches is
// recorded as its plan (no rows) when the server shuts down, and a fetched
// one is not recorded twice.
func TestAccessTicketNeverFetched(t *testing.T) {
	l, cl, rec := accessLake(t)
	ctx := bearerCtx(aliceToken)
	if _, err := cl.Execute(ctx, "SELECT id FROM sales.orders"); err != nil {
		t.Fatal(err)
	}
	mustQuery(t, ctx, cl, "SELECT amount FROM sales.orders")
	if got := rec.take(); len(got) != 1 || got[0].Rows != 2 {
		t.Fatalf("events %+v, want the fetched query's only", got)
	}
	if err := l.srv.Close(); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 || got[0].Kind != "query" || got[0].Rows != 0 || got[0].Decision != accesslog.Allowed ||
		!sameTables(got[0].Read, []accesslog.Table{table("sales.orders", 1)}) {
		t.Fatalf("at shutdown: events %+v, want the plan never fetched", got)
	}
}

// TestAccessAdmitRefuses: when the access log cannot keep events, a
// statement is refused with Unavailable before it is planned (the catalog
// is not asked), with nothing of the log's own error, and records nothing.
func TestAccessAdmitRefuses(t *testing.T) {
	l, cl, rec := accessLake(t)
	ctx := bearerCtx(aliceToken)
	rec.refuse(errors.New("spool /var/spool/lakegate full"))
	before := len(l.cat.callers)
	calls := []struct {
		name string
		run  func() error
	}{
		{"query", func() error { _, err := runQuery(ctx, cl, "SELECT id FROM sales.orders"); return err }},
		{"prepare", func() error { _, err := cl.Prepare(ctx, "SELECT id FROM sales.orders"); return err }},
		{"update", func() error {
			_, err := cl.ExecuteUpdate(ctx, "INSERT INTO sales.orders VALUES (3, 1.0)")
			return err
		}},
		{"ingest", func() error {
			_, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts("sales", "orders", ingestAppend))
			return err
		}},
		{"get tables", func() error {
			info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{})
			if err == nil {
				_, err = fetch(ctx, cl, info)
			}
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			checkStatus(t, err, codes.Unavailable, "access log unavailable")
			if strings.Contains(err.Error(), "spool") {
				t.Errorf("the client sees the log's error: %v", err)
			}
		})
	}
	l.cat.mu.Lock()
	after := len(l.cat.callers)
	l.cat.mu.Unlock()
	if after != before {
		t.Errorf("the catalog was asked %d times for refused statements", after-before)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("refused statements recorded %+v", got)
	}
}

// TestAccessNoLiterals: no value typed into a statement reaches its event,
// allowed or denied.
func TestAccessNoLiterals(t *testing.T) {
	_, cl, rec := accessLake(t)
	ctx := bearerCtx(aliceToken)
	const ssn = "123-45-6789"
	for _, sql := range []string{
		"SELECT id FROM sales.orders WHERE CAST(id AS CHAR) = '" + ssn + "'",
		"SELECT id FROM sales.secret WHERE ssn = '" + ssn + "'",
		"SELECT id FROM hr.people WHERE ssn = '" + ssn + "'",
	} {
		_, _ = runQuery(ctx, cl, sql)
	}
	_, _ = cl.ExecuteUpdate(ctx, "INSERT INTO sales.orders SELECT 9, 1.0 FROM sales.orders WHERE '"+ssn+"' <> ''")
	got := rec.takeWait(t, 4)
	if len(got) != 4 {
		t.Fatalf("%d events, want 4: %+v", len(got), got)
	}
	for _, ev := range got {
		if strings.Contains(fmt.Sprintf("%+v", ev), ssn) || !strings.Contains(ev.Statement, "?") {
			t.Errorf("the event holds the literal, or no statement with ? in its place: %+v", ev)
		}
	}
}

// TestAccessFullTextOptIn: a tenant whose operator opted in keeps its
// statements whole in its events (the literal included); every other
// tenant's stay normalised.
func TestAccessFullTextOptIn(t *testing.T) {
	for _, tc := range []struct {
		fullText []string
		whole    bool
	}{{[]string{"acme"}, true}, {[]string{"globex"}, false}, {nil, false}} {
		rec := &recordingLog{}
		l := newLake(t, func(c *Config) { c.AccessLog, c.AccessLogFullText = rec, tc.fullText })
		cl := l.client(t)
		seedOrders(t, cl)
		rec.take()
		const q = "SELECT id FROM sales.orders WHERE amount > 1.5"
		if _, err := runQuery(bearerCtx(aliceToken), cl, q); err != nil {
			t.Fatal(err)
		}
		got := rec.take()
		if len(got) != 1 {
			t.Fatalf("%v: %d events", tc.fullText, len(got))
		}
		if whole := got[0].Statement == q; whole != tc.whole || !tc.whole && strings.Contains(got[0].Statement, "1.5") {
			t.Errorf("full text for %v: statement %q", tc.fullText, got[0].Statement)
		}
		// An update (ExecuteUpdate) follows the same rule as a query.
		const u = "CREATE TABLE sales.big AS SELECT id FROM sales.orders WHERE amount > 2.5"
		if _, err := cl.ExecuteUpdate(bearerCtx(aliceToken), u); err != nil {
			t.Fatal(err)
		}
		got = rec.takeWait(t, 1)
		if len(got) != 1 {
			t.Fatalf("%v: %d events for the update", tc.fullText, len(got))
		}
		if whole := got[0].Statement == u; whole != tc.whole || !tc.whole && strings.Contains(got[0].Statement, "2.5") {
			t.Errorf("full text for %v: update %q", tc.fullText, got[0].Statement)
		}
	}
}

// TestSystemSchemaReadOnly: no write through the gateway reaches schema
// system — not even a tenant admin's, who may read every schema — and the
// answer is the same whether the table exists or not.
func TestSystemSchemaReadOnly(t *testing.T) {
	const adaToken = "lg_ada_token"
	rec := &recordingLog{}
	l := newLake(t, func(c *Config) {
		pm, err := testPrincipals(t).With(testPrincipal(t, "ada@acme", authz.RoleTenantAdmin), authz.HashToken(adaToken))
		if err != nil {
			t.Fatal(err)
		}
		c.Principals, c.AccessLog = pm, rec
	})
	cl := l.client(t)
	ctx := bearerCtx(adaToken)
	seedOrders(t, cl)
	events := backend.TableVersion{Name: tableName("system.access_events"), StorageID: "0123456789abcdef0123456789abcdef",
		Columns: []backend.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}}
	l.cat.put(events)
	l.cat.locked(func(c *lakeCatalog) { c.schemas = append(c.schemas, "system") })
	rec.take()
	for _, name := range []string{"system.access_events", "system.nothere", "SYSTEM.access_events"} {
		writes := []struct {
			name, kind string
			run        func() error
		}{
			{"create table as", "create table as", func() error {
				_, err := cl.ExecuteUpdate(ctx, "CREATE TABLE "+name+" AS SELECT * FROM sales.orders")
				return err
			}},
			{"create table if not exists", "create table as", func() error {
				_, err := cl.ExecuteUpdate(ctx, "CREATE TABLE IF NOT EXISTS "+name+" AS SELECT * FROM sales.orders")
				return err
			}},
			{"insert", "insert", func() error {
				_, err := cl.ExecuteUpdate(ctx, "INSERT INTO "+name+" SELECT * FROM sales.orders")
				return err
			}},
			{"drop", "drop table", func() error { _, err := cl.ExecuteUpdate(ctx, "DROP TABLE "+name); return err }},
			{"drop if exists", "drop table", func() error { _, err := cl.ExecuteUpdate(ctx, "DROP TABLE IF EXISTS "+name); return err }},
			{"prepared insert", "insert", func() error {
				prep, err := cl.Prepare(ctx, "INSERT INTO "+name+" SELECT * FROM sales.orders")
				if err != nil {
					return err
				}
				defer prep.Close(ctx)
				_, err = prep.ExecuteUpdate(ctx)
				return err
			}},
		}
		sc, tb, _ := strings.Cut(name, ".")
		for _, mode := range []string{ingestCreate, ingestAppend, ingestReplace, ingestCreateAppend} {
			writes = append(writes, struct {
				name, kind string
				run        func() error
			}{"ingest " + mode, "ingest", func() error {
				_, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts(sc, tb, mode))
				return err
			}})
		}
		for _, w := range writes {
			t.Run(name+" "+w.name, func(t *testing.T) {
				err := w.run()
				shown := strings.ToLower(sc) + "." + tb
				if strings.HasPrefix(w.name, "ingest") {
					shown = "system." + tb // ingest names are lower-cased
				}
				checkStatus(t, err, codes.PermissionDenied, "table "+shown+" is read-only")
				got := rec.take()
				if len(got) != 1 || got[0].Kind != w.kind || got[0].Decision != accesslog.Denied || got[0].DenyReason != reasonPrivilege ||
					len(got[0].Written) != 1 || got[0].Written[0].Version != 0 || len(got[0].Read) != 0 {
					t.Errorf("events %+v, want one denial of the write", got)
				}
			})
		}
	}
	t.Run("unqualified, in a session using system", func(t *testing.T) {
		startSession(t, ctx, cl)
		if _, err := cl.ExecuteUpdate(ctx, "USE system"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if _, err := cl.ExecuteUpdate(ctx, "USE sales"); err != nil {
				t.Fatal(err)
			}
		}()
		for _, sql := range []string{"CREATE TABLE x AS SELECT * FROM sales.orders", "INSERT INTO access_events SELECT * FROM sales.orders", "DROP TABLE access_events"} {
			_, err := cl.ExecuteUpdate(ctx, sql)
			checkStatus(t, err, codes.PermissionDenied, "is read-only")
		}
		if _, err := ingestJSON(ctx, cl, ordersSchema, ordersRows, ingestOpts("", "access_events", ingestAppend)); err == nil {
			t.Fatal("ingest into the session's schema system succeeded")
		} else {
			checkStatus(t, err, codes.PermissionDenied, "table system.access_events is read-only")
		}
	})
	if v := l.cat.committed(); len(v) != 1 {
		t.Errorf("commits %+v, want only the seed's", v)
	}
	// Reading it is governed like any table.
	if rows := mustQuery(t, ctx, cl, "DESCRIBE system.access_events"); len(rows) != 2 {
		t.Errorf("describing system.access_events: %v", rows)
	}
}

// TestAccessPolicies: a read through a row filter and masks names their
// policies in the event; a mask of a column the table does not have is not
// applied, so not named.
func TestAccessPolicies(t *testing.T) {
	l, cl, rec := accessLake(t)
	l.cat.set("sales.orders", func(t *lakeTable) {
		t.versions[len(t.versions)-1].Policy = &backend.TablePolicy{RowFilter: "id = 1", FilterPolicy: "first_only",
			Masks: []backend.ColumnMask{
				{Column: "amount", Mask: "NULL", Policy: "hide_amounts"},
				{Column: "gone", Mask: "NULL", Policy: "hide_gone"},
			}}
	})
	rows := mustQuery(t, bearerCtx(aliceToken), cl, "SELECT id, amount FROM sales.orders")
	if len(rows) != 1 || rows[0][1] != "(null)" {
		t.Fatalf("rows %v, want id 1 with its amount masked", rows)
	}
	got := rec.take()
	want := []accesslog.Table{{Schema: "sales", Name: "orders", Version: 1, FilterPolicy: "first_only", MaskPolicies: []string{"hide_amounts"}}}
	if len(got) != 1 || !sameTables(got[0].Read, want) || got[0].Rows != 1 {
		t.Fatalf("events %+v, want one read of %+v returning 1 row", got, want)
	}
}

// TestAccessTicketLifecycle: a ticket's DoGet records the statement's
// decision at fetch (a grant revoked between planning and fetch denies
// it); a ticket that does not open is a denial of reason ticket; a ticket
// never fetched is recorded as its plan once it has expired.
func TestAccessTicketLifecycle(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	rec := &recordingLog{}
	l := newLake(t, func(c *Config) { c.AccessLog, c.Now = rec, clock.Now })
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	seedOrders(t, cl)
	rec.take()

	info, err := cl.Execute(ctx, "SELECT id FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	l.cat.hide("sales.orders")
	_, err = fetch(ctx, cl, info)
	checkStatus(t, err, codes.NotFound, "table sales.orders does not exist")
	got := rec.take()
	if len(got) != 1 || got[0].Decision != accesslog.Denied || got[0].DenyReason != reasonPrivilege ||
		!sameTables(got[0].Read, []accesslog.Table{table("sales.orders", 0)}) || got[0].Time != clock.Now() {
		t.Fatalf("a fetch after the grant was revoked: events %+v, want one denial of sales.orders@0", got)
	}

	handle, err := statementHandle(info.Endpoint[0].Ticket.Ticket)
	if err != nil {
		t.Fatal(err)
	}
	handle = slices.Clone(handle)
	handle[len(handle)-1] ^= 1
	tkt, err := flightsql.CreateStatementQueryTicket(handle)
	if err != nil {
		t.Fatal(err)
	}
	forged := &flight.Ticket{Ticket: tkt}
	if rdr, err := cl.DoGet(ctx, forged); err == nil {
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
		checkStatus(t, err, codes.Unauthenticated, "")
	} else {
		checkStatus(t, err, codes.Unauthenticated, "")
	}
	got = rec.take()
	if len(got) != 1 || got[0].Decision != accesslog.Denied || got[0].DenyReason != reasonTicket || got[0].Kind != "query" {
		t.Fatalf("a forged ticket: events %+v, want one denial of reason ticket", got)
	}

	l.cat.set("sales.orders", func(t *lakeTable) { t.hidden = false })
	if _, err := cl.Execute(ctx, "SELECT amount FROM sales.orders"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(11 * time.Minute) // past the ticket's TTL
	mustQuery(t, ctx, cl, "SELECT id FROM sales.orders")
	got = rec.take()
	slices.SortFunc(got, func(a, b accesslog.Event) int { return int(a.Rows - b.Rows) })
	if len(got) != 2 || got[0].Rows != 0 || got[1].Rows != 2 || !sameTables(got[0].Read, []accesslog.Table{table("sales.orders", 1)}) {
		t.Fatalf("events %+v, want the expired plan (no rows) and the fetched query", got)
	}
}

// TestNormalizedTextsRemembers: the cache answers what Normalize answers,
// for a repeated text and for texts that differ only in a literal, and
// starts over once full.
func TestNormalizedTextsRemembers(t *testing.T) {
	var n normalizedTexts
	texts := []string{
		"SELECT * FROM t WHERE id = 1",
		"SELECT * FROM t WHERE id = 1",
		"SELECT * FROM t WHERE id = 2",
		"SELECT * FROM t WHERE name = 'secret'",
		"select * from t where name = 'other'",
	}
	for _, text := range texts {
		if got, want := n.get(text), normalizeStatement(text); got != want {
			t.Fatalf("get(%q) = %q, want %q", text, got, want)
		}
	}
	if len(n.m) != 4 {
		t.Fatalf("remembers %d texts, want 4 (one per distinct text)", len(n.m))
	}
	for i := range maxNormalized {
		n.get(fmt.Sprintf("SELECT %d", i))
	}
	if len(n.m) > maxNormalized {
		t.Fatalf("remembers %d texts, more than %d", len(n.m), maxNormalized)
	}
	if got, want := n.get(texts[3]), normalizeStatement(texts[3]); got != want {
		t.Fatalf("after starting over: %q, want %q", got, want)
	}
}
