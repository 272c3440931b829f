package integration_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	drv "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"lakegate/authz"
	"lakegate/authz/sqlgate"
	"lakegate/catalog"
	lgflight "lakegate/flight"
	"lakegate/flight/backend"
	"lakegate/flight/gateway"
	"lakegate/flight/ticket"
	"lakegate/metasrv"
	mclient "lakegate/metasrv/client"
	"lakegate/stage"
)

// The gateway benchmarks measure the request path with
// authorization by a real metasrv:
//
//   - BenchmarkGetTablesAuthz: GetTables (include_schema) over a tenant of
//     10,496 tables, through an in-process Flight server whose catalog is
//     metasrv (an in-process single-node metasrv, over HTTP on loopback),
//     against the same call with an allow-all authorizer swapped in by this
//     code (allowAllMetasrv) and with no metasrv call at all
//     (allowAllCatalog), interleaved in one run.
//   - BenchmarkPointQuery: a prepared SELECT … WHERE id = ? with a bound
//     parameter through a `lakegate serve` child process (ADBC), with p50,
//     p99 and the share of the time spent in metasrv's resolve-and-authorize
//     call, from the server's own metrics.
//   - BenchmarkSustained500qps: the same point query, open loop at 500
//     queries/s, spread over two `lakegate gateway` child processes that
//     share a stage, a ticket key ring and an in-process metasrv.
//
// None of them runs in `make test` (they are benchmarks).

// benchMetasrv is an in-process single-node metasrv serving its REST and
// internal API over plain HTTP on a loopback port.
type benchMetasrv struct {
	srv   *metasrv.Server
	url   string // http://127.0.0.1:port
	gwTok string // the gateways' query_service token
}

// benchMetasrvOwner is the owner of every metalake the benchmarks create and
// the actor of their governance proposals.
const benchMetasrvOwner = "owner"

// startBenchMetasrv starts a metasrv node that lets a query_service
// principal act for tenants; it is shut down at b's cleanup.
func startBenchMetasrv(b *testing.B, tenants ...string) *benchMetasrv {
	b.Helper()
	dir := b.TempDir()
	adminTok, gwTok := benchToken(b), benchToken(b)
	mapPath := filepath.Join(dir, "metasrv-principals.yaml")
	if err := authz.WritePrincipalMap(mapPath, []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: []string{authz.HashToken(adminTok).String()}},
		{ID: "gateway", Tenant: "platform", Role: "query_service", DelegateTenants: tenants, TokenHashes: []string{authz.HashToken(gwTok).String()}},
	}); err != nil {
		b.Fatal(err)
	}
	pm, err := authz.LoadPrincipalMap(mapPath)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cfg := metasrv.DefaultConfig()
	cfg.NodeID, cfg.DataDir = "bench", filepath.Join(dir, "metasrv")
	cfg.RaftAddr, cfg.HTTPAddr = "127.0.0.1:0", ln.Addr().String()
	cfg.Bootstrap, cfg.Principals, cfg.PeerScheme = true, pm, "http"
	cfg.Logger = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := metasrv.New(ctx, cfg)
	if err != nil {
		ln.Close()
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	node := srv.Node()
	for !node.IsLeader() {
		select {
		case <-ctx.Done():
			b.Fatal("metasrv did not become leader")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := node.Barrier(ctx); err != nil {
		b.Fatal(err)
	}
	return &benchMetasrv{srv: srv, url: "http://" + ln.Addr().String(), gwTok: gwTok}
}

// propose applies one proposal through Raft.
func (m *benchMetasrv) propose(ctx context.Context, p metasrv.Proposal) error {
	raw, err := metasrv.EncodeProposal(p)
	if err != nil {
		return err
	}
	_, _, err = m.srv.Node().Propose(ctx, raw)
	return err
}

// provision creates metalake tenant, owned by benchMetasrvOwner, and applies
// cmds in chunks of at most chunk commands per proposal (one Raft entry each).
func (m *benchMetasrv) provision(b *testing.B, tenant string, cmds []catalog.Command, chunk int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := m.propose(ctx, metasrv.Proposal{Metalake: tenant, Actor: "root", Admin: true, Time: time.Now(),
		Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: benchMetasrvOwner}}); err != nil {
		b.Fatalf("creating metalake %s: %v", tenant, err)
	}
	for len(cmds) > 0 {
		n := min(chunk, len(cmds))
		p := metasrv.Proposal{Metalake: tenant, Actor: benchMetasrvOwner, Time: time.Now()}
		for _, c := range cmds[:n] {
			raw, err := catalog.EncodeCommand(c)
			if err != nil {
				b.Fatal(err)
			}
			p.Commands = append(p.Commands, raw)
		}
		if err := m.propose(ctx, p); err != nil {
			b.Fatalf("provisioning %s: %v", tenant, err)
		}
		cmds = cmds[n:]
	}
}

// readerRole is a role granting USE_CATALOG on lake and USE_SCHEMA plus
// privs on each schema, granted to user.
func readerRole(user string, schemas []string, privs ...catalog.Privilege) []catalog.Command {
	grants := []catalog.Grant{{Object: catalog.Catalog("lake"), Privilege: catalog.PrivUseCatalog, Condition: catalog.Allow}}
	for _, s := range schemas {
		grants = append(grants, catalog.Grant{Object: catalog.Schema("lake." + s), Privilege: catalog.PrivUseSchema, Condition: catalog.Allow})
		for _, p := range privs {
			grants = append(grants, catalog.Grant{Object: catalog.Schema("lake." + s), Privilege: p, Condition: catalog.Allow})
		}
	}
	return []catalog.Command{
		catalog.CreateUser{Name: user},
		catalog.CreateRole{Name: "bench_role", Grants: grants},
		catalog.GrantRoles{Grantee: catalog.Owner{Type: catalog.OwnerUser, Name: user}, Roles: []string{"bench_role"}},
	}
}

// benchToken is newToken for benchmarks.
func benchToken(b *testing.B) string {
	b.Helper()
	tok, err := authz.NewToken(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	return tok
}

// benchSecret is writeSecret for benchmarks: content in dir/name, mode 0600.
func benchSecret(b *testing.B, dir, name, content string) string {
	b.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}

// ---- BenchmarkGetTablesAuthz ----

const (
	gtTenant  = "gt"
	gtUser    = "reader@gt"
	gtSchemas = 41
	gtPer     = 256 // 41 × 256 = 10,496 tables
	gtTables  = gtSchemas * gtPer
)

// allowAllCatalog lists without metasrv: List answers every table of the
// tenant (a listing taken once from metasrv's replicated state, with no
// authorization); everything else goes to the wrapped catalog. Only this
// benchmark constructs one.
type allowAllCatalog struct {
	backend.Governance
	all backend.Listing
}

func (c *allowAllCatalog) List(context.Context, backend.Caller) (backend.Listing, error) {
	return c.all, nil
}

// allowAllMetasrv is metasrv with an allow-all authorizer swapped in for
// listings: POST /internal/v1/metalakes/{tenant}/tables answers every table
// of the catalog from the node's current snapshot — the same response type,
// built per request from the same snapshot and encoded the same way, minus
// the visibility and SELECT_TABLE decisions; every other request goes to the
// real node. Only this benchmark constructs one.
func allowAllMetasrv(b *testing.B, ms *benchMetasrv) string {
	b.Helper()
	target, err := url.Parse(ms.url)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	mux.HandleFunc("POST /internal/v1/metalakes/{tenant}/tables", func(w http.ResponseWriter, r *http.Request) {
		var req metasrv.ListTablesRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		l, ok := ms.srv.FSM().Lake(r.PathValue("tenant"))
		if !ok {
			http.Error(w, "no metalake", http.StatusNotFound)
			return
		}
		snap := l.Snapshot
		out := &metasrv.ListTablesResponse{Generation: snap.Generation(), Schemas: []string{}, Tables: []metasrv.ListedTable{}}
		schemas, _ := snap.Children(catalog.Catalog(req.Catalog))
		for _, sch := range schemas {
			out.Schemas = append(out.Schemas, sch)
			tables, _ := snap.Children(catalog.Schema(req.Catalog + "." + sch))
			for _, t := range tables {
				full := req.Catalog + "." + sch + "." + t
				info, ok := snap.Object(catalog.Table(full))
				if !ok {
					continue
				}
				lt := metasrv.ListedTable{Schema: sch, Name: t, Columns: make([]metasrv.DescriptorColumn, len(info.Columns))}
				for i, c := range info.Columns {
					lt.Columns[i] = metasrv.DescriptorColumn{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
				}
				if sid, v, ok := snap.TableVersion(full, 0); ok {
					lt.StorageID, lt.Version = sid, v.Version
				}
				out.Tables = append(out.Tables, lt)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	b.Cleanup(func() { _ = hs.Close() })
	return "http://" + ln.Addr().String()
}

// snapshotListing lists every table of tenant's catalog lake from the node's
// current snapshot, without authorization.
func snapshotListing(b *testing.B, srv *metasrv.Server, tenant string) backend.Listing {
	b.Helper()
	l, ok := srv.FSM().Lake(tenant)
	if !ok {
		b.Fatalf("no metalake %s", tenant)
	}
	snap := l.Snapshot
	var out backend.Listing
	schemas, _ := snap.Children(catalog.Catalog("lake"))
	for _, s := range schemas {
		out.Schemas = append(out.Schemas, s)
		tables, _ := snap.Children(catalog.Schema("lake." + s))
		for _, t := range tables {
			info, ok := snap.Object(catalog.Table("lake." + s + "." + t))
			if !ok {
				b.Fatalf("table %s.%s vanished", s, t)
			}
			v := backend.TableVersion{Name: backend.TableName{Schema: s, Name: t}}
			for _, c := range info.Columns {
				v.Columns = append(v.Columns, backend.Column{Name: c.Name, Type: c.Type})
			}
			out.Tables = append(out.Tables, v)
		}
	}
	return out
}

// benchGateway is a gateway assembled in this process and the address it
// serves Flight SQL on.
type benchGateway struct {
	gw   *gateway.Gateway
	addr string
}

// inProcessGateway assembles a gateway from cfg, as `lakegate gateway`
// does, and serves it on a loopback port until b's cleanup.
func inProcessGateway(b *testing.B, cfg gateway.Config) benchGateway {
	b.Helper()
	gw, err := gateway.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = gw.Shutdown(context.Background())
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gw.Serve(ctx, lis)
	}()
	b.Cleanup(func() {
		stop()
		<-served
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = gw.Shutdown(sctx)
	})
	return benchGateway{gw: gw, addr: lis.Addr().String()}
}

// metasrvListSeconds is the time a gateway's catalog spent in metasrv's
// list calls, as lakegate_metasrv_request_seconds{op="list"} in its
// registry records it.
func metasrvListSeconds(b *testing.B, reg *prometheus.Registry) float64 {
	b.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "lakegate_metasrv_request_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "op" && l.GetValue() == lgflight.MetasrvList {
					sum += m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return sum
}

// getTables runs GetTables with include_schema and returns the number of
// tables listed.
func getTables(ctx context.Context, cl *flightsql.Client) (int64, error) {
	info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{IncludeSchema: true})
	if err != nil {
		return 0, err
	}
	return redeemRows(ctx, cl, info.GetEndpoint()[0].GetTicket())
}

// BenchmarkGetTablesAuthz measures GetTables (include_schema) over a tenant
// of 10,496 tables (41 schemas × 256 tables of 4 columns, all visible to
// the caller through a role) on three in-process gateways that differ only
// in their catalog, called in turn within each iteration:
//
//   - authz: metasrv decides (metacatalog over the real node: visibility and
//     SELECT_TABLE evaluated for the user, over HTTP on loopback);
//   - allowall: the same path with an allow-all authorizer swapped in at
//     metasrv (allowAllMetasrv: same HTTP call, same response built from the
//     same snapshot, no decisions) — the comparison, x-allowall =
//     authz ÷ allowall (target ≤ 1.2);
//   - local: no metasrv call at all (allowAllCatalog: the listing held in
//     the gateway), x-local = authz ÷ local;
//   - reused: authz with a decision window (1 s, the gateways' default):
//     after the first call the listing is reused while the watch confirms
//     the generation; reused-x-local = reused ÷ local.
//
// ns/op is the four calls; authz-, allowall-, local- and reused-ns/op each call's
// mean; list-ns/op the part of the authz call spent in metasrv's list call
// (timed in the gateway's catalog, as lakegate_metasrv_request_seconds
// {op="list"} records it); setup-s the time to create the 10,496 tables in
// one proposal.
func BenchmarkGetTablesAuthz(b *testing.B) {
	ms := startBenchMetasrv(b, gtTenant)
	schemas := make([]string, gtSchemas)
	var cmds []catalog.Command
	cmds = append(cmds, catalog.CreateCatalog{Name: "lake", Type: "managed"})
	for i := range schemas {
		schemas[i] = fmt.Sprintf("s%02d", i)
		cmds = append(cmds, catalog.CreateSchema{Name: "lake." + schemas[i]})
	}
	cmds = append(cmds, readerRole(gtUser, schemas, catalog.PrivSelectTable)...)
	ms.provision(b, gtTenant, cmds, len(cmds))
	var tables []catalog.Command
	for _, s := range schemas {
		for j := range gtPer {
			tables = append(tables, catalog.CreateTable{Name: fmt.Sprintf("lake.%s.t%03d", s, j), Columns: []catalog.ColumnDef{
				{Name: "id", Type: "int64"}, {Name: "amount", Type: "float64"},
				{Name: "label", Type: "utf8", Nullable: true}, {Name: "ts", Type: "timestamp[us]", Nullable: true},
			}})
		}
	}
	start := time.Now()
	ms.provisionTables(b, gtTenant, tables)
	setup := time.Since(start)

	// The gateways: end user map, engine and stage as in `lakegate
	// gateway`, each assembled by flight/gateway over its own local stage.
	dir := b.TempDir()
	tok := benchToken(b)
	mapPath := filepath.Join(dir, "principals.yaml")
	if err := authz.WritePrincipalMap(mapPath, []authz.PrincipalSpec{{ID: gtUser, Tenant: gtTenant, Role: "user",
		Namespaces: schemas, TokenHashes: []string{authz.HashToken(tok).String()}}}); err != nil {
		b.Fatal(err)
	}
	pm, err := authz.LoadPrincipalMap(mapPath)
	if err != nil {
		b.Fatal(err)
	}
	ring, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		b.Fatal(err)
	}
	base := func(name string) gateway.Config {
		return gateway.Config{Principals: pm, Tickets: ring, Version: "bench",
			Stage: stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: filepath.Join(root, name)}}}
	}
	// authz's metrics: its catalog times metasrv's list calls there.
	authzReg := prometheus.NewRegistry()
	authzCfg := base("authz")
	authzCfg.Metasrv, authzCfg.Registry = mclient.Config{Addrs: []string{ms.url}, Token: ms.gwTok}, authzReg
	authzGW := inProcessGateway(b, authzCfg)
	allowCfg := base("allowall")
	allowCfg.Metasrv = mclient.Config{Addrs: []string{allowAllMetasrv(b, ms)}, Token: ms.gwTok}
	localCfg := base("local")
	localCfg.Governance = &allowAllCatalog{Governance: authzGW.gw.Governance(), all: snapshotListing(b, ms.srv, gtTenant)}
	if n := len(localCfg.Governance.(*allowAllCatalog).all.Tables); n != gtTables {
		b.Fatalf("snapshot lists %d tables, want %d", n, gtTables)
	}
	// reused: authz with the gateways' default decision window, so a
	// listing is reused while the watch confirms the generation.
	reusedCfg := base("reused")
	reusedCfg.Metasrv, reusedCfg.DecisionWindow = mclient.Config{Addrs: []string{ms.url}, Token: ms.gwTok}, time.Second
	client := func(addr string) *flightsql.Client {
		cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(lgflight.MaxMessageBytes)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cl.Close() })
		return cl
	}
	clients := []*flightsql.Client{ // authz, allowall, local, reused
		client(authzGW.addr),
		client(inProcessGateway(b, allowCfg).addr),
		client(inProcessGateway(b, localCfg).addr),
		client(inProcessGateway(b, reusedCfg).addr),
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	for range 3 { // warm-up: connections, metasrv's and the gateways' heaps
		for _, cl := range clients {
			if n, err := getTables(ctx, cl); err != nil || n != gtTables {
				b.Fatalf("GetTables: %d tables, %v; want %d", n, err, gtTables)
			}
		}
	}
	listBefore := metasrvListSeconds(b, authzReg)
	var spent [4]time.Duration
	iters := 0
	for b.Loop() {
		for i, cl := range clients {
			t0 := time.Now()
			n, err := getTables(ctx, cl)
			spent[i] += time.Since(t0)
			if err != nil || n != gtTables {
				b.Fatalf("GetTables (variant %d): %d tables, %v; want %d", i, n, err, gtTables)
			}
		}
		iters++
	}
	for i, name := range []string{"authz", "allowall", "local", "reused"} {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(iters), name+"-ns/op")
	}
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "x-allowall")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "x-local")
	b.ReportMetric(float64(spent[3])/float64(spent[2]), "reused-x-local")
	b.ReportMetric((metasrvListSeconds(b, authzReg)-listBefore)*1e9/float64(iters), "list-ns/op")
	b.ReportMetric(setup.Seconds(), "setup-s")
}

// provisionTables creates tables in a single proposal (one Raft entry).
func (m *benchMetasrv) provisionTables(b *testing.B, tenant string, tables []catalog.Command) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p := metasrv.Proposal{Metalake: tenant, Actor: benchMetasrvOwner, Time: time.Now()}
	for _, c := range tables {
		raw, err := catalog.EncodeCommand(c)
		if err != nil {
			b.Fatal(err)
		}
		p.Commands = append(p.Commands, raw)
	}
	if err := m.propose(ctx, p); err != nil {
		b.Fatalf("creating %d tables: %v", len(tables), err)
	}
}

// ---- point query ----

// pointQuery is the query of BenchmarkPointQuery and
// BenchmarkSustained500qps; its one parameter is an order id.
const pointQuery = "SELECT id, amount, label FROM sales.orders WHERE id = ?"

// demoPointQuery is pointQuery over `lakegate serve`'s demo table.
const demoPointQuery = "SELECT id, customer_id, amount, status FROM sales.orders WHERE id = ?"

// preparedConn is an ADBC connection with one prepared statement, used by
// one goroutine at a time.
type preparedConn struct {
	db   adbc.Database
	conn adbc.Connection
	stmt adbc.Statement
}

func openPrepared(b testing.TB, uri, token, sql string) *preparedConn {
	b.Helper()
	db, err := drv.NewDriver(memory.DefaultAllocator).NewDatabase(map[string]string{
		adbc.OptionKeyURI:             uri,
		drv.OptionAuthorizationHeader: "Bearer " + token,
		drv.OptionCookieMiddleware:    adbc.OptionValueEnabled,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Open(ctx)
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	pc := &preparedConn{db: db, conn: conn}
	b.Cleanup(pc.close)
	if pc.stmt, err = conn.NewStatement(); err != nil {
		b.Fatal(err)
	}
	if err := pc.stmt.SetSqlQuery(sql); err != nil {
		b.Fatal(err)
	}
	if err := pc.stmt.Prepare(ctx); err != nil {
		b.Fatal(err)
	}
	return pc
}

func (pc *preparedConn) close() {
	if pc.stmt != nil {
		pc.stmt.Close()
	}
	pc.conn.Close()
	pc.db.Close()
}

var idParamSchema = arrow.NewSchema([]arrow.Field{{Name: "p1", Type: arrow.PrimitiveTypes.Int64}}, nil)

// run binds id, executes and drains; it returns the number of rows.
func (pc *preparedConn) run(ctx context.Context, id int64) (int64, error) {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, idParamSchema)
	bld.Field(0).(*array.Int64Builder).Append(id)
	params := bld.NewRecordBatch()
	bld.Release()
	err := pc.stmt.Bind(ctx, params)
	params.Release()
	if err != nil {
		return 0, err
	}
	rdr, _, err := pc.stmt.ExecuteQuery(ctx)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	return countRows(rdr)
}

// flightSQLPrepared is a statement prepared with arrow-go's Flight SQL
// client, used by one goroutine at a time.
type flightSQLPrepared struct {
	ctx  context.Context // carries the bearer token
	cl   *flightsql.Client
	stmt *flightsql.PreparedStatement
}

func openFlightSQLPrepared(b testing.TB, srv *server, token, sql string) *flightSQLPrepared {
	b.Helper()
	cl, ctx := flightSQLAs(b, srv, token)
	stmt, err := cl.Prepare(ctx, sql)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stmt.Close(ctx) })
	return &flightSQLPrepared{ctx: ctx, cl: cl, stmt: stmt}
}

// run binds id, executes and drains: DoPut, GetFlightInfo, DoGet.
func (fp *flightSQLPrepared) run(_ context.Context, id int64) (int64, error) {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, idParamSchema)
	bld.Field(0).(*array.Int64Builder).Append(id)
	params := bld.NewRecordBatch()
	bld.Release()
	fp.stmt.SetParameters(params)
	params.Release()
	info, err := fp.stmt.Execute(fp.ctx)
	if err != nil {
		return 0, err
	}
	return redeemRows(fp.ctx, fp.cl, info.GetEndpoint()[0].GetTicket())
}

// metricSamples are the sample lines of a Prometheus text exposition:
// name with labels as printed → value.
type metricSamples map[string]float64

// scrapeSamples reads url (Prometheus text format) into samples.
func scrapeSamples(b testing.TB, url string) metricSamples {
	b.Helper()
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out := metricSamples{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		b.Fatal(err)
	}
	return out
}

// sum adds the samples of metric (exact name) whose labels contain every
// one of labels (`op="resolve"` …).
func (p metricSamples) sum(metric string, labels ...string) float64 {
	var s float64
	for k, v := range p {
		name, rest, _ := strings.Cut(k, "{")
		if name != metric {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(rest, l)
		}
		if ok {
			s += v
		}
	}
	return s
}

// latencyMetrics reports p50-µs and p99-µs of lat (sorted in place).
func latencyMetrics(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(micros(percentile(lat, 50)), "p50-µs")
	b.ReportMetric(micros(percentile(lat, 99)), "p99-µs")
}

// BenchmarkPointQuery runs demoPointQuery (prepared once, one int64
// parameter bound per execution) against `lakegate serve` with its demo
// data, over ADBC: each operation is Bind + ExecuteQuery + drain (DoPut of
// the parameters, GetFlightInfo, DoGet), one row. Besides p50/p99 it
// derives the time spent in authorization from the server's metrics,
// scraped before and after the measured loop: authz-µs/op is the increase of
// lakegate_metasrv_request_seconds_sum{op="resolve"|"generation"} per query
// (the delegated resolve-and-authorize call to metasrv and the generation
// check; the local namespace gate runs in memory before them and is not
// timed separately), resolves/op and generations/op the calls, authz-% its share
// of the client-observed latency, server-µs/op the increase of
// lakegate_flight_request_seconds_sum (all RPCs) per query,
// doput-, getflightinfo- and doget-µs/op the same for each RPC, and
// claimed/op the executions whose DoGet streamed the execution started when
// the parameters were bound (lakegate_speculations_total{outcome="claimed"}).
func BenchmarkPointQuery(b *testing.B) {
	b.Run("client=adbc", func(b *testing.B) {
		benchPointQuery(b, func(srv *server, tok string) pointRunner { return openPrepared(b, srv.uri(), tok, demoPointQuery) })
	})
	// The same three RPCs from arrow-go's Flight SQL client without the
	// ADBC driver around it (which adds a reader goroutine, interceptors
	// and copies): a lighter client on the same two cores.
	b.Run("client=flightsql", func(b *testing.B) {
		benchPointQuery(b, func(srv *server, tok string) pointRunner { return openFlightSQLPrepared(b, srv, tok, demoPointQuery) })
	})
}

// pointRunner executes a prepared point query for one id and returns the
// number of rows.
type pointRunner interface {
	run(ctx context.Context, id int64) (int64, error)
}

func benchPointQuery(b *testing.B, open func(*server, string) pointRunner) {
	srv := startServe(b)
	tok := srv.token(b, "analyst@demo")
	metricsURL := srv.metricsURL(b)
	pc := open(srv, tok)
	ctx := context.Background()
	for i := range 50 {
		if n, err := pc.run(ctx, int64(1+i)); err != nil || n != 1 {
			b.Fatalf("warm-up: %d rows, %v", n, err)
		}
	}
	before := scrapeSamples(b, metricsURL)
	serverCPU0, clientCPU0 := procCPUSeconds(b, srv.cmd.Process.Pid), selfCPUSeconds(b)
	var lat []time.Duration
	var total time.Duration
	i := int64(0)
	for b.Loop() {
		i++
		start := time.Now()
		n, err := pc.run(ctx, 1+i%5000)
		d := time.Since(start)
		lat = append(lat, d)
		total += d
		if err != nil || n != 1 {
			b.Fatalf("point query: %d rows, %v", n, err)
		}
	}
	b.StopTimer()
	serverCPU, clientCPU := procCPUSeconds(b, srv.cmd.Process.Pid)-serverCPU0, selfCPUSeconds(b)-clientCPU0
	after := scrapeSamples(b, metricsURL)
	// The calls to metasrv a statement makes to be authorized: the
	// delegated resolve, and the generation check before a ticket runs
	// (op="generation", on builds that record it).
	const ms = "lakegate_metasrv_request_seconds"
	delta := func(metric, label string) float64 { return after.sum(metric, label) - before.sum(metric, label) }
	dResolveSum := delta(ms+"_sum", `op="resolve"`) + delta(ms+"_sum", `op="generation"`)
	dResolveCount := delta(ms+"_count", `op="resolve"`)
	dGenCount := delta(ms+"_count", `op="generation"`)
	dServer := after.sum("lakegate_flight_request_seconds_sum") - before.sum("lakegate_flight_request_seconds_sum")
	q := float64(len(lat))
	latencyMetrics(b, lat)
	b.ReportMetric(dResolveSum*1e6/q, "authz-µs/op")
	b.ReportMetric(dResolveCount/q, "resolves/op")
	b.ReportMetric(dGenCount/q, "generations/op")
	b.ReportMetric(delta("lakegate_decisions_total", `source="reused"`)/q, "reused/op")
	// Executions whose DoGet streamed what the engine started at the bind.
	b.ReportMetric(delta("lakegate_speculations_total", `outcome="claimed"`)/q, "claimed/op")
	b.ReportMetric(100*dResolveSum/total.Seconds(), "authz-%")
	b.ReportMetric(dServer*1e6/q, "server-µs/op")
	// CPU per execution of the serve process and of this one (the client):
	// steadier than latency on a shared machine, and both share its cores.
	b.ReportMetric(serverCPU*1e6/q, "server-cpu-µs/op")
	b.ReportMetric(clientCPU*1e6/q, "client-cpu-µs/op")
	for _, rpc := range []string{"DoPut", "GetFlightInfo", "DoGet"} {
		l := `rpc="` + rpc + `"`
		d := after.sum("lakegate_flight_request_seconds_sum", l) - before.sum("lakegate_flight_request_seconds_sum", l)
		b.ReportMetric(d*1e6/q, strings.ToLower(rpc)+"-µs/op")
	}
	noSecretsLogged(b, srv.stderr.String(), tok)
}

// noSecretsLogged fails b when out holds one of tokens or its SHA-256.
func noSecretsLogged(b *testing.B, out string, tokens ...string) {
	b.Helper()
	for _, tok := range tokens {
		if strings.Contains(out, tok) || strings.Contains(out, authz.HashToken(tok).String()) {
			b.Errorf("a token or its hash was logged")
		}
	}
}

// selfCPUSeconds is the user plus system CPU time this process has used.
func selfCPUSeconds(b *testing.B) float64 {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// ---- BenchmarkSustained500qps ----

// procCPUSeconds is the user plus system CPU time process pid has used
// (/proc/<pid>/stat, in clock ticks of 1/100 s).
func procCPUSeconds(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name (which may hold spaces) start at
	// state; utime and stime are the 14th and 15th fields overall.
	rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		b.Fatalf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	return (utime + stime) / 100
}

// sustainedSeconds is the duration of BenchmarkSustained500qps:
// LAKEGATE_BENCH_SECONDS, default 10 (the figure is 60).
func sustainedSeconds(b *testing.B) time.Duration {
	v := os.Getenv("LAKEGATE_BENCH_SECONDS")
	if v == "" {
		return 10 * time.Second
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("LAKEGATE_BENCH_SECONDS=%q: want a positive number of seconds", v)
	}
	return time.Duration(n) * time.Second
}

// BenchmarkSustained500qps offers pointQuery open loop at 500 queries/s —
// query i is due at start + i × 2 ms whatever happened to earlier ones —
// alternating between two `lakegate gateway` processes (8 connections with
// a prepared statement each per gateway), for LAKEGATE_BENCH_SECONDS
// (default 10 s). Latency runs from a query's due time to the end of its
// result (queueing for a free connection included, so a stall is not
// hidden). It reports errors (must be 0), p50/p99, the achieved rate and
// the number of queries, and the CPU the two gateways and this process (the
// clients and metasrv) used, in cores; ns/op is the mean latency. The
// gateways run with the access log on (their default); after a graceful
// stop it reports the point query's events committed to
// system.access_events and how many executions have none (must be 0).
// The whole run happens once whatever b.N is.
func BenchmarkSustained500qps(b *testing.B) {
	const (
		tenant  = "acme"
		user    = "alice@acme"
		rate    = 500
		perGW   = 8
		rows    = 1000
		gateway = 2
	)
	dur := sustainedSeconds(b)
	ms := startBenchMetasrv(b, tenant)
	ms.provision(b, tenant, append([]catalog.Command{
		catalog.CreateCatalog{Name: "lake", Type: "managed"},
		catalog.CreateSchema{Name: "lake.sales"},
	}, readerRole(user, []string{"sales"}, catalog.PrivSelectTable, catalog.PrivCreateTable, catalog.PrivModifyTable)...), 100)

	dir := b.TempDir()
	tok := benchToken(b)
	gwPrincipals := filepath.Join(dir, "gateway-principals.yaml")
	if err := authz.WritePrincipalMap(gwPrincipals, []authz.PrincipalSpec{{ID: user, Tenant: tenant, Role: "user",
		Namespaces: []string{"sales"}, TokenHashes: []string{authz.HashToken(tok).String()}}}); err != nil {
		b.Fatal(err)
	}
	ring, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	ringPath := filepath.Join(dir, "ticket-keys")
	if err := ticket.WriteRingFile(ringPath, ring); err != nil {
		b.Fatal(err)
	}
	stageRoot := filepath.Join(dir, "stage")
	if err := os.Mkdir(stageRoot, 0o700); err != nil {
		b.Fatal(err)
	}
	if stageRoot, err = filepath.EvalSymlinks(stageRoot); err != nil {
		b.Fatal(err)
	}
	stageFile := benchSecret(b, dir, "stage.json", fmt.Sprintf(`{"version": 1, "local": {"root": %q}}`, stageRoot))
	gwTokFile := benchSecret(b, dir, "gateway.token", ms.gwTok+"\n")
	var gws []*server
	for range gateway {
		gw, err := startServeEnv(b, "", nil, "gateway", "--flight-addr", "127.0.0.1:0", "--metrics-addr", "",
			"--principals", gwPrincipals, "--ticket-keys", ringPath, "--stage", stageFile, "--data-dir", b.TempDir(),
			"--metasrv", ms.url, "--metasrv-token-file", gwTokFile)
		if err != nil {
			b.Fatal(err)
		}
		gws = append(gws, gw)
	}
	authCtx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
	for _, gw := range gws {
		conn, err := grpc.NewClient(gw.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		err = waitServing(authCtx, conn, readinessService)
		conn.Close()
		if err != nil {
			b.Fatalf("gateway not ready: %v\n%s", err, gw.stderr.String())
		}
	}
	// The table, ingested through gateway 1.
	loader := mustDial(b, gws[0].uri(), bearer(tok))
	rdr := ingestRows(memory.DefaultAllocator, 1, rows)
	n, err := loader.ingest(context.Background(), "sales", "orders", adbc.OptionValueIngestModeCreate, rdr)
	rdr.Release()
	if err != nil || n != rows {
		b.Fatalf("ingest: %d rows, %v", n, err)
	}

	pools := make([]chan *preparedConn, gateway)
	ctx := context.Background()
	for g, gw := range gws {
		pools[g] = make(chan *preparedConn, perGW)
		for range perGW {
			pc := openPrepared(b, gw.uri(), tok, pointQuery)
			for i := range 20 { // warm-up
				if n, err := pc.run(ctx, int64(1+i)); err != nil || n != 1 {
					b.Fatalf("warm-up on gateway %d: %d rows, %v", g+1, n, err)
				}
			}
			pools[g] <- pc
		}
	}

	total := int(dur.Seconds() * rate)
	interval := time.Second / rate
	lat := make([]time.Duration, total)
	var errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	cpu0 := make([]float64, gateway+1)
	for g, gw := range gws {
		cpu0[g] = procCPUSeconds(b, gw.cmd.Process.Pid)
	}
	cpu0[gateway] = procCPUSeconds(b, os.Getpid())
	b.ResetTimer()
	start := time.Now()
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(i int, due time.Time) {
			defer wg.Done()
			pool := pools[i%gateway]
			pc := <-pool
			n, err := pc.run(ctx, int64(1+i%rows))
			pool <- pc
			lat[i] = time.Since(due)
			if err == nil && n != 1 {
				err = fmt.Errorf("%d rows, want 1", n)
			}
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}(i, due)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	var gwCPU float64
	for g, gw := range gws {
		gwCPU += procCPUSeconds(b, gw.cmd.Process.Pid) - cpu0[g]
	}
	selfCPU := procCPUSeconds(b, os.Getpid()) - cpu0[gateway]
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	latencyMetrics(b, lat)
	b.ReportMetric(float64(sum.Nanoseconds())/float64(total), "ns/op")
	b.ReportMetric(float64(errs.Load()), "errors")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "qps")
	b.ReportMetric(float64(total), "queries")
	b.ReportMetric(gwCPU/elapsed.Seconds(), "gateways-cores")
	b.ReportMetric(selfCPU/elapsed.Seconds(), "client+metasrv-cores")
	if e := errs.Load(); e > 0 {
		b.Errorf("%d of %d queries failed; first: %v", e, total, firstErr.Load())
	}
	// The access log is on (the gateway's default): a graceful stop
	// flushes it, and every execution — the warm-up's and the run's — is
	// one committed event.
	for _, gw := range gws {
		gw.stop(b)
	}
	run := total + gateway*perGW*20
	events := committedAccessEvents(b, ms.url, ms.gwTok, stageRoot, tenant, sqlgate.Normalize(pointQuery))
	b.ReportMetric(float64(events), "access-events")
	b.ReportMetric(float64(run-events), "access-events-lost")
	if events != run {
		b.Errorf("access log: %d events of the point query committed, %d executions run", events, run)
	}
	for g, gw := range gws {
		out := gw.stderr.String()
		noSecretsLogged(b, out, tok, ms.gwTok)
		if e := errs.Load(); e > 0 {
			b.Logf("gateway %d stderr:\n%s", g+1, out)
		}
	}
}
