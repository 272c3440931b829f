package catalog_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

const admin = "admin"

func pc(p Privilege, c Condition) []PrivilegeCondition { return []PrivilegeCondition{{p, c}} }

func grantTo(role string, o Object, p Privilege, c Condition) GrantPrivileges {
	return GrantPrivileges{Role: role, Object: o, Privileges: pc(p, c)}
}

func roles(user string, rs ...string) GrantRoles {
	return GrantRoles{Grantee: Owner{OwnerUser, user}, Roles: rs}
}

// base builds: users alice, bob, carol; catalog lake with schemas fin and hr,
// tables fin.ledger(amount, card), fin.budget(amount), hr.people(name, ssn);
// role "use" with USE_CATALOG on lake and USE_SCHEMA on both schemas, held by
// alice and bob; roles "reader", "analyst", "denier", "other" (empty).
func base(t *testing.T) *Snapshot {
	t.Helper()
	s := catalogtest.New(t, "acme", admin)
	cols := []ColumnDef{{Name: "amount", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR"}}
	return catalogtest.Apply(t, s, admin,
		CreateUser{"alice"}, CreateUser{"bob"}, CreateUser{"carol"},
		CreateCatalog{Name: "lake", Type: "managed"},
		CreateSchema{Name: "lake.fin"}, CreateSchema{Name: "lake.hr"},
		CreateTable{Name: "lake.fin.ledger", Columns: cols},
		CreateTable{Name: "lake.fin.budget", Columns: cols[:1]},
		CreateTable{Name: "lake.hr.people", Columns: []ColumnDef{{Name: "name", Type: "VARCHAR"}, {Name: "ssn", Type: "VARCHAR"}}},
		CreateRole{Name: "use", Grants: []Grant{
			{Catalog("lake"), PrivUseCatalog, Allow},
			{Schema("lake.fin"), PrivUseSchema, Allow},
			{Schema("lake.hr"), PrivUseSchema, Allow},
		}},
		CreateRole{Name: "reader"}, CreateRole{Name: "analyst"}, CreateRole{Name: "denier"}, CreateRole{Name: "other"},
		roles("alice", "use"), roles("bob", "use"),
	)
}

func mustFail(t *testing.T, s *Snapshot, actor string, c Command, want error) {
	t.Helper()
	n, ev, err := Apply(s, c, catalogtest.Meta(s, actor))
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", c.Op(), err, want)
	}
	if n != s || len(ev) != 1 || ev[0].Outcome != Failure {
		t.Fatalf("%s: rejected command must return the same snapshot and one failure event: %v", c.Op(), ev)
	}
}

func TestAuthorizeRBAC(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	cases := []struct {
		name   string
		setup  []Command
		user   string
		priv   Privilege
		obj    Object
		allow  bool
		reason string
	}{
		{"no grant", nil, "alice", PrivSelectTable, ledger, false, ReasonNoGrant},
		{"allow on table", []Command{grantTo("reader", ledger, PrivSelectTable, Allow), roles("alice", "reader")},
			"alice", PrivSelectTable, ledger, true, ReasonGrant},
		{"allow on schema inherited", []Command{grantTo("reader", Schema("lake.fin"), PrivSelectTable, Allow), roles("alice", "reader")},
			"alice", PrivSelectTable, ledger, true, ReasonGrant},
		{"allow on metalake inherited", []Command{grantTo("reader", Object{ObjectMetalake, "acme"}, PrivSelectTable, Allow), roles("alice", "reader")},
			"alice", PrivSelectTable, ledger, true, ReasonGrant},
		{"deny on schema beats allow on table", []Command{
			grantTo("reader", ledger, PrivSelectTable, Allow), grantTo("denier", Schema("lake.fin"), PrivSelectTable, Deny),
			roles("alice", "reader", "denier")}, "alice", PrivSelectTable, ledger, false, ReasonDenied},
		{"deny on table beats allow on schema", []Command{
			grantTo("reader", Schema("lake.fin"), PrivSelectTable, Allow), grantTo("denier", ledger, PrivSelectTable, Deny),
			roles("alice", "reader", "denier")}, "alice", PrivSelectTable, ledger, false, ReasonDenied},
		{"deny on catalog beats allow on table", []Command{
			grantTo("reader", ledger, PrivSelectTable, Allow), grantTo("denier", Catalog("lake"), PrivSelectTable, Deny),
			roles("alice", "reader", "denier")}, "alice", PrivSelectTable, ledger, false, ReasonDenied},
		{"deny on other table irrelevant", []Command{
			grantTo("reader", Schema("lake.fin"), PrivSelectTable, Allow), grantTo("denier", Table("lake.fin.budget"), PrivSelectTable, Deny),
			roles("alice", "reader", "denier")}, "alice", PrivSelectTable, ledger, true, ReasonGrant},
		{"deny via group role", []Command{
			grantTo("reader", ledger, PrivSelectTable, Allow), grantTo("denier", Schema("lake.fin"), PrivSelectTable, Deny),
			roles("alice", "reader"), CreateGroup{"g"}, AddGroupMembers{"g", []string{"alice"}},
			GrantRoles{Owner{OwnerGroup, "g"}, []string{"denier"}}}, "alice", PrivSelectTable, ledger, false, ReasonDenied},
		{"missing USE_SCHEMA", []Command{grantTo("reader", ledger, PrivSelectTable, Allow), roles("carol", "reader"),
			grantTo("other", Catalog("lake"), PrivUseCatalog, Allow), roles("carol", "other")},
			"carol", PrivSelectTable, ledger, false, ReasonNoUseSchema},
		{"missing USE_CATALOG", []Command{grantTo("reader", ledger, PrivSelectTable, Allow), roles("carol", "reader")},
			"carol", PrivSelectTable, ledger, false, ReasonNoUseCatalog},
		{"USE_SCHEMA denied on catalog", []Command{grantTo("reader", ledger, PrivSelectTable, Allow), roles("alice", "reader"),
			grantTo("denier", Catalog("lake"), PrivUseSchema, Deny), roles("alice", "denier")},
			"alice", PrivSelectTable, ledger, false, ReasonNoUseSchema},
		{"table owner still needs USE", []Command{SetOwner{ledger, Owner{OwnerUser, "carol"}}},
			"carol", PrivSelectTable, ledger, false, ReasonNoUseCatalog},
		{"table owner with USE", []Command{SetOwner{ledger, Owner{OwnerUser, "alice"}}},
			"alice", PrivSelectTable, ledger, true, ReasonOwner},
		{"table owner with USE despite deny", []Command{SetOwner{ledger, Owner{OwnerUser, "alice"}},
			grantTo("denier", ledger, PrivSelectTable, Deny), roles("alice", "denier")},
			"alice", PrivSelectTable, ledger, true, ReasonOwner},
		{"schema owner needs USE_CATALOG", []Command{SetOwner{Schema("lake.fin"), Owner{OwnerUser, "carol"}}},
			"carol", PrivSelectTable, ledger, false, ReasonNoUseCatalog},
		{"schema owner with USE_CATALOG only", []Command{SetOwner{Schema("lake.fin"), Owner{OwnerUser, "carol"}},
			grantTo("other", Catalog("lake"), PrivUseCatalog, Allow), roles("carol", "other")},
			"carol", PrivSelectTable, ledger, true, ReasonOwner},
		{"catalog owner", []Command{SetOwner{Catalog("lake"), Owner{OwnerUser, "carol"}}},
			"carol", PrivSelectTable, ledger, true, ReasonCatalogOwner},
		{"group catalog owner", []Command{CreateGroup{"g"}, AddGroupMembers{"g", []string{"carol"}}, SetOwner{Catalog("lake"), Owner{OwnerGroup, "g"}}},
			"carol", PrivSelectTable, ledger, true, ReasonCatalogOwner},
		{"metalake owner", nil, admin, PrivSelectTable, ledger, true, ReasonMetalakeOwner},
		{"unknown principal", nil, "mallory", PrivSelectTable, ledger, false, ReasonUnknownPrincipal},
		{"missing object", nil, "alice", PrivSelectTable, Table("lake.fin.nope"), false, ReasonNotFound},
		{"metalake privilege", []Command{grantTo("other", Object{ObjectMetalake, "acme"}, PrivCreateRole, Allow), roles("carol", "other")},
			"carol", PrivCreateRole, Object{ObjectMetalake, "acme"}, true, ReasonGrant},
		{"apply tag implies view tag", []Command{CreateTag{Name: "pii"}, grantTo("other", Tag("pii"), PrivApplyTag, Allow), roles("carol", "other")},
			"carol", PrivViewTag, Tag("pii"), true, ReasonGrant},
		{"tag owner", []Command{CreateTag{Name: "pii"}, SetOwner{Tag("pii"), Owner{OwnerUser, "carol"}}},
			"carol", PrivApplyTag, Tag("pii"), true, ReasonOwner},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := catalogtest.Apply(t, base(t), admin, tc.setup...)
			d := s.Authorize(tc.user, tc.priv, tc.obj)
			if d.Allowed != tc.allow || d.Reason != tc.reason {
				t.Fatalf("Authorize = %+v, want allowed=%v reason=%q", d, tc.allow, tc.reason)
			}
			if tc.obj.Type == ObjectTable && tc.priv == PrivSelectTable {
				vis := s.Visible(tc.user, tc.obj)
				if vis != (d.Allowed || s.Authorize(tc.user, PrivModifyTable, tc.obj).Allowed) {
					t.Fatalf("Visible = %v disagrees with Authorize", vis)
				}
			}
		})
	}
}

// sac sets up tag pii (any value) with a system_access_control policy
// granting SELECT_TABLE to role analyst, held by alice.
func sac(t *testing.T) *Snapshot {
	return catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "pii"},
		CreatePolicy{Name: "analysts-read-pii", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
		AttachPolicy{Tag: "pii", Policy: "analysts-read-pii"},
		AssociateTagsV1{Object: Table("lake.fin.ledger"), TagsToAdd: []string{"pii"}},
		roles("alice", "analyst"),
	)
}

func TestTagBasedAccess(t *testing.T) {
	ledger := Table("lake.fin.ledger")
	s := sac(t)
	if d := s.Authorize("alice", PrivSelectTable, ledger); !d.Allowed || d.Reason != ReasonTagPolicy {
		t.Fatalf("tag policy: %+v", d)
	}
	if d := s.Authorize("alice", PrivModifyTable, ledger); d.Allowed {
		t.Fatalf("tag policy must confer only its privileges: %+v", d)
	}
	if d := s.Authorize("bob", PrivSelectTable, ledger); d.Allowed {
		t.Fatalf("bob lacks the role: %+v", d)
	}
	if d := s.Authorize("alice", PrivSelectTable, Table("lake.fin.budget")); d.Allowed {
		t.Fatalf("untagged table: %+v", d)
	}
	// An RBAC DENY on the schema wins over the tag rule.
	d := catalogtest.Apply(t, s, admin, grantTo("denier", Schema("lake.fin"), PrivSelectTable, Deny), roles("alice", "denier")).
		Authorize("alice", PrivSelectTable, ledger)
	if d.Allowed || d.Reason != ReasonDenied {
		t.Fatalf("RBAC deny must beat tag allow: %+v", d)
	}
	// The tag rule does not confer USE_SCHEMA.
	d = catalogtest.Apply(t, s, admin, roles("carol", "analyst"), grantTo("other", Catalog("lake"), PrivUseCatalog, Allow), roles("carol", "other")).
		Authorize("carol", PrivSelectTable, ledger)
	if d.Allowed || d.Reason != ReasonNoUseSchema {
		t.Fatalf("tag rule must not bypass USE_SCHEMA: %+v", d)
	}
	// Inherited from the schema.
	s2 := catalogtest.Apply(t, s, admin, AssociateTagsV1{Object: Schema("lake.fin"), TagsToAdd: []string{"pii"}})
	if d := s2.Authorize("alice", PrivSelectTable, Table("lake.fin.budget")); !d.Allowed {
		t.Fatalf("inherited tag: %+v", d)
	}
	// Disable, enable.
	s3 := catalogtest.Apply(t, s, admin, DisablePolicy{"analysts-read-pii"})
	if d := s3.Authorize("alice", PrivSelectTable, ledger); d.Allowed {
		t.Fatalf("disabled policy still allows: %+v", d)
	}
	if ps, _ := s3.PoliciesOf(ledger); len(ps) != 0 {
		t.Fatalf("disabled policy derived: %v", ps)
	}
	s4 := catalogtest.Apply(t, s3, admin, EnablePolicy{"analysts-read-pii"})
	if d := s4.Authorize("alice", PrivSelectTable, ledger); !d.Allowed {
		t.Fatalf("re-enabled policy: %+v", d)
	}
	// Invalid contents.
	for _, c := range []PolicyContent{
		{Privileges: []Privilege{PrivUseCatalog}, ApplicableRoles: []string{"analyst"}},
		{Privileges: []Privilege{PrivUseSchema}, ApplicableRoles: []string{"analyst"}},
		{Privileges: []Privilege{PrivSelectTable}},
		{ApplicableRoles: []string{"analyst"}},
		{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}, Mask: "NULL"},
	} {
		mustFail(t, s, admin, CreatePolicy{Name: "bad", Type: PolicySystemAccessControl, Content: c}, ErrInvalidArgument)
	}
	mustFail(t, s, admin, CreatePolicy{Name: "bad", Type: PolicySystemAccessControl,
		Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"ghost"}}}, ErrNotFound)
}

func TestSelectorsAndNearestWins(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "dept", AllowedValues: []string{"finance", "hr"}},
		CreatePolicy{Name: "fin-only", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
		CreatePolicy{Name: "any-dept", Type: PolicyCustom, Enabled: true, Content: PolicyContent{Custom: []byte(`{"a": 1}`)}},
		AttachPolicy{Tag: "dept", Policy: "fin-only", Selector: Selector{Value: "finance"}},
		AttachPolicy{Tag: "dept", Policy: "any-dept"},
		AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{"dept", "finance"}}},
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{"dept", "hr"}}},
		roles("alice", "analyst"),
	)
	mustFail(t, s, admin, AttachPolicy{Tag: "dept", Policy: "fin-only", Selector: Selector{Value: "legal"}}, ErrInvalidArgument)

	// Nearest wins: the table's dept=hr overrides the schema's dept=finance.
	et, _ := s.EffectiveTags(Table("lake.fin.ledger"))
	want := []EffectiveTag{{Name: "dept", Values: []string{"hr"}, Inherited: false, Source: Table("lake.fin.ledger")}}
	if !equalJSON(et, want) {
		t.Fatalf("ledger effective tags = %+v", et)
	}
	et, _ = s.EffectiveTags(Column("lake.fin.budget.amount"))
	want = []EffectiveTag{{Name: "dept", Values: []string{"finance"}, Inherited: true, Source: Schema("lake.fin")}}
	if !equalJSON(et, want) {
		t.Fatalf("budget.amount effective tags = %+v", et)
	}
	names := func(o Object) []string {
		ps, err := s.PoliciesOf(o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Policy+"@"+p.Source.Name)
		}
		return out
	}
	if got := names(Table("lake.fin.budget")); !slices.Equal(got, []string{"any-dept@lake.fin", "fin-only@lake.fin"}) {
		t.Fatalf("budget policies = %v", got)
	}
	// Value selector does not apply to dept=hr; presence does.
	if got := names(Table("lake.fin.ledger")); !slices.Equal(got, []string{"any-dept@lake.fin.ledger"}) {
		t.Fatalf("ledger policies = %v", got)
	}
	if d := s.Authorize("alice", PrivSelectTable, Table("lake.fin.budget")); !d.Allowed {
		t.Fatalf("finance table: %+v", d)
	}
	if d := s.Authorize("alice", PrivSelectTable, Table("lake.fin.ledger")); d.Allowed {
		t.Fatalf("hr table must not get the finance policy: %+v", d)
	}
}

func TestRoleDropRefusedWhileReferenced(t *testing.T) {
	s := sac(t)
	s = catalogtest.Apply(t, s, admin, CreatePolicy{Name: "b-filter", Type: PolicyRowFilter, Enabled: true,
		Content: PolicyContent{Expression: "region = 'EU'", ExemptRoles: []string{"analyst"}}})
	_, _, err := Apply(s, DropRole{"analyst"}, catalogtest.Meta(s, admin))
	var iu *InUseError
	if !errors.As(err, &iu) || !errors.Is(err, ErrInUse) || !slices.Equal(iu.Policies, []string{"analysts-read-pii", "b-filter"}) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "analysts-read-pii") {
		t.Fatalf("error must name the policies: %v", err)
	}
	s = catalogtest.Apply(t, s, admin, DisablePolicy{"analysts-read-pii"}, DisablePolicy{"b-filter"}, DropRole{"analyst"})
	if _, ok := s.User("alice"); !ok {
		t.Fatal("alice vanished")
	}
	if u, _ := s.User("alice"); slices.Contains(u.Roles, "analyst") {
		t.Fatal("dropped role still bound")
	}
	// Enabling a policy naming a missing role is rejected.
	mustFail(t, s, admin, EnablePolicy{"analysts-read-pii"}, ErrNotFound)
}

func TestAssociateV1V2(t *testing.T) {
	tbl := Table("lake.fin.ledger")
	prep := []Command{
		CreateTag{Name: "pii"},                                            // any value
		CreateTag{Name: "flag", AllowedValues: []string{}},                // no value
		CreateTag{Name: "dept", AllowedValues: []string{"finance", "hr"}}, // list
	}
	type step struct {
		cmd  Command
		err  error
		tags string // direct tags after, "name=value,…"
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"v1 add then conflict", []step{
			{AssociateTagsV1{Object: tbl, TagsToAdd: []string{"pii", "flag"}}, nil, "flag,pii"},
			{AssociateTagsV1{Object: tbl, TagsToAdd: []string{"pii"}}, ErrAlreadyExists, "flag,pii"},
		}},
		{"v1 list tag needs value", []step{{AssociateTagsV1{Object: tbl, TagsToAdd: []string{"dept"}}, ErrInvalidArgument, ""}}},
		{"v1 unknown tag", []step{{AssociateTagsV1{Object: tbl, TagsToAdd: []string{"nope"}}, ErrNotFound, ""}}},
		{"v1 both lists", []step{{AssociateTagsV1{Object: tbl, TagsToAdd: []string{"pii"}, TagsToRemove: []string{"pii"}}, ErrInvalidArgument, ""}}},
		{"v1 remove removes all values", []step{
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"dept", "hr"}, {"dept", "finance"}}}, nil, "dept=finance,dept=hr"},
			{AssociateTagsV1{Object: tbl, TagsToRemove: []string{"dept", "pii"}}, nil, ""},
		}},
		{"v1 add on already valued tag conflicts", []step{
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"pii", "x"}}}, nil, "pii=x"},
			{AssociateTagsV1{Object: tbl, TagsToAdd: []string{"pii"}}, ErrAlreadyExists, "pii=x"},
		}},
		{"v2 existing pair no-op", []step{
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"dept", "hr"}}}, nil, "dept=hr"},
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"dept", "hr"}}}, nil, "dept=hr"},
		}},
		{"v2 value replaces valueless", []step{
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{Name: "pii"}}}, nil, "pii"},
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"pii", "email"}}}, nil, "pii=email"},
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{Name: "pii"}}}, nil, "pii=email"},
		}},
		{"v2 removing last value removes assignment", []step{
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"dept", "hr"}, {"dept", "finance"}}}, nil, "dept=finance,dept=hr"},
			{AssociateTagsV2{Object: tbl, TagsToRemove: []TagValue{{"dept", "hr"}}}, nil, "dept=finance"},
			{AssociateTagsV2{Object: tbl, TagsToRemove: []TagValue{{"dept", "legal"}}}, nil, "dept=finance"},
			{AssociateTagsV2{Object: tbl, TagsToRemove: []TagValue{{"dept", "finance"}}}, nil, ""},
		}},
		{"v2 valueless remove removes all", []step{
			{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"dept", "hr"}, {"dept", "finance"}}}, nil, "dept=finance,dept=hr"},
			{AssociateTagsV2{Object: tbl, TagsToRemove: []TagValue{{Name: "dept"}}}, nil, ""},
		}},
		{"v2 value not allowed", []step{{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"dept", "Finance"}}}, ErrInvalidArgument, ""}}},
		{"v2 value on no-value tag", []step{{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"flag", "x"}}}, ErrInvalidArgument, ""}}},
		{"v2 no value on list tag", []step{{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{Name: "dept"}}}, ErrInvalidArgument, ""}}},
		{"v2 pair in both lists", []step{{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"dept", "hr"}}, TagsToRemove: []TagValue{{"dept", "hr"}}}, ErrInvalidArgument, ""}}},
		{"v2 with and without value", []step{{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{Name: "pii"}, {"pii", "x"}}}, ErrInvalidArgument, ""}}},
		{"v2 blank value", []step{{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"pii", " "}}}, ErrInvalidArgument, ""}}},
		{"v2 long value", []step{{AssociateTagsV2{Object: tbl, TagsToAdd: []TagValue{{"pii", strings.Repeat("x", 257)}}}, ErrInvalidArgument, ""}}},
		{"v2 on column", []step{{AssociateTagsV2{Object: Column("lake.fin.ledger.card"), TagsToAdd: []TagValue{{"pii", "pan"}}}, nil, ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := catalogtest.Apply(t, base(t), admin, prep...)
			for i, st := range tc.steps {
				n, _, err := Apply(s, st.cmd, catalogtest.Meta(s, admin))
				if !errors.Is(err, st.err) || (st.err == nil) != (err == nil) {
					t.Fatalf("step %d: err = %v, want %v", i, err, st.err)
				}
				s = n
				info, _ := s.Object(tbl)
				var got []string
				for _, tv := range info.Tags {
					if tv.Value == "" {
						got = append(got, tv.Name)
					} else {
						got = append(got, tv.Name+"="+tv.Value)
					}
				}
				if strings.Join(got, ",") != st.tags {
					t.Fatalf("step %d: tags = %q, want %q", i, strings.Join(got, ","), st.tags)
				}
			}
		})
	}
}

func TestGrantRules(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin, CreateTag{Name: "pii"},
		CreatePolicy{Name: "p", Type: PolicyCustom, Content: PolicyContent{Custom: []byte(`1`)}})
	m := Object{ObjectMetalake, "acme"}
	objs := map[ObjectType]Object{ObjectMetalake: m, ObjectCatalog: Catalog("lake"), ObjectSchema: Schema("lake.fin"),
		ObjectTable: Table("lake.fin.ledger"), ObjectTag: Tag("pii"), ObjectPolicy: Policy("p")}
	want := map[Privilege]string{
		PrivUseCatalog: "MC", PrivUseSchema: "MCS", PrivCreateSchema: "MC", PrivCreateTable: "MCS",
		PrivSelectTable: "MCST", PrivModifyTable: "MCST", PrivManageGrants: "M", PrivManageUsers: "M",
		PrivManageGroups: "M", PrivCreateRole: "M", PrivCreateTag: "M", PrivCreatePolicy: "M", PrivCreateCatalog: "M",
		PrivApplyTag: "MG", PrivViewTag: "MG", PrivApplyPolicy: "MP", PrivViewPolicy: "MP",
	}
	letter := map[ObjectType]byte{ObjectMetalake: 'M', ObjectCatalog: 'C', ObjectSchema: 'S', ObjectTable: 'T', ObjectTag: 'G', ObjectPolicy: 'P'}
	for p, types := range want {
		for typ, o := range objs {
			ok := strings.IndexByte(types, letter[typ]) >= 0
			if p.CanBindTo(typ) != ok {
				t.Errorf("%v.CanBindTo(%v) = %v", p, typ, !ok)
			}
			_, _, err := Apply(s, grantTo("reader", o, p, Allow), catalogtest.Meta(s, admin))
			if ok != (err == nil) || (!ok && !errors.Is(err, ErrInvalidArgument)) {
				t.Errorf("grant %v on %v: err = %v", p, typ, err)
			}
		}
	}
	// Nothing binds to columns.
	mustFail(t, s, admin, grantTo("reader", Column("lake.fin.ledger.card"), PrivSelectTable, Allow), ErrNotFound)
	// ALLOW and DENY of one privilege in one role.
	mustFail(t, s, admin, GrantPrivileges{Role: "reader", Object: Table("lake.fin.ledger"),
		Privileges: []PrivilegeCondition{{PrivSelectTable, Allow}, {PrivSelectTable, Deny}}}, ErrInvalidArgument)
	s2 := catalogtest.Apply(t, s, admin, grantTo("reader", Table("lake.fin.ledger"), PrivSelectTable, Allow))
	mustFail(t, s2, admin, grantTo("reader", Table("lake.fin.ledger"), PrivSelectTable, Deny), ErrInvalidArgument)
	// Revoke then deny is fine.
	s3 := catalogtest.Apply(t, s2, admin, RevokePrivileges{Role: "reader", Object: Table("lake.fin.ledger"), Privileges: pc(PrivSelectTable, Allow)},
		grantTo("reader", Table("lake.fin.ledger"), PrivSelectTable, Deny))
	r, _ := s3.Role("reader")
	if len(r.Grants) != 1 || r.Grants[0].Condition != Deny {
		t.Fatalf("grants = %+v", r.Grants)
	}
	mustFail(t, s, admin, CreateCatalog{Name: "system"}, ErrInvalidName)
}

func TestPermit(t *testing.T) {
	s := base(t)
	mustFail(t, s, "bob", CreateCatalog{Name: "x"}, ErrForbidden)
	mustFail(t, s, "mallory", CreateCatalog{Name: "x"}, ErrForbidden)
	mustFail(t, s, "bob", CreateRole{Name: "x"}, ErrForbidden)
	mustFail(t, s, "bob", grantTo("reader", Schema("lake.fin"), PrivSelectTable, Allow), ErrForbidden)
	mustFail(t, s, "bob", grantTo("reader", Table("lake.fin.ledger"), PrivSelectTable, Allow), ErrNotFound) // invisible to bob
	mustFail(t, s, "bob", CreateTable{Name: "lake.fin.x"}, ErrForbidden)
	// carol cannot see lake: not found, not forbidden.
	mustFail(t, s, "carol", CreateTable{Name: "lake.fin.x"}, ErrNotFound)
	mustFail(t, s, "carol", DropObject{Object: Table("lake.fin.ledger")}, ErrNotFound)
	mustFail(t, s, "bob", DropObject{Object: Table("lake.fin.ledger")}, ErrNotFound)
	mustFail(t, s, "bob", DropObject{Object: Schema("lake.fin")}, ErrForbidden)
	// CREATE_TABLE on the schema lets bob create; he owns the result.
	s = catalogtest.Apply(t, s, admin, grantTo("reader", Schema("lake.fin"), PrivCreateTable, Allow), roles("bob", "reader"))
	s = catalogtest.Apply(t, s, "bob", CreateTable{Name: "lake.fin.mine", Columns: []ColumnDef{{Name: "a", Type: "INT"}}})
	if o, _ := s.Owner(Table("lake.fin.mine")); o != (Owner{OwnerUser, "bob"}) {
		t.Fatalf("owner = %v", o)
	}
	s = catalogtest.Apply(t, s, "bob", DropObject{Object: Table("lake.fin.mine")})
	// Tags: CREATE_TAG and APPLY_TAG.
	mustFail(t, s, "bob", CreateTag{Name: "t"}, ErrForbidden)
	s = catalogtest.Apply(t, s, admin, CreateTag{Name: "t"})
	mustFail(t, s, "bob", AssociateTagsV1{Object: Schema("lake.fin"), TagsToAdd: []string{"t"}}, ErrNotFound) // cannot view tag
	s = catalogtest.Apply(t, s, admin, grantTo("other", Tag("t"), PrivViewTag, Allow), roles("bob", "other"))
	mustFail(t, s, "bob", AssociateTagsV1{Object: Schema("lake.fin"), TagsToAdd: []string{"t"}}, ErrForbidden)
	s = catalogtest.Apply(t, s, admin, grantTo("other", Tag("t"), PrivApplyTag, Allow))
	catalogtest.Apply(t, s, "bob", AssociateTagsV1{Object: Schema("lake.fin"), TagsToAdd: []string{"t"}})
}

// filteredLedger is base with policy eu-rows (a row filter on tag eu, set
// on schema lake.fin) and mask-card (LAST4 on tag pii, set on column
// lake.fin.ledger.card), both exempting role analyst, which alice has.
func filteredLedger(t *testing.T) *Snapshot {
	t.Helper()
	return catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "eu"}, CreateTag{Name: "pii"},
		CreatePolicy{Name: "eu-rows", Type: PolicyRowFilter, Enabled: true,
			Content: PolicyContent{Expression: "region = 'EU'", ExemptRoles: []string{"analyst"}}},
		CreatePolicy{Name: "mask-card", Type: PolicyColumnMask, Enabled: true,
			Content: PolicyContent{Mask: "last4", ExemptRoles: []string{"analyst"}}},
		AttachPolicy{Tag: "eu", Policy: "eu-rows"}, AttachPolicy{Tag: "pii", Policy: "mask-card"},
		AssociateTagsV1{Object: Schema("lake.fin"), TagsToAdd: []string{"eu"}},
		AssociateTagsV1{Object: Column("lake.fin.ledger.card"), TagsToAdd: []string{"pii"}},
		roles("alice", "analyst"),
	)
}

func TestRowFiltersAndMasks(t *testing.T) {
	s := filteredLedger(t)
	f, m, err := s.RowFiltersAndMasks("bob", "lake.fin.ledger")
	if err != nil || f != "region = 'EU'" || len(m) != 1 || m[0] != (ColumnMask{"card", "LAST4", "mask-card"}) {
		t.Fatalf("bob: %q %v %v", f, m, err)
	}
	f, m, err = s.RowFiltersAndMasks("alice", "lake.fin.ledger")
	if err != nil || f != "" || len(m) != 0 {
		t.Fatalf("alice (exempt): %q %v %v", f, m, err)
	}
	// A second, different filter fails closed; the same expression does not.
	same := catalogtest.Apply(t, s, admin, CreatePolicy{Name: "eu-rows-2", Type: PolicyRowFilter, Enabled: true,
		Content: PolicyContent{Expression: "region = 'EU'"}}, AttachPolicy{Tag: "eu", Policy: "eu-rows-2"})
	if _, _, err := same.RowFiltersAndMasks("bob", "lake.fin.ledger"); err != nil {
		t.Fatalf("identical filters: %v", err)
	}
	conflict := catalogtest.Apply(t, s, admin, CreatePolicy{Name: "us-rows", Type: PolicyRowFilter, Enabled: true,
		Content: PolicyContent{Expression: "region = 'US'"}}, AttachPolicy{Tag: "eu", Policy: "us-rows"})
	if _, _, err := conflict.RowFiltersAndMasks("bob", "lake.fin.ledger"); !errors.Is(err, ErrConflictingPolicies) {
		t.Fatalf("conflicting filters: %v", err)
	}
	// Two different masks on one column: one through the table, one through the column.
	masks := catalogtest.Apply(t, s, admin, CreateTag{Name: "secret"}, CreatePolicy{Name: "null-all", Type: PolicyColumnMask, Enabled: true,
		Content: PolicyContent{Mask: "NULL"}}, AttachPolicy{Tag: "secret", Policy: "null-all"},
		AssociateTagsV1{Object: Table("lake.fin.ledger"), TagsToAdd: []string{"secret"}})
	if _, _, err := masks.RowFiltersAndMasks("bob", "lake.fin.ledger"); !errors.Is(err, ErrConflictingPolicies) {
		t.Fatalf("conflicting masks: %v", err)
	}
	mustFail(t, s, admin, CreatePolicy{Name: "bad", Type: PolicyRowFilter, Content: PolicyContent{Expression: "1=1; DROP TABLE x"}}, ErrInvalidArgument)
	mustFail(t, s, admin, CreatePolicy{Name: "bad", Type: PolicyRowFilter, Content: PolicyContent{Expression: "(a"}}, ErrInvalidArgument)
	mustFail(t, s, admin, CreatePolicy{Name: "bad", Type: PolicyRowFilter,
		Content: PolicyContent{Expression: "a", ApplicableRoles: []string{"use"}, ExemptRoles: []string{"use"}}}, ErrInvalidArgument)
}

func TestVisibility(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		grantTo("reader", Table("lake.fin.ledger"), PrivSelectTable, Allow), roles("alice", "reader"))
	all := []Object{Catalog("lake"), Schema("lake.fin"), Schema("lake.hr"), Table("lake.fin.ledger"),
		Table("lake.fin.budget"), Table("lake.hr.people"), Column("lake.fin.ledger.card"), Table("lake.fin.missing")}
	got := s.FilterVisible("alice", all)
	want := []Object{Catalog("lake"), Schema("lake.fin"), Schema("lake.hr"), Table("lake.fin.ledger"), Column("lake.fin.ledger.card")}
	if !slices.Equal(got, want) {
		t.Fatalf("alice sees %v", got)
	}
	if got := s.FilterVisible("carol", all); len(got) != 0 {
		t.Fatalf("carol sees %v", got)
	}
	if got := s.FilterVisible(admin, all); len(got) != len(all)-1 {
		t.Fatalf("admin sees %v", got)
	}
	for _, u := range []string{"alice", "bob", "carol", admin, "nobody"} {
		for _, o := range all {
			in := slices.Contains(s.FilterVisible(u, all), o)
			if s.Visible(u, o) != in {
				t.Fatalf("%s %v: Visible and FilterVisible disagree", u, o)
			}
		}
	}
}

func TestEventsAndSharing(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin, CreateTag{Name: "pii"},
		AssociateTagsV1{Object: Schema("lake.fin"), TagsToAdd: []string{"pii"}})
	before, _ := s.MarshalBinary()
	n, ev, err := Apply(s, CreateTable{Name: "lake.fin.new", Columns: []ColumnDef{{Name: "a", Type: "INT"}}}, catalogtest.Meta(s, admin))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 2 || ev[0].Operation != "CreateTable" || ev[0].Outcome != Success ||
		ev[1].Operation != OpEffectiveTagsChanged || ev[1].Target != Table("lake.fin.new") || ev[0].Index != s.Index()+1 {
		t.Fatalf("events = %+v", ev)
	}
	if n.Generation() != s.Generation()+1 {
		t.Fatal("generation not incremented")
	}
	after, _ := s.MarshalBinary()
	if string(before) != string(after) {
		t.Fatal("Apply modified the old snapshot")
	}
	n, ev, _ = Apply(n, RenameObject{Object: Schema("lake.fin"), NewName: "lake.finance"}, catalogtest.Meta(n, admin))
	if len(ev) != 2 || ev[1].Target != Schema("lake.finance") {
		t.Fatalf("rename events = %+v", ev)
	}
	et, _ := n.EffectiveTags(Table("lake.finance.ledger"))
	if len(et) != 1 || et[0].Source != Schema("lake.finance") {
		t.Fatalf("effective tags after rename: %+v", et)
	}
	// Grants follow the renamed object.
	n = catalogtest.Apply(t, n, admin, RenameObject{Object: Table("lake.finance.ledger"), NewName: "lake.hr.ledger2"})
	if d := n.Authorize("alice", PrivSelectTable, Table("lake.hr.ledger2")); d.Allowed {
		t.Fatalf("%+v", d)
	}
	_, ev, err = Apply(n, DropObject{Object: Schema("lake.hr")}, catalogtest.Meta(n, admin))
	if !errors.Is(err, ErrNonEmpty) || ev[0].Outcome != Failure || ev[0].Detail == "" {
		t.Fatalf("drop non-empty: %v %+v", err, ev)
	}
	n = catalogtest.Apply(t, n, admin, DropObject{Object: Schema("lake.hr"), Cascade: true})
	if _, ok := n.Object(Table("lake.hr.ledger2")); ok {
		t.Fatal("cascade drop left a table")
	}
}

// TestTimeOutsideEncodableYears checks that a command or metalake stamped
// with a time RFC 3339 cannot represent is refused: a snapshot holding one
// could never be persisted again.
func TestTimeOutsideEncodableYears(t *testing.T) {
	s := base(t)
	for _, tm := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		m := catalogtest.Meta(s, admin)
		m.Time = tm
		n, ev, err := Apply(s, CreateCatalog{Name: "later"}, m)
		if !errors.Is(err, ErrInvalidCommand) || n != s {
			t.Fatalf("%v: err = %v, same snapshot %v", tm, err, n == s)
		}
		if len(ev) != 1 || ev[0].Outcome != Failure || !ev[0].Time.IsZero() {
			t.Fatalf("%v: events %+v, want one failure without a time", tm, ev)
		}
		if _, err := New("other", admin, tm); !errors.Is(err, ErrInvalidCommand) {
			t.Fatalf("%v: New: %v", tm, err)
		}
	}
	if _, err := s.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	m := catalogtest.Meta(s, admin)
	m.Time = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	if _, _, err := Apply(s, CreateCatalog{Name: "later"}, m); err != nil {
		t.Fatalf("last encodable year: %v", err)
	}
}

// TestPoliciesOfRedactsHiddenTags: the policies of an object name the tag
// they come through only to a caller who may view it (VIEW_TAG), through
// the nearest such tag; a policy reached only through hidden tags keeps no
// tag, selector or source. Before, ViewPoliciesOf named the hidden tag.
func TestPoliciesOfRedactsHiddenTags(t *testing.T) {
	s := catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "hid", AllowedValues: []string{"x"}}, CreateTag{Name: "vis"},
		CreatePolicy{Name: "only-hidden", Type: PolicyCustom, Enabled: true, Content: PolicyContent{Custom: []byte(`1`)}},
		CreatePolicy{Name: "both", Type: PolicyCustom, Enabled: true, Content: PolicyContent{Custom: []byte(`2`)}},
		AttachPolicy{Tag: "hid", Policy: "only-hidden", Selector: Selector{Value: "x"}},
		AttachPolicy{Tag: "hid", Policy: "both"}, AttachPolicy{Tag: "vis", Policy: "both"},
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "hid", Value: "x"}}},
		AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{Name: "vis"}}},
		CreateRole{Name: "look", Grants: []Grant{
			{Table("lake.fin.ledger"), PrivSelectTable, Allow}, {Tag("vis"), PrivViewTag, Allow},
			{Policy("only-hidden"), PrivViewPolicy, Allow}, {Policy("both"), PrivViewPolicy, Allow}}},
		roles("alice", "look"))
	format := func(ps []DerivedPolicy) []string {
		out := []string{}
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s tag=%q sel=%q src=%q inherited=%v", p.Policy, p.Tag, p.Selector.Value, p.Source.Name, p.Inherited))
		}
		return out
	}
	got, err := s.ViewPoliciesOf("alice", Table("lake.fin.ledger"))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "alice", format(got), []string{
		`both tag="vis" sel="" src="lake.fin" inherited=true`,
		`only-hidden tag="" sel="" src="" inherited=false`,
	})
	got, _ = s.ViewPoliciesOf(admin, Table("lake.fin.ledger"))
	want(t, "admin", format(got), []string{
		`both tag="hid" sel="" src="lake.fin.ledger" inherited=false`,
		`only-hidden tag="hid" sel="x" src="lake.fin.ledger" inherited=false`,
	})
	// Enforcement reads the nearest tag, whoever asks.
	all, _ := s.PoliciesOf(Table("lake.fin.ledger"))
	want(t, "PoliciesOf", format(all), format(got))
}
