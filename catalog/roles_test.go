package catalog_test

import (
	"slices"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

func TestRolesOf(t *testing.T) {
	s := catalogtest.New(t, "m", "admin")
	s = catalogtest.Apply(t, s, "admin",
		CreateUser{"alice"}, CreateUser{"bob"}, CreateUser{"carol"}, CreateUser{"dave"},
		CreateRole{Name: "reader"}, CreateRole{Name: "analyst"}, CreateRole{Name: "writer"},
		GrantRoles{Owner{OwnerUser, "alice"}, []string{"writer", "reader"}},
		CreateGroup{"g"}, AddGroupMembers{"g", []string{"alice", "bob"}},
		GrantRoles{Owner{OwnerGroup, "g"}, []string{"analyst", "reader"}},
		CreateGroup{"empty"}, AddGroupMembers{"empty", []string{"carol"}},
	)
	for _, tc := range []struct {
		principal string
		want      []string
	}{
		{"alice", []string{"analyst", "reader", "writer"}}, // direct and via group, "reader" once
		{"bob", []string{"analyst", "reader"}},             // via group only
		{"carol", nil},                                     // group without roles
		{"dave", nil},                                      // no roles
		{"g", nil},                                         // a group is not a principal
		{"nobody", nil},                                    // unknown principal
	} {
		if got := s.RolesOf(tc.principal); !slices.Equal(got, tc.want) {
			t.Errorf("RolesOf(%q) = %q, want %q", tc.principal, got, tc.want)
		}
	}

	// The result agrees with authorization: a revoked or dropped role is gone.
	s = catalogtest.Apply(t, s, "admin",
		RevokeRoles{Owner{OwnerGroup, "g"}, []string{"analyst"}},
		DropRole{Name: "writer"},
	)
	if got, want := s.RolesOf("alice"), []string{"reader"}; !slices.Equal(got, want) {
		t.Errorf("after revoke and drop: RolesOf(alice) = %q, want %q", got, want)
	}
	if got := s.RolesOf("bob"); !slices.Equal(got, []string{"reader"}) {
		t.Errorf("after revoke: RolesOf(bob) = %q, want [reader]", got)
	}
}
