package metasrv

import (
	"errors"
	"slices"
	"testing"
	"time"

	"lakegate/catalog"
)

func mustProposal(t *testing.T, p Proposal, cmds ...catalog.Command) []byte {
	t.Helper()
	for _, c := range cmds {
		b, err := catalog.EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		p.Commands = append(p.Commands, b)
	}
	b, err := EncodeProposal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBatchApply checks that a batch entry applies its proposals in order,
// each on its own (own validation against the state the earlier ones left,
// own result, own events, delegator stamped), and ends in the same state as
// the same proposals in separate entries.
func TestBatchApply(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	create := mustProposal(t, Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0, Lake: &LakeOp{Op: LakeCreate, Owner: "alice"}})
	props := [][]byte{
		mustProposal(t, Proposal{Metalake: "acme", Actor: "alice", Time: t0}, catalog.CreateCatalog{Name: "a"}),
		mustProposal(t, Proposal{Metalake: "acme", Actor: "alice", Time: t0}, catalog.CreateCatalog{Name: "a"}), // conflicts with the first
		[]byte("LGP\x09"), // undecodable
		mustProposal(t, Proposal{Metalake: "acme", Actor: "alice", Delegator: "gw", Time: t0},
			catalog.CreateCatalog{Name: "b"}, catalog.CreateSchema{Name: "b.s"}),
		mustProposal(t, Proposal{Metalake: "acme", Actor: "alice", Time: t0},
			catalog.CreateCatalog{Name: "c"}, catalog.CreateCatalog{Name: "b"}), // all or nothing: no c
	}
	audit, err := OpenAuditLog(t.TempDir()+"/audit.jsonl", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	f := NewFSM(audit)
	if err, _ := f.Apply(1, create).(error); err != nil {
		t.Fatal(err)
	}
	out := f.Apply(2, encodeBatch(props))
	br, ok := out.(*BatchResult)
	if !ok || len(br.Results) != len(props) {
		t.Fatalf("batch result %#v", out)
	}
	if r, ok := br.Results[0].(*Result); !ok || r.Lake == nil || r.Generation() != 1 {
		t.Fatalf("result 0: %#v", br.Results[0])
	}
	if err, _ := br.Results[1].(error); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Fatalf("result 1: %#v", br.Results[1])
	}
	if err, _ := br.Results[2].(error); !errors.Is(err, ErrInvalidProposal) {
		t.Fatalf("result 2: %#v", br.Results[2])
	}
	r3, ok := br.Results[3].(*Result)
	if !ok || r3.Generation() <= 1 || len(r3.Events) != 2 {
		t.Fatalf("result 3: %#v", br.Results[3])
	}
	if err, _ := br.Results[4].(error); !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Fatalf("result 4: %#v", br.Results[4])
	}
	l, _ := f.Lake("acme")
	cs, _ := l.Snapshot.Children(catalog.Object{Type: catalog.ObjectMetalake, Name: "acme"})
	names := slices.Clone(cs)
	if slices.Sort(names); !slices.Equal(names, []string{"a", "b"}) || l.Generation() != r3.Generation() {
		t.Fatalf("catalogs %v at generation %d", names, l.Generation())
	}
	// Every proposal's events are in the audit log at the entry's index.
	var ops []string
	delegated := 0
	for _, e := range audit.Events("", 1, 0, 100) {
		if e.Index != 2 {
			t.Fatalf("event at index %d: %+v", e.Index, e)
		}
		ops = append(ops, e.Operation+"/"+string(e.Outcome))
		if e.Delegator == "gw" {
			delegated++
		}
	}
	if len(ops) != 6 || delegated != 2 {
		t.Fatalf("events %v (%d with the delegator)", ops, delegated)
	}

	// The same proposals as separate entries reach the same catalogs.
	g := NewFSM(nil)
	g.Apply(1, create)
	for i, p := range props {
		g.Apply(uint64(i+2), p)
	}
	gl, _ := g.Lake("acme")
	gcs, _ := gl.Snapshot.Children(catalog.Object{Type: catalog.ObjectMetalake, Name: "acme"})
	if len(gcs) != len(cs) || gl.Generation() != l.Generation() {
		t.Fatalf("separate entries: %v at generation %d", gcs, gl.Generation())
	}
}

// TestBatchDecodeStrict checks that malformed batch entries are rejected as
// a whole, without changing state.
func TestBatchDecodeStrict(t *testing.T) {
	p := mustProposal(t, Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: time.Unix(0, 0),
		Lake: &LakeOp{Op: LakeCreate, Owner: "alice"}})
	good := encodeBatch([][]byte{p, p})
	if ps, err := decodeBatch(good); err != nil || len(ps) != 2 || !slices.Equal(ps[0], p) {
		t.Fatalf("round trip: %v", err)
	}
	bad := map[string][]byte{
		"version":   append([]byte("LGB\x02"), good[4:]...),
		"zero":      []byte("LGB\x01\x00"),
		"count":     []byte("LGB\x01\x05\x01x"),
		"truncated": good[:len(good)-1],
		"trailing":  append(slices.Clone(good), 0),
		"no count":  []byte("LGB\x01"),
	}
	f := NewFSM(nil)
	for name, b := range bad {
		if _, err := decodeBatch(b); !errors.Is(err, ErrInvalidProposal) {
			t.Errorf("%s: decode gave %v", name, err)
		}
		if err, _ := f.Apply(1, b).(error); !errors.Is(err, ErrInvalidProposal) {
			t.Errorf("%s: Apply gave %v", name, f.Apply(1, b))
		}
	}
	if len(f.Lakes()) != 0 {
		t.Fatal("a malformed batch changed state")
	}
}

// TestAuditPageKeepsIndexGroups checks that a page of events never ends in
// the middle of one Raft index, so paging with before=lowest skips nothing.
func TestAuditPageKeepsIndexGroups(t *testing.T) {
	a, err := OpenAuditLog(t.TempDir()+"/audit.jsonl", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ev := func(i uint64, op string) Event {
		return Event{Metalake: "acme", Event: catalog.Event{Index: i, Operation: op}}
	}
	a.Record(ev(4, "a"))
	a.Record(ev(5, "b"), ev(5, "c"), ev(5, "d"))
	a.Record(ev(6, "e"))
	if got := a.Events("acme", 0, 0, 2); len(got) != 4 || got[0].Index != 6 || got[3].Index != 5 || got[3].Operation != "b" {
		t.Fatalf("page of 2: %+v", got)
	}
	if got := a.Events("acme", 0, 5, 1); len(got) != 1 || got[0].Index != 4 {
		t.Fatalf("next page: %+v", got)
	}
}
