package metasrv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// Bounds of a preview page (query parameter limit).
const (
	previewDefaultLimit = 1000
	previewMaxLimit     = 10000
)

// previewCommands are the governance commands a preview takes, by the name
// of their catalog type: grants, role bindings, group members, owners,
// tags and their assignments, policies and their attachments, users and
// roles.
var previewCommands = map[string]catalog.CommandType{
	"GrantPrivileges":    catalog.TypeGrantPrivileges,
	"RevokePrivileges":   catalog.TypeRevokePrivileges,
	"GrantRoles":         catalog.TypeGrantRoles,
	"RevokeRoles":        catalog.TypeRevokeRoles,
	"AddGroupMembers":    catalog.TypeAddGroupMembers,
	"RemoveGroupMembers": catalog.TypeRemoveGroupMembers,
	"SetOwner":           catalog.TypeSetOwner,
	"CreateTag":          catalog.TypeCreateTag,
	"AlterTag":           catalog.TypeAlterTag,
	"DropTag":            catalog.TypeDropTag,
	"AssociateTagsV1":    catalog.TypeAssociateTagsV1,
	"AssociateTagsV2":    catalog.TypeAssociateTagsV2,
	"CreatePolicy":       catalog.TypeCreatePolicy,
	"AlterPolicy":        catalog.TypeAlterPolicy,
	"EnablePolicy":       catalog.TypeEnablePolicy,
	"DisablePolicy":      catalog.TypeDisablePolicy,
	"DropPolicy":         catalog.TypeDropPolicy,
	"AttachPolicy":       catalog.TypeAttachPolicy,
	"DetachPolicy":       catalog.TypeDetachPolicy,
	"CreateUser":         catalog.TypeCreateUser,
	"DropUser":           catalog.TypeDropUser,
	"CreateGroup":        catalog.TypeCreateGroup,
	"DropGroup":          catalog.TypeDropGroup,
	"CreateRole":         catalog.TypeCreateRole,
	"DropRole":           catalog.TypeDropRole,
}

// explainRoutes registers GET …/access/explain and POST …/access/preview.
func (s *Server) explainRoutes() {
	const base = "/api/metalakes/{tenant}/access"
	s.read(base+"/explain", "ExplainAccess", s.explainAccess)
	s.mux.HandleFunc("POST "+base+"/preview", func(w http.ResponseWriter, r *http.Request) {
		rq, err := s.begin(w, r, "PreviewAccess")
		if err == nil {
			if rq.body, err = s.readBody(w, r); err != nil {
				err = badRequest("%v", err)
			}
		}
		if err == nil {
			// A preview writes nothing: it is served like a read, from
			// the local snapshot (consistent=true and minGeneration apply).
			err = s.serveRead(rq, s.previewAccess)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// explainAccess answers why user holds privilege on object or not: for the
// tenant's admins (operators, its tenant admin) about any user; for a user
// about itself, where what it may not see is explained as missing.
func (s *Server) explainAccess(rq *request, l *Metalake) (any, error) {
	user := rq.query("user")
	if user == "" {
		return nil, badRequest("user is required")
	}
	priv, err := catalog.ParsePrivilege(rq.query("privilege"))
	if err != nil {
		return nil, badRequest("privilege: %v", err)
	}
	obj, err := parseObjectArg(rq.query("object"))
	if err != nil {
		return nil, err
	}
	var e catalog.Explanation
	switch {
	case rq.administers():
		e = l.Snapshot.Explain(user, priv, obj)
	case user == rq.actor():
		e = l.Snapshot.ViewExplain(user, priv, obj)
	default:
		// The same refusal whether user exists or not.
		return nil, fmt.Errorf("%w: explanations are for the tenant's admins, and for a user about its own access", ErrForbidden)
	}
	return api.ExplainResponse{Explanation: e, Gateway: s.gatewayGate(l, rq.metalake, user, obj, e.Allowed)}, nil
}

// parseObjectArg parses TYPE:NAME.
func parseObjectArg(arg string) (catalog.Object, error) {
	typ, name, ok := strings.Cut(arg, ":")
	if !ok || name == "" {
		return catalog.Object{}, badRequest("object must be TYPE:NAME, e.g. TABLE:catalog.schema.table")
	}
	t, err := catalog.ParseObjectType(typ)
	if err != nil || t == catalog.ObjectUser || t == catalog.ObjectGroup {
		return catalog.Object{}, badRequest("object type must be metalake, catalog, schema, table, column, tag, policy, role or domain")
	}
	return catalog.Object{Type: t, Name: name}, nil
}

// gatewayGate is the principal map's part of a gateway's decision for
// user on o, decided allows (metasrv's decision). It depends on the user
// and the object's name only, never on whether the object exists.
func (s *Server) gatewayGate(l *Metalake, metalake, user string, o catalog.Object, decided bool) api.GatewayDTO {
	var g api.GatewayDTO
	switch o.Type {
	case catalog.ObjectSchema, catalog.ObjectTable, catalog.ObjectColumn:
		if parts := strings.SplitN(o.Name, ".", 3); len(parts) >= 2 {
			g.Namespace = parts[1]
		}
	}
	var nss []authz.Namespace
	p, ok := s.byID.get(user)
	switch {
	case ok && p.Tenant().String() == metalake:
		g.InPrincipalMap, g.Role, g.MayQuery = true, p.Role().String(), p.MayQuery()
		nss = p.Namespaces()
	case !ok:
		// A user signing in with a JWT: its namespaces are its tenant's
		// providers' rules for the groups metasrv holds it in (synced from
		// its last token).
		u, known := l.Snapshot.User(user)
		tenant, err := authz.ParseTenantID(metalake)
		if !known || err != nil {
			break
		}
		for _, pv := range s.authn.Current().Map().Providers() {
			if pv.Serves(tenant) {
				g.Providers = append(g.Providers, pv.Name())
				nss = append(nss, pv.Grants(u.Groups)...)
			}
		}
		if len(g.Providers) > 0 {
			g.Role, g.MayQuery = authz.RoleUser.String(), true
		}
	}
	if !g.InPrincipalMap && len(g.Providers) == 0 {
		g.Note = "no principal of this tenant in the principal map has this id: no gateway session acts as this user"
		return g
	}
	for _, ns := range nss {
		if !slices.Contains(g.Namespaces, ns.String()) {
			g.Namespaces = append(g.Namespaces, ns.String())
		}
	}
	if g.Namespace != "" {
		granted := slices.Contains(g.Namespaces, g.Namespace)
		if g.InPrincipalMap {
			granted = p.MayReadNamespace(g.Namespace)
		}
		g.NamespaceGranted = &granted
	}
	g.Allowed = decided && g.MayQuery && (g.NamespaceGranted == nil || *g.NamespaceGranted)
	switch {
	case !g.MayQuery:
		g.Note = "a " + g.Role + " principal runs no SQL through a gateway"
	case g.NamespaceGranted != nil && !*g.NamespaceGranted:
		g.Note = "the gateway refuses the object before asking metasrv: schema " + g.Namespace + " is not among the principal's namespaces"
	default:
		g.Note = "the gateway admits the object's namespace and then asks metasrv for this decision"
	}
	return g
}

// previewAccess answers what governance commands would change, applying
// them to a copy of the snapshot that is discarded: for the tenant's
// admins. The commands are applied as the caller (or, with "as", as that
// user), checked exactly as the writes would be.
func (s *Server) previewAccess(rq *request, l *Metalake) (any, error) {
	if !rq.administers() {
		return nil, fmt.Errorf("%w: previews are for the tenant's admins", ErrForbidden)
	}
	page := catalog.Page{Limit: previewDefaultLimit}
	var err error
	if v := rq.query("offset"); v != "" {
		if page.Offset, err = strconv.Atoi(v); err != nil || page.Offset < 0 {
			return nil, badRequest("offset must be a non-negative integer")
		}
	}
	if v := rq.query("limit"); v != "" {
		if page.Limit, err = strconv.Atoi(v); err != nil || page.Limit < 1 || page.Limit > previewMaxLimit {
			return nil, badRequest("limit must be within [1, %d]", previewMaxLimit)
		}
	}
	var b api.PreviewRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if len(b.Commands) == 0 {
		return nil, badRequest("no commands")
	}
	actor := rq.actor()
	if b.As != "" {
		actor = b.As
	}
	cmds := make([]catalog.Command, len(b.Commands))
	for i, c := range b.Commands {
		t, ok := previewCommands[c.Type]
		if !ok {
			return nil, badRequest("command %d: %q is not a governance command a preview takes", i, c.Type)
		}
		body := bytes.TrimSpace(c.Body)
		if len(body) == 0 || string(body) == "null" {
			return nil, badRequest("command %d: no body", i)
		}
		env, err := json.Marshal(map[string]any{"v": 1, "type": t, "body": json.RawMessage(body)})
		if err != nil {
			return nil, badRequest("command %d: %v", i, err)
		}
		if cmds[i], err = catalog.DecodeCommand(env); err != nil {
			return nil, badRequest("command %d: %v", i, err)
		}
		// What a write checks where it enters, before proposing.
		if err := catalog.CheckEntry(l.Snapshot, actor, cmds[i]); err != nil {
			return nil, err
		}
	}
	if err := checkDisplay(&plan{cmds: cmds}); err != nil {
		return nil, err
	}
	m := catalog.Meta{Actor: actor, Time: s.now(), Index: l.Snapshot.Index() + 1}
	d, err := catalog.Preview(l.Snapshot, m, page, cmds...)
	if err != nil {
		return nil, err
	}
	out := api.PreviewResponse{Preview: d, Offset: page.Offset, Limit: page.Limit}
	if end := page.Offset + page.Limit; end < max(d.PrivilegesTotal, d.ReadsTotal) {
		out.Next = &end
	}
	return out, nil
}
