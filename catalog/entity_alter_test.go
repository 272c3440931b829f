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

// entityUpdate is one update of AlterTag, AlterPolicy or AlterDomain in a
// form every kind converts from; a kind drops the fields it has no place
// for (a policy update has no property).
type entityUpdate struct{ typ, newName, newComment, property, value string }

func rename(n string) entityUpdate  { return entityUpdate{typ: "rename", newName: n} }
func comment(c string) entityUpdate { return entityUpdate{typ: "updateComment", newComment: c} }
func setProp(k, v string) entityUpdate {
	return entityUpdate{typ: "setProperty", property: k, value: v}
}
func removeProp(k string) entityUpdate { return entityUpdate{typ: "removeProperty", property: k} }

// entityState is what the alter updates change, as the snapshot reads it.
type entityState struct {
	name, comment string
	props         map[string]string
	audit         Audit
}

// entityKind is one kind of named entity that AlterTag, AlterPolicy and
// AlterDomain alter by the same rules.
type entityKind struct {
	name  string // as error messages name it
	props bool   // whether it has properties
	// rules maps a case's failure ("taken", "missing") to the kind's
	// DomainError rule for it (absent: a plain error).
	rules  map[string]string
	create func(name, comment string, props map[string]string) Command
	alter  func(name string, us []entityUpdate) Command
	read   func(s *Snapshot, name string) (entityState, bool)
}

var entityKinds = []entityKind{
	{
		name: "tag", props: true,
		create: func(n, c string, p map[string]string) Command {
			return CreateTag{Name: n, Comment: c, Properties: p}
		},
		alter: func(n string, us []entityUpdate) Command {
			return AlterTag{Name: n, Updates: convert(us, func(u entityUpdate) TagUpdate {
				return TagUpdate{u.typ, u.newName, u.newComment, u.property, u.value}
			})}
		},
		read: func(s *Snapshot, n string) (entityState, bool) {
			i, ok := s.Tag(n)
			return entityState{i.Name, i.Comment, i.Properties, i.Audit}, ok
		},
	},
	{
		name: "policy",
		create: func(n, c string, _ map[string]string) Command {
			return CreatePolicy{Name: n, Comment: c, Type: PolicyCustom, Content: PolicyContent{Custom: json.RawMessage(`{}`)}}
		},
		alter: func(n string, us []entityUpdate) Command {
			return AlterPolicy{Name: n, Updates: convert(us, func(u entityUpdate) PolicyUpdate {
				return PolicyUpdate{Type: u.typ, NewName: u.newName, NewComment: u.newComment}
			})}
		},
		read: func(s *Snapshot, n string) (entityState, bool) {
			i, ok := s.Policy(n)
			return entityState{i.Name, i.Comment, nil, i.Audit}, ok
		},
	},
	{
		name: "domain", props: true,
		rules: map[string]string{"taken": RuleDomainAlreadyExists, "missing": RuleNoSuchDomain},
		create: func(n, c string, p map[string]string) Command {
			return CreateDomain{Name: n, Comment: c, Properties: p, BackingTag: newTag("backing-" + n)}
		},
		alter: func(n string, us []entityUpdate) Command {
			return AlterDomain{Name: n, Updates: convert(us, func(u entityUpdate) DomainUpdate {
				return DomainUpdate{u.typ, u.newName, u.newComment, u.property, u.value}
			})}
		},
		read: func(s *Snapshot, n string) (entityState, bool) {
			i, ok := s.Domain(n)
			return entityState{i.Name, i.Comment, i.Properties, i.Audit}, ok
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
		updates []entityUpdate
		// On success: the entity's state under wantName (the absent names
		// in gone).
		wantName    string
		wantComment string
		wantProps   map[string]string
		gone        []string
		// On failure: the sentinel and the message's tail, with {kind} for
		// the kind's name and {KIND} for it in upper case; failure names a
		// failure some kinds answer with a DomainError (entityKind.rules).
		err     error
		errTail string
		failure string
	}{
		{name: "rename", updates: []entityUpdate{rename("a2")},
			wantName: "a2", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"a"}},
		{name: "rename to a name with a dot and a slash", updates: []entityUpdate{rename("x.y/z")},
			wantName: "x.y/z", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"a"}},
		{name: "rename to its own name is a no-op", updates: []entityUpdate{rename("a")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "rename twice", updates: []entityUpdate{rename("x"), rename("y")},
			wantName: "y", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"a", "x"}},
		{name: "rename away and back", updates: []entityUpdate{rename("x"), rename("a")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}, gone: []string{"x"}},
		{name: "rename to a taken name", updates: []entityUpdate{rename("b")},
			err: ErrAlreadyExists, errTail: `: {KIND} b`, failure: "taken"},
		{name: "rename to the name an earlier rename gave", target: "b", updates: []entityUpdate{rename("c"), rename("c")},
			wantName: "c", wantComment: "", gone: []string{"b"}},
		{name: "rename to an empty name", updates: []entityUpdate{rename("")},
			err: ErrInvalidName, errTail: `invalid name "": empty`},
		{name: "rename to a name with a control character", updates: []entityUpdate{rename("a\x01")},
			err: ErrInvalidName, errTail: "invalid name \"a\x01\": contains a control character"},
		{name: "rename to a name too long", updates: []entityUpdate{rename(long)},
			err: ErrInvalidName, errTail: "longer than 128 characters"},
		{name: "update the comment", updates: []entityUpdate{comment("new")},
			wantName: "a", wantComment: "new", wantProps: map[string]string{"k": "v"}},
		{name: "clear the comment", updates: []entityUpdate{comment("")},
			wantName: "a", wantComment: "", wantProps: map[string]string{"k": "v"}},
		{name: "the same comment still modifies", updates: []entityUpdate{comment("c0")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "the last comment wins", updates: []entityUpdate{comment("1"), comment("2")},
			wantName: "a", wantComment: "2", wantProps: map[string]string{"k": "v"}},
		{name: "set a property", updates: []entityUpdate{setProp("k2", "v2")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v", "k2": "v2"}},
		{name: "set a property on an entity without", target: "b", updates: []entityUpdate{setProp("k2", "v2")},
			wantName: "b", wantComment: "", wantProps: map[string]string{"k2": "v2"}},
		{name: "replace a property", updates: []entityUpdate{setProp("k", "w")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "w"}},
		{name: "set a property to the empty value", updates: []entityUpdate{setProp("k", "")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": ""}},
		{name: "set a property with an empty key", updates: []entityUpdate{setProp("", "v")},
			err: ErrInvalidArgument, errTail: "empty property key"},
		{name: "remove the last property", updates: []entityUpdate{removeProp("k")},
			wantName: "a", wantComment: "c0", wantProps: nil},
		{name: "remove a missing property is a no-op", updates: []entityUpdate{removeProp("nope")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "remove the empty key is a no-op", updates: []entityUpdate{removeProp("")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "remove then set the same key", updates: []entityUpdate{removeProp("k"), setProp("k", "w")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "w"}},
		{name: "set then remove the same key", updates: []entityUpdate{setProp("k2", "v2"), removeProp("k2")},
			wantName: "a", wantComment: "c0", wantProps: map[string]string{"k": "v"}},
		{name: "every update at once", updates: []entityUpdate{rename("z"), comment("new"), setProp("k2", "v2"), removeProp("k")},
			wantName: "z", wantComment: "new", wantProps: map[string]string{"k2": "v2"}, gone: []string{"a"}},
		{name: "an unknown update", updates: []entityUpdate{{typ: "frobnicate"}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "frobnicate"`},
		{name: "an unknown update's name is truncated", updates: []entityUpdate{{typ: strings.Repeat("u", 100)}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "` + strings.Repeat("u", 64) + `…"`},
		{name: "the update type is case-sensitive", updates: []entityUpdate{{typ: "Rename", newName: "x"}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "Rename"`},
		{name: "no updates", updates: nil,
			err: ErrInvalidArgument, errTail: "no updates"},
		{name: "all or nothing: a rename before a failing update", updates: []entityUpdate{rename("x"), {typ: "frobnicate"}},
			err: ErrInvalidArgument, errTail: `unknown {kind} update "frobnicate"`},
		{name: "all or nothing: a comment before a failing rename", updates: []entityUpdate{comment("new"), rename("")},
			err: ErrInvalidName, errTail: `invalid name "": empty`},
		{name: "a missing entity", target: "zz", updates: []entityUpdate{comment("new")},
			err: ErrNotFound, errTail: `: {KIND} zz`, failure: "missing"},
	}
	for _, k := range entityKinds {
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
					want := entityState{name: c.wantName, comment: c.wantComment, props: c.wantProps}
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
func convert[U any](us []entityUpdate, f func(entityUpdate) U) []U {
	var out []U
	for _, u := range us {
		out = append(out, f(u))
	}
	return out
}

func touchesProps(us []entityUpdate) bool { return firstPropUpdate(us) != "" }

func firstPropUpdate(us []entityUpdate) string {
	for _, u := range us {
		if u.typ == "setProperty" || u.typ == "removeProperty" {
			return u.typ
		}
	}
	return ""
}
