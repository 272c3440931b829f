package catalog_test

import (
	"fmt"
	"time"

	"lakegate/catalog"
)

func Example() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, _ := catalog.New("acme", "admin", t0)
	index := uint64(0)
	apply := func(actor string, c catalog.Command) {
		index++
		n, events, err := catalog.Apply(s, c, catalog.Meta{Actor: actor, Time: t0.Add(time.Duration(index) * time.Second), Index: index})
		if err != nil {
			fmt.Println("rejected:", err)
			return
		}
		s = n
		for _, e := range events[1:] {
			fmt.Println("event:", e.Operation, e.Target)
		}
	}
	apply("admin", catalog.CreateUser{Name: "bob"})
	apply("admin", catalog.CreateCatalog{Name: "lake"})
	apply("admin", catalog.CreateSchema{Name: "lake.sales"})
	apply("admin", catalog.CreateTag{Name: "dept", AllowedValues: []string{"finance", "hr"}})
	apply("admin", catalog.AssociateTagsV2{Object: catalog.Schema("lake.sales"),
		TagsToAdd: []catalog.TagValue{{Name: "dept", Value: "finance"}}})
	apply("admin", catalog.CreateTable{Name: "lake.sales.orders",
		Columns: []catalog.ColumnDef{{Name: "id", Type: "BIGINT"}}})
	apply("admin", catalog.CreateRole{Name: "finance", Grants: []catalog.Grant{
		{Object: catalog.Catalog("lake"), Privilege: catalog.PrivUseCatalog, Condition: catalog.Allow},
		{Object: catalog.Schema("lake.sales"), Privilege: catalog.PrivUseSchema, Condition: catalog.Allow},
	}})
	apply("admin", catalog.CreatePolicy{Name: "finance-reads", Type: catalog.PolicySystemAccessControl, Enabled: true,
		Content: catalog.PolicyContent{Privileges: []catalog.Privilege{catalog.PrivSelectTable}, ApplicableRoles: []string{"finance"}}})
	apply("admin", catalog.AttachPolicy{Tag: "dept", Policy: "finance-reads", Selector: catalog.Selector{Value: "finance"}})

	orders := catalog.Table("lake.sales.orders")
	fmt.Println(s.Authorize("bob", catalog.PrivSelectTable, orders))
	apply("admin", catalog.GrantRoles{Grantee: catalog.Owner{Type: catalog.OwnerUser, Name: "bob"}, Roles: []string{"finance"}})
	fmt.Println(s.Authorize("bob", catalog.PrivSelectTable, orders))
	tags, _ := s.EffectiveTags(orders)
	fmt.Printf("%s=%v inherited from %v\n", tags[0].Name, tags[0].Values, tags[0].Source)
	apply("bob", catalog.DropObject{Object: orders})
	fmt.Println("generation", s.Generation())

	// Output:
	// event: EffectiveTagsChanged TABLE lake.sales.orders
	// {false USE_CATALOG missing or denied}
	// {true allowed by tag policy}
	// dept=[finance] inherited from SCHEMA lake.sales
	// rejected: catalog: DropObject TABLE lake.sales.orders: forbidden: requires ownership of TABLE lake.sales.orders or an ancestor
	// generation 10
}
