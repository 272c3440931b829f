package catalog

import (
	"slices"
	"strings"
)

// tracer records, for Explain, which rule of the decision code decided. The
// decision functions take a *tracer and record through its methods, which
// do nothing on a nil receiver: Authorize passes nil, Explain a tracer, so
// an explanation's outcome is the decision's own.
type tracer struct {
	ownerLevel int    // path level of the owner rule that decided
	tagLevel   int    // path level of the assignment that reached the rule
	tag        uint64 // the tag of the system_access_control rule that allowed (0: none)
	rule       int    // its index among the tag's rules (sacRules)
	implied    bool   // VIEW_TAG/VIEW_POLICY allowed through APPLY_TAG/APPLY_POLICY
}

func (t *tracer) ownerAt(level int) {
	if t != nil {
		t.ownerLevel = level
	}
}

func (t *tracer) ruleAt(level int, tag uint64, rule int) {
	if t != nil {
		t.tagLevel, t.tag, t.rule = level, tag, rule
	}
}

func (t *tracer) impliedByApply() {
	if t != nil {
		t.implied = true
	}
}

// Explanation is the answer of Explain: a decision and the chain that made
// it. Lists are sorted (metalake first along the object's chain, then by
// name) and empty ones are left out of the JSON form, so that an
// explanation's bytes depend only on the state it explains.
type Explanation struct {
	User      string    `json:"user"`
	Privilege Privilege `json:"privilege"`
	Object    Object    `json:"object"`
	Allowed   bool      `json:"allowed"`
	// Reason is the Decision's reason (one of the Reason constants).
	Reason string `json:"reason"`
	// Rule says in one sentence which rule won and why.
	Rule string `json:"rule"`
	// DecidedBy names what decided, when something on the chain did.
	DecidedBy *DecidedBy `json:"decidedBy,omitempty"`
	// Roles are the user's roles: bound to it, or through a group.
	Roles []RoleBinding `json:"roles,omitempty"`
	// Owners are the owners of the object and of its ancestors (of a
	// domain: the metalake, the parent domain and the domain).
	Owners []OwnerLink `json:"owners,omitempty"`
	// Grants are the grants of the user's roles, on the object or an
	// ancestor, of the privilege and of those the rules also need
	// (USE_CATALOG, USE_SCHEMA; APPLY_TAG, APPLY_POLICY, MANAGE_DOMAIN
	// where they imply the privilege).
	Grants []GrantLink `json:"grants,omitempty"`
	// Tags are the object's effective tags, each with the
	// system_access_control policies attached to it.
	Tags []TagLink `json:"tags,omitempty"`
	// Read is what a read of the table applies for the user: set for an
	// allowed SELECT_TABLE on a table.
	Read *ReadLink `json:"read,omitempty"`
}

// DecidedBy names the element of the chain that decided: an owned object
// (Object), a grant (Role, Privilege and Object) or a tag policy (Policy, reached
// through Tag assigned on Object).
type DecidedBy struct {
	Object Object `json:"object,omitzero"`
	Role   string `json:"role,omitempty"`
	// Privilege is the deciding grant's (USE_CATALOG for a missing one,
	// APPLY_TAG for a VIEW_TAG it implies, …).
	Privilege Privilege `json:"privilege,omitempty"`
	Group     string    `json:"group,omitempty"` // the group the role or ownership comes through
	Tag       string    `json:"tag,omitempty"`
	Policy    string    `json:"policy,omitempty"`
}

// RoleBinding is one role of a user: bound to the user (Group empty) or to
// one of its groups.
type RoleBinding struct {
	Role  string `json:"role"`
	Group string `json:"group,omitempty"`
}

// OwnerLink is the owner of one object of the chain. Owned says whether the
// user is that owner, or a member of the owning group.
type OwnerLink struct {
	Object Object `json:"object"`
	Owner  Owner  `json:"owner"`
	Owned  bool   `json:"owned"`
}

// GrantLink is one grant of a role of the user: Privilege with Condition
// on Object, Inherited when Object is an ancestor of the explained object.
type GrantLink struct {
	Role      string    `json:"role"`
	Object    Object    `json:"object"`
	Privilege Privilege `json:"privilege"`
	Condition Condition `json:"condition"`
	Inherited bool      `json:"inherited"`
}

// TagLink is one effective tag of the object: its values, where it is
// assigned, and the system_access_control policies attached to it.
type TagLink struct {
	Tag       string       `json:"tag"`
	Values    []string     `json:"values,omitempty"`
	Source    Object       `json:"source"`
	Inherited bool         `json:"inherited"`
	Policies  []PolicyLink `json:"policies,omitempty"`
}

// PolicyLink is a system_access_control policy attached to a tag, and
// whether it confers the privilege on the user (Effect).
type PolicyLink struct {
	Policy          string      `json:"policy"`
	Enabled         bool        `json:"enabled"`
	Selector        Selector    `json:"selector"`
	Privileges      []Privilege `json:"privileges,omitempty"`
	ApplicableRoles []string    `json:"applicableRoles,omitempty"`
	// Held are the applicable roles the user holds.
	Held   []string `json:"held,omitempty"`
	Effect string   `json:"effect"`
}

// Effects of a system_access_control policy on an explained decision, in
// the order they are checked.
const (
	EffectDisabled    = "disabled"
	EffectNotSelected = "selector does not match the assignment"
	EffectNotListed   = "privilege not conferred by the policy"
	EffectNoRole      = "user holds none of its applicable roles"
	EffectConfers     = "confers the privilege"
)

// ReadLink is the row filter and the column masks a read of the table
// applies for the user (as RowFiltersAndMasks), or the conflict that makes
// the read refused.
type ReadLink struct {
	Filtered     bool         `json:"filtered"`
	Filter       string       `json:"filter,omitempty"`
	FilterPolicy string       `json:"filterPolicy,omitempty"`
	Masks        []ColumnMask `json:"masks,omitempty"`
	Conflict     string       `json:"conflict,omitempty"`
}

// Explain decides whether principal holds privilege on object, by the
// decision code of Authorize itself (its outcome is always Authorize's),
// and returns the chain that decided it: the user's roles, the owners along
// the object's chain, the grants of the user's roles that bear on the
// privilege, the effective tags with the system_access_control policies
// they select, the rule that won, and for an allowed SELECT_TABLE on a
// table the row filter and masks a read applies. It does not check who may
// see all this; see ViewExplain.
func (s *Snapshot) Explain(principal string, privilege Privilege, object Object) Explanation {
	var tr tracer
	d := s.authorize(principal, privilege, object, &tr)
	e := Explanation{User: principal, Privilege: privilege, Object: object, Allowed: d.Allowed, Reason: d.Reason}
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	if w.u == nil || d.Reason == ReasonInvalid || d.Reason == ReasonNotFound {
		return s.explainMissing(&w, e)
	}
	e.Roles = s.roleBindings(w.u)
	switch object.Type {
	case ObjectTag, ObjectPolicy, ObjectRole:
		s.explainEntity(&w, &e, &tr)
	case ObjectDomain:
		dom, _ := s.domainByName(object.Name)
		s.explainDomain(&w, &e, dom)
	case ObjectMetalake:
		if privilege == PrivUseDomain || privilege == PrivManageDomain {
			s.explainDomain(&w, &e, nil)
			break
		}
		fallthrough
	default:
		p, _ := s.resolve(object)
		s.explainPath(&w, &e, &tr, &p)
	}
	e.Rule = e.rule()
	return e
}

// explainMissing completes the explanation of a decision that did not reach
// an object (unknown user, invalid privilege, no such object): it depends on
// nothing but the user and the request, so a hidden object can be explained
// exactly as a missing one.
func (s *Snapshot) explainMissing(w *who, e Explanation) Explanation {
	e.Allowed = false
	if w.u != nil {
		e.Roles = s.roleBindings(w.u)
	}
	e.DecidedBy, e.Owners, e.Grants, e.Tags, e.Read = nil, nil, nil, nil, nil
	e.Rule = e.rule()
	return e
}

// ViewExplain is Explain for principal explaining its own access: an object
// it may not see (Visible) is explained exactly as a missing one, and the
// tags and policies it may not view (VIEW_TAG, VIEW_POLICY), and the owners
// of objects it may not see, are left out — a decision or a read they make
// is explained without naming them.
func (s *Snapshot) ViewExplain(principal string, privilege Privilege, object Object) Explanation {
	if privilege.Valid() && s.users.Has(principal) && !s.Visible(principal, object) {
		var buf [roleBufLen]uint64
		w := s.who(principal, buf[:])
		return s.explainMissing(&w, Explanation{User: principal, Privilege: privilege, Object: object, Reason: ReasonNotFound})
	}
	e := s.Explain(principal, privilege, object)
	// The chain of a visible object is visible but for a domain's parent,
	// whose owner is then left out (its name is no secret: ViewDomain
	// gives it).
	e.Owners = slices.DeleteFunc(e.Owners, func(o OwnerLink) bool { return !s.Visible(principal, o.Object) })
	if len(e.Owners) == 0 {
		e.Owners = nil
	}
	viewTag := func(name string) bool { return name != "" && s.Visible(principal, Tag(name)) }
	viewPolicy := func(name string) bool { return name != "" && s.Visible(principal, Policy(name)) }
	e.Tags = slices.DeleteFunc(e.Tags, func(t TagLink) bool { return !viewTag(t.Tag) })
	for i := range e.Tags {
		e.Tags[i].Policies = slices.DeleteFunc(e.Tags[i].Policies, func(p PolicyLink) bool { return !viewPolicy(p.Policy) })
		if len(e.Tags[i].Policies) == 0 {
			e.Tags[i].Policies = nil
		}
	}
	if len(e.Tags) == 0 {
		e.Tags = nil
	}
	if db := e.DecidedBy; db != nil && (db.Tag != "" || db.Policy != "") {
		if !viewTag(db.Tag) {
			db.Tag, db.Object = "", Object{}
		}
		if !viewPolicy(db.Policy) {
			db.Policy = ""
		}
	}
	if r := e.Read; r != nil {
		if r.FilterPolicy != "" && !viewPolicy(r.FilterPolicy) {
			r.Filter, r.FilterPolicy = "", ""
		}
		for i := range r.Masks {
			if !viewPolicy(r.Masks[i].Policy) {
				r.Masks[i].Policy = ""
			}
		}
		if r.Conflict != "" {
			// The conflict names the policies; say only that there is one.
			r.Conflict = "policies in effect on the table conflict: reads are refused"
		}
	}
	e.Rule = e.rule()
	return e
}

// roleBindings lists the roles of u, directly and through its groups,
// sorted by role then group ("" first).
func (s *Snapshot) roleBindings(u *user) []RoleBinding {
	var out []RoleBinding
	for _, r := range u.roles {
		out = append(out, RoleBinding{Role: r})
	}
	for _, gn := range u.groups {
		if g, ok := s.groups.Get(gn); ok {
			for _, r := range g.roles {
				out = append(out, RoleBinding{Role: r, Group: gn})
			}
		}
	}
	slices.SortFunc(out, func(a, b RoleBinding) int {
		if c := strings.Compare(a.Role, b.Role); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
	return out
}

// ownerLink describes owner o of object obj for w.
func ownerLink(w *who, obj Object, o Owner) OwnerLink {
	return OwnerLink{Object: obj, Owner: o, Owned: w.owns(o)}
}

// grantLinks appends the grants in gs (on obj) of w's roles for the
// privileges in privs.
func (s *Snapshot) grantLinks(out []GrantLink, w *who, gs []roleGrant, obj Object, inherited bool, privs privSet) []GrantLink {
	start := len(out)
	for _, g := range gs {
		if !w.hasRole(g.role) {
			continue
		}
		name, ok := s.roleByID.Get(g.role)
		if !ok {
			continue
		}
		for p := Privilege(1); p <= numPrivileges; p++ {
			if !privs.has(p) {
				continue
			}
			if g.allow.has(p) {
				out = append(out, GrantLink{Role: name, Object: obj, Privilege: p, Condition: Allow, Inherited: inherited})
			}
			if g.deny.has(p) {
				out = append(out, GrantLink{Role: name, Object: obj, Privilege: p, Condition: Deny, Inherited: inherited})
			}
		}
	}
	slices.SortFunc(out[start:], func(a, b GrantLink) int {
		if c := strings.Compare(a.Role, b.Role); c != 0 {
			return c
		}
		if a.Privilege != b.Privilege {
			return int(a.Privilege) - int(b.Privilege)
		}
		return int(a.Condition) - int(b.Condition)
	})
	return out
}

// explainPath fills in the chain of a metalake, catalog, schema, table or
// column.
func (s *Snapshot) explainPath(w *who, e *Explanation, tr *tracer, p *path) {
	privs := privSet(1 << e.Privilege)
	if p.n > 1 {
		privs |= 1 << PrivUseCatalog
	}
	if p.n > 2 {
		privs |= 1 << PrivUseSchema
	}
	objs := make([]Object, p.n)
	for i := 0; i < p.n; i++ {
		sp := *p
		sp.n = i + 1
		objs[i] = sp.object()
		if p.objs[i].typ != ObjectColumn {
			e.Owners = append(e.Owners, ownerLink(w, objs[i], p.objs[i].owner))
		}
		e.Grants = s.grantLinks(e.Grants, w, p.objs[i].grants, objs[i], i != p.n-1, privs)
	}
	if p.n > 1 {
		e.Tags = s.tagLinks(w, e.Privilege, p)
	}
	switch e.Reason {
	case ReasonMetalakeOwner, ReasonCatalogOwner, ReasonOwner:
		o := p.objs[tr.ownerLevel].owner
		e.DecidedBy = &DecidedBy{Object: objs[tr.ownerLevel]}
		if o.Type == OwnerGroup {
			e.DecidedBy.Group = o.Name
		}
	case ReasonTagPolicy:
		t, _ := s.tags.Get(tr.tag)
		var ids []uint64
		s.sacRulesOf(tr.tag, &ids)
		var pl *policy
		if tr.rule < len(ids) {
			pl, _ = s.policies.Get(ids[tr.rule])
		}
		if t != nil && pl != nil {
			e.DecidedBy = &DecidedBy{Object: objs[tr.tagLevel], Tag: t.name, Policy: pl.name}
			if _, link, ok := e.policyLink(t.name, pl.name); ok && len(link.Held) > 0 {
				e.DecidedBy.Role = link.Held[0]
				e.DecidedBy.Group = e.roleGroup(link.Held[0])
			}
		}
	case ReasonDenied, ReasonGrant, ReasonNoUseCatalog, ReasonNoUseSchema:
		priv, cond := e.Privilege, Deny
		switch e.Reason {
		case ReasonGrant:
			cond = Allow
		case ReasonNoUseCatalog:
			priv = PrivUseCatalog
		case ReasonNoUseSchema:
			priv = PrivUseSchema
		}
		e.DecidedBy = e.nearestGrant(priv, cond)
	}
	if e.Allowed && e.Privilege == PrivSelectTable && e.Object.Type == ObjectTable {
		e.Read = s.readLink(w, p)
	}
}

// nearestGrant names the grant of priv with cond nearest to the object (the
// last on the chain, metalake first), or nil.
func (e *Explanation) nearestGrant(priv Privilege, cond Condition) *DecidedBy {
	for i := len(e.Grants) - 1; i >= 0; i-- {
		g := e.Grants[i]
		if g.Privilege == priv && g.Condition == cond {
			return &DecidedBy{Object: g.Object, Role: g.Role, Privilege: priv, Group: e.roleGroup(g.Role)}
		}
	}
	return nil
}

// roleGroup returns "" when the user holds role directly, else the first
// group it holds it through.
func (e *Explanation) roleGroup(role string) string {
	group := ""
	for _, b := range e.Roles {
		if b.Role == role {
			if b.Group == "" {
				return ""
			}
			if group == "" {
				group = b.Group
			}
		}
	}
	return group
}

// tagLinks describes the effective tags of p's leaf and the
// system_access_control policies attached to each, from the tags, policies
// and role names themselves (not from the index the decision reads, so that
// the two are checked against each other).
func (s *Snapshot) tagLinks(w *who, priv Privilege, p *path) []TagLink {
	var out []TagLink
	for _, et := range s.effectiveTags(p) {
		tl := TagLink{Tag: et.Name, Values: et.Values, Source: et.Source, Inherited: et.Inherited}
		if len(tl.Values) == 0 {
			tl.Values = nil
		}
		t, _ := s.tagByName(et.Name)
		for _, at := range t.policies {
			pl, ok := s.policies.Get(at.policy)
			if !ok || pl.typ != PolicySystemAccessControl {
				continue
			}
			link := PolicyLink{Policy: pl.name, Enabled: pl.enabled, Selector: at.sel,
				Privileges: slices.Clone(pl.content.Privileges), ApplicableRoles: slices.Clone(pl.content.ApplicableRoles)}
			for _, r := range pl.content.ApplicableRoles {
				if s.hasRoleName(w, r) {
					link.Held = append(link.Held, r)
				}
			}
			switch {
			case !pl.enabled:
				link.Effect = EffectDisabled
			case at.sel.Value != "" && !contains(et.Values, at.sel.Value):
				link.Effect = EffectNotSelected
			case !slices.Contains(pl.content.Privileges, priv) || !tagPrivileges.has(priv):
				link.Effect = EffectNotListed
			case len(link.Held) == 0:
				link.Effect = EffectNoRole
			default:
				link.Effect = EffectConfers
			}
			tl.Policies = append(tl.Policies, link)
		}
		slices.SortFunc(tl.Policies, func(a, b PolicyLink) int { return strings.Compare(a.Policy, b.Policy) })
		out = append(out, tl)
	}
	return out
}

// readLink is what a read of the table at p applies for w, computed by
// RowFiltersAndMasks' own code.
func (s *Snapshot) readLink(w *who, p *path) *ReadLink {
	rr := s.readRulesOf(p)
	filter, filterPolicy, masks, err := rr.eval(s, w, p, nil)
	if err != nil {
		return &ReadLink{Conflict: err.Error()}
	}
	return &ReadLink{Filtered: filterPolicy != "", Filter: filter, FilterPolicy: filterPolicy, Masks: masks}
}

// explainEntity fills in the chain of a tag, policy or role: the metalake
// and the entity.
func (s *Snapshot) explainEntity(w *who, e *Explanation, tr *tracer) {
	var owner Owner
	var grants []roleGrant
	switch e.Object.Type {
	case ObjectTag:
		t, _ := s.tagByName(e.Object.Name)
		owner, grants = t.owner, t.grants
	case ObjectPolicy:
		pl, _ := s.policyByName(e.Object.Name)
		owner, grants = pl.owner, pl.grants
	case ObjectRole:
		r, _ := s.roles.Get(e.Object.Name)
		owner = r.owner
	}
	privs := privSet(1 << e.Privilege)
	switch e.Privilege {
	case PrivViewTag:
		privs |= 1 << PrivApplyTag
	case PrivViewPolicy:
		privs |= 1 << PrivApplyPolicy
	}
	ml := Object{ObjectMetalake, s.root.name}
	e.Owners = []OwnerLink{ownerLink(w, ml, s.root.owner), ownerLink(w, e.Object, owner)}
	e.Grants = s.grantLinks(e.Grants, w, s.root.grants, ml, true, privs)
	e.Grants = s.grantLinks(e.Grants, w, grants, e.Object, false, privs)
	switch e.Reason {
	case ReasonMetalakeOwner:
		e.DecidedBy = ownerDecider(ml, s.root.owner)
	case ReasonOwner:
		e.DecidedBy = ownerDecider(e.Object, owner)
	case ReasonDenied:
		e.DecidedBy = e.nearestGrant(e.Privilege, Deny)
	case ReasonGrant:
		priv := e.Privilege
		if tr.implied {
			priv = map[Privilege]Privilege{PrivViewTag: PrivApplyTag, PrivViewPolicy: PrivApplyPolicy}[priv]
		}
		e.DecidedBy = e.nearestGrant(priv, Allow)
	}
}

func ownerDecider(o Object, owner Owner) *DecidedBy {
	d := &DecidedBy{Object: o}
	if owner.Type == OwnerGroup {
		d.Group = owner.Name
	}
	return d
}

// explainDomain fills in the chain of a domain (nil: the metalake, for
// USE_DOMAIN or MANAGE_DOMAIN on it): the metalake, its parent, itself.
func (s *Snapshot) explainDomain(w *who, e *Explanation, d *domain) {
	privs := privSet(1<<PrivUseDomain | 1<<PrivManageDomain)
	ml := Object{ObjectMetalake, s.root.name}
	e.Owners = []OwnerLink{ownerLink(w, ml, s.root.owner)}
	e.Grants = s.grantLinks(e.Grants, w, s.root.grants, ml, d != nil, privs)
	owners := []OwnerLink{}
	if d != nil {
		if d.parent != 0 {
			if par, ok := s.domains.Get(d.parent); ok {
				po := Domain(par.name)
				owners = append(owners, ownerLink(w, po, par.owner))
				e.Grants = s.grantLinks(e.Grants, w, par.grants, po, true, privs)
			}
		}
		owners = append(owners, ownerLink(w, Domain(d.name), d.owner))
		e.Grants = s.grantLinks(e.Grants, w, d.grants, Domain(d.name), false, privs)
	}
	e.Owners = append(e.Owners, owners...)
	switch e.Reason {
	case ReasonMetalakeOwner:
		e.DecidedBy = ownerDecider(ml, s.root.owner)
	case ReasonOwner:
		for _, o := range owners {
			if o.Owned {
				e.DecidedBy = ownerDecider(o.Object, o.Owner)
				break
			}
		}
	case ReasonDenied:
		e.DecidedBy = e.nearestGrant(e.Privilege, Deny)
	case ReasonGrant:
		// MANAGE_DOMAIN implies USE_DOMAIN: the nearest effective grant.
		a, dn := map[Privilege]bool{}, map[Privilege]bool{}
		for _, g := range e.Grants {
			if g.Condition == Allow {
				a[g.Privilege] = true
			} else {
				dn[g.Privilege] = true
			}
		}
		priv := e.Privilege
		if !a[priv] || dn[priv] {
			priv = PrivManageDomain
		}
		e.DecidedBy = e.nearestGrant(priv, Allow)
	}
}

// rule says in one sentence which rule decided, from the explanation alone
// (so that a redacted explanation says no more than it shows).
func (e *Explanation) rule() string {
	priv := e.Privilege.String()
	db := e.DecidedBy
	if db == nil {
		db = &DecidedBy{}
	}
	via := func(group string) string {
		if group == "" {
			return ""
		}
		return " (through group " + group + ")"
	}
	grant := func(what string) string {
		s := "role " + db.Role + via(db.Group) + " " + what + " " + db.Privilege.String() + " on " + db.Object.String()
		if db.Object != e.Object {
			s += ", inherited by " + e.Object.String()
		}
		return s
	}
	switch e.Reason {
	case ReasonInvalid:
		return "not a privilege"
	case ReasonUnknownPrincipal:
		return "USER " + e.User + " is not a user of the metalake"
	case ReasonNotFound:
		return "no such object"
	case ReasonMetalakeOwner:
		return "the user owns the metalake" + via(db.Group) + ": its owner holds every privilege in it"
	case ReasonCatalogOwner:
		return "the user owns " + db.Object.String() + via(db.Group) + ": a catalog's owner holds every privilege on it and below"
	case ReasonOwner:
		return "the user owns " + db.Object.String() + via(db.Group) + ": ownership allows whatever the grants say"
	case ReasonNoUseCatalog, ReasonNoUseSchema:
		need, on := PrivUseCatalog, "catalog"
		if e.Reason == ReasonNoUseSchema {
			need, on = PrivUseSchema, "schema"
		}
		s := priv + " below a " + on + " needs " + need.String() + " on it, allowed and not denied: "
		if db.Role != "" {
			return s + "role " + db.Role + via(db.Group) + " denies it on " + db.Object.String() + " (DENY over ALLOW)"
		}
		return s + "no role of the user is granted it"
	case ReasonDenied:
		s := "DENY over ALLOW: " + grant("denies")
		var over []string
		for _, g := range e.Grants {
			if g.Privilege == e.Privilege && g.Condition == Allow {
				over = append(over, "role "+g.Role+" on "+g.Object.String())
			}
		}
		for _, t := range e.Tags {
			for _, p := range t.Policies {
				if p.Effect == EffectConfers {
					over = append(over, "policy "+p.Policy+" through tag "+t.Tag)
				}
			}
		}
		if len(over) > 0 {
			s += "; it overrides the ALLOW of " + strings.Join(over, ", ")
		}
		return s
	case ReasonGrant:
		if db.Role == "" {
			return "a grant allows " + priv
		}
		if db.Privilege != e.Privilege {
			return grant("allows") + ", which implies " + priv + ", and no role denies " + db.Privilege.String()
		}
		return grant("allows") + ", and no role denies it"
	case ReasonTagPolicy:
		if db.Policy == "" {
			return "an enabled system_access_control policy reached through the object's tags confers " + priv + " on a role the user holds, and no role denies it"
		}
		s := "policy " + db.Policy + " (system_access_control) confers " + priv + " on role " + db.Role + via(db.Group) + ", which the user holds"
		if db.Tag != "" {
			s += "; it is attached to tag " + db.Tag
			if tl, link, ok := e.policyLink(db.Tag, db.Policy); ok {
				if link.Selector.Value != "" {
					s += " for the value " + link.Selector.Value
				}
				s += ", assigned on " + tl.Source.String()
				if len(tl.Values) > 0 {
					s += " as " + db.Tag + "=" + strings.Join(tl.Values, ",")
				}
				if tl.Inherited {
					s += " and inherited by " + e.Object.String()
				}
			}
		}
		return s + "; no grant allows or denies " + priv
	case ReasonNoGrant:
		s := "no grant allows " + priv
		if e.Object.Type.depth() >= 1 {
			s += " and no enabled system_access_control policy reached through the object's tags confers it on a role of the user"
		}
		var disabled []string
		for _, t := range e.Tags {
			for _, p := range t.Policies {
				if p.Effect == EffectDisabled && len(p.Held) > 0 && slices.Contains(p.Privileges, e.Privilege) &&
					(p.Selector.Value == "" || slices.Contains(t.Values, p.Selector.Value)) {
					disabled = append(disabled, p.Policy)
				}
			}
		}
		if len(disabled) > 0 {
			s += " (disabled, so without effect: " + strings.Join(disabled, ", ") + ")"
		}
		return s
	}
	return e.Reason
}

// policyLink finds policy under tag.
func (e *Explanation) policyLink(tag, policy string) (TagLink, PolicyLink, bool) {
	for _, t := range e.Tags {
		if t.Tag != tag {
			continue
		}
		for _, p := range t.Policies {
			if p.Policy == policy {
				return t, p, true
			}
		}
	}
	return TagLink{}, PolicyLink{}, false
}
