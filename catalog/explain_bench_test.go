package catalog_test

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

var (
	tenant10kOnce sync.Once
	tenant10k     *Snapshot
)

// tenant10kConfig is the tenant of the explain and preview benchmarks:
// 10,000 tables in 100 schemas of one catalog, 1,000 users, and the rest of
// the default configuration (1,000 tags, 500 policies, 200 roles, 5,000
// grants, 50 groups).
func tenant10kConfig() catalogtest.Config {
	cfg := catalogtest.DefaultConfig()
	cfg.Catalogs, cfg.SchemasPerCatalog, cfg.TablesPerSchema = 1, 100, 100
	return cfg
}

// benchTenant10k builds the tenant once, plus tag "bench" with a
// system_access_control policy (SELECT_TABLE for 20 roles) and a
// column_mask policy (HASH, exempting one role) attached, assigned nowhere
// yet.
func benchTenant10k(b *testing.B) *Snapshot {
	tenant10kOnce.Do(func() {
		start := time.Now()
		s := catalogtest.Generate(b, tenant10kConfig())
		var rs []string
		for r := 0; r < 200; r += 10 {
			rs = append(rs, catalogtest.RoleName(r))
		}
		tenant10k = catalogtest.Apply(b, s, catalogtest.Owner,
			CreateTag{Name: "bench"},
			CreatePolicy{Name: "bench-read", Type: PolicySystemAccessControl, Enabled: true,
				Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: rs}},
			CreatePolicy{Name: "bench-mask", Type: PolicyColumnMask, Enabled: true,
				Content: PolicyContent{Mask: MaskHash, ExemptRoles: []string{catalogtest.RoleName(0)}}},
			AttachPolicy{Tag: "bench", Policy: "bench-read"}, AttachPolicy{Tag: "bench", Policy: "bench-mask"})
		b.Logf("generated the 10k-table tenant in %v", time.Since(start))
		runtime.GC()
	})
	return tenant10k
}

// BenchmarkExplain explains SELECT_TABLE on random tables of the 10k-table
// tenant for three users, reporting the median and p99 of per-call timings.
func BenchmarkExplain(b *testing.B) {
	s := benchTenant10k(b)
	cfg := tenant10kConfig()
	tables := randomTables(cfg, 1<<12)
	users := []string{catalogtest.UserName(2), catalogtest.UserName(42), catalogtest.UserName(777)}
	b.ReportAllocs()
	timedLoop(b, func(i int) { s.Explain(users[i%3], PrivSelectTable, tables[i&(len(tables)-1)]) })
}

// BenchmarkAuthorize10k decides what BenchmarkExplain explains: SELECT_TABLE
// on random tables of the 10k-table tenant for three users.
func BenchmarkAuthorize10k(b *testing.B) {
	s := benchTenant10k(b)
	tables := randomTables(tenant10kConfig(), 1<<12)
	users := []string{catalogtest.UserName(2), catalogtest.UserName(42), catalogtest.UserName(777)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.Authorize(users[i%3], PrivSelectTable, tables[i&(len(tables)-1)])
		i++
	}
}

// BenchmarkPreviewTagAttach previews assigning tag "bench" (a
// system_access_control policy for 20 of the 200 roles, and a mask of every
// column) to one schema of 100 tables and to the catalog of all 10,000
// tables, for the 1,000 users of the 10k-table tenant: every reader's read
// of every table gains masks.
func BenchmarkPreviewTagAttach(b *testing.B) {
	s := benchTenant10k(b)
	r := rand.New(rand.NewPCG(3, 3))
	for _, tc := range []struct {
		name   string
		object func() Object
	}{
		{"schema", func() Object { return Schema(catalogtest.SchemaName(0, r.IntN(100))) }},
		{"catalog", func() Object { return Catalog(catalogtest.CatalogName(0)) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var d Diff
			b.ReportAllocs()
			for b.Loop() {
				c := AssociateTagsV2{Object: tc.object(), TagsToAdd: []TagValue{{Name: "bench"}}}
				var err error
				if d, err = Preview(s, catalogtest.Meta(s, catalogtest.Owner), Page{Limit: 1000}, c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(d.PrivilegesTotal), "changes")
			b.ReportMetric(float64(d.ReadsTotal), "reads")
			b.ReportMetric(float64(d.Objects), "objects")
			b.ReportMetric(float64(d.Users), "users")
		})
	}
}
