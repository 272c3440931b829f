package catalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// gen draws random commands over a small universe of names so that
// sequences hit both successes and every kind of rejection.
type gen struct{ r *rand.Rand }

func (g gen) pick(ss ...string) string { return ss[g.r.IntN(len(ss))] }

func (g gen) catalog() string { return g.pick("c0", "c1") }
func (g gen) schema() string  { return g.catalog() + "." + g.pick("s0", "s1") }
func (g gen) table() string   { return g.schema() + "." + g.pick("t0", "t1", "t2") }
func (g gen) column() string  { return g.table() + "." + g.pick("a", "b") }
func (g gen) user() string    { return g.pick(admin, "u0", "u1", "u2") }
func (g gen) role() string    { return g.pick("r0", "r1", "r2") }
func (g gen) tag() string     { return g.pick("any", "none", "dept") }
func (g gen) value() string   { return g.pick("", "fin", "hr", "x") }
func (g gen) policy() string  { return g.pick("p0", "p1", "p2") }
func (g gen) domain() string  { return g.pick("d0", "d1", "d2", "d/3") }

func (g gen) domainTag() DomainTag {
	if g.r.IntN(3) == 0 {
		return DomainTag{Name: g.pick("dt0", "dt1", "any"), Create: true}
	}
	return DomainTag{Name: g.tag(), Value: g.value()}
}

// domainCommand returns a domain command over a few names, tags and values.
func (g gen) domainCommand() Command {
	switch g.r.IntN(9) {
	case 0, 1:
		return CreateDomain{Name: g.domain(), BackingTag: g.domainTag(), Parent: g.pick("", "", "d0", "d1")}
	case 2:
		return SetDomainStatus{Name: g.domain(), Status: []DomainStatus{DomainPublished, DomainDraft}[g.r.IntN(2)]}
	case 3:
		return SetDomainParent{Name: g.domain(), Parent: g.domain()}
	case 4:
		if g.r.IntN(2) == 0 {
			return DetachDomain{Name: g.domain()}
		}
		return DropDomain{Name: g.domain()}
	case 5:
		if g.r.IntN(3) == 0 {
			return SetDomainBackingTag{Name: g.domain()}
		}
		bt := g.domainTag()
		return SetDomainBackingTag{Name: g.domain(), BackingTag: &bt}
	case 6:
		return AlterDomain{Name: g.domain(), Updates: []DomainUpdate{{Type: "rename", NewName: g.domain()}, {Type: "updateComment", NewComment: g.pick("a", "b")}}}
	case 7:
		p := []Privilege{PrivUseDomain, PrivManageDomain}[g.r.IntN(2)]
		o := Domain(g.domain())
		if g.r.IntN(3) == 0 {
			o = Object{ObjectMetalake, "acme"}
		}
		return GrantPrivileges{Role: g.role(), Object: o, Privileges: []PrivilegeCondition{{p, g.cond()}}}
	}
	return SetOwner{Object: Domain(g.domain()), Owner: Owner{OwnerUser, g.user()}}
}

func (g gen) object() Object {
	switch g.r.IntN(7) {
	case 0:
		return Catalog(g.catalog())
	case 1:
		return Schema(g.schema())
	case 2, 3:
		return Table(g.table())
	case 4:
		return Column(g.column())
	case 5:
		return Tag(g.tag())
	}
	return Object{ObjectMetalake, "acme"}
}

func (g gen) privilege() Privilege { return Privilege(1 + g.r.IntN(19)) }

func (g gen) cond() Condition {
	if g.r.IntN(4) == 0 {
		return Deny
	}
	return Allow
}

func (g gen) content(t PolicyType) PolicyContent {
	switch t {
	case PolicySystemAccessControl:
		return PolicyContent{Privileges: []Privilege{g.pick2(PrivSelectTable, PrivModifyTable)}, ApplicableRoles: []string{g.role()}}
	case PolicyRowFilter:
		return PolicyContent{Expression: g.pick("a > 1", "b = 'x'"), ExemptRoles: []string{g.role()}}
	case PolicyColumnMask:
		return PolicyContent{Mask: g.pick("NULL", "HASH", "upper(b)")}
	}
	return PolicyContent{Custom: []byte(`{"k":1}`)}
}

func (g gen) pick2(a, b Privilege) Privilege {
	if g.r.IntN(2) == 0 {
		return a
	}
	return b
}

// dataFile returns a valid file of storage id sid, from a small set of
// names so that appends sometimes repeat a file.
func (g gen) dataFile(sid string) DataFile {
	n := g.r.IntN(12)
	return DataFile{Path: fmt.Sprintf("tables/%s/%s/f%d.parquet", sid, g.pick("s0", "s1"), n),
		Size: int64(100 * n), Rows: int64(n), SHA256: fmt.Sprintf("%064x", n)}
}

// commit returns a CommitTableVersion for a random table of s: usually
// valid for its current version, sometimes stale, an invalid replace or with
// a file outside the table's directory.
func (g gen) commit(s *Snapshot) Command {
	table := g.table()
	sid, v, ok := s.TableVersion(table, 0)
	if !ok {
		sid = "st-a"
	}
	c := CommitTableVersion{Table: table, Base: v.Version}
	if g.r.IntN(5) == 0 {
		c.Base = uint64(g.r.IntN(3)) // often stale
	}
	for range g.r.IntN(4) {
		c.Files = append(c.Files, g.dataFile(sid))
	}
	switch g.r.IntN(6) {
	case 0:
		c.Replace = true
		c.Columns = []ColumnDef{{Name: g.pick("a", "c"), Type: g.pick("INT", "BIGINT")}, {Name: "b", Type: "VARCHAR"}}
	case 1:
		c.Replace = g.r.IntN(2) == 0 // without columns: invalid when set
	case 2:
		c.Columns = v.Columns // an append restating the schema
	case 3:
		c.Files = append(c.Files, g.dataFile("st-b")) // outside the table's directory
	}
	return c
}

func (g gen) command(s *Snapshot) Command {
	cols := []ColumnDef{{Name: "a", Type: "INT"}, {Name: "b", Type: "VARCHAR", Nullable: true}}
	switch g.r.IntN(46) {
	case 38, 39, 40, 41, 42, 43, 44, 45:
		return g.domainCommand()
	case 0:
		return CreateCatalog{Name: g.catalog()}
	case 1, 2:
		return CreateSchema{Name: g.schema()}
	case 3, 4:
		return CreateTable{Name: g.table(), Columns: cols}
	case 5:
		// With table data: an explicit storage id (sometimes taken) or a
		// derived one.
		if sid := g.pick("", "st-a", "st-b"); sid != "" {
			return CreateTable{Name: g.table(), Columns: cols, StorageID: sid, Files: []DataFile{g.dataFile(sid)}}
		}
		return CreateTable{Name: g.table(), Columns: cols, Files: []DataFile{}}
	case 31, 32, 33, 34:
		return g.commit(s)
	case 35, 36, 37:
		return g.alter()
	case 6:
		return DropObject{Object: g.object(), Cascade: g.r.IntN(2) == 0}
	case 7:
		o := g.object()
		nn := map[ObjectType]func() string{ObjectCatalog: g.catalog, ObjectSchema: g.schema, ObjectTable: g.table, ObjectColumn: g.column}[o.Type]
		if nn == nil {
			return RenameObject{Object: o, NewName: "x"}
		}
		return RenameObject{Object: o, NewName: nn()}
	case 8:
		return AddColumn{Table: g.table(), Column: ColumnDef{Name: g.pick("a", "c"), Type: "INT"}}
	case 9:
		o := g.object()
		if o.Type == ObjectMetalake {
			o = Catalog(g.catalog()) // keep admin the metalake owner
		}
		return SetOwner{Object: o, Owner: Owner{OwnerUser, g.user()}}
	case 10:
		return CreateUser{Name: g.user()}
	case 11:
		return DropUser{Name: g.user()}
	case 12:
		return CreateGroup{Name: g.pick("g0", "g1")}
	case 13:
		return AddGroupMembers{Group: g.pick("g0", "g1"), Users: []string{g.user()}}
	case 14:
		return RemoveGroupMembers{Group: g.pick("g0", "g1"), Users: []string{g.user()}}
	case 15:
		return CreateRole{Name: g.role()}
	case 16:
		return DropRole{Name: g.role()}
	case 17, 18, 19:
		return GrantPrivileges{Role: g.role(), Object: g.object(), Privileges: []PrivilegeCondition{{g.privilege(), g.cond()}}}
	case 20:
		return RevokePrivileges{Role: g.role(), Object: g.object(), Privileges: []PrivilegeCondition{{g.privilege(), g.cond()}}}
	case 21:
		if g.r.IntN(2) == 0 {
			return GrantRoles{Grantee: Owner{OwnerGroup, g.pick("g0", "g1")}, Roles: []string{g.role()}}
		}
		return GrantRoles{Grantee: Owner{OwnerUser, g.user()}, Roles: []string{g.role()}}
	case 22:
		return RevokeRoles{Grantee: Owner{OwnerUser, g.user()}, Roles: []string{g.role()}}
	case 23:
		switch t := g.tag(); t {
		case "none":
			return CreateTag{Name: t, AllowedValues: []string{}}
		case "dept":
			return CreateTag{Name: t, AllowedValues: []string{"fin", "hr"}}
		default:
			return CreateTag{Name: t, Comment: "c", Properties: map[string]string{"k": "v"}}
		}
	case 24:
		return DropTag{Name: g.tag()}
	case 25:
		return AssociateTagsV1{Object: g.object(), TagsToAdd: []string{g.tag()}}
	case 26, 27:
		if g.r.IntN(3) == 0 {
			return AssociateTagsV2{Object: g.object(), TagsToRemove: []TagValue{{g.tag(), g.value()}}}
		}
		return AssociateTagsV2{Object: g.object(), TagsToAdd: []TagValue{{g.tag(), g.value()}}}
	case 28:
		t := []PolicyType{PolicySystemAccessControl, PolicyRowFilter, PolicyColumnMask, PolicyCustom}[g.r.IntN(4)]
		return CreatePolicy{Name: g.policy(), Type: t, Enabled: g.r.IntN(3) > 0, Content: g.content(t)}
	case 29:
		switch g.r.IntN(4) {
		case 0:
			return EnablePolicy{Name: g.policy()}
		case 1:
			return DisablePolicy{Name: g.policy()}
		case 2:
			return DropPolicy{Name: g.policy()}
		}
		return AlterTag{Name: g.tag(), Updates: []TagUpdate{{Type: "setProperty", Property: "p", Value: g.value()}}}
	}
	if g.r.IntN(4) == 0 {
		return DetachPolicy{Tag: g.tag(), Policy: g.policy()}
	}
	return AttachPolicy{Tag: g.tag(), Policy: g.policy(), Selector: Selector{Value: g.value()}}
}

// alter returns an AlterObject of a random object (sometimes of a type that
// cannot be altered) over a few property keys: usually valid, sometimes
// empty or setting and removing one key.
func (g gen) alter() Command {
	c := AlterObject{Object: g.object()}
	if g.r.IntN(2) == 0 {
		comment := g.pick("", "c", "d")
		c.Comment = &comment
	}
	for range g.r.IntN(3) {
		if c.SetProperties == nil {
			c.SetProperties = map[string]string{}
		}
		c.SetProperties[g.pick("p", "q")] = g.value()
	}
	for range g.r.IntN(2) {
		c.RemoveProperties = append(c.RemoveProperties, g.pick("p", "q", "r"))
	}
	return c
}

type step struct {
	cmd  Command
	meta Meta
}

func replay(t *testing.T, steps []step) (*Snapshot, [][]Event) {
	s := catalogtest.New(t, "acme", admin)
	var evs [][]Event
	for _, st := range steps {
		n, ev, _ := Apply(s, st.cmd, st.meta)
		s = n
		evs = append(evs, ev)
	}
	return s, evs
}

func allObjects() []Object {
	var out []Object
	out = append(out, Object{ObjectMetalake, "acme"})
	for _, c := range []string{"c0", "c1"} {
		out = append(out, Catalog(c))
		for _, sc := range []string{"s0", "s1"} {
			out = append(out, Schema(c+"."+sc))
			for _, tb := range []string{"t0", "t1", "t2"} {
				out = append(out, Table(c+"."+sc+"."+tb))
				for _, col := range []string{"a", "b", "c"} {
					out = append(out, Column(c+"."+sc+"."+tb+"."+col))
				}
			}
		}
	}
	for _, tg := range []string{"any", "none", "dept"} {
		out = append(out, Tag(tg))
	}
	for _, p := range []string{"p0", "p1", "p2"} {
		out = append(out, Policy(p))
	}
	for _, d := range []string{"d0", "d1", "d2", "d/3"} {
		out = append(out, Domain(d))
	}
	return out
}

func TestPropertyRandomSequences(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	r := rand.New(rand.NewPCG(42, 7))
	g := gen{r}
	s := catalogtest.New(t, "acme", admin)
	// Bootstrap some users so that non-admin actors exist.
	s = catalogtest.Apply(t, s, admin, CreateUser{"u0"}, CreateUser{"u1"}, CreateUser{"u2"})
	var steps []step
	for i := 0; i < n; i++ {
		c := g.command(s)
		actor := admin
		if r.IntN(5) == 0 {
			actor = g.user()
		}
		m := catalogtest.Meta(s, actor)
		// Command codec round trip.
		b, err := EncodeCommand(c)
		if err != nil {
			t.Fatalf("encode %T: %v", c, err)
		}
		d, err := DecodeCommand(b)
		if err != nil || !reflect.DeepEqual(normalize(d), normalize(c)) {
			t.Fatalf("decode(encode(%#v)) = %#v, %v", c, d, err)
		}
		steps = append(steps, step{c, m})
		before, _ := s.Object(c.Target())
		beforeJSON, _ := json.Marshal(before)
		ns, ev, err := Apply(s, c, m)
		if (err == nil) != (ns != s) || len(ev) == 0 {
			t.Fatalf("step %d %s: snapshot/err/events inconsistent: %v", i, c.Op(), err)
		}
		if a, ok := c.(AlterObject); ok {
			checkAlter(t, s, ns, a, beforeJSON, err)
		}
		if err == nil && ns.Generation() != s.Generation()+1 {
			t.Fatalf("step %d: generation", i)
		}
		if err == nil {
			if derr := ns.CheckDomainInvariants(); derr != nil {
				t.Fatalf("step %d %s %+v: domain invariants: %v", i, c.Op(), c, derr)
			}
		}
		s = ns
		if i%100 == 99 {
			checkSnapshot(t, s)
		}
	}
	// Determinism: two replays give identical bytes and events.
	boot := []step{}
	s0 := catalogtest.New(t, "acme", admin)
	for _, u := range []string{"u0", "u1", "u2"} {
		boot = append(boot, step{CreateUser{u}, catalogtest.Meta(s0, admin)})
		s0, _, _ = Apply(s0, CreateUser{u}, catalogtest.Meta(s0, admin))
	}
	all := append(boot, steps...)
	a, evA := replay(t, all)
	b, evB := replay(t, all)
	ba, _ := a.MarshalBinary()
	bb, _ := b.MarshalBinary()
	bs, _ := s.MarshalBinary()
	if !bytes.Equal(ba, bb) || !bytes.Equal(ba, bs) {
		t.Fatal("replays differ")
	}
	if !reflect.DeepEqual(evA, evB) {
		t.Fatal("replay events differ")
	}
	ok, commits, conflicts, alters := 0, 0, 0, 0
	domainOps := map[string]int{}
	for _, ev := range evA {
		if ev[0].Outcome == Success {
			ok++
			switch ev[0].Operation {
			case "CommitTableVersion":
				commits++
			case "AlterObject":
				alters++
			}
			if ev[0].Target.Type == ObjectDomain {
				domainOps[ev[0].Operation]++
			}
		} else if strings.Contains(ev[0].Detail, "version conflict") {
			conflicts++
		}
	}
	t.Logf("%d commands, %d applied (%d commits, %d version conflicts, %d alters), generation %d, %d bytes", len(all), ok, commits, conflicts, alters, s.Generation(), len(bs))
	if commits == 0 || conflicts == 0 {
		t.Fatalf("generator never committed a version (%d) or never hit a conflict (%d)", commits, conflicts)
	}
	if alters == 0 {
		t.Fatal("generator never altered an object")
	}
	t.Logf("applied domain commands: %v", domainOps)
	for _, op := range []string{"CreateDomain", "PublishDomain", "UnpublishDomain", "SetDomainParent", "DetachDomain",
		"DropDomain", "SetDomainBackingTag", "AlterDomain", "SetOwner"} {
		if domainOps[op] == 0 {
			t.Errorf("generator never applied %s to a domain", op)
		}
	}
	if ok < len(all)/5 {
		t.Fatalf("only %d of %d commands applied: generator too weak", ok, len(all))
	}
}

// checkAlter checks an applied or rejected AlterObject a: the old snapshot
// s is unchanged (beforeJSON is its object before Apply) and, when applied,
// ns has exactly the expected comment and properties.
func checkAlter(t *testing.T, s, ns *Snapshot, a AlterObject, beforeJSON []byte, err error) {
	t.Helper()
	before, _ := s.Object(a.Object)
	if b, _ := json.Marshal(before); !bytes.Equal(b, beforeJSON) {
		t.Fatalf("%v: AlterObject changed the old snapshot:\n%s\n%s", a, beforeJSON, b)
	}
	if err != nil {
		return
	}
	after, _ := ns.Object(a.Object)
	want := maps.Clone(before.Properties)
	if want == nil {
		want = map[string]string{}
	}
	for _, k := range a.RemoveProperties {
		delete(want, k)
	}
	maps.Copy(want, a.SetProperties)
	if len(want) == 0 {
		want = nil
	}
	wantComment := before.Comment
	if a.Comment != nil {
		wantComment = *a.Comment
	}
	if !reflect.DeepEqual(after.Properties, want) || after.Comment != wantComment || after.Audit.LastModifiedTime.IsZero() {
		t.Fatalf("%+v: after = %+v, want comment %q properties %v", a, after, wantComment, want)
	}
}

// normalize maps nil and empty slices alike for comparison (JSON cannot
// distinguish them where the field is omitempty).
func normalize(c Command) string { b, _ := EncodeCommand(c); return string(b) }

func checkSnapshot(t *testing.T, s *Snapshot) {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := UnmarshalSnapshot(b)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	b2, _ := r.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
	if !reflect.DeepEqual(referenced(s), referenced(r)) {
		t.Fatal("restored snapshot disagrees on ReferencedFiles")
	}
	objs := allObjects()
	for _, o := range objs {
		if o.Type != ObjectTable {
			continue
		}
		sid1, v1, ok1 := s.TableVersions(o.Name)
		sid2, v2, ok2 := r.TableVersions(o.Name)
		if sid1 != sid2 || ok1 != ok2 || !reflect.DeepEqual(v1, v2) {
			t.Fatalf("%v: restored snapshot disagrees on TableVersions", o)
		}
	}
	if !reflect.DeepEqual(s.ViewDomains(admin), r.ViewDomains(admin)) {
		t.Fatal("restored snapshot disagrees on ViewDomains")
	}
	// A batch this large makes FilterVisible decide tables from the
	// filters in their children-map entries (see child in model.go).
	many := slices.Repeat(objs, 5)
	for _, u := range []string{admin, "u0", "u1", "u2", "ghost"} {
		vis := s.FilterVisible(u, objs)
		if got, want := s.FilterVisible(u, many), slices.Repeat(vis, 5); !slices.Equal(got, want) {
			t.Fatalf("%s: FilterVisible of a large batch = %v, want %v", u, got, want)
		}
		j := 0
		for _, o := range objs {
			v := s.Visible(u, o)
			in := j < len(vis) && vis[j] == o
			if in {
				j++
			}
			if v != in {
				t.Fatalf("%s %v: Visible=%v FilterVisible=%v", u, o, v, in)
			}
			if o.Type == ObjectTable {
				// Visible uses the batched child summaries; Authorize walks the objects.
				want := s.Authorize(u, PrivSelectTable, o).Allowed || s.Authorize(u, PrivModifyTable, o).Allowed
				if v != want {
					t.Fatalf("%s %v: Visible=%v but Authorize(SELECT|MODIFY)=%v", u, o, v, want)
				}
			}
			if r.Visible(u, o) != v {
				t.Fatalf("%s %v: restored snapshot disagrees on Visible", u, o)
			}
			if o.Type == ObjectDomain {
				for _, p := range []Privilege{PrivUseDomain, PrivManageDomain} {
					if s.Authorize(u, p, o) != r.Authorize(u, p, o) {
						t.Fatalf("%s %v %v: restored snapshot disagrees on Authorize", u, p, o)
					}
				}
				m1, e1 := s.DomainMembers(u, o.Name, MemberQuery{})
				m2, e2 := r.DomainMembers(u, o.Name, MemberQuery{})
				if !reflect.DeepEqual(m1, m2) || fmt.Sprint(e1) != fmt.Sprint(e2) || (e1 == nil) != v {
					t.Fatalf("%s %v: restored snapshot disagrees on DomainMembers (or visibility)", u, o)
				}
			}
			for _, p := range []Privilege{PrivSelectTable, PrivModifyTable, PrivUseSchema, PrivApplyTag} {
				if s.Authorize(u, p, o) != r.Authorize(u, p, o) {
					t.Fatalf("%s %v %v: restored snapshot disagrees on Authorize", u, p, o)
				}
			}
			if o.Type == ObjectTable {
				d1, e1 := s.DomainsOf(u, o)
				d2, e2 := r.DomainsOf(u, o)
				if !reflect.DeepEqual(d1, d2) || fmt.Sprint(e1) != fmt.Sprint(e2) {
					t.Fatalf("%s %v: restored snapshot disagrees on DomainsOf", u, o)
				}
				checkDomainsOfMembers(t, s, u, o, d1)
			}
			if o.Type == ObjectTable {
				f1, m1, e1 := s.RowFiltersAndMasks(u, o.Name)
				f2, m2, e2 := r.RowFiltersAndMasks(u, o.Name)
				if f1 != f2 || !reflect.DeepEqual(m1, m2) || fmt.Sprint(e1) != fmt.Sprint(e2) {
					t.Fatalf("%s %v: restored snapshot disagrees on RowFiltersAndMasks", u, o)
				}
			}
		}
	}
}

// checkDomainsOfMembers checks that DomainsOf and DomainMembers agree: o is
// listed with the same relations by every domain DomainsOf names, and by no
// other visible domain.
func checkDomainsOfMembers(t *testing.T, s *Snapshot, u string, o Object, ds []DomainMembership) {
	t.Helper()
	for _, d := range s.ViewDomains(u) {
		ms, err := s.DomainMembers(u, d.Name, MemberQuery{})
		if err != nil {
			t.Fatalf("%s: members of visible %s: %v", u, d.Name, err)
		}
		var got []DomainRelation
		for _, m := range ms {
			if m.Object == o {
				got = m.Relations
			}
		}
		var want []DomainRelation
		for _, dm := range ds {
			if dm.Domain == d.Name {
				want = dm.Relations
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %v in %s: DomainMembers %v, DomainsOf %v", u, o, d.Name, got, want)
		}
	}
}
