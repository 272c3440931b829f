package catalog_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// entryBase is domainBase plus what carol (CREATE_ROLE, USE on lake's
// schemas, USE_DOMAIN) may and may not see or grant: hidden are catalog
// dark, schema lake.secret and its table, table lake.fin.budget (no
// SELECT_TABLE), tag sec, policy hp and the DRAFT domain Draft; visible but
// not hers are the metalake, catalog lake, schema lake.fin, table
// lake.fin.ledger, tag pub, policy vp and the PUBLISHED domain Pub; hers
// are table lake.fin.own, tag mine and policy mp.
func entryBase(t *testing.T) *Snapshot {
	t.Helper()
	s := catalogtest.Apply(t, domainBase(t), admin,
		CreateCatalog{Name: "dark", Type: "managed"},
		CreateSchema{Name: "lake.secret"},
		CreateTable{Name: "lake.secret.t", Columns: []ColumnDef{{Name: "a", Type: "INT"}}},
		CreateTable{Name: "lake.fin.own", Columns: []ColumnDef{{Name: "a", Type: "INT"}}},
		SetOwner{Object: Table("lake.fin.own"), Owner: Owner{OwnerUser, "carol"}},
		CreateTag{Name: "pub"}, CreateTag{Name: "sec"}, CreateTag{Name: "mine"},
		SetOwner{Object: Tag("mine"), Owner: Owner{OwnerUser, "carol"}},
		CreatePolicy{Name: "vp", Type: PolicyCustom, Enabled: true, Content: PolicyContent{Custom: []byte(`1`)}},
		CreatePolicy{Name: "hp", Type: PolicyCustom, Enabled: true, Content: PolicyContent{Custom: []byte(`1`)}},
		CreatePolicy{Name: "mp", Type: PolicyCustom, Enabled: true, Content: PolicyContent{Custom: []byte(`1`)}},
		SetOwner{Object: Policy("mp"), Owner: Owner{OwnerUser, "carol"}},
		CreateRole{Name: "creator", Grants: []Grant{
			{metalake, PrivCreateRole, Allow},
			{Table("lake.fin.ledger"), PrivSelectTable, Allow},
			{Tag("pub"), PrivViewTag, Allow},
			{Policy("vp"), PrivViewPolicy, Allow},
		}},
		roles("carol", "use", "creator", "viewer"),
	)
	s = catalogtest.Apply(t, s, "steward",
		CreateDomain{Name: "Draft", BackingTag: newTag("draft")},
		CreateDomain{Name: "Pub", BackingTag: newTag("pubd")},
		SetDomainStatus{Name: "Pub", Status: DomainPublished})
	return s
}

// TestCreateRoleGrantsCheckedAsGrants: a role's initial grants need what
// granting each directly needs, answered exactly as GrantPrivileges
// answers, an object the creator cannot see exactly as a missing one.
// Before, CREATE_ROLE alone let carol create a role holding MANAGE_GRANTS
// on the metalake and SELECT_TABLE on a schema she cannot see.
func TestCreateRoleGrantsCheckedAsGrants(t *testing.T) {
	s := entryBase(t)
	// The hidden objects gone: what a missing object answers.
	missing := catalogtest.Apply(t, s, admin,
		DropObject{Object: Catalog("dark")}, DropObject{Object: Schema("lake.secret"), Cascade: true},
		DropObject{Object: Table("lake.fin.budget")}, DropTag{Name: "sec"}, DropPolicy{Name: "hp"})
	missing = catalogtest.Apply(t, missing, "steward", DropDomain{Name: "Draft"})
	for _, tc := range []struct {
		o    Object
		priv Privilege
		want error // nil: permitted
	}{
		{metalake, PrivManageGrants, ErrForbidden},
		{metalake, PrivManageUsers, ErrForbidden},
		{metalake, PrivCreatePolicy, ErrForbidden},
		{Catalog("lake"), PrivUseCatalog, ErrForbidden},
		{Catalog("dark"), PrivUseCatalog, ErrNotFound},
		{Schema("lake.fin"), PrivSelectTable, ErrForbidden},
		{Schema("lake.secret"), PrivSelectTable, ErrNotFound},
		{Table("lake.fin.ledger"), PrivModifyTable, ErrForbidden},
		{Table("lake.fin.budget"), PrivSelectTable, ErrNotFound},
		{Table("lake.secret.t"), PrivSelectTable, ErrNotFound},
		{Table("lake.fin.own"), PrivSelectTable, nil},
		{Tag("pub"), PrivApplyTag, ErrForbidden},
		{Tag("sec"), PrivApplyTag, ErrNotFound},
		{Tag("mine"), PrivApplyTag, nil},
		{Policy("vp"), PrivApplyPolicy, ErrForbidden},
		{Policy("hp"), PrivApplyPolicy, ErrNotFound},
		{Policy("mp"), PrivApplyPolicy, nil},
		{Domain("Pub"), PrivManageDomain, ErrForbidden},
		{Domain("Draft"), PrivUseDomain, ErrNotFound},
	} {
		t.Run(fmt.Sprintf("%s %s", tc.o, tc.priv), func(t *testing.T) {
			cr := CreateRole{Name: "r", Grants: []Grant{{Object: tc.o, Privilege: tc.priv, Condition: Allow}}}
			gp := GrantPrivileges{Role: "reader", Object: tc.o, Privileges: pc(tc.priv, Allow)}
			errCR := CheckEntry(s, "carol", cr)
			errGP := Permit(s, "carol", gp)
			if tc.want == nil {
				if errCR != nil || errGP != nil {
					t.Fatalf("permitted: CheckEntry %v, Permit(GrantPrivileges) %v", errCR, errGP)
				}
				return
			}
			if !errors.Is(errCR, tc.want) || !errors.Is(errGP, tc.want) {
				t.Fatalf("want %v: CheckEntry %v, Permit(GrantPrivileges) %v", tc.want, errCR, errGP)
			}
			var e *Error
			if !errors.As(errCR, &e) || e.Op != "CreateRole" || e.Target != Role("r").String() || e.Err.Error() != errGP.Error() {
				t.Fatalf("CheckEntry %v must be GrantPrivileges' cause %v for CreateRole ROLE r", errCR, errGP)
			}
			if tc.want == ErrNotFound {
				if m := CheckEntry(missing, "carol", cr); m == nil || m.Error() != errCR.Error() {
					t.Fatalf("hidden %q, missing %v: must be the same", errCR, m)
				}
			}
		})
	}
	// Several grants: refused at the first the creator may not make.
	attack := CreateRole{Name: "r", Grants: []Grant{
		{Table("lake.fin.own"), PrivSelectTable, Allow},
		{metalake, PrivManageGrants, Allow}, {metalake, PrivManageUsers, Allow},
		{Schema("lake.secret"), PrivSelectTable, Allow}}}
	if err := CheckEntry(s, "carol", attack); !errors.Is(err, ErrForbidden) {
		t.Fatalf("attack: %v", err)
	}
	// CREATE_ROLE first, as Apply checks it.
	if err := CheckEntry(s, "bob", CreateRole{Name: "r", Grants: []Grant{{Schema("lake.secret"), PrivSelectTable, Allow}}}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("without CREATE_ROLE: %v", err)
	}
	// MANAGE_GRANTS may grant anything; a missing object is then Apply's
	// NotFound, as for GrantPrivileges.
	if err := CheckEntry(s, admin, attack); err != nil {
		t.Fatalf("metalake owner: %v", err)
	}
	// Apply does not check it: a role logged before the rule replays as it
	// was applied.
	if _, _, err := Apply(s, attack, catalogtest.Meta(s, "carol")); err != nil {
		t.Fatalf("Apply must replay logged roles unchanged: %v", err)
	}
}

// TestTagPrivileges: a system_access_control policy may list only the
// privileges that take effect on the objects a tag is attached to (never
// USE_CATALOG or USE_SCHEMA); logged policies listing others keep them, and
// decisions ignore them. Before, CREATE_CATALOG and MANAGE_GRANTS were
// accepted, and MANAGE_GRANTS was conferred on tagged tables.
func TestTagPrivileges(t *testing.T) {
	want := []Privilege{PrivCreateSchema, PrivCreateTable, PrivSelectTable, PrivModifyTable}
	if got := TagPrivileges(); !slices.Equal(got, want) {
		t.Fatalf("TagPrivileges = %v, want %v", got, want)
	}
	// The list is what binds to the taggable securables, less USE_*.
	for p := Privilege(1); p.Valid(); p++ {
		onTagged := p.CanBindTo(ObjectCatalog) || p.CanBindTo(ObjectSchema) || p.CanBindTo(ObjectTable)
		if onTagged != slices.Contains(want, p) && p != PrivUseCatalog && p != PrivUseSchema {
			t.Errorf("%v: binds to a taggable securable = %v, listed = %v", p, onTagged, !onTagged)
		}
	}
	s := sac(t)
	for p := Privilege(1); p.Valid(); p++ {
		content := PolicyContent{Privileges: []Privilege{PrivSelectTable, p}, ApplicableRoles: []string{"analyst"}}
		create := CreatePolicy{Name: "p", Type: PolicySystemAccessControl, Enabled: true, Content: content}
		alter := AlterPolicy{Name: "analysts-read-pii", Updates: []PolicyUpdate{{Type: "updateContent", PolicyType: PolicySystemAccessControl, NewContent: &content}}}
		for _, cmd := range []Command{create, alter} {
			err := CheckEntry(s, admin, cmd)
			if ok := slices.Contains(want, p); ok != (err == nil) {
				t.Errorf("%s with %v: %v", cmd.Op(), p, err)
			} else if err != nil && !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s with %v: %v, want ErrInvalidArgument", cmd.Op(), p, err)
			}
		}
	}
	// Other policy types are not concerned.
	if err := CheckEntry(s, admin, CreatePolicy{Name: "c", Type: PolicyCustom, Content: PolicyContent{Custom: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	// A policy logged before the rule applies, and confers only
	// TagPrivileges.
	old := CreatePolicy{Name: "old", Type: PolicySystemAccessControl, Enabled: true,
		Content: PolicyContent{Privileges: []Privilege{PrivManageGrants, PrivModifyTable}, ApplicableRoles: []string{"analyst"}}}
	s = catalogtest.Apply(t, s, admin, old, AttachPolicy{Tag: "pii", Policy: "old"})
	ledger := Table("lake.fin.ledger")
	if d := s.Authorize("alice", PrivModifyTable, ledger); !d.Allowed || d.Reason != ReasonTagPolicy {
		t.Fatalf("MODIFY_TABLE through the logged policy: %+v", d)
	}
	if d := s.Authorize("alice", PrivManageGrants, ledger); d.Allowed {
		t.Fatalf("MANAGE_GRANTS through a tag: %+v", d)
	}
}
