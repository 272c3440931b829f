package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"lakegate/flight/accesslog"
	"lakegate/metasrv/client"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// compactingSink is a sink of tenant acme for compaction tests: it
// compacts once 3 files are current, and never on its own (the test
// calls compactTenant) unless auto.
func compactingSink(t *testing.T, st stage.Store, c *client.Client, auto bool) *accessLogSink {
	t.Helper()
	s := newAccessLogSink(storesOf{"acme": st}, c, "lake", 0)
	s.compact.at = 3
	s.compact.log = slog.New(slog.DiscardHandler)
	if auto {
		s.compact.every = 0
		s.compact.done = make(chan struct{}, 1)
	} else {
		s.compact.every = time.Hour
		s.compact.checked["acme"] = time.Now()
	}
	return s
}

// batch is an access-log file of the events with the given request ids.
func batch(t *testing.T, ids ...string) []byte {
	t.Helper()
	events := make([]accesslog.Event, len(ids))
	for i, id := range ids {
		events[i] = accesslog.Event{Time: time.Unix(1_700_000_000, 0).UTC(), RequestID: id, Tenant: "acme", Principal: "bob",
			Kind: "query", Decision: accesslog.Allowed}
	}
	data, err := accesslog.Encode(events)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeBatches writes n batches of 3 events through s, request ids
// prefix-<batch>-<event>, and returns the ids.
func writeBatches(t *testing.T, s *accessLogSink, prefix string, n int) []string {
	t.Helper()
	var all []string
	for b := range n {
		ids := []string{fmt.Sprintf("%s-%d-0", prefix, b), fmt.Sprintf("%s-%d-1", prefix, b), fmt.Sprintf("%s-%d-2", prefix, b)}
		if err := s.Write(t.Context(), "acme", batch(t, ids...), len(ids)); err != nil {
			t.Fatal(err)
		}
		all = append(all, ids...)
	}
	return all
}

// currentEvents reads the request ids of every event of the current
// version of acme's access log, from the files in the stage, sorted, and
// the number of files; it checks the version's row count against them.
func currentEvents(t *testing.T, m *sinkMetasrv, st stage.Store) ([]string, int) {
	t.Helper()
	lake, _ := m.srv.FSM().Lake("acme")
	_, ver, ok := lake.Snapshot.TableVersion("lake.system.access_events", 0)
	if !ok {
		t.Fatal("no access log table")
	}
	var ids []string
	for _, f := range ver.Files {
		rc, _, err := st.Get(t.Context(), f.Path)
		if err != nil {
			t.Fatalf("a current file is missing from the stage: %v", err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range tbl.Column(tbl.Schema().FieldIndices(accesslog.ColRequestID)[0]).Data().Chunks() {
			s := c.(*array.String)
			for i := range s.Len() {
				ids = append(ids, s.Value(i))
				n++
			}
		}
		tbl.Release()
		pf.Close()
		if int64(n) != f.Rows {
			t.Errorf("file %s: %d events, committed as %d", f.Path, n, f.Rows)
		}
	}
	if int64(len(ids)) != ver.Rows {
		t.Errorf("the version counts %d events, its files hold %d", ver.Rows, len(ids))
	}
	slices.Sort(ids)
	return ids, len(ver.Files)
}

// statCounter is a stage.Store that counts Stat calls (a HEAD each on S3).
type statCounter struct {
	stage.Store
	stats atomic.Int64
}

func (s *statCounter) Stat(ctx context.Context, key string) (stage.Info, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, key)
}

// TestAccessLogCompaction: once the current version lists compactAt files,
// a compaction merges them into one: the same events are readable, each
// once, the counts equal; the replaced files leave the current version
// but stay in the stage for the versions that still name them (the
// orphan collector deletes them once those are pruned). Below the
// threshold nothing happens. The files' sizes come from the listing: a
// compaction looks up only the file it writes (the check of a stored file).
func TestAccessLogCompaction(t *testing.T) {
	m := startSinkMetasrv(t)
	st := stagetest.Local(t).Open(t, "acme")
	counted := &statCounter{Store: st}
	s := compactingSink(t, counted, m.client(t, m.acmeTok), false)
	compact := func() (int, error) {
		before := counted.stats.Load()
		n, err := s.compactTenant(t.Context(), "acme")
		if looked := counted.stats.Load() - before; looked > 1 || n == 0 && looked != 0 {
			t.Errorf("a compaction of %d files looked up %d in the stage, want only the one it wrote", n, looked)
		}
		return n, err
	}
	want := writeBatches(t, s, "a", 2)
	if n, err := compact(); n != 0 || err != nil {
		t.Fatalf("below the threshold: %d files merged, %v", n, err)
	}
	want = append(want, writeBatches(t, s, "b", 3)...)
	slices.Sort(want)
	before := tableKeys(t, st)
	if n, err := compact(); n != 5 || err != nil {
		t.Fatalf("compaction: %d files merged, %v; want 5", n, err)
	}
	got, files := currentEvents(t, m, st)
	if files != 1 || !slices.Equal(got, want) {
		t.Fatalf("after compaction: %d files, events %v; want 1 file, %v", files, got, want)
	}
	after := tableKeys(t, st)
	if len(after) != len(before)+1 {
		t.Fatalf("stage: %d files before, %d after; want the merged one added", len(before), len(after))
	}
	for _, k := range before {
		if !slices.Contains(after, k) {
			t.Errorf("replaced file %s deleted before its versions are pruned", k)
		}
	}
	// Merged files are left alone by the next compaction while small files
	// accumulate again.
	s.compact.large = fileSize(t, st, after)
	want = append(want, writeBatches(t, s, "c", 3)...)
	slices.Sort(want)
	if n, err := compact(); n != 3 || err != nil {
		t.Fatalf("second compaction: %d files merged, %v; want the 3 new ones", n, err)
	}
	if got, files := currentEvents(t, m, st); files != 2 || !slices.Equal(got, want) {
		t.Fatalf("after the second compaction: %d files, events %v; want 2 files, %v", files, got, want)
	}
}

// fileSize returns the size of the largest of keys in st (a merged file's,
// in TestAccessLogCompaction).
func fileSize(t *testing.T, st stage.Store, keys []string) int64 {
	t.Helper()
	var n int64
	for _, k := range keys {
		info, err := st.Stat(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		n = max(n, info.Size)
	}
	return n
}

// TestAccessLogCompactionRaces: a compaction racing a flush (committed
// after the compaction read the files, before its commit) keeps the
// flush's events; one racing another gateway's compaction of the same
// files is refused, and its merged file deleted: after either, every event
// is current exactly once. The races are staged deterministically, by
// running the other writer between the compaction's merge and its commit.
func TestAccessLogCompactionRaces(t *testing.T) {
	for _, tc := range []struct {
		name    string
		other   func(t *testing.T, mine, theirs *accessLogSink) []string // runs before mine commits; returns the ids it adds
		merged  int                                                      // files mine merges (0: refused)
		refused bool
	}{
		{"a flush", func(t *testing.T, mine, _ *accessLogSink) []string {
			return writeBatches(t, mine, "late", 1)
		}, 3, false},
		{"another gateway's compaction", func(t *testing.T, _, theirs *accessLogSink) []string {
			if n, err := theirs.compactTenant(t.Context(), "acme"); n != 3 || err != nil {
				t.Fatalf("the other compaction: %d, %v", n, err)
			}
			return nil
		}, 0, true},
		{"another gateway's compaction and a flush", func(t *testing.T, mine, theirs *accessLogSink) []string {
			ids := writeBatches(t, theirs, "theirs", 1)
			theirs.compact.at = 4
			if n, err := theirs.compactTenant(t.Context(), "acme"); n != 4 || err != nil {
				t.Fatalf("the other compaction: %d, %v", n, err)
			}
			return ids
		}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startSinkMetasrv(t)
			st := stagetest.Local(t).Open(t, "acme")
			mine := compactingSink(t, st, m.client(t, m.acmeTok), false)
			theirs := compactingSink(t, st, m.client(t, m.acmeTok), false)
			want := writeBatches(t, mine, "a", 3)
			keys := len(tableKeys(t, st))
			var added []string
			mine.compact.beforeCommit = func(string) {
				mine.compact.beforeCommit = nil
				added = tc.other(t, mine, theirs)
			}
			n, err := mine.compactTenant(t.Context(), "acme")
			if tc.refused != (err != nil) || n != tc.merged {
				t.Fatalf("compaction: %d files merged, %v", n, err)
			}
			if tc.refused && !errors.Is(err, client.ErrVersionConflict) {
				t.Fatalf("refused with %v, want a conflict", err)
			}
			want = append(want, added...)
			slices.Sort(want)
			got, _ := currentEvents(t, m, st)
			if !slices.Equal(got, want) {
				t.Fatalf("current events %v, want each of %v once", got, want)
			}
			// The stage holds the inputs, the flushes and the one merged
			// file committed (mine's, or theirs'): a refused merge left
			// nothing.
			flushes, merges := len(added)/3, 1
			if got := len(tableKeys(t, st)); got != keys+flushes+merges {
				t.Errorf("the stage holds %d files, want %d", got, keys+flushes+merges)
			}
		})
	}
}

// TestAccessLogCompactionStartsItself: a commit that finds the threshold
// reached starts a compaction in the background.
func TestAccessLogCompactionStartsItself(t *testing.T) {
	m := startSinkMetasrv(t)
	st := stagetest.Local(t).Open(t, "acme")
	s := compactingSink(t, st, m.client(t, m.acmeTok), true)
	var want []string
	for b := range 3 {
		want = append(want, writeBatches(t, s, fmt.Sprint("b", b), 1)...)
		select {
		case <-s.compact.done:
		case <-time.After(time.Minute):
			t.Fatal("no compaction check finished within a minute")
		}
	}
	slices.Sort(want)
	if got, files := currentEvents(t, m, st); files != 1 || !slices.Equal(got, want) {
		t.Fatalf("after the third commit: %d files, events %v; want 1 file, %v", files, got, want)
	}
}

// TestAccessLogCompactionStops: closing the sink (the gateway's shutdown,
// after the log's last flush) stops a running compaction before its
// commit, and waits for it: the version keeps its files and every event;
// no compaction starts afterwards.
func TestAccessLogCompactionStops(t *testing.T) {
	m := startSinkMetasrv(t)
	st := stagetest.Local(t).Open(t, "acme")
	s := compactingSink(t, st, m.client(t, m.acmeTok), true)
	want := writeBatches(t, s, "a", 2)
	for range 2 {
		<-s.compact.done
	}
	reached := make(chan struct{})
	s.compact.beforeCommit = func(string) {
		close(reached)
		<-s.compact.ctx.Done()
	}
	want = append(want, writeBatches(t, s, "b", 1)...)
	<-reached
	s.closeCompaction()
	<-s.compact.done
	want = append(want, writeBatches(t, s, "c", 1)...)
	slices.Sort(want)
	if got, files := currentEvents(t, m, st); files != 4 || !slices.Equal(got, want) {
		t.Fatalf("after close: %d files, events %v; want the 4 written, %v", files, got, want)
	}
	select {
	case <-s.compact.done:
		t.Fatal("a compaction ran after close")
	default:
	}
}
