package catalog_test

import (
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

func TestAuthorizeDoesNotAllocate(t *testing.T) {
	cfg := catalogtest.DefaultConfig()
	cfg.Catalogs, cfg.SchemasPerCatalog, cfg.TablesPerSchema = 2, 10, 10
	cfg.Tags, cfg.Policies, cfg.Roles, cfg.Grants, cfg.Users, cfg.Groups = 50, 40, 20, 300, 30, 5
	s := catalogtest.Generate(t, cfg)
	s = catalogtest.Apply(t, s, catalogtest.Owner, CreateTag{Name: "fin"},
		CreateDomain{Name: "Finance", BackingTag: DomainTag{Name: "fin"}},
		CreateDomain{Name: "Trading", BackingTag: DomainTag{Name: "trading", Create: true}, Parent: "Finance"},
		GrantPrivileges{Role: catalogtest.RoleName(1), Object: Domain("Finance"), Privileges: []PrivilegeCondition{{PrivUseDomain, Allow}}},
		GrantPrivileges{Role: catalogtest.RoleName(2), Object: Domain("Trading"), Privileges: []PrivilegeCondition{{PrivManageDomain, Deny}}})
	tables := randomTables(cfg, 64)
	for _, u := range []string{catalogtest.UserName(1), catalogtest.UserName(2), catalogtest.Owner, "nobody"} {
		i := 0
		n := testing.AllocsPerRun(200, func() {
			s.Authorize(u, PrivSelectTable, tables[i%len(tables)])
			s.Visible(u, tables[i%len(tables)])
			s.Authorize(u, PrivManageDomain, Domain("Trading"))
			s.Visible(u, Domain("Trading"))
			i++
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per Authorize+Visible", u, n)
		}
	}
}
