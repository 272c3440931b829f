package ticket

import (
	"encoding/binary"
	"time"
)

// The plaintext of a ticket is the canonical encoding of Claims:
//
//	uvarint len | principal
//	uvarint len | tenant
//	varint  expiry seconds since the Unix epoch
//	uvarint expiry nanoseconds (< 1e9)
//	uvarint len | payload
//
// Decoding is strict: minimal varints only, lengths within the input, no
// trailing bytes, so every accepted plaintext re-encodes to itself.

func claimsSizeHint(c Claims) int {
	return 5*binary.MaxVarintLen64 + len(c.Principal) + len(c.Tenant) + len(c.Payload)
}

func appendClaims(b []byte, c Claims) []byte {
	b = binary.AppendUvarint(b, uint64(len(c.Principal)))
	b = append(b, c.Principal...)
	b = binary.AppendUvarint(b, uint64(len(c.Tenant)))
	b = append(b, c.Tenant...)
	b = binary.AppendVarint(b, c.Expiry.Unix())
	b = binary.AppendUvarint(b, uint64(c.Expiry.Nanosecond()))
	b = binary.AppendUvarint(b, uint64(len(c.Payload)))
	b = append(b, c.Payload...)
	return b
}

// decoder reads the claims encoding; any error sticks.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	if d.bad {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	// n <= 0: truncated or overflow. A final 0x00 byte after a
	// continuation byte is a non-minimal encoding.
	if n <= 0 || (n > 1 && d.b[n-1] == 0) {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func decodeClaims(b []byte) (Claims, bool) {
	d := decoder{b: b}
	principal := d.bytes()
	tenant := d.bytes()
	sec := d.varint()
	nsec := d.uvarint()
	payload := d.bytes()
	if d.bad || len(d.b) != 0 || len(principal) == 0 || len(tenant) == 0 || nsec >= 1e9 {
		return Claims{}, false
	}
	c := Claims{
		Principal: string(principal),
		Tenant:    string(tenant),
		Expiry:    time.Unix(sec, int64(nsec)).UTC(),
	}
	if len(payload) > 0 {
		c.Payload = payload
	}
	return c, true
}
