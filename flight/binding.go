package flight

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"time"

	"lakegate/authz"
	"lakegate/flight/ticket"
)

// Tickets and prepared statement handles are bound to the principal that
// obtained them, beyond the id and tenant the sealed claims name:
//
//   - the grants it held (role, namespaces, delegate tenants, and for a JWT
//     its issuer and groups), as a digest: a handle opens only for a call
//     whose principal, authenticated against the map in force, holds the
//     same. A reload that removes the principal refuses the call itself; one
//     that changes its grants refuses its outstanding handles, so a plan
//     authorized under the old grants never runs under the new map.
//   - the expiry of the JWT that authenticated it: the handle expires with
//     the token, even when the caller presents a newer token of the same
//     user.
//
// Both failures are ticket.ErrInvalid: the same Unauthenticated answer as a
// forged or expired ticket.

// bindingV1 is the first byte of a bound payload.
const bindingV1 = 0xb1

// bindingSize is the bytes a binding adds: version, the token's expiry
// (Unix nanoseconds, 0 for none) and the grant digest.
const bindingSize = 1 + 8 + grantDigestSize

// grantDigestSize is how much of the SHA-256 of the grants a binding keeps:
// it detects change, it does not resist forgery (the ticket's AEAD does).
const grantDigestSize = 16

// grantDigest digests what authorizes p's statements.
func grantDigest(p *authz.Principal) [grantDigestSize]byte {
	h := sha256.New()
	field := func(s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	field(p.ID().String())
	field(p.Tenant().String())
	field(p.Role().String())
	field(p.AuthMethod().String())
	field(p.Issuer())
	for _, n := range p.Namespaces() {
		field("n:" + n.String())
	}
	for _, t := range p.DelegateTenants() {
		field("d:" + t.String())
	}
	for _, g := range p.Groups() {
		field("g:" + g)
	}
	var out [grantDigestSize]byte
	copy(out[:], h.Sum(nil))
	return out
}

// sealFor seals c for p: the payload bound to p's grants and token expiry,
// the ticket's expiry no later than the token's.
func (s *Server) sealFor(p *authz.Principal, c ticket.Claims) ([]byte, error) {
	exp := p.Expiry()
	var nanos int64
	if !exp.IsZero() {
		nanos = exp.UnixNano()
		if exp.Before(c.Expiry) {
			c.Expiry = exp
		}
	}
	d := grantDigest(p)
	bound := make([]byte, 0, bindingSize+len(c.Payload))
	bound = append(bound, bindingV1)
	bound = binary.BigEndian.AppendUint64(bound, uint64(nanos))
	bound = append(bound, d[:]...)
	c.Payload = append(bound, c.Payload...)
	return s.cfg.Tickets.Seal(s.rand, c)
}

// openFor opens a handle sealed by sealFor for the call's principal p and
// returns its claims with the unbound payload, or ticket.ErrInvalid.
func (s *Server) openFor(p *authz.Principal, blob []byte) (ticket.Claims, error) {
	now := s.cfg.Now()
	c, err := s.cfg.Tickets.Open(blob, now, p.ID().String(), p.Tenant().String())
	if err != nil {
		return ticket.Claims{}, err
	}
	b := c.Payload
	if len(b) < bindingSize || b[0] != bindingV1 {
		return ticket.Claims{}, ticket.ErrInvalid
	}
	if nanos := int64(binary.BigEndian.Uint64(b[1:9])); nanos != 0 && !now.Before(time.Unix(0, nanos)) {
		return ticket.Claims{}, ticket.ErrInvalid
	}
	d := grantDigest(p)
	if !bytes.Equal(b[9:bindingSize], d[:]) {
		return ticket.Claims{}, ticket.ErrInvalid
	}
	c.Payload = b[bindingSize:]
	if len(c.Payload) == 0 {
		c.Payload = nil
	}
	return c, nil
}
