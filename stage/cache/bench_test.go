package cache_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"lakegate/localstack/standin"
	"lakegate/stage"
	"lakegate/stage/cache"
)

// standinStore is stagetest.S3 for benchmarks (which it cannot take): the
// in-process S3 stand-in on 127.0.0.1:0, tenant "acme" of a random prefix.
func standinStore(b *testing.B) stage.Store {
	b.Helper()
	srv, err := standin.Start(context.Background(), standin.Config{Buckets: []string{"lakegate"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	root := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{
		Bucket: "lakegate", Prefix: "bench-" + hex.EncodeToString(rnd[:]), Region: "us-east-1", Endpoint: srv.URL(), PathStyle: true,
	}}
	child, err := root.ForTenant("acme")
	if err != nil {
		b.Fatal(err)
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	st, err := stage.OpenS3(context.Background(), child, stage.Config{AWS: &cfg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// BenchmarkAcquire64MiB: a 64 MiB file from the S3 stand-in, cold (every
// iteration a fresh cache directory: Get, hash, write, fsync, rename) and
// warm (already cached: lookup and pin).
func BenchmarkAcquire64MiB(b *testing.B) {
	st := standinStore(b)
	data := make([]byte, 64<<20)
	_, _ = rand.Read(data)
	f := put(b, st, "tables/big/1/part-0.parquet", data)

	b.Run("cold", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			b.StopTimer()
			dir, err := os.MkdirTemp(b.TempDir(), "cold")
			if err != nil {
				b.Fatal(err)
			}
			c, err := cache.Open(cache.Config{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			_, rel, err := c.Acquire(b.Context(), st, []cache.File{f})
			if err != nil {
				b.Fatal(err)
			}
			rel()
			b.StopTimer()
			c.Close()
			os.RemoveAll(dir)
			b.StartTimer()
		}
	})
	b.Run("warm", func(b *testing.B) {
		c, err := cache.Open(cache.Config{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		_, rel, err := c.Acquire(b.Context(), st, []cache.File{f})
		if err != nil {
			b.Fatal(err)
		}
		rel()
		b.SetBytes(int64(len(data)))
		b.ResetTimer()
		for b.Loop() {
			_, rel, err := c.Acquire(b.Context(), st, []cache.File{f})
			if err != nil {
				b.Fatal(err)
			}
			rel()
		}
	})
}
