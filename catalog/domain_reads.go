package catalog

import (
	"slices"
	"strings"
)

// DomainInfo describes a domain.
type DomainInfo struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"` // do not modify
	Status     DomainStatus      `json:"status"`
	Owner      Owner             `json:"owner"`
	// Parent is the parent's name ("" for a top-level domain), given even
	// when the caller cannot see the parent.
	Parent string `json:"parent,omitempty"`
	// BackingTag is the backing tag by its current name (Create unset), nil
	// when the domain has none.
	BackingTag  *DomainTag `json:"backingTag,omitempty"`
	Audit       Audit      `json:"audit"`
	ParentAudit Audit      `json:"parentAudit,omitzero"` // of the edge to the parent
}

// DomainRelationType is how an object belongs to a domain's scope.
type DomainRelationType string

// Domain relations.
const (
	// RelationDirect: the object carries the backing tag.
	RelationDirect DomainRelationType = "DIRECT"
	// RelationInherited: the nearest catalog or schema carrying the tag
	// (Source) makes the object a member.
	RelationInherited DomainRelationType = "INHERITED"
	// RelationViaSubdomain: the object is a member of the subdomain Source
	// (a DOMAIN object), rolled up into its parent.
	RelationViaSubdomain DomainRelationType = "VIA_SUBDOMAIN"
)

// DomainRelation is one reason an object is in a domain's scope.
type DomainRelation struct {
	Type   DomainRelationType `json:"type"`
	Source Object             `json:"source,omitzero"` // zero for DIRECT
}

// DomainMember is an object in a domain's scope with every relation that
// puts it there: DIRECT or INHERITED first, then VIA_SUBDOMAIN by
// subdomain name.
type DomainMember struct {
	Object    Object           `json:"object"`
	Relations []DomainRelation `json:"relations"`
}

// DomainMembership is a domain whose scope contains an object, with the
// relations (see DomainMember).
type DomainMembership struct {
	Domain    string           `json:"domain"`
	Relations []DomainRelation `json:"relations"`
}

// MemberQuery selects and filters the members of DomainMembers.
type MemberQuery struct {
	// Scopes selects the scopes to list (REST's repeatable domains=): the
	// domain itself, which stands for its whole scope (its own members and,
	// for a top-level domain, those of every subdomain the caller can see),
	// or one of its subdomains visible to the caller, which stands for that
	// subdomain's members; other names are ignored, and when every name is
	// ignored the result is empty. Empty: the domain's whole scope.
	Scopes []string
	// Types keeps members of these types (empty: all leaf types).
	Types []ObjectType
	// NameContains keeps members whose full name contains it,
	// case-insensitively.
	NameContains string
}

func (s *Snapshot) domainInfo(d *domain) DomainInfo {
	info := DomainInfo{Name: d.name, Comment: d.comment, Properties: d.props, Status: d.status(), Owner: d.owner,
		Audit: d.audit, ParentAudit: d.relAudit}
	if d.parent != 0 {
		info.Parent = s.domainName(d.parent)
	}
	if t, ok := s.tags.Get(d.tag); ok && d.tag != 0 {
		info.BackingTag = &DomainTag{Name: t.name, Value: d.value}
	}
	return info
}

// Domain returns the domain named name, without checking visibility.
func (s *Snapshot) Domain(name string) (DomainInfo, bool) {
	d, ok := s.domainByName(name)
	if !ok {
		return DomainInfo{}, false
	}
	return s.domainInfo(d), true
}

// DomainNames returns all domain names, sorted.
func (s *Snapshot) DomainNames() []string { return sortedKeys(s.domainIDs) }

// Subdomains returns the sorted names of the subdomains of name, without
// checking visibility.
func (s *Snapshot) Subdomains(name string) ([]string, bool) {
	d, ok := s.domainByName(name)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(d.subs))
	for _, id := range d.subs {
		out = append(out, s.domainName(id))
	}
	slices.Sort(out)
	return out, true
}

func (s *Snapshot) noSuchDomain(op, name string) error {
	return &Error{Op: op, Target: Domain(name).String(), Err: noSuchDomain(name)}
}

// visibleDomain returns the domain named name if w may see it.
func (s *Snapshot) visibleDomain(w *who, name string) (*domain, bool) {
	d, ok := s.domainByName(name)
	if !ok || w.u == nil || !s.domainVisible(w, d) {
		return nil, false
	}
	return d, true
}

// ViewDomain returns the domain if principal may see it (see Visible), else
// an error wrapping ErrNotFound (a *DomainError NoSuchDomain).
func (s *Snapshot) ViewDomain(principal, name string) (DomainInfo, error) {
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	d, ok := s.visibleDomain(&w, name)
	if !ok {
		return DomainInfo{}, s.noSuchDomain("ViewDomain", name)
	}
	return s.domainInfo(d), nil
}

// ViewDomains returns the domains principal may see, sorted by name.
func (s *Snapshot) ViewDomains(principal string) []DomainInfo {
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	var out []DomainInfo
	for _, n := range s.DomainNames() {
		if d, ok := s.visibleDomain(&w, n); ok {
			out = append(out, s.domainInfo(d))
		}
	}
	return out
}

// ViewSubdomains returns the subdomains of name that principal may see,
// sorted by name; name itself must be visible (else NoSuchDomain).
func (s *Snapshot) ViewSubdomains(principal, name string) ([]DomainInfo, error) {
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	d, ok := s.visibleDomain(&w, name)
	if !ok {
		return nil, s.noSuchDomain("ViewSubdomains", name)
	}
	var out []DomainInfo
	for _, sd := range s.visibleSubs(&w, d) {
		out = append(out, s.domainInfo(sd))
	}
	return out, nil
}

// visibleSubs returns d's subdomains visible to w, sorted by name.
func (s *Snapshot) visibleSubs(w *who, d *domain) []*domain {
	var out []*domain
	for _, id := range d.subs {
		if sd, ok := s.domains.Get(id); ok && s.domainVisible(w, sd) {
			out = append(out, sd)
		}
	}
	slices.SortFunc(out, func(a, b *domain) int { return strings.Compare(a.name, b.name) })
	return out
}

// memberGroup is a set of tables found while listing members, all under
// one schema (prefix "catalog.schema.") and with one relation.
type memberGroup struct {
	prefix string
	leaves []string // table names
	rel    DomainRelation
}

func relOrder(r DomainRelation) int {
	switch r.Type {
	case RelationDirect:
		return 0
	case RelationInherited:
		return 1
	}
	return 2
}

func cmpRel(a, b DomainRelation) int {
	if c := relOrder(a) - relOrder(b); c != 0 {
		return c
	}
	return strings.Compare(a.Source.Name, b.Source.Name)
}

// leafRel is a table of a schema with one relation.
type leafRel struct {
	leaf string
	rel  DomainRelation
}

// DomainMembers lists the members of the scope of domain name for
// principal, sorted by full name: the domain must be visible to principal
// (else NoSuchDomain); a top-level domain's scope is its own members plus
// those of the subdomains principal can see (VIA_SUBDOMAIN), narrowed by
// q.Scopes. Members are leaf objects (tables) whose effective assignment of
// a scope's backing tag matches it (nearest level wins; a binding with a
// value needs the value): the objects carrying the tag directly, and the
// tables under tagged catalogs and schemas, expanded from the tree without
// one lookup per table. Objects principal cannot see are dropped, in one
// FilterVisible pass. A domain without a backing tag has no members of its
// own.
func (s *Snapshot) DomainMembers(principal, name string, q MemberQuery) ([]DomainMember, error) {
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	d, ok := s.visibleDomain(&w, name)
	if !ok {
		return nil, s.noSuchDomain("DomainMembers", name)
	}
	scope := []*domain{d}
	if d.parent == 0 {
		scope = append(scope, s.visibleSubs(&w, d)...)
	}
	// Naming the domain itself selects its whole scope, its visible
	// subdomains included; naming a subdomain selects that subdomain.
	if len(q.Scopes) > 0 && !slices.Contains(q.Scopes, d.name) {
		scope = slices.DeleteFunc(scope, func(sd *domain) bool { return !slices.Contains(q.Scopes, sd.name) })
	}
	if len(q.Types) > 0 && !slices.Contains(q.Types, ObjectTable) {
		return nil, nil
	}
	var groups []memberGroup
	for _, sd := range scope {
		if sd.tag == 0 {
			continue
		}
		var via Object
		if sd != d {
			via = Domain(sd.name)
		}
		groups = s.collectMembers(sd.tag, sd.value, via, groups)
	}
	if len(groups) == 0 {
		return nil, nil
	}
	sub := strings.ToLower(q.NameContains)
	// Sort by schema, then within each schema by table: one member per
	// table, its relations sharing one backing array.
	slices.SortFunc(groups, func(a, b memberGroup) int {
		if c := strings.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		return cmpRel(a.rel, b.rel)
	})
	type mem struct {
		prefix, leaf string
		rs, re       int // relations rels[rs:re]
	}
	total := 0
	for _, g := range groups {
		total += len(g.leaves)
	}
	mems := make([]mem, 0, total)
	rels := make([]DomainRelation, 0, total)
	var run []leafRel
	size := 0
	for i := 0; i < len(groups); {
		j := i + 1
		for j < len(groups) && groups[j].prefix == groups[i].prefix {
			j++
		}
		run = run[:0]
		if j == i+1 {
			g := groups[i]
			slices.Sort(g.leaves) // the group's own slice
			for _, l := range g.leaves {
				run = append(run, leafRel{l, g.rel})
			}
		} else {
			for _, g := range groups[i:j] {
				for _, l := range g.leaves {
					run = append(run, leafRel{l, g.rel})
				}
			}
			slices.SortFunc(run, func(a, b leafRel) int {
				if c := strings.Compare(a.leaf, b.leaf); c != 0 {
					return c
				}
				return cmpRel(a.rel, b.rel)
			})
		}
		prefix := groups[i].prefix
		for k, lr := range run {
			if sub != "" && !lowerContains(prefix+lr.leaf, sub) {
				continue
			}
			if k > 0 && len(mems) > 0 && mems[len(mems)-1].leaf == lr.leaf && mems[len(mems)-1].prefix == prefix {
				mems[len(mems)-1].re++
			} else {
				mems = append(mems, mem{prefix: prefix, leaf: lr.leaf, rs: len(rels), re: len(rels) + 1})
				size += len(prefix) + len(lr.leaf)
			}
			rels = append(rels, lr.rel)
		}
		i = j
	}
	if len(mems) == 0 {
		return nil, nil
	}
	// The full names are carved from one string.
	nb := make([]byte, 0, size)
	for _, m := range mems {
		nb = append(nb, m.prefix...)
		nb = append(nb, m.leaf...)
	}
	all := string(nb)
	objs := make([]Object, len(mems))
	off := 0
	for i, m := range mems {
		n := len(m.prefix) + len(m.leaf)
		objs[i] = Table(all[off : off+n])
		off += n
	}
	vis := s.FilterVisible(principal, objs)
	out := make([]DomainMember, 0, len(vis))
	j := 0
	for _, o := range vis {
		for objs[j].Name != o.Name {
			j++
		}
		m := mems[j]
		out = append(out, DomainMember{Object: o, Relations: rels[m.rs:m.re:m.re]})
		j++
	}
	return out, nil
}

// assignmentOf returns o's assignment of tag id.
func assignmentOf(o *object, id uint64) (*assignment, bool) {
	for i := range o.tags {
		if o.tags[i].tag == id {
			return &o.tags[i], true
		}
	}
	return nil, false
}

// childHasTag reports whether the child entry's object carries tag id,
// deciding from the entry's filter when it can.
func childHasTag(c child, id uint64) bool {
	if c.flags&childTags == 0 || c.tagBloom&tagBit(id) == 0 {
		return false
	}
	_, ok := assignmentOf(c.o, id)
	return ok
}

// collectMembers appends the tables whose effective assignment of tag id
// matches value ("" = any), grouped by schema: each table is produced once,
// by the nearest level carrying the tag (a table or schema carrying it is a
// candidate of its own, skipped when expanding its ancestors). via, when
// set, is the subdomain the binding belongs to (the relation is then
// VIA_SUBDOMAIN).
func (s *Snapshot) collectMembers(id uint64, value string, via Object, out []memberGroup) []memberGroup {
	t, ok := s.tags.Get(id)
	if !ok {
		return out
	}
	rel := func(typ DomainRelationType, src Object) DomainRelation {
		if via.Type != 0 {
			return DomainRelation{Type: RelationViaSubdomain, Source: via}
		}
		return DomainRelation{Type: typ, Source: src}
	}
	expand := func(prefix string, sch *object, r DomainRelation) {
		leaves := make([]string, 0, sch.children.Len())
		sch.children.Range(func(n string, c child) bool {
			if c.typ == ObjectTable && !childHasTag(c, id) {
				leaves = append(leaves, n)
			}
			return true
		})
		if len(leaves) > 0 {
			out = append(out, memberGroup{prefix: prefix, leaves: leaves, rel: r})
		}
	}
	t.objects.Range(func(oid uint64, _ struct{}) bool {
		p, ok := s.pathByID(oid)
		if !ok {
			return true
		}
		leaf := p.leaf()
		a, ok := assignmentOf(leaf, id)
		if !ok || (value != "" && !containsSorted(a.values, value)) {
			return true
		}
		switch leaf.typ {
		case ObjectTable:
			out = append(out, memberGroup{prefix: p.objs[1].name + "." + p.objs[2].name + ".", leaves: []string{leaf.name},
				rel: rel(RelationDirect, Object{})})
		case ObjectSchema:
			src := p.object()
			expand(src.Name+".", leaf, rel(RelationInherited, src))
		case ObjectCatalog:
			src := p.object()
			r := rel(RelationInherited, src)
			leaf.children.Range(func(n string, c child) bool {
				if c.typ == ObjectSchema && !childHasTag(c, id) {
					expand(src.Name+"."+n+".", c.o, r)
				}
				return true
			})
		}
		return true
	})
	return out
}

// matchPath decides whether p's leaf is a member for the binding (id,
// value): its nearest assignment of the tag must match.
func matchPath(p *path, id uint64, value string) (DomainRelation, bool) {
	for lvl := p.n - 1; lvl >= 1; lvl-- {
		a, ok := assignmentOf(p.objs[lvl], id)
		if !ok {
			continue
		}
		if value != "" && !containsSorted(a.values, value) {
			return DomainRelation{}, false
		}
		if lvl == p.n-1 {
			return DomainRelation{Type: RelationDirect}, true
		}
		sp := *p
		sp.n = lvl + 1
		return DomainRelation{Type: RelationInherited, Source: sp.object()}, true
	}
	return DomainRelation{}, false
}

// DomainsOf returns the domains visible to principal whose scope contains
// the leaf object o (a table), sorted by name, with the relations: its
// membership of the domain itself (DIRECT or INHERITED) and, for a
// top-level domain, one VIA_SUBDOMAIN per visible subdomain it is a member
// of. o must be visible to principal (else ErrNotFound); other types are
// ErrInvalidArgument.
func (s *Snapshot) DomainsOf(principal string, o Object) ([]DomainMembership, error) {
	if o.Type != ObjectTable {
		return nil, &Error{Op: "DomainsOf", Target: o.String(), Err: errf(ErrInvalidArgument, "only leaf objects (tables) belong to domains")}
	}
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	p, ok := s.resolve(o)
	if !ok || w.u == nil || !s.visible(&w, o, nil) {
		return nil, s.notFound("DomainsOf", o)
	}
	var out []DomainMembership
	for _, n := range s.DomainNames() {
		d, ok := s.visibleDomain(&w, n)
		if !ok {
			continue
		}
		var rels []DomainRelation
		if d.tag != 0 {
			if r, ok := matchPath(&p, d.tag, d.value); ok {
				rels = append(rels, r)
			}
		}
		if d.parent == 0 {
			for _, sd := range s.visibleSubs(&w, d) {
				if _, ok := matchPath(&p, sd.tag, sd.value); ok && sd.tag != 0 {
					rels = append(rels, DomainRelation{Type: RelationViaSubdomain, Source: Domain(sd.name)})
				}
			}
		}
		if len(rels) > 0 {
			out = append(out, DomainMembership{Domain: d.name, Relations: rels})
		}
	}
	return out, nil
}
