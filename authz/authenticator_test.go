package authz_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strings"
	"sync"
	"testing"

	"lakegate/authz"
)

func TestAuthenticate(t *testing.T) {
	m, err := authz.ParsePrincipalMap([]byte(validMap))
	if err != nil {
		t.Fatal(err)
	}
	a := authz.NewAuthenticator(m)
	oneOff := []byte(tokAlice)
	oneOff[10] = 'a'
	tests := []struct {
		name  string
		id    string // for AuthenticateBasic; "" skips Basic
		token string
		want  string // principal id; "" means ErrUnauthenticated
	}{
		{"alice first token", "alice@acme", tokAlice, "alice@acme"},
		{"alice rotated token (upper-case hash in file)", "alice@acme", tokAlice2, "alice@acme"},
		{"gateway", "gateway-1", tokGW, "gateway-1"},
		{"wrong token", "alice@acme", "lg_" + strings.Repeat("D", 43), ""},
		{"empty token", "alice@acme", "", ""},
		{"one character off", "alice@acme", string(oneOff), ""},
		{"prefix of token", "alice@acme", tokAlice[:45], ""},
		{"token plus suffix", "alice@acme", tokAlice + "A", ""},
		{"the hash instead of the token", "alice@acme", hAlice, ""},
		{"oversized token", "alice@acme", tokAlice + strings.Repeat("A", 5000), ""},
		{"NUL byte", "alice@acme", tokAlice + "\x00", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(tt.token)
			check(t, "Authenticate", p, err, tt.want)
			p, err = a.AuthenticateBasic(tt.id, tt.token)
			check(t, "AuthenticateBasic", p, err, tt.want)
		})
	}

	// Basic: a valid token under another principal's (or no, or a
	// case-changed) id is refused.
	for _, id := range []string{"gateway-1", "", "Alice@acme", "alice@acme ", "alice", "nobody"} {
		p, err := a.AuthenticateBasic(id, tokAlice)
		check(t, "AuthenticateBasic("+id+")", p, err, "")
	}
	p, err := a.AuthenticateBasic("alice@acme", tokGW)
	check(t, "AuthenticateBasic(alice, gateway token)", p, err, "")
}

func check(t *testing.T, op string, p *authz.Principal, err error, want string) {
	t.Helper()
	if want == "" {
		if err != authz.ErrUnauthenticated || p != nil {
			t.Errorf("%s = %v, %v; want nil, ErrUnauthenticated", op, p, err)
		}
		return
	}
	if err != nil || p == nil || p.ID().String() != want {
		t.Errorf("%s = %v, %v; want %s", op, p, err, want)
	}
}

func TestAuthenticatorNilMap(t *testing.T) {
	a := authz.NewAuthenticator(nil)
	if p, err := a.Authenticate(tokAlice); !errors.Is(err, authz.ErrUnauthenticated) || p != nil {
		t.Errorf("Authenticate = %v, %v", p, err)
	}
	if p, err := a.AuthenticateBasic("a", ""); !errors.Is(err, authz.ErrUnauthenticated) || p != nil {
		t.Errorf("AuthenticateBasic = %v, %v", p, err)
	}
}

// bigMap returns a map of n principals with one token each, and the tokens.
func bigMap(tb testing.TB, n int) (*authz.PrincipalMap, []string) {
	tb.Helper()
	specs := make([]authz.PrincipalSpec, n)
	tokens := make([]string, n)
	for i := range specs {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			tb.Fatal(err)
		}
		tokens[i] = tok
		specs[i] = authz.PrincipalSpec{
			ID: fmt.Sprintf("user-%04d@t%d", i, i%7), Tenant: fmt.Sprintf("t%d", i%7), Role: "user",
			Namespaces: []string{"ns"}, TokenHashes: []string{authz.HashToken(tok).String()},
		}
	}
	data, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := authz.ParsePrincipalMap(data)
	if err != nil {
		tb.Fatal(err)
	}
	return m, tokens
}

func TestAuthenticate1000Principals(t *testing.T) {
	m, tokens := bigMap(t, 1000)
	if m.Len() != 1000 {
		t.Fatalf("Len() = %d", m.Len())
	}
	a := authz.NewAuthenticator(m)
	var wg sync.WaitGroup
	for w := range 4 { // concurrent use
		wg.Go(func() {
			for i := w; i < len(tokens); i += 4 {
				want := fmt.Sprintf("user-%04d@t%d", i, i%7)
				p, err := a.Authenticate(tokens[i])
				if err != nil || p.ID().String() != want {
					t.Errorf("token %d: %v, %v; want %s", i, p, err, want)
				}
				if p, err := a.AuthenticateBasic(want, tokens[i]); err != nil || p.ID().String() != want {
					t.Errorf("basic %d: %v, %v", i, p, err)
				}
				other := fmt.Sprintf("user-%04d@t%d", (i+1)%1000, (i+1)%1000%7)
				if _, err := a.AuthenticateBasic(other, tokens[i]); err != authz.ErrUnauthenticated {
					t.Errorf("basic %d under %s: err = %v", i, other, err)
				}
			}
		})
	}
	wg.Wait()
	if _, err := a.Authenticate("lg_" + strings.Repeat("x", 43)); err != authz.ErrUnauthenticated {
		t.Errorf("unknown token: %v", err)
	}
}

func TestNewToken(t *testing.T) {
	seen := make(map[string]bool)
	for range 100 {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if !authz.ValidTokenFormat(tok) || len(tok) != 46 || !strings.HasPrefix(tok, "lg_") {
			t.Fatalf("NewToken = %q, not valid", tok)
		}
		if seen[tok] {
			t.Fatal("duplicate token")
		}
		seen[tok] = true
	}
	// Deterministic with a deterministic reader.
	r := mathrand.NewChaCha8([32]byte{})
	t1, _ := authz.NewToken(r)
	if !authz.ValidTokenFormat(t1) {
		t.Fatal(t1)
	}
	if _, err := authz.NewToken(strings.NewReader("short")); err == nil {
		t.Error("NewToken with a short reader succeeded")
	}
	for _, bad := range []string{
		"", "lg_", tokAlice[:45], tokAlice + "A", "LG_" + tokAlice[3:], "xx_" + tokAlice[3:],
		"lg_" + strings.Repeat("A", 42) + "=", "lg_" + strings.Repeat("A", 42) + "+",
		"lg_" + strings.Repeat("A", 42) + "B", // non-canonical: trailing bits set
		"lg_" + strings.Repeat("A", 42) + "\x00",
	} {
		if authz.ValidTokenFormat(bad) {
			t.Errorf("ValidTokenFormat(%q) = true", bad)
		}
	}
}

func TestHashToken(t *testing.T) {
	// SHA-256("abc"), FIPS 180-2 test vector.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := authz.HashToken("abc").String(); got != want {
		t.Errorf("HashToken(abc) = %s", got)
	}
}

func BenchmarkAuthenticate1000(b *testing.B) {
	m, tokens := bigMap(b, 1000)
	a := authz.NewAuthenticator(m)
	tok := tokens[500]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(tok); err != nil {
			b.Fatal(err)
		}
	}
}
