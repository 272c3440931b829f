package catalog

import (
	"slices"
	"strings"
)

// Domains group assets under a business name for discovery. A domain is
// backed by a tag (by id: renaming the tag keeps the binding, dropping it
// leaves the domain without a backing tag and without members); its members
// are computed from the snapshot, never stored (see DomainMembers). Domains
// form a one-level hierarchy: a domain is top-level or the subdomain of a
// top-level domain. Names are unique in the metalake across both levels and
// follow the rules of tag names (CheckEntityName; '/' and '.' are allowed).
//
// Every hierarchy rule is checked when the command is applied, against the
// snapshot it is applied to, so commands racing through the log are ordered
// by it and the rules hold after every applied command (see
// CheckDomainInvariants):
//
//	C1 a domain is not its own parent
//	C2 a parent is top-level
//	C3 a subdomain has no subdomains (a domain with subdomains cannot get a parent)
//	C4 parent and child are in the same metalake (a snapshot is one metalake:
//	   a parent is looked up by name in it)
//	C5 a domain has at most one parent (attaching a domain that has one moves it)
//	C6 a PUBLISHED domain has a PUBLISHED parent or none (publishing a
//	   subdomain needs a published parent; unpublishing needs no published
//	   subdomains; moving a published domain needs a published parent)
//
// Violations are *DomainError values wrapping ErrInvalidArgument, with Rule
// "C1" … "C6".
//
// Domain privileges: MANAGE_DOMAIN (includes USE_DOMAIN) and USE_DOMAIN,
// bindable on the metalake and on domains. Grants and ownership on a domain
// also apply to its subdomains, through the current parent. An explicit
// DENY on the metalake, the current parent or the domain beats any ALLOW on
// any of them; only ownership (of the metalake, the parent or the domain)
// overrides a DENY. A PUBLISHED domain is visible to USE_DOMAIN holders; a
// DRAFT domain only to MANAGE_DOMAIN holders (owners included).

// DomainStatus is DRAFT or PUBLISHED.
type DomainStatus string

// Domain statuses.
const (
	DomainDraft     DomainStatus = "DRAFT"
	DomainPublished DomainStatus = "PUBLISHED"
)

// DomainTag names a domain's backing tag: an existing tag, with an optional
// value, or (CreateDomain only) a new tag to create, Create set and no value.
type DomainTag struct {
	Name   string `json:"name"`
	Value  string `json:"value,omitempty"`
	Create bool   `json:"create,omitempty"`
}

// Rules of DomainError.
const (
	RuleC1 = "C1" // not its own parent
	RuleC2 = "C2" // the parent is top-level
	RuleC3 = "C3" // the child has no subdomains
	RuleC4 = "C4" // same metalake
	RuleC5 = "C5" // one parent
	RuleC6 = "C6" // PUBLISHED only under PUBLISHED

	RuleNoSuchDomain           = "NoSuchDomain"           // ErrNotFound: missing, or an invisible DRAFT
	RuleDomainAlreadyExists    = "DomainAlreadyExists"    // ErrAlreadyExists
	RuleNonEmptyDomain         = "NonEmptyDomain"         // ErrNonEmpty: dropping a domain with subdomains
	RuleNoSuchTag              = "NoSuchTag"              // ErrNotFound: the backing tag named does not exist (or is invisible)
	RuleTagAlreadyExists       = "TagAlreadyExists"       // ErrAlreadyExists: a created backing tag's name is taken
	RuleBackingTagAlreadyBound = "BackingTagAlreadyBound" // ErrAlreadyExists: the binding conflicts with another domain's
)

// DomainError is a rejected domain command or read: Rule is one of the Rule
// constants (C1–C6 or a REST error type), Err the sentinel it wraps.
type DomainError struct {
	Rule   string
	Detail string
	Err    error
}

func (e *DomainError) Error() string {
	return e.Err.Error() + ": " + e.Rule + ": " + e.Detail
}

// Unwrap returns the sentinel.
func (e *DomainError) Unwrap() error { return e.Err }

func domainErr(sentinel error, rule, detail string) error {
	return &DomainError{Rule: rule, Detail: detail, Err: sentinel}
}

func noSuchDomain(name string) error {
	return domainErr(ErrNotFound, RuleNoSuchDomain, Domain(name).String())
}

func noSuchTag(name string) error { return domainErr(ErrNotFound, RuleNoSuchTag, Tag(name).String()) }

// ---- internal record ----

type domain struct {
	id        uint64
	name      string
	comment   string
	props     map[string]string // never mutated
	published bool
	owner     Owner
	parent    uint64   // 0: top-level
	relAudit  Audit    // of the edge to the parent (zero when top-level)
	subs      []uint64 // subdomain ids, sorted (derived from parent)
	tag       uint64   // backing tag id; 0: none
	value     string   // backing tag value; "": valueless binding
	grants    []roleGrant
	audit     Audit
}

func (d *domain) clone() *domain { c := *d; return &c }

func (d *domain) status() DomainStatus {
	if d.published {
		return DomainPublished
	}
	return DomainDraft
}

func (s *Snapshot) domainByName(name string) (*domain, bool) {
	id, ok := s.domainIDs.Get(name)
	if !ok {
		return nil, false
	}
	return s.domains.Get(id)
}

func (s *Snapshot) domainName(id uint64) string {
	if d, ok := s.domains.Get(id); ok {
		return d.name
	}
	return ""
}

// ---- commands ----

// CreateDomain creates a DRAFT domain owned by the actor, backed by
// BackingTag (required): with Create, a new tag of that name taking no
// value, owned by the actor (an existing tag of that name is
// TagAlreadyExists, never adopted; a value is rejected); otherwise an
// existing tag (NoSuchTag when missing) with an optional Value following the
// tag's allowed values. A tag has either one valueless binding or bindings
// with distinct values (else BackingTagAlreadyBound). With Parent, the
// domain is created under it (C2). Requires MANAGE_DOMAIN on the metalake
// and, with Create, CREATE_TAG, otherwise ownership of the tag or the
// metalake; with Parent also MANAGE_DOMAIN on the parent.
type CreateDomain struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
	BackingTag DomainTag         `json:"backingTag"`
	Parent     string            `json:"parent,omitempty"`
}

// DomainUpdate is one change of AlterDomain: Type "rename" (NewName),
// "updateComment" (NewComment), "setProperty" (Property, Value) or
// "removeProperty" (Property).
type DomainUpdate struct {
	Type       string `json:"@type"`
	NewName    string `json:"newName,omitempty"`
	NewComment string `json:"newComment,omitempty"`
	Property   string `json:"property,omitempty"`
	Value      string `json:"value,omitempty"`
}

// AlterDomain applies updates to a domain, all or nothing. Renaming never
// renames the backing tag. Requires MANAGE_DOMAIN on the domain.
type AlterDomain struct {
	Name    string         `json:"name"`
	Updates []DomainUpdate `json:"updates"`
}

// SetDomainStatus publishes (PUBLISHED) or unpublishes (DRAFT) a domain; the
// current status is a no-op. Publishing a subdomain needs a published parent
// and unpublishing a domain needs no published subdomains (C6). Its Op is
// "PublishDomain" or "UnpublishDomain". Requires MANAGE_DOMAIN on the
// domain.
type SetDomainStatus struct {
	Name   string       `json:"name"`
	Status DomainStatus `json:"status"`
}

// SetDomainParent attaches a domain under Parent, or moves it there when it
// has a parent (C5: the single edge is re-pointed); the current parent is a
// no-op. C1, C2, C3 and C6 are checked. The event's detail carries the old
// and new parent. Requires MANAGE_DOMAIN on the domain and on Parent.
type SetDomainParent struct {
	Name   string `json:"name"`
	Parent string `json:"parent"`
}

// DetachDomain makes a domain top-level (a top-level domain is a no-op). The
// event's detail carries the old parent. Requires MANAGE_DOMAIN on the
// domain (the current parent's suffices).
type DetachDomain struct {
	Name string `json:"name"`
}

// SetDomainBackingTag replaces the backing tag of a domain (an existing tag,
// Create is rejected), or removes it when BackingTag is nil. The same
// binding is a no-op; assets carrying only the old tag drop out, nothing is
// migrated. The rules of CreateDomain apply (NoSuchTag, allowed values,
// BackingTagAlreadyBound). Requires MANAGE_DOMAIN on the domain and, to set
// a tag, ownership of it or of the metalake.
type SetDomainBackingTag struct {
	Name       string     `json:"name"`
	BackingTag *DomainTag `json:"backingTag"`
}

// DropDomain drops a domain, its grants and its edge to its parent; tags and
// their assignments stay. A domain with subdomains is refused
// (NonEmptyDomain, ErrNonEmpty). Requires MANAGE_DOMAIN on the domain.
type DropDomain struct {
	Name string `json:"name"`
}

// Op returns "CreateDomain".
func (CreateDomain) Op() string { return "CreateDomain" }

// Op returns "AlterDomain".
func (AlterDomain) Op() string { return "AlterDomain" }

// Op returns "PublishDomain" or "UnpublishDomain".
func (c SetDomainStatus) Op() string {
	if c.Status == DomainDraft {
		return "UnpublishDomain"
	}
	return "PublishDomain"
}

// Op returns "SetDomainParent".
func (SetDomainParent) Op() string { return "SetDomainParent" }

// Op returns "DetachDomain".
func (DetachDomain) Op() string { return "DetachDomain" }

// Op returns "SetDomainBackingTag".
func (SetDomainBackingTag) Op() string { return "SetDomainBackingTag" }

// Op returns "DropDomain".
func (DropDomain) Op() string { return "DropDomain" }

// Target returns the domain.
func (c CreateDomain) Target() Object { return Domain(c.Name) }

// Target returns the domain.
func (c AlterDomain) Target() Object { return Domain(c.Name) }

// Target returns the domain.
func (c SetDomainStatus) Target() Object { return Domain(c.Name) }

// Target returns the domain.
func (c SetDomainParent) Target() Object { return Domain(c.Name) }

// Target returns the domain.
func (c DetachDomain) Target() Object { return Domain(c.Name) }

// Target returns the domain.
func (c SetDomainBackingTag) Target() Object { return Domain(c.Name) }

// Target returns the domain.
func (c DropDomain) Target() Object { return Domain(c.Name) }

func (CreateDomain) commandType() CommandType        { return TypeCreateDomain }
func (AlterDomain) commandType() CommandType         { return TypeAlterDomain }
func (SetDomainStatus) commandType() CommandType     { return TypeSetDomainStatus }
func (SetDomainParent) commandType() CommandType     { return TypeSetDomainParent }
func (DetachDomain) commandType() CommandType        { return TypeDetachDomain }
func (SetDomainBackingTag) commandType() CommandType { return TypeSetDomainBackingTag }
func (DropDomain) commandType() CommandType          { return TypeDropDomain }

// ---- decisions ----

// authorizeDomain decides priv (MANAGE_DOMAIN or USE_DOMAIN) on domain d
// (nil: on the metalake only). The chain is the metalake, d's current parent
// and d.
func (s *Snapshot) authorizeDomain(w *who, priv Privilege, d *domain) Decision {
	if w.owns(s.root.owner) {
		return allow(ReasonMetalakeOwner)
	}
	var par *domain
	if d != nil && d.parent != 0 {
		par, _ = s.domains.Get(d.parent)
	}
	if (d != nil && w.owns(d.owner)) || (par != nil && w.owns(par.owner)) {
		return allow(ReasonOwner)
	}
	a, dn := w.grantBits(s.root.grants)
	if par != nil {
		ga, gd := w.grantBits(par.grants)
		a, dn = a|ga, dn|gd
	}
	if d != nil {
		ga, gd := w.grantBits(d.grants)
		a, dn = a|ga, dn|gd
	}
	switch priv {
	case PrivManageDomain:
		if dn.has(PrivManageDomain) {
			return deny(ReasonDenied)
		}
		if a.has(PrivManageDomain) {
			return allow(ReasonGrant)
		}
	case PrivUseDomain:
		if dn.has(PrivUseDomain) {
			return deny(ReasonDenied)
		}
		if a.has(PrivUseDomain) || (a.has(PrivManageDomain) && !dn.has(PrivManageDomain)) {
			return allow(ReasonGrant)
		}
	default:
		return deny(ReasonInvalid)
	}
	return deny(ReasonNoGrant)
}

// domainVisible: a PUBLISHED domain to USE_DOMAIN holders, a DRAFT one to
// MANAGE_DOMAIN holders (owners of it, its parent or the metalake included).
func (s *Snapshot) domainVisible(w *who, d *domain) bool {
	if d.published {
		return s.authorizeDomain(w, PrivUseDomain, d).Allowed
	}
	return s.authorizeDomain(w, PrivManageDomain, d).Allowed
}

// needDomain returns the domain named name if w may see it (else
// NoSuchDomain) and holds priv on it (else ErrForbidden).
func (s *Snapshot) needDomain(w *who, name string, priv Privilege) (*domain, error) {
	d, ok := s.domainByName(name)
	if !ok || !s.domainVisible(w, d) {
		return nil, noSuchDomain(name)
	}
	if !s.authorizeDomain(w, priv, d).Allowed {
		return nil, errf(ErrForbidden, "requires "+priv.String()+" on "+Domain(name).String())
	}
	return d, nil
}

// ownsDomain reports whether w owns d, its parent or the metalake.
func (s *Snapshot) ownsDomain(w *who, d *domain) bool {
	if w.owns(s.root.owner) || w.owns(d.owner) {
		return true
	}
	if d.parent != 0 {
		if p, ok := s.domains.Get(d.parent); ok && w.owns(p.owner) {
			return true
		}
	}
	return false
}

// needBackingTag checks that w may bind the existing tag name: it exists and
// is visible (else NoSuchTag), and w owns it or the metalake.
func (s *Snapshot) needBackingTag(w *who, name string) error {
	t, ok := s.tagByName(name)
	if !ok || !s.visible(w, Tag(name), nil) {
		return noSuchTag(name)
	}
	if w.owns(s.root.owner) || w.owns(t.owner) {
		return nil
	}
	return errf(ErrForbidden, "requires ownership of "+Tag(name).String())
}

func (c CreateDomain) permit(s *Snapshot, w *who) error {
	if !s.authorizeDomain(w, PrivManageDomain, nil).Allowed {
		return errf(ErrForbidden, "requires MANAGE_DOMAIN on the metalake")
	}
	if c.BackingTag.Create {
		if err := s.onMetalake(w, PrivCreateTag); err != nil {
			return err
		}
	} else if c.BackingTag.Name != "" {
		if err := s.needBackingTag(w, c.BackingTag.Name); err != nil {
			return err
		}
	}
	if c.Parent != "" {
		if _, err := s.needDomain(w, c.Parent, PrivManageDomain); err != nil {
			return err
		}
	}
	return nil
}

func (c AlterDomain) permit(s *Snapshot, w *who) error {
	_, err := s.needDomain(w, c.Name, PrivManageDomain)
	return err
}

func (c SetDomainStatus) permit(s *Snapshot, w *who) error {
	_, err := s.needDomain(w, c.Name, PrivManageDomain)
	return err
}

func (c SetDomainParent) permit(s *Snapshot, w *who) error {
	if _, err := s.needDomain(w, c.Name, PrivManageDomain); err != nil {
		return err
	}
	_, err := s.needDomain(w, c.Parent, PrivManageDomain)
	return err
}

func (c DetachDomain) permit(s *Snapshot, w *who) error {
	_, err := s.needDomain(w, c.Name, PrivManageDomain)
	return err
}

func (c SetDomainBackingTag) permit(s *Snapshot, w *who) error {
	if _, err := s.needDomain(w, c.Name, PrivManageDomain); err != nil {
		return err
	}
	if c.BackingTag != nil && !c.BackingTag.Create && c.BackingTag.Name != "" {
		return s.needBackingTag(w, c.BackingTag.Name)
	}
	return nil
}

func (c DropDomain) permit(s *Snapshot, w *who) error {
	_, err := s.needDomain(w, c.Name, PrivManageDomain)
	return err
}

// ---- apply ----

func (tx *txn) domain(name string) (*domain, error) {
	d, ok := tx.s.domainByName(name)
	if !ok {
		return nil, noSuchDomain(name)
	}
	return d, nil
}

func (tx *txn) putDomain(d *domain) { tx.s.domains = tx.s.domains.Set(d.id, d) }

// setSub adds or removes child from the subdomains of parent id.
func (tx *txn) setSub(parent, child uint64, on bool) {
	p, ok := tx.s.domains.Get(parent)
	if !ok {
		return
	}
	np := p.clone()
	if on {
		np.subs, _ = insertU64(p.subs, child)
	} else {
		np.subs, _ = removeU64(p.subs, child)
	}
	tx.putDomain(np)
}

// checkBinding validates binding tag t with value v for domain self (0: a
// new domain) on behalf of w: the tag's value rules and no sharing. The
// conflict names the first conflicting domain w may see, and no domain
// when w may see none of them.
func (s *Snapshot) checkBinding(w *who, self uint64, t *tag, v string) error {
	if err := checkAssignValue(t, v); err != nil {
		return err
	}
	var conflict, shown string
	s.domains.Range(func(id uint64, d *domain) bool {
		if id != self && d.tag == t.id && (d.value == "" || v == "" || d.value == v) {
			if conflict == "" || d.name < conflict {
				conflict = d.name
			}
			if (shown == "" || d.name < shown) && s.domainVisible(w, d) {
				shown = d.name
			}
		}
		return true
	})
	switch {
	case shown != "":
		return domainErr(ErrAlreadyExists, RuleBackingTagAlreadyBound,
			Tag(t.name).String()+" already backs "+Domain(shown).String())
	case conflict != "":
		return domainErr(ErrAlreadyExists, RuleBackingTagAlreadyBound,
			Tag(t.name).String()+" already backs another domain")
	}
	return nil
}

func (c CreateDomain) apply(tx *txn) error {
	if err := domainKind.checkNew(tx.s, c.Name, c.Properties); err != nil {
		return err
	}
	bt := c.BackingTag
	if bt.Name == "" {
		return errf(ErrInvalidArgument, "a domain needs a backing tag")
	}
	if bt.Create && bt.Value != "" {
		return errf(ErrInvalidArgument, "a created backing tag takes no value")
	}
	var par *domain
	if c.Parent != "" {
		p, err := tx.domain(c.Parent)
		if err != nil {
			return err
		}
		if p.parent != 0 {
			return domainErr(ErrInvalidArgument, RuleC2, "parent "+Domain(p.name).String()+" is a subdomain")
		}
		par = p
	}
	var tagID uint64
	if bt.Create {
		if err := CheckEntityName(bt.Name); err != nil {
			return err
		}
		if tx.s.tagIDs.Has(bt.Name) {
			return domainErr(ErrAlreadyExists, RuleTagAlreadyExists, Tag(bt.Name).String())
		}
		if err := (CreateTag{Name: bt.Name, AllowedValues: []string{}}).apply(tx); err != nil {
			return err
		}
		tagID, _ = tx.s.tagIDs.Get(bt.Name)
		tx.emit("CreateTag", Tag(bt.Name), "backing tag of "+Domain(c.Name).String())
	} else {
		t, ok := tx.s.tagByName(bt.Name)
		if !ok {
			return noSuchTag(bt.Name)
		}
		if err := tx.s.checkBinding(tx.w, 0, t, bt.Value); err != nil {
			return err
		}
		tagID = t.id
	}
	d := &domain{id: tx.newID(), name: c.Name, comment: c.Comment, props: copyProps(c.Properties),
		owner: Owner{OwnerUser, tx.m.Actor}, tag: tagID, value: bt.Value, audit: tx.audit()}
	if par != nil {
		d.parent, d.relAudit = par.id, tx.audit()
		tx.detail = "parent " + quote(par.name)
	}
	tx.putDomain(d)
	tx.s.domainIDs = tx.s.domainIDs.Set(d.name, d.id)
	if par != nil {
		tx.setSub(par.id, d.id, true)
	}
	return nil
}

func (c AlterDomain) apply(tx *txn) error {
	d, err := tx.domain(c.Name)
	if err != nil {
		return err
	}
	nd := d.clone()
	e := entityEdit{kind: domainKind, tx: tx, id: nd.id, name: &nd.name, comment: &nd.comment, props: &nd.props}
	if err := alterEntity(e, c.Updates, DomainUpdate.shared, nil); err != nil {
		return err
	}
	nd.audit = tx.touch(d.audit)
	tx.putDomain(nd)
	return nil
}

func (c SetDomainStatus) apply(tx *txn) error {
	if c.Status != DomainDraft && c.Status != DomainPublished {
		return errf(ErrInvalidArgument, "status must be DRAFT or PUBLISHED")
	}
	d, err := tx.domain(c.Name)
	if err != nil {
		return err
	}
	pub := c.Status == DomainPublished
	if d.published == pub {
		return nil
	}
	if pub && d.parent != 0 {
		if p, _ := tx.s.domains.Get(d.parent); !p.published {
			return domainErr(ErrInvalidArgument, RuleC6, "the parent "+Domain(p.name).String()+" is DRAFT")
		}
	}
	if !pub {
		for _, id := range d.subs {
			if sd, _ := tx.s.domains.Get(id); sd.published {
				return domainErr(ErrInvalidArgument, RuleC6, "the subdomain "+Domain(sd.name).String()+" is PUBLISHED")
			}
		}
	}
	nd := d.clone()
	nd.published = pub
	nd.audit = tx.touch(d.audit)
	tx.putDomain(nd)
	return nil
}

func parentDetail(from, to string) string {
	q := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return quote(s)
	}
	return "parent " + q(from) + " -> " + q(to)
}

func (c SetDomainParent) apply(tx *txn) error {
	d, err := tx.domain(c.Name)
	if err != nil {
		return err
	}
	p, err := tx.domain(c.Parent)
	if err != nil {
		return err
	}
	if d.id == p.id {
		return domainErr(ErrInvalidArgument, RuleC1, "a domain cannot be its own parent")
	}
	if d.parent == p.id {
		tx.detail = parentDetail(p.name, p.name)
		return nil
	}
	if p.parent != 0 {
		return domainErr(ErrInvalidArgument, RuleC2, "parent "+Domain(p.name).String()+" is a subdomain")
	}
	if len(d.subs) > 0 {
		return domainErr(ErrInvalidArgument, RuleC3, Domain(d.name).String()+" has subdomains")
	}
	if d.published && !p.published {
		return domainErr(ErrInvalidArgument, RuleC6, "a PUBLISHED domain cannot move under the DRAFT "+Domain(p.name).String())
	}
	old := d.parent
	tx.detail = parentDetail(tx.s.domainName(old), p.name)
	if old != 0 {
		tx.setSub(old, d.id, false)
	}
	nd := d.clone()
	nd.parent, nd.relAudit, nd.audit = p.id, tx.audit(), tx.touch(d.audit)
	tx.putDomain(nd)
	tx.setSub(p.id, d.id, true)
	return nil
}

func (c DetachDomain) apply(tx *txn) error {
	d, err := tx.domain(c.Name)
	if err != nil {
		return err
	}
	if d.parent == 0 {
		tx.detail = parentDetail("", "")
		return nil
	}
	tx.detail = parentDetail(tx.s.domainName(d.parent), "")
	tx.setSub(d.parent, d.id, false)
	nd := d.clone()
	nd.parent, nd.relAudit, nd.audit = 0, Audit{}, tx.touch(d.audit)
	tx.putDomain(nd)
	return nil
}

func (tx *txn) bindingName(id uint64, v string) string {
	t, ok := tx.s.tags.Get(id)
	if !ok {
		return "(none)"
	}
	if v == "" {
		return quote(t.name)
	}
	return quote(t.name + "=" + v)
}

func (c SetDomainBackingTag) apply(tx *txn) error {
	d, err := tx.domain(c.Name)
	if err != nil {
		return err
	}
	var id uint64
	var v string
	if bt := c.BackingTag; bt != nil {
		if bt.Create {
			return errf(ErrInvalidArgument, "create is only allowed when creating a domain")
		}
		if bt.Name == "" {
			return errf(ErrInvalidArgument, "no tag name")
		}
		t, ok := tx.s.tagByName(bt.Name)
		if !ok {
			return noSuchTag(bt.Name)
		}
		id, v = t.id, bt.Value
		if id == d.tag && v == d.value {
			return nil
		}
		if err := tx.s.checkBinding(tx.w, d.id, t, v); err != nil {
			return err
		}
	} else if d.tag == 0 {
		return nil
	}
	tx.detail = "backing tag " + tx.bindingName(d.tag, d.value) + " -> " + tx.bindingName(id, v)
	nd := d.clone()
	nd.tag, nd.value, nd.audit = id, v, tx.touch(d.audit)
	tx.putDomain(nd)
	return nil
}

func (c DropDomain) apply(tx *txn) error {
	d, err := tx.domain(c.Name)
	if err != nil {
		return err
	}
	if len(d.subs) > 0 {
		return domainErr(ErrNonEmpty, RuleNonEmptyDomain, Domain(d.name).String()+" has subdomains")
	}
	if d.parent != 0 {
		tx.detail = parentDetail(tx.s.domainName(d.parent), "")
		tx.setSub(d.parent, d.id, false)
	}
	for _, g := range d.grants {
		tx.dropRoleGrant(g.role, ObjectDomain, d.id)
	}
	tx.s.domains = tx.s.domains.Delete(d.id)
	tx.s.domainIDs = tx.s.domainIDs.Delete(d.name)
	return nil
}

// unbindTag removes tag id from the domains it backs (DropTag): they keep
// no backing tag and no members; recreating a tag of that name does not
// restore the binding.
func (tx *txn) unbindTag(id uint64, name string) {
	var ids []uint64
	tx.s.domains.Range(func(did uint64, d *domain) bool {
		if d.tag == id {
			ids = append(ids, did)
		}
		return true
	})
	slices.Sort(ids)
	for _, did := range ids {
		d, _ := tx.s.domains.Get(did)
		nd := d.clone()
		nd.tag, nd.value, nd.audit = 0, "", tx.touch(d.audit)
		tx.putDomain(nd)
		tx.emit("SetDomainBackingTag", Domain(d.name), "backing tag "+quote(name)+" dropped")
	}
}

// ---- owners and grants on domains ----

func (s *Snapshot) permitDomainOwner(w *who, name string) error {
	d, ok := s.domainByName(name)
	if !ok || !s.domainVisible(w, d) {
		return noSuchDomain(name)
	}
	if s.ownsDomain(w, d) {
		return nil
	}
	return errf(ErrForbidden, "requires ownership of "+Domain(name).String()+", its parent or the metalake")
}

// CheckDomainInvariants checks the domain rules on s: C1–C6, the
// consistency of parent and subdomain links, and the backing tags (existing,
// allowed values, no sharing). Every snapshot produced by Apply or
// UnmarshalSnapshot satisfies them; callers may check event-log replays
// with it. The error is a *DomainError or wraps ErrInvalidArgument.
func (s *Snapshot) CheckDomainInvariants() error {
	ids := s.domains.Keys()
	slices.Sort(ids)
	bound := map[uint64][]*domain{} // tag id → the domains it backs, by id
	for _, id := range ids {
		d, _ := s.domains.Get(id)
		if got, ok := s.domainIDs.Get(d.name); !ok || got != id {
			return errf(ErrInvalidArgument, Domain(d.name).String()+": name index")
		}
		if d.parent == d.id {
			return domainErr(ErrInvalidArgument, RuleC1, Domain(d.name).String()+" is its own parent")
		}
		if d.parent != 0 {
			p, ok := s.domains.Get(d.parent)
			if !ok {
				return domainErr(ErrInvalidArgument, RuleC4, Domain(d.name).String()+": parent not in the metalake")
			}
			if p.parent != 0 {
				return domainErr(ErrInvalidArgument, RuleC2, Domain(d.name).String()+": parent is a subdomain")
			}
			if len(d.subs) > 0 {
				return domainErr(ErrInvalidArgument, RuleC3, Domain(d.name).String()+": a subdomain with subdomains")
			}
			if _, found := slices.BinarySearch(p.subs, d.id); !found {
				return domainErr(ErrInvalidArgument, RuleC5, Domain(d.name).String()+": edge missing from the parent")
			}
			if d.published && !p.published {
				return domainErr(ErrInvalidArgument, RuleC6, Domain(d.name).String()+": PUBLISHED under a DRAFT parent")
			}
		}
		if !slices.IsSorted(d.subs) {
			return domainErr(ErrInvalidArgument, RuleC5, Domain(d.name).String()+": unsorted subdomains")
		}
		for _, sid := range d.subs {
			if sd, ok := s.domains.Get(sid); !ok || sd.parent != d.id {
				return domainErr(ErrInvalidArgument, RuleC5, Domain(d.name).String()+": subdomain with another parent")
			}
		}
		if d.tag == 0 {
			if d.value != "" {
				return errf(ErrInvalidArgument, Domain(d.name).String()+": value without a backing tag")
			}
			continue
		}
		t, ok := s.tags.Get(d.tag)
		if !ok {
			return errf(ErrInvalidArgument, Domain(d.name).String()+": unknown backing tag")
		}
		if err := checkAssignValue(t, d.value); err != nil {
			return err
		}
		for _, o := range bound[d.tag] {
			if o.value == "" || d.value == "" || o.value == d.value {
				return domainErr(ErrInvalidArgument, RuleBackingTagAlreadyBound, Domain(d.name).String()+" shares its tag with "+Domain(o.name).String())
			}
		}
		bound[d.tag] = append(bound[d.tag], d)
	}
	if s.domainIDs.Len() != len(ids) {
		return errf(ErrInvalidArgument, "domain name index")
	}
	return nil
}

// lowerContains reports whether s contains sub (already lower-case),
// case-insensitively.
func lowerContains(s, sub string) bool {
	if sub == "" {
		return true
	}
	return strings.Contains(strings.ToLower(s), sub)
}
