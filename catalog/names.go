package catalog

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen is the maximum length of one name part, in characters.
const MaxNameLen = 128

// MaxValueLen is the maximum length of a tag value, in characters.
const MaxValueLen = 256

// ObjectType is the type of a securable or taggable object.
type ObjectType uint8

// Object types. The numbers are serialized: append only.
const (
	ObjectMetalake ObjectType = 1
	ObjectCatalog  ObjectType = 2
	ObjectSchema   ObjectType = 3
	ObjectTable    ObjectType = 4
	ObjectColumn   ObjectType = 5
	ObjectTag      ObjectType = 6
	ObjectPolicy   ObjectType = 7
	ObjectRole     ObjectType = 8
	ObjectUser     ObjectType = 9
	ObjectGroup    ObjectType = 10
	ObjectDomain   ObjectType = 11
)

var objectTypeNames = [...]string{
	ObjectMetalake: "METALAKE", ObjectCatalog: "CATALOG", ObjectSchema: "SCHEMA",
	ObjectTable: "TABLE", ObjectColumn: "COLUMN", ObjectTag: "TAG",
	ObjectPolicy: "POLICY", ObjectRole: "ROLE", ObjectUser: "USER", ObjectGroup: "GROUP",
	ObjectDomain: "DOMAIN",
}

// String returns the upper-case name ("TABLE"), or "ObjectType(n)".
func (t ObjectType) String() string {
	if t >= 1 && int(t) < len(objectTypeNames) {
		return objectTypeNames[t]
	}
	return "ObjectType(" + itoa(uint64(t)) + ")"
}

// ParseObjectType parses a type name case-insensitively.
func ParseObjectType(s string) (ObjectType, error) {
	for i := 1; i < len(objectTypeNames); i++ {
		if strings.EqualFold(s, objectTypeNames[i]) {
			return ObjectType(i), nil
		}
	}
	return 0, errf(ErrInvalidArgument, "unknown object type "+quote(trunc(s)))
}

// MarshalText encodes the type name ("" for the zero value).
func (t ObjectType) MarshalText() ([]byte, error) {
	if t == 0 {
		return []byte{}, nil
	}
	if t < 1 || int(t) >= len(objectTypeNames) {
		return nil, errf(ErrInvalidArgument, "unknown object type")
	}
	return []byte(t.String()), nil
}

// UnmarshalText decodes a type name case-insensitively.
func (t *ObjectType) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*t = 0
		return nil
	}
	v, err := ParseObjectType(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// depth is the number of dot-separated parts of a full name of type t in the
// catalog tree (metalake 0), or -1 for single-level types.
func (t ObjectType) depth() int {
	switch t {
	case ObjectMetalake:
		return 0
	case ObjectCatalog:
		return 1
	case ObjectSchema:
		return 2
	case ObjectTable:
		return 3
	case ObjectColumn:
		return 4
	}
	return -1
}

// Object names an object: its type and full name. Full names of catalog-tree
// objects are dot-joined ("cat.sch.tbl.col"); metalakes, tags, policies and
// roles take the whole string as their name. The metalake object's name is
// the snapshot's metalake name.
type Object struct {
	Type ObjectType `json:"type"`
	Name string     `json:"fullName"`
}

// String returns "TABLE c.s.t".
func (o Object) String() string { return o.Type.String() + " " + o.Name }

// Catalog, Schema, Table, Column, Tag, Policy and Role build Objects.
func Catalog(name string) Object { return Object{ObjectCatalog, name} }

// Schema returns the schema object "catalog.schema".
func Schema(fullName string) Object { return Object{ObjectSchema, fullName} }

// Table returns the table object "catalog.schema.table".
func Table(fullName string) Object { return Object{ObjectTable, fullName} }

// Column returns the column object "catalog.schema.table.column".
func Column(fullName string) Object { return Object{ObjectColumn, fullName} }

// Tag returns the tag object named name.
func Tag(name string) Object { return Object{ObjectTag, name} }

// Policy returns the policy object named name.
func Policy(name string) Object { return Object{ObjectPolicy, name} }

// Role returns the role object named name.
func Role(name string) Object { return Object{ObjectRole, name} }

// User returns the user object named name (a target of events and owners).
func User(name string) Object { return Object{ObjectUser, name} }

// Group returns the group object named name.
func Group(name string) Object { return Object{ObjectGroup, name} }

// Domain returns the domain object named name.
func Domain(name string) Object { return Object{ObjectDomain, name} }

// CheckNamePart validates one name part of a catalog-tree object (catalog,
// schema, table or column name): 1–128 characters of valid UTF-8, no '.', no
// control characters, not "*" and not "system" (in any case). The error is a
// *NameError.
func CheckNamePart(part string) error {
	if r := namePartRule(part, false); r != "" {
		return &NameError{Name: part, Reason: r}
	}
	return nil
}

// CheckEntityName validates the name of a single-level entity (user, group,
// role, tag, policy): like CheckNamePart, except that '.' is allowed.
func CheckEntityName(name string) error {
	if r := namePartRule(name, true); r != "" {
		return &NameError{Name: name, Reason: r}
	}
	return nil
}

func namePartRule(s string, dotOK bool) string {
	if s == "" {
		return "empty"
	}
	if !utf8.ValidString(s) {
		return "not valid UTF-8"
	}
	n := 0
	for _, r := range s {
		n++
		if r == '.' && !dotOK {
			return "contains '.'"
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			return "contains a control character"
		}
	}
	if n > MaxNameLen {
		return "longer than 128 characters"
	}
	if s == "*" || strings.EqualFold(s, "system") {
		return "reserved"
	}
	if strings.TrimSpace(s) == "" {
		return "blank"
	}
	return ""
}

// ParseName validates the full name of an object of type t and returns its
// parts: one part for single-level types (metalake, tag, policy, role), and
// 1–4 dot-separated parts for catalog, schema, table and column. The error is
// a *NameError or wraps ErrInvalidArgument for an unknown type.
func ParseName(t ObjectType, full string) ([]string, error) {
	d := t.depth()
	switch {
	case t == ObjectMetalake || d < 0:
		if t < 1 || int(t) >= len(objectTypeNames) {
			return nil, errf(ErrInvalidArgument, "unknown object type")
		}
		if err := CheckEntityName(full); err != nil {
			return nil, err
		}
		return []string{full}, nil
	}
	parts := strings.Split(full, ".")
	if len(parts) != d {
		return nil, &NameError{Name: full, Reason: "a " + strings.ToLower(t.String()) + " name has " + itoa(uint64(d)) + " dot-separated parts"}
	}
	for _, p := range parts {
		if r := namePartRule(p, false); r != "" {
			return nil, &NameError{Name: full, Reason: "part " + quote(trunc(p)) + ": " + r}
		}
	}
	return parts, nil
}

// checkTagValue validates a tag value or allowed value.
func checkTagValue(v string) error {
	if strings.TrimSpace(v) == "" {
		return errf(ErrInvalidArgument, "tag value is blank")
	}
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxValueLen {
		return errf(ErrInvalidArgument, "tag value is not valid UTF-8 of at most 256 characters")
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return errf(ErrInvalidArgument, "tag value contains a control character")
		}
	}
	return nil
}

// splitN splits full into exactly n dot-separated parts without allocating.
func splitN(full string, parts *[4]string, n int) bool {
	for i := 0; i < n-1; i++ {
		j := strings.IndexByte(full, '.')
		if j < 0 {
			return false
		}
		parts[i] = full[:j]
		full = full[j+1:]
	}
	if strings.IndexByte(full, '.') >= 0 {
		return false
	}
	parts[n-1] = full
	return true
}

func trunc(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func itoa(u uint64) string {
	if u == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	return string(b[i:])
}
