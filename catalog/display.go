package catalog

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// CheckDisplayName checks the rule a name (or a tag value) given by a client
// follows beyond CheckNamePart and CheckEntityName: it looks like what it is.
// People grant, tag and review by the names they read, so a name that shows
// as another one ("sales" and "sales" followed by a zero-width space) or
// reorders the text around it (a right-to-left override) is refused: format
// characters (the zero-width U+200B–U+200D and U+FEFF, the bidirectional
// controls U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, and the rest of
// Unicode's category Cf), line and paragraph separators, the letters that
// print as blank (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0 and the
// Braille blank U+2800), white space other than U+0020, and U+0020 at either
// end; nor may a name be "." or "..", which clients resolve away in a URL
// path before the request is sent. The zero-width joiner and non-joiner
// pass where they shape the letters around them, as in Persian and the
// Indic scripts (see shapes). The error is a *NameError whose Name shows
// each refused character as its code point.
//
// Apply does not check it: names in logs and snapshots written before the
// rule stay valid, and a replica replaying them must reach the same state.
// metasrv checks it where requests enter, for IntroducedNames.
func CheckDisplayName(name string) error {
	if name == "." || name == ".." {
		// A URL path segment of its own that clients resolve away.
		return &NameError{Name: name, Reason: "cannot be addressed in a URL path"}
	}
	prev := rune(-1)
	for i, r := range name {
		var reason string
		switch {
		case hidden(r, prev, name, i):
			reason = "contains an invisible or direction-changing character"
		case unicode.IsSpace(r) && r != ' ':
			reason = "contains white space other than U+0020"
		case r == ' ' && (i == 0 || i == len(name)-1):
			reason = "begins or ends with white space"
		}
		prev = r
		if reason != "" {
			return &NameError{Name: showRefused(name), Reason: reason}
		}
	}
	return nil
}

// CheckDisplayText checks that text people review as code — a policy's row
// filter or mask expression — shows what it does: none of the characters
// CheckDisplayName refuses as invisible or direction-changing (a
// right-to-left override can make a comparison read as another one, the
// "Trojan Source" attack), with the same allowance for joiners. White space
// and line breaks are allowed. The error wraps ErrInvalidArgument and names
// the character by its code point and byte offset.
func CheckDisplayText(what, text string) error {
	prev := rune(-1)
	for i, r := range text {
		if hidden(r, prev, text, i) {
			return errf(ErrInvalidArgument, fmt.Sprintf("%s contains an invisible or direction-changing character (U+%04X at byte offset %d)", what, r, i))
		}
		prev = r
	}
	return nil
}

// hidden reports whether r, at byte i of s after prev, hides or reorders
// text: an invisible character (see invisible), unless it is a joiner that
// shapes the letters around it (Persian, the Indic scripts).
func hidden(r, prev rune, s string, i int) bool {
	if r == zwj || r == zwnj {
		return !shapes(r, prev, s[i+utf8.RuneLen(r):])
	}
	return invisible(r)
}

// The zero-width joiner and non-joiner.
const (
	zwj  = '\u200d'
	zwnj = '\u200c'
)

// shapes reports whether the joiner j, after prev and before rest, changes
// how the characters around it are drawn, as IDNA2008's CONTEXTJ rules (RFC
// 5892) allow it: after a virama, or, for the non-joiner, between two
// letters of a script whose letters join (Arabic and its kin; the RFC's
// joining types are approximated by the script); and, for the joiner,
// between the parts of an emoji sequence. Anywhere else it is invisible.
func shapes(j, prev rune, rest string) bool {
	if prev >= 0 && norm.NFC.PropertiesString(string(prev)).CCC() == viramaCCC {
		return true
	}
	next, _ := utf8.DecodeRuneInString(rest)
	switch j {
	case zwnj:
		return joiningLetter(prev) && joiningLetter(next)
	default: // zwj
		return emojiPart(prev) && unicode.Is(unicode.So, next)
	}
}

// emojiPart reports a character that may end an emoji before a joiner in
// an emoji sequence: a symbol, the emoji presentation selector U+FE0F, or
// a skin-tone modifier.
func emojiPart(r rune) bool {
	return unicode.Is(unicode.So, r) || r == 0xFE0F || (r >= 0x1F3FB && r <= 0x1F3FF)
}

// viramaCCC is the canonical combining class of a virama.
const viramaCCC = 9

// joiningLetter reports a letter of a script whose letters join.
func joiningLetter(r rune) bool {
	return unicode.IsLetter(r) && unicode.In(r, unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian,
		unicode.Mandaic, unicode.Manichaean, unicode.Psalter_Pahlavi, unicode.Adlam, unicode.Hanifi_Rohingya, unicode.Sogdian)
}

// invisible reports a format character, a line or paragraph separator, or
// a letter that prints as blank.
func invisible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// showRefused returns name with each character CheckDisplayName refuses
// anywhere, and each control character, written as its code point
// ("U+202E"), so that an error never carries one.
func showRefused(name string) string {
	var b strings.Builder
	for _, r := range name {
		if invisible(r) || (unicode.IsSpace(r) && r != ' ') || unicode.IsControl(r) || r == utf8.RuneError {
			fmt.Fprintf(&b, "U+%04X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// IntroducedNames returns the names cmd gives: those of the objects it
// creates and the new names of those it renames (for a full name, its last
// part; the others already exist), the columns it defines, and the tag
// values it assigns, allows or selects on.
// Names it only refers to are left out. CheckDisplayName applies to each.
func IntroducedNames(cmd Command) []string {
	names, _ := introducedNames(cmd)
	return names
}

// IntroducedExpressions returns the policy expressions cmd sets: the row
// filter or mask of a policy it creates or whose content it updates.
// CheckDisplayText applies to each.
func IntroducedExpressions(cmd Command) []string {
	content := func(c PolicyContent) []string {
		return nonEmpty([]string{c.Expression, c.Mask}, func(s string) string { return s })
	}
	switch c := cmd.(type) {
	case CreatePolicy:
		return content(c.Content)
	case AlterPolicy:
		var out []string
		for _, u := range c.Updates {
			if u.NewContent != nil {
				out = append(out, content(*u.NewContent)...)
			}
		}
		return out
	}
	return nil
}

// introducedNames is IntroducedNames; known is false for a command type it
// does not list (a test requires every type to be listed).
func introducedNames(cmd Command) (names []string, known bool) {
	last := func(full string) string { return full[strings.LastIndexByte(full, '.')+1:] }
	switch c := cmd.(type) {
	case CreateCatalog:
		return []string{c.Name}, true
	case CreateSchema:
		return []string{last(c.Name)}, true
	case CreateTable:
		return append([]string{last(c.Name)}, nonEmpty(c.Columns, func(cd ColumnDef) string { return cd.Name })...), true
	case RenameObject:
		return []string{last(c.NewName)}, true
	case AddColumn:
		return []string{c.Column.Name}, true
	case CreateUser:
		return []string{c.Name}, true
	case SyncIdentityUser:
		// The user it may create; the groups must exist already.
		return []string{c.Name}, true
	case CreateGroup:
		return []string{c.Name}, true
	case CreateRole:
		return []string{c.Name}, true
	case CreateTag:
		return append([]string{c.Name}, c.AllowedValues...), true
	case AlterTag:
		return nonEmpty(c.Updates, func(u TagUpdate) string { return u.NewName }), true
	case AssociateTagsV2:
		return nonEmpty(c.TagsToAdd, func(tv TagValue) string { return tv.Value }), true
	case CreatePolicy:
		return []string{c.Name}, true
	case AlterPolicy:
		return nonEmpty(c.Updates, func(u PolicyUpdate) string { return u.NewName }), true
	case AttachPolicy:
		if c.Selector.Value != "" {
			return []string{c.Selector.Value}, true
		}
		return nil, true
	case CreateDomain:
		names = []string{c.Name}
		if c.BackingTag.Create {
			names = append(names, c.BackingTag.Name)
		}
		if c.BackingTag.Value != "" {
			names = append(names, c.BackingTag.Value)
		}
		return names, true
	case CommitAccessLog:
		// The schema and the table when they are created.
		return append([]string{SystemSchema, AccessLogTable}, nonEmpty(c.Columns, func(cd ColumnDef) string { return cd.Name })...), true
	case AlterDomain:
		return nonEmpty(c.Updates, func(u DomainUpdate) string { return u.NewName }), true
	case SetDomainBackingTag:
		if c.BackingTag != nil && c.BackingTag.Value != "" {
			return []string{c.BackingTag.Value}, true
		}
		return nil, true
	case DropObject, SetOwner, DropUser, DropGroup, AddGroupMembers, RemoveGroupMembers, DropRole,
		GrantPrivileges, RevokePrivileges, GrantRoles, RevokeRoles, DropTag,
		AssociateTagsV1, EnablePolicy, DisablePolicy, DropPolicy, DetachPolicy,
		CommitTableVersion, AlterObject, SetDomainStatus, SetDomainParent,
		DetachDomain, DropDomain, SetRules:
		return nil, true
	}
	return nil, false
}

// nonEmpty returns the non-empty field of each of xs.
func nonEmpty[X any](xs []X, field func(X) string) []string {
	var out []string
	for _, x := range xs {
		if v := field(x); v != "" {
			out = append(out, v)
		}
	}
	return out
}
