package catalog

// Command is a mutation of a Snapshot: one of the command structs of this
// package (the set is closed). Commands are plain values; encode them with
// EncodeCommand and apply them with Apply.
type Command interface {
	// Op is the operation name used in events, e.g. "CreateTable".
	Op() string
	// Target is the object the command acts on, for events.
	Target() Object
	commandType() CommandType
	permit(s *Snapshot, w *who) error
	apply(tx *txn) error
}

// CommandType is the serialized number of a command type. The numbers are
// explicit and append-only (pinned by a test): never renumber or reuse one.
type CommandType uint16

// Command type numbers.
const (
	TypeCreateCatalog       CommandType = 1
	TypeCreateSchema        CommandType = 2
	TypeCreateTable         CommandType = 3
	TypeDropObject          CommandType = 4
	TypeRenameObject        CommandType = 5
	TypeAddColumn           CommandType = 6
	TypeSetOwner            CommandType = 7
	TypeCreateUser          CommandType = 8
	TypeDropUser            CommandType = 9
	TypeCreateGroup         CommandType = 10
	TypeDropGroup           CommandType = 11
	TypeAddGroupMembers     CommandType = 12
	TypeRemoveGroupMembers  CommandType = 13
	TypeCreateRole          CommandType = 14
	TypeDropRole            CommandType = 15
	TypeGrantPrivileges     CommandType = 16
	TypeRevokePrivileges    CommandType = 17
	TypeGrantRoles          CommandType = 18
	TypeRevokeRoles         CommandType = 19
	TypeCreateTag           CommandType = 20
	TypeAlterTag            CommandType = 21
	TypeDropTag             CommandType = 22
	TypeAssociateTagsV1     CommandType = 23
	TypeAssociateTagsV2     CommandType = 24
	TypeCreatePolicy        CommandType = 25
	TypeAlterPolicy         CommandType = 26
	TypeEnablePolicy        CommandType = 27
	TypeDisablePolicy       CommandType = 28
	TypeDropPolicy          CommandType = 29
	TypeAttachPolicy        CommandType = 30
	TypeDetachPolicy        CommandType = 31
	TypeCommitTableVersion  CommandType = 32
	TypeAlterObject         CommandType = 33
	TypeCreateDomain        CommandType = 34
	TypeAlterDomain         CommandType = 35
	TypeSetDomainStatus     CommandType = 36
	TypeSetDomainParent     CommandType = 37
	TypeDetachDomain        CommandType = 38
	TypeSetDomainBackingTag CommandType = 39
	TypeDropDomain          CommandType = 40
	TypeSetRules            CommandType = 41
	TypeCommitAccessLog     CommandType = 42
)

// CreateCatalog creates a catalog owned by the actor. Requires CREATE_CATALOG
// on the metalake.
type CreateCatalog struct {
	Name       string            `json:"name"`
	Type       string            `json:"type,omitempty"` // e.g. "managed"
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
}

// CreateSchema creates the schema Name ("catalog.schema") owned by the actor.
// Requires CREATE_SCHEMA on the catalog (with USE_CATALOG).
type CreateSchema struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Properties map[string]string `json:"properties,omitempty"`
}

// CreateTable creates the table Name ("catalog.schema.table") with its
// columns, owned by the actor. Requires CREATE_TABLE on the schema (with
// USE_CATALOG and USE_SCHEMA).
//
// StorageID names the table's directory "tables/<StorageID>/" in the
// tenant's stage: 1 to 64 characters of [a-z0-9-], alphanumeric at both
// ends, unique among the metalake's tables, and not of the reserved form
// "t" plus 16 hex digits. Without it the table gets a storage id of that
// form: under RulesColumnGovernance one minted from the generation the
// table is created at, which never repeats (Files must then be empty);
// before, "t" plus its object id in 16 hex digits. metasrv accepts a
// StorageID (and Files) only from a gateway, which writes the files under
// a fresh random id before it creates the table. When StorageID or Files
// (even empty, but not nil) is given, the table starts at version 1 made of
// Files (see CommitTableVersion for the rules on files); otherwise at
// version 0, with no data committed.
type CreateTable struct {
	Name       string            `json:"name"`
	Comment    string            `json:"comment,omitempty"`
	Columns    []ColumnDef       `json:"columns"`
	Properties map[string]string `json:"properties,omitempty"`
	StorageID  string            `json:"storageId,omitempty"`
	Files      []DataFile        `json:"files,omitzero"`
}

// DropObject drops a catalog, schema, table or column. A catalog or schema
// with children needs Cascade. A dropped table's data files are no longer
// referenced (see Snapshot.ReferencedFiles); under RulesColumnGovernance no
// table gets its storage id again. Requires ownership of the object or an
// ancestor; for a column, see RulesColumnGovernance (ownership of the
// table, and a column the current version lists is not dropped; before,
// MODIFY_TABLE).
type DropObject struct {
	Object  Object `json:"object"`
	Cascade bool   `json:"cascade,omitempty"`
}

// RenameObject renames or moves a catalog, schema, table or column to the full
// name NewName of the same type: a schema may move to another catalog, a
// table to another schema; a column stays in its table. Grants, owners and
// tag assignments follow the object, and so do a table's storage id and
// versions. Requires ownership of the object or an ancestor (for a column,
// see RulesColumnGovernance: a column the current version lists is not
// renamed; before that level MODIFY_TABLE), and for a move CREATE_SCHEMA or
// CREATE_TABLE on the new parent.
type RenameObject struct {
	Object  Object `json:"object"`
	NewName string `json:"newName"`
}

// AddColumn appends a column to Table ("c.s.t"). Requires ownership of the
// table or an ancestor under RulesColumnGovernance (which also forgets the
// retained versions holding data of an earlier column of that name),
// MODIFY_TABLE before.
type AddColumn struct {
	Table  string    `json:"table"`
	Column ColumnDef `json:"column"`
}

// SetOwner sets the owner of a metalake, catalog, schema, table, tag, policy,
// role or domain. Requires the metalake owner or the current owner (of the
// object or, for catalog-tree objects, of an ancestor; for a domain, of its
// current parent).
type SetOwner struct {
	Object Object `json:"object"`
	Owner  Owner  `json:"owner"`
}

// CreateUser adds a user (its name is its principal id). Requires
// MANAGE_USERS.
type CreateUser struct {
	Name string `json:"name"`
}

// DropUser removes a user and its group memberships; the metalake owner
// cannot be dropped. Requires MANAGE_USERS.
type DropUser struct {
	Name string `json:"name"`
}

// CreateGroup adds a group. Requires MANAGE_GROUPS.
type CreateGroup struct {
	Name string `json:"name"`
}

// DropGroup removes a group. Requires MANAGE_GROUPS.
type DropGroup struct {
	Name string `json:"name"`
}

// AddGroupMembers adds existing users to a group (existing members are a
// no-op). Requires MANAGE_GROUPS.
type AddGroupMembers struct {
	Group string   `json:"group"`
	Users []string `json:"users"`
}

// RemoveGroupMembers removes users from a group (non-members are a no-op).
// Requires MANAGE_GROUPS.
type RemoveGroupMembers struct {
	Group string   `json:"group"`
	Users []string `json:"users"`
}

// CreateRole creates a role owned by the actor, with initial grants (checked
// like GrantPrivileges). Requires CREATE_ROLE; that the actor may make each
// grant is CheckEntry's rule, checked before proposing.
type CreateRole struct {
	Name       string            `json:"name"`
	Properties map[string]string `json:"properties,omitempty"`
	Grants     []Grant           `json:"grants,omitempty"`
}

// DropRole drops a role, its grants and its user/group bindings. Refused
// (*InUseError) while an enabled policy names it. Requires the role's owner.
type DropRole struct {
	Name string `json:"name"`
}

// GrantPrivileges grants privileges on Object to Role. A privilege that
// cannot bind to the object's type, or one granted both ALLOW and DENY to
// the role on the object, is rejected; granting an existing grant is a
// no-op. Requires MANAGE_GRANTS or ownership of the object (for a domain:
// of it, its current parent or the metalake).
type GrantPrivileges struct {
	Role       string               `json:"role"`
	Object     Object               `json:"object"`
	Privileges []PrivilegeCondition `json:"privileges"`
}

// RevokePrivileges revokes privileges (with their condition) on Object from
// Role; revoking a missing grant is a no-op. Same permission as
// GrantPrivileges.
type RevokePrivileges struct {
	Role       string               `json:"role"`
	Object     Object               `json:"object"`
	Privileges []PrivilegeCondition `json:"privileges"`
}

// GrantRoles binds roles to a user or group. Requires MANAGE_GRANTS.
type GrantRoles struct {
	Grantee Owner    `json:"grantee"`
	Roles   []string `json:"roles"`
}

// RevokeRoles unbinds roles from a user or group. Requires MANAGE_GRANTS.
type RevokeRoles struct {
	Grantee Owner    `json:"grantee"`
	Roles   []string `json:"roles"`
}

// CreateTag creates a tag owned by the actor. AllowedValues nil means any
// value (or none); an empty non-nil list means no value; a list means
// exactly those values (case-sensitive, each non-blank and at most 256
// characters). Requires CREATE_TAG.
type CreateTag struct {
	Name          string            `json:"name"`
	Comment       string            `json:"comment,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
	AllowedValues []string          `json:"allowedValues"`
}

// TagUpdate is one change of AlterTag: Type "rename" (NewName),
// "updateComment" (NewComment), "setProperty" (Property, Value) or
// "removeProperty" (Property).
type TagUpdate struct {
	Type       string `json:"@type"`
	NewName    string `json:"newName,omitempty"`
	NewComment string `json:"newComment,omitempty"`
	Property   string `json:"property,omitempty"`
	Value      string `json:"value,omitempty"`
}

// AlterTag applies updates to a tag, all or nothing. Requires the tag's
// owner.
type AlterTag struct {
	Name    string      `json:"name"`
	Updates []TagUpdate `json:"updates"`
}

// DropTag drops a tag with its assignments and policy attachments; the
// domains it backs keep no backing tag (and no members of their own), and
// recreating a tag of that name does not restore them. Requires the tag's
// owner.
type DropTag struct {
	Name string `json:"name"`
}

// AssociateTagsV1 adds and removes tags on a catalog, schema, table or column
// by name (Gravitino v1): removing a name removes all its values; adding an
// attached tag is ErrAlreadyExists; adding a tag with an allowed-values list
// is rejected (it needs a value); removing an unattached tag is a no-op; a
// name in both lists is rejected. Requires that the object be visible and
// APPLY_TAG on every named tag.
type AssociateTagsV1 struct {
	Object       Object   `json:"object"`
	TagsToAdd    []string `json:"tagsToAdd,omitempty"`
	TagsToRemove []string `json:"tagsToRemove,omitempty"`
}

// AssociateTagsV2 adds and removes (tag, value) pairs (Gravitino v2):
// removals first, then additions. Adding an existing pair, or a valueless
// pair to an attached tag, is a no-op; adding a value to a valueless
// assignment replaces it; removing the last value, or a valueless pair,
// removes the assignment; removing a missing pair is a no-op. A pair in both
// lists, a tag added both with and without a value, a value the tag does not
// allow, a value for a no-value tag and no value for a tag with a list are
// rejected. Same permission as AssociateTagsV1.
type AssociateTagsV2 struct {
	Object       Object     `json:"object"`
	TagsToAdd    []TagValue `json:"tagsToAdd,omitempty"`
	TagsToRemove []TagValue `json:"tagsToRemove,omitempty"`
}

// CreatePolicy creates a policy owned by the actor. Content is validated for
// Type (see PolicyContent); every role it names must exist. Requires
// CREATE_POLICY.
type CreatePolicy struct {
	Name    string        `json:"name"`
	Comment string        `json:"comment,omitempty"`
	Type    PolicyType    `json:"policyType"`
	Enabled bool          `json:"enabled"`
	Content PolicyContent `json:"content"`
}

// PolicyUpdate is one change of AlterPolicy: Type "rename" (NewName),
// "updateComment" (NewComment) or "updateContent" (PolicyType, which must be
// the policy's type, and NewContent).
type PolicyUpdate struct {
	Type       string         `json:"@type"`
	NewName    string         `json:"newName,omitempty"`
	NewComment string         `json:"newComment,omitempty"`
	PolicyType PolicyType     `json:"policyType,omitempty"`
	NewContent *PolicyContent `json:"newContent,omitempty"`
}

// AlterPolicy applies updates to a policy, all or nothing. Requires the
// policy's owner.
type AlterPolicy struct {
	Name    string         `json:"name"`
	Updates []PolicyUpdate `json:"updates"`
}

// EnablePolicy enables a policy (re-checking that its roles exist). Requires
// the policy's owner.
type EnablePolicy struct {
	Name string `json:"name"`
}

// DisablePolicy disables a policy. Requires the policy's owner.
type DisablePolicy struct {
	Name string `json:"name"`
}

// DropPolicy drops a policy and its tag attachments. Requires the policy's
// owner.
type DropPolicy struct {
	Name string `json:"name"`
}

// AttachPolicy attaches a policy to a tag with a selector (repeating replaces
// the selector). A selector value must be a valid tag value and, when the
// tag has an allowed-values list, among them. Requires APPLY_POLICY on the
// policy and APPLY_TAG on the tag.
type AttachPolicy struct {
	Tag      string   `json:"tag"`
	Policy   string   `json:"policy"`
	Selector Selector `json:"selector"`
}

// DetachPolicy detaches a policy from a tag (a missing attachment is a
// no-op). Same permission as AttachPolicy.
type DetachPolicy struct {
	Tag    string `json:"tag"`
	Policy string `json:"policy"`
}

func (CreateCatalog) Op() string      { return "CreateCatalog" }
func (CreateSchema) Op() string       { return "CreateSchema" }
func (CreateTable) Op() string        { return "CreateTable" }
func (DropObject) Op() string         { return "DropObject" }
func (RenameObject) Op() string       { return "RenameObject" }
func (AddColumn) Op() string          { return "AddColumn" }
func (SetOwner) Op() string           { return "SetOwner" }
func (CreateUser) Op() string         { return "CreateUser" }
func (DropUser) Op() string           { return "DropUser" }
func (CreateGroup) Op() string        { return "CreateGroup" }
func (DropGroup) Op() string          { return "DropGroup" }
func (AddGroupMembers) Op() string    { return "AddGroupMembers" }
func (RemoveGroupMembers) Op() string { return "RemoveGroupMembers" }
func (CreateRole) Op() string         { return "CreateRole" }
func (DropRole) Op() string           { return "DropRole" }
func (GrantPrivileges) Op() string    { return "GrantPrivileges" }
func (RevokePrivileges) Op() string   { return "RevokePrivileges" }
func (GrantRoles) Op() string         { return "GrantRoles" }
func (RevokeRoles) Op() string        { return "RevokeRoles" }
func (CreateTag) Op() string          { return "CreateTag" }
func (AlterTag) Op() string           { return "AlterTag" }
func (DropTag) Op() string            { return "DropTag" }
func (AssociateTagsV1) Op() string    { return "AssociateTags" }
func (AssociateTagsV2) Op() string    { return "AssociateTags" }
func (CreatePolicy) Op() string       { return "CreatePolicy" }
func (AlterPolicy) Op() string        { return "AlterPolicy" }
func (EnablePolicy) Op() string       { return "EnablePolicy" }
func (DisablePolicy) Op() string      { return "DisablePolicy" }
func (DropPolicy) Op() string         { return "DropPolicy" }
func (AttachPolicy) Op() string       { return "AttachPolicy" }
func (DetachPolicy) Op() string       { return "DetachPolicy" }

func (c CreateCatalog) Target() Object      { return Catalog(c.Name) }
func (c CreateSchema) Target() Object       { return Schema(c.Name) }
func (c CreateTable) Target() Object        { return Table(c.Name) }
func (c DropObject) Target() Object         { return c.Object }
func (c RenameObject) Target() Object       { return c.Object }
func (c AddColumn) Target() Object          { return Table(c.Table) }
func (c SetOwner) Target() Object           { return c.Object }
func (c CreateUser) Target() Object         { return User(c.Name) }
func (c DropUser) Target() Object           { return User(c.Name) }
func (c CreateGroup) Target() Object        { return Group(c.Name) }
func (c DropGroup) Target() Object          { return Group(c.Name) }
func (c AddGroupMembers) Target() Object    { return Group(c.Group) }
func (c RemoveGroupMembers) Target() Object { return Group(c.Group) }
func (c CreateRole) Target() Object         { return Role(c.Name) }
func (c DropRole) Target() Object           { return Role(c.Name) }
func (c GrantPrivileges) Target() Object    { return Role(c.Role) }
func (c RevokePrivileges) Target() Object   { return Role(c.Role) }
func (c GrantRoles) Target() Object         { return granteeObject(c.Grantee) }
func (c RevokeRoles) Target() Object        { return granteeObject(c.Grantee) }
func (c CreateTag) Target() Object          { return Tag(c.Name) }
func (c AlterTag) Target() Object           { return Tag(c.Name) }
func (c DropTag) Target() Object            { return Tag(c.Name) }
func (c AssociateTagsV1) Target() Object    { return c.Object }
func (c AssociateTagsV2) Target() Object    { return c.Object }
func (c CreatePolicy) Target() Object       { return Policy(c.Name) }
func (c AlterPolicy) Target() Object        { return Policy(c.Name) }
func (c EnablePolicy) Target() Object       { return Policy(c.Name) }
func (c DisablePolicy) Target() Object      { return Policy(c.Name) }
func (c DropPolicy) Target() Object         { return Policy(c.Name) }
func (c AttachPolicy) Target() Object       { return Tag(c.Tag) }
func (c DetachPolicy) Target() Object       { return Tag(c.Tag) }

func granteeObject(o Owner) Object {
	if o.Type == OwnerGroup {
		return Group(o.Name)
	}
	return User(o.Name)
}

func (CreateCatalog) commandType() CommandType      { return TypeCreateCatalog }
func (CreateSchema) commandType() CommandType       { return TypeCreateSchema }
func (CreateTable) commandType() CommandType        { return TypeCreateTable }
func (DropObject) commandType() CommandType         { return TypeDropObject }
func (RenameObject) commandType() CommandType       { return TypeRenameObject }
func (AddColumn) commandType() CommandType          { return TypeAddColumn }
func (SetOwner) commandType() CommandType           { return TypeSetOwner }
func (CreateUser) commandType() CommandType         { return TypeCreateUser }
func (DropUser) commandType() CommandType           { return TypeDropUser }
func (CreateGroup) commandType() CommandType        { return TypeCreateGroup }
func (DropGroup) commandType() CommandType          { return TypeDropGroup }
func (AddGroupMembers) commandType() CommandType    { return TypeAddGroupMembers }
func (RemoveGroupMembers) commandType() CommandType { return TypeRemoveGroupMembers }
func (CreateRole) commandType() CommandType         { return TypeCreateRole }
func (DropRole) commandType() CommandType           { return TypeDropRole }
func (GrantPrivileges) commandType() CommandType    { return TypeGrantPrivileges }
func (RevokePrivileges) commandType() CommandType   { return TypeRevokePrivileges }
func (GrantRoles) commandType() CommandType         { return TypeGrantRoles }
func (RevokeRoles) commandType() CommandType        { return TypeRevokeRoles }
func (CreateTag) commandType() CommandType          { return TypeCreateTag }
func (AlterTag) commandType() CommandType           { return TypeAlterTag }
func (DropTag) commandType() CommandType            { return TypeDropTag }
func (AssociateTagsV1) commandType() CommandType    { return TypeAssociateTagsV1 }
func (AssociateTagsV2) commandType() CommandType    { return TypeAssociateTagsV2 }
func (CreatePolicy) commandType() CommandType       { return TypeCreatePolicy }
func (AlterPolicy) commandType() CommandType        { return TypeAlterPolicy }
func (EnablePolicy) commandType() CommandType       { return TypeEnablePolicy }
func (DisablePolicy) commandType() CommandType      { return TypeDisablePolicy }
func (DropPolicy) commandType() CommandType         { return TypeDropPolicy }
func (AttachPolicy) commandType() CommandType       { return TypeAttachPolicy }
func (DetachPolicy) commandType() CommandType       { return TypeDetachPolicy }
