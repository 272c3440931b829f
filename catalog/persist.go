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

func restore(f *snapFile) (*Snapshot, error) {
	bad := func(msg string) (*Snapshot, error) { return nil, errf(ErrInvalidSnapshot, msg) }
	s := emptySnapshot()
	s.gen, s.index, s.nextID = f.Generation, f.Index, f.NextID
	if f.Rules < RulesOriginal || f.Rules > CurrentRules {
		return bad("unknown rule level " + itoa(uint64(max(f.Rules, 0))))
	}
	s.rules = uint8(f.Rules)
	objs := make(map[uint64]*object, len(f.Objects))
	byDepth := [5][]*object{}
	for _, r := range f.Objects {
		d := r.Type.depth()
		if d < 0 || r.ID == 0 || r.ID >= f.NextID || objs[r.ID] != nil {
			return bad("object " + itoa(r.ID) + ": bad id or type")
		}
		if (d == 0) != (r.ID == metalakeID) {
			return bad("metalake must have id 1")
		}
		if d == 0 {
			if CheckEntityName(r.Name) != nil || r.Name != f.Metalake {
				return bad("bad metalake name")
			}
		} else if CheckNamePart(r.Name) != nil {
			return bad("object " + itoa(r.ID) + ": bad name")
		}
		o := &object{id: r.ID, typ: r.Type, name: r.Name, parent: r.Parent, comment: r.Comment, props: r.Props,
			kind: r.Kind, nullable: r.Nullable, audit: r.Audit, columns: r.Columns, children: pmap.NewString[child]()}
		if r.Owner != nil {
			o.owner = *r.Owner
		}
		if r.Type == ObjectTable {
			d, err := restoreTableData(&r)
			if err != nil {
				return nil, err
			}
			if s.storageIDs.Has(d.storage) {
				return bad("object " + itoa(r.ID) + ": duplicate storage id")
			}
			s.storageIDs = s.storageIDs.Set(d.storage, r.ID)
			o.data = d
		} else if r.StorageID != "" || r.Versions != nil {
			return bad("object " + itoa(r.ID) + ": storage on a non-table")
		}
		var prev uint64
		for _, a := range r.Tags {
			if a.Tag <= prev || !slices.IsSorted(a.Values) {
				return bad("object " + itoa(r.ID) + ": unsorted tags")
			}
			prev = a.Tag
			o.tags = append(o.tags, assignment{tag: a.Tag, values: a.Values})
		}
		objs[r.ID] = o
		byDepth[d] = append(byDepth[d], o)
	}
	if len(byDepth[0]) != 1 {
		return bad("missing metalake")
	}
	for d := 1; d <= 4; d++ {
		for _, o := range byDepth[d] {
			if p := objs[o.parent]; p == nil || p.typ.depth() != d-1 {
				return bad("object " + itoa(o.id) + ": bad parent")
			}
		}
	}
	// Tags and policies.
	for _, r := range f.Policies {
		if r.ID == 0 || r.ID >= f.NextID || objs[r.ID] != nil || s.policies.Has(r.ID) || s.policyIDs.Has(r.Name) || CheckEntityName(r.Name) != nil {
			return bad("policy " + itoa(r.ID) + ": bad id or name")
		}
		ps, ok := privBits(r.Content.Privileges)
		if !ok {
			return bad("policy " + itoa(r.ID) + ": bad privileges")
		}
		p := &policy{id: r.ID, name: r.Name, comment: r.Comment, typ: r.Type, enabled: r.Enabled,
			content: r.Content, privs: ps, owner: r.Owner, audit: r.Audit}
		s.policies = s.policies.Set(p.id, p)
		s.policyIDs = s.policyIDs.Set(p.name, p.id)
	}
	for _, r := range f.Tags {
		if r.ID == 0 || r.ID >= f.NextID || objs[r.ID] != nil || s.policies.Has(r.ID) || s.tags.Has(r.ID) || s.tagIDs.Has(r.Name) || CheckEntityName(r.Name) != nil {
			return bad("tag " + itoa(r.ID) + ": bad id or name")
		}
		t := &tag{id: r.ID, name: r.Name, comment: r.Comment, props: r.Props, anyValue: r.AnyValue,
			owner: r.Owner, audit: r.Audit, objects: pmap.NewUint64[struct{}]()}
		if !r.AnyValue {
			t.allowed = r.Allowed
			if t.allowed == nil {
				t.allowed = []string{}
			}
		} else if len(r.Allowed) > 0 {
			return bad("tag " + itoa(r.ID) + ": allowed values with anyValue")
		}
		var prev uint64
		for _, a := range r.Policies {
			p, ok := s.policies.Get(a.Policy)
			if !ok || a.Policy <= prev {
				return bad("tag " + itoa(r.ID) + ": bad policy attachment")
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
	for _, r := range f.Objects {
		for _, a := range r.Tags {
			t, ok := s.tags.Get(a.Tag)
			if !ok {
				return bad("object " + itoa(r.ID) + ": unknown tag")
			}
			t.objects = t.objects.Set(r.ID, struct{}{}) // t is still private to restore
		}
	}
	if err := restoreDomains(s, f, objs); err != nil {
		return nil, err
	}
	// Users, groups, roles.
	for _, r := range f.Users {
		if CheckEntityName(r.Name) != nil || s.users.Has(r.Name) || !slices.IsSorted(r.Roles) {
			return bad("user " + quote(r.Name) + ": bad record")
		}
		s.users = s.users.Set(r.Name, &user{name: r.Name, roles: r.Roles, audit: r.Audit})
	}
	for _, r := range f.Groups {
		if CheckEntityName(r.Name) != nil || s.groups.Has(r.Name) || !slices.IsSorted(r.Roles) || !slices.IsSorted(r.Members) {
			return bad("group " + quote(r.Name) + ": bad record")
		}
		for _, m := range r.Members {
			u, ok := s.users.Get(m)
			if !ok {
				return bad("group " + quote(r.Name) + ": unknown member")
			}
			u.groups = append(u.groups, r.Name) // groups visited in name order
		}
		s.groups = s.groups.Set(r.Name, &group{name: r.Name, members: r.Members, roles: r.Roles, audit: r.Audit})
	}
	for _, r := range f.Roles {
		if CheckEntityName(r.Name) != nil || s.roles.Has(r.Name) || r.ID == 0 || r.ID >= f.NextID || s.roleByID.Has(r.ID) ||
			objs[r.ID] != nil || s.tags.Has(r.ID) || s.policies.Has(r.ID) || s.domains.Has(r.ID) {
			return bad("role " + quote(r.Name) + ": bad record")
		}
		ro := &role{id: r.ID, name: r.Name, owner: r.Owner, props: r.Props, audit: r.Audit}
		s.roleByID = s.roleByID.Set(r.ID, r.Name)
		for _, g := range r.Grants {
			a, ok1 := privBits(g.Allow)
			d, ok2 := privBits(g.Deny)
			if !ok1 || !ok2 || a&d != 0 {
				return bad("role " + quote(r.Name) + ": bad grant")
			}
			rg := roleGrant{role: r.ID, allow: a, deny: d}
			switch g.Type {
			case ObjectTag:
				t, ok := s.tags.Get(g.ID)
				if !ok {
					return bad("role " + quote(r.Name) + ": grant on unknown tag")
				}
				t.grants = append(t.grants, rg)
			case ObjectPolicy:
				p, ok := s.policies.Get(g.ID)
				if !ok {
					return bad("role " + quote(r.Name) + ": grant on unknown policy")
				}
				np := p.clone()
				np.grants = append(slices.Clip(np.grants), rg)
				s.policies = s.policies.Set(np.id, np)
			case ObjectDomain:
				d, ok := s.domains.Get(g.ID)
				if !ok {
					return bad("role " + quote(r.Name) + ": grant on unknown domain")
				}
				d.grants = append(d.grants, rg) // d is still private to restore
			default:
				o := objs[g.ID]
				if o == nil || o.typ != g.Type {
					return bad("role " + quote(r.Name) + ": grant on unknown object")
				}
				o.grants = append(o.grants, rg)
			}
			for _, p := range privList(a | d) {
				if !p.CanBindTo(g.Type) {
					return bad("role " + quote(r.Name) + ": unbindable grant")
				}
			}
			ro.grants = append(ro.grants, objGrant{typ: g.Type, id: g.ID, allow: a, deny: d})
		}
		if !slices.IsSortedFunc(ro.grants, cmpObjGrant) {
			return bad("role " + quote(r.Name) + ": unsorted grants")
		}
		s.roles = s.roles.Set(r.Name, ro)
	}
	roleIDs := func(names []string) ([]uint64, bool) {
		var ids []uint64
		for _, n := range names {
			r, ok := s.roles.Get(n)
			if !ok {
				return nil, false
			}
			ids, _ = insertU64(ids, r.id)
		}
		return ids, true
	}
	for _, r := range f.Users {
		u, _ := s.users.Get(r.Name)
		ids, ok := roleIDs(r.Roles)
		if !ok {
			return bad("user " + quote(r.Name) + ": unknown role")
		}
		u.roleIDs = ids // u is still private to restore
	}
	for _, r := range f.Groups {
		g, _ := s.groups.Get(r.Name)
		ids, ok := roleIDs(r.Roles)
		if !ok {
			return bad("group " + quote(r.Name) + ": unknown role")
		}
		g.roleIDs = ids
	}
	// Grants on objects are sorted by role id.
	for _, o := range objs {
		slices.SortFunc(o.grants, func(a, b roleGrant) int { return cmpU64(a.role, b.role) })
	}
	s.tags.Range(func(_ uint64, t *tag) bool {
		slices.SortFunc(t.grants, func(a, b roleGrant) int { return cmpU64(a.role, b.role) })
		return true
	})
	s.policies.Range(func(_ uint64, p *policy) bool {
		slices.SortFunc(p.grants, func(a, b roleGrant) int { return cmpU64(a.role, b.role) })
		return true
	})
	s.domains.Range(func(_ uint64, d *domain) bool {
		slices.SortFunc(d.grants, func(a, b roleGrant) int { return cmpU64(a.role, b.role) })
		return true
	})
	for _, id := range s.tags.Keys() {
		s.reindexTag(id)
	}
	// Link the tree bottom-up now that every record is complete.
	for d := 4; d >= 1; d-- {
		for _, o := range byDepth[d] {
			p := objs[o.parent]
			if p == nil || p.typ.depth() != d-1 {
				return bad("object " + itoa(o.id) + ": bad parent")
			}
			if p.children.Has(o.name) {
				return bad("object " + itoa(o.id) + ": duplicate name")
			}
			p.children = p.children.Set(o.name, mkChild(o))
			s.locs = s.locs.Set(o.id, loc{parent: o.parent, name: o.name, typ: o.typ})
		}
	}
	for _, o := range byDepth[3] {
		if len(o.columns) != o.children.Len() {
			return bad("table " + itoa(o.id) + ": column list mismatch")
		}
		for _, c := range o.columns {
			if !o.children.Has(c) {
				return bad("table " + itoa(o.id) + ": column list mismatch")
			}
		}
	}
	s.root = byDepth[0][0]
	s.locs = s.locs.Set(metalakeID, loc{typ: ObjectMetalake, name: s.root.name})
	return s, nil
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

// restoreDomains restores the domains of f into s (after tags and policies,
// before roles) and checks CheckDomainInvariants.
func restoreDomains(s *Snapshot, f *snapFile, objs map[uint64]*object) error {
	bad := func(msg string) error { return errf(ErrInvalidSnapshot, msg) }
	var prev uint64
	for _, r := range f.Domains {
		if r.ID <= prev || r.ID >= f.NextID || objs[r.ID] != nil || s.tags.Has(r.ID) || s.policies.Has(r.ID) ||
			CheckEntityName(r.Name) != nil || s.domainIDs.Has(r.Name) {
			return bad("domain " + itoa(r.ID) + ": bad id or name")
		}
		prev = r.ID
		if r.Status != DomainDraft && r.Status != DomainPublished {
			return bad("domain " + itoa(r.ID) + ": bad status")
		}
		if r.Parent == 0 && r.ParentAudit != (Audit{}) {
			return bad("domain " + itoa(r.ID) + ": edge audit without a parent")
		}
		d := &domain{id: r.ID, name: r.Name, comment: r.Comment, props: r.Props, published: r.Status == DomainPublished,
			owner: r.Owner, parent: r.Parent, relAudit: r.ParentAudit, tag: r.Tag, value: r.Value, audit: r.Audit}
		s.domains = s.domains.Set(d.id, d)
		s.domainIDs = s.domainIDs.Set(d.name, d.id)
	}
	for _, r := range f.Domains { // ids ascending: subs stay sorted
		if r.Parent == 0 {
			continue
		}
		p, ok := s.domains.Get(r.Parent)
		if !ok {
			return bad("domain " + itoa(r.ID) + ": unknown parent")
		}
		p.subs = append(p.subs, r.ID) // p is still private to restore
	}
	if err := s.CheckDomainInvariants(); err != nil {
		return bad(strings.TrimPrefix(err.Error(), "catalog: "))
	}
	return nil
}
