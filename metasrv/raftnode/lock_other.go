//go:build !unix

package raftnode

// lockDir does nothing where flock is unavailable: two processes on one
// DataDir are then the operator's to prevent.
func lockDir(string) (func(), error) { return func() {}, nil }
