package sqlgate_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"lakegate/authz/sqlgate"
)

// join5 is a 5-table join of about 600 bytes.
const join5 = `SELECT o.order_id, o.order_date, c.customer_name, c.segment, p.product_name, p.category,
       s.supplier_name, s.country, sum(l.quantity * l.unit_price) AS revenue, count(DISTINCT o.order_id) AS orders
FROM sales.orders o
JOIN sales.customers c ON o.customer_id = c.customer_id
JOIN sales.lineitems l ON l.order_id = o.order_id
JOIN sales.products p ON p.product_id = l.product_id
JOIN sales.suppliers s ON s.supplier_id = p.supplier_id
WHERE o.order_date >= '2024-01-01' AND o.status IN ('shipped', 'delivered') AND c.segment <> 'internal'
GROUP BY o.order_id, o.order_date, c.customer_name, c.segment, p.product_name, p.category, s.supplier_name, s.country
ORDER BY revenue DESC LIMIT 100`

func BenchmarkGate5TableJoin(b *testing.B) {
	g := sqlgate.New(sqlgate.Config{})
	allowed := map[string]bool{"sales": true}
	b.SetBytes(int64(len(join5)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := g.Parse(join5, "sales")
		if err != nil {
			b.Fatal(err)
		}
		rel := make(map[sqlgate.TableRef]sqlgate.Relation)
		for _, r := range st.Tables() {
			if !allowed[r.Schema] { // trivial namespace gate
				b.Fatal("denied")
			}
			rel[r] = sqlgate.Relation{Schema: "lg_rel", Name: "t_" + r.Name}
		}
		if _, err := st.Render(rel); err != nil {
			b.Fatal(err)
		}
	}
}

// join5Columns are the columns of join5's tables.
var join5Columns = map[string][]string{
	"orders":    {"order_id", "order_date", "customer_id", "status", "region", "note"},
	"customers": {"customer_id", "customer_name", "segment", "email", "phone", "region"},
	"lineitems": {"order_id", "product_id", "quantity", "unit_price"},
	"products":  {"product_id", "product_name", "category", "supplier_id"},
	"suppliers": {"supplier_id", "supplier_name", "country", "contact"},
}

// join5Policies are 3 row filters and 6 masks over join5's tables.
var join5Policies = map[string]struct {
	filter string
	masks  map[string]string
}{
	"orders":    {filter: "region = 'EU' OR has_role('global')", masks: map[string]string{"note": "REDACT"}},
	"customers": {filter: "segment <> 'internal' AND region = current_tenant()", masks: map[string]string{"email": "HASH", "phone": "LAST4", "customer_name": "concat(left({column}, 1), '***')"}},
	"suppliers": {filter: "country IN ('DE', 'FR') OR supplier_name = current_user()", masks: map[string]string{"contact": "NULL", "supplier_name": "REDACT"}},
}

// BenchmarkGate5TableJoinPolicies is BenchmarkGate5TableJoin with 3 row
// filters and 6 column masks applied, prepared as the gateway does for
// every statement (a cache lookup once prepared). The difference of the two
// is the cost policies add to the gate.
func BenchmarkGate5TableJoinPolicies(b *testing.B) {
	g := sqlgate.New(sqlgate.Config{})
	caller := sqlgate.Caller{User: "alice@acme", Tenant: "acme", Roles: []string{"analyst", "reader"}}
	b.SetBytes(int64(len(join5)))
	b.ReportAllocs()
	for b.Loop() {
		st, err := g.Parse(join5, "sales")
		if err != nil {
			b.Fatal(err)
		}
		rel := make(map[sqlgate.TableRef]sqlgate.Relation)
		for _, r := range st.Tables() {
			cols := join5Columns[r.Name]
			types := make([]string, len(cols))
			for i := range types {
				types[i] = "VARCHAR"
			}
			x := sqlgate.Relation{Schema: "lg_rel", Name: "t_" + r.Name, Columns: cols, Types: types}
			if p, ok := join5Policies[r.Name]; ok {
				x.Policy = &sqlgate.Policy{Caller: caller, Masks: make([]*sqlgate.Mask, len(cols))}
				if x.Policy.Filter, err = g.PrepareRowFilter(p.filter, cols, sqlgate.DialectDuckDB); err != nil {
					b.Fatal(err)
				}
				for c, m := range p.masks {
					if x.Policy.Masks[slices.Index(cols, c)], err = g.PrepareMask(m, c, cols, sqlgate.DialectDuckDB); err != nil {
						b.Fatal(err)
					}
				}
			}
			rel[r] = x
		}
		if _, err := st.Render(rel); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCorpus gates every query of the vendored dialect corpus: parse,
// namespace check, fake relations for its tables, translate and render (with
// the lexical check). One op is one pass over the corpus; the per-query
// median and p99 are reported as metrics.
func BenchmarkCorpus(b *testing.B) { benchCorpus(b, nil) }

// BenchmarkCorpusTyped is BenchmarkCorpus with column types on the
// relations, so that the type pass infers types and the typed forms
// print.
func BenchmarkCorpusTyped(b *testing.B) { benchCorpus(b, benchTypes) }

func benchCorpus(b *testing.B, types []string) {
	queries := corpusQueries(b)
	g := sqlgate.New(sqlgate.Config{})
	gate := func(q string) {
		st, err := g.Parse(q, "sales")
		if err != nil {
			return
		}
		refs := st.Tables()
		rel := make(map[sqlgate.TableRef]sqlgate.Relation, len(refs))
		for i, r := range refs {
			rel[r] = sqlgate.Relation{Schema: "lg_rel", Name: "t_" + strconv.Itoa(i), Columns: benchColumns, Types: types}
		}
		_, _ = st.Render(rel)
	}
	var samples []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		for _, q := range queries {
			t0 := time.Now()
			gate(q)
			samples = append(samples, time.Since(t0))
		}
	}
	slices.Sort(samples)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(samples[len(samples)/2]), "median-µs/query")
	b.ReportMetric(us(samples[len(samples)*99/100]), "p99-µs/query")
	b.ReportMetric(float64(len(queries)), "queries/op")
}

// benchColumns are the columns of the corpus tables, so alias checks pass.
var benchColumns = []string{"id", "name", "country", "tier", "credit_limit", "customer_id", "order_date", "amount", "status", "product_id", "quantity", "price", "category"}

// benchTypes are engine types of benchColumns.
var benchTypes = []string{"BIGINT", "VARCHAR", "VARCHAR", "VARCHAR", "DECIMAL(10,2)", "BIGINT", "DATE", "DOUBLE", "VARCHAR", "BIGINT", "BIGINT", "DECIMAL(10,2)", "VARCHAR"}
