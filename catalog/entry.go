package catalog

import "strings"

// CheckEntry checks the rules a server applies to cmd where the request
// enters, before proposing it, and that Apply does not check: rules added
// after commands that break them may have been logged, and a replica
// replaying such a command must reach the state the others reached when
// they applied it. The rules:
//
//   - CreateRole: the actor needs CREATE_ROLE, and for the object of every
//     initial grant exactly what GrantPrivileges on that object needs
//     (MANAGE_GRANTS on the metalake, or ownership of the object, an
//     ancestor or the metalake; for a domain, of it, its current parent or
//     the metalake). An object the actor may not see answers ErrNotFound,
//     exactly as a missing one; without this, a role created with grants
//     would confer what its creator could not grant.
//   - CreatePolicy and AlterPolicy (updateContent): a system_access_control
//     policy lists only TagPrivileges.
//   - CommitAccessLog is refused (ErrForbidden): metasrv builds it for a
//     gateway, no client sends it.
//   - SyncIdentityUser is refused (ErrForbidden): metasrv builds it from a
//     verified identity-provider token, no client sends it.
//
// The error is an *Error as Apply returns it (the command's operation and
// target, the cause wrapping a sentinel). Checked against s, the state the
// request sees: a grant the actor could make then stays made, as it would
// had it been granted then; the role only appears later.
func CheckEntry(s *Snapshot, actor string, cmd Command) error {
	if cmd == nil {
		return &Error{Op: "CheckEntry", Err: errf(ErrInvalidCommand, "nil command")}
	}
	wrap := func(err error) error {
		if err == nil {
			return nil
		}
		return &Error{Op: cmd.Op(), Target: cmd.Target().String(), Err: err}
	}
	switch c := cmd.(type) {
	case CommitAccessLog:
		// metasrv builds it for a gateway; no client sends it.
		return wrap(errf(ErrForbidden, "the access log is committed by gateways only"))
	case SyncIdentityUser:
		return wrap(errf(ErrForbidden, identityOnly))
	case CreateRole:
		var buf [roleBufLen]uint64
		w := s.who(actor, buf[:])
		// CREATE_ROLE first, as Apply checks it first.
		if err := s.permit(&w, c); err != nil {
			return wrap(err)
		}
		seen := make(map[Object]bool, len(c.Grants))
		for _, g := range c.Grants {
			if seen[g.Object] {
				continue
			}
			seen[g.Object] = true
			if err := s.permitGrant(&w, g.Object); err != nil {
				return wrap(err)
			}
		}
	case CreatePolicy:
		return wrap(checkTagPrivileges(c.Type, c.Content))
	case AlterPolicy:
		for _, u := range c.Updates {
			if u.Type == "updateContent" && u.NewContent != nil {
				if err := checkTagPrivileges(u.PolicyType, *u.NewContent); err != nil {
					return wrap(err)
				}
			}
		}
	}
	return nil
}

// tagPrivileges is the set TagPrivileges lists.
const tagPrivileges = privSet(1<<PrivCreateSchema | 1<<PrivCreateTable | 1<<PrivSelectTable | 1<<PrivModifyTable)

// TagPrivileges returns the privileges a system_access_control policy may
// confer, in privilege order: those that take effect on the objects a tag
// is attached to (catalogs, schemas and tables) — CREATE_SCHEMA,
// CREATE_TABLE, SELECT_TABLE and MODIFY_TABLE. USE_CATALOG and USE_SCHEMA
// are left out on purpose (a tag widens access only inside what grants
// already open), and so is every privilege that takes effect on the
// metalake, tags, policies, roles or domains, where no tag reaches. The list
// is explicit: a privilege added later confers nothing through a tag until
// it is listed here. Policies logged with other privileges keep them, and
// decisions ignore them.
func TagPrivileges() []Privilege {
	var out []Privilege
	for p := Privilege(1); p <= numPrivileges; p++ {
		if tagPrivileges.has(p) {
			out = append(out, p)
		}
	}
	return out
}

// checkTagPrivileges refuses a system_access_control content listing a
// privilege outside TagPrivileges; other types and contents are Apply's.
func checkTagPrivileges(typ PolicyType, c PolicyContent) error {
	if typ != PolicySystemAccessControl {
		return nil
	}
	for _, p := range c.Privileges {
		if p.Valid() && !tagPrivileges.has(p) {
			var allowed []string
			for _, a := range TagPrivileges() {
				allowed = append(allowed, a.String())
			}
			return errf(ErrInvalidArgument, string(typ)+" policy: "+p.String()+
				" cannot be conferred by a policy (allowed: "+strings.Join(allowed, ", ")+")")
		}
	}
	return nil
}
