//go:build unix

package ticket

import (
	"os"
	"syscall"
)

// openNoFollow opens path for reading, failing on a symlink in the last
// component. O_NONBLOCK keeps a FIFO from blocking the open; the caller
// rejects it as non-regular.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}

func createExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
}
