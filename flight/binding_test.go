package flight

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"

	"lakegate/authz"
	"lakegate/authz/oidc"
	"lakegate/authz/oidctest"
	"lakegate/flight/clocktest"
)

// jwtLake is a lake whose principals come from a reloadable map with the
// static principals of testPrincipals (alice's namespaces given) and an
// OIDC provider of iss whose users read sales; every clock is clk.
type jwtLake struct {
	*lake
	iss *oidctest.Issuer
	ps  *authz.Principals
	clk *clocktest.Clock
}

// jwtMapDoc is the principal map of a jwtLake: alice with namespaces,
// carol unless dropCarol, the provider of iss.
func jwtMapDoc(t *testing.T, iss *oidctest.Issuer, aliceNS []string, dropCarol bool) *authz.PrincipalMap {
	t.Helper()
	specs := []authz.PrincipalSpec{
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: aliceNS, TokenHashes: []string{authz.HashToken(aliceToken).String()}},
		{ID: "carol@acme", Tenant: "acme", Role: "user", Namespaces: []string{"hr"}, TokenHashes: []string{authz.HashToken(carolToken).String()}},
	}
	if dropCarol {
		specs = specs[:1]
	}
	if aliceNS == nil {
		specs = specs[1:]
	}
	doc, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		t.Fatal(err)
	}
	doc = append(doc, oidctest.OIDCSection(iss.ProviderYAML("idp", "tenant: acme", "groups_claim: groups",
		"auto_create_users: true", "namespaces: {all: [sales]}"))...)
	m, err := authz.ParsePrincipalMap(doc)
	if err != nil {
		t.Fatalf("map: %v\n%s", err, doc)
	}
	return m
}

func newJWTLake(t *testing.T) *jwtLake {
	t.Helper()
	iss := oidctest.NewIssuer(t)
	clk := clocktest.New(time.Now())
	ps, err := authz.NewPrincipals(jwtMapDoc(t, iss, []string{"sales", "hr"}, false), authz.PrincipalsConfig{
		Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client()}),
		Now:  clk.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	l := newLake(t, func(c *Config) {
		c.Principals, c.Authn, c.Now, c.Metrics = nil, ps, clk.Now, NewMetrics(prometheus.NewRegistry())
	})
	return &jwtLake{lake: l, iss: iss, ps: ps, clk: clk}
}

// token is a JWT of user valid for ttl from the lake's clock, with groups.
func (l *jwtLake) token(t *testing.T, user string, ttl time.Duration, groups ...string) string {
	t.Helper()
	c := l.iss.Claims(user)
	now := l.clk.Now()
	c["iat"], c["exp"] = now.Unix(), now.Add(ttl).Unix()
	if groups != nil {
		c["groups"] = groups
	}
	return l.iss.Token(t, c)
}

// TestHandlesFollowPrincipal: a ticket or prepared statement handle is
// served only while its principal holds the grants it was issued under and
// its JWT has not expired — a reload that removes the principal or changes
// its grants, or the token's expiry, refuses it with the answer of a
// forged ticket, even to a newer token of the same user. A reload that
// leaves the principal as it was keeps its handles. Before handles were
// bound, the expired-token and changed-grant cases were served.
func TestHandlesFollowPrincipal(t *testing.T) {
	cases := []struct {
		name string
		// issue is the credential that obtains the handles.
		issue func(l *jwtLake) string
		// change happens between issuing and using them, and returns the
		// credential that presents them.
		change func(l *jwtLake) string
		code   codes.Code
	}{
		{
			name:   "unchanged static principal, unrelated reload",
			issue:  func(*jwtLake) string { return aliceToken },
			change: func(l *jwtLake) string { l.replace(t, []string{"sales", "hr"}, true); return aliceToken },
			code:   codes.OK,
		},
		{
			name:   "static principal removed",
			issue:  func(*jwtLake) string { return aliceToken },
			change: func(l *jwtLake) string { l.replace(t, nil, false); return aliceToken },
			code:   codes.Unauthenticated,
		},
		{
			name:   "static principal's grants changed",
			issue:  func(*jwtLake) string { return aliceToken },
			change: func(l *jwtLake) string { l.replace(t, []string{"sales"}, false); return aliceToken },
			code:   codes.Unauthenticated,
		},
		{
			name:   "JWT user, a newer token before expiry",
			issue:  func(l *jwtLake) string { return l.token(t, "dave@acme", 30*time.Minute) },
			change: func(l *jwtLake) string { l.clk.Advance(5 * time.Minute); return l.token(t, "dave@acme", time.Hour) },
			code:   codes.OK,
		},
		{
			name:   "JWT user, a newer token after the first expired",
			issue:  func(l *jwtLake) string { return l.token(t, "dave@acme", 3*time.Minute) },
			change: func(l *jwtLake) string { l.clk.Advance(4 * time.Minute); return l.token(t, "dave@acme", time.Hour) },
			code:   codes.Unauthenticated,
		},
		{
			name:   "JWT user, the expired token itself",
			issue:  func(l *jwtLake) string { return l.token(t, "dave@acme", 3*time.Minute) },
			change: func(l *jwtLake) string { l.clk.Advance(4 * time.Minute); return "" },
			code:   codes.Unauthenticated,
		},
		{
			name:   "JWT user, other groups",
			issue:  func(l *jwtLake) string { return l.token(t, "dave@acme", time.Hour, "analysts") },
			change: func(l *jwtLake) string { return l.token(t, "dave@acme", time.Hour) },
			code:   codes.Unauthenticated,
		},
		{
			name:   "JWT provider removed",
			issue:  func(l *jwtLake) string { return l.token(t, "dave@acme", time.Hour) },
			change: func(l *jwtLake) string { l.dropProvider(t); return "" },
			code:   codes.Unauthenticated,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newJWTLake(t)
			cl := l.client(t)
			seedOrders(t, cl)
			cred := tc.issue(l)
			ctx := bearerCtx(cred)
			info, err := cl.Execute(ctx, "SELECT id FROM sales.orders")
			if err != nil {
				t.Fatal(err)
			}
			prep, err := cl.Prepare(ctx, "SELECT id FROM sales.orders")
			if err != nil {
				t.Fatal(err)
			}
			defer prep.Close(ctx)
			if later := tc.change(l); later != "" {
				ctx = bearerCtx(later)
			}
			rows, err := fetch(ctx, cl, info)
			checkStatus(t, err, tc.code, "unauthenticated")
			if tc.code == codes.OK && len(rows) != 2 {
				t.Errorf("ticket: rows %v", rows)
			}
			_, err = executePrepared(ctx, cl, prep, nil, "")
			checkStatus(t, err, tc.code, "unauthenticated")
		})
	}
}

// replace puts a map in force with alice's namespaces (nil: no alice) and
// without carol if dropCarol.
func (l *jwtLake) replace(t *testing.T, aliceNS []string, dropCarol bool) {
	t.Helper()
	if err := l.ps.Replace(jwtMapDoc(t, l.iss, aliceNS, dropCarol)); err != nil {
		t.Fatal(err)
	}
}

// dropProvider puts a map in force without the OIDC provider.
func (l *jwtLake) dropProvider(t *testing.T) {
	t.Helper()
	m, err := authz.ParsePrincipalMap(mustEncode(t, []authz.PrincipalSpec{
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: []string{authz.HashToken(aliceToken).String()}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ps.Replace(m); err != nil {
		t.Fatal(err)
	}
}

func mustEncode(t *testing.T, specs []authz.PrincipalSpec) []byte {
	t.Helper()
	doc, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestAuthnFailuresCounted: each refused credential is counted by its
// reason; the answer is the same Unauthenticated for all.
func TestAuthnFailuresCounted(t *testing.T) {
	l := newJWTLake(t)
	cl := l.client(t)
	other := oidctest.NewIssuer(t)
	wrongAud := l.iss.Claims("dave@acme")
	wrongAud["aud"] = "someone-else"
	cases := []struct {
		token, reason string
	}{
		{"lg_nobody", "unknown_token"},
		{l.token(t, "dave@acme", -2*time.Hour), "expired"},
		{l.iss.Token(t, wrongAud), "bad_audience"},
		{other.Token(t, other.Claims("dave@acme")), "bad_issuer"},
	}
	for _, tc := range cases {
		before := authnFailures(t, l.srv.cfg.Metrics, tc.reason)
		_, err := cl.Execute(bearerCtx(tc.token), "SELECT 1")
		checkStatus(t, err, codes.Unauthenticated, unauthenticatedMessage)
		if got := authnFailures(t, l.srv.cfg.Metrics, tc.reason); got != before+1 {
			t.Errorf("%s: lakegate_authn_failures_total{reason=%q} %v -> %v", tc.reason, tc.reason, before, got)
		}
	}
}

// authnFailures reads lakegate_authn_failures_total{reason}.
func authnFailures(t *testing.T, m *Metrics, reason string) float64 {
	t.Helper()
	return testutil.ToFloat64(m.authn.WithLabelValues(reason))
}
