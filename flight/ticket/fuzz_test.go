package ticket_test

import (
	"bytes"
	"testing"
	"time"

	"lakegate/flight/ticket"
)

// fuzzFixture is a ring and the one ticket it sealed, all deterministic so
// the committed corpus in testdata/fuzz/FuzzOpen holds the valid ticket.
func fuzzFixture(t testing.TB) (*ticket.Ring, ticket.Claims, []byte) {
	r := mustRing(t, key(1), key(2))
	c := ticket.Claims{
		Principal: "alice@acme",
		Tenant:    "acme",
		Expiry:    time.Date(2026, 3, 1, 12, 5, 0, 0, time.UTC),
		Payload:   []byte("select 1"),
	}
	blob, err := r.Seal(bytes.NewReader(make([]byte, 12)), c) // all-zero nonce
	if err != nil {
		t.Fatal(err)
	}
	return r, c, blob
}

// FuzzOpen checks that Open never panics, that only the genuine ticket
// opens, and that any bytes sealed as a payload open to themselves.
func FuzzOpen(f *testing.F) {
	r, c, valid := fuzzFixture(f)
	f.Add(valid)
	f.Add(valid[:17])
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, blob []byte) {
		got, err := r.Open(blob, now, c.Principal, c.Tenant)
		switch {
		case err == nil && !bytes.Equal(blob, valid):
			t.Fatalf("forged ticket %x opened to %+v", blob, got)
		case err == nil && !sameClaims(got, c):
			t.Fatalf("valid ticket opened to %+v, want %+v", got, c)
		case err != nil && err != ticket.ErrInvalid:
			t.Fatalf("Open error %v, want ErrInvalid", err)
		case err != nil && bytes.Equal(blob, valid):
			t.Fatalf("valid ticket did not open: %v", err)
		}

		// Round trip with the input as payload.
		if len(blob) > ticket.MaxSize-64 {
			return
		}
		want := c
		want.Payload = blob
		sealed, err := r.Seal(bytes.NewReader(blob[:min(len(blob), 12)]), want)
		if len(blob) < 12 { // the nonce reader runs dry
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err = r.Open(sealed, now, c.Principal, c.Tenant)
		if err != nil || !sameClaims(got, want) {
			t.Fatalf("round trip: Open = %+v, %v; want %+v", got, err, want)
		}
	})
}

// FuzzDecodeClaims checks the codec is strict: anything it accepts
// re-encodes to exactly the same bytes.
func FuzzDecodeClaims(f *testing.F) {
	_, c, _ := fuzzFixture(f)
	f.Add(ticket.AppendClaims(nil, c))
	f.Add(ticket.AppendClaims(nil, ticket.Claims{Principal: "p", Tenant: "t", Expiry: time.Unix(-1, 999_999_999)}))
	f.Add([]byte{1, 'p', 1, 't', 0, 0, 0, 0})    // trailing byte
	f.Add([]byte{0x81, 0, 'p', 1, 't', 0, 0, 0}) // non-minimal length
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok := ticket.DecodeClaims(data)
		if !ok {
			return
		}
		if c.Principal == "" || c.Tenant == "" {
			t.Fatalf("decoded empty principal or tenant: %+v", c)
		}
		if again := ticket.AppendClaims(nil, c); !bytes.Equal(again, data) {
			t.Fatalf("decode(%x) = %+v re-encodes to %x", data, c, again)
		}
	})
}
