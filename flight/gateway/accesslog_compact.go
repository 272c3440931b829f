package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"lakegate/flight/accesslog"
	"lakegate/metasrv/client"
	"lakegate/stage"
)

// Compaction of the access log. Every flush of every gateway adds one file
// to a tenant's system.access_events, and a table version lists at most
// 100,000 files: at one flush per 5 s a gateway reaches that in under six
// days unless retention is short. So, after a commit, at most once a
// minute per tenant, the sink lists the table's current files; when they
// number 1,000 or more, it merges the oldest small ones (up to 64 MiB, at
// most 1,000 files; files of 32 MiB or more are left alone) into one file
// (accesslog.Merge), writes it like a flushed batch, and commits it as a
// compaction (metasrv's CompactAccessLog): the merged file replaces exactly
// the files it was made of. metasrv refuses the commit when one of those
// is no longer current (another gateway's compaction, or retention, took
// it first) or when the merged file's events do not number theirs, so an
// event is never doubled or lost; a flush committed meanwhile is kept. The
// replaced files stay referenced by the retained versions until those are
// pruned; the orphan collector then deletes them, like retention's.
//
// The merged file's key carries the time of its newest input, so
// retention drops it once its newest event is old enough: compaction
// coarsens retention to the time span of a merged file.

// Defaults of compaction.
const (
	accessLogCompactAt       = 1_000
	accessLogCompactTarget   = 64 << 20
	accessLogCompactMaxFiles = 1_000
	accessLogCompactEvery    = time.Minute
	accessLogCompactTimeout  = 5 * time.Minute
)

// compaction is the sink's compaction state and settings.
type compaction struct {
	at       int           // compact once the current version lists this many files
	target   int64         // bytes of input per merged file
	large    int64         // inputs of this size or more (merged already) are left alone
	maxFiles int           // files per merged file
	every    time.Duration // how often a tenant's file count is checked
	log      *slog.Logger

	// beforeCommit, when set (tests), runs after the merged file is
	// stored and before its commit.
	beforeCommit func(tenant string)

	checked map[string]time.Time // tenant → last check (s.mu)
	// running: a compaction runs (s.mu). One at a time per gateway, so
	// compaction holds at most one merge's files in memory.
	running bool
	done    chan struct{} // receives once per finished background compaction (tests); nil: none

	// stop ends a running compaction (closeCompaction); wg waits for it.
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func newCompaction() compaction {
	ctx, stop := context.WithCancel(context.Background())
	return compaction{at: accessLogCompactAt, target: accessLogCompactTarget, large: accessLogCompactTarget / 2, maxFiles: accessLogCompactMaxFiles,
		every: accessLogCompactEvery, log: slog.Default(), checked: map[string]time.Time{}, ctx: ctx, stop: stop}
}

// closeCompaction stops a running compaction and waits for it; no new one
// starts afterwards. A compaction stopped before its commit leaves at most
// its merged file, which the orphan collector deletes.
func (s *accessLogSink) closeCompaction() {
	s.mu.Lock()
	s.compact.running = true // none starts any more
	s.mu.Unlock()
	s.compact.stop()
	s.compact.wg.Wait()
}

// maybeCompact starts a background compaction of tenant's log when a check
// is due and no compaction runs (a check skipped for that is due again at
// the tenant's next commit); Write calls it after a commit.
func (s *accessLogSink) maybeCompact(tenant string, now time.Time) {
	s.mu.Lock()
	last, ok := s.compact.checked[tenant]
	if s.compact.running || ok && now.Sub(last) < s.compact.every {
		s.mu.Unlock()
		return
	}
	s.compact.checked[tenant] = now
	s.compact.running = true
	done := s.compact.done
	s.compact.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.compact.wg.Done()
		// Not the flush's context: a compaction outlives the Write that
		// started it, bounded by its own timeout and closeCompaction.
		ctx, cancel := context.WithTimeout(s.compact.ctx, accessLogCompactTimeout)
		defer cancel()
		if n, err := s.compactTenant(ctx, tenant); err != nil {
			s.compact.log.Warn("access log: compaction failed; the files stay as they are", "tenant", tenant, "error", err)
		} else if n > 0 {
			s.compact.log.Info("access log: compacted", "tenant", tenant, "files", n)
		}
		s.mu.Lock()
		if s.compact.ctx.Err() == nil {
			s.compact.running = false
		}
		s.mu.Unlock()
		if done != nil {
			done <- struct{}{}
		}
	}()
}

// compactInput is one file a compaction may merge.
type compactInput struct {
	path    string
	written time.Time
	size    int64
}

// compactTenant runs one compaction of tenant's log: it returns the
// number of files merged (0: none was due).
func (s *accessLogSink) compactTenant(ctx context.Context, tenant string) (int, error) {
	sid, listed, err := s.meta.AccessLogFiles(ctx, tenant, s.catalog)
	if err != nil {
		return 0, fmt.Errorf("access log: tenant %s: listing the files: %w", tenant, err)
	}
	if sid == "" || len(listed) < s.compact.at {
		return 0, nil
	}
	if err := stage.CheckStorageID(sid); err != nil {
		return 0, fmt.Errorf("access log: tenant %s: %w", tenant, err)
	}
	store, err := s.stores.Store(ctx, tenant)
	if err != nil {
		return 0, fmt.Errorf("access log: tenant %s: opening the stage: %w", tenant, err)
	}
	inputs, err := s.compactInputs(ctx, store, sid, listed)
	if err != nil || len(inputs) < 2 {
		return 0, err
	}
	files := make([][]byte, len(inputs))
	replaced := make([]string, len(inputs))
	newest := inputs[0].written
	for i, in := range inputs {
		if files[i], err = readAll(ctx, store, in.path, in.size); err != nil {
			return 0, fmt.Errorf("access log: tenant %s: %w", tenant, err)
		}
		replaced[i] = in.path
		if in.written.After(newest) {
			newest = in.written
		}
	}
	merged, rows, err := accesslog.Merge(ctx, files)
	files = nil
	if err != nil {
		return 0, fmt.Errorf("access log: tenant %s: %w", tenant, err)
	}
	df, err := s.store(ctx, store, tenant, sid, newest, merged, rows)
	if err != nil {
		return 0, err
	}
	if s.compact.beforeCommit != nil {
		s.compact.beforeCommit(tenant)
	}
	if _, _, err := s.meta.CompactAccessLog(ctx, tenant, s.catalog, sid, []client.DataFile{df}, replaced); err != nil {
		if refused(err) {
			s.discard(ctx, store, df.Path)
		}
		return 0, fmt.Errorf("access log: tenant %s: committing a compaction: %w", tenant, err)
	}
	return len(inputs), nil
}

// compactInputs picks the files to merge: the table's own (written by a
// sink, under sid), oldest first, skipping large ones (merged already),
// up to the target's bytes and maxFiles files. Sizes come from the
// listing, as committed (reading a file checks it still has that size);
// only a file listed without one is looked up in the stage.
func (s *accessLogSink) compactInputs(ctx context.Context, store stage.Store, sid string, listed []client.AccessLogFile) ([]compactInput, error) {
	var cands []compactInput
	for _, f := range listed {
		// A file whose time cannot be read is left alone, as retention
		// leaves it.
		if t, ok := segmentTime(f.Path, sid); ok {
			cands = append(cands, compactInput{path: f.Path, written: t, size: f.Size})
		}
	}
	slices.SortStableFunc(cands, func(a, b compactInput) int { return a.written.Compare(b.written) })
	var picked []compactInput
	var total int64
	for _, c := range cands {
		if c.size < 0 {
			info, err := store.Stat(ctx, c.path)
			if err != nil {
				return nil, fmt.Errorf("access log: %s: %w", stage.SafeKey(c.path), err)
			}
			c.size = info.Size
		}
		if c.size >= s.compact.large {
			continue
		}
		if len(picked) >= 2 && total+c.size > s.compact.target {
			break
		}
		picked = append(picked, c)
		total += c.size
		if len(picked) == s.compact.maxFiles {
			break
		}
	}
	return picked, nil
}

// readAll reads one stored file of size bytes.
func readAll(ctx context.Context, store stage.Store, key string, size int64) ([]byte, error) {
	rc, _, err := store.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", stage.SafeKey(key), err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, size+1))
	if err == nil && int64(len(b)) != size {
		err = errors.New("its size changed")
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", stage.SafeKey(key), err)
	}
	return b, nil
}
