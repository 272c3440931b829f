package catalog_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// governed is base plus: lake.hr.people at version 1 (columns name, ssn;
// one file), its ssn column tagged pii, pii masked by redact-pii for
// everyone, and bob holding SELECT_TABLE and MODIFY_TABLE on lake.hr (not
// ownership) — the shape of the demo's hr.employees and hr@demo. With
// level it first raises the metalake's rules to it.
func governed(t *testing.T, level int) *Snapshot {
	t.Helper()
	s := base(t)
	if level > RulesOriginal {
		s = catalogtest.Apply(t, s, admin, SetRules{Level: level})
	}
	return catalogtest.Apply(t, s, admin,
		CommitTableVersion{Table: "lake.hr.people", Base: 0, Files: []DataFile{df(storageOf(t, s, "lake.hr.people"), "a/f1", 10)}},
		CreateTag{Name: "pii"},
		CreatePolicy{Name: "redact-pii", Type: PolicyColumnMask, Enabled: true, Content: PolicyContent{Mask: MaskRedact}},
		AttachPolicy{Tag: "pii", Policy: "redact-pii"},
		AssociateTagsV1{Object: Column("lake.hr.people.ssn"), TagsToAdd: []string{"pii"}},
		grantTo("reader", Schema("lake.hr"), PrivSelectTable, Allow),
		grantTo("reader", Schema("lake.hr"), PrivModifyTable, Allow),
		roles("bob", "reader"),
	)
}

func storageOf(t *testing.T, s *Snapshot, table string) string {
	t.Helper()
	sid, _, ok := s.TableVersion(table, 0)
	if !ok {
		t.Fatalf("no table %s", table)
	}
	return sid
}

// masked reports whether column col of lake.hr.people is masked for user.
func masked(t *testing.T, s *Snapshot, user, col string) bool {
	t.Helper()
	_, masks, err := s.RowFiltersAndMasks(user, "lake.hr.people")
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(masks, func(m ColumnMask) bool { return m.Column == col })
}

// TestColumnGovernanceCannotBeShed is the attack of the review: a user with
// MODIFY_TABLE (not the owner) drops the masked column and adds it again;
// the new column has no tag, so the data files' values of that name would
// be read unmasked. At RulesOriginal the attack works (logs written then
// replay as they were applied); at RulesColumnGovernance every way to it is
// refused, and the ones MODIFY_TABLE still allows keep the mask.
func TestColumnGovernanceCannotBeShed(t *testing.T) {
	shed := []Command{
		DropObject{Object: Column("lake.hr.people.ssn")},
		AddColumn{Table: "lake.hr.people", Column: ColumnDef{Name: "ssn", Type: "VARCHAR"}},
	}
	s := governed(t, RulesOriginal)
	if !masked(t, s, "bob", "ssn") {
		t.Fatal("ssn not masked for bob")
	}
	if after := catalogtest.Apply(t, s, "bob", shed...); masked(t, after, "bob", "ssn") {
		t.Fatal("the attack no longer works at RulesOriginal: replayed logs would change")
	}

	s = governed(t, RulesColumnGovernance)
	sid := storageOf(t, s, "lake.hr.people")
	cols := func(names ...string) []ColumnDef {
		var out []ColumnDef
		for _, n := range names {
			out = append(out, ColumnDef{Name: n, Type: "VARCHAR"})
		}
		return out
	}
	cases := []struct {
		name  string
		actor string
		cmd   Command
		err   error // nil: applies
	}{
		{"bob drops the column", "bob", shed[0], ErrForbidden},
		{"bob adds a column", "bob", AddColumn{Table: "lake.hr.people", Column: ColumnDef{Name: "x", Type: "INT"}}, ErrForbidden},
		{"bob renames the column", "bob", RenameObject{Object: Column("lake.hr.people.ssn"), NewName: "lake.hr.people.ssn2"}, ErrForbidden},
		{"bob replaces without the column", "bob", CommitTableVersion{Table: "lake.hr.people", Base: 1, Replace: true,
			Columns: cols("name"), Files: []DataFile{df(sid, "b/f1", 1)}}, ErrForbidden},
		{"bob replaces with a renamed column", "bob", CommitTableVersion{Table: "lake.hr.people", Base: 1, Replace: true,
			Columns: cols("name", "ssn2"), Files: []DataFile{df(sid, "b/f1", 1)}}, ErrForbidden},
		{"carol, who may not see the table, drops the column", "carol", shed[0], ErrNotFound},
		{"the owner drops a column holding data", admin, shed[0], ErrInUse},
		{"the owner renames a column holding data", admin, RenameObject{Object: Column("lake.hr.people.ssn"), NewName: "lake.hr.people.ssn2"}, ErrInUse},
		{"bob appends", "bob", CommitTableVersion{Table: "lake.hr.people", Base: 1, Files: []DataFile{df(sid, "b/f1", 1)}}, nil},
		{"bob replaces under the same names, reordered and retyped", "bob", CommitTableVersion{Table: "lake.hr.people", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "ssn", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR"}}, Files: []DataFile{df(sid, "b/f1", 1)}}, nil},
		{"the owner adds a column", admin, AddColumn{Table: "lake.hr.people", Column: ColumnDef{Name: "x", Type: "INT"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err != nil {
				mustFail(t, s, tc.actor, tc.cmd, tc.err)
				return
			}
			n := catalogtest.Apply(t, s, tc.actor, tc.cmd)
			if !masked(t, n, "bob", "ssn") {
				t.Fatal("ssn lost its mask")
			}
		})
	}
	// The refusal says why.
	_, _, err := Apply(s, shed[0], catalogtest.Meta(s, admin))
	if err == nil || !strings.Contains(err.Error(), `column "ssn" holds data in version 1`) {
		t.Fatalf("refusal: %v", err)
	}
}

// TestColumnChangesWithoutData: a column no version lists (added after the
// last commit, or on a table without data) is the owner's to rename and
// drop.
func TestColumnChangesWithoutData(t *testing.T) {
	s := governed(t, RulesColumnGovernance)
	s = catalogtest.Apply(t, s, admin,
		AddColumn{Table: "lake.hr.people", Column: ColumnDef{Name: "note", Type: "VARCHAR"}},
		RenameObject{Object: Column("lake.hr.people.note"), NewName: "lake.hr.people.remark"},
		DropObject{Object: Column("lake.hr.people.remark")},
		DropObject{Object: Column("lake.fin.ledger.card")},
	)
	if info, _ := s.Object(Table("lake.hr.people")); len(info.Columns) != 2 {
		t.Fatalf("columns: %+v", info.Columns)
	}
}

// TestReintroducedColumnForgetsRetainedVersions: the owner rewrites the
// table without ssn (its retained version 1 still lists ssn, raw) and then
// makes ssn a column again, by each of the three ways: the new column is
// another object, without the old one's tag, so the versions holding the
// old one's data are forgotten — no reference pinned to them can read them
// as the new column.
func TestReintroducedColumnForgetsRetainedVersions(t *testing.T) {
	s := governed(t, RulesColumnGovernance)
	sid := storageOf(t, s, "lake.hr.people")
	s = catalogtest.Apply(t, s, admin,
		CommitTableVersion{Table: "lake.hr.people", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "name", Type: "VARCHAR"}}, Files: []DataFile{df(sid, "b/f1", 2)}},
		CommitTableVersion{Table: "lake.hr.people", Base: 2, Files: []DataFile{df(sid, "c/f1", 3)}},
	)
	if _, _, ok := s.TableVersion("lake.hr.people", 1); !ok {
		t.Fatal("version 1 not retained")
	}
	cases := []struct {
		name string
		cmds []Command
	}{
		{"add", []Command{AddColumn{Table: "lake.hr.people", Column: ColumnDef{Name: "ssn", Type: "VARCHAR"}}}},
		{"rename", []Command{
			AddColumn{Table: "lake.hr.people", Column: ColumnDef{Name: "x", Type: "VARCHAR"}},
			RenameObject{Object: Column("lake.hr.people.x"), NewName: "lake.hr.people.ssn"}}},
		{"replace", []Command{CommitTableVersion{Table: "lake.hr.people", Base: 3, Replace: true,
			Columns: []ColumnDef{{Name: "name", Type: "VARCHAR"}, {Name: "ssn", Type: "VARCHAR"}}, Files: []DataFile{df(sid, "d/f1", 4)}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := catalogtest.Apply(t, s, admin, tc.cmds...)
			if _, _, ok := n.TableVersion("lake.hr.people", 1); ok {
				t.Fatal("version 1, which holds the old ssn, is still retained")
			}
			if _, ok := referenced(n)["tables/"+sid+"/a/f1.parquet"]; ok {
				t.Fatal("the old ssn's file is still referenced")
			}
			for _, v := range []uint64{2, 3} {
				if _, _, ok := n.TableVersion("lake.hr.people", v); !ok {
					t.Fatalf("version %d, which never held ssn, was forgotten", v)
				}
			}
			_, vs, _ := n.TableVersions("lake.hr.people")
			for i := 1; i < len(vs); i++ {
				if vs[i-1].Version != vs[i].Version+1 {
					t.Fatalf("retained versions not contiguous: %d then %d", vs[i-1].Version, vs[i].Version)
				}
			}
			if masked(t, n, "bob", "ssn") {
				t.Fatal("the new ssn carries the old one's tag: then nothing needed forgetting")
			}
		})
	}
	// At RulesOriginal nothing is forgotten (replay).
	o := governed(t, RulesOriginal)
	osid := storageOf(t, o, "lake.hr.people")
	o = catalogtest.Apply(t, o, admin,
		CommitTableVersion{Table: "lake.hr.people", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "name", Type: "VARCHAR"}}, Files: []DataFile{df(osid, "b/f1", 2)}},
		AddColumn{Table: "lake.hr.people", Column: ColumnDef{Name: "ssn", Type: "VARCHAR"}})
	if _, _, ok := o.TableVersion("lake.hr.people", 1); !ok {
		t.Fatal("RulesOriginal forgot a version")
	}
}

// TestMintedStorageIDs: at RulesColumnGovernance a table created without a
// storage id gets one that no table of the metalake ever had — not after
// the table is dropped and created again, not in a metalake created again
// under the same name — of the reserved form no caller may choose.
func TestMintedStorageIDs(t *testing.T) {
	cols := []ColumnDef{{Name: "id", Type: "BIGINT"}}
	seen := map[string]bool{}
	note := func(t *testing.T, s *Snapshot, table string) string {
		t.Helper()
		sid := storageOf(t, s, table)
		if seen[sid] {
			t.Fatalf("storage id %s given twice", sid)
		}
		seen[sid] = true
		if len(sid) != 17 || sid[0] != 't' || !strings.ContainsAny(sid[1:2], "89abcdef") {
			t.Fatalf("storage id %s is not of the minted form", sid)
		}
		// Minted from the generation the table is created at.
		if want := fmt.Sprintf("t%016x", s.Generation()|1<<63); sid != want {
			t.Fatalf("storage id %s, want %s (generation %d)", sid, want, s.Generation())
		}
		return sid
	}
	s := catalogtest.Apply(t, base(t), admin, SetRules{Level: RulesColumnGovernance})
	for range 3 {
		s = catalogtest.Apply(t, s, admin, CreateTable{Name: "lake.fin.t", Columns: cols})
		sid := note(t, s, "lake.fin.t")
		// The owner cannot take the id over for a new table.
		mustFail(t, catalogtest.Apply(t, s, admin, DropObject{Object: Table("lake.fin.t")}), admin,
			CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: sid, Files: []DataFile{df(sid, "a/f1", 1)}}, ErrInvalidArgument)
		s = catalogtest.Apply(t, s, admin, DropObject{Object: Table("lake.fin.t")})
	}
	// Files without the storage id they were written under.
	mustFail(t, s, admin, CreateTable{Name: "lake.fin.t", Columns: cols,
		Files: []DataFile{df(strings.Repeat("0", 17), "a/f1", 1)}}, ErrInvalidArgument)
	// A metalake created again continues past the dropped one's generation.
	again, err := NewAt("acme", admin, catalogtest.Epoch, s.Generation()+1)
	if err != nil {
		t.Fatal(err)
	}
	again = catalogtest.Apply(t, again, admin, SetRules{Level: RulesColumnGovernance},
		CreateCatalog{Name: "lake"}, CreateSchema{Name: "lake.fin"}, CreateTable{Name: "lake.fin.t", Columns: cols})
	note(t, again, "lake.fin.t")
	// A gateway's own id is taken as given (and only a gateway names one:
	// metasrv's rule).
	g := catalogtest.Apply(t, s, admin, CreateTable{Name: "lake.fin.g", Columns: cols, StorageID: "0123456789abcdef0123456789abcdef",
		Files: []DataFile{df("0123456789abcdef0123456789abcdef", "a/f1", 1)}})
	if sid := storageOf(t, g, "lake.fin.g"); sid != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("explicit storage id: %s", sid)
	}
}

// TestSetRules: the level rises only, survives a snapshot round trip, and
// a snapshot with an unknown level is refused.
func TestSetRules(t *testing.T) {
	s := base(t)
	if s.Rules() != RulesOriginal {
		t.Fatalf("new snapshot at level %d", s.Rules())
	}
	for _, bad := range []int{-1, 0, CurrentRules + 1} {
		mustFail(t, s, "alice", SetRules{Level: bad}, ErrInvalidArgument)
	}
	mustFail(t, s, "nobody", SetRules{Level: 1}, ErrForbidden)
	s = catalogtest.Apply(t, s, "alice", SetRules{Level: RulesColumnGovernance}, SetRules{Level: RulesColumnGovernance})
	if s.Rules() != RulesColumnGovernance {
		t.Fatalf("level %d", s.Rules())
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalSnapshot(b)
	if err != nil || r.Rules() != RulesColumnGovernance {
		t.Fatalf("restored at level %v: %v", r, err)
	}
	forged := strings.Replace(string(b), `"rules":1`, `"rules":9`, 1)
	if _, err := UnmarshalSnapshot([]byte(forged)); !errors.Is(err, ErrInvalidSnapshot) {
		t.Fatalf("unknown level restored: %v", err)
	}
	// SetRules round-trips through the codec.
	enc, err := EncodeCommand(SetRules{Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := DecodeCommand(enc); err != nil || c != (SetRules{Level: 1}) {
		t.Fatalf("decoded %#v, %v", c, err)
	}
}
