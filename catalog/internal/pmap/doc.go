// Package pmap is a persistent (immutable) hash map with structural sharing:
// a compressed hash-array mapped prefix tree (CHAMP). Set and Delete return a
// new Map that shares every untouched node with the old one, so an update
// copies O(log32 n) nodes. A Map value is immutable and safe for concurrent
// reads; the zero Map is not usable: create maps with New, NewString or
// NewUint64.
//
// Iteration order (Range) depends only on the keys' hashes and is therefore
// deterministic for a fixed hash function, but it is not sorted: callers that
// need an order sort the keys.
//
// The package must never change a Map that has been returned to a caller
// (every update copies the nodes it touches), do I/O, or keep state outside
// the Map values themselves.
package pmap
