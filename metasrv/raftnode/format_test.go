package raftnode

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// The envelope tags and the snapshot header are on disk in every node's log
// and snapshots: they may be appended to, never renumbered.
func TestFormatPinned(t *testing.T) {
	for _, c := range []struct {
		name string
		got  byte
		want byte
	}{
		{"tagUser", tagUser, 1},
		{"tagMemberPut", tagMemberPut, 2},
		{"tagMemberDelete", tagMemberDelete, 3},
		{"snapshotVersion", snapshotVersion, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, pinned at %d", c.name, c.got, c.want)
		}
	}
	if string(snapshotMagic[:]) != "LGRN" {
		t.Errorf("snapshot magic %q", snapshotMagic)
	}
}

type nopSM struct{ restored []byte }

func (s *nopSM) Apply(uint64, []byte) any        { return nil }
func (s *nopSM) Snapshot() (Snapshot, error)     { return nopSnap{}, nil }
func (nopSnap) Persist(w io.Writer) error        { _, err := w.Write([]byte("user-state")); return err }
func (nopSnap) Release()                         {}
func (s *nopSM) Restore(r io.Reader) (err error) { s.restored, err = io.ReadAll(r); return err }

type nopSnap struct{}

type bufSink struct{ bytes.Buffer }

func (*bufSink) ID() string    { return "test" }
func (*bufSink) Cancel() error { return nil }
func (*bufSink) Close() error  { return nil }

// A snapshot round-trips the wrapper's applied index and membership ahead
// of the user state; an unknown command tag stops the replica.
func TestFSMRoundTripAndUnknownTag(t *testing.T) {
	f := newFSM(&nopSM{}, newSignal())
	f.ApplyBatch([]*raft.Log{
		{Index: 7, Type: raft.LogCommand, Data: append([]byte{tagMemberPut}, `{"id":"a","raftAddr":"h:1","httpAddr":"h:2"}`...)},
		{Index: 8, Type: raft.LogCommand, Data: []byte{tagUser, 'x'}},
	})
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink bufSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	sm := &nopSM{}
	g := newFSM(sm, newSignal())
	if err := g.Restore(io.NopCloser(&sink)); err != nil {
		t.Fatal(err)
	}
	if p, _ := g.member("a"); g.applied.Load() != 8 || p.HTTPAddr != "h:2" || string(sm.restored) != "user-state" {
		t.Fatalf("restored applied=%d member=%+v user=%q", g.applied.Load(), p, sm.restored)
	}

	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "unknown command tag") {
			t.Fatalf("unknown tag: recovered %v", r)
		}
	}()
	f.Apply(&raft.Log{Index: 9, Type: raft.LogCommand, Data: []byte{99}})
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.NodeID, ok.DataDir, ok.RaftAddr = "n", t.TempDir(), "127.0.0.1:0"
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	// Zero timeouts mean the defaults.
	zero := Config{NodeID: "n", DataDir: "d", RaftAddr: "127.0.0.1:1"}
	if err := zero.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"no id":           func(c *Config) { c.NodeID = "" },
		"unspecified":     func(c *Config) { c.RaftAddr = "0.0.0.0:8817" },
		"no port":         func(c *Config) { c.RaftAddr = "127.0.0.1" },
		"election<hb":     func(c *Config) { c.ElectionTimeout = c.HeartbeatTimeout / 2 },
		"lease>hb":        func(c *Config) { c.LeaderLeaseTimeout = 2 * c.HeartbeatTimeout },
		"append too big":  func(c *Config) { c.MaxAppendEntries = 4096 },
		"retain negative": func(c *Config) { c.SnapshotRetain = -1 },
		"tiny interval":   func(c *Config) { c.SnapshotInterval = time.Millisecond },
	} {
		c := ok
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: validated", name)
		}
	}
}
