package catalog_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

var metalake = Object{ObjectMetalake, "acme"}

// domainBase is base plus: user steward holding role "steward" (MANAGE_DOMAIN
// and CREATE_TAG on the metalake), user viewer holding role "viewer"
// (USE_DOMAIN on the metalake), user dave with no domain privilege.
func domainBase(t *testing.T) *Snapshot {
	t.Helper()
	return catalogtest.Apply(t, base(t), admin,
		CreateUser{"steward"}, CreateUser{"viewer"}, CreateUser{"dave"},
		CreateRole{Name: "steward", Grants: []Grant{
			{metalake, PrivManageDomain, Allow}, {metalake, PrivCreateTag, Allow}}},
		CreateRole{Name: "viewer", Grants: []Grant{{metalake, PrivUseDomain, Allow}}},
		roles("steward", "steward"), roles("viewer", "viewer"),
	)
}

func newTag(name string) DomainTag { return DomainTag{Name: name, Create: true} }

func ruleOf(err error) string {
	var de *DomainError
	if errors.As(err, &de) {
		return de.Rule
	}
	return ""
}

func fmtRels(rels []DomainRelation) string {
	var out []string
	for _, r := range rels {
		if r.Source.Type == 0 {
			out = append(out, string(r.Type))
		} else {
			out = append(out, string(r.Type)+" "+r.Source.Name)
		}
	}
	return strings.Join(out, ", ")
}

// members formats DomainMembers as "name: relations" lines.
func members(t *testing.T, s *Snapshot, user, d string, q MemberQuery) []string {
	t.Helper()
	ms, err := s.DomainMembers(user, d, q)
	if err != nil {
		t.Fatalf("DomainMembers(%s, %s): %v", user, d, err)
	}
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Object.Name+": "+fmtRels(m.Relations))
	}
	return out
}

func domainsOf(t *testing.T, s *Snapshot, user, table string) []string {
	t.Helper()
	ds, err := s.DomainsOf(user, Table(table))
	if err != nil {
		t.Fatalf("DomainsOf(%s, %s): %v", user, table, err)
	}
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Domain+": "+fmtRels(d.Relations))
	}
	return out
}

func names(ds []DomainInfo) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func want(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

// TestDomainScenario is the domain design's usage scenario on the catalog.
func TestDomainScenario(t *testing.T) {
	s := domainBase(t)
	s = catalogtest.Apply(t, s, "steward",
		CreateDomain{Name: "Finance", BackingTag: newTag("finance")},
		CreateDomain{Name: "Trading", BackingTag: newTag("trading"), Parent: "Finance"},
		CreateDomain{Name: "Markets", BackingTag: newTag("markets")},
		SetDomainStatus{Name: "Finance", Status: DomainPublished},
		SetDomainStatus{Name: "Trading", Status: DomainPublished},
		SetDomainStatus{Name: "Markets", Status: DomainPublished},
	)
	// The table owner (admin) tags lake.fin.ledger trading.
	s = catalogtest.Apply(t, s, admin,
		CreateRole{Name: "tagger", Grants: []Grant{{Tag("trading"), PrivApplyTag, Allow}, {Tag("finance"), PrivApplyTag, Allow}}},
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "trading"}}})
	want(t, "Trading", members(t, s, admin, "Trading", MemberQuery{}), []string{"lake.fin.ledger: DIRECT"})
	want(t, "Finance", members(t, s, admin, "Finance", MemberQuery{}), []string{"lake.fin.ledger: VIA_SUBDOMAIN Trading"})
	// Tagging the schema makes every table in it a Finance member, one
	// created afterwards included.
	s = catalogtest.Apply(t, s, admin,
		AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{Name: "finance"}}},
		CreateTable{Name: "lake.fin.later", Columns: []ColumnDef{{Name: "a", Type: "INT"}}})
	want(t, "Finance after schema tag", members(t, s, admin, "Finance", MemberQuery{}), []string{
		"lake.fin.budget: INHERITED lake.fin",
		"lake.fin.later: INHERITED lake.fin",
		"lake.fin.ledger: INHERITED lake.fin, VIA_SUBDOMAIN Trading",
	})
	want(t, "domains of ledger", domainsOf(t, s, admin, "lake.fin.ledger"), []string{
		"Finance: INHERITED lake.fin, VIA_SUBDOMAIN Trading", "Trading: DIRECT"})
	// A USE_DOMAIN holder on Finance browses it and gets only the tables it
	// can see.
	s = catalogtest.Apply(t, s, admin,
		CreateRole{Name: "fin-browser", Grants: []Grant{
			{Domain("Finance"), PrivUseDomain, Allow}, {Table("lake.fin.budget"), PrivSelectTable, Allow}}},
		roles("alice", "fin-browser"))
	want(t, "alice browses Finance", members(t, s, "alice", "Finance", MemberQuery{}), []string{
		"lake.fin.budget: INHERITED lake.fin"})
	// Privileges on Finance apply to its subdomain Trading.
	if !s.Visible("alice", Domain("Trading")) || s.Visible("alice", Domain("Markets")) {
		t.Fatal("USE_DOMAIN on Finance: Trading visible, Markets not")
	}
	// Trading moves under Markets: its members list under Markets, nothing
	// retagged; alice loses Trading with the old parent.
	_, ev, err := Apply(s, SetDomainParent{Name: "Trading", Parent: "Markets"}, catalogtest.Meta(s, "steward"))
	if err != nil {
		t.Fatal(err)
	}
	if ev[0].Operation != "SetDomainParent" || ev[0].Detail != `parent "Finance" -> "Markets"` {
		t.Fatalf("move event = %+v", ev[0])
	}
	s = catalogtest.Apply(t, s, "steward", SetDomainParent{Name: "Trading", Parent: "Markets"})
	want(t, "Markets", members(t, s, admin, "Markets", MemberQuery{}), []string{"lake.fin.ledger: VIA_SUBDOMAIN Trading"})
	want(t, "Finance after move", members(t, s, admin, "Finance", MemberQuery{}), []string{
		"lake.fin.budget: INHERITED lake.fin", "lake.fin.later: INHERITED lake.fin", "lake.fin.ledger: INHERITED lake.fin"})
	if s.Visible("alice", Domain("Trading")) {
		t.Fatal("after the move, Finance's USE_DOMAIN holders lose Trading")
	}
	// A table moved between schemas leaves the inherited membership.
	s = catalogtest.Apply(t, s, admin, RenameObject{Object: Table("lake.fin.later"), NewName: "lake.hr.later"})
	want(t, "Finance after table move", members(t, s, admin, "Finance", MemberQuery{}), []string{
		"lake.fin.budget: INHERITED lake.fin", "lake.fin.ledger: INHERITED lake.fin"})
	if err := s.CheckDomainInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestDomainRules covers C1–C6 and the other rejections with their rule and
// sentinel.
func TestDomainRules(t *testing.T) {
	setup := func(t *testing.T) *Snapshot {
		return catalogtest.Apply(t, domainBase(t), "steward",
			CreateDomain{Name: "A", BackingTag: newTag("a")},
			CreateDomain{Name: "B", BackingTag: newTag("b")},
			CreateDomain{Name: "A1", BackingTag: newTag("a1"), Parent: "A"},
			CreateDomain{Name: "P", BackingTag: newTag("p")},
			SetDomainStatus{Name: "P", Status: DomainPublished},
			CreateTag{Name: "dept", AllowedValues: []string{"fin", "hr"}},
			CreateTag{Name: "flag", AllowedValues: []string{}},
			CreateTag{Name: "free"},
			CreateDomain{Name: "Dfin", BackingTag: DomainTag{Name: "dept", Value: "fin"}},
		)
	}
	cases := []struct {
		name     string
		setup    []Command
		cmd      Command
		sentinel error
		rule     string
	}{
		{"C1 own parent", nil, SetDomainParent{Name: "A", Parent: "A"}, ErrInvalidArgument, RuleC1},
		{"C2 parent is a subdomain (attach)", nil, SetDomainParent{Name: "B", Parent: "A1"}, ErrInvalidArgument, RuleC2},
		{"C2 parent is a subdomain (create)", nil, CreateDomain{Name: "X", BackingTag: newTag("x"), Parent: "A1"}, ErrInvalidArgument, RuleC2},
		{"C3 child has subdomains", nil, SetDomainParent{Name: "A", Parent: "B"}, ErrInvalidArgument, RuleC3},
		{"C4 parent of another metalake", nil, SetDomainParent{Name: "B", Parent: "other-tenant-domain"}, ErrNotFound, RuleNoSuchDomain},
		{"C6 publish under a draft parent", nil, SetDomainStatus{Name: "A1", Status: DomainPublished}, ErrInvalidArgument, RuleC6},
		{"C6 move a published domain under a draft", []Command{CreateDomain{Name: "Q", BackingTag: newTag("q")},
			SetDomainStatus{Name: "Q", Status: DomainPublished}}, SetDomainParent{Name: "Q", Parent: "A"}, ErrInvalidArgument, RuleC6},
		{"C6 unpublish with a published subdomain", []Command{SetDomainParent{Name: "B", Parent: "P"},
			SetDomainStatus{Name: "B", Status: DomainPublished}}, SetDomainStatus{Name: "P", Status: DomainDraft}, ErrInvalidArgument, RuleC6},
		{"bad status", nil, SetDomainStatus{Name: "A", Status: "GONE"}, ErrInvalidArgument, ""},
		{"delete with subdomains", nil, DropDomain{Name: "A"}, ErrNonEmpty, RuleNonEmptyDomain},
		{"same name", nil, CreateDomain{Name: "A1", BackingTag: newTag("zz")}, ErrAlreadyExists, RuleDomainAlreadyExists},
		{"rename to an existing name", nil, AlterDomain{Name: "A", Updates: []DomainUpdate{{Type: "rename", NewName: "B"}}}, ErrAlreadyExists, RuleDomainAlreadyExists},
		{"created tag exists", nil, CreateDomain{Name: "X", BackingTag: newTag("free")}, ErrAlreadyExists, RuleTagAlreadyExists},
		{"missing tag", nil, CreateDomain{Name: "X", BackingTag: DomainTag{Name: "nope"}}, ErrNotFound, RuleNoSuchTag},
		{"no backing tag", nil, CreateDomain{Name: "X"}, ErrInvalidArgument, ""},
		{"create with a value", nil, CreateDomain{Name: "X", BackingTag: DomainTag{Name: "new", Value: "v", Create: true}}, ErrInvalidArgument, ""},
		{"disallowed value", nil, CreateDomain{Name: "X", BackingTag: DomainTag{Name: "dept", Value: "legal"}}, ErrInvalidArgument, ""},
		{"value-restricted tag without value", nil, CreateDomain{Name: "X", BackingTag: DomainTag{Name: "dept"}}, ErrInvalidArgument, ""},
		{"no-value tag with a value", nil, CreateDomain{Name: "X", BackingTag: DomainTag{Name: "flag", Value: "v"}}, ErrInvalidArgument, ""},
		{"shared valueless binding", nil, CreateDomain{Name: "X", BackingTag: DomainTag{Name: "a"}}, ErrAlreadyExists, RuleBackingTagAlreadyBound},
		{"same value twice", nil, CreateDomain{Name: "X", BackingTag: DomainTag{Name: "dept", Value: "fin"}}, ErrAlreadyExists, RuleBackingTagAlreadyBound},
		{"valueless beside a value", []Command{CreateDomain{Name: "Y", BackingTag: DomainTag{Name: "free", Value: "v"}}},
			CreateDomain{Name: "X", BackingTag: DomainTag{Name: "free"}}, ErrAlreadyExists, RuleBackingTagAlreadyBound},
		{"set backing tag conflict", nil, SetDomainBackingTag{Name: "B", BackingTag: &DomainTag{Name: "a"}}, ErrAlreadyExists, RuleBackingTagAlreadyBound},
		{"set backing tag create", nil, SetDomainBackingTag{Name: "B", BackingTag: &DomainTag{Name: "n", Create: true}}, ErrInvalidArgument, ""},
		{"set backing tag missing", nil, SetDomainBackingTag{Name: "B", BackingTag: &DomainTag{Name: "nope"}}, ErrNotFound, RuleNoSuchTag},
		{"set backing tag bad value", nil, SetDomainBackingTag{Name: "B", BackingTag: &DomainTag{Name: "dept", Value: "x"}}, ErrInvalidArgument, ""},
		{"missing domain", nil, DropDomain{Name: "nope"}, ErrNotFound, RuleNoSuchDomain},
		{"missing parent", nil, CreateDomain{Name: "X", BackingTag: newTag("x"), Parent: "nope"}, ErrNotFound, RuleNoSuchDomain},
		{"bad name", nil, CreateDomain{Name: "", BackingTag: newTag("x")}, ErrInvalidName, ""},
		{"unknown update", nil, AlterDomain{Name: "A", Updates: []DomainUpdate{{Type: "explode"}}}, ErrInvalidArgument, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := catalogtest.Apply(t, setup(t), "steward", tc.setup...)
			n, ev, err := Apply(s, tc.cmd, catalogtest.Meta(s, "steward"))
			if !errors.Is(err, tc.sentinel) || ruleOf(err) != tc.rule {
				t.Fatalf("err = %v (rule %q), want %v rule %q", err, ruleOf(err), tc.sentinel, tc.rule)
			}
			if tc.rule != "" && !strings.Contains(err.Error(), tc.rule+": ") {
				t.Fatalf("message %q does not name the rule", err)
			}
			if n != s || len(ev) != 1 || ev[0].Outcome != Failure || ev[0].Operation != tc.cmd.Op() {
				t.Fatalf("rejection: %v", ev)
			}
			if err := s.CheckDomainInvariants(); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The no-ops: same parent, top-level detach, same status, same tag.
	s := setup(t)
	for _, c := range []Command{SetDomainParent{Name: "A1", Parent: "A"}, DetachDomain{Name: "B"},
		SetDomainStatus{Name: "A", Status: DomainDraft}, SetDomainBackingTag{Name: "Dfin", BackingTag: &DomainTag{Name: "dept", Value: "fin"}}} {
		n := catalogtest.Apply(t, s, "steward", c)
		a, _ := s.Domain(c.Target().Name)
		b, _ := n.Domain(c.Target().Name)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s is not a no-op: %+v → %+v", c.Op(), a, b)
		}
	}
	// C5: attaching a domain with a parent moves it (one edge).
	s = catalogtest.Apply(t, s, "steward", SetDomainParent{Name: "A1", Parent: "B"})
	if a, _ := s.Subdomains("A"); len(a) != 0 {
		t.Fatalf("A keeps %v", a)
	}
	if b, _ := s.Subdomains("B"); !slices.Equal(b, []string{"A1"}) {
		t.Fatalf("B has %v", b)
	}
	// Detach, then delete removes the edge; tags stay.
	s = catalogtest.Apply(t, s, "steward", DropDomain{Name: "A1"}, DropDomain{Name: "A"})
	if _, ok := s.Tag("a1"); !ok {
		t.Fatal("dropping a domain dropped its tag")
	}
	if b, _ := s.Subdomains("B"); len(b) != 0 {
		t.Fatalf("B has %v after its subdomain was dropped", b)
	}
	// A dropped domain frees its tag binding.
	s = catalogtest.Apply(t, s, "steward", CreateDomain{Name: "A again", BackingTag: DomainTag{Name: "a"}})
	if err := s.CheckDomainInvariants(); err != nil {
		t.Fatal(err)
	}
}

func TestDomainPermissions(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), admin, CreateTag{Name: "owned"}, CreateTag{Name: "stewards"})
	s = catalogtest.Apply(t, s, admin, SetOwner{Object: Tag("stewards"), Owner: Owner{OwnerUser, "steward"}})
	// Without MANAGE_DOMAIN on the metalake.
	mustFail(t, s, "viewer", CreateDomain{Name: "X", BackingTag: newTag("x")}, ErrForbidden)
	// An existing tag needs ownership of it or the metalake.
	// (a tag the caller may not view is missing to it).
	mustFail(t, s, "steward", CreateDomain{Name: "X", BackingTag: DomainTag{Name: "owned"}}, ErrNotFound)
	s = catalogtest.Apply(t, s, admin, CreateRole{Name: "view-owned", Grants: []Grant{{Tag("owned"), PrivViewTag, Allow}}}, roles("steward", "view-owned"))
	mustFail(t, s, "steward", CreateDomain{Name: "X", BackingTag: DomainTag{Name: "owned"}}, ErrForbidden)
	s = catalogtest.Apply(t, s, "steward", CreateDomain{Name: "S", BackingTag: DomainTag{Name: "stewards"}})
	// New tag needs CREATE_TAG.
	s = catalogtest.Apply(t, s, admin, CreateRole{Name: "md", Grants: []Grant{{metalake, PrivManageDomain, Allow}}}, roles("carol", "md"))
	mustFail(t, s, "carol", CreateDomain{Name: "X", BackingTag: newTag("x")}, ErrForbidden)
	if !s.Authorize("carol", PrivUseDomain, metalake).Allowed || s.Authorize("carol", PrivCreateTag, metalake).Allowed {
		t.Fatal("MANAGE_DOMAIN on the metalake implies USE_DOMAIN there")
	}
	// The created tag is owned by the caller and takes no value.
	s = catalogtest.Apply(t, s, "steward", CreateDomain{Name: "T", BackingTag: newTag("t")})
	if tg, _ := s.Tag("t"); tg.Owner != (Owner{OwnerUser, "steward"}) || tg.AllowedValues == nil || len(tg.AllowedValues) != 0 {
		t.Fatalf("created tag = %+v", tg)
	}
	// Without MANAGE_DOMAIN on the domain: a DRAFT domain is invisible (404);
	// a published one visible with USE_DOMAIN is 403.
	mustFail(t, s, "dave", SetDomainStatus{Name: "T", Status: DomainPublished}, ErrNotFound)
	mustFail(t, s, "viewer", SetDomainStatus{Name: "T", Status: DomainPublished}, ErrNotFound)
	s = catalogtest.Apply(t, s, "steward", SetDomainStatus{Name: "T", Status: DomainPublished})
	mustFail(t, s, "viewer", DropDomain{Name: "T"}, ErrForbidden)
	// A subdomain also needs MANAGE_DOMAIN on the parent.
	s = catalogtest.Apply(t, s, admin, CreateRole{Name: "md-deny-T", Grants: []Grant{{Domain("T"), PrivManageDomain, Deny}}},
		CreateRole{Name: "ct", Grants: []Grant{{metalake, PrivCreateTag, Allow}}}, roles("carol", "md-deny-T", "ct", "viewer"))
	mustFail(t, s, "carol", CreateDomain{Name: "X", BackingTag: newTag("x"), Parent: "T"}, ErrForbidden)
	catalogtest.Apply(t, s, "carol", CreateDomain{Name: "X", BackingTag: newTag("x")})
	// Backing tag replacement needs ownership of the new tag; removal does not.
	mustFail(t, s, "steward", SetDomainBackingTag{Name: "T", BackingTag: &DomainTag{Name: "owned"}}, ErrForbidden)
	s = catalogtest.Apply(t, s, "steward", SetDomainBackingTag{Name: "T"})
	if d, _ := s.Domain("T"); d.BackingTag != nil {
		t.Fatalf("backing tag not removed: %+v", d)
	}
	// Privileges bind to the metalake and domains only.
	mustFail(t, s, admin, GrantPrivileges{Role: "md", Object: Table("lake.fin.ledger"), Privileges: pc(PrivUseDomain, Allow)}, ErrInvalidArgument)
	mustFail(t, s, admin, GrantPrivileges{Role: "md", Object: Domain("T"), Privileges: pc(PrivSelectTable, Allow)}, ErrInvalidArgument)
	// DOMAIN is not taggable.
	mustFail(t, s, admin, AssociateTagsV2{Object: Domain("T"), TagsToAdd: []TagValue{{Name: "owned"}}}, ErrInvalidArgument)
	if !PrivManageDomain.CanBindTo(ObjectDomain) || !PrivUseDomain.CanBindTo(ObjectMetalake) || PrivUseDomain.CanBindTo(ObjectCatalog) {
		t.Fatal("binding table")
	}
}

// TestDomainDenyPrecedence: a DENY on the metalake, the parent or the domain
// beats an ALLOW on any of them; ownership overrides it for the owner only.
func TestDomainDenyPrecedence(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), "steward",
		CreateDomain{Name: "P", BackingTag: newTag("p")},
		CreateDomain{Name: "C", BackingTag: newTag("c"), Parent: "P"},
		SetDomainStatus{Name: "P", Status: DomainPublished}, SetDomainStatus{Name: "C", Status: DomainPublished})
	type g = Grant
	cases := []struct {
		name   string
		grants []Grant
		priv   Privilege
		on     string
		allow  bool
	}{
		{"allow on parent reaches child", []g{{Domain("P"), PrivManageDomain, Allow}}, PrivManageDomain, "C", true},
		{"deny on parent beats allow on child", []g{{Domain("P"), PrivManageDomain, Deny}, {Domain("C"), PrivManageDomain, Allow}}, PrivManageDomain, "C", false},
		{"deny on child beats allow on parent", []g{{Domain("P"), PrivManageDomain, Allow}, {Domain("C"), PrivManageDomain, Deny}}, PrivManageDomain, "C", false},
		{"deny on metalake beats allow on child", []g{{metalake, PrivUseDomain, Deny}, {Domain("C"), PrivUseDomain, Allow}}, PrivUseDomain, "C", false},
		{"deny on child beats allow on metalake", []g{{metalake, PrivUseDomain, Allow}, {Domain("C"), PrivUseDomain, Deny}}, PrivUseDomain, "C", false},
		{"deny on child does not reach parent", []g{{metalake, PrivUseDomain, Allow}, {Domain("C"), PrivUseDomain, Deny}}, PrivUseDomain, "P", true},
		{"manage implies use", []g{{Domain("C"), PrivManageDomain, Allow}}, PrivUseDomain, "C", true},
		{"deny use beats manage", []g{{Domain("C"), PrivManageDomain, Allow}, {Domain("P"), PrivUseDomain, Deny}}, PrivUseDomain, "C", false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// dave holds the ALLOWs through one role and the DENYs through another.
			var allowG, denyG []Grant
			for _, gr := range tc.grants {
				if gr.Condition == Deny {
					denyG = append(denyG, gr)
				} else {
					allowG = append(allowG, gr)
				}
			}
			r1, r2 := fmt.Sprint("a", i), fmt.Sprint("d", i)
			s := catalogtest.Apply(t, s, admin, CreateRole{Name: r1, Grants: allowG}, CreateRole{Name: r2, Grants: denyG}, roles("dave", r1, r2))
			if d := s.Authorize("dave", tc.priv, Domain(tc.on)); d.Allowed != tc.allow {
				t.Fatalf("Authorize = %+v, want %v", d, tc.allow)
			}
			// Ownership of the parent overrides the DENY for the owner only.
			s = catalogtest.Apply(t, s, admin, SetOwner{Object: Domain("P"), Owner: Owner{OwnerUser, "dave"}})
			if !s.Authorize("dave", tc.priv, Domain(tc.on)).Allowed {
				t.Fatal("the parent's owner is denied")
			}
			if s.Authorize("viewer", PrivManageDomain, Domain(tc.on)).Allowed {
				t.Fatal("ownership leaked to another user")
			}
		})
	}
}

// TestDomainOwnerThroughParent: the parent's owner sets the child's owner
// and grants on it; after a move, the old parent's owner loses that.
func TestDomainOwnerThroughParent(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), "steward",
		CreateDomain{Name: "P", BackingTag: newTag("p")},
		CreateDomain{Name: "Q", BackingTag: newTag("q")},
		CreateDomain{Name: "C", BackingTag: newTag("c"), Parent: "P"})
	s = catalogtest.Apply(t, s, admin, SetOwner{Object: Domain("P"), Owner: Owner{OwnerUser, "bob"}})
	mustFail(t, s, "carol", SetOwner{Object: Domain("C"), Owner: Owner{OwnerUser, "carol"}}, ErrNotFound)
	s = catalogtest.Apply(t, s, "bob",
		SetOwner{Object: Domain("C"), Owner: Owner{OwnerUser, "carol"}},
		GrantPrivileges{Role: "reader", Object: Domain("C"), Privileges: pc(PrivUseDomain, Allow)})
	if o, _ := s.Owner(Domain("C")); o != (Owner{OwnerUser, "carol"}) {
		t.Fatalf("owner = %v", o)
	}
	if r, _ := s.Role("reader"); len(r.Grants) != 1 || r.Grants[0].Object != Domain("C") {
		t.Fatalf("reader grants = %+v", r.Grants)
	}
	s = catalogtest.Apply(t, s, "steward", SetDomainParent{Name: "C", Parent: "Q"})
	mustFail(t, s, "bob", SetOwner{Object: Domain("C"), Owner: Owner{OwnerUser, "bob"}}, ErrNotFound)
	// Dropping the domain drops its grants.
	s = catalogtest.Apply(t, s, "steward", DropDomain{Name: "C"})
	if r, _ := s.Role("reader"); len(r.Grants) != 0 {
		t.Fatalf("reader grants after drop = %+v", r.Grants)
	}
}

// TestDomainDraftInvisible: a DRAFT domain is seen only by its owner and
// MANAGE_DOMAIN holders (on it, its parent or the metalake), on every read.
func TestDomainDraftInvisible(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), "steward",
		CreateDomain{Name: "Pub", BackingTag: newTag("pub")},
		SetDomainStatus{Name: "Pub", Status: DomainPublished},
		CreateDomain{Name: "Draft", BackingTag: newTag("draft")},
		CreateDomain{Name: "DraftSub", BackingTag: newTag("draftsub"), Parent: "Pub"})
	s = catalogtest.Apply(t, s, admin,
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "draft"}, {Name: "draftsub"}, {Name: "pub"}}},
		CreateRole{Name: "sub-manager", Grants: []Grant{{Domain("DraftSub"), PrivManageDomain, Allow}}},
		CreateRole{Name: "pub-manager", Grants: []Grant{{Domain("Pub"), PrivManageDomain, Allow}}},
		CreateRole{Name: "read-all", Grants: []Grant{{Catalog("lake"), PrivSelectTable, Allow}, {Catalog("lake"), PrivUseCatalog, Allow}, {Catalog("lake"), PrivUseSchema, Allow}}},
		CreateUser{"subm"}, CreateUser{"pubm"},
		roles("subm", "sub-manager", "read-all", "viewer"), roles("pubm", "pub-manager", "read-all"), roles("viewer", "read-all"))
	for _, tc := range []struct {
		user    string
		domains []string
		ledger  []string
		pub     []string
	}{
		{admin, []string{"Draft", "DraftSub", "Pub"}, []string{"Draft: DIRECT", "DraftSub: DIRECT", "Pub: DIRECT, VIA_SUBDOMAIN DraftSub"},
			[]string{"lake.fin.ledger: DIRECT, VIA_SUBDOMAIN DraftSub"}},
		{"steward", []string{"Draft", "DraftSub", "Pub"}, nil, nil}, // steward cannot see the table
		{"viewer", []string{"Pub"}, []string{"Pub: DIRECT"}, []string{"lake.fin.ledger: DIRECT"}},
		{"subm", []string{"DraftSub", "Pub"}, []string{"DraftSub: DIRECT", "Pub: DIRECT, VIA_SUBDOMAIN DraftSub"},
			[]string{"lake.fin.ledger: DIRECT, VIA_SUBDOMAIN DraftSub"}},
		{"pubm", []string{"DraftSub", "Pub"}, []string{"DraftSub: DIRECT", "Pub: DIRECT, VIA_SUBDOMAIN DraftSub"},
			[]string{"lake.fin.ledger: DIRECT, VIA_SUBDOMAIN DraftSub"}},
	} {
		t.Run(tc.user, func(t *testing.T) {
			want(t, "list", names(s.ViewDomains(tc.user)), tc.domains)
			for _, n := range []string{"Draft", "DraftSub", "Pub"} {
				_, err := s.ViewDomain(tc.user, n)
				_, merr := s.DomainMembers(tc.user, n, MemberQuery{})
				vis := slices.Contains(tc.domains, n)
				if vis != (err == nil) || vis != (merr == nil) || vis != s.Visible(tc.user, Domain(n)) {
					t.Fatalf("%s: get %v, members %v, want visible %v", n, err, merr, vis)
				}
				if !vis && (!errors.Is(err, ErrNotFound) || ruleOf(err) != RuleNoSuchDomain || !errors.Is(merr, ErrNotFound)) {
					t.Fatalf("%s: invisible must be NoSuchDomain: %v %v", n, err, merr)
				}
			}
			if tc.ledger != nil {
				want(t, "domains of ledger", domainsOf(t, s, tc.user, "lake.fin.ledger"), tc.ledger)
				want(t, "members of Pub", members(t, s, tc.user, "Pub", MemberQuery{}), tc.pub)
			} else if _, err := s.DomainsOf(tc.user, Table("lake.fin.ledger")); !errors.Is(err, ErrNotFound) {
				t.Fatalf("invisible table: %v", err)
			}
			subs, _ := s.ViewSubdomains(tc.user, "Pub")
			want(t, "subdomains of Pub", names(subs), map[bool][]string{true: {"DraftSub"}, false: {}}[slices.Contains(tc.domains, "DraftSub")])
		})
	}
	// The parent is returned by name even to a caller who cannot see it.
	s = catalogtest.Apply(t, s, admin, CreateRole{Name: "only-sub", Grants: []Grant{{Domain("DraftSub"), PrivManageDomain, Allow}}},
		SetOwner{Object: Domain("Pub"), Owner: Owner{OwnerUser, "steward"}}, roles("carol", "only-sub"))
	s = catalogtest.Apply(t, s, "steward", SetDomainStatus{Name: "Pub", Status: DomainDraft})
	if d, err := s.ViewDomain("carol", "DraftSub"); err != nil || d.Parent != "Pub" || s.Visible("carol", Domain("Pub")) {
		t.Fatalf("carol: %+v %v", d, err)
	}
	if _, err := s.DomainsOf(admin, Schema("lake.fin")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("domains of a schema: %v", err)
	}
}

// TestDomainScopes: domains= selection, filters and the all-ignored case.
func TestDomainScopes(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), "steward",
		CreateDomain{Name: "F", BackingTag: newTag("f")},
		CreateDomain{Name: "F/a", BackingTag: newTag("fa"), Parent: "F"},
		CreateDomain{Name: "F/b", BackingTag: newTag("fb"), Parent: "F"},
		CreateDomain{Name: "G", BackingTag: newTag("g")})
	s = catalogtest.Apply(t, s, admin,
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "f"}}},
		AssociateTagsV2{Object: Table("lake.fin.budget"), TagsToAdd: []TagValue{{Name: "fa"}}},
		AssociateTagsV2{Object: Schema("lake.hr"), TagsToAdd: []TagValue{{Name: "fb"}, {Name: "g"}}})
	all := []string{"lake.fin.budget: VIA_SUBDOMAIN F/a", "lake.fin.ledger: DIRECT", "lake.hr.people: VIA_SUBDOMAIN F/b"}
	for _, tc := range []struct {
		q    MemberQuery
		want []string
	}{
		{MemberQuery{}, all},
		{MemberQuery{Scopes: []string{"F", "F/a", "F/b"}}, all},
		{MemberQuery{Scopes: []string{"F"}}, all}, // the domain itself: its whole scope
		{MemberQuery{Scopes: []string{"F", "nope"}}, all},
		{MemberQuery{Scopes: []string{"F/a", "nope"}}, all[:1]},
		{MemberQuery{Scopes: []string{"G", "nope"}}, []string{}}, // all ignored: empty, never everything
		{MemberQuery{Types: []ObjectType{ObjectTable}, NameContains: "LEDG"}, all[1:2]},
		{MemberQuery{NameContains: "LAKE.HR"}, all[2:]},
		{MemberQuery{Types: []ObjectType{ObjectSchema}}, []string{}},
	} {
		want(t, fmt.Sprintf("%+v", tc.q), members(t, s, admin, "F", tc.q), tc.want)
	}
	// A subdomain's scope is its own members; the parent is not selectable.
	want(t, "F/b", members(t, s, admin, "F/b", MemberQuery{}), []string{"lake.hr.people: INHERITED lake.hr"})
	want(t, "F/b scoped to F", members(t, s, admin, "F/b", MemberQuery{Scopes: []string{"F"}}), []string{})
	// A subdomain the caller cannot see is not selectable and not rolled up.
	s = catalogtest.Apply(t, s, "steward", SetDomainStatus{Name: "F", Status: DomainPublished}, SetDomainStatus{Name: "F/a", Status: DomainPublished})
	s = catalogtest.Apply(t, s, admin, CreateRole{Name: "all", Grants: []Grant{{Catalog("lake"), PrivSelectTable, Allow}}}, roles("viewer", "use", "all"))
	want(t, "viewer", members(t, s, "viewer", "F", MemberQuery{}), all[:2])
	want(t, "viewer F/b", members(t, s, "viewer", "F", MemberQuery{Scopes: []string{"F/b"}}), []string{})
}

// TestDomainValueBacked: value bindings match the effective assignment,
// nearest level first.
func TestDomainValueBacked(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), admin, CreateTag{Name: "dept", AllowedValues: []string{"finance", "hr"}},
		CreateSchema{Name: "lake.ops"},
		CreateTable{Name: "lake.ops.runs", Columns: []ColumnDef{{Name: "a", Type: "INT"}}})
	s = catalogtest.Apply(t, s, admin,
		CreateDomain{Name: "Fin", BackingTag: DomainTag{Name: "dept", Value: "finance"}},
		CreateDomain{Name: "HR", BackingTag: DomainTag{Name: "dept", Value: "hr"}},
		AssociateTagsV2{Object: Catalog("lake"), TagsToAdd: []TagValue{{Name: "dept", Value: "hr"}}},
		AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{Name: "dept", Value: "finance"}}},
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "dept", Value: "hr"}}})
	want(t, "Fin", members(t, s, admin, "Fin", MemberQuery{}), []string{"lake.fin.budget: INHERITED lake.fin"})
	want(t, "HR", members(t, s, admin, "HR", MemberQuery{}), []string{
		"lake.fin.ledger: DIRECT", "lake.hr.people: INHERITED lake", "lake.ops.runs: INHERITED lake"})
	want(t, "ledger", domainsOf(t, s, admin, "lake.fin.ledger"), []string{"HR: DIRECT"})
	// A table carrying both values is in both.
	s = catalogtest.Apply(t, s, admin, AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "dept", Value: "finance"}}})
	want(t, "ledger with both", domainsOf(t, s, admin, "lake.fin.ledger"), []string{"Fin: DIRECT", "HR: DIRECT"})
	want(t, "Fin with both", members(t, s, admin, "Fin", MemberQuery{}), []string{"lake.fin.budget: INHERITED lake.fin", "lake.fin.ledger: DIRECT"})
	// A schema's own value shadows the catalog's for every table under it.
	s = catalogtest.Apply(t, s, admin, AssociateTagsV2{Object: Schema("lake.ops"), TagsToAdd: []TagValue{{Name: "dept", Value: "finance"}}})
	want(t, "HR after ops override", members(t, s, admin, "HR", MemberQuery{}), []string{"lake.fin.ledger: DIRECT", "lake.hr.people: INHERITED lake"})
	// Different tags accumulate; a valueless binding matches every value.
	s = catalogtest.Apply(t, s, admin, CreateTag{Name: "sales"}, CreateDomain{Name: "Sales", BackingTag: DomainTag{Name: "sales"}},
		AssociateTagsV2{Object: Table("lake.hr.people"), TagsToAdd: []TagValue{{Name: "sales", Value: "any"}}})
	want(t, "people", domainsOf(t, s, admin, "lake.hr.people"), []string{"HR: INHERITED lake", "Sales: DIRECT"})
	// Columns are never members, and a column's tag makes nothing a member.
	s = catalogtest.Apply(t, s, admin, AssociateTagsV2{Object: Column("lake.ops.runs.a"), TagsToAdd: []TagValue{{Name: "sales"}}})
	want(t, "Sales", members(t, s, admin, "Sales", MemberQuery{}), []string{"lake.hr.people: DIRECT"})
}

// TestDomainTagDropRename: the binding follows the tag's id.
func TestDomainTagDropRename(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), admin, CreateTag{Name: "fin"},
		CreateDomain{Name: "Finance", BackingTag: DomainTag{Name: "fin"}},
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "fin"}}},
		AlterTag{Name: "fin", Updates: []TagUpdate{{Type: "rename", NewName: "finance"}}})
	if d, _ := s.Domain("Finance"); d.BackingTag == nil || d.BackingTag.Name != "finance" {
		t.Fatalf("after rename: %+v", d.BackingTag)
	}
	want(t, "after rename", members(t, s, admin, "Finance", MemberQuery{}), []string{"lake.fin.ledger: DIRECT"})
	// Renaming or moving the domain never renames the tag.
	s = catalogtest.Apply(t, s, admin, AlterDomain{Name: "Finance", Updates: []DomainUpdate{{Type: "rename", NewName: "Money"},
		{Type: "updateComment", NewComment: "c"}, {Type: "setProperty", Property: "k", Value: "v"}}})
	if _, ok := s.Tag("finance"); !ok {
		t.Fatal("domain rename renamed the tag")
	}
	if d, _ := s.Domain("Money"); d.Comment != "c" || d.Properties["k"] != "v" {
		t.Fatalf("alter: %+v", d)
	}
	n, ev, err := Apply(s, DropTag{Name: "finance"}, catalogtest.Meta(s, admin))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ev, func(e Event) bool { return e.Operation == "SetDomainBackingTag" && e.Target == Domain("Money") }) {
		t.Fatalf("no unbinding event: %+v", ev)
	}
	s = n
	if d, _ := s.Domain("Money"); d.BackingTag != nil {
		t.Fatalf("after drop: %+v", d.BackingTag)
	}
	want(t, "after drop", members(t, s, admin, "Money", MemberQuery{}), []string{})
	// Recreating a tag of that name does not restore the binding.
	s = catalogtest.Apply(t, s, admin, CreateTag{Name: "finance"},
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "finance"}}})
	want(t, "after recreate", members(t, s, admin, "Money", MemberQuery{}), []string{})
	// Replacing the backing tag: assets carrying only the old one drop out.
	s = catalogtest.Apply(t, s, admin, CreateTag{Name: "other"},
		AssociateTagsV2{Object: Table("lake.fin.budget"), TagsToAdd: []TagValue{{Name: "other"}}},
		SetDomainBackingTag{Name: "Money", BackingTag: &DomainTag{Name: "other"}})
	want(t, "after replace", members(t, s, admin, "Money", MemberQuery{}), []string{"lake.fin.budget: DIRECT"})
}

// TestDomainEvents: every lifecycle command's event, with parents on move
// and detach.
func TestDomainEvents(t *testing.T) {
	s := domainBase(t)
	steps := []struct {
		cmd    Command
		op     string
		detail string
		extra  []string
	}{
		{CreateDomain{Name: "P", BackingTag: newTag("p")}, "CreateDomain", "", []string{"CreateTag"}},
		{CreateDomain{Name: "Q", BackingTag: newTag("q")}, "CreateDomain", "", []string{"CreateTag"}},
		{CreateDomain{Name: "C", BackingTag: newTag("c"), Parent: "P"}, "CreateDomain", `parent "P"`, []string{"CreateTag"}},
		{SetDomainParent{Name: "C", Parent: "Q"}, "SetDomainParent", `parent "P" -> "Q"`, nil},
		{DetachDomain{Name: "C"}, "DetachDomain", `parent "Q" -> (none)`, nil},
		{SetDomainParent{Name: "C", Parent: "P"}, "SetDomainParent", `parent (none) -> "P"`, nil},
		{SetDomainStatus{Name: "P", Status: DomainPublished}, "PublishDomain", "", nil},
		{SetDomainStatus{Name: "P", Status: DomainDraft}, "UnpublishDomain", "", nil},
		{AlterDomain{Name: "Q", Updates: []DomainUpdate{{Type: "updateComment", NewComment: "x"}}}, "AlterDomain", "", nil},
		{SetDomainBackingTag{Name: "Q", BackingTag: &DomainTag{Name: "q"}}, "SetDomainBackingTag", "", nil},
		{SetDomainBackingTag{Name: "Q"}, "SetDomainBackingTag", `backing tag "q" -> (none)`, nil},
		{DropDomain{Name: "C"}, "DropDomain", `parent "P" -> (none)`, nil},
	}
	for _, st := range steps {
		n, ev, err := Apply(s, st.cmd, catalogtest.Meta(s, "steward"))
		if err != nil {
			t.Fatalf("%s: %v", st.op, err)
		}
		if ev[0].Operation != st.op || ev[0].Detail != st.detail || ev[0].Target != st.cmd.Target() || ev[0].Outcome != Success {
			t.Fatalf("%s: event %+v", st.op, ev[0])
		}
		var extra []string
		for _, e := range ev[1:] {
			extra = append(extra, e.Operation)
		}
		if !slices.Equal(extra, st.extra) {
			t.Fatalf("%s: extra events %v", st.op, extra)
		}
		s = n
	}
	_, ev, _ := Apply(s, DropDomain{Name: "P"}, catalogtest.Meta(s, "viewer"))
	if len(ev) != 1 || ev[0].Outcome != Failure || ev[0].Operation != "DropDomain" {
		t.Fatalf("failure event: %+v", ev)
	}
}

// TestDomainSerializedRaces interleaves publish, unpublish, move, detach and
// subdomain creation from several actors; every command is validated
// against the state at its log position, so C1–C6 and status consistency
// hold after every applied command.
func TestDomainSerializedRaces(t *testing.T) {
	s := domainBase(t)
	actors := []string{"steward", admin, "s2", "s3"}
	s = catalogtest.Apply(t, s, admin, CreateUser{"s2"}, CreateUser{"s3"}, roles("s2", "steward"), roles("s3", "steward"))
	r := rand.New(rand.NewPCG(8, 8))
	names := []string{"d0", "d1", "d2", "d3", "d4", "d5"}
	pick := func() string { return names[r.IntN(len(names))] }
	applied, rejected := 0, 0
	for i := range 4000 {
		var c Command
		switch r.IntN(6) {
		case 0:
			c = SetDomainStatus{Name: pick(), Status: DomainPublished}
		case 1:
			c = SetDomainStatus{Name: pick(), Status: DomainDraft}
		case 2:
			c = SetDomainParent{Name: pick(), Parent: pick()}
		case 3:
			c = DetachDomain{Name: pick()}
		case 4:
			n := pick()
			c = CreateDomain{Name: n, BackingTag: DomainTag{Name: "t-" + n + fmt.Sprint(i), Create: true}, Parent: []string{"", pick()}[r.IntN(2)]}
		default:
			c = DropDomain{Name: pick()}
		}
		n, _, err := Apply(s, c, catalogtest.Meta(s, actors[r.IntN(len(actors))]))
		if err != nil {
			rejected++
			continue
		}
		applied++
		s = n
		if err := s.CheckDomainInvariants(); err != nil {
			t.Fatalf("step %d %s %+v: %v", i, c.Op(), c, err)
		}
	}
	if applied < 1000 || rejected < 500 {
		t.Fatalf("weak interleaving: %d applied, %d rejected", applied, rejected)
	}
	checkRoundTrip(t, s)
}

// v2FixtureCommands built testdata/snapshot-v2.bin with the format 2 code.
func v2FixtureCommands() []Command {
	sid := "ledger"
	return append(v1FixtureCommands(),
		CreateTable{Name: "lake.fin.events", Columns: []ColumnDef{{Name: "id", Type: "BIGINT"}}, StorageID: sid,
			Files: []DataFile{catalogtest.DataFile(sid, 1)}},
		CommitTableVersion{Table: "lake.fin.events", Base: 1, Files: []DataFile{catalogtest.DataFile(sid, 2)}},
		CreateTag{Name: "dept", AllowedValues: []string{"finance", "hr"}},
		AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{Name: "dept", Value: "finance"}}},
		GrantPrivileges{Role: "writer", Object: metalake, Privileges: pc(PrivCreateTag, Allow)},
	)
}

func TestDomainSnapshotFormats(t *testing.T) {
	old, err := os.ReadFile("testdata/snapshot-v2.bin")
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalSnapshot(old)
	if err != nil {
		t.Fatalf("format 2 snapshot: %v", err)
	}
	s := catalogtest.Apply(t, catalogtest.New(t, "acme", admin), admin, v2FixtureCommands()...)
	b1, _ := r.MarshalBinary()
	b2, _ := s.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Fatalf("format 2 snapshot restores differently from replaying its commands:\n%s\n%s", b1, b2)
	}
	// Format 2 cannot carry domains.
	bad := append(bytes.TrimSuffix(bytes.Clone(old), []byte("}")), []byte(`,"domains":[]}`)...)
	if _, err := UnmarshalSnapshot(bad); !errors.Is(err, ErrInvalidSnapshot) {
		t.Fatalf("format 2 with domains: %v", err)
	}
	// Format 3 round trip with domains, grants on them and owners.
	s = catalogtest.Apply(t, r, admin, CreateUser{"x"},
		CreateDomain{Name: "P/1", Comment: "c", Properties: map[string]string{"k": "v"}, BackingTag: DomainTag{Name: "dept", Value: "finance"}},
		CreateDomain{Name: "C", BackingTag: newTag("c"), Parent: "P/1"},
		SetDomainStatus{Name: "P/1", Status: DomainPublished},
		GrantPrivileges{Role: "writer", Object: Domain("C"), Privileges: pc(PrivManageDomain, Deny)},
		SetOwner{Object: Domain("C"), Owner: Owner{OwnerUser, "x"}})
	checkRoundTrip(t, s)
	b, _ := s.MarshalBinary()
	if !bytes.HasPrefix(b, []byte("lakegate-catalog-snapshot-v3\n")) {
		t.Fatalf("header %q", b[:30])
	}
	for name, edit := range map[string][]string{
		"C2 violated":            {`"status":"DRAFT","owner":{"type":"USER","name":"x"},"parent":`, `"status":"DRAFT","owner":{"type":"USER","name":"x"},"parent":999,"x":`},
		"C6 violated":            {`"status":"DRAFT","owner":{"type":"USER","name":"x"}`, `"status":"PUBLISHED","owner":{"type":"USER","name":"x"}`, `"status":"PUBLISHED","owner":{"type":"USER","name":"admin"}`, `"status":"DRAFT","owner":{"type":"USER","name":"admin"}`},
		"shared value":           {`"tag":15,`, `"tag":13,"value":"finance",`},
		"valueless beside value": {`"tag":15,`, `"tag":13,`},
		"bad status":             {`"status":"PUBLISHED"`, `"status":"LIVE"`},
		"unknown tag":            {`"tag":`, `"tag":9999,"x":`},
		"bad value":              {`"value":"finance"`, `"value":"legal"`},
		"duplicate name":         {`"name":"C","status"`, `"name":"P/1","status"`},
	} {
		bad := b
		for i := 0; i < len(edit); i += 2 {
			e := bytes.Replace(bad, []byte(edit[i]), []byte(edit[i+1]), 1)
			if bytes.Equal(e, bad) {
				t.Fatalf("%s: edit %d did not apply", name, i/2)
			}
			bad = e
		}
		if _, err := UnmarshalSnapshot(bad); !errors.Is(err, ErrInvalidSnapshot) {
			t.Errorf("%s: %v", name, err)
		}
	}
	rs, _ := UnmarshalSnapshot(b)
	for _, u := range []string{admin, "x", "bob"} {
		if !reflect.DeepEqual(rs.ViewDomains(u), s.ViewDomains(u)) {
			t.Fatalf("%s: restored domains differ", u)
		}
		for _, n := range []string{"P/1", "C"} {
			for _, p := range []Privilege{PrivUseDomain, PrivManageDomain} {
				if rs.Authorize(u, p, Domain(n)) != s.Authorize(u, p, Domain(n)) {
					t.Fatalf("%s %v %s: restored Authorize differs", u, p, n)
				}
			}
		}
	}
}

// TestBackingTagConflictNamesOnlyVisible: a conflicting binding names the
// domain holding the tag only to a caller who may see it. Before, bob
// learned the name of a DRAFT domain he cannot see.
func TestBackingTagConflictNamesOnlyVisible(t *testing.T) {
	s := catalogtest.Apply(t, domainBase(t), admin,
		CreateTag{Name: "sec"}, SetOwner{Object: Tag("sec"), Owner: Owner{OwnerUser, "bob"}},
		CreateDomain{Name: "SecretProject", BackingTag: DomainTag{Name: "sec"}},
		CreateDomain{Name: "Mine", BackingTag: newTag("mine")},
		CreateRole{Name: "mine-steward", Grants: []Grant{{Domain("Mine"), PrivManageDomain, Allow}}},
		roles("bob", "mine-steward"))
	set := SetDomainBackingTag{Name: "Mine", BackingTag: &DomainTag{Name: "sec"}}
	for _, tc := range []struct {
		actor, want string
	}{
		{"bob", "BackingTagAlreadyBound: TAG sec already backs another domain"},
		{admin, "BackingTagAlreadyBound: TAG sec already backs DOMAIN SecretProject"},
	} {
		_, _, err := Apply(s, set, catalogtest.Meta(s, tc.actor))
		if ruleOf(err) != RuleBackingTagAlreadyBound || !errors.Is(err, ErrAlreadyExists) {
			t.Fatalf("%s: %v", tc.actor, err)
		}
		if got := err.Error(); got != "catalog: SetDomainBackingTag DOMAIN Mine: already exists: "+tc.want {
			t.Fatalf("%s: %q, want it to end %q", tc.actor, got, tc.want)
		}
	}
}
