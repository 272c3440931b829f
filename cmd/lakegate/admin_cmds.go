package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"lakegate/catalog"
	"lakegate/metasrv"
	"lakegate/metasrv/api"
	"lakegate/metasrv/raftnode"
)

// --- cluster ---

func (a *admin) printStatus(st raftnode.Status) {
	a.printStatusOf(st, nil)
}

// printStatusOf prints st and, when views holds each member's own status
// (nil where it did not answer), whether each member answered and when it
// last heard from the leader.
func (a *admin) printStatusOf(st raftnode.Status, views map[string]*raftnode.Status) {
	a.fields("node", st.ID, "state", st.State, "term", strconv.FormatUint(st.Term, 10), "leader", orDash(st.Leader.ID),
		"applied index", strconv.FormatUint(st.AppliedIndex, 10), "commit index", strconv.FormatUint(st.CommitIndex, 10))
	fmt.Fprintln(a.stdout)
	header := []string{"ID", "RAFT ADDRESS", "HTTP ADDRESS", "SUFFRAGE", "LEADER"}
	if views != nil {
		header = append(header, "REACHABLE", "LAST CONTACT", "APPLIED")
	}
	now := time.Now()
	var rows [][]string
	for _, s := range st.Servers {
		lead := ""
		if s.ID == st.Leader.ID {
			lead = "*"
		}
		row := []string{s.ID, s.RaftAddr, orDash(s.HTTPAddr), strings.ToLower(s.Suffrage), lead}
		if views != nil {
			v := views[s.ID]
			switch {
			case v == nil:
				row = append(row, "no", "-", "-")
			case v.State == "Leader":
				row = append(row, "yes", "(leader)", strconv.FormatUint(v.AppliedIndex, 10))
			case v.LastContact.IsZero():
				row = append(row, "yes", "never", strconv.FormatUint(v.AppliedIndex, 10))
			default:
				row = append(row, "yes", now.Sub(v.LastContact).Round(time.Millisecond).String()+" ago", strconv.FormatUint(v.AppliedIndex, 10))
			}
		}
		rows = append(rows, row)
	}
	a.table(header, rows)
}

// clusterProbeTimeout bounds how long cluster status waits for each member.
const clusterProbeTimeout = 3 * time.Second

func adminClusterStatus(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	raw, err := a.call("GET", "/cluster/status", nil, nil, "")
	if err != nil {
		return err
	}
	var st raftnode.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	views := a.probeMembers(st)
	return a.show(raw, nil, func() { a.printStatusOf(st, views) })
}

// probeMembers asks every member of st for its own status at its HTTP
// address, at once, each bounded by clusterProbeTimeout: a member that
// does not answer (or has no address) is nil in the result.
func (a *admin) probeMembers(st raftnode.Status) map[string]*raftnode.Status {
	base, err := url.Parse(a.server)
	if err != nil {
		return map[string]*raftnode.Status{}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	views := make(map[string]*raftnode.Status, len(st.Servers))
	for _, s := range st.Servers {
		if s.HTTPAddr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(a.ctx, clusterProbeTimeout)
			defer cancel()
			member := *base
			member.Host, member.Path, member.RawQuery = s.HTTPAddr, "", ""
			// The same rules as for --server: no token in clear to a
			// member that is not on loopback, unless --insecure-no-tls.
			server, hc, err := metasrvClient(member.String(), a.tlsCA, a.insecure)
			if err != nil {
				return
			}
			raw, err := (&admin{ctx: ctx, server: server, token: a.token, hc: hc}).send(ctx, "GET", "/cluster/status", nil, "")
			var v raftnode.Status
			if err != nil || json.Unmarshal(raw, &v) != nil {
				return
			}
			mu.Lock()
			views[s.ID] = &v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return views
}

func adminClusterRemove(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "ID")
	if err != nil {
		return err
	}
	var st raftnode.Status
	return a.request("POST", "/cluster/remove", nil, map[string]string{"id": pos[0]}, &st, func() {
		fmt.Fprintf(a.stdout, "removed node %s\n\n", pos[0])
		a.printStatus(st)
	})
}

// --- metalakes ---

func (a *admin) printMetalake(m api.MetalakeDTO) {
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
	body := api.CreateMetalakeRequest{Name: pos[0], Comment: *comment, Owner: *owner, Properties: properties}
	var r api.MetalakeResponse
	return a.request("POST", "/api/metalakes", nil, body, &r, func() { a.printMetalake(r.Metalake) })
}

func adminMetalakeList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	var r api.MetalakeListResponse
	return a.request("GET", "/api/metalakes", nil, nil, &r, func() {
		tableOf(a, []string{"NAME", "OWNER", "CREATED", "COMMENT"}, r.Metalakes, func(m api.MetalakeDTO) []string {
			return []string{m.Name, m.Owner, ts(m.Audit.CreateTime), m.Comment}
		})
	})
}

func adminWhoami(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	raw, err := a.call("GET", "/api/whoami", nil, nil, "")
	if err != nil {
		return err
	}
	var r api.WhoamiResponse
	return a.show(raw, &r, func() {
		p := r.Principal
		a.fields("name", p.Name, "tenant", p.Tenant, "role", p.Role, "namespaces", strings.Join(p.Namespaces, ","),
			"metalake", p.Metalake, "delegated by", p.DelegatedBy)
	})
}

func adminMetalakeGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	var r api.MetalakeResponse
	return a.request("GET", apiPath("api", "metalakes", pos[0]), nil, nil, &r, func() { a.printMetalake(r.Metalake) })
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
	var r api.DropResponse
	return a.request("DELETE", apiPath("api", "metalakes", pos[0]), q, nil, &r, a.dropped(&r, "metalake "+pos[0]))
}

// --- catalogs, schemas, tables ---

func adminCatalogCreate(a *admin, args []string) error {
	fs := a.flags()
	comment := fs.String("comment", "", "comment")
	typ := fs.String("type", "", "managed (the default) or upstream (an Arrow Flight SQL engine; see --property upstream.*)")
	properties := propertyFlag{}
	fs.Var(properties, "property", "KEY=VALUE (repeatable)")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--type managed|upstream] [--comment C] [--property K=V]...")
	if err != nil {
		return err
	}
	body := api.CreateCatalogRequest{Name: pos[0], Type: *typ, Comment: *comment, Properties: properties}
	var r api.CatalogResponse
	return a.lakeRequest("POST", []string{"catalogs"}, nil, body, &r, func() { a.printCatalog(r.Catalog) })
}

func (a *admin) printCatalog(c api.CatalogDTO) {
	a.fields("name", c.Name, "type", c.Type, "provider", c.Provider, "comment", c.Comment,
		"properties", props(c.Properties), "creator", c.Audit.Creator, "created", ts(c.Audit.CreateTime))
}

func (a *admin) printSchema(s api.SchemaDTO) {
	a.fields("name", s.Name, "comment", s.Comment,
		"properties", props(s.Properties), "creator", s.Audit.Creator, "created", ts(s.Audit.CreateTime))
}

func adminCatalogList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	var r api.CatalogListResponse
	return a.lakeRequest("GET", []string{"catalogs"}, withDetails(), nil, &r, func() {
		tableOf(a, []string{"NAME", "TYPE", "PROVIDER", "COMMENT"}, r.Catalogs, func(c api.CatalogDTO) []string {
			return []string{c.Name, c.Type, c.Provider, c.Comment}
		})
	})
}

func adminCatalogDrop(a *admin, args []string) error {
	fs := a.flags()
	cascade := fs.Bool("cascade", false, "drop its schemas and tables too")
	force := fs.Bool("force", false, "drop even if not empty")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--cascade] [--force]")
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
	return a.lakeDrop([]string{"catalogs", pos[0]}, q, "catalog "+pos[0])
}

// unsetFlag collects repeated property names.
type unsetFlag []string

func (u *unsetFlag) String() string { return strings.Join(*u, ",") }

func (u *unsetFlag) Set(s string) error {
	if s == "" {
		return fmt.Errorf("want a property name")
	}
	*u = append(*u, s)
	return nil
}

// alterFlags are the flags of catalog and schema alter.
type alterFlags struct {
	fs      *flag.FlagSet
	rename  *string
	comment *string
	set     propertyFlag
	unset   unsetFlag
}

func (a *admin) alterFlags(renameHelp string) *alterFlags {
	f := &alterFlags{fs: a.flags(), set: propertyFlag{}}
	f.rename = f.fs.String("rename", "", renameHelp)
	f.comment = f.fs.String("comment", "", "new comment (\"\" clears it)")
	f.fs.Var(f.set, "set", "KEY=VALUE: set a property (repeatable)")
	f.fs.Var(&f.unset, "unset", "KEY: remove a property (repeatable)")
	return f
}

// alterUsage is the usage of catalog and schema alter after the name.
const alterUsage = "[--rename NEW] [--comment C] [--set K=V]... [--unset K]..."

// body returns the PUT body: the comment, property updates (sets in key
// order, then unsets) and the rename, applied by the server all or nothing.
func (f *alterFlags) body(a *admin) (api.AlterRequest[metasrv.Update], error) {
	var updates []metasrv.Update
	if isSet(f.fs, "comment") {
		updates = append(updates, metasrv.Update{Type: "updateComment", NewComment: *f.comment})
	}
	keys := make([]string, 0, len(f.set))
	for k := range f.set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if slices.Contains(f.unset, k) {
			return api.AlterRequest[metasrv.Update]{}, fmt.Errorf("%w: %s: property %q both --set and --unset", errUsage, a.name, k)
		}
		updates = append(updates, metasrv.Update{Type: "setProperty", Property: k, Value: f.set[k]})
	}
	for _, k := range f.unset {
		updates = append(updates, metasrv.Update{Type: "removeProperty", Property: k})
	}
	if *f.rename != "" {
		updates = append(updates, metasrv.Update{Type: "rename", NewName: *f.rename})
	}
	if len(updates) == 0 {
		return api.AlterRequest[metasrv.Update]{}, fmt.Errorf("%w: %s needs at least one of --rename, --comment, --set, --unset", errUsage, a.name)
	}
	return api.AlterRequest[metasrv.Update]{Updates: updates}, nil
}

func adminCatalogAlter(a *admin, args []string) error {
	f := a.alterFlags("new name")
	pos, err := a.parse(f.fs, args, 1, 1, "NAME "+alterUsage)
	if err != nil {
		return err
	}
	body, err := f.body(a)
	if err != nil {
		return err
	}
	var r api.CatalogResponse
	return a.lakeRequest("PUT", []string{"catalogs", pos[0]}, nil, body, &r, func() { a.printCatalog(r.Catalog) })
}

func adminSchemaAlter(a *admin, args []string) error {
	f := a.alterFlags("new name (within the same catalog)")
	n, err := a.parseName(f.fs, args, 2, "CATALOG.SCHEMA", "CATALOG.SCHEMA "+alterUsage)
	if err != nil {
		return err
	}
	body, err := f.body(a)
	if err != nil {
		return err
	}
	var r api.SchemaResponse
	return a.lakeRequest("PUT", []string{"catalogs", n[0], "schemas", n[1]}, nil, body, &r, func() { a.printSchema(r.Schema) })
}

func adminSchemaCreate(a *admin, args []string) error {
	fs := a.flags()
	comment := fs.String("comment", "", "comment")
	n, err := a.parseName(fs, args, 2, "CATALOG.SCHEMA", "CATALOG.SCHEMA [--comment C]")
	if err != nil {
		return err
	}
	var r api.SchemaResponse
	return a.lakeRequest("POST", []string{"catalogs", n[0], "schemas"}, nil, api.CreateSchemaRequest{Name: n[1], Comment: *comment},
		&r, func() { a.printSchema(r.Schema) })
}

func adminSchemaList(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "CATALOG")
	if err != nil {
		return err
	}
	var r api.SchemaListResponse
	return a.lakeRequest("GET", []string{"catalogs", pos[0], "schemas"}, withDetails(), nil, &r, func() {
		tableOf(a, []string{"NAME", "CREATOR", "COMMENT"}, r.Schemas, func(s api.SchemaDTO) []string {
			return []string{s.Name, s.Audit.Creator, s.Comment}
		})
	})
}

func adminSchemaGet(a *admin, args []string) error {
	n, err := a.parseName(a.flags(), args, 2, "CATALOG.SCHEMA", "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	var r api.SchemaResponse
	return a.lakeRequest("GET", []string{"catalogs", n[0], "schemas", n[1]}, nil, nil, &r, func() { a.printSchema(r.Schema) })
}

func adminSchemaDrop(a *admin, args []string) error {
	fs := a.flags()
	cascade := fs.Bool("cascade", false, "drop its tables too")
	n, err := a.parseName(fs, args, 2, "CATALOG.SCHEMA", "CATALOG.SCHEMA [--cascade]")
	if err != nil {
		return err
	}
	q := url.Values{}
	if *cascade {
		q.Set("cascade", "true")
	}
	return a.lakeDrop([]string{"catalogs", n[0], "schemas", n[1]}, q, "schema "+strings.Join(n, "."))
}

func adminTableList(a *admin, args []string) error {
	n, err := a.parseName(a.flags(), args, 2, "CATALOG.SCHEMA", "CATALOG.SCHEMA")
	if err != nil {
		return err
	}
	var r api.TableListResponse
	return a.lakeRequest("GET", []string{"catalogs", n[0], "schemas", n[1], "tables"}, withDetails(), nil, &r, func() {
		tableOf(a, []string{"NAME", "COLUMNS", "CREATOR", "COMMENT"}, r.Tables, func(t api.TableDTO) []string {
			return []string{t.Name, strconv.Itoa(len(t.Columns)), t.Audit.Creator, t.Comment}
		})
	})
}

func adminTableGet(a *admin, args []string) error {
	n, err := a.parseName(a.flags(), args, 3, "CATALOG.SCHEMA.TABLE", "CATALOG.SCHEMA.TABLE")
	if err != nil {
		return err
	}
	var r api.TableResponse
	return a.lakeRequest("GET", []string{"catalogs", n[0], "schemas", n[1], "tables", n[2]}, nil, nil, &r, func() {
		t := r.Table
		a.fields("name", t.Name, "comment", t.Comment, "properties", props(t.Properties),
			"creator", t.Audit.Creator, "created", ts(t.Audit.CreateTime))
		fmt.Fprintln(a.stdout)
		tableOf(a, []string{"COLUMN", "TYPE", "NULLABLE", "COMMENT"}, t.Columns, func(c api.ColumnDTO) []string {
			null := "yes"
			if c.Nullable != nil && !*c.Nullable {
				null = "no"
			}
			return []string{c.Name, c.Type, null, c.Comment}
		})
	})
}

// --- tags ---

func adminTableVersions(a *admin, args []string) error {
	n, err := a.parseName(a.flags(), args, 3, "CATALOG.SCHEMA.TABLE", "CATALOG.SCHEMA.TABLE")
	if err != nil {
		return err
	}
	var r api.VersionListResponse
	return a.lakeRequest("GET", []string{"catalogs", n[0], "schemas", n[1], "tables", n[2], "versions"}, nil, nil, &r, func() {
		tableOf(a, []string{"VERSION", "ROWS", "FILES", "COLUMNS", "ACTOR", "TIME"}, r.Versions, func(v api.VersionDTO) []string {
			return []string{strconv.FormatUint(v.Version, 10), strconv.FormatInt(v.Rows, 10), strconv.Itoa(len(v.Files)),
				strconv.Itoa(len(v.Columns)), v.Actor, ts(v.Time)}
		})
	})
}

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
	body := api.CreateTagRequest{Name: pos[0], Comment: *comment, Properties: properties}
	if isSet(fs, "allowed-values") {
		av := splitList(*values)
		body.AllowedValues = &av
	}
	var r api.TagResponse
	return a.lakeRequest("POST", []string{"tags"}, nil, body, &r, func() { a.printTag(r.Tag) })
}

func (a *admin) printTag(t api.TagDTO) {
	a.fields("name", t.Name, "comment", t.Comment, "allowed values", allowed(t.AllowedValues),
		"properties", props(t.Properties), "creator", auditOf(t.Audit).Creator, "created", ts(auditOf(t.Audit).CreateTime))
}

// auditOf is *a, or no audit for a nil a (an answer without one).
func auditOf(a *catalog.Audit) catalog.Audit {
	if a == nil {
		return catalog.Audit{}
	}
	return *a
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
	var r api.TagListResponse
	return a.lakeRequest("GET", segs, withDetails(), nil, &r, func() {
		if len(pos) == 2 { // an object's effective tags
			tableOf(a, []string{"NAME", "VALUES", "INHERITED", "COMMENT"}, r.Tags, func(t api.TagDTO) []string {
				inh := "no"
				if t.Inherited != nil && *t.Inherited {
					inh = "yes"
				}
				var vals []string
				if t.AssignmentValues != nil {
					vals = *t.AssignmentValues
				}
				return []string{t.Name, orDash(strings.Join(vals, ",")), inh, t.Comment}
			})
			return
		}
		tableOf(a, []string{"NAME", "ALLOWED VALUES", "COMMENT"}, r.Tags, func(t api.TagDTO) []string {
			return []string{t.Name, allowed(t.AllowedValues), t.Comment}
		})
	})
}

func adminTagObjects(a *admin, args []string) error {
	fs := a.flags()
	value := fs.String("value", "", "only objects carrying this value")
	pos, err := a.parse(fs, args, 1, 1, "TAG [--value V]")
	if err != nil {
		return err
	}
	q := url.Values{}
	if isSet(fs, "value") {
		q.Set("value", *value)
	}
	var r api.MetadataObjectListResponse
	return a.lakeRequest("GET", []string{"tags", pos[0], "objects"}, q, nil, &r, func() {
		tableOf(a, []string{"TYPE", "FULLNAME"}, r.MetadataObjects, func(o api.ObjectDTO) []string {
			return []string{o.Type, o.FullName}
		})
	})
}

// adminTagAssoc attaches or detaches tags with the v2 (name/value pair)
// body.
func adminTagAssoc(a *admin, verb string, args []string) error {
	pos, err := a.parse(a.flags(), args, 3, -1, "OBJECT_TYPE FULLNAME TAG[=VALUE]...")
	if err != nil {
		return err
	}
	pairs := []catalog.TagValue{}
	for _, s := range pos[2:] {
		t, err := a.tagArg(s)
		if err != nil {
			return err
		}
		pairs = append(pairs, catalog.TagValue{Name: t.Name, Value: t.Value})
	}
	p, err := a.lake("objects", pos[0], pos[1], "tags")
	if err != nil {
		return err
	}
	body := api.AssociateTagsV2Request{TagsToAdd: pairs}
	if verb == "detach" {
		body = api.AssociateTagsV2Request{TagsToRemove: pairs}
	}
	raw, err := a.call("POST", p, nil, body, "application/vnd.gravitino.v2+json")
	if err != nil {
		return err
	}
	var r api.NameListResponse
	return a.show(raw, &r, func() {
		fmt.Fprintf(a.stdout, "%s %s now carries: %s\n", strings.ToLower(pos[0]), pos[1], printable(orDash(strings.Join(r.Names, ", "))))
	})
}

// --- policies ---

func adminPolicyList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	var r api.PolicyListResponse
	return a.lakeRequest("GET", []string{"policies"}, withDetails(), nil, &r, func() {
		tableOf(a, []string{"NAME", "TYPE", "ENABLED", "COMMENT"}, r.Policies, func(p api.PolicyDTO) []string {
			return []string{p.Name, p.PolicyType, strconv.FormatBool(p.Enabled), p.Comment}
		})
	})
}

func (a *admin) printPolicy(p api.PolicyDTO) {
	a.fields("name", p.Name, "type", p.PolicyType, "enabled", strconv.FormatBool(p.Enabled), "comment", p.Comment,
		"content", jsonText(p.Content), "creator", auditOf(p.Audit).Creator, "created", ts(auditOf(p.Audit).CreateTime))
}

// jsonText is v as compact JSON (as metasrv writes it).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// policyContent checks that s is one JSON object.
func (a *admin) policyContent(s string) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: %s: --content must be a JSON object", errUsage, a.name)
	}
	return json.RawMessage(s), nil
}

func adminPolicyCreate(a *admin, args []string) error {
	fs := a.flags()
	typ := fs.String("type", "", "policy type: row_filter or column_mask")
	content := fs.String("content", "", "policy content, a JSON object (e.g. '{\"expression\":\"region = 'EU'\"}')")
	comment := fs.String("comment", "", "comment")
	disabled := fs.Bool("disabled", false, "create the policy disabled")
	pos, err := a.parse(fs, args, 1, 1, "NAME --type row_filter|column_mask --content JSON [--comment C] [--disabled]")
	if err != nil {
		return err
	}
	if *typ == "" || *content == "" {
		return fmt.Errorf("%w: %s needs --type and --content", errUsage, a.name)
	}
	c, err := a.policyContent(*content)
	if err != nil {
		return err
	}
	enabled := !*disabled
	body := api.CreatePolicyRequest{Name: pos[0], Comment: *comment, PolicyType: *typ, Enabled: &enabled, Content: c}
	var r api.PolicyResponse
	return a.lakeRequest("POST", []string{"policies"}, nil, body, &r, func() { a.printPolicy(r.Policy) })
}

func adminPolicyAlter(a *admin, args []string) error {
	fs := a.flags()
	rename := fs.String("rename", "", "new name")
	comment := fs.String("comment", "", "new comment (\"\" clears it)")
	content := fs.String("content", "", "new content, a JSON object")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--rename N] [--comment C] [--content JSON]")
	if err != nil {
		return err
	}
	var updates []map[string]any
	if isSet(fs, "comment") {
		updates = append(updates, map[string]any{"@type": "updateComment", "newComment": *comment})
	}
	if isSet(fs, "content") {
		c, err := a.policyContent(*content)
		if err != nil {
			return err
		}
		// updateContent names the policy's own type: read it first.
		var cur api.PolicyResponse
		p, err := a.lake("policies", pos[0])
		if err != nil {
			return err
		}
		raw, err := a.call("GET", p, nil, nil, "")
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &cur); err != nil {
			return fmt.Errorf("decoding the policy: %w", err)
		}
		updates = append(updates, map[string]any{"@type": "updateContent", "policyType": cur.Policy.PolicyType, "newContent": c})
	}
	if *rename != "" {
		updates = append(updates, map[string]any{"@type": "rename", "newName": *rename})
	}
	if len(updates) == 0 {
		return fmt.Errorf("%w: %s needs at least one of --rename, --comment, --content", errUsage, a.name)
	}
	var r api.PolicyResponse
	return a.lakeRequest("PUT", []string{"policies", pos[0]}, nil, map[string]any{"updates": updates}, &r, func() { a.printPolicy(r.Policy) })
}

func adminPolicyEnable(a *admin, enable bool, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	state := "disabled"
	if enable {
		state = "enabled"
	}
	return a.lakeRequest("PATCH", []string{"policies", pos[0]}, nil, api.SetPolicyEnabledRequest{Enable: &enable}, &api.BaseResponse{}, func() {
		fmt.Fprintf(a.stdout, "policy %s %s\n", pos[0], state)
	})
}

func adminPolicyDelete(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	return a.lakeDrop([]string{"policies", pos[0]}, nil, "policy "+pos[0])
}

// adminPolicyAttach attaches a policy to a tag: to every object carrying
// the tag, or with TAG=VALUE only to those whose assignment carries VALUE.
func adminPolicyAttach(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 2, 2, "NAME TAG[=VALUE]")
	if err != nil {
		return err
	}
	tag, value, hasValue := strings.Cut(pos[1], "=")
	var body any
	if hasValue {
		body = api.AttachPolicyRequest{Selector: &api.SelectorRequest{Type: "TAG_VALUE", Value: &value}}
	}
	return a.lakeRequest("PUT", []string{"tags", tag, "policies", pos[0]}, nil, body, &api.AttachPolicyResponse{}, func() {
		fmt.Fprintf(a.stdout, "policy %s attached to tag %s\n", pos[0], pos[1])
	})
}

func adminPolicyDetach(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 2, 2, "NAME TAG")
	if err != nil {
		return err
	}
	return a.lakeRequest("DELETE", []string{"tags", pos[1], "policies", pos[0]}, nil, nil, &api.DetachPolicyResponse{}, func() {
		fmt.Fprintf(a.stdout, "policy %s detached from tag %s\n", pos[0], pos[1])
	})
}

// --- roles, grants, users ---

func (a *admin) printRole(r api.RoleDTO) {
	fmt.Fprintf(a.stdout, "role %s\n", printable(r.Name))
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
	objType, _ := catalog.ParseObjectType(pos[1]) // an unknown type is metasrv's to refuse
	privs := []api.PrivilegeDTO{}
	for _, s := range pos[3:] {
		for _, name := range splitList(s) {
			p, err := privilegeOf(name, objType)
			if err != nil {
				return fmt.Errorf("%w: %s: %v", errUsage, a.name, err)
			}
			privs = append(privs, api.PrivilegeDTO{Name: p.String(), Condition: cond})
		}
	}
	if len(privs) == 0 {
		return fmt.Errorf("%w: %s: no privileges given", errUsage, a.name)
	}
	var r api.RoleResponse
	return a.lakeRequest("PUT", []string{"permissions", "roles", pos[0], pos[1], pos[2], verb}, nil,
		api.PrivilegesRequest{Privileges: privs}, &r, func() { a.printRole(r.Role) })
}

func adminRoleCreate(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	var r api.RoleResponse
	return a.lakeRequest("POST", []string{"roles"}, nil, api.CreateRoleRequest{Name: pos[0]}, &r, func() { a.printRole(r.Role) })
}

func adminRoleList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	var r api.NameListResponse
	return a.lakeRequest("GET", []string{"roles"}, nil, nil, &r, func() {
		tableOf(a, []string{"NAME"}, r.Names, func(n string) []string { return []string{n} })
	})
}

func (a *admin) printUser(u api.UserDTO) {
	a.fields("user", u.Name, "roles", orDash(strings.Join(u.Roles, ", ")))
}

func adminUserCreate(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	var r api.UserResponse
	return a.lakeRequest("POST", []string{"users"}, nil, api.CreatePrincipalRequest{Name: pos[0]}, &r, func() { a.printUser(r.User) })
}

func adminUserList(a *admin, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0, ""); err != nil {
		return err
	}
	var r api.UserListResponse
	return a.lakeRequest("GET", []string{"users"}, withDetails(), nil, &r, func() {
		tableOf(a, []string{"NAME", "ROLES"}, r.Users, func(u api.UserDTO) []string {
			return []string{u.Name, orDash(strings.Join(u.Roles, ","))}
		})
	})
}

func adminUserRoles(a *admin, verb string, args []string) error {
	pos, err := a.parse(a.flags(), args, 2, -1, "USER ROLE...")
	if err != nil {
		return err
	}
	var r api.UserResponse
	return a.lakeRequest("PUT", []string{"permissions", "users", pos[0], verb}, nil, api.RoleNamesRequest{RoleNames: pos[1:]},
		&r, func() { a.printUser(r.User) })
}

// --- events ---

func adminEvents(a *admin, args []string) error {
	fs := a.flags()
	since := fs.Uint64("since", 0, "only events with a Raft index above N")
	limit := fs.Int("limit", 0, "at most N events (1-1000; default 100)")
	if _, err := a.parse(fs, args, 0, 0, "[--since N] [--limit N]"); err != nil {
		return err
	}
	q := url.Values{}
	if isSet(fs, "since") {
		q.Set("since", strconv.FormatUint(*since, 10))
	}
	if *limit > 0 {
		q.Set("limit", strconv.Itoa(*limit))
	}
	var r struct{ Events []metasrv.Event }
	return a.lakeRequest("GET", []string{"events"}, q, nil, &r, func() {
		tableOf(a, []string{"INDEX", "TIME", "ACTOR", "OPERATION", "TARGET", "OUTCOME", "DETAIL"}, r.Events, eventRow)
	})
}

// eventRow is one event as `admin events` prints it. A request refused
// before it reached the log shows its REST operation (method and route
// template) and "rejected: " with the class of the refusal; its detail
// drops the "metasrv: <class>: " that repeats it.
func eventRow(e metasrv.Event) []string {
	actor := e.Actor
	if e.Delegator != "" {
		actor += " (via " + e.Delegator + ")"
	}
	index := strconv.FormatUint(e.Index, 10)
	if e.Index == 0 {
		index = "-" // refused before it reached the log, or a pre-event
	}
	op, outcome, detail := e.Operation, string(e.Outcome), e.Detail
	if e.Reason != "" {
		reason := strings.ReplaceAll(e.Reason, "_", " ")
		outcome = "rejected: " + reason
		detail = strings.TrimPrefix(strings.TrimPrefix(detail, "metasrv: "), reason+": ")
	}
	if e.Request != "" {
		op = e.Request
	}
	if detail == "" {
		detail = commandDetail(e.Command)
	}
	return []string{index, ts(e.Time), actor, op, objectText(e.Target), outcome, detail}
}

// --- domains ---

func backingTag(t *api.BackingTagDTO) string {
	switch {
	case t == nil:
		return "(none)"
	case t.Value != "":
		return t.Name + "=" + t.Value
	}
	return t.Name
}

// relations formats relations as "direct", "inherited from schema c.s",
// "via subdomain D".
func relations(rs []api.RelationDTO) string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		switch {
		case r.Source == nil:
			out = append(out, r.Type)
		case r.Type == "via_subdomain":
			out = append(out, "via subdomain "+r.Source.FullName)
		default:
			out = append(out, r.Type+" from "+r.Source.Type+" "+r.Source.FullName)
		}
	}
	return strings.Join(out, ", ")
}

func (a *admin) printDomain(d api.DomainDTO) {
	a.fields("name", d.Name, "status", d.Status, "parent", d.Parent, "backing tag", backingTag(d.BackingTag),
		"owner", d.Owner.Name, "comment", d.Comment, "properties", props(d.Properties),
		"creator", d.Audit.Creator, "created", ts(d.Audit.CreateTime))
}

// domainRequest sends a request about a domain and prints the domain
// answered.
func (a *admin) domainRequest(method string, segs []string, body any) error {
	var r api.DomainResponse
	return a.lakeRequest(method, segs, nil, body, &r, func() { a.printDomain(r.Domain) })
}

// tagArg parses TAG[=VALUE].
func (a *admin) tagArg(s string) (*api.BackingTagDTO, error) {
	name, value, _ := strings.Cut(s, "=")
	if name == "" {
		return nil, fmt.Errorf("%w: %s: empty tag name in %q", errUsage, a.name, s)
	}
	return &api.BackingTagDTO{Name: name, Value: value}, nil
}

func adminDomainCreate(a *admin, args []string) error {
	fs := a.flags()
	tag := fs.String("tag", "", "back the domain with this existing tag, TAG or TAG=VALUE")
	newTag := fs.String("new-tag", "", "back the domain with a new valueless tag of this name")
	parent := fs.String("parent", "", "create it as a subdomain of this domain")
	comment := fs.String("comment", "", "comment")
	properties := propertyFlag{}
	fs.Var(properties, "property", "KEY=VALUE (repeatable)")
	const usage = "NAME (--tag TAG[=VALUE] | --new-tag TAG) [--parent P] [--comment C] [--property K=V]..."
	pos, err := a.parse(fs, args, 1, 1, usage)
	if err != nil {
		return err
	}
	if (*tag == "") == (*newTag == "") {
		return fmt.Errorf("%w: %s needs exactly one of --tag and --new-tag", errUsage, a.name)
	}
	bt := &api.BackingTagDTO{Name: *newTag, Create: true}
	if *tag != "" {
		if bt, err = a.tagArg(*tag); err != nil {
			return err
		}
	}
	body := api.CreateDomainRequest{Name: pos[0], Comment: *comment, BackingTag: bt, Parent: *parent, Properties: properties}
	return a.domainRequest("POST", []string{"domains"}, body)
}

func adminDomainList(a *admin, args []string) error {
	fs := a.flags()
	under := fs.String("under", "", "list the subdomains of this domain")
	if _, err := a.parse(fs, args, 0, 0, "[--under DOMAIN]"); err != nil {
		return err
	}
	segs := []string{"domains"}
	if *under != "" {
		segs = []string{"domains", *under, "subdomains"}
	}
	var r api.DomainListResponse
	return a.lakeRequest("GET", segs, withDetails(), nil, &r, func() {
		tableOf(a, []string{"NAME", "STATUS", "PARENT", "BACKING TAG", "OWNER", "COMMENT"}, r.Domains, func(d api.DomainDTO) []string {
			return []string{d.Name, d.Status, orDash(d.Parent), backingTag(d.BackingTag), d.Owner.Name, d.Comment}
		})
	})
}

func adminDomainGet(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	return a.domainRequest("GET", []string{"domains", pos[0]}, nil)
}

func adminDomainAlter(a *admin, args []string) error {
	f := a.alterFlags("new name")
	pos, err := a.parse(f.fs, args, 1, 1, "NAME "+alterUsage)
	if err != nil {
		return err
	}
	body, err := f.body(a)
	if err != nil {
		return err
	}
	return a.domainRequest("PUT", []string{"domains", pos[0]}, body)
}

func adminDomainStatus(a *admin, status string, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	return a.domainRequest("PATCH", []string{"domains", pos[0]}, api.SetDomainStatusRequest{Status: &status})
}

func adminDomainMove(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 2, 2, "NAME PARENT")
	if err != nil {
		return err
	}
	return a.domainRequest("PUT", []string{"domains", pos[0], "parent"}, api.SetDomainParentRequest{Parent: pos[1]})
}

func adminDomainDetach(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	return a.domainRequest("DELETE", []string{"domains", pos[0], "parent"}, nil)
}

func adminDomainSetTag(a *admin, args []string) error {
	fs := a.flags()
	remove := fs.Bool("remove", false, "remove the backing tag")
	pos, err := a.parse(fs, args, 1, 2, "NAME (TAG[=VALUE] | --remove)")
	if err != nil {
		return err
	}
	if *remove == (len(pos) == 2) {
		return fmt.Errorf("%w: %s needs exactly one of TAG[=VALUE] and --remove", errUsage, a.name)
	}
	var bt *api.BackingTagDTO // nil: null, which removes it
	if !*remove {
		if bt, err = a.tagArg(pos[1]); err != nil {
			return err
		}
	}
	return a.domainRequest("PUT", []string{"domains", pos[0], "backingTag"}, api.SetDomainBackingTagRequest{BackingTag: mustJSON(bt)})
}

func adminDomainDelete(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
	if err != nil {
		return err
	}
	return a.lakeDrop([]string{"domains", pos[0]}, nil, "domain "+pos[0])
}

func adminDomainMembers(a *admin, args []string) error {
	fs := a.flags()
	scopes := fs.String("domains", "", "only these scopes: the domain itself and/or its subdomains, comma-separated")
	types := fs.String("types", "", "only these object types, comma-separated (table)")
	contains := fs.String("name-contains", "", "only objects whose full name contains this (any case)")
	pos, err := a.parse(fs, args, 1, 1, "NAME [--domains D,...] [--types T,...] [--name-contains S]")
	if err != nil {
		return err
	}
	q := url.Values{}
	if isSet(fs, "domains") {
		q["domains"] = splitList(*scopes)
		if len(q["domains"]) == 0 {
			q["domains"] = []string{""}
		}
	}
	if *types != "" {
		q.Set("types", *types)
	}
	if *contains != "" {
		q.Set("nameContains", *contains)
	}
	var r api.MemberListResponse
	return a.lakeRequest("GET", []string{"domains", pos[0], "objects"}, q, nil, &r, func() {
		tableOf(a, []string{"TYPE", "FULLNAME", "RELATIONS"}, r.MetadataObjects, func(m api.MemberDTO) []string {
			return []string{m.Type, m.FullName, relations(m.Relations)}
		})
	})
}

func adminDomainOf(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 2, 2, "OBJECT_TYPE FULLNAME")
	if err != nil {
		return err
	}
	var r api.DomainListResponse
	return a.lakeRequest("GET", []string{"objects", pos[0], pos[1], "domains"}, withDetails(), nil, &r, func() {
		tableOf(a, []string{"DOMAIN", "STATUS", "PARENT", "RELATIONS"}, r.Domains, func(d api.DomainDTO) []string {
			return []string{d.Name, d.Status, orDash(d.Parent), relations(d.Relations)}
		})
	})
}

// --- explain and dry runs ---

// objectText is o as the tables show it: "table lake.sales.orders" (only
// the name for an object without a type, as a failed event's may be).
// commandDetail says what a grant or revoke gave or took (the privileges
// and conditions, the object and the role, or the roles and the grantee)
// and who an owner change made the owner; "" for other commands.
func commandDetail(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	cmd, err := catalog.DecodeCommand(raw)
	if err != nil {
		return ""
	}
	privs := func(ps []catalog.PrivilegeCondition) string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Name.String()
			if p.Condition == catalog.Deny {
				out[i] += " (DENY)"
			}
		}
		return strings.Join(out, ", ")
	}
	switch c := cmd.(type) {
	case catalog.GrantPrivileges:
		return privs(c.Privileges) + " on " + objectText(c.Object) + " to role " + c.Role
	case catalog.RevokePrivileges:
		return privs(c.Privileges) + " on " + objectText(c.Object) + " from role " + c.Role
	case catalog.GrantRoles:
		return "roles " + strings.Join(c.Roles, ", ") + " to " + c.Grantee.Name
	case catalog.RevokeRoles:
		return "roles " + strings.Join(c.Roles, ", ") + " from " + c.Grantee.Name
	case catalog.SetOwner:
		return "owner of " + objectText(c.Object) + " set to " + strings.ToLower(c.Owner.Type.String()) + " " + c.Owner.Name
	}
	return ""
}

func objectText(o catalog.Object) string {
	if o.Type == 0 {
		return o.Name
	}
	return strings.ToLower(o.Type.String()) + " " + o.Name
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// adminExplain explains a decision: GET …/access/explain.
func adminExplain(a *admin, args []string) error {
	pos, err := a.parse(a.flags(), args, 3, 3, "USER PRIVILEGE OBJECT_TYPE:NAME")
	if err != nil {
		return err
	}
	if typ, name, ok := strings.Cut(pos[2], ":"); !ok || typ == "" || name == "" {
		return fmt.Errorf("%w: %s: want OBJECT_TYPE:NAME (e.g. table:lake.sales.orders), got %q", errUsage, a.name, pos[2])
	}
	q := url.Values{"user": {pos[0]}, "privilege": {strings.ToUpper(pos[1])}, "object": {pos[2]}}
	var r api.ExplainResponse
	return a.lakeRequest("GET", []string{"access", "explain"}, q, nil, &r, func() { a.printExplanation(r.Explanation, r.Gateway) })
}

func (a *admin) printExplanation(e catalog.Explanation, g api.GatewayDTO) {
	decision := "denied"
	if e.Allowed {
		decision = "allowed"
	}
	gw := "not in the principal map"
	if g.InPrincipalMap {
		gw = map[bool]string{true: "allowed", false: "refused"}[g.Allowed]
		if g.NamespaceGranted != nil {
			gw += " (namespace " + g.Namespace + map[bool]string{true: " granted)", false: " not granted)"}[*g.NamespaceGranted]
		}
	}
	a.fields("user", e.User, "privilege", e.Privilege.String(), "object", objectText(e.Object), "decision", decision+" ("+e.Reason+")",
		"rule", e.Rule, "gateway", gw)
	if len(e.Roles) > 0 {
		fmt.Fprintln(a.stdout)
		var rows [][]string
		for _, r := range e.Roles {
			rows = append(rows, []string{r.Role, orDash(r.Group)})
		}
		a.table([]string{"ROLE", "THROUGH GROUP"}, rows)
	}
	if len(e.Owners) > 0 {
		fmt.Fprintln(a.stdout)
		var rows [][]string
		for _, o := range e.Owners {
			rows = append(rows, []string{objectText(o.Object), strings.ToLower(o.Owner.Type.String()) + " " + o.Owner.Name, yesNo(o.Owned)})
		}
		a.table([]string{"OBJECT", "OWNER", "USER OWNS"}, rows)
	}
	if len(e.Grants) > 0 {
		fmt.Fprintln(a.stdout)
		var rows [][]string
		for _, gr := range e.Grants {
			rows = append(rows, []string{gr.Role, gr.Condition.String(), gr.Privilege.String(), objectText(gr.Object), yesNo(gr.Inherited)})
		}
		a.table([]string{"ROLE", "CONDITION", "PRIVILEGE", "ON", "INHERITED"}, rows)
	}
	if len(e.Tags) > 0 {
		fmt.Fprintln(a.stdout)
		var rows [][]string
		for _, t := range e.Tags {
			tag := t.Tag
			if len(t.Values) > 0 {
				tag += "=" + strings.Join(t.Values, ",")
			}
			if len(t.Policies) == 0 {
				rows = append(rows, []string{tag, objectText(t.Source), yesNo(t.Inherited), "-", "-", "-"})
			}
			for _, p := range t.Policies {
				rows = append(rows, []string{tag, objectText(t.Source), yesNo(t.Inherited), p.Policy, orDash(p.Selector.Value), p.Effect})
			}
		}
		a.table([]string{"TAG", "ASSIGNED ON", "INHERITED", "POLICY", "SELECTOR", "EFFECT"}, rows)
	}
	if rd := e.Read; rd != nil {
		fmt.Fprintln(a.stdout)
		filter := "none"
		switch {
		case rd.Conflict != "":
			filter = "refused: " + rd.Conflict
		case rd.Filtered && rd.Filter != "":
			filter = rd.Filter + " (" + orDash(rd.FilterPolicy) + ")"
		case rd.Filtered:
			filter = "filtered"
		}
		var masks []string
		for _, m := range rd.Masks {
			s := m.Column + " " + m.Mask
			if m.Policy != "" {
				s += " (" + m.Policy + ")"
			}
			masks = append(masks, s)
		}
		a.fields("read filter", filter, "read masks", orDash(strings.Join(masks, ", ")))
	}
}

// dryRunCommands are the governance commands that take --dry-run: instead
// of the write they preview what it would change (POST …/access/preview).
var dryRunCommands = map[string]bool{
	"tag create": true, "tag drop": true, "tag attach": true, "tag detach": true,
	"policy create": true, "policy alter": true, "policy enable": true, "policy disable": true, "policy delete": true,
	"policy attach": true, "policy detach": true, "grant": true, "revoke": true,
	"role create": true, "role drop": true, "user create": true, "user grant-role": true, "user revoke-role": true,
	"owner set": true,
}

// errDryRunDone ends a command whose write a dry run previewed instead.
var errDryRunDone = errors.New("dry run done")

// dryRunnable runs cmd with --dry-run (anywhere on the line) turning its
// write into a preview.
func dryRunnable(cmd func(a *admin, args []string) error) func(a *admin, args []string) error {
	return func(a *admin, args []string) error {
		rest := make([]string, 0, len(args))
		for _, s := range args {
			if s == "--dry-run" || s == "-dry-run" {
				a.dryRun = true
				continue
			}
			rest = append(rest, s)
		}
		err := cmd(a, rest)
		if errors.Is(err, errDryRunDone) {
			return nil
		}
		return err
	}
}

// previewWrite previews the write method path body would make: it names
// the catalog command the write proposes, asks metasrv what it would
// change, prints that, and returns errDryRunDone.
func (a *admin) previewWrite(method, path string, body any) error {
	typ, cmd, err := a.dryRunCommand(method, path, body)
	if err != nil {
		return err
	}
	p, err := a.lake("access", "preview")
	if err != nil {
		return err
	}
	req := api.PreviewRequest{Commands: []api.PreviewCommand{{Type: typ, Body: mustJSON(cmd)}}}
	var privs []catalog.PrivilegeChange
	var reads []catalog.ReadChange
	for offset := 0; ; {
		raw, err := a.send(a.ctx, "POST", p+"?"+url.Values{"offset": {strconv.Itoa(offset)}, "limit": {"10000"}}.Encode(), mustJSON(req), "")
		if err != nil {
			return err
		}
		var r api.PreviewResponse
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("decoding the preview: %w", err)
		}
		if a.json {
			a.stdout.Write(bytes.TrimSpace(raw))
			fmt.Fprintln(a.stdout)
		}
		privs, reads = append(privs, r.Preview.Privileges...), append(reads, r.Preview.Reads...)
		if r.Next == nil || *r.Next <= offset {
			break
		}
		offset = *r.Next
	}
	if a.json {
		return errDryRunDone
	}
	fmt.Fprintf(a.stdout, "dry run of %s: nothing was changed; it would change %d privileges and %d reads\n", typ, len(privs), len(reads))
	if len(privs) > 0 {
		fmt.Fprintln(a.stdout)
		tableOf(a, []string{"USER", "OBJECT", "PRIVILEGE", "CHANGE", "BEFORE", "AFTER"}, privs, func(c catalog.PrivilegeChange) []string {
			return []string{c.User, objectText(c.Object), c.Privilege.String(), map[bool]string{true: "gains", false: "loses"}[c.Gained], c.Before, c.After}
		})
	}
	rule := func(r catalog.ReadRule) string {
		switch {
		case !r.Allowed:
			return "no read"
		case r.Conflict != "":
			return "refused (conflicting policies)"
		}
		var parts []string
		if r.Filter != "" {
			parts = append(parts, "filter "+r.Filter)
		}
		for _, m := range r.Masks {
			parts = append(parts, "mask "+m.Column+" "+m.Mask)
		}
		if len(parts) == 0 {
			return "unfiltered"
		}
		return strings.Join(parts, "; ")
	}
	if len(reads) > 0 {
		fmt.Fprintln(a.stdout)
		tableOf(a, []string{"USER", "TABLE", "READ BEFORE", "READ AFTER"}, reads, func(c catalog.ReadChange) []string {
			return []string{c.User, c.Table, rule(c.Before), rule(c.After)}
		})
	}
	return errDryRunDone
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// dryRunCommand names the catalog command (preview type and body) that the
// write method path body proposes. The governance commands of
// dryRunCommands make only these writes.
func (a *admin) dryRunCommand(method, path string, body any) (string, map[string]any, error) {
	prefix, err := a.lake()
	if err != nil {
		return "", nil, err
	}
	rest, ok := strings.CutPrefix(path, prefix+"/")
	if !ok {
		return "", nil, fmt.Errorf("%w: %s: --dry-run previews governance commands of a metalake", errUsage, a.name)
	}
	segs := strings.Split(rest, "/")
	for i, s := range segs {
		if segs[i], err = url.PathUnescape(s); err != nil {
			return "", nil, err
		}
	}
	b := map[string]any{}
	if body != nil {
		if err := json.Unmarshal(mustJSON(body), &b); err != nil {
			return "", nil, err
		}
	}
	object := func(typ, name string) map[string]any { return map[string]any{"type": typ, "fullName": name} }
	route := method + " " + segs[0]
	switch {
	case route == "POST objects" && len(segs) == 4 && segs[3] == "tags":
		b["object"] = object(segs[1], segs[2])
		return "AssociateTagsV2", b, nil
	case route == "POST policies" && len(segs) == 1:
		if t, ok := b["policyType"].(string); ok {
			b["policyType"] = strings.ToLower(t)
		}
		return "CreatePolicy", b, nil
	case route == "PUT policies" && len(segs) == 2:
		return "AlterPolicy", map[string]any{"name": segs[1], "updates": b["updates"]}, nil
	case route == "PATCH policies" && len(segs) == 2:
		if b["enable"] == true {
			return "EnablePolicy", map[string]any{"name": segs[1]}, nil
		}
		return "DisablePolicy", map[string]any{"name": segs[1]}, nil
	case route == "DELETE policies" && len(segs) == 2:
		return "DropPolicy", map[string]any{"name": segs[1]}, nil
	case route == "PUT tags" && len(segs) == 4 && segs[2] == "policies":
		c := map[string]any{"tag": segs[1], "policy": segs[3]}
		if sel, ok := b["selector"].(map[string]any); ok {
			c["selector"] = map[string]any{"value": sel["value"]}
		}
		return "AttachPolicy", c, nil
	case route == "DELETE tags" && len(segs) == 4 && segs[2] == "policies":
		return "DetachPolicy", map[string]any{"tag": segs[1], "policy": segs[3]}, nil
	case route == "POST tags" && len(segs) == 1:
		return "CreateTag", b, nil
	case route == "DELETE tags" && len(segs) == 2:
		return "DropTag", map[string]any{"name": segs[1]}, nil
	case route == "PUT permissions" && len(segs) == 6 && segs[1] == "roles":
		typ := map[string]string{"grant": "GrantPrivileges", "revoke": "RevokePrivileges"}[segs[5]]
		return typ, map[string]any{"role": segs[2], "object": object(segs[3], segs[4]), "privileges": b["privileges"]}, nil
	case route == "PUT permissions" && len(segs) == 4 && segs[1] == "users":
		typ := map[string]string{"grant": "GrantRoles", "revoke": "RevokeRoles"}[segs[3]]
		return typ, map[string]any{"grantee": map[string]any{"type": "USER", "name": segs[2]}, "roles": b["roleNames"]}, nil
	case route == "POST roles" && len(segs) == 1:
		return "CreateRole", b, nil
	case route == "DELETE roles" && len(segs) == 2:
		return "DropRole", map[string]any{"name": segs[1]}, nil
	case route == "POST users" && len(segs) == 1:
		return "CreateUser", b, nil
	case route == "PUT owners" && len(segs) == 3:
		return "SetOwner", map[string]any{"object": object(segs[1], segs[2]), "owner": map[string]any{"type": b["type"], "name": b["name"]}}, nil
	}
	return "", nil, fmt.Errorf("%w: %s: --dry-run does not preview %s %s", errUsage, a.name, method, path)
}

// getByName is the command "KIND get NAME": GET of the object named NAME in
// the metalake's collection segment, printed by print.
func getByName[R any](segment string, print func(a *admin, r *R)) func(a *admin, args []string) error {
	return func(a *admin, args []string) error {
		pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
		if err != nil {
			return err
		}
		var r R
		return a.lakeRequest("GET", []string{segment, pos[0]}, nil, nil, &r, func() { print(a, &r) })
	}
}

// dropByName is the command "KIND drop NAME": DELETE of the object named
// NAME in the metalake's collection segment (what names its kind in the
// report).
func dropByName(segment, what string) func(a *admin, args []string) error {
	return func(a *admin, args []string) error {
		pos, err := a.parse(a.flags(), args, 1, 1, "NAME")
		if err != nil {
			return err
		}
		return a.lakeDrop([]string{segment, pos[0]}, nil, what+" "+pos[0])
	}
}
