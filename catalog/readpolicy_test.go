package catalog_test

import (
	"errors"
	"slices"
	"testing"

	. "lakegate/catalog"
	"lakegate/catalog/catalogtest"
)

// TestReadPolicyOfNamesPolicies: a read's policy names the policy of its
// row filter and of each mask (the access log records them), and agrees
// with RowFiltersAndMasks.
func TestReadPolicyOfNamesPolicies(t *testing.T) {
	s := filteredLedger(t)
	// Two policies with the same expression: the first by name is named.
	same := catalogtest.Apply(t, s, admin, CreatePolicy{Name: "a-eu-rows", Type: PolicyRowFilter, Enabled: true,
		Content: PolicyContent{Expression: "region = 'EU'"}}, AttachPolicy{Tag: "eu", Policy: "a-eu-rows"})
	renamed := catalogtest.Apply(t, s, admin, AlterPolicy{Name: "eu-rows",
		Updates: []PolicyUpdate{{Type: "rename", NewName: "emea-rows"}}})
	for _, tc := range []struct {
		name, user string
		snap       *Snapshot
		want       ReadPolicy
	}{
		{"filtered and masked", "bob", s, ReadPolicy{Filter: "region = 'EU'", FilterPolicy: "eu-rows",
			Masks: []ColumnMask{{Column: "card", Mask: "LAST4", Policy: "mask-card"}}}},
		{"exempt", "alice", s, ReadPolicy{}},
		{"same expression twice", "bob", same, ReadPolicy{Filter: "region = 'EU'", FilterPolicy: "a-eu-rows",
			Masks: []ColumnMask{{Column: "card", Mask: "LAST4", Policy: "mask-card"}}}},
		{"renamed policy", "bob", renamed, ReadPolicy{Filter: "region = 'EU'", FilterPolicy: "emea-rows",
			Masks: []ColumnMask{{Column: "card", Mask: "LAST4", Policy: "mask-card"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.snap.ReadPolicyOf(tc.user, "lake.fin.ledger")
			if err != nil {
				t.Fatal(err)
			}
			if got.Filter != tc.want.Filter || got.FilterPolicy != tc.want.FilterPolicy || !slices.Equal(got.Masks, tc.want.Masks) {
				t.Fatalf("ReadPolicyOf(%s) = %+v, want %+v", tc.user, got, tc.want)
			}
			f, m, err := tc.snap.RowFiltersAndMasks(tc.user, "lake.fin.ledger")
			if err != nil || f != got.Filter || !slices.Equal(m, got.Masks) {
				t.Fatalf("RowFiltersAndMasks disagrees: %q %v %v", f, m, err)
			}
		})
	}
	if _, err := s.ReadPolicyOf("bob", "lake.fin.missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing table: %v", err)
	}
}
