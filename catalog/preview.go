package catalog

import (
	"slices"
	"strings"
)

// Diff is the answer of Preview: what applying commands would change, per
// user and object.
type Diff struct {
	// Privileges are the privileges users would gain or lose, sorted by
	// object (type, then name), privilege and user: the rows of the page
	// of PrivilegesTotal.
	Privileges      []PrivilegeChange `json:"privileges"`
	PrivilegesTotal int               `json:"privilegesTotal"`
	// Reads are the reads whose row filter or column masks would change
	// (see ReadRule), sorted by table and user: the rows of the page of
	// ReadsTotal.
	Reads      []ReadChange `json:"reads"`
	ReadsTotal int          `json:"readsTotal"`
	// Objects and Users are how many objects and users were compared: the
	// ones the commands may affect.
	Objects int `json:"objects"`
	Users   int `json:"users"`
}

// PrivilegeChange is one privilege a user would gain (Gained) or lose on
// an object, with the reasons of the decisions before and after.
type PrivilegeChange struct {
	User      string    `json:"user"`
	Object    Object    `json:"object"`
	Privilege Privilege `json:"privilege"`
	Gained    bool      `json:"gained"`
	Before    string    `json:"before"`
	After     string    `json:"after"`
}

// ReadChange is a user's read of a table whose filter or masks would
// change.
type ReadChange struct {
	User   string   `json:"user"`
	Table  string   `json:"table"`
	Before ReadRule `json:"before"`
	After  ReadRule `json:"after"`
}

// ReadRule is what a user's read of a table applies (RowFiltersAndMasks):
// Allowed is SELECT_TABLE (without it there is no read, and nothing else is
// set); Conflict is set when the policies in effect conflict (the read is
// refused). A user who gains a read gains its filter and masks; one who
// loses it loses them.
type ReadRule struct {
	Allowed      bool         `json:"allowed"`
	Filter       string       `json:"filter,omitempty"`
	FilterPolicy string       `json:"filterPolicy,omitempty"`
	Masks        []ColumnMask `json:"masks,omitempty"`
	Conflict     string       `json:"conflict,omitempty"`
}

func (r ReadRule) sameRules(o ReadRule) bool {
	return r.Filter == o.Filter && r.FilterPolicy == o.FilterPolicy && r.Conflict == o.Conflict && slices.Equal(r.Masks, o.Masks)
}

// previewPrivileges lists, per object type, the privileges a preview
// compares on objects of that type: the ones that act on the object itself.
var previewPrivileges = [...][]Privilege{
	ObjectMetalake: {PrivCreateCatalog, PrivManageGrants, PrivManageUsers, PrivManageGroups, PrivCreateRole,
		PrivCreateTag, PrivCreatePolicy, PrivUseDomain, PrivManageDomain},
	ObjectCatalog: {PrivUseCatalog, PrivCreateSchema},
	ObjectSchema:  {PrivUseSchema, PrivCreateTable},
	ObjectTable:   {PrivSelectTable, PrivModifyTable},
	ObjectTag:     {PrivApplyTag, PrivViewTag},
	ObjectPolicy:  {PrivApplyPolicy, PrivViewPolicy},
	ObjectDomain:  {PrivUseDomain, PrivManageDomain},
}

// PreviewPrivileges returns the privileges Preview compares on objects of
// type t (none for columns, roles, users and groups: columns are compared
// through the reads of their tables).
func PreviewPrivileges(t ObjectType) []Privilege {
	if int(t) < len(previewPrivileges) {
		return slices.Clone(previewPrivileges[t])
	}
	return nil
}

// Page selects rows of each list of a Diff: from Offset (0 the first), at
// most Limit of them (0: all).
type Page struct {
	Offset, Limit int
}

func (pg Page) has(i int) bool { return i >= pg.Offset && (pg.Limit <= 0 || i < pg.Offset+pg.Limit) }

// Preview applies cmds in order to s as m.Actor — exactly as Apply would,
// permission checks included, the i-th at index m.Index+i — to a copy that
// is then discarded, and answers the difference: the privileges (see
// PreviewPrivileges) each user would gain or lose on each object, and the
// reads whose filter or masks would change. s is not modified. Only the
// objects and users a command may affect are compared (a grant: the
// object's subtree and the role's holders; a tag assignment: the object's
// subtree and every user; a policy change: the objects carrying its tags;
// a role binding: every object and the bound users; …). A rejected command
// rejects the preview with Apply's error. The answer holds the rows of
// page of each list, and their totals: a large answer costs the time to
// decide it, not the memory to hold it.
func Preview(s *Snapshot, m Meta, page Page, cmds ...Command) (Diff, error) {
	sc := newScope()
	next := s
	for i, c := range cmds {
		mi := m
		mi.Index = m.Index + uint64(i)
		n, _, err := Apply(next, c, mi)
		if err != nil {
			return Diff{}, err
		}
		sc.add(next, n, c)
		next = n
	}
	for _, c := range cmds {
		// Holders, members and tagged objects as of the first and the last
		// state too: a later command may change whom an earlier one
		// reaches.
		sc.add(s, next, c)
	}
	return diff(s, next, sc, page), nil
}

// scope is what a preview compares.
type scope struct {
	all   bool            // every object
	objs  map[Object]bool // objects whose subtrees (catalog tree, subdomains) may change
	every bool            // every user
	users map[string]bool // when not every: the users
}

func newScope() *scope { return &scope{objs: map[Object]bool{}, users: map[string]bool{}} }

func (sc *scope) user(names ...string) {
	for _, n := range names {
		sc.users[n] = true
	}
}

// principals adds the users an owner or grantee stands for in a and b.
func (sc *scope) principals(a, b *Snapshot, o Owner) {
	switch o.Type {
	case OwnerUser:
		sc.user(o.Name)
	case OwnerGroup:
		for _, s := range [...]*Snapshot{a, b} {
			if g, ok := s.groups.Get(o.Name); ok {
				sc.user(g.members...)
			}
		}
	}
}

// holders adds the users holding role (directly or through a group) in a
// or b.
func (sc *scope) holders(a, b *Snapshot, role string) {
	for _, s := range [...]*Snapshot{a, b} {
		s.users.Range(func(name string, u *user) bool {
			if s.hasRoleName(&who{name: name, u: u}, role) {
				sc.users[name] = true
			}
			return true
		})
	}
}

// tagged adds the objects carrying tag (by name) in a or b.
func (sc *scope) tagged(a, b *Snapshot, tag string) {
	for _, s := range [...]*Snapshot{a, b} {
		if objs, ok := s.ObjectsWithTag(tag, ""); ok {
			for _, o := range objs {
				sc.objs[o] = true
			}
		}
	}
}

// policyTags adds the objects carrying a tag the policy is attached to in
// a or b, and the policy itself.
func (sc *scope) policyTags(a, b *Snapshot, name string) {
	sc.objs[Policy(name)] = true
	for _, s := range [...]*Snapshot{a, b} {
		if p, ok := s.policyByName(name); ok {
			for _, id := range p.tags {
				if t, ok := s.tags.Get(id); ok {
					sc.tagged(a, b, t.name)
				}
			}
		}
	}
}

// add widens sc by what c may change between a (before) and b (after).
func (sc *scope) add(a, b *Snapshot, c Command) {
	sc.objs[c.Target()] = true
	switch c := c.(type) {
	case GrantPrivileges:
		sc.objs[c.Object] = true
		sc.holders(a, b, c.Role)
	case RevokePrivileges:
		sc.objs[c.Object] = true
		sc.holders(a, b, c.Role)
	case GrantRoles:
		sc.all = true
		sc.principals(a, b, c.Grantee)
	case RevokeRoles:
		sc.all = true
		sc.principals(a, b, c.Grantee)
	case AddGroupMembers:
		sc.all = true
		sc.user(c.Users...)
	case RemoveGroupMembers:
		sc.all = true
		sc.user(c.Users...)
	case CreateUser:
		sc.all = true
		sc.user(c.Name)
	case SyncIdentityUser:
		sc.all = true
		sc.user(c.Name)
	case DropUser:
		sc.all = true
		sc.user(c.Name)
	case CreateGroup:
		// An empty group holds no roles and owns nothing.
	case DropGroup:
		sc.all = true
		sc.principals(a, b, Owner{OwnerGroup, c.Name})
	case CreateRole:
		sc.holders(a, b, c.Name)
	case DropRole:
		sc.all = true
		sc.holders(a, b, c.Name)
	case SetOwner:
		sc.objs[c.Object] = true
		sc.principals(a, b, c.Owner)
		for _, s := range [...]*Snapshot{a, b} {
			if o, ok := s.Owner(c.Object); ok {
				sc.principals(a, b, o)
			}
		}
	case AssociateTagsV1:
		sc.objs[c.Object] = true
		sc.every = true
	case AssociateTagsV2:
		sc.objs[c.Object] = true
		sc.every = true
	case AlterTag:
		sc.tagged(a, b, c.Name)
		for _, u := range c.Updates {
			if u.Type == "rename" {
				sc.objs[Tag(u.NewName)] = true
				sc.tagged(a, b, u.NewName)
			}
		}
		sc.every = true
	case DropTag:
		sc.tagged(a, b, c.Name)
		sc.every = true
	case AlterPolicy:
		sc.policyTags(a, b, c.Name)
		for _, u := range c.Updates {
			if u.Type == "rename" {
				sc.policyTags(a, b, u.NewName)
			}
		}
		sc.every = true
	case EnablePolicy:
		sc.policyTags(a, b, c.Name)
		sc.every = true
	case DisablePolicy:
		sc.policyTags(a, b, c.Name)
		sc.every = true
	case DropPolicy:
		sc.policyTags(a, b, c.Name)
		sc.every = true
	case AttachPolicy:
		sc.tagged(a, b, c.Tag)
		sc.objs[Policy(c.Policy)] = true
		sc.every = true
	case DetachPolicy:
		sc.tagged(a, b, c.Tag)
		sc.objs[Policy(c.Policy)] = true
		sc.every = true
	case CreateTag, CreatePolicy:
		// A new tag or policy: metalake-wide grants reach it (its target).
		sc.every = true
	case CreateCatalog, CreateSchema, CreateTable, DropObject, AddColumn, CommitTableVersion, CommitAccessLog:
		sc.every = true
	case RenameObject:
		sc.objs[Object{c.Object.Type, c.NewName}] = true
		sc.every = true
	case AlterObject:
		// Comments and properties decide nothing.
	case CreateDomain:
		if c.BackingTag.Create {
			sc.objs[Tag(c.BackingTag.Name)] = true
		}
		sc.every = true
	case AlterDomain:
		for _, u := range c.Updates {
			if u.Type == "rename" {
				sc.objs[Domain(u.NewName)] = true
			}
		}
		sc.every = true
	case SetDomainStatus, SetDomainParent, DetachDomain, SetDomainBackingTag, DropDomain:
		sc.every = true
	default:
		sc.all, sc.every = true, true
	}
}

// scopeObjects lists the objects of s that sc covers, adding them to out:
// the catalog-tree objects down to tables under each scoped one (a
// column's table, for its reads), subdomains of scoped domains.
func (sc *scope) scopeObjects(s *Snapshot, out map[Object]bool) {
	if sc.all || sc.objs[Object{ObjectMetalake, s.root.name}] {
		p := s.metalakePath()
		walkTree(&p, out)
		for _, n := range sortedKeys(s.tagIDs) {
			out[Tag(n)] = true
		}
		for _, n := range sortedKeys(s.policyIDs) {
			out[Policy(n)] = true
		}
		for _, n := range sortedKeys(s.domainIDs) {
			out[Domain(n)] = true
		}
		return
	}
	for o := range sc.objs {
		switch o.Type {
		case ObjectCatalog, ObjectSchema, ObjectTable:
			if p, ok := s.resolve(o); ok {
				walkTree(&p, out)
			}
		case ObjectColumn:
			if i := strings.LastIndexByte(o.Name, '.'); i > 0 {
				if p, ok := s.resolve(Table(o.Name[:i])); ok {
					out[p.object()] = true
				}
			}
		case ObjectTag:
			if s.tagIDs.Has(o.Name) {
				out[o] = true
			}
		case ObjectPolicy:
			if s.policyIDs.Has(o.Name) {
				out[o] = true
			}
		case ObjectDomain:
			if d, ok := s.domainByName(o.Name); ok {
				out[o] = true
				for _, id := range d.subs {
					if sd, ok := s.domains.Get(id); ok {
						out[Domain(sd.name)] = true
					}
				}
			}
		}
	}
}

// walkTree adds p's leaf and its descendants down to tables.
func walkTree(p *path, out map[Object]bool) {
	out[p.object()] = true
	if p.leaf().typ == ObjectTable {
		return
	}
	p.leaf().children.Range(func(_ string, c child) bool {
		q := *p
		q.objs[q.n] = c.o
		q.n++
		walkTree(&q, out)
		return true
	})
}

// side is one snapshot of a preview with its users resolved once, and the
// grants of each on the parent chain of the objects being decided (objects
// come sorted: the tables of a schema one after the other).
type side struct {
	s      *Snapshot
	who    []who
	bufs   [][roleBufLen]uint64
	parent *object    // the parent grants are of
	pn     int        // the length of its chain
	grants []grantSet // per user: w.chainGrants
	masks  [][]ColumnMask
}

// prepare makes sd.grants those of p's parent chain.
func (sd *side) prepare(p *path, ok bool) {
	if !ok || p.n < 2 || (sd.parent == p.objs[p.n-2] && sd.pn == p.n) {
		return
	}
	sd.parent, sd.pn = p.objs[p.n-2], p.n
	if sd.grants == nil {
		sd.grants = make([]grantSet, len(sd.who))
	}
	for i := range sd.who {
		sd.grants[i] = sd.who[i].chainGrants(p)
	}
}

func newSide(s *Snapshot, users []string) *side {
	sd := &side{s: s, who: make([]who, len(users)), bufs: make([][roleBufLen]uint64, len(users)), masks: make([][]ColumnMask, len(users))}
	for i, u := range users {
		sd.who[i] = s.who(u, sd.bufs[i][:])
	}
	return sd
}

// decide is Authorize for the i-th user (p, ok: o resolved in this
// snapshot, for catalog-tree objects, after prepare).
func (sd *side) decide(i int, priv Privilege, o Object, p *path, ok bool) Decision {
	w := &sd.who[i]
	if w.u == nil {
		return deny(ReasonUnknownPrincipal)
	}
	switch o.Type {
	case ObjectCatalog, ObjectSchema, ObjectTable:
		if !ok {
			return deny(ReasonNotFound)
		}
		return sd.s.decideChain(w, priv, p, &sd.grants[i], nil)
	}
	return sd.s.decide(w, priv, o, nil)
}

// read is what the i-th user's read of the table at p applies, given its
// SELECT_TABLE decision (rr: the table's rules in this snapshot).
func (sd *side) read(i int, rr *readRules, p *path, allowed bool) ReadRule {
	r := ReadRule{Allowed: allowed}
	if !r.Allowed {
		return r
	}
	w := &sd.who[i]
	// The masks go to the user's buffer: a row keeps them only when it is
	// answered (cloned then).
	filter, policy, masks, err := rr.eval(sd.s, w, p, sd.masks[i][:0])
	sd.masks[i] = masks
	if err != nil {
		r.Conflict = err.Error()
		return r
	}
	r.Filter, r.FilterPolicy = filter, policy
	if len(masks) > 0 {
		r.Masks = masks
	}
	return r
}

// diff compares a and b over sc.
func diff(a, b *Snapshot, sc *scope, page Page) Diff {
	objSet := map[Object]bool{}
	sc.scopeObjects(a, objSet)
	sc.scopeObjects(b, objSet)
	objs := make([]Object, 0, len(objSet))
	for o := range objSet {
		if int(o.Type) < len(previewPrivileges) && len(previewPrivileges[o.Type]) > 0 {
			objs = append(objs, o)
		}
	}
	slices.SortFunc(objs, cmpObject)
	var users []string
	if sc.every {
		users = slices.Concat(sortedKeys(a.users), sortedKeys(b.users))
	} else {
		for u := range sc.users {
			users = append(users, u)
		}
	}
	slices.Sort(users)
	users = slices.Compact(users)
	out := Diff{Privileges: []PrivilegeChange{}, Reads: []ReadChange{}, Objects: len(objs), Users: len(users)}
	if len(users) == 0 {
		return out
	}
	// Decide once per class of users that cannot be told apart, for its
	// first member.
	owners := map[string]bool{}
	for _, s := range [...]*Snapshot{a, b} {
		for _, o := range objs {
			s.userOwners(o, owners)
		}
	}
	classOf, reps := userClasses(a, b, users, owners)
	sa, sb := newSide(a, reps), newSide(b, reps)
	da, db := make([]Decision, len(reps)), make([]Decision, len(reps))
	ra, rb := make([]ReadRule, len(reps)), make([]ReadRule, len(reps))
	selA, selB := make([]bool, len(reps)), make([]bool, len(reps)) // SELECT_TABLE, for reads
	for _, o := range objs {
		pa, oka := a.resolve(o)
		pb, okb := b.resolve(o)
		sa.prepare(&pa, oka)
		sb.prepare(&pb, okb)
		for _, priv := range previewPrivileges[o.Type] {
			for c := range reps {
				da[c], db[c] = sa.decide(c, priv, o, &pa, oka), sb.decide(c, priv, o, &pb, okb)
				if priv == PrivSelectTable {
					selA[c], selB[c] = da[c].Allowed, db[c].Allowed
				}
			}
			for i, u := range users {
				if c := classOf[i]; da[c].Allowed != db[c].Allowed {
					if page.has(out.PrivilegesTotal) {
						out.Privileges = append(out.Privileges, PrivilegeChange{User: u, Object: o, Privilege: priv,
							Gained: db[c].Allowed, Before: da[c].Reason, After: db[c].Reason})
					}
					out.PrivilegesTotal++
				}
			}
		}
		if o.Type != ObjectTable {
			continue
		}
		var rra, rrb readRules
		if oka {
			rra = a.readRulesOf(&pa)
		}
		if okb {
			rrb = b.readRulesOf(&pb)
		}
		if len(rra.filters) == 0 && len(rra.cols) == 0 && len(rrb.filters) == 0 && len(rrb.cols) == 0 {
			continue // no filter or mask either side, for anyone
		}
		for c := range reps {
			ra[c], rb[c] = sa.read(c, &rra, &pa, selA[c]), sb.read(c, &rrb, &pb, selB[c])
		}
		for i, u := range users {
			if c := classOf[i]; !ra[c].sameRules(rb[c]) {
				if page.has(out.ReadsTotal) {
					before, after := ra[c], rb[c]
					before.Masks, after.Masks = slices.Clone(before.Masks), slices.Clone(after.Masks)
					out.Reads = append(out.Reads, ReadChange{User: u, Table: o.Name, Before: before, After: after})
				}
				out.ReadsTotal++
			}
		}
	}
	return out
}

// userOwners adds to out the users (not groups) that own o or, for
// catalog-tree objects and domains, an ancestor of it in s: the only users
// whose decisions on o depend on their names.
func (s *Snapshot) userOwners(o Object, out map[string]bool) {
	add := func(ow Owner) {
		if ow.Type == OwnerUser {
			out[ow.Name] = true
		}
	}
	add(s.root.owner)
	switch o.Type {
	case ObjectDomain:
		if d, ok := s.domainByName(o.Name); ok {
			add(d.owner)
			if par, ok := s.domains.Get(d.parent); ok {
				add(par.owner)
			}
		}
		return
	case ObjectTag, ObjectPolicy, ObjectRole:
		if ow, ok := s.Owner(o); ok {
			add(ow)
		}
		return
	}
	if p, ok := s.resolve(o); ok {
		for i := 0; i < p.n; i++ {
			add(p.objs[i].owner)
		}
	}
}

// userClasses partitions users into classes whose decisions are the same:
// users holding the same roles (by name) through the same groups in both
// snapshots, and owning nothing by name (owners: those who do, each a class
// of its own). It returns each user's class and each class's first member.
func userClasses(a, b *Snapshot, users []string, owners map[string]bool) (classOf []int, reps []string) {
	classOf = make([]int, len(users))
	ids := map[string]int{}
	var key []byte
	for i, u := range users {
		key = key[:0]
		if owners[u] {
			key = append(key, "owner\x00"...)
			key = append(key, u...)
		} else {
			for _, s := range [...]*Snapshot{a, b} {
				key = s.roleKey(key, u)
			}
		}
		c, ok := ids[string(key)]
		if !ok {
			c = len(reps)
			ids[string(key)] = c
			reps = append(reps, u)
		}
		classOf[i] = c
	}
	return classOf, reps
}

// roleKey appends what decisions know of user u in s besides its name: its
// existence, groups and roles (direct and per group).
func (s *Snapshot) roleKey(key []byte, u string) []byte {
	us, ok := s.users.Get(u)
	if !ok {
		return append(key, "-\x01"...)
	}
	key = append(key, "+\x00"...)
	for _, r := range us.roles {
		key = append(append(key, r...), 0)
	}
	for _, gn := range us.groups {
		key = append(append(append(key, 1), gn...), 0)
		if g, ok := s.groups.Get(gn); ok {
			for _, r := range g.roles {
				key = append(append(key, r...), 0)
			}
		}
	}
	return append(key, 1)
}
