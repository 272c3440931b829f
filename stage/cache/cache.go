package cache

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lakegate/stage"
)

// DefaultMaxBytes is the size bound used when Config.MaxBytes is 0.
const DefaultMaxBytes int64 = 10 << 30

const (
	nameHexLen = 40         // hex digits of the local name
	nameSuffix = ".parquet" // every complete file's suffix
	tmpPrefix  = ".tmp-"    // temporary files; never a valid name
	// fetchParallelism bounds the fetches one Acquire runs at once.
	fetchParallelism = 4
	copyBufSize      = 1 << 20
)

// Config configures a Cache.
type Config struct {
	// Dir is the cache directory of ONE tenant; it is created (mode 0700,
	// with parents) if missing. The caller gives each tenant its own.
	Dir string
	// MaxBytes bounds the total size of complete files; 0 means
	// DefaultMaxBytes (10 GiB). Pinned files may push the cache over it
	// (see the package documentation). Negative is invalid.
	MaxBytes int64
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("cache: config: Dir is empty")
	}
	if c.MaxBytes < 0 {
		return fmt.Errorf("cache: config: MaxBytes %d is negative", c.MaxBytes)
	}
	return nil
}

// File names a stage file the caller wants: from the committed table
// version.
type File struct {
	Key    string // relative to the store's stage root
	Size   int64  // exact size in bytes
	SHA256 string // hex SHA-256 of the contents (either case)
}

// Stats are cumulative counters and current totals. Every requested file
// of every Acquire counts once as a hit or a miss.
type Stats struct {
	Hits         int64 // complete locally (verified now if found on disk by Open)
	Misses       int64 // fetched by this caller, or waited for while another caller fetched or verified it
	Fetches      int64 // store Gets started
	BytesFetched int64 // bytes written by completed, verified fetches
	Evictions    int64 // files removed to stay under MaxBytes
	Bytes        int64 // current total size of complete files
	Files        int   // current number of complete files
	Pinned       int   // complete or in-flight files currently pinned
}

type state int

const (
	stateOnDisk  state = iota // found by Open: complete, not yet verified
	stateLoading              // a loader is verifying or fetching it
	stateReady                // complete and verified
	stateFailed               // the load failed; the entry left the map
)

// entry is one local file. All fields are guarded by Cache.mu, except that
// done is closed once and err is written before it.
type entry struct {
	name  string
	size  int64 // of the file on disk, when counted
	state state
	pins  int
	elem  *list.Element // in Cache.lru iff unpinned and stateOnDisk/stateReady
	done  chan struct{} // closed when a load ends (stateLoading only)
	err   error         // the load's error, set before done is closed
}

// Cache is a size-bounded local cache of immutable stage files in one
// directory. It is safe for use from multiple goroutines.
type Cache struct {
	dir  string
	root *os.Root
	max  int64
	log  *slog.Logger
	bufs sync.Pool

	loads sync.WaitGroup // in-flight loads, waited for by Close

	mu      sync.Mutex
	closed  bool
	entries map[string]*entry
	lru     list.List // *entry; front = most recently released
	stats   Stats
}

// Open opens (creating it if needed) the cache directory cfg.Dir and scans
// it: temporary files and every entry whose name is not a cache file name
// (or that is not a regular file) are removed; complete files are kept,
// counted and become evictable, oldest modification first. Their contents
// are verified lazily, on first Acquire. If they exceed MaxBytes, the
// oldest are evicted.
func Open(cfg Config) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("cache: open: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache: open: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "stage/cache")
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o077 != 0 {
		log.Warn("cache directory is accessible to group or others", "dir", dir, "mode", st.Mode().Perm().String())
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cache: open: %w", err)
	}
	c := &Cache{dir: dir, root: root, max: cfg.MaxBytes, log: log, entries: map[string]*entry{}}
	if c.max == 0 {
		c.max = DefaultMaxBytes
	}
	c.bufs.New = func() any { b := make([]byte, copyBufSize); return &b }
	if err := c.scan(); err != nil {
		root.Close()
		return nil, fmt.Errorf("cache: open: %w", err)
	}
	return c, nil
}

// scan loads the directory listing at Open.
func (c *Cache) scan() error {
	d, err := c.root.Open(".")
	if err != nil {
		return err
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return err
	}
	type found struct {
		name  string
		size  int64
		mtime time.Time
	}
	var keep []found
	removed := 0
	for _, de := range ents {
		name := de.Name()
		if validName(name) && de.Type().IsRegular() {
			if info, err := de.Info(); err == nil {
				keep = append(keep, found{name, info.Size(), info.ModTime()})
				continue
			}
		}
		// Temporary leftovers, foreign names, symlinks, directories: not
		// ours. RemoveAll through the root never follows a symlink.
		if err := c.root.RemoveAll(name); err != nil {
			return err
		}
		removed++
	}
	// Oldest first, so the oldest ends at the back of the LRU list.
	sortFound := func(a, b found) int { return a.mtime.Compare(b.mtime) }
	slices.SortFunc(keep, sortFound)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range keep {
		e := &entry{name: f.name, size: f.size, state: stateOnDisk}
		e.elem = c.lru.PushFront(e)
		c.entries[f.name] = e
		c.stats.Bytes += f.size
		c.stats.Files++
	}
	c.log.Info("cache opened", "dir", c.dir, "files", len(keep), "bytes", c.stats.Bytes, "removed", removed)
	c.evictLocked()
	return nil
}

// Close waits for in-flight fetches to end (cancel their contexts to hurry
// them) and releases the directory. It deletes nothing. Later Acquires fail
// with ErrClosed; release functions stay safe to call. Close is idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.loads.Wait()
	return c.root.Close()
}

// Dir returns the absolute cache directory.
func (c *Cache) Dir() string { return c.dir }

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	for _, e := range c.entries {
		if e.pins > 0 {
			s.Pinned++
		}
	}
	return s
}

// localName is the file name of (key, sum): a hash, never key text.
// sum is the lower-case hex SHA-256, exactly 64 bytes, so the split
// between key and sum is unambiguous.
func localName(key, sum string) string {
	h := sha256.Sum256([]byte(key + "\x00" + sum))
	return hex.EncodeToString(h[:])[:nameHexLen] + nameSuffix
}

func validName(name string) bool {
	if len(name) != nameHexLen+len(nameSuffix) || !strings.HasSuffix(name, nameSuffix) {
		return false
	}
	for _, r := range name[:nameHexLen] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// checkFile validates f and returns its lower-case hex and raw sums.
func checkFile(f File) (string, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	switch {
	case f.Key == "":
		return "", sum, fmt.Errorf("%w: empty key", ErrInvalidFile)
	case f.Size < 0:
		return "", sum, fmt.Errorf("%w: negative size %d", ErrInvalidFile, f.Size)
	case len(f.SHA256) != 2*sha256.Size:
		return "", sum, fmt.Errorf("%w: SHA256 of %d characters, want %d hex digits", ErrInvalidFile, len(f.SHA256), 2*sha256.Size)
	}
	lower := strings.ToLower(f.SHA256)
	if _, err := hex.Decode(sum[:], []byte(lower)); err != nil {
		return "", sum, fmt.Errorf("%w: SHA256 is not hex", ErrInvalidFile)
	}
	return lower, sum, nil
}

// want is one requested file, validated.
type want struct {
	File
	sum  [sha256.Size]byte
	name string
}

// Acquire makes every file available locally and pins each until release
// is called; it returns their absolute local paths in order. Files missing
// locally are fetched from store (up to four at once), verified and
// renamed into place; a file another Acquire is already fetching is waited
// for, not fetched again. On error nothing stays pinned, release is nil and
// the error names the first failing file's key. release is idempotent.
func (c *Cache) Acquire(ctx context.Context, store stage.Store, files []File) (paths []string, release func(), err error) {
	ws := make([]want, len(files))
	for i, f := range files {
		lower, sum, err := checkFile(f)
		if err != nil {
			return nil, nil, &Error{Op: "acquire", Key: f.Key, Err: err}
		}
		ws[i] = want{File: f, sum: sum, name: localName(f.Key, lower)}
	}
	got := make([]*entry, len(ws))
	errs := make([]error, len(ws))
	var pending []int // not complete locally: verify, fetch or wait
	for i, w := range ws {
		if got[i] = c.tryHit(w); got[i] == nil {
			pending = append(pending, i)
		}
	}
	if len(pending) == 1 {
		i := pending[0]
		got[i], errs[i] = c.acquire(ctx, store, ws[i])
	} else if len(pending) > 1 {
		// A few workers; one failure cancels the siblings, whose loads
		// then clean up after themselves.
		fctx, cancel := context.WithCancel(ctx)
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(fetchParallelism, len(pending)) {
			wg.Go(func() {
				for {
					j := int(next.Add(1)) - 1
					if j >= len(pending) {
						return
					}
					i := pending[j]
					if got[i], errs[i] = c.acquire(fctx, store, ws[i]); errs[i] != nil {
						cancel()
					}
				}
			})
		}
		wg.Wait()
		cancel()
	}
	if err := firstError(errs); err != nil {
		c.unpin(got)
		return nil, nil, err
	}
	paths = make([]string, len(got))
	for i, e := range got {
		paths[i] = filepath.Join(c.dir, e.name)
	}
	var once sync.Once
	return paths, func() { once.Do(func() { c.unpin(got) }) }, nil
}

// firstError prefers a real cause over the cancellations it triggered.
func firstError(errs []error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// tryHit pins and returns w's entry if it is complete, verified and of
// w's size; otherwise nil (acquire then handles it).
func (c *Cache) tryHit(w want) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[w.name]
	if c.closed || e == nil || e.state != stateReady || e.size != w.Size {
		return nil
	}
	e.pins++
	if e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
	}
	c.stats.Hits++
	return e
}

// acquire returns w's entry, complete and pinned once for the caller.
func (c *Cache) acquire(ctx context.Context, store stage.Store, w want) (*entry, error) {
	counted := false
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, &Error{Op: "acquire", Key: w.Key, Err: ErrClosed}
		}
		if err := ctx.Err(); err != nil {
			c.mu.Unlock()
			return nil, &Error{Op: "acquire", Key: w.Key, Err: err}
		}
		e := c.entries[w.name]
		if e == nil {
			e = &entry{name: w.name, state: stateLoading}
			c.entries[w.name] = e
		}
		e.pins++
		if e.elem != nil {
			c.lru.Remove(e.elem)
			e.elem = nil
		}
		switch e.state {
		case stateReady:
			if !counted {
				c.stats.Hits++
			}
			c.mu.Unlock()
			if e.size != w.Size {
				// Same key and SHA-256, different size: the caller's File
				// is inconsistent (the stored bytes were verified).
				c.unpin([]*entry{e})
				return nil, &Error{Op: "acquire", Key: w.Key, Err: fmt.Errorf("%w: size %d, the file with this SHA-256 has %d", ErrChecksum, w.Size, e.size)}
			}
			return e, nil
		case stateOnDisk, stateLoading:
			if e.state == stateOnDisk || e.done == nil {
				// This caller loads it.
				onDisk := e.state == stateOnDisk
				e.state, e.done = stateLoading, make(chan struct{})
				c.loads.Add(1)
				c.mu.Unlock()
				err := c.load(ctx, store, w, e, onDisk, !counted)
				if err != nil {
					return nil, err
				}
				return e, nil
			}
			if !counted {
				c.stats.Misses++
			}
			counted = true
			done := e.done
			c.mu.Unlock()
			select {
			case <-done:
			case <-ctx.Done():
				c.unpin([]*entry{e})
				return nil, &Error{Op: "acquire", Key: w.Key, Err: ctx.Err()}
			}
			if e.err == nil {
				if e.size != w.Size {
					c.unpin([]*entry{e})
					return nil, &Error{Op: "acquire", Key: w.Key, Err: fmt.Errorf("%w: size %d, the file with this SHA-256 has %d", ErrChecksum, w.Size, e.size)}
				}
				return e, nil
			}
			// The failed entry left the map; its pins are moot.
			if isContextErr(e.err) && ctx.Err() == nil {
				continue // the loader's context ended, not ours: retry
			}
			return nil, e.err
		default:
			c.mu.Unlock()
			panic("cache: failed entry in the map")
		}
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// load makes e's file complete: it verifies the file found on disk, if
// any, and otherwise fetches it. The caller holds one pin on e and a
// c.loads count; load publishes the outcome and wakes waiters.
func (c *Cache) load(ctx context.Context, store stage.Store, w want, e *entry, onDisk, count bool) error {
	defer c.loads.Done()
	hit, err := false, error(nil)
	if onDisk {
		if err = c.verify(w, e.size); err == nil {
			hit = true
		} else {
			c.log.Warn("cached file failed verification; fetching it again", "key", stage.SafeKey(w.Key), "file", e.name, "err", err)
			err = c.root.Remove(e.name)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
			c.mu.Lock()
			c.stats.Bytes -= e.size
			c.stats.Files--
			c.mu.Unlock()
			if err != nil {
				err = &Error{Op: "verify", Key: w.Key, Err: err}
			}
		}
	}
	if !hit && err == nil {
		c.mu.Lock()
		c.stats.Fetches++
		if count {
			c.stats.Misses++
		}
		c.mu.Unlock()
		err = c.fetch(ctx, store, w)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		e.err, e.state = err, stateFailed
		if c.entries[e.name] == e {
			delete(c.entries, e.name)
		}
		close(e.done)
		return err
	}
	if hit {
		if count {
			c.stats.Hits++
		}
	} else {
		e.size = w.Size
		c.stats.Bytes += e.size
		c.stats.Files++
		c.stats.BytesFetched += e.size
	}
	e.state = stateReady
	close(e.done)
	c.evictLocked()
	return nil
}

// verify re-hashes a file found on disk at Open against w.
func (c *Cache) verify(w want, size int64) error {
	if size != w.Size {
		return &Error{Op: "verify", Key: w.Key, Err: fmt.Errorf("%w: %d bytes on disk, want %d", ErrChecksum, size, w.Size)}
	}
	f, err := c.root.Open(w.name)
	if err != nil {
		return &Error{Op: "verify", Key: w.Key, Err: err}
	}
	defer f.Close()
	h := sha256.New()
	bp := c.bufs.Get().(*[]byte)
	defer c.bufs.Put(bp)
	n, err := io.CopyBuffer(h, io.LimitReader(f, w.Size+1), *bp)
	if err != nil {
		return &Error{Op: "verify", Key: w.Key, Err: err}
	}
	if n != w.Size || [sha256.Size]byte(h.Sum(nil)) != w.sum {
		return &Error{Op: "verify", Key: w.Key, Err: fmt.Errorf("%w: contents on disk differ", ErrChecksum)}
	}
	return nil
}

// fetch copies w from store into a temporary file, verifies size and
// SHA-256, fsyncs it and renames it to w.name. On any error the temporary
// file is removed and nothing is visible under w.name.
func (c *Cache) fetch(ctx context.Context, store stage.Store, w want) (err error) {
	fail := func(err error) error { return &Error{Op: "fetch", Key: w.Key, Err: err} }
	rc, info, err := store.Get(ctx, w.Key)
	if err != nil {
		return fail(err)
	}
	defer rc.Close()
	if info.Size >= 0 && info.Size != w.Size {
		return fail(fmt.Errorf("%w: store has %d bytes, want %d", ErrChecksum, info.Size, w.Size))
	}
	if info.SHA256 != "" && !strings.EqualFold(info.SHA256, hex.EncodeToString(w.sum[:])) {
		return fail(fmt.Errorf("%w: store records a different SHA-256", ErrChecksum))
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := tmpPrefix + w.name + "-" + hex.EncodeToString(rnd[:])
	out, err := c.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail(err)
	}
	defer func() {
		if out != nil {
			out.Close()
		}
		if err != nil {
			if rmErr := c.root.Remove(tmp); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
				c.log.Error("cannot remove temporary file", "file", tmp, "err", rmErr)
			}
		}
	}()
	h := sha256.New()
	bp := c.bufs.Get().(*[]byte)
	n, err := io.CopyBuffer(io.MultiWriter(out, h), &ctxReader{ctx: ctx, r: io.LimitReader(rc, w.Size+1)}, *bp)
	c.bufs.Put(bp)
	if err != nil {
		if errors.Is(err, stage.ErrChecksum) {
			return fail(fmt.Errorf("%w: %w", ErrChecksum, err))
		}
		return fail(err)
	}
	if n != w.Size {
		return fail(fmt.Errorf("%w: read %d bytes, want %d", ErrChecksum, n, w.Size))
	}
	if [sha256.Size]byte(h.Sum(nil)) != w.sum {
		return fail(fmt.Errorf("%w: SHA-256 of the fetched bytes differs", ErrChecksum))
	}
	if err = out.Sync(); err != nil {
		return fail(err)
	}
	err = out.Close()
	out = nil
	if err != nil {
		return fail(err)
	}
	if err = ctx.Err(); err != nil {
		return fail(err)
	}
	if err = c.root.Rename(tmp, w.name); err != nil {
		return fail(err)
	}
	// Make the rename durable; a failure here leaves a complete,
	// verified file, so it is logged, not returned.
	if d, derr := c.root.Open("."); derr == nil {
		if derr = d.Sync(); derr != nil {
			c.log.Warn("cannot sync cache directory", "err", derr)
		}
		d.Close()
	}
	return nil
}

// ctxReader stops a copy when ctx ends, for stores whose readers do not
// watch the context (the local backend).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// unpin drops one pin from each non-nil entry; live complete entries whose
// last pin goes become evictable (most recently used).
func (c *Cache) unpin(es []*entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range es {
		if e == nil {
			continue
		}
		e.pins--
		if e.pins == 0 && e.state == stateReady && c.entries[e.name] == e && e.elem == nil {
			e.elem = c.lru.PushFront(e)
		}
	}
	c.evictLocked()
}

// evictLocked removes least recently released unpinned files while Bytes
// exceeds the bound. The file is removed under c.mu so that no new entry
// for the same name can be fetched and renamed into place first.
func (c *Cache) evictLocked() {
	for c.stats.Bytes > c.max && !c.closed {
		back := c.lru.Back()
		if back == nil {
			return // everything is pinned or in flight
		}
		e := back.Value.(*entry)
		c.lru.Remove(back)
		e.elem = nil
		delete(c.entries, e.name)
		if err := c.root.Remove(e.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.log.Error("cannot evict cached file", "file", e.name, "err", err)
		}
		c.stats.Bytes -= e.size
		c.stats.Files--
		c.stats.Evictions++
	}
}
