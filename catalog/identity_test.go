package catalog_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// identityBase is a metalake owned by the group "admins" (the owner type
// does not matter to a sync): alice is in g1 and g2, bob in g1; the role
// reader (USE_CATALOG on lake) is granted to g1.
func identityBase(t *testing.T) *Snapshot {
	t.Helper()
	s := catalogtest.New(t, "m", "admin")
	return catalogtest.Apply(t, s, "admin",
		CreateCatalog{Name: "lake"},
		CreateUser{"alice"}, CreateUser{"bob"},
		CreateGroup{"admins"}, CreateGroup{"g1"}, CreateGroup{"g2"},
		AddGroupMembers{"admins", []string{"admin"}},
		AddGroupMembers{"g1", []string{"alice", "bob"}}, AddGroupMembers{"g2", []string{"alice"}},
		CreateRole{Name: "reader", Grants: []Grant{{Object: Catalog("lake"), Privilege: PrivUseCatalog, Condition: Allow}}},
		GrantRoles{Owner{OwnerGroup, "g1"}, []string{"reader"}},
		SetOwner{Object{Type: ObjectMetalake, Name: "m"}, Owner{OwnerGroup, "admins"}},
	)
}

// identityMeta is the Meta of the next command on s by actor, attested
// (or not) as coming from a verified identity-provider token.
func identityMeta(s *Snapshot, actor string, token bool) Meta {
	m := catalogtest.Meta(s, actor)
	m.IdentityToken = token
	return m
}

// membership is every user's groups in s, "user:g1,g2 user2:…" sorted.
func membership(s *Snapshot) string {
	var out []string
	for _, u := range s.UserNames() {
		info, _ := s.User(u)
		out = append(out, u+":"+strings.Join(info.Groups, ","))
	}
	return strings.Join(out, " ")
}

// TestSyncIdentityUser: the command creates exactly its own user and makes
// exactly that user's memberships among the existing groups those it
// names, only under a verified identity-provider token whose user is the
// actor; the token runs no other command (no group, no grant, no other
// user's memberships).
func TestSyncIdentityUser(t *testing.T) {
	base := identityBase(t)
	const before = "admin:admins alice:g1,g2 bob:g1"
	cases := []struct {
		name    string
		actor   string
		token   bool
		cmd     Command
		err     error
		members string // every user's groups after the command
		detail  string
	}{
		{"first sight: created, joins the named groups that exist", "carol", true,
			SyncIdentityUser{Name: "carol", Groups: []string{"g1", "nosuchgroup"}}, nil,
			before + " carol:g1", "created; added to g1"},
		{"a stale membership is removed", "alice", true,
			SyncIdentityUser{Name: "alice", Groups: []string{"g1"}}, nil,
			"admin:admins alice:g1 bob:g1", "removed from g2"},
		{"added and removed at once", "bob", true,
			SyncIdentityUser{Name: "bob", Groups: []string{"g2"}}, nil,
			"admin:admins alice:g1,g2 bob:g2", "added to g2; removed from g1"},
		{"no groups: out of every group", "alice", true,
			SyncIdentityUser{Name: "alice"}, nil,
			"admin:admins alice: bob:g1", "removed from g1; removed from g2"},
		{"already in agreement: nothing changes", "alice", true,
			SyncIdentityUser{Name: "alice", Groups: []string{"g2", "g1", "g1"}}, nil, before, ""},
		{"cannot touch another user", "carol", true,
			SyncIdentityUser{Name: "alice"}, ErrForbidden, before, ""},
		{"cannot create another user", "carol", true,
			SyncIdentityUser{Name: "dave", Groups: []string{"g1"}}, ErrForbidden, before, ""},
		{"refused without a verified token", "alice", false,
			SyncIdentityUser{Name: "alice"}, ErrForbidden, before, ""},
		{"refused without a verified token, even to the metalake's owner", "admin", false,
			SyncIdentityUser{Name: "admin", Groups: []string{"g1"}}, ErrForbidden, before, ""},
		{"the token cannot create a group", "carol", true,
			CreateGroup{"g3"}, ErrForbidden, before, ""},
		{"the token cannot grant a role", "alice", true,
			GrantRoles{Owner{OwnerUser, "alice"}, []string{"reader"}}, ErrForbidden, before, ""},
		{"the token cannot add members", "alice", true,
			AddGroupMembers{"g2", []string{"bob"}}, ErrForbidden, before, ""},
		{"the token cannot create a user", "carol", true,
			CreateUser{"carol"}, ErrForbidden, before, ""},
		{"the token lends nothing to an owner's command", "admin", true,
			RemoveGroupMembers{"g1", []string{"alice"}}, ErrForbidden, before, ""},
		{"an invalid group name", "alice", true,
			SyncIdentityUser{Name: "alice", Groups: []string{""}}, ErrInvalidName, before, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, evs, err := Apply(base, tc.cmd, identityMeta(base, tc.actor, tc.token))
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("Apply = %v, want %v", err, tc.err)
			}
			if got := membership(n); got != tc.members {
				t.Errorf("memberships %q, want %q", got, tc.members)
			}
			if len(n.GroupNames()) != len(base.GroupNames()) || len(n.RoleNames()) != len(base.RoleNames()) {
				t.Errorf("groups %q roles %q, want %q %q", n.GroupNames(), n.RoleNames(), base.GroupNames(), base.RoleNames())
			}
			if err != nil {
				if n != base || len(evs) != 1 || evs[0].Outcome != Failure {
					t.Errorf("a refusal changed the snapshot or evented %+v", evs)
				}
				return
			}
			ev := evs[0]
			if ev.Actor != tc.actor || ev.Operation != "SyncIdentityUser" || ev.Target != User(tc.actor) || ev.Detail != tc.detail {
				t.Errorf("event %+v, want %s's SyncIdentityUser of itself, detail %q", ev, tc.actor, tc.detail)
			}
		})
	}
}

// TestSyncIdentityUserIdempotent: a sync applied twice leaves what the
// first left; IdentitySync then proposes nothing. The group's role applies
// to the synced user.
func TestSyncIdentityUserIdempotent(t *testing.T) {
	s := identityBase(t)
	c, changes := IdentitySync(s, "carol", []string{"nosuchgroup", "g2", "g1", "g2"})
	if !changes || !slices.Equal(c.Groups, []string{"g1", "g2"}) || c.Name != "carol" {
		t.Fatalf("IdentitySync = %+v, %v; want carol in g1, g2, changing", c, changes)
	}
	if d := s.Authorize("carol", PrivUseCatalog, Catalog("lake")); d.Allowed {
		t.Fatal("carol may use lake before the sync")
	}
	once, _, err := Apply(s, c, identityMeta(s, "carol", true))
	if err != nil {
		t.Fatal(err)
	}
	twice, evs, err := Apply(once, c, identityMeta(once, "carol", true))
	if err != nil {
		t.Fatal(err)
	}
	if membership(twice) != membership(once) || evs[0].Detail != "" {
		t.Errorf("second sync: %q (detail %q), first %q", membership(twice), evs[0].Detail, membership(once))
	}
	if _, changes := IdentitySync(twice, "carol", []string{"g1", "g2"}); changes {
		t.Error("IdentitySync after the sync still reports changes")
	}
	if d := twice.Authorize("carol", PrivUseCatalog, Catalog("lake")); !d.Allowed {
		t.Errorf("carol may not use lake through g1's role: %+v", d)
	}
}

// TestSyncIdentityUserNeverEnters: no client sends the command — CheckEntry
// and Permit refuse it for every actor, the metalake's owner included.
func TestSyncIdentityUserNeverEnters(t *testing.T) {
	s := identityBase(t)
	c := SyncIdentityUser{Name: "alice", Groups: []string{"g1"}}
	for _, actor := range []string{"alice", "admin", "carol"} {
		if err := CheckEntry(s, actor, c); !errors.Is(err, ErrForbidden) {
			t.Errorf("CheckEntry as %s = %v, want forbidden", actor, err)
		}
		if err := Permit(s, actor, c); !errors.Is(err, ErrForbidden) {
			t.Errorf("Permit as %s = %v, want forbidden", actor, err)
		}
	}
}

// TestPreviewSyncIdentityUser: a preview of a sync (under the token's
// Meta) shows what the user gains through its new group.
func TestPreviewSyncIdentityUser(t *testing.T) {
	s := identityBase(t)
	d, err := Preview(s, identityMeta(s, "carol", true), Page{}, SyncIdentityUser{Name: "carol", Groups: []string{"g1"}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range d.Privileges {
		if p.User == "carol" && p.Privilege == PrivUseCatalog && p.Object == Catalog("lake") && p.Gained {
			found = true
		}
	}
	if !found {
		t.Errorf("preview does not show carol gaining USE_CATALOG on lake: %+v", d.Privileges)
	}
	if _, err := Preview(s, identityMeta(s, "carol", false), Page{}, SyncIdentityUser{Name: "carol"}); !errors.Is(err, ErrForbidden) {
		t.Errorf("preview without the token = %v, want forbidden", err)
	}
}
