package stage_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"lakegate/stage"
	"lakegate/stage/stagetest"
)

func TestCollectOrphans(t *testing.T) {
	const (
		seg        = "0123456789abcdef0123456789abcdef"
		referenced = "tables/t1/" + seg + "/part-0.parquet"
		orphan     = "tables/t1/" + seg + "/part-1.parquet"
		notLayout  = "tables/t1/notes.txt"
		elsewhere  = "other/part-0.parquet"
	)
	for _, b := range []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			st := b.Open(t, "acme")
			for _, k := range []string{referenced, orphan, notLayout, elsewhere} {
				if _, err := st.Put(ctx, k, strings.NewReader("x"), 1); err != nil {
					t.Fatal(err)
				}
			}
			var upload string
			if b.StartUpload != nil {
				upload = b.StartUpload(t, "tenants/acme/tables/t1/"+seg+"/part-2.parquet")
			}
			calls := 0
			refs := func(context.Context) (map[string]bool, error) {
				calls++
				return map[string]bool{referenced: true}, nil
			}
			all := func() []string {
				keys, err := st.List(ctx, "", "", 0)
				if err != nil {
					t.Fatal(err)
				}
				return keys
			}

			// Within the grace period nothing goes.
			rep, err := stage.CollectOrphans(ctx, st, refs, time.Now().Add(-time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if want := (stage.CollectReport{Scanned: 2, Young: 1}); rep != want {
				t.Fatalf("report = %+v, want %+v", rep, want)
			}
			if got := all(); len(got) != 4 {
				t.Fatalf("keys after a young collection: %v", got)
			}

			// Past it, only the unreferenced table file (and the abandoned
			// upload) goes.
			rep, err = stage.CollectOrphans(ctx, st, refs, time.Now().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			want := stage.CollectReport{Scanned: 2, Deleted: 1}
			if upload != "" {
				want.Aborted = 1
			}
			if rep != want {
				t.Fatalf("report = %+v, want %+v", rep, want)
			}
			if got, want := all(), []string{elsewhere, referenced, notLayout}; !slices.Equal(got, want) {
				t.Fatalf("keys = %v, want %v", got, want)
			}
			if up, ok := st.(stage.Uploads); ok {
				open, err := up.ListUploads(ctx, "")
				if err != nil || len(open) != 0 {
					t.Fatalf("uploads left open: %v %v", open, err)
				}
			}
			if calls != 2 {
				t.Fatalf("referenced called %d times, want once per collection", calls)
			}

			// A failing reference lookup deletes nothing.
			boom := errors.New("metasrv down")
			_, err = stage.CollectOrphans(ctx, st, func(context.Context) (map[string]bool, error) { return nil, boom },
				time.Now().Add(time.Hour))
			if !errors.Is(err, boom) || len(all()) != 3 {
				t.Fatalf("err = %v, keys %v", err, all())
			}
		})
	}
}

func TestIsTableFile(t *testing.T) {
	const seg = "0123456789abcdef0123456789abcdef"
	for key, want := range map[string]bool{
		"tables/t1/" + seg + "/part-0.parquet":                               true,
		"tables/" + strings.Repeat("a", 64) + "/" + seg + "/part-12.parquet": true,
		"tables/" + strings.Repeat("a", 65) + "/" + seg + "/part-1.parquet":  false,
		"tables/t1-/" + seg + "/part-0.parquet":                              false,
		"tables/t1/" + seg + "/part-01.parquet":                              false,
		"tables/t1/" + seg + "/part-0.parquet.tmp":                           false,
		"tables/t1/" + strings.ToUpper(seg) + "/part-0.parquet":              false,
		"tables/t1/../" + seg + "/part-0.parquet":                            false,
		"x/tables/t1/" + seg + "/part-0.parquet":                             false,
	} {
		if got := stage.IsTableFile(key); got != want {
			t.Errorf("IsTableFile(%q) = %v, want %v", key, got, want)
		}
	}
}
