package flight

import (
	"context"
	"errors"
	"testing"

	"lakegate/flight/backend"
)

// memBackend is an engine that reports every version in memory and may
// have dropped it by the time Bind is called.
type memBackend struct {
	backend.Backend
	dropped bool       // Bind refuses versions asked for as in memory
	binds   [][]string // the Paths of each Bind, per version
}

func (b *memBackend) InMemory(string, []string) bool { return true }

func (b *memBackend) Bind(_ context.Context, _ string, tables []backend.LocalTable) ([]backend.Relation, error) {
	out := make([]backend.Relation, len(tables))
	for i, lt := range tables {
		if lt.InMemory && b.dropped {
			return nil, backend.ErrNotInMemory
		}
		b.binds = append(b.binds, lt.Paths)
		out[i] = backend.Relation{Schema: "lg_rel", Name: "v_" + lt.ID}
	}
	return out, nil
}

// countingFiles makes every file "local" at /files/<key> and counts the
// Acquire calls and releases.
type countingFiles struct {
	TableFiles
	acquired, released int
}

func (f *countingFiles) Acquire(_ context.Context, _ string, versions []backend.TableVersion) ([]backend.LocalTable, func(), error) {
	f.acquired++
	out := make([]backend.LocalTable, len(versions))
	for i, v := range versions {
		out[i] = backend.LocalTable{ID: v.ID(), Columns: v.Columns}
		for _, df := range v.Files {
			out[i].Paths = append(out[i].Paths, "/files/"+df.Key)
		}
	}
	return out, func() { f.released++ }, nil
}

// TestLocalizeInMemory: versions the engine holds in memory are bound
// without their files; one dropped in between is bound from its files.
func TestLocalizeInMemory(t *testing.T) {
	versions := []backend.TableVersion{{Name: backend.TableName{Schema: "sales", Name: "orders"}, StorageID: "s1", Version: 2,
		Files: []backend.DataFile{{Key: "tables/s1/f.parquet", Size: 10}}}}
	for _, c := range []struct {
		name         string
		dropped      bool
		wantAcquired int
		wantPaths    []string
	}{
		{"held", false, 0, nil},
		{"dropped in between", true, 1, []string{"/files/tables/s1/f.parquet"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, f := &memBackend{dropped: c.dropped}, &countingFiles{}
			pn := &planner{engine: b, files: f}
			rels, release, err := pn.localize(context.Background(), "acme", versions)
			if err != nil {
				t.Fatal(err)
			}
			release()
			if len(rels) != 1 || rels[0].Name != "v_"+versions[0].ID() {
				t.Errorf("relations %v", rels)
			}
			if f.acquired != c.wantAcquired || f.released != c.wantAcquired {
				t.Errorf("files acquired %d, released %d; want %d", f.acquired, f.released, c.wantAcquired)
			}
			if len(b.binds) != 1 || len(b.binds[0]) != len(c.wantPaths) || (len(c.wantPaths) > 0 && b.binds[0][0] != c.wantPaths[0]) {
				t.Errorf("bound with paths %v, want %v", b.binds, c.wantPaths)
			}
			if errors.Is(err, backend.ErrNotInMemory) {
				t.Error("ErrNotInMemory reached the caller")
			}
		})
	}
}
