package catalog_test

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	. "lakegate/catalog"
)

func FuzzParseName(f *testing.F) {
	for _, s := range []string{"lake", "lake.fin", "a.b.c", "a.b.c.d", "*", "system", "a..b", "\x00", "é.ü", strings.Repeat("x", 129)} {
		f.Add(uint8(ObjectTable), s)
	}
	f.Fuzz(func(t *testing.T, typ uint8, name string) {
		parts, err := ParseName(ObjectType(typ), name)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) && !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if strings.Join(parts, ".") != name && len(parts) > 1 {
			t.Fatalf("parts %q do not rejoin to %q", parts, name)
		}
		for _, p := range parts {
			if p == "" || p == "*" || strings.EqualFold(p, "system") || !utf8.ValidString(p) || utf8.RuneCountInString(p) > MaxNameLen {
				t.Fatalf("accepted bad part %q", p)
			}
			for _, r := range p {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("accepted control character in %q", p)
				}
			}
			if len(parts) > 1 && strings.Contains(p, ".") {
				t.Fatalf("accepted dot in %q", p)
			}
		}
	})
}

func FuzzDecodeCommand(f *testing.F) {
	for _, c := range samples() {
		b, _ := EncodeCommand(c)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommand(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidCommand) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		// Round trip: re-encoding and decoding is stable.
		b2, err := EncodeCommand(c)
		if err != nil {
			t.Fatalf("re-encode %#v: %v", c, err)
		}
		c2, err := DecodeCommand(b2)
		if err != nil {
			t.Fatalf("decode re-encoded %s: %v", b2, err)
		}
		b3, _ := EncodeCommand(c2)
		if string(b2) != string(b3) {
			t.Fatalf("unstable encoding:\n%s\n%s", b2, b3)
		}
		// Applying any decoded command never panics.
		s, _ := New("m", "admin", catalogEpoch)
		Apply(s, c, Meta{Actor: "admin", Time: catalogEpoch, Index: 1})
	})
}

// FuzzApplyPersists applies any decodable command to a metalake that holds
// an object of every kind (the codec samples, applied in order). Whatever
// Apply accepts must persist and restore to the same bytes, and applying the
// same command to the same snapshot twice must decide the same way and give
// the same bytes; accepted or not, the snapshot applied to is left as it was.
func FuzzApplyPersists(f *testing.F) {
	s := samples()
	base, _ := New("m", "admin", catalogEpoch)
	for _, k := range slices.Sorted(maps.Keys(s)) {
		b, _ := EncodeCommand(s[k])
		f.Add(b)
		if next, _, err := Apply(base, s[k], Meta{Actor: "admin", Time: catalogEpoch, Index: base.Index() + 1}); err == nil {
			base = next
		}
	}
	baseBytes, err := base.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommand(b)
		if err != nil {
			return
		}
		m := Meta{Actor: "admin", Time: catalogEpoch.Add(time.Hour), Index: base.Index() + 1}
		n1, _, err1 := Apply(base, c, m)
		n2, _, err2 := Apply(base, c, m)
		if after, _ := base.MarshalBinary(); !bytes.Equal(after, baseBytes) {
			t.Fatalf("%s changed the snapshot it was applied to", b)
		}
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s: decided %v, then %v", b, err1, err2)
		}
		if err1 != nil {
			if n1 != base {
				t.Fatalf("%s: refused (%v) but returned another snapshot", b, err1)
			}
			return
		}
		b1, err := n1.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: accepted, but the result does not persist: %v", b, err)
		}
		if b2, _ := n2.MarshalBinary(); !bytes.Equal(b1, b2) {
			t.Fatalf("%s: the same command gave two different states", b)
		}
		r, err := UnmarshalSnapshot(b1)
		if err != nil {
			t.Fatalf("%s: the result's own bytes do not restore: %v", b, err)
		}
		if rb, _ := r.MarshalBinary(); !bytes.Equal(rb, b1) {
			t.Fatalf("%s: restoring the result changed it", b)
		}
	})
}
