package catalog_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	. "lakegate/catalog"
)

// samples has one command of every type, keyed by its pinned type number.
// The numbers are part of the Raft log format: never change an entry.
func samples() map[int]Command {
	o := Table("c.s.t")
	return map[int]Command{
		1:  CreateCatalog{Name: "c", Type: "managed", Comment: "x", Properties: map[string]string{"k": "v"}},
		2:  CreateSchema{Name: "c.s"},
		3:  CreateTable{Name: "c.s.t", Columns: []ColumnDef{{Name: "a", Type: "INT", Nullable: true}}},
		4:  DropObject{Object: o, Cascade: true},
		5:  RenameObject{Object: o, NewName: "c.s.u"},
		6:  AddColumn{Table: "c.s.t", Column: ColumnDef{Name: "b", Type: "INT"}},
		7:  SetOwner{Object: o, Owner: Owner{OwnerGroup, "g"}},
		8:  CreateUser{Name: "u"},
		9:  DropUser{Name: "u"},
		10: CreateGroup{Name: "g"},
		11: DropGroup{Name: "g"},
		12: AddGroupMembers{Group: "g", Users: []string{"u"}},
		13: RemoveGroupMembers{Group: "g", Users: []string{"u"}},
		14: CreateRole{Name: "r", Grants: []Grant{{Object: o, Privilege: PrivSelectTable, Condition: Deny}}},
		15: DropRole{Name: "r"},
		16: GrantPrivileges{Role: "r", Object: o, Privileges: []PrivilegeCondition{{PrivSelectTable, Allow}}},
		17: RevokePrivileges{Role: "r", Object: o, Privileges: []PrivilegeCondition{{PrivModifyTable, Deny}}},
		18: GrantRoles{Grantee: Owner{OwnerUser, "u"}, Roles: []string{"r"}},
		19: RevokeRoles{Grantee: Owner{OwnerGroup, "g"}, Roles: []string{"r"}},
		20: CreateTag{Name: "t", AllowedValues: []string{}},
		21: AlterTag{Name: "t", Updates: []TagUpdate{{Type: "rename", NewName: "t2"}}},
		22: DropTag{Name: "t"},
		23: AssociateTagsV1{Object: o, TagsToAdd: []string{"a"}, TagsToRemove: []string{"b"}},
		24: AssociateTagsV2{Object: o, TagsToAdd: []TagValue{{"dept", "hr"}, {Name: "pii"}}},
		25: CreatePolicy{Name: "p", Type: PolicyRowFilter, Enabled: true, Content: PolicyContent{Expression: "a > 1"}},
		26: AlterPolicy{Name: "p", Updates: []PolicyUpdate{{Type: "updateContent", PolicyType: PolicyColumnMask, NewContent: &PolicyContent{Mask: "NULL"}}}},
		27: EnablePolicy{Name: "p"},
		28: DisablePolicy{Name: "p"},
		29: DropPolicy{Name: "p"},
		30: AttachPolicy{Tag: "t", Policy: "p", Selector: Selector{Value: "v"}},
		31: DetachPolicy{Tag: "t", Policy: "p"},
		32: CommitTableVersion{Table: "c.s.t", Base: 3, Replace: true, Columns: []ColumnDef{{Name: "a", Type: "INT"}},
			Files: []DataFile{{Path: "tables/t1/seg/f.parquet", Size: 10, Rows: 2, SHA256: strings.Repeat("ab", 32)}}},
		33: AlterObject{Object: Schema("c.s"), Comment: ptr("new"), SetProperties: map[string]string{"k": "v", "a": ""},
			RemoveProperties: []string{"old"}},
		34: CreateDomain{Name: "Finance/EU", Comment: "c", Properties: map[string]string{"k": "v"},
			BackingTag: DomainTag{Name: "dept", Value: "fin"}, Parent: "Finance"},
		35: AlterDomain{Name: "d", Updates: []DomainUpdate{{Type: "rename", NewName: "e"}, {Type: "setProperty", Property: "k", Value: "v"}}},
		36: SetDomainStatus{Name: "d", Status: DomainPublished},
		37: SetDomainParent{Name: "d", Parent: "p"},
		38: DetachDomain{Name: "d"},
		39: SetDomainBackingTag{Name: "d", BackingTag: &DomainTag{Name: "t", Create: true}},
		40: DropDomain{Name: "d"},
		41: SetRules{Level: RulesColumnGovernance},
		42: CommitAccessLog{Catalog: "c", StorageID: "al1", Columns: []ColumnDef{{Name: "time", Type: "timestamp[us]", Nullable: true}},
			Files:  []DataFile{{Path: "tables/al1/seg/part-0.parquet", Size: 10, Rows: 2, SHA256: strings.Repeat("ab", 32)}},
			Expire: []string{"tables/al1/old/part-0.parquet"}},
		43: SyncIdentityUser{Name: "u@acme", Groups: []string{"g", "h"}},
	}
}

func ptr[T any](v T) *T { return &v }

func TestCommandTypeNumbersPinned(t *testing.T) {
	for n, c := range samples() {
		b, err := EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			V    int             `json:"v"`
			Type int             `json:"type"`
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(b, &env); err != nil || env.V != 1 || env.Type != n {
			t.Errorf("%T: envelope %s, want type %d", c, b, n)
		}
		d, err := DecodeCommand(b)
		if err != nil || !reflect.DeepEqual(d, c) {
			t.Errorf("%T: round trip = %#v, %v", c, d, err)
		}
	}
	if len(samples()) != 43 {
		t.Fatal("every command type needs a pinned sample")
	}
}

func TestDecodeCommandRejects(t *testing.T) {
	for _, b := range []string{
		``, `null`, `{}`, `[]`,
		`{"v":2,"type":8,"body":{"name":"u"}}`,
		`{"v":1,"type":99,"body":{"name":"u"}}`,
		`{"v":1,"type":8}`,
		`{"v":1,"type":8,"body":{"name":"u","extra":1}}`,
		`{"v":1,"type":8,"body":{"name":"u"},"x":1}`,
		`{"v":1,"type":8,"body":{"name":"u"}} {}`,
		`{"v":1,"type":16,"body":{"role":"r","object":{"type":"TABLE","fullName":"a.b.c"},"privileges":[{"name":"NOPE","condition":"ALLOW"}]}}`,
		`{"v":1,"type":16,"body":{"role":"r","object":{"type":"SPACESHIP","fullName":"a"},"privileges":[]}}`,
	} {
		if _, err := DecodeCommand([]byte(b)); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("DecodeCommand(%s) = %v", b, err)
		}
	}
}

func TestParseName(t *testing.T) {
	ok := []struct {
		t ObjectType
		n string
	}{{ObjectCatalog, "lake"}, {ObjectSchema, "lake.fin"}, {ObjectTable, "a.b.c"}, {ObjectColumn, "a.b.c.d"},
		{ObjectTag, "dept.v2"}, {ObjectCatalog, "Ünïcode name"}, {ObjectTable, "a.b." + string(make128())}}
	for _, c := range ok {
		if _, err := ParseName(c.t, c.n); err != nil {
			t.Errorf("ParseName(%v, %q): %v", c.t, c.n, err)
		}
	}
	bad := []struct {
		t ObjectType
		n string
	}{{ObjectCatalog, ""}, {ObjectCatalog, "a.b"}, {ObjectSchema, "a"}, {ObjectSchema, "a..b"}, {ObjectTable, "a.b.c.d"},
		{ObjectCatalog, "*"}, {ObjectCatalog, "SYSTEM"}, {ObjectSchema, "a.system"}, {ObjectCatalog, "a\x00"},
		{ObjectCatalog, "tab\there"}, {ObjectCatalog, "\xff"}, {ObjectCatalog, string(make128()) + "x"},
		{ObjectCatalog, "  "}, {ObjectTag, "*"}, {ObjectType(99), "x"}}
	for _, c := range bad {
		_, err := ParseName(c.t, c.n)
		if err == nil {
			t.Errorf("ParseName(%v, %q) accepted", c.t, c.n)
		}
		if c.t != 99 && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ParseName(%v, %q) = %v, want ErrInvalidName", c.t, c.n, err)
		}
	}
}

func make128() []rune {
	r := make([]rune, 128)
	for i := range r {
		r[i] = 'é'
	}
	return r
}

func TestSnapshotRestoreRejectsGarbage(t *testing.T) {
	for _, b := range []string{"", "x", "lakegate-catalog-snapshot-v1\n{}", "lakegate-catalog-snapshot-v1\n{\"metalake\":\"m\",\"nextId\":2,\"objects\":[{\"id\":1,\"type\":\"METALAKE\",\"name\":\"m\",\"audit\":{\"creator\":\"a\",\"createTime\":\"2026-01-01T00:00:00Z\"}},{\"id\":1,\"type\":\"CATALOG\",\"name\":\"c\",\"audit\":{\"creator\":\"a\",\"createTime\":\"2026-01-01T00:00:00Z\"}}]}"} {
		if _, err := UnmarshalSnapshot([]byte(b)); !errors.Is(err, ErrInvalidSnapshot) {
			t.Errorf("UnmarshalSnapshot(%q) = %v", b, err)
		}
	}
}

// BenchmarkDecodeCommand decodes one encoded command of every type per
// iteration batch, round-robin.
func BenchmarkDecodeCommand(b *testing.B) {
	var encoded [][]byte
	for n := range len(samples()) + 1 {
		c, ok := samples()[n]
		if !ok {
			continue
		}
		e, err := EncodeCommand(c)
		if err != nil {
			b.Fatal(err)
		}
		encoded = append(encoded, e)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := DecodeCommand(encoded[i%len(encoded)]); err != nil {
			b.Fatal(err)
		}
	}
}
