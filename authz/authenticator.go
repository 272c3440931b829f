package authz

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"strconv"
)

// Authenticator checks bearer tokens against a PrincipalMap. It is immutable
// and safe for use from multiple goroutines.
type Authenticator struct {
	hashes []hashWords  // every configured hash, unique (the map refuses duplicates)
	owners []*Principal // owners[i] owns hashes[i]
}

// hashWords is a TokenHash as four machine words, for a fast constant-time
// comparison.
type hashWords [4]uint64

func toWords(h *TokenHash) hashWords {
	var w hashWords
	for k := range w {
		w[k] = binary.LittleEndian.Uint64(h[8*k:])
	}
	return w
}

// NewAuthenticator returns an Authenticator for m. A nil m yields an
// Authenticator that rejects every token.
func NewAuthenticator(m *PrincipalMap) *Authenticator {
	a := &Authenticator{}
	if m == nil {
		return a
	}
	for i, p := range m.principals {
		for _, h := range m.hashes[i] {
			a.hashes = append(a.hashes, toWords(&h))
			a.owners = append(a.owners, p)
		}
	}
	return a
}

// Authenticate returns the principal owning token, or ErrUnauthenticated.
// The token's SHA-256 is compared with every configured hash in constant
// time, without early exit, and the token's format is not checked first, so
// timing does not depend on which hash (if any) matches. Tokens longer than
// 4096 bytes are rejected without hashing.
func (a *Authenticator) Authenticate(token string) (*Principal, error) {
	idx, ok := a.lookup(token)
	if ok != 1 {
		return nil, ErrUnauthenticated
	}
	return a.owners[idx], nil
}

// AuthenticateBasic is Authenticate for username/password schemes: token must
// match and the owning principal's id must equal id (also compared in
// constant time). It returns ErrUnauthenticated otherwise.
func (a *Authenticator) AuthenticateBasic(id, token string) (*Principal, error) {
	idx, ok := a.lookup(token)
	if len(a.owners) == 0 {
		return nil, ErrUnauthenticated
	}
	// Compare ids even when the token did not match (idx is then 0).
	ok &= subtle.ConstantTimeCompare([]byte(id), []byte(a.owners[idx].id.s))
	if ok != 1 {
		return nil, ErrUnauthenticated
	}
	return a.owners[idx], nil
}

// lookup returns the index of the hash matching token and ok == 1, or
// idx == 0 and ok == 0.
//
// It visits every configured hash and has no data-dependent branch or memory
// access: per entry it ORs the XOR of the four words (x == 0 iff equal) and
// turns that into an all-ones mask without branching, the same technique as
// subtle.ConstantTimeCompare, but on 64-bit words instead of bytes — with
// ConstantTimeCompare the scan of 1,000 hashes took 30–50 µs instead of ~5.
// Because hashes are unique, at most one mask is set and OR-ing the masked
// indexes selects the match.
func (a *Authenticator) lookup(token string) (idx, ok int) {
	if len(token) > maxPresentedTokenLen {
		return 0, 0
	}
	var buf [64]byte // typical tokens are hashed without allocating
	h := TokenHash(sha256.Sum256(append(buf[:0], token...)))
	hw := toWords(&h)
	var sel, found uint64
	for i := range a.hashes {
		e := &a.hashes[i]
		x := (hw[0] ^ e[0]) | (hw[1] ^ e[1]) | (hw[2] ^ e[2]) | (hw[3] ^ e[3])
		mask := (x|-x)>>63 - 1 // all ones iff x == 0
		sel |= uint64(i) & mask
		found |= mask & 1
	}
	return int(sel), int(found)
}

// String describes a without its token hashes.
func (a *Authenticator) String() string {
	return "authz.Authenticator{" + strconv.Itoa(len(a.hashes)) + " tokens}"
}

// GoString is String, so that %#v does not print token hashes either.
func (a *Authenticator) GoString() string { return a.String() }
