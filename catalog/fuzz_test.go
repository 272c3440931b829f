package catalog_test

import (
	"errors"
	"strings"
	"testing"
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
