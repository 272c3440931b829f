package catalog_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// tagDesign builds the scenarios of the tag-based access design:
//
//   - catalog lake, schemas fin (dept=finance, region) and hr (legacy);
//     tables fin.ledger(amount, card: pii), fin.budget, fin.payroll
//     (dept=hr, nearest wins), hr.staff;
//   - role "use" (USE_CATALOG, USE_SCHEMA on lake) held by everyone but
//     nobody; "analyst" named by the system_access_control policies
//     finance-read (dept=finance, SELECT_TABLE and MANAGE_GRANTS, which a
//     tag does not confer), hr-read (dept=hr, for role
//     "hr") and legacy-read (tag legacy, disabled);
//   - "restricted" denies SELECT_TABLE on schema lake.fin; "reader" allows
//     it on table lake.fin.budget; group "contractors" holds "restricted";
//   - policy eu-only (row_filter) through tag region on lake.fin; mask-card
//     (column_mask LAST4, exempting role "pci") through tag pii on
//     lake.fin.ledger.card;
//   - users: bob (use, analyst), carol (use, analyst), dave (use, analyst,
//     restricted, reader), erin (use, analyst, in contractors), frank (use,
//     analyst, restricted; owns lake.fin.budget), gina (use, analyst,
//     pci), nobody (no roles).
func tagDesign(t testing.TB) *Snapshot {
	s := catalogtest.New(t, "acme", admin)
	cols := []ColumnDef{{Name: "amount", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR"}}
	sac := func(name string, enabled bool, roles ...string) CreatePolicy {
		return CreatePolicy{Name: name, Type: PolicySystemAccessControl, Enabled: enabled,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: roles}}
	}
	var cmds []Command
	for _, u := range []string{"bob", "carol", "dave", "erin", "frank", "gina", "nobody"} {
		cmds = append(cmds, CreateUser{u})
	}
	cmds = append(cmds,
		CreateCatalog{Name: "lake", Type: "managed"},
		CreateSchema{Name: "lake.fin"}, CreateSchema{Name: "lake.hr"},
		CreateTable{Name: "lake.fin.ledger", Columns: cols},
		CreateTable{Name: "lake.fin.budget", Columns: cols[:1]},
		CreateTable{Name: "lake.fin.payroll", Columns: cols[:1]},
		CreateTable{Name: "lake.hr.staff", Columns: cols[:1]},
		CreateRole{Name: "use", Grants: []Grant{{Catalog("lake"), PrivUseCatalog, Allow}, {Catalog("lake"), PrivUseSchema, Allow}}},
		CreateRole{Name: "analyst"}, CreateRole{Name: "hr"}, CreateRole{Name: "pci"},
		CreateRole{Name: "restricted", Grants: []Grant{{Schema("lake.fin"), PrivSelectTable, Deny}}},
		CreateRole{Name: "reader", Grants: []Grant{{Table("lake.fin.budget"), PrivSelectTable, Allow}}},
		CreateGroup{Name: "contractors"}, AddGroupMembers{Group: "contractors", Users: []string{"erin"}},
		GrantRoles{Grantee: Owner{OwnerGroup, "contractors"}, Roles: []string{"restricted"}},
		roles("bob", "use", "analyst"), roles("carol", "use", "analyst"),
		roles("dave", "use", "analyst", "restricted", "reader"), roles("erin", "use", "analyst"),
		roles("frank", "use", "analyst", "restricted"), roles("gina", "use", "analyst", "pci"),
		SetOwner{Object: Table("lake.fin.budget"), Owner: Owner{OwnerUser, "frank"}},
		CreateTag{Name: "dept", AllowedValues: []string{"finance", "hr"}},
		CreateTag{Name: "region"}, CreateTag{Name: "pii"}, CreateTag{Name: "legacy"},
		sac("finance-read", true, "analyst"), sac("hr-read", true, "hr"), sac("legacy-read", false, "analyst"),
		// A stored policy may list a privilege tags do not confer.
		AlterPolicy{Name: "finance-read", Updates: []PolicyUpdate{{Type: "updateContent", PolicyType: PolicySystemAccessControl,
			NewContent: &PolicyContent{Privileges: []Privilege{PrivSelectTable, PrivManageGrants}, ApplicableRoles: []string{"analyst"}}}}},
		AttachPolicy{Tag: "dept", Policy: "finance-read", Selector: Selector{Value: "finance"}},
		AttachPolicy{Tag: "dept", Policy: "hr-read", Selector: Selector{Value: "hr"}},
		AttachPolicy{Tag: "legacy", Policy: "legacy-read"},
		CreatePolicy{Name: "eu-only", Type: PolicyRowFilter, Enabled: true, Content: PolicyContent{Expression: "region = 'EU'"}},
		CreatePolicy{Name: "mask-card", Type: PolicyColumnMask, Enabled: true, Content: PolicyContent{Mask: MaskLast4, ExemptRoles: []string{"pci"}}},
		AttachPolicy{Tag: "region", Policy: "eu-only"}, AttachPolicy{Tag: "pii", Policy: "mask-card"},
		AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{Name: "dept", Value: "finance"}, {Name: "region"}}},
		AssociateTagsV2{Object: Table("lake.fin.payroll"), TagsToAdd: []TagValue{{Name: "dept", Value: "hr"}}},
		AssociateTagsV2{Object: Column("lake.fin.ledger.card"), TagsToAdd: []TagValue{{Name: "pii"}}},
		AssociateTagsV2{Object: Schema("lake.hr"), TagsToAdd: []TagValue{{Name: "legacy"}}},
	)
	return catalogtest.Apply(t, s, admin, cmds...)
}

// policyLink finds the link of policy under tag in e.
func policyLink(e Explanation, tag, policy string) (TagLink, PolicyLink, bool) {
	for _, t := range e.Tags {
		if t.Tag != tag {
			continue
		}
		for _, p := range t.Policies {
			if p.Policy == policy {
				return t, p, true
			}
		}
	}
	return TagLink{}, PolicyLink{}, false
}

func TestExplainScenarios(t *testing.T) {
	s := tagDesign(t)
	type policyWant struct{ tag, policy, effect string }
	tests := []struct {
		name      string
		user      string
		priv      Privilege
		object    Object
		allowed   bool
		reason    string
		decidedBy *DecidedBy
		policies  []policyWant
		grants    []GrantLink // that must be listed
		rule      []string    // substrings of the rule
		read      *ReadLink
	}{
		{name: "inherited tag", user: "bob", priv: PrivSelectTable, object: Table("lake.fin.budget"),
			allowed: true, reason: ReasonTagPolicy,
			decidedBy: &DecidedBy{Object: Schema("lake.fin"), Role: "analyst", Tag: "dept", Policy: "finance-read"},
			policies:  []policyWant{{"dept", "finance-read", EffectConfers}, {"dept", "hr-read", EffectNotSelected}},
			rule:      []string{"policy finance-read", "on role analyst, which the user holds", "tag dept for the value finance", "assigned on SCHEMA lake.fin as dept=finance and inherited"}},
		{name: "value selector: the table's own value wins and selects another policy", user: "bob", priv: PrivSelectTable,
			object: Table("lake.fin.payroll"), allowed: false, reason: ReasonNoGrant,
			policies: []policyWant{{"dept", "finance-read", EffectNotSelected}, {"dept", "hr-read", EffectNoRole}},
			rule:     []string{"no grant allows SELECT_TABLE"}},
		{name: "DENY through a role", user: "dave", priv: PrivSelectTable, object: Table("lake.fin.budget"),
			allowed: false, reason: ReasonDenied,
			decidedBy: &DecidedBy{Object: Schema("lake.fin"), Role: "restricted", Privilege: PrivSelectTable},
			grants: []GrantLink{
				{Role: "restricted", Object: Schema("lake.fin"), Privilege: PrivSelectTable, Condition: Deny, Inherited: true},
				{Role: "reader", Object: Table("lake.fin.budget"), Privilege: PrivSelectTable, Condition: Allow},
				{Role: "use", Object: Catalog("lake"), Privilege: PrivUseCatalog, Condition: Allow, Inherited: true},
			},
			policies: []policyWant{{"dept", "finance-read", EffectConfers}},
			rule: []string{"DENY over ALLOW", "role restricted denies SELECT_TABLE on SCHEMA lake.fin",
				"role reader on TABLE lake.fin.budget", "policy finance-read through tag dept"}},
		{name: "DENY through a group", user: "erin", priv: PrivSelectTable, object: Table("lake.fin.ledger"),
			allowed: false, reason: ReasonDenied,
			decidedBy: &DecidedBy{Object: Schema("lake.fin"), Role: "restricted", Group: "contractors", Privilege: PrivSelectTable},
			rule:      []string{"role restricted (through group contractors) denies"}},
		{name: "ownership wins over a DENY", user: "frank", priv: PrivSelectTable, object: Table("lake.fin.budget"),
			allowed: true, reason: ReasonOwner, decidedBy: &DecidedBy{Object: Table("lake.fin.budget")},
			rule: []string{"the user owns TABLE lake.fin.budget", "ownership"}},
		{name: "metalake owner", user: admin, priv: PrivModifyTable, object: Table("lake.hr.staff"),
			allowed: true, reason: ReasonMetalakeOwner, decidedBy: &DecidedBy{Object: Object{ObjectMetalake, "acme"}},
			rule: []string{"owns the metalake"}},
		{name: "disabled policy", user: "carol", priv: PrivSelectTable, object: Table("lake.hr.staff"),
			allowed: false, reason: ReasonNoGrant,
			policies: []policyWant{{"legacy", "legacy-read", EffectDisabled}},
			rule:     []string{"disabled, so without effect: legacy-read"}},
		{name: "a privilege tags do not confer", user: "bob", priv: PrivManageGrants, object: Table("lake.fin.budget"),
			allowed: false, reason: ReasonNoGrant, policies: []policyWant{{"dept", "finance-read", EffectNotListed}}},
		{name: "no USE_CATALOG", user: "nobody", priv: PrivSelectTable, object: Table("lake.fin.budget"),
			allowed: false, reason: ReasonNoUseCatalog, rule: []string{"needs USE_CATALOG", "no role of the user is granted it"}},
		{name: "read: filter and mask", user: "bob", priv: PrivSelectTable, object: Table("lake.fin.ledger"),
			allowed: true, reason: ReasonTagPolicy,
			read: &ReadLink{Filtered: true, Filter: "region = 'EU'", FilterPolicy: "eu-only",
				Masks: []ColumnMask{{Column: "card", Mask: MaskLast4, Policy: "mask-card"}}}},
		{name: "read: exempt from the mask", user: "gina", priv: PrivSelectTable, object: Table("lake.fin.ledger"),
			allowed: true, reason: ReasonTagPolicy,
			read: &ReadLink{Filtered: true, Filter: "region = 'EU'", FilterPolicy: "eu-only"}},
		{name: "missing object", user: "bob", priv: PrivSelectTable, object: Table("lake.fin.nope"),
			allowed: false, reason: ReasonNotFound, rule: []string{"no such object"}},
		{name: "unknown user", user: "ghost", priv: PrivSelectTable, object: Table("lake.fin.budget"),
			allowed: false, reason: ReasonUnknownPrincipal},
		{name: "tag: VIEW_TAG for nobody", user: "nobody", priv: PrivViewTag, object: Tag("dept"),
			allowed: false, reason: ReasonNoGrant},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := s.Explain(tc.user, tc.priv, tc.object)
			d := s.Authorize(tc.user, tc.priv, tc.object)
			if e.Allowed != d.Allowed || e.Reason != d.Reason {
				t.Fatalf("explained %v %q, enforced %v %q", e.Allowed, e.Reason, d.Allowed, d.Reason)
			}
			if e.Allowed != tc.allowed || e.Reason != tc.reason {
				t.Fatalf("got %v %q, want %v %q; rule: %s", e.Allowed, e.Reason, tc.allowed, tc.reason, e.Rule)
			}
			if tc.decidedBy != nil && !reflect.DeepEqual(e.DecidedBy, tc.decidedBy) {
				t.Errorf("decidedBy = %+v, want %+v", e.DecidedBy, tc.decidedBy)
			}
			for _, pw := range tc.policies {
				_, pl, ok := policyLink(e, pw.tag, pw.policy)
				if !ok || pl.Effect != pw.effect {
					t.Errorf("policy %s via %s: %+v (found %v), want effect %q", pw.policy, pw.tag, pl, ok, pw.effect)
				}
			}
			for _, g := range tc.grants {
				if !slices.Contains(e.Grants, g) {
					t.Errorf("grant %+v not listed in %+v", g, e.Grants)
				}
			}
			for _, sub := range tc.rule {
				if !strings.Contains(e.Rule, sub) {
					t.Errorf("rule %q does not say %q", e.Rule, sub)
				}
			}
			if tc.read != nil && !reflect.DeepEqual(e.Read, tc.read) {
				t.Errorf("read = %+v, want %+v", e.Read, tc.read)
			}
			if got := replayExplanation(t, e); got != d {
				t.Errorf("the chain replays to %+v, the decision is %+v\n%s", got, d, mustJSON(t, e))
			}
		})
	}
}

// TestExplainChainDetails pins the chain of one decision completely: the
// inherited tag with its value and source, every grant with the object it
// is on, the owners, the role bound through a group.
func TestExplainChainDetails(t *testing.T) {
	s := tagDesign(t)
	e := s.Explain("erin", PrivSelectTable, Table("lake.fin.budget"))
	wantRoles := []RoleBinding{{Role: "analyst"}, {Role: "restricted", Group: "contractors"}, {Role: "use"}}
	if !reflect.DeepEqual(e.Roles, wantRoles) {
		t.Errorf("roles = %+v, want %+v", e.Roles, wantRoles)
	}
	wantOwners := []OwnerLink{
		{Object: Object{ObjectMetalake, "acme"}, Owner: Owner{OwnerUser, admin}},
		{Object: Catalog("lake"), Owner: Owner{OwnerUser, admin}},
		{Object: Schema("lake.fin"), Owner: Owner{OwnerUser, admin}},
		{Object: Table("lake.fin.budget"), Owner: Owner{OwnerUser, "frank"}},
	}
	if !reflect.DeepEqual(e.Owners, wantOwners) {
		t.Errorf("owners = %+v, want %+v", e.Owners, wantOwners)
	}
	wantGrants := []GrantLink{
		{Role: "use", Object: Catalog("lake"), Privilege: PrivUseCatalog, Condition: Allow, Inherited: true},
		{Role: "use", Object: Catalog("lake"), Privilege: PrivUseSchema, Condition: Allow, Inherited: true},
		{Role: "restricted", Object: Schema("lake.fin"), Privilege: PrivSelectTable, Condition: Deny, Inherited: true},
	}
	if !reflect.DeepEqual(e.Grants, wantGrants) {
		t.Errorf("grants = %+v, want %+v", e.Grants, wantGrants)
	}
	tl, pl, ok := policyLink(e, "dept", "finance-read")
	if !ok || !tl.Inherited || tl.Source != Schema("lake.fin") || !slices.Equal(tl.Values, []string{"finance"}) ||
		!pl.Enabled || pl.Selector.Value != "finance" || !slices.Equal(pl.Held, []string{"analyst"}) {
		t.Errorf("dept/finance-read = %+v %+v", tl, pl)
	}
	if e.Read != nil {
		t.Errorf("a denied read explains no filter: %+v", e.Read)
	}
}

// TestViewExplainHidesWhatTheUserCannotSee: a user explaining itself is
// answered for an object it may not see exactly as for a missing one, byte
// for byte, and without the tags and policies it may not view.
func TestViewExplainHidesWhatTheUserCannotSee(t *testing.T) {
	s := tagDesign(t)
	// carol cannot see lake.hr.staff (the only policy that would let her is
	// disabled); with the table dropped, the answer must not change.
	hidden := s.ViewExplain("carol", PrivSelectTable, Table("lake.hr.staff"))
	if hidden.Reason != ReasonNotFound || hidden.Allowed || len(hidden.Tags) > 0 || len(hidden.Grants) > 0 || len(hidden.Owners) > 0 {
		t.Fatalf("hidden table explained as %+v", hidden)
	}
	gone := catalogtest.Apply(t, s, admin, DropObject{Object: Table("lake.hr.staff")})
	missing := gone.ViewExplain("carol", PrivSelectTable, Table("lake.hr.staff"))
	if a, b := mustJSON(t, hidden), mustJSON(t, missing); !bytes.Equal(a, b) {
		t.Fatalf("hidden and missing differ:\n%s\n%s", a, b)
	}
	// Schemas and columns too.
	if e := s.ViewExplain("nobody", PrivUseSchema, Schema("lake.fin")); e.Reason != ReasonNotFound {
		t.Errorf("a schema nobody cannot see: %+v", e)
	}
	if e := s.ViewExplain("carol", PrivSelectTable, Column("lake.hr.staff.amount")); e.Reason != ReasonNotFound {
		t.Errorf("a column of a hidden table: %+v", e)
	}

	// bob sees lake.fin.ledger but none of its tags or policies: the
	// decision and the read are explained without naming them.
	e := s.ViewExplain("bob", PrivSelectTable, Table("lake.fin.ledger"))
	if !e.Allowed || e.Reason != ReasonTagPolicy || len(e.Tags) != 0 {
		t.Fatalf("bob: %+v", e)
	}
	if e.DecidedBy == nil || e.DecidedBy.Tag != "" || e.DecidedBy.Policy != "" || e.DecidedBy.Object != (Object{}) {
		t.Errorf("decidedBy names what bob may not view: %+v", e.DecidedBy)
	}
	if e.Read == nil || !e.Read.Filtered || e.Read.Filter != "" || e.Read.FilterPolicy != "" ||
		len(e.Read.Masks) != 1 || e.Read.Masks[0].Policy != "" || e.Read.Masks[0].Column != "card" {
		t.Errorf("read names what bob may not view: %+v", e.Read)
	}
	for _, word := range []string{"dept", "finance-read", "eu-only", "mask-card", "region"} {
		if b := mustJSON(t, e); bytes.Contains(b, []byte(word)) {
			t.Errorf("bob's explanation names %q: %s", word, b)
		}
	}
	// With VIEW_TAG and VIEW_POLICY on the metalake, bob sees them.
	s2 := catalogtest.Apply(t, s, admin,
		CreateRole{Name: "viewer", Grants: []Grant{{Object{ObjectMetalake, "acme"}, PrivViewTag, Allow}, {Object{ObjectMetalake, "acme"}, PrivViewPolicy, Allow}}},
		roles("bob", "viewer"))
	if got, want := s2.ViewExplain("bob", PrivSelectTable, Table("lake.fin.ledger")), s2.Explain("bob", PrivSelectTable, Table("lake.fin.ledger")); !reflect.DeepEqual(got, want) {
		t.Errorf("with VIEW_TAG and VIEW_POLICY:\n%+v\nwant\n%+v", got, want)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %+v: %v", v, err)
	}
	return b
}

// replayExplanation decides from the explanation's chain alone, by the
// rules Authorize documents: the chain must be enough to reach the
// decision. It does not replay reasons that stop before the chain (unknown
// user, invalid privilege, missing object).
func replayExplanation(t testing.TB, e Explanation) Decision {
	t.Helper()
	switch e.Reason {
	case ReasonUnknownPrincipal, ReasonInvalid, ReasonNotFound:
		return Decision{Reason: e.Reason}
	}
	a, d := map[Privilege]bool{}, map[Privilege]bool{}
	for _, g := range e.Grants {
		if g.Condition == Allow {
			a[g.Privilege] = true
		} else {
			d[g.Privilege] = true
		}
	}
	owned := func(i int) bool { return i < len(e.Owners) && e.Owners[i].Owned }
	ok := func(p Privilege) bool { return a[p] && !d[p] }
	priv := e.Privilege
	allow := func(r string) Decision { return Decision{Allowed: true, Reason: r} }
	deny := func(r string) Decision { return Decision{Reason: r} }
	domainPriv := priv == PrivUseDomain || priv == PrivManageDomain
	switch {
	case e.Object.Type == ObjectDomain || (e.Object.Type == ObjectMetalake && domainPriv):
		if owned(0) {
			return allow(ReasonMetalakeOwner)
		}
		for i := 1; i < len(e.Owners); i++ {
			if owned(i) {
				return allow(ReasonOwner)
			}
		}
		if d[priv] {
			return deny(ReasonDenied)
		}
		if a[priv] || (priv == PrivUseDomain && ok(PrivManageDomain)) {
			return allow(ReasonGrant)
		}
		return deny(ReasonNoGrant)
	case e.Object.Type == ObjectTag || e.Object.Type == ObjectPolicy || e.Object.Type == ObjectRole:
		if owned(0) {
			return allow(ReasonMetalakeOwner)
		}
		if owned(1) {
			return allow(ReasonOwner)
		}
		switch {
		case ok(priv), priv == PrivViewTag && ok(PrivApplyTag), priv == PrivViewPolicy && ok(PrivApplyPolicy):
			return allow(ReasonGrant)
		case d[priv]:
			return deny(ReasonDenied)
		}
		return deny(ReasonNoGrant)
	}
	n := map[ObjectType]int{ObjectMetalake: 1, ObjectCatalog: 2, ObjectSchema: 3, ObjectTable: 4, ObjectColumn: 5}[e.Object.Type]
	if owned(0) {
		return allow(ReasonMetalakeOwner)
	}
	if n > 1 && owned(1) {
		return allow(ReasonCatalogOwner)
	}
	if n > 1 && priv != PrivUseCatalog && !ok(PrivUseCatalog) {
		return deny(ReasonNoUseCatalog)
	}
	schemaOwner := n > 2 && owned(2)
	if n > 2 && priv != PrivUseCatalog && priv != PrivUseSchema && !schemaOwner && !ok(PrivUseSchema) {
		return deny(ReasonNoUseSchema)
	}
	if schemaOwner || (n > 3 && owned(3)) {
		return allow(ReasonOwner)
	}
	if d[priv] {
		return deny(ReasonDenied)
	}
	if a[priv] {
		return allow(ReasonGrant)
	}
	for _, tl := range e.Tags {
		for _, pl := range tl.Policies {
			if pl.Effect == EffectConfers && priv != PrivUseCatalog && priv != PrivUseSchema {
				return allow(ReasonTagPolicy)
			}
		}
	}
	return deny(ReasonNoGrant)
}

// randomState builds a random governance state: a tree of catalogs c0-c1,
// schemas s0-s1 and tables t0-t2 (the property test's names), users u0-u2,
// roles r0-r2, groups g0-g1, tags any, none and dept, and a policy p0 on
// "any" (see the start below), then n random
// commands — governance commands (governance) more often than the property
// test's generator (gen.command) draws them, some by non-admin actors;
// rejected ones are skipped.
func randomState(t testing.TB, seed uint64, n int) *Snapshot {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := gen{r}
	s := catalogtest.New(t, "acme", admin)
	boot := []Command{CreateUser{"u0"}, CreateUser{"u1"}, CreateUser{"u2"},
		CreateRole{Name: "r0"}, CreateRole{Name: "r1"}, CreateRole{Name: "r2"}, CreateGroup{"g0"}, CreateGroup{"g1"},
		CreateTag{Name: "any"}, CreateTag{Name: "none", AllowedValues: []string{}}, CreateTag{Name: "dept", AllowedValues: []string{"fin", "hr"}}}
	for _, c := range []string{"c0", "c1"} {
		boot = append(boot, CreateCatalog{Name: c})
		for _, sc := range []string{"s0", "s1"} {
			boot = append(boot, CreateSchema{Name: c + "." + sc})
			for _, tb := range []string{"t0", "t1", "t2"} {
				boot = append(boot, CreateTable{Name: c + "." + sc + "." + tb, Columns: []ColumnDef{{Name: "a", Type: "INT"}, {Name: "b", Type: "VARCHAR"}}})
			}
		}
	}
	// A start where reads are possible: r0 and r1 may use c0 and c1, r2
	// every catalog; u0 holds r0, u2 r2, group g0 (u1) r1; and p0 lets r0
	// and r1 read what carries "any".
	boot = append(boot,
		grantTo("r0", Catalog("c0"), PrivUseCatalog, Allow), grantTo("r0", Catalog("c0"), PrivUseSchema, Allow),
		grantTo("r1", Catalog("c1"), PrivUseCatalog, Allow), grantTo("r1", Catalog("c1"), PrivUseSchema, Allow),
		grantTo("r2", Object{ObjectMetalake, "acme"}, PrivUseCatalog, Allow), grantTo("r2", Object{ObjectMetalake, "acme"}, PrivUseSchema, Allow),
		roles("u0", "r0"), roles("u2", "r2"), AddGroupMembers{Group: "g0", Users: []string{"u1"}},
		GrantRoles{Grantee: Owner{OwnerGroup, "g0"}, Roles: []string{"r1"}},
		CreatePolicy{Name: "p0", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"r0", "r1"}}},
		AttachPolicy{Tag: "any", Policy: "p0"},
		CreatePolicy{Name: "p1", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable, PrivModifyTable}, ApplicableRoles: []string{"r2"}}},
		AttachPolicy{Tag: "dept", Policy: "p1", Selector: Selector{Value: "fin"}})
	s = catalogtest.Apply(t, s, admin, boot...)
	for range n {
		var c Command
		if r.IntN(3) == 0 {
			c = g.command(s)
		} else {
			c = g.governance()
		}
		actor := admin
		if r.IntN(6) == 0 {
			actor = g.user()
		}
		if ns, _, err := Apply(s, c, catalogtest.Meta(s, actor)); err == nil {
			s = ns
		}
	}
	return s
}

// governance draws a command that changes who may do what: grants and
// revocations (mostly of the privileges reads need), role bindings, group
// members, tag assignments, policies and their attachments, owners.
func (g gen) governance() Command {
	privs := []Privilege{PrivUseCatalog, PrivUseSchema, PrivSelectTable, PrivModifyTable, PrivCreateTable}
	priv := func() Privilege {
		if g.r.IntN(5) == 0 {
			return g.privilege()
		}
		return privs[g.r.IntN(len(privs))]
	}
	switch g.r.IntN(16) {
	case 14:
		return AssociateTagsV2{Object: Table(g.table()), TagsToRemove: []TagValue{{g.tag(), g.value()}}}
	case 0, 1, 2:
		return GrantPrivileges{Role: g.role(), Object: g.object(), Privileges: []PrivilegeCondition{{priv(), g.cond()}}}
	case 3:
		return RevokePrivileges{Role: g.role(), Object: g.object(), Privileges: []PrivilegeCondition{{priv(), g.cond()}}}
	case 4:
		if g.r.IntN(2) == 0 {
			return GrantRoles{Grantee: Owner{OwnerGroup, g.pick("g0", "g1")}, Roles: []string{g.role()}}
		}
		return GrantRoles{Grantee: Owner{OwnerUser, g.user()}, Roles: []string{g.role()}}
	case 5:
		return AddGroupMembers{Group: g.pick("g0", "g1"), Users: []string{g.user()}}
	case 6, 7:
		o := g.object()
		if g.r.IntN(2) == 0 {
			o = Table(g.table())
		}
		return AssociateTagsV2{Object: o, TagsToAdd: []TagValue{{g.tag(), g.value()}}}
	case 8:
		t := []PolicyType{PolicySystemAccessControl, PolicySystemAccessControl, PolicyRowFilter, PolicyColumnMask}[g.r.IntN(4)]
		c := g.content(t)
		if t == PolicySystemAccessControl && g.r.IntN(4) == 0 {
			// Stored policies may list privileges a tag does not confer
			// (CheckEntry keeps them out of new ones, Apply does not).
			if p := g.privilege(); p != PrivUseCatalog && p != PrivUseSchema {
				c.Privileges = append(c.Privileges, p)
			}
		}
		return CreatePolicy{Name: g.policy(), Type: t, Enabled: g.r.IntN(4) > 0, Content: c}
	case 9, 10:
		return AttachPolicy{Tag: g.tag(), Policy: g.policy(), Selector: Selector{Value: g.value()}}
	case 11, 15:
		if g.r.IntN(2) == 0 {
			return EnablePolicy{Name: g.policy()}
		}
		return DisablePolicy{Name: g.policy()}
	case 12:
		o := g.object()
		if o.Type == ObjectMetalake {
			o = Schema(g.schema())
		}
		if g.r.IntN(3) == 0 {
			return SetOwner{Object: o, Owner: Owner{OwnerGroup, g.pick("g0", "g1")}}
		}
		return SetOwner{Object: o, Owner: Owner{OwnerUser, g.user()}}
	}
	return RevokeRoles{Grantee: Owner{OwnerUser, g.user()}, Roles: []string{g.role()}}
}

// explainSeeds is the number of seed states of FuzzExplainAgreesWithDecision.
const explainSeeds = 48

// FuzzExplainAgreesWithDecision: on random governance states, for every
// user, object and privilege, the explained outcome is the enforced one
// (Authorize), the explained chain alone replays to it, what decided is on
// the chain, the explained read is RowFiltersAndMasks', and a user
// explaining itself gets the same outcome, or "no such object" for what it
// may not see.
func FuzzExplainAgreesWithDecision(f *testing.F) {
	for seed := range uint64(explainSeeds) {
		f.Add(seed, uint8(seed*37))
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		s := randomState(t, seed, 40+int(n))
		objs := append(allObjects(), Role("r0"), Role("r1"), Role("r2"), Object{ObjectMetalake, "other"}, Object{ObjectUser, "u0"})
		for _, u := range []string{admin, "u0", "u1", "u2", "ghost"} {
			for _, o := range objs {
				for p := Privilege(0); p <= 20; p++ {
					checkExplanation(t, s, u, p, o)
				}
			}
		}
	})
}

func checkExplanation(t *testing.T, s *Snapshot, u string, p Privilege, o Object) {
	t.Helper()
	e := s.Explain(u, p, o)
	d := s.Authorize(u, p, o)
	if e.Allowed != d.Allowed || e.Reason != d.Reason {
		t.Fatalf("%s %v %v: explained %v %q, enforced %v %q", u, p, o, e.Allowed, e.Reason, d.Allowed, d.Reason)
	}
	if !p.Valid() {
		return
	}
	if got := replayExplanation(t, e); got.Reason != ReasonUnknownPrincipal && got.Reason != ReasonNotFound && got != d {
		t.Fatalf("%s %v %v: the chain replays to %+v, the decision is %+v\n%s", u, p, o, got, d, mustJSON(t, e))
	}
	checkDecidedBy(t, e)
	if d.Allowed && p == PrivSelectTable && o.Type == ObjectTable {
		filter, masks, err := s.RowFiltersAndMasks(u, o.Name)
		want := &ReadLink{Filtered: filter != "", Filter: filter, Masks: masks}
		if err != nil {
			want = &ReadLink{Conflict: err.Error()}
		}
		got := *e.Read
		got.FilterPolicy = ""
		if e.Read == nil || !reflect.DeepEqual(&got, want) || (e.Read.Filtered != (e.Read.FilterPolicy != "")) {
			t.Fatalf("%s %v: explained read %+v, RowFiltersAndMasks %+v", u, o, e.Read, want)
		}
	} else if e.Read != nil {
		t.Fatalf("%s %v %v: a read explained for a decision that allows none: %+v", u, p, o, e.Read)
	}
	if a, b := mustJSON(t, e), mustJSON(t, s.Explain(u, p, o)); !bytes.Equal(a, b) {
		t.Fatalf("two explanations of one decision differ:\n%s\n%s", a, b)
	}
	v := s.ViewExplain(u, p, o)
	if s.Visible(u, o) || e.Reason == ReasonUnknownPrincipal {
		if v.Allowed != d.Allowed || v.Reason != d.Reason {
			t.Fatalf("%s %v %v: viewed %v %q, enforced %v %q", u, p, o, v.Allowed, v.Reason, d.Allowed, d.Reason)
		}
		// Nothing the user may not see is named.
		for _, ow := range v.Owners {
			if !s.Visible(u, ow.Object) {
				t.Fatalf("%s %v %v: viewed owner of hidden %v", u, p, o, ow.Object)
			}
		}
		for _, g := range v.Grants {
			if !s.Visible(u, Role(g.Role)) {
				t.Fatalf("%s %v %v: viewed grant of hidden role %s", u, p, o, g.Role)
			}
		}
		for _, tl := range v.Tags {
			if !s.Visible(u, Tag(tl.Tag)) {
				t.Fatalf("%s %v %v: viewed hidden tag %s", u, p, o, tl.Tag)
			}
			for _, pl := range tl.Policies {
				if !s.Visible(u, Policy(pl.Policy)) {
					t.Fatalf("%s %v %v: viewed hidden policy %s", u, p, o, pl.Policy)
				}
			}
		}
		// (A grant's object may be a domain's hidden parent: the user's
		// roles, and so their grants, are visible to it.)
		if db := v.DecidedBy; db != nil && ((db.Tag != "" && (!s.Visible(u, Tag(db.Tag)) || !s.Visible(u, db.Object))) ||
			(db.Policy != "" && !s.Visible(u, Policy(db.Policy)))) {
			t.Fatalf("%s %v %v: viewed decider %+v names what the user may not see", u, p, o, db)
		}
		if r := v.Read; r != nil && r.FilterPolicy != "" && !s.Visible(u, Policy(r.FilterPolicy)) {
			t.Fatalf("%s %v %v: viewed filter of hidden policy %s", u, p, o, r.FilterPolicy)
		}
	} else if v.Reason != ReasonNotFound || v.Allowed || v.Owners != nil || v.Grants != nil || v.Tags != nil || v.DecidedBy != nil {
		t.Fatalf("%s %v %v: an object the user may not see is explained as %+v", u, p, o, v)
	}
}

// checkDecidedBy: what the explanation says decided is on its chain.
func checkDecidedBy(t *testing.T, e Explanation) {
	t.Helper()
	db := e.DecidedBy
	fail := func() { t.Fatalf("decidedBy %+v is not on the chain of\n%s", db, mustJSON(t, e)) }
	switch e.Reason {
	case ReasonMetalakeOwner, ReasonCatalogOwner, ReasonOwner:
		if db == nil || !slices.ContainsFunc(e.Owners, func(o OwnerLink) bool { return o.Object == db.Object && o.Owned }) {
			fail()
		}
	case ReasonDenied, ReasonGrant:
		cond := Deny
		if e.Allowed {
			cond = Allow
		}
		if db == nil || !slices.ContainsFunc(e.Grants, func(g GrantLink) bool {
			return g.Role == db.Role && g.Object == db.Object && g.Privilege == db.Privilege && g.Condition == cond
		}) {
			fail()
		}
	case ReasonTagPolicy:
		if db == nil {
			fail()
		}
		tl, pl, ok := policyLink(e, db.Tag, db.Policy)
		if !ok || tl.Source != db.Object || pl.Effect != EffectConfers || !slices.Contains(pl.Held, db.Role) {
			fail()
		}
	case ReasonNoUseCatalog, ReasonNoUseSchema:
		if db != nil && !slices.ContainsFunc(e.Grants, func(g GrantLink) bool {
			return g.Role == db.Role && g.Object == db.Object && g.Privilege == db.Privilege && g.Condition == Deny
		}) {
			fail()
		}
	default:
		if db != nil {
			fail()
		}
	}
}

// TestExplainFuzzSeedsReachEveryRule keeps the fuzz seeds meaningful: over
// their states, every rule of the decision decides some request.
func TestExplainFuzzSeedsReachEveryRule(t *testing.T) {
	seen := map[string]int{}
	for seed := range uint64(explainSeeds) {
		s := randomState(t, seed, 40+int(uint8(seed*37)))
		for _, u := range []string{admin, "u0", "u1", "u2", "ghost"} {
			for _, o := range allObjects() {
				for p := Privilege(1); p <= 19; p++ {
					seen[s.Authorize(u, p, o).Reason]++
				}
			}
		}
	}
	t.Logf("reasons: %v", seen)
	for _, r := range []string{ReasonMetalakeOwner, ReasonCatalogOwner, ReasonOwner, ReasonGrant, ReasonTagPolicy, ReasonDenied,
		ReasonNoGrant, ReasonNoUseCatalog, ReasonNoUseSchema, ReasonUnknownPrincipal, ReasonNotFound} {
		if seen[r] == 0 {
			t.Errorf("no seed state decides anything by %q", r)
		}
	}
}
