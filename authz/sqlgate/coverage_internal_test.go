package sqlgate

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
)

// minFunctionCoverage is the share (in percent) of MySQL 8.0's built-in
// functions (testdata/mysql_functions.tsv, those not excluded as touching
// the server, locks or keys) that the gate translates. It may only rise.
const minFunctionCoverage = 95.0

// constructs are the functions of the list the walker translates as
// constructs of their own rather than through the function table.
var constructs = map[string]bool{"case": true, "cast": true, "convert": true}

// parserNames are the names the parser gives functions whose SQL name it
// reads differently.
var parserNames = map[string]string{"char": "char_func", "insert": "insert_func", "database": sessionDatabase, "schema": sessionDatabase}

// mysqlFunction is one line of testdata/mysql_functions.tsv.
type mysqlFunction struct{ name, chapter, excluded string }

func readMySQLFunctions(t *testing.T) []mysqlFunction {
	t.Helper()
	f, err := os.Open("testdata/mysql_functions.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mysqlFunction
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("mysql_functions.tsv: %q: want name, chapter, excluded", line)
		}
		out = append(out, mysqlFunction{strings.ToLower(cols[0]), cols[1], cols[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFunctionCoverage measures how much of MySQL's function library the
// gate translates, holds it at minFunctionCoverage or above, and checks that
// every function it does not translate (excluded or not) is refused naming
// the function, never accepted by another path.
func TestFunctionCoverage(t *testing.T) {
	g := New(Config{})
	var counted, translated int
	var missing []string
	for _, fn := range readMySQLFunctions(t) {
		name := fn.name
		if n, ok := parserNames[name]; ok {
			name = n
		}
		_, inTable := functions[name]
		ok := inTable || constructs[fn.name]
		if fn.excluded == "" {
			counted++
			if ok {
				translated++
			} else {
				missing = append(missing, fn.name)
			}
		}
		if ok {
			continue
		}
		// A call with one argument: refused as unsupported (by name) or, for
		// a keyword the parser reads differently, as a syntax error; never
		// accepted.
		_, err := g.Parse("SELECT "+fn.name+"(1)", "s")
		switch {
		case err == nil:
			t.Errorf("%s is not in the function table, but SELECT %s(1) is accepted", fn.name, fn.name)
		case errors.Is(err, ErrUnsupported) && !strings.Contains(strings.ToLower(err.Error()), fn.name):
			t.Errorf("SELECT %s(1) is refused without naming it: %v", fn.name, err)
		}
	}
	share := 100 * float64(translated) / float64(counted)
	t.Logf("%d of %d functions translated (%.1f%%); not yet: %s", translated, counted, share, strings.Join(missing, " "))
	if share < minFunctionCoverage {
		t.Errorf("%.1f%% of MySQL's functions translated, below minFunctionCoverage %.1f%%", share, minFunctionCoverage)
	}
}
