package integration_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/authz"
	"lakegate/authz/oidctest"
)

// Sign-in with JWTs from an OIDC issuer the test runs, and reloads of the
// principal map of a running `lakegate serve` (SIGHUP and the operator's
// reload call).

// oidcServe is a demo serve whose principal map (the demo map in its data
// directory) also trusts iss for tenant demo, put in force by a reload.
type oidcServe struct {
	*server
	iss     *oidctest.Issuer
	mapPath string
	demoMap []byte // the demo map as generated
}

// issuerSection is the oidc section trusting iss for tenant demo (tenant
// claim tid): users are created on first sight and read sales; the keys are
// fetched again at most every 2 s.
func issuerSection(iss *oidctest.Issuer) string {
	return oidctest.OIDCSection(iss.ProviderYAML("test-idp", "tenant_claim: tid", "tenants: [demo]",
		"groups_claim: groups", "auto_create_users: true", "namespaces: {all: [sales]}", "refresh_interval: 2s"))
}

func startOIDCServe(t *testing.T) *oidcServe {
	t.Helper()
	srv := startServe(t)
	s := &oidcServe{server: srv, iss: oidctest.NewIssuer(t), mapPath: filepath.Join(srv.DataDir, "principals.yaml")}
	var err error
	if s.demoMap, err = os.ReadFile(s.mapPath); err != nil {
		t.Fatal(err)
	}
	s.writeMap(t, append(bytes.Clone(s.demoMap), issuerSection(s.iss)...))
	if code, body := s.reloadREST(t, s.token(t, "operator")); code != http.StatusOK {
		t.Fatalf("reload with the issuer: HTTP %d %s", code, body)
	}
	return s
}

// writeMap replaces the principal map file whole.
func (s *oidcServe) writeMap(t *testing.T, doc []byte) {
	t.Helper()
	tmp := s.mapPath + ".new"
	if err := os.WriteFile(tmp, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, s.mapPath); err != nil {
		t.Fatal(err)
	}
}

// reloadREST asks the embedded metasrv (and so the whole process) to reload.
func (s *oidcServe) reloadREST(t *testing.T, token string) (int, string) {
	t.Helper()
	return s.rest(t, "POST", "/api/admin/principals/reload", token)
}

// rest calls the embedded metasrv's REST API with token and, optionally,
// a JSON body.
func (s *oidcServe) rest(t *testing.T, method, path, token string, body ...any) (int, string) {
	t.Helper()
	m := bannerMetasrv.FindStringSubmatch(s.Banner)
	if m == nil {
		t.Fatalf("no metasrv address in the banner:\n%s", s.Banner)
	}
	var rd io.Reader
	if len(body) == 1 {
		b, err := json.Marshal(body[0])
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+m[1]+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// claims are valid claims of user in tenant demo.
func (s *oidcServe) claims(user string) oidctest.Claims {
	c := s.iss.Claims(user)
	c["tid"] = "demo"
	return c
}

// TestJWTSignIn: a user signs in over ADBC with a JWT, as a bearer token
// and as the password of JDBC's user/password form; every forged,
// misdirected or stale token is refused with the same Unauthenticated
// answer, each counted by its reason; a rotated issuer key works without
// restart; a flood of unknown kids fetches the keys at most once.
func TestJWTSignIn(t *testing.T) {
	s := startOIDCServe(t)
	ctx := context.Background()
	const user = "jwt-analyst@demo"
	good := s.iss.Token(t, s.claims(user))

	t.Run("bearer", func(t *testing.T) {
		c := mustDial(t, s.uri(), bearer(good))
		if _, rows, err := c.query(ctx, "SELECT 1"); err != nil || len(rows) != 1 || rows[0][0] != "1" {
			t.Fatalf("SELECT 1 = %v, %v", rows, err)
		}
	})
	t.Run("user and password", func(t *testing.T) {
		c := mustDial(t, s.uri(), map[string]string{adbc.OptionKeyUsername: user, adbc.OptionKeyPassword: good})
		if _, rows, err := c.query(ctx, "SELECT 1"); err != nil || len(rows) != 1 {
			t.Fatalf("SELECT 1 = %v, %v", rows, err)
		}
	})
	t.Run("user and password of another user", func(t *testing.T) {
		_, err := dial(t, s.uri(), map[string]string{adbc.OptionKeyUsername: "analyst@demo", adbc.OptionKeyPassword: good})
		if adbcStatus(err) != adbc.StatusUnauthenticated {
			t.Fatalf("err = %v, want Unauthenticated", err)
		}
	})

	t.Run("metasrv REST", func(t *testing.T) {
		// metasrv verifies the JWT itself (MCP forwards the caller's
		// bearer to it the same way).
		code, body := s.rest(t, "GET", "/api/whoami", good)
		if code != http.StatusOK || !strings.Contains(body, `"name":"`+user+`"`) {
			t.Fatalf("whoami with a JWT: HTTP %d %s", code, body)
		}
		if code, _ := s.rest(t, "GET", "/api/whoami", s.iss.Token(t, s.claims("x@demo"))+"x"); code != http.StatusUnauthorized {
			t.Fatalf("whoami with a bad signature: HTTP %d", code)
		}
	})

	with := func(kv ...any) oidctest.Claims {
		c := s.claims(user)
		for i := 0; i < len(kv); i += 2 {
			c[kv[i].(string)] = kv[i+1]
		}
		return c
	}
	stranger := oidctest.NewKey(t, "RS256")
	stranger.Kid = "not-published"
	pub, err := x509.MarshalPKIXPublicKey(s.iss.Current().Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	other := oidctest.NewIssuer(t)
	refused := []struct{ name, token, reason string }{
		{"another audience", s.iss.Token(t, with("aud", "someone-else")), "bad_audience"},
		{"another issuer", other.Token(t, func() oidctest.Claims { c := other.Claims(user); c["tid"] = "demo"; return c }()), "bad_issuer"},
		{"another tenant", s.iss.Token(t, with("tid", "acme")), "unknown_tenant"},
		{"expired", s.iss.Token(t, with("iat", time.Now().Add(-3*time.Hour).Unix(), "exp", time.Now().Add(-2*time.Hour).Unix())), "expired"},
		{"an unknown key", oidctest.Sign(t, stranger, s.claims(user), nil), "unknown_key"},
		{"alg none", oidctest.Forge(t, map[string]any{"alg": "none", "kid": s.iss.Current().Kid}, s.claims(user), nil), "bad_algorithm"},
		{"HS256 with the public key", oidctest.ForgeHS256(t, map[string]any{"alg": "HS256", "kid": s.iss.Current().Kid}, s.claims(user), pubPEM), "bad_algorithm"},
	}
	metricsURL := s.metricsURL(t)
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			before := scrapeSamples(t, metricsURL).sum("lakegate_authn_failures_total", `reason="`+tc.reason+`"`)
			c, err := dial(t, s.uri(), bearer(tc.token))
			if err == nil {
				_, _, err = c.query(ctx, "SELECT 1")
			}
			if adbcStatus(err) != adbc.StatusUnauthenticated || !strings.Contains(err.Error(), "unauthenticated") {
				t.Fatalf("err = %v, want Unauthenticated", err)
			}
			if after := scrapeSamples(t, metricsURL).sum("lakegate_authn_failures_total", `reason="`+tc.reason+`"`); after <= before {
				t.Errorf("lakegate_authn_failures_total{reason=%q} stayed %v", tc.reason, after)
			}
		})
	}

	t.Run("key rotation", func(t *testing.T) {
		s.iss.Rotate(t)
		rotated := s.iss.Token(t, s.claims(user))
		// The new kid is looked up again once the refresh bound allows.
		eventually(t, "a token of the new key", func() bool {
			c, err := dial(t, s.uri(), bearer(rotated))
			if err == nil {
				_, _, err = c.query(ctx, "SELECT 1")
			}
			return err == nil
		})
		// A flood of kids the issuer never published: the keys are
		// fetched again at most once per refresh interval.
		fetches, start := s.iss.JWKSRequests(), time.Now()
		for i := range 20 {
			k := oidctest.NewKey(t, "RS256")
			k.Kid = fmt.Sprintf("flood-%d", i)
			cl, err := dial(t, s.uri(), bearer(oidctest.Sign(t, k, s.claims(user), nil)))
			if err == nil {
				_, _, err = cl.query(ctx, "SELECT 1")
			}
			if adbcStatus(err) != adbc.StatusUnauthenticated {
				t.Fatalf("flood token %d: %v", i, err)
			}
		}
		bound := 1 + int64(time.Since(start)/(2*time.Second))
		if got := s.iss.JWKSRequests() - fetches; got > bound {
			t.Errorf("%d JWKS fetches for a flood of 20 unknown kids, want at most %d (one per refresh interval)", got, bound)
		}
	})
}

// flightClient is a Flight SQL client of addr presenting token.
func flightClient(t *testing.T, addr, token string) (*flightsql.Client, context.Context) {
	t.Helper()
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl, metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

// eventually waits until cond holds, failing after a generous bound (a
// failure bound, not a synchronisation: cond observes the state it waits
// for).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSIGHUPReload: SIGHUP puts the edited principal map in force without a
// restart — a user added signs in at the next call, a user removed is
// refused at the next call and so is the ticket it obtained before, a
// malformed map is refused whole (counted) and the previous one stays.
func TestSIGHUPReload(t *testing.T) {
	s := startOIDCServe(t)
	ctx := context.Background()
	metricsURL := s.metricsURL(t)
	generation := func() float64 { return scrapeSamples(t, metricsURL).sum("lakegate_principal_map_generation") }
	refusedReloads := func() float64 {
		return scrapeSamples(t, metricsURL).sum("lakegate_principal_map_reloads_total", `result="refused"`)
	}
	analyst := s.token(t, "analyst@demo")
	works := func(token string) bool {
		c, err := dial(t, s.uri(), bearer(token))
		if err == nil {
			_, _, err = c.query(ctx, "SELECT 1")
		}
		return err == nil
	}

	// Added: a new static user of sales.
	const newToken = "lg_new_user_token_for_the_sighup_test_0123456789"
	added := fmt.Sprintf("  - id: new@demo\n    tenant: demo\n    role: user\n    namespaces: [sales]\n    tokens:\n      - sha256: %s\n", authz.HashToken(newToken))
	doc := strings.Replace(string(s.demoMap), "principals:\n", "principals:\n"+added, 1)
	if works(newToken) {
		t.Fatal("new@demo admitted before the reload")
	}
	gen := generation()
	s.writeMap(t, []byte(doc+issuerSection(s.iss)))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload adding new@demo", func() bool { return generation() > gen })
	if !works(newToken) {
		t.Fatal("new@demo refused after the reload")
	}

	// Removed: analyst@demo, holding a ticket planned before.
	cl, actx := flightClient(t, s.Addr, analyst)
	info, err := cl.Execute(actx, "SELECT count(*) FROM sales.orders")
	if err != nil {
		t.Fatal(err)
	}
	withoutAnalyst := regexp.MustCompile(`(?s)  - id: analyst@demo\n.*?(\n  - |\z)`).ReplaceAllString(doc, "$1")
	if strings.Contains(withoutAnalyst, "analyst@demo") || !strings.Contains(withoutAnalyst, "hr@demo") {
		t.Fatalf("could not remove analyst@demo from the map:\n%s", withoutAnalyst)
	}
	gen = generation()
	s.writeMap(t, []byte(withoutAnalyst+issuerSection(s.iss)))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reload removing analyst@demo", func() bool { return generation() > gen })
	if works(analyst) {
		t.Error("analyst@demo admitted after the reload removed it")
	}
	rdr, err := cl.DoGet(actx, info.GetEndpoint()[0].GetTicket())
	if err == nil {
		for rdr.Next() {
		}
		err = rdr.Err()
		rdr.Release()
	}
	if status.Code(err) != codes.Unauthenticated || status.Convert(err).Message() != "unauthenticated" {
		t.Errorf("the removed user's outstanding ticket: %v, want Unauthenticated", err)
	}

	// Malformed: refused whole, counted, the previous map stays.
	refused, gen := refusedReloads(), generation()
	s.writeMap(t, []byte("principals:\n  - {id: x@demo, tenant: demo, role: superuser}\n"))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the refused reload", func() bool { return refusedReloads() > refused })
	if generation() != gen || !works(newToken) || works(analyst) {
		t.Error("a refused reload changed the map in force")
	}
	if !strings.Contains(s.stderr.String(), "principal map reload refused") {
		t.Error("the refused reload was not logged")
	}
	// Not an operator: the reload call is refused.
	if code, _ := s.reloadREST(t, newToken); code != http.StatusForbidden {
		t.Errorf("a user's reload call: HTTP %d, want 403", code)
	}
}

// TestJWTGroupRoles: a JWT user's groups claim makes it a member of the
// metalake's groups of those names (created on first sight, synced at each
// call through metasrv's own verification of the token the gateway
// forwards): a role granted to its group lets it read a table, a DENY in
// another group's role hides one, and a token without the group takes the
// membership away again.
func TestJWTGroupRoles(t *testing.T) {
	s := startOIDCServe(t)
	ctx := context.Background()
	admin := s.token(t, "admin@demo") // the demo metalake's owner
	ml := "/api/metalakes/demo"
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", ml + "/groups", map[string]any{"name": "analysts"}},
		{"POST", ml + "/groups", map[string]any{"name": "contractors"}},
		{"POST", ml + "/roles", map[string]any{"name": "sales_reader", "securableObjects": []map[string]any{
			{"fullName": "lake", "type": "CATALOG", "privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}},
			{"fullName": "lake.sales", "type": "SCHEMA", "privileges": []map[string]string{
				{"name": "USE_SCHEMA", "condition": "ALLOW"}, {"name": "SELECT_TABLE", "condition": "ALLOW"}}}}}},
		{"POST", ml + "/roles", map[string]any{"name": "no_customers", "securableObjects": []map[string]any{
			{"fullName": "lake.sales.customers", "type": "TABLE", "privileges": []map[string]string{{"name": "SELECT_TABLE", "condition": "DENY"}}}}}},
		{"PUT", ml + "/permissions/groups/analysts/grant", map[string]any{"roleNames": []string{"sales_reader"}}},
		{"PUT", ml + "/permissions/groups/contractors/grant", map[string]any{"roleNames": []string{"no_customers"}}},
	} {
		if code, body := s.rest(t, w.method, w.path, admin, w.body); code != http.StatusOK {
			t.Fatalf("%s %s: HTTP %d %s", w.method, w.path, code, body)
		}
	}
	token := func(user string, groups ...string) string {
		c := s.claims(user)
		c["groups"] = append([]string{}, groups...) // [] rather than null
		return s.iss.Token(t, c)
	}
	count := func(token, table string) (string, error) {
		c, err := dial(t, s.uri(), bearer(token))
		if err != nil {
			return "", err
		}
		_, rows, err := c.query(ctx, "SELECT count(*) FROM "+table)
		if err != nil {
			return "", err
		}
		return rows[0][0], nil
	}
	cases := []struct {
		name, token, table string
		want               string // count, or "" for a missing table
	}{
		{"analyst reads orders", token("ann@demo", "analysts"), "sales.orders", "5000"},
		{"analyst reads customers", token("ann@demo", "analysts"), "sales.customers", "*"},
		{"analyst and contractor reads orders", token("cid@demo", "analysts", "contractors"), "sales.orders", "5000"},
		{"contractor's DENY hides customers", token("cid@demo", "analysts", "contractors"), "sales.customers", ""},
		{"no group, no grant", token("dee@demo"), "sales.orders", ""},
		{"a group the metalake lacks is ignored", token("dee@demo", "nosuchgroup"), "sales.orders", ""},
		{"the group left: the grant goes with it", token("ann@demo"), "sales.orders", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := count(tc.token, tc.table)
			switch {
			case tc.want == "":
				if adbcStatus(err) != adbc.StatusNotFound || !strings.Contains(err.Error(), "table "+tc.table+" does not exist") {
					t.Fatalf("%s: %q, %v, want a missing table", tc.table, got, err)
				}
			case err != nil:
				t.Fatalf("%s: %v", tc.table, err)
			case tc.want != "*" && got != tc.want:
				t.Fatalf("%s: count %s, want %s", tc.table, got, tc.want)
			}
		})
	}
	// The syncs are audited, credited to the user, for the token.
	code, events := s.rest(t, "GET", ml+"/events", admin)
	if code != http.StatusOK || !strings.Contains(events, "ann@demo") || !strings.Contains(events, "oidc-token") {
		t.Errorf("events: HTTP %d, no audited sync of ann@demo:\n%.2000s", code, events)
	}
}
