//go:build !unix

package authz

import (
	"errors"
	"io/fs"
)

// LoadPrincipalMap is not supported on this platform: the safety checks it
// promises (no symlink, descriptor-based permission check) need Unix.
func LoadPrincipalMap(path string) (*PrincipalMap, error) {
	return nil, &fs.PathError{Op: "load principal map", Path: path, Err: errors.ErrUnsupported}
}
