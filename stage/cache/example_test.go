package cache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"lakegate/stage"
	"lakegate/stage/cache"
)

func Example() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "cache-example")
	defer os.RemoveAll(tmp)

	// The tenant's stage (here a local directory; S3 in production).
	root := stage.Descriptor{Version: 1, Local: &stage.LocalDescriptor{Root: filepath.Join(tmp, "stage")}}
	_ = os.MkdirAll(root.Local.Root, 0o700)
	child, _ := root.ForTenant("acme")
	st, err := stage.OpenLocal(child)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	info, _ := st.Put(ctx, "tables/t1/1/part-0.parquet", strings.NewReader("PAR1..."), 7)

	c, err := cache.Open(cache.Config{Dir: filepath.Join(tmp, "cache", "acme")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	f := cache.File{Key: info.Key, Size: info.Size, SHA256: info.SHA256}
	for range 2 {
		paths, release, err := c.Acquire(ctx, st, []cache.File{f})
		if err != nil {
			fmt.Println(err)
			return
		}
		data, _ := os.ReadFile(paths[0])
		fmt.Printf("%s in %s\n", data, filepath.Base(filepath.Dir(paths[0])))
		release()
	}
	s := c.Stats()
	fmt.Println("hits", s.Hits, "misses", s.Misses, "files", s.Files, "bytes", s.Bytes)

	// A wrong checksum is refused and nothing is kept.
	f.SHA256 = strings.Repeat("0", 64)
	_, _, err = c.Acquire(ctx, st, []cache.File{f})
	fmt.Println(err)
	// Output:
	// PAR1... in acme
	// PAR1... in acme
	// hits 1 misses 1 files 1 bytes 7
	// cache: fetch "tables/t1/1/part-0.parquet": cache: checksum mismatch: SHA-256 of the fetched bytes differs
}
