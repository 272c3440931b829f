package metasrv

import (
	"fmt"
	"strconv"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

func toRole(r catalog.RoleInfo) api.RoleDTO {
	d := api.RoleDTO{Name: r.Name, Properties: r.Properties, Audit: r.Audit, SecurableObjects: []api.SecurableDTO{}}
	for _, g := range r.Grants {
		n := len(d.SecurableObjects)
		p := api.PrivilegeDTO{Name: lower(g.Privilege), Condition: lower(g.Condition)}
		if n > 0 && d.SecurableObjects[n-1].FullName == g.Object.Name && d.SecurableObjects[n-1].Type == lower(g.Object.Type) {
			d.SecurableObjects[n-1].Privileges = append(d.SecurableObjects[n-1].Privileges, p)
			continue
		}
		d.SecurableObjects = append(d.SecurableObjects, api.SecurableDTO{FullName: g.Object.Name, Type: lower(g.Object.Type), Privileges: []api.PrivilegeDTO{p}})
	}
	return d
}

func toUser(u catalog.UserInfo) api.UserDTO {
	return api.UserDTO{Name: u.Name, Roles: nonNil(u.Roles), Audit: u.Audit}
}

func toGroup(g catalog.GroupInfo) api.GroupDTO {
	return api.GroupDTO{Name: g.Name, Roles: nonNil(g.Roles), Users: g.Members, Audit: g.Audit}
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// privConds reads the privileges of a request, names and conditions in
// any case.
func privConds(ps []api.PrivilegeDTO) ([]catalog.PrivilegeCondition, error) {
	if len(ps) == 0 {
		return nil, badRequest("no privileges")
	}
	out := make([]catalog.PrivilegeCondition, len(ps))
	for i, p := range ps {
		if p.Name == "" || p.Condition == "" {
			return nil, badRequest("each privilege needs a name and a condition")
		}
		if err := out[i].Name.UnmarshalText([]byte(p.Name)); err != nil {
			return nil, err
		}
		if err := out[i].Condition.UnmarshalText([]byte(p.Condition)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mayManage reports whether the caller holds priv on the metalake.
func mayManage(rq *request, s *catalog.Snapshot, privs ...catalog.Privilege) bool {
	ml := catalog.Object{Type: catalog.ObjectMetalake, Name: rq.metalake}
	for _, p := range privs {
		if s.Authorize(rq.actor(), p, ml).Allowed {
			return true
		}
	}
	return false
}

func userVisible(rq *request, s *catalog.Snapshot, name string) bool {
	return name == rq.actor() || mayManage(rq, s, catalog.PrivManageUsers, catalog.PrivManageGrants)
}

func groupVisible(rq *request, s *catalog.Snapshot, name string) bool {
	if mayManage(rq, s, catalog.PrivManageGroups, catalog.PrivManageGrants) {
		return true
	}
	u, ok := s.User(rq.actor())
	if !ok {
		return false
	}
	for _, g := range u.Groups {
		if g == name {
			return true
		}
	}
	return false
}

// dropPlan is the plan of a DELETE that proposes cmd: {"dropped":false} at
// once when the caller may not see the target, as when it does not exist.
func dropPlan(visible bool, cmd catalog.Command) *plan {
	dropped := api.DropResponse{}
	if !visible {
		return &plan{now: dropped}
	}
	return &plan{cmds: []catalog.Command{cmd}, onNotFound: dropped,
		render: func(*Result) (any, error) { return api.DropResponse{Dropped: true}, nil }}
}

func (s *Server) accessRoutes() {
	const base = "/api/metalakes/{tenant}"

	// ---- roles ----
	s.write("POST", base+"/roles", "CreateRole", s.createRole)
	s.read(base+"/roles", "ListRoles", s.listRoles)
	s.read(base+"/roles/{role}", "GetRole", s.getRole)
	s.write("DELETE", base+"/roles/{role}", "DropRole", s.dropRole)
	for _, action := range []grantAction{"grant", "revoke"} {
		s.write("PUT", base+"/permissions/roles/{role}/{type}/{fullName}/"+string(action), "Privileges", s.preEventsOnDomain("Privileges", action.privileges))
		for _, kind := range []principalKind{"users", "groups"} {
			s.write("PUT", base+"/permissions/"+string(kind)+"/{name}/"+string(action), "Roles", roleGrant{action, kind}.roles)
		}
	}

	// ---- users and groups ----
	for _, kind := range []principalKind{"users", "groups"} {
		s.write("POST", base+"/"+string(kind), "Create"+kind.single(), kind.create)
		s.read(base+"/"+string(kind), "List"+string(kind), kind.list)
		s.read(base+"/"+string(kind)+"/{name}", "Get"+kind.single(), kind.getOne)
		s.write("DELETE", base+"/"+string(kind)+"/{name}", "Drop"+kind.single(), kind.drop)
	}

	// ---- owners ----
	s.read(base+"/owners/{type}/{fullName}", "GetOwner", s.getOwner)
	s.write("PUT", base+"/owners/{type}/{fullName}", "SetOwner", s.preEventsOnDomain("SetOwner", s.setOwner))

	// ---- events ----
	s.read(base+"/events", "ListEvents", s.listEvents)
}

func renderRole(name string) func(*Result) (any, error) {
	return func(res *Result) (any, error) {
		r, ok := res.Lake.Snapshot.Role(name)
		if !ok {
			return nil, fmt.Errorf("metasrv: role %q missing after apply", name)
		}
		return api.RoleResponse{Role: toRole(r)}, nil
	}
}

// createRole serves POST …/roles.
func (s *Server) createRole(rq *request, l *Metalake) (*plan, error) {
	var b api.CreateRoleRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if err := catalog.CheckEntityName(b.Name); err != nil {
		return nil, err
	}
	c := catalog.CreateRole{Name: b.Name, Properties: b.Properties}
	for _, so := range b.SecurableObjects {
		t, err := catalog.ParseObjectType(so.Type)
		if err != nil {
			return nil, badRequest("unknown securable object type")
		}
		pcs, err := privConds(so.Privileges)
		if err != nil {
			return nil, err
		}
		for _, pc := range pcs {
			c.Grants = append(c.Grants, catalog.Grant{Object: catalog.Object{Type: t, Name: so.FullName}, Privilege: pc.Name, Condition: pc.Condition})
		}
	}
	// Each initial grant needs what granting it directly needs. Checked
	// here, where requests enter, not by the FSM: roles logged before
	// the rule replay as they were applied.
	if err := catalog.CheckEntry(l.Snapshot, rq.actor(), c); err != nil {
		return nil, err
	}
	return &plan{cmds: []catalog.Command{c}, render: renderRole(b.Name)}, nil
}

// listRoles serves GET …/roles.
func (s *Server) listRoles(rq *request, l *Metalake) (any, error) {
	names := []string{}
	for _, n := range l.Snapshot.RoleNames() {
		if l.Snapshot.Visible(rq.actor(), catalog.Role(n)) {
			names = append(names, n)
		}
	}
	return api.NameListResponse{Names: names}, nil
}

// getRole serves GET …/roles/{role}.
func (s *Server) getRole(rq *request, l *Metalake) (any, error) {
	name := rq.param("role")
	r, ok := l.Snapshot.Role(name)
	if !ok || !l.Snapshot.Visible(rq.actor(), catalog.Role(name)) {
		return nil, fmt.Errorf("%w: role %q", ErrNotFound, name)
	}
	return api.RoleResponse{Role: toRole(r)}, nil
}

// dropRole serves DELETE …/roles/{role}.
func (s *Server) dropRole(rq *request, l *Metalake) (*plan, error) {
	name := rq.param("role")
	return dropPlan(l.Snapshot.Visible(rq.actor(), catalog.Role(name)), catalog.DropRole{Name: name}), nil
}

// getOwner serves GET …/owners/{type}/{fullName}.
func (s *Server) getOwner(rq *request, l *Metalake) (any, error) {
	o, err := parseObject(rq)
	if err != nil {
		return nil, err
	}
	ow, ok := l.Snapshot.Owner(o)
	if !ok || !l.Snapshot.Visible(rq.actor(), o) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, o)
	}
	return api.OwnerResponse{Owner: api.OwnerDTO{Name: ow.Name, Type: lower(ow.Type)}}, nil
}

// listEvents serves GET …/events.
func (s *Server) listEvents(rq *request, l *Metalake) (any, error) {
	if !rq.administers() && l.Snapshot.MetalakeOwner() != (catalog.Owner{Type: catalog.OwnerUser, Name: rq.actor()}) {
		return nil, fmt.Errorf("%w: events are for the metalake owner, its tenant admins and operators", ErrForbidden)
	}
	var since, before uint64
	limit := 100
	var err error
	if v := rq.query("since"); v != "" {
		if since, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, badRequest("since must be a non-negative integer")
		}
	}
	if v := rq.query("before"); v != "" {
		if before, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, badRequest("before must be a non-negative integer")
		}
	}
	if v := rq.query("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 1000 {
			return nil, badRequest("limit must be within [1, 1000]")
		}
	}
	evs := s.audit.Events(rq.metalake, since, before, limit)
	if evs == nil {
		evs = []Event{}
	}
	return api.EventListResponse[Event]{Events: evs}, nil
}

// setOwner serves PUT …/owners/{type}/{fullName}.
func (s *Server) setOwner(rq *request, l *Metalake) (*plan, error) {
	o, err := parseObject(rq)
	if err != nil {
		return nil, err
	}
	var b api.SetOwnerRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if b.Type == "" || b.Name == "" {
		return nil, badRequest("owner needs a name and a type")
	}
	var typ catalog.OwnerType
	if err := typ.UnmarshalText([]byte(b.Type)); err != nil {
		return nil, err
	}
	return &plan{cmds: []catalog.Command{catalog.SetOwner{Object: o, Owner: catalog.Owner{Type: typ, Name: b.Name}}},
		render: func(*Result) (any, error) { return api.SetResponse{Set: true}, nil }}, nil
}

// grantAction is "grant" or "revoke": the last segment of a permissions
// path.
type grantAction string

// privileges serves PUT …/permissions/roles/{role}/{type}/{fullName}/{action}.
func (action grantAction) privileges(rq *request, l *Metalake) (*plan, error) {
	o, err := parseObject(rq)
	if err != nil {
		return nil, err
	}
	var b api.PrivilegesRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	pcs, err := privConds(b.Privileges)
	if err != nil {
		return nil, err
	}
	role := rq.param("role")
	var c catalog.Command = catalog.GrantPrivileges{Role: role, Object: o, Privileges: pcs}
	if action == "revoke" {
		c = catalog.RevokePrivileges{Role: role, Object: o, Privileges: pcs}
	}
	return &plan{cmds: []catalog.Command{c}, render: renderRole(role)}, nil
}

// roleGrant grants or revokes roles to one kind of principal.
type roleGrant struct {
	action grantAction
	kind   principalKind
}

// roles serves PUT …/permissions/{users|groups}/{name}/{action}.
func (rg roleGrant) roles(rq *request, l *Metalake) (*plan, error) {
	var b api.RoleNamesRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if len(b.RoleNames) == 0 {
		return nil, badRequest("no roleNames")
	}
	g := catalog.Owner{Type: catalog.OwnerUser, Name: rq.param("name")}
	if rg.kind.isGroup() {
		g.Type = catalog.OwnerGroup
	}
	var c catalog.Command = catalog.GrantRoles{Grantee: g, Roles: b.RoleNames}
	if rg.action == "revoke" {
		c = catalog.RevokeRoles{Grantee: g, Roles: b.RoleNames}
	}
	return &plan{cmds: []catalog.Command{c}, render: func(res *Result) (any, error) {
		v, _ := rg.kind.get(res.Lake.Snapshot, g.Name)
		return v, nil
	}}, nil
}

// principalKind is "users" or "groups": a collection of principals of the
// metalake; its methods are the collection's handlers.
type principalKind string

func (k principalKind) isGroup() bool { return k == "groups" }

// single is the kind's name for one: "user" or "group".
func (k principalKind) single() string { return string(k[:len(k)-1]) }

func (k principalKind) visible(rq *request, s *catalog.Snapshot, n string) bool {
	if k.isGroup() {
		return groupVisible(rq, s, n)
	}
	return userVisible(rq, s, n)
}

// get answers principal n of the kind: an api.UserResponse or
// api.GroupResponse.
func (k principalKind) get(s *catalog.Snapshot, n string) (any, bool) {
	if k.isGroup() {
		g, ok := s.Group(n)
		return api.GroupResponse{Group: toGroup(g)}, ok
	}
	u, ok := s.User(n)
	return api.UserResponse{User: toUser(u)}, ok
}

// create serves POST …/{users|groups}.
func (k principalKind) create(rq *request, l *Metalake) (*plan, error) {
	var b api.CreatePrincipalRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if err := catalog.CheckEntityName(b.Name); err != nil {
		return nil, err
	}
	var c catalog.Command = catalog.CreateUser{Name: b.Name}
	if k.isGroup() {
		c = catalog.CreateGroup{Name: b.Name}
	}
	return &plan{cmds: []catalog.Command{c}, render: func(res *Result) (any, error) {
		v, _ := k.get(res.Lake.Snapshot, b.Name)
		return v, nil
	}}, nil
}

// list serves GET …/{users|groups}.
func (k principalKind) list(rq *request, l *Metalake) (any, error) {
	all := l.Snapshot.UserNames()
	if k.isGroup() {
		all = l.Snapshot.GroupNames()
	}
	visible := []string{}
	for _, n := range all {
		if k.visible(rq, l.Snapshot, n) {
			visible = append(visible, n)
		}
	}
	name := func(n string) string { return n }
	if k.isGroup() {
		return namesOr(rq, visible, name, func(n string) (api.GroupDTO, bool) { g, _ := l.Snapshot.Group(n); return toGroup(g), true },
			func(gs []api.GroupDTO) any { return api.GroupListResponse{Groups: gs} }), nil
	}
	return namesOr(rq, visible, name, func(n string) (api.UserDTO, bool) { u, _ := l.Snapshot.User(n); return toUser(u), true },
		func(us []api.UserDTO) any { return api.UserListResponse{Users: us} }), nil
}

// getOne serves GET …/{users|groups}/{name}.
func (k principalKind) getOne(rq *request, l *Metalake) (any, error) {
	n := rq.param("name")
	v, ok := k.get(l.Snapshot, n)
	if !ok || !k.visible(rq, l.Snapshot, n) {
		return nil, fmt.Errorf("%w: %s %q", ErrNotFound, k.single(), n)
	}
	return v, nil
}

// drop serves DELETE …/{users|groups}/{name}.
func (k principalKind) drop(rq *request, l *Metalake) (*plan, error) {
	n := rq.param("name")
	var c catalog.Command = catalog.DropUser{Name: n}
	if k.isGroup() {
		c = catalog.DropGroup{Name: n}
	}
	return dropPlan(k.visible(rq, l.Snapshot, n), c), nil
}
