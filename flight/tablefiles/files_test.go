package tablefiles_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lakegate/flight/backend"
	"lakegate/flight/tablefiles"
	"lakegate/stage"
	"lakegate/stage/stagetest"
)

const seg = "0123456789abcdef0123456789abcdef"

// put stores data at key in the tenant's child stage and returns the
// committed-file record for it.
func put(t *testing.T, st stage.Store, key, data string) backend.DataFile {
	t.Helper()
	info, err := st.Put(context.Background(), key, strings.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(data))
	if info.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("store checksum %s", info.SHA256)
	}
	return backend.DataFile{Key: key, Size: int64(len(data)), Rows: 1, SHA256: info.SHA256}
}

func version(files ...backend.DataFile) []backend.TableVersion {
	return []backend.TableVersion{{Name: backend.TableName{Schema: "s", Name: "t"}, StorageID: "t1", Version: 1,
		Columns: []backend.Column{{Name: "id", Type: "int64"}}, Files: files}}
}

func TestLocalStage(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	desc := stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: root}}
	f, err := tablefiles.New(tablefiles.Config{Stage: desc, EngineRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Store(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	good := put(t, st, "tables/t1/"+seg+"/part-0.parquet", "good")
	other, err := f.Store(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	put(t, other, "tables/t1/"+seg+"/part-0.parquet", "secret")

	local, release, err := f.Acquire(ctx, "acme", version(good))
	if err != nil {
		t.Fatal(err)
	}
	release()
	want := filepath.Join(root, "tenants", "acme", "tables", "t1", seg, "part-0.parquet")
	if len(local) != 1 || local[0].ID != "t1@1" || len(local[0].Paths) != 1 || local[0].Paths[0] != want {
		t.Fatalf("local = %+v, want path %s", local, want)
	}

	// A symlink at a committed key that leads to another tenant's file.
	link := "tables/t1/" + seg + "/part-1.parquet"
	if err := os.Symlink(filepath.Join(root, "tenants", "other", "tables", "t1", seg, "part-0.parquet"),
		filepath.Join(root, "tenants", "acme", filepath.FromSlash(link))); err != nil {
		t.Fatal(err)
	}
	for name, df := range map[string]backend.DataFile{
		"symlink":      {Key: link, Size: 6, SHA256: good.SHA256},
		"wrong size":   {Key: good.Key, Size: good.Size + 1, SHA256: good.SHA256},
		"missing":      {Key: "tables/t1/" + seg + "/part-9.parquet", Size: 1, SHA256: good.SHA256},
		"dot-dot":      {Key: "tables/../../other/tables/t1/" + seg + "/part-0.parquet", Size: 6, SHA256: good.SHA256},
		"absolute":     {Key: "/etc/passwd", Size: 1, SHA256: good.SHA256},
		"other tenant": {Key: "../other/tables/t1/" + seg + "/part-0.parquet", Size: 6, SHA256: good.SHA256},
	} {
		if _, _, err := f.Acquire(ctx, "acme", version(good, df)); !errors.Is(err, tablefiles.ErrFile) {
			t.Errorf("%s: err = %v, want ErrFile", name, err)
		} else if strings.Contains(err.Error(), root) {
			t.Errorf("%s: the error names a local path: %v", name, err)
		}
	}
}

func TestS3StageThroughCache(t *testing.T) {
	ctx := context.Background()
	b := stagetest.S3(t)
	engineRoot := t.TempDir()
	st := b.Open(t, "acme")
	good := put(t, st, "tables/t1/"+seg+"/part-0.parquet", "parquet bytes")

	cfg := tablefiles.Config{Stage: b.Root, EngineRoot: engineRoot}
	// The stage's own transport and credentials come from the backend; the
	// test opens stores through Files, so give it the same configuration.
	cfg.S3 = b.Config
	f, err := tablefiles.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	local, release, err := f.Acquire(ctx, "acme", version(good))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	p := local[0].Paths[0]
	if !strings.HasPrefix(p, filepath.Join(engineRoot, "tenants", "acme", "cache")+string(filepath.Separator)) {
		t.Fatalf("cached at %s, outside the tenant's cache directory", p)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != "parquet bytes" {
		t.Fatalf("cached file: %q %v", data, err)
	}
	bad := good
	bad.SHA256 = strings.Repeat("0", 64)
	bad.Key = "tables/t1/" + seg + "/part-0.parquet"
	if _, _, err := f.Acquire(ctx, "acme", version(bad)); !errors.Is(err, tablefiles.ErrFile) {
		t.Fatalf("a file that fails its committed checksum: %v", err)
	}
}
