package raftnode_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// records is a slog.Handler keeping every record at or above Info.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *records) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

func (h *records) all() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), h.recs...)
}

// TestHealthyStartIsQuiet: a node that starts, elects itself and takes a
// member logs nothing at WARN or above, and says at INFO who the leader is.
// (Stopping one of two nodes is not quiet: the other loses its peer.) It
// runs on TCP: the TCP transport's own log lines are part of what a
// deployment sees.
func TestHealthyStartIsQuiet(t *testing.T) {
	t.Parallel()
	h := &records{}
	cfg := tcpConfig(t, "n1", true)
	cfg.Logger = slog.New(h)
	n1 := start(t, cfg)
	if l := waitLeader(t, 10*time.Second, n1); l != n1 {
		t.Fatalf("leader %s", l.ID())
	}
	cfg2 := tcpConfig(t, "n2", false)
	cfg2.Logger = slog.New(h)
	n2 := start(t, cfg2)
	join(t, n1, n2)
	waitApplied(t, n2, n1.AppliedIndex())

	elected := false
	for _, r := range h.all() {
		if r.Level >= slog.LevelWarn {
			t.Errorf("%v %q", r.Level, r.Message)
		}
		if r.Message == "raftnode: leader elected" {
			elected = true
		}
	}
	if !elected {
		t.Error(`no INFO "raftnode: leader elected" record`)
	}
}
