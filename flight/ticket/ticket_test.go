package ticket_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"lakegate/flight/ticket"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// key returns a deterministic 32-byte key.
func key(seed byte) []byte {
	k := make([]byte, ticket.KeySize)
	for i := range k {
		k[i] = seed + byte(i)*7
	}
	return k
}

func mustRing(t testing.TB, active []byte, verify ...[]byte) *ticket.Ring {
	t.Helper()
	r, err := ticket.NewRing(active, verify...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustSeal(t testing.TB, r *ticket.Ring, c ticket.Claims) []byte {
	t.Helper()
	blob, err := r.Seal(rand.Reader, c)
	if err != nil {
		t.Fatal(err)
	}
	return blob
}

func claims() ticket.Claims {
	return ticket.Claims{
		Principal: "alice@acme",
		Tenant:    "acme",
		Expiry:    now.Add(5 * time.Minute),
		Payload:   []byte("select 1"),
	}
}

func sameClaims(a, b ticket.Claims) bool {
	return a.Principal == b.Principal && a.Tenant == b.Tenant &&
		a.Expiry.Equal(b.Expiry) && bytes.Equal(a.Payload, b.Payload)
}

func TestRoundTrip(t *testing.T) {
	r := mustRing(t, key(1))
	// Largest payload that still fits in MaxSize with the claims below:
	// header, nonce, tag; one-byte principal and tenant with their
	// lengths; 5-byte seconds, 5-byte nanoseconds, 4-byte payload length.
	maxPayload := ticket.MaxSize - 1 - 4 - 12 - 16 - (1 + 1) - (1 + 1) - 5 - 5 - 4
	tests := []struct {
		name string
		c    ticket.Claims
	}{
		{"basic", claims()},
		{"no payload", ticket.Claims{Principal: "p", Tenant: "t", Expiry: now.Add(time.Second)}},
		{"empty payload", ticket.Claims{Principal: "p", Tenant: "t", Expiry: now.Add(time.Second), Payload: []byte{}}},
		{"nanoseconds and zone", ticket.Claims{Principal: "svc:gw-1", Tenant: "t_1",
			Expiry: time.Date(2030, 1, 2, 3, 4, 5, 999_999_999, time.FixedZone("X", 3600))}},
		{"far future", ticket.Claims{Principal: "p", Tenant: "t", Expiry: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}},
		{"binary payload", ticket.Claims{Principal: "p", Tenant: "t", Expiry: now.Add(time.Hour), Payload: []byte{0, 0xff, '\n', 0x80}}},
		{"max payload", ticket.Claims{Principal: "p", Tenant: "t", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 999_999_999, time.UTC),
			Payload: bytes.Repeat([]byte{'x'}, maxPayload)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blob := mustSeal(t, r, tt.c)
			if len(blob) > ticket.MaxSize {
				t.Fatalf("len(blob) = %d > MaxSize", len(blob))
			}
			got, err := r.Open(blob, now, tt.c.Principal, tt.c.Tenant)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !sameClaims(got, tt.c) {
				t.Errorf("Open = %+v, want %+v", got, tt.c)
			}
			if got.Expiry.Location() != time.UTC {
				t.Errorf("Expiry location = %v, want UTC", got.Expiry.Location())
			}
			if len(tt.c.Payload) == 0 && got.Payload != nil {
				t.Errorf("empty payload opened as %#v, want nil", got.Payload)
			}
		})
	}
	t.Run("max payload plus one", func(t *testing.T) {
		c := tests[len(tests)-1].c
		c.Payload = append(c.Payload, 'x')
		if _, err := r.Seal(rand.Reader, c); !errors.Is(err, ticket.ErrTooLarge) {
			t.Fatalf("Seal = %v, want ErrTooLarge", err)
		}
	})
}

func TestSealRejects(t *testing.T) {
	r := mustRing(t, key(1))
	tests := []struct {
		name string
		edit func(*ticket.Claims)
	}{
		{"empty principal", func(c *ticket.Claims) { c.Principal = "" }},
		{"empty tenant", func(c *ticket.Claims) { c.Tenant = "" }},
		{"zero expiry", func(c *ticket.Claims) { c.Expiry = time.Time{} }},
		{"huge payload", func(c *ticket.Claims) { c.Payload = make([]byte, ticket.MaxSize) }},
		{"huge principal", func(c *ticket.Claims) { c.Principal = strings.Repeat("p", ticket.MaxSize) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := claims()
			tt.edit(&c)
			if blob, err := r.Seal(rand.Reader, c); err == nil {
				t.Fatalf("Seal = %x, nil; want error", blob)
			}
		})
	}
	t.Run("rand fails", func(t *testing.T) {
		_, err := r.Seal(iotestErrReader{}, claims())
		if !errors.Is(err, errRand) {
			t.Fatalf("Seal = %v, want %v", err, errRand)
		}
	})
}

var errRand = errors.New("rand broke")

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errRand }

func TestSealFreshNonce(t *testing.T) {
	r := mustRing(t, key(1))
	a, b := mustSeal(t, r, claims()), mustSeal(t, r, claims())
	if bytes.Equal(a, b) {
		t.Fatal("two seals of the same claims are equal")
	}
	// nil rand means crypto/rand.
	c, err := r.Seal(nil, claims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Open(c, now, "alice@acme", "acme"); err != nil {
		t.Fatal(err)
	}
}

func TestLayout(t *testing.T) {
	r := mustRing(t, key(1))
	nonce := bytes.Repeat([]byte{0xAB}, 12)
	blob, err := r.Seal(bytes.NewReader(nonce), claims())
	if err != nil {
		t.Fatal(err)
	}
	id := r.ActiveKeyID()
	if blob[0] != 1 || !bytes.Equal(blob[1:5], id[:]) || !bytes.Equal(blob[5:17], nonce) {
		t.Fatalf("header = %x, want 01 | %x | %x", blob[:17], id, nonce)
	}
	if bytes.Contains(blob, []byte("alice")) || bytes.Contains(blob, []byte("select 1")) {
		t.Fatal("sealed blob contains plaintext")
	}
}

func TestRotation(t *testing.T) {
	oldKey, newKey := key(1), key(2)
	before := mustRing(t, oldKey)
	oldBlob := mustSeal(t, before, claims())

	after := mustRing(t, newKey, oldKey)
	if got := after.KeyIDs(); len(got) != 2 || got[0] != after.ActiveKeyID() || got[1] != before.ActiveKeyID() {
		t.Fatalf("KeyIDs = %v", got)
	}
	if _, err := after.Open(oldBlob, now, "alice@acme", "acme"); err != nil {
		t.Fatalf("rotated ring cannot open a ticket sealed under its verification key: %v", err)
	}
	newBlob := mustSeal(t, after, claims())
	if id := after.ActiveKeyID(); !bytes.Equal(newBlob[1:5], id[:]) {
		t.Fatalf("new ticket key id %x, want active %x", newBlob[1:5], id)
	}
	if _, err := after.Open(newBlob, now, "alice@acme", "acme"); err != nil {
		t.Fatal(err)
	}
	// The old ring does not know the new key.
	if _, err := before.Open(newBlob, now, "alice@acme", "acme"); err != ticket.ErrInvalid {
		t.Fatalf("old ring opened a new ticket: %v", err)
	}
	// Retiring the old key ends its tickets.
	retired := mustRing(t, newKey)
	if _, err := retired.Open(oldBlob, now, "alice@acme", "acme"); err != ticket.ErrInvalid {
		t.Fatalf("retired key still opens: %v", err)
	}
}

func TestOpenInvalid(t *testing.T) {
	r := mustRing(t, key(1))
	c := claims()
	blob := mustSeal(t, r, c)
	foreign := mustRing(t, key(9))
	// A foreign ring whose key id collides cannot be built without a
	// 2^-32 search; instead forge the id of r onto a foreign ticket.
	forged := mustSeal(t, foreign, c)
	id := r.ActiveKeyID()
	copy(forged[1:5], id[:])
	withVersion := func(v byte) []byte { b := bytes.Clone(blob); b[0] = v; return b }
	// A valid ticket whose plaintext has trailing bytes cannot be made
	// through Seal; the codec fuzz test covers strict decoding.

	tests := []struct {
		name      string
		ring      *ticket.Ring
		blob      []byte
		now       time.Time
		principal string
		tenant    string
	}{
		{"control", r, blob, now, c.Principal, c.Tenant},
		{"expired", r, blob, c.Expiry.Add(time.Nanosecond), c.Principal, c.Tenant},
		{"at expiry", r, blob, c.Expiry, c.Principal, c.Tenant},
		{"long expired", r, blob, c.Expiry.Add(24 * time.Hour), c.Principal, c.Tenant},
		{"zero now", r, blob, time.Time{}, c.Principal, c.Tenant},
		{"other principal", r, blob, now, "mallory@acme", c.Tenant},
		{"principal prefix", r, blob, now, "alice", c.Tenant},
		{"principal case", r, blob, now, "Alice@acme", c.Tenant},
		{"empty principal", r, blob, now, "", c.Tenant},
		{"other tenant", r, blob, now, c.Principal, "evil"},
		{"empty tenant", r, blob, now, c.Principal, ""},
		{"swapped", r, blob, now, c.Tenant, c.Principal},
		{"foreign ring", foreign, blob, now, c.Principal, c.Tenant},
		{"forged key id", r, forged, now, c.Principal, c.Tenant},
		{"empty", r, []byte{}, now, c.Principal, c.Tenant},
		{"nil", r, nil, now, c.Principal, c.Tenant},
		{"header only", r, blob[:17], now, c.Principal, c.Tenant},
		{"version 0", r, withVersion(0), now, c.Principal, c.Tenant},
		{"version 2", r, withVersion(2), now, c.Principal, c.Tenant},
		{"trailing byte", r, append(bytes.Clone(blob), 0), now, c.Principal, c.Tenant},
		{"oversize", r, append(bytes.Clone(blob), make([]byte, ticket.MaxSize)...), now, c.Principal, c.Tenant},
	}
	for i := range len(blob) {
		tests = append(tests, struct {
			name      string
			ring      *ticket.Ring
			blob      []byte
			now       time.Time
			principal string
			tenant    string
		}{fmt.Sprintf("truncated to %d", i), r, blob[:i], now, c.Principal, c.Tenant})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ring.Open(tt.blob, tt.now, tt.principal, tt.tenant)
			if tt.name == "control" {
				if err != nil {
					t.Fatalf("control: %v", err)
				}
				return
			}
			checkInvalid(t, got, err)
		})
	}
}

// checkInvalid asserts the one indistinguishable failure.
func checkInvalid(t *testing.T, got ticket.Claims, err error) {
	t.Helper()
	if err != ticket.ErrInvalid || err.Error() != "ticket: invalid ticket" {
		t.Fatalf("Open error = %v, want exactly ErrInvalid", err)
	}
	if got.Principal != "" || got.Tenant != "" || !got.Expiry.IsZero() || got.Payload != nil {
		t.Fatalf("Open returned claims %+v with an error", got)
	}
}

func TestTamperEveryByte(t *testing.T) {
	r := mustRing(t, key(1))
	c := claims()
	blob := mustSeal(t, r, c)
	for i := range blob {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(blob)
			b[i] ^= mask
			got, err := r.Open(b, now, c.Principal, c.Tenant)
			if err != ticket.ErrInvalid {
				t.Fatalf("byte %d ^ %#x: Open = %v, want ErrInvalid", i, mask, err)
			}
			checkInvalid(t, got, err)
		}
	}
}

func TestNewRingErrors(t *testing.T) {
	tests := []struct {
		name   string
		active []byte
		verify [][]byte
	}{
		{"nil active", nil, nil},
		{"short active", key(1)[:31], nil},
		{"long active", append(key(1), 0), nil},
		{"AES-128 size", key(1)[:16], nil},
		{"short verify", key(1), [][]byte{key(2)[:31]}},
		{"duplicate of active", key(1), [][]byte{key(1)}},
		{"duplicate verify", key(1), [][]byte{key(2), key(2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ticket.NewRing(tt.active, tt.verify...)
			if err == nil {
				t.Fatalf("NewRing = %v, want error", r)
			}
			for _, k := range append([][]byte{tt.active}, tt.verify...) {
				if len(k) > 0 && containsKey(err.Error(), k) {
					t.Fatalf("error %q contains key material", err)
				}
			}
		})
	}
}

func TestNewRingCopiesKeys(t *testing.T) {
	k := key(1)
	r := mustRing(t, k)
	blob := mustSeal(t, r, claims())
	clear(k)
	if _, err := r.Open(blob, now, "alice@acme", "acme"); err != nil {
		t.Fatalf("ring depends on caller's key slice: %v", err)
	}
}

func TestGenerateRing(t *testing.T) {
	a, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ticket.GenerateRing(nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.ActiveKeyID() == b.ActiveKeyID() {
		t.Fatal("two generated rings share a key id")
	}
	blob := mustSeal(t, a, claims())
	if _, err := b.Open(blob, now, "alice@acme", "acme"); err != ticket.ErrInvalid {
		t.Fatalf("generated rings interoperate: %v", err)
	}
	if _, err := ticket.GenerateRing(bytes.NewReader(make([]byte, 31))); err == nil {
		t.Fatal("GenerateRing accepted a short read")
	}
}

// containsKey reports whether s holds k in any encoding a careless message
// might use.
func containsKey(s string, k []byte) bool {
	for _, enc := range []string{
		string(k),
		hex.EncodeToString(k),
		strings.ToUpper(hex.EncodeToString(k)),
		base64.RawURLEncoding.EncodeToString(k),
		base64.StdEncoding.EncodeToString(k),
		fmt.Sprint(k),
		fmt.Sprintf("%v", k[:8]),
	} {
		if strings.Contains(s, enc) {
			return true
		}
	}
	return false
}

func TestRingRedacts(t *testing.T) {
	k1, k2 := key(1), key(2)
	r := mustRing(t, k1, k2)
	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		fmt.Fprintf(&out, verb+"\n", r)
		fmt.Fprintf(&out, verb+"\n", *r)
		fmt.Fprintf(&out, verb+"\n", []*ticket.Ring{r})
	}
	slog.New(slog.NewTextHandler(&out, nil)).Info("ring", "ring", r)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("ring", "ring", r)
	for _, k := range [][]byte{k1, k2} {
		if containsKey(out.String(), k) {
			t.Fatalf("formatted ring contains key material:\n%s", out.String())
		}
	}
	if !strings.Contains(out.String(), r.ActiveKeyID().String()) {
		t.Errorf("formatted ring does not name its active key id:\n%s", out.String())
	}
}

func TestConcurrentUse(t *testing.T) {
	r := mustRing(t, key(1), key(2))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			c := claims()
			c.Principal = fmt.Sprintf("user-%d", g)
			for range 200 {
				blob, err := r.Seal(rand.Reader, c)
				if err != nil {
					errs <- err
					return
				}
				got, err := r.Open(blob, now, c.Principal, c.Tenant)
				if err != nil || !sameClaims(got, c) {
					errs <- fmt.Errorf("goroutine %d: Open = %+v, %v", g, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkSeal(b *testing.B) {
	r := mustRing(b, key(1))
	c := claims()
	c.Payload = bytes.Repeat([]byte{'q'}, 256)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Seal(rand.Reader, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	r := mustRing(b, key(1), key(2), key(3))
	c := claims()
	c.Payload = bytes.Repeat([]byte{'q'}, 256)
	blob := mustSeal(b, r, c)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Open(blob, now, c.Principal, c.Tenant); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenInvalid(b *testing.B) {
	r := mustRing(b, key(1))
	blob := mustSeal(b, r, claims())
	blob[len(blob)-1] ^= 1
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Open(blob, now, "alice@acme", "acme"); err != ticket.ErrInvalid {
			b.Fatal(err)
		}
	}
}

var _ io.Reader = iotestErrReader{}
