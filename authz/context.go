package authz

import "context"

// contextKey is the type of this package's context keys.
type contextKey struct{ name string }

var principalKey = &contextKey{"principal"}

// WithPrincipal returns a copy of ctx carrying p. p must not be nil.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	if p == nil {
		panic("authz: WithPrincipal with nil principal")
	}
	return context.WithValue(ctx, principalKey, p)
}

// PrincipalFrom returns the principal attached by WithPrincipal, if any.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey).(*Principal)
	return p, ok && p != nil
}
