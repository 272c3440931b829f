package catalog_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// alterUpdate is one update of AlterTag, AlterPolicy or AlterDomain in a
// form every kind converts from; a kind drops the fields it has no place
// for (a policy update has no property).
type alterUpdate struct{ typ, newName, newComment, property, value string }

func rename(n string) alterUpdate  { return alterUpdate{typ: "rename", newName: n} }
func comment(c string) alterUpdate { return alterUpdate{typ: "updateComment", newComment: c} }
func setProp(k, v string) alterUpdate {
	return alterUpdate{typ: "setProperty", property: k, value: v}
}
func removeProp(k string) alterUpdate { return alterUpdate{typ: "removeProperty", property: k} }

// alterState is what the alter updates change, as the snapshot reads it.
type alterState struct {
	name, comment string
	props         map[string]string
	audit         Audit
}

// alterKind is one kind of named entity that AlterTag, AlterPolicy and
// AlterDomain alter by the same rules.
type alterKind struct {
	name  string // as error messages name it
	props bool   // whether it has properties
	// rules maps a case's failure ("taken", "missing") to the kind's
	// DomainError rule for it (absent: a plain error).
	rules  map[string]string
	create func(name, comment string, props map[string]string) Command
	alter  func(name string, us []alterUpdate) Command
	read   func(s *Snapshot, name string) (alterState, bool)
}

var alterKinds = []alterKind{
	{
		name: "tag", props: true,
		create: func(n, c string, p map[string]string) Command {
			return CreateTag{Name: n, Comment: c, Properties: p}
		},
		alter: func(n string, us []alterUpdate) Command {
			return AlterTag{Name: n, Updates: convert(us, func(u alterUpdate) TagUpdate {
				return TagUpdate{u.typ, u.newName, u.newComment, u.property, u.value}
			})}
		},
		read: func(s *Snapshot, n string) (alterState, bool) {
			i, ok := s.Tag(n)
			return alterState{i.Name, i.Comment, i.Properties, i.Audit}, ok
		},
	},
	{
		name: "policy",
		create: func(n, c string, _ map[string]string) Command {
			return CreatePolicy{Name: n, Comment: c, Type: PolicyCustom, Content: PolicyContent{Custom: json.RawMessage(`{}`)}}
		},
		alter: func(n string, us []alterUpdate) Command {
			return AlterPolicy{Name: n, Updates: convert(us, func(u alterUpdate) PolicyUpdate {
				return PolicyUpdate{Type: u.typ, NewName: u.newName, NewComment: u.newComment}
			})}
		},
		read: func(s *Snapshot, n string) (alterState, bool) {
			i, ok := s.Policy(n)
			return alterState{i.Name, i.Comment, nil, i.Audit}, ok
		},
	},
	{
		name: "domain", props: true,
		rules: map[string]string{"taken": RuleDomainAlreadyExists, "missing": RuleNoSuchDomain},
		create: func(n, c string, p map[string]string) Command {
			return CreateDomain{Name: n, Comment: c, Properties: p, BackingTag: newTag("backing-" + n)}
		},
		alter: func(n string, us []alterUpdate) Command {
			return AlterDomain{Name: n, Updates: convert(us, func(u alterUpdate) DomainUpdate {
				return DomainUpdate{u.typ, u.newName, u.newComment, u.property, u.value}
			})}
		},
		read: func(s *Snapshot, n string) (alterState, bool) {
			i, ok := s.Domain(n)
			return alterState{i.Name, i.Comment, i.Properties, i.Audit}, ok
		},
	},
}

// TestEntityAlterRules pins, from one table, the rules that rename,
// updateComment, setProperty and removeProperty follow for every kind that
// takes them: tags, policies and domains. Each kind starts with "a"
// (comment "c0", property k=v where it has properties) and "b". A case
// whose updates touch properties fails for a kind without them as an
// unknown update.
func TestEntityAlterRules(t *testing.T) {
	long := strings.Repeat("n", MaxNameLen+1)
	cases := []struct {
		name    string
		target  string // "": "a"
		updates []alterUpdate
		// On success: the entity's state under wantName (the absent names
		// in gone).
		wantName    string
		wantComment string
		wantProps   map[string]string
		gone        []string
		// On failure: the sentinel and the message's tail, with {kind} for
		// the kind's name and {KIND} for it in upper case; failure names a
		// failure some kinds answer with a DomainError (alterKind.rules).
		err     error
		errTail string
		failure string
	}{
		{name: "rename", updates: []alterUpdate{rename("a2")},
			wantName: "a2", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"a"}},
		{name: "rename to a name with a dot and a slash", updates: []alterUpdate{rename("x.y/z")},
			wantName: "x.y/z", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"a"}},
		{name: "rename to its own name is a no-op", updates: []alterUpdate{rename("a")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "rename twice", updates: []alterUpdate{rename("x"), rename("y")},
			wantName: "y", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"a", "x"}},
		{name: "rename away and back", updates: []alterUpdate{rename("x"), rename("a")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"x"}},
		{name: "rename to a taken name", updates: []alterUpdate{rename("b")},
			err: ErrAlreadyExists, errTail: `: {KIND} b`, failure: "taken"},
		{name: "rename to the name an earlier rename gave", target: "b", updates: []alterUpdate{rename("c"), rename("c")},
			wantName: "c", wantComment: "", gone: []string{"b"}},
		{name: "rename to an empty name", updates: []alterUpdate{rename("")},
			err: ErrInvalidName, errTail: `invalid name "": empty`},
		{name: "rename to a name with a control character", updates: []alterUpdate{rename("a\x01")},
			err: ErrInvalidName, errTail: "invalid name \"a\x01\": contains a control character"},
		{name: "rename to a name too long", updates: []alterUpdate{rename(long)},
			err: ErrInvalidName, errTail: "longer than 128 characters"},
		{name: "update the comment", updates: []alterUpdate{comment("new")},
			wantName: "a", wantComment: "new", wantProps: map[string]string{"k": "v"}},
		{name: "clear the comment", updates: []alterUpdate{comment("")},
			wantName: "a", wantComment: "", wantProps: map[string]string{"k": "v"}},
		{name: "the same comment still modifies", updates: []alterUpdate{comment("c0")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "the last comment wins", updates: []alterUpdate{comment("1"), comment("2")},
			wantName: "a", wantComment: "2", wantProps: map[string]string{"k": "v"}},
		{name: "set a property", updates: []alterUpdate{setProp("k2", "v2")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v", "k2": "v2"}},
		{name: "set a property on an entity without", target: "b", updates: []alterUpdate{setProp("k2", "v2")},
			wantName: "b", wantComment: "", wantProps: map[string]string{"k2": "v2"}},
		{name: "replace a property", updates: []alterUpdate{setProp("k", "w")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "w"}},
		{name: "set a property to the empty value", updates: []alterUpdate{setProp("k", "")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": ""}},
		{name: "set a property with an empty key", updates: []alterUpdate{setProp("", "v")},
			err: ErrInvalidArgument, errTail: "empty property key"},
		{name: "remove the last property", updates: []alterUpdate{removeProp("k")},
			wantName: "a", wantComment: "c0", wantProps: nil},
		{name: "remove a missing property is a no-op", updates: []alterUpdate{removeProp("nope")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "remove the empty key is a no-op", updates: []alterUpdate{removeProp("")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "remove then set the same key", updates: []alterUpdate{removeProp("k"), setProp("k", "w")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "w"}},
		{name: "set then remove the same key", updates: []alterUpdate{setProp("k2", "v2"), removeProp("k2")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "every update at once", updates: []alterUpdate{rename("z"), comment("new"), setProp("k2", "v2"), removeProp("k")},
			wantName: "z", wantComment: "new", wantProps: map[string]string{"k2": "v2"}, gone: []string{"a"}},
		{name: "an unknown update", updates: []alterUpdate{{typ: "frobnicate"}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "frobnicate"`},
		{name: "an unknown update's name is truncated", updates: []alterUpdate{{typ: strings.Repeat("u", 100)}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "` + strings.Repeat("u", 64) + `…"`},
		{name: "the update type is case-sensitive", updates: []alterUpdate{{typ: "Rename", newName: "x"}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "Rename"`},
		{name: "no updates", updates: nil,
			err: ErrInvalidArgument, errTail: "no updates"},
		{name: "all or nothing: a rename before a failing update", updates: []alterUpdate{rename("x"), {typ: "frobnicate"}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "frobnicate"`},
		{name: "all or nothing: a comment before a failing rename", updates: []alterUpdate{comment("new"), rename("")},
			err: ErrInvalidName, errTail: `invalid name "": empty`},
		{name: "a missing entity", target: "zz", updates: []alterUpdate{comment("new")},
			err: ErrNotFound, errTail: `: {KIND} zz`, failure: "missing"},
	}
	for _, k := range alterKinds {
		s := catalogtest.Apply(t, catalogtest.New(t, "acme", admin), admin,
			k.create("a", "c0", map[string]string{"k": "v"}), k.create("b", "", nil))
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				target := c.target
				if target == "" {
					target = "a"
				}
				cmd := k.alter(target, c.updates)
				wantErr, wantTail, wantRule := c.err, c.errTail, k.rules[c.failure]
				if !k.props && touchesProps(c.updates) {
					wantErr, wantRule = ErrInvalidArgument, ""
					wantTail = `unknown {kind} update "` + firstPropUpdate(c.updates) + `"`
				}
				if wantErr != nil {
					mustFail(t, s, admin, cmd, wantErr)
					_, _, err := Apply(s, cmd, catalogtest.Meta(s, admin))
					tail := strings.NewReplacer("{kind}", k.name, "{KIND}", strings.ToUpper(k.name)).Replace(wantTail)
					if !strings.HasSuffix(err.Error(), tail) {
						t.Errorf("error %q does not end with %q", err, tail)
					}
					if got := ruleOf(err); got != wantRule {
						t.Errorf("rule = %q, want %q", got, wantRule)
					}
					return
				}
				m := catalogtest.Meta(s, admin)
				n, _, err := Apply(s, cmd, m)
				if err != nil {
					t.Fatalf("%s: %v", cmd.Op(), err)
				}
				// A snapshot restored from bytes reads the same.
				b, err := n.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				r, err := UnmarshalSnapshot(b)
				if err != nil {
					t.Fatal(err)
				}
				for _, sn := range []*Snapshot{n, r} {
					got, ok := k.read(sn, c.wantName)
					if !ok {
						t.Fatalf("%s %q is missing", k.name, c.wantName)
					}
					want := alterState{name: c.wantName, comment: c.wantComment, props: c.wantProps}
					if !k.props {
						want.props = nil
					}
					if got.name != want.name || got.comment != want.comment || !maps.Equal(got.props, want.props) ||
						(got.props == nil) != (want.props == nil) {
						t.Errorf("got %+v, want %+v", got, want)
					}
					if got.audit.LastModifier != admin || !got.audit.LastModifiedTime.Equal(m.Time) {
						t.Errorf("audit = %+v, want modified by %s at %v", got.audit, admin, m.Time)
					}
					for _, g := range c.gone {
						if _, ok := k.read(sn, g); ok {
							t.Errorf("%s %q still exists", k.name, g)
						}
					}
					if c.wantName != "b" && !slices.Contains(c.gone, "b") {
						if _, ok := k.read(sn, "b"); !ok {
							t.Errorf("%s %q is gone", k.name, "b")
						}
					}
				}
				// The original is untouched: "a" as created.
				if orig, ok := k.read(s, "a"); !ok || orig.comment != "c0" || orig.audit.LastModifier != "" {
					t.Errorf("the original snapshot changed: %+v", orig)
				}
			})
		}
	}
}

// convert converts updates to a kind's update type (nil for none).
func convert[U any](us []alterUpdate, f func(alterUpdate) U) []U {
	var out []U
	for _, u := range us {
		out = append(out, f(u))
	}
	return out
}

func touchesProps(us []alterUpdate) bool { return firstPropUpdate(us) != "" }

func firstPropUpdate(us []alterUpdate) string {
	for _, u := range us {
		if u.typ == "setProperty" || u.typ == "removeProperty" {
			return u.typ
		}
	}
	return ""
}

// TestEntityCreateRules pins, from one table, the checks CreateTag,
// CreatePolicy and CreateDomain share, in their order: the name, the
// property keys (for the kinds with properties), then whether the name is
// taken ("a" exists).
func TestEntityCreateRules(t *testing.T) {
	// outcome is a create's result: err nil is created; tail ends the
	// error's message, with {KIND} for the kind's name in upper case;
	// failure is as in TestEntityAlterRules.
	type outcome struct {
		err           error
		tail, failure string
	}
	taken := outcome{ErrAlreadyExists, ": {KIND} a", "taken"}
	emptyKey := outcome{ErrInvalidArgument, "empty property key", ""}
	cases := []struct {
		name   string
		create string
		props  map[string]string
		want   outcome
		// noProps is the outcome for a kind without properties, which
		// creates without them (nil: want).
		noProps *outcome
	}{
		{name: "a new name", create: "n", props: map[string]string{"k": "v"}},
		{name: "a taken name", create: "a", want: taken},
		{name: "an empty name", create: "", want: outcome{ErrInvalidName, `invalid name "": empty`, ""}},
		{name: "an invalid name with an empty property key", create: "a\x01", props: map[string]string{"": "v"},
			want: outcome{ErrInvalidName, "contains a control character", ""}},
		{name: "an empty property key", create: "n", props: map[string]string{"": "v"},
			want: emptyKey, noProps: &outcome{}},
		{name: "an empty property key on a taken name", create: "a", props: map[string]string{"": "v"},
			want: emptyKey, noProps: &taken},
	}
	for _, k := range alterKinds {
		s := catalogtest.Apply(t, catalogtest.New(t, "acme", admin), admin, k.create("a", "", nil))
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				props, want := c.props, c.want
				if !k.props {
					props = nil
					if c.noProps != nil {
						want = *c.noProps
					}
				}
				cmd := k.create(c.create, "", props)
				if want.err == nil {
					n := catalogtest.Apply(t, s, admin, cmd)
					if _, ok := k.read(n, c.create); !ok {
						t.Fatalf("%s %q is missing", k.name, c.create)
					}
					return
				}
				mustFail(t, s, admin, cmd, want.err)
				_, _, err := Apply(s, cmd, catalogtest.Meta(s, admin))
				if tail := strings.ReplaceAll(want.tail, "{KIND}", strings.ToUpper(k.name)); !strings.HasSuffix(err.Error(), tail) {
					t.Errorf("error %q does not end with %q", err, tail)
				}
				if got := ruleOf(err); got != k.rules[want.failure] {
					t.Errorf("rule = %q, want %q", got, k.rules[want.failure])
				}
			})
		}
	}
}

// TestAlterPolicyContent pins a policy's own update, updateContent, among
// the shared ones: its checks, its order with them and all or nothing.
func TestAlterPolicyContent(t *testing.T) {
	s := catalogtest.Apply(t, catalogtest.New(t, "acme", admin), admin,
		CreatePolicy{Name: "a", Type: PolicyColumnMask, Content: PolicyContent{Mask: MaskNull}})
	content := func(m string) *PolicyContent { return &PolicyContent{Mask: m} }
	cases := []struct {
		name     string
		updates  []PolicyUpdate
		err      error  // nil: applied
		errTail  string // on failure
		wantName string // on success
		wantMask string
	}{
		{name: "new content", updates: []PolicyUpdate{{Type: "updateContent", PolicyType: PolicyColumnMask, NewContent: content("redact")}},
			wantName: "a", wantMask: MaskRedact},
		{name: "another type", updates: []PolicyUpdate{{Type: "updateContent", PolicyType: PolicyRowFilter, NewContent: content("redact")}},
			err: ErrInvalidArgument, errTail: "policyType must be column_mask"},
		{name: "no content", updates: []PolicyUpdate{{Type: "updateContent", PolicyType: PolicyColumnMask}},
			err: ErrInvalidArgument, errTail: "newContent is required"},
		{name: "invalid content", updates: []PolicyUpdate{{Type: "updateContent", PolicyType: PolicyColumnMask, NewContent: content("a;b")}},
			err: ErrInvalidArgument, errTail: "column_mask policy: mask: catalog: invalid argument: ';' is not allowed"},
		{name: "rename then new content", updates: []PolicyUpdate{{Type: "rename", NewName: "b"},
			{Type: "updateContent", PolicyType: PolicyColumnMask, NewContent: content("hash")}},
			wantName: "b", wantMask: MaskHash},
		{name: "new content then a failing rename", updates: []PolicyUpdate{
			{Type: "updateContent", PolicyType: PolicyColumnMask, NewContent: content("hash")}, {Type: "rename"}},
			err: ErrInvalidName, errTail: `invalid name "": empty`},
		{name: "a failing content after a rename", updates: []PolicyUpdate{{Type: "rename", NewName: "b"},
			{Type: "updateContent", PolicyType: PolicyColumnMask}},
			err: ErrInvalidArgument, errTail: "newContent is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := AlterPolicy{Name: "a", Updates: c.updates}
			if c.err != nil {
				mustFail(t, s, admin, cmd, c.err)
				if _, _, err := Apply(s, cmd, catalogtest.Meta(s, admin)); !strings.HasSuffix(err.Error(), c.errTail) {
					t.Errorf("error %q does not end with %q", err, c.errTail)
				}
				return
			}
			n := catalogtest.Apply(t, s, admin, cmd)
			p, ok := n.Policy(c.wantName)
			if !ok || p.Content.Mask != c.wantMask {
				t.Fatalf("policy %q = %+v, %v; want mask %s", c.wantName, p, ok, c.wantMask)
			}
		})
	}
}
