package catalog

import (
	"slices"
	"time"

	"lakegate/catalog/internal/pmap"
)

// Meta is the log context of a command, supplied by the caller (metasrv's
// FSM): the acting user, the leader-assigned time and the Raft index.
type Meta struct {
	Actor string
	Time  time.Time
	Index uint64
	// IdentityToken attests that the caller verified an identity
	// provider's token of the user Actor: SyncIdentityUser runs only under
	// it, and nothing else does.
	IdentityToken bool
}

// Outcome is the result of a command in an event.
type Outcome string

// Outcomes.
const (
	Success Outcome = "success"
	Failure Outcome = "failure"
)

// OpEffectiveTagsChanged is the operation of the extra events emitted when a
// command changes objects' effective tags without a tag operation: creating,
// dropping, renaming or moving objects under or carrying tags.
const OpEffectiveTagsChanged = "EffectiveTagsChanged"

// Event is an audit event. Every applied command yields one Success event
// for the command (plus OpEffectiveTagsChanged events); every rejected one
// yields one Failure event whose Detail is the error text.
type Event struct {
	Index     uint64    `json:"index"`
	Time      time.Time `json:"time"`
	Actor     string    `json:"actor"`
	Operation string    `json:"operation"`
	Target    Object    `json:"target"`
	Outcome   Outcome   `json:"outcome"`
	Detail    string    `json:"detail,omitempty"`
}

// Apply validates cmd against s and, when valid and permitted for m.Actor
// (see Permit), returns the new snapshot (generation+1, sharing structure
// with s) and its events. On rejection it returns s itself, one Failure
// event and an *Error wrapping a sentinel. Apply is deterministic: the same
// snapshot, command and meta always give the same result.
func Apply(s *Snapshot, cmd Command, m Meta) (*Snapshot, []Event, error) {
	m.Time = normTime(m.Time)
	if err := checkTime(m.Time); err != nil {
		// The event carries no time: this one cannot be written down.
		err := &Error{Op: "Apply", Err: err}
		return s, []Event{{Index: m.Index, Actor: m.Actor, Operation: "Apply", Outcome: Failure, Detail: err.Error()}}, err
	}
	if cmd == nil {
		err := &Error{Op: "Apply", Err: errf(ErrInvalidCommand, "nil command")}
		return s, []Event{{Index: m.Index, Time: m.Time, Actor: m.Actor, Operation: "Apply", Outcome: Failure, Detail: err.Error()}}, err
	}
	ev := Event{Index: m.Index, Time: m.Time, Actor: m.Actor, Operation: cmd.Op(), Target: cmd.Target(), Outcome: Success}
	fail := func(err error) (*Snapshot, []Event, error) {
		e := &Error{Op: cmd.Op(), Target: ev.Target.String(), Err: err}
		ev.Outcome, ev.Detail = Failure, e.Error()
		return s, []Event{ev}, e
	}
	// One allocation for the transaction, the actor and its role buffer
	// (the commands' permit and apply methods make all three escape).
	tx := &txn{m: m}
	tx.who = s.who(m.Actor, tx.roleBuf[:])
	tx.w = &tx.who
	if err := s.permitMeta(tx.w, cmd, m); err != nil {
		return fail(err)
	}
	n := *s
	tx.s = &n
	if err := cmd.apply(tx); err != nil {
		return fail(err)
	}
	n.gen++
	n.index = m.Index
	ev.Detail = tx.detail
	return &n, append([]Event{ev}, tx.events...), nil
}

// Permit reports whether actor may run cmd against s: nil, or an error
// wrapping ErrForbidden, or ErrNotFound when the actor may not see the
// target (answer it like a missing object). Apply calls Permit itself;
// callers may use it to reject early. The rule of each command is in its
// documentation.
func Permit(s *Snapshot, actor string, cmd Command) error {
	if cmd == nil {
		return errf(ErrInvalidCommand, "nil command")
	}
	var buf [roleBufLen]uint64
	w := s.who(actor, buf[:])
	return s.permit(&w, cmd)
}

func (s *Snapshot) permit(w *who, cmd Command) error {
	// By name, before anything is resolved: the refusal says nothing of
	// what exists.
	if _, al := cmd.(CommitAccessLog); !al && WritesSystemSchema(cmd) {
		return errf(ErrForbidden, systemReadOnly)
	}
	if w.u == nil {
		return errf(ErrForbidden, "unknown actor")
	}
	return cmd.permit(s, w)
}

// txn is the state of one Apply: s is a private shallow copy of the
// snapshot whose fields are replaced (never the shared records).
type txn struct {
	s      *Snapshot
	m      Meta
	w      *who
	events []Event
	detail string // the command event's detail, set by apply

	who     who                // *w, the actor
	roleBuf [roleBufLen]uint64 // backs who.roles
}

func (tx *txn) audit() Audit { return Audit{Creator: tx.m.Actor, CreateTime: tx.m.Time} }

func (tx *txn) touch(a Audit) Audit {
	a.LastModifier, a.LastModifiedTime = tx.m.Actor, tx.m.Time
	return a
}

func (tx *txn) newID() uint64 {
	id := tx.s.nextID
	tx.s.nextID++
	return id
}

func (tx *txn) emit(op string, target Object, detail string) {
	tx.events = append(tx.events, Event{Index: tx.m.Index, Time: tx.m.Time, Actor: tx.m.Actor,
		Operation: op, Target: target, Outcome: Success, Detail: detail})
}

// replace installs leaf in place of p's leaf (same name) and rebuilds the
// ancestors.
func (tx *txn) replace(p path, leaf *object) {
	cur := leaf
	for i := p.n - 2; i >= 0; i-- {
		par := p.objs[i].clone()
		par.children = par.children.Set(cur.name, mkChild(cur))
		cur = par
	}
	tx.s.root = cur
}

// need turns a decision into a permission error; an invisible target is
// reported as not found.
func (s *Snapshot) need(w *who, d Decision, target Object, what string) error {
	if d.Allowed {
		return nil
	}
	if target.Type != 0 && !s.visible(w, target, nil) {
		return errf(ErrNotFound, target.String())
	}
	return errf(ErrForbidden, "requires "+what)
}

func (s *Snapshot) metalakePath() path { return path{objs: [5]*object{s.root}, n: 1} }

func (s *Snapshot) onMetalake(w *who, p Privilege) error {
	mp := s.metalakePath()
	return s.need(w, s.authorizePath(w, p, &mp), Object{}, p.String()+" on the metalake")
}

// ownsChain reports whether w owns p's leaf or an ancestor.
func ownsChain(w *who, p *path) bool {
	for i := 0; i < p.n; i++ {
		if w.owns(p.objs[i].owner) {
			return true
		}
	}
	return false
}

func (s *Snapshot) needOwner(w *who, o Object) error {
	p, ok := s.resolve(o)
	if !ok || p.n < 2 {
		return errf(ErrNotFound, o.String())
	}
	if ownsChain(w, &p) {
		return nil
	}
	return s.need(w, Decision{}, o, "ownership of "+o.String()+" or an ancestor")
}

// entityOwner checks ownership of a tag, policy or role (or the metalake).
func (s *Snapshot) needEntityOwner(w *who, o Object) error {
	var owner Owner
	switch o.Type {
	case ObjectTag:
		t, ok := s.tagByName(o.Name)
		if !ok {
			return errf(ErrNotFound, o.String())
		}
		owner = t.owner
	case ObjectPolicy:
		p, ok := s.policyByName(o.Name)
		if !ok {
			return errf(ErrNotFound, o.String())
		}
		owner = p.owner
	case ObjectRole:
		r, ok := s.roles.Get(o.Name)
		if !ok {
			return errf(ErrNotFound, o.String())
		}
		owner = r.owner
	}
	if w.owns(s.root.owner) || w.owns(owner) {
		return nil
	}
	return s.need(w, Decision{}, o, "ownership of "+o.String())
}

func (s *Snapshot) tagByName(name string) (*tag, bool) {
	id, ok := s.tagIDs.Get(name)
	if !ok {
		return nil, false
	}
	return s.tags.Get(id)
}

func (s *Snapshot) policyByName(name string) (*policy, bool) {
	id, ok := s.policyIDs.Get(name)
	if !ok {
		return nil, false
	}
	return s.policies.Get(id)
}

func checkProps(m map[string]string) error {
	for k := range m {
		if k == "" {
			return errf(ErrInvalidArgument, "empty property key")
		}
	}
	return nil
}

// ---- catalogs, schemas, tables, columns ----

func (c CreateCatalog) permit(s *Snapshot, w *who) error { return s.onMetalake(w, PrivCreateCatalog) }

func (c CreateCatalog) apply(tx *txn) error {
	if err := CheckNamePart(c.Name); err != nil {
		return err
	}
	if err := checkProps(c.Properties); err != nil {
		return err
	}
	return tx.createChild(tx.s.metalakePath(), &object{typ: ObjectCatalog, name: c.Name, comment: c.Comment,
		props: copyProps(c.Properties), kind: c.Type})
}

// createChild adds o (with id, owner, audit filled in) under parent.
func (tx *txn) createChild(parent path, o *object) error {
	par := parent.leaf()
	if par.children.Has(o.name) {
		return errf(ErrAlreadyExists, o.typ.String()+" "+quote(o.name))
	}
	o.id = tx.newID()
	o.parent = par.id
	if o.typ != ObjectColumn {
		o.owner = Owner{OwnerUser, tx.m.Actor}
	}
	o.audit = tx.audit()
	o.children = pmap.NewString[child]()
	tx.s.locs = tx.s.locs.Set(o.id, loc{parent: par.id, name: o.name, typ: o.typ})
	np := par.clone()
	np.children = np.children.Set(o.name, mkChild(o))
	if o.typ == ObjectColumn {
		np.columns = append(slices.Clip(np.columns), o.name)
	}
	tx.replace(parent, np)
	if hasTags(&parent) && o.typ != ObjectColumn {
		child := parent
		child.objs[child.n] = o
		child.n++
		tx.emit(OpEffectiveTagsChanged, child.object(), "created under tagged parent")
	}
	return nil
}

func hasTags(p *path) bool {
	for i := 1; i < p.n; i++ {
		if len(p.objs[i].tags) > 0 {
			return true
		}
	}
	return false
}

func (c CreateSchema) permit(s *Snapshot, w *who) error {
	return s.permitCreateIn(w, c.Name, ObjectSchema, PrivCreateSchema)
}

// permitCreateIn checks privilege on the parent of the new object full.
func (s *Snapshot) permitCreateIn(w *who, full string, t ObjectType, priv Privilege) error {
	parts, err := ParseName(t, full)
	if err != nil {
		return err
	}
	parentType := []ObjectType{ObjectMetalake, ObjectCatalog, ObjectSchema, ObjectTable}[len(parts)-1]
	po := Object{parentType, joinParts(parts[:len(parts)-1])}
	p, ok := s.resolve(po)
	if !ok {
		return errf(ErrNotFound, po.String())
	}
	return s.need(w, s.authorizePath(w, priv, &p), po, priv.String()+" on "+po.String())
}

func joinParts(ps []string) string {
	out := ""
	for i, p := range ps {
		if i > 0 {
			out += "."
		}
		out += p
	}
	return out
}

func (c CreateSchema) apply(tx *txn) error {
	parts, err := ParseName(ObjectSchema, c.Name)
	if err != nil {
		return err
	}
	if err := checkProps(c.Properties); err != nil {
		return err
	}
	p, ok := tx.s.resolve(Catalog(parts[0]))
	if !ok {
		return errf(ErrNotFound, Catalog(parts[0]).String())
	}
	return tx.createChild(p, &object{typ: ObjectSchema, name: parts[1], comment: c.Comment, props: copyProps(c.Properties)})
}

func (c CreateTable) permit(s *Snapshot, w *who) error {
	return s.permitCreateIn(w, c.Name, ObjectTable, PrivCreateTable)
}

func checkColumn(cd ColumnDef) error {
	if err := CheckNamePart(cd.Name); err != nil {
		return err
	}
	if cd.Type == "" {
		return errf(ErrInvalidArgument, "column "+quote(cd.Name)+" has no type")
	}
	return nil
}

func (c CreateTable) apply(tx *txn) error {
	parts, err := ParseName(ObjectTable, c.Name)
	if err != nil {
		return err
	}
	if err := checkProps(c.Properties); err != nil {
		return err
	}
	if err := checkCreateStorage(c); err != nil {
		return err
	}
	p, ok := tx.s.resolve(Schema(parts[0] + "." + parts[1]))
	if !ok {
		return errf(ErrNotFound, Schema(parts[0]+"."+parts[1]).String())
	}
	t := &object{typ: ObjectTable, name: parts[2], comment: c.Comment, props: copyProps(c.Properties)}
	if err := tx.createChild(p, t); err != nil {
		return err
	}
	for _, cd := range c.Columns {
		if err := checkColumn(cd); err != nil {
			return err
		}
		tp, _ := tx.s.resolve(Table(c.Name))
		if err := tx.createChild(tp, &object{typ: ObjectColumn, name: cd.Name, comment: cd.Comment,
			kind: cd.Type, nullable: cd.Nullable}); err != nil {
			return err
		}
	}
	return tx.initTableData(c)
}

func (c AddColumn) permit(s *Snapshot, w *who) error {
	p, ok := s.resolve(Table(c.Table))
	if !ok {
		return errf(ErrNotFound, Table(c.Table).String())
	}
	return s.permitColumnChange(w, &p)
}

// permitColumnChange checks that w may change the columns of the table at
// p: ownership of it or an ancestor under RulesColumnGovernance,
// MODIFY_TABLE before.
func (s *Snapshot) permitColumnChange(w *who, p *path) error {
	if s.columnGovernance() {
		if ownsChain(w, p) {
			return nil
		}
		return s.need(w, Decision{}, p.object(), "ownership of "+p.object().String()+" or an ancestor")
	}
	return s.need(w, s.authorizePath(w, PrivModifyTable, p), p.object(), "MODIFY_TABLE")
}

func (c AddColumn) apply(tx *txn) error {
	if err := checkColumn(c.Column); err != nil {
		return err
	}
	tp, ok := tx.s.resolve(Table(c.Table))
	if !ok {
		return errf(ErrNotFound, Table(c.Table).String())
	}
	if tp.leaf().children.Has(c.Column.Name) {
		return errf(ErrAlreadyExists, ObjectColumn.String()+" "+quote(c.Column.Name))
	}
	if err := tx.reintroduce(c.Table, c.Column.Name); err != nil {
		return err
	}
	tp, _ = tx.s.resolve(Table(c.Table))
	return tx.createChild(tp, &object{typ: ObjectColumn, name: c.Column.Name, comment: c.Column.Comment,
		kind: c.Column.Type, nullable: c.Column.Nullable})
}

func (c DropObject) permit(s *Snapshot, w *who) error { return s.permitTreeChange(w, c.Object) }

// permitTreeChange: ownership on the chain; for columns see
// permitColumnChange.
func (s *Snapshot) permitTreeChange(w *who, o Object) error {
	switch o.Type {
	case ObjectCatalog, ObjectSchema, ObjectTable:
		return s.needOwner(w, o)
	case ObjectColumn:
		p, ok := s.resolve(o)
		if !ok {
			return errf(ErrNotFound, o.String())
		}
		p.n--
		return s.permitColumnChange(w, &p)
	}
	return errf(ErrInvalidArgument, "cannot drop or rename a "+o.Type.String())
}

func (c DropObject) apply(tx *txn) error {
	p, ok := tx.s.resolve(c.Object)
	if !ok || p.n < 2 {
		return errf(ErrNotFound, c.Object.String())
	}
	o := p.leaf()
	if (o.typ == ObjectCatalog || o.typ == ObjectSchema) && o.children.Len() > 0 && !c.Cascade {
		return errf(ErrNonEmpty, c.Object.String())
	}
	if o.typ == ObjectColumn {
		if err := tx.s.checkColumnHoldsNoData(p.objs[p.n-2], o.name); err != nil {
			return err
		}
	}
	tagged := hasTags(&p)
	tx.dropLeaf(p)
	if tagged && o.typ != ObjectColumn {
		tx.emit(OpEffectiveTagsChanged, c.Object, "dropped")
	}
	return nil
}

// dropLeaf removes p's leaf (and its subtree) from the tree and the indexes.
func (tx *txn) dropLeaf(p path) {
	o := p.leaf()
	tx.forget(o)
	parent := p
	parent.n--
	np := parent.leaf().clone()
	np.children = np.children.Delete(o.name)
	if o.typ == ObjectColumn {
		np.columns = deleteString(np.columns, o.name)
	}
	tx.replace(parent, np)
}

func deleteString(ss []string, s string) []string {
	out := make([]string, 0, len(ss))
	for _, x := range ss {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// forget removes o's subtree from the indexes: locs, tag objects, role grants.
func (tx *txn) forget(o *object) {
	tx.s.locs = tx.s.locs.Delete(o.id)
	if o.data != nil {
		tx.s.storageIDs = tx.s.storageIDs.Delete(o.data.storage)
	}
	for _, a := range o.tags {
		if t, ok := tx.s.tags.Get(a.tag); ok {
			nt := t.clone()
			nt.objects = nt.objects.Delete(o.id)
			tx.s.tags = tx.s.tags.Set(nt.id, nt)
		}
	}
	for _, g := range o.grants {
		tx.dropRoleGrant(g.role, o.typ, o.id)
	}
	// Children in a deterministic order.
	names := o.children.Keys()
	slices.Sort(names)
	for _, n := range names {
		c, _ := o.get(n)
		tx.forget(c)
	}
}

// dropRoleGrant removes role's grant entry for object id.
func (tx *txn) dropRoleGrant(roleID uint64, t ObjectType, id uint64) {
	name, _ := tx.s.roleByID.Get(roleID)
	r, ok := tx.s.roles.Get(name)
	if !ok {
		return
	}
	nr := r.clone()
	nr.grants = slices.DeleteFunc(slices.Clone(r.grants), func(g objGrant) bool { return g.typ == t && g.id == id })
	tx.s.roles = tx.s.roles.Set(nr.name, nr)
}

func (c RenameObject) permit(s *Snapshot, w *who) error {
	if err := s.permitTreeChange(w, c.Object); err != nil {
		return err
	}
	parts, err := ParseName(c.Object.Type, c.NewName)
	if err != nil {
		return err
	}
	old, _ := ParseName(c.Object.Type, c.Object.Name)
	if c.Object.Type == ObjectColumn || len(parts) < 2 || slices.Equal(parts[:len(parts)-1], old[:len(old)-1]) {
		return nil
	}
	priv := PrivCreateSchema
	if c.Object.Type == ObjectTable {
		priv = PrivCreateTable
	}
	return s.permitCreateIn(w, c.NewName, c.Object.Type, priv)
}

func (c RenameObject) apply(tx *txn) error {
	p, ok := tx.s.resolve(c.Object)
	if !ok || p.n < 2 {
		return errf(ErrNotFound, c.Object.String())
	}
	parts, err := ParseName(c.Object.Type, c.NewName)
	if err != nil {
		return err
	}
	old, _ := ParseName(c.Object.Type, c.Object.Name)
	if c.Object.Type == ObjectColumn && !slices.Equal(parts[:3], old[:3]) {
		return errf(ErrInvalidArgument, "a column cannot move to another table")
	}
	if slices.Equal(parts, old) {
		return nil
	}
	o := p.leaf()
	newParent := Object{[]ObjectType{ObjectMetalake, ObjectCatalog, ObjectSchema, ObjectTable}[len(parts)-1], joinParts(parts[:len(parts)-1])}
	if newParent.Type == ObjectMetalake {
		newParent.Name = tx.s.root.name
	}
	np, ok := tx.s.resolve(newParent)
	if !ok {
		return errf(ErrNotFound, newParent.String())
	}
	newName := parts[len(parts)-1]
	if np.leaf().children.Has(newName) {
		return errf(ErrAlreadyExists, Object{c.Object.Type, c.NewName}.String())
	}
	if o.typ == ObjectColumn {
		if err := tx.s.checkColumnHoldsNoData(np.leaf(), o.name); err != nil {
			return err
		}
		if err := tx.reintroduce(newParent.Name, newName); err != nil {
			return err
		}
		p, _ = tx.s.resolve(c.Object)
		np, _ = tx.s.resolve(newParent)
	}
	// Detach from the old parent.
	parent := p
	parent.n--
	op := parent.leaf().clone()
	op.children = op.children.Delete(o.name)
	sameParent := op.id == np.leaf().id
	if o.typ == ObjectColumn {
		op.columns = slices.Clone(op.columns)
		op.columns[slices.Index(op.columns, o.name)] = newName
	}
	tx.replace(parent, op)
	// Attach to the new parent (re-resolved: the tree changed).
	no := o.clone()
	no.name = newName
	no.audit = tx.touch(no.audit)
	np, _ = tx.s.resolve(newParent)
	no.parent = np.leaf().id
	npl := np.leaf().clone()
	npl.children = npl.children.Set(newName, mkChild(no))
	tx.replace(np, npl)
	tx.s.locs = tx.s.locs.Set(no.id, loc{parent: no.parent, name: newName, typ: no.typ})
	detail := "renamed from " + c.Object.Name
	if !sameParent {
		detail = "moved from " + c.Object.Name
	}
	tx.emit(OpEffectiveTagsChanged, Object{c.Object.Type, c.NewName}, detail)
	return nil
}

// ---- owners ----

func (c SetOwner) permit(s *Snapshot, w *who) error {
	switch c.Object.Type {
	case ObjectMetalake:
		if c.Object.Name != s.root.name {
			return errf(ErrNotFound, c.Object.String())
		}
		if w.owns(s.root.owner) {
			return nil
		}
		return errf(ErrForbidden, "requires the metalake owner")
	case ObjectCatalog, ObjectSchema, ObjectTable:
		return s.needOwner(w, c.Object)
	case ObjectTag, ObjectPolicy, ObjectRole:
		return s.needEntityOwner(w, c.Object)
	case ObjectDomain:
		return s.permitDomainOwner(w, c.Object.Name)
	}
	return errf(ErrInvalidArgument, "a "+c.Object.Type.String()+" has no owner")
}

func (tx *txn) checkOwner(o Owner) error {
	switch o.Type {
	case OwnerUser:
		if !tx.s.users.Has(o.Name) {
			return errf(ErrNotFound, User(o.Name).String())
		}
	case OwnerGroup:
		if !tx.s.groups.Has(o.Name) {
			return errf(ErrNotFound, Group(o.Name).String())
		}
	default:
		return errf(ErrInvalidArgument, "owner type must be USER or GROUP")
	}
	return nil
}

func (c SetOwner) apply(tx *txn) error {
	if err := tx.checkOwner(c.Owner); err != nil {
		return err
	}
	switch c.Object.Type {
	case ObjectTag:
		t, _ := tx.s.tagByName(c.Object.Name)
		nt := t.clone()
		nt.owner, nt.audit = c.Owner, tx.touch(t.audit)
		tx.s.tags = tx.s.tags.Set(nt.id, nt)
	case ObjectPolicy:
		p, _ := tx.s.policyByName(c.Object.Name)
		np := p.clone()
		np.owner, np.audit = c.Owner, tx.touch(p.audit)
		tx.s.policies = tx.s.policies.Set(np.id, np)
	case ObjectRole:
		r, _ := tx.s.roles.Get(c.Object.Name)
		nr := r.clone()
		nr.owner, nr.audit = c.Owner, tx.touch(r.audit)
		tx.s.roles = tx.s.roles.Set(nr.name, nr)
	case ObjectDomain:
		d, err := tx.domain(c.Object.Name)
		if err != nil {
			return err
		}
		nd := d.clone()
		nd.owner, nd.audit = c.Owner, tx.touch(d.audit)
		tx.putDomain(nd)
	default:
		p, ok := tx.s.resolve(c.Object)
		if !ok {
			return errf(ErrNotFound, c.Object.String())
		}
		no := p.leaf().clone()
		no.owner, no.audit = c.Owner, tx.touch(no.audit)
		tx.replace(p, no)
	}
	return nil
}

// ---- users and groups ----

func (c CreateUser) permit(s *Snapshot, w *who) error  { return s.onMetalake(w, PrivManageUsers) }
func (c DropUser) permit(s *Snapshot, w *who) error    { return s.onMetalake(w, PrivManageUsers) }
func (c CreateGroup) permit(s *Snapshot, w *who) error { return s.onMetalake(w, PrivManageGroups) }
func (c DropGroup) permit(s *Snapshot, w *who) error   { return s.onMetalake(w, PrivManageGroups) }
func (c AddGroupMembers) permit(s *Snapshot, w *who) error {
	return s.onMetalake(w, PrivManageGroups)
}
func (c RemoveGroupMembers) permit(s *Snapshot, w *who) error {
	return s.onMetalake(w, PrivManageGroups)
}

func (c CreateUser) apply(tx *txn) error {
	if err := CheckEntityName(c.Name); err != nil {
		return err
	}
	if tx.s.users.Has(c.Name) {
		return errf(ErrAlreadyExists, User(c.Name).String())
	}
	tx.s.users = tx.s.users.Set(c.Name, &user{name: c.Name, audit: tx.audit()})
	return nil
}

func (c DropUser) apply(tx *txn) error {
	u, ok := tx.s.users.Get(c.Name)
	if !ok {
		return errf(ErrNotFound, User(c.Name).String())
	}
	if tx.s.root.owner == (Owner{OwnerUser, c.Name}) {
		return errf(ErrInUse, "the metalake owner cannot be dropped")
	}
	for _, gn := range u.groups {
		g, _ := tx.s.groups.Get(gn)
		ng := g.clone()
		ng.members, _ = sortedRemove(g.members, c.Name)
		tx.s.groups = tx.s.groups.Set(gn, ng)
	}
	tx.s.users = tx.s.users.Delete(c.Name)
	return nil
}

func (c CreateGroup) apply(tx *txn) error {
	if err := CheckEntityName(c.Name); err != nil {
		return err
	}
	if tx.s.groups.Has(c.Name) {
		return errf(ErrAlreadyExists, Group(c.Name).String())
	}
	tx.s.groups = tx.s.groups.Set(c.Name, &group{name: c.Name, audit: tx.audit()})
	return nil
}

func (c DropGroup) apply(tx *txn) error {
	g, ok := tx.s.groups.Get(c.Name)
	if !ok {
		return errf(ErrNotFound, Group(c.Name).String())
	}
	if tx.s.root.owner == (Owner{OwnerGroup, c.Name}) {
		return errf(ErrInUse, "the metalake owner cannot be dropped")
	}
	for _, un := range g.members {
		tx.setUserGroup(un, c.Name, false)
	}
	tx.s.groups = tx.s.groups.Delete(c.Name)
	return nil
}

func (tx *txn) setUserGroup(un, gn string, member bool) {
	u, ok := tx.s.users.Get(un)
	if !ok {
		return
	}
	nu := u.clone()
	if member {
		nu.groups, _ = sortedInsert(u.groups, gn)
	} else {
		nu.groups, _ = sortedRemove(u.groups, gn)
	}
	tx.s.users = tx.s.users.Set(un, nu)
}

func (c AddGroupMembers) apply(tx *txn) error { return tx.members(c.Group, c.Users, true) }

func (c RemoveGroupMembers) apply(tx *txn) error { return tx.members(c.Group, c.Users, false) }

func (tx *txn) members(gn string, users []string, add bool) error {
	g, ok := tx.s.groups.Get(gn)
	if !ok {
		return errf(ErrNotFound, Group(gn).String())
	}
	ng := g.clone()
	for _, un := range users {
		if !tx.s.users.Has(un) {
			if add {
				return errf(ErrNotFound, User(un).String())
			}
			continue
		}
		var changed bool
		if add {
			ng.members, changed = sortedInsert(ng.members, un)
		} else {
			ng.members, changed = sortedRemove(ng.members, un)
		}
		if changed {
			tx.setUserGroup(un, gn, add)
		}
	}
	ng.audit = tx.touch(ng.audit)
	tx.s.groups = tx.s.groups.Set(gn, ng)
	return nil
}

// ---- roles and grants ----

func (c CreateRole) permit(s *Snapshot, w *who) error { return s.onMetalake(w, PrivCreateRole) }

func (c CreateRole) apply(tx *txn) error {
	if err := CheckEntityName(c.Name); err != nil {
		return err
	}
	if err := checkProps(c.Properties); err != nil {
		return err
	}
	if tx.s.roles.Has(c.Name) {
		return errf(ErrAlreadyExists, Role(c.Name).String())
	}
	id := tx.newID()
	tx.s.roles = tx.s.roles.Set(c.Name, &role{id: id, name: c.Name, owner: Owner{OwnerUser, tx.m.Actor},
		props: copyProps(c.Properties), audit: tx.audit()})
	tx.s.roleByID = tx.s.roleByID.Set(id, c.Name)
	for _, g := range c.Grants {
		if err := tx.grant(c.Name, g.Object, []PrivilegeCondition{{g.Privilege, g.Condition}}, true); err != nil {
			return err
		}
	}
	return nil
}

func (c DropRole) permit(s *Snapshot, w *who) error { return s.needEntityOwner(w, Role(c.Name)) }

func (c DropRole) apply(tx *txn) error {
	r, ok := tx.s.roles.Get(c.Name)
	if !ok {
		return errf(ErrNotFound, Role(c.Name).String())
	}
	var names []string
	tx.s.policies.Range(func(_ uint64, p *policy) bool {
		if p.enabled && (contains(p.content.ApplicableRoles, c.Name) || contains(p.content.ExemptRoles, c.Name)) {
			names = append(names, p.name)
		}
		return true
	})
	if len(names) > 0 {
		slices.Sort(names)
		return &InUseError{Role: c.Name, Policies: names}
	}
	for _, g := range r.grants {
		tx.setObjectGrant(g.typ, g.id, roleGrant{role: r.id})
	}
	for _, un := range sortedKeys(tx.s.users) {
		u, _ := tx.s.users.Get(un)
		if containsSorted(u.roles, c.Name) {
			nu := u.clone()
			nu.roles, _ = sortedRemove(u.roles, c.Name)
			nu.roleIDs, _ = removeU64(u.roleIDs, r.id)
			tx.s.users = tx.s.users.Set(un, nu)
		}
	}
	for _, gn := range sortedKeys(tx.s.groups) {
		g, _ := tx.s.groups.Get(gn)
		if containsSorted(g.roles, c.Name) {
			ng := g.clone()
			ng.roles, _ = sortedRemove(g.roles, c.Name)
			ng.roleIDs, _ = removeU64(g.roleIDs, r.id)
			tx.s.groups = tx.s.groups.Set(gn, ng)
		}
	}
	tx.s.roles = tx.s.roles.Delete(c.Name)
	tx.s.roleByID = tx.s.roleByID.Delete(r.id)
	return nil
}

// setObjectGrant replaces the grant entry of g.role on object (typ, id).
func (tx *txn) setObjectGrant(typ ObjectType, id uint64, g roleGrant) {
	switch typ {
	case ObjectTag:
		if t, ok := tx.s.tags.Get(id); ok {
			nt := t.clone()
			nt.grants = setRoleGrant(t.grants, g)
			tx.s.tags = tx.s.tags.Set(id, nt)
		}
	case ObjectPolicy:
		if p, ok := tx.s.policies.Get(id); ok {
			np := p.clone()
			np.grants = setRoleGrant(p.grants, g)
			tx.s.policies = tx.s.policies.Set(id, np)
		}
	case ObjectDomain:
		if d, ok := tx.s.domains.Get(id); ok {
			nd := d.clone()
			nd.grants = setRoleGrant(d.grants, g)
			tx.putDomain(nd)
		}
	default:
		if p, ok := tx.s.pathByID(id); ok {
			no := p.leaf().clone()
			no.grants = setRoleGrant(no.grants, g)
			tx.replace(p, no)
		}
	}
}

// securable resolves a grant target to (type, id, current grants).
func (s *Snapshot) securable(o Object) (uint64, []roleGrant, bool) {
	switch o.Type {
	case ObjectTag:
		t, ok := s.tagByName(o.Name)
		if !ok {
			return 0, nil, false
		}
		return t.id, t.grants, true
	case ObjectPolicy:
		p, ok := s.policyByName(o.Name)
		if !ok {
			return 0, nil, false
		}
		return p.id, p.grants, true
	case ObjectDomain:
		d, ok := s.domainByName(o.Name)
		if !ok {
			return 0, nil, false
		}
		return d.id, d.grants, true
	case ObjectMetalake, ObjectCatalog, ObjectSchema, ObjectTable:
		p, ok := s.resolve(o)
		if !ok {
			return 0, nil, false
		}
		return p.leaf().id, p.leaf().grants, true
	}
	return 0, nil, false
}

func (s *Snapshot) permitGrant(w *who, o Object) error {
	mp := s.metalakePath()
	if s.authorizePath(w, PrivManageGrants, &mp).Allowed {
		return nil
	}
	switch o.Type {
	case ObjectCatalog, ObjectSchema, ObjectTable:
		if p, ok := s.resolve(o); ok && ownsChain(w, &p) {
			return nil
		}
	case ObjectTag, ObjectPolicy:
		if s.needEntityOwner(w, o) == nil {
			return nil
		}
	case ObjectDomain:
		return s.permitDomainOwner(w, o.Name)
	}
	return s.need(w, Decision{}, o, "MANAGE_GRANTS or ownership of "+o.String())
}

func (c GrantPrivileges) permit(s *Snapshot, w *who) error  { return s.permitGrant(w, c.Object) }
func (c RevokePrivileges) permit(s *Snapshot, w *who) error { return s.permitGrant(w, c.Object) }

func (c GrantPrivileges) apply(tx *txn) error { return tx.grant(c.Role, c.Object, c.Privileges, true) }

func (c RevokePrivileges) apply(tx *txn) error {
	return tx.grant(c.Role, c.Object, c.Privileges, false)
}

func (tx *txn) grant(roleName string, o Object, pcs []PrivilegeCondition, add bool) error {
	r, ok := tx.s.roles.Get(roleName)
	if !ok {
		return errf(ErrNotFound, Role(roleName).String())
	}
	id, grants, ok := tx.s.securable(o)
	if !ok {
		return errf(ErrNotFound, o.String())
	}
	if len(pcs) == 0 {
		return errf(ErrInvalidArgument, "no privileges")
	}
	cur := findRoleGrant(grants, r.id)
	var a, d privSet
	for _, pc := range pcs {
		if !pc.Name.Valid() {
			return errf(ErrInvalidArgument, "unknown privilege")
		}
		if !pc.Name.CanBindTo(o.Type) {
			return errf(ErrInvalidArgument, pc.Name.String()+" cannot be granted on a "+o.Type.String())
		}
		switch pc.Condition {
		case Allow:
			a |= 1 << pc.Name
		case Deny:
			d |= 1 << pc.Name
		default:
			return errf(ErrInvalidArgument, "condition must be ALLOW or DENY")
		}
	}
	if a&d != 0 {
		return errf(ErrInvalidArgument, "a privilege cannot be both ALLOW and DENY in one role")
	}
	if add {
		if (cur.allow|a)&(cur.deny|d) != 0 {
			return errf(ErrInvalidArgument, "a privilege cannot be both ALLOW and DENY in one role")
		}
		cur.allow |= a
		cur.deny |= d
	} else {
		cur.allow &^= a
		cur.deny &^= d
	}
	tx.setObjectGrant(o.Type, id, cur)
	// Mirror in the role.
	nr := r.clone()
	gs := slices.DeleteFunc(slices.Clone(r.grants), func(g objGrant) bool { return g.typ == o.Type && g.id == id })
	if cur.allow|cur.deny != 0 {
		gs = append(gs, objGrant{typ: o.Type, id: id, allow: cur.allow, deny: cur.deny})
		slices.SortFunc(gs, cmpObjGrant)
	}
	nr.grants = gs
	nr.audit = tx.touch(r.audit)
	tx.s.roles = tx.s.roles.Set(roleName, nr)
	return nil
}

func cmpObjGrant(a, b objGrant) int {
	if a.typ != b.typ {
		return int(a.typ) - int(b.typ)
	}
	switch {
	case a.id < b.id:
		return -1
	case a.id > b.id:
		return 1
	}
	return 0
}

func (c GrantRoles) permit(s *Snapshot, w *who) error  { return s.onMetalake(w, PrivManageGrants) }
func (c RevokeRoles) permit(s *Snapshot, w *who) error { return s.onMetalake(w, PrivManageGrants) }
func (c GrantRoles) apply(tx *txn) error               { return tx.bindRoles(c.Grantee, c.Roles, true) }
func (c RevokeRoles) apply(tx *txn) error              { return tx.bindRoles(c.Grantee, c.Roles, false) }

func (tx *txn) bindRoles(g Owner, roles []string, add bool) error {
	if err := tx.checkOwner(g); err != nil {
		return err
	}
	if len(roles) == 0 {
		return errf(ErrInvalidArgument, "no roles")
	}
	var cur []string
	var ids []uint64
	if g.Type == OwnerUser {
		u, _ := tx.s.users.Get(g.Name)
		cur, ids = u.roles, u.roleIDs
	} else {
		gr, _ := tx.s.groups.Get(g.Name)
		cur, ids = gr.roles, gr.roleIDs
	}
	for _, rn := range roles {
		r, ok := tx.s.roles.Get(rn)
		if !ok {
			return errf(ErrNotFound, Role(rn).String())
		}
		if add {
			cur, _ = sortedInsert(cur, rn)
			ids, _ = insertU64(ids, r.id)
		} else {
			cur, _ = sortedRemove(cur, rn)
			ids, _ = removeU64(ids, r.id)
		}
	}
	if g.Type == OwnerUser {
		u, _ := tx.s.users.Get(g.Name)
		nu := u.clone()
		nu.roles, nu.roleIDs = cur, ids
		tx.s.users = tx.s.users.Set(g.Name, nu)
	} else {
		gr, _ := tx.s.groups.Get(g.Name)
		ng := gr.clone()
		ng.roles, ng.roleIDs = cur, ids
		tx.s.groups = tx.s.groups.Set(g.Name, ng)
	}
	return nil
}
