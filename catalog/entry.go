package catalog

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
	}
	return nil
}
