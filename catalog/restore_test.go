package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// restoreFixture is base with a record of every kind restore reads: a
// tag with allowed values on a column and on a table, a policy attached to
// it, a second policy, a group with a member and a role, grants on a tag,
// a policy, a domain and a table, and a domain with a subdomain.
func restoreFixture(t *testing.T) *Snapshot {
	t.Helper()
	return catalogtest.Apply(t, base(t), admin,
		CreateTag{Name: "pii", AllowedValues: []string{"email", "ssn"}},
		CreateTag{Name: "region"},
		CreatePolicy{Name: "mask", Type: PolicyColumnMask, Enabled: true, Content: PolicyContent{Mask: MaskRedact}},
		CreatePolicy{Name: "read", Type: PolicySystemAccessControl, Enabled: true,
			Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"reader"}}},
		AttachPolicy{Tag: "pii", Policy: "mask", Selector: Selector{Value: "ssn"}},
		AttachPolicy{Tag: "region", Policy: "read"},
		AssociateTagsV2{Object: Column("lake.hr.people.ssn"), TagsToAdd: []TagValue{{Name: "pii", Value: "ssn"}}},
		AssociateTagsV2{Object: Table("lake.fin.ledger"), TagsToAdd: []TagValue{{Name: "region"}}},
		CreateGroup{Name: "staff"}, AddGroupMembers{Group: "staff", Users: []string{"alice", "bob"}},
		GrantRoles{Grantee: Owner{OwnerGroup, "staff"}, Roles: []string{"reader"}},
		CreateDomain{Name: "sales", BackingTag: DomainTag{Name: "region"}},
		CreateDomain{Name: "sales/eu", BackingTag: DomainTag{Name: "eu", Create: true}, Parent: "sales"},
		grantTo("analyst", Tag("pii"), PrivApplyTag, Allow),
		grantTo("analyst", Policy("mask"), PrivApplyPolicy, Allow),
		grantTo("analyst", Domain("sales"), PrivUseDomain, Deny),
		grantTo("reader", Table("lake.fin.ledger"), PrivSelectTable, Allow),
	)
}

// restoreEdit edits the decoded JSON of a serialized snapshot.
type restoreEdit struct {
	t *testing.T
	f map[string]any
}

// rec returns the first record of list whose field prints as v.
func (e restoreEdit) rec(list, field string, v any) map[string]any {
	e.t.Helper()
	rs, _ := e.f[list].([]any)
	for _, r := range rs {
		if m := r.(map[string]any); fmt.Sprint(m[field]) == fmt.Sprint(v) {
			return m
		}
	}
	e.t.Fatalf("no %s with %s %v", list, field, v)
	return nil
}

// obj, tag, policy, domain, role, user and group return a record by id
// or name.
func (e restoreEdit) obj(id int) map[string]any     { return e.rec("objects", "id", id) }
func (e restoreEdit) tag(id int) map[string]any     { return e.rec("tags", "id", id) }
func (e restoreEdit) policy(id int) map[string]any  { return e.rec("policies", "id", id) }
func (e restoreEdit) domain(id int) map[string]any  { return e.rec("domains", "id", id) }
func (e restoreEdit) role(n string) map[string]any  { return e.rec("roles", "name", n) }
func (e restoreEdit) user(n string) map[string]any  { return e.rec("users", "name", n) }
func (e restoreEdit) group(n string) map[string]any { return e.rec("groups", "name", n) }
func (e restoreEdit) grants(role string) []any      { return e.role(role)["grants"].([]any) }
func (e restoreEdit) grant(role string, i int) map[string]any {
	return e.grants(role)[i].(map[string]any)
}

// TestRestoreRejects pins, from one table, what UnmarshalSnapshot says of
// each inconsistency restore checks, section by section in the order it
// checks them (objects, the tree, policies, tags, assignments, domains,
// users, groups, roles and their grants, role bindings, the linked tree);
// the cases with two faults pin that order. The fixture's ids: metalake 1,
// catalog lake 2, schemas fin 3 and hr 4, tables ledger 5 (columns 6, 7),
// budget 8 (column 9) and people 10 (columns 11, 12 ssn); roles 13–17;
// tags pii 18 (on column 12, policy mask attached) and region 19 (on
// ledger, policy read attached); policies mask 20 and read 21; domains
// sales 22 (backed by region) and sales/eu 24 (backed by eu 23); nextId 25.
func TestRestoreRejects(t *testing.T) {
	good, err := restoreFixture(t).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	header, body, _ := bytes.Cut(good, []byte("\n"))
	cases := []struct {
		name string
		edit func(e restoreEdit)
		want string // the message after "invalid snapshot: "
	}{
		{"unknown rule level", func(e restoreEdit) { e.f["rules"] = 99 }, "unknown rule level 99"},
		{"negative rule level", func(e restoreEdit) { e.f["rules"] = -1 }, "unknown rule level 0"},
		// Objects.
		{"object id reused", func(e restoreEdit) { e.obj(6)["id"] = 5 }, "object 5: bad id or type"},
		{"object id zero", func(e restoreEdit) { e.obj(6)["id"] = 0 }, "object 0: bad id or type"},
		{"object id at nextId", func(e restoreEdit) { e.obj(6)["id"] = 25 }, "object 25: bad id or type"},
		{"object of a type outside the tree", func(e restoreEdit) { e.obj(6)["type"] = "TAG" }, "object 6: bad id or type"},
		{"a second metalake", func(e restoreEdit) { e.obj(2)["type"] = "METALAKE" }, "metalake must have id 1"},
		{"a metalake that is not id 1", func(e restoreEdit) { e.obj(1)["type"] = "CATALOG" }, "metalake must have id 1"},
		{"metalake name differs", func(e restoreEdit) { e.f["metalake"] = "other" }, "bad metalake name"},
		{"object name with a dot", func(e restoreEdit) { e.obj(3)["name"] = "a.b" }, "object 3: bad name"},
		{"bad storage id", func(e restoreEdit) { e.obj(5)["storageId"] = "BAD" }, "table 5: bad storage id"},
		{"duplicate storage id", func(e restoreEdit) { e.obj(8)["storageId"] = "t0000000000000005" }, "object 8: duplicate storage id"},
		{"storage on a column", func(e restoreEdit) { e.obj(6)["storageId"] = "x" }, "object 6: storage on a non-table"},
		{"versions on a schema", func(e restoreEdit) { e.obj(3)["versions"] = []any{} }, "object 3: storage on a non-table"},
		{"unsorted tag values", func(e restoreEdit) {
			e.obj(12)["tags"].([]any)[0].(map[string]any)["values"] = []any{"ssn", "email"}
		}, "object 12: unsorted tags"},
		{"repeated tag", func(e restoreEdit) {
			e.obj(5)["tags"] = []any{map[string]any{"tag": 19}, map[string]any{"tag": 19}}
		}, "object 5: unsorted tags"},
		{"missing metalake", func(e restoreEdit) {
			os := e.f["objects"].([]any)
			e.f["objects"] = os[1:]
		}, "missing metalake"},
		{"a column under a schema", func(e restoreEdit) { e.obj(6)["parent"] = 3 }, "object 6: bad parent"},
		{"a parent that does not exist", func(e restoreEdit) { e.obj(3)["parent"] = 99 }, "object 3: bad parent"},
		// Policies and tags.
		{"policy name taken", func(e restoreEdit) { e.policy(21)["name"] = "mask" }, "policy 21: bad id or name"},
		{"policy with an object's id", func(e restoreEdit) { e.policy(21)["id"] = 5 }, "policy 5: bad id or name"},
		{"policy with a bad name", func(e restoreEdit) { e.policy(21)["name"] = "" }, "policy 21: bad id or name"},
		{"tag name taken", func(e restoreEdit) { e.tag(19)["name"] = "pii" }, "tag 19: bad id or name"},
		{"tag with a policy's id", func(e restoreEdit) { e.tag(19)["id"] = 20 }, "tag 20: bad id or name"},
		{"tag id at nextId", func(e restoreEdit) { e.tag(19)["id"] = 25 }, "tag 25: bad id or name"},
		{"allowed values with anyValue", func(e restoreEdit) { e.tag(19)["allowedValues"] = []any{"x"} }, "tag 19: allowed values with anyValue"},
		{"attachment of an unknown policy", func(e restoreEdit) {
			e.tag(18)["policies"].([]any)[0].(map[string]any)["policy"] = 99
		}, "tag 18: bad policy attachment"},
		{"attachments out of order", func(e restoreEdit) {
			e.tag(18)["policies"] = []any{map[string]any{"policy": 21, "selector": map[string]any{}},
				map[string]any{"policy": 20, "selector": map[string]any{}}}
		}, "tag 18: bad policy attachment"},
		{"an object with an unknown tag", func(e restoreEdit) {
			e.obj(5)["tags"].([]any)[0].(map[string]any)["tag"] = 99
		}, "object 5: unknown tag"},
		// Domains.
		{"domain with a tag's id", func(e restoreEdit) { e.domain(22)["id"] = 18 }, "domain 18: bad id or name"},
		{"domain with an unknown parent", func(e restoreEdit) { e.domain(24)["parent"] = 23 }, "domain 24: unknown parent"},
		{"domain with a bad status", func(e restoreEdit) { e.domain(22)["status"] = "LIVE" }, "domain 22: bad status"},
		// Users and groups.
		{"user with unsorted roles", func(e restoreEdit) { e.user("alice")["roles"] = []any{"use", "reader"} }, `user "alice": bad record`},
		{"user with a bad name", func(e restoreEdit) { e.user("alice")["name"] = "" }, `user "": bad record`},
		{"group with an unknown member", func(e restoreEdit) { e.group("staff")["members"] = []any{"alice", "zed"} }, `group "staff": unknown member`},
		{"group with unsorted members", func(e restoreEdit) { e.group("staff")["members"] = []any{"bob", "alice"} }, `group "staff": bad record`},
		// Roles and grants.
		{"role with an object's id", func(e restoreEdit) { e.role("other")["id"] = 5 }, `role "other": bad record`},
		{"role with a domain's id", func(e restoreEdit) { e.role("other")["id"] = 22 }, `role "other": bad record`},
		{"role id reused", func(e restoreEdit) { e.role("other")["id"] = 16 }, `role "other": bad record`},
		{"grant both allowed and denied", func(e restoreEdit) { e.grant("analyst", 0)["deny"] = []any{"APPLY_TAG"} }, `role "analyst": bad grant`},
		{"grant on an unknown tag", func(e restoreEdit) { e.grant("analyst", 0)["id"] = 99 }, `role "analyst": grant on unknown tag`},
		{"grant on an unknown policy", func(e restoreEdit) { e.grant("analyst", 1)["id"] = 18 }, `role "analyst": grant on unknown policy`},
		{"grant on an unknown domain", func(e restoreEdit) { e.grant("analyst", 2)["id"] = 99 }, `role "analyst": grant on unknown domain`},
		{"grant on an unknown object", func(e restoreEdit) { e.grant("reader", 0)["id"] = 99 }, `role "reader": grant on unknown object`},
		{"grant on an object of another type", func(e restoreEdit) { e.grant("reader", 0)["id"] = 3 }, `role "reader": grant on unknown object`},
		{"unbindable grant", func(e restoreEdit) { e.grant("reader", 0)["allow"] = []any{"CREATE_SCHEMA"} }, `role "reader": unbindable grant`},
		{"unsorted grants", func(e restoreEdit) {
			gs := e.grants("analyst")
			gs[0], gs[2] = gs[2], gs[0]
		}, `role "analyst": unsorted grants`},
		{"user with an unknown role", func(e restoreEdit) { e.user("bob")["roles"] = []any{"use", "zzz"} }, `user "bob": unknown role`},
		{"group with an unknown role", func(e restoreEdit) { e.group("staff")["roles"] = []any{"zzz"} }, `group "staff": unknown role`},
		// The linked tree.
		{"two tables of one name", func(e restoreEdit) { e.obj(8)["name"] = "ledger" }, "object 8: duplicate name"},
		{"a column missing from the column list", func(e restoreEdit) { e.obj(5)["columns"] = []any{"amount"} }, "table 5: column list mismatch"},
		{"a column list naming another", func(e restoreEdit) { e.obj(5)["columns"] = []any{"amount", "nope"} }, "table 5: column list mismatch"},
		// Two faults: the earlier section reports.
		{"bad parent before a bad policy", func(e restoreEdit) {
			e.obj(6)["parent"] = 3
			e.policy(21)["name"] = "mask"
		}, "object 6: bad parent"},
		{"policy before tag", func(e restoreEdit) {
			e.policy(21)["name"] = "mask"
			e.tag(19)["name"] = "pii"
		}, "policy 21: bad id or name"},
		{"tag before assignment", func(e restoreEdit) {
			e.tag(19)["allowedValues"] = []any{"x"}
			e.obj(12)["tags"].([]any)[0].(map[string]any)["tag"] = 99
		}, "tag 19: allowed values with anyValue"},
		{"assignment before domain", func(e restoreEdit) {
			e.obj(5)["tags"].([]any)[0].(map[string]any)["tag"] = 99
			e.domain(22)["status"] = "LIVE"
		}, "object 5: unknown tag"},
		{"domain before user", func(e restoreEdit) {
			e.domain(22)["status"] = "LIVE"
			e.user("alice")["name"] = ""
		}, "domain 22: bad status"},
		{"user before group", func(e restoreEdit) {
			e.user("alice")["name"] = ""
			e.group("staff")["members"] = []any{"bob", "alice"}
		}, `user "": bad record`},
		{"group before role", func(e restoreEdit) {
			e.group("staff")["members"] = []any{"bob", "alice"}
			e.role("other")["id"] = 5
		}, `group "staff": bad record`},
		{"role before role binding", func(e restoreEdit) {
			e.role("other")["id"] = 5
			e.user("bob")["roles"] = []any{"use", "zzz"}
		}, `role "other": bad record`},
		{"role binding before the linked tree", func(e restoreEdit) {
			e.group("staff")["roles"] = []any{"zzz"}
			e.obj(8)["name"] = "ledger"
		}, `group "staff": unknown role`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := restoreEdit{t: t}
			if err := json.Unmarshal(body, &e.f); err != nil {
				t.Fatal(err)
			}
			c.edit(e)
			edited, err := json.Marshal(e.f)
			if err != nil {
				t.Fatal(err)
			}
			b := append(append(slices.Clone(header), '\n'), edited...)
			_, err = UnmarshalSnapshot(b)
			if !errors.Is(err, ErrInvalidSnapshot) || !strings.HasSuffix(err.Error(), "invalid snapshot: "+c.want) {
				t.Fatalf("UnmarshalSnapshot = %v, want %q", err, c.want)
			}
		})
	}
	// The fixture itself restores, through the same decoding, to the same bytes.
	var f map[string]any
	if err := json.Unmarshal(body, &f); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(f)
	r, err := UnmarshalSnapshot(append(append(slices.Clone(header), '\n'), again...))
	if err != nil {
		t.Fatalf("the unedited fixture: %v", err)
	}
	if b, _ := r.MarshalBinary(); !bytes.Equal(b, good) {
		t.Fatalf("the unedited fixture restores differently:\n%s\n%s", b, good)
	}
}
