package catalog

import (
	"slices"
	"strings"
)

// ObjectInfo describes a catalog, schema, table or column.
type ObjectInfo struct {
	Object     Object            `json:"object"`
	Owner      Owner             `json:"owner,omitzero"` // zero for columns
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"` // do not modify
	Type       string            `json:"kind,omitempty"`       // catalog type or column data type
	Nullable   bool              `json:"nullable,omitempty"`
	Columns    []ColumnDef       `json:"columns,omitempty"`   // tables, in order
	StorageID  string            `json:"storageId,omitempty"` // tables: see CreateTable
	Version    uint64            `json:"version,omitempty"`   // tables: current version, 0 = no data committed
	Tags       []TagValue        `json:"tags,omitempty"`      // direct assignments, sorted
	Audit      Audit             `json:"audit"`
}

// TagInfo describes a tag.
type TagInfo struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	// AllowedValues is nil for any value, empty for no value.
	AllowedValues []string      `json:"allowedValues"`
	Owner         Owner         `json:"owner"`
	Policies      []PolicyOnTag `json:"policies,omitempty"` // sorted by policy
	Audit         Audit         `json:"audit"`
}

// PolicyOnTag is one attachment of a policy to a tag.
type PolicyOnTag struct {
	Policy   string   `json:"policy"`
	Tag      string   `json:"tag"`
	Selector Selector `json:"selector"`
}

// PolicyInfo describes a policy.
type PolicyInfo struct {
	Name    string        `json:"name"`
	Comment string        `json:"comment,omitempty"`
	Type    PolicyType    `json:"policyType"`
	Enabled bool          `json:"enabled"`
	Content PolicyContent `json:"content"`
	Owner   Owner         `json:"owner"`
	Tags    []PolicyOnTag `json:"tags,omitempty"` // sorted by tag
	Audit   Audit         `json:"audit"`
}

// RoleInfo describes a role and its grants (sorted by object, privilege).
type RoleInfo struct {
	Name       string            `json:"name"`
	Owner      Owner             `json:"owner"`
	Properties map[string]string `json:"properties,omitempty"`
	Grants     []Grant           `json:"grants,omitempty"`
	Audit      Audit             `json:"audit"`
}

// UserInfo describes a user.
type UserInfo struct {
	Name   string   `json:"name"`
	Roles  []string `json:"roles,omitempty"`
	Groups []string `json:"groups,omitempty"`
	Audit  Audit    `json:"audit"`
}

// GroupInfo describes a group.
type GroupInfo struct {
	Name    string   `json:"name"`
	Members []string `json:"members,omitempty"`
	Roles   []string `json:"roles,omitempty"`
	Audit   Audit    `json:"audit"`
}

// Object returns the catalog-tree object (or the metalake) named o. Reads
// without a principal do not check visibility: callers answering a request
// check Visible first.
func (s *Snapshot) Object(o Object) (ObjectInfo, bool) {
	p, ok := s.resolve(o)
	if !ok {
		return ObjectInfo{}, false
	}
	l := p.leaf()
	info := ObjectInfo{Object: o, Owner: l.owner, Comment: l.comment, Properties: l.props, Type: l.kind,
		Nullable: l.nullable, Audit: l.audit}
	if l.data != nil {
		info.StorageID, info.Version = l.data.storage, l.data.current()
	}
	for _, c := range l.columns {
		co, _ := l.get(c)
		info.Columns = append(info.Columns, ColumnDef{Name: co.name, Type: co.kind, Comment: co.comment, Nullable: co.nullable})
	}
	for _, a := range l.tags {
		t, _ := s.tags.Get(a.tag)
		if len(a.values) == 0 {
			info.Tags = append(info.Tags, TagValue{Name: t.name})
		}
		for _, v := range a.values {
			info.Tags = append(info.Tags, TagValue{Name: t.name, Value: v})
		}
	}
	slices.SortFunc(info.Tags, func(a, b TagValue) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	return info, true
}

// Children returns the sorted names of the children of the metalake (its
// catalogs), a catalog (schemas) or a schema (tables); for a table, its
// column names in order.
func (s *Snapshot) Children(o Object) ([]string, bool) {
	p, ok := s.resolve(o)
	if !ok {
		return nil, false
	}
	if o.Type == ObjectTable {
		return slices.Clone(p.leaf().columns), true
	}
	return sortedKeys(p.leaf().children), true
}

// Tag returns the tag named name.
func (s *Snapshot) Tag(name string) (TagInfo, bool) {
	t, ok := s.tagByName(name)
	if !ok {
		return TagInfo{}, false
	}
	info := TagInfo{Name: t.name, Comment: t.comment, Properties: t.props, Owner: t.owner, Audit: t.audit}
	if !t.anyValue {
		info.AllowedValues = append([]string{}, t.allowed...)
	}
	for _, a := range t.policies {
		p, _ := s.policies.Get(a.policy)
		info.Policies = append(info.Policies, PolicyOnTag{Policy: p.name, Tag: t.name, Selector: a.sel})
	}
	slices.SortFunc(info.Policies, func(a, b PolicyOnTag) int { return strings.Compare(a.Policy, b.Policy) })
	return info, true
}

// TagNames returns all tag names, sorted.
func (s *Snapshot) TagNames() []string { return sortedKeys(s.tagIDs) }

// ObjectsWithTag returns the objects that carry tag name directly (with
// value, when value is not empty), sorted by type then name.
func (s *Snapshot) ObjectsWithTag(name, value string) ([]Object, bool) {
	t, ok := s.tagByName(name)
	if !ok {
		return nil, false
	}
	var out []Object
	t.objects.Range(func(id uint64, _ struct{}) bool {
		p, ok := s.pathByID(id)
		if !ok {
			return true
		}
		if value != "" {
			for _, a := range p.leaf().tags {
				if a.tag == t.id && !containsSorted(a.values, value) {
					return true
				}
			}
		}
		out = append(out, p.object())
		return true
	})
	slices.SortFunc(out, cmpObject)
	return out, true
}

func cmpObject(a, b Object) int {
	if a.Type != b.Type {
		return int(a.Type) - int(b.Type)
	}
	return strings.Compare(a.Name, b.Name)
}

// Policy returns the policy named name.
func (s *Snapshot) Policy(name string) (PolicyInfo, bool) {
	p, ok := s.policyByName(name)
	if !ok {
		return PolicyInfo{}, false
	}
	c := p.content
	c.Privileges = slices.Clone(c.Privileges)
	c.ApplicableRoles = slices.Clone(c.ApplicableRoles)
	c.ExemptRoles = slices.Clone(c.ExemptRoles)
	c.Custom = slices.Clone(c.Custom)
	info := PolicyInfo{Name: p.name, Comment: p.comment, Type: p.typ, Enabled: p.enabled, Content: c, Owner: p.owner, Audit: p.audit}
	for _, tid := range p.tags {
		t, _ := s.tags.Get(tid)
		for _, a := range t.policies {
			if a.policy == p.id {
				info.Tags = append(info.Tags, PolicyOnTag{Policy: p.name, Tag: t.name, Selector: a.sel})
			}
		}
	}
	slices.SortFunc(info.Tags, func(a, b PolicyOnTag) int { return strings.Compare(a.Tag, b.Tag) })
	return info, true
}

// PolicyNames returns all policy names, sorted.
func (s *Snapshot) PolicyNames() []string { return sortedKeys(s.policyIDs) }

// Role returns the role named name.
func (s *Snapshot) Role(name string) (RoleInfo, bool) {
	r, ok := s.roles.Get(name)
	if !ok {
		return RoleInfo{}, false
	}
	info := RoleInfo{Name: r.name, Owner: r.owner, Properties: r.props, Audit: r.audit}
	for _, g := range r.grants {
		o, ok := s.objectByID(g.typ, g.id)
		if !ok {
			continue
		}
		for _, p := range privList(g.allow) {
			info.Grants = append(info.Grants, Grant{Object: o, Privilege: p, Condition: Allow})
		}
		for _, p := range privList(g.deny) {
			info.Grants = append(info.Grants, Grant{Object: o, Privilege: p, Condition: Deny})
		}
	}
	slices.SortStableFunc(info.Grants, func(a, b Grant) int {
		if c := cmpObject(a.Object, b.Object); c != 0 {
			return c
		}
		return int(a.Privilege) - int(b.Privilege)
	})
	return info, true
}

// RoleNames returns all role names, sorted.
func (s *Snapshot) RoleNames() []string { return sortedKeys(s.roles) }

// User returns the user named name.
func (s *Snapshot) User(name string) (UserInfo, bool) {
	u, ok := s.users.Get(name)
	if !ok {
		return UserInfo{}, false
	}
	return UserInfo{Name: u.name, Roles: slices.Clone(u.roles), Groups: slices.Clone(u.groups), Audit: u.audit}, true
}

// UserNames returns all user names, sorted.
func (s *Snapshot) UserNames() []string { return sortedKeys(s.users) }

// Group returns the group named name.
func (s *Snapshot) Group(name string) (GroupInfo, bool) {
	g, ok := s.groups.Get(name)
	if !ok {
		return GroupInfo{}, false
	}
	return GroupInfo{Name: g.name, Members: slices.Clone(g.members), Roles: slices.Clone(g.roles), Audit: g.audit}, true
}

// GroupNames returns all group names, sorted.
func (s *Snapshot) GroupNames() []string { return sortedKeys(s.groups) }

// Owner returns the owner of a metalake, catalog, schema, table, tag, policy
// or role.
func (s *Snapshot) Owner(o Object) (Owner, bool) {
	switch o.Type {
	case ObjectTag:
		t, ok := s.tagByName(o.Name)
		if !ok {
			return Owner{}, false
		}
		return t.owner, true
	case ObjectPolicy:
		p, ok := s.policyByName(o.Name)
		if !ok {
			return Owner{}, false
		}
		return p.owner, true
	case ObjectRole:
		r, ok := s.roles.Get(o.Name)
		if !ok {
			return Owner{}, false
		}
		return r.owner, true
	case ObjectDomain:
		d, ok := s.domainByName(o.Name)
		if !ok {
			return Owner{}, false
		}
		return d.owner, true
	case ObjectColumn:
		return Owner{}, false
	}
	p, ok := s.resolve(o)
	if !ok {
		return Owner{}, false
	}
	return p.leaf().owner, true
}

// ---- reads on behalf of a principal (VIEW_TAG / VIEW_POLICY) ----

func (s *Snapshot) notFound(op string, o Object) error {
	return &Error{Op: op, Target: o.String(), Err: ErrNotFound}
}

// ViewTag returns the tag if principal may view it (VIEW_TAG, implied by
// APPLY_TAG and ownership), else ErrNotFound. Its policy attachments are
// limited to policies the principal may view.
func (s *Snapshot) ViewTag(principal, name string) (TagInfo, error) {
	if !s.Visible(principal, Tag(name)) {
		return TagInfo{}, s.notFound("ViewTag", Tag(name))
	}
	t, _ := s.Tag(name)
	t.Policies = slices.DeleteFunc(t.Policies, func(p PolicyOnTag) bool { return !s.Visible(principal, Policy(p.Policy)) })
	return t, nil
}

// ViewTags returns the tags principal may view, sorted by name.
func (s *Snapshot) ViewTags(principal string) []TagInfo {
	var out []TagInfo
	for _, n := range s.TagNames() {
		if t, err := s.ViewTag(principal, n); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// ViewPolicy returns the policy if principal may view it (VIEW_POLICY,
// implied by APPLY_POLICY and ownership), else ErrNotFound. Its tag
// attachments are limited to tags the principal may view.
func (s *Snapshot) ViewPolicy(principal, name string) (PolicyInfo, error) {
	if !s.Visible(principal, Policy(name)) {
		return PolicyInfo{}, s.notFound("ViewPolicy", Policy(name))
	}
	p, _ := s.Policy(name)
	p.Tags = slices.DeleteFunc(p.Tags, func(t PolicyOnTag) bool { return !s.Visible(principal, Tag(t.Tag)) })
	return p, nil
}

// ViewPolicies returns the policies principal may view, sorted by name.
func (s *Snapshot) ViewPolicies(principal string) []PolicyInfo {
	var out []PolicyInfo
	for _, n := range s.PolicyNames() {
		if p, err := s.ViewPolicy(principal, n); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// ViewEffectiveTags returns the effective tags of an object visible to
// principal, leaving out tags it may not view; an invisible object is
// ErrNotFound.
func (s *Snapshot) ViewEffectiveTags(principal string, o Object) ([]EffectiveTag, error) {
	if !s.Visible(principal, o) {
		return nil, s.notFound("ViewEffectiveTags", o)
	}
	tags, err := s.EffectiveTags(o)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(tags, func(t EffectiveTag) bool { return !s.Visible(principal, Tag(t.Name)) }), nil
}

// ViewPoliciesOf returns the derived policies of an object visible to
// principal, leaving out policies it may not view (they are still
// enforced); an invisible object is ErrNotFound. Each policy is reached
// through the nearest tag principal may view (VIEW_TAG); one reached only
// through tags it may not view is redacted: Tag empty, Selector and Source
// zero (the selector's value is the tag's, and the source shows where the
// tag is assigned).
func (s *Snapshot) ViewPoliciesOf(principal string, o Object) ([]DerivedPolicy, error) {
	if !s.Visible(principal, o) {
		return nil, s.notFound("ViewPoliciesOf", o)
	}
	p, ok := s.resolve(o)
	if !ok || p.n < 2 {
		return nil, &Error{Op: "PoliciesOf", Target: o.String(), Err: ErrNotFound}
	}
	seen := map[string]bool{}
	view := func(tag string) bool {
		v, ok := seen[tag]
		if !ok {
			v = s.Visible(principal, Tag(tag))
			seen[tag] = v
		}
		return v
	}
	ps := slices.DeleteFunc(s.policiesOfFor(&p, "", view), func(p DerivedPolicy) bool { return !s.Visible(principal, Policy(p.Policy)) })
	for i := range ps {
		if !view(ps[i].Tag) {
			ps[i].Tag, ps[i].Selector, ps[i].Source = "", Selector{}, Object{}
		}
	}
	return ps, nil
}

// ViewObjectsWithTag returns the objects carrying tag name (with value when
// not empty) that principal may see; the tag itself needs VIEW_TAG.
func (s *Snapshot) ViewObjectsWithTag(principal, name, value string) ([]Object, error) {
	if !s.Visible(principal, Tag(name)) {
		return nil, s.notFound("ViewObjectsWithTag", Tag(name))
	}
	objs, _ := s.ObjectsWithTag(name, value)
	return s.FilterVisible(principal, objs), nil
}
