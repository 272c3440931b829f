package metasrv_test

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lakegate/authz"
	"lakegate/authz/oidc"
	"lakegate/authz/oidctest"
	"lakegate/catalog"
	"lakegate/metasrv"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// withOIDC makes the nodes started next trust iss as the provider "idp"
// of tenant acme (groups claim "groups", users created on first sight,
// namespace rule namespaces), beside the harness's principals and the
// gateway gw; extra adjusts their Config further.
func withOIDC(t testing.TB, iss *oidctest.Issuer, namespaces string, extra func(*metasrv.Config)) {
	t.Helper()
	specs := append(harnessSpecs(), authz.PrincipalSpec{ID: "gw", Tenant: "platform", Role: "query_service",
		DelegateTenants: []string{"acme"}, TokenHashes: tokenHashes(tokGW)})
	doc, err := authz.EncodePrincipalMap(specs)
	if err != nil {
		t.Fatal(err)
	}
	doc = append(doc, oidctest.OIDCSection(iss.ProviderYAML("idp", "tenant: acme", "groups_claim: groups",
		"auto_create_users: true", namespaces))...)
	m, err := authz.ParsePrincipalMap(doc)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := authz.NewPrincipals(m, authz.PrincipalsConfig{Keys: oidc.NewRegistry(oidc.Options{Client: iss.Client()})})
	if err != nil {
		t.Fatal(err)
	}
	configHook = func(c *metasrv.Config) {
		c.Principals, c.Authn = nil, ps
		if extra != nil {
			extra(c)
		}
	}
	t.Cleanup(func() { configHook = nil })
}

// raftTimeouts is a configHook part giving a node Raft's default
// timeouts instead of the harness's 200 ms: on a loaded machine a leader
// must not lose its lease while a cluster test sets up.
func raftTimeouts(c *metasrv.Config) {
	d := raftnode.DefaultConfig()
	c.Raft.HeartbeatTimeout, c.Raft.ElectionTimeout, c.Raft.LeaderLeaseTimeout = d.HeartbeatTimeout, d.ElectionTimeout, d.LeaderLeaseTimeout
}

// groupJWT returns a token of iss for user with the groups claim groups.
func groupJWT(t testing.TB, iss *oidctest.Issuer, user string, groups ...string) string {
	t.Helper()
	c := iss.Claims(user)
	c["groups"] = append([]string{}, groups...)
	return iss.Token(t, c)
}

// identifiers are the names of a listing's identifiers.
func identifiers(r resp) []string {
	var out []string
	ids, _ := r.body["identifiers"].([]any)
	for _, id := range ids {
		m, _ := id.(map[string]any)
		n, _ := m["name"].(string)
		out = append(out, n)
	}
	return out
}

// seedAnalysts has alice create the catalog lake, the group analysts and
// the role lake_user (USE_CATALOG on lake) granted to it, on n.
func seedAnalysts(t testing.TB, n *node) {
	t.Helper()
	for _, c := range []call{
		{method: "POST", path: ml + "/catalogs", body: map[string]any{"name": "lake"}},
		{method: "POST", path: ml + "/groups", body: map[string]any{"name": "analysts"}},
		{method: "POST", path: ml + "/roles", body: map[string]any{"name": "lake_user", "securableObjects": []map[string]any{
			{"fullName": "lake", "type": "CATALOG", "privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}}}}},
		{method: "PUT", path: ml + "/permissions/groups/analysts/grant", body: map[string]any{"roleNames": []string{"lake_user"}}},
	} {
		c.token = tokAlice
		must(t, n, c)
	}
}

// TestJWTSyncGroupOwnedMetalake: in a metalake whose owner is a group, a
// JWT user is created and joins its token's groups, and their role
// applies — the sync is the user's own SyncIdentityUser, audited as the
// user with delegator oidc-token, so the owner's type does not matter. A
// later token without the group removes the membership. Before, the sync
// was proposed as the metalake's owner and such a metalake refused it
// (403 "the metalake's owner is not a user").
func TestJWTSyncGroupOwnedMetalake(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	withOIDC(t, iss, "namespaces: {all: [sales]}", nil)
	n := withAcme(t, startSolo(t, principals(t), "n1"))
	seedAnalysts(t, n)
	// alice hands the metalake to a group she is not in.
	for _, c := range []call{
		{method: "POST", path: ml + "/groups", body: map[string]any{"name": "admins"}},
		{method: "PUT", path: ml + "/owners/metalake/acme", body: map[string]any{"name": "admins", "type": "GROUP"}},
	} {
		c.token = tokAlice
		must(t, n, c)
	}
	cases := []struct {
		name   string
		groups []string
		want   []string // the catalogs the user lists
	}{
		{"first sight, in analysts", []string{"analysts", "nosuchgroup"}, []string{"lake"}},
		{"again, nothing to change", []string{"analysts"}, []string{"lake"}},
		{"out of analysts", nil, nil},
	}
	for _, tc := range cases {
		r := do(t, n, call{method: "GET", path: ml + "/catalogs", token: groupJWT(t, iss, "dave@acme", tc.groups...)})
		if r.status != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", tc.name, r.status, r.raw)
		}
		if got := identifiers(r); !slices.Equal(got, tc.want) {
			t.Errorf("%s: dave lists %q, want %q", tc.name, got, tc.want)
		}
	}
	var syncs []string
	for _, e := range n.Audit().Events("acme", 0, 0, 100) {
		if e.Operation == "SyncIdentityUser" {
			syncs = append(syncs, e.Actor+" "+e.Delegator+" "+string(e.Outcome)+" "+e.Detail)
		}
	}
	slices.Reverse(syncs) // newest first
	want := []string{"dave@acme oidc-token success created; added to analysts", "dave@acme oidc-token success removed from analysts"}
	if !slices.Equal(syncs, want) {
		t.Errorf("sync events:\n%s\nwant\n%s", strings.Join(syncs, "\n"), strings.Join(want, "\n"))
	}
}

// TestSyncIdentityUserNotForgeable: the membership sync is applied only
// from a proposal the leader marks as coming from a verified
// identity-provider token, which no REST request produces. A preview does
// not take the command; a proposal without the mark (what a write with a
// delegator named like the sync's would be) is refused, and so is one with
// the mark for another user or carrying another command; the version 1
// encoding cannot carry the mark.
func TestSyncIdentityUserNotForgeable(t *testing.T) {
	n := single(t)
	for _, tok := range []string{tokAdmin, tokAlice, tokBob} {
		r := do(t, n, call{method: "POST", path: ml + "/access/preview", token: tok, body: map[string]any{
			"commands": []map[string]any{{"type": "SyncIdentityUser", "body": map[string]any{"name": "bob@acme", "groups": []string{"g"}}}}}})
		if r.status != http.StatusBadRequest && r.status != http.StatusForbidden && r.status != http.StatusNotFound {
			t.Errorf("preview of a sync by %s: HTTP %d %s", tok, r.status, r.raw)
		}
	}

	f := metasrv.NewFSM(nil)
	apply := func(i uint64, b []byte) error { err, _ := f.Apply(i, b).(error); return err }
	if err := apply(1, proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "root", Admin: true, Time: t0,
		Lake: &metasrv.LakeOp{Op: metasrv.LakeCreate, Owner: "alice"}})); err != nil {
		t.Fatal(err)
	}
	if err := apply(2, proposal(t, metasrv.Proposal{Metalake: "acme", Actor: "alice", Time: t0}, catalog.CreateGroup{Name: "g"})); err != nil {
		t.Fatal(err)
	}
	sync := catalog.SyncIdentityUser{Name: "dave", Groups: []string{"g"}}
	cases := []struct {
		name string
		p    metasrv.Proposal
		cmd  catalog.Command
		err  error
	}{
		{"unmarked, delegator oidc-token", metasrv.Proposal{Actor: "dave", Delegator: "oidc-token"}, sync, catalog.ErrForbidden},
		{"unmarked, as the owner", metasrv.Proposal{Actor: "alice"}, sync, catalog.ErrForbidden},
		{"marked, for another user", metasrv.Proposal{Actor: "erin", Identity: true, Delegator: "oidc-token"}, sync, catalog.ErrForbidden},
		{"marked, another command", metasrv.Proposal{Actor: "alice", Identity: true, Delegator: "oidc-token"},
			catalog.AddGroupMembers{Group: "g", Users: []string{"alice"}}, catalog.ErrForbidden},
		{"marked, the user's own sync", metasrv.Proposal{Actor: "dave", Identity: true, Delegator: "oidc-token"}, sync, nil},
	}
	for i, tc := range cases {
		tc.p.Metalake, tc.p.Time = "acme", t0
		b := proposal(t, tc.p, tc.cmd)
		if p, err := metasrv.DecodeProposal(b); err != nil || p.Identity != tc.p.Identity {
			t.Fatalf("%s: round trip %+v, %v", tc.name, p, err)
		}
		if err := apply(uint64(3+i), b); !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("%s: Apply = %v, want %v", tc.name, err, tc.err)
		}
	}
	l, _ := f.Lake("acme")
	if u, ok := l.Snapshot.User("dave"); !ok || !slices.Equal(u.Groups, []string{"g"}) {
		t.Errorf("dave after the marked sync: %+v %v", u, ok)
	}
	if _, ok := l.Snapshot.User("erin"); ok {
		t.Error("a sync for another user created erin")
	}
	v1 := `{"v":1,"metalake":"acme","actor":"dave","identity":true,"time":"2026-03-01T12:00:00Z","commands":[{"v":1,"type":43,"body":{"name":"dave"}}]}`
	if _, err := metasrv.DecodeProposal([]byte(v1)); !errors.Is(err, metasrv.ErrInvalidProposal) {
		t.Errorf("a version 1 proposal with an identity mark: %v", err)
	}
}

// TestJWTSyncOnFollower runs a three-node cluster over loopback TCP. A JWT
// user's first call to a follower — its own, or a gateway's for it with
// its token — succeeds and already sees what its group's role grants: the
// follower forwards the sync to the leader and answers once it has applied
// the result; a stale membership is removed the same way. The leader
// verifies the token itself: a peer forwarding one that does not verify
// gets 401 and changes nothing, and only a member forwarding as itself,
// with the token alone, is heard. With no leader to reach, a follower
// answers 503 rather than skip the sync. Before, a follower answered 503
// whenever a membership needed syncing.
func TestJWTSyncOnFollower(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	withOIDC(t, iss, "namespaces: {all: [sales]}", func(c *metasrv.Config) {
		onTCP(c)
		raftTimeouts(c)
		c.ProposeTimeout = 2 * time.Second // the unreachable leader's wait
	})
	nodes, leader := startCluster(t, principals(t), 3)
	var followers []*node
	for _, n := range nodes {
		if n != leader {
			followers = append(followers, n)
		}
	}
	withAcme(t, leader)
	seedAnalysts(t, leader)
	gen := must(t, leader, call{method: "GET", path: ml, token: tokAlice}).gen()
	for _, f := range followers {
		must(t, f, call{method: "GET", path: ml + "?minGeneration=" + strconv.FormatUint(gen, 10), token: tokAlice})
	}
	groupsOn := func(n *node, user string) string {
		l, _ := n.FSM().Lake("acme")
		u, ok := l.Snapshot.User(user)
		if !ok {
			return "missing"
		}
		return strings.Join(u.Groups, ",")
	}
	gateway := func(user, token string) call {
		return call{method: "GET", path: ml + "/catalogs", token: tokGW, header: map[string]string{
			api.DelegateTenantHeader: "acme", api.DelegateUserHeader: user, api.DelegateTokenHeader: token}}
	}
	cases := []struct {
		name   string
		on     *node
		c      call
		user   string
		lists  []string // the catalogs the first call lists
		groups string   // the user's groups on the leader after it
	}{
		{"own first call", followers[0], call{method: "GET", path: ml + "/catalogs", token: groupJWT(t, iss, "dave@acme", "analysts")},
			"dave@acme", []string{"lake"}, "analysts"},
		{"a gateway's first call for the user", followers[1], gateway("erin@acme", groupJWT(t, iss, "erin@acme", "analysts", "nosuchgroup")),
			"erin@acme", []string{"lake"}, "analysts"},
		{"a stale membership removed", followers[1], call{method: "GET", path: ml + "/catalogs", token: groupJWT(t, iss, "dave@acme")},
			"dave@acme", nil, ""},
	}
	for _, tc := range cases {
		r := do(t, tc.on, tc.c)
		if r.status != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", tc.name, r.status, r.raw)
		}
		if got := identifiers(r); !slices.Equal(got, tc.lists) {
			t.Errorf("%s: lists %q, want %q", tc.name, got, tc.lists)
		}
		if got := groupsOn(leader, tc.user); got != tc.groups {
			t.Errorf("%s: %s in %q on the leader, want %q", tc.name, tc.user, got, tc.groups)
		}
	}

	// Straight to the leader's sync route: only a member forwarding as
	// itself with a token that verifies there.
	frank := groupJWT(t, iss, "frank@acme", "analysts")
	follower := followers[0].id
	route := "/internal/v1/metalakes/acme/identity-sync"
	attacks := []struct {
		name   string
		c      call
		status int
	}{
		{"a token that does not verify", call{token: peerToken(follower), header: map[string]string{
			raftnode.ForwardedHeader: follower, api.CallerTokenHeader: frank + "x"}}, http.StatusUnauthorized},
		{"no token", call{token: peerToken(follower), header: map[string]string{raftnode.ForwardedHeader: follower}}, http.StatusUnauthorized},
		{"a static token", call{token: peerToken(follower), header: map[string]string{
			raftnode.ForwardedHeader: follower, api.CallerTokenHeader: tokBob}}, http.StatusUnauthorized},
		{"a token of another tenant's path", call{token: peerToken(follower), header: map[string]string{
			raftnode.ForwardedHeader: follower, api.CallerTokenHeader: frank}}, http.StatusUnauthorized},
		{"a peer forwarding as another node", call{token: peerToken(follower), header: map[string]string{
			raftnode.ForwardedHeader: leader.id, api.CallerTokenHeader: frank}}, http.StatusForbidden},
		{"a peer naming a caller", call{token: peerToken(follower), header: map[string]string{
			raftnode.ForwardedHeader: follower, api.CallerTokenHeader: frank, api.CallerHeader: "alice@acme"}}, http.StatusForbidden},
		{"the user itself", call{token: frank, header: map[string]string{raftnode.ForwardedHeader: follower, api.CallerTokenHeader: frank}}, http.StatusForbidden},
		{"the user itself, unforwarded", call{token: frank, header: map[string]string{api.CallerTokenHeader: frank}}, http.StatusForbidden},
		{"the operator", call{token: tokAdmin, header: map[string]string{api.CallerTokenHeader: frank}}, http.StatusForbidden},
		{"a gateway", call{token: tokGW, header: map[string]string{api.CallerTokenHeader: frank}}, http.StatusForbidden},
	}
	for _, a := range attacks {
		a.c.method, a.c.path = "POST", route
		if a.name == "a token of another tenant's path" {
			a.c.path = "/internal/v1/metalakes/other/identity-sync"
		}
		if r := do(t, leader, a.c); r.status != a.status {
			t.Errorf("%s: HTTP %d %s, want %d", a.name, r.status, r.raw, a.status)
		}
	}
	if got := groupsOn(leader, "frank@acme"); got != "missing" {
		t.Errorf("the refused syncs made frank a user in %q", got)
	}

	// No leader to reach: the sync is not skipped.
	last := followers[0]
	for _, n := range nodes {
		if n != last {
			n.stop()
		}
	}
	if r := do(t, last, call{method: "GET", path: ml + "/catalogs", token: frank}); r.status != http.StatusServiceUnavailable {
		t.Errorf("with no leader: HTTP %d %s, want 503", r.status, r.raw)
	}
	if got := groupsOn(last, "frank@acme"); got != "missing" {
		t.Errorf("with no leader, frank is a user in %q", got)
	}
}
