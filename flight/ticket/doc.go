// Package ticket seals and opens Flight tickets: opaque blobs that a client
// hands back in DoGet and that the gateway must be able to trust without
// keeping server-side state.
//
// # Usage
//
//	ring, err := ticket.LoadRing("/etc/lakegate/ticket.keys")
//	...
//	blob, err := ring.Seal(rand.Reader, ticket.Claims{
//		Principal: "alice@acme",
//		Tenant:    "acme",
//		Expiry:    now.Add(5 * time.Minute),
//		Payload:   plan, // whatever the handler needs to resume
//	})
//	...
//	// Later, in DoGet, for the authenticated caller:
//	c, err := ring.Open(blob, time.Now(), principal, tenant)
//	if err != nil { // always ErrInvalid
//		return status.Error(codes.NotFound, "...")
//	}
//
// A ticket is AES-256-GCM over a compact binary encoding of [Claims]:
//
//	version (1 byte) | key id (4 bytes) | nonce (12 bytes) | ciphertext+tag
//
// The version byte and key id are authenticated as additional data, the nonce
// by GCM itself. Open selects the key by id, decrypts, decodes strictly, and
// then checks expiry, principal and tenant. Every failure is the single
// sentinel [ErrInvalid], so a caller (and through it a client) cannot tell a
// forged ticket from an expired one or one issued to somebody else.
//
// # Key ring and rotation
//
// A [Ring] has one active key, which seals, and any number of verification
// keys, which only open. To rotate: put a new key on the first line of the
// ring file, move the old active key below it, and restart; tickets sealed
// under the old key keep opening until it is removed from the file (wait at
// least the longest ticket lifetime). The ring file is text, one key per line:
//
//	# comments and blank lines are ignored
//	lgk1:<43 base64url characters encoding 32 bytes>   <- active
//	lgk1:<...>                                         <- verification only
//
// [LoadRing] treats it as a secret file: it refuses symlinks, non-regular
// files, files with any group or other permission bit, and files over 64 KiB,
// checking the opened file descriptor (no check-then-open race). Its errors
// never contain key material. [WriteRingFile] creates a new file with mode
// 0600 and never overwrites one.
//
// # Caller obligations
//
//   - Seal draws a fresh random 96-bit nonce per ticket from the reader it is
//     given (nil means crypto/rand). Pass a cryptographic source in
//     production, and rotate the active key long before it has sealed 2^32
//     tickets.
//   - Open's result says who the ticket was issued to; it does not say the
//     caller is still allowed to do what the payload describes. Re-authorize
//     when the governance generation has moved.
//   - The caller supplies the clock; a zero now fails closed.
//
// A Ring is immutable and safe for concurrent use by multiple goroutines.
// Printing or logging a Ring shows key ids only, never key material.
package ticket
