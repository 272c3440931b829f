package catalog

import "slices"

// RolesOf returns the sorted, de-duplicated names of the roles principal
// holds, directly or through its groups: exactly the roles authorization
// decisions and policy applicability (applicable and exempt roles) use for
// it. An unknown principal holds no roles (nil), and groups that do not
// exist contribute none. The result is a new slice the caller may modify.
func (s *Snapshot) RolesOf(principal string) []string {
	var buf [roleBufLen]uint64
	w := s.who(principal, buf[:])
	if w.u == nil {
		return nil
	}
	var names []string
	names = append(names, w.u.roles...)
	for _, gn := range w.u.groups {
		if g, ok := s.groups.Get(gn); ok {
			names = append(names, g.roles...)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return slices.Compact(names)
}
