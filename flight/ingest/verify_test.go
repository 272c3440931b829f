package ingest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"lakegate/flight/ingest"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// TestVerify: files are committed only as they were written — present,
// under the table's storage id, of the size (and, where the store keeps
// one, the SHA-256) the writer reported.
func TestVerify(t *testing.T) {
	backends(t, func(t *testing.T, _ *stagetest.Backend, st stage.Store) {
		ctx := t.Context()
		rec := mixedBatch(t, memory.DefaultAllocator, 0, 100)
		defer rec.Release()
		files, _, err := ingest.Copy(ctx, newConfig(t, st, mixed), mustReader(t, mixed, rec))
		if err != nil || len(files) != 1 {
			t.Fatalf("copy: %v %v", files, err)
		}
		info, err := st.Stat(ctx, files[0].Key)
		if err != nil {
			t.Fatal(err)
		}
		with := func(change func(*ingest.File)) []ingest.File {
			f := files[0]
			change(&f)
			return []ingest.File{f}
		}
		cases := []struct {
			name    string
			storage string
			files   []ingest.File
			ok      bool
		}{
			{"as written", storageID, files, true},
			{"no files", storageID, nil, true},
			{"another size", storageID, with(func(f *ingest.File) { f.Size++ }), false},
			{"another SHA-256", storageID, with(func(f *ingest.File) { f.SHA256 = strings.Repeat("0", 64) }), info.SHA256 == ""},
			{"another table's storage id", "t-0002", files, false},
			{"not a layout key", storageID, with(func(f *ingest.File) { f.Key = "tables/" + storageID + "/x.parquet" }), false},
			{"missing", storageID, with(func(f *ingest.File) { f.Key = strings.Replace(f.Key, "part-0", "part-1", 1) }), false},
			{"invalid storage id", "../x", files, false},
		}
		for _, tc := range cases {
			err := ingest.Verify(ctx, st, tc.storage, tc.files)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ingest.ErrNotAsWritten)) {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
	})
}
