package catalog_test

import (
	"math/rand/v2"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// TestFilterVisibleBatches checks FilterVisible against Visible on inputs that
// exercise its batching: long runs of one schema (more than one lookup batch
// and more than one bitmap word), interleaved parents, repeated and missing
// names, malformed table names and non-table objects, in sorted and shuffled
// order.
func TestFilterVisibleBatches(t *testing.T) {
	cfg := catalogtest.DefaultConfig()
	cfg.Catalogs, cfg.SchemasPerCatalog, cfg.TablesPerSchema = 2, 4, 150
	cfg.Tags, cfg.Policies, cfg.Roles, cfg.Grants, cfg.Users, cfg.Groups = 40, 40, 10, 400, 20, 3
	s := catalogtest.Generate(t, cfg)
	var objs []Object
	for c := 0; c < cfg.Catalogs; c++ {
		objs = append(objs, Catalog(catalogtest.CatalogName(c)))
		for sc := 0; sc < cfg.SchemasPerCatalog; sc++ {
			objs = append(objs, Schema(catalogtest.SchemaName(c, sc)))
			for tb := 0; tb < cfg.TablesPerSchema+5; tb++ { // 5 missing per schema
				objs = append(objs, Table(catalogtest.TableName(c, sc, tb)))
			}
			objs = append(objs, Column(catalogtest.TableName(c, sc, 1)+".col0"))
		}
	}
	sch := catalogtest.SchemaName(0, 1)
	objs = append(objs, Table("nodots"), Table(sch+"."), Table(sch+".tbl001.x"), Table("cat00..tbl001"),
		Table(catalogtest.TableName(0, 1, 1)), Table("cat99.sch000.tbl000"), Object{ObjectTable, ""}, Object{ObjectMetalake, "bench"})
	shuffled := append([]Object(nil), objs...)
	rand.New(rand.NewPCG(5, 6)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	users := []string{catalogtest.Owner, "nobody"}
	for u := 0; u < cfg.Users; u++ {
		users = append(users, catalogtest.UserName(u))
	}
	for _, in := range [][]Object{objs, shuffled, objs[:70], objs[3:300]} {
		for _, u := range users {
			got := s.FilterVisible(u, in)
			var want []Object
			for _, o := range in {
				if s.Visible(u, o) {
					want = append(want, o)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%s: FilterVisible returned %d objects, Visible allows %d", u, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: object %d is %v, want %v", u, i, got[i], want[i])
				}
			}
		}
	}
}
