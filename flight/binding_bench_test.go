package flight

import (
	"context"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/flight/ticket"
)

// BenchmarkHandleBinding compares, in the same run, opening a ticket as
// before handles were bound (ticket.Ring.Open) with openFor (Open plus the
// token-expiry check and the grant digest), and sealing likewise: the cost
// the binding adds to every DoGet and prepared-statement call.
func BenchmarkHandleBinding(b *testing.B) {
	ring, err := ticket.GenerateRing(nil)
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{cfg: Config{Tickets: ring, Now: time.Now}} // what sealFor and openFor use
	alice := testPrincipal(b, "alice@acme", authz.RoleUser, "sales")
	payload := make([]byte, 256)
	claims := ticket.Claims{Principal: "alice@acme", Tenant: "acme", Expiry: time.Now().Add(time.Hour), Payload: payload}
	plain, err := ring.Seal(nil, claims)
	if err != nil {
		b.Fatal(err)
	}
	bound, err := s.sealFor(alice, claims)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("open=ring", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.cfg.Tickets.Open(plain, time.Now(), "alice@acme", "acme"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open=bound", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.openFor(alice, bound); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("seal=ring", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.cfg.Tickets.Seal(nil, claims); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("seal=bound", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.sealFor(alice, claims); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAuthenticateStatic compares, in the same run, a static token
// authenticated by the map's Authenticator directly (the interceptor's path
// before reloads) and through authz.Principals (its path now): the cost of
// holding a reloadable map.
func BenchmarkAuthenticateStatic(b *testing.B) {
	ps, err := authz.NewPrincipals(testPrincipals(b), authz.PrincipalsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	a := ps.Current().Authenticator()
	ctx := context.Background()
	b.Run("path=authenticator", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := a.AuthenticateReason(ctx, aliceToken); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path=principals", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ps.AuthenticateReason(ctx, aliceToken); err != nil {
				b.Fatal(err)
			}
		}
	})
}
