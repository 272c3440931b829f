package stage

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// The tests in this file inject I/O faults through LocalStore's openDir and
// walkFS, which no real directory produces on demand (the tests run as root
// too, so permissions cannot stand in for them).

func openTestLocal(t *testing.T) *LocalStore {
	t.Helper()
	st, err := OpenLocal(Descriptor{Version: 1, Local: &LocalDescriptor{Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// fakeDir is a directory handle whose Sync and Close fail on demand.
type fakeDir struct {
	syncErr, closeErr error
	syncs, closes     int
}

func (d *fakeDir) Sync() error  { d.syncs++; return d.syncErr }
func (d *fakeDir) Close() error { d.closes++; return d.closeErr }

// TestLocalPutReportsDirSyncFaults checks that Put fails when the fsync of
// the destination directory fails (opening it, syncing it or closing it),
// with that error; that a file system without directory fsync (EINVAL) is
// not an error; and that a successful Put syncs and closes the directory.
func TestLocalPutReportsDirSyncFaults(t *testing.T) {
	errOpen, errSync, errClose := errors.New("open failed"), errors.New("sync failed"), errors.New("close failed")
	cases := []struct {
		name    string
		openErr error
		dir     fakeDir
		want    error
	}{
		{"synced", nil, fakeDir{}, nil},
		{"open fails", errOpen, fakeDir{}, errOpen},
		{"sync fails", nil, fakeDir{syncErr: errSync}, errSync},
		{"close fails", nil, fakeDir{closeErr: errClose}, errClose},
		{"sync and close fail", nil, fakeDir{syncErr: errSync, closeErr: errClose}, errSync},
		{"no directory fsync", nil, fakeDir{syncErr: &fs.PathError{Op: "sync", Path: "d", Err: syscall.EINVAL}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := openTestLocal(t)
			dir := c.dir
			var opened []string
			st.openDir = func(name string) (syncCloser, error) {
				opened = append(opened, name)
				if c.openErr != nil {
					return nil, c.openErr
				}
				return &dir, nil
			}
			_, err := st.Put(t.Context(), "d/k", strings.NewReader("x"), 1)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("Put = %v, want %v", err, c.want)
			}
			if len(opened) != 1 || opened[0] != "d" {
				t.Errorf("directories opened for fsync: %q, want [d]", opened)
			}
			if c.openErr == nil && (dir.syncs != 1 || dir.closes != 1) {
				t.Errorf("directory synced %d and closed %d times, want once each", dir.syncs, dir.closes)
			}
		})
	}
}

// faultFS fails Open (and so Stat and ReadDir) of the names in fail.
type faultFS struct {
	fs.FS
	fail map[string]error
}

func (f faultFS) Open(name string) (fs.File, error) {
	if err := f.fail[name]; err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f.FS.Open(name)
}

// TestLocalListReportsWalkFaults checks that List fails with the error when
// the directory it lists cannot be read for any reason but not existing
// (an unreadable stage root, an unreadable prefix directory), and that a
// missing directory still lists nothing.
func TestLocalListReportsWalkFaults(t *testing.T) {
	cases := []struct {
		name   string
		prefix string
		fail   map[string]error
		want   error // nil: no error and no keys
	}{
		{"unreadable root", "", map[string]error{".": syscall.EACCES}, syscall.EACCES},
		{"unreadable directory", "d/k", map[string]error{"d": syscall.EIO}, syscall.EIO},
		{"missing directory", "e/k", map[string]error{"e": fs.ErrNotExist}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := openTestLocal(t)
			if _, err := st.Put(t.Context(), "d/k", strings.NewReader("x"), 1); err != nil {
				t.Fatal(err)
			}
			st.walkFS = faultFS{FS: st.walkFS, fail: c.fail}
			keys, err := st.List(t.Context(), c.prefix, "", 0)
			if c.want == nil && (err != nil || len(keys) != 0) || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("List(%q) = %q, %v; want no keys and error %v", c.prefix, keys, err, c.want)
			}
		})
	}
}
