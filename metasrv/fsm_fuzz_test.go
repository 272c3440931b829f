package metasrv_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"lakegate/catalog"
	"lakegate/metasrv"
)

// FuzzFSMApply feeds arbitrary Raft log entries to an FSM that holds a
// metalake. Apply must never panic, must decide the same way on every
// replica (two FSMs given the same entries persist the same bytes), and an
// entry it rejects must leave the state exactly as it was.
func FuzzFSMApply(f *testing.F) {
	create := proposal(f, metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
		Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "alice"}})
	catalogA := proposal(f, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0}, catalog.CreateCatalog{Name: "a"})
	schema := proposal(f, metasrv.Proposal{Metalake: "acme", Actor: "alice", Delegator: "gw", Time: t0},
		catalog.CreateCatalog{Name: "b"}, catalog.CreateSchema{Name: "b.s"})
	drop := proposal(f, metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
		Lake: &metasrv.LakeOp{Op: metasrv.LakeDrop}})
	sync := proposal(f, metasrv.Proposal{Metalake: "acme", Actor: "dave", Identity: true, Delegator: "oidc-token", Time: t0},
		catalog.SyncIdentityUser{Name: "dave", Groups: []string{"g"}})
	for _, seed := range [][]byte{
		catalogA, schema, drop, create, sync,
		batchEntry(catalogA, schema),
		batchEntry(sync, catalogA),
		batchEntry(catalogA, catalogA, []byte("LGP\x09")),
		[]byte(`{"v":1,"metalake":"acme","actor":"alice","time":"2026-03-01T12:00:01Z","commands":[{"op":"CreateCatalog","body":{"name":"v1"}}]}`),
		[]byte("LGB\x01\x00"), []byte("LGP\x02"), nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, entry []byte) {
		var states [2][]byte
		for i := range states {
			fsm := metasrv.NewFSM(nil)
			if err, _ := fsm.Apply(1, create).(error); err != nil {
				t.Fatal(err)
			}
			before := persist(t, fsm)
			out := fsm.Apply(2, entry)
			states[i] = persist(t, fsm)
			if rejected(out) && !bytes.Equal(before, states[i]) {
				t.Fatalf("entry %q was rejected (%v) but changed the state", entry, out)
			}
		}
		if !bytes.Equal(states[0], states[1]) {
			t.Fatalf("entry %q left two replicas in different states", entry)
		}
	})
}

// rejected reports whether an Apply result accepted nothing: an error, or
// a batch whose every proposal failed.
func rejected(out any) bool {
	switch r := out.(type) {
	case error:
		return true
	case *metasrv.BatchResult:
		for _, x := range r.Results {
			if _, isErr := x.(error); !isErr {
				return false
			}
		}
		return true
	}
	return false
}

// batchEntry builds a batch entry ("LGB", version 1, a uvarint count, then
// each proposal with a uvarint length) as the leader writes it.
func batchEntry(props ...[]byte) []byte {
	b := append([]byte("LGB\x01"), binary.AppendUvarint(nil, uint64(len(props)))...)
	for _, p := range props {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// FuzzFSMRestore feeds arbitrary bytes to FSM.Restore, as a snapshot file
// or an installed snapshot would: it must never panic, and whatever it
// accepts must persist again and restore to the same bytes.
func FuzzFSMRestore(f *testing.F) {
	fsm := metasrv.NewFSM(nil)
	for i, entry := range [][]byte{
		proposal(f, metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
			Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "alice", Properties: map[string]string{"k": "v"}}}),
		proposal(f, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0}, catalog.CreateCatalog{Name: "a"}),
		proposal(f, metasrv.Proposal{Metalake: "beta", Actor: "root", Admin: true, Time: t0,
			Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "bob"}}),
		proposal(f, metasrv.Proposal{Metalake: "beta", Actor: "root", Admin: true, Time: t0,
			Lake: &metasrv.LakeOp{Op: metasrv.LakeDrop}}),
	} {
		if err, _ := fsm.Apply(uint64(i+1), entry).(error); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(persist(f, fsm))
	f.Add(persist(f, metasrv.NewFSM(nil)))
	f.Fuzz(func(t *testing.T, snap []byte) {
		a := metasrv.NewFSM(nil)
		if err := a.Restore(bytes.NewReader(snap)); err != nil {
			return
		}
		once := persist(t, a)
		b := metasrv.NewFSM(nil)
		if err := b.Restore(bytes.NewReader(once)); err != nil {
			t.Fatalf("a restored state's own snapshot does not restore: %v", err)
		}
		if twice := persist(t, b); !bytes.Equal(once, twice) {
			t.Fatal("restoring a restored state's snapshot changed it")
		}
	})
}
