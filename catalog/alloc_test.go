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
	tables := randomTables(cfg, 64)
	for _, u := range []string{catalogtest.UserName(1), catalogtest.UserName(2), catalogtest.Owner, "nobody"} {
		i := 0
		n := testing.AllocsPerRun(200, func() {
			s.Authorize(u, PrivSelectTable, tables[i%len(tables)])
			s.Visible(u, tables[i%len(tables)])
			i++
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per Authorize+Visible", u, n)
		}
	}
}
