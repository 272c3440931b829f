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

// TestLogStoreTailTruncationSurvivesRestart: a follower whose uncommitted
// tail a new leader overrides deletes that suffix, and must open its log
// again after a restart. raft-wal v0.4.0 marked the truncated segment
// sealed without writing its index, and the next open failed ("sealed
// segment has no index block", a panic in raft.NewRaft); the crash soak
// (integration BenchmarkMetasrvCrashSoak) found it after ten kills.
func TestLogStoreTailTruncationSurvivesRestart(t *testing.T) {
	for _, kind := range []string{LogStoreBolt, LogStoreWAL} {
		t.Run(kind, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir, cfg.LogStore = t.TempDir(), kind
			store, err := openLogStore(cfg, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			entry := func(i uint64, term uint64) *raft.Log {
				return &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte{byte(i)}}
			}
			var logs []*raft.Log
			for i := uint64(1); i <= 10; i++ {
				logs = append(logs, entry(i, 1))
			}
			if err := store.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			// The new leader's entries replace 8..10.
			if err := store.DeleteRange(8, 10); err != nil {
				t.Fatal(err)
			}
			if err := store.StoreLogs([]*raft.Log{entry(8, 2), entry(9, 2)}); err != nil {
				t.Fatal(err)
			}
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}

			store, err = openLogStore(cfg, hclog.NewNullLogger())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if last, err := store.LastIndex(); err != nil || last != 9 {
				t.Fatalf("LastIndex = %d, %v; want 9", last, err)
			}
			for i := uint64(1); i <= 9; i++ {
				var l raft.Log
				if err := store.GetLog(i, &l); err != nil {
					t.Fatalf("GetLog(%d) after the restart: %v", i, err)
				}
				want := uint64(1)
				if i >= 8 {
					want = 2
				}
				if l.Term != want {
					t.Fatalf("entry %d has term %d, want %d", i, l.Term, want)
				}
			}
		})
	}
}
