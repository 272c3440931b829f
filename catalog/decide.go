package catalog

import (
	"math/bits"
	"slices"
	"strings"

	"lakegate/catalog/internal/pmap"
)

// Decision is the answer of Authorize. Reason is one of the Reason constants
// (a finite set, usable as a metric label).
type Decision struct {
	Allowed bool
	Reason  string
}

// Decision reasons.
const (
	ReasonMetalakeOwner    = "metalake owner"
	ReasonCatalogOwner     = "catalog owner"
	ReasonOwner            = "owner"
	ReasonGrant            = "allowed by grant"
	ReasonTagPolicy        = "allowed by tag policy"
	ReasonDenied           = "denied by grant"
	ReasonNoGrant          = "no grant"
	ReasonNoUseCatalog     = "USE_CATALOG missing or denied"
	ReasonNoUseSchema      = "USE_SCHEMA missing or denied"
	ReasonUnknownPrincipal = "unknown principal"
	ReasonNotFound         = "no such object"
	ReasonInvalid          = "invalid privilege"
)

func allow(r string) Decision { return Decision{true, r} }
func deny(r string) Decision  { return Decision{false, r} }

// roleBufLen is the number of effective roles resolved without allocating.
const roleBufLen = 32

// Authorize decides whether principal (a user name of this metalake) holds
// privilege on object. The rules, in order:
//
//  1. The metalake owner is allowed; so is the owner of the catalog on the
//     object's chain.
//  2. A privilege on a catalog or below (other than USE_CATALOG itself) needs
//     USE_CATALOG on the catalog, allowed and not denied; one on a schema or
//     below (other than USE_CATALOG/USE_SCHEMA) also needs USE_SCHEMA on the
//     schema, unless the caller owns the schema. USE_* are only conferred by
//     grants, never by tag policies.
//  3. The owner of the schema or table on the chain is allowed.
//  4. A DENY of privilege on the object or any ancestor denies.
//  5. An ALLOW on the object or any ancestor allows, and so does an enabled
//     system_access_control policy reached through the object's effective
//     tags whose applicable_roles include one of the caller's roles and
//     whose privileges include privilege.
//
// For tags and policies the chain is the object and the metalake, the
// object's owner is allowed, and VIEW_TAG/VIEW_POLICY are implied by
// APPLY_TAG/APPLY_POLICY. For domains the chain is the metalake, the
// domain's current parent and the domain; an owner on it is allowed, then a
// DENY anywhere on it denies, then an ALLOW allows; MANAGE_DOMAIN implies
// USE_DOMAIN. A missing object or principal is denied.
// Authorize does not allocate for callers holding up to 32 roles.
func (s *Snapshot) Authorize(principal string, privilege Privilege, object Object) Decision {
	return s.authorize(principal, privilege, object, nil)
}

// authorize is Authorize; a non-nil tr records which rule decided (see
// Explain), so that an explanation is computed by the decision's own code.
func (s *Snapshot) authorize(principal string, privilege Privilege, object Object, tr *tracer) Decision {
	if !privilege.Valid() {
		return deny(ReasonInvalid)
	}
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	return s.decide(&w, privilege, object, tr)
}

// decide is authorize for a resolved principal and a valid privilege.
func (s *Snapshot) decide(w *who, privilege Privilege, object Object, tr *tracer) Decision {
	if w.u == nil {
		return deny(ReasonUnknownPrincipal)
	}
	switch object.Type {
	case ObjectTag, ObjectPolicy, ObjectRole:
		return s.decideEntity(w, privilege, object, tr)
	case ObjectDomain:
		d, ok := s.domainByName(object.Name)
		if !ok {
			return deny(ReasonNotFound)
		}
		return s.authorizeDomain(w, privilege, d)
	case ObjectMetalake:
		if privilege == PrivUseDomain || privilege == PrivManageDomain {
			if object.Name != s.root.name {
				return deny(ReasonNotFound)
			}
			return s.authorizeDomain(w, privilege, nil) // MANAGE_DOMAIN implies USE_DOMAIN
		}
	}
	p, ok := s.resolve(object)
	if !ok {
		return deny(ReasonNotFound)
	}
	return s.decidePath(w, privilege, &p, tr)
}

func (s *Snapshot) authorizePath(w *who, priv Privilege, p *path) Decision {
	return s.decidePath(w, priv, p, nil)
}

// decidePath is authorizePath recording into tr (nil: nothing recorded).
func (s *Snapshot) decidePath(w *who, priv Privilege, p *path, tr *tracer) Decision {
	return s.decideChain(w, priv, p, nil, tr)
}

// grantSet is the union of w's ALLOW and DENY grants over a chain.
type grantSet struct{ allow, deny privSet }

// chainGrants returns the grants of w on p's objects but the leaf.
func (w *who) chainGrants(p *path) grantSet {
	var g grantSet
	for i := 0; i < p.n-1; i++ {
		ga, gd := w.grantBits(p.objs[i].grants)
		g.allow |= ga
		g.deny |= gd
	}
	return g
}

// decideChain is decidePath; parent, when not nil, is w.chainGrants(p),
// which a caller deciding many objects under one parent computes once.
func (s *Snapshot) decideChain(w *who, priv Privilege, p *path, parent *grantSet, tr *tracer) Decision {
	if w.owns(p.objs[0].owner) {
		tr.ownerAt(0)
		return allow(ReasonMetalakeOwner)
	}
	if p.n > 1 && w.owns(p.objs[1].owner) {
		tr.ownerAt(1)
		return allow(ReasonCatalogOwner)
	}
	var a, d privSet
	if parent != nil {
		a, d = w.grantBits(p.objs[p.n-1].grants)
		a, d = a|parent.allow, d|parent.deny
	} else {
		for i := 0; i < p.n; i++ {
			ga, gd := w.grantBits(p.objs[i].grants)
			a |= ga
			d |= gd
		}
	}
	if p.n > 1 && priv != PrivUseCatalog {
		if !a.has(PrivUseCatalog) || d.has(PrivUseCatalog) {
			return deny(ReasonNoUseCatalog)
		}
	}
	schemaOwner := p.n > 2 && w.owns(p.objs[2].owner)
	if p.n > 2 && priv != PrivUseCatalog && priv != PrivUseSchema && !schemaOwner {
		if !a.has(PrivUseSchema) || d.has(PrivUseSchema) {
			return deny(ReasonNoUseSchema)
		}
	}
	if schemaOwner || (p.n > 3 && w.owns(p.objs[3].owner)) {
		if schemaOwner {
			tr.ownerAt(2)
		} else {
			tr.ownerAt(3)
		}
		return allow(ReasonOwner)
	}
	if d.has(priv) {
		return deny(ReasonDenied)
	}
	if a.has(priv) {
		return allow(ReasonGrant)
	}
	if priv != PrivUseCatalog && priv != PrivUseSchema && s.sacAllows(w, priv, p, tr) {
		return allow(ReasonTagPolicy)
	}
	return deny(ReasonNoGrant)
}

func (s *Snapshot) authorizeEntity(w *who, priv Privilege, o Object) Decision {
	return s.decideEntity(w, priv, o, nil)
}

// decideEntity is authorizeEntity recording into tr (nil: nothing
// recorded).
func (s *Snapshot) decideEntity(w *who, priv Privilege, o Object, tr *tracer) Decision {
	var owner Owner
	var grants []roleGrant
	switch o.Type {
	case ObjectTag:
		id, ok := s.tagIDs.Get(o.Name)
		if !ok {
			return deny(ReasonNotFound)
		}
		t, _ := s.tags.Get(id)
		owner, grants = t.owner, t.grants
	case ObjectPolicy:
		id, ok := s.policyIDs.Get(o.Name)
		if !ok {
			return deny(ReasonNotFound)
		}
		pl, _ := s.policies.Get(id)
		owner, grants = pl.owner, pl.grants
	case ObjectRole:
		r, ok := s.roles.Get(o.Name)
		if !ok {
			return deny(ReasonNotFound)
		}
		owner = r.owner
	}
	if w.owns(s.root.owner) {
		return allow(ReasonMetalakeOwner)
	}
	if w.owns(owner) {
		return allow(ReasonOwner)
	}
	a, d := w.grantBits(s.root.grants)
	ga, gd := w.grantBits(grants)
	a, d = a|ga, d|gd
	ok := func(p Privilege) bool { return a.has(p) && !d.has(p) }
	switch {
	case ok(priv):
		return allow(ReasonGrant)
	case priv == PrivViewTag && ok(PrivApplyTag), priv == PrivViewPolicy && ok(PrivApplyPolicy):
		tr.impliedByApply()
		return allow(ReasonGrant)
	case d.has(priv):
		return deny(ReasonDenied)
	}
	return deny(ReasonNoGrant)
}

// sacAllows reports whether an enabled system_access_control policy reached
// through the effective tags of p's leaf confers priv on w; tr (when not
// nil) records the first that does.
func (s *Snapshot) sacAllows(w *who, priv Privilege, p *path, tr *tracer) bool {
	if len(w.roles) == 0 {
		return false
	}
	for lvl := p.n - 1; lvl >= 1; lvl-- {
		for ai := range p.objs[lvl].tags {
			a := &p.objs[lvl].tags[ai]
			if shadowed(p, lvl, a.tag) {
				continue
			}
			rules, ok := s.sac.Get(a.tag)
			if !ok {
				continue
			}
			for i := range rules {
				r := &rules[i]
				if !r.privs.has(priv) || (r.value != "" && !contains(a.values, r.value)) {
					continue
				}
				if w.hasAnyRole(r.roles) {
					tr.ruleAt(lvl, a.tag, i)
					return true
				}
			}
		}
	}
	return false
}

// sacPrivs returns every privilege that enabled system_access_control
// policies reached through the effective tags of p's leaf confer on w.
func (s *Snapshot) sacPrivs(w *who, p *path) privSet {
	var out privSet
	if len(w.roles) == 0 {
		return 0
	}
	for lvl := p.n - 1; lvl >= 1; lvl-- {
		out |= s.tagPrivs(w, p.objs[lvl].tags, p, lvl)
	}
	return out
}

// tagPrivs is the part of sacPrivs contributed by the assignments at level
// lvl of p (skipping tags shadowed by nearer levels).
func (s *Snapshot) tagPrivs(w *who, tags []assignment, p *path, lvl int) privSet {
	var out privSet
	for ai := range tags {
		a := &tags[ai]
		if shadowed(p, lvl, a.tag) {
			continue
		}
		rules, ok := s.sac.Get(a.tag)
		if !ok {
			continue
		}
		for i := range rules {
			r := &rules[i]
			if r.privs&^out == 0 || (r.value != "" && !contains(a.values, r.value)) {
				continue
			}
			if w.hasAnyRole(r.roles) {
				out |= r.privs
			}
		}
	}
	return out
}

// shadowed reports whether tag id is assigned at a level nearer to the leaf
// than lvl.
func shadowed(p *path, lvl int, id uint64) bool {
	for j := lvl + 1; j < p.n; j++ {
		for i := range p.objs[j].tags {
			if p.objs[j].tags[i].tag == id {
				return true
			}
		}
	}
	return false
}

// ---- visibility ----

// Visible reports whether principal may learn that object exists, following
// Gravitino's LOAD_* rules:
//
//   - metalake: any user of the metalake;
//   - catalog: metalake or catalog owner, or USE_CATALOG;
//   - schema: metalake or catalog owner, or USE_CATALOG and (schema owner or
//     USE_SCHEMA);
//   - table and column: metalake or catalog owner, or USE_CATALOG and
//     (schema owner, or USE_SCHEMA and (table owner, or SELECT_TABLE or
//     MODIFY_TABLE as decided by Authorize));
//   - tag, policy: VIEW_TAG, VIEW_POLICY as decided by Authorize;
//   - role: metalake or role owner, MANAGE_GRANTS, or holding the role;
//   - domain: PUBLISHED, USE_DOMAIN as decided by Authorize; DRAFT,
//     MANAGE_DOMAIN (its owner and its parent's included).
//
// Callers must answer for an invisible object exactly as for a missing one.
func (s *Snapshot) Visible(principal string, object Object) bool {
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	if w.u == nil {
		return false
	}
	return s.visible(&w, object, nil)
}

func (s *Snapshot) visible(w *who, o Object, c *visCache) bool {
	switch o.Type {
	case ObjectMetalake:
		return o.Name == s.root.name
	case ObjectTag:
		return s.authorizeEntity(w, PrivViewTag, o).Allowed
	case ObjectPolicy:
		return s.authorizeEntity(w, PrivViewPolicy, o).Allowed
	case ObjectRole:
		r, ok := s.roles.Get(o.Name)
		if !ok {
			return false
		}
		return w.owns(s.root.owner) || w.owns(r.owner) || w.hasRole(r.id) ||
			s.authorizePath(w, PrivManageGrants, &path{objs: [5]*object{s.root}, n: 1}).Allowed
	case ObjectDomain:
		d, ok := s.domainByName(o.Name)
		return ok && s.domainVisible(w, d)
	}
	d := o.Type.depth()
	if d < 1 {
		return false
	}
	name := o.Name
	if o.Type == ObjectColumn {
		// A column is visible when its table is.
		i := strings.LastIndexByte(name, '.')
		if i < 0 {
			return false
		}
		if _, ok := s.resolve(o); !ok {
			return false
		}
		name, d = name[:i], 3
	}
	parentKey, leafName := "", name
	if d > 1 {
		i := strings.LastIndexByte(name, '.')
		if i < 0 {
			return false
		}
		parentKey, leafName = name[:i], name[i+1:]
	}
	var pi *parentInfo
	var local parentInfo
	if c != nil {
		pi = c.get(s, w, parentKey, d-1)
	} else {
		local = s.parentInfo(w, parentKey, d-1)
		pi = &local
	}
	if !pi.ok {
		return false
	}
	if !pi.ownerAll && d == 3 {
		// Decided at the schema level without looking at the table: USE_*
		// cannot be granted on tables.
		if !pi.has(pi.allow, pi.deny, PrivUseCatalog) || (!pi.schemaOwner && !pi.has(pi.allow, pi.deny, PrivUseSchema)) {
			return false
		}
	}
	leaf, ok := pi.child(leafName, c)
	if !ok {
		return false
	}
	return s.leafVisible(w, pi, leaf)
}

// parentInfo caches everything about a parent chain that the visibility of
// its children needs.
type parentInfo struct {
	key         string
	p           path
	ok          bool
	ownerAll    bool // metalake or catalog owner on the chain
	schemaOwner bool
	allow, deny privSet
	sacDone     bool
	sac         privSet // tag-policy privileges through the parent's effective tags
}

// child looks up a child of the parent.
func (pi *parentInfo) child(name string, _ *visCache) (child, bool) {
	m := pi.p.leaf().children
	return m.Get(name)
}

func (s *Snapshot) parentInfo(w *who, key string, depth int) parentInfo {
	pi := parentInfo{key: key}
	p, ok := s.resolve(Object{[]ObjectType{ObjectMetalake, ObjectCatalog, ObjectSchema, ObjectTable}[depth], key})
	if depth == 0 {
		p, ok = path{objs: [5]*object{s.root}, n: 1}, true
	}
	if !ok {
		return pi
	}
	pi.p, pi.ok = p, true
	pi.ownerAll = w.owns(p.objs[0].owner) || (p.n > 1 && w.owns(p.objs[1].owner))
	pi.schemaOwner = p.n > 2 && w.owns(p.objs[2].owner)
	for i := 0; i < p.n; i++ {
		a, d := w.grantBits(p.objs[i].grants)
		pi.allow |= a
		pi.deny |= d
	}
	return pi
}

func (pi *parentInfo) has(a, d privSet, p Privilege) bool { return a.has(p) && !d.has(p) }

func (s *Snapshot) leafVisible(w *who, pi *parentInfo, leaf child) bool {
	if pi.ownerAll {
		return true
	}
	a, d := pi.allow, pi.deny
	if leaf.flags&childGrants != 0 && (!w.masks || leaf.roleBloom&w.roleMask != 0) {
		la, ld := w.grantBits(leaf.o.grants)
		a, d = a|la, d|ld
	}
	switch leaf.typ {
	case ObjectCatalog:
		return w.ownsChild(leaf) || pi.has(a, d, PrivUseCatalog)
	case ObjectSchema:
		return pi.has(a, d, PrivUseCatalog) && (w.ownsChild(leaf) || pi.has(a, d, PrivUseSchema))
	case ObjectTable:
		if !pi.has(a, d, PrivUseCatalog) {
			return false
		}
		if pi.schemaOwner {
			return true
		}
		if !pi.has(a, d, PrivUseSchema) {
			return false
		}
		if w.ownsChild(leaf) {
			return true
		}
		const read = privSet(1<<PrivSelectTable | 1<<PrivModifyTable)
		if a&^d&read != 0 {
			return true
		}
		if d&read == read {
			return false
		}
		if !pi.sacDone {
			pi.sac, pi.sacDone = s.sacPrivs(w, &pi.p), true
		}
		tp := pi.sac
		// The table's own tags matter only if one of them may confer a read
		// privilege on w (whatever its values). If none may, neither may the
		// assignments of those tags on the chain that they shadow: pi.sac's
		// read privileges stand.
		if leaf.flags&childTags != 0 && (!w.masks || leaf.tagBloom&w.tagMask != 0) {
			p := pi.p
			p.objs[p.n] = leaf.o
			p.n++
			if shadowsAny(&pi.p, leaf.o.tags) {
				tp = s.sacPrivs(w, &p)
			} else {
				tp |= s.tagPrivs(w, leaf.o.tags, &p, p.n-1)
			}
		}
		return tp&^d&read != 0
	}
	return false
}

type visCache struct {
	batch int // number of objects being filtered
	last  *parentInfo
	m     map[piKey]*parentInfo
}

type piKey struct {
	name  string
	depth int
}

func (c *visCache) get(s *Snapshot, w *who, key string, depth int) *parentInfo {
	if c.last != nil && c.last.key == key && c.last.p.n == depth+1 {
		return c.last
	}
	mk := piKey{key, depth}
	if pi, ok := c.m[mk]; ok {
		c.last = pi
		return pi
	}
	pi := s.parentInfo(w, key, depth)
	if !pi.ok {
		pi.p.n = depth + 1 // keeps the fast-path check meaningful
	}
	if c.m == nil {
		c.m = make(map[piKey]*parentInfo)
	}
	c.m[mk] = &pi
	c.last = &pi
	return &pi
}

// FilterVisible returns the objects of objects that principal may see (see
// Visible), in their original order. The caller's roles and groups are
// resolved once, each distinct parent (schema, catalog) is evaluated once,
// and each run of consecutive tables under one schema is decided together:
// the schema-level rules once for the run, then, per table, only an
// existence check (batched lookups whose memory accesses overlap) and the
// table's own grants, owner and tags — for large batches usually decided
// from the filters in its children-map entry (see child) without touching
// the table's record. Filtering N tables of one schema costs one decision
// plus N cheap checks.
func (s *Snapshot) FilterVisible(principal string, objects []Object) []Object {
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	if w.u == nil {
		return nil
	}
	// Decide into a bitmap first, so that the result is allocated at its
	// exact size (a listing the caller may mostly not see costs no copy).
	var small [4]uint64
	vis := small[:]
	if len(objects) > 64*len(small) {
		vis = make([]uint64, (len(objects)+63)/64)
	}
	if len(objects) >= filterMasksMin {
		// Large batches: let most tables be decided from their children-map
		// entries (see child) without touching their records.
		s.setMasks(&w)
	}
	c := visCache{batch: len(objects)}
	count := 0
	for i := 0; i < len(objects); {
		o := objects[i]
		k := strings.LastIndexByte(o.Name, '.')
		if o.Type != ObjectTable || k < 0 {
			if s.visible(&w, o, &c) {
				vis[i/64] |= 1 << (i % 64)
				count++
			}
			i++
			continue
		}
		// The run of tables named parent.<leaf> (the parent key Visible
		// would compute for each of them).
		parent := o.Name[:k]
		j := i + 1
		for j < len(objects) {
			n := objects[j].Name
			if objects[j].Type != ObjectTable || len(n) <= k || n[k] != '.' || n[:k] != parent ||
				strings.IndexByte(n[k+1:], '.') >= 0 {
				break
			}
			j++
		}
		count += s.filterTables(&w, &c, parent, objects, i, j, vis)
		i = j
	}
	out := make([]Object, 0, count)
	for i, word := range vis {
		for ; word != 0; word &= word - 1 {
			out = append(out, objects[i*64+bits.TrailingZeros64(word)])
		}
	}
	return out
}

// filterMasksMin is the batch size from which FilterVisible computes the
// caller's child filters (a walk of the system_access_control index).
const filterMasksMin = 256

// filterRun is the number of tables filterTables looks up at once.
const filterRun = 64

// filterTables decides objects[from:to], every one of which is a table named
// parent.<leaf>, as visible would, setting the bits of the visible ones in vis
// and returning their number.
func (s *Snapshot) filterTables(w *who, c *visCache, parent string, objects []Object, from, to int, vis []uint64) int {
	pi := c.get(s, w, parent, 2)
	if !pi.ok {
		return 0
	}
	if !pi.ownerAll && (!pi.has(pi.allow, pi.deny, PrivUseCatalog) || (!pi.schemaOwner && !pi.has(pi.allow, pi.deny, PrivUseSchema))) {
		return 0
	}
	children := pi.p.leaf().children
	var names [filterRun]string
	var kids [filterRun]child
	var found [filterRun]bool
	count := 0
	for from < to {
		n := min(to-from, filterRun)
		for i, o := range objects[from : from+n] {
			names[i] = o.Name[len(parent)+1:]
		}
		pmap.GetStrings(children, names[:n], kids[:n], found[:n])
		for i := range n {
			if found[i] && s.leafVisible(w, pi, kids[i]) {
				vis[(from+i)/64] |= 1 << ((from + i) % 64)
				count++
			}
		}
		from += n
	}
	return count
}

// ---- effective tags and policies ----

// EffectiveTag is a tag in effect on an object: assigned to it or inherited
// from the nearest ancestor carrying a tag of that name.
type EffectiveTag struct {
	Name      string   `json:"name"`
	Values    []string `json:"assignmentValues"` // empty: valueless
	Inherited bool     `json:"inherited"`
	Source    Object   `json:"source"` // where the assignment is
}

// EffectiveTags returns the tags in effect on a catalog, schema, table or
// column, sorted by name: the object's own plus its ancestors', the nearest
// level winning per tag name; values are not merged. It does not check
// VIEW_TAG (enforcement uses it); see ViewEffectiveTags.
func (s *Snapshot) EffectiveTags(object Object) ([]EffectiveTag, error) {
	p, ok := s.resolve(object)
	if !ok || p.n < 2 {
		return nil, &Error{Op: "EffectiveTags", Target: object.String(), Err: ErrNotFound}
	}
	return s.effectiveTags(&p), nil
}

func (s *Snapshot) effectiveTags(p *path) []EffectiveTag {
	var out []EffectiveTag
	for lvl := p.n - 1; lvl >= 1; lvl-- {
		var src Object
		for _, a := range p.objs[lvl].tags {
			if shadowed(p, lvl, a.tag) {
				continue
			}
			t, ok := s.tags.Get(a.tag)
			if !ok {
				continue
			}
			if src.Type == 0 {
				sp := *p
				sp.n = lvl + 1
				src = sp.object()
			}
			out = append(out, EffectiveTag{Name: t.name, Values: append([]string{}, a.values...),
				Inherited: lvl != p.n-1, Source: src})
		}
	}
	slices.SortFunc(out, func(a, b EffectiveTag) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// DerivedPolicy is a policy in effect on an object, derived from its effective
// tags.
//
// In ViewPoliciesOf's answer, a policy reached only through tags the caller
// may not view (VIEW_TAG) has Tag empty and Selector and Source zero.
type DerivedPolicy struct {
	Policy   string     `json:"policy"`
	Type     PolicyType `json:"policyType"`
	Tag      string     `json:"tag"`      // the tag it is reached through
	Selector Selector   `json:"selector"` // the attachment's selector
	Source   Object     `json:"source"`   // where that tag is assigned
	// Inherited: the tag is assigned to an ancestor, not to the object.
	Inherited bool `json:"inherited"`
}

// PoliciesOf returns the enabled policies in effect on a catalog, schema,
// table or column, sorted by policy name: effective tags → attached enabled
// policies → selector match, de-duplicated per policy (keeping the nearest
// source, then the smallest tag name). It does not check VIEW_POLICY
// (enforcement never depends on it); see ViewPoliciesOf.
func (s *Snapshot) PoliciesOf(object Object) ([]DerivedPolicy, error) {
	p, ok := s.resolve(object)
	if !ok || p.n < 2 {
		return nil, &Error{Op: "PoliciesOf", Target: object.String(), Err: ErrNotFound}
	}
	return s.policiesOf(&p, ""), nil
}

// policiesOf derives the policies of p's leaf; typ filters when non-empty.
func (s *Snapshot) policiesOf(p *path, typ PolicyType) []DerivedPolicy {
	return s.policiesOfFor(p, typ, nil)
}

// policiesOfFor is policiesOf; with view set, a policy is reached through
// the nearest tag view accepts when there is one, and otherwise through
// the nearest tag.
func (s *Snapshot) policiesOfFor(p *path, typ PolicyType, view func(tag string) bool) []DerivedPolicy {
	eff := s.effectiveTags(p)
	// viewable first (with view), then nearest first, then tag name
	slices.SortStableFunc(eff, func(a, b EffectiveTag) int {
		if view != nil {
			if va, vb := view(a.Name), view(b.Name); va != vb {
				if va {
					return -1
				}
				return 1
			}
		}
		la, lb := strings.Count(a.Source.Name, "."), strings.Count(b.Source.Name, ".")
		if la != lb {
			return lb - la
		}
		return strings.Compare(a.Name, b.Name)
	})
	var out []DerivedPolicy
	seen := map[uint64]bool{}
	for _, et := range eff {
		id, _ := s.tagIDs.Get(et.Name)
		t, _ := s.tags.Get(id)
		for _, at := range t.policies {
			if at.sel.Value != "" && !contains(et.Values, at.sel.Value) {
				continue
			}
			pl, ok := s.policies.Get(at.policy)
			if !ok || !pl.enabled || seen[pl.id] || (typ != "" && pl.typ != typ) {
				continue
			}
			seen[pl.id] = true
			out = append(out, DerivedPolicy{Policy: pl.name, Type: pl.typ, Tag: t.name, Selector: at.sel, Source: et.Source,
				Inherited: et.Inherited})
		}
	}
	slices.SortFunc(out, func(a, b DerivedPolicy) int { return strings.Compare(a.Policy, b.Policy) })
	return out
}

// ColumnMask is the mask applying to one column for one caller.
type ColumnMask struct {
	Column string `json:"column"`
	Mask   string `json:"mask"`   // NULL, REDACT, HASH, LAST4 or an expression
	Policy string `json:"policy"` // the policy it comes from
}

// RowFiltersAndMasks returns the row filter expression ("" for none) and the
// column masks (in column order) that apply to principal when reading table
// (full name "c.s.t"): row_filter policies from the table's effective tags,
// column_mask policies from each column's effective tags. Owners are not
// exempt. Two different filters on the table, or two different masks on one
// column, applying to the caller is an error wrapping ErrConflictingPolicies:
// callers must refuse the query.
func (s *Snapshot) RowFiltersAndMasks(principal, table string) (filter string, masks []ColumnMask, err error) {
	rp, err := s.ReadPolicyOf(principal, table)
	return rp.Filter, rp.Masks, err
}

// ReadPolicy is what one caller reads a table through: the row filter
// ("" for none) with the name of the policy it comes from, and the column
// masks (in column order), each naming its policy. When several policies
// with the same expression apply, the first by name is the one named.
type ReadPolicy struct {
	Filter       string
	FilterPolicy string
	Masks        []ColumnMask
}

// ReadPolicyOf is RowFiltersAndMasks with the name of the row filter's
// policy: the access log records which policies applied to a read.
func (s *Snapshot) ReadPolicyOf(principal, table string) (ReadPolicy, error) {
	p, ok := s.resolve(Table(table))
	if !ok {
		return ReadPolicy{}, &Error{Op: "RowFiltersAndMasks", Target: Table(table).String(), Err: ErrNotFound}
	}
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	filter, filterPolicy, err := s.evalFilter(&w, &p, s.policiesOf(&p, PolicyRowFilter))
	if err != nil {
		return ReadPolicy{}, err
	}
	var masks []ColumnMask
	tbl := p.leaf()
	for _, col := range tbl.columns {
		co, ok := tbl.get(col)
		if !ok {
			continue
		}
		cp := p
		cp.objs[cp.n] = co
		cp.n++
		m, err := s.evalMask(&w, &p, col, s.policiesOf(&cp, PolicyColumnMask))
		if err != nil {
			return ReadPolicy{}, err
		}
		if m.Policy != "" {
			masks = append(masks, m)
		}
	}
	return ReadPolicy{Filter: filter, FilterPolicy: filterPolicy, Masks: masks}, nil
}

// evalFilter decides which of the row_filter policies derived for the
// table at p applies to w: the filter ("" for none) and its policy; two
// different filters are an error wrapping ErrConflictingPolicies.
func (s *Snapshot) evalFilter(w *who, p *path, filters []DerivedPolicy) (filter, filterPolicy string, err error) {
	for _, op := range filters {
		id, _ := s.policyIDs.Get(op.Policy)
		pl, _ := s.policies.Get(id)
		c := pl.content
		applies := true
		switch {
		case len(c.ApplicableRoles) > 0:
			applies = s.hasAnyRoleName(w, c.ApplicableRoles)
		case len(c.ExemptRoles) > 0:
			applies = !s.hasAnyRoleName(w, c.ExemptRoles)
		}
		if !applies {
			continue
		}
		if filterPolicy != "" && c.Expression != filter {
			return "", "", &Error{Op: "RowFiltersAndMasks", Target: p.object().String(),
				Err: errf(ErrConflictingPolicies, "row filters of policies "+quote(filterPolicy)+" and "+quote(pl.name)+" differ")}
		}
		if filterPolicy == "" {
			filter, filterPolicy = c.Expression, pl.name
		}
	}
	return filter, filterPolicy, nil
}

// evalMask decides which of the column_mask policies derived for column
// col of the table at p applies to w (a zero ColumnMask for none); two
// different masks are an error wrapping ErrConflictingPolicies.
func (s *Snapshot) evalMask(w *who, p *path, col string, masks []DerivedPolicy) (ColumnMask, error) {
	var m ColumnMask
	for _, op := range masks {
		id, _ := s.policyIDs.Get(op.Policy)
		pl, _ := s.policies.Get(id)
		if s.hasAnyRoleName(w, pl.content.ExemptRoles) {
			continue
		}
		if m.Policy != "" && m.Mask != pl.content.Mask {
			return ColumnMask{}, &Error{Op: "RowFiltersAndMasks", Target: Column(p.fullName() + "." + col).String(),
				Err: errf(ErrConflictingPolicies, "masks of policies "+quote(m.Policy)+" and "+quote(pl.name)+" differ")}
		}
		if m.Policy == "" {
			m = ColumnMask{Column: col, Mask: pl.content.Mask, Policy: pl.name}
		}
	}
	return m, nil
}

// readRules are the policies a read of one table applies, before deciding
// for whom: the enabled row_filter policies derived from the table's
// effective tags and, per column (in column order), the enabled column_mask
// policies derived from the column's. A preview derives them once per table
// and decides them (eval, by RowFiltersAndMasks' evalFilter and evalMask)
// for every user.
type readRules struct {
	filters []DerivedPolicy
	cols    []colRules
}

type colRules struct {
	name  string
	masks []DerivedPolicy
}

func (s *Snapshot) readRulesOf(p *path) readRules {
	rr := readRules{filters: s.policiesOf(p, PolicyRowFilter)}
	tbl := p.leaf()
	for _, col := range tbl.columns {
		co, ok := tbl.get(col)
		if !ok {
			continue
		}
		cp := *p
		cp.objs[cp.n] = co
		cp.n++
		if ms := s.policiesOf(&cp, PolicyColumnMask); len(ms) > 0 {
			rr.cols = append(rr.cols, colRules{name: col, masks: ms})
		}
	}
	return rr
}

// eval is RowFiltersAndMasks for w reading the table at p, from rr, plus
// the filter's policy; the masks are appended to masks.
func (rr *readRules) eval(s *Snapshot, w *who, p *path, masks []ColumnMask) (filter, filterPolicy string, _ []ColumnMask, err error) {
	if filter, filterPolicy, err = s.evalFilter(w, p, rr.filters); err != nil {
		return "", "", nil, err
	}
	for _, cr := range rr.cols {
		m, err := s.evalMask(w, p, cr.name, cr.masks)
		if err != nil {
			return "", "", nil, err
		}
		if m.Policy != "" {
			masks = append(masks, m)
		}
	}
	return filter, filterPolicy, masks, nil
}

// sacRule is an enabled system_access_control policy attached to a tag,
// indexed by tag id with its roles resolved to ids (Apply maintains it).
type sacRule struct {
	value string // selector value; "" = presence
	privs privSet
	roles []uint64
}

// sacRules computes the index entry of tag id.
func (s *Snapshot) sacRules(id uint64) []sacRule { return s.sacRulesOf(id, nil) }

// sacRulesOf is sacRules; with policies set, it also lists the policy of
// each rule (explanations name the rule a decision used).
func (s *Snapshot) sacRulesOf(id uint64, policies *[]uint64) []sacRule {
	t, ok := s.tags.Get(id)
	if !ok {
		return nil
	}
	var rules []sacRule
	for _, at := range t.policies {
		p, ok := s.policies.Get(at.policy)
		if !ok || !p.enabled || p.typ != PolicySystemAccessControl {
			continue
		}
		// Only TagPrivileges take effect through a tag, whatever a stored
		// policy lists (CheckEntry keeps others out of new ones).
		r := sacRule{value: at.sel.Value, privs: p.privs & tagPrivileges}
		if r.privs == 0 {
			continue
		}
		for _, rn := range p.content.ApplicableRoles {
			if ro, ok := s.roles.Get(rn); ok {
				r.roles = append(r.roles, ro.id)
			}
		}
		rules = append(rules, r)
		if policies != nil {
			*policies = append(*policies, p.id)
		}
	}
	return rules
}

// reindexTag refreshes the system_access_control index of tag id.
func (s *Snapshot) reindexTag(id uint64) {
	if rules := s.sacRules(id); len(rules) > 0 {
		s.sac = s.sac.Set(id, rules)
	} else {
		s.sac = s.sac.Delete(id)
	}
}

// shadowsAny reports whether any of tags is also assigned on p's chain.
func shadowsAny(p *path, tags []assignment) bool {
	for i := range tags {
		for lvl := 1; lvl < p.n; lvl++ {
			for j := range p.objs[lvl].tags {
				if p.objs[lvl].tags[j].tag == tags[i].tag {
					return true
				}
			}
		}
	}
	return false
}
