package catalog_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// opsDesign is tagDesign plus schema lake.ops (tables jobs and runs, the
// column runs.card), tag "ops" with policy ops-read (SELECT_TABLE for
// role analyst) not yet assigned anywhere, and role "ops-deny" (DENY
// SELECT_TABLE on lake.ops) held by dave.
func opsDesign(t testing.TB) *Snapshot {
	s := tagDesign(t)
	return catalogtest.Apply(t, s, admin,
		CreateSchema{Name: "lake.ops"},
		CreateTable{Name: "lake.ops.jobs", Columns: []ColumnDef{{Name: "id", Type: "BIGINT"}}},
		CreateTable{Name: "lake.ops.runs", Columns: []ColumnDef{{Name: "id", Type: "BIGINT"}, {Name: "card", Type: "VARCHAR"}}},
		AssociateTagsV2{Object: Column("lake.ops.runs.card"), TagsToAdd: []TagValue{{Name: "pii"}}},
		CreateTag{Name: "ops"},
		CreatePolicy{Name: "ops-read", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
		AttachPolicy{Tag: "ops", Policy: "ops-read"},
		CreateRole{Name: "ops-deny", Grants: []Grant{{Schema("lake.ops"), PrivSelectTable, Deny}}},
		roles("dave", "ops-deny"),
	)
}

// TestPreviewTagAttachListsNewReaders is the acceptance scenario: attaching
// a system_access_control policy's tag to a schema lists exactly the users
// who can read its tables afterwards and could not before, and changes
// nothing.
func TestPreviewTagAttachListsNewReaders(t *testing.T) {
	s := opsDesign(t)
	before, _ := s.MarshalBinary()
	attach := AssociateTagsV2{Object: Schema("lake.ops"), TagsToAdd: []TagValue{{Name: "ops"}}}
	d, err := Preview(s, catalogtest.Meta(s, admin), Page{}, attach)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := s.MarshalBinary(); !slices.Equal(before, after) || s.Authorize("bob", PrivSelectTable, Table("lake.ops.jobs")).Allowed {
		t.Fatal("the preview changed the snapshot")
	}
	// bob, carol, erin, frank and gina hold analyst and may use lake; dave
	// is denied on lake.ops; nobody holds nothing; admin could already.
	newReaders := []string{"bob", "carol", "erin", "frank", "gina"}
	got := map[string][]string{}
	for _, c := range d.Privileges {
		if !c.Gained || c.Privilege != PrivSelectTable || c.Before != ReasonNoGrant || c.After != ReasonTagPolicy {
			t.Errorf("unexpected change %+v", c)
			continue
		}
		got[c.Object.Name] = append(got[c.Object.Name], c.User)
	}
	want := map[string][]string{"lake.ops.jobs": newReaders, "lake.ops.runs": newReaders}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("new readers = %v, want %v", got, want)
	}
	// The brute force agrees: every user, every table, before and after.
	next := catalogtest.Apply(t, s, admin, attach)
	for _, u := range s.UserNames() {
		for _, tb := range []string{"lake.ops.jobs", "lake.ops.runs", "lake.fin.ledger"} {
			gained := !s.Authorize(u, PrivSelectTable, Table(tb)).Allowed && next.Authorize(u, PrivSelectTable, Table(tb)).Allowed
			if listed := slices.Contains(got[tb], u); listed != gained {
				t.Errorf("%s on %s: listed %v, gains %v", u, tb, listed, gained)
			}
		}
	}
	// Their reads of runs gain the mask of the card column (gina is exempt:
	// she gains an unmasked read, which is no change of filter or mask).
	var masked []string
	for _, r := range d.Reads {
		if r.Table != "lake.ops.runs" || r.Before.Allowed || !r.After.Allowed ||
			!reflect.DeepEqual(r.After.Masks, []ColumnMask{{Column: "card", Mask: MaskLast4, Policy: "mask-card"}}) {
			t.Errorf("unexpected read change %+v", r)
		}
		masked = append(masked, r.User)
	}
	if want := []string{"bob", "carol", "erin", "frank"}; !slices.Equal(masked, want) {
		t.Errorf("reads gaining the mask: %v, want %v", masked, want)
	}
	if d.Objects != 3 || d.Users != len(s.UserNames()) {
		t.Errorf("compared %d objects and %d users, want the schema and its 2 tables, and every user", d.Objects, d.Users)
	}
}

func TestPreviewCommands(t *testing.T) {
	s := opsDesign(t)
	type change struct {
		user, object string
		priv         Privilege
		gained       bool
	}
	tests := []struct {
		name  string
		cmd   Command
		has   []change // must be listed
		hasNo []change // must not be listed
		reads []string // "user table": reads that change
	}{
		{name: "disable a policy", cmd: DisablePolicy{Name: "finance-read"},
			has: []change{{"bob", "lake.fin.budget", PrivSelectTable, false}, {"gina", "lake.fin.ledger", PrivSelectTable, false}},
			// frank owns the budget and is denied the rest; dave is denied.
			hasNo: []change{{"frank", "lake.fin.budget", PrivSelectTable, false}, {"frank", "lake.fin.ledger", PrivSelectTable, false},
				{"dave", "lake.fin.budget", PrivSelectTable, false}, {"bob", "lake.fin.payroll", PrivSelectTable, false}},
			// Lost reads lose the schema's row filter (and the ledger's mask).
			reads: []string{"bob lake.fin.budget", "carol lake.fin.budget", "gina lake.fin.budget",
				"bob lake.fin.ledger", "carol lake.fin.ledger", "gina lake.fin.ledger"}},
		{name: "bind roles", cmd: roles("nobody", "use", "analyst"),
			has: []change{{"nobody", "lake", PrivUseCatalog, true}, {"nobody", "lake.fin", PrivUseSchema, true},
				{"nobody", "lake.fin.budget", PrivSelectTable, true}}},
		{name: "unbind a role from a group", cmd: RevokeRoles{Grantee: Owner{OwnerGroup, "contractors"}, Roles: []string{"restricted"}},
			has: []change{{"erin", "lake.fin.budget", PrivSelectTable, true}, {"erin", "lake.fin.ledger", PrivSelectTable, true}}},
		{name: "grant", cmd: grantTo("hr", Schema("lake.fin"), PrivModifyTable, Allow),
			hasNo: []change{{"bob", "lake.fin.budget", PrivModifyTable, true}}},
		{name: "revoke a DENY", cmd: RevokePrivileges{Role: "restricted", Object: Schema("lake.fin"), Privileges: pc(PrivSelectTable, Deny)},
			has: []change{{"dave", "lake.fin.ledger", PrivSelectTable, true}, {"erin", "lake.fin.ledger", PrivSelectTable, true}}},
		{name: "owner change", cmd: SetOwner{Object: Catalog("lake"), Owner: Owner{OwnerUser, "nobody"}},
			has: []change{{"nobody", "lake", PrivUseCatalog, true}, {"nobody", "lake.hr.staff", PrivModifyTable, true}}},
		{name: "detach a mask", cmd: DetachPolicy{Tag: "pii", Policy: "mask-card"},
			// Owners are not exempt; gina is; frank may not read the ledger.
			reads: []string{"admin lake.fin.ledger", "bob lake.fin.ledger", "carol lake.fin.ledger", "admin lake.ops.runs"}},
		{name: "a tag's value changes which policy it selects",
			cmd: AssociateTagsV2{Object: Table("lake.fin.budget"), TagsToAdd: []TagValue{{Name: "dept", Value: "hr"}}},
			has: []change{{"bob", "lake.fin.budget", PrivSelectTable, false}}},
		{name: "alter a policy's roles", cmd: AlterPolicy{Name: "legacy-read", Updates: []PolicyUpdate{{Type: "updateContent",
			PolicyType: PolicySystemAccessControl, NewContent: &PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"hr"}}}}}},
		{name: "enable a policy", cmd: EnablePolicy{Name: "legacy-read"},
			has: []change{{"carol", "lake.hr.staff", PrivSelectTable, true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Preview(s, catalogtest.Meta(s, admin), Page{}, tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			checkDiff(t, s, catalogtest.Apply(t, s, admin, tc.cmd), d, usersOf(s), append(allObjectsOf(s), allObjectsOf(catalogtest.Apply(t, s, admin, tc.cmd))...))
			listed := func(c change) bool {
				return slices.ContainsFunc(d.Privileges, func(p PrivilegeChange) bool {
					return p.User == c.user && p.Object.Name == c.object && p.Privilege == c.priv && p.Gained == c.gained
				})
			}
			for _, c := range tc.has {
				if !listed(c) {
					t.Errorf("%+v not listed in %+v", c, d.Privileges)
				}
			}
			for _, c := range tc.hasNo {
				if listed(c) {
					t.Errorf("%+v listed", c)
				}
			}
			var reads []string
			for _, r := range d.Reads {
				reads = append(reads, r.User+" "+r.Table)
			}
			if tc.reads != nil && !slices.Equal(reads, tc.reads) {
				t.Errorf("reads = %v, want %v", reads, tc.reads)
			}
		})
	}
}

// TestPreviewIsApplysDecision: a command Apply refuses is refused by the
// preview with the same error, for the same reason.
func TestPreviewIsApplysDecision(t *testing.T) {
	s := opsDesign(t)
	for _, tc := range []struct {
		actor string
		cmd   Command
		want  error
	}{
		{"bob", roles("bob", "pci"), ErrForbidden},
		{"bob", AssociateTagsV2{Object: Schema("lake.ops"), TagsToAdd: []TagValue{{Name: "ops"}}}, ErrNotFound},
		{admin, AssociateTagsV2{Object: Schema("lake.nope"), TagsToAdd: []TagValue{{Name: "ops"}}}, ErrNotFound},
		{admin, DisablePolicy{Name: "nope"}, ErrNotFound},
	} {
		_, perr := Preview(s, catalogtest.Meta(s, tc.actor), Page{}, tc.cmd)
		_, _, aerr := Apply(s, tc.cmd, catalogtest.Meta(s, tc.actor))
		if !errors.Is(perr, tc.want) || fmt.Sprint(perr) != fmt.Sprint(aerr) {
			t.Errorf("%s %s: preview %v, apply %v, want %v", tc.actor, tc.cmd.Op(), perr, aerr, tc.want)
		}
	}
	// A sequence: the second command sees the first.
	d, err := Preview(s, catalogtest.Meta(s, admin), Page{}, CreateTag{Name: "new"},
		CreatePolicy{Name: "new-read", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
		AttachPolicy{Tag: "new", Policy: "new-read"},
		AssociateTagsV2{Object: Table("lake.hr.staff"), TagsToAdd: []TagValue{{Name: "new"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Privileges, func(c PrivilegeChange) bool {
		return c.User == "carol" && c.Object == Table("lake.hr.staff") && c.Gained
	}) {
		t.Errorf("carol gains nothing on lake.hr.staff: %+v", d.Privileges)
	}
}

// TestPreviewAgreesWithBruteForce: on random states, for random commands,
// the preview lists exactly the changes a comparison of every user, every
// object and every compared privilege before and after applying finds
// (the preview compares only what a command may affect).
func TestPreviewAgreesWithBruteForce(t *testing.T) {
	seeds, perSeed := uint64(24), 40
	if testing.Short() {
		seeds = 6
	}
	applied := 0
	for seed := range seeds {
		s := randomState(t, seed, 40+int(uint8(seed*37)))
		r := rand.New(rand.NewPCG(seed, 99))
		g := gen{r}
		for range perSeed {
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
			m := catalogtest.Meta(s, actor)
			d, err := Preview(s, m, Page{}, c)
			next, _, aerr := Apply(s, c, m)
			if fmt.Sprint(err) != fmt.Sprint(aerr) {
				t.Fatalf("%s %+v: preview %v, apply %v", c.Op(), c, err, aerr)
			}
			if err != nil {
				continue
			}
			applied++
			users := slices.Concat(usersOf(s), usersOf(next))
			objs := slices.Concat(allObjectsOf(s), allObjectsOf(next))
			if !checkDiff(t, s, next, d, users, objs) {
				t.Fatalf("seed %d: %s %+v", seed, c.Op(), c)
			}
			if r.IntN(4) == 0 {
				s = next // move on sometimes, so that commands meet varied states
			}
		}
	}
	if applied < int(seeds)*perSeed/3 {
		t.Fatalf("only %d previews applied: generator too weak", applied)
	}
}

func usersOf(s *Snapshot) []string { return append(s.UserNames(), "ghost") }

// allObjectsOf lists every object of s a preview compares privileges on.
func allObjectsOf(s *Snapshot) []Object {
	out := []Object{{ObjectMetalake, s.Metalake()}}
	var walk func(o Object)
	walk = func(o Object) {
		out = append(out, o)
		if o.Type == ObjectTable {
			return
		}
		kids, _ := s.Children(o)
		for _, k := range kids {
			t := map[ObjectType]ObjectType{ObjectMetalake: ObjectCatalog, ObjectCatalog: ObjectSchema, ObjectSchema: ObjectTable}[o.Type]
			name := k
			if o.Type != ObjectMetalake {
				name = o.Name + "." + k
			}
			walk(Object{t, name})
		}
	}
	kids, _ := s.Children(Object{ObjectMetalake, s.Metalake()})
	for _, k := range kids {
		walk(Catalog(k))
	}
	for _, n := range s.TagNames() {
		out = append(out, Tag(n))
	}
	for _, n := range s.PolicyNames() {
		out = append(out, Policy(n))
	}
	for _, d := range s.ViewDomains(s.MetalakeOwner().Name) {
		out = append(out, Domain(d.Name))
	}
	return out
}

// checkDiff compares d with the brute force over users × objects of a
// (before) and b (after), reporting whether they agree.
func checkDiff(t *testing.T, a, b *Snapshot, d Diff, users []string, objs []Object) bool {
	t.Helper()
	slices.Sort(users)
	users = slices.Compact(users)
	slices.SortFunc(objs, func(x, y Object) int {
		if x.Type != y.Type {
			return int(x.Type) - int(y.Type)
		}
		return strings.Compare(x.Name, y.Name)
	})
	objs = slices.Compact(objs)
	var want []PrivilegeChange
	type readKey struct{ user, table string }
	wantReads := map[readKey]bool{}
	for _, o := range objs {
		for _, p := range PreviewPrivileges(o.Type) {
			for _, u := range users {
				da, db := a.Authorize(u, p, o), b.Authorize(u, p, o)
				if da.Allowed != db.Allowed {
					want = append(want, PrivilegeChange{User: u, Object: o, Privilege: p, Gained: db.Allowed, Before: da.Reason, After: db.Reason})
				}
			}
		}
		if o.Type != ObjectTable {
			continue
		}
		for _, u := range users {
			ra, rb := bruteRead(a, u, o.Name), bruteRead(b, u, o.Name)
			if ra.Filter != rb.Filter || ra.Conflict != rb.Conflict || !reflect.DeepEqual(ra.Masks, rb.Masks) {
				wantReads[readKey{u, o.Name}] = true
			}
		}
	}
	ok := true
	if !reflect.DeepEqual(d.Privileges, append([]PrivilegeChange{}, want...)) {
		t.Errorf("privilege changes:\n got %+v\nwant %+v", d.Privileges, want)
		ok = false
	}
	got := map[readKey]bool{}
	for _, r := range d.Reads {
		k := readKey{r.User, r.Table}
		got[k] = true
		before, after := bruteRead(a, r.User, r.Table), bruteRead(b, r.User, r.Table)
		strip := func(x ReadRule) ReadRule { x.FilterPolicy = ""; return x }
		if !reflect.DeepEqual(strip(r.Before), before) || !reflect.DeepEqual(strip(r.After), after) {
			t.Errorf("read %v: got %+v → %+v, want %+v → %+v", k, r.Before, r.After, before, after)
			ok = false
		}
		// Only the filter's policy may change without the rules doing so.
		if !wantReads[k] && r.Before.FilterPolicy == r.After.FilterPolicy {
			t.Errorf("read %v listed without a change: %+v", k, r)
			ok = false
		}
	}
	for k := range wantReads {
		if !got[k] {
			t.Errorf("read %v changes but is not listed", k)
			ok = false
		}
	}
	return ok
}

// bruteRead is what u's read of table applies in s (nothing without
// SELECT_TABLE), without the filter's policy (RowFiltersAndMasks does not
// name it).
func bruteRead(s *Snapshot, u, table string) ReadRule {
	r := ReadRule{Allowed: s.Authorize(u, PrivSelectTable, Table(table)).Allowed}
	if !r.Allowed {
		return r
	}
	filter, masks, err := s.RowFiltersAndMasks(u, table)
	if err != nil {
		r.Conflict = err.Error()
		return r
	}
	r.Filter, r.Masks = filter, masks
	return r
}

// TestPreviewDomainGrantReachesSubdomains: a grant on a domain applies to
// its subdomains through the parent, and the preview says so.
func TestPreviewDomainGrantReachesSubdomains(t *testing.T) {
	s := catalogtest.Apply(t, opsDesign(t), admin,
		CreateDomain{Name: "Finance", BackingTag: DomainTag{Name: "finance", Create: true}},
		CreateDomain{Name: "Trading", BackingTag: DomainTag{Name: "trading", Create: true}, Parent: "Finance"},
		CreateRole{Name: "domains"}, roles("bob", "domains"))
	c := grantTo("domains", Domain("Finance"), PrivUseDomain, Allow)
	d, err := Preview(s, catalogtest.Meta(s, admin), Page{}, c)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range d.Privileges {
		got = append(got, ch.User+" "+ch.Object.String()+" "+ch.Privilege.String())
	}
	if want := []string{"bob DOMAIN Finance USE_DOMAIN", "bob DOMAIN Trading USE_DOMAIN"}; !slices.Equal(got, want) {
		t.Errorf("changes = %v, want %v", got, want)
	}
	checkDiff(t, s, catalogtest.Apply(t, s, admin, c), d, usersOf(s), allObjectsOf(s))
}

// TestPreviewPages: the pages of a preview, one after the other, are the
// whole answer, and every page reports the totals.
func TestPreviewPages(t *testing.T) {
	s := opsDesign(t)
	c := DisablePolicy{Name: "finance-read"}
	all, err := Preview(s, catalogtest.Meta(s, admin), Page{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if all.PrivilegesTotal != len(all.Privileges) || all.ReadsTotal != len(all.Reads) || all.PrivilegesTotal < 5 {
		t.Fatalf("totals %d %d for %d and %d rows", all.PrivilegesTotal, all.ReadsTotal, len(all.Privileges), len(all.Reads))
	}
	for _, limit := range []int{1, 2, 4} {
		var privs []PrivilegeChange
		var reads []ReadChange
		for off := 0; off < max(all.PrivilegesTotal, all.ReadsTotal); off += limit {
			d, err := Preview(s, catalogtest.Meta(s, admin), Page{Offset: off, Limit: limit}, c)
			if err != nil {
				t.Fatal(err)
			}
			if d.PrivilegesTotal != all.PrivilegesTotal || d.ReadsTotal != all.ReadsTotal || len(d.Privileges) > limit || len(d.Reads) > limit {
				t.Fatalf("page %d+%d: %+v", off, limit, d)
			}
			privs, reads = append(privs, d.Privileges...), append(reads, d.Reads...)
		}
		if !reflect.DeepEqual(privs, all.Privileges) || !reflect.DeepEqual(reads, all.Reads) {
			t.Errorf("pages of %d do not make the whole answer", limit)
		}
	}
}
