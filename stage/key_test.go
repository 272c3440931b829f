package stage_test

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"lakegate/stage"
	"lakegate/stage/stagetest"
)

func TestCheckKey(t *testing.T) {
	const child = "prod/tenants/a"
	cases := []struct {
		full   string
		prefix bool  // CheckPrefix instead of CheckKey
		want   error // nil, ErrInvalidKey or ErrOutsideStage
	}{
		{child + "/x", false, nil},
		{child + "/tables/t/1/part-0.parquet", false, nil},
		{child + "/date=2024-01-01/f_1.parquet", false, nil},
		{child + "/", false, stage.ErrInvalidKey},
		{child + "/", true, nil},
		{child + "/tables/", true, nil},
		{child + "/tables//", true, stage.ErrInvalidKey},
		{child + "/../b/x", true, stage.ErrInvalidKey},
		{child, false, stage.ErrOutsideStage},
		{child + "b/x", false, stage.ErrOutsideStage},
		{"prod/tenants/ab/x", false, stage.ErrOutsideStage},
		{"prod/tenants/b/x", false, stage.ErrOutsideStage},
		{"/" + child + "/x", false, stage.ErrOutsideStage},
		{child + "/" + strings.Repeat("x", stage.MaxKeyLen), false, stage.ErrInvalidKey},
	}
	for _, c := range cases {
		check := stage.CheckKey
		if c.prefix {
			check = stage.CheckPrefix
		}
		err := check(child, c.full)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("check(%q, prefix=%v) = %v, want %v", c.full, c.prefix, err, c.want)
		}
	}
	for _, k := range stagetest.BadKeys {
		if err := stage.CheckKey(child, child+"/"+k); err == nil {
			t.Errorf("CheckKey accepted bad key %s", stage.SafeKey(k))
		}
	}
}

func TestPathErrorIsSafeToLog(t *testing.T) {
	d := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{Bucket: "lake", Prefix: "p"}}
	key := "x\x00\n\u2215" + strings.Repeat("y", 4000)
	_, err := d.Key(key) // the bare check error; stores wrap it like this:
	pe := &stage.PathError{Op: "get", Key: key, Err: err}
	msg := pe.Error()
	if len(msg) > 400 || strings.ContainsAny(msg, "\x00\n\u2215") || !utf8.ValidString(msg) {
		t.Fatalf("unsafe message (%d bytes): %q", len(msg), msg)
	}
	if !errors.Is(pe, stage.ErrInvalidKey) {
		t.Fatalf("%v does not wrap ErrInvalidKey", pe)
	}
}

// FuzzCheckKey: whatever CheckKey accepts is under the child prefix, has
// no "." or ".." segment, is already clean, and re-validates; and
// Descriptor.Key agrees with CheckKey.
func FuzzCheckKey(f *testing.F) {
	for _, k := range stagetest.BadKeys {
		f.Add(k)
	}
	for _, k := range []string{"x", "a/b/c", "tables/t/1/part-0.parquet", "date=2024/x", "a..b", "a.", "a/b."} {
		f.Add(k)
	}
	const child = "prod/tenants/a"
	d := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{Bucket: "lake", Prefix: child}}
	f.Fuzz(func(t *testing.T, rel string) {
		full, err := d.Key(rel)
		if err2 := stage.CheckKey(child, child+"/"+rel); (err == nil) != (err2 == nil) {
			t.Fatalf("Key and CheckKey disagree on %q: %v vs %v", rel, err, err2)
		}
		if err != nil {
			if !errors.Is(err, stage.ErrInvalidKey) && !errors.Is(err, stage.ErrOutsideStage) {
				t.Fatalf("%q: unexpected error %v", rel, err)
			}
			return
		}
		if !strings.HasPrefix(full, child+"/") || len(full) > stage.MaxKeyLen {
			t.Fatalf("%q: accepted %q outside the prefix or too long", rel, full)
		}
		for _, seg := range strings.Split(full[len(child)+1:], "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%q: accepted segment %q", rel, seg)
			}
		}
		if path.Clean(full) != full || path.Clean("/"+rel) != "/"+rel {
			t.Fatalf("%q: accepted an unclean key", rel)
		}
		if strings.ContainsAny(rel, "\\%\x00") || !utf8.ValidString(rel) {
			t.Fatalf("%q: accepted a dangerous byte", rel)
		}
		for _, r := range rel {
			if r >= utf8.RuneSelf || r < 0x20 || r == 0x7f {
				t.Fatalf("%q: accepted non-ASCII or control rune %U", rel, r)
			}
		}
		if err := stage.CheckKey(child, full); err != nil {
			t.Fatalf("%q: accepted key does not re-validate: %v", rel, err)
		}
		if err := stage.CheckPrefix(child, full); err != nil {
			t.Fatalf("%q: accepted key is not a valid prefix: %v", rel, err)
		}
	})
}
