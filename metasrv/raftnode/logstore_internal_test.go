package raftnode

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestLogStoreMonotonic: Raft learns that a raft-wal log refuses gaps
// through every wrapper the node puts around it (the write timer, the log
// cache); otherwise a follower installing a snapshot would leave a gap the
// WAL rejects at the next entry. bbolt's log accepts gaps and says so.
func TestLogStoreMonotonic(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want bool
	}{{LogStoreBolt, false}, {LogStoreWAL, true}} {
		t.Run(tc.kind, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir, cfg.LogStore = t.TempDir(), tc.kind
			store, err := openLogStore(cfg, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			cache, err := raft.NewLogCache(logCacheSize, timedLogStore{store, func(int, time.Duration) {}})
			if err != nil {
				t.Fatal(err)
			}
			var logs raft.LogStore = cache
			m, ok := logs.(raft.MonotonicLogStore)
			if got := ok && m.IsMonotonic(); got != tc.want {
				t.Fatalf("IsMonotonic = %v, want %v", got, tc.want)
			}
		})
	}
}
