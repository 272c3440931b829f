package main

import (
	"fmt"
	"strings"

	"lakegate/metasrv/api"
)

// The owner commands read and change who owns an object through metasrv's
// Gravitino-shaped owner endpoints, GET and PUT
// /api/metalakes/{m}/owners/{type}/{fullName}. An owner holds every
// privilege on its object and what the object contains.

// ownerArgs is the usage of `owner get`; ownerSetArgs of `owner set`.
const (
	ownerArgs    = "OBJECT_TYPE FULLNAME"
	ownerSetArgs = "OBJECT_TYPE FULLNAME user|group NAME"
)

// adminOwnerGet prints the owner of an object: GET …/owners/{type}/{fullName}.
func adminOwnerGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 2, 2, ownerArgs)
	if err != nil {
		return err
	}
	var r struct{ Owner api.OwnerDTO }
	return a.lakeRequest("GET", []string{"owners", pos[0], pos[1]}, nil, nil, &r, func() {
		a.fields("object", strings.ToLower(pos[0])+" "+pos[1], "owner", r.Owner.Name, "type", r.Owner.Type)
	})
}

// adminOwnerSet makes a user or a group the owner of an object: PUT
// …/owners/{type}/{fullName} with {"name", "type": "USER"|"GROUP"}.
func adminOwnerSet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 4, 4, ownerSetArgs)
	if err != nil {
		return err
	}
	kind := strings.ToLower(pos[2])
	if kind != "user" && kind != "group" {
		return fmt.Errorf("%w: %s: the owner is a user or a group, not %q (usage: lakegate %s %s)", errUsage, a.name, pos[2], a.name, ownerSetArgs)
	}
	if pos[3] == "" {
		return fmt.Errorf("%w: %s: empty owner name", errUsage, a.name)
	}
	var r struct{ Set bool }
	return a.lakeRequest("PUT", []string{"owners", pos[0], pos[1]}, nil,
		map[string]string{"name": pos[3], "type": strings.ToUpper(kind)}, &r, func() {
			fmt.Fprintf(a.stdout, "%s %s is now owned by %s %s\n", strings.ToLower(pos[0]), printable(pos[1]), kind, printable(pos[3]))
		})
}
