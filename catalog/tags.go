package catalog

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"lakegate/catalog/internal/pmap"
)

func (c CreateTag) permit(s *Snapshot, w *who) error { return s.onMetalake(w, PrivCreateTag) }

func (c CreateTag) apply(tx *txn) error {
	if err := tagKind.checkNew(tx.s, c.Name, c.Properties); err != nil {
		return err
	}
	t := &tag{name: c.Name, comment: c.Comment, props: copyProps(c.Properties), anyValue: c.AllowedValues == nil,
		owner: Owner{OwnerUser, tx.m.Actor}, audit: tx.audit(), objects: pmap.NewUint64[struct{}]()}
	if !t.anyValue {
		t.allowed = make([]string, 0, len(c.AllowedValues))
		for _, v := range c.AllowedValues {
			if err := checkTagValue(v); err != nil {
				return err
			}
			if contains(t.allowed, v) {
				return errf(ErrInvalidArgument, "duplicate allowed value "+quote(v))
			}
			t.allowed = append(t.allowed, v)
		}
	}
	t.id = tx.newID()
	tx.s.tags = tx.s.tags.Set(t.id, t)
	tx.s.tagIDs = tx.s.tagIDs.Set(t.name, t.id)
	return nil
}

func (c AlterTag) permit(s *Snapshot, w *who) error { return s.needEntityOwner(w, Tag(c.Name)) }

func (c AlterTag) apply(tx *txn) error {
	t, ok := tx.s.tagByName(c.Name)
	if !ok {
		return errf(ErrNotFound, Tag(c.Name).String())
	}
	nt := t.clone()
	e := entityEdit{kind: tagKind, tx: tx, id: nt.id, name: &nt.name, comment: &nt.comment, props: &nt.props}
	if err := alterEntity(e, c.Updates, TagUpdate.shared, nil); err != nil {
		return err
	}
	nt.audit = tx.touch(t.audit)
	tx.s.tags = tx.s.tags.Set(nt.id, nt)
	return nil
}

func (c DropTag) permit(s *Snapshot, w *who) error { return s.needEntityOwner(w, Tag(c.Name)) }

func (c DropTag) apply(tx *txn) error {
	t, ok := tx.s.tagByName(c.Name)
	if !ok {
		return errf(ErrNotFound, Tag(c.Name).String())
	}
	ids := t.objects.Keys()
	slices.Sort(ids)
	for _, id := range ids {
		p, ok := tx.s.pathByID(id)
		if !ok {
			continue
		}
		no := p.leaf().clone()
		no.tags = slices.DeleteFunc(slices.Clone(no.tags), func(a assignment) bool { return a.tag == t.id })
		tx.replace(p, no)
		tx.emit(OpEffectiveTagsChanged, p.object(), "tag "+quote(t.name)+" dropped")
	}
	for _, at := range t.policies {
		if p, ok := tx.s.policies.Get(at.policy); ok {
			np := p.clone()
			np.tags = slices.DeleteFunc(slices.Clone(p.tags), func(id uint64) bool { return id == t.id })
			tx.s.policies = tx.s.policies.Set(np.id, np)
		}
	}
	for _, g := range t.grants {
		tx.dropRoleGrant(g.role, ObjectTag, t.id)
	}
	tx.unbindTag(t.id, t.name)
	tx.s.tags = tx.s.tags.Delete(t.id)
	tx.s.tagIDs = tx.s.tagIDs.Delete(t.name)
	tx.s.sac = tx.s.sac.Delete(t.id)
	return nil
}

// permitAssociate: the object must be visible; APPLY_TAG on every tag.
func (s *Snapshot) permitAssociate(w *who, o Object, names []string) error {
	switch o.Type {
	case ObjectCatalog, ObjectSchema, ObjectTable, ObjectColumn:
	default:
		return errf(ErrInvalidArgument, "tags cannot be associated with a "+o.Type.String())
	}
	if !s.visible(w, o, nil) {
		return errf(ErrNotFound, o.String())
	}
	for _, n := range names {
		if err := s.need(w, s.authorizeEntity(w, PrivApplyTag, Tag(n)), Tag(n), "APPLY_TAG on "+Tag(n).String()); err != nil {
			return err
		}
	}
	return nil
}

func (c AssociateTagsV1) permit(s *Snapshot, w *who) error {
	return s.permitAssociate(w, c.Object, append(slices.Clone(c.TagsToAdd), c.TagsToRemove...))
}

func (c AssociateTagsV2) permit(s *Snapshot, w *who) error {
	var names []string
	for _, tv := range c.TagsToAdd {
		names = append(names, tv.Name)
	}
	for _, tv := range c.TagsToRemove {
		names = append(names, tv.Name)
	}
	return s.permitAssociate(w, c.Object, names)
}

// assocState is the object's assignments being edited.
type assocState struct {
	tx   *txn
	p    path
	tags []assignment
}

func (tx *txn) beginAssoc(o Object) (*assocState, error) {
	p, ok := tx.s.resolve(o)
	if !ok || p.n < 2 {
		return nil, errf(ErrNotFound, o.String())
	}
	return &assocState{tx: tx, p: p, tags: slices.Clone(p.leaf().tags)}, nil
}

func (st *assocState) find(id uint64) int {
	for i := range st.tags {
		if st.tags[i].tag == id {
			return i
		}
	}
	return -1
}

func (st *assocState) tag(name string) (*tag, error) {
	t, ok := st.tx.s.tagByName(name)
	if !ok {
		return nil, errf(ErrNotFound, Tag(name).String())
	}
	return t, nil
}

func (st *assocState) commit() {
	tx := st.tx
	old := st.p.leaf()
	slices.SortFunc(st.tags, func(a, b assignment) int {
		switch {
		case a.tag < b.tag:
			return -1
		case a.tag > b.tag:
			return 1
		}
		return 0
	})
	had := map[uint64]bool{}
	for _, a := range old.tags {
		had[a.tag] = true
	}
	has := map[uint64]bool{}
	for _, a := range st.tags {
		has[a.tag] = true
	}
	for _, a := range old.tags {
		if !has[a.tag] {
			tx.setTagObject(a.tag, old.id, false)
		}
	}
	for _, a := range st.tags {
		if !had[a.tag] {
			tx.setTagObject(a.tag, old.id, true)
		}
	}
	no := old.clone()
	no.tags = st.tags
	if len(no.tags) == 0 {
		no.tags = nil
	}
	tx.replace(st.p, no)
}

func (tx *txn) setTagObject(tagID, objID uint64, on bool) {
	t, ok := tx.s.tags.Get(tagID)
	if !ok {
		return
	}
	nt := t.clone()
	if on {
		nt.objects = t.objects.Set(objID, struct{}{})
	} else {
		nt.objects = t.objects.Delete(objID)
	}
	tx.s.tags = tx.s.tags.Set(tagID, nt)
}

func (c AssociateTagsV1) apply(tx *txn) error {
	for _, n := range c.TagsToAdd {
		if contains(c.TagsToRemove, n) {
			return errf(ErrInvalidArgument, "tag "+quote(n)+" is both added and removed")
		}
	}
	st, err := tx.beginAssoc(c.Object)
	if err != nil {
		return err
	}
	for _, n := range c.TagsToRemove {
		t, err := st.tag(n)
		if err != nil {
			return err
		}
		if i := st.find(t.id); i >= 0 {
			st.tags = slices.Delete(st.tags, i, i+1)
		}
	}
	for _, n := range c.TagsToAdd {
		t, err := st.tag(n)
		if err != nil {
			return err
		}
		if st.find(t.id) >= 0 {
			return errf(ErrAlreadyExists, Tag(n).String()+" is already associated with "+c.Object.String())
		}
		if !t.anyValue && len(t.allowed) > 0 {
			return errf(ErrInvalidArgument, Tag(n).String()+" has allowed values: a value is required")
		}
		st.tags = append(st.tags, assignment{tag: t.id})
	}
	st.commit()
	return nil
}

func (c AssociateTagsV2) apply(tx *txn) error {
	for _, a := range c.TagsToAdd {
		if slices.Contains(c.TagsToRemove, a) {
			return errf(ErrInvalidArgument, "pair ("+a.Name+", "+a.Value+") is both added and removed")
		}
		if slices.ContainsFunc(c.TagsToAdd, func(b TagValue) bool { return b.Name == a.Name && (b.Value == "") != (a.Value == "") }) {
			return errf(ErrInvalidArgument, Tag(a.Name).String()+" is added both with and without a value")
		}
	}
	st, err := tx.beginAssoc(c.Object)
	if err != nil {
		return err
	}
	for _, r := range c.TagsToRemove {
		t, err := st.tag(r.Name)
		if err != nil {
			return err
		}
		i := st.find(t.id)
		if i < 0 {
			continue
		}
		if r.Value == "" {
			st.tags = slices.Delete(st.tags, i, i+1)
			continue
		}
		vals, removed := sortedRemove(st.tags[i].values, r.Value)
		if !removed {
			continue
		}
		if len(vals) == 0 {
			st.tags = slices.Delete(st.tags, i, i+1)
		} else {
			st.tags[i].values = vals
		}
	}
	for _, a := range c.TagsToAdd {
		t, err := st.tag(a.Name)
		if err != nil {
			return err
		}
		if err := checkAssignValue(t, a.Value); err != nil {
			return err
		}
		i := st.find(t.id)
		switch {
		case i < 0 && a.Value == "":
			st.tags = append(st.tags, assignment{tag: t.id})
		case i < 0:
			st.tags = append(st.tags, assignment{tag: t.id, values: []string{a.Value}})
		case a.Value == "":
			// already attached: no-op
		default:
			st.tags[i].values, _ = sortedInsert(st.tags[i].values, a.Value)
		}
	}
	st.commit()
	return nil
}

// checkAssignValue checks one assignment value ("" = none) against t.
func checkAssignValue(t *tag, v string) error {
	if v == "" {
		if !t.anyValue && len(t.allowed) > 0 {
			return errf(ErrInvalidArgument, Tag(t.name).String()+" has allowed values: a value is required")
		}
		return nil
	}
	if err := checkTagValue(v); err != nil {
		return err
	}
	if t.anyValue {
		return nil
	}
	if len(t.allowed) == 0 {
		return errf(ErrInvalidArgument, Tag(t.name).String()+" takes no value")
	}
	if !contains(t.allowed, v) {
		return errf(ErrInvalidArgument, "value "+quote(v)+" is not allowed by "+Tag(t.name).String())
	}
	return nil
}

// ---- policies ----

func (c CreatePolicy) permit(s *Snapshot, w *who) error { return s.onMetalake(w, PrivCreatePolicy) }

// checkPolicy validates content for typ and returns it normalized with its
// privilege set.
func (s *Snapshot) checkPolicy(typ PolicyType, c PolicyContent) (PolicyContent, privSet, error) {
	bad := func(msg string) (PolicyContent, privSet, error) {
		return PolicyContent{}, 0, errf(ErrInvalidArgument, string(typ)+" policy: "+msg)
	}
	roles := func(rs []string) error {
		for _, r := range rs {
			if !s.roles.Has(r) {
				return errf(ErrNotFound, Role(r).String())
			}
		}
		return nil
	}
	var ps privSet
	c.Privileges = slices.Clone(c.Privileges)
	c.ApplicableRoles = slices.Clone(c.ApplicableRoles)
	c.ExemptRoles = slices.Clone(c.ExemptRoles)
	switch typ {
	case PolicySystemAccessControl:
		if len(c.Privileges) == 0 || len(c.ApplicableRoles) == 0 {
			return bad("privileges and applicable_roles must be non-empty")
		}
		if len(c.ExemptRoles) > 0 || c.Expression != "" || c.Mask != "" || len(c.Custom) > 0 {
			return bad("only privileges and applicable_roles may be set")
		}
		for _, p := range c.Privileges {
			if !p.Valid() {
				return bad("unknown privilege")
			}
			if p == PrivUseCatalog || p == PrivUseSchema {
				return bad(p.String() + " cannot be conferred by a policy")
			}
			ps |= 1 << p
		}
	case PolicyRowFilter:
		if err := checkExpr(c.Expression); err != nil {
			return bad("expression: " + err.Error())
		}
		if len(c.ApplicableRoles) > 0 && len(c.ExemptRoles) > 0 {
			return bad("set applicable_roles or exempt_roles, not both")
		}
		if len(c.Privileges) > 0 || c.Mask != "" || len(c.Custom) > 0 {
			return bad("only expression and applicable_roles or exempt_roles may be set")
		}
	case PolicyColumnMask:
		switch m := strings.ToUpper(c.Mask); m {
		case MaskNull, MaskRedact, MaskHash, MaskLast4:
			c.Mask = m
		default:
			if err := checkExpr(c.Mask); err != nil {
				return bad("mask: " + err.Error())
			}
		}
		if len(c.Privileges) > 0 || len(c.ApplicableRoles) > 0 || c.Expression != "" || len(c.Custom) > 0 {
			return bad("only mask and exempt_roles may be set")
		}
	case PolicyCustom:
		if len(c.Privileges) > 0 || len(c.ApplicableRoles) > 0 || len(c.ExemptRoles) > 0 || c.Expression != "" || c.Mask != "" {
			return bad("only custom may be set")
		}
		if len(c.Custom) == 0 || !json.Valid(c.Custom) {
			return bad("custom must be a JSON value")
		}
		var b strings.Builder
		compact, err := json.Marshal(c.Custom) // compacts
		if err != nil {
			return bad("custom must be a JSON value")
		}
		b.Write(compact)
		c.Custom = json.RawMessage(b.String())
	default:
		return PolicyContent{}, 0, errf(ErrInvalidArgument, "unknown policy type "+quote(trunc(string(typ))))
	}
	for _, rs := range [][]string{c.ApplicableRoles, c.ExemptRoles} {
		if len(rs) == 0 {
			continue
		}
		for _, r := range rs {
			if err := CheckEntityName(r); err != nil {
				return PolicyContent{}, 0, err
			}
		}
		if err := roles(rs); err != nil {
			return PolicyContent{}, 0, err
		}
	}
	return c, ps, nil
}

// checkExpr is a conservative lexical check of SQL expression text; the
// gateway parses it for real.
func checkExpr(e string) error {
	if strings.TrimSpace(e) == "" {
		return errf(ErrInvalidArgument, "empty")
	}
	if len(e) > 4096 || !utf8.ValidString(e) {
		return errf(ErrInvalidArgument, "not valid UTF-8 of at most 4096 bytes")
	}
	depth := 0
	var quote rune
	prev := rune(0)
	for _, r := range e {
		if unicode.IsControl(r) && r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			return errf(ErrInvalidArgument, "control character")
		}
		if quote != 0 {
			if r == quote {
				quote = 0
			}
			prev = r
			continue
		}
		switch {
		case r == '\'' || r == '"' || r == '`':
			quote = r
		case r == '(':
			depth++
		case r == ')':
			depth--
			if depth < 0 {
				return errf(ErrInvalidArgument, "unbalanced parentheses")
			}
		case r == ';':
			return errf(ErrInvalidArgument, "';' is not allowed")
		case (r == '-' && prev == '-') || (r == '*' && prev == '/'):
			return errf(ErrInvalidArgument, "comments are not allowed")
		}
		prev = r
	}
	if quote != 0 {
		return errf(ErrInvalidArgument, "unterminated quote")
	}
	if depth != 0 {
		return errf(ErrInvalidArgument, "unbalanced parentheses")
	}
	return nil
}

func (c CreatePolicy) apply(tx *txn) error {
	if err := policyKind.checkNew(tx.s, c.Name, nil); err != nil {
		return err
	}
	content, ps, err := tx.s.checkPolicy(c.Type, c.Content)
	if err != nil {
		return err
	}
	p := &policy{id: tx.newID(), name: c.Name, comment: c.Comment, typ: c.Type, enabled: c.Enabled,
		content: content, privs: ps, owner: Owner{OwnerUser, tx.m.Actor}, audit: tx.audit()}
	tx.s.policies = tx.s.policies.Set(p.id, p)
	tx.s.policyIDs = tx.s.policyIDs.Set(p.name, p.id)
	return nil
}

func (c AlterPolicy) permit(s *Snapshot, w *who) error { return s.needEntityOwner(w, Policy(c.Name)) }

func (c AlterPolicy) apply(tx *txn) error {
	p, ok := tx.s.policyByName(c.Name)
	if !ok {
		return errf(ErrNotFound, Policy(c.Name).String())
	}
	np := p.clone()
	e := entityEdit{kind: policyKind, tx: tx, id: np.id, name: &np.name, comment: &np.comment}
	updateContent := func(u PolicyUpdate) (bool, error) {
		if u.Type != "updateContent" {
			return false, nil
		}
		if u.PolicyType != np.typ {
			return true, errf(ErrInvalidArgument, "policyType must be "+string(np.typ))
		}
		if u.NewContent == nil {
			return true, errf(ErrInvalidArgument, "newContent is required")
		}
		content, ps, err := tx.s.checkPolicy(np.typ, *u.NewContent)
		if err != nil {
			return true, err
		}
		np.content, np.privs = content, ps
		return true, nil
	}
	if err := alterEntity(e, c.Updates, PolicyUpdate.shared, updateContent); err != nil {
		return err
	}
	np.audit = tx.touch(p.audit)
	tx.s.policies = tx.s.policies.Set(np.id, np)
	tx.reindexTags(np.tags)
	return nil
}

func (tx *txn) reindexTags(ids []uint64) {
	for _, id := range ids {
		tx.s.reindexTag(id)
	}
}

func (c EnablePolicy) permit(s *Snapshot, w *who) error  { return s.needEntityOwner(w, Policy(c.Name)) }
func (c DisablePolicy) permit(s *Snapshot, w *who) error { return s.needEntityOwner(w, Policy(c.Name)) }
func (c EnablePolicy) apply(tx *txn) error               { return tx.setEnabled(c.Name, true) }
func (c DisablePolicy) apply(tx *txn) error              { return tx.setEnabled(c.Name, false) }

func (tx *txn) setEnabled(name string, on bool) error {
	p, ok := tx.s.policyByName(name)
	if !ok {
		return errf(ErrNotFound, Policy(name).String())
	}
	if on {
		if _, _, err := tx.s.checkPolicy(p.typ, p.content); err != nil {
			return err
		}
	}
	np := p.clone()
	np.enabled = on
	np.audit = tx.touch(p.audit)
	tx.s.policies = tx.s.policies.Set(np.id, np)
	tx.reindexTags(np.tags)
	return nil
}

func (c DropPolicy) permit(s *Snapshot, w *who) error { return s.needEntityOwner(w, Policy(c.Name)) }

func (c DropPolicy) apply(tx *txn) error {
	p, ok := tx.s.policyByName(c.Name)
	if !ok {
		return errf(ErrNotFound, Policy(c.Name).String())
	}
	for _, tid := range p.tags {
		if t, ok := tx.s.tags.Get(tid); ok {
			nt := t.clone()
			nt.policies = slices.DeleteFunc(slices.Clone(t.policies), func(a attachment) bool { return a.policy == p.id })
			tx.s.tags = tx.s.tags.Set(tid, nt)
		}
	}
	for _, g := range p.grants {
		tx.dropRoleGrant(g.role, ObjectPolicy, p.id)
	}
	tx.s.policies = tx.s.policies.Delete(p.id)
	tx.s.policyIDs = tx.s.policyIDs.Delete(p.name)
	tx.reindexTags(p.tags)
	return nil
}

func (s *Snapshot) permitAttach(w *who, tagName, policyName string) error {
	if err := s.need(w, s.authorizeEntity(w, PrivApplyPolicy, Policy(policyName)), Policy(policyName), "APPLY_POLICY"); err != nil {
		return err
	}
	return s.need(w, s.authorizeEntity(w, PrivApplyTag, Tag(tagName)), Tag(tagName), "APPLY_TAG")
}

func (c AttachPolicy) permit(s *Snapshot, w *who) error { return s.permitAttach(w, c.Tag, c.Policy) }
func (c DetachPolicy) permit(s *Snapshot, w *who) error { return s.permitAttach(w, c.Tag, c.Policy) }

func (c AttachPolicy) apply(tx *txn) error {
	t, ok := tx.s.tagByName(c.Tag)
	if !ok {
		return errf(ErrNotFound, Tag(c.Tag).String())
	}
	p, ok := tx.s.policyByName(c.Policy)
	if !ok {
		return errf(ErrNotFound, Policy(c.Policy).String())
	}
	if v := c.Selector.Value; v != "" {
		if err := checkTagValue(v); err != nil {
			return err
		}
		if !t.anyValue && !contains(t.allowed, v) {
			return errf(ErrInvalidArgument, "selector value "+quote(v)+" is not an allowed value of "+Tag(t.name).String())
		}
	}
	nt := t.clone()
	nt.policies = slices.DeleteFunc(slices.Clone(t.policies), func(a attachment) bool { return a.policy == p.id })
	nt.policies = append(nt.policies, attachment{policy: p.id, sel: c.Selector})
	slices.SortFunc(nt.policies, func(a, b attachment) int { return cmpU64(a.policy, b.policy) })
	tx.s.tags = tx.s.tags.Set(nt.id, nt)
	np := p.clone()
	np.tags, _ = insertU64(p.tags, t.id)
	tx.s.policies = tx.s.policies.Set(np.id, np)
	tx.s.reindexTag(t.id)
	return nil
}

func (c DetachPolicy) apply(tx *txn) error {
	t, ok := tx.s.tagByName(c.Tag)
	if !ok {
		return errf(ErrNotFound, Tag(c.Tag).String())
	}
	p, ok := tx.s.policyByName(c.Policy)
	if !ok {
		return errf(ErrNotFound, Policy(c.Policy).String())
	}
	nt := t.clone()
	nt.policies = slices.DeleteFunc(slices.Clone(t.policies), func(a attachment) bool { return a.policy == p.id })
	tx.s.tags = tx.s.tags.Set(nt.id, nt)
	np := p.clone()
	np.tags = slices.DeleteFunc(slices.Clone(p.tags), func(id uint64) bool { return id == t.id })
	tx.s.policies = tx.s.policies.Set(np.id, np)
	tx.s.reindexTag(t.id)
	return nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func removeU64(s []uint64, v uint64) ([]uint64, bool) {
	i, found := slices.BinarySearch(s, v)
	if !found {
		return s, false
	}
	return slices.Delete(slices.Clone(s), i, i+1), true
}

func insertU64(s []uint64, v uint64) ([]uint64, bool) {
	i, found := slices.BinarySearch(s, v)
	if found {
		return s, false
	}
	return slices.Insert(slices.Clone(s), i, v), true
}
