package catalog_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"

	"lakegate/catalog"
)

func TestCheckDisplayName(t *testing.T) {
	for _, name := range []string{"sales", "my table", "a.b", "Ünïcödé", "日本語", "🔥", "x y z", "O'Brien",
		"می\u200cخواهم",                     // Persian: a non-joiner between two Arabic letters
		"क्\u200dष",                         // Devanagari: a joiner after a virama
		"👨\u200d👩\u200d👧", "❤\ufe0f\u200d🔥", // emoji sequences
	} {
		if err := catalog.CheckDisplayName(name); err != nil {
			t.Errorf("CheckDisplayName(%q) = %v, want nil", name, err)
		}
	}
	for _, tt := range []struct{ name, shown, reason string }{
		{"sales\u200b", "salesU+200B", "invisible"},              // zero-width space
		{"\u202egnp.exe", "U+202Egnp.exe", "direction-changing"}, // right-to-left override
		{"sa\u200cles", "saU+200Cles", "invisible"},              // non-joiner between Latin letters
		{"\u200cسلام", "U+200Cسلام", "invisible"},                // non-joiner with nothing before it
		{"a\u200d👩", "aU+200D👩", "invisible"},                    // joiner after a letter
		{"a\u2066b\u2069", "aU+2066bU+2069", "invisible"},        // isolates
		{"\ufeffsales", "U+FEFFsales", "invisible"},              // byte order mark
		{"a\u2028b", "aU+2028b", "invisible"},                    // line separator
		{"\u3164", "U+3164", "invisible"},                        // Hangul filler
		{"a\u00a0b", "aU+00A0b", "other than U+0020"},            // no-break space
		{"a\u3000b", "aU+3000b", "other than U+0020"},            // ideographic space
		{" sales", " sales", "begins or ends"},
		{"..", "..", "URL path"},
		{".", ".", "URL path"},
		{"sales ", "sales ", "begins or ends"},
	} {
		err := catalog.CheckDisplayName(tt.name)
		var ne *catalog.NameError
		if !errors.As(err, &ne) || !errors.Is(err, catalog.ErrInvalidName) {
			t.Errorf("CheckDisplayName(%q) = %v, want a *NameError", tt.name, err)
			continue
		}
		if ne.Name != tt.shown || !strings.Contains(ne.Reason, tt.reason) {
			t.Errorf("CheckDisplayName(%q): name %q, reason %q; want %q, %q", tt.name, ne.Name, ne.Reason, tt.shown, tt.reason)
		}
	}
}

func TestIntroducedNames(t *testing.T) {
	tbl := catalog.Object{Type: catalog.ObjectTable, Name: "c.s.t"}
	for _, tt := range []struct {
		cmd  catalog.Command
		want []string
	}{
		{catalog.CreateSchema{Name: "c.s"}, []string{"s"}},
		{catalog.CreateTable{Name: "c.s.t", Columns: []catalog.ColumnDef{{Name: "id"}, {Name: "v"}}}, []string{"t", "id", "v"}},
		{catalog.RenameObject{Object: tbl, NewName: "c.s.u"}, []string{"u"}},
		{catalog.CreateTag{Name: "dept", AllowedValues: []string{"hr", "finance"}}, []string{"dept", "hr", "finance"}},
		{catalog.AlterTag{Name: "dept", Updates: []catalog.TagUpdate{{Type: "rename", NewName: "team"}, {Type: "updateComment", NewComment: "x"}}}, []string{"team"}},
		{catalog.AssociateTagsV2{Object: tbl, TagsToAdd: []catalog.TagValue{{Name: "pii"}, {Name: "dept", Value: "hr"}}}, []string{"hr"}},
		{catalog.AttachPolicy{Tag: "dept", Policy: "p", Selector: catalog.Selector{Value: "finance"}}, []string{"finance"}},
		{catalog.CreateDomain{Name: "Trading", BackingTag: catalog.DomainTag{Name: "trading", Create: true}}, []string{"Trading", "trading"}},
		{catalog.DropObject{Object: tbl}, nil},
		{catalog.AssociateTagsV1{Object: tbl, TagsToAdd: []string{"pii"}}, nil},
	} {
		if got := catalog.IntroducedNames(tt.cmd); !slices.Equal(got, tt.want) {
			t.Errorf("IntroducedNames(%T) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

// FuzzCheckDisplayName: an accepted name has nothing the rule refuses, and
// a refusal's name can be printed as it is.
func FuzzCheckDisplayName(f *testing.F) {
	for _, s := range []string{"sales", " sales", "sales\u200b", "\u202e", "a\u00a0b", "日本", "\xff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if catalog.CheckDisplayText("text", name) == nil {
			for _, r := range name {
				joiner := r == '\u200c' || r == '\u200d' // where they shape letters
				if unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) && !joiner {
					t.Fatalf("text %q accepted holding %U", name, r)
				}
			}
		}
		err := catalog.CheckDisplayName(name)
		if err == nil {
			if strings.HasPrefix(name, " ") || strings.HasSuffix(name, " ") {
				t.Fatalf("accepted %q with a space at an end", name)
			}
			for _, r := range name {
				joiner := r == '\u200c' || r == '\u200d' // where they shape letters
				if (unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) && !joiner) || (unicode.IsSpace(r) && r != ' ') {
					t.Fatalf("accepted %q holding %U", name, r)
				}
			}
			return
		}
		var ne *catalog.NameError
		if !errors.As(err, &ne) {
			t.Fatalf("%q: %v is not a *NameError", name, err)
		}
		for _, r := range ne.Name {
			if unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || unicode.IsControl(r) || (unicode.IsSpace(r) && r != ' ') {
				t.Fatalf("%q: the error's name %q holds %U", name, ne.Name, r)
			}
		}
	})
}

func TestCheckDisplayText(t *testing.T) {
	for _, text := range []string{"region = 'EU'", "CASE WHEN a > 1\n  THEN 'x'\tELSE 'y' END", "name = 'می\u200cخواهم'"} {
		if err := catalog.CheckDisplayText("row filter", text); err != nil {
			t.Errorf("CheckDisplayText(%q) = %v", text, err)
		}
	}
	for text, want := range map[string]string{
		"user_id = current_user() \u202e-- ": "U+202E at byte offset 25",
		"region = 'EU\u200b'":                "U+200B at byte offset 12",
		"a = 1\u2028OR true":                 "U+2028 at byte offset 5",
	} {
		err := catalog.CheckDisplayText("row filter", text)
		if !errors.Is(err, catalog.ErrInvalidArgument) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "row filter") {
			t.Errorf("CheckDisplayText(%q) = %v, want ErrInvalidArgument naming %q", text, err, want)
		}
	}
}

func TestIntroducedExpressions(t *testing.T) {
	for _, tt := range []struct {
		cmd  catalog.Command
		want []string
	}{
		{catalog.CreatePolicy{Name: "p", Content: catalog.PolicyContent{Expression: "a = 1"}}, []string{"a = 1"}},
		{catalog.AlterPolicy{Name: "p", Updates: []catalog.PolicyUpdate{{Type: "rename", NewName: "q"},
			{Type: "updateContent", NewContent: &catalog.PolicyContent{Mask: "REDACT"}}}}, []string{"REDACT"}},
		{catalog.CreateTag{Name: "t"}, nil},
	} {
		if got := catalog.IntroducedExpressions(tt.cmd); !slices.Equal(got, tt.want) {
			t.Errorf("IntroducedExpressions(%T) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}
