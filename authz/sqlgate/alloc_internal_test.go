package sqlgate

import (
	"fmt"
	"testing"
)

// TestAllocsIndependentOfFunctionTable: the function table is built once;
// gating a query allocates the same whether the table has its real size or
// ten thousand more entries.
func TestAllocsIndependentOfFunctionTable(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not stable under the race detector (make race); make test runs this")
	}
	const sql = `SELECT concat(a, b), round(x, 2), coalesce(a, 'z'), upper(name), date_format(d, '%Y-%m'), count(*), sum(x) FROM t WHERE length(name) > 3 GROUP BY 1, 2, 3, 4, 5`
	g := New(Config{})
	run := func() {
		st, err := g.Parse(sql, "s")
		if err != nil {
			t.Fatal(err)
		}
		rel := map[TableRef]Relation{{Schema: "s", Name: "t"}: {Schema: "lg_rel", Name: "t_0", Columns: []string{"a", "b", "x", "name", "d"}}}
		if _, err := st.Render(rel); err != nil {
			t.Fatal(err)
		}
	}
	run()
	before := testing.AllocsPerRun(50, run)
	var added []string
	for i := range 10000 {
		name := fmt.Sprintf("zz_fake_fn_%d", i)
		functions[name] = fnSpec{duck: name, min: 0, max: -1, kind: fnScalar}
		added = append(added, name)
	}
	defer func() {
		for _, name := range added {
			delete(functions, name)
		}
	}()
	after := testing.AllocsPerRun(50, run)
	t.Logf("allocs per query: %.0f with %d functions, %.0f with %d", before, len(functions)-len(added), after, len(functions))
	if after > before {
		t.Fatalf("allocations grow with the function table: %.0f → %.0f", before, after)
	}
}
