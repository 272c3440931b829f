package catalog_test

import (
	"errors"
	"reflect"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

func str(s string) *string { return &s }

// alterBase is base with properties on the catalog, schema lake.fin and
// table lake.fin.ledger.
func alterBase(t *testing.T) *Snapshot {
	t.Helper()
	s := catalogtest.New(t, "acme", admin)
	return catalogtest.Apply(t, s, admin,
		CreateUser{"alice"}, CreateUser{"bob"}, CreateUser{"carol"},
		CreateCatalog{Name: "lake", Type: "managed", Comment: "main", Properties: map[string]string{"a": "1", "b": "2"}},
		CreateSchema{Name: "lake.fin", Comment: "money", Properties: map[string]string{"a": "1"}},
		CreateSchema{Name: "lake.hr"},
		CreateTable{Name: "lake.fin.ledger", Comment: "ledger", Columns: []ColumnDef{{Name: "amount", Type: "BIGINT"}},
			Properties: map[string]string{"format": "parquet"}},
		CreateTag{Name: "pii"},
		CreateRole{Name: "use", Grants: []Grant{
			{Catalog("lake"), PrivUseCatalog, Allow},
			{Schema("lake.fin"), PrivUseSchema, Allow},
			{Table("lake.fin.ledger"), PrivSelectTable, Allow},
		}},
		roles("alice", "use"), roles("bob", "use"),
	)
}

func TestAlterObject(t *testing.T) {
	cases := []struct {
		name    string
		cmd     AlterObject
		err     error
		comment string
		props   map[string]string
	}{
		{"comment only", AlterObject{Object: Catalog("lake"), Comment: str("lake v2")}, nil,
			"lake v2", map[string]string{"a": "1", "b": "2"}},
		{"clear comment", AlterObject{Object: Catalog("lake"), Comment: str("")}, nil,
			"", map[string]string{"a": "1", "b": "2"}},
		{"set adds and replaces", AlterObject{Object: Catalog("lake"), SetProperties: map[string]string{"a": "9", "c": ""}}, nil,
			"main", map[string]string{"a": "9", "b": "2", "c": ""}},
		{"remove", AlterObject{Object: Catalog("lake"), RemoveProperties: []string{"a"}}, nil,
			"main", map[string]string{"b": "2"}},
		{"remove missing is a no-op", AlterObject{Object: Catalog("lake"), RemoveProperties: []string{"zzz", "zzz"}}, nil,
			"main", map[string]string{"a": "1", "b": "2"}},
		{"remove all", AlterObject{Object: Catalog("lake"), RemoveProperties: []string{"a", "b"}}, nil,
			"main", nil},
		{"everything at once", AlterObject{Object: Catalog("lake"), Comment: str("x"),
			SetProperties: map[string]string{"c": "3"}, RemoveProperties: []string{"b"}}, nil,
			"x", map[string]string{"a": "1", "c": "3"}},
		{"schema", AlterObject{Object: Schema("lake.fin"), Comment: str("cash"), SetProperties: map[string]string{"b": "2"},
			RemoveProperties: []string{"a"}}, nil, "cash", map[string]string{"b": "2"}},
		{"schema without properties", AlterObject{Object: Schema("lake.hr"), SetProperties: map[string]string{"k": "v"}}, nil,
			"", map[string]string{"k": "v"}},
		{"table", AlterObject{Object: Table("lake.fin.ledger"), Comment: str("books"), SetProperties: map[string]string{"x": "y"}}, nil,
			"books", map[string]string{"format": "parquet", "x": "y"}},
		{"empty alter", AlterObject{Object: Catalog("lake")}, ErrInvalidArgument, "", nil},
		{"empty maps", AlterObject{Object: Catalog("lake"), SetProperties: map[string]string{}, RemoveProperties: []string{}},
			ErrInvalidArgument, "", nil},
		{"set and remove one key", AlterObject{Object: Catalog("lake"), SetProperties: map[string]string{"a": "1"},
			RemoveProperties: []string{"a"}}, ErrInvalidArgument, "", nil},
		{"empty key set", AlterObject{Object: Catalog("lake"), SetProperties: map[string]string{"": "v"}}, ErrInvalidArgument, "", nil},
		{"empty key removed", AlterObject{Object: Catalog("lake"), RemoveProperties: []string{""}}, ErrInvalidArgument, "", nil},
		{"missing catalog", AlterObject{Object: Catalog("nope"), Comment: str("x")}, ErrNotFound, "", nil},
		{"missing table", AlterObject{Object: Table("lake.fin.nope"), Comment: str("x")}, ErrNotFound, "", nil},
		{"malformed name", AlterObject{Object: Table("lake.fin"), Comment: str("x")}, ErrNotFound, "", nil},
		{"column", AlterObject{Object: Column("lake.fin.ledger.amount"), Comment: str("x")}, ErrInvalidArgument, "", nil},
		{"metalake", AlterObject{Object: Object{Type: ObjectMetalake, Name: "acme"}, Comment: str("x")}, ErrInvalidArgument, "", nil},
		{"tag", AlterObject{Object: Tag("pii"), Comment: str("x")}, ErrInvalidArgument, "", nil},
		{"role", AlterObject{Object: Role("use"), Comment: str("x")}, ErrInvalidArgument, "", nil},
		{"zero type", AlterObject{Comment: str("x")}, ErrInvalidArgument, "", nil},
	}
	s := alterBase(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := s.Object(tc.cmd.Object)
			if tc.err != nil {
				mustFail(t, s, admin, tc.cmd, tc.err)
				return
			}
			m := catalogtest.Meta(s, admin)
			n, ev, err := Apply(s, tc.cmd, m)
			if err != nil {
				t.Fatal(err)
			}
			if len(ev) != 1 || ev[0].Operation != "AlterObject" || ev[0].Target != tc.cmd.Object || ev[0].Outcome != Success {
				t.Fatalf("events %+v", ev)
			}
			info, ok := n.Object(tc.cmd.Object)
			if !ok || info.Comment != tc.comment || !reflect.DeepEqual(info.Properties, tc.props) {
				t.Fatalf("after: %+v, want comment %q properties %v", info, tc.comment, tc.props)
			}
			if info.Audit.LastModifier != admin || !info.Audit.LastModifiedTime.Equal(m.Time) ||
				info.Audit.Creator != before.Audit.Creator || !info.Audit.CreateTime.Equal(before.Audit.CreateTime) {
				t.Fatalf("audit %+v", info.Audit)
			}
			// The old snapshot and its maps are untouched.
			if again, _ := s.Object(tc.cmd.Object); !reflect.DeepEqual(again, before) {
				t.Fatalf("old snapshot changed: %+v vs %+v", again, before)
			}
			// Everything else is unchanged: columns, owner, type, version.
			if info.Owner != before.Owner || info.Type != before.Type || !reflect.DeepEqual(info.Columns, before.Columns) ||
				info.StorageID != before.StorageID || info.Version != before.Version {
				t.Fatalf("other fields changed: %+v vs %+v", info, before)
			}
			checkRoundTrip(t, n)
		})
	}
}

func TestAlterObjectPermission(t *testing.T) {
	s := alterBase(t)
	c := func(o Object) AlterObject { return AlterObject{Object: o, SetProperties: map[string]string{"k": "v"}} }
	cases := []struct {
		name  string
		setup []Command
		actor string
		cmd   AlterObject
		err   error
	}{
		{"metalake owner", nil, admin, c(Table("lake.fin.ledger")), nil},
		{"visible, not owner", nil, "bob", c(Catalog("lake")), ErrForbidden},
		{"visible table, not owner", nil, "bob", c(Table("lake.fin.ledger")), ErrForbidden},
		{"invisible catalog", nil, "carol", c(Catalog("lake")), ErrNotFound},
		{"invisible schema", nil, "bob", c(Schema("lake.hr")), ErrNotFound},
		{"unknown user", nil, "mallory", c(Catalog("lake")), ErrForbidden},
		{"catalog owner alters a table", []Command{SetOwner{Catalog("lake"), Owner{OwnerUser, "bob"}}}, "bob", c(Table("lake.fin.ledger")), nil},
		{"schema owner alters the schema", []Command{SetOwner{Schema("lake.fin"), Owner{OwnerUser, "bob"}}}, "bob", c(Schema("lake.fin")), nil},
		{"schema owner cannot alter the catalog", []Command{SetOwner{Schema("lake.fin"), Owner{OwnerUser, "bob"}}}, "bob", c(Catalog("lake")), ErrForbidden},
		{"table owner", []Command{SetOwner{Table("lake.fin.ledger"), Owner{OwnerUser, "alice"}}}, "alice", c(Table("lake.fin.ledger")), nil},
		{"group owner", []Command{CreateGroup{"g"}, AddGroupMembers{"g", []string{"carol"}},
			SetOwner{Schema("lake.hr"), Owner{OwnerGroup, "g"}}}, "carol", c(Schema("lake.hr")), nil},
		{"MODIFY_TABLE is not enough", []Command{grantTo("use", Table("lake.fin.ledger"), PrivModifyTable, Allow)}, "bob",
			c(Table("lake.fin.ledger")), ErrForbidden},
		{"column, even for the owner", nil, admin, c(Column("lake.fin.ledger.amount")), ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := catalogtest.Apply(t, s, admin, tc.setup...)
			if tc.err != nil {
				mustFail(t, s, tc.actor, tc.cmd, tc.err)
				if err := Permit(s, tc.actor, tc.cmd); !errors.Is(err, tc.err) {
					t.Fatalf("Permit = %v", err)
				}
				return
			}
			if err := Permit(s, tc.actor, tc.cmd); err != nil {
				t.Fatalf("Permit = %v", err)
			}
			n := catalogtest.Apply(t, s, tc.actor, tc.cmd)
			if info, _ := n.Object(tc.cmd.Object); info.Properties["k"] != "v" || info.Audit.LastModifier != tc.actor {
				t.Fatalf("after: %+v", info)
			}
		})
	}
}

// TestAlterObjectFollowsRename checks that an alter and a rename compose in
// either order and that grants and tags are kept.
func TestAlterObjectFollowsRename(t *testing.T) {
	s := catalogtest.Apply(t, alterBase(t), admin,
		AssociateTagsV1{Object: Table("lake.fin.ledger"), TagsToAdd: []string{"pii"}},
		RenameObject{Object: Table("lake.fin.ledger"), NewName: "lake.fin.books"},
		AlterObject{Object: Table("lake.fin.books"), Comment: str("renamed")},
	)
	mustFail(t, s, admin, AlterObject{Object: Table("lake.fin.ledger"), Comment: str("x")}, ErrNotFound)
	info, _ := s.Object(Table("lake.fin.books"))
	if info.Comment != "renamed" || info.Properties["format"] != "parquet" || len(info.Tags) != 1 || len(info.Columns) != 1 {
		t.Fatalf("after: %+v", info)
	}
	if !s.Authorize("bob", PrivSelectTable, Table("lake.fin.books")).Allowed {
		t.Fatal("grant lost")
	}
	s = catalogtest.Apply(t, s, admin, RenameObject{Object: Table("lake.fin.books"), NewName: "lake.fin.ledger"})
	if info, _ := s.Object(Table("lake.fin.ledger")); info.Comment != "renamed" {
		t.Fatalf("after rename back: %+v", info)
	}
}

func TestAlterObjectCodec(t *testing.T) {
	for _, c := range []AlterObject{
		{Object: Catalog("c"), Comment: str("")},
		{Object: Catalog("c"), Comment: str("x")},
		{Object: Schema("c.s"), SetProperties: map[string]string{"z": "1", "a": "", "é": "ü"}},
		{Object: Table("c.s.t"), RemoveProperties: []string{"b", "a"}},
		{Object: Table("c.s.t"), Comment: str("c"), SetProperties: map[string]string{"k": "v"}, RemoveProperties: []string{"x"}},
	} {
		b, err := EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodeCommand(b)
		if err != nil || !reflect.DeepEqual(d, c) {
			t.Fatalf("round trip of %s = %#v, %v", b, d, err)
		}
		for range 3 { // deterministic
			if b2, _ := EncodeCommand(d); string(b2) != string(b) {
				t.Fatalf("re-encoding differs: %s vs %s", b, b2)
			}
		}
		if d2, err := DecodeCommand(append([]byte(" "), b...)); err != nil || !reflect.DeepEqual(d2, c) {
			t.Fatalf("general decode of %s = %#v, %v", b, d2, err)
		}
	}
	// A nil comment is omitted; an empty one is kept.
	if b, _ := EncodeCommand(AlterObject{Object: Catalog("c"), SetProperties: map[string]string{"k": "v"}}); string(b) !=
		`{"v":1,"type":33,"body":{"object":{"type":"CATALOG","fullName":"c"},"setProperties":{"k":"v"}}}` {
		t.Fatalf("encoding %s", b)
	}
	if b, _ := EncodeCommand(AlterObject{Object: Catalog("c"), Comment: str("")}); string(b) !=
		`{"v":1,"type":33,"body":{"object":{"type":"CATALOG","fullName":"c"},"comment":""}}` {
		t.Fatalf("encoding %s", b)
	}
	for _, bad := range []string{
		`{"v":1,"type":33,"body":{"object":{"type":"CATALOG","fullName":"c"},"comment":"x","bogus":1}}`,
		`{"v":1,"type":33,"body":{"object":{"type":"CATALOG","fullName":"c"},"setProperties":{"k":1}}}`,
		`{"v":1,"type":33,"body":{"object":{"type":"CATALOG","fullName":"c"},"removeProperties":"k"}}`,
	} {
		if _, err := DecodeCommand([]byte(bad)); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("DecodeCommand(%s) = %v", bad, err)
		}
	}
}

func TestGenerateAlters(t *testing.T) {
	cfg := catalogtest.Config{Catalogs: 2, SchemasPerCatalog: 4, TablesPerSchema: 1, ColumnsPerTable: 1,
		Tags: 1, ValuesPerTag: 1, Roles: 1, Users: 1, Groups: 1}
	s := catalogtest.Generate(t, cfg)
	c, _ := s.Object(Catalog(catalogtest.CatalogName(1)))
	if c.Comment != "catalog cat01" || !reflect.DeepEqual(c.Properties, map[string]string{"team": "team1"}) {
		t.Fatalf("catalog %+v", c)
	}
	sc, _ := s.Object(Schema(catalogtest.SchemaName(1, 2)))
	if !reflect.DeepEqual(sc.Properties, map[string]string{"tier": "gold"}) || sc.Audit.LastModifier != catalogtest.Owner {
		t.Fatalf("schema %+v", sc)
	}
}
