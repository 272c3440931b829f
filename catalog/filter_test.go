package catalog_test

import (
	"math/rand/v2"
	"slices"
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

// TestFilterVisibleLargeBatchRules checks, in scenarios that exercise each
// rule a table's children-map entry summarizes (owner, own grants, own tags
// shadowing the schema's), that FilterVisible over a batch large enough to
// use those summaries agrees with Visible and with Authorize.
func TestFilterVisibleLargeBatchRules(t *testing.T) {
	ledger, budget, people := Table("lake.fin.ledger"), Table("lake.fin.budget"), Table("lake.hr.people")
	dept := func(s *Snapshot) *Snapshot {
		return catalogtest.Apply(t, s, admin,
			CreateTag{Name: "dept", AllowedValues: []string{"finance", "hr"}},
			CreatePolicy{Name: "fin-only", Type: PolicySystemAccessControl, Enabled: true,
				Content: PolicyContent{Privileges: []Privilege{PrivSelectTable}, ApplicableRoles: []string{"analyst"}}},
			AttachPolicy{Tag: "dept", Policy: "fin-only", Selector: Selector{Value: "finance"}},
			roles("alice", "analyst"), roles("bob", "analyst"))
	}
	scenarios := map[string]*Snapshot{
		"user owner": catalogtest.Apply(t, base(t), admin, SetOwner{ledger, Owner{OwnerUser, "alice"}},
			SetOwner{people, Owner{OwnerUser, "carol"}}),
		"group owner": catalogtest.Apply(t, base(t), admin, CreateGroup{Name: "g"},
			AddGroupMembers{Group: "g", Users: []string{"bob", "carol"}}, SetOwner{budget, Owner{OwnerGroup, "g"}}),
		"table grants": catalogtest.Apply(t, base(t), admin,
			grantTo("reader", ledger, PrivSelectTable, Allow), roles("alice", "reader"),
			grantTo("other", budget, PrivModifyTable, Allow), grantTo("denier", people, PrivSelectTable, Deny),
			grantTo("reader", Schema("lake.hr"), PrivSelectTable, Allow), roles("bob", "reader", "denier")),
		"tag on table": sac(t),
		"table shadows schema tag": catalogtest.Apply(t, dept(base(t)), admin,
			AssociateTagsV2{Object: Schema("lake.fin"), TagsToAdd: []TagValue{{"dept", "finance"}}},
			AssociateTagsV2{Object: ledger, TagsToAdd: []TagValue{{"dept", "hr"}}}),
		"table tag selector": catalogtest.Apply(t, dept(base(t)), admin,
			AssociateTagsV2{Object: ledger, TagsToAdd: []TagValue{{"dept", "finance"}}},
			AssociateTagsV2{Object: budget, TagsToAdd: []TagValue{{"dept", "hr"}}},
			AssociateTagsV2{Object: people, TagsToAdd: []TagValue{{"dept", "finance"}}},
			grantTo("denier", people, PrivSelectTable, Deny), roles("bob", "denier")),
	}
	all := []Object{Catalog("lake"), Schema("lake.fin"), Schema("lake.hr"), ledger, budget, people, Table("lake.fin.missing")}
	var batch []Object
	for range 60 {
		batch = append(batch, all...)
	}
	for name, s := range scenarios {
		for _, u := range []string{"alice", "bob", "carol", admin, "nobody"} {
			var want []Object
			for _, o := range batch {
				v := s.Visible(u, o)
				if v {
					want = append(want, o)
				}
				if o.Type == ObjectTable {
					if a := s.Authorize(u, PrivSelectTable, o).Allowed || s.Authorize(u, PrivModifyTable, o).Allowed; a != v {
						t.Fatalf("%s: %s %v: Visible=%v, Authorize(SELECT|MODIFY)=%v", name, u, o, v, a)
					}
				}
			}
			if got := s.FilterVisible(u, batch); !slices.Equal(got, want) {
				t.Fatalf("%s: %s: FilterVisible = %v, want %v", name, u, got[:min(len(got), 7)], want[:min(len(want), 7)])
			}
		}
	}
}
