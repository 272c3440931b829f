package catalog_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// The tests in this file each close a mutant of a decision that the rest of
// the suite let survive (docs/testing.md): each fails when the decision it
// names is weakened.

// TestRolesThroughGroups checks that a role held through a group counts like
// one held directly in every decision that names roles: applicable and exempt
// roles of row filters, exempt roles of masks, tag policies and grants.
// carol holds "analyst" through group g, alice directly, bob not at all.
func TestRolesThroughGroups(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	grouped := func(t *testing.T, cmds ...Command) *Snapshot {
		s := catalogtest.Apply(t, base(t), admin,
			CreateGroup{Name: "g"}, AddGroupMembers{Group: "g", Users: []string{"carol"}},
			// dan is in a group that holds no role.
			CreateUser{"dan"}, CreateGroup{Name: "g0"}, AddGroupMembers{Group: "g0", Users: []string{"dan"}},
			GrantRoles{Grantee: Owner{OwnerGroup, "g"}, Roles: []string{"analyst"}},
			roles("alice", "analyst"), CreateTag{Name: "t"},
			AssociateTagsV1{Object: Table("lake.fin.ledger"), TagsToAdd: []string{"t"}},
			AssociateTagsV1{Object: Column("lake.fin.ledger.card"), TagsToAdd: []string{"t"}})
		return catalogtest.Apply(t, s, admin, cmds...)
	}
	policy := func(typ PolicyType, c PolicyContent) []Command {
		return []Command{CreatePolicy{Name: "p", Type: typ, Enabled: true, Content: c}, AttachPolicy{Tag: "t", Policy: "p"}}
	}
	cases := []struct {
		name   string
		setup  []Command
		filter map[string]string // user → row filter of ledger
		masked map[string]bool   // user → card masked
	}{
		{"filter for applicable roles", policy(PolicyRowFilter, PolicyContent{Expression: "a = 1", ApplicableRoles: []string{"analyst"}}),
			map[string]string{"alice": "a = 1", "carol": "a = 1", "bob": "", "dan": ""}, nil},
		{"filter but for exempt roles", policy(PolicyRowFilter, PolicyContent{Expression: "a = 1", ExemptRoles: []string{"analyst"}}),
			map[string]string{"alice": "", "carol": "", "bob": "a = 1", "dan": "a = 1"}, nil},
		{"mask but for exempt roles", policy(PolicyColumnMask, PolicyContent{Mask: "NULL", ExemptRoles: []string{"analyst"}}),
			nil, map[string]bool{"alice": false, "carol": false, "bob": true, "dan": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := grouped(t, c.setup...)
			for u, want := range c.filter {
				if f, _, err := s.RowFiltersAndMasks(u, ledger.Name); err != nil || f != want {
					t.Errorf("%s: filter %q (%v), want %q", u, f, err, want)
				}
			}
			for u, want := range c.masked {
				_, m, err := s.RowFiltersAndMasks(u, ledger.Name)
				if got := slices.ContainsFunc(m, func(m ColumnMask) bool { return m.Column == "card" }); err != nil || got != want {
					t.Errorf("%s: masks %v (%v), want card masked=%v", u, m, err, want)
				}
			}
		})
	}

	// Access: a tag policy and grants to the group's role reach carol.
	access := []struct {
		name  string
		setup []Command
		allow map[string]bool // user → may SELECT ledger
	}{
		{"tag policy", policy(PolicySystemAccessControl, PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}),
			map[string]bool{"alice": true, "carol": true, "bob": false}},
		{"allow grant", []Command{grantTo("analyst", ledger, PrivSelectTable, Allow)},
			map[string]bool{"alice": true, "carol": true, "bob": false}},
		{"deny grant beats a direct allow", []Command{grantTo("reader", ledger, PrivSelectTable, Allow),
			roles("carol", "reader"), roles("bob", "reader"), grantTo("analyst", ledger, PrivSelectTable, Deny)},
			map[string]bool{"alice": false, "carol": false, "bob": true}},
	}
	for _, c := range access {
		t.Run(c.name, func(t *testing.T) {
			s := catalogtest.Apply(t, grouped(t, c.setup...), admin,
				GrantRoles{Grantee: Owner{OwnerUser, "carol"}, Roles: []string{"use"}})
			for u, want := range c.allow {
				if d := s.Authorize(u, PrivSelectTable, ledger); d.Allowed != want {
					t.Errorf("%s: Authorize = %+v, want allowed=%v", u, d, want)
				}
				if v := s.Visible(u, ledger); v != want {
					t.Errorf("%s: Visible = %v, want %v", u, v, want)
				}
				if got := len(s.FilterVisible(u, []Object{ledger})) == 1; got != want {
					t.Errorf("%s: FilterVisible keeps ledger = %v, want %v", u, got, want)
				}
			}
		})
	}
}

// TestDenyAmongManyGrants checks ALLOW and DENY on objects with more role
// grants than the short linear scan handles (grantBits switches to a binary
// search per caller role past 8): the caller's role at every position of the
// grant list, on the table and on its schema, decides as with few grants.
func TestDenyAmongManyGrants(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	for _, n := range []int{3, 8, 9, 16, 17} {
		for _, on := range []Object{ledger, Schema("lake.fin")} {
			for k := range n {
				t.Run(fmt.Sprintf("%d grants on %s, role %d", n, on.Type, k), func(t *testing.T) {
					s := base(t)
					var cmds []Command
					for i := range n {
						r := fmt.Sprintf("r%02d", i)
						cond := Allow
						if i == k {
							cond = Deny
						}
						cmds = append(cmds, CreateRole{Name: r}, grantTo(r, on, PrivSelectTable, cond))
					}
					// alice holds only role k (the DENY), bob role k and
					// an ALLOW, carol an ALLOW (at the other end of the
					// list) and a role with no grant there.
					allowRole := fmt.Sprintf("r%02d", (k+1)%n)
					if k == 0 {
						allowRole = fmt.Sprintf("r%02d", n-1)
					}
					// carol's "late" role sorts after every granted one.
					cmds = append(cmds, CreateRole{Name: "late"}, roles("alice", "use", fmt.Sprintf("r%02d", k)),
						roles("bob", fmt.Sprintf("r%02d", k), allowRole),
						roles("carol", "use", "other", allowRole, "late"))
					s = catalogtest.Apply(t, s, admin, cmds...)
					for u, want := range map[string]Decision{
						"alice": {Allowed: false, Reason: ReasonDenied},
						"bob":   {Allowed: false, Reason: ReasonDenied},
						"carol": {Allowed: true, Reason: ReasonGrant},
					} {
						if d := s.Authorize(u, PrivSelectTable, ledger); d.Allowed != want.Allowed || d.Reason != want.Reason {
							t.Errorf("%s: Authorize = %+v, want %+v", u, d, want)
						}
						if v := s.Visible(u, ledger); v != want.Allowed {
							t.Errorf("%s: Visible = %v, want %v", u, v, want.Allowed)
						}
						got := s.FilterVisible(u, []Object{ledger, ledger, ledger, ledger, ledger, ledger, ledger, ledger, ledger})
						if (len(got) == 9) != want.Allowed || (len(got) != 0 && len(got) != 9) {
							t.Errorf("%s: FilterVisible kept %d of 9, want allowed=%v", u, len(got), want.Allowed)
						}
					}
				})
			}
		}
	}
}

// TestFilterVisibleWithholdsDenied lists, for fixed grants, exactly which
// tables FilterVisible keeps, in batches of every size its batching treats
// differently, so a table that is denied or never granted is never shown.
func TestFilterVisibleWithholdsDenied(t *testing.T) {
	ledger, budget, people := Table("lake.fin.ledger"), Table("lake.fin.budget"), Table("lake.hr.people")
	s := catalogtest.Apply(t, base(t), admin,
		grantTo("reader", Schema("lake.fin"), PrivSelectTable, Allow),
		grantTo("reader", people, PrivModifyTable, Allow),
		grantTo("denier", budget, PrivSelectTable, Deny),
		roles("alice", "reader", "denier"), roles("bob", "reader"))
	want := map[string][]Object{
		"alice":  {ledger, people},         // budget denied
		"bob":    {ledger, budget, people}, // no DENY
		"carol":  nil,                      // no USE
		"nobody": nil,
		admin:    {ledger, budget, people},
	}
	for _, reps := range []int{1, 20, 100} {
		var in []Object
		for range reps {
			in = append(in, ledger, budget, people, Table("lake.fin.missing"))
		}
		for u, w := range want {
			var exp []Object
			for range reps {
				exp = append(exp, w...)
			}
			if got := s.FilterVisible(u, in); !slices.Equal(got, exp) {
				t.Errorf("%s, %d objects: FilterVisible = %v, want %v", u, len(in), got[:min(len(got), 6)], exp[:min(len(exp), 6)])
			}
		}
	}
}

// TestTagPolicyLevels checks where a system_access_control policy reaches
// from: a tag on the catalog, a tag on the schema next to one the table
// shadows, and a table's second tag after one with no policy all confer
// SELECT on the table; CREATE_SCHEMA on a catalog needs USE_CATALOG only.
func TestTagPolicyLevels(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	sacOn := func(tag string) []Command {
		return []Command{
			CreatePolicy{Name: "read-" + tag, Type: PolicySystemAccessControl, Enabled: true,
				Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
			AttachPolicy{Tag: tag, Policy: "read-" + tag, Selector: Selector{Value: "yes"}},
		}
	}
	tags := []Command{CreateTag{Name: "a", AllowedValues: []string{"yes", "no"}}, CreateTag{Name: "b", AllowedValues: []string{"yes", "no"}}}
	cases := []struct {
		name  string
		setup [][]Command
		user  string
		priv  Privilege
		obj   Object
		allow bool
	}{
		{"tag on the catalog", [][]Command{tags, sacOn("a"),
			{AssociateTagsV2{Object: Catalog("lake"), TagsToAdd: []TagValue{{"a", "yes"}}}}}, "alice", PrivSelectTable, ledger, true},
		{"schema tag next to a shadowed one", [][]Command{tags, sacOn("b"),
			{AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{"a", "yes"}, {"b", "yes"}}},
				AssociateTagsV2{Object: ledger, TagsToAdd: []TagValue{{"a", "no"}}}}}, "alice", PrivSelectTable, ledger, true},
		{"the shadowed value does not apply", [][]Command{tags, sacOn("a"),
			{AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{"a", "yes"}}},
				AssociateTagsV2{Object: ledger, TagsToAdd: []TagValue{{"a", "no"}}}}}, "alice", PrivSelectTable, ledger, false},
		{"second table tag after one without policy", [][]Command{tags, sacOn("b"),
			{AssociateTagsV2{Object: ledger, TagsToAdd: []TagValue{{"a", "yes"}, {"b", "yes"}}}}}, "alice", PrivSelectTable, ledger, true},
		{"second policy of a tag after one for another value", [][]Command{tags, {
			CreatePolicy{Name: "read-no", Type: PolicySystemAccessControl, Enabled: true,
				Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
			AttachPolicy{Tag: "a", Policy: "read-no", Selector: Selector{Value: "no"}}}, sacOn("a"),
			{AssociateTagsV2{Object: ledger, TagsToAdd: []TagValue{{"a", "yes"}}}}}, "alice", PrivSelectTable, ledger, true},
		{"not for other roles", [][]Command{tags, sacOn("a"),
			{AssociateTagsV2{Object: Catalog("lake"), TagsToAdd: []TagValue{{"a", "yes"}}}}}, "bob", PrivSelectTable, ledger, false},
		{"create schema without USE_SCHEMA", [][]Command{{grantTo("reader", Catalog("lake"), PrivCreateSchema, Allow), roles("bob", "reader")}},
			"bob", PrivCreateSchema, Catalog("lake"), true},
		{"create schema without USE_CATALOG", [][]Command{{grantTo("reader", Catalog("lake"), PrivCreateSchema, Allow), roles("carol", "reader")}},
			"carol", PrivCreateSchema, Catalog("lake"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := catalogtest.Apply(t, base(t), admin, roles("alice", "analyst"))
			for _, cmds := range c.setup {
				s = catalogtest.Apply(t, s, admin, cmds...)
			}
			if d := s.Authorize(c.user, c.priv, c.obj); d.Allowed != c.allow {
				t.Fatalf("Authorize(%s, %s, %v) = %+v, want allowed=%v", c.user, c.priv, c.obj, d, c.allow)
			}
			if c.obj.Type == ObjectTable {
				if v := s.Visible(c.user, c.obj); v != c.allow {
					t.Fatalf("Visible = %v, want %v", v, c.allow)
				}
			}
		})
	}
}

// TestVisibilityRules lists who sees what for rules the other tests reach
// only together: a role is seen by its holders, its owner, the metalake
// owner and holders of MANAGE_GRANTS; a table needs USE_CATALOG and
// USE_SCHEMA (unless the caller owns the schema) besides a privilege on it;
// a catalog needs a privilege on or under it.
func TestVisibilityRules(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	s := catalogtest.Apply(t, base(t), admin,
		CreateUser{"dan"}, CreateUser{"erin"}, CreateUser{"fay"}, CreateUser{"gus"},
		// dan: SELECT and USE_SCHEMA, no USE_CATALOG.
		CreateRole{Name: "no-catalog", Grants: []Grant{{Schema("lake.fin"), PrivUseSchema, Allow}, {ledger, PrivSelectTable, Allow}}},
		roles("dan", "no-catalog"),
		// erin: SELECT and USE_CATALOG, no USE_SCHEMA.
		CreateRole{Name: "no-schema", Grants: []Grant{{Catalog("lake"), PrivUseCatalog, Allow}, {ledger, PrivSelectTable, Allow}}},
		roles("erin", "no-schema"),
		// fay: owns lake.fin, holds USE_CATALOG only.
		CreateRole{Name: "cat-only", Grants: []Grant{{Catalog("lake"), PrivUseCatalog, Allow}}},
		roles("fay", "cat-only"), SetOwner{Schema("lake.fin"), Owner{OwnerUser, "fay"}},
		// gus: MANAGE_GRANTS on the metalake.
		CreateRole{Name: "granter", Grants: []Grant{{Object{ObjectMetalake, "acme"}, PrivManageGrants, Allow}}},
		roles("gus", "granter"),
		// bob owns role "other" without holding it.
		SetOwner{Role("other"), Owner{OwnerUser, "bob"}},
	)
	cases := []struct {
		user string
		obj  Object
		want bool
	}{
		{"dan", ledger, false},
		{"erin", ledger, false},
		{"fay", ledger, true},
		{"fay", Schema("lake.fin"), true},
		{"alice", Role("use"), true},    // holds it
		{"bob", Role("other"), true},    // owns it
		{"gus", Role("other"), true},    // MANAGE_GRANTS
		{admin, Role("other"), true},    // metalake owner
		{"alice", Role("other"), false}, // none of these
		{"carol", Role("use"), false},
		{"alice", Catalog("lake"), true},
		{"carol", Catalog("lake"), false},
	}
	for _, c := range cases {
		if got := s.Visible(c.user, c.obj); got != c.want {
			t.Errorf("Visible(%s, %v) = %v, want %v", c.user, c.obj, got, c.want)
		}
		if got := len(s.FilterVisible(c.user, []Object{c.obj})) == 1; got != c.want {
			t.Errorf("FilterVisible(%s, %v) keeps it = %v, want %v", c.user, c.obj, got, c.want)
		}
	}
}

// TestEffectiveTagsAndFilters checks effective tags and the row filter a
// caller gets where the rules meet: a catalog's tag reaches its tables, a
// table's tag shadows only the schema's tag of that name, a missing object
// or the metalake has no effective tags, and a filter policy that does not
// apply to the caller does not hide a later one that does.
func TestEffectiveTagsAndFilters(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	s := catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "a"}, CreateTag{Name: "b"}, CreateTag{Name: "c"},
		AssociateTagsV1{Object: Catalog("lake"), TagsToAdd: []string{"c"}},
		AssociateTagsV1{Object: Schema("lake.fin"), TagsToAdd: []string{"a", "b"}},
		AssociateTagsV1{Object: ledger, TagsToAdd: []string{"a"}},
		CreatePolicy{Name: "a-for-others", Type: PolicyRowFilter, Enabled: true,
			Content: PolicyContent{Expression: "x = 1", ApplicableRoles: []string{"other"}}},
		CreatePolicy{Name: "b-for-all", Type: PolicyRowFilter, Enabled: true, Content: PolicyContent{Expression: "x = 2"}},
		AttachPolicy{Tag: "a", Policy: "a-for-others"}, AttachPolicy{Tag: "a", Policy: "b-for-all"})
	tags, err := s.EffectiveTags(ledger)
	var got []string
	for _, e := range tags {
		got = append(got, e.Name+"@"+e.Source.Name)
	}
	if want := []string{"a@lake.fin.ledger", "b@lake.fin", "c@lake"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("EffectiveTags(ledger) = %v, %v; want %v", got, err, want)
	}
	if tags, err := s.EffectiveTags(Catalog("lake")); err != nil || len(tags) != 1 || tags[0].Name != "c" {
		t.Errorf("EffectiveTags(lake) = %v, %v", tags, err)
	}
	for _, o := range []Object{Table("lake.fin.missing"), {ObjectMetalake, "acme"}} {
		if _, err := s.EffectiveTags(o); !errors.Is(err, ErrNotFound) {
			t.Errorf("EffectiveTags(%v): %v, want ErrNotFound", o, err)
		}
		if _, err := s.PoliciesOf(o); !errors.Is(err, ErrNotFound) {
			t.Errorf("PoliciesOf(%v): %v, want ErrNotFound", o, err)
		}
	}
	if ps, err := s.PoliciesOf(Catalog("lake")); err != nil || len(ps) != 0 {
		t.Errorf("PoliciesOf(lake) = %v, %v", ps, err)
	}
	for u, want := range map[string]string{"bob": "x = 2", "carol": "x = 2"} {
		if f, _, err := s.RowFiltersAndMasks(u, ledger.Name); err != nil || f != want {
			t.Errorf("%s: filter %q, %v; want %q", u, f, err, want)
		}
	}
}

// TestPoliciesOfNearestTag checks that a policy reached through tags at
// two levels is attributed to the nearest one, not the first by name.
func TestPoliciesOfNearestTag(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	s := catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "a"}, CreateTag{Name: "z"},
		CreatePolicy{Name: "p", Type: PolicyRowFilter, Enabled: true, Content: PolicyContent{Expression: "x = 1"}},
		AttachPolicy{Tag: "a", Policy: "p"}, AttachPolicy{Tag: "z", Policy: "p"},
		AssociateTagsV1{Object: Catalog("lake"), TagsToAdd: []string{"a"}},
		AssociateTagsV1{Object: ledger, TagsToAdd: []string{"z"}})
	ps, err := s.PoliciesOf(ledger)
	if err != nil || len(ps) != 1 || ps[0].Tag != "z" || ps[0].Source != ledger || ps[0].Inherited {
		t.Fatalf("PoliciesOf(ledger) = %+v, %v; want p through z on the table", ps, err)
	}
}

// TestMaskAndTagPolicyOrder checks that a policy that does not apply (an
// exempting mask, a disabled or other-type policy on a tag) does not hide a
// later one that does.
func TestMaskAndTagPolicyOrder(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	s := catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "pii"},
		CreatePolicy{Name: "a-exempt-use", Type: PolicyColumnMask, Enabled: true, Content: PolicyContent{Mask: "NULL", ExemptRoles: []string{"use"}}},
		CreatePolicy{Name: "b-redact", Type: PolicyColumnMask, Enabled: true, Content: PolicyContent{Mask: "REDACT"}},
		AttachPolicy{Tag: "pii", Policy: "a-exempt-use"}, AttachPolicy{Tag: "pii", Policy: "b-redact"},
		AssociateTagsV1{Object: Column("lake.fin.ledger.card"), TagsToAdd: []string{"pii"}},
		CreateTag{Name: "t"},
		CreatePolicy{Name: "off", Type: PolicySystemAccessControl, Enabled: false,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
		CreatePolicy{Name: "filter", Type: PolicyRowFilter, Enabled: true, Content: PolicyContent{Expression: "x = 1"}},
		CreatePolicy{Name: "on", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
		AttachPolicy{Tag: "t", Policy: "off"}, AttachPolicy{Tag: "t", Policy: "filter"}, AttachPolicy{Tag: "t", Policy: "on"},
		AssociateTagsV1{Object: Table("lake.fin.budget"), TagsToAdd: []string{"t"}},
		roles("alice", "analyst"))
	_, m, err := s.RowFiltersAndMasks("bob", ledger.Name) // bob holds "use": exempt from the first mask only
	if err != nil || len(m) != 1 || m[0] != (ColumnMask{"card", "REDACT", "b-redact"}) {
		t.Errorf("bob's masks = %v, %v; want card REDACT by b-redact", m, err)
	}
	if d := s.Authorize("alice", PrivSelectTable, Table("lake.fin.budget")); !d.Allowed || d.Reason != ReasonTagPolicy {
		t.Errorf("alice on budget: %+v, want allowed by the enabled tag policy", d)
	}
}

// TestCanBindTo checks that a privilege binds only to the object types it
// is defined for, and that invalid privileges and types bind to nothing.
func TestCanBindTo(t *testing.T) {
	cases := []struct {
		p    Privilege
		t    ObjectType
		want bool
	}{
		{PrivUseSchema, ObjectSchema, true},
		{PrivUseSchema, ObjectTable, false},
		{PrivSelectTable, ObjectTable, true},
		{PrivSelectTable, ObjectColumn, false},
		{PrivUseCatalog, ObjectCatalog, true},
		{PrivUseCatalog, ObjectTag, false},
		{Privilege(0), ObjectTable, false},
		{Privilege(200), ObjectTable, false},
		{PrivSelectTable, ObjectType(16), false},
		{PrivSelectTable, ObjectType(200), false},
	}
	for _, c := range cases {
		if got := c.p.CanBindTo(c.t); got != c.want {
			t.Errorf("%v.CanBindTo(%v) = %v, want %v", c.p, c.t, got, c.want)
		}
	}
}

// TestCommandTimeRange checks the years a command's time may carry: 0 to
// 9999, which RFC 3339 can represent.
func TestCommandTimeRange(t *testing.T) {
	s := base(t)
	for _, c := range []struct {
		year int
		ok   bool
	}{{-1, false}, {0, true}, {9999, true}, {10000, false}} {
		m := catalogtest.Meta(s, admin)
		m.Time = time.Date(c.year, 6, 1, 0, 0, 0, 0, time.UTC)
		_, _, err := Apply(s, CreateUser{"zed"}, m)
		if (err == nil) != c.ok {
			t.Errorf("year %d: %v, want ok=%v", c.year, err, c.ok)
		}
	}
}
