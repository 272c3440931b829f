package raftnode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"lakegate/metasrv/raftnode"
)

// TestLogStoreRefusals: a data directory keeps the kind of log store it was
// created with (the other kind is refused, not started empty beside it), and
// a second node on a directory in use fails instead of waiting for it.
func TestLogStoreRefusals(t *testing.T) {
	t.Parallel()
	kinds := []string{raftnode.LogStoreBolt, raftnode.LogStoreWAL}
	for i, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			cfg := oneVoter(nodeConfig(t, "k1", true))
			cfg.LogStore = kind
			n := start(t, cfg)
			waitLeader(t, 10*time.Second, n)
			mustPropose(t, n, "a=1")

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			second := cfg
			second.RaftAddr, second.HTTPAddr = "127.0.0.1:0", ""
			if _, err := raftnode.New(ctx, second, newKV()); err == nil || !strings.Contains(err.Error(), "log store") {
				t.Fatalf("a second node on the same data dir: %v", err)
			}

			n.stop(t)
			other := cfg
			other.LogStore = kinds[1-i]
			other.RaftAddr, other.HTTPAddr = "127.0.0.1:0", ""
			if _, err := raftnode.New(ctx, other, newKV()); err == nil || !strings.Contains(err.Error(), "another kind") {
				t.Fatalf("the data dir opened as %s: %v", other.LogStore, err)
			}
			// With its own kind it restarts and keeps what it had.
			r := start(t, n.cfg)
			waitLeader(t, 10*time.Second, r)
			waitApplied(t, r, mustPropose(t, r, "b=2"))
			if v, ok := r.kv.get("a"); !ok || v != "1" {
				t.Fatalf("after restart: a = %q, %v", v, ok)
			}
		})
	}
}

func TestLogStoreValidate(t *testing.T) {
	cfg := nodeConfig(t, "v1", true)
	cfg.LogStore = "rocksdb"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "LogStore") {
		t.Fatalf("Validate: %v", err)
	}
	cfg.LogStore = ""
	if err := cfg.Validate(); err != nil {
		t.Fatalf("empty LogStore (bolt): %v", err)
	}
}
