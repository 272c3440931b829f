package pmap

import (
	"math/rand/v2"
	"testing"
)

func TestAgainstBuiltinMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// A weak hash forces collisions down to the collision-list level.
	weak := New[uint64, int](func(k uint64) uint64 { return k % 7 })
	strong := NewUint64[int]()
	ref := map[uint64]int{}
	var snaps []Map[uint64, int]
	var refs []map[uint64]int
	for i := 0; i < 20000; i++ {
		k := uint64(r.IntN(500))
		if r.IntN(3) == 0 {
			weak, strong = weak.Delete(k), strong.Delete(k)
			delete(ref, k)
		} else {
			weak, strong = weak.Set(k, i), strong.Set(k, i)
			ref[k] = i
		}
		if i%2000 == 0 {
			snaps = append(snaps, strong)
			c := map[uint64]int{}
			for k, v := range ref {
				c[k] = v
			}
			refs = append(refs, c)
		}
	}
	for _, m := range []Map[uint64, int]{weak, strong} {
		if m.Len() != len(ref) {
			t.Fatalf("len %d want %d", m.Len(), len(ref))
		}
		for k := uint64(0); k < 500; k++ {
			v, ok := m.Get(k)
			rv, rok := ref[k]
			if ok != rok || v != rv {
				t.Fatalf("key %d: got %d,%v want %d,%v", k, v, ok, rv, rok)
			}
		}
		n := 0
		m.Range(func(k uint64, v int) bool { n++; return ref[k] == v })
		if n != len(ref) {
			t.Fatalf("range visited %d want %d", n, len(ref))
		}
	}
	// Old versions are unaffected by later updates.
	for i, s := range snaps {
		if s.Len() != len(refs[i]) {
			t.Fatalf("snapshot %d len %d want %d", i, s.Len(), len(refs[i]))
		}
		for k, v := range refs[i] {
			if got, ok := s.Get(k); !ok || got != v {
				t.Fatalf("snapshot %d key %d changed", i, k)
			}
		}
	}
}

func TestStringKeys(t *testing.T) {
	m := NewString[int]()
	m = m.Set("a", 1).Set("b", 2).Set("a", 3)
	if v, _ := m.Get("a"); v != 3 || m.Len() != 2 {
		t.Fatalf("got %d len %d", v, m.Len())
	}
	m = m.Delete("a").Delete("zz")
	if m.Has("a") || m.Len() != 1 {
		t.Fatal("delete failed")
	}
	m = m.Delete("b")
	if m.Len() != 0 || m.Has("b") {
		t.Fatal("not empty")
	}
}

func BenchmarkGet100k(b *testing.B) {
	m := NewUint64[int]()
	for i := range 100000 {
		m = m.Set(uint64(i), i)
	}
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		m.Get(i % 100000)
		i += 7919
	}
}

func BenchmarkSet100k(b *testing.B) {
	m := NewUint64[int]()
	for i := range 100000 {
		m = m.Set(uint64(i), i)
	}
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		_ = m.Set(i%100000, 1)
		i += 7919
	}
}

func TestInlineStringKeys(t *testing.T) {
	keys := []string{"", "a", "a\x00", "\x00", "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnoq",
		"abcdefghijklmno" + string(make([]byte, 256)), "abcdefghijklmnoX", "tbl001", "tbl010"}
	m := NewString[int]()
	for i, k := range keys {
		m = m.Set(k, i)
	}
	for i, k := range keys {
		if v, ok := m.Get(k); !ok || v != i {
			t.Fatalf("Get(%q) = %d, %v; want %d", k, v, ok, i)
		}
	}
	for _, k := range []string{"b", "a\x00\x00", "abcdefghijklmn", "abcdefghijklmnoZ", "abcdefghijklmno" + string(make([]byte, 255))} {
		if _, ok := m.Get(k); ok {
			t.Fatalf("Get(%q) found a missing key", k)
		}
	}
	// Force hash collisions so that inline comparison decides.
	weak := Map[string, int]{hash: func(string) uint64 { return 1 }, inline: inlineString}
	for i, k := range keys {
		weak = weak.Set(k, i)
	}
	for i, k := range keys {
		if v, ok := weak.Get(k); !ok || v != i {
			t.Fatalf("colliding Get(%q) = %d, %v; want %d", k, v, ok, i)
		}
	}
	if _, ok := weak.Get("abcdefghijklmnoZ"); ok {
		t.Fatal("colliding Get found a missing key")
	}
}

func TestGetStringsAgreesWithGet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	key := func(i int) string {
		if i%3 == 0 {
			return "a-long-key-of-more-than-fifteen-bytes-" + string(rune('a'+i%26)) + itoa(i)
		}
		return "k" + itoa(i)
	}
	custom := New[string, int](HashString) // no inline keys: the fallback path
	for _, m := range []Map[string, int]{NewString[int](), custom} {
		for step := 0; step < 4; step++ {
			var keys []string
			for i := 0; i < 1000; i++ {
				keys = append(keys, key(r.IntN(3000)))
			}
			keys = append(keys, "", "k", "a-long-key-of-more-than-fifteen-bytes-")
			vals := make([]int, len(keys))
			found := make([]bool, len(keys))
			for i := range vals {
				vals[i], found[i] = -1, true // GetStrings must overwrite them
			}
			GetStrings(m, keys, vals, found)
			for i, k := range keys {
				v, ok := m.Get(k)
				if v != vals[i] || ok != found[i] {
					t.Fatalf("step %d key %q: GetStrings (%d, %v), Get (%d, %v)", step, k, vals[i], found[i], v, ok)
				}
			}
			for i := 0; i < 700; i++ {
				if k := key(r.IntN(3000)); r.IntN(4) == 0 {
					m = m.Delete(k)
				} else {
					m = m.Set(k, i)
				}
			}
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
