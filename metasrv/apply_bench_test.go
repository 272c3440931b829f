package metasrv_test

import (
	"testing"

	"lakegate/catalog"
	"lakegate/metasrv"
)

// BenchmarkFSMApplyTagToggle measures one FSM.Apply of the load test's
// entry (a v2 tag association added or removed on a catalog, as REST
// proposes it) with an audit file, on one node.
//
//	GOFLAGS=-tags=duckdb_arrow go test ./metasrv -run '^$' -bench FSMApplyTagToggle
func BenchmarkFSMApplyTagToggle(b *testing.B) {
	audit, err := metasrv.OpenAuditLog(b.TempDir()+"/audit.jsonl", 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer audit.Close()
	f := metasrv.NewFSM(audit)
	enc := func(p metasrv.Proposal, cmds ...catalog.Command) []byte {
		for _, c := range cmds {
			raw, err := catalog.EncodeCommand(c)
			if err != nil {
				b.Fatal(err)
			}
			p.Commands = append(p.Commands, raw)
		}
		raw, err := metasrv.EncodeProposal(p)
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	var index uint64
	apply := func(cmd []byte) {
		index++
		if err, _ := f.Apply(index, cmd).(error); err != nil {
			b.Fatal(err)
		}
	}
	apply(enc(metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
		Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "alice"}}))
	apply(enc(metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0},
		catalog.CreateCatalog{Name: "c00"}, catalog.CreateTag{Name: "pii"}))
	obj := catalog.Object{Type: catalog.ObjectCatalog, Name: "c00"}
	tags := []catalog.TagValue{{Name: "pii", Value: "v00"}}
	toggle := [2][]byte{
		enc(metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0}, catalog.AssociateTagsV2{Object: obj, TagsToAdd: tags}),
		enc(metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0}, catalog.AssociateTagsV2{Object: obj, TagsToRemove: tags}),
	}
	b.ResetTimer()
	for i := range b.N {
		apply(toggle[i%2])
	}
}
