package api

import "context"

// DelegateTokenHeader carries, on a delegated request, the JWT the
// delegated user signed in to the gateway with. metasrv verifies it itself
// (the gateway vouches for nothing) and, when it is valid and names the
// delegated user and tenant, makes the user's group memberships in the
// metalake those of the token's groups claim. Only with the delegation
// headers; a token that does not verify or names another user refuses the
// request like a bad credential.
const DelegateTokenHeader = "Lakegate-Delegate-Token"

// CallerTokenHeader carries, on a request a follower forwards to the leader
// for a caller signed in by JWT, that caller's JWT: the leader verifies it
// itself (the caller is in no node's map by id). Like CallerHeader, only
// metadata_peer principals may send it.
const CallerTokenHeader = "Lakegate-Caller-Token"

type delegateTokenKey struct{}

// WithDelegateToken returns ctx carrying the delegated user's JWT, which
// the metasrv client sends as DelegateTokenHeader on delegated requests.
func WithDelegateToken(ctx context.Context, jwt string) context.Context {
	return context.WithValue(ctx, delegateTokenKey{}, jwt)
}

// DelegateTokenFrom returns the JWT WithDelegateToken attached, or "".
func DelegateTokenFrom(ctx context.Context) string {
	s, _ := ctx.Value(delegateTokenKey{}).(string)
	return s
}
