package authz

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// Token format: tokenPrefix followed by the unpadded base64url encoding of
// tokenBytes random bytes.
const (
	tokenPrefix = "lg_"
	tokenBytes  = 32
	tokenLen    = len(tokenPrefix) + 43 // base64.RawURLEncoding.EncodedLen(32)

	// maxPresentedTokenLen bounds what Authenticate hashes; longer input is
	// rejected up front.
	maxPresentedTokenLen = 4096
)

// TokenHash is the SHA-256 digest of a bearer token, as stored in the
// principal map. Compare TokenHashes with crypto/subtle, not ==.
type TokenHash [sha256.Size]byte

// HashToken returns the SHA-256 digest of token.
func HashToken(token string) TokenHash { return sha256.Sum256([]byte(token)) }

// String returns the digest as 64 lower-case hex characters, the form written
// to the principal map.
func (h TokenHash) String() string { return hex.EncodeToString(h[:]) }

// emptyTokenHash is the hash of the empty token, which the map refuses.
var emptyTokenHash = HashToken("")

// parseTokenHash parses 64 hex characters of either case. Its error never
// contains s.
func parseTokenHash(s string) (TokenHash, error) {
	var h TokenHash
	if len(s) != 2*len(h) {
		return h, fmt.Errorf("sha256 must be %d hex characters, got %d characters", 2*len(h), len(s))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return TokenHash{}, fmt.Errorf("sha256 must be %d hex characters, found a non-hex character", 2*len(h))
	}
	return h, nil
}

// NewToken returns a new bearer token "lg_" + 43 base64url characters encoding
// 32 bytes read from rand (use crypto/rand.Reader).
func NewToken(rand io.Reader) (string, error) {
	var b [tokenBytes]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("authz: new token: reading random bytes: %w", err)
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// ValidTokenFormat reports whether token has the form produced by NewToken.
// Authentication does not depend on it; use it to reject typos early in tools.
func ValidTokenFormat(token string) bool {
	if len(token) != tokenLen || !strings.HasPrefix(token, tokenPrefix) {
		return false
	}
	var b [tokenBytes]byte
	n, err := base64.RawURLEncoding.Strict().Decode(b[:], []byte(token[len(tokenPrefix):]))
	return err == nil && n == tokenBytes
}
