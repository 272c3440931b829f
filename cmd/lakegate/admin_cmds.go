package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"lakegate/metasrv/raftnode"
)

// Answer shapes, decoded only as far as the tables need.
type (
	auditDTO struct {
		Creator    string `json:"creator"`
		CreateTime string `json:"createTime"`
	}
	metalakeDTO struct {
		Name       string            `json:"name"`
		Comment    string            `json:"comment"`
		Owner      string            `json:"owner"`
		Properties map[string]string `json:"properties"`
		Audit      auditDTO          `json:"audit"`
	}
	catalogDTO struct {
		Name       string            `json:"name"`
		Type       string            `json:"type"`
		Provider   string            `json:"provider"`
		Comment    string            `json:"comment"`
		Properties map[string]string `json:"properties"`
		Audit      auditDTO          `json:"audit"`
	}
	columnDTO struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Nullable *bool  `json:"nullable"`
		Comment  string `json:"comment"`
	}
	tableDTO struct {
		Name       string            `json:"name"`
		Comment    string            `json:"comment"`
		Columns    []columnDTO       `json:"columns"`
		Properties map[string]string `json:"properties"`
		Audit      auditDTO          `json:"audit"`
	}
	tagDTO struct {
		Name             string            `json:"name"`
		Comment          string            `json:"comment"`
		AllowedValues    *[]string         `json:"allowedValues"`
		Properties       map[string]string `json:"properties"`
		Inherited        *bool             `json:"inherited"`
		AssignmentValues []string          `json:"assignmentValues"`
		Audit            auditDTO          `json:"audit"`
	}
	policyDTO struct {
		Name       string          `json:"name"`
		Comment    string          `json:"comment"`
		PolicyType string          `json:"policyType"`
		Enabled    bool            `json:"enabled"`
		Content    json.RawMessage `json:"content"`
		Audit      auditDTO        `json:"audit"`
	}
	privilegeDTO struct {
		Name      string `json:"name"`
		Condition string `json:"condition"`
	}
	roleDTO struct {
		Name             string `json:"name"`
		SecurableObjects []struct {
			FullName   string         `json:"fullName"`
			Type       string         `json:"type"`
			Privileges []privilegeDTO `json:"privileges"`
		} `json:"securableObjects"`
	}
	userDTO struct {
		Name  string   `json:"name"`
		Roles []string `json:"roles"`
	}
	objectDTO struct {
		FullName string `json:"fullName"`
		Type     string `json:"type"`
	}
	eventDTO struct {
		Index     uint64    `json:"index"`
		Time      string    `json:"time"`
		Actor     string    `json:"actor"`
		Delegator string    `json:"delegator"`
		Operation string    `json:"operation"`
		Target    objectDTO `json:"target"`
		Outcome   string    `json:"outcome"`
		Detail    string    `json:"detail"`
	}
)

// --- cluster ---

func (a *admin) printStatus(st raftnode.Status) {
	a.fields("node", st.ID, "state", st.State, "term", strconv.FormatUint(st.Term, 10), "leader", orDash(st.Leader.ID),
		"applied index", strconv.FormatUint(st.AppliedIndex, 10), "commit index", strconv.FormatUint(st.CommitIndex, 10))
	fmt.Fprintln(a.stdout)
	var rows [][]string
	for _, s := range st.Servers {
		lead := ""
		if s.ID == st.Leader.ID {
			lead = "*"
		}
		rows = append(rows, []string{s.ID, s.RaftAddr, orDash(s.HTTPAddr), strings.ToLower(s.Suffrage), lead})
	}
	a.table([]string{"ID", "RAFT ADDRESS", "HTTP ADDRESS", "SUFFRAGE", "LEADER"}, rows)
}

func adminClusterStatus(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	raw, err := a.call("GET", "/cluster/status", nil, nil, "")
	if err != nil {
		return err
	}
	var st raftnode.Status
	return a.show(raw, &st, func() { a.printStatus(st) })
}

func adminClusterRemove(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "ID")
	if err != nil {
		return err
	}
	raw, err := a.call("POST", "/cluster/remove", nil, map[string]string{"id": pos[0]}, "")
	if err != nil {
		return err
	}
	var st raftnode.Status
	return a.show(raw, &st, func() {
		fmt.Fprintf(a.stdout, "removed node %s\n\n", pos[0])
		a.printStatus(st)
	})
}

// --- metalakes ---

func (a *admin) printMetalake(m metalakeDTO) {
	a.fields("name", m.Name, "comment", m.Comment, "owner", m.Owner, "properties", props(m.Properties),
		"creator", m.Audit.Creator, "created", ts(m.Audit.CreateTime))
}

func adminMetalakeCreate(a *admin, args []string) error {
	fs := a.flags()
	comment := fs.String("comment", "", "comment")
	owner := fs.String("owner", "", "owner (default: the caller)")
	properties := propertyFlag{}
	fs.Var(properties, "property", "KEY=VALUE (repeatable)")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--comment C] [--owner O] [--property K=V]...")
	if err != nil {
		return err
	}
	body := map[string]any{"name": pos[0], "comment": *comment, "owner": *owner}
	if len(properties) > 0 {
		body["properties"] = map[string]string(properties)
	}
	raw, err := a.call("POST", "/api/metalakes", nil, body, "")
	if err != nil {
		return err
	}
	var r struct{ Metalake metalakeDTO }
	return a.show(raw, &r, func() { a.printMetalake(r.Metalake) })
}

func adminMetalakeList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	raw, err := a.call("GET", "/api/metalakes", nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Metalakes []metalakeDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, m := range r.Metalakes {
			rows = append(rows, []string{m.Name, m.Owner, ts(m.Audit.CreateTime), m.Comment})
		}
		a.table([]string{"NAME", "OWNER", "CREATED", "COMMENT"}, rows)
	})
}

func adminMetalakeGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	raw, err := a.call("GET", apiPath("api", "metalakes", pos[0]), nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Metalake metalakeDTO }
	return a.show(raw, &r, func() { a.printMetalake(r.Metalake) })
}

func adminMetalakeDrop(a *admin, args []string) error {
	fs := a.flags()
	force := fs.Bool("force", false, "drop even if it still has catalogs")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--force]")
	if err != nil {
		return err
	}
	q := url.Values{}
	if *force {
		q.Set("force", "true")
	}
	raw, err := a.call("DELETE", apiPath("api", "metalakes", pos[0]), q, nil, "")
	if err != nil {
		return err
	}
	return a.dropped(raw, "metalake "+pos[0])
}

// --- catalogs, schemas, tables ---

func adminCatalogCreate(a *admin, args []string) error {
	fs := a.flags()
	comment := fs.String("comment", "", "comment")
	properties := propertyFlag{}
	fs.Var(properties, "property", "KEY=VALUE (repeatable)")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--comment C] [--property K=V]...")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs")
	if err != nil {
		return err
	}
	body := map[string]any{"name": pos[0], "comment": *comment}
	if len(properties) > 0 {
		body["properties"] = map[string]string(properties)
	}
	raw, err := a.call("POST", p, nil, body, "")
	if err != nil {
		return err
	}
	var r struct{ Catalog catalogDTO }
	return a.show(raw, &r, func() { a.printCatalog(r.Catalog) })
}

func (a *admin) printCatalog(c catalogDTO) {
	a.fields("name", c.Name, "type", c.Type, "provider", c.Provider, "comment", c.Comment,
		"properties", props(c.Properties), "creator", c.Audit.Creator, "created", ts(c.Audit.CreateTime))
}

func adminCatalogList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	p, err := a.lake("catalogs")
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, url.Values{"details": {"true"}}, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Catalogs []catalogDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, c := range r.Catalogs {
			rows = append(rows, []string{c.Name, c.Type, c.Provider, c.Comment})
		}
		a.table([]string{"NAME", "TYPE", "PROVIDER", "COMMENT"}, rows)
	})
}

func adminCatalogGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", pos[0])
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Catalog catalogDTO }
	return a.show(raw, &r, func() { a.printCatalog(r.Catalog) })
}

func adminCatalogDrop(a *admin, args []string) error {
	fs := a.flags()
	cascade := fs.Bool("cascade", false, "drop its schemas and tables too")
	force := fs.Bool("force", false, "drop even if not empty")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--cascade] [--force]")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", pos[0])
	if err != nil {
		return err
	}
	q := url.Values{}
	if *cascade {
		q.Set("cascade", "true")
	}
	if *force {
		q.Set("force", "true")
	}
	raw, err := a.call("DELETE", p, q, nil, "")
	if err != nil {
		return err
	}
	return a.dropped(raw, "catalog "+pos[0])
}

func adminSchemaCreate(a *admin, args []string) error {
	fs := a.flags()
	comment := fs.String("comment", "", "comment")
	pos, err := a.parse(fs, args, 1, 1, "CATALOG.SCHEMA [--comment C]")
	if err != nil {
		return err
	}
	n, err := a.splitName(pos[0], 2, "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", n[0], "schemas")
	if err != nil {
		return err
	}
	raw, err := a.call("POST", p, nil, map[string]any{"name": n[1], "comment": *comment}, "")
	if err != nil {
		return err
	}
	var r struct{ Schema catalogDTO }
	return a.show(raw, &r, func() { a.printCatalog(r.Schema) })
}

func adminSchemaList(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "CATALOG")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", pos[0], "schemas")
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, url.Values{"details": {"true"}}, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Schemas []catalogDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, s := range r.Schemas {
			rows = append(rows, []string{s.Name, s.Audit.Creator, s.Comment})
		}
		a.table([]string{"NAME", "CREATOR", "COMMENT"}, rows)
	})
}

func adminSchemaGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	n, err := a.splitName(pos[0], 2, "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", n[0], "schemas", n[1])
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Schema catalogDTO }
	return a.show(raw, &r, func() { a.printCatalog(r.Schema) })
}

func adminSchemaDrop(a *admin, args []string) error {
	fs := a.flags()
	cascade := fs.Bool("cascade", false, "drop its tables too")
	pos, err := a.parse(fs, args, 1, 1, "CATALOG.SCHEMA [--cascade]")
	if err != nil {
		return err
	}
	n, err := a.splitName(pos[0], 2, "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", n[0], "schemas", n[1])
	if err != nil {
		return err
	}
	q := url.Values{}
	if *cascade {
		q.Set("cascade", "true")
	}
	raw, err := a.call("DELETE", p, q, nil, "")
	if err != nil {
		return err
	}
	return a.dropped(raw, "schema "+pos[0])
}

func adminTableList(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	n, err := a.splitName(pos[0], 2, "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", n[0], "schemas", n[1], "tables")
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, url.Values{"details": {"true"}}, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Tables []tableDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, t := range r.Tables {
			rows = append(rows, []string{t.Name, strconv.Itoa(len(t.Columns)), t.Audit.Creator, t.Comment})
		}
		a.table([]string{"NAME", "COLUMNS", "CREATOR", "COMMENT"}, rows)
	})
}

func adminTableGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "CATALOG.SCHEMA.TABLE")
	if err != nil {
		return err
	}
	n, err := a.splitName(pos[0], 3, "CATALOG.SCHEMA.TABLE")
	if err != nil {
		return err
	}
	p, err := a.lake("catalogs", n[0], "schemas", n[1], "tables", n[2])
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Table tableDTO }
	return a.show(raw, &r, func() {
		t := r.Table
		a.fields("name", t.Name, "comment", t.Comment, "properties", props(t.Properties),
			"creator", t.Audit.Creator, "created", ts(t.Audit.CreateTime))
		fmt.Fprintln(a.stdout)
		var rows [][]string
		for _, c := range t.Columns {
			null := "yes"
			if c.Nullable != nil && !*c.Nullable {
				null = "no"
			}
			rows = append(rows, []string{c.Name, c.Type, null, c.Comment})
		}
		a.table([]string{"COLUMN", "TYPE", "NULLABLE", "COMMENT"}, rows)
	})
}

// --- tags ---

func allowed(v *[]string) string {
	switch {
	case v == nil:
		return "(any)"
	case len(*v) == 0:
		return "(none)"
	}
	return strings.Join(*v, ",")
}

func adminTagCreate(a *admin, args []string) error {
	fs := a.flags()
	comment := fs.String("comment", "", "comment")
	values := fs.String("allowed-values", "", "comma-separated allowed values (\"\" allows no value; absent allows any)")
	properties := propertyFlag{}
	fs.Var(properties, "property", "KEY=VALUE (repeatable)")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--comment C] [--allowed-values a,b]")
	if err != nil {
		return err
	}
	p, err := a.lake("tags")
	if err != nil {
		return err
	}
	body := map[string]any{"name": pos[0], "comment": *comment}
	if isSet(fs, "allowed-values") {
		body["allowedValues"] = splitList(*values)
	}
	if len(properties) > 0 {
		body["properties"] = map[string]string(properties)
	}
	raw, err := a.call("POST", p, nil, body, "")
	if err != nil {
		return err
	}
	var r struct{ Tag tagDTO }
	return a.show(raw, &r, func() { a.printTag(r.Tag) })
}

func (a *admin) printTag(t tagDTO) {
	a.fields("name", t.Name, "comment", t.Comment, "allowed values", allowed(t.AllowedValues),
		"properties", props(t.Properties), "creator", t.Audit.Creator, "created", ts(t.Audit.CreateTime))
}

func adminTagList(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 0, 2, "[OBJECT_TYPE FULLNAME]")
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		return fmt.Errorf("%w: usage: lakegate %s [OBJECT_TYPE FULLNAME]", errUsage, a.name)
	}
	segs := []string{"tags"}
	if len(pos) == 2 {
		segs = []string{"objects", pos[0], pos[1], "tags"}
	}
	p, err := a.lake(segs...)
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, url.Values{"details": {"true"}}, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Tags []tagDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		if len(pos) == 2 { // an object's effective tags
			for _, t := range r.Tags {
				inh := "no"
				if t.Inherited != nil && *t.Inherited {
					inh = "yes"
				}
				rows = append(rows, []string{t.Name, orDash(strings.Join(t.AssignmentValues, ",")), inh, t.Comment})
			}
			a.table([]string{"NAME", "VALUES", "INHERITED", "COMMENT"}, rows)
			return
		}
		for _, t := range r.Tags {
			rows = append(rows, []string{t.Name, allowed(t.AllowedValues), t.Comment})
		}
		a.table([]string{"NAME", "ALLOWED VALUES", "COMMENT"}, rows)
	})
}

func adminTagGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("tags", pos[0])
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Tag tagDTO }
	return a.show(raw, &r, func() { a.printTag(r.Tag) })
}

func adminTagDrop(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("tags", pos[0])
	if err != nil {
		return err
	}
	raw, err := a.call("DELETE", p, nil, nil, "")
	if err != nil {
		return err
	}
	return a.dropped(raw, "tag "+pos[0])
}

func adminTagObjects(a *admin, args []string) error {
	fs := a.flags()
	value := fs.String("value", "", "only objects carrying this value")
	pos, err := a.parse(fs, args, 1, 1, "TAG [--value V]")
	if err != nil {
		return err
	}
	p, err := a.lake("tags", pos[0], "objects")
	if err != nil {
		return err
	}
	q := url.Values{}
	if isSet(fs, "value") {
		q.Set("value", *value)
	}
	raw, err := a.call("GET", p, q, nil, "")
	if err != nil {
		return err
	}
	var r struct{ MetadataObjects []objectDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, o := range r.MetadataObjects {
			rows = append(rows, []string{o.Type, o.FullName})
		}
		a.table([]string{"TYPE", "FULLNAME"}, rows)
	})
}

// adminTagAssoc attaches or detaches tags with the v2 (name/value pair)
// body.
func adminTagAssoc(a *admin, verb string, args []string) error {
	pos, err := a.parse(a.flags(), args, 3, -1, "OBJECT_TYPE FULLNAME TAG[=VALUE]...")
	if err != nil {
		return err
	}
	type pair struct {
		Name  string  `json:"name"`
		Value *string `json:"value,omitempty"`
	}
	pairs := []pair{}
	for _, s := range pos[2:] {
		name, value, hasValue := strings.Cut(s, "=")
		if name == "" {
			return fmt.Errorf("%w: %s: empty tag name in %q", errUsage, a.name, s)
		}
		pr := pair{Name: name}
		if hasValue {
			pr.Value = &value
		}
		pairs = append(pairs, pr)
	}
	p, err := a.lake("objects", pos[0], pos[1], "tags")
	if err != nil {
		return err
	}
	body := map[string]any{"tagsToAdd": pairs}
	if verb == "detach" {
		body = map[string]any{"tagsToRemove": pairs}
	}
	raw, err := a.call("POST", p, nil, body, "application/vnd.gravitino.v2+json")
	if err != nil {
		return err
	}
	var r struct{ Names []string }
	return a.show(raw, &r, func() {
		fmt.Fprintf(a.stdout, "%s %s now carries: %s\n", strings.ToLower(pos[0]), pos[1], orDash(strings.Join(r.Names, ", ")))
	})
}

// --- policies ---

func adminPolicyList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	p, err := a.lake("policies")
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, url.Values{"details": {"true"}}, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Policies []policyDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, p := range r.Policies {
			rows = append(rows, []string{p.Name, p.PolicyType, strconv.FormatBool(p.Enabled), p.Comment})
		}
		a.table([]string{"NAME", "TYPE", "ENABLED", "COMMENT"}, rows)
	})
}

func adminPolicyGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("policies", pos[0])
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Policy policyDTO }
	return a.show(raw, &r, func() {
		p := r.Policy
		a.fields("name", p.Name, "type", p.PolicyType, "enabled", strconv.FormatBool(p.Enabled), "comment", p.Comment,
			"content", string(p.Content), "creator", p.Audit.Creator, "created", ts(p.Audit.CreateTime))
	})
}

// --- roles, grants, users ---

func (a *admin) printRole(r roleDTO) {
	fmt.Fprintf(a.stdout, "role %s\n", r.Name)
	var rows [][]string
	for _, o := range r.SecurableObjects {
		var privs []string
		for _, p := range o.Privileges {
			s := strings.ToLower(p.Name)
			if strings.EqualFold(p.Condition, "deny") {
				s = "deny:" + s
			}
			privs = append(privs, s)
		}
		rows = append(rows, []string{strings.ToLower(o.Type), o.FullName, strings.Join(privs, ", ")})
	}
	if len(rows) > 0 {
		fmt.Fprintln(a.stdout)
		a.table([]string{"TYPE", "OBJECT", "PRIVILEGES"}, rows)
	}
}

func adminGrant(a *admin, verb string, args []string) error {
	fs := a.flags()
	deny := fs.Bool("deny", false, "the DENY condition instead of ALLOW")
	pos, err := a.parse(fs, args, 4, -1, "ROLE OBJECT_TYPE FULLNAME PRIV[,PRIV]... [--deny]")
	if err != nil {
		return err
	}
	cond := "ALLOW"
	if *deny {
		cond = "DENY"
	}
	privs := []privilegeDTO{}
	for _, s := range pos[3:] {
		for _, name := range splitList(s) {
			privs = append(privs, privilegeDTO{Name: strings.ToUpper(name), Condition: cond})
		}
	}
	if len(privs) == 0 {
		return fmt.Errorf("%w: %s: no privileges given", errUsage, a.name)
	}
	p, err := a.lake("permissions", "roles", pos[0], pos[1], pos[2], verb)
	if err != nil {
		return err
	}
	raw, err := a.call("PUT", p, nil, map[string]any{"privileges": privs}, "")
	if err != nil {
		return err
	}
	var r struct{ Role roleDTO }
	return a.show(raw, &r, func() { a.printRole(r.Role) })
}

func adminRoleCreate(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("roles")
	if err != nil {
		return err
	}
	raw, err := a.call("POST", p, nil, map[string]any{"name": pos[0]}, "")
	if err != nil {
		return err
	}
	var r struct{ Role roleDTO }
	return a.show(raw, &r, func() { a.printRole(r.Role) })
}

func adminRoleList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	p, err := a.lake("roles")
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Names []string }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, n := range r.Names {
			rows = append(rows, []string{n})
		}
		a.table([]string{"NAME"}, rows)
	})
}

func adminRoleGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("roles", pos[0])
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, nil, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Role roleDTO }
	return a.show(raw, &r, func() { a.printRole(r.Role) })
}

func adminRoleDrop(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("roles", pos[0])
	if err != nil {
		return err
	}
	raw, err := a.call("DELETE", p, nil, nil, "")
	if err != nil {
		return err
	}
	return a.dropped(raw, "role "+pos[0])
}

func (a *admin) printUser(u userDTO) {
	a.fields("user", u.Name, "roles", orDash(strings.Join(u.Roles, ", ")))
}

func adminUserCreate(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	p, err := a.lake("users")
	if err != nil {
		return err
	}
	raw, err := a.call("POST", p, nil, map[string]any{"name": pos[0]}, "")
	if err != nil {
		return err
	}
	var r struct{ User userDTO }
	return a.show(raw, &r, func() { a.printUser(r.User) })
}

func adminUserList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	p, err := a.lake("users")
	if err != nil {
		return err
	}
	raw, err := a.call("GET", p, url.Values{"details": {"true"}}, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Users []userDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, u := range r.Users {
			rows = append(rows, []string{u.Name, orDash(strings.Join(u.Roles, ","))})
		}
		a.table([]string{"NAME", "ROLES"}, rows)
	})
}

func adminUserRoles(a *admin, verb string, args []string) error {
	pos, err := a.parse(a.flags(), args, 2, -1, "USER ROLE...")
	if err != nil {
		return err
	}
	p, err := a.lake("permissions", "users", pos[0], verb)
	if err != nil {
		return err
	}
	raw, err := a.call("PUT", p, nil, map[string]any{"roleNames": pos[1:]}, "")
	if err != nil {
		return err
	}
	var r struct{ User userDTO }
	return a.show(raw, &r, func() { a.printUser(r.User) })
}

// --- events ---

func adminEvents(a *admin, args []string) error {
	fs := a.flags()
	since := fs.Uint64("since", 0, "only events with a Raft index above N")
	limit := fs.Int("limit", 0, "at most N events (1-1000; default 100)")
	if _, err := a.parse(fs, args, 0, 0, "[--since N] [--limit N]"); err != nil {
		return err
	}
	p, err := a.lake("events")
	if err != nil {
		return err
	}
	q := url.Values{}
	if isSet(fs, "since") {
		q.Set("since", strconv.FormatUint(*since, 10))
	}
	if *limit > 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	raw, err := a.call("GET", p, q, nil, "")
	if err != nil {
		return err
	}
	var r struct{ Events []eventDTO }
	return a.show(raw, &r, func() {
		var rows [][]string
		for _, e := range r.Events {
			actor := e.Actor
			if e.Delegator != "" {
				actor += " (via " + e.Delegator + ")"
			}
			target := strings.ToLower(e.Target.Type) + " " + e.Target.FullName
			rows = append(rows, []string{strconv.FormatUint(e.Index, 10), ts(e.Time), actor, e.Operation,
				strings.TrimSpace(target), e.Outcome, e.Detail})
		}
		a.table([]string{"INDEX", "TIME", "ACTOR", "OPERATION", "TARGET", "OUTCOME", "DETAIL"}, rows)
	})
}
