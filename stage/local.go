package stage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// LocalStore is a Store in a local directory, opened with os.OpenRoot at the
// stage root: no key, symlink or ".." can resolve outside it (os.Root
// refuses), on top of the CheckKey check every operation makes first.
// Directories are created 0700, files 0600.
//
// Writes are atomic and create-only: Put writes a temporary file (a
// '.'-prefixed name, which no key can name) in the destination directory,
// fsyncs it, hard-links it to the key with Root.Link, which fails if the key
// exists, removes the temporary name and fsyncs the directory. Readers see
// the whole file or nothing, and concurrent Puts of one key have exactly one
// winner. Symlinks inside the root are followed by Get and Stat only while
// their target stays inside the root; List never returns them.
//
// A LocalStore is safe for use from multiple goroutines.
type LocalStore struct {
	d    Descriptor
	root *os.Root
	// openDir and walkFS are the file-system access of syncDir and List:
	// root.Open and root.FS(). Tests replace them to inject faults no real
	// directory produces on demand (a failed directory fsync, a walk error).
	openDir func(name string) (syncCloser, error)
	walkFS  fs.FS
}

// syncCloser is the part of *os.File that syncDir uses.
type syncCloser interface {
	Sync() error
	Close() error
}

// OpenLocal creates the stage root (0700, with parents) if needed and opens
// it. d must be a valid local descriptor, usually a child from ForTenant.
func OpenLocal(d Descriptor) (*LocalStore, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Local == nil {
		return nil, fmt.Errorf("%w: OpenLocal needs a local descriptor, got %s", ErrInvalidDescriptor, d)
	}
	if err := os.MkdirAll(d.Local.Root, 0o700); err != nil {
		return nil, fmt.Errorf("stage: open %s: %w", d, err)
	}
	root, err := os.OpenRoot(d.Local.Root)
	if err != nil {
		return nil, fmt.Errorf("stage: open %s: %w", d, err)
	}
	return &LocalStore{
		d:       d,
		root:    root,
		openDir: func(name string) (syncCloser, error) { return root.Open(name) },
		walkFS:  root.FS(),
	}, nil
}

// Descriptor implements Store.
func (s *LocalStore) Descriptor() Descriptor { return s.d }

// Close implements Store.
func (s *LocalStore) Close() error { return s.root.Close() }

// Put implements Store.
func (s *LocalStore) Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error) {
	if _, err := s.d.Key(key); err != nil {
		return Info{}, pathErr("put", key, err)
	}
	info, err := s.put(ctx, key, r, size)
	if err != nil {
		return Info{}, pathErr("put", key, err)
	}
	return info, nil
}

// put writes r to key; key has been checked.
func (s *LocalStore) put(ctx context.Context, key string, r io.Reader, size int64) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	dir := path.Dir(key)
	if dir != "." {
		if err := s.root.MkdirAll(dir, 0o700); err != nil {
			return Info{}, err
		}
	}
	if _, err := s.root.Lstat(key); err == nil {
		return Info{}, ErrExists // early answer; Link below is the real guard
	}
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Info{}, err
	}
	defer func() { _ = s.root.Remove(tmp) }()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), ctxReader{ctx, r})
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("%w: read %d bytes, want %d", ErrSize, n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, err
	}
	if err := s.root.Link(tmp, key); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Info{}, ErrExists
		}
		return Info{}, err
	}
	if err := s.syncDir(dir); err != nil {
		return Info{}, err
	}
	return Info{Key: key, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func (s *LocalStore) syncDir(dir string) error {
	d, err := s.openDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) { // file systems without directory fsync
		err = nil
	}
	return err
}

// open opens a regular file at a checked key.
func (s *LocalStore) open(key string) (*os.File, Info, error) {
	f, err := s.root.Open(key)
	if err != nil {
		return nil, Info{}, localErr(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Info{}, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, Info{}, ErrNotFound
	}
	return f, Info{Key: key, Size: st.Size()}, nil
}

func localErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return ErrNotFound
	}
	return err
}

// Get implements Store.
func (s *LocalStore) Get(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	if _, err := s.d.Key(key); err != nil {
		return nil, Info{}, pathErr("get", key, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, Info{}, pathErr("get", key, err)
	}
	f, info, err := s.open(key)
	if err != nil {
		return nil, Info{}, pathErr("get", key, err)
	}
	return f, info, nil
}

// Stat implements Store.
func (s *LocalStore) Stat(ctx context.Context, key string) (Info, error) {
	if _, err := s.d.Key(key); err != nil {
		return Info{}, pathErr("stat", key, err)
	}
	st, err := s.root.Stat(key)
	if err == nil && !st.Mode().IsRegular() {
		err = ErrNotFound
	}
	if err != nil {
		return Info{}, pathErr("stat", key, localErr(err))
	}
	return Info{Key: key, Size: st.Size(), Modified: st.ModTime()}, nil
}

// List implements Store.
func (s *LocalStore) List(ctx context.Context, prefix, startAfter string, limit int) ([]string, error) {
	if _, err := s.d.ListPrefix(prefix); err != nil {
		return nil, pathErr("list", prefix, err)
	}
	if startAfter != "" {
		if _, err := s.d.Key(startAfter); err != nil {
			return nil, pathErr("list", startAfter, err)
		}
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	dir := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	var keys []string
	err := fs.WalkDir(s.walkFS, dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if e.IsDir() {
			if p != dir && !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || !strings.HasPrefix(p, prefix) || p <= startAfter {
			return nil
		}
		if _, err := s.d.Key(p); err == nil { // only names callers can pass back
			keys = append(keys, p)
		}
		return nil
	})
	if err != nil {
		return nil, pathErr("list", prefix, localErr(err))
	}
	slices.Sort(keys)
	if len(keys) > limit {
		keys = keys[:limit]
	}
	return keys, nil
}

// Delete implements Store.
func (s *LocalStore) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if _, err := s.d.Key(k); err != nil {
			return pathErr("delete", k, err)
		}
	}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return pathErr("delete", k, err)
		}
		st, err := s.root.Lstat(k)
		if err != nil {
			if err = localErr(err); errors.Is(err, ErrNotFound) {
				continue
			}
			return pathErr("delete", k, err)
		}
		if st.IsDir() {
			continue // not an object
		}
		if err := s.root.Remove(k); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return pathErr("delete", k, err)
		}
	}
	return nil
}

// Copy implements Store.
func (s *LocalStore) Copy(ctx context.Context, src, dst string) error {
	if _, err := s.d.Key(src); err != nil {
		return pathErr("copy", src, err)
	}
	if _, err := s.d.Key(dst); err != nil {
		return pathErr("copy", dst, err)
	}
	f, info, err := s.open(src)
	if err != nil {
		return pathErr("copy", src, err)
	}
	defer f.Close()
	if _, err := s.put(ctx, dst, f, info.Size); err != nil {
		return pathErr("copy", dst, err)
	}
	return nil
}

// ctxReader fails reads once ctx is done, so long copies stop on cancel.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
