package catalog_test

import (
	"runtime"
	"sync"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

var (
	domainBenchOnce sync.Once
	domainBenchS    *Snapshot
)

// domainBenchTenant is a tenant whose catalog cat00 holds 50,000 tables
// (500 schemas of 100) and carries the tag "finance" backing the published
// domain Finance (subdomain Trading, backed by "trading" on one schema and
// 100 scattered tables); users 2 and 3 hold USE_DOMAIN on the metalake.
func domainBenchTenant(b testing.TB) *Snapshot {
	domainBenchOnce.Do(func() {
		cfg := catalogtest.DefaultConfig()
		cfg.Catalogs, cfg.SchemasPerCatalog, cfg.TablesPerSchema, cfg.ColumnsPerTable = 1, 500, 100, 1
		cfg.Tags, cfg.Policies, cfg.Roles, cfg.Grants, cfg.Users, cfg.Groups = 200, 100, 50, 2000, 100, 10
		s := catalogtest.Generate(b, cfg)
		cmds := []Command{
			CreateTag{Name: "finance"}, CreateTag{Name: "trading"},
			CreateDomain{Name: "Finance", BackingTag: DomainTag{Name: "finance"}},
			CreateDomain{Name: "Trading", BackingTag: DomainTag{Name: "trading"}, Parent: "Finance"},
			SetDomainStatus{Name: "Finance", Status: DomainPublished},
			SetDomainStatus{Name: "Trading", Status: DomainPublished},
			AssociateTagsV2{Object: Catalog(catalogtest.CatalogName(0)), TagsToAdd: []TagValue{{Name: "finance"}}},
			AssociateTagsV2{Object: Schema(catalogtest.SchemaName(0, 7)), TagsToAdd: []TagValue{{Name: "trading"}}},
			CreateRole{Name: "browse", Grants: []Grant{{Object{ObjectMetalake, "bench"}, PrivUseDomain, Allow}}},
			GrantRoles{Grantee: Owner{OwnerUser, catalogtest.UserName(2)}, Roles: []string{"browse"}},
			GrantRoles{Grantee: Owner{OwnerUser, catalogtest.UserName(3)}, Roles: []string{"browse"}},
		}
		for i := range 100 {
			cmds = append(cmds, AssociateTagsV2{Object: Table(catalogtest.TableName(0, (i*37)%500, i)), TagsToAdd: []TagValue{{Name: "trading"}}})
		}
		domainBenchS = catalogtest.Apply(b, s, catalogtest.Owner, cmds...)
		runtime.GC()
	})
	return domainBenchS
}

// BenchmarkDomainMembers50k lists the members of Finance (its catalog's
// 50,000 tables, rolled up with Trading's) for a user who sees some of the
// tables, one who sees others and the metalake owner, visibility filtering
// included.
func BenchmarkDomainMembers50k(b *testing.B) {
	s := domainBenchTenant(b)
	for _, u := range []string{catalogtest.UserName(2), catalogtest.UserName(3), catalogtest.Owner} {
		b.Run(u, func(b *testing.B) {
			ms, err := s.DomainMembers(u, "Finance", MemberQuery{})
			if err != nil {
				b.Fatal(err)
			}
			if u == catalogtest.Owner && len(ms) != 50000 {
				b.Fatalf("owner sees %d members", len(ms))
			}
			b.Logf("%s sees %d members", u, len(ms))
			b.ReportAllocs()
			for b.Loop() {
				s.DomainMembers(u, "Finance", MemberQuery{})
			}
		})
	}
}
