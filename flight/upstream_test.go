package flight

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/grpc/codes"

	"lakegate/flight/backend"
	"lakegate/flight/backend/upstream"
)

// Tests of the tables of upstream engines (upstream.go) through a Flight
// SQL client of a lake whose upstream engine is fakeUpstreams: what the
// gateway sends the engine, what the client gets, and the refusals.

// remoteEngine is the engine of sales.remote and sales.remote2.
var remoteEngine = backend.UpstreamTable{Address: "engine.internal:31337", TLS: true, Credentials: "engine.json", Dialect: "mysql"}

// remoteColumns are the catalog's columns of sales.remote.
var remoteColumns = []backend.Column{{Name: "id", Type: "int64"}, {Name: "name", Type: "utf8"}, {Name: "amount", Type: "float64"}}

// newUpstreamLake returns a lake with upstream tables sales.remote
// (shop.orders on remoteEngine), sales.remote2 (shop.items, same engine),
// sales.elsewhere (on another engine) and hr.remote (carol's); its engine
// answers rows of (id, name). mutate is as for newLake.
func newUpstreamLake(t *testing.T, mutate func(*Config)) *lake {
	t.Helper()
	l := newLake(t, mutate)
	for name, engineName := range map[string]string{"sales.remote": "shop.orders", "sales.remote2": "shop.items", "hr.remote": "hr.staff"} {
		up := remoteEngine
		up.Name = engineName
		l.cat.put(backend.TableVersion{Name: tableName(name), StorageID: "st-" + name, Columns: remoteColumns, Upstream: &up})
	}
	other := remoteEngine
	other.Address, other.Name = "other.internal:31337", "shop.orders"
	l.cat.put(backend.TableVersion{Name: tableName("sales.elsewhere"), StorageID: "st-elsewhere", Columns: remoteColumns, Upstream: &other})
	l.up.schema = schemaOf("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String)
	l.up.rowsJSON = `[{"id":1,"name":"one"},{"id":2,"name":null}]`
	return l
}

// setUpstream changes the upstream of table name with f.
func setUpstream(l *lake, name string, f func(v *backend.TableVersion)) {
	l.cat.set(name, func(t *lakeTable) { f(&t.versions[len(t.versions)-1]) })
}

// TestUpstreamQuery checks the SQL an upstream engine is sent for a query
// over its tables, and that the client gets the engine's rows from the
// gateway, reaching the engine the catalog names.
func TestUpstreamQuery(t *testing.T) {
	const (
		plain    = "SELECT `id`,`name` FROM `shop`.`orders` AS `remote`"
		filtered = plain + " WHERE (`id` > 0)"
		join     = "SELECT `r`.`id`,`r`.`name` FROM `shop`.`orders` AS `r` JOIN `shop`.`items` AS `i` ON (`r`.`id` = `i`.`id`)"
		sqlite   = `SELECT "id","name" FROM "shop"."orders" AS "remote"`
		policy   = "SELECT `id`,`name` FROM (SELECT `__lg_p`.`id` AS `id`, '***' AS `name`, `__lg_p`.`amount` AS `amount` FROM `shop`.`orders` AS `__lg_p` WHERE ((`__lg_p`.`amount` < 100)) LIMIT 9223372036854775807) AS `remote`"
	)
	rows := [][]string{{"1", "one"}, {"2", "(null)"}}
	cases := []struct {
		name  string
		setup func(t *testing.T, l *lake)
		sql   string
		sent  []string // what the engine was sent, in order
	}{
		{name: "a query runs on the engine, on its own table name",
			sql: "SELECT id, name FROM sales.remote WHERE id > 0", sent: []string{"schema: " + filtered, "execute: " + filtered}},
		{name: "two tables of one engine",
			sql: "SELECT r.id, r.name FROM sales.remote r JOIN sales.remote2 i ON r.id = i.id", sent: []string{"schema: " + join, "execute: " + join}},
		{name: "an engine that describes only by running",
			setup: func(_ *testing.T, l *lake) { l.up.noSchema = true },
			sql:   "SELECT id, name FROM sales.remote", sent: []string{"schema: " + plain, "execute: " + plain, "execute: " + plain}},
		{name: "a sqlite engine",
			setup: func(_ *testing.T, l *lake) {
				setUpstream(l, "sales.remote", func(v *backend.TableVersion) { v.Upstream.Dialect = "sqlite" })
			},
			sql: "SELECT id, name FROM sales.remote", sent: []string{"schema: " + sqlite, "execute: " + sqlite}},
		{name: "a row filter and a mask apply on the engine",
			setup: func(_ *testing.T, l *lake) {
				setUpstream(l, "sales.remote", func(v *backend.TableVersion) {
					v.Policy = &backend.TablePolicy{RowFilter: "amount < 100", Masks: []backend.ColumnMask{{Column: "name", Mask: "REDACT"}}}
				})
			},
			sql: "SELECT id, name FROM sales.remote", sent: []string{"schema: " + policy, "execute: " + policy}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newUpstreamLake(t, nil)
			if tc.setup != nil {
				tc.setup(t, l)
			}
			cl := l.client(t)
			ctx := bearerCtx(aliceToken)
			info, err := cl.Execute(ctx, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			// The client is served by the gateway: no engine location or
			// ticket reaches it.
			for _, ep := range info.GetEndpoint() {
				if len(ep.GetLocation()) != 0 {
					t.Errorf("an endpoint names locations %v", ep.GetLocation())
				}
				if strings.Contains(string(ep.GetTicket().GetTicket()), "shop") {
					t.Error("the ticket carries the engine's SQL in the clear")
				}
			}
			got, err := fetch(ctx, cl, info)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, rows, slices.Equal) {
				t.Errorf("rows %v, want %v", got, rows)
			}
			if sent := l.up.statements(); !slices.Equal(sent, tc.sent) {
				t.Errorf("the engine was sent\n%q\nwant\n%q", sent, tc.sent)
			}
			l.up.mu.Lock()
			defer l.up.mu.Unlock()
			for _, tg := range l.up.targets {
				if tg.Address != remoteEngine.Address || !tg.TLS || tg.Credentials != remoteEngine.Credentials {
					t.Errorf("target %+v, want the catalog's engine %+v", tg, remoteEngine)
				}
			}
		})
	}
}

// TestUpstreamRefusals checks the statements over upstream tables the
// gateway refuses, or whose engine fails, and that a refused plan sends
// the engine nothing it should not.
func TestUpstreamRefusals(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, l *lake)
		cfg   func(c *Config)
		sql   string
		code  codes.Code
		msg   string
		sent  int // statements the engine was sent
	}{
		{name: "a gateway with no upstream engines", cfg: func(c *Config) { c.Upstreams = nil },
			sql: "SELECT id FROM sales.remote", code: codes.Unavailable, msg: "the engine is unavailable; retry"},
		{name: "a table of the embedded engine and an upstream one",
			setup: func(t *testing.T, l *lake) { seedOrders(t, l.client(t)) },
			sql:   "SELECT o.id FROM sales.orders o JOIN sales.remote r ON o.id = r.id", code: codes.InvalidArgument,
			msg: "a statement may not read tables of different engines"},
		{name: "tables of two upstream engines",
			sql: "SELECT r.id FROM sales.remote r JOIN sales.elsewhere e ON r.id = e.id", code: codes.InvalidArgument,
			msg: "a statement may not read tables of different engines"},
		{name: "an engine of an unknown dialect",
			setup: func(_ *testing.T, l *lake) {
				setUpstream(l, "sales.remote", func(v *backend.TableVersion) { v.Upstream.Dialect = "oracle" })
			},
			sql: "SELECT id FROM sales.remote", code: codes.InvalidArgument, msg: "the engine of table sales.remote has an unsupported dialect"},
		{name: "an engine of the embedded engine's dialect",
			setup: func(_ *testing.T, l *lake) {
				setUpstream(l, "sales.remote", func(v *backend.TableVersion) { v.Upstream.Dialect = "duckdb" })
			},
			sql: "SELECT id FROM sales.remote", code: codes.InvalidArgument, msg: "the engine of table sales.remote has an unsupported dialect"},
		{name: "an engine-side name without a schema",
			setup: func(_ *testing.T, l *lake) {
				setUpstream(l, "sales.remote", func(v *backend.TableVersion) { v.Upstream.Name = "orders" })
			},
			sql: "SELECT id FROM sales.remote", code: codes.InvalidArgument, msg: "table sales.remote has no usable engine-side name"},
		{name: "a function the engine's dialect has no portable form of",
			sql: "SELECT sha2(name, 256) FROM sales.remote", code: codes.InvalidArgument,
			msg: `function "sha2" is not supported on tables of an upstream engine`},
		{name: "a parameter", sql: "SELECT id FROM sales.remote WHERE id = ?", code: codes.InvalidArgument,
			msg: "parameters are not supported on tables of an upstream engine"},
		{name: "EXPLAIN", sql: "EXPLAIN SELECT id FROM sales.remote", code: codes.InvalidArgument,
			msg: "EXPLAIN is not supported on tables of an upstream engine"},
		{name: "an engine the gateway may not reach",
			setup: func(_ *testing.T, l *lake) {
				l.up.schemaErr = fmt.Errorf("%w: engine.internal", upstream.ErrNotAllowed)
			},
			sql: "SELECT id FROM sales.remote", code: codes.Unavailable, msg: "the engine is unavailable; retry", sent: 1},
		{name: "an engine with unusable credentials",
			setup: func(_ *testing.T, l *lake) { l.up.schemaErr = fmt.Errorf("%w: engine.json", upstream.ErrCredentials) },
			sql:   "SELECT id FROM sales.remote", code: codes.Unavailable, msg: "the engine is unavailable; retry", sent: 1},
		{name: "an engine that cannot describe and fails to run",
			setup: func(_ *testing.T, l *lake) {
				l.up.noSchema = true
				l.up.execErr = fmt.Errorf("%w: engine.internal", upstream.ErrInvalidTarget)
			},
			sql: "SELECT id FROM sales.remote", code: codes.Unavailable, msg: "the engine is unavailable; retry", sent: 2},
		{name: "an engine that rejects the statement",
			setup: func(_ *testing.T, l *lake) {
				l.up.schemaErr = fmt.Errorf("%w: Unknown column 'nope'", backend.ErrQuery)
			},
			sql: "SELECT id FROM sales.remote", code: codes.InvalidArgument, msg: "Unknown column 'nope'", sent: 1},
		{name: "an engine rejecting a statement over a filtered table",
			setup: func(_ *testing.T, l *lake) {
				setUpstream(l, "sales.remote", func(v *backend.TableVersion) { v.Policy = &backend.TablePolicy{RowFilter: "amount < 100"} })
				l.up.schemaErr = fmt.Errorf("%w: Conversion Error: 'secret' in amount < 100", backend.ErrQuery)
			},
			sql: "SELECT id FROM sales.remote", code: codes.InvalidArgument, msg: "details withheld", sent: 1},

		// A table the caller may not read looks missing, and its engine
		// hears nothing.
		{name: "an upstream table outside the namespace grants",
			sql: "SELECT id FROM hr.remote", code: codes.NotFound, msg: "table hr.remote does not exist"},
		{name: "an upstream table not granted",
			setup: func(_ *testing.T, l *lake) { l.cat.hide("sales.remote") },
			sql:   "SELECT id FROM sales.remote", code: codes.NotFound, msg: "table sales.remote does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newUpstreamLake(t, tc.cfg)
			if tc.setup != nil {
				tc.setup(t, l)
			}
			cl := l.client(t)
			_, err := cl.Execute(bearerCtx(aliceToken), tc.sql)
			checkStatus(t, err, tc.code, tc.msg)
			if sent := l.up.statements(); len(sent) != tc.sent {
				t.Errorf("the engine was sent %q, want %d statements", sent, tc.sent)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error quotes the engine: %v", err)
			}
		})
	}
}

// TestUpstreamExecuteFailure checks a statement whose engine fails once
// planned: the DoGet fails as unavailable.
func TestUpstreamExecuteFailure(t *testing.T) {
	l := newUpstreamLake(t, nil)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	info, err := cl.Execute(ctx, "SELECT id, name FROM sales.remote")
	if err != nil {
		t.Fatal(err)
	}
	l.up.mu.Lock()
	l.up.execErr = fmt.Errorf("%w", upstream.ErrClosed)
	l.up.mu.Unlock()
	_, err = fetch(ctx, cl, info)
	checkStatus(t, err, codes.Unavailable, "the engine is unavailable; retry")
}

// TestUpstreamPrepared checks prepared statements over upstream tables:
// each execution is authorized again and planned again for the engine when
// the table's policy changed, refused when the result changed shape, and
// parameters are refused.
func TestUpstreamPrepared(t *testing.T) {
	l := newUpstreamLake(t, nil)
	cl := l.client(t)
	ctx := bearerCtx(aliceToken)
	prep, err := cl.Prepare(ctx, "SELECT id, name FROM sales.remote")
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close(ctx)
	execute := func() ([][]string, error) {
		info, err := prep.Execute(ctx)
		if err != nil {
			return nil, err
		}
		return fetch(ctx, cl, info)
	}
	rows, err := execute()
	if err != nil || len(rows) != 2 {
		t.Fatalf("first execution: %v, %v", rows, err)
	}
	// A row filter set meanwhile applies at the next execution.
	setUpstream(l, "sales.remote", func(v *backend.TableVersion) { v.Policy = &backend.TablePolicy{RowFilter: "amount < 100"} })
	if _, err := execute(); err != nil {
		t.Fatal(err)
	}
	sent := l.up.statements()
	if last := sent[len(sent)-1]; !strings.Contains(last, "`amount` < 100") {
		t.Errorf("the execution after the filter was set sent %q", last)
	}
	// The grant withdrawn: the table is missing.
	l.cat.hide("sales.remote")
	_, err = execute()
	checkStatus(t, err, codes.NotFound, "table sales.remote does not exist")
	l.cat.set("sales.remote", func(t *lakeTable) { t.hidden = false })
	// The engine's result changes shape along with the policy.
	l.up.mu.Lock()
	l.up.schema = schemaOf("id", arrow.PrimitiveTypes.Int64, "name", arrow.BinaryTypes.String, "extra", arrow.PrimitiveTypes.Int64)
	l.up.mu.Unlock()
	setUpstream(l, "sales.remote", func(v *backend.TableVersion) { v.Policy = &backend.TablePolicy{RowFilter: "amount < 50"} })
	_, err = execute()
	checkStatus(t, err, codes.FailedPrecondition, "the statement's result changed shape since it was prepared")
}
