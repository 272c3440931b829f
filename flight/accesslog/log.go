package accesslog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"lakegate/stage"
)

// Defaults for the zero values of Config.
const (
	DefaultFlushInterval = 5 * time.Second
	DefaultMaxBatch      = 10_000
	DefaultMaxMemory     = 64 << 20
	DefaultSpoolMax      = 1 << 30
	DefaultWriteTimeout  = 30 * time.Second
)

// ErrUnavailable is what Admit's error wraps when a tenant's events cannot
// be kept: the gateway refuses the statement with codes.Unavailable and
// this text.
var ErrUnavailable = errors.New("access log unavailable")

// Sink is where a flushed batch goes: one Parquet file (Encode) holding
// events events of tenant. Write returns nil only once the file is
// durable where it belongs; on error the Log keeps the file (in memory or
// the spool) and writes it again later. A file can therefore reach Write
// twice (after a failure the Sink could not undo, or a crash between a
// write and the spool file's removal): its events may appear twice, never
// zero times.
type Sink interface {
	Write(ctx context.Context, tenant string, file []byte, events int) error
}

// Config configures a Log.
type Config struct {
	// Sink receives the flushed batches. Required.
	Sink Sink
	// FlushInterval is how often every tenant's batch is flushed; 0 means
	// DefaultFlushInterval (5 s). It bounds how late an event reaches the
	// Sink while the Sink works, and what a crash loses.
	FlushInterval time.Duration
	// MaxBatch is the number of a tenant's events that starts a flush
	// before the interval ends; 0 means DefaultMaxBatch.
	MaxBatch int
	// MaxMemory bounds the bytes of events and encoded files held in
	// memory across tenants; 0 means DefaultMaxMemory (64 MiB). Once it is
	// reached, or one tenant holds half of it, Admit refuses (see Admit).
	MaxMemory int64
	// SpoolDir is the directory of the spool: the files the Sink refused,
	// SpoolDir/<tenant>/<seq>.parquet. Required unless MemoryOnly.
	SpoolDir string
	// MemoryOnly runs without a spool (tests; a gateway that accepts
	// losing the held events on a crash): files the Sink refuses stay in
	// memory.
	MemoryOnly bool
	// SpoolMax bounds the spool's bytes on disk; 0 means DefaultSpoolMax
	// (1 GiB).
	SpoolMax int64
	// WriteTimeout bounds one Sink.Write; 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// FailOpen reports whether the operator chose fail-open for a tenant:
	// its statements are admitted even when its events cannot be kept,
	// and those events are dropped and counted. nil means fail closed for
	// every tenant.
	FailOpen func(tenant string) bool
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// Logger receives flush failures and losses; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives the Log's instruments (see NewMetrics).
	Metrics *Metrics
}

// Stats are the Log's counters since New.
type Stats struct {
	// Recorded: events given to Record and kept.
	Recorded int64
	// Written: events the Sink accepted; WrittenBytes their files' bytes.
	Written, WrittenBytes int64
	// FlushFailures: Sink writes that failed.
	FlushFailures int64
	// SpoolBytes, SpoolFiles: what the spool holds now.
	SpoolBytes, SpoolFiles int64
	// MemoryBytes: what memory holds now (events and encoded files).
	MemoryBytes int64
	// Refused: statements Admit refused (fail closed).
	Refused int64
	// FailOpenDrops: events of fail-open tenants dropped because they
	// could not be kept; Lost: events lost otherwise (Record after Close,
	// a Close that could not flush or spool them, an encoding failure).
	FailOpenDrops, Lost int64
}

// file is an encoded batch waiting for the Sink, in memory or spooled.
type file struct {
	data   []byte // nil when spooled
	path   string // spool path when spooled
	size   int64
	events int
}

// tenantQueue is one tenant's state: events not yet encoded, then files
// oldest first (spooled files always precede in-memory ones).
type tenantQueue struct {
	// events are held in chunks of chunkEvents, so appending never
	// copies the events already queued.
	events [][]Event
	count  int   // events queued
	bytes  int64 // estimated bytes of events
	files  []file
	// mem is the tenant's share of Log.mem: bytes plus its in-memory
	// files.
	mem int64
}

// chunkEvents is the capacity of one chunk of a tenant's queue.
const chunkEvents = 128

// Log batches access events per tenant and delivers them to a Sink. Its
// methods are safe for concurrent use.
type Log struct {
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	spool *spool // nil when MemoryOnly

	mu      sync.Mutex
	tenants map[string]*tenantQueue
	mem     int64 // bytes of events and in-memory files
	closed  bool

	flushMu sync.Mutex // one flush at a time (loop or Close)
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}

	recorded, written, writtenBytes, failures, refused, drops, lost atomic.Int64
	memGauge                                                        atomic.Int64
}

// New returns a running Log: a spool left by an earlier process is
// scanned first, and its files are delivered, oldest first, before the
// new events of the same tenant.
func New(cfg Config) (*Log, error) {
	if cfg.Sink == nil {
		return nil, errors.New("accesslog: Config.Sink is required")
	}
	if cfg.SpoolDir == "" && !cfg.MemoryOnly {
		return nil, errors.New("accesslog: Config.SpoolDir is required")
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = DefaultMaxMemory
	}
	if cfg.SpoolMax <= 0 {
		cfg.SpoolMax = DefaultSpoolMax
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	l := &Log{
		cfg:     cfg,
		log:     cfg.Logger,
		now:     cfg.Now,
		tenants: map[string]*tenantQueue{},
		kick:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.now == nil {
		l.now = time.Now
	}
	if !cfg.MemoryOnly {
		sp, found, err := openSpool(cfg.SpoolDir, cfg.SpoolMax, l.log)
		if err != nil {
			return nil, err
		}
		l.spool = sp
		for tenant, files := range found {
			l.queue(tenant).files = files
		}
		if len(found) > 0 {
			l.kick <- struct{}{} // deliver the spool now, not an interval later
		}
	}
	if cfg.Metrics != nil {
		cfg.Metrics.attach(l)
	}
	go l.loop()
	return l, nil
}

// queue returns tenant's queue, creating it; l.mu or exclusive access held.
func (l *Log) queue(tenant string) *tenantQueue {
	q := l.tenants[tenant]
	if q == nil {
		q = &tenantQueue{}
		l.tenants[tenant] = q
	}
	return q
}

func (l *Log) failOpen(tenant string) bool {
	return l.cfg.FailOpen != nil && l.cfg.FailOpen(tenant)
}

// Admit reports whether a statement of tenant may run: nil, or an error
// wrapping ErrUnavailable when the Log cannot keep more of the tenant's
// events and the tenant is not fail-open: memory is full, or the tenant
// holds half of it (its Sink and the spool are not taking its batches;
// the half leaves room to the tenants whose stage works), or the Log is
// closed. Statements admitted just before memory fills are still
// recorded, so memory may exceed MaxMemory by the events of statements in
// flight.
func (l *Log) Admit(tenant string) error {
	if !stage.ValidTenant(tenant) {
		// Its events could be neither spooled nor written.
		l.refused.Add(1)
		return fmt.Errorf("accesslog: invalid tenant %q: %w", tenant, ErrUnavailable)
	}
	l.mu.Lock()
	full := l.closed || l.full(l.tenants[tenant])
	l.mu.Unlock()
	if !full || l.failOpen(tenant) {
		return nil
	}
	l.refused.Add(1)
	return fmt.Errorf("accesslog: tenant %q: %w", tenant, ErrUnavailable)
}

// Record queues e for its tenant (e.Tenant). It never blocks on I/O. The
// Log keeps e's slices: the caller must not modify them afterwards. An
// event of a fail-open tenant that cannot be kept is dropped and counted.
func (l *Log) Record(e Event) {
	size := eventSize(&e)
	if !stage.ValidTenant(e.Tenant) {
		// Admit refused it; an event without a valid tenant has no
		// place to go.
		l.lost.Add(1)
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.lost.Add(1)
		return
	}
	q := l.queue(e.Tenant)
	if l.full(q) && l.failOpen(e.Tenant) {
		l.mu.Unlock()
		l.drops.Add(1)
		return
	}
	if n := len(q.events); n == 0 || len(q.events[n-1]) == cap(q.events[n-1]) {
		q.events = append(q.events, make([]Event, 0, chunkEvents))
	}
	last := &q.events[len(q.events)-1]
	*last = append(*last, e)
	q.count++
	q.bytes += size
	q.mem += size
	l.mem += size
	// Kick once, on reaching the batch size or half the memory: a stage
	// that is down would otherwise get a flush (a tiny file and a failed
	// write) per event.
	half := l.cfg.MaxMemory / 2
	kick := q.count == l.cfg.MaxBatch || l.mem >= half && l.mem-size < half
	l.mu.Unlock()
	l.memGauge.Add(size)
	l.recorded.Add(1)
	if kick {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// eventSize estimates the memory an event holds.
func eventSize(e *Event) int64 {
	n := 256 + len(e.RequestID) + len(e.Tenant) + len(e.Principal) + len(e.Gateway) +
		len(e.ClientAddr) + len(e.Kind) + len(e.Statement) + len(e.Catalog) +
		len(e.DenyReason) + len(e.ErrorClass)
	for _, ts := range [2][]Table{e.Read, e.Written} {
		for i := range ts {
			n += 64 + len(ts[i].Schema) + len(ts[i].Name) + len(ts[i].FilterPolicy)
			for _, m := range ts[i].MaskPolicies {
				n += 16 + len(m)
			}
		}
	}
	return int64(n)
}

// Stats returns the Log's counters.
func (l *Log) Stats() Stats {
	s := Stats{
		Recorded:      l.recorded.Load(),
		Written:       l.written.Load(),
		WrittenBytes:  l.writtenBytes.Load(),
		FlushFailures: l.failures.Load(),
		Refused:       l.refused.Load(),
		FailOpenDrops: l.drops.Load(),
		Lost:          l.lost.Load(),
		MemoryBytes:   l.memGauge.Load(),
	}
	if l.spool != nil {
		s.SpoolBytes, s.SpoolFiles = l.spool.usage()
	}
	return s
}

// loop flushes every FlushInterval, or sooner when Record asks.
func (l *Log) loop() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.FlushInterval)
	defer t.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-l.stop
		cancel()
	}()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		case <-l.kick:
		}
		l.Flush(ctx)
	}
}

// Flush encodes every tenant's queued events and delivers each tenant's
// files, oldest first, until the Sink fails for that tenant; the files
// left go to the spool while it has room, else stay in memory. It returns
// the number of events still held (in memory or the spool) afterwards.
// The flush loop calls it; tests and Close may too.
func (l *Log) Flush(ctx context.Context) (held int) {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	names := make([]string, 0, len(l.tenants))
	for t, q := range l.tenants {
		if q.count > 0 || len(q.files) > 0 {
			names = append(names, t)
		}
	}
	l.mu.Unlock()
	for _, t := range names {
		held += l.flushTenant(ctx, t)
	}
	return held
}

// flushTenant flushes one tenant; flushMu held. Only the flush touches
// q.files, so it reads them without l.mu; Record touches q.events only.
func (l *Log) flushTenant(ctx context.Context, tenant string) (held int) {
	l.mu.Lock()
	q := l.tenants[tenant]
	events, count, evBytes := q.events, q.count, q.bytes
	q.events, q.count, q.bytes = nil, 0, 0
	l.mu.Unlock()

	if count > 0 {
		data, err := encode(events, count)
		if err != nil {
			// Not expected (the schema is fixed); the events cannot be
			// kept in any form, so they are counted as lost.
			l.lost.Add(int64(count))
			l.log.Error("access log: encoding a batch failed: events lost", "tenant", tenant, "events", count, "error", err)
			l.addMem(q, -evBytes)
		} else {
			q.files = append(q.files, file{data: data, size: int64(len(data)), events: count})
			l.addMem(q, int64(len(data))-evBytes)
		}
	}

	// Deliver oldest first; stop at the first failure so order holds.
	for len(q.files) > 0 {
		f := q.files[0]
		if err := l.deliver(ctx, tenant, f); err != nil {
			l.failures.Add(1)
			l.log.Warn("access log: writing a batch failed; kept for retry", "tenant", tenant, "events", f.events, "error", err)
			break
		}
		l.written.Add(int64(f.events))
		l.writtenBytes.Add(f.size)
		q.files = q.files[1:]
		if f.data != nil {
			l.addMem(q, -f.size)
		} else {
			l.spool.remove(f)
		}
	}
	if len(q.files) == 0 {
		q.files = nil
	}

	// Spool what is left in memory, in order, while the spool has room.
	if l.spool != nil {
		for i := range q.files {
			f := &q.files[i]
			if f.data == nil {
				continue
			}
			path, err := l.spool.put(tenant, f.data)
			if err != nil {
				if !errors.Is(err, errSpoolFull) {
					l.log.Error("access log: spooling a batch failed; kept in memory", "tenant", tenant, "events", f.events, "error", err)
				}
				break
			}
			l.addMem(q, -f.size)
			f.data, f.path = nil, path
		}
	}
	for _, f := range q.files {
		held += f.events
	}
	return held
}

// deliver writes one file to the Sink.
func (l *Log) deliver(ctx context.Context, tenant string, f file) error {
	data := f.data
	if data == nil {
		var err error
		if data, err = l.spool.read(f.path); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, l.cfg.WriteTimeout)
	defer cancel()
	if err := l.cfg.Sink.Write(wctx, tenant, data, f.events); err != nil {
		return fmt.Errorf("accesslog: sink: %w", err)
	}
	return nil
}

// full reports whether q's tenant may queue no more; l.mu held.
func (l *Log) full(q *tenantQueue) bool {
	return l.mem >= l.cfg.MaxMemory || q != nil && q.mem >= l.cfg.MaxMemory/2
}

// addMem adds n to q's and the Log's memory.
func (l *Log) addMem(q *tenantQueue, n int64) {
	l.mu.Lock()
	q.mem += n
	l.mem += n
	l.mu.Unlock()
	l.memGauge.Add(n)
}

// Close stops the flush loop and flushes everything: to the Sink, or to
// the spool where the Sink fails, so a graceful shutdown loses no event
// while the spool has room. Events that fit nowhere are counted as lost
// and reported in the error. Admit refuses and Record drops (counted)
// after Close. ctx bounds the final flush's Sink writes.
func (l *Log) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.Flush(ctx)
	// Whatever is still in memory now is lost with the process.
	var lost int
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	for _, q := range l.tenants {
		lost += q.count
		for _, f := range q.files {
			if f.data != nil {
				lost += f.events
			}
		}
	}
	l.mu.Unlock()
	if lost > 0 {
		l.lost.Add(int64(lost))
		return fmt.Errorf("accesslog: close: %d events neither written nor spooled: %w", lost, ErrUnavailable)
	}
	return nil
}
