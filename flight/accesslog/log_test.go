package accesslog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// fakeSink records the request ids of the files written to it, per
// tenant, and fails while failing is set; a non-nil gate blocks Write
// until it is closed.
type fakeSink struct {
	mu      sync.Mutex
	failing bool
	failFor string // a tenant whose writes fail
	gate    chan struct{}
	got     map[string][]string // tenant -> request ids, in write order
	files   int
	wrote   chan struct{} // signalled after each successful write
}

func newFakeSink() *fakeSink {
	return &fakeSink{got: map[string][]string{}, wrote: make(chan struct{}, 1024)}
}

func (s *fakeSink) Write(ctx context.Context, tenant string, data []byte, events int) error {
	s.mu.Lock()
	gate, failing := s.gate, s.failing || tenant == s.failFor
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if failing {
		return errors.New("stage unavailable")
	}
	ids, err := requestIDs(data)
	if err != nil {
		return err
	}
	if len(ids) != events {
		return fmt.Errorf("file holds %d events, told %d", len(ids), events)
	}
	s.mu.Lock()
	s.got[tenant] = append(s.got[tenant], ids...)
	s.files++
	s.mu.Unlock()
	s.wrote <- struct{}{}
	return nil
}

func (s *fakeSink) setFailing(v bool) {
	s.mu.Lock()
	s.failing = v
	s.mu.Unlock()
}

func (s *fakeSink) ids(tenant string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got[tenant]...)
}

// requestIDs decodes a file's request_id column.
func requestIDs(data []byte) ([]string, error) {
	r, err := pqfile.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	var ids []string
	col := tbl.Column(tbl.Schema().FieldIndices(ColRequestID)[0])
	for _, c := range col.Data().Chunks() {
		a := c.(*array.String)
		for i := 0; i < a.Len(); i++ {
			ids = append(ids, a.Value(i))
		}
	}
	return ids, nil
}

func ev(tenant, id string) Event {
	return Event{Time: time.Unix(1_700_000_000, 0), RequestID: id, Tenant: tenant, Principal: "alice", Kind: "query", Decision: Allowed}
}

func ids(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// newLog returns a Log whose loop never ticks by itself (tests call Flush).
func newLog(t *testing.T, cfg Config) *Log {
	t.Helper()
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	return l
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func TestFlushDeliversEachTenantsBatch(t *testing.T) {
	sink := newFakeSink()
	l := newLog(t, Config{Sink: sink, SpoolDir: t.TempDir()})
	for i := 0; i < 5; i++ {
		l.Record(ev("acme", fmt.Sprintf("a%d", i)))
		l.Record(ev("globex", fmt.Sprintf("g%d", i)))
	}
	if held := l.Flush(context.Background()); held != 0 {
		t.Fatalf("held %d events after a flush to a working sink", held)
	}
	equal(t, "acme", sink.ids("acme"), ids("a", 0, 5))
	equal(t, "globex", sink.ids("globex"), ids("g", 0, 5))
	if sink.files != 2 {
		t.Fatalf("%d files, want one per tenant", sink.files)
	}
	st := l.Stats()
	if st.Recorded != 10 || st.Written != 10 || st.WrittenBytes == 0 || st.MemoryBytes != 0 || st.SpoolFiles != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestMaxBatchStartsAFlush(t *testing.T) {
	sink := newFakeSink()
	l := newLog(t, Config{Sink: sink, SpoolDir: t.TempDir(), MaxBatch: 3})
	for i := 0; i < 3; i++ {
		l.Record(ev("acme", fmt.Sprintf("a%d", i)))
	}
	<-sink.wrote // the loop flushed without its interval passing
	equal(t, "acme", sink.ids("acme"), ids("a", 0, 3))
}

func TestFlushIntervalFlushes(t *testing.T) {
	sink := newFakeSink()
	l := newLog(t, Config{Sink: sink, SpoolDir: t.TempDir(), FlushInterval: time.Millisecond})
	l.Record(ev("acme", "a0"))
	<-sink.wrote
	equal(t, "acme", sink.ids("acme"), []string{"a0"})
}

func TestFailingSinkSpoolsAndRetriesOldestFirst(t *testing.T) {
	sink := newFakeSink()
	sink.setFailing(true)
	dir := t.TempDir()
	l := newLog(t, Config{Sink: sink, SpoolDir: dir})
	l.Record(ev("acme", "a0"))
	l.Record(ev("acme", "a1"))
	if held := l.Flush(context.Background()); held != 2 {
		t.Fatalf("held %d, want 2", held)
	}
	l.Record(ev("acme", "a2"))
	l.Flush(context.Background())
	spooled, _ := filepath.Glob(filepath.Join(dir, "acme", "*.parquet"))
	if len(spooled) != 2 {
		t.Fatalf("spool holds %v, want two files", spooled)
	}
	st := l.Stats()
	if st.SpoolFiles != 2 || st.SpoolBytes == 0 || st.FlushFailures == 0 || st.MemoryBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
	sink.setFailing(false)
	l.Record(ev("acme", "a3"))
	if held := l.Flush(context.Background()); held != 0 {
		t.Fatalf("held %d after recovery", held)
	}
	equal(t, "acme", sink.ids("acme"), ids("a", 0, 4))
	if spooled, _ := filepath.Glob(filepath.Join(dir, "acme", "*")); len(spooled) != 0 {
		t.Fatalf("spool not emptied: %v", spooled)
	}
	if st := l.Stats(); st.SpoolFiles != 0 || st.SpoolBytes != 0 || st.Written != 4 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRestartDeliversTheSpoolFirst(t *testing.T) {
	dir := t.TempDir()
	sink := newFakeSink()
	sink.setFailing(true)
	l, err := New(Config{Sink: sink, SpoolDir: dir, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l.Record(ev("acme", "a0"))
	l.Flush(context.Background())
	l.Record(ev("acme", "a1"))
	l.Record(ev("globex", "g0"))
	// Close spools what the failing sink refuses: nothing is lost.
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A crash mid-write leaves a temporary file; it is not an event file.
	if err := os.WriteFile(filepath.Join(dir, "acme", "00000000000000000099.parquet.tmp"), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}

	sink2 := newFakeSink()
	l2 := newLog(t, Config{Sink: sink2, SpoolDir: dir})
	if st := l2.Stats(); st.SpoolFiles != 3 {
		t.Fatalf("restart found %d spool files, want 3", st.SpoolFiles)
	}
	l2.Record(ev("acme", "a2"))
	l2.Flush(context.Background())
	equal(t, "acme", sink2.ids("acme"), ids("a", 0, 3))
	equal(t, "globex", sink2.ids("globex"), []string{"g0"})
	if left, _ := filepath.Glob(filepath.Join(dir, "*", "*")); len(left) != 0 {
		t.Fatalf("spool not emptied: %v", left)
	}
}

func TestFullLogRefusesUnlessFailOpen(t *testing.T) {
	for _, memoryOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("memoryOnly=%v", memoryOnly), func(t *testing.T) {
			sink := newFakeSink()
			sink.setFailing(true)
			cfg := Config{
				Sink: sink, MaxMemory: 4 << 10, SpoolMax: 1,
				FailOpen: func(tenant string) bool { return tenant == "open" },
			}
			if memoryOnly {
				cfg.MemoryOnly = true
			} else {
				cfg.SpoolDir = t.TempDir()
			}
			l := newLog(t, cfg)
			for _, tenant := range []string{"acme", "open"} {
				if err := l.Admit(tenant); err != nil {
					t.Fatalf("Admit(%s) with room: %v", tenant, err)
				}
			}
			n := 0
			for l.Stats().MemoryBytes < cfg.MaxMemory {
				l.Record(ev("acme", fmt.Sprintf("a%d", n)))
				n++
				l.Flush(context.Background())
			}
			// Memory full, spool full, sink down: a fail-closed tenant is refused.
			if err := l.Admit("acme"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "access log unavailable") {
				t.Fatalf("Admit(acme) when full = %v, want ErrUnavailable", err)
			}
			// A fail-open tenant runs; its event is dropped and counted.
			if err := l.Admit("open"); err != nil {
				t.Fatalf("Admit(open) = %v, want nil (fail-open)", err)
			}
			l.Record(ev("open", "o0"))
			st := l.Stats()
			if st.Refused != 1 || st.FailOpenDrops != 1 {
				t.Fatalf("stats %+v, want 1 refused, 1 fail-open drop", st)
			}
			// An event of a statement admitted before it filled is kept.
			l.Record(ev("acme", fmt.Sprintf("a%d", n)))
			n++
			// The stage returns: everything kept is delivered, and statements are admitted again.
			sink.setFailing(false)
			l.Flush(context.Background())
			equal(t, "acme", sink.ids("acme"), ids("a", 0, n))
			if err := l.Admit("acme"); err != nil {
				t.Fatalf("Admit after recovery: %v", err)
			}
			if st := l.Stats(); st.MemoryBytes != 0 || st.Lost != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestCloseFlushesAndThenRefuses(t *testing.T) {
	sink := newFakeSink()
	l, err := New(Config{Sink: sink, SpoolDir: t.TempDir(), FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		l.Record(ev("acme", fmt.Sprintf("a%d", i)))
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	equal(t, "acme", sink.ids("acme"), ids("a", 0, 100))
	if err := l.Admit("acme"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Admit after Close = %v", err)
	}
	l.Record(ev("acme", "late"))
	if st := l.Stats(); st.Lost != 1 {
		t.Fatalf("a Record after Close is not counted: %+v", st)
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseReportsWhatFitsNowhere(t *testing.T) {
	sink := newFakeSink()
	sink.setFailing(true)
	l, err := New(Config{Sink: sink, MemoryOnly: true, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l.Record(ev("acme", "a0"))
	if err := l.Close(context.Background()); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "1 events") {
		t.Fatalf("Close = %v, want the loss reported", err)
	}
	if st := l.Stats(); st.Lost != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A tenant id must not name a path outside the spool.
func TestTenantCannotEscapeTheSpool(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "spool")
	sink := newFakeSink()
	sink.setFailing(true)
	l := newLog(t, Config{Sink: sink, SpoolDir: dir})
	for _, tenant := range []string{"../escape", "..", "a/b", "/abs", "", ".hidden", "a\x00b"} {
		if err := l.Admit(tenant); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Admit(%q) = %v, want refused", tenant, err)
		}
		l.Record(ev(tenant, "x"))
	}
	l.Flush(context.Background())
	var found []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 0 {
		t.Fatalf("files written: %v", found)
	}
	if st := l.Stats(); st.Lost != 7 || st.MemoryBytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Record never waits for the Sink.
func TestRecordDoesNotWaitForASlowSink(t *testing.T) {
	sink := newFakeSink()
	sink.gate = make(chan struct{})
	l := newLog(t, Config{Sink: sink, SpoolDir: t.TempDir(), MaxBatch: 1})
	l.Record(ev("acme", "a0")) // starts a flush that blocks in the sink
	for i := 1; i < 1000; i++ {
		l.Record(ev("acme", fmt.Sprintf("a%d", i)))
	}
	close(sink.gate)
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	equal(t, "acme", sink.ids("acme"), ids("a", 0, 1000))
}

func TestConcurrentRecordLosesNothing(t *testing.T) {
	sink := newFakeSink()
	sink.wrote = make(chan struct{}, 1<<16)
	dir := t.TempDir()
	l, err := New(Config{Sink: sink, SpoolDir: dir, MaxBatch: 50, FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const workers, per = 8, 500
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tenant := []string{"acme", "globex"}[w%2]
			for i := 0; i < per; i++ {
				if err := l.Admit(tenant); err != nil {
					t.Error(err)
					return
				}
				l.Record(ev(tenant, fmt.Sprintf("w%d-%d", w, i)))
				if i == per/2 && w == 0 {
					sink.setFailing(true) // some batches go through the spool
				}
				if i == per-1 && w == 0 {
					sink.setFailing(false)
				}
			}
		}()
	}
	wg.Wait()
	sink.setFailing(false)
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// What Close spooled is delivered by the next Log.
	l2, err := New(Config{Sink: sink, SpoolDir: dir, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for w := 0; w < workers; w++ {
		tenant := []string{"acme", "globex"}[w%2]
		var mine []string
		for _, id := range sink.ids(tenant) {
			if strings.HasPrefix(id, fmt.Sprintf("w%d-", w)) {
				mine = append(mine, id)
			}
		}
		// Per writer, every event arrives once and in order.
		equal(t, fmt.Sprintf("worker %d", w), mine, ids(fmt.Sprintf("w%d-", w), 0, per))
	}
	if st := l.Stats(); st.Recorded != workers*per || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"no sink", Config{SpoolDir: t.TempDir()}},
		{"no spool dir", Config{Sink: newFakeSink()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if l, err := New(c.cfg); err == nil {
				_ = l.Close(context.Background())
				t.Fatal("New accepted the config")
			}
		})
	}
}

func TestSpoolIgnoresForeignEntries(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"not a tenant!/x.parquet", "acme/notes.txt", "acme/00000000000000000000.parquet"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l := newLog(t, Config{Sink: newFakeSink(), SpoolDir: dir})
	if st := l.Stats(); st.SpoolFiles != 0 {
		t.Fatalf("stats %+v", st)
	}
	// A new spool file does not replace the unreadable one.
	sink := l.cfg.Sink.(*fakeSink)
	sink.setFailing(true)
	l.Record(ev("acme", "a0"))
	l.Flush(context.Background())
	if b, _ := os.ReadFile(filepath.Join(dir, "acme", "00000000000000000000.parquet")); string(b) != "junk" {
		t.Fatalf("the unreadable spool file was replaced: %q", b)
	}
	var left []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	sort.Strings(left)
	if len(left) != 4 {
		t.Fatalf("foreign entries removed: %v", left)
	}
}

// A restarted Log delivers its spool without waiting for an interval.
func TestRestartDeliversWithoutWaiting(t *testing.T) {
	dir := t.TempDir()
	sink := newFakeSink()
	sink.setFailing(true)
	l, err := New(Config{Sink: sink, SpoolDir: dir, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l.Record(ev("acme", "a0"))
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	sink.setFailing(false)
	newLog(t, Config{Sink: sink, SpoolDir: dir}) // FlushInterval: an hour
	<-sink.wrote
	equal(t, "acme", sink.ids("acme"), []string{"a0"})
}

// A tenant whose stage refuses its batches is refused at half the memory;
// the others keep running.
func TestAStuckTenantDoesNotRefuseTheOthers(t *testing.T) {
	sink := newFakeSink()
	sink.failFor = "stuck"
	l := newLog(t, Config{Sink: sink, SpoolDir: t.TempDir(), SpoolMax: 1, MaxMemory: 8 << 10})
	n := 0
	for l.Admit("stuck") == nil {
		l.Record(ev("stuck", fmt.Sprintf("s%d", n)))
		l.Record(ev("fine", fmt.Sprintf("f%d", n)))
		n++
		l.Flush(context.Background())
		if n > 1000 {
			t.Fatal("the stuck tenant is never refused")
		}
	}
	if st := l.Stats(); st.MemoryBytes < 4<<10 || st.MemoryBytes >= 8<<10 {
		t.Fatalf("refused at %d bytes held, want half of 8 KiB", st.MemoryBytes)
	}
	if err := l.Admit("fine"); err != nil {
		t.Fatalf("Admit(fine) = %v while only another tenant is stuck", err)
	}
	equal(t, "fine", sink.ids("fine"), ids("f", 0, n))
	// Its stage returns: its events arrive, in order, and it runs again.
	sink.mu.Lock()
	sink.failFor = ""
	sink.mu.Unlock()
	l.Flush(context.Background())
	equal(t, "stuck", sink.ids("stuck"), ids("s", 0, n))
	if err := l.Admit("stuck"); err != nil {
		t.Fatal(err)
	}
}
