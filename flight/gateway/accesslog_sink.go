package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"lakegate/flight/accesslog"
	"lakegate/flight/ingest"
	"lakegate/metasrv/api"
	"lakegate/metasrv/client"
	"lakegate/stage"
)

// accessLogMetasrv is what the access log's sink asks of metasrv
// (*client.Client): the access log table's storage id, and the commit of
// files as its next version.
type accessLogMetasrv interface {
	AccessLogTable(ctx context.Context, tenant, catalog string) (storageID string, version uint64, err error)
	AccessLogFiles(ctx context.Context, tenant, catalog string) (storageID string, files []client.AccessLogFile, err error)
	CommitAccessLog(ctx context.Context, tenant, catalog, storageID string, files []client.DataFile, expire ...string) (version, generation uint64, err error)
	CompactAccessLog(ctx context.Context, tenant, catalog, storageID string, merged []client.DataFile, replaced []string) (version, generation uint64, err error)
}

// tenantStores opens a tenant's child stage (*tablefiles.Files).
type tenantStores interface {
	Store(ctx context.Context, tenant string) (stage.Store, error)
}

// accessLogSink is the access log's accesslog.Sink: it writes a flushed batch, one Parquet file, into the
// tenant's own child stage under the storage id of the tenant's
// <catalog>.system.access_events, with the key layout and containment of
// any table's data (stage.TableFileKey, a fresh segment per file), checks
// it as stored (ingest.Verify), and has metasrv commit it as the table's
// next version (one proposal per file, never per event).
//
// Retention: the segment of each file's key starts with the time the sink
// wrote it (timeSegment), after every event of the file; at most every
// sweepEvery per tenant, a commit also leaves out of the new version the
// files written before now-retention (accesslog.Expired). They stay
// referenced by the retained versions until those are pruned; the orphan
// collector then deletes them.
//
// Compaction (accesslog_compact.go): after a commit, now and then, a
// tenant's small files are merged into larger ones, so the table's version
// never nears the limit of files a version lists. Safe for concurrent use.
type accessLogSink struct {
	stores     tenantStores
	meta       accessLogMetasrv
	catalog    string
	retention  time.Duration // 0: keep every event
	sweepEvery time.Duration
	now        func() time.Time

	mu      sync.Mutex
	sids    map[string]string    // tenant → the table's storage id, as last known
	swept   map[string]time.Time // tenant → the last commit that expired files
	compact compaction           // its maps under mu
}

var _ accesslog.Sink = (*accessLogSink)(nil)

// accessLogSweepEvery is how often a tenant's commit also expires files.
const accessLogSweepEvery = 10 * time.Minute

// newAccessLogSink returns a sink committing into catalog's system schema,
// keeping events for retention (0: forever).
func newAccessLogSink(stores tenantStores, meta accessLogMetasrv, catalog string, retention time.Duration) *accessLogSink {
	return &accessLogSink{stores: stores, meta: meta, catalog: catalog, retention: retention,
		sweepEvery: accessLogSweepEvery, now: time.Now, sids: map[string]string{}, swept: map[string]time.Time{},
		compact: newCompaction()}
}

// accessLogCleanupTimeout bounds the deletion of a file whose commit was
// refused, even after the write's context ended.
const accessLogCleanupTimeout = 10 * time.Second

// Write stores file (events access events of tenant) and commits it. On
// error nothing is committed; the file is deleted when metasrv refused the
// commit, and left to the orphan collector when the outcome is unknown (a
// committed file must never be deleted). The caller writes the batch again
// later, under a new key.
func (s *accessLogSink) Write(ctx context.Context, tenant string, file []byte, events int) error {
	if len(file) == 0 || events <= 0 {
		return fmt.Errorf("access log: tenant %s: an empty batch", tenant)
	}
	sid, err := s.storageID(ctx, tenant)
	if err != nil {
		return err
	}
	store, err := s.stores.Store(ctx, tenant)
	if err != nil {
		return fmt.Errorf("access log: tenant %s: opening the stage: %w", tenant, err)
	}
	now := s.now()
	df, err := s.store(ctx, store, tenant, sid, now, file, int64(events))
	if err != nil {
		return err
	}
	expire, sweep := s.expired(ctx, tenant, sid, now)
	_, _, err = s.meta.CommitAccessLog(ctx, tenant, s.catalog, sid, []client.DataFile{df}, expire...)
	if err == nil && sweep {
		s.mu.Lock()
		s.swept[tenant] = now
		s.mu.Unlock()
	}
	if err != nil {
		// The storage id may be stale (the table created meanwhile under
		// another one): read it again next time.
		s.forget(tenant, sid)
		if refused(err) {
			s.discard(ctx, store, df.Path)
		}
		return fmt.Errorf("access log: tenant %s: committing: %w", tenant, err)
	}
	s.maybeCompact(tenant, now)
	return nil
}

// store writes file (rows events) into tenant's stage under a fresh key of
// the table sid whose segment starts with written (timeSegment), checks it
// as stored and returns it as a file to commit. A file that is not as
// written is deleted.
func (s *accessLogSink) store(ctx context.Context, store stage.Store, tenant, sid string, written time.Time, file []byte, rows int64) (client.DataFile, error) {
	seg, err := timeSegment(written)
	if err != nil {
		return client.DataFile{}, fmt.Errorf("access log: %w", err)
	}
	key, err := stage.TableFileKey(sid, seg, 0)
	if err != nil {
		return client.DataFile{}, fmt.Errorf("access log: tenant %s: %w", tenant, err)
	}
	sum := sha256.Sum256(file)
	f := ingest.File{Key: key, Size: int64(len(file)), Rows: rows, SHA256: hex.EncodeToString(sum[:])}
	info, err := store.Put(ctx, key, bytes.NewReader(file), f.Size)
	if err != nil {
		return client.DataFile{}, fmt.Errorf("access log: tenant %s: writing %s: %w", tenant, stage.SafeKey(key), err)
	}
	// metasrv registers the file on the gateway's word: it must be in the
	// stage, under the table's storage id, as written.
	if info.SHA256 != f.SHA256 {
		err = fmt.Errorf("%w: %s stored with SHA-256 %s, %s was written", ingest.ErrNotAsWritten, stage.SafeKey(key), info.SHA256, f.SHA256)
	} else {
		err = ingest.Verify(ctx, store, sid, []ingest.File{f})
	}
	if err != nil {
		s.discard(ctx, store, key)
		return client.DataFile{}, fmt.Errorf("access log: tenant %s: %w", tenant, err)
	}
	return client.DataFile{Path: f.Key, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256}, nil
}

// storageID returns the storage id to write tenant's next file under: the
// table's, or a fresh one while the table does not exist (the first
// commit gives it to the table).
func (s *accessLogSink) storageID(ctx context.Context, tenant string) (string, error) {
	s.mu.Lock()
	sid, ok := s.sids[tenant]
	s.mu.Unlock()
	if ok {
		return sid, nil
	}
	sid, _, err := s.meta.AccessLogTable(ctx, tenant, s.catalog)
	if err != nil {
		return "", fmt.Errorf("access log: tenant %s: reading the table's storage id: %w", tenant, err)
	}
	if sid == "" {
		// 128 random bits, like every table a gateway creates with data,
		// so that no two tables ever share files.
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("access log: %w", err)
		}
		sid = hex.EncodeToString(b[:])
	}
	if err := stage.CheckStorageID(sid); err != nil {
		return "", fmt.Errorf("access log: tenant %s: %w", tenant, err)
	}
	s.mu.Lock()
	s.sids[tenant] = sid
	s.mu.Unlock()
	return sid, nil
}

// forget drops tenant's storage id if it is still sid.
func (s *accessLogSink) forget(tenant, sid string) {
	s.mu.Lock()
	if s.sids[tenant] == sid {
		delete(s.sids, tenant)
	}
	s.mu.Unlock()
}

// refused reports whether metasrv answered the commit with a refusal (a
// 4xx status): nothing was committed. Anything else (503, a connection
// lost after sending, a context ended) may have committed.
func refused(err error) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Status >= http.StatusBadRequest && ae.Status < http.StatusInternalServerError
}

// discard deletes a file that was not committed, even when ctx has ended;
// what it cannot delete the orphan collector does.
func (s *accessLogSink) discard(ctx context.Context, store stage.Store, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), accessLogCleanupTimeout)
	defer cancel()
	_ = store.Delete(ctx, key)
}

// timeSegment returns a write segment (stage.CheckSegment's form) that
// starts with t in microseconds since 1970, 16 hex digits, followed by 64
// random bits.
func timeSegment(t time.Time) (string, error) {
	var b [stage.SegmentLen / 2]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMicro()))
	if _, err := rand.Read(b[8:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// segmentTime reads the time a timeSegment key was written at; false for
// any other key.
func segmentTime(key, sid string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(key, "tables/"+sid+"/")
	if !ok {
		return time.Time{}, false
	}
	seg, _, ok := strings.Cut(rest, "/")
	if !ok || stage.CheckSegment(seg) != nil {
		return time.Time{}, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(seg[:16])); err != nil {
		return time.Time{}, false
	}
	us := binary.BigEndian.Uint64(b[:])
	if us > math.MaxInt64 {
		return time.Time{}, false
	}
	return time.UnixMicro(int64(us)), true
}

// expired returns the files of tenant's table to leave out of the next
// version, when retention is on and a sweep is due; sweep reports that
// one was. A listing that fails expires nothing this time: the events are
// delivered first, retention catches up on a later commit.
func (s *accessLogSink) expired(ctx context.Context, tenant, sid string, now time.Time) (expire []string, sweep bool) {
	if s.retention <= 0 {
		return nil, false
	}
	s.mu.Lock()
	last, ok := s.swept[tenant]
	s.mu.Unlock()
	if ok && now.Sub(last) < s.sweepEvery {
		return nil, false
	}
	cur, listed, err := s.meta.AccessLogFiles(ctx, tenant, s.catalog)
	if err != nil || cur != sid {
		return nil, false
	}
	files := make([]accesslog.FileInfo, 0, len(listed))
	for _, f := range listed {
		// A file whose time cannot be read is never expired.
		if t, ok := segmentTime(f.Path, sid); ok {
			files = append(files, accesslog.FileInfo{Path: f.Path, Newest: t})
		}
	}
	for _, f := range accesslog.Expired(files, now, s.retention) {
		expire = append(expire, f.Path)
	}
	return expire, true
}
