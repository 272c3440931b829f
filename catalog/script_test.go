package catalog_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scripts")

// TestScripts runs testdata/*.txt: blocks of one directive line, "----",
// the expected output and a blank line. Directives:
//
//	apply <actor> <Op> <json body>        → ok | error: <message>
//	authorize <user> <PRIVILEGE> <TYPE> <name> → allowed|denied: <reason>
//	visible <user> <TYPE> <name>          → true | false
//	tags <TYPE> <name>                    → one effective tag a line
//	policies <TYPE> <name>                → one derived policy a line
//	filter <user> <table>                 → row filter and masks
//	versions <table>                      → storage id, then one retained version a line
//	files                                 → ReferencedFiles, one a line
//	domains <user>                        → visible domains, one a line
//	members <user> <domain> [<scope>,…]   → DomainMembers, one a line
//	domainsof <user> <table>              → DomainsOf, one a line
//
// Run with -rewrite to regenerate the expected output.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	types := map[string]int{}
	for n, c := range samples() {
		types[fmt.Sprintf("%T", c)[len("catalog."):]] = n
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s := catalogtest.New(t, "acme", admin)
			var out strings.Builder
			blocks := strings.Split(strings.TrimRight(string(data), "\n")+"\n", "\n\n")
			for _, blk := range blocks {
				blk = strings.Trim(blk, "\n")
				if blk == "" {
					continue
				}
				lines := strings.Split(blk, "\n")
				var comments []string
				for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
					comments = append(comments, lines[0])
					lines = lines[1:]
				}
				if len(lines) == 0 {
					out.WriteString(strings.Join(comments, "\n") + "\n\n")
					continue
				}
				directive := lines[0]
				want := ""
				if i := indexOf(lines, "----"); i >= 0 {
					want = strings.Join(lines[i+1:], "\n")
				}
				var got string
				s, got = runDirective(t, s, directive, types)
				if !*rewrite && got != want {
					t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", file, directive, got, want)
				}
				for _, c := range comments {
					out.WriteString(c + "\n")
				}
				out.WriteString(directive + "\n----\n" + got + "\n\n")
			}
			if *rewrite {
				if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func runDirective(t *testing.T, s *Snapshot, line string, types map[string]int) (*Snapshot, string) {
	f := strings.Fields(line)
	obj := func(typ, name string) Object {
		ot, err := ParseObjectType(typ)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return Object{ot, name}
	}
	switch f[0] {
	case "apply":
		parts := strings.SplitN(line, " ", 4)
		n, ok := types[parts[2]]
		if !ok || len(parts) < 4 {
			t.Fatalf("bad apply line %q", line)
		}
		cmd, err := DecodeCommand([]byte(fmt.Sprintf(`{"v":1,"type":%d,"body":%s}`, n, parts[3])))
		if err != nil {
			return s, "error: " + err.Error()
		}
		ns, _, err := Apply(s, cmd, catalogtest.Meta(s, parts[1]))
		if err != nil {
			return ns, "error: " + err.Error()
		}
		return ns, "ok"
	case "authorize":
		p, err := ParsePrivilege(f[2])
		if err != nil {
			t.Fatal(err)
		}
		d := s.Authorize(f[1], p, obj(f[3], f[4]))
		if d.Allowed {
			return s, "allowed: " + d.Reason
		}
		return s, "denied: " + d.Reason
	case "visible":
		return s, fmt.Sprint(s.Visible(f[1], obj(f[2], f[3])))
	case "tags":
		tags, err := s.EffectiveTags(obj(f[1], f[2]))
		if err != nil {
			return s, "error: " + err.Error()
		}
		var lines []string
		for _, tg := range tags {
			lines = append(lines, fmt.Sprintf("%s=%v inherited=%v source=%v", tg.Name, tg.Values, tg.Inherited, tg.Source))
		}
		return s, strings.Join(lines, "\n")
	case "policies":
		ps, err := s.PoliciesOf(obj(f[1], f[2]))
		if err != nil {
			return s, "error: " + err.Error()
		}
		var lines []string
		for _, p := range ps {
			lines = append(lines, fmt.Sprintf("%s (%s) via %s%s on %v", p.Policy, p.Type, p.Tag, sel(p.Selector), p.Source))
		}
		return s, strings.Join(lines, "\n")
	case "versions":
		sid, vs, ok := s.TableVersions(f[1])
		if !ok {
			return s, "not found"
		}
		cur, _ := s.Object(Table(f[1]))
		out := fmt.Sprintf("storage %s, version %d", sid, cur.Version)
		for _, v := range vs {
			var cols, files []string
			for _, c := range v.Columns {
				cols = append(cols, c.Name+" "+c.Type)
			}
			for _, fl := range v.Files {
				files = append(files, strings.TrimPrefix(fl.Path, "tables/"+sid+"/"))
			}
			out += fmt.Sprintf("\nv%d by %s: %d rows (%s) files %s", v.Version, v.Actor, v.Rows,
				strings.Join(cols, ", "), strings.Join(files, " "))
		}
		return s, out
	case "files":
		var lines []string
		for sid, fl := range s.ReferencedFiles() {
			lines = append(lines, sid+" "+fl.Path)
		}
		if len(lines) == 0 {
			return s, "(none)"
		}
		return s, strings.Join(lines, "\n")
	case "domains":
		var lines []string
		for _, d := range s.ViewDomains(f[1]) {
			l := d.Name + " " + string(d.Status)
			if d.Parent != "" {
				l += " parent=" + d.Parent
			}
			if d.BackingTag != nil {
				l += " tag=" + d.BackingTag.Name
				if d.BackingTag.Value != "" {
					l += "=" + d.BackingTag.Value
				}
			}
			lines = append(lines, l+" owner="+d.Owner.Name)
		}
		return s, strings.Join(lines, "\n")
	case "members":
		var q MemberQuery
		if len(f) > 3 {
			q.Scopes = strings.Split(f[3], ",")
		}
		ms, err := s.DomainMembers(f[1], f[2], q)
		if err != nil {
			return s, "error: " + err.Error()
		}
		var lines []string
		for _, m := range ms {
			lines = append(lines, m.Object.Name+": "+fmtRels(m.Relations))
		}
		return s, strings.Join(lines, "\n")
	case "domainsof":
		ds, err := s.DomainsOf(f[1], Table(f[2]))
		if err != nil {
			return s, "error: " + err.Error()
		}
		var lines []string
		for _, d := range ds {
			lines = append(lines, d.Domain+": "+fmtRels(d.Relations))
		}
		return s, strings.Join(lines, "\n")
	case "filter":
		fl, masks, err := s.RowFiltersAndMasks(f[1], f[2])
		if err != nil {
			return s, "error: " + err.Error()
		}
		out := "filter: " + fl
		for _, m := range masks {
			out += fmt.Sprintf("\nmask %s: %s (%s)", m.Column, m.Mask, m.Policy)
		}
		return s, out
	}
	t.Fatalf("unknown directive %q", line)
	return s, ""
}

func sel(s Selector) string {
	if s.Value == "" {
		return ""
	}
	return "=" + s.Value
}
