package metasrv_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"lakegate/catalog"
	"lakegate/metasrv"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func proposal(t testing.TB, p metasrv.Proposal, cmds ...catalog.Command) []byte {
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

func persist(t testing.TB, f *metasrv.FSM) []byte {
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

// TestProposalEncodings checks that a version 1 (JSON) proposal, as written
// by earlier versions, still applies exactly as its version 2 (binary)
// equivalent, and that version 2 is decoded strictly.
func TestProposalEncodings(t *testing.T) {
	create := metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
		Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "alice", Properties: map[string]string{"a": "1"}}}
	cmd, err := catalog.EncodeCommand(catalog.CreateCatalog{Name: "lake"})
	if err != nil {
		t.Fatal(err)
	}
	v1 := [][]byte{
		[]byte(`{"v":1,"metalake":"acme","actor":"root","admin":true,"time":"2026-03-01T12:00:00Z","lake":{"op":"create","owner":"alice","properties":{"a":"1"}}}`),
		[]byte(`{"v":1,"metalake":"acme","actor":"alice","time":"2026-03-01T12:00:01.5Z","commands":[` + string(cmd) + `]}`),
	}
	v2 := [][]byte{
		proposal(t, create),
		proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0.Add(1500 * time.Millisecond).In(time.FixedZone("x", 3600))},
			catalog.CreateCatalog{Name: "lake"}),
	}
	a, b := metasrv.NewFSM(nil), metasrv.NewFSM(nil)
	for i := range v1 {
		for _, x := range []struct {
			f   *metasrv.FSM
			cmd []byte
		}{{a, v1[i]}, {b, v2[i]}} {
			if err, _ := x.f.Apply(uint64(i+1), x.cmd).(error); err != nil {
				t.Fatalf("entry %d: %v", i, err)
			}
		}
	}
	if !bytes.Equal(persist(t, a), persist(t, b)) {
		t.Fatal("version 1 and version 2 proposals give different states")
	}
	p, err := metasrv.DecodeProposal(v2[1])
	if err != nil || p.V != 2 || !p.Time.Equal(t0.Add(1500*time.Millisecond)) || p.Time.Location() != time.UTC ||
		p.Actor != "alice" || p.Admin || len(p.Commands) != 1 || !bytes.Equal(p.Commands[0], cmd) {
		t.Fatalf("round trip: %+v, %v", p, err)
	}
	if _, err := metasrv.EncodeProposal(metasrv.Proposal{Metalake: "acme", Time: t0}); !errors.Is(err, metasrv.ErrInvalidProposal) {
		t.Fatalf("neither commands nor lake: %v", err)
	}
	bad := map[string][]byte{
		"empty":     nil,
		"version":   append([]byte("LGP\x03"), v2[1][4:]...),
		"magic":     append([]byte("XGP\x02"), v2[1][4:]...),
		"trailing":  append(slices.Clone(v2[1]), 0),
		"truncated": v2[1][:len(v2[1])-1],
		"header":    v2[1][:6],
		"v1 bogus":  []byte(`{"v":1,"bogus":true}`),
		"v1 as v2":  []byte(`{"v":2,"metalake":"acme","actor":"alice","time":"2026-03-01T12:00:01Z","commands":[` + string(cmd) + `]}`),
	}
	// Flip the flags byte (after magic, metalake, actor and time) and the
	// kind byte.
	off := 4 + 1 + len("acme") + 1 + len("alice")
	off += 1 + int(v2[1][off])
	flags := slices.Clone(v2[1])
	flags[off] = 8
	bad["flags"] = flags
	kind := slices.Clone(v2[1])
	kind[off+1] = 9
	bad["kind"] = kind
	zero := slices.Clone(v2[1][:off+2])
	bad["no commands"] = append(zero, 0)
	// A time no snapshot could hold (RFC 3339 stops at year 9999).
	bad["year 10000"] = proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		catalog.CreateCatalog{Name: "later"})
	for name, b := range bad {
		if _, err := metasrv.DecodeProposal(b); !errors.Is(err, metasrv.ErrInvalidProposal) {
			t.Errorf("%s: got %v", name, err)
		}
		if err, _ := a.Apply(99, b).(error); !errors.Is(err, metasrv.ErrInvalidProposal) {
			t.Errorf("%s: Apply gave %v", name, err)
		}
	}
}

// TestAuditLogFileOrder checks that the background writer keeps the
// events of concurrent Records in ring order and writes them all by Close.
func TestAuditLogFileOrder(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	a, err := metasrv.OpenAuditLog(path, 10000, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				a.Record(metasrv.Event{Metalake: "acme", Event: catalog.Event{Operation: fmt.Sprintf("w%d-%d", w, i)}})
			}
		})
	}
	wg.Wait()
	ring := a.Events("", 0, 0, 10000)
	if len(ring) != 2000 {
		t.Fatalf("ring: %d events", len(ring))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	if len(lines) != len(ring) {
		t.Fatalf("file: %d lines, ring: %d", len(lines), len(ring))
	}
	for i, l := range lines {
		var e metasrv.Event
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		if want := ring[len(ring)-1-i].Operation; e.Operation != want {
			t.Fatalf("line %d: %q, ring order %q", i, e.Operation, want)
		}
	}
}

// TestFSMRecreatedMetalakeContinuesGenerations: a metalake dropped and
// created again under its name never repeats a generation of the dropped
// one (gateways reuse decisions and let tickets run while the generation is
// the one they were taken at), also across a snapshot and restore.
func TestFSMRecreatedMetalakeContinuesGenerations(t *testing.T) {
	create := proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
		Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "alice"}})
	drop := proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
		Lake: &metasrv.LakeOp{Op: metasrv.LakeDrop, Force: true}})
	change := proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0},
		catalog.CreateCatalog{Name: "lake"}, catalog.CreateTag{Name: "pii"})
	gen := func(f *metasrv.FSM) uint64 {
		t.Helper()
		l, ok := f.Lake("acme")
		if !ok {
			t.Fatal("acme does not exist")
		}
		return l.Generation()
	}
	f := metasrv.NewFSM(nil)
	index := uint64(0)
	apply := func(f *metasrv.FSM, cmd []byte) {
		t.Helper()
		index++
		if err, ok := f.Apply(index, cmd).(error); ok {
			t.Fatal(err)
		}
	}
	apply(f, create)
	apply(f, change)
	last := gen(f) // 2
	apply(f, drop)
	snap := persist(t, f) // while dropped: the last generation is kept
	apply(f, create)
	if g := gen(f); g <= last {
		t.Fatalf("created again at generation %d, the dropped one ended at %d", g, last)
	}
	apply(f, change)
	again := gen(f)

	r := metasrv.NewFSM(nil)
	if err := r.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(persist(t, r), snap) {
		t.Fatal("restore of a state with a dropped metalake is lossy")
	}
	apply(r, create)
	apply(r, change)
	if g := gen(r); g != again {
		t.Fatalf("restored replica: generation %d, the live one %d", g, again)
	}
	// Once created again the name's history is in the live snapshot: the
	// section is gone and the stream is the plain one.
	if p := persist(t, r); bytes.Contains(p, []byte("LGME")) {
		t.Fatal("a live metalake still has a dropped entry")
	}
}
