package ticket

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Sizes of the sealed format.
const (
	// KeySize is the size of every ring key in bytes (AES-256).
	KeySize = 32
	// MaxSize is the largest ticket Seal produces and Open accepts, checked
	// before any decryption. Statement tickets carry the rendered SQL of a
	// statement of up to 1 MiB, which printing can roughly double.
	MaxSize = 4 << 20

	version    byte = 1
	keyIDSize       = 4
	nonceSize       = 12
	tagSize         = 16
	headerSize      = 1 + keyIDSize // authenticated as additional data
	prefixSize      = headerSize + nonceSize
	minSize         = prefixSize + tagSize
)

var (
	// ErrInvalid is the only error Open returns, whatever went wrong:
	// malformed, unknown key, tampered, expired, or issued to another
	// principal or tenant.
	ErrInvalid = errors.New("ticket: invalid ticket")
	// ErrDuplicateKey is returned by NewRing and LoadRing when a key appears
	// twice (or two keys share a key id).
	ErrDuplicateKey = errors.New("ticket: duplicate key")
	// ErrTooLarge is returned by Seal when the sealed ticket would exceed
	// MaxSize.
	ErrTooLarge = errors.New("ticket: claims too large")
)

// KeyID names a ring key inside a sealed ticket so Open can pick the key
// without trial decryption. It is the first four bytes of a domain-separated
// SHA-256 of the key and reveals nothing useful about the key.
type KeyID [keyIDSize]byte

// String returns the id in hex.
func (id KeyID) String() string { return hex.EncodeToString(id[:]) }

func keyIDOf(key []byte) KeyID {
	h := sha256.New()
	h.Write([]byte("lakegate/flight/ticket key id v1\x00"))
	h.Write(key)
	var id KeyID
	copy(id[:], h.Sum(nil))
	return id
}

// ringKey is one key of a ring. The key bytes sit behind a pointer so that
// fmt, which cannot call methods on unexported fields, prints an address and
// not the key when someone prints a dereferenced Ring.
type ringKey struct {
	id   KeyID
	raw  *[KeySize]byte
	aead cipher.AEAD
}

// Ring is a set of ticket keys: one active key that seals, plus verification
// keys that only open. A Ring is immutable and safe for concurrent use by
// multiple goroutines. Its formatting and LogValue show key ids only.
type Ring struct {
	active *ringKey
	verify []*ringKey
	byID   map[KeyID]*ringKey // active and verification keys
}

// NewRing returns a ring sealing with active and also opening tickets sealed
// under any of verify. Every key must be exactly KeySize bytes; keys must be
// distinct. The ring copies the keys.
func NewRing(active []byte, verify ...[]byte) (*Ring, error) {
	r := &Ring{byID: make(map[KeyID]*ringKey, 1+len(verify))}
	for i, raw := range append([][]byte{active}, verify...) {
		if len(raw) != KeySize {
			return nil, fmt.Errorf("ticket: key %d: got %d bytes, want %d", i, len(raw), KeySize)
		}
		k := &ringKey{id: keyIDOf(raw), raw: new([KeySize]byte)}
		copy(k.raw[:], raw)
		if _, dup := r.byID[k.id]; dup {
			// Same key twice, or (with probability 2^-32) two keys
			// sharing an id; either way the ring would be ambiguous.
			return nil, fmt.Errorf("%w: key %d has id %s", ErrDuplicateKey, i, k.id)
		}
		block, err := aes.NewCipher(k.raw[:])
		if err != nil {
			return nil, fmt.Errorf("ticket: key %d: %v", i, err)
		}
		if k.aead, err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("ticket: key %d: %v", i, err)
		}
		r.byID[k.id] = k
		if i == 0 {
			r.active = k
		} else {
			r.verify = append(r.verify, k)
		}
	}
	return r, nil
}

// GenerateRing returns a ring with one fresh active key read from rand
// (nil means crypto/rand) and no verification keys.
func GenerateRing(rand io.Reader) (*Ring, error) {
	var key [KeySize]byte
	if _, err := io.ReadFull(randOrDefault(rand), key[:]); err != nil {
		return nil, fmt.Errorf("ticket: generate key: %w", err)
	}
	return NewRing(key[:])
}

// ActiveKeyID returns the id of the key that seals.
func (r *Ring) ActiveKeyID() KeyID { return r.active.id }

// KeyIDs returns the ids of all keys, the active one first.
func (r *Ring) KeyIDs() []KeyID {
	ids := []KeyID{r.active.id}
	for _, k := range r.verify {
		ids = append(ids, k.id)
	}
	return ids
}

// String describes the ring by key ids.
func (r *Ring) String() string {
	if r == nil {
		return "ticket.Ring(nil)"
	}
	return fmt.Sprintf("ticket.Ring{active: %s, keys: %d}", r.active.id, 1+len(r.verify))
}

// Format prints String for every verb, so no verb ever reaches key material.
func (r *Ring) Format(f fmt.State, _ rune) { io.WriteString(f, r.String()) }

// LogValue implements slog.LogValuer with key ids only.
func (r *Ring) LogValue() slog.Value {
	if r == nil {
		return slog.StringValue("<nil>")
	}
	ids := make([]string, 0, len(r.verify))
	for _, k := range r.verify {
		ids = append(ids, k.id.String())
	}
	return slog.GroupValue(
		slog.String("active", r.active.id.String()),
		slog.Any("verify", ids),
	)
}

// Claims is what a ticket carries. Principal and Tenant must be non-empty
// and Expiry non-zero. Opened claims have Expiry in UTC and a nil Payload
// when it was empty.
type Claims struct {
	Principal string
	Tenant    string
	Expiry    time.Time
	Payload   []byte
}

// Seal encrypts c under the active key with a fresh nonce read from rand
// (nil means crypto/rand). It returns ErrTooLarge when the ticket would exceed
// MaxSize.
func (r *Ring) Seal(rand io.Reader, c Claims) ([]byte, error) {
	switch {
	case c.Principal == "":
		return nil, errors.New("ticket: seal: empty principal")
	case c.Tenant == "":
		return nil, errors.New("ticket: seal: empty tenant")
	case c.Expiry.IsZero():
		return nil, errors.New("ticket: seal: zero expiry")
	}
	// Bound the claims before encoding so a huge payload is not copied.
	if len(c.Principal)+len(c.Tenant)+len(c.Payload) > MaxSize {
		return nil, ErrTooLarge
	}
	// Encode the claims after the prefix and encrypt them in place.
	k := r.active
	blob := make([]byte, prefixSize, prefixSize+claimsSizeHint(c)+tagSize)
	blob[0] = version
	copy(blob[1:headerSize], k.id[:])
	blob = appendClaims(blob, c)
	if len(blob)+tagSize > MaxSize {
		return nil, ErrTooLarge
	}
	if _, err := io.ReadFull(randOrDefault(rand), blob[headerSize:prefixSize]); err != nil {
		return nil, fmt.Errorf("ticket: seal: nonce: %w", err)
	}
	return k.aead.Seal(blob[:prefixSize], blob[headerSize:prefixSize], blob[prefixSize:], blob[:headerSize]), nil
}

// Open authenticates and decrypts blob and returns its claims if the ticket
// is unexpired at now and was issued to principal in tenant. Any failure
// returns ErrInvalid and zero Claims; a zero now always fails.
func (r *Ring) Open(blob []byte, now time.Time, principal, tenant string) (Claims, error) {
	if len(blob) < minSize || len(blob) > MaxSize || blob[0] != version || now.IsZero() {
		return Claims{}, ErrInvalid
	}
	k, ok := r.byID[KeyID(blob[1:headerSize])]
	if !ok {
		return Claims{}, ErrInvalid
	}
	plain, err := k.aead.Open(nil, blob[headerSize:prefixSize], blob[prefixSize:], blob[:headerSize])
	if err != nil {
		return Claims{}, ErrInvalid
	}
	c, ok := decodeClaims(plain)
	if !ok {
		return Claims{}, ErrInvalid
	}
	// Evaluate every check; no early exit on which one failed.
	valid := now.Before(c.Expiry)
	valid = subtle.ConstantTimeCompare([]byte(c.Principal), []byte(principal)) == 1 && valid
	valid = subtle.ConstantTimeCompare([]byte(c.Tenant), []byte(tenant)) == 1 && valid
	if !valid {
		return Claims{}, ErrInvalid
	}
	return c, nil
}

func randOrDefault(r io.Reader) io.Reader {
	if r == nil {
		return rand.Reader
	}
	return r
}
