package catalog_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

var (
	bigOnce sync.Once
	big     *Snapshot
)

// bigTenant is the benchmark tenant, built once per process.
func bigTenant(b testing.TB) *Snapshot {
	bigOnce.Do(func() {
		start := time.Now()
		big = catalogtest.Generate(b, catalogtest.DefaultConfig())
		b.Logf("generated the 100k-table tenant in %v (generation %d)", time.Since(start), big.Generation())
	})
	return big
}

func randomTables(cfg catalogtest.Config, n int) []Object {
	r := rand.New(rand.NewPCG(1, 1))
	out := make([]Object, n)
	for i := range out {
		out[i] = Table(catalogtest.TableName(r.IntN(cfg.Catalogs), r.IntN(cfg.SchemasPerCatalog), r.IntN(cfg.TablesPerSchema)))
	}
	return out
}

// BenchmarkAuthorizeTableRead decides SELECT_TABLE on random tables of the
// 100k-table tenant (cold caches), reporting the median and p99 of per-call
// timings.
func BenchmarkAuthorizeTableRead(b *testing.B) {
	s := bigTenant(b)
	cfg := catalogtest.DefaultConfig()
	tables := randomTables(cfg, 1<<14)
	users := []string{catalogtest.UserName(2), catalogtest.UserName(42), catalogtest.UserName(777)}
	allowed := 0
	for i := range 1000 {
		if s.Authorize(users[i%3], PrivSelectTable, tables[i]).Allowed {
			allowed++
		}
	}
	b.Logf("allowed %d of 1000 sampled decisions", allowed)
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	timedLoop(b, func(i int) { s.Authorize(users[i%3], PrivSelectTable, tables[i&(len(tables)-1)]) })
}

// timedLoop runs call(i) for i = 0, 1, … under b.Loop and reports the
// median and p99 of the per-call times (of the first 2^20 calls).
func timedLoop(b *testing.B, call func(i int)) {
	times := make([]time.Duration, 0, 1<<20)
	i := 0
	for b.Loop() {
		t0 := time.Now()
		call(i)
		if len(times) < cap(times) {
			times = append(times, time.Since(t0))
		}
		i++
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns")
	b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
}

var (
	filterOnce sync.Once
	filterS    *Snapshot
	filterObjs []Object
)

// BenchmarkFilterVisible10496 filters 10,496 tables in 100 schemas for a
// user with USE on every schema (per-table checks), one without (decided per
// schema) and the metalake owner.
func BenchmarkFilterVisible10496(b *testing.B) {
	filterOnce.Do(func() {
		cfg := catalogtest.DefaultConfig()
		cfg.Catalogs, cfg.SchemasPerCatalog, cfg.TablesPerSchema = 1, 100, 105
		filterS = catalogtest.Generate(b, cfg)
		runtime.GC()
		for sc := 0; sc < 100; sc++ {
			for t := 0; t < 105 && len(filterObjs) < 10496; t++ {
				filterObjs = append(filterObjs, Table(catalogtest.TableName(0, sc, t)))
			}
		}
	})
	for _, u := range []string{catalogtest.UserName(2), catalogtest.UserName(3), catalogtest.Owner} {
		b.Run(u, func(b *testing.B) {
			b.Logf("%s sees %d of %d tables", u, len(filterS.FilterVisible(u, filterObjs)), len(filterObjs))
			b.ReportAllocs()
			for b.Loop() {
				filterS.FilterVisible(u, filterObjs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(filterObjs)), "ns/table")
		})
	}
}

// BenchmarkApplyTagAssignment applies one v2 tag assignment to a random
// table of the 100k-table tenant; B/op is the memory a new snapshot adds
// (path copies), not a copy of the state.
func BenchmarkApplyTagAssignment(b *testing.B) {
	s := bigTenant(b)
	cfg := catalogtest.DefaultConfig()
	tables := randomTables(cfg, 4096)
	runtime.GC()
	b.ReportAllocs()
	i := 0
	cur := s
	for b.Loop() {
		tv := []TagValue{{Name: catalogtest.TagName(i % cfg.Tags), Value: catalogtest.TagValue(i % cfg.ValuesPerTag)}}
		var c Command = AssociateTagsV2{Object: tables[i%len(tables)], TagsToAdd: tv}
		n, _, err := Apply(cur, c, Meta{Actor: catalogtest.Owner, Time: catalogtest.Epoch, Index: cur.Index() + 1})
		if err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			cur = s // keep the chain short: measure apply, not accumulated state
		} else {
			cur = n
		}
		i++
	}
}

// BenchmarkRowFiltersAndMasks derives the row filter and column masks of a
// table whose schema carries a row_filter tag and whose three columns carry
// column_mask tags (one exempting a role the caller holds), in a tenant of
// 10,000 tables with 1,000 tags and 200 policies.
func BenchmarkRowFiltersAndMasks(b *testing.B) {
	cfg := catalogtest.DefaultConfig()
	cfg.Catalogs, cfg.SchemasPerCatalog, cfg.TablesPerSchema, cfg.Policies = 1, 100, 100, 200
	s := catalogtest.Generate(b, cfg)
	table := catalogtest.TableName(0, 7, 3)
	user := catalogtest.UserName(5) // holds role005 and role035
	s = catalogtest.Apply(b, s, catalogtest.Owner,
		CreateTag{Name: "pii", AllowedValues: []string{"email", "ssn", "phone"}},
		CreateTag{Name: "region"},
		CreatePolicy{Name: "eu-only", Type: PolicyRowFilter, Enabled: true,
			Content: PolicyContent{Expression: "region = 'EU'", ExemptRoles: []string{catalogtest.RoleName(1)}}},
		CreatePolicy{Name: "hash-email", Type: PolicyColumnMask, Enabled: true, Content: PolicyContent{Mask: MaskHash}},
		CreatePolicy{Name: "redact-ssn", Type: PolicyColumnMask, Enabled: true, Content: PolicyContent{Mask: MaskRedact}},
		CreatePolicy{Name: "last4-phone", Type: PolicyColumnMask, Enabled: true,
			Content: PolicyContent{Mask: MaskLast4, ExemptRoles: []string{catalogtest.RoleName(35)}}},
		AttachPolicy{Tag: "region", Policy: "eu-only"},
		AttachPolicy{Tag: "pii", Policy: "hash-email", Selector: Selector{Value: "email"}},
		AttachPolicy{Tag: "pii", Policy: "redact-ssn", Selector: Selector{Value: "ssn"}},
		AttachPolicy{Tag: "pii", Policy: "last4-phone", Selector: Selector{Value: "phone"}},
		AssociateTagsV2{Object: Schema(catalogtest.SchemaName(0, 7)), TagsToAdd: []TagValue{{Name: "region"}}},
		AssociateTagsV2{Object: Column(table + ".col0"), TagsToAdd: []TagValue{{Name: "pii", Value: "email"}}},
		AssociateTagsV2{Object: Column(table + ".col1"), TagsToAdd: []TagValue{{Name: "pii", Value: "ssn"}}},
		AssociateTagsV2{Object: Column(table + ".col2"), TagsToAdd: []TagValue{{Name: "pii", Value: "phone"}}},
	)
	filter, masks, err := s.RowFiltersAndMasks(user, table)
	if err != nil || filter == "" || len(masks) != 2 {
		b.Fatalf("RowFiltersAndMasks = %q, %v, %v; want a filter and two masks", filter, masks, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.RowFiltersAndMasks(user, table)
	}
}
