package main

import (
	"strings"
	"testing"

	"lakegate/catalog"
)

func TestPrivilegeOf(t *testing.T) {
	cases := []struct {
		name    string
		on      catalog.ObjectType
		want    catalog.Privilege
		wantErr string
	}{
		{"SELECT_TABLE", catalog.ObjectTable, catalog.PrivSelectTable, ""},
		{"select_table", catalog.ObjectSchema, catalog.PrivSelectTable, ""},
		{"SELECT", catalog.ObjectTable, catalog.PrivSelectTable, ""},
		{"select", catalog.ObjectCatalog, catalog.PrivSelectTable, ""},
		{"modify", catalog.ObjectTable, catalog.PrivModifyTable, ""},
		{"USE", catalog.ObjectSchema, catalog.PrivUseSchema, ""},
		// USE on a catalog is USE_CATALOG or USE_SCHEMA: say which.
		{"USE", catalog.ObjectCatalog, 0, `ambiguous privilege "USE"; privileges on a catalog: USE_CATALOG, USE_SCHEMA`},
		{"SELEKT", catalog.ObjectTable, 0, `unknown privilege "SELEKT"; privileges on a table: SELECT_TABLE, MODIFY_TABLE`},
		{"", catalog.ObjectTable, 0, `unknown privilege ""`},
	}
	for _, c := range cases {
		got, err := privilegeOf(c.name, c.on)
		switch {
		case c.wantErr == "" && (err != nil || got != c.want):
			t.Errorf("privilegeOf(%q, %v) = %v, %v; want %v", c.name, c.on, got, err, c.want)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("privilegeOf(%q, %v): %v, want an error containing %q", c.name, c.on, err, c.wantErr)
		}
	}
	help := privilegesHelp()
	for _, p := range allPrivileges() {
		if !strings.Contains(help, p.String()) {
			t.Errorf("grant's help does not list %s", p)
		}
	}
}
