package catalog

import "lakegate/catalog/internal/pmap"

// Tags, policies and domains are the metalake's named entities: each kind
// has a name index (name → id), and AlterTag, AlterPolicy and AlterDomain
// apply a list of updates to one of them, all or nothing. The updates they
// share follow one set of rules, kept here so that a rule changes once for
// every kind:
//
//   - "rename" (NewName) checks the name (CheckEntityName); the current name
//     is a no-op; a name the kind's index holds is taken (the kind's error,
//     as for a create).
//   - "updateComment" (NewComment) sets the comment; "" clears it.
//   - "setProperty" (Property, Value) adds or replaces a property; the key
//     must not be empty.
//   - "removeProperty" (Property) removes a property; a missing key is a
//     no-op, and no properties left is none (nil).
//   - Any other type is an unknown update of the kind, and so are the
//     property updates for a kind without properties (policies).
//
// A kind's own updates (a policy's "updateContent") are its caller's.

// entityKind describes one kind of named entity.
type entityKind struct {
	name  string                                      // "tag", "policy" or "domain", as errors name it
	ids   func(s *Snapshot) *pmap.Map[string, uint64] // the kind's name index in s
	taken func(name string) error                     // the error for a name the index holds
}

var (
	tagKind = entityKind{"tag", func(s *Snapshot) *pmap.Map[string, uint64] { return &s.tagIDs },
		func(n string) error { return errf(ErrAlreadyExists, Tag(n).String()) }}
	policyKind = entityKind{"policy", func(s *Snapshot) *pmap.Map[string, uint64] { return &s.policyIDs },
		func(n string) error { return errf(ErrAlreadyExists, Policy(n).String()) }}
	domainKind = entityKind{"domain", func(s *Snapshot) *pmap.Map[string, uint64] { return &s.domainIDs },
		func(n string) error { return domainErr(ErrAlreadyExists, RuleDomainAlreadyExists, Domain(n).String()) }}
)

// checkNew checks a new entity of kind k: its name, its properties (nil for
// a kind without) and that s has no entity of that name.
func (k entityKind) checkNew(s *Snapshot, name string, props map[string]string) error {
	if err := CheckEntityName(name); err != nil {
		return err
	}
	if err := checkProps(props); err != nil {
		return err
	}
	if k.ids(s).Has(name) {
		return k.taken(name)
	}
	return nil
}

// entityUpdate is one shared update of AlterTag, AlterPolicy or
// AlterDomain, in the form the shared rules read.
type entityUpdate struct {
	typ, newName, newComment, property, value string
}

// entityEdit is a tag, policy or domain being altered in tx: the fields of
// its cloned record that the shared updates change.
type entityEdit struct {
	kind    entityKind
	tx      *txn
	id      uint64
	name    *string
	comment *string
	props   *map[string]string // nil: the kind has no properties
}

// alterEntity applies updates to e in order, stopping at the first error
// (the caller's transaction is then discarded: all or nothing); an empty
// list is refused. own, when not nil, applies a kind's own update and
// reports whether u was one (it fails only for one of its own); the others
// are shared updates, read through shared.
func alterEntity[U any](e entityEdit, updates []U, shared func(U) entityUpdate, own func(U) (bool, error)) error {
	if len(updates) == 0 {
		return errf(ErrInvalidArgument, "no updates")
	}
	for _, u := range updates {
		done, err := false, error(nil)
		if own != nil {
			done, err = own(u)
		}
		if !done {
			err = e.apply(shared(u))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (u TagUpdate) shared() entityUpdate {
	return entityUpdate{u.Type, u.NewName, u.NewComment, u.Property, u.Value}
}

// shared reads a domain update as a tag update: they have the same fields
// (the conversion stops compiling when they differ).
func (u DomainUpdate) shared() entityUpdate { return TagUpdate(u).shared() }

func (u PolicyUpdate) shared() entityUpdate {
	return entityUpdate{typ: u.Type, newName: u.NewName, newComment: u.NewComment}
}

// apply applies one shared update to e (see the rules above).
func (e entityEdit) apply(u entityUpdate) error {
	switch {
	case u.typ == "rename":
		return e.rename(u.newName)
	case u.typ == "updateComment":
		*e.comment = u.newComment
	case u.typ == "setProperty" && e.props != nil:
		if u.property == "" {
			return errf(ErrInvalidArgument, "empty property key")
		}
		*e.props = alterProps(*e.props, map[string]string{u.property: u.value}, nil)
	case u.typ == "removeProperty" && e.props != nil:
		*e.props = alterProps(*e.props, nil, []string{u.property})
	default:
		return errf(ErrInvalidArgument, "unknown "+e.kind.name+" update "+quote(trunc(u.typ)))
	}
	return nil
}

// rename renames e to newName in its kind's name index.
func (e entityEdit) rename(newName string) error {
	if err := CheckEntityName(newName); err != nil {
		return err
	}
	if newName == *e.name {
		return nil
	}
	ids := e.kind.ids(e.tx.s)
	if ids.Has(newName) {
		return e.kind.taken(newName)
	}
	*ids = ids.Delete(*e.name).Set(newName, e.id)
	*e.name = newName
	return nil
}
