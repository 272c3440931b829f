package raftnode_test

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestObserveLogWrite checks that every entry the leader appends after
// bootstrap reaches the log store through the observer, with its duration.
func TestObserveLogWrite(t *testing.T) {
	var (
		mu      sync.Mutex
		writes  int
		entries uint64
		nonPos  int
	)
	cfg := oneVoter(nodeConfig(t, "o1", true))
	cfg.ObserveLogWrite = func(n int, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		writes++
		entries += uint64(n)
		if n <= 0 || d <= 0 {
			nonPos++
		}
	}
	n := start(t, cfg)
	waitLeader(t, 10*time.Second, n)
	for i := range 10 {
		mustPropose(t, n, fmt.Sprintf("k%d=v%d", i, i))
	}
	// Bootstrap writes the first configuration entry straight to the
	// store; every later entry went through the observed store before
	// LastIndex covered it.
	last := n.Status().LastIndex
	mu.Lock()
	defer mu.Unlock()
	if entries < last-1 {
		t.Errorf("observed %d entries in %d writes, want at least %d (last index %d minus bootstrap)", entries, writes, last-1, last)
	}
	if writes == 0 || nonPos != 0 {
		t.Errorf("%d writes observed, %d with no entries or no duration", writes, nonPos)
	}
}
