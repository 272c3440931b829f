package catalog

import (
	"fmt"
	"time"

	"lakegate/catalog/internal/pmap"
)

// metalakeID is the id of the root object.
const metalakeID = 1

// Snapshot is the immutable governance state of one metalake (tenant) at one
// generation. Apply never modifies a Snapshot: it returns a new one sharing
// structure with the old. A *Snapshot is safe for use from multiple
// goroutines; callers keep the current one behind an atomic pointer and
// decide every request against the pointer they loaded once.
type Snapshot struct {
	gen    uint64
	index  uint64
	nextID uint64
	rules  uint8 // rule level (see RulesOriginal)

	root      *object // the metalake; children are catalogs
	locs      pmap.Map[uint64, loc]
	users     pmap.Map[string, *user]
	groups    pmap.Map[string, *group]
	roles     pmap.Map[string, *role]
	roleByID  pmap.Map[uint64, string]
	sac       pmap.Map[uint64, []sacRule] // tag id → enabled system_access_control rules
	tagIDs    pmap.Map[string, uint64]
	tags      pmap.Map[uint64, *tag]
	policyIDs pmap.Map[string, uint64]
	policies  pmap.Map[uint64, *policy]

	storageIDs pmap.Map[string, uint64] // table storage id → table object id

	domainIDs pmap.Map[string, uint64]
	domains   pmap.Map[uint64, *domain]
}

// New returns the generation-0 snapshot of a new metalake named name, owned
// by the user owner, which it creates. created is the caller-supplied
// creation time.
func New(name, owner string, created time.Time) (*Snapshot, error) {
	return NewAt(name, owner, created, 0)
}

// NewAt is New starting at generation rather than 0: a metalake created
// again under the name of a dropped one continues from past the dropped
// one's last generation, so that no generation of a name ever stands for
// two different states (callers compare generations to decide whether a
// decision still holds).
func NewAt(name, owner string, created time.Time, generation uint64) (*Snapshot, error) {
	if err := CheckEntityName(name); err != nil {
		return nil, err
	}
	if err := CheckEntityName(owner); err != nil {
		return nil, err
	}
	if err := checkTime(normTime(created)); err != nil {
		return nil, err
	}
	a := Audit{Creator: owner, CreateTime: normTime(created)}
	s := emptySnapshot()
	s.nextID = metalakeID + 1
	s.root = &object{id: metalakeID, typ: ObjectMetalake, name: name,
		owner: Owner{OwnerUser, owner}, audit: a, children: pmap.NewString[child]()}
	s.locs = s.locs.Set(metalakeID, loc{typ: ObjectMetalake, name: name})
	s.users = s.users.Set(owner, &user{name: owner, audit: a})
	s.gen = generation
	return s, nil
}

func emptySnapshot() *Snapshot {
	return &Snapshot{
		locs:      pmap.NewUint64[loc](),
		users:     pmap.NewString[*user](),
		groups:    pmap.NewString[*group](),
		roles:     pmap.NewString[*role](),
		roleByID:  pmap.NewUint64[string](),
		sac:       pmap.NewUint64[[]sacRule](),
		tagIDs:    pmap.NewString[uint64](),
		tags:      pmap.NewUint64[*tag](),
		policyIDs: pmap.NewString[uint64](),
		policies:  pmap.NewUint64[*policy](),

		storageIDs: pmap.NewString[uint64](),

		domainIDs: pmap.NewString[uint64](),
		domains:   pmap.NewUint64[*domain](),
	}
}

func normTime(t time.Time) time.Time { return t.UTC().Round(0) }

// checkTime rejects a time the snapshot and event encodings (RFC 3339)
// cannot represent: a state holding one could never be persisted again.
func checkTime(t time.Time) error {
	if y := t.Year(); y < 0 || y > 9999 {
		return errf(ErrInvalidCommand, fmt.Sprintf("time in year %d, outside 0-9999", y))
	}
	return nil
}

// Generation returns the number of commands applied since New.
func (s *Snapshot) Generation() uint64 { return s.gen }

// Index returns the Meta.Index of the last applied command (0 after New).
func (s *Snapshot) Index() uint64 { return s.index }

// Metalake returns the metalake's name.
func (s *Snapshot) Metalake() string { return s.root.name }

// MetalakeOwner returns the metalake's owner.
func (s *Snapshot) MetalakeOwner() Owner { return s.root.owner }

// path is a resolved chain of catalog-tree objects, metalake first.
type path struct {
	objs [5]*object
	n    int
}

func (p *path) leaf() *object { return p.objs[p.n-1] }

// resolve finds the catalog-tree object named o without allocating.
func (s *Snapshot) resolve(o Object) (path, bool) {
	var p path
	d := o.Type.depth()
	if d < 0 {
		return p, false
	}
	p.objs[0] = s.root
	p.n = 1
	if d == 0 {
		return p, o.Name == s.root.name
	}
	var parts [4]string
	if !splitN(o.Name, &parts, d) {
		return p, false
	}
	cur := s.root
	for i := 0; i < d; i++ {
		c, ok := cur.get(parts[i])
		if !ok {
			return p, false
		}
		p.objs[p.n] = c
		p.n++
		cur = c
	}
	return p, true
}

// pathByID resolves a catalog-tree object by id.
func (s *Snapshot) pathByID(id uint64) (path, bool) {
	var names [5]string
	n := 0
	for cur := id; cur != metalakeID; {
		l, ok := s.locs.Get(cur)
		if !ok || n == 4 {
			return path{}, false
		}
		names[n] = l.name
		n++
		cur = l.parent
	}
	var p path
	p.objs[0] = s.root
	p.n = 1
	for i := n - 1; i >= 0; i-- {
		c, ok := p.objs[p.n-1].get(names[i])
		if !ok {
			return path{}, false
		}
		p.objs[p.n] = c
		p.n++
	}
	return p, true
}

// fullName returns the dot-joined name of a resolved path's leaf.
func (p *path) fullName() string {
	if p.n == 1 {
		return p.objs[0].name
	}
	n := 0
	for i := 1; i < p.n; i++ {
		n += len(p.objs[i].name) + 1
	}
	b := make([]byte, 0, n-1)
	for i := 1; i < p.n; i++ {
		if i > 1 {
			b = append(b, '.')
		}
		b = append(b, p.objs[i].name...)
	}
	return string(b)
}

func (p *path) object() Object { return Object{p.leaf().typ, p.fullName()} }

// objectByID names a catalog-tree object, tag or policy by id and type.
func (s *Snapshot) objectByID(t ObjectType, id uint64) (Object, bool) {
	switch t {
	case ObjectTag:
		tg, ok := s.tags.Get(id)
		if !ok {
			return Object{}, false
		}
		return Tag(tg.name), true
	case ObjectPolicy:
		pl, ok := s.policies.Get(id)
		if !ok {
			return Object{}, false
		}
		return Policy(pl.name), true
	case ObjectDomain:
		d, ok := s.domains.Get(id)
		if !ok {
			return Object{}, false
		}
		return Domain(d.name), true
	}
	p, ok := s.pathByID(id)
	if !ok {
		return Object{}, false
	}
	return p.object(), true
}

// ---- principals ----

// who is a resolved principal: the user and its effective roles.
type who struct {
	name  string
	u     *user
	roles []uint64 // role ids, possibly with duplicates

	// ownerHashes of the owners w is (itself, its groups), computed on first
	// use by ownsChild; hashState is 0 (not yet), 1 (valid) or 2 (too many
	// groups: ownsChild checks exactly).
	hashState   uint8
	nHashes     int
	ownerHashes [8]uint16

	// Filters for child entries (see child), set by FilterVisible for large
	// batches: roleMask has roleBit(r) for every role of w, tagMask
	// tagBit(t) for every tag t with an enabled system_access_control
	// rule conferring SELECT_TABLE or MODIFY_TABLE on w (whatever the
	// selector). masks says whether they are valid.
	masks    bool
	roleMask uint32
	tagMask  uint64
}

// setMasks computes w's child filters.
func (s *Snapshot) setMasks(w *who) {
	for _, r := range w.roles {
		w.roleMask |= roleBit(r)
	}
	const read = privSet(1<<PrivSelectTable | 1<<PrivModifyTable)
	if len(w.roles) > 0 {
		s.sac.Range(func(id uint64, rules []sacRule) bool {
			for i := range rules {
				if rules[i].privs&read != 0 && w.hasAnyRole(rules[i].roles) {
					w.tagMask |= tagBit(id)
					break
				}
			}
			return true
		})
	}
	w.masks = true
}

// who resolves principal into buf's backing array (no allocation for up to
// len(buf) roles).
func (s *Snapshot) who(principal string, buf []uint64) who {
	w := who{name: principal}
	u, ok := s.users.Get(principal)
	if !ok {
		return w
	}
	w.u = u
	roles := append(buf[:0], u.roleIDs...)
	for _, gn := range u.groups {
		if g, ok := s.groups.Get(gn); ok {
			roles = append(roles, g.roleIDs...)
		}
	}
	w.roles = roles
	return w
}

func (w *who) hasRole(r uint64) bool {
	for _, x := range w.roles {
		if x == r {
			return true
		}
	}
	return false
}

func (w *who) hasAnyRole(rs []uint64) bool {
	for _, r := range rs {
		if w.hasRole(r) {
			return true
		}
	}
	return false
}

// hasRoleName reports whether w holds the role named name, directly or
// through a group.
func (s *Snapshot) hasRoleName(w *who, name string) bool {
	if w.u == nil {
		return false
	}
	if containsSorted(w.u.roles, name) {
		return true
	}
	for _, gn := range w.u.groups {
		if g, ok := s.groups.Get(gn); ok && containsSorted(g.roles, name) {
			return true
		}
	}
	return false
}

func (s *Snapshot) hasAnyRoleName(w *who, names []string) bool {
	for _, n := range names {
		if s.hasRoleName(w, n) {
			return true
		}
	}
	return false
}

func (w *who) owns(o Owner) bool {
	if w.u == nil {
		return false
	}
	switch o.Type {
	case OwnerUser:
		return o.Name == w.name
	case OwnerGroup:
		return containsSorted(w.u.groups, o.Name)
	}
	return false
}

// ownsChild reports whether w owns the object of c, as w.owns(c.o.owner),
// without touching the object unless c's owner hash is one of w's.
func (w *who) ownsChild(c child) bool {
	if w.u == nil {
		return false
	}
	if w.hashState == 0 {
		w.hashState = 2
		if len(w.u.groups) < len(w.ownerHashes) {
			w.hashState = 1
			w.ownerHashes[0] = ownerHash(Owner{OwnerUser, w.name})
			w.nHashes = 1
			for _, g := range w.u.groups {
				w.ownerHashes[w.nHashes] = ownerHash(Owner{OwnerGroup, g})
				w.nHashes++
			}
		}
	}
	if w.hashState == 1 {
		match := false
		for _, h := range w.ownerHashes[:w.nHashes] {
			match = match || h == c.ownerHash
		}
		if !match {
			return false
		}
	}
	return w.owns(c.o.owner)
}

// grantBits accumulates the caller's grants in gs (sorted by role): a linear
// scan for short lists, a binary search per caller role for long ones.
func (w *who) grantBits(gs []roleGrant) (allow, deny privSet) {
	if len(gs) <= 8 {
		for i := range gs {
			if w.hasRole(gs[i].role) {
				allow |= gs[i].allow
				deny |= gs[i].deny
			}
		}
		return allow, deny
	}
	for _, r := range w.roles {
		lo, hi := 0, len(gs)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if gs[m].role < r {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(gs) && gs[lo].role == r {
			allow |= gs[lo].allow
			deny |= gs[lo].deny
		}
	}
	return allow, deny
}
