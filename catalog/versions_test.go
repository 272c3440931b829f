package catalog_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// df returns a valid data file of storage id sid named name.
func df(sid, name string, rows int64) DataFile {
	return DataFile{Path: "tables/" + sid + "/" + name + ".parquet", Size: 100 + rows, Rows: rows,
		SHA256: fmt.Sprintf("%064x", rows+1)}
}

func paths(fs []DataFile) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func referenced(s *Snapshot) map[string]string {
	out := map[string]string{}
	for sid, f := range s.ReferencedFiles() {
		if _, dup := out[f.Path]; dup {
			panic("ReferencedFiles yielded " + f.Path + " twice")
		}
		out[f.Path] = sid
	}
	return out
}

// versioned is base plus table lake.fin.ledger at version 1 with storage id
// "ledger" and file f1.
func versioned(t *testing.T) *Snapshot {
	t.Helper()
	return catalogtest.Apply(t, base(t), admin,
		CommitTableVersion{Table: "lake.fin.ledger", Base: 0, Files: []DataFile{}},
		CreateTable{Name: "lake.fin.events", Columns: []ColumnDef{{Name: "id", Type: "BIGINT"}, {Name: "ssn", Type: "VARCHAR"}},
			StorageID: "events", Files: []DataFile{df("events", "a/f1", 10)}},
	)
}

func TestCreateTableStorage(t *testing.T) {
	cols := []ColumnDef{{Name: "id", Type: "BIGINT"}}
	cases := []struct {
		name    string
		cmd     CreateTable
		err     error
		storage string // "" = derived
		version uint64
		files   int
	}{
		{"plain create has no data", CreateTable{Name: "lake.fin.t", Columns: cols}, nil, "", 0, 0},
		{"storage id alone gives version 1", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "my-table-1"}, nil, "my-table-1", 1, 0},
		{"empty files give version 1", CreateTable{Name: "lake.fin.t", Columns: cols, Files: []DataFile{}}, nil, "", 1, 0},
		{"files with storage id", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "x",
			Files: []DataFile{df("x", "p/1", 3), df("x", "p/2", 4)}}, nil, "x", 1, 2},
		{"uppercase storage id", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "Abc"}, ErrInvalidArgument, "", 0, 0},
		{"storage id with dash at end", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "abc-"}, ErrInvalidArgument, "", 0, 0},
		{"storage id with dash at start", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "-abc"}, ErrInvalidArgument, "", 0, 0},
		{"storage id with slash", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "a/b"}, ErrInvalidArgument, "", 0, 0},
		{"storage id too long", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: strings.Repeat("a", 65)}, ErrInvalidArgument, "", 0, 0},
		{"storage id 64 chars", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: strings.Repeat("a", 64)}, nil, strings.Repeat("a", 64), 1, 0},
		{"reserved storage id", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "t00000000000000ff"}, ErrInvalidArgument, "", 0, 0},
		// Only "t" and exactly 16 lower-case hex digits is reserved.
		{"t and 15 hex digits", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "t00000000000000f"}, nil, "t00000000000000f", 1, 0},
		{"17 hex digits", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "a00000000000000ff"}, nil, "a00000000000000ff", 1, 0},
		{"t and 16 non-hex characters", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "tables-for-ledger"}, nil, "tables-for-ledger", 1, 0},
		{"storage id of a to z and 0 to 9", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "az-09"}, nil, "az-09", 1, 0},
		{"duplicate storage id", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "events"}, ErrAlreadyExists, "", 0, 0},
		{"file of another storage id", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "x",
			Files: []DataFile{df("y", "p/1", 3)}}, ErrInvalidArgument, "", 0, 0},
		{"duplicate file", CreateTable{Name: "lake.fin.t", Columns: cols, StorageID: "x",
			Files: []DataFile{df("x", "p/1", 3), df("x", "p/1", 3)}}, ErrInvalidArgument, "", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := versioned(t)
			// Through the codec, as the log would carry it.
			b, err := EncodeCommand(tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			cmd, err := DecodeCommand(b)
			if err != nil {
				t.Fatal(err)
			}
			if tc.err != nil {
				mustFail(t, s, admin, cmd, tc.err)
				return
			}
			s = catalogtest.Apply(t, s, admin, cmd)
			sid, v, ok := s.TableVersion("lake.fin.t", 0)
			info, _ := s.Object(Table("lake.fin.t"))
			want := tc.storage
			if want == "" {
				if len(sid) != 17 || sid[0] != 't' {
					t.Fatalf("derived storage id %q", sid)
				}
				want = sid
			}
			if !ok || sid != want || v.Version != tc.version || len(v.Files) != tc.files {
				t.Fatalf("TableVersion = %q %+v %v", sid, v, ok)
			}
			if info.StorageID != sid || info.Version != tc.version {
				t.Fatalf("Object: storage %q version %d", info.StorageID, info.Version)
			}
			if !equalJSON(v.Columns, cols) {
				t.Fatalf("columns %v", v.Columns)
			}
			var rows int64
			for _, f := range tc.cmd.Files {
				rows += f.Rows
			}
			if tc.version == 1 && (v.Actor != admin || v.Time.IsZero() || v.Rows != rows) {
				t.Fatalf("version 1 = %+v", v)
			}
		})
	}
}

func TestDerivedStorageID(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin, CreateTable{Name: "lake.fin.t"})
	sid, _, _ := s.TableVersion("lake.fin.t", 0)
	// The derived id is "t" and the object id in 16 hex digits; it is stable
	// across restore.
	if len(sid) != 17 || strings.Trim(sid[1:], "0123456789abcdef") != "" {
		t.Fatalf("derived storage id %q", sid)
	}
	b, _ := s.MarshalBinary()
	r, err := UnmarshalSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if rsid, _, _ := r.TableVersion("lake.fin.t", 0); rsid != sid {
		t.Fatalf("restored storage id %q, want %q", rsid, sid)
	}
}

func TestCommitTableVersion(t *testing.T) {
	long := "tables/ledger/" + strings.Repeat("a", 1024-len("tables/ledger/")-len(".parquet")) + ".parquet"
	withFile := func(f DataFile) CommitTableVersion {
		return CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Files: []DataFile{f}}
	}
	withPath := func(p string) CommitTableVersion {
		f := df("ledger", "x", 1)
		f.Path = p
		return withFile(f)
	}
	// lake.fin.ledger again, with a known storage id and tagged columns.
	s0 := catalogtest.Apply(t, versioned(t), admin,
		DropObject{Object: Table("lake.fin.ledger")},
		CreateTable{Name: "lake.fin.ledger", Columns: []ColumnDef{{Name: "amount", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR"}},
			StorageID: "ledger", Files: []DataFile{df("ledger", "f1", 5)}},
		CreateTag{Name: "pii"},
		AssociateTagsV2{Object: Column("lake.fin.ledger.card"), TagsToAdd: []TagValue{{Name: "pii"}}},
		AssociateTagsV2{Object: Column("lake.fin.ledger.amount"), TagsToAdd: []TagValue{{Name: "pii"}}},
	)
	cases := []struct {
		name  string
		cmd   CommitTableVersion
		err   error
		check func(t *testing.T, s *Snapshot)
	}{
		{"append", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Files: []DataFile{df("ledger", "f2", 7), df("ledger", "d/f3", 1)}}, nil,
			func(t *testing.T, s *Snapshot) {
				_, v, _ := s.TableVersion("lake.fin.ledger", 0)
				if v.Version != 2 || v.Rows != 13 || !slices.Equal(paths(v.Files), []string{
					"tables/ledger/f1.parquet", "tables/ledger/f2.parquet", "tables/ledger/d/f3.parquet"}) {
					t.Fatalf("version 2 = %+v", v)
				}
				_, v1, ok := s.TableVersion("lake.fin.ledger", 1)
				if !ok || v1.Version != 1 || len(v1.Files) != 1 {
					t.Fatalf("version 1 = %+v %v", v1, ok)
				}
				if info, _ := s.Object(Table("lake.fin.ledger")); info.Version != 2 || info.StorageID != "ledger" {
					t.Fatalf("Object = %+v", info)
				}
			}},
		{"append with equal columns", CommitTableVersion{Table: "lake.fin.ledger", Base: 1,
			Columns: []ColumnDef{{Name: "amount", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR", Comment: "ignored"}},
			Files:   []DataFile{df("ledger", "f2", 7)}}, nil, nil},
		{"append with other columns", CommitTableVersion{Table: "lake.fin.ledger", Base: 1,
			Columns: []ColumnDef{{Name: "amount", Type: "INT"}, {Name: "card", Type: "VARCHAR"}}}, ErrInvalidArgument, nil},
		{"append with reordered columns", CommitTableVersion{Table: "lake.fin.ledger", Base: 1,
			Columns: []ColumnDef{{Name: "card", Type: "VARCHAR"}, {Name: "amount", Type: "BIGINT"}}}, ErrInvalidArgument, nil},
		{"append of an existing file", withFile(df("ledger", "f1", 5)), ErrInvalidArgument, nil},
		{"stale base", CommitTableVersion{Table: "lake.fin.ledger", Base: 0, Files: []DataFile{df("ledger", "f2", 7)}}, ErrVersionConflict, nil},
		{"future base", CommitTableVersion{Table: "lake.fin.ledger", Base: 2, Files: []DataFile{df("ledger", "f2", 7)}}, ErrVersionConflict, nil},
		{"missing table", CommitTableVersion{Table: "lake.fin.nope", Base: 0}, ErrNotFound, nil},
		{"replace keeps surviving columns' tags", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "id", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR", Nullable: true}},
			Files:   []DataFile{df("ledger", "g1", 2), df("ledger", "f1", 5)}}, nil,
			func(t *testing.T, s *Snapshot) {
				_, v, _ := s.TableVersion("lake.fin.ledger", 0)
				if v.Version != 2 || v.Rows != 7 || !slices.Equal(paths(v.Files), []string{"tables/ledger/g1.parquet", "tables/ledger/f1.parquet"}) {
					t.Fatalf("version 2 = %+v", v)
				}
				if names, _ := s.Children(Table("lake.fin.ledger")); !slices.Equal(names, []string{"id", "card"}) {
					t.Fatalf("columns %v", names)
				}
				if !equalJSON(v.Columns, []ColumnDef{{Name: "id", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR", Nullable: true}}) {
					t.Fatalf("version columns %v", v.Columns)
				}
				card, _ := s.Object(Column("lake.fin.ledger.card"))
				if len(card.Tags) != 1 || !card.Nullable {
					t.Fatalf("card = %+v", card)
				}
				objs, _ := s.ObjectsWithTag("pii", "")
				if !slices.Equal(objs, []Object{Column("lake.fin.ledger.card")}) {
					t.Fatalf("pii objects %v (the dropped column's tag must go)", objs)
				}
				if _, ok := s.Object(Column("lake.fin.ledger.amount")); ok {
					t.Fatal("amount survived")
				}
			}},
		{"replace changing a type", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "card", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}}}, nil,
			func(t *testing.T, s *Snapshot) {
				info, _ := s.Object(Table("lake.fin.ledger"))
				if !equalJSON(info.Columns, []ColumnDef{{Name: "card", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}}) {
					t.Fatalf("columns %v", info.Columns)
				}
				if _, v, _ := s.TableVersion("lake.fin.ledger", 0); len(v.Files) != 0 || v.Rows != 0 {
					t.Fatalf("replace with no files = %+v", v)
				}
				if objs, _ := s.ObjectsWithTag("pii", ""); len(objs) != 2 {
					t.Fatalf("pii objects %v", objs)
				}
			}},
		{"replace without columns", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true}, ErrInvalidArgument, nil},
		{"replace with duplicate columns", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "a", Type: "INT"}, {Name: "a", Type: "INT"}}}, ErrInvalidArgument, nil},
		{"replace with untyped column", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "a"}}}, ErrInvalidArgument, nil},
		{"replace with bad column name", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "a.b", Type: "INT"}}}, ErrInvalidName, nil},
		{"replace with duplicate file", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "a", Type: "INT"}}, Files: []DataFile{df("ledger", "x", 1), df("ledger", "x", 1)}}, ErrInvalidArgument, nil},
		{"wrong storage id prefix", withPath("tables/events/x.parquet"), ErrInvalidArgument, nil},
		{"storage id prefix without slash", withPath("tables/ledgerx/x.parquet"), ErrInvalidArgument, nil},
		{"no file under the prefix", withPath("tables/ledger/"), ErrInvalidArgument, nil},
		{"dot-dot segment", withPath("tables/ledger/../events/x.parquet"), ErrInvalidArgument, nil},
		{"dot segment", withPath("tables/ledger/./x.parquet"), ErrInvalidArgument, nil},
		{"double slash", withPath("tables/ledger//x.parquet"), ErrInvalidArgument, nil},
		{"backslash", withPath(`tables/ledger/a\x.parquet`), ErrInvalidArgument, nil},
		{"NUL", withPath("tables/ledger/a\x00.parquet"), ErrInvalidArgument, nil},
		{"space", withPath("tables/ledger/a b.parquet"), ErrInvalidArgument, nil},
		{"not parquet", withPath("tables/ledger/x.csv"), ErrInvalidArgument, nil},
		{"leading slash", withPath("/tables/ledger/x.parquet"), ErrInvalidArgument, nil},
		{"too long", withPath(long + "x"), ErrInvalidArgument, nil},
		{"1024 bytes", withPath(long), nil, nil},
		{"negative size", withFile(DataFile{Path: "tables/ledger/x.parquet", Size: -1, SHA256: strings.Repeat("0", 64)}), ErrInvalidArgument, nil},
		{"negative rows", withFile(DataFile{Path: "tables/ledger/x.parquet", Rows: -1, SHA256: strings.Repeat("0", 64)}), ErrInvalidArgument, nil},
		{"upper-case sha", withFile(DataFile{Path: "tables/ledger/x.parquet", SHA256: strings.Repeat("A", 64)}), ErrInvalidArgument, nil},
		{"short sha", withFile(DataFile{Path: "tables/ledger/x.parquet", SHA256: strings.Repeat("a", 63)}), ErrInvalidArgument, nil},
		{"duplicate within the commit", CommitTableVersion{Table: "lake.fin.ledger", Base: 1,
			Files: []DataFile{df("ledger", "x", 1), df("ledger", "x", 2)}}, ErrInvalidArgument, nil},
		{"segments of every allowed character", withPath("tables/ledger/AZ-az_09/A.Z.parquet"), nil, nil},
		{"empty file", withFile(DataFile{Path: "tables/ledger/x.parquet", SHA256: strings.Repeat("0", 64)}), nil, nil},
		// f1 holds 5 rows.
		{"rows adding up to MaxInt64", withFile(DataFile{Path: "tables/ledger/x.parquet", Rows: math.MaxInt64 - 5, SHA256: strings.Repeat("0", 64)}), nil,
			func(t *testing.T, s *Snapshot) {
				if _, v, _ := s.TableVersion("lake.fin.ledger", 0); v.Rows != math.MaxInt64 {
					t.Fatalf("rows %d", v.Rows)
				}
			}},
		{"rows overflowing", withFile(DataFile{Path: "tables/ledger/x.parquet", Rows: math.MaxInt64 - 4, SHA256: strings.Repeat("0", 64)}), ErrInvalidArgument, nil},
		{"replace changing only a comment", CommitTableVersion{Table: "lake.fin.ledger", Base: 1, Replace: true,
			Columns: []ColumnDef{{Name: "amount", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR", Comment: "card number"}}}, nil,
			func(t *testing.T, s *Snapshot) {
				if card, _ := s.Object(Column("lake.fin.ledger.card")); card.Comment != "card number" {
					t.Fatalf("card = %+v", card)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err != nil {
				mustFail(t, s0, admin, tc.cmd, tc.err)
				return
			}
			s, ev, err := Apply(s0, tc.cmd, catalogtest.Meta(s0, admin))
			if err != nil {
				t.Fatal(err)
			}
			if ev[0].Operation != "CommitTableVersion" || ev[0].Target != Table("lake.fin.ledger") || ev[0].Outcome != Success {
				t.Fatalf("event %+v", ev[0])
			}
			if _, v, _ := s.TableVersion("lake.fin.ledger", 0); v.Version != 2 || v.Actor != admin {
				t.Fatalf("version = %+v", v)
			}
			// The old snapshot is unchanged.
			if _, v, _ := s0.TableVersion("lake.fin.ledger", 0); v.Version != 1 {
				t.Fatalf("old snapshot changed: %+v", v)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
			checkRoundTrip(t, s)
		})
	}
}

func TestCommitTableVersionFileLimit(t *testing.T) {
	s := versioned(t)
	files := make([]DataFile, 100001)
	for i := range files {
		files[i] = df("events", fmt.Sprintf("f%d", i), 1)
	}
	mustFail(t, s, admin, CommitTableVersion{Table: "lake.fin.events", Base: 1, Replace: true,
		Columns: []ColumnDef{{Name: "id", Type: "BIGINT"}}, Files: files}, ErrInvalidArgument)
	s = catalogtest.Apply(t, s, admin, CommitTableVersion{Table: "lake.fin.events", Base: 1, Replace: true,
		Columns: []ColumnDef{{Name: "id", Type: "BIGINT"}}, Files: files[:100000]})
	mustFail(t, s, admin, CommitTableVersion{Table: "lake.fin.events", Base: 2, Files: files[100000:]}, ErrInvalidArgument)
}

func TestRetention(t *testing.T) {
	s := versioned(t)
	const n = 20
	for i := 1; i <= n; i++ {
		c := CommitTableVersion{Table: "lake.fin.events", Base: uint64(i), Files: []DataFile{df("events", fmt.Sprintf("f%02d", i), 1)}}
		if i%5 == 0 {
			// A replace drops every earlier file from the new version.
			c.Replace, c.Columns = true, []ColumnDef{{Name: "id", Type: "BIGINT"}, {Name: "ssn", Type: "VARCHAR"}}
		}
		s = catalogtest.Apply(t, s, admin, c)
	}
	sid, vs, ok := s.TableVersions("lake.fin.events")
	if !ok || sid != "events" || len(vs) != RetainedVersions+1 {
		t.Fatalf("TableVersions = %q %d versions %v", sid, len(vs), ok)
	}
	for i, v := range vs {
		if v.Version != uint64(n+1-i) {
			t.Fatalf("versions not newest first: %d at %d", v.Version, i)
		}
	}
	if _, _, ok := s.TableVersion("lake.fin.events", n+1-RetainedVersions-1); ok {
		t.Fatal("pruned version still readable")
	}
	if _, v, ok := s.TableVersion("lake.fin.events", n+1-RetainedVersions); !ok || v.Version != n+1-RetainedVersions {
		t.Fatalf("oldest retained version: %+v %v", v, ok)
	}
	if _, _, ok := s.TableVersion("lake.fin.events", n+2); ok {
		t.Fatal("future version readable")
	}
	// Commit i makes version i+1. Retained versions are 13..21: 13 to 15
	// hold f10 (a replace) to f14, 16 to 20 f15 (a replace) to f19, and 21
	// only f20.
	ref := referenced(s)
	var got []string
	for p, sid := range ref {
		if sid == "events" {
			got = append(got, strings.TrimSuffix(strings.TrimPrefix(p, "tables/events/"), ".parquet"))
		}
	}
	slices.Sort(got)
	want := []string{"f10", "f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f20"}
	if !slices.Equal(got, want) {
		t.Fatalf("referenced %v, want %v", got, want)
	}
	checkRoundTrip(t, s)
}

// TestReferencedFilesOfRetainedVersions: every file of every retained
// version is referenced, also one that only the oldest version lists and
// one listed after a file a newer version shares (a garbage collector
// deletes what is not referenced).
func TestReferencedFilesOfRetainedVersions(t *testing.T) {
	cols := []ColumnDef{{Name: "id", Type: "BIGINT"}, {Name: "ssn", Type: "VARCHAR"}}
	// versioned's lake.fin.events is at version 1 with a/f1.
	cases := []struct {
		name    string
		commits []Command
		want    []string // under tables/events/, without .parquet
	}{
		{"a replaced version's files", []Command{
			CommitTableVersion{Table: "lake.fin.events", Base: 1, Replace: true, Columns: cols, Files: []DataFile{df("events", "b/g1", 1)}},
		}, []string{"a/f1", "b/g1"}},
		{"files after one a newer version shares", []Command{
			CommitTableVersion{Table: "lake.fin.events", Base: 1, Files: []DataFile{df("events", "a/f2", 1)}},
			CommitTableVersion{Table: "lake.fin.events", Base: 2, Replace: true, Columns: cols, Files: []DataFile{df("events", "a/f1", 10)}},
		}, []string{"a/f1", "a/f2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := catalogtest.Apply(t, versioned(t), admin, tc.commits...)
			var got []string
			for p, sid := range referenced(s) {
				if sid == "events" {
					got = append(got, strings.TrimSuffix(strings.TrimPrefix(p, "tables/events/"), ".parquet"))
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("referenced %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDataFileErrorQuotesPath: a refused data file's error quotes its path,
// cut after 80 bytes.
func TestDataFileErrorQuotesPath(t *testing.T) {
	// Refused for its suffix; prefix "tables/events/" and ".csv".
	path := func(n int) string {
		return "tables/events/" + strings.Repeat("a", n-len("tables/events/")-len(".csv")) + ".csv"
	}
	cases := []struct {
		path, quoted string
	}{
		{path(80), strconv.Quote(path(80))},
		{path(81), strconv.Quote(path(81)[:80] + "…")},
	}
	s := versioned(t)
	for _, tc := range cases {
		f := df("events", "x", 1)
		f.Path = tc.path
		_, _, err := Apply(s, CommitTableVersion{Table: "lake.fin.events", Base: 1, Files: []DataFile{f}}, catalogtest.Meta(s, admin))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "data file "+tc.quoted+": ") {
			t.Errorf("%d bytes: %v, want the path quoted as %s", len(tc.path), err, tc.quoted)
		}
	}
}

func TestCommitTableVersionPermission(t *testing.T) {
	s := catalogtest.Apply(t, versioned(t), admin, roles("bob", "reader"),
		grantTo("reader", Table("lake.fin.events"), PrivSelectTable, Allow))
	c := CommitTableVersion{Table: "lake.fin.events", Base: 1, Files: []DataFile{df("events", "b/1", 1)}}
	cases := []struct {
		name  string
		setup []Command
		actor string
		err   error
	}{
		{"reader without MODIFY_TABLE", nil, "bob", ErrForbidden},
		{"invisible table", nil, "alice", ErrNotFound},
		{"unknown user", nil, "mallory", ErrForbidden},
		{"MODIFY_TABLE on the table", []Command{grantTo("reader", Table("lake.fin.events"), PrivModifyTable, Allow)}, "bob", nil},
		{"MODIFY_TABLE on the schema", []Command{grantTo("reader", Schema("lake.fin"), PrivModifyTable, Allow)}, "bob", nil},
		{"MODIFY_TABLE denied", []Command{grantTo("reader", Schema("lake.fin"), PrivModifyTable, Allow),
			grantTo("denier", Table("lake.fin.events"), PrivModifyTable, Deny), roles("bob", "denier")}, "bob", ErrForbidden},
		{"table owner", []Command{SetOwner{Table("lake.fin.events"), Owner{OwnerUser, "bob"}}}, "bob", nil},
		{"metalake owner", nil, admin, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := catalogtest.Apply(t, s, admin, tc.setup...)
			if tc.err != nil {
				mustFail(t, s, tc.actor, c, tc.err)
				if err := Permit(s, tc.actor, c); !errors.Is(err, tc.err) {
					t.Fatalf("Permit = %v", err)
				}
				return
			}
			catalogtest.Apply(t, s, tc.actor, c)
		})
	}
}

func TestVersionsFollowTheTable(t *testing.T) {
	s := catalogtest.Apply(t, versioned(t), admin,
		CommitTableVersion{Table: "lake.fin.events", Base: 1, Files: []DataFile{df("events", "a/f2", 1)}})
	ref := referenced(s)
	if len(ref) != 2 || ref["tables/events/a/f1.parquet"] != "events" {
		t.Fatalf("referenced %v", ref)
	}
	// Rename and move keep the storage id and versions.
	s = catalogtest.Apply(t, s, admin, RenameObject{Object: Table("lake.fin.events"), NewName: "lake.hr.events2"})
	if sid, v, ok := s.TableVersion("lake.hr.events2", 2); !ok || sid != "events" || len(v.Files) != 2 {
		t.Fatalf("after rename: %q %+v %v", sid, v, ok)
	}
	if _, _, ok := s.TableVersion("lake.fin.events", 0); ok {
		t.Fatal("old name still has versions")
	}
	if !reflect.DeepEqual(referenced(s), ref) {
		t.Fatal("rename changed the referenced files")
	}
	// The storage id stays taken while the table lives.
	mustFail(t, s, admin, CreateTable{Name: "lake.fin.other", StorageID: "events"}, ErrAlreadyExists)
	// Dropping the table (here with its schema) unreferences its files and
	// frees its storage id.
	s = catalogtest.Apply(t, s, admin, DropObject{Object: Schema("lake.hr"), Cascade: true})
	if got := referenced(s); len(got) != 0 {
		t.Fatalf("referenced after drop: %v", got)
	}
	if _, _, ok := s.TableVersions("lake.hr.events2"); ok {
		t.Fatal("dropped table has versions")
	}
	s = catalogtest.Apply(t, s, admin, CreateTable{Name: "lake.fin.other", StorageID: "events"})
	checkRoundTrip(t, s)
}

func TestTableVersionOfPlainTable(t *testing.T) {
	s := base(t)
	sid, v, ok := s.TableVersion("lake.fin.ledger", 0)
	if !ok || sid == "" || v.Version != 0 || v.Files != nil || !equalJSON(v.Columns, []ColumnDef{{Name: "amount", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR"}}) {
		t.Fatalf("TableVersion = %q %+v %v", sid, v, ok)
	}
	if _, _, ok := s.TableVersion("lake.fin.ledger", 1); ok {
		t.Fatal("version 1 of a table without data")
	}
	if sid2, vs, ok := s.TableVersions("lake.fin.ledger"); !ok || sid2 != sid || len(vs) != 0 {
		t.Fatalf("TableVersions = %q %v %v", sid2, vs, ok)
	}
	for _, name := range []string{"lake.fin.nope", "lake.fin", "a.b.c.d"} {
		if _, _, ok := s.TableVersion(name, 0); ok {
			t.Fatalf("TableVersion(%q) found", name)
		}
		if _, _, ok := s.TableVersions(name); ok {
			t.Fatalf("TableVersions(%q) found", name)
		}
	}
	if got := referenced(s); len(got) != 0 {
		t.Fatalf("referenced %v", got)
	}
	// Column DDL after a commit changes the table, not the committed version;
	// the next commit records the table's columns.
	s = catalogtest.Apply(t, s, admin,
		CommitTableVersion{Table: "lake.fin.ledger", Base: 0},
		AddColumn{Table: "lake.fin.ledger", Column: ColumnDef{Name: "extra", Type: "INT"}})
	if _, v, _ := s.TableVersion("lake.fin.ledger", 1); len(v.Columns) != 2 {
		t.Fatalf("version 1 columns %v", v.Columns)
	}
	s = catalogtest.Apply(t, s, admin, CommitTableVersion{Table: "lake.fin.ledger", Base: 1})
	if _, v, _ := s.TableVersion("lake.fin.ledger", 2); len(v.Columns) != 3 {
		t.Fatalf("version 2 columns %v", v.Columns)
	}
}

// checkRoundTrip restores s from its bytes and compares bytes and versions.
func checkRoundTrip(t *testing.T, s *Snapshot) {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalSnapshot(b)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	b2, _ := r.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
	if !reflect.DeepEqual(referenced(s), referenced(r)) {
		t.Fatal("restored snapshot references other files")
	}
	for _, tb := range []string{"lake.fin.ledger", "lake.fin.budget", "lake.fin.events", "lake.hr.people", "lake.fin.t"} {
		sid1, v1, ok1 := s.TableVersions(tb)
		sid2, v2, ok2 := r.TableVersions(tb)
		if sid1 != sid2 || ok1 != ok2 || !reflect.DeepEqual(v1, v2) {
			t.Fatalf("%s: restored versions differ:\n%+v\n%+v", tb, v1, v2)
		}
	}
}

// v1FixtureCommands built testdata/snapshot-v1.bin with the format 1 code.
func v1FixtureCommands() []Command {
	return []Command{
		CreateUser{"bob"},
		CreateCatalog{Name: "lake", Type: "managed"},
		CreateSchema{Name: "lake.fin"},
		CreateTable{Name: "lake.fin.ledger", Columns: []ColumnDef{{Name: "amount", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR", Nullable: true}}},
		CreateTable{Name: "lake.fin.budget", Columns: []ColumnDef{{Name: "amount", Type: "BIGINT"}}},
		CreateTag{Name: "pii", AllowedValues: nil},
		AssociateTagsV2{Object: Column("lake.fin.ledger.card"), TagsToAdd: []TagValue{{Name: "pii"}}},
		CreateRole{Name: "writer", Grants: []Grant{{Table("lake.fin.ledger"), PrivModifyTable, Allow}}},
		GrantRoles{Grantee: Owner{OwnerUser, "bob"}, Roles: []string{"writer"}},
	}
}

func TestOldFormats(t *testing.T) {
	old, err := os.ReadFile("testdata/snapshot-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalSnapshot(old)
	if err != nil {
		t.Fatalf("format 1 snapshot: %v", err)
	}
	s := catalogtest.Apply(t, catalogtest.New(t, "acme", admin), admin, v1FixtureCommands()...)
	b1, _ := r.MarshalBinary()
	b2, _ := s.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Fatalf("format 1 snapshot restores differently from replaying its commands:\n%s\n%s", b1, b2)
	}
	sid, v, ok := r.TableVersion("lake.fin.ledger", 0)
	if !ok || sid != "t0000000000000004" || v.Version != 0 {
		t.Fatalf("format 1 table: %q %+v %v", sid, v, ok)
	}
	// The restored snapshot takes commits like a new one.
	r = catalogtest.Apply(t, r, admin, CommitTableVersion{Table: "lake.fin.ledger", Base: 0, Files: []DataFile{df(sid, "f", 1)}})
	checkRoundTrip(t, r)
	// Format 1 cannot carry table data.
	bad := bytes.Replace(old, []byte(`"name":"budget",`), []byte(`"name":"budget","storageId":"x",`), 1)
	if _, err := UnmarshalSnapshot(bad); !errors.Is(err, ErrInvalidSnapshot) {
		t.Fatalf("format 1 with a storage id: %v", err)
	}
	// Format 1 commands decode as before.
	c, err := DecodeCommand([]byte(`{"v":1,"type":3,"body":{"name":"c.s.t","columns":[{"name":"a","type":"INT","nullable":true}]}}`))
	if err != nil || !reflect.DeepEqual(c, CreateTable{Name: "c.s.t", Columns: []ColumnDef{{Name: "a", Type: "INT", Nullable: true}}}) {
		t.Fatalf("old CreateTable = %#v, %v", c, err)
	}
	if b, _ := EncodeCommand(c); string(b) != `{"v":1,"type":3,"body":{"name":"c.s.t","columns":[{"name":"a","type":"INT","nullable":true}]}}` {
		t.Fatalf("old CreateTable re-encodes as %s", b)
	}
}

func TestSnapshotRestoreRejectsBadVersions(t *testing.T) {
	s := versioned(t)
	b, _ := s.MarshalBinary()
	ledger, _, _ := s.TableVersion("lake.fin.ledger", 0)
	for name, edit := range map[string][2]string{
		"bad storage id":       {`"storageId":"events"`, `"storageId":"Events"`},
		"duplicate storage id": {`"storageId":"events"`, `"storageId":"` + ledger + `"`},
		"file outside":         {`"path":"tables/events/a/f1.parquet"`, `"path":"tables/other/a/f1.parquet"`},
		"rows mismatch":        {`"rows":10,"actor"`, `"rows":11,"actor"`},
		"version zero":         {`"version":1,"columns":[{"name":"id"`, `"version":0,"columns":[{"name":"id"`},
	} {
		bad := bytes.Replace(b, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(bad, b) {
			t.Fatalf("%s: edit did not apply", name)
		}
		if _, err := UnmarshalSnapshot(bad); !errors.Is(err, ErrInvalidSnapshot) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCommitTableVersionCodec(t *testing.T) {
	for _, c := range []Command{
		CommitTableVersion{Table: "a.b.c"},
		CommitTableVersion{Table: "a.b.c", Files: []DataFile{}},
		CommitTableVersion{Table: "a.b.c", Base: 1 << 60, Replace: true, Columns: []ColumnDef{{Name: "x", Type: "INT", Comment: "c", Nullable: true}},
			Files: []DataFile{df("s", "x/y", 3)}},
		CreateTable{Name: "a.b.c", StorageID: "s"},
		CreateTable{Name: "a.b.c", Files: []DataFile{}},
		CreateTable{Name: "a.b.c", StorageID: "s", Files: []DataFile{df("s", "x", 1)}},
	} {
		b, err := EncodeCommand(c)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodeCommand(b)
		if err != nil || !reflect.DeepEqual(d, c) {
			t.Fatalf("round trip of %s = %#v, %v", b, d, err)
		}
		if b2, _ := EncodeCommand(d); !bytes.Equal(b, b2) {
			t.Fatalf("re-encoding differs: %s vs %s", b, b2)
		}
		// The general decoder agrees with the one-pass one.
		spaced := append([]byte(" "), b...)
		if d2, err := DecodeCommand(spaced); err != nil || !reflect.DeepEqual(d2, c) {
			t.Fatalf("general decode of %s = %#v, %v", spaced, d2, err)
		}
	}
	if _, err := DecodeCommand([]byte(`{"v":1,"type":32,"body":{"table":"a.b.c","base":1,"files":[{"path":"x","size":1,"rows":1,"sha256":"", "bogus":1}]}}`)); !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("unknown data file field: %v", err)
	}
}

func TestGenerateWithVersions(t *testing.T) {
	cfg := catalogtest.Config{Catalogs: 1, SchemasPerCatalog: 2, TablesPerSchema: 3, ColumnsPerTable: 2,
		Tags: 2, ValuesPerTag: 2, Policies: 2, Roles: 2, Grants: 10, Users: 3, Groups: 1,
		VersionedTables: 4, CommitsPerTable: 13}
	s := catalogtest.Generate(t, cfg)
	sid, vs, ok := s.TableVersions(catalogtest.TableName(0, 0, 0))
	if !ok || sid != catalogtest.StorageID(0) || len(vs) != RetainedVersions+1 || vs[0].Version != 14 {
		t.Fatalf("TableVersions = %q %d %v", sid, len(vs), ok)
	}
	// Versions 6..14: commit 12 replaced, so 6..13 reference f4..f12 and 14
	// adds f13.
	if got := len(referenced(s)); got != 4*10 {
		t.Fatalf("%d referenced files, want 40", got)
	}
	if _, v, _ := s.TableVersion(catalogtest.TableName(0, 1, 0), 0); v.Version != 14 {
		t.Fatalf("fourth versioned table at %d", v.Version)
	}
	if _, v, _ := s.TableVersion(catalogtest.TableName(0, 1, 1), 0); v.Version != 0 {
		t.Fatalf("fifth table at %d", v.Version)
	}
	checkSnapshotBytes(t, s)
}

func checkSnapshotBytes(t *testing.T, s *Snapshot) {
	t.Helper()
	b, _ := s.MarshalBinary()
	r, err := UnmarshalSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := r.MarshalBinary(); !bytes.Equal(b, b2) || !reflect.DeepEqual(referenced(s), referenced(r)) {
		t.Fatal("round trip differs")
	}
}
