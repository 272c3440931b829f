//go:build !unix

package ticket

import (
	"errors"
	"os"
)

// openNoFollow opens path for reading and fails if it is a symlink. Without
// O_NOFOLLOW it checks with Lstat and then that the opened file is the same
// one, so a swap between the two calls is detected.
func openNoFollow(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if before.Mode()&os.ModeSymlink != 0 {
		return nil, errors.New("is a symlink")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, errors.New("file changed while opening")
	}
	return f, nil
}

// createExclusive creates a new file; O_EXCL does not follow a symlink at
// path on any platform Go supports.
func createExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}
