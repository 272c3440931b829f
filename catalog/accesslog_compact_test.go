package catalog_test

import (
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// TestCommitAccessLogCompact: a compaction's commit replaces exactly the
// files it merged by the merged file. Every file it replaces must be in
// the current version and the merged files must hold exactly their
// events: a second compaction of the same files (another gateway, or a
// retry after an unknown outcome), one racing retention, or one that
// counts other events is refused, so no event is ever doubled or lost.
// A flush committed between the compaction's listing and its commit
// stays.
func TestCommitAccessLogCompact(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "a", 1)}},
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "b", 2)}},
		CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "c", 4)}})
	ab := []string{alFile("al1", "a", 0).Path, alFile("al1", "b", 0).Path}
	compact := CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Compact: true,
		Files: []DataFile{alFile("al1", "m", 3)}, Expire: ab}
	// A flush lands after the compaction listed a, b, c.
	s = catalogtest.Apply(t, s, admin, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns, Files: []DataFile{alFile("al1", "d", 8)}})
	n := catalogtest.Apply(t, s, admin, compact)
	_, v, _ := n.TableVersion("lake.system.access_events", 0)
	var got []string
	for _, f := range v.Files {
		got = append(got, strings.TrimSuffix(strings.TrimPrefix(f.Path, "tables/al1/seg/"), ".parquet"))
	}
	if !slices.Equal(got, []string{"c", "d", "m"}) || v.Rows != 15 || v.Version != 5 {
		t.Fatalf("after compaction: version %d files %v rows %d, want c d m and 15 rows", v.Version, got, v.Rows)
	}

	expired := catalogtest.Apply(t, s, admin, CommitAccessLog{Catalog: "lake", StorageID: "al1", Columns: alColumns,
		Files: []DataFile{alFile("al1", "e", 1)}, Expire: ab[:1]})
	for _, tc := range []struct {
		name string
		snap *Snapshot
		cmd  CommitAccessLog
		want error
	}{
		{"the same files compacted again", n, func() CommitAccessLog {
			c := compact
			c.Files = []DataFile{alFile("al1", "m2", 3)}
			return c
		}(), ErrVersionConflict},
		{"a file retention expired meanwhile", expired, compact, ErrVersionConflict},
		{"a path the table never had", s, func() CommitAccessLog {
			c := compact
			c.Expire = append(slices.Clone(ab), "tables/al1/seg/zz.parquet")
			return c
		}(), ErrVersionConflict},
		{"fewer events than the files replaced", s, func() CommitAccessLog {
			c := compact
			c.Files = []DataFile{alFile("al1", "m", 2)}
			return c
		}(), ErrInvalidArgument},
		{"more events than the files replaced", s, func() CommitAccessLog {
			c := compact
			c.Files = []DataFile{alFile("al1", "m", 4)}
			return c
		}(), ErrInvalidArgument},
		{"nothing replaced", s, func() CommitAccessLog {
			c := compact
			c.Expire = nil
			return c
		}(), ErrInvalidArgument},
		{"a path named twice", s, func() CommitAccessLog {
			c := compact
			c.Expire = append(slices.Clone(ab), ab[0])
			return c
		}(), ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustFail(t, tc.snap, admin, tc.cmd, tc.want)
		})
	}
}
