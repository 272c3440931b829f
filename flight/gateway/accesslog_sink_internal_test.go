package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/flight/accesslog"
	"lakegate/metasrv"
	"lakegate/metasrv/api"
	"lakegate/metasrv/client"
	"lakegate/metasrv/raftnode"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// storesOf opens each tenant's child store of one local stage.
type storesOf map[string]stage.Store

func (m storesOf) Store(_ context.Context, tenant string) (stage.Store, error) {
	st, ok := m[tenant]
	if !ok {
		return nil, fmt.Errorf("no stage for tenant %s", tenant)
	}
	return st, nil
}

// tableKeys lists the keys under tables/ of st.
func tableKeys(t *testing.T, st stage.Store) []string {
	t.Helper()
	keys, err := st.List(t.Context(), "tables/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// sinkMetasrv is an in-process single-node metasrv with metalakes acme
// (catalog lake) and beta, owned by "owner", and one gateway token per
// tenant.
type sinkMetasrv struct {
	srv              *metasrv.Server
	url              string
	acmeTok, betaTok string
}

func startSinkMetasrv(t testing.TB) *sinkMetasrv {
	t.Helper()
	tok := func() string {
		s, err := authz.NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	adminTok, acmeTok, betaTok := tok(), tok(), tok()
	dir := t.TempDir()
	mapPath := filepath.Join(dir, "principals.yaml")
	if err := authz.WritePrincipalMap(mapPath, []authz.PrincipalSpec{
		{ID: "root", Tenant: "platform", Role: "operator", TokenHashes: []string{authz.HashToken(adminTok).String()}},
		{ID: "gw-acme", Tenant: "platform", Role: "query_service", DelegateTenants: []string{"acme"}, TokenHashes: []string{authz.HashToken(acmeTok).String()}},
		{ID: "gw-beta", Tenant: "platform", Role: "query_service", DelegateTenants: []string{"beta"}, TokenHashes: []string{authz.HashToken(betaTok).String()}},
	}); err != nil {
		t.Fatal(err)
	}
	pm, err := authz.LoadPrincipalMap(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := metasrv.DefaultConfig()
	cfg.NodeID, cfg.DataDir = "sink", filepath.Join(dir, "metasrv")
	cfg.RaftAddr, cfg.HTTPAddr = "127.0.0.1:0", ln.Addr().String()
	cfg.Bootstrap, cfg.Principals, cfg.PeerScheme = true, pm, "http"
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Raft.Network = raftnode.NewMemNetwork()
	cfg.Raft.HeartbeatTimeout, cfg.Raft.ElectionTimeout, cfg.Raft.LeaderLeaseTimeout = 10*time.Millisecond, 10*time.Millisecond, 5*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := metasrv.New(ctx, cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	for {
		ch := srv.Node().LeaderCh()
		if srv.Node().IsLeader() {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("metasrv did not become leader")
		case <-ch:
		}
	}
	propose := func(p metasrv.Proposal) {
		raw, err := metasrv.EncodeProposal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := srv.Node().Propose(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, tenant := range []string{"acme", "beta"} {
		propose(metasrv.Proposal{Metalake: tenant, Actor: "root", Admin: true, Time: time.Now(),
			Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "owner"}})
		raw, err := catalog.EncodeCommand(catalog.CreateCatalog{Name: "lake", Type: "managed"})
		if err != nil {
			t.Fatal(err)
		}
		propose(metasrv.Proposal{Metalake: tenant, Actor: "owner", Time: time.Now(), Commands: []json.RawMessage{raw}})
	}
	return &sinkMetasrv{srv: srv, url: "http://" + ln.Addr().String(), acmeTok: acmeTok, betaTok: betaTok}
}

func (m *sinkMetasrv) client(t testing.TB, tok string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Addrs: []string{m.url}, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestAccessLogSinkCommits: over a local stage and a real metasrv, each
// Write stores one file in the tenant's own child stage under the access
// log table's storage id (drawn for the first, the table's after) and
// commits it as the next version, with the events as its rows; nothing
// lands in another tenant's stage.
func TestAccessLogSinkCommits(t *testing.T) {
	m := startSinkMetasrv(t)
	be := stagetest.Local(t)
	stores := storesOf{"acme": be.Open(t, "acme"), "beta": be.Open(t, "beta")}
	c := m.client(t, m.acmeTok)
	sink := newAccessLogSink(stores, c, "lake", 0)
	ctx := t.Context()
	files := [][]byte{[]byte("PAR1 first batch PAR1"), []byte("PAR1 second, longer batch PAR1")}
	for i, f := range files {
		if err := sink.Write(ctx, "acme", f, i+2); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	sid, v, err := c.AccessLogTable(ctx, "acme", "lake")
	if err != nil || v != 2 || stage.CheckStorageID(sid) != nil {
		t.Fatalf("table: %q %d %v", sid, v, err)
	}
	l, _ := m.srv.FSM().Lake("acme")
	_, ver, _ := l.Snapshot.TableVersion("lake.system.access_events", 0)
	if len(ver.Files) != 2 || ver.Rows != 5 {
		t.Fatalf("version: %+v", ver)
	}
	for i, f := range ver.Files {
		if !strings.HasPrefix(f.Path, "tables/"+sid+"/") {
			t.Fatalf("file %s outside the table's storage id %s", f.Path, sid)
		}
		rc, info, err := stores["acme"].Get(ctx, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, files[i]) || info.Size != f.Size {
			t.Fatalf("file %d as stored: %q %v", i, got, err)
		}
	}
	if keys := tableKeys(t, stores["acme"]); len(keys) != 2 {
		t.Fatalf("acme's stage holds %v", keys)
	}
	if keys := tableKeys(t, stores["beta"]); len(keys) != 0 {
		t.Fatalf("beta's stage holds %v", keys)
	}
}

// TestAccessLogSinkRefused: a commit metasrv refuses commits nothing and
// leaves no file behind — another tenant's gateway, a missing catalog.
func TestAccessLogSinkRefused(t *testing.T) {
	m := startSinkMetasrv(t)
	be := stagetest.Local(t)
	for _, tc := range []struct {
		name, tok, catalog string
		want               error
	}{
		{"another tenant's gateway", m.betaTok, "lake", client.ErrForbidden},
		{"a missing catalog", m.acmeTok, "nope", client.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stores := storesOf{"acme": be.Open(t, "acme")}
			sink := newAccessLogSink(stores, m.client(t, tc.tok), tc.catalog, 0)
			err := sink.Write(t.Context(), "acme", []byte("PAR1 batch PAR1"), 1)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Write = %v, want %v", err, tc.want)
			}
			if keys := tableKeys(t, stores["acme"]); len(keys) != 0 {
				t.Fatalf("left behind: %v", keys)
			}
		})
	}
	if l, _ := m.srv.FSM().Lake("acme"); hasSchema(l.Snapshot, "lake.system") {
		t.Fatal("a refused commit created the schema")
	}
}

func hasSchema(s *catalog.Snapshot, name string) bool {
	_, ok := s.Object(catalog.Schema(name))
	return ok
}

// fakeAccessLogMetasrv answers AccessLogTable with sid and each commit with
// the next of errs (nil: committed).
type fakeAccessLogMetasrv struct {
	sid     string
	errs    []error
	reads   int
	commits []string // the storage id of each commit
}

func (f *fakeAccessLogMetasrv) AccessLogTable(context.Context, string, string) (string, uint64, error) {
	f.reads++
	return f.sid, 0, nil
}

func (f *fakeAccessLogMetasrv) AccessLogFiles(context.Context, string, string) (string, []client.AccessLogFile, error) {
	return f.sid, nil, nil
}

func (f *fakeAccessLogMetasrv) CommitAccessLog(_ context.Context, _, _, sid string, _ []client.DataFile, _ ...string) (uint64, uint64, error) {
	f.commits = append(f.commits, sid)
	err := f.errs[0]
	f.errs = f.errs[1:]
	return 1, 1, err
}

func (f *fakeAccessLogMetasrv) CompactAccessLog(context.Context, string, string, string, []client.DataFile, []string) (uint64, uint64, error) {
	return 0, 0, errors.New("fake: no compaction")
}

// TestAccessLogSinkOutcomes: a refused commit deletes its file, one whose
// outcome is unknown keeps it (it may be committed: the orphan collector
// decides); either way the storage id is read again for the next write.
func TestAccessLogSinkOutcomes(t *testing.T) {
	const sid = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name string
		err  error
		kept int
	}{
		{"refused: another storage id", fmt.Errorf("metasrv client: x: %w", &api.Error{Status: http.StatusConflict, Code: api.CodeConcurrentModification}), 0},
		{"refused: forbidden", fmt.Errorf("metasrv client: x: %w", &api.Error{Status: http.StatusForbidden, Code: api.CodeForbidden}), 0},
		{"unknown: 503", fmt.Errorf("metasrv client: x: %w", &api.Error{Status: http.StatusServiceUnavailable}), 1},
		{"unknown: connection lost", fmt.Errorf("%w: write outcome unknown: reset", client.ErrUnavailable), 1},
		{"unknown: deadline", context.DeadlineExceeded, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := stagetest.Local(t).Open(t, "acme")
			f := &fakeAccessLogMetasrv{sid: sid, errs: []error{tc.err, nil}}
			sink := newAccessLogSink(storesOf{"acme": st}, f, "lake", 0)
			if err := sink.Write(t.Context(), "acme", []byte("PAR1 a PAR1"), 1); !errors.Is(err, tc.err) {
				t.Fatalf("Write = %v", err)
			}
			if keys := tableKeys(t, st); len(keys) != tc.kept {
				t.Fatalf("kept %v, want %d", keys, tc.kept)
			}
			if err := sink.Write(t.Context(), "acme", []byte("PAR1 b PAR1"), 1); err != nil {
				t.Fatalf("second Write: %v", err)
			}
			if f.reads != 2 || len(f.commits) != 2 || f.commits[1] != sid {
				t.Fatalf("reads %d, commits %v", f.reads, f.commits)
			}
		})
	}
}

// TestAccessLogSinkStorageID: before the table exists the sink draws a
// fresh storage id and keeps it for the tenant; an invalid one from
// metasrv is refused before anything is written; an empty batch is an
// error.
func TestAccessLogSinkStorageID(t *testing.T) {
	st := stagetest.Local(t).Open(t, "acme")
	f := &fakeAccessLogMetasrv{errs: []error{nil, nil}}
	sink := newAccessLogSink(storesOf{"acme": st}, f, "lake", 0)
	for range 2 {
		if err := sink.Write(t.Context(), "acme", []byte("PAR1 a PAR1"), 1); err != nil {
			t.Fatal(err)
		}
	}
	if f.reads != 1 || len(f.commits) != 2 || f.commits[0] != f.commits[1] || stage.CheckStorageID(f.commits[0]) != nil || len(f.commits[0]) != 32 {
		t.Fatalf("reads %d, commits %v", f.reads, f.commits)
	}
	bad := newAccessLogSink(storesOf{"acme": st}, &fakeAccessLogMetasrv{sid: "../x"}, "lake", 0)
	if err := bad.Write(t.Context(), "acme", []byte("PAR1 a PAR1"), 1); !errors.Is(err, stage.ErrInvalidStorageID) {
		t.Fatalf("invalid storage id: %v", err)
	}
	for _, tc := range []struct {
		file   []byte
		events int
	}{{nil, 1}, {[]byte("x"), 0}} {
		if err := sink.Write(t.Context(), "acme", tc.file, tc.events); err == nil {
			t.Fatalf("empty batch %q/%d accepted", tc.file, tc.events)
		}
	}
	if keys := tableKeys(t, st); len(keys) != 2 {
		t.Fatalf("stage holds %v", keys)
	}
}

// TestAccessLogSinkUnderLog: the access log's own flush, through the sink,
// commits its Parquet file to the tenant's access_events, whose columns
// metasrv created as the file holds them (names and Arrow types, in order);
// Close flushes what is left.
func TestAccessLogSinkUnderLog(t *testing.T) {
	m := startSinkMetasrv(t)
	st := stagetest.Local(t).Open(t, "acme")
	c := m.client(t, m.acmeTok)
	l, err := accesslog.New(accesslog.Config{Sink: newAccessLogSink(storesOf{"acme": st}, c, "lake", 0),
		MemoryOnly: true, FlushInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ev := accesslog.Event{Time: time.Unix(1700000000, 0).UTC(), RequestID: "r1", Tenant: "acme", Principal: "bob",
		Kind: "query", Statement: "SELECT * FROM t WHERE id = ?", Catalog: "lake", Decision: accesslog.Allowed,
		Read: []accesslog.Table{{Schema: "sales", Name: "t", Version: 3, FilterPolicy: "eu_rows", MaskPolicies: []string{"hide"}}}}
	for range 3 {
		l.Record(ev)
	}
	if held := l.Flush(t.Context()); held != 0 {
		t.Fatalf("%d events held after a flush", held)
	}
	l.Record(ev)
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	sid, v, err := c.AccessLogTable(t.Context(), "acme", "lake")
	if err != nil || v != 2 {
		t.Fatalf("table: %q %d %v", sid, v, err)
	}
	lake, _ := m.srv.FSM().Lake("acme")
	_, ver, _ := lake.Snapshot.TableVersion("lake.system.access_events", 0)
	if ver.Rows != 4 || len(ver.Files) != 2 {
		t.Fatalf("version: %+v", ver)
	}
	rc, _, err := st.Get(t.Context(), ver.Files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	sch, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != 3 || sch.NumFields() != len(ver.Columns) {
		t.Fatalf("file: %d rows, %d fields; table %d columns", pf.NumRows(), sch.NumFields(), len(ver.Columns))
	}
	for i, f := range sch.Fields() {
		if c := ver.Columns[i]; c.Name != f.Name || c.Type != f.Type.String() {
			t.Errorf("column %d: table %s %s, file %s %s", i, c.Name, c.Type, f.Name, f.Type)
		}
	}
}

// TestAccessLogColumnsMatch: the columns metasrv creates the table with
// are the access log's, as the core encodes them.
func TestAccessLogColumnsMatch(t *testing.T) {
	want := accesslog.Columns()
	got := api.AccessLogColumns()
	if len(got) != want.NumFields() {
		t.Fatalf("%d columns, want %d", len(got), want.NumFields())
	}
	for i, f := range want.Fields() {
		if got[i].Name != f.Name || got[i].Type != f.Type.String() || !got[i].Nullable {
			t.Errorf("column %d: %+v, want %s %s", i, got[i], f.Name, f.Type)
		}
	}
}

// TestAccessLogSinkRetention: with retention on, a commit leaves the files
// written before now-retention out of the new version, at most once per
// sweep interval; the others stay.
func TestAccessLogSinkRetention(t *testing.T) {
	m := startSinkMetasrv(t)
	st := stagetest.Local(t).Open(t, "acme")
	c := m.client(t, m.acmeTok)
	sink := newAccessLogSink(storesOf{"acme": st}, c, "lake", time.Hour)
	sink.sweepEvery = 45 * time.Minute
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	files := func() []string {
		_, fs, err := c.AccessLogFiles(t.Context(), "acme", "lake")
		if err != nil {
			t.Fatal(err)
		}
		paths := make([]string, len(fs))
		for i, f := range fs {
			paths[i] = f.Path
		}
		return paths
	}
	var written []string
	for _, at := range []time.Duration{0, 30 * time.Minute, 80 * time.Minute} {
		now := t0.Add(at)
		sink.now = func() time.Time { return now }
		if err := sink.Write(t.Context(), "acme", []byte("PAR1 "+at.String()+" PAR1"), 1); err != nil {
			t.Fatal(err)
		}
		fs := files()
		written = append(written, fs[len(fs)-1])
	}
	// At t0+80m (a sweep: the last was at t0), the cutoff is t0+20m: the
	// file of t0 goes, those of t0+30m and t0+80m stay.
	if got := files(); !slices.Equal(got, written[1:]) {
		t.Fatalf("after the sweep: %v, want %v", got, written[1:])
	}
	// The expired file is still in the stage (retained versions list it).
	if _, err := st.Stat(t.Context(), written[0]); err != nil {
		t.Fatalf("expired file: %v", err)
	}
	// Within the sweep interval nothing more expires, even past the cutoff.
	now := t0.Add(100 * time.Minute)
	sink.now = func() time.Time { return now }
	if err := sink.Write(t.Context(), "acme", []byte("PAR1 later PAR1"), 1); err != nil {
		t.Fatal(err)
	}
	if got := files(); len(got) != 3 || got[0] != written[1] {
		t.Fatalf("within the interval: %v", got)
	}
}

// TestTimeSegment: a segment carries its time and is a valid segment; a
// key of another shape has no time.
func TestTimeSegment(t *testing.T) {
	const sid = "0123456789abcdef0123456789abcdef"
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	seg, err := timeSegment(at)
	if err != nil || stage.CheckSegment(seg) != nil {
		t.Fatalf("segment %q: %v", seg, err)
	}
	key, err := stage.TableFileKey(sid, seg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := segmentTime(key, sid); !ok || !got.Equal(at) {
		t.Fatalf("segmentTime = %v %v", got, ok)
	}
	for _, k := range []string{"tables/other/" + seg + "/part-0.parquet", "tables/" + sid + "/short/part-0.parquet",
		"tables/" + sid + "/ffffffffffffffff0000000000000000/part-0.parquet", "tables/" + sid + "/" + seg} {
		if got, ok := segmentTime(k, sid); ok {
			t.Errorf("segmentTime(%q) = %v", k, got)
		}
	}
}

// BenchmarkAccessLogSinkWrite: one flush through the sink — the file into
// a local stage, verified, committed through an in-process metasrv.
func BenchmarkAccessLogSinkWrite(b *testing.B) {
	m := startSinkMetasrv(b)
	root := stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: b.TempDir()}}
	d, err := root.ForTenant("acme")
	if err != nil {
		b.Fatal(err)
	}
	st, err := stage.OpenLocal(d)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	sink := newAccessLogSink(storesOf{"acme": st}, m.client(b, m.acmeTok), "lake", 0)
	events := make([]accesslog.Event, 1000)
	for i := range events {
		events[i] = accesslog.Event{Time: time.Unix(1700000000, int64(i)).UTC(), RequestID: "r", Tenant: "acme",
			Principal: "bob", Kind: "query", Statement: "SELECT * FROM t WHERE id = ?", Catalog: "lake", Decision: accesslog.Allowed}
	}
	file, err := accesslog.Encode(events)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		if err := sink.Write(b.Context(), "acme", file, len(events)); err != nil {
			b.Fatal(err)
		}
	}
}
