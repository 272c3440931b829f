package metacatalog

import (
	"context"
	"testing"

	"lakegate/metasrv/api"
)

// TestCacheKeyedByDelegateToken: a decision made for a JWT user is reused
// only for calls presenting the same token. metasrv takes the user's groups
// from the token it verifies, so another token (other groups: a group left,
// a DENY group joined) must reach metasrv; before decisions were keyed by
// the token, the new token was served the old token's decision at the same
// generation.
func TestCacheKeyedByDelegateToken(t *testing.T) {
	f, cat, _, _ := cachedCatalog(t, Options{})
	warm(t, f, cat)
	withTok := func(tok string) context.Context {
		return api.WithDelegateToken(context.Background(), tok)
	}
	cases := []struct {
		name  string
		ctx   context.Context
		calls int
	}{
		{"first token", withTok("jwt-a"), 1},
		{"same token again", withTok("jwt-a"), 0},
		{"another token", withTok("jwt-b"), 1},
		{"no token", context.Background(), 1},
		{"no token again", context.Background(), 0},
	}
	for _, tc := range cases {
		before := f.resolveCount()
		if _, err := cat.Resolve(tc.ctx, alice, read(orders)); err != nil {
			t.Fatal(err)
		}
		if got := f.resolveCount() - before; got != tc.calls {
			t.Errorf("%s: %d calls to metasrv, want %d", tc.name, got, tc.calls)
		}
		before = f.listCount()
		if _, err := cat.List(tc.ctx, alice); err != nil {
			t.Fatal(err)
		}
		if got := f.listCount() - before; got != tc.calls {
			t.Errorf("%s: listing: %d calls to metasrv, want %d", tc.name, got, tc.calls)
		}
	}
}
