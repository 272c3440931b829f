package catalog

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"lakegate/catalog/internal/pmap"
)

// snapshotMagic prefixes serialized snapshots (format version 3: domains).
// UnmarshalSnapshot also restores format 2 (tables have storage ids and
// versions; no domains) and format 1, whose tables get their derived
// storage id and version 0.
const (
	snapshotMagic   = "lakegate-catalog-snapshot-v3\n"
	snapshotMagicV2 = "lakegate-catalog-snapshot-v2\n"
	snapshotMagicV1 = "lakegate-catalog-snapshot-v1\n"
)

type snapFile struct {
	Metalake   string      `json:"metalake"`
	Generation uint64      `json:"generation"`
	Index      uint64      `json:"index"`
	NextID     uint64      `json:"nextId"`
	Rules      int         `json:"rules,omitempty"` // rule level; absent: RulesOriginal
	Objects    []objRec    `json:"objects"`
	Users      []userRec   `json:"users"`
	Groups     []groupRec  `json:"groups"`
	Roles      []roleRec   `json:"roles"`
	Tags       []tagRec    `json:"tags"`
	Policies   []policyRec `json:"policies"`
	Domains    []domainRec `json:"domains,omitempty"` // format 3
}

type domainRec struct {
	ID          uint64            `json:"id"`
	Name        string            `json:"name"`
	Comment     string            `json:"comment,omitempty"`
	Props       map[string]string `json:"properties,omitempty"`
	Status      DomainStatus      `json:"status"`
	Owner       Owner             `json:"owner"`
	Parent      uint64            `json:"parent,omitempty"`
	ParentAudit Audit             `json:"parentAudit,omitzero"`
	Tag         uint64            `json:"tag,omitempty"`
	Value       string            `json:"value,omitempty"`
	Audit       Audit             `json:"audit"`
}

type objRec struct {
	ID       uint64            `json:"id"`
	Parent   uint64            `json:"parent"`
	Type     ObjectType        `json:"type"`
	Name     string            `json:"name"`
	Owner    *Owner            `json:"owner,omitempty"`
	Comment  string            `json:"comment,omitempty"`
	Props    map[string]string `json:"properties,omitempty"`
	Kind     string            `json:"kind,omitempty"`
	Nullable bool              `json:"nullable,omitempty"`
	Audit    Audit             `json:"audit"`
	Columns  []string          `json:"columns,omitempty"`
	Tags     []assignRec       `json:"tags,omitempty"`
	// Format 2, tables only.
	StorageID string       `json:"storageId,omitempty"`
	Versions  []versionRec `json:"versions,omitempty"` // oldest first
}

type versionRec struct {
	Version uint64      `json:"version"`
	Columns []ColumnDef `json:"columns"`
	Files   []DataFile  `json:"files"`
	Rows    int64       `json:"rows"`
	Actor   string      `json:"actor"`
	Time    time.Time   `json:"time"`
}

type assignRec struct {
	Tag    uint64   `json:"tag"`
	Values []string `json:"values,omitempty"`
}

type userRec struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles,omitempty"`
	Audit Audit    `json:"audit"`
}

type groupRec struct {
	Name    string   `json:"name"`
	Members []string `json:"members,omitempty"`
	Roles   []string `json:"roles,omitempty"`
	Audit   Audit    `json:"audit"`
}

type roleRec struct {
	ID     uint64            `json:"id"`
	Name   string            `json:"name"`
	Owner  Owner             `json:"owner"`
	Props  map[string]string `json:"properties,omitempty"`
	Audit  Audit             `json:"audit"`
	Grants []grantRec        `json:"grants,omitempty"`
}

type grantRec struct {
	Type  ObjectType  `json:"type"`
	ID    uint64      `json:"id"`
	Allow []Privilege `json:"allow,omitempty"`
	Deny  []Privilege `json:"deny,omitempty"`
}

type tagRec struct {
	ID       uint64            `json:"id"`
	Name     string            `json:"name"`
	Comment  string            `json:"comment,omitempty"`
	Props    map[string]string `json:"properties,omitempty"`
	AnyValue bool              `json:"anyValue,omitempty"`
	Allowed  []string          `json:"allowedValues,omitempty"`
	Owner    Owner             `json:"owner"`
	Audit    Audit             `json:"audit"`
	Policies []attRec          `json:"policies,omitempty"`
}

type attRec struct {
	Policy   uint64   `json:"policy"`
	Selector Selector `json:"selector"`
}

type policyRec struct {
	ID      uint64        `json:"id"`
	Name    string        `json:"name"`
	Comment string        `json:"comment,omitempty"`
	Type    PolicyType    `json:"type"`
	Enabled bool          `json:"enabled"`
	Content PolicyContent `json:"content"`
	Owner   Owner         `json:"owner"`
	Audit   Audit         `json:"audit"`
}

func privList(s privSet) []Privilege {
	var out []Privilege
	for p := Privilege(1); p <= numPrivileges; p++ {
		if s.has(p) {
			out = append(out, p)
		}
	}
	return out
}

func privBits(ps []Privilege) (privSet, bool) {
	var s privSet
	for _, p := range ps {
		if !p.Valid() {
			return 0, false
		}
		s |= 1 << p
	}
	return s, true
}

// MarshalBinary serializes the snapshot. The bytes depend only on the
// snapshot's content (equal snapshots give equal bytes); UnmarshalSnapshot
// restores it losslessly.
func (s *Snapshot) MarshalBinary() ([]byte, error) {
	f := snapFile{Metalake: s.root.name, Generation: s.gen, Index: s.index, NextID: s.nextID, Rules: int(s.rules)}
	var walk func(o *object)
	walk = func(o *object) {
		r := objRec{ID: o.id, Parent: o.parent, Type: o.typ, Name: o.name, Comment: o.comment,
			Props: o.props, Kind: o.kind, Nullable: o.nullable, Audit: o.audit, Columns: o.columns}
		if o.owner.Type != 0 {
			ow := o.owner
			r.Owner = &ow
		}
		for _, a := range o.tags {
			r.Tags = append(r.Tags, assignRec{Tag: a.tag, Values: a.values})
		}
		if o.data != nil {
			r.StorageID = o.data.storage
			for _, v := range o.data.versions {
				r.Versions = append(r.Versions, versionRec{Version: v.version, Columns: v.columns,
					Files: v.files, Rows: v.rows, Actor: v.actor, Time: v.time})
			}
		}
		f.Objects = append(f.Objects, r)
		o.children.Range(func(_ string, c child) bool { walk(c.o); return true })
	}
	walk(s.root)
	slices.SortFunc(f.Objects, func(a, b objRec) int { return cmpU64(a.ID, b.ID) })
	for _, n := range sortedKeys(s.users) {
		u, _ := s.users.Get(n)
		f.Users = append(f.Users, userRec{Name: u.name, Roles: u.roles, Audit: u.audit})
	}
	for _, n := range sortedKeys(s.groups) {
		g, _ := s.groups.Get(n)
		f.Groups = append(f.Groups, groupRec{Name: g.name, Members: g.members, Roles: g.roles, Audit: g.audit})
	}
	for _, n := range sortedKeys(s.roles) {
		r, _ := s.roles.Get(n)
		rr := roleRec{ID: r.id, Name: r.name, Owner: r.owner, Props: r.props, Audit: r.audit}
		for _, g := range r.grants {
			rr.Grants = append(rr.Grants, grantRec{Type: g.typ, ID: g.id, Allow: privList(g.allow), Deny: privList(g.deny)})
		}
		f.Roles = append(f.Roles, rr)
	}
	tagIDs := s.tags.Keys()
	slices.Sort(tagIDs)
	for _, id := range tagIDs {
		t, _ := s.tags.Get(id)
		tr := tagRec{ID: t.id, Name: t.name, Comment: t.comment, Props: t.props, AnyValue: t.anyValue,
			Allowed: t.allowed, Owner: t.owner, Audit: t.audit}
		for _, a := range t.policies {
			tr.Policies = append(tr.Policies, attRec{Policy: a.policy, Selector: a.sel})
		}
		f.Tags = append(f.Tags, tr)
	}
	polIDs := s.policies.Keys()
	slices.Sort(polIDs)
	for _, id := range polIDs {
		p, _ := s.policies.Get(id)
		f.Policies = append(f.Policies, policyRec{ID: p.id, Name: p.name, Comment: p.comment, Type: p.typ,
			Enabled: p.enabled, Content: p.content, Owner: p.owner, Audit: p.audit})
	}
	domIDs := s.domains.Keys()
	slices.Sort(domIDs)
	for _, id := range domIDs {
		d, _ := s.domains.Get(id)
		f.Domains = append(f.Domains, domainRec{ID: d.id, Name: d.name, Comment: d.comment, Props: d.props,
			Status: d.status(), Owner: d.owner, Parent: d.parent, ParentAudit: d.relAudit, Tag: d.tag,
			Value: d.value, Audit: d.audit})
	}
	body, err := json.Marshal(&f)
	if err != nil {
		return nil, errf(ErrInvalidSnapshot, err.Error())
	}
	return append([]byte(snapshotMagic), body...), nil
}

// UnmarshalSnapshot restores a snapshot written by MarshalBinary, checking its
// consistency. Errors wrap ErrInvalidSnapshot.
func UnmarshalSnapshot(b []byte) (*Snapshot, error) {
	v1 := bytes.HasPrefix(b, []byte(snapshotMagicV1))
	v2 := bytes.HasPrefix(b, []byte(snapshotMagicV2))
	if !v1 && !v2 && !bytes.HasPrefix(b, []byte(snapshotMagic)) {
		return nil, errf(ErrInvalidSnapshot, "bad header")
	}
	var f snapFile
	if err := strict(b[len(snapshotMagic):], &f); err != nil {
		return nil, errf(ErrInvalidSnapshot, err.Error())
	}
	if (v1 || v2) && f.Domains != nil {
		return nil, errf(ErrInvalidSnapshot, "domains in a format 1 or 2 snapshot")
	}
	if v1 {
		for _, r := range f.Objects {
			if r.StorageID != "" || r.Versions != nil {
				return nil, errf(ErrInvalidSnapshot, "object "+itoa(r.ID)+": table data in a format 1 snapshot")
			}
		}
	}
	s, err := restore(&f)
	if err != nil {
		return nil, errf(ErrInvalidSnapshot, strings.TrimPrefix(err.Error(), "catalog: "))
	}
	return s, nil
}

// restore builds the snapshot f describes, checking it section by section
// in this order (a snapshot with several faults reports the first):
// objects, the tree's parents, policies, tags, tag assignments, domains,
// users, groups, roles with their grants, role bindings, the indexes, then
// the linked tree. Each section reads only what the earlier ones restored.
func restore(f *snapFile) (*Snapshot, error) {
	s := emptySnapshot()
	s.gen, s.index, s.nextID = f.Generation, f.Index, f.NextID
	if f.Rules < RulesOriginal || f.Rules > CurrentRules {
		return nil, badSnapshot("unknown rule level " + itoa(uint64(max(f.Rules, 0))))
	}
	s.rules = uint8(f.Rules)
	r := &restoring{s: s, f: f, objs: make(map[uint64]*object, len(f.Objects))}
	for _, section := range []func() error{
		r.objects, r.parents, r.policies, r.tags, r.assignments, r.domains,
		r.users, r.groups, r.roles, r.roleBindings, r.index, r.link,
	} {
		if err := section(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func badSnapshot(msg string) error { return errf(ErrInvalidSnapshot, msg) }

// restoring is one restore under way: the snapshot being built, which no
// one else sees yet (so its records may still be modified in place), and
// the objects of the tree by id and by depth.
type restoring struct {
	s       *Snapshot
	f       *snapFile
	objs    map[uint64]*object
	byDepth [5][]*object
}

// objects restores the tree's objects (unlinked), their table data and
// their tag assignments.
func (r *restoring) objects() error {
	s, f := r.s, r.f
	for _, rec := range f.Objects {
		d := rec.Type.depth()
		if d < 0 || rec.ID == 0 || rec.ID >= f.NextID || r.objs[rec.ID] != nil {
			return badSnapshot("object " + itoa(rec.ID) + ": bad id or type")
		}
		if (d == 0) != (rec.ID == metalakeID) {
			return badSnapshot("metalake must have id 1")
		}
		if d == 0 {
			if CheckEntityName(rec.Name) != nil || rec.Name != f.Metalake {
				return badSnapshot("bad metalake name")
			}
		} else if CheckNamePart(rec.Name) != nil && (rec.Type != ObjectSchema || rec.Name != SystemSchema) {
			// A catalog's system schema, which only CommitAccessLog
			// creates, is the one object named "system".
			return badSnapshot("object " + itoa(rec.ID) + ": bad name")
		}
		o := &object{id: rec.ID, typ: rec.Type, name: rec.Name, parent: rec.Parent, comment: rec.Comment, props: rec.Props,
			kind: rec.Kind, nullable: rec.Nullable, audit: rec.Audit, columns: rec.Columns, children: pmap.NewString[child]()}
		if rec.Owner != nil {
			o.owner = *rec.Owner
		}
		if rec.Type == ObjectTable {
			d, err := restoreTableData(&rec)
			if err != nil {
				return err
			}
			if s.storageIDs.Has(d.storage) {
				return badSnapshot("object " + itoa(rec.ID) + ": duplicate storage id")
			}
			s.storageIDs = s.storageIDs.Set(d.storage, rec.ID)
			o.data = d
		} else if rec.StorageID != "" || rec.Versions != nil {
			return badSnapshot("object " + itoa(rec.ID) + ": storage on a non-table")
		}
		var prev uint64
		for _, a := range rec.Tags {
			if a.Tag <= prev || !slices.IsSorted(a.Values) {
				return badSnapshot("object " + itoa(rec.ID) + ": unsorted tags")
			}
			prev = a.Tag
			o.tags = append(o.tags, assignment{tag: a.Tag, values: a.Values})
		}
		r.objs[rec.ID] = o
		r.byDepth[d] = append(r.byDepth[d], o)
	}
	return nil
}

// parents checks that there is one metalake and that every other object's
// parent is an object one level up.
func (r *restoring) parents() error {
	if len(r.byDepth[0]) != 1 {
		return badSnapshot("missing metalake")
	}
	for d := 1; d <= 4; d++ {
		for _, o := range r.byDepth[d] {
			if p := r.objs[o.parent]; p == nil || p.typ.depth() != d-1 {
				return badSnapshot("object " + itoa(o.id) + ": bad parent")
			}
		}
	}
	return nil
}

func (r *restoring) policies() error {
	s, f := r.s, r.f
	for _, rec := range f.Policies {
		if rec.ID == 0 || rec.ID >= f.NextID || r.objs[rec.ID] != nil || s.policies.Has(rec.ID) || s.policyIDs.Has(rec.Name) || CheckEntityName(rec.Name) != nil {
			return badSnapshot("policy " + itoa(rec.ID) + ": bad id or name")
		}
		ps, ok := privBits(rec.Content.Privileges)
		if !ok {
			return badSnapshot("policy " + itoa(rec.ID) + ": bad privileges")
		}
		p := &policy{id: rec.ID, name: rec.Name, comment: rec.Comment, typ: rec.Type, enabled: rec.Enabled,
			content: rec.Content, privs: ps, owner: rec.Owner, audit: rec.Audit}
		s.policies = s.policies.Set(p.id, p)
		s.policyIDs = s.policyIDs.Set(p.name, p.id)
	}
	return nil
}

// tags restores the tags with their policy attachments, and the
// attachments' side on the policies.
func (r *restoring) tags() error {
	s, f := r.s, r.f
	for _, rec := range f.Tags {
		if rec.ID == 0 || rec.ID >= f.NextID || r.objs[rec.ID] != nil || s.policies.Has(rec.ID) || s.tags.Has(rec.ID) || s.tagIDs.Has(rec.Name) || CheckEntityName(rec.Name) != nil {
			return badSnapshot("tag " + itoa(rec.ID) + ": bad id or name")
		}
		t := &tag{id: rec.ID, name: rec.Name, comment: rec.Comment, props: rec.Props, anyValue: rec.AnyValue,
			owner: rec.Owner, audit: rec.Audit, objects: pmap.NewUint64[struct{}]()}
		if !rec.AnyValue {
			t.allowed = rec.Allowed
			if t.allowed == nil {
				t.allowed = []string{}
			}
		} else if len(rec.Allowed) > 0 {
			return badSnapshot("tag " + itoa(rec.ID) + ": allowed values with anyValue")
		}
		var prev uint64
		for _, a := range rec.Policies {
			p, ok := s.policies.Get(a.Policy)
			if !ok || a.Policy <= prev {
				return badSnapshot("tag " + itoa(rec.ID) + ": bad policy attachment")
			}
			prev = a.Policy
			t.policies = append(t.policies, attachment{policy: a.Policy, sel: a.Selector})
			np := p.clone()
			np.tags = append(slices.Clip(np.tags), t.id) // tags visited in id order
			s.policies = s.policies.Set(np.id, np)
		}
		s.tags = s.tags.Set(t.id, t)
		s.tagIDs = s.tagIDs.Set(t.name, t.id)
	}
	return nil
}

// assignments records on each tag the objects that carry it.
func (r *restoring) assignments() error {
	for _, rec := range r.f.Objects {
		for _, a := range rec.Tags {
			t, ok := r.s.tags.Get(a.Tag)
			if !ok {
				return badSnapshot("object " + itoa(rec.ID) + ": unknown tag")
			}
			t.objects = t.objects.Set(rec.ID, struct{}{})
		}
	}
	return nil
}

// domains restores the domains with their parent links and checks
// CheckDomainInvariants.
func (r *restoring) domains() error {
	s, f := r.s, r.f
	var prev uint64
	for _, rec := range f.Domains {
		if rec.ID <= prev || rec.ID >= f.NextID || r.objs[rec.ID] != nil || s.tags.Has(rec.ID) || s.policies.Has(rec.ID) ||
			CheckEntityName(rec.Name) != nil || s.domainIDs.Has(rec.Name) {
			return badSnapshot("domain " + itoa(rec.ID) + ": bad id or name")
		}
		prev = rec.ID
		if rec.Status != DomainDraft && rec.Status != DomainPublished {
			return badSnapshot("domain " + itoa(rec.ID) + ": bad status")
		}
		if rec.Parent == 0 && rec.ParentAudit != (Audit{}) {
			return badSnapshot("domain " + itoa(rec.ID) + ": edge audit without a parent")
		}
		d := &domain{id: rec.ID, name: rec.Name, comment: rec.Comment, props: rec.Props, published: rec.Status == DomainPublished,
			owner: rec.Owner, parent: rec.Parent, relAudit: rec.ParentAudit, tag: rec.Tag, value: rec.Value, audit: rec.Audit}
		s.domains = s.domains.Set(d.id, d)
		s.domainIDs = s.domainIDs.Set(d.name, d.id)
	}
	for _, rec := range f.Domains { // ids ascending: subs stay sorted
		if rec.Parent == 0 {
			continue
		}
		p, ok := s.domains.Get(rec.Parent)
		if !ok {
			return badSnapshot("domain " + itoa(rec.ID) + ": unknown parent")
		}
		p.subs = append(p.subs, rec.ID)
	}
	if err := s.CheckDomainInvariants(); err != nil {
		return badSnapshot(strings.TrimPrefix(err.Error(), "catalog: "))
	}
	return nil
}

func (r *restoring) users() error {
	for _, rec := range r.f.Users {
		if CheckEntityName(rec.Name) != nil || r.s.users.Has(rec.Name) || !slices.IsSorted(rec.Roles) {
			return badSnapshot("user " + quote(rec.Name) + ": bad record")
		}
		r.s.users = r.s.users.Set(rec.Name, &user{name: rec.Name, roles: rec.Roles, audit: rec.Audit})
	}
	return nil
}

// groups restores the groups and their side on their members.
func (r *restoring) groups() error {
	s := r.s
	for _, rec := range r.f.Groups {
		if CheckEntityName(rec.Name) != nil || s.groups.Has(rec.Name) || !slices.IsSorted(rec.Roles) || !slices.IsSorted(rec.Members) {
			return badSnapshot("group " + quote(rec.Name) + ": bad record")
		}
		for _, m := range rec.Members {
			u, ok := s.users.Get(m)
			if !ok {
				return badSnapshot("group " + quote(rec.Name) + ": unknown member")
			}
			u.groups = append(u.groups, rec.Name) // groups visited in name order
		}
		s.groups = s.groups.Set(rec.Name, &group{name: rec.Name, members: rec.Members, roles: rec.Roles, audit: rec.Audit})
	}
	return nil
}

// roles restores the roles and their grants, on both sides: the role's
// list and the granted object's (sorted by index).
func (r *restoring) roles() error {
	s, f := r.s, r.f
	for _, rec := range f.Roles {
		if CheckEntityName(rec.Name) != nil || s.roles.Has(rec.Name) || rec.ID == 0 || rec.ID >= f.NextID || s.roleByID.Has(rec.ID) ||
			r.objs[rec.ID] != nil || s.tags.Has(rec.ID) || s.policies.Has(rec.ID) || s.domains.Has(rec.ID) {
			return badSnapshot("role " + quote(rec.Name) + ": bad record")
		}
		ro := &role{id: rec.ID, name: rec.Name, owner: rec.Owner, props: rec.Props, audit: rec.Audit}
		s.roleByID = s.roleByID.Set(rec.ID, rec.Name)
		for _, g := range rec.Grants {
			og, err := r.grant(rec.Name, rec.ID, g)
			if err != nil {
				return err
			}
			ro.grants = append(ro.grants, og)
		}
		if !slices.IsSortedFunc(ro.grants, cmpObjGrant) {
			return badSnapshot("role " + quote(rec.Name) + ": unsorted grants")
		}
		s.roles = s.roles.Set(rec.Name, ro)
	}
	return nil
}

// grant restores one grant of role name (id) on the granted object's side
// and returns the role's side of it.
func (r *restoring) grant(name string, id uint64, g grantRec) (objGrant, error) {
	s := r.s
	bad := func(msg string) (objGrant, error) { return objGrant{}, badSnapshot("role " + quote(name) + ": " + msg) }
	a, ok1 := privBits(g.Allow)
	d, ok2 := privBits(g.Deny)
	if !ok1 || !ok2 || a&d != 0 {
		return bad("bad grant")
	}
	rg := roleGrant{role: id, allow: a, deny: d}
	switch g.Type {
	case ObjectTag:
		t, ok := s.tags.Get(g.ID)
		if !ok {
			return bad("grant on unknown tag")
		}
		t.grants = append(t.grants, rg)
	case ObjectPolicy:
		p, ok := s.policies.Get(g.ID)
		if !ok {
			return bad("grant on unknown policy")
		}
		np := p.clone()
		np.grants = append(slices.Clip(np.grants), rg)
		s.policies = s.policies.Set(np.id, np)
	case ObjectDomain:
		d, ok := s.domains.Get(g.ID)
		if !ok {
			return bad("grant on unknown domain")
		}
		d.grants = append(d.grants, rg)
	default:
		o := r.objs[g.ID]
		if o == nil || o.typ != g.Type {
			return bad("grant on unknown object")
		}
		o.grants = append(o.grants, rg)
	}
	for _, p := range privList(a | d) {
		if !p.CanBindTo(g.Type) {
			return bad("unbindable grant")
		}
	}
	return objGrant{typ: g.Type, id: g.ID, allow: a, deny: d}, nil
}

// roleBindings resolves the roles of users and groups to role ids.
func (r *restoring) roleBindings() error {
	s := r.s
	roleIDs := func(names []string) ([]uint64, bool) {
		var ids []uint64
		for _, n := range names {
			ro, ok := s.roles.Get(n)
			if !ok {
				return nil, false
			}
			ids, _ = insertU64(ids, ro.id)
		}
		return ids, true
	}
	for _, rec := range r.f.Users {
		u, _ := s.users.Get(rec.Name)
		ids, ok := roleIDs(rec.Roles)
		if !ok {
			return badSnapshot("user " + quote(rec.Name) + ": unknown role")
		}
		u.roleIDs = ids
	}
	for _, rec := range r.f.Groups {
		g, _ := s.groups.Get(rec.Name)
		ids, ok := roleIDs(rec.Roles)
		if !ok {
			return badSnapshot("group " + quote(rec.Name) + ": unknown role")
		}
		g.roleIDs = ids
	}
	return nil
}

// index sorts the grants on every object, tag, policy and domain by role
// id and builds the tags' system_access_control index.
func (r *restoring) index() error {
	s := r.s
	byRole := func(a, b roleGrant) int { return cmpU64(a.role, b.role) }
	for _, o := range r.objs {
		slices.SortFunc(o.grants, byRole)
	}
	s.tags.Range(func(_ uint64, t *tag) bool { slices.SortFunc(t.grants, byRole); return true })
	s.policies.Range(func(_ uint64, p *policy) bool { slices.SortFunc(p.grants, byRole); return true })
	s.domains.Range(func(_ uint64, d *domain) bool { slices.SortFunc(d.grants, byRole); return true })
	for _, id := range s.tags.Keys() {
		s.reindexTag(id)
	}
	return nil
}

// link links the tree bottom-up now that every record is complete, checks
// each table's column list, and sets the root.
func (r *restoring) link() error {
	s := r.s
	for d := 4; d >= 1; d-- {
		for _, o := range r.byDepth[d] {
			p := r.objs[o.parent]
			if p == nil || p.typ.depth() != d-1 {
				return badSnapshot("object " + itoa(o.id) + ": bad parent")
			}
			if p.children.Has(o.name) {
				return badSnapshot("object " + itoa(o.id) + ": duplicate name")
			}
			p.children = p.children.Set(o.name, mkChild(o))
			s.locs = s.locs.Set(o.id, loc{parent: o.parent, name: o.name, typ: o.typ})
		}
	}
	for _, o := range r.byDepth[3] {
		if len(o.columns) != o.children.Len() {
			return badSnapshot("table " + itoa(o.id) + ": column list mismatch")
		}
		for _, c := range o.columns {
			if !o.children.Has(c) {
				return badSnapshot("table " + itoa(o.id) + ": column list mismatch")
			}
		}
	}
	s.root = r.byDepth[0][0]
	s.locs = s.locs.Set(metalakeID, loc{typ: ObjectMetalake, name: s.root.name})
	return nil
}

// restoreTableData checks and restores a table's storage id and versions; a
// format 1 record (no storage id) gets the derived one.
func restoreTableData(r *objRec) (*tableData, error) {
	bad := func(msg string) (*tableData, error) {
		return nil, errf(ErrInvalidSnapshot, "table "+itoa(r.ID)+": "+msg)
	}
	d := &tableData{storage: r.StorageID}
	if d.storage == "" {
		if len(r.Versions) > 0 {
			return bad("versions without a storage id")
		}
		d.storage = derivedStorageID(r.ID)
	} else if checkStorageID(d.storage) != nil {
		return bad("bad storage id")
	}
	if len(r.Versions) > RetainedVersions+1 {
		return bad("too many versions")
	}
	for i, v := range r.Versions {
		if v.Version == 0 || (i > 0 && v.Version != r.Versions[i-1].Version+1) {
			return bad("bad version numbers")
		}
		for _, c := range v.Columns {
			if checkColumn(c) != nil {
				return bad("bad column in version " + itoa(v.Version))
			}
		}
		files, rows, err := buildFiles(d.storage, nil, v.Files)
		if err != nil || rows != v.Rows {
			return bad("bad files in version " + itoa(v.Version))
		}
		d.versions = append(d.versions, &tableVersion{version: v.Version, columns: v.Columns, files: files,
			rows: v.Rows, actor: v.Actor, time: normTime(v.Time)})
	}
	return d, nil
}
