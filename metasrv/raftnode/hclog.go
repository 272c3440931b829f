package raftnode

import (
	"context"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter routes hashicorp/raft's hclog output to a *slog.Logger, at
// the level raftLevel gives each message.
type hclogAdapter struct {
	l    *slog.Logger
	name string
	args []any
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func newHCLog(l *slog.Logger) hclog.Logger { return &hclogAdapter{l: l} }

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// routineWarnings are the messages hashicorp/raft logs at WARN in the
// ordinary life of a healthy cluster: every start holds an election, a node
// waits for its join before it is part of a configuration, a new member
// catches up (its log lacks what the leader sends first), the losers of an election reject votes, a node shuts down.
// Trouble (failed contact, failed appends, a lost quorum) has messages of
// its own and keeps raft's level.
var routineWarnings = map[string]bool{
	"heartbeat timeout reached, starting election":                                                                   true,
	"Election timeout reached, restarting election":                                                                  true,
	"heartbeat timeout reached, not part of a stable configuration or a non-voter, not triggering a leader election": true,
	"not part of stable configuration, aborting election":                                                            true,
	"no known peers, aborting election":                                                                              true,
	"pre-vote is disabled because it is not supported by the Transport":                                              true,
	"rejecting vote request since we have a leader":                                                                  true,
	"rejecting pre-vote request since we have a leader":                                                              true,
	"new leader elected, stepping down":                                                                              true,
	"failed to get previous log":                                                                                     true,
	"appendEntries rejected, sending older logs":                                                                     true,
	"skipping application of old log":                                                                                true,
}

// raftLevel is the level a message of hashicorp/raft is logged at. Raft
// reports every state change at INFO and the steps of an election at WARN;
// on a healthy cluster that is chatter an operator should not have to read
// past, so INFO and the routine warnings are DEBUG (the node logs leadership
// changes itself, at INFO).
func raftLevel(level hclog.Level, msg string) slog.Level {
	switch {
	case level == hclog.Info, level == hclog.Warn && (routineWarnings[msg] || strings.HasPrefix(msg, "Shutdown node at ")):
		return slog.LevelDebug
	}
	return slogLevel(level)
}

func (h *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	h.l.Log(context.Background(), raftLevel(level, msg), msg, args...)
}

func (h *hclogAdapter) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hclogAdapter) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hclogAdapter) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hclogAdapter) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hclogAdapter) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hclogAdapter) enabled(level hclog.Level) bool {
	return h.l.Enabled(context.Background(), slogLevel(level))
}

func (h *hclogAdapter) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *hclogAdapter) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *hclogAdapter) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *hclogAdapter) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *hclogAdapter) IsError() bool { return h.enabled(hclog.Error) }

func (h *hclogAdapter) ImpliedArgs() []any { return h.args }

func (h *hclogAdapter) With(args ...any) hclog.Logger {
	return &hclogAdapter{l: h.l.With(args...), name: h.name, args: append(append([]any(nil), h.args...), args...)}
}

func (h *hclogAdapter) Name() string { return h.name }

func (h *hclogAdapter) Named(name string) hclog.Logger {
	if h.name != "" {
		name = h.name + "." + name
	}
	return h.ResetNamed(name)
}

func (h *hclogAdapter) ResetNamed(name string) hclog.Logger {
	return &hclogAdapter{l: h.l.With("subsystem", name), name: name, args: h.args}
}

// SetLevel is a no-op: the slog handler decides what is enabled.
func (h *hclogAdapter) SetLevel(hclog.Level) {}

func (h *hclogAdapter) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if h.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

func (h *hclogAdapter) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return slog.NewLogLogger(h.l.Handler(), slog.LevelInfo)
}

func (h *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return h.StandardLogger(nil).Writer()
}
