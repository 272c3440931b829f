package catalog

import "strings"

// Privilege is a Gravitino privilege name.
type Privilege uint8

// Privileges. The numbers are internal (serialized forms use names) but
// stable; append only.
const (
	PrivUseCatalog    Privilege = 1
	PrivUseSchema     Privilege = 2
	PrivCreateSchema  Privilege = 3
	PrivCreateTable   Privilege = 4
	PrivSelectTable   Privilege = 5
	PrivModifyTable   Privilege = 6
	PrivManageGrants  Privilege = 7
	PrivManageUsers   Privilege = 8
	PrivManageGroups  Privilege = 9
	PrivCreateRole    Privilege = 10
	PrivCreateTag     Privilege = 11
	PrivApplyTag      Privilege = 12
	PrivViewTag       Privilege = 13
	PrivCreatePolicy  Privilege = 14
	PrivApplyPolicy   Privilege = 15
	PrivViewPolicy    Privilege = 16
	PrivCreateCatalog Privilege = 17
	PrivManageDomain  Privilege = 18
	PrivUseDomain     Privilege = 19
)

const numPrivileges = 19

var privilegeNames = [...]string{
	PrivUseCatalog: "USE_CATALOG", PrivUseSchema: "USE_SCHEMA", PrivCreateSchema: "CREATE_SCHEMA",
	PrivCreateTable: "CREATE_TABLE", PrivSelectTable: "SELECT_TABLE", PrivModifyTable: "MODIFY_TABLE",
	PrivManageGrants: "MANAGE_GRANTS", PrivManageUsers: "MANAGE_USERS", PrivManageGroups: "MANAGE_GROUPS",
	PrivCreateRole: "CREATE_ROLE", PrivCreateTag: "CREATE_TAG", PrivApplyTag: "APPLY_TAG",
	PrivViewTag: "VIEW_TAG", PrivCreatePolicy: "CREATE_POLICY", PrivApplyPolicy: "APPLY_POLICY",
	PrivViewPolicy: "VIEW_POLICY", PrivCreateCatalog: "CREATE_CATALOG",
	PrivManageDomain: "MANAGE_DOMAIN", PrivUseDomain: "USE_DOMAIN",
}

// bindable lists, per privilege, the object types it may be granted on
// (Gravitino's canBindTo).
var bindable = [...]typeSet{
	PrivUseCatalog:    types(ObjectMetalake, ObjectCatalog),
	PrivUseSchema:     types(ObjectMetalake, ObjectCatalog, ObjectSchema),
	PrivCreateSchema:  types(ObjectMetalake, ObjectCatalog),
	PrivCreateTable:   types(ObjectMetalake, ObjectCatalog, ObjectSchema),
	PrivSelectTable:   types(ObjectMetalake, ObjectCatalog, ObjectSchema, ObjectTable),
	PrivModifyTable:   types(ObjectMetalake, ObjectCatalog, ObjectSchema, ObjectTable),
	PrivManageGrants:  types(ObjectMetalake),
	PrivManageUsers:   types(ObjectMetalake),
	PrivManageGroups:  types(ObjectMetalake),
	PrivCreateRole:    types(ObjectMetalake),
	PrivCreateTag:     types(ObjectMetalake),
	PrivApplyTag:      types(ObjectMetalake, ObjectTag),
	PrivViewTag:       types(ObjectMetalake, ObjectTag),
	PrivCreatePolicy:  types(ObjectMetalake),
	PrivApplyPolicy:   types(ObjectMetalake, ObjectPolicy),
	PrivViewPolicy:    types(ObjectMetalake, ObjectPolicy),
	PrivCreateCatalog: types(ObjectMetalake),
	PrivManageDomain:  types(ObjectMetalake, ObjectDomain),
	PrivUseDomain:     types(ObjectMetalake, ObjectDomain),
}

type typeSet uint16

func types(ts ...ObjectType) typeSet {
	var s typeSet
	for _, t := range ts {
		s |= 1 << t
	}
	return s
}

// Valid reports whether p is a known privilege.
func (p Privilege) Valid() bool { return p >= 1 && p <= numPrivileges }

// String returns the privilege name ("SELECT_TABLE").
func (p Privilege) String() string {
	if p.Valid() {
		return privilegeNames[p]
	}
	return "Privilege(" + itoa(uint64(p)) + ")"
}

// CanBindTo reports whether p may be granted on objects of type t.
func (p Privilege) CanBindTo(t ObjectType) bool {
	return p.Valid() && t < 16 && bindable[p]&(1<<t) != 0
}

// ParsePrivilege parses a privilege name case-insensitively.
func ParsePrivilege(s string) (Privilege, error) {
	for i := 1; i <= numPrivileges; i++ {
		if strings.EqualFold(s, privilegeNames[i]) {
			return Privilege(i), nil
		}
	}
	return 0, errf(ErrInvalidArgument, "unknown privilege "+quote(trunc(s)))
}

// MarshalText encodes the privilege name ("" for the zero value).
func (p Privilege) MarshalText() ([]byte, error) {
	if p == 0 {
		return []byte{}, nil
	}
	if !p.Valid() {
		return nil, errf(ErrInvalidArgument, "unknown privilege")
	}
	return []byte(p.String()), nil
}

// UnmarshalText decodes a privilege name case-insensitively.
func (p *Privilege) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*p = 0
		return nil
	}
	v, err := ParsePrivilege(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// privSet is a set of privileges, bit p set for privilege p.
type privSet uint32

func (s privSet) has(p Privilege) bool { return s&(1<<p) != 0 }

// Condition is ALLOW or DENY.
type Condition uint8

// Conditions.
const (
	Allow Condition = 1
	Deny  Condition = 2
)

// String returns "ALLOW" or "DENY".
func (c Condition) String() string {
	switch c {
	case Allow:
		return "ALLOW"
	case Deny:
		return "DENY"
	}
	return "Condition(" + itoa(uint64(c)) + ")"
}

// MarshalText encodes "ALLOW" or "DENY" ("" for the zero value).
func (c Condition) MarshalText() ([]byte, error) {
	if c == 0 {
		return []byte{}, nil
	}
	if c != Allow && c != Deny {
		return nil, errf(ErrInvalidArgument, "unknown condition")
	}
	return []byte(c.String()), nil
}

// UnmarshalText decodes "ALLOW" or "DENY" case-insensitively.
func (c *Condition) UnmarshalText(b []byte) error {
	switch {
	case len(b) == 0:
		*c = 0
	case strings.EqualFold(string(b), "ALLOW"):
		*c = Allow
	case strings.EqualFold(string(b), "DENY"):
		*c = Deny
	default:
		return errf(ErrInvalidArgument, "unknown condition "+quote(trunc(string(b))))
	}
	return nil
}

// PrivilegeCondition is one privilege with its condition, as granted.
type PrivilegeCondition struct {
	Name      Privilege `json:"name"`
	Condition Condition `json:"condition"`
}

// Grant is one privilege granted to a role on an object.
type Grant struct {
	Object    Object    `json:"object"`
	Privilege Privilege `json:"privilege"`
	Condition Condition `json:"condition"`
}

// OwnerType is USER or GROUP.
type OwnerType uint8

// Owner types.
const (
	OwnerUser  OwnerType = 1
	OwnerGroup OwnerType = 2
)

// String returns "USER" or "GROUP".
func (t OwnerType) String() string {
	switch t {
	case OwnerUser:
		return "USER"
	case OwnerGroup:
		return "GROUP"
	}
	return "OwnerType(" + itoa(uint64(t)) + ")"
}

// MarshalText encodes "USER" or "GROUP" ("" for the zero value).
func (t OwnerType) MarshalText() ([]byte, error) {
	if t == 0 {
		return []byte{}, nil
	}
	if t != OwnerUser && t != OwnerGroup {
		return nil, errf(ErrInvalidArgument, "unknown owner type")
	}
	return []byte(t.String()), nil
}

// UnmarshalText decodes "USER" or "GROUP" case-insensitively.
func (t *OwnerType) UnmarshalText(b []byte) error {
	switch {
	case len(b) == 0:
		*t = 0
	case strings.EqualFold(string(b), "USER"):
		*t = OwnerUser
	case strings.EqualFold(string(b), "GROUP"):
		*t = OwnerGroup
	default:
		return errf(ErrInvalidArgument, "unknown owner type "+quote(trunc(string(b))))
	}
	return nil
}

// Owner is the owner of an object: a user or a group (every member owns).
type Owner struct {
	Type OwnerType `json:"type"`
	Name string    `json:"name"`
}
