package main

import (
	"fmt"
	"strings"

	"lakegate/catalog"
)

// privilegeOf reads a privilege as grant and revoke take it: its name in
// any case ("select_table"), or its first word alone where exactly one
// privilege that may be granted on objType starts with it ("SELECT" on a
// table is SELECT_TABLE). The error for an unknown or ambiguous name lists
// the privileges objType takes.
func privilegeOf(name string, objType catalog.ObjectType) (catalog.Privilege, error) {
	if p, err := catalog.ParsePrivilege(name); err == nil {
		return p, nil
	}
	var match []catalog.Privilege
	for _, p := range allPrivileges() {
		if objType != 0 && !p.CanBindTo(objType) {
			continue
		}
		if first, _, ok := strings.Cut(p.String(), "_"); ok && strings.EqualFold(first, name) {
			match = append(match, p)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	what := "unknown privilege"
	if len(match) > 1 {
		what = "ambiguous privilege"
	}
	return 0, fmt.Errorf("%s %q; %s", what, name, privilegeList(objType))
}

// allPrivileges lists every privilege in declaration order.
func allPrivileges() []catalog.Privilege {
	var out []catalog.Privilege
	for p := catalog.Privilege(1); p.Valid(); p++ {
		out = append(out, p)
	}
	return out
}

// privilegeList says which privileges may be granted on objType (every
// privilege, by the object types it binds to, when objType is 0).
func privilegeList(objType catalog.ObjectType) string {
	var names []string
	for _, p := range allPrivileges() {
		if objType == 0 || p.CanBindTo(objType) {
			names = append(names, p.String())
		}
	}
	if objType == 0 {
		return "privileges: " + strings.Join(names, ", ")
	}
	return "privileges on a " + strings.ToLower(objType.String()) + ": " + strings.Join(names, ", ")
}

// privilegesHelp is the privileges section of grant's and revoke's help:
// each privilege and the object types it may be granted on.
func privilegesHelp() string {
	var b strings.Builder
	b.WriteString("\nPrivileges (any case; the first word alone where it names one privilege the object type takes, e.g. SELECT on a table):\n")
	for _, p := range allPrivileges() {
		var on []string
		for t := catalog.ObjectMetalake; t <= catalog.ObjectDomain; t++ {
			if p.CanBindTo(t) {
				on = append(on, strings.ToLower(t.String()))
			}
		}
		fmt.Fprintf(&b, "  %-15s on %s\n", p.String(), strings.Join(on, ", "))
	}
	return b.String()
}
