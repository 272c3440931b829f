package ticket_test

import (
	"crypto/rand"
	"fmt"
	"time"

	"lakegate/flight/ticket"
)

func Example() {
	ring, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		panic(err)
	}
	issued := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	blob, err := ring.Seal(rand.Reader, ticket.Claims{
		Principal: "alice@acme",
		Tenant:    "acme",
		Expiry:    issued.Add(5 * time.Minute),
		Payload:   []byte("plan-42"),
	})
	if err != nil {
		panic(err)
	}

	c, err := ring.Open(blob, issued.Add(time.Minute), "alice@acme", "acme")
	fmt.Println(c.Principal, c.Tenant, string(c.Payload), err)

	// Another caller, or too late: the same error either way.
	_, err = ring.Open(blob, issued.Add(time.Minute), "bob@acme", "acme")
	fmt.Println(err)
	_, err = ring.Open(blob, issued.Add(time.Hour), "alice@acme", "acme")
	fmt.Println(err)
	// Output:
	// alice@acme acme plan-42 <nil>
	// ticket: invalid ticket
	// ticket: invalid ticket
}

func ExampleNewRing_rotation() {
	oldKey := make([]byte, ticket.KeySize)
	newKey := make([]byte, ticket.KeySize)
	rand.Read(oldKey)
	rand.Read(newKey)
	expiry := time.Date(2026, 3, 1, 12, 5, 0, 0, time.UTC)
	at := expiry.Add(-time.Minute)

	before, _ := ticket.NewRing(oldKey)
	old, _ := before.Seal(nil, ticket.Claims{Principal: "p", Tenant: "t", Expiry: expiry})

	// New key seals; the old one still opens what it sealed.
	after, _ := ticket.NewRing(newKey, oldKey)
	_, err := after.Open(old, at, "p", "t")
	fmt.Println("old ticket:", err)

	// Once the old key is dropped, its tickets stop opening.
	retired, _ := ticket.NewRing(newKey)
	_, err = retired.Open(old, at, "p", "t")
	fmt.Println("after retiring:", err)
	// Output:
	// old ticket: <nil>
	// after retiring: ticket: invalid ticket
}
