package catalog

import (
	"encoding/json"
	"slices"
	"time"

	"lakegate/catalog/internal/pmap"
)

// Audit records who created and last modified an entity, with the
// caller-supplied command times (UTC).
type Audit struct {
	Creator          string    `json:"creator"`
	CreateTime       time.Time `json:"createTime"`
	LastModifier     string    `json:"lastModifier,omitempty"`
	LastModifiedTime time.Time `json:"lastModifiedTime,omitzero"`
}

// PolicyType is the type of a policy.
type PolicyType string

// Policy types.
const (
	PolicySystemAccessControl PolicyType = "system_access_control"
	PolicyRowFilter           PolicyType = "row_filter"
	PolicyColumnMask          PolicyType = "column_mask"
	PolicyCustom              PolicyType = "custom"
)

// Masks that column_mask policies may name besides an expression.
const (
	MaskNull   = "NULL"
	MaskRedact = "REDACT"
	MaskHash   = "HASH"
	MaskLast4  = "LAST4"
)

// PolicyContent is the content of a policy. Which fields may be set depends
// on the policy type:
//
//   - system_access_control: Privileges (non-empty, never USE_CATALOG or
//     USE_SCHEMA; a client's may list only TagPrivileges, see CheckEntry)
//     and ApplicableRoles (non-empty): a caller holding any of the roles
//     gets every listed privilege of TagPrivileges on objects carrying the
//     tag.
//   - row_filter: Expression (a SQL boolean expression), and at most one of
//     ApplicableRoles (the filter applies to holders of any) or ExemptRoles
//     (it applies to everyone except holders of any); with neither, it
//     applies to everyone.
//   - column_mask: Mask (NULL, REDACT, HASH, LAST4 or an expression over the
//     column) and optional ExemptRoles.
//   - custom: Custom, any JSON value (kept compacted).
type PolicyContent struct {
	Privileges      []Privilege     `json:"privileges,omitempty"`
	ApplicableRoles []string        `json:"applicable_roles,omitempty"`
	ExemptRoles     []string        `json:"exempt_roles,omitempty"`
	Expression      string          `json:"expression,omitempty"`
	Mask            string          `json:"mask,omitempty"`
	Custom          json.RawMessage `json:"custom,omitempty"`
}

// Selector says which assignments of a tag a policy attachment matches: an
// empty Value matches the tag's presence (any value or none), otherwise only
// assignments carrying Value.
type Selector struct {
	Value string `json:"value,omitempty"`
}

// ColumnDef describes a table column.
type ColumnDef struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Comment  string `json:"comment,omitempty"`
	Nullable bool   `json:"nullable,omitempty"`
}

// TagValue is a (tag, value) pair of a v2 association; an empty Value means
// the tag without a value.
type TagValue struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// ---- internal records (immutable once published) ----

type object struct {
	// Hot fields first: decisions touch only the first cache line.
	grants   []roleGrant  // sorted by role id
	tags     []assignment // sorted by tag id
	owner    Owner        // zero for columns
	typ      ObjectType
	nullable bool // columns
	id       uint64
	children pmap.Map[string, child]
	name     string // name part; the metalake's name for the root
	parent   uint64
	comment  string
	props    map[string]string // never mutated
	kind     string            // catalog type, or column data type
	columns  []string          // tables: column names in order
	audit    Audit
	data     *tableData // tables: storage id and versions; never nil for a table
}

func (o *object) clone() *object { c := *o; return &c }

// child is a children-map entry: the object plus what visibility checks
// need, so that filtering a listing rarely touches the objects themselves
// (Apply rebuilds the entry whenever the object changes). It is kept at 24
// bytes because FilterVisible's cost is the memory its lookups touch, so
// owner, grants and tags are summarized by filters that can only say "no":
// ownerHash is a hash of the owner, roleBloom has bit roleBit(r) set for
// the role r of every grant on the object, tagBloom bit tagBit(t) for every
// tag t assigned to it. A match is confirmed on the object itself.
type child struct {
	o         *object
	tagBloom  uint64
	roleBloom uint32
	ownerHash uint16
	typ       ObjectType
	flags     uint8 // childGrants, childTags
}

const (
	childGrants = 1 << iota
	childTags
)

func mkChild(o *object) child {
	c := child{o: o, ownerHash: ownerHash(o.owner), typ: o.typ}
	for i := range o.grants {
		c.flags |= childGrants
		c.roleBloom |= roleBit(o.grants[i].role)
	}
	for i := range o.tags {
		c.flags |= childTags
		c.tagBloom |= tagBit(o.tags[i].tag)
	}
	return c
}

// ownerHash is a 16-bit hash of an owner; equal owners have equal hashes.
func ownerHash(o Owner) uint16 {
	h := pmap.HashString(o.Name) ^ uint64(o.Type)*0x9e3779b97f4a7c15
	return uint16(h>>48 ^ h>>16)
}

// roleBit and tagBit are the bits of a role or tag id in the filters of a
// child entry.
func roleBit(id uint64) uint32 { return 1 << ((id * 0x9e3779b97f4a7c15) >> 59) }
func tagBit(id uint64) uint64  { return 1 << ((id * 0x9e3779b97f4a7c15) >> 58) }

func (o *object) get(name string) (*object, bool) {
	c, ok := o.children.Get(name)
	return c.o, ok
}

type assignment struct {
	tag    uint64
	values []string // sorted; empty = valueless
}

type roleGrant struct {
	role        uint64 // role id
	allow, deny privSet
}

// loc locates a catalog-tree object by id (renames change only the entry of
// the renamed object).
type loc struct {
	parent uint64
	name   string
	typ    ObjectType
}

type tag struct {
	id       uint64
	name     string
	comment  string
	props    map[string]string
	anyValue bool     // allowed values absent: any value (and none) allowed
	allowed  []string // when !anyValue: the allowed values (empty = no value)
	owner    Owner
	audit    Audit
	policies []attachment // sorted by policy id
	grants   []roleGrant
	objects  pmap.Map[uint64, struct{}]
}

func (t *tag) clone() *tag { c := *t; return &c }

type attachment struct {
	policy uint64
	sel    Selector
}

type policy struct {
	id      uint64
	name    string
	comment string
	typ     PolicyType
	enabled bool
	content PolicyContent
	privs   privSet // system_access_control privileges
	owner   Owner
	audit   Audit
	tags    []uint64 // attached tags, sorted
	grants  []roleGrant
}

func (p *policy) clone() *policy { c := *p; return &c }

type role struct {
	id     uint64
	name   string
	owner  Owner
	props  map[string]string
	audit  Audit
	grants []objGrant // sorted by (typ, id)
}

func (r *role) clone() *role { c := *r; return &c }

type objGrant struct {
	typ         ObjectType
	id          uint64
	allow, deny privSet
}

type user struct {
	name    string
	roles   []string // sorted
	roleIDs []uint64 // sorted, derived from roles
	groups  []string // sorted, derived from group members
	audit   Audit
}

func (u *user) clone() *user { c := *u; return &c }

type group struct {
	name    string
	members []string // sorted
	roles   []string // sorted
	roleIDs []uint64 // sorted, derived from roles
	audit   Audit
}

func (g *group) clone() *group { c := *g; return &c }

// ---- sorted string-set helpers (always return new slices) ----

func sortedInsert(ss []string, s string) ([]string, bool) {
	i, found := slices.BinarySearch(ss, s)
	if found {
		return ss, false
	}
	out := make([]string, 0, len(ss)+1)
	out = append(out, ss[:i]...)
	out = append(out, s)
	return append(out, ss[i:]...), true
}

func sortedRemove(ss []string, s string) ([]string, bool) {
	i, found := slices.BinarySearch(ss, s)
	if !found {
		return ss, false
	}
	out := make([]string, 0, len(ss)-1)
	out = append(out, ss[:i]...)
	return append(out, ss[i+1:]...), true
}

func containsSorted(ss []string, s string) bool {
	_, found := slices.BinarySearch(ss, s)
	return found
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// setGrant returns grants with role's entry replaced (removed when empty).
func setRoleGrant(gs []roleGrant, g roleGrant) []roleGrant {
	i, found := slices.BinarySearchFunc(gs, g.role, func(e roleGrant, r uint64) int { return cmpU64(e.role, r) })
	out := make([]roleGrant, 0, len(gs)+1)
	out = append(out, gs[:i]...)
	if g.allow|g.deny != 0 {
		out = append(out, g)
	}
	if found {
		i++
	}
	return append(out, gs[i:]...)
}

func findRoleGrant(gs []roleGrant, r uint64) roleGrant {
	for _, g := range gs {
		if g.role == r {
			return g
		}
	}
	return roleGrant{role: r}
}

func copyProps(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func sortedKeys[V any](m pmap.Map[string, V]) []string {
	ks := m.Keys()
	slices.Sort(ks)
	return ks
}
