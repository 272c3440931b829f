package stage_test

import (
	"errors"
	"strings"
	"testing"

	"lakegate/stage"
	"lakegate/stage/stagetest"
)

// The tests in this file each close mutants of the stage package that the
// rest of the suite let survive (docs/testing.md).

// TestKeyLengthBounds checks both length limits at the limit and one past
// it, for keys and list prefixes.
func TestKeyLengthBounds(t *testing.T) {
	const child = "/stages/acme"
	seg := func(n int) string { return strings.Repeat("s", n) }
	// rel of n bytes in segments of at most MaxSegmentLen.
	rel := func(n int) string {
		var parts []string
		for n > 0 {
			k := min(n, stage.MaxSegmentLen)
			if n-k == 1 { // keep the last segment non-empty after its '/'
				k--
			}
			parts = append(parts, seg(k))
			n -= k + 1
		}
		return strings.Join(parts, "/")
	}
	atLimit := child + "/" + rel(stage.MaxKeyLen-len(child)-1)
	if len(atLimit) != stage.MaxKeyLen {
		t.Fatalf("built a key of %d bytes", len(atLimit))
	}
	cases := []struct {
		full string
		ok   bool
	}{
		{atLimit, true},
		{atLimit + "x", false},
		{child + "/" + seg(stage.MaxSegmentLen), true},
		{child + "/" + seg(stage.MaxSegmentLen+1), false},
		{child + "/a/" + seg(stage.MaxSegmentLen), true},
		{child + "/a/" + seg(stage.MaxSegmentLen+1), false},
	}
	for _, c := range cases {
		for name, check := range map[string]func(string, string) error{"CheckKey": stage.CheckKey, "CheckPrefix": stage.CheckPrefix} {
			err := check(child, c.full)
			if (err == nil) != c.ok || (err != nil && !errors.Is(err, stage.ErrInvalidKey)) {
				t.Errorf("%s(%d bytes, longest segment %d) = %v, want ok=%v", name, len(c.full), longest(c.full[len(child)+1:]), err, c.ok)
			}
		}
	}
}

func longest(rel string) int {
	n := 0
	for _, s := range strings.Split(rel, "/") {
		n = max(n, len(s))
	}
	return n
}

// TestPutChecksDeclaredSize checks that Put refuses a body whose length
// differs from a declared size, zero included, and stores nothing; -1
// declares no size.
func TestPutChecksDeclaredSize(t *testing.T) {
	for _, b := range []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)} {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, "acme")
			cases := []struct {
				key  string
				body string
				size int64
				err  error
			}{
				{"zero-declared", "abc", 0, stage.ErrSize},
				{"short", "abc", 4, stage.ErrSize},
				{"long", "abc", 2, stage.ErrSize},
				{"exact", "abc", 3, nil},
				{"undeclared", "abc", -1, nil},
				{"empty", "", 0, nil},
			}
			for _, c := range cases {
				_, err := st.Put(t.Context(), "data/"+c.key, strings.NewReader(c.body), c.size)
				if !errors.Is(err, c.err) {
					t.Errorf("%s: Put = %v, want %v", c.key, err, c.err)
				}
				rc, _, gerr := st.Get(t.Context(), "data/"+c.key)
				if gerr == nil {
					rc.Close()
				}
				if (gerr == nil) != (c.err == nil) {
					t.Errorf("%s: after Put (%v), Get = %v", c.key, err, gerr)
				}
			}
		})
	}
}

// TestDeleteSkipsMissingKeys checks that a missing key in a batch does not
// stop Delete: every key after it is deleted too.
func TestDeleteSkipsMissingKeys(t *testing.T) {
	for _, b := range []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)} {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, "acme")
			for _, k := range []string{"d/a", "d/c"} {
				if _, err := st.Put(t.Context(), k, strings.NewReader("x"), 1); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Delete(t.Context(), "d/missing", "d/a", "d/gone", "d/c"); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"d/a", "d/c"} {
				if rc, _, err := st.Get(t.Context(), k); !errors.Is(err, stage.ErrNotFound) {
					if err == nil {
						rc.Close()
					}
					t.Errorf("%s after Delete: %v, want ErrNotFound", k, err)
				}
			}
		})
	}
}

// TestAbortUploadRefusesMalformedIDs checks the upload ids AbortUpload
// refuses before any request: empty, over 1024 bytes, or holding a space,
// a control byte or a byte at or past DEL. An id at the length limit is
// sent (and not found).
func TestAbortUploadRefusesMalformedIDs(t *testing.T) {
	b := stagetest.S3(t)
	up, ok := b.Open(t, "acme").(stage.Uploads)
	if !ok {
		t.Fatal("the S3 store does not list uploads")
	}
	cases := []struct {
		id      string
		refused bool
	}{
		{"", true},
		{strings.Repeat("u", 1025), true},
		{"a b", true},
		{"a\x00b", true},
		{"a\x1fb", true},
		{"a\x7fb", true},
		{"a\u00e9b", true},
		{"!", false},
		{"~", false},
		{strings.Repeat("u", 1024), false},
	}
	for _, c := range cases {
		err := up.AbortUpload(t.Context(), stage.Upload{Key: "d/k", ID: c.id})
		if refused := errors.Is(err, stage.ErrInvalidKey); refused != c.refused {
			t.Errorf("AbortUpload(id %.20q, %d bytes) = %v, want refused=%v", c.id, len(c.id), err, c.refused)
		}
	}
}
