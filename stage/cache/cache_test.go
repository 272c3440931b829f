package cache_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lakegate/stage"
	"lakegate/stage/cache"
	"lakegate/stage/stagetest"
)

// countingStore counts Gets and may run a hook before each.
type countingStore struct {
	stage.Store
	gets atomic.Int64
	hook func(ctx context.Context, n int64) // n: 1-based Get number
}

func (s *countingStore) Get(ctx context.Context, key string) (io.ReadCloser, stage.Info, error) {
	n := s.gets.Add(1)
	if s.hook != nil {
		s.hook(ctx, n)
	}
	return s.Store.Get(ctx, key)
}

func backends(t *testing.T) []*stagetest.Backend {
	return []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)}
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func put(t testing.TB, st stage.Store, key string, data []byte) cache.File {
	t.Helper()
	info, err := st.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if info.SHA256 != shaHex(data) {
		t.Fatalf("put sha %s", info.SHA256)
	}
	return cache.File{Key: key, Size: int64(len(data)), SHA256: info.SHA256}
}

func open(t *testing.T, cfg cache.Config) *cache.Cache {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "cache")
	}
	c, err := cache.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ls(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

var namePattern = regexp.MustCompile(`^[0-9a-f]{40}\.parquet$`)

func checkPaths(t *testing.T, c *cache.Cache, paths []string, want ...[]byte) {
	t.Helper()
	if len(paths) != len(want) {
		t.Fatalf("%d paths, want %d", len(paths), len(want))
	}
	for i, p := range paths {
		if !filepath.IsAbs(p) || filepath.Dir(p) != c.Dir() || !namePattern.MatchString(filepath.Base(p)) {
			t.Errorf("path %q is not a cache file in %q", p, c.Dir())
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Errorf("path %d: %d bytes, %v", i, len(got), err)
		}
	}
}

func wantStats(t *testing.T, c *cache.Cache, want cache.Stats) {
	t.Helper()
	if got := c.Stats(); got != want {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
}

func TestMissThenHit(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := &countingStore{Store: b.Open(t, "acme")}
			data := []byte("parquet bytes, pretend")
			f := put(t, st, "tables/t1/1/part-0.parquet", data)
			c := open(t, cache.Config{})
			ctx := t.Context()

			paths, release, err := c.Acquire(ctx, st, []cache.File{f})
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, c, paths, data)
			n := int64(len(data))
			wantStats(t, c, cache.Stats{Misses: 1, Fetches: 1, BytesFetched: n, Bytes: n, Files: 1, Pinned: 1})
			release()
			release() // idempotent
			wantStats(t, c, cache.Stats{Misses: 1, Fetches: 1, BytesFetched: n, Bytes: n, Files: 1})

			// Upper-case SHA names the same file.
			f.SHA256 = strings.ToUpper(f.SHA256)
			paths2, release, err := c.Acquire(ctx, st, []cache.File{f, f})
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, c, paths2, data, data)
			if paths2[0] != paths[0] {
				t.Errorf("hit at %q, miss at %q", paths2[0], paths[0])
			}
			wantStats(t, c, cache.Stats{Hits: 2, Misses: 1, Fetches: 1, BytesFetched: n, Bytes: n, Files: 1, Pinned: 1})
			release()
			if got := st.gets.Load(); got != 1 {
				t.Errorf("store Gets: %d, want 1", got)
			}
			if names := ls(t, c.Dir()); len(names) != 1 {
				t.Errorf("cache dir: %v", names)
			}
			// No files: no-op.
			if p, rel, err := c.Acquire(ctx, st, nil); err != nil || len(p) != 0 {
				t.Errorf("empty acquire: %v %v", p, err)
			} else {
				rel()
			}
		})
	}
}

func TestConcurrentAcquireFetchesOnce(t *testing.T) {
	const n = 16
	for _, b := range backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
			st := &countingStore{Store: b.Open(t, "acme")}
			f := put(t, st, "tables/t1/1/part-0.parquet", data)
			c := open(t, cache.Config{})
			// Hold the one fetch until every goroutine has asked for the
			// file, so all 16 overlap it.
			st.hook = func(ctx context.Context, _ int64) {
				deadline := time.Now().Add(10 * time.Second)
				for c.Stats().Misses < n && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
			}
			var wg sync.WaitGroup
			paths := make([][]string, n)
			releases := make([]func(), n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() { paths[i], releases[i], errs[i] = c.Acquire(t.Context(), st, []cache.File{f}) })
			}
			wg.Wait()
			for i := range n {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				checkPaths(t, c, paths[i], data)
			}
			if got := st.gets.Load(); got != 1 {
				t.Errorf("store Gets: %d, want 1", got)
			}
			size := int64(len(data))
			wantStats(t, c, cache.Stats{Misses: n, Fetches: 1, BytesFetched: size, Bytes: size, Files: 1, Pinned: 1})
			for _, r := range releases {
				r()
			}
			wantStats(t, c, cache.Stats{Misses: n, Fetches: 1, BytesFetched: size, Bytes: size, Files: 1})
		})
	}
}

func TestChecksum(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := &countingStore{Store: b.Open(t, "acme")}
			good := put(t, st, "tables/t1/1/part-0.parquet", []byte("hello"))
			c := open(t, cache.Config{})
			cases := map[string]cache.File{
				"other sha":   {Key: good.Key, Size: 5, SHA256: shaHex([]byte("world"))},
				"short size":  {Key: good.Key, Size: 4, SHA256: good.SHA256},
				"long size":   {Key: good.Key, Size: 6, SHA256: good.SHA256},
				"empty claim": {Key: good.Key, Size: 0, SHA256: shaHex(nil)},
			}
			for name, f := range cases {
				// Concurrent waiters all get the error; one fetch.
				before := st.gets.Load()
				var wg sync.WaitGroup
				errs := make([]error, 4)
				for i := range errs {
					wg.Go(func() {
						p, rel, err := c.Acquire(t.Context(), st, []cache.File{f})
						if err == nil {
							rel()
							err = fmt.Errorf("served %v", p)
						}
						errs[i] = err
					})
				}
				wg.Wait()
				for _, err := range errs {
					if !errors.Is(err, cache.ErrChecksum) {
						t.Errorf("%s: %v, want ErrChecksum", name, err)
					} else if !strings.Contains(err.Error(), good.Key) {
						t.Errorf("%s: error does not name the key: %v", name, err)
					}
				}
				if got := st.gets.Load() - before; got < 1 || got > 4 {
					t.Errorf("%s: %d Gets", name, got)
				}
				if names := ls(t, c.Dir()); len(names) != 0 {
					t.Errorf("%s: cache dir keeps %v", name, names)
				}
				if s := c.Stats(); s.Files != 0 || s.Bytes != 0 || s.Pinned != 0 || s.BytesFetched != 0 {
					t.Errorf("%s: stats %+v", name, s)
				}
			}
			if b.RawPut != nil {
				// S3: the object's recorded SHA-256 matches the File but
				// the bytes do not: the store's own check fires at EOF.
				evil := []byte("evil!")
				b.RawPut(t, "tenants/acme/tables/t1/1/part-1.parquet", evil, map[string]string{"lakegate-sha256": good.SHA256})
				f := cache.File{Key: "tables/t1/1/part-1.parquet", Size: 5, SHA256: good.SHA256}
				_, _, err := c.Acquire(t.Context(), st, []cache.File{f})
				if !errors.Is(err, cache.ErrChecksum) || !errors.Is(err, stage.ErrChecksum) {
					t.Errorf("tampered object: %v", err)
				}
				if names := ls(t, c.Dir()); len(names) != 0 {
					t.Errorf("tampered object: cache dir keeps %v", names)
				}
			}
			// The good file is still served afterwards.
			p, rel, err := c.Acquire(t.Context(), st, []cache.File{good})
			if err != nil {
				t.Fatal(err)
			}
			checkPaths(t, c, p, []byte("hello"))
			rel()
		})
	}
}

func TestEviction(t *testing.T) {
	st := stagetest.Local(t).Open(t, "acme")
	ctx := t.Context()
	files := map[string]cache.File{}
	for _, k := range []string{"a", "b", "c", "d", "big"} {
		size := 100
		if k == "big" {
			size = 1000
		}
		files[k] = put(t, st, "f/"+k, bytes.Repeat([]byte(k[:1]), size))
	}
	c := open(t, cache.Config{MaxBytes: 250})
	acq := func(keys ...string) ([]string, func()) {
		t.Helper()
		var fs []cache.File
		for _, k := range keys {
			fs = append(fs, files[k])
		}
		p, rel, err := c.Acquire(ctx, st, fs)
		if err != nil {
			t.Fatal(err)
		}
		return p, rel
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	pa, relA := acq("a") // pinned throughout
	pb, relB := acq("b")
	relB()
	pc, relC := acq("c") // 300 > 250: b (unpinned, LRU) goes
	relC()
	if !exists(pa[0]) || exists(pb[0]) || !exists(pc[0]) {
		t.Errorf("after c: a %v b %v c %v; want a, c", exists(pa[0]), exists(pb[0]), exists(pc[0]))
	}
	if s := c.Stats(); s.Evictions != 1 || s.Bytes != 200 || s.Files != 2 {
		t.Errorf("after c: %+v", s)
	}
	// a is still pinned; d pushes c (the only unpinned) out.
	pd, relD := acq("d")
	if !exists(pa[0]) || exists(pc[0]) || !exists(pd[0]) {
		t.Errorf("after d: a %v c %v d %v; want a, d", exists(pa[0]), exists(pc[0]), exists(pd[0]))
	}
	// Everything pinned: over the bound, temporarily.
	pb, relB = acq("b")
	if s := c.Stats(); s.Bytes != 300 || s.Files != 3 || s.Pinned != 3 {
		t.Errorf("all pinned: %+v", s)
	}
	relA() // a becomes the LRU victim at once
	if exists(pa[0]) || !exists(pb[0]) || !exists(pd[0]) {
		t.Errorf("after releasing a: a %v b %v d %v", exists(pa[0]), exists(pb[0]), exists(pd[0]))
	}
	relB()
	relD()
	// A file larger than the bound is served, and evicted on release.
	pbig, relBig := acq("big")
	checkPaths(t, c, pbig, bytes.Repeat([]byte("b"), 1000))
	relBig()
	if exists(pbig[0]) {
		t.Error("big file kept after release")
	}
	if s := c.Stats(); s.Bytes > 250 || s.Pinned != 0 || s.Bytes != int64(100*s.Files) {
		t.Errorf("end: %+v", s)
	}
	if n := len(ls(t, c.Dir())); n != c.Stats().Files {
		t.Errorf("dir has %d files, stats %d", n, c.Stats().Files)
	}
}

func TestReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	st := &countingStore{Store: stagetest.Local(t).Open(t, "acme")}
	ctx := t.Context()
	d1, d2 := []byte("first file"), []byte("second file")
	f1, f2 := put(t, st, "t/1", d1), put(t, st, "t/2", d2)

	c, err := cache.Open(cache.Config{Dir: dir, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	paths, rel, err := c.Acquire(ctx, st, []cache.File{f1, f2})
	if err != nil {
		t.Fatal(err)
	}
	rel()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Acquire(ctx, st, []cache.File{f1}); !errors.Is(err, cache.ErrClosed) {
		t.Errorf("acquire after close: %v", err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode: %v %v", st.Mode(), err)
	}

	// Leftovers of a crash and foreign entries.
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(string) error{
		cache.TmpPrefix + filepath.Base(paths[0]) + "-0123": func(p string) error { return os.WriteFile(p, d1[:3], 0o600) },
		"junk.txt": func(p string) error { return os.WriteFile(p, []byte("x"), 0o600) },
		strings.Repeat("a", 40) + ".parquet.partial": func(p string) error { return os.WriteFile(p, []byte("x"), 0o600) },
		strings.Repeat("b", 40) + ".parquet":         func(p string) error { return os.Symlink(outside, p) },
		"sub": func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Symlink(outside, filepath.Join(p, "link"))
		},
	}
	for name, mk := range plant {
		if err := mk(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// f2 rotted on disk (same size, other bytes): caught lazily.
	if err := os.WriteFile(paths[1], bytes.Repeat([]byte("X"), len(d2)), 0o600); err != nil {
		t.Fatal(err)
	}

	c = open(t, cache.Config{Dir: dir, MaxBytes: 1 << 20})
	names := ls(t, dir)
	slices.Sort(names)
	want := []string{filepath.Base(paths[0]), filepath.Base(paths[1])}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("after reopen: %v, want %v", names, want)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep me" {
		t.Errorf("symlink target touched: %q %v", b, err)
	}
	size := int64(len(d1) + len(d2))
	wantStats(t, c, cache.Stats{Bytes: size, Files: 2})

	gets := st.gets.Load()
	p, rel, err := c.Acquire(ctx, st, []cache.File{f1})
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, c, p, d1)
	rel()
	if st.gets.Load() != gets {
		t.Error("a complete file was fetched again after reopen")
	}
	p, rel, err = c.Acquire(ctx, st, []cache.File{f2})
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, c, p, d2)
	rel()
	if st.gets.Load() != gets+1 {
		t.Error("a rotten file was not fetched again")
	}
	wantStats(t, c, cache.Stats{Hits: 1, Misses: 1, Fetches: 1, BytesFetched: int64(len(d2)), Bytes: size, Files: 2})

	// A smaller bound evicts at open, oldest first.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(paths[0], old, old); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c = open(t, cache.Config{Dir: dir, MaxBytes: int64(len(d2))})
	if names := ls(t, dir); !slices.Equal(names, []string{filepath.Base(paths[1])}) {
		t.Errorf("open with a smaller bound kept %v", names)
	}
	if s := c.Stats(); s.Evictions != 1 || s.Files != 1 || s.Bytes != int64(len(d2)) {
		t.Errorf("open with a smaller bound: %+v", s)
	}
}

// cancelingReader cancels after the first read.
type cancelingReader struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (r *cancelingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.cancel()
	return n, err
}

type cancelingStore struct {
	stage.Store
	cancel context.CancelFunc
}

func (s *cancelingStore) Get(ctx context.Context, key string) (io.ReadCloser, stage.Info, error) {
	rc, info, err := s.Store.Get(ctx, key)
	if err != nil {
		return nil, info, err
	}
	return &cancelingReader{ReadCloser: rc, cancel: s.cancel}, info, nil
}

func TestCancel(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			base := b.Open(t, "acme")
			data := bytes.Repeat([]byte{7}, 3<<20)
			f := put(t, base, "big/part-0.parquet", data)
			c := open(t, cache.Config{})

			// Cancelled mid-fetch: error, no temp file, nothing cached.
			ctx, cancel := context.WithCancel(t.Context())
			_, _, err := c.Acquire(ctx, &cancelingStore{Store: base, cancel: cancel}, []cache.File{f})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled mid-fetch: %v", err)
			}
			if names := ls(t, c.Dir()); len(names) != 0 {
				t.Errorf("cancelled fetch left %v", names)
			}
			if s := c.Stats(); s.Files != 0 || s.Bytes != 0 || s.Pinned != 0 {
				t.Errorf("stats: %+v", s)
			}

			// The fetching caller is cancelled while another waits: the
			// waiter fetches it itself.
			lctx, lcancel := context.WithCancel(t.Context())
			st := &countingStore{Store: base}
			st.hook = func(_ context.Context, n int64) {
				if n != 1 {
					return
				}
				for c.Stats().Misses < 3 { // 1 before, loader and waiter now
					time.Sleep(time.Millisecond)
				}
				lcancel()
			}
			var wg sync.WaitGroup
			var lerr error
			wg.Go(func() { _, _, lerr = c.Acquire(lctx, st, []cache.File{f}) })
			for c.Stats().Fetches < 2 {
				time.Sleep(time.Millisecond)
			}
			p, rel, err := c.Acquire(t.Context(), st, []cache.File{f})
			wg.Wait()
			if !errors.Is(lerr, context.Canceled) {
				t.Errorf("loader: %v", lerr)
			}
			if err != nil {
				t.Fatalf("waiter: %v", err)
			}
			checkPaths(t, c, p, data)
			rel()
			if got := st.gets.Load(); got != 2 {
				t.Errorf("Gets: %d, want 2", got)
			}
			if names := ls(t, c.Dir()); len(names) != 1 {
				t.Errorf("dir: %v", names)
			}
		})
	}
}

func TestHostileKeys(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "cache")
	b := stagetest.Local(t)
	st := b.Open(t, "acme")
	c := open(t, cache.Config{Dir: dir})
	// A file outside the stage that a naive join would reach.
	secret := []byte("other tenant")
	other := b.Open(t, "other")
	put(t, other, "secret", secret)
	sum := shaHex(secret)
	keys := append([]string{
		"../other/secret", "../../tenants/other/secret", "/etc/passwd", "a/../../../x",
		"..", ".", "./x", "x/..", `..\..\x`, "x\x00y", "%2e%2e/x", "cache/../../x",
	}, stagetest.BadKeys...)
	for _, k := range keys {
		if name := cache.LocalName(k, sum); !namePattern.MatchString(name) || !filepath.IsLocal(name) {
			t.Errorf("key %s: local name %q", stage.SafeKey(k), name)
		}
		_, _, err := c.Acquire(t.Context(), st, []cache.File{{Key: k, Size: int64(len(secret)), SHA256: sum}})
		if !errors.Is(err, stage.ErrInvalidKey) && !errors.Is(err, stage.ErrOutsideStage) && !errors.Is(err, cache.ErrInvalidFile) {
			t.Errorf("key %s: %v", stage.SafeKey(k), err)
		}
	}
	if names := ls(t, dir); len(names) != 0 {
		t.Errorf("cache dir: %v", names)
	}
	if names := ls(t, parent); !slices.Equal(names, []string{"cache"}) {
		t.Errorf("parent of the cache dir: %v", names)
	}
	// Valid keys that look like paths stay inside Dir.
	for _, k := range []string{"a/b/c.parquet", "x..y", "cache", "tenants/other/secret"} {
		data := []byte("data of " + k)
		f := put(t, st, k, data)
		p, rel, err := c.Acquire(t.Context(), st, []cache.File{f})
		if err != nil {
			t.Fatal(err)
		}
		checkPaths(t, c, p, data)
		rel()
	}
	if names := ls(t, parent); !slices.Equal(names, []string{"cache"}) {
		t.Errorf("parent of the cache dir: %v", names)
	}
}

func TestInvalidFile(t *testing.T) {
	st := &countingStore{Store: stagetest.Local(t).Open(t, "acme")}
	c := open(t, cache.Config{})
	sum := shaHex(nil)
	for _, f := range []cache.File{
		{Key: "", Size: 0, SHA256: sum},
		{Key: "k", Size: -1, SHA256: sum},
		{Key: "k", Size: 0, SHA256: sum[:63]},
		{Key: "k", Size: 0, SHA256: sum[:63] + "g"},
		{Key: "k", Size: 0, SHA256: "../../../../../../../../../../../../../../../../../../../etc/pwd"},
	} {
		if _, _, err := c.Acquire(t.Context(), st, []cache.File{f}); !errors.Is(err, cache.ErrInvalidFile) {
			t.Errorf("%+v: %v", f, err)
		}
	}
	if st.gets.Load() != 0 {
		t.Error("invalid files reached the store")
	}
	if _, err := cache.Open(cache.Config{}); err == nil {
		t.Error("empty Dir accepted")
	}
	if _, err := cache.Open(cache.Config{Dir: t.TempDir(), MaxBytes: -1}); err == nil {
		t.Error("negative MaxBytes accepted")
	}
}

func TestPartialFailureReleasesEverything(t *testing.T) {
	st := stagetest.Local(t).Open(t, "acme")
	var fs []cache.File
	var datas [][]byte
	for i := range 8 {
		d := []byte(fmt.Sprintf("file %d", i))
		datas = append(datas, d)
		fs = append(fs, put(t, st, fmt.Sprintf("p/%d", i), d))
	}
	c := open(t, cache.Config{})
	before := runtime.NumGoroutine()
	missing := cache.File{Key: "p/missing", Size: 1, SHA256: shaHex([]byte("m"))}
	_, _, err := c.Acquire(t.Context(), st, append(slices.Clone(fs), missing))
	if !errors.Is(err, stage.ErrNotFound) || !strings.Contains(err.Error(), "p/missing") {
		t.Errorf("missing file: %v", err)
	}
	if s := c.Stats(); s.Pinned != 0 {
		t.Errorf("failed acquire left pins: %+v", s)
	}
	paths, rel, err := c.Acquire(t.Context(), st, fs)
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, c, paths, datas...)
	rel()
	for range 100 {
		if runtime.NumGoroutine() <= before {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines: %d before, %d after", before, n)
	}
	if names := ls(t, c.Dir()); len(names) != c.Stats().Files {
		t.Errorf("dir %v vs stats %+v", names, c.Stats())
	}
	for _, n := range ls(t, c.Dir()) {
		if strings.HasPrefix(n, cache.TmpPrefix) {
			t.Errorf("temp file left: %s", n)
		}
	}
}
