package flight

// The in-process test harness of package flight: principals, fake
// catalogs, servers over fakes or over the real embedded engine, clients
// and the helpers that call the Server's handlers behind its interceptors.
// Tests of behaviour go through a Flight SQL client of a served Server
// (lake, served); tests of one decision may call a handler behind the
// interceptors (unary, stream).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"lakegate/authz"
	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/backend/upstream"
	"lakegate/flight/tablefiles"
	"lakegate/flight/ticket"
	"lakegate/stage"
)

// ---- Principals ----

// Tokens of the principals every test server knows.
const (
	aliceToken = "lg_alice_token" // alice@acme, user of namespace sales
	carolToken = "lg_carol_token" // carol@acme, user of namespace hr
	oscarToken = "lg_oscar_token" // oscar@acme, operator: no data access
)

// testPrincipal returns a principal of tenant acme with role and
// namespaces.
func testPrincipal(t testing.TB, id string, role authz.Role, namespaces ...string) *authz.Principal {
	t.Helper()
	pid, err := authz.ParsePrincipalID(id)
	if err != nil {
		t.Fatal(err)
	}
	tenant, _ := authz.ParseTenantID("acme")
	var ns []authz.Namespace
	for _, n := range namespaces {
		x, err := authz.ParseNamespace(n)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, x)
	}
	p, err := authz.NewPrincipal(pid, tenant, role, ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// principalIn returns a user of tenant acme granted the namespace ns.
func principalIn(t testing.TB, id, ns string) *authz.Principal {
	t.Helper()
	return testPrincipal(t, id, authz.RoleUser, ns)
}

// principal returns a user of tenant acme granted the namespace sales.
func principal(t *testing.T, id string) *authz.Principal {
	t.Helper()
	return principalIn(t, id, "sales")
}

// testPrincipals is the principal map of every test server: alice, carol
// and oscar with their tokens.
func testPrincipals(t testing.TB) *authz.PrincipalMap {
	t.Helper()
	pm := &authz.PrincipalMap{}
	for _, e := range []struct {
		p     *authz.Principal
		token string
	}{
		{principalIn(t, "alice@acme", "sales"), aliceToken},
		{principalIn(t, "carol@acme", "hr"), carolToken},
		{testPrincipal(t, "oscar@acme", authz.RoleOperator), oscarToken},
	} {
		var err error
		if pm, err = pm.With(e.p, authz.HashToken(e.token)); err != nil {
			t.Fatal(err)
		}
	}
	return pm
}

// ---- Servers over fakes ----

// Backend and table files are never reached by a refused statement.
type unusedBackend struct{ backend.Backend }
type unusedFiles struct{ TableFiles }

// newTestServer returns a Server over cat with Metrics registered in its
// own registry, an unusable backend and table files; mutate, if not nil,
// changes the Config first.
func newTestServer(t *testing.T, cat backend.Governance, mutate func(*Config)) (*Server, *prometheus.Registry) {
	t.Helper()
	ring, err := ticket.GenerateRing(nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := Config{
		Principals: testPrincipals(t),
		Backend:    unusedBackend{},
		Governance: cat,
		Files:      unusedFiles{},
		Tickets:    ring,
		Metrics:    NewMetrics(reg),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	useChecked(t, s)
	t.Cleanup(func() { _ = s.Close() })
	return s, reg
}

// useChecked makes s allocate its builders' and writes' memory from a
// checked allocator that must hold nothing once s is closed (Config has no
// allocator; the Flight SQL router keeps the default one), and returns it.
func useChecked(t *testing.T, s *Server) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	// Registered before the caller's Close, so it runs after it.
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s.mem, s.Alloc = mem, mem
	return mem
}

// served serves a test server over cat (mutate as for newTestServer) on a
// loopback listener and returns it with a Flight SQL client of it.
func served(t *testing.T, cat backend.Governance, mutate func(*Config)) (*Server, *flightsql.Client) {
	t.Helper()
	s, _ := newTestServer(t, cat, mutate)
	return s, dial(t, serveLoopback(t, s), s.mem)
}

// servedLogging serves a test server over cat on a loopback listener with
// JSON debug logs going to the returned buffer, and returns a Flight SQL
// client of it.
func servedLogging(t *testing.T, cat backend.Governance) (*flightsql.Client, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	_, cl := served(t, cat, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	return cl, logs
}

// serveLoopback serves s on a loopback listener and returns its address.
func serveLoopback(t testing.TB, s *Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	return lis.Addr().String()
}

// dial returns a Flight SQL client of addr that keeps its session cookie
// and, with mem, allocates what it reads and writes from mem.
func dial(t testing.TB, addr string, mem memory.Allocator) *flightsql.Client {
	t.Helper()
	cl, err := flightsql.NewClient(addr, nil, []flight.ClientMiddleware{flight.NewClientCookieMiddleware()},
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	if mem != nil {
		cl.Alloc = mem
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// bearerCtx is an outgoing call context presenting token, with the
// metadata pairs kv.
func bearerCtx(token string, kv ...string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), append([]string{"authorization", "Bearer " + token}, kv...)...)
}

// ---- Handlers behind the interceptors, without a network ----

// withToken is an incoming call context presenting a bearer token ("" for
// none).
func withToken(token string) context.Context {
	md := metadata.MD{}
	if token != "" {
		md.Set("authorization", "Bearer "+token)
	}
	return metadata.NewIncomingContext(context.Background(), md)
}

const (
	methodGetFlightInfo = flightServicePrefix + "GetFlightInfo"
	methodDoGet         = flightServicePrefix + "DoGet"
	methodDoPut         = flightServicePrefix + "DoPut"
	methodDoAction      = flightServicePrefix + "DoAction"
)

// unary runs handler behind the Server's unary interceptors.
func unary(s *Server, ctx context.Context, method string, handler func(ctx context.Context) error) error {
	_, err := s.auth.unaryInterceptor(ctx, nil, &grpc.UnaryServerInfo{FullMethod: method}, func(ctx context.Context, _ any) (any, error) {
		return nil, handler(ctx)
	})
	return err
}

// fakeStream is a server stream with a context and, optionally, one
// message to receive.
type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
	msg proto.Message
}

func (f *fakeStream) Context() context.Context { return f.ctx }

func (f *fakeStream) RecvMsg(m any) error {
	if f.msg == nil {
		return errors.New("no message")
	}
	proto.Merge(m.(proto.Message), f.msg)
	return nil
}

// stream runs handler behind the Server's stream interceptors.
func stream(s *Server, ss grpc.ServerStream, method string, handler func(ss grpc.ServerStream) error) error {
	return s.auth.streamInterceptor(nil, ss, &grpc.StreamServerInfo{FullMethod: method}, func(_ any, ss grpc.ServerStream) error {
		return handler(ss)
	})
}

// drain releases every batch of a handler's answer (nil: none).
func drain(ch <-chan flight.StreamChunk) {
	if ch == nil {
		return
	}
	for c := range ch {
		if c.Data != nil {
			c.Data.Release()
		}
	}
}

// query is a statement query command.
func query(sql string) *pb.CommandStatementQuery { return &pb.CommandStatementQuery{Query: sql} }

// anyOf is the serialized google.protobuf.Any of m.
func anyOf(t *testing.T, m proto.Message) []byte {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ---- Logs ----

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lines returns the JSON log records written so far.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// ---- Fake catalogs ----

// metricsCatalog is a backend.Governance that resolves the tables in visible
// and reports every other one unavailable, or fails with err.
type metricsCatalog struct {
	visible map[backend.TableName]bool
	columns []backend.Column // of every visible table
	schemas []string
	err     error

	mu       sync.Mutex
	resolves int
}

func (c *metricsCatalog) List(context.Context, backend.Caller) (backend.Listing, error) {
	return backend.Listing{Schemas: c.schemas}, c.err
}

func (c *metricsCatalog) Resolve(_ context.Context, _ backend.Caller, refs []backend.TableRef) ([]*backend.TableVersion, error) {
	c.mu.Lock()
	c.resolves++
	c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	out := make([]*backend.TableVersion, len(refs))
	for i, r := range refs {
		if c.visible[r.Name] {
			out[i] = &backend.TableVersion{Name: r.Name, StorageID: "s", Version: 1, Columns: c.columns}
		}
	}
	return out, nil
}

func (c *metricsCatalog) Commit(context.Context, backend.Caller, backend.Commit) (uint64, error) {
	return 0, errors.New("not used")
}

func (c *metricsCatalog) Drop(context.Context, backend.Caller, backend.TableName) (bool, error) {
	return false, nil
}

func (c *metricsCatalog) Generation(context.Context, string) (uint64, error) { return 0, nil }

func (c *metricsCatalog) resolveCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resolves
}

// govCatalog is a backend.Governance that behaves as metasrv does where the
// gateway's decisions depend on it: List returns schemas AND tables (every
// one the catalog grants, whatever the gateway's namespace grants), every
// governance change moves the tenant's generation, and Resolve stamps each
// version with the generation it was decided at. It ignores the caller: the
// grants are the same for everyone, so what the gateway adds on top (the
// principal's namespaces) is what a test observes.
type govCatalog struct {
	mu       sync.Mutex
	gen      uint64
	tables   map[backend.TableName]backend.TableVersion // granted tables
	schemas  []string                                   // extra schemas with no granted table
	resolves int
}

// newGovCatalog returns a catalog at generation 1 granting every table in
// names ("schema.table"), each at version 1.
func newGovCatalog(names ...string) *govCatalog {
	c := &govCatalog{gen: 1, tables: map[backend.TableName]backend.TableVersion{}}
	for _, n := range names {
		sc, tb, _ := strings.Cut(n, ".")
		name := backend.TableName{Schema: sc, Name: tb}
		c.tables[name] = backend.TableVersion{Name: name, StorageID: "st-" + sc + "-" + tb, Version: 1,
			Columns: []backend.Column{{Name: "id", Type: "BIGINT"}}}
	}
	return c
}

// change applies f to the grants (under the lock) and moves the generation,
// as any metasrv write does.
func (c *govCatalog) change(f func(tables map[backend.TableName]backend.TableVersion)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.tables)
	c.gen++
}

// revoke withdraws the grant on table "schema.name".
func (c *govCatalog) revoke(table string) {
	sc, tb, _ := strings.Cut(table, ".")
	c.change(func(m map[backend.TableName]backend.TableVersion) { delete(m, backend.TableName{Schema: sc, Name: tb}) })
}

// setFilter sets the row filter applying to table "schema.name".
func (c *govCatalog) setFilter(table, filter string) {
	sc, tb, _ := strings.Cut(table, ".")
	c.change(func(m map[backend.TableName]backend.TableVersion) {
		n := backend.TableName{Schema: sc, Name: tb}
		v := m[n]
		v.Policy = &backend.TablePolicy{RowFilter: filter}
		m[n] = v
	})
}

// touch moves the generation without changing any grant (a change
// elsewhere in the tenant).
func (c *govCatalog) touch() { c.change(func(map[backend.TableName]backend.TableVersion) {}) }

// commit makes a new version of table "schema.name".
func (c *govCatalog) commit(table string) {
	sc, tb, _ := strings.Cut(table, ".")
	c.change(func(m map[backend.TableName]backend.TableVersion) {
		n := backend.TableName{Schema: sc, Name: tb}
		v := m[n]
		v.Version++
		m[n] = v
	})
}

func (c *govCatalog) List(context.Context, backend.Caller) (backend.Listing, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := backend.Listing{Schemas: slices.Clone(c.schemas)}
	for n, v := range c.tables {
		if !slices.Contains(l.Schemas, n.Schema) {
			l.Schemas = append(l.Schemas, n.Schema)
		}
		v.Generation = c.gen
		l.Tables = append(l.Tables, v)
	}
	slices.Sort(l.Schemas)
	slices.SortFunc(l.Tables, func(a, b backend.TableVersion) int {
		return strings.Compare(a.Name.Schema+"."+a.Name.Name, b.Name.Schema+"."+b.Name.Name)
	})
	return l, nil
}

func (c *govCatalog) Resolve(_ context.Context, _ backend.Caller, refs []backend.TableRef) ([]*backend.TableVersion, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resolves++
	out := make([]*backend.TableVersion, len(refs))
	for i, r := range refs {
		v, ok := c.tables[r.Name]
		// Every older version is retained, as within RetainedVersions.
		if !ok || r.Version > v.Version {
			continue
		}
		if r.Version != 0 {
			v.Version = r.Version
		}
		v.Generation = c.gen
		out[i] = &v
	}
	return out, nil
}

func (c *govCatalog) Generation(context.Context, string) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, nil
}

func (c *govCatalog) resolveCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resolves
}

func (c *govCatalog) Commit(context.Context, backend.Caller, backend.Commit) (uint64, error) {
	return 0, errors.New("govCatalog: not used")
}

func (c *govCatalog) Drop(context.Context, backend.Caller, backend.TableName) (bool, error) {
	return false, errors.New("govCatalog: not used")
}

// lakeCatalog is a writable in-memory backend.Governance, as metasrv is for
// one tenant's catalog: it commits versions, drops tables, retains every
// version and moves its generation with every change. It ignores the
// caller: a table marked hidden exists but is granted to no one (it
// resolves and lists as a missing one does, and a Create of its name fails
// as for any existing table); one marked readOnly may be read, not written.
type lakeCatalog struct {
	mu      sync.Mutex
	gen     uint64
	tables  map[backend.TableName]*lakeTable
	schemas []string // schemas with no table
	commits []backend.Commit
	callers []backend.Caller // of every List and Resolve
	// commitHook, when set, runs before a commit is applied; an error it
	// returns fails the commit, which then changes nothing.
	commitHook func(cm backend.Commit) error
	// listErr, resolveErr and dropErr fail List, Resolve and Drop.
	listErr, resolveErr, dropErr error
}

type lakeTable struct {
	versions         []backend.TableVersion // every version, oldest first
	hidden, readOnly bool
}

func newLakeCatalog(schemas ...string) *lakeCatalog {
	return &lakeCatalog{gen: 1, tables: map[backend.TableName]*lakeTable{}, schemas: schemas}
}

// tableName parses "schema.name".
func tableName(s string) backend.TableName {
	sc, tb, _ := strings.Cut(s, ".")
	return backend.TableName{Schema: sc, Name: tb}
}

// put adds v as the only version of a table with no files (an upstream
// table, or one the engine need not read).
func (c *lakeCatalog) put(v backend.TableVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v.Version == 0 {
		v.Version = 1
	}
	c.tables[v.Name] = &lakeTable{versions: []backend.TableVersion{v}}
	c.gen++
}

// set changes table "schema.name" with f (under the lock) and moves the
// generation.
func (c *lakeCatalog) set(name string, f func(*lakeTable)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.tables[tableName(name)])
	c.gen++
}

// locked runs f with the catalog locked, to change its fields while the
// server may be using it.
func (c *lakeCatalog) locked(f func(c *lakeCatalog)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// hide withdraws every grant on table "schema.name".
func (c *lakeCatalog) hide(name string) { c.set(name, func(t *lakeTable) { t.hidden = true }) }

// lastCaller returns the caller of the last List or Resolve.
func (c *lakeCatalog) lastCaller() backend.Caller {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.callers) == 0 {
		return backend.Caller{}
	}
	return c.callers[len(c.callers)-1]
}

// committed returns the commits accepted so far.
func (c *lakeCatalog) committed() []backend.Commit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.commits)
}

func (c *lakeCatalog) List(_ context.Context, caller backend.Caller) (backend.Listing, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callers = append(c.callers, caller)
	if c.listErr != nil {
		return backend.Listing{}, c.listErr
	}
	l := backend.Listing{Schemas: slices.Clone(c.schemas)}
	for n, t := range c.tables {
		if t.hidden {
			continue
		}
		if !slices.Contains(l.Schemas, n.Schema) {
			l.Schemas = append(l.Schemas, n.Schema)
		}
		v := t.versions[len(t.versions)-1]
		v.Files, v.Generation = nil, c.gen
		l.Tables = append(l.Tables, v)
	}
	slices.Sort(l.Schemas)
	slices.SortFunc(l.Tables, func(a, b backend.TableVersion) int { return strings.Compare(a.Name.String(), b.Name.String()) })
	return l, nil
}

func (c *lakeCatalog) Resolve(_ context.Context, caller backend.Caller, refs []backend.TableRef) ([]*backend.TableVersion, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.callers = append(c.callers, caller)
	if c.resolveErr != nil {
		return nil, c.resolveErr
	}
	out := make([]*backend.TableVersion, len(refs))
	for i, r := range refs {
		t, ok := c.tables[r.Name]
		if !ok || t.hidden || (r.Write && t.readOnly) {
			continue
		}
		n := uint64(len(t.versions))
		if r.Version > n {
			continue
		}
		if r.Version != 0 {
			n = r.Version
		}
		v := t.versions[n-1]
		v.Generation = c.gen
		out[i] = &v
	}
	return out, nil
}

func (c *lakeCatalog) Commit(_ context.Context, _ backend.Caller, cm backend.Commit) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.commitHook != nil {
		if err := c.commitHook(cm); err != nil {
			return 0, err
		}
	}
	t, exists := c.tables[cm.Name]
	switch {
	case cm.Create && exists:
		return 0, backend.ErrExists
	case cm.Create:
		t = &lakeTable{}
		c.tables[cm.Name] = t
	case !exists || t.hidden || t.readOnly:
		return 0, backend.ErrNotFound
	case cm.Base != uint64(len(t.versions)):
		return 0, backend.ErrVersionConflict
	}
	v := backend.TableVersion{Name: cm.Name, StorageID: cm.StorageID, Version: uint64(len(t.versions)) + 1,
		Columns: slices.Clone(cm.Columns), Files: slices.Clone(cm.Files)}
	if !cm.Create {
		prev := t.versions[len(t.versions)-1]
		v.StorageID = prev.StorageID
		if !cm.Replace {
			v.Files = slices.Concat(prev.Files, cm.Files)
		}
	}
	t.versions = append(t.versions, v)
	c.commits = append(c.commits, cm)
	c.gen++
	return v.Version, nil
}

func (c *lakeCatalog) Drop(_ context.Context, _ backend.Caller, name backend.TableName) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropErr != nil {
		return false, c.dropErr
	}
	t, ok := c.tables[name]
	if !ok || t.hidden || t.readOnly {
		return false, nil
	}
	delete(c.tables, name)
	c.gen++
	return true, nil
}

func (c *lakeCatalog) Generation(context.Context, string) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, nil
}

// fakeUpstreams is an UpstreamEngines whose engine answers every statement
// with the rows of rowsJSON (a JSON array of objects) of schema, and
// records the statements it is sent. schemaErr and execErr, when set, fail
// Schema and Execute; with noSchema the engine cannot describe a statement
// without running it.
type fakeUpstreams struct {
	mem      memory.Allocator
	schema   *arrow.Schema
	rowsJSON string

	mu        sync.Mutex
	noSchema  bool
	schemaErr error
	execErr   error
	sent      []string // "schema: <sql>" or "execute: <sql>"
	targets   []upstream.Target
}

func (f *fakeUpstreams) record(op, sql string, t upstream.Target) {
	f.sent = append(f.sent, op+": "+sql)
	f.targets = append(f.targets, t)
}

func (f *fakeUpstreams) Schema(_ context.Context, t upstream.Target, sql string) (*arrow.Schema, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("schema", sql, t)
	switch {
	case f.schemaErr != nil:
		return nil, f.schemaErr
	case f.noSchema:
		return nil, upstream.ErrNoSchema
	}
	return f.schema, nil
}

func (f *fakeUpstreams) Execute(_ context.Context, t upstream.Target, sql string) (array.RecordReader, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("execute", sql, t)
	if f.execErr != nil {
		return nil, f.execErr
	}
	rec, _, err := array.RecordFromJSON(f.mem, f.schema, strings.NewReader(f.rowsJSON))
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return array.NewRecordReader(f.schema, []arrow.RecordBatch{rec})
}

// statements returns what the engine was sent so far.
func (f *fakeUpstreams) statements() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// ---- The whole gateway over the embedded engine ----

// lake is a served Server over the embedded DuckDB engine, a local stage
// in a temporary directory, a lakeCatalog and fakeUpstreams. Everything
// that allocates Arrow memory (the server's builders and writes, the
// engine's results, the upstream engine and every client) allocates from
// mem, which must hold nothing once the test is done.
type lake struct {
	srv  *Server
	cat  *lakeCatalog
	up   *fakeUpstreams
	mem  *memory.CheckedAllocator
	addr string
	root string // the engine's data root and the local stage
}

// newLake starts a lake whose catalog has the (empty) schemas sales and
// hr; mutate, if not nil, changes the Config first.
func newLake(t testing.TB, mutate func(*Config)) *lake {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	// Registered first, so it runs after everything else is closed.
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	root := t.TempDir()
	ecfg := duckdb.DefaultConfig()
	ecfg.Root, ecfg.MemoryLimit, ecfg.Threads, ecfg.Allocator = root, "256MB", 1, mem
	engine, err := duckdb.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close() })
	files, err := tablefiles.New(tablefiles.Config{
		Stage:      stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: root}},
		EngineRoot: root,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = files.Close() })
	ring, err := ticket.GenerateRing(nil)
	if err != nil {
		t.Fatal(err)
	}
	l := &lake{cat: newLakeCatalog("hr", "sales"), mem: mem, up: &fakeUpstreams{mem: mem}, root: root}
	cfg := Config{
		Principals: testPrincipals(t),
		Backend:    engine,
		Upstreams:  l.up,
		Governance: l.cat,
		Files:      files,
		Tickets:    ring,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	if l.srv, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	// The server's own builders and write buffers; Config has no
	// allocator (the Flight SQL router keeps the default one).
	l.srv.mem, l.srv.Alloc = mem, mem
	t.Cleanup(func() { _ = l.srv.Close() })
	l.addr = serveLoopback(t, l.srv)
	return l
}

// client returns a new Flight SQL client of the lake (a session of its
// own) allocating from its checked allocator.
func (l *lake) client(t testing.TB) *flightsql.Client {
	t.Helper()
	return dial(t, l.addr, l.mem)
}

// dataFiles returns the keys of the table data files in the tenant acme's
// stage, committed or not.
func (l *lake) dataFiles(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(l.root, "tenants", "acme")
	var keys []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			rel, _ := filepath.Rel(dir, path)
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// startSession asks for SqlInfo as drivers do when they connect: the
// answer starts the client's session and carries its cookie, which the
// client then presents on every call.
func startSession(t *testing.T, ctx context.Context, cl *flightsql.Client) {
	t.Helper()
	info, err := cl.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetch(ctx, cl, info); err != nil {
		t.Fatal(err)
	}
}

// ---- Reading and writing rows ----

// fetch reads every endpoint of info and returns the rows, each cell
// printed by its array's ValueStr ("(null)" for NULL).
func fetch(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo) ([][]string, error) {
	var rows [][]string
	for _, ep := range info.GetEndpoint() {
		rdr, err := cl.DoGet(ctx, ep.GetTicket())
		if err != nil {
			return nil, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := range int(rec.NumRows()) {
				row := make([]string, rec.NumCols())
				for j, col := range rec.Columns() {
					row[j] = col.ValueStr(i)
				}
				rows = append(rows, row)
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// runQuery plans sql with GetFlightInfo and fetches its rows.
func runQuery(ctx context.Context, cl *flightsql.Client, sql string) ([][]string, error) {
	info, err := cl.Execute(ctx, sql)
	if err != nil {
		return nil, err
	}
	return fetch(ctx, cl, info)
}

// mustQuery is runQuery that fails the test on an error.
func mustQuery(t *testing.T, ctx context.Context, cl *flightsql.Client, sql string) [][]string {
	t.Helper()
	rows, err := runQuery(ctx, cl, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

// Ingest modes (ADBC's adbc.ingest.mode).
const (
	ingestCreate       = "create"
	ingestAppend       = "append"
	ingestReplace      = "replace"
	ingestCreateAppend = "create_append"
)

// ingestOpts are the ExecuteIngest options of ADBC's mode into
// schema.table (schema "" for the session's).
func ingestOpts(schema, table, mode string) *flightsql.ExecuteIngestOpts {
	o := &pb.CommandStatementIngest_TableDefinitionOptions{}
	switch mode {
	case ingestCreate:
		o.IfNotExist, o.IfExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_CREATE, pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_FAIL
	case ingestAppend:
		o.IfNotExist, o.IfExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_FAIL, pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND
	case ingestReplace:
		o.IfNotExist, o.IfExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_CREATE, pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_REPLACE
	case ingestCreateAppend:
		o.IfNotExist, o.IfExists = pb.CommandStatementIngest_TableDefinitionOptions_TABLE_NOT_EXIST_OPTION_CREATE, pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND
	}
	cmd := &pb.CommandStatementIngest{Table: table, TableDefinitionOptions: o}
	if schema != "" {
		cmd.Schema = &schema
	}
	return (*flightsql.ExecuteIngestOpts)(cmd)
}

// ingestJSON sends rowsJSON (a JSON array of objects) of schema with
// ExecuteIngest and returns the rows the server reports.
func ingestJSON(ctx context.Context, cl *flightsql.Client, schema *arrow.Schema, rowsJSON string, opts *flightsql.ExecuteIngestOpts) (int64, error) {
	rec, _, err := array.RecordFromJSON(cl.Alloc, schema, strings.NewReader(rowsJSON))
	if err != nil {
		return 0, err
	}
	defer rec.Release()
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	return cl.ExecuteIngest(ctx, rdr, opts)
}

// checkStatus fails the test unless err has code and, when msg is not
// "", a message containing msg. codes.OK wants no error.
func checkStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code || (code != codes.OK && msg != "" && !strings.Contains(st.Message(), msg)) {
		t.Fatalf("status %v %q, want %v %q", st.Code(), st.Message(), code, msg)
	}
}

// schemaOf is an Arrow schema of nullable fields given as name, type pairs.
func schemaOf(nameTypes ...any) *arrow.Schema {
	fields := make([]arrow.Field, 0, len(nameTypes)/2)
	for i := 0; i+1 < len(nameTypes); i += 2 {
		fields = append(fields, arrow.Field{Name: nameTypes[i].(string), Type: nameTypes[i+1].(arrow.DataType), Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}
