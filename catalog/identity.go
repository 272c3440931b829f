package catalog

import (
	"maps"
	"slices"
	"strings"
)

// TypeSyncIdentityUser is SyncIdentityUser's serialized number.
const TypeSyncIdentityUser CommandType = 43

// SyncIdentityUser makes the user Name (a user signed in with an identity
// provider's token) a member of exactly those of Groups that exist in the
// metalake: the user is created when missing, added to each existing group
// Groups names and removed from every other group. A name in Groups that
// is no group of the metalake is ignored (an administrator creates a group
// of the provider's group name, and grants it roles); the command creates
// no group and grants nothing. Applying it to a state it already agrees
// with changes no membership.
//
// Its rule is not a privilege: Apply runs it only under a Meta with
// IdentityToken set, whose Actor is Name — the caller attests that it
// verified an identity provider's token naming that user, and the event is
// credited to the user. No other command runs under such a Meta, and
// CheckEntry refuses it (no client sends it: metasrv builds it from a
// verified token). Permit, which has no Meta, refuses it.
type SyncIdentityUser struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups,omitempty"`
}

// Op returns "SyncIdentityUser".
func (SyncIdentityUser) Op() string { return "SyncIdentityUser" }

// Target returns the user.
func (c SyncIdentityUser) Target() Object { return User(c.Name) }

func (SyncIdentityUser) commandType() CommandType { return TypeSyncIdentityUser }

// permit refuses: the command's rule needs the Meta (see permitMeta).
func (SyncIdentityUser) permit(*Snapshot, *who) error {
	return errf(ErrForbidden, identityOnly)
}

// identityOnly is the refusal of SyncIdentityUser without a verified
// identity-provider token.
const identityOnly = "a user's memberships are synced only for a verified identity-provider token"

// permitMeta is the rule Apply checks: SyncIdentityUser needs
// m.IdentityToken and its own user as the actor, and nothing else runs
// under m.IdentityToken; every other command is Permit's.
func (s *Snapshot) permitMeta(w *who, cmd Command, m Meta) error {
	sync, isSync := cmd.(SyncIdentityUser)
	switch {
	case isSync && !m.IdentityToken:
		return errf(ErrForbidden, identityOnly)
	case isSync && sync.Name != m.Actor:
		return errf(ErrForbidden, "an identity-provider token syncs only its own user")
	case isSync:
		return nil
	case m.IdentityToken:
		return errf(ErrForbidden, "an identity-provider token runs only SyncIdentityUser")
	}
	return s.permit(w, cmd)
}

func (c SyncIdentityUser) apply(tx *txn) error {
	if err := CheckEntityName(c.Name); err != nil {
		return err
	}
	want := make(map[string]bool, len(c.Groups))
	for _, g := range c.Groups {
		if err := CheckEntityName(g); err != nil {
			return err
		}
		if tx.s.groups.Has(g) {
			want[g] = true
		}
	}
	var did []string
	u, ok := tx.s.users.Get(c.Name)
	if !ok {
		u = &user{name: c.Name, audit: tx.audit()}
		tx.s.users = tx.s.users.Set(c.Name, u)
		did = append(did, "created")
	}
	have := slices.Clone(u.groups) // members changes the user's groups
	for _, g := range slices.Sorted(maps.Keys(want)) {
		if _, found := slices.BinarySearch(have, g); !found {
			if err := tx.members(g, []string{c.Name}, true); err != nil {
				return err
			}
			did = append(did, "added to "+g)
		}
	}
	for _, g := range have {
		if !want[g] {
			if err := tx.members(g, []string{c.Name}, false); err != nil {
				return err
			}
			did = append(did, "removed from "+g)
		}
	}
	tx.detail = strings.Join(did, "; ")
	return nil
}

// IdentitySync returns the SyncIdentityUser that makes s agree with a
// verified identity-provider token of user name whose groups claim is
// claim — naming only the claim's groups that s has, sorted and once each
// — and whether applying it would change s: the user is missing, or its
// memberships differ. A caller proposes it only then.
func IdentitySync(s *Snapshot, name string, claim []string) (SyncIdentityUser, bool) {
	var groups []string
	for _, g := range claim {
		if s.groups.Has(g) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	c := SyncIdentityUser{Name: name, Groups: groups}
	u, ok := s.users.Get(name)
	return c, !ok || !slices.Equal(u.groups, groups)
}
