package duckdb_test

import (
	"context"
	"os"
	"testing"

	"lakegate/flight/backend"
)

// TestMaterializeDefault: by default a version of at most 1 MiB
// (DefaultMaterializeBytes) is copied into memory and a larger one is read
// from its files, whose Parquet reader filters a dictionary-encoded column
// once per dictionary entry (TPC-H's part, 4 MB, answered q16 1.2–1.3×
// slower copied).
func TestMaterializeDefault(t *testing.T) {
	e, _ := newEngine(t)
	for _, c := range []struct {
		id, query string
		copied    bool
	}{
		{"small@1", "SELECT range AS id, md5(range::VARCHAR) AS h FROM range(1000)", true},
		{"large@1", "SELECT range AS id, md5(range::VARCHAR) || md5((-range)::VARCHAR) AS h FROM range(60000)", false},
	} {
		t.Run(c.id, func(t *testing.T) {
			p := writeFile(t, e, "t1", c.id[:len(c.id)-2], c.query)
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			// The large version is the size of TPC-H's part at SF 1.
			if small := fi.Size() <= 1<<20; small != c.copied || fi.Size() > 4<<20 {
				t.Fatalf("the file is %d bytes: the case needs one on the other side of 1 MiB, below 4 MiB", fi.Size())
			}
			if _, err := e.Bind(context.Background(), "t1", []backend.LocalTable{{ID: c.id, Paths: []string{p}}}); err != nil {
				t.Fatal(err)
			}
			if got := e.InMemory("t1", []string{c.id}); got != c.copied {
				t.Errorf("InMemory = %v, want %v (file %d bytes)", got, c.copied, fi.Size())
			}
		})
	}
}
