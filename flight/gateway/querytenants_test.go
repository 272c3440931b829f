package gateway_test

import (
	"slices"
	"testing"

	"lakegate/authz"
	"lakegate/authz/oidctest"
	"lakegate/flight/gateway"
)

// TestQueryTenantsIncludeProviders: the tenants a gateway serves (and, under
// serve, delegates for) include those whose users sign in only by JWT.
func TestQueryTenantsIncludeProviders(t *testing.T) {
	iss := oidctest.NewIssuer(t)
	doc, err := authz.EncodePrincipalMap([]authz.PrincipalSpec{
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: []string{authz.HashToken("a").String()}},
		{ID: "ops", Tenant: "platform", Role: "operator", TokenHashes: []string{authz.HashToken("o").String()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	doc = append(doc, oidctest.OIDCSection(
		iss.ProviderYAML("one", "tenant: beta"),
		iss.ProviderYAML("shared", "audience: other", "tenant_claim: tid", "tenants: [acme, gamma]"))...)
	m, err := authz.ParsePrincipalMap(doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	var got []string
	for _, tn := range gateway.QueryTenants(m) {
		got = append(got, tn.String())
	}
	if want := []string{"acme", "beta", "gamma"}; !slices.Equal(got, want) {
		t.Errorf("QueryTenants = %v, want %v", got, want)
	}
}
