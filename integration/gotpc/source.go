package gotpc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Query is one of go-tpc's 22 TPC-H queries.
type Query struct {
	Name string     // q1 … q22
	Text string     // go-tpc's text, unchanged
	Prec []string   // the precision class of each answer column: str, cnt, num, sum, avg, rat
	Want [][]string // the answer rows at scale factor 1, cell by cell
}

// Load reads the 22 queries, their answers and their precision classes
// from go-tpc's source in the module cache (tpch/query.go, answer.go and
// check.go), located with the go command. It fails unless every query is
// complete and every precision class known.
func Load() ([]Query, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pingcap/go-tpc").Output()
	if err != nil {
		return nil, fmt.Errorf("gotpc: locating github.com/pingcap/go-tpc: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "tpch")
	fset := token.NewFileSet()
	parse := func(name string) (*ast.File, error) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return nil, fmt.Errorf("go-tpc %s: %w", name, err)
		}
		return f, nil
	}
	texts, answers, precs := map[string]string{}, map[string][][]string{}, map[string][]string{}
	qf, err := parse("query.go")
	if err != nil {
		return nil, err
	}
	af, err := parse("answer.go")
	if err != nil {
		return nil, err
	}
	cf, err := parse("check.go")
	if err != nil {
		return nil, err
	}
	str := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil
	}
	valueSpecs := func(f *ast.File, each func(name string, v ast.Expr)) {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						each(n.Name, vs.Values[i])
					}
				}
			}
		}
	}
	isQuery := regexp.MustCompile(`^q([1-9]|1[0-9]|2[0-2])$`)
	valueSpecs(qf, func(name string, v ast.Expr) {
		if s, ok := str(v); ok && isQuery.MatchString(name) {
			texts[name] = s
		}
	})
	valueSpecs(af, func(name string, v ast.Expr) {
		q := strings.TrimSuffix(name, "a")
		rows, ok := v.(*ast.CompositeLit)
		if !ok || q == name || !isQuery.MatchString(q) {
			return
		}
		for _, r := range rows.Elts {
			row, ok := r.(*ast.CompositeLit)
			if !ok {
				continue
			}
			var cells []string
			for _, c := range row.Elts {
				s, _ := str(c)
				cells = append(cells, s)
			}
			answers[q] = append(answers[q], cells)
		}
	})
	valueSpecs(cf, func(name string, v ast.Expr) {
		m, ok := v.(*ast.CompositeLit)
		if name != "queryColPrecisions" || !ok {
			return
		}
		for _, e := range m.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			q, _ := str(kv.Key)
			list, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				continue
			}
			for _, p := range list.Elts {
				if id, ok := p.(*ast.Ident); ok {
					precs[q] = append(precs[q], id.Name)
				}
			}
		}
	})
	var qs []Query
	for i := 1; i <= 22; i++ {
		name := fmt.Sprintf("q%d", i)
		q := Query{Name: name, Text: texts[name], Prec: precs[name], Want: answers[name]}
		if q.Text == "" || len(q.Prec) == 0 || len(q.Want) == 0 {
			return nil, fmt.Errorf("go-tpc's source has no complete %s (text %d bytes, %d precisions, %d answer rows)",
				name, len(q.Text), len(q.Prec), len(q.Want))
		}
		for _, p := range q.Prec {
			if !slices.Contains([]string{"str", "cnt", "num", "sum", "avg", "rat"}, p) {
				return nil, fmt.Errorf("go-tpc %s: unknown precision class %q", name, p)
			}
		}
		qs = append(qs, q)
	}
	return qs, nil
}
