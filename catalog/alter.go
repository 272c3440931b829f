package catalog

import "maps"

// AlterObject changes the comment and properties of a catalog, schema or
// table. Comment nil leaves the comment unchanged (a pointer to "" clears
// it). SetProperties are set (added or replaced) and RemoveProperties
// removed; removing a missing key is a no-op. Keys follow the rules of the
// create commands (non-empty); a key both set and removed, and an alter
// that changes nothing (no comment and no property), are rejected with
// ErrInvalidArgument, and so is an object of any other type. The object's
// LastModifier and LastModifiedTime are updated. Requires ownership of the
// object or an ancestor (like RenameObject).
type AlterObject struct {
	Object           Object            `json:"object"`
	Comment          *string           `json:"comment,omitempty"`          // nil: unchanged
	SetProperties    map[string]string `json:"setProperties,omitempty"`    // added or replaced
	RemoveProperties []string          `json:"removeProperties,omitempty"` // removing a missing key is a no-op
}

// Op returns "AlterObject".
func (AlterObject) Op() string { return "AlterObject" }

// Target returns the altered object.
func (c AlterObject) Target() Object { return c.Object }

func (AlterObject) commandType() CommandType { return TypeAlterObject }

func (c AlterObject) permit(s *Snapshot, w *who) error {
	if err := checkAlterable(c.Object.Type); err != nil {
		return err
	}
	return s.needOwner(w, c.Object)
}

func checkAlterable(t ObjectType) error {
	switch t {
	case ObjectCatalog, ObjectSchema, ObjectTable:
		return nil
	}
	return errf(ErrInvalidArgument, "cannot alter the comment or properties of a "+t.String())
}

// check validates the command's content, independently of the snapshot.
func (c AlterObject) check() error {
	if err := checkAlterable(c.Object.Type); err != nil {
		return err
	}
	if c.Comment == nil && len(c.SetProperties) == 0 && len(c.RemoveProperties) == 0 {
		return errf(ErrInvalidArgument, "nothing to alter")
	}
	if err := checkProps(c.SetProperties); err != nil {
		return err
	}
	for _, k := range c.RemoveProperties {
		if k == "" {
			return errf(ErrInvalidArgument, "empty property key")
		}
		if _, ok := c.SetProperties[k]; ok {
			return errf(ErrInvalidArgument, "property "+quote(trunc(k))+" is both set and removed")
		}
	}
	return nil
}

func (c AlterObject) apply(tx *txn) error {
	if err := c.check(); err != nil {
		return err
	}
	p, ok := tx.s.resolve(c.Object)
	if !ok || p.n < 2 {
		return errf(ErrNotFound, c.Object.String())
	}
	no := p.leaf().clone()
	if c.Comment != nil {
		no.comment = *c.Comment
	}
	if len(c.SetProperties) > 0 || len(c.RemoveProperties) > 0 {
		no.props = alterProps(no.props, c.SetProperties, c.RemoveProperties)
	}
	no.audit = tx.touch(no.audit)
	tx.replace(p, no)
	return nil
}

// alterProps returns a new map: old with remove deleted and set applied
// (nil when empty). old is never modified: published objects share it.
func alterProps(old, set map[string]string, remove []string) map[string]string {
	out := make(map[string]string, len(old)+len(set))
	maps.Copy(out, old)
	for _, k := range remove {
		delete(out, k)
	}
	maps.Copy(out, set)
	if len(out) == 0 {
		return nil
	}
	return out
}
