package authz_test

import (
	"fmt"

	"lakegate/authz"
)

func ExampleParseTenantID() {
	t, err := authz.ParseTenantID("acme-corp")
	fmt.Println(t, err)
	_, err = authz.ParseTenantID("-acme")
	fmt.Println(err)
	// Output:
	// acme-corp <nil>
	// authz: invalid tenant id: first and last character must be a letter or digit (want 1–64 of [A-Za-z0-9_-], alphanumeric at both ends)
}

func ExampleParseNamespace() {
	ns, _ := authz.ParseNamespace("Sales")
	fmt.Println(ns)
	// Output: sales
}
