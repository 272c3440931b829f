package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// metadataTypes are the object types tags and policies apply to, with the
// number of dot-separated parts of their full names.
var metadataTypes = map[string]int{"metalake": 1, "catalog": 1, "schema": 2, "table": 3, "column": 4}

// maxName bounds every name argument (names and full names).
const maxName = 1024

// ---- inputs ----

type listIn struct {
	Details bool `json:"details,omitempty" jsonschema:"return full objects instead of names (default false)"`
}

type getDomainIn struct {
	Name string `json:"name" jsonschema:"the domain's name (names are unique in the metalake across both levels)"`
}

type membersIn struct {
	Domain       string   `json:"domain" jsonschema:"the domain whose scope to list"`
	Domains      []string `json:"domains,omitempty" jsonschema:"select scopes: the domain itself and/or some of its visible subdomains; names that are neither are ignored, and if all are ignored the result is empty"`
	Types        []string `json:"types,omitempty" jsonschema:"keep members of these types (members are tables)"`
	NameContains string   `json:"name_contains,omitempty" jsonschema:"keep members whose full name contains this, case-insensitively"`
}

type leafIn struct {
	MetadataType     string `json:"metadata_type" jsonschema:"the object's type; domains hold tables only"`
	MetadataFullName string `json:"metadata_full_name" jsonschema:"the object's dot-joined full name, e.g. catalog.schema.table"`
}

type objectIn struct {
	MetadataType     string `json:"metadata_type" jsonschema:"the object's type"`
	MetadataFullName string `json:"metadata_full_name" jsonschema:"the object's dot-joined full name: catalog, catalog.schema, catalog.schema.table or catalog.schema.table.column (for a metalake: its name)"`
	Details          bool   `json:"details,omitempty" jsonschema:"return full objects instead of names (default false)"`
}

type tagIn struct {
	Tag string `json:"tag" jsonschema:"the tag's name"`
}

type taggedIn struct {
	Tag   string `json:"tag" jsonschema:"the tag's name"`
	Value string `json:"value,omitempty" jsonschema:"only objects whose assignment of the tag carries this value (exact match)"`
}

type tagPair struct {
	Name  string `json:"name" jsonschema:"the tag's name"`
	Value string `json:"value,omitempty" jsonschema:"the value of the assignment; omit for a valueless assignment"`
}

// tagValues is pairs as the REST API's name/value pairs (nil for none).
func tagValues(pairs []tagPair) []catalog.TagValue {
	var out []catalog.TagValue
	for _, p := range pairs {
		out = append(out, catalog.TagValue{Name: p.Name, Value: p.Value})
	}
	return out
}

type associateIn struct {
	MetadataType     string    `json:"metadata_type" jsonschema:"the object's type"`
	MetadataFullName string    `json:"metadata_full_name" jsonschema:"the object's dot-joined full name"`
	TagsToAdd        []tagPair `json:"tags_to_add,omitempty" jsonschema:"(name, value) pairs to assign"`
	TagsToRemove     []tagPair `json:"tags_to_remove,omitempty" jsonschema:"(name, value) pairs to unassign"`
}

type catalogIn struct {
	Catalog string `json:"catalog" jsonschema:"the catalog's name"`
}

type listSchemasIn struct {
	Catalog string `json:"catalog" jsonschema:"the catalog's name"`
	Details bool   `json:"details,omitempty" jsonschema:"return full objects instead of names (default false)"`
}

type schemaIn struct {
	Catalog string `json:"catalog" jsonschema:"the catalog's name"`
	Schema  string `json:"schema" jsonschema:"the schema's name"`
}

type listTablesIn struct {
	Catalog string `json:"catalog" jsonschema:"the catalog's name"`
	Schema  string `json:"schema" jsonschema:"the schema's name"`
	Details bool   `json:"details,omitempty" jsonschema:"return full objects (with columns) instead of names (default false)"`
}

type tableIn struct {
	Catalog string `json:"catalog" jsonschema:"the catalog's name"`
	Schema  string `json:"schema" jsonschema:"the schema's name"`
	Table   string `json:"table" jsonschema:"the table's name"`
}

type explainIn struct {
	User             string `json:"user" jsonschema:"the user whose access to explain (a user name of the metalake); only the tenant's admins may ask about another user than themselves"`
	Privilege        string `json:"privilege" jsonschema:"the privilege, e.g. SELECT_TABLE, MODIFY_TABLE, USE_SCHEMA, APPLY_TAG"`
	MetadataType     string `json:"metadata_type" jsonschema:"the object's type"`
	MetadataFullName string `json:"metadata_full_name" jsonschema:"the object's full name: dot-joined for a catalog, schema, table or column; the name itself for a metalake, tag, policy, role or domain"`
}

// explainTypes are the object types access is explained on, with the
// number of dot-separated parts of their full names (0: any name).
var explainTypes = map[string]int{"metalake": 0, "catalog": 1, "schema": 2, "table": 3, "column": 4,
	"tag": 0, "policy": 0, "role": 0, "domain": 0}

// ---- validation beyond the schemas ----

// checkName rejects an empty or overlong name, or one holding control
// characters.
func checkName(field, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return fmt.Errorf("%s is empty", field)
	case len(v) > maxName:
		return fmt.Errorf("%s is longer than %d bytes", field, maxName)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return fmt.Errorf("%s holds a control character", field)
	}
	return nil
}

// checkObject validates a (type, full name) pair.
func checkObject(typ, full string, allowed map[string]int) error {
	parts, ok := allowed[typ]
	if !ok {
		return fmt.Errorf("metadata_type %q is not one of %s", typ, strings.Join(typeNames(allowed), ", "))
	}
	if err := checkName("metadata_full_name", full); err != nil {
		return err
	}
	segs := strings.Split(full, ".")
	if typ == "metalake" || parts == 0 {
		return nil
	}
	if len(segs) != parts {
		return fmt.Errorf("metadata_full_name %q of a %s has %d dot-separated parts, want %d", full, typ, len(segs), parts)
	}
	for _, s := range segs {
		if s == "" {
			return fmt.Errorf("metadata_full_name %q has an empty part", full)
		}
	}
	return nil
}

func typeNames(m map[string]int) []string {
	var out []string
	for _, t := range []string{"metalake", "catalog", "schema", "table", "column"} {
		if _, ok := m[t]; ok {
			out = append(out, t)
		}
	}
	return out
}

func checkNames(kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if err := checkName(kv[i], kv[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (in *getDomainIn) validate() error { return checkName("name", in.Name) }
func (in *tagIn) validate() error       { return checkName("tag", in.Tag) }
func (in *catalogIn) validate() error   { return checkName("catalog", in.Catalog) }
func (in *listSchemasIn) validate() error {
	return checkName("catalog", in.Catalog)
}
func (in *schemaIn) validate() error { return checkNames("catalog", in.Catalog, "schema", in.Schema) }
func (in *listTablesIn) validate() error {
	return checkNames("catalog", in.Catalog, "schema", in.Schema)
}
func (in *tableIn) validate() error {
	return checkNames("catalog", in.Catalog, "schema", in.Schema, "table", in.Table)
}
func (in *taggedIn) validate() error { return checkName("tag", in.Tag) }

func (in *membersIn) validate() error {
	if err := checkName("domain", in.Domain); err != nil {
		return err
	}
	for _, d := range in.Domains {
		if err := checkName("domains[]", d); err != nil {
			return err
		}
	}
	for _, t := range in.Types {
		if !strings.EqualFold(t, "table") {
			return fmt.Errorf("types: %q is not a member type (members are tables)", t)
		}
	}
	if len(in.NameContains) > maxName {
		return fmt.Errorf("name_contains is longer than %d bytes", maxName)
	}
	return nil
}

func (in *leafIn) validate() error {
	in.MetadataType = strings.ToLower(in.MetadataType)
	return checkObject(in.MetadataType, in.MetadataFullName, map[string]int{"table": 3})
}

func (in *objectIn) validate() error {
	in.MetadataType = strings.ToLower(in.MetadataType)
	return checkObject(in.MetadataType, in.MetadataFullName, metadataTypes)
}

func (in *explainIn) validate() error {
	in.MetadataType = strings.ToLower(in.MetadataType)
	if err := checkName("user", in.User); err != nil {
		return err
	}
	in.Privilege = strings.ToUpper(strings.TrimSpace(in.Privilege))
	if in.Privilege == "" || len(in.Privilege) > 64 || strings.TrimLeft(in.Privilege, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
		return fmt.Errorf("privilege %q is not a privilege name such as SELECT_TABLE", in.Privilege)
	}
	if _, ok := explainTypes[in.MetadataType]; !ok {
		return fmt.Errorf("metadata_type %q is not one of metalake, catalog, schema, table, column, tag, policy, role, domain", in.MetadataType)
	}
	return checkObject(in.MetadataType, in.MetadataFullName, explainTypes)
}

func (in *associateIn) validate() error {
	in.MetadataType = strings.ToLower(in.MetadataType)
	if err := checkObject(in.MetadataType, in.MetadataFullName, metadataTypes); err != nil {
		return err
	}
	if len(in.TagsToAdd) == 0 && len(in.TagsToRemove) == 0 {
		return errors.New("nothing to do: tags_to_add and tags_to_remove are both empty")
	}
	for _, p := range append(append([]tagPair{}, in.TagsToAdd...), in.TagsToRemove...) {
		if err := checkName("tag name", p.Name); err != nil {
			return err
		}
		if len(p.Value) > maxName {
			return fmt.Errorf("the value of tag %q is longer than %d bytes", p.Name, maxName)
		}
	}
	return nil
}

// ---- schema tightening ----

// props applies f to each named property of js.
func props(js *jsonschema.Schema, f func(*jsonschema.Schema), names ...string) {
	for _, n := range names {
		if p := js.Properties[n]; p != nil {
			f(p)
		}
	}
}

func nonEmpty(p *jsonschema.Schema) {
	p.MinLength, p.MaxLength = new(1), new(maxName)
}

func enum(vals ...string) func(*jsonschema.Schema) {
	return func(p *jsonschema.Schema) {
		for _, v := range vals {
			p.Enum = append(p.Enum, v)
		}
	}
}

func names(fields ...string) func(*jsonschema.Schema) {
	return func(js *jsonschema.Schema) { props(js, nonEmpty, fields...) }
}

func objectSchema(types ...string) func(*jsonschema.Schema) {
	return func(js *jsonschema.Schema) {
		props(js, enum(types...), "metadata_type")
		props(js, nonEmpty, "metadata_full_name")
	}
}

// ---- registration ----

// register adds the tools of the selected tags.
func (s *server) register() {
	c := s.rest
	get := func(ctx context.Context, auth string, q url.Values, segs ...string) (answer, error) {
		body, err := c.call(ctx, auth, "GET", c.lakePath(segs...), q, nil, "")
		return answer{body: body}, err
	}
	details := func(d bool) url.Values {
		if d {
			return url.Values{"details": {"true"}}
		}
		return nil
	}
	summarized := func(what string, a answer, err error) (answer, error) {
		if err != nil {
			return a, err
		}
		a.summary = summarize(what, a.body)
		return a, nil
	}

	// domain
	addTool(s, toolSpec{tag: TagDomain, name: "list_domains", title: "List domains",
		desc: "List the business domains the caller may see, with name, comment, parent, status (draft|published) and backing tag. " +
			"Draft domains are visible only to their stewards."},
		func(ctx context.Context, auth string, _ struct{}) (answer, error) {
			a, err := get(ctx, auth, details(true), "domains")
			return summarized("domains", a, err)
		})
	addTool(s, toolSpec{tag: TagDomain, name: "get_domain_by_name", title: "Get a domain",
		desc:   "Get one domain by name. A domain the caller may not see (e.g. a draft) is reported as not found.",
		schema: names("name")},
		func(ctx context.Context, auth string, in getDomainIn) (answer, error) {
			a, err := get(ctx, auth, nil, "domains", in.Name)
			return summarized("domain", a, err)
		})
	addTool(s, toolSpec{tag: TagDomain, name: "list_metadata_by_domain", title: "List a domain's members",
		desc: "List the tables in a domain's scope (a top-level domain's scope includes its visible subdomains' members), " +
			"sorted by full name, each with the relations that put it there (direct, inherited, via_subdomain). " +
			"Tables the caller may not see are left out.",
		schema: func(js *jsonschema.Schema) {
			props(js, nonEmpty, "domain")
			props(js, func(p *jsonschema.Schema) {
				if p.Items != nil {
					nonEmpty(p.Items)
				}
			}, "domains")
			props(js, func(p *jsonschema.Schema) {
				if p.Items != nil {
					enum("table")(p.Items)
				}
			}, "types")
			props(js, func(p *jsonschema.Schema) { p.MaxLength = new(maxName) }, "name_contains")
		}},
		func(ctx context.Context, auth string, in membersIn) (answer, error) {
			q := url.Values{}
			for _, d := range in.Domains {
				q.Add("domains", d)
			}
			for _, t := range in.Types {
				q.Add("types", strings.ToLower(t))
			}
			if in.NameContains != "" {
				q.Set("nameContains", in.NameContains)
			}
			a, err := get(ctx, auth, q, "domains", in.Domain, "objects")
			return summarized("members", a, err)
		})
	addTool(s, toolSpec{tag: TagDomain, name: "list_domains_for_metadata", title: "List an object's domains",
		desc:   "List the visible domains whose scope contains a table, each with its relations (direct, inherited, via_subdomain).",
		schema: objectSchema("table")},
		func(ctx context.Context, auth string, in leafIn) (answer, error) {
			a, err := get(ctx, auth, details(true), "objects", in.MetadataType, in.MetadataFullName, "domains")
			return summarized("domains", a, err)
		})

	// tag
	addTool(s, toolSpec{tag: TagTag, name: "list_tags", title: "List tags",
		desc: "List the tags of the metalake the caller may see."},
		func(ctx context.Context, auth string, in listIn) (answer, error) {
			a, err := get(ctx, auth, details(in.Details), "tags")
			return summarized("tags", a, err)
		})
	addTool(s, toolSpec{tag: TagTag, name: "get_tag", title: "Get a tag",
		desc: "Get one tag: comment, properties and allowed values.", schema: names("tag")},
		func(ctx context.Context, auth string, in tagIn) (answer, error) {
			a, err := get(ctx, auth, nil, "tags", in.Tag)
			return summarized("tag", a, err)
		})
	addTool(s, toolSpec{tag: TagTag, name: "list_tags_of_metadata", title: "List an object's tags",
		desc: "List an object's effective tags (direct and inherited from its catalog or schema). " +
			"With details, each tag also has inherited and assignmentValues ([] means valueless).",
		schema: objectSchema(typeNames(metadataTypes)...)},
		func(ctx context.Context, auth string, in objectIn) (answer, error) {
			a, err := get(ctx, auth, details(in.Details), "objects", in.MetadataType, in.MetadataFullName, "tags")
			return summarized("tags", a, err)
		})
	addTool(s, toolSpec{tag: TagTag, name: "list_metadata_by_tag", title: "List a tag's objects",
		desc:   "List the objects that carry a tag directly, optionally only those whose assignment has a given value; objects the caller may not see are left out.",
		schema: names("tag")},
		func(ctx context.Context, auth string, in taggedIn) (answer, error) {
			var q url.Values
			if in.Value != "" {
				q = url.Values{"value": {in.Value}}
			}
			a, err := get(ctx, auth, q, "tags", in.Tag, "objects")
			return summarized("objects", a, err)
		})
	addTool(s, toolSpec{tag: TagTag, name: "associate_tag_with_metadata", title: "Tag or untag an object", write: true,
		desc: "Assign and/or unassign tags on an object, as (name, value) pairs (omit value for a valueless assignment). " +
			"Adding an object to a domain means assigning the domain's backing tag. Needs the object's access and APPLY_TAG. " +
			"Answers the object's direct tag names after the change.",
		schema: func(js *jsonschema.Schema) {
			objectSchema(typeNames(metadataTypes)...)(js)
			props(js, func(p *jsonschema.Schema) {
				if p.Items != nil {
					props(p.Items, nonEmpty, "name")
				}
			}, "tags_to_add", "tags_to_remove")
		}},
		func(ctx context.Context, auth string, in associateIn) (answer, error) {
			body := api.AssociateTagsV2Request{TagsToAdd: tagValues(in.TagsToAdd), TagsToRemove: tagValues(in.TagsToRemove)}
			resp, err := c.call(ctx, auth, "POST", c.lakePath("objects", in.MetadataType, in.MetadataFullName, "tags"), nil, body, v2JSON)
			if err != nil {
				return answer{}, err
			}
			a := answer{body: resp}
			a.summary = in.MetadataType + " " + in.MetadataFullName + " now carries " + summarize("direct tags", resp)
			return a, nil
		})

	// catalog, schema, table
	addTool(s, toolSpec{tag: TagCatalog, name: "list_catalogs", title: "List catalogs",
		desc: "List the catalogs the caller may see."},
		func(ctx context.Context, auth string, in listIn) (answer, error) {
			a, err := get(ctx, auth, details(in.Details), "catalogs")
			return summarized("catalogs", a, err)
		})
	addTool(s, toolSpec{tag: TagCatalog, name: "describe_catalog", title: "Describe a catalog",
		desc: "Get one catalog: type, provider, comment, properties, audit.", schema: names("catalog")},
		func(ctx context.Context, auth string, in catalogIn) (answer, error) {
			a, err := get(ctx, auth, nil, "catalogs", in.Catalog)
			return summarized("catalog", a, err)
		})
	addTool(s, toolSpec{tag: TagSchema, name: "list_schemas", title: "List schemas",
		desc: "List the schemas of a catalog the caller may see.", schema: names("catalog")},
		func(ctx context.Context, auth string, in listSchemasIn) (answer, error) {
			a, err := get(ctx, auth, details(in.Details), "catalogs", in.Catalog, "schemas")
			return summarized("schemas", a, err)
		})
	addTool(s, toolSpec{tag: TagSchema, name: "describe_schema", title: "Describe a schema",
		desc: "Get one schema: comment, properties, audit.", schema: names("catalog", "schema")},
		func(ctx context.Context, auth string, in schemaIn) (answer, error) {
			a, err := get(ctx, auth, nil, "catalogs", in.Catalog, "schemas", in.Schema)
			return summarized("schema", a, err)
		})
	addTool(s, toolSpec{tag: TagTable, name: "list_tables", title: "List tables",
		desc: "List the tables of a schema the caller may see.", schema: names("catalog", "schema")},
		func(ctx context.Context, auth string, in listTablesIn) (answer, error) {
			a, err := get(ctx, auth, details(in.Details), "catalogs", in.Catalog, "schemas", in.Schema, "tables")
			return summarized("tables", a, err)
		})
	addTool(s, toolSpec{tag: TagTable, name: "describe_table", title: "Describe a table",
		desc:   "Get one table: columns (name, type, nullable, comment), comment, properties, current version.",
		schema: names("catalog", "schema", "table")},
		func(ctx context.Context, auth string, in tableIn) (answer, error) {
			a, err := get(ctx, auth, nil, "catalogs", in.Catalog, "schemas", in.Schema, "tables", in.Table)
			return summarized("table", a, err)
		})

	// policy
	addTool(s, toolSpec{tag: TagPolicy, name: "list_policies", title: "List policies",
		desc: "List the policies the caller may view (row filters, column masks, access rules)."},
		func(ctx context.Context, auth string, in listIn) (answer, error) {
			a, err := get(ctx, auth, details(in.Details), "policies")
			return summarized("policies", a, err)
		})
	addTool(s, toolSpec{tag: TagPolicy, name: "list_policies_of_metadata", title: "List an object's policies",
		desc: "List the enabled policies in effect on an object, derived from its effective tags. With details, each also " +
			"has the tag it comes through, whether that tag is inherited, the selector and the object carrying the tag; " +
			"the tag, selector and object are left out when the caller may view none of the policy's tags. " +
			"Policies the caller may not view are left out (they are still enforced).",
		schema: objectSchema("catalog", "schema", "table", "column")},
		func(ctx context.Context, auth string, in objectIn) (answer, error) {
			if in.MetadataType == "metalake" {
				return answer{}, errors.New("invalid arguments: policies are derived for catalogs, schemas, tables and columns")
			}
			a, err := get(ctx, auth, details(in.Details), "objects", in.MetadataType, in.MetadataFullName, "policies")
			return summarized("policies", a, err)
		})
	addTool(s, toolSpec{tag: TagPolicy, name: "explain_access", title: "Explain a decision",
		desc: "Explain whether a user holds a privilege on an object, and the chain that decides it: the user's roles " +
			"(directly or through groups), the owners along the object's chain, the ALLOW and DENY grants of those roles " +
			"on the object or inherited from its schema, catalog or metalake, the effective tags with the " +
			"system_access_control policies they select, the rule that won (ownership, DENY over ALLOW, a grant, a tag " +
			"policy), and for an allowed SELECT_TABLE the row filter and masks a read applies; plus the principal map's " +
			"namespace gate of the gateway. The tenant's admins may ask about any user; anyone else only about " +
			"themselves, and an object they may not see is explained as missing.",
		schema: func(js *jsonschema.Schema) {
			props(js, nonEmpty, "user", "privilege", "metadata_full_name")
			props(js, enum("metalake", "catalog", "schema", "table", "column", "tag", "policy", "role", "domain"), "metadata_type")
		}},
		func(ctx context.Context, auth string, in explainIn) (answer, error) {
			q := url.Values{"user": {in.User}, "privilege": {in.Privilege}, "object": {in.MetadataType + ":" + in.MetadataFullName}}
			body, err := c.call(ctx, auth, "GET", c.lakePath("access", "explain"), q, nil, "")
			if err != nil {
				return answer{}, err
			}
			var e struct {
				Allowed bool   `json:"allowed"`
				Rule    string `json:"rule"`
			}
			_ = json.Unmarshal(body["explanation"], &e)
			verdict := "denied"
			if e.Allowed {
				verdict = "allowed"
			}
			return answer{body: body, summary: in.User + " " + in.Privilege + " on " + in.MetadataType + " " + in.MetadataFullName +
				": " + verdict + " (" + e.Rule + ")"}, nil
		})
}
