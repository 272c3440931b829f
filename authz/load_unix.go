//go:build unix

package authz

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// LoadPrincipalMap reads and parses the principal map at path. It opens the
// file without following a symlink at the final path component and without
// blocking (a FIFO is refused, not waited on), then checks the opened
// descriptor — not the path, so there is no check-then-open race. It refuses
// anything but a regular file, any group or other permission bit (use 0600 or
// 0400), and files over 1 MiB; then it calls ParsePrincipalMap. Errors are
// *fs.PathError values wrapping ErrUnsafeMapFile, a *MapError, or the
// underlying I/O error.
//
// Note for deployments: a Kubernetes Secret volume exposes files as symlinks
// with mode 0644 by default; point path at a regular file with mode 0600.
func LoadPrincipalMap(path string) (*PrincipalMap, error) {
	const op = "load principal map"
	fail := func(err error) (*PrincipalMap, error) {
		return nil, &fs.PathError{Op: op, Path: path, Err: err}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
			return fail(fmt.Errorf("%w: is a symbolic link", ErrUnsafeMapFile))
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fail(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if !st.Mode().IsRegular() {
		return fail(fmt.Errorf("%w: not a regular file (type %v)", ErrUnsafeMapFile, st.Mode().Type()))
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fail(fmt.Errorf("%w: mode %04o grants group or other access; want 0600 or 0400", ErrUnsafeMapFile, perm))
	}
	if st.Size() > maxMapSize {
		return fail(fmt.Errorf("%w: larger than %d bytes", ErrUnsafeMapFile, maxMapSize))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMapSize+1))
	if err != nil {
		return fail(err)
	}
	if len(data) > maxMapSize {
		return fail(fmt.Errorf("%w: larger than %d bytes", ErrUnsafeMapFile, maxMapSize))
	}
	m, err := ParsePrincipalMap(data)
	if err != nil {
		return fail(err)
	}
	return m, nil
}
