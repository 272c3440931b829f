package raftnode

import (
	"log/slog"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestRaftLevel(t *testing.T) {
	cases := []struct {
		level hclog.Level
		msg   string
		want  slog.Level
	}{
		{hclog.Info, "entering follower state", slog.LevelDebug},
		{hclog.Warn, "heartbeat timeout reached, starting election", slog.LevelDebug},
		{hclog.Warn, "rejecting vote request since we have a leader", slog.LevelDebug},
		{hclog.Warn, "Shutdown node at 127.0.0.1:7000", slog.LevelDebug},
		{hclog.Warn, "failed to contact quorum of nodes, stepping down", slog.LevelWarn},
		{hclog.Warn, "failed to contact", slog.LevelWarn},
		{hclog.Error, "heartbeat timeout reached, starting election", slog.LevelError},
		{hclog.Error, "failed to appendEntries to", slog.LevelError},
		{hclog.Debug, "anything", slog.LevelDebug},
		{hclog.Trace, "anything", slog.LevelDebug - 4},
	}
	for _, c := range cases {
		if got := raftLevel(c.level, c.msg); got != c.want {
			t.Errorf("raftLevel(%v, %q) = %v, want %v", c.level, c.msg, got, c.want)
		}
	}
}
