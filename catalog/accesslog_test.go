package catalog_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

var alColumns = []ColumnDef{{Name: "time", Type: "timestamp[us]", Nullable: true}, {Name: "principal", Type: "utf8", Nullable: true}}

func alFile(sid, name string, rows int64) DataFile {
	return DataFile{Path: "tables/" + sid + "/seg/" + name + ".parquet", Size: 100, Rows: rows, SHA256: strings.Repeat("ab", 32)}
}

// TestCommitAccessLogCreatesOnceThenAppends: the first commit creates the
// schema and the table, owned by the metalake's owner, at version 1; the
// next appends without a base.
func TestCommitAccessLogCreatesOnceThenAppends(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "a", 3)}})
	for _, o := range []Object{Schema("lake.system"), Table("lake.system.access_events")} {
		if ow, ok := s.Owner(o); !ok || ow != (Owner{OwnerUser, admin}) {
			t.Fatalf("owner of %s = %v, %v", o, ow, ok)
		}
	}
	s = catalogtest.Apply(t, s, admin,
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "b", 4)}})
	sid, v, ok := s.TableVersion("lake.system.access_events", 0)
	if !ok || sid != "al1" || v.Version != 2 || len(v.Files) != 2 || v.Rows != 7 || v.Actor != admin {
		t.Fatalf("after two commits: %s %+v %v", sid, v, ok)
	}
	if names, _ := s.Children(Catalog("lake")); len(names) != 3 {
		t.Fatalf("schemas %v", names)
	}
}

// TestCommitAccessLogRefuses: only the metalake's owner commits, the
// files lie under the table's storage id, the columns stay the table's.
func TestCommitAccessLogRefuses(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "a", 3)}})
	ok := CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "b", 1)}}
	taken := catalogtest.Apply(t, base(t), admin, CreateTable{Name: "lake.fin.x", Columns: alColumns, StorageID: "taken"})
	for _, tc := range []struct {
		name  string
		actor string
		snap  *Snapshot
		cmd   CommitAccessLog
		want  error
	}{
		{"a user who does not own the metalake", "alice", s, ok, ErrForbidden},
		{"an unknown actor", "gw", s, ok, ErrForbidden},
		{"another storage id", admin, s, CommitAccessLog{Catalog: "lake", StorageID: "al2", Columns: alColumns,
			Files: []DataFile{alFile("al2", "b", 1)}}, ErrVersionConflict},
		{"a file outside the storage id", admin, s, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns,
			Files: []DataFile{alFile("other", "b", 1)}}, ErrInvalidArgument},
		{"other columns", admin, s, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns[:1],
			Files: []DataFile{alFile("al1", "b", 1)}}, ErrInvalidArgument},
		{"no files", admin, s, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns}, ErrInvalidArgument},
		{"a file the table has", admin, s, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns,
			Files: []DataFile{alFile("al1", "a", 1)}}, ErrInvalidArgument},
		{"a file the table has, among many", admin, s, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns,
			Files: manyFiles("al1", 9, "a")}, ErrInvalidArgument},
		{"a file twice, among many", admin, s, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns,
			Files: manyFiles("al1", 9, "f3")}, ErrInvalidArgument},
		{"a missing catalog", admin, base(t), CommitAccessLog{Catalog: "nope", StorageID: "al1", Columns: alColumns,
			Files: []DataFile{alFile("al1", "a", 1)}}, ErrNotFound},
		{"first commit without a storage id", admin, base(t), CommitAccessLog{Catalog: "lake", Columns: alColumns,
			Files: []DataFile{alFile("al1", "a", 1)}}, ErrInvalidArgument},
		{"a storage id another table has", admin, taken, CommitAccessLog{Catalog: "lake", StorageID: "taken",
			Columns: alColumns, Files: []DataFile{alFile("taken", "a", 1)}}, ErrAlreadyExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustFail(t, tc.snap, tc.actor, tc.cmd, tc.want)
		})
	}
}

func TestIsSystemSchema(t *testing.T) {
	for name, want := range map[string]bool{"lake.system": true, "other.system": true, "lake.sys": false,
		"lake.systems": false, "system": false, "lake.system.t": false, "": false} {
		if got := IsSystemSchema(name); got != want {
			t.Errorf("IsSystemSchema(%q) = %v", name, got)
		}
	}
}

// TestSystemSchemaReadOnly: every write into a system schema but the
// access log's commit is refused, even for the metalake's owner; governing
// it is not. Names that only look alike are not the schema.
func TestSystemSchemaReadOnly(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "a", 3)}})
	tbl := "lake.system.access_events"
	for _, tc := range []struct {
		name string
		cmd  Command
	}{
		{"create schema", CreateSchema{Name: "lake.system"}},
		{"create table", CreateTable{Name: "lake.system.t", Columns: alColumns}},
		{"drop schema", DropObject{Object: Schema("lake.system"), Cascade: true}},
		{"drop table", DropObject{Object: Table(tbl)}},
		{"drop column", DropObject{Object: Column(tbl + ".principal")}},
		{"rename table", RenameObject{Object: Table(tbl), NewName: "lake.fin.events"}},
		{"move a table in", RenameObject{Object: Table("lake.fin.ledger"), NewName: "lake.system.ledger"}},
		{"rename schema", RenameObject{Object: Schema("lake.system"), NewName: "lake.old"}},
		{"add column", AddColumn{Table: tbl, Column: ColumnDef{Name: "x", Type: "utf8"}}},
		{"alter table", AlterObject{Object: Table(tbl), SetProperties: map[string]string{"k": "v"}}},
		{"commit a version", CommitTableVersion{Table: tbl, Base: 1, Files: []DataFile{alFile("al1", "b", 1)}}},
		{"replace", CommitTableVersion{Table: tbl, Base: 1, Replace: true, Columns: alColumns}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !WritesSystemSchema(tc.cmd) {
				t.Fatal("WritesSystemSchema = false")
			}
			mustFail(t, s, admin, tc.cmd, ErrForbidden)
		})
	}
	// Governance of the table and writes elsewhere go on.
	s = catalogtest.Apply(t, s, admin,
		GrantPrivileges{Role: "reader", Object: Table(tbl), Privileges: pc(PrivSelectTable, Allow)},
		SetOwner{Object: Table(tbl), Owner: Owner{OwnerUser, "alice"}},
		CreateTag{Name: "audit"}, AssociateTagsV1{Object: Table(tbl), TagsToAdd: []string{"audit"}},
		CreateSchema{Name: "lake.systems"}, CreateTable{Name: "lake.systems.t", Columns: alColumns})
	for _, c := range []Command{CreateSchema{Name: "lake.systems"}, DropObject{Object: Catalog("lake")},
		AlterObject{Object: Catalog("lake")}, GrantPrivileges{Role: "reader", Object: Table(tbl)}} {
		if WritesSystemSchema(c) {
			t.Errorf("WritesSystemSchema(%#v) = true", c)
		}
	}
	// The snapshot with a system schema survives a round trip.
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalSnapshot(b)
	if err != nil {
		t.Fatalf("restoring a snapshot with a system schema: %v", err)
	}
	if _, _, ok := r.TableVersion(tbl, 0); !ok {
		t.Fatal("restored snapshot lost the access log")
	}
}

// TestCheckEntryRefusesAccessLog: a client cannot send the access log's
// commit (previews run CheckEntry on what clients send).
func TestCheckEntryRefusesAccessLog(t *testing.T) {
	c := CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "a", 1)}}
	if err := CheckEntry(base(t), admin, c); !errors.Is(err, ErrForbidden) {
		t.Fatalf("CheckEntry = %v", err)
	}
}

// TestCommitAccessLogExpires: a commit leaves the expired files out of the
// new version (ignoring paths it does not list), keeps the table's columns
// and its older versions, and appends its own files.
func TestCommitAccessLogExpires(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "a", 1)}},
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "b", 2)}})
	for _, tc := range []struct {
		name   string
		expire []string
		want   []string
	}{
		{"one expired", []string{alFile("al1", "a", 0).Path}, []string{"b", "c"}},
		{"all expired", []string{alFile("al1", "a", 0).Path, alFile("al1", "b", 0).Path}, []string{"c"}},
		{"unknown paths ignored", []string{"tables/al1/seg/zz.parquet", "elsewhere"}, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := catalogtest.Apply(t, s, admin, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns,
				Files: []DataFile{alFile("al1", "c", 4)}, Expire: tc.expire})
			_, vs, _ := n.TableVersions("lake.system.access_events")
			cur := vs[0]
			var got []string
			var rows int64
			for _, f := range cur.Files {
				got = append(got, strings.TrimSuffix(strings.TrimPrefix(f.Path, "tables/al1/seg/"), ".parquet"))
				rows += f.Rows
			}
			if cur.Version != 3 || !slices.Equal(got, tc.want) || cur.Rows != rows || len(vs) != 3 {
				t.Fatalf("version %d files %v rows %d (%d versions)", cur.Version, got, cur.Rows, len(vs))
			}
			if info, _ := n.Object(Table("lake.system.access_events")); len(info.Columns) != len(alColumns) {
				t.Fatalf("columns %v", info.Columns)
			}
		})
	}
}

// BenchmarkCommitAccessLog: one flush's commit onto a table already
// holding n files (the version's file list is copied per commit).
func BenchmarkCommitAccessLog(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := catalogtest.New(b, "acme", admin)
			s = catalogtest.Apply(b, s, admin, CreateCatalog{Name: "lake", Type: "managed"})
			files := make([]DataFile, n)
			for i := range files {
				files[i] = alFile("al1", "f"+strconv.Itoa(i), 10)
			}
			s = catalogtest.Apply(b, s, admin, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: files})
			c := CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "new", 10)}}
			m := catalogtest.Meta(s, admin)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Apply(s, c, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// manyFiles returns n distinct files and then one named extra.
func manyFiles(sid string, n int, extra string) []DataFile {
	out := make([]DataFile, 0, n+1)
	for i := range n {
		out = append(out, alFile(sid, "f"+strconv.Itoa(i), 1))
	}
	return append(out, alFile(sid, extra, 1))
}
