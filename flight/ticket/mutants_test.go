package ticket_test

import (
	"fmt"
	"strings"
	"testing"

	"lakegate/flight/ticket"
)

// The tests in this file each close mutants of the ticket package that the
// rest of the suite let survive (docs/testing.md).

// TestDecodeClaimsStrict checks plaintexts that Seal never produces: each is
// refused, so a decoder that accepted one could not be told from a forgery.
func TestDecodeClaimsStrict(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"minimal", []byte{1, 'p', 1, 't', 0, 0, 0}, true},
		{"payload length missing", []byte{1, 'p', 1, 't', 0, 0}, false},
		{"nanoseconds missing", []byte{1, 'p', 1, 't', 0}, false},
		{"empty", nil, false},
		{"nanoseconds of a whole second", []byte{1, 'p', 1, 't', 0, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0}, false},
		{"nanoseconds just under a second", []byte{1, 'p', 1, 't', 0, 0xff, 0x93, 0xeb, 0xdc, 0x03, 0}, true},
		{"payload longer than the input", []byte{1, 'p', 1, 't', 0, 0, 2, 'x'}, false},
		{"empty principal", []byte{0, 1, 't', 0, 0, 0}, false},
	}
	for _, c := range cases {
		got, ok := ticket.DecodeClaims(c.in)
		if ok != c.ok {
			t.Errorf("%s: DecodeClaims(%x) = %+v, %v; want ok=%v", c.name, c.in, got, ok, c.ok)
		}
	}
}

// TestRingDescription checks what a ring says of itself: its key ids and
// count, never key material; a nil ring says so.
func TestRingDescription(t *testing.T) {
	r := mustRing(t, key(1), key(2), key(3))
	if got, want := r.String(), fmt.Sprintf("ticket.Ring{active: %s, keys: 3}", r.ActiveKeyID()); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	var nilRing *ticket.Ring
	if got := nilRing.String(); got != "ticket.Ring(nil)" {
		t.Errorf("nil String = %q", got)
	}
	if got := nilRing.LogValue().String(); got != "<nil>" {
		t.Errorf("nil LogValue = %q", got)
	}
	lv := r.LogValue().String()
	ids := r.KeyIDs()
	if len(ids) != 3 || !strings.Contains(lv, r.ActiveKeyID().String()) {
		t.Fatalf("LogValue = %q, key ids %v", lv, ids)
	}
	for _, id := range ids {
		if !strings.Contains(lv, id.String()) {
			t.Errorf("LogValue %q lacks key id %s", lv, id)
		}
	}
}
