package metasrv_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"lakegate/catalog"
	"lakegate/metasrv"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func proposal(t *testing.T, p metasrv.Proposal, cmds ...catalog.Command) []byte {
	t.Helper()
	for _, c := range cmds {
		b, err := catalog.EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		p.Commands = append(p.Commands, b)
	}
	b, err := metasrv.EncodeProposal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func persist(t *testing.T, f *metasrv.FSM) []byte {
	t.Helper()
	s, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var buf bytes.Buffer
	if err := s.Persist(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFSMDeterministicSnapshotRestore(t *testing.T) {
	log := [][]byte{
		proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
			Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "alice", Properties: map[string]string{"b": "2", "a": "1"}}}),
		proposal(t, metasrv.Proposal{Metalake: "zeta", Actor: "root", Admin: true, Time: t0,
			Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "zed"}}),
		proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0.Add(time.Second)},
			catalog.CreateCatalog{Name: "lake"}, catalog.CreateSchema{Name: "lake.sales"},
			catalog.CreateTag{Name: "pii"}),
		// all or nothing: the second command fails, the first is undone
		proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0.Add(2 * time.Second)},
			catalog.CreateCatalog{Name: "other"}, catalog.CreateCatalog{Name: "lake"}),
		// not an admin
		proposal(t, metasrv.Proposal{Metalake: "x", Actor: "alice", Time: t0, Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "a"}}),
		[]byte(`{"v":1,"bogus":true}`),
	}
	a, b := metasrv.NewFSM(nil), metasrv.NewFSM(nil)
	for i, cmd := range log {
		ra := a.Apply(uint64(i+1), cmd)
		rb := b.Apply(uint64(i+1), cmd)
		ea, _ := ra.(error)
		eb, _ := rb.(error)
		if (ea == nil) != (eb == nil) {
			t.Fatalf("entry %d: results differ: %v vs %v", i, ra, rb)
		}
	}
	if r := a.Apply(99, log[3]); !errors.Is(r.(error), catalog.ErrAlreadyExists) {
		t.Fatalf("duplicate catalog: got %v", r)
	}
	l, _ := a.Lake("acme")
	if l.Generation() != 3 {
		t.Fatalf("generation %d, want 3", l.Generation())
	}
	if cs, _ := l.Snapshot.Children(catalog.Object{Type: catalog.ObjectMetalake, Name: "acme"}); len(cs) != 1 {
		t.Fatalf("catalogs %v: the failed batch leaked", cs)
	}
	if _, ok := a.Lake("x"); ok {
		t.Fatal("a non-admin created a metalake")
	}
	sa, sb := persist(t, a), persist(t, b)
	if !bytes.Equal(sa, sb) {
		t.Fatal("snapshots of two replicas differ")
	}
	c := metasrv.NewFSM(nil)
	if err := c.Restore(bytes.NewReader(sa)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(persist(t, c), sa) {
		t.Fatal("restore is lossy")
	}
	if err := c.Restore(bytes.NewReader(append(sa, 0))); err == nil {
		t.Fatal("restore accepted trailing data")
	}
}

func TestAuditLogDedupAndPaging(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	a, err := metasrv.OpenAuditLog(path, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(i uint64) metasrv.Event {
		return metasrv.Event{Metalake: "acme", Event: catalog.Event{Index: i, Operation: "Op"}}
	}
	a.Record(ev(1), ev(2), ev(3))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a, err = metasrv.OpenAuditLog(path, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Record(ev(2), ev(3), ev(4), ev(5)) // a replay: 2 and 3 are skipped
	got := a.Events("acme", 0, 0, 10)
	var idx []uint64
	for _, e := range got {
		idx = append(idx, e.Index)
	}
	if len(idx) != 4 || idx[0] != 5 || idx[3] != 2 {
		t.Fatalf("ring (newest first, size 4): %v", idx)
	}
	if got := a.Events("acme", 3, 0, 10); len(got) != 2 {
		t.Fatalf("since=3: %d events", len(got))
	}
	if got := a.Events("acme", 0, 5, 1); len(got) != 1 || got[0].Index != 4 {
		t.Fatalf("before=5 limit=1: %v", got)
	}
}
