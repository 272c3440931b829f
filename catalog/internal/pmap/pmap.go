package pmap

import "math/bits"

const (
	bitsPerLevel = 5
	mask         = 1<<bitsPerLevel - 1
	maxShift     = 64 // at or beyond this shift, nodes are collision lists
)

// Map is a persistent map from K to V.
type Map[K comparable, V any] struct {
	root   node[K, V]
	n      int
	hash   func(K) uint64
	inline func(K) (w0, w1 uint64, ok bool) // optional; see NewString
}

// node is a CHAMP node held by value: its bitmaps live in its parent's
// nodes array, so a lookup touches one array per level (the node's entries
// or its sub-nodes). entries are in datamap order, nodes in nodemap order;
// an update copies only the array it changes, so a wide node whose
// sub-nodes change copies 56 bytes a sub-node rather than every entry too.
// At maxShift a node is a collision list: entries only, both bitmaps 0.
type node[K comparable, V any] struct {
	datamap uint32
	nodemap uint32
	entries []entry[K, V]
	nodes   []node[K, V]
}

// entry's fields are ordered so that what a successful lookup reads (the
// hash, the inline key and the value) comes first and shares cache lines.
type entry[K comparable, V any] struct {
	h      uint64
	w0, w1 uint64 // the key inline, when Map.inline is set (see inlineString)
	v      V
	k      K
}

// New returns an empty map using hash. hash must be deterministic.
func New[K comparable, V any](hash func(K) uint64) Map[K, V] {
	return Map[K, V]{hash: hash}
}

// NewString returns an empty map keyed by strings (FNV-1a, mixed). Keys of
// up to 15 bytes are also stored inline in the entry, so that a lookup
// compares them without touching the key's bytes elsewhere in memory.
func NewString[V any]() Map[string, V] {
	return Map[string, V]{hash: HashString, inline: inlineString}
}

// inlineString packs s into two words with its length in the top byte of
// w1; ok is false for strings of 16 bytes or more, whose words hold their
// first 15 bytes and 0xFF and are not exact.
func inlineString(s string) (w0, w1 uint64, ok bool) {
	var b [16]byte
	copy(b[:15], s)
	ok = len(s) < 16
	b[15] = 0xFF // never the length of an inline key
	if ok {
		b[15] = byte(len(s))
	}
	w0 = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	w1 = uint64(b[8]) | uint64(b[9])<<8 | uint64(b[10])<<16 | uint64(b[11])<<24 |
		uint64(b[12])<<32 | uint64(b[13])<<40 | uint64(b[14])<<48 | uint64(b[15])<<56
	return w0, w1, ok
}

// NewUint64 returns an empty map keyed by uint64 (SplitMix64 finalizer).
func NewUint64[V any]() Map[uint64, V] { return New[uint64, V](HashUint64) }

// HashString is a deterministic string hash (FNV-1a 64, then mixed).
func HashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix(h)
}

// HashUint64 is a deterministic uint64 hash (SplitMix64 finalizer).
func HashUint64(x uint64) uint64 { return mix(x) }

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Len returns the number of entries.
func (m Map[K, V]) Len() int { return m.n }

func frag(h uint64, shift uint) uint32 { return 1 << ((h >> shift) & mask) }

func index(bitmap, bit uint32) int { return bits.OnesCount32(bitmap & (bit - 1)) }

// Get returns the value stored under k.
func (m Map[K, V]) Get(k K) (V, bool) {
	var zero V
	if m.n == 0 {
		return zero, false
	}
	h := m.hash(k)
	var w0, w1 uint64
	short := false
	if m.inline != nil {
		w0, w1, short = m.inline(k)
	}
	n := &m.root
	for shift := uint(0); ; shift += bitsPerLevel {
		if shift >= maxShift {
			for i := range n.entries {
				if n.entries[i].k == k {
					return n.entries[i].v, true
				}
			}
			return zero, false
		}
		bit := frag(h, shift)
		if n.datamap&bit != 0 {
			s := &n.entries[index(n.datamap, bit)]
			if s.h != h {
				return zero, false
			}
			if short {
				// Exact: both keys are inline (a long key has another length byte).
				if s.w0 == w0 && s.w1 == w1 {
					return s.v, true
				}
				return zero, false
			}
			if s.k == k {
				return s.v, true
			}
			return zero, false
		}
		if n.nodemap&bit == 0 {
			return zero, false
		}
		n = &n.nodes[index(n.nodemap, bit)]
	}
}

// Has reports whether k is present.
func (m Map[K, V]) Has(k K) bool {
	_, ok := m.Get(k)
	return ok
}

// Set returns a map with k bound to v.
func (m Map[K, V]) Set(k K, v V) Map[K, V] {
	e := entry[K, V]{h: m.hash(k), k: k, v: v}
	if m.inline != nil {
		e.w0, e.w1, _ = m.inline(k)
	}
	nr, added := set(&m.root, 0, e)
	out := Map[K, V]{root: nr, n: m.n, hash: m.hash, inline: m.inline}
	if added {
		out.n++
	}
	return out
}

func set[K comparable, V any](n *node[K, V], shift uint, e entry[K, V]) (node[K, V], bool) {
	if shift >= maxShift {
		for i := range n.entries {
			if n.entries[i].k == e.k {
				c := node[K, V]{entries: clone(n.entries)}
				c.entries[i].v = e.v
				return c, false
			}
		}
		return node[K, V]{entries: insertAt(n.entries, len(n.entries), e)}, true
	}
	bit := frag(e.h, shift)
	switch {
	case n.datamap&bit != 0:
		i := index(n.datamap, bit)
		old := n.entries[i]
		if old.h == e.h && old.k == e.k {
			c := node[K, V]{datamap: n.datamap, nodemap: n.nodemap, entries: clone(n.entries), nodes: n.nodes}
			c.entries[i].v = e.v
			return c, false
		}
		// Push both entries one level down: entry i becomes a sub-node.
		c := node[K, V]{datamap: n.datamap &^ bit, nodemap: n.nodemap | bit, entries: removeAt(n.entries, i)}
		c.nodes = insertAt(n.nodes, index(c.nodemap, bit), pair(old, e, shift+bitsPerLevel))
		return c, true
	case n.nodemap&bit != 0:
		j := index(n.nodemap, bit)
		sub, added := set(&n.nodes[j], shift+bitsPerLevel, e)
		c := node[K, V]{datamap: n.datamap, nodemap: n.nodemap, entries: n.entries, nodes: clone(n.nodes)}
		c.nodes[j] = sub
		return c, added
	default:
		c := node[K, V]{datamap: n.datamap | bit, nodemap: n.nodemap, nodes: n.nodes}
		c.entries = insertAt(n.entries, index(c.datamap, bit), e)
		return c, true
	}
}

func clone[T any](s []T) []T { return append([]T(nil), s...) }

// insertAt returns a new slice: s with v at i.
func insertAt[T any](s []T, i int, v T) []T {
	out := make([]T, len(s)+1)
	copy(out, s[:i])
	out[i] = v
	copy(out[i+1:], s[i:])
	return out
}

// removeAt returns a new slice: s without its element i (nil when empty).
func removeAt[T any](s []T, i int) []T {
	if len(s) == 1 {
		return nil
	}
	out := make([]T, len(s)-1)
	copy(out, s[:i])
	copy(out[i:], s[i+1:])
	return out
}

func pair[K comparable, V any](a, b entry[K, V], shift uint) node[K, V] {
	if shift >= maxShift {
		return node[K, V]{entries: []entry[K, V]{a, b}}
	}
	ba, bb := frag(a.h, shift), frag(b.h, shift)
	if ba == bb {
		return node[K, V]{nodemap: ba, nodes: []node[K, V]{pair(a, b, shift+bitsPerLevel)}}
	}
	if ba < bb {
		return node[K, V]{datamap: ba | bb, entries: []entry[K, V]{a, b}}
	}
	return node[K, V]{datamap: ba | bb, entries: []entry[K, V]{b, a}}
}

// Delete returns a map without k (the same map when k is absent).
func (m Map[K, V]) Delete(k K) Map[K, V] {
	if m.n == 0 {
		return m
	}
	nr, removed := del(&m.root, 0, m.hash(k), k)
	if !removed {
		return m
	}
	return Map[K, V]{root: nr, n: m.n - 1, hash: m.hash, inline: m.inline}
}

// single reports whether n holds exactly one entry and no sub-nodes; that
// entry is then n.entries[0].
func (n *node[K, V]) single() bool { return n.nodemap == 0 && len(n.entries) == 1 }

// del removes k below n. A returned node with a single entry and no
// sub-nodes is inlined by the parent.
func del[K comparable, V any](n *node[K, V], shift uint, h uint64, k K) (node[K, V], bool) {
	if shift >= maxShift {
		for i := range n.entries {
			if n.entries[i].k == k {
				return node[K, V]{entries: removeAt(n.entries, i)}, true
			}
		}
		return *n, false
	}
	bit := frag(h, shift)
	switch {
	case n.datamap&bit != 0:
		i := index(n.datamap, bit)
		if n.entries[i].h != h || n.entries[i].k != k {
			return *n, false
		}
		return node[K, V]{datamap: n.datamap &^ bit, nodemap: n.nodemap, entries: removeAt(n.entries, i), nodes: n.nodes}, true
	case n.nodemap&bit != 0:
		j := index(n.nodemap, bit)
		sub, removed := del(&n.nodes[j], shift+bitsPerLevel, h, k)
		if !removed {
			return *n, false
		}
		if sub.single() {
			// Inline the remaining entry: remove sub-node j, insert entry.
			c := node[K, V]{datamap: n.datamap | bit, nodemap: n.nodemap &^ bit, nodes: removeAt(n.nodes, j)}
			c.entries = insertAt(n.entries, index(c.datamap, bit), sub.entries[0])
			return c, true
		}
		c := node[K, V]{datamap: n.datamap, nodemap: n.nodemap, entries: n.entries, nodes: clone(n.nodes)}
		c.nodes[j] = sub
		return c, true
	default:
		return *n, false
	}
}

// Range calls f for every entry until f returns false. The order is
// deterministic for a given hash function but unspecified.
func (m Map[K, V]) Range(f func(K, V) bool) {
	if m.n > 0 {
		rangeNode(&m.root, f)
	}
}

func rangeNode[K comparable, V any](n *node[K, V], f func(K, V) bool) bool {
	for i := range n.entries {
		if !f(n.entries[i].k, n.entries[i].v) {
			return false
		}
	}
	for i := range n.nodes {
		if !rangeNode(&n.nodes[i], f) {
			return false
		}
	}
	return true
}

// Keys returns all keys in Range order.
func (m Map[K, V]) Keys() []K {
	out := make([]K, 0, m.n)
	m.Range(func(k K, _ V) bool { out = append(out, k); return true })
	return out
}

// batchLen is the number of keys GetStrings walks in lockstep.
const batchLen = 16

// GetStrings looks up every keys[i] in m, storing the value in vals[i] and
// whether it was found in found[i] (vals and found must be at least as long
// as keys). It gives the same answers as len(keys) calls of m.Get but walks
// up to 16 keys level by level in lockstep, so that the memory accesses of
// different keys overlap instead of queuing behind each other: for a batch of
// lookups into a map that is not in the CPU cache it is several times faster.
// Maps not created by NewString fall back to Get.
func GetStrings[V any](m Map[string, V], keys []string, vals []V, found []bool) {
	vals, found = vals[:len(keys)], found[:len(keys)]
	if m.inline == nil {
		for i, k := range keys {
			vals[i], found[i] = m.Get(k)
		}
		return
	}
	var zero V
	for i := range keys {
		vals[i], found[i] = zero, false
	}
	if m.n == 0 {
		return
	}
	type walk struct {
		h, w0, w1 uint64
		short     bool
		n         *node[string, V]
	}
	for base := 0; base < len(keys); base += batchLen {
		ks := keys[base:min(base+batchLen, len(keys))]
		var st [batchLen]walk
		live := uint32(1)<<len(ks) - 1
		for j, k := range ks {
			e := &st[j]
			e.h = HashString(k)
			e.w0, e.w1, e.short = inlineString(k)
			e.n = &m.root
		}
		for shift := uint(0); live != 0; shift += bitsPerLevel {
			for l := live; l != 0; l &= l - 1 {
				j := bits.TrailingZeros32(l)
				e := &st[j]
				n := e.n
				if shift >= maxShift {
					for i := range n.entries {
						if n.entries[i].k == ks[j] {
							vals[base+j], found[base+j] = n.entries[i].v, true
							break
						}
					}
					live &^= 1 << j
					continue
				}
				bit := frag(e.h, shift)
				if n.datamap&bit != 0 {
					s := &n.entries[index(n.datamap, bit)]
					if s.h == e.h && ((e.short && s.w0 == e.w0 && s.w1 == e.w1) || (!e.short && s.k == ks[j])) {
						vals[base+j], found[base+j] = s.v, true
					}
					live &^= 1 << j
					continue
				}
				if n.nodemap&bit == 0 {
					live &^= 1 << j
					continue
				}
				e.n = &n.nodes[index(n.nodemap, bit)]
			}
		}
	}
}
