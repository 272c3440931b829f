package catalogtest

import (
	"fmt"
	"testing"
	"time"

	"lakegate/catalog"
)

// Epoch is the time of generation-0 snapshots built here; command i is
// applied at Epoch + i seconds.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// New returns a new metalake snapshot owned by owner, failing tb on error.
func New(tb testing.TB, metalake, owner string) *catalog.Snapshot {
	tb.Helper()
	s, err := catalog.New(metalake, owner, Epoch)
	if err != nil {
		tb.Fatalf("catalog.New: %v", err)
	}
	return s
}

// Meta returns the Meta of the next command on s by actor.
func Meta(s *catalog.Snapshot, actor string) catalog.Meta {
	i := s.Index() + 1
	return catalog.Meta{Actor: actor, Time: Epoch.Add(time.Duration(i) * time.Second), Index: i}
}

// Apply applies cmds in order as actor, failing tb on the first error.
func Apply(tb testing.TB, s *catalog.Snapshot, actor string, cmds ...catalog.Command) *catalog.Snapshot {
	tb.Helper()
	for _, c := range cmds {
		n, _, err := catalog.Apply(s, c, Meta(s, actor))
		if err != nil {
			tb.Fatalf("Apply(%s %v) as %q: %v", c.Op(), c.Target(), actor, err)
		}
		s = n
	}
	return s
}

// Config sizes a generated tenant.
type Config struct {
	Catalogs          int
	SchemasPerCatalog int
	TablesPerSchema   int
	ColumnsPerTable   int
	Tags              int
	ValuesPerTag      int
	Policies          int
	Roles             int
	Grants            int
	Users             int
	Groups            int
	// VersionedTables is how many tables (the first generated) get data:
	// each is created at version 1 with one file and then receives
	// CommitsPerTable commits of one file each (every fourth a replace,
	// the others appends), keeping the table's columns.
	VersionedTables int
	CommitsPerTable int
}

// DefaultConfig is the benchmark tenant: 100,000 tables in 1,000
// schemas, 1,000 tags with 10 values each, 500 policies, 200 roles, 5,000
// grants.
func DefaultConfig() Config {
	return Config{Catalogs: 10, SchemasPerCatalog: 100, TablesPerSchema: 100, ColumnsPerTable: 3,
		Tags: 1000, ValuesPerTag: 10, Policies: 500, Roles: 200, Grants: 5000, Users: 1000, Groups: 50}
}

// Owner is the metalake owner of generated tenants.
const Owner = "admin"

// Names used by generated tenants.
func CatalogName(c int) string     { return fmt.Sprintf("cat%02d", c) }
func SchemaName(c, s int) string   { return fmt.Sprintf("cat%02d.sch%03d", c, s) }
func TableName(c, s, t int) string { return fmt.Sprintf("cat%02d.sch%03d.tbl%03d", c, s, t) }
func TagName(i int) string         { return fmt.Sprintf("tag%04d", i) }
func TagValue(i int) string        { return fmt.Sprintf("v%d", i) }
func RoleName(i int) string        { return fmt.Sprintf("role%03d", i) }
func UserName(i int) string        { return fmt.Sprintf("user%04d", i) }
func GroupName(i int) string       { return fmt.Sprintf("group%02d", i) }
func PolicyName(i int) string      { return fmt.Sprintf("policy%03d", i) }

// StorageID is the storage id of the n-th versioned table of a generated
// tenant.
func StorageID(n int) string { return fmt.Sprintf("st-%06d", n) }

// DataFile returns a valid data file of the table with storage id sid: path
// "tables/<sid>/data/f<i>.parquet", i rows, a digest derived from i.
func DataFile(sid string, i int) catalog.DataFile {
	return catalog.DataFile{Path: fmt.Sprintf("tables/%s/data/f%d.parquet", sid, i), Size: int64(1000 + i),
		Rows: int64(i), SHA256: fmt.Sprintf("%064x", i)}
}

// Generate builds a tenant deterministically by applying commands (so it
// also exercises Apply at scale). Every user i holds roles i%Roles and
// (i*7)%Roles and belongs to group i%Groups, which holds role (g*3)%Roles.
// Every role has USE_CATALOG on all catalogs, even roles also USE_SCHEMA on
// all catalogs, odd roles USE_SCHEMA on some schemas; the remaining grants are SELECT_TABLE/MODIFY_TABLE ALLOWs and
// some DENYs on schemas and tables. A quarter of the tables and every schema
// carry a tag value; policies are system_access_control policies on tags,
// half with a value selector. The first VersionedTables tables have storage
// ids StorageID(n) and committed versions. Every catalog is altered
// (AlterObject) to the comment "catalog <name>" and property team=team<c%3>;
// every schema is created with properties tier=bronze and tmp=x and then
// altered to tier=bronze|silver|gold (s%3) without tmp.
func Generate(tb testing.TB, cfg Config) *catalog.Snapshot {
	tb.Helper()
	s := New(tb, "bench", Owner)
	apply := func(c catalog.Command) {
		n, _, err := catalog.Apply(s, c, Meta(s, Owner))
		if err != nil {
			tb.Fatalf("generate: %s %v: %v", c.Op(), c.Target(), err)
		}
		s = n
	}
	cols := make([]catalog.ColumnDef, cfg.ColumnsPerTable)
	for i := range cols {
		cols[i] = catalog.ColumnDef{Name: fmt.Sprintf("col%d", i), Type: "BIGINT"}
	}
	for r := 0; r < cfg.Roles; r++ {
		apply(catalog.CreateRole{Name: RoleName(r)})
	}
	for g := 0; g < cfg.Groups; g++ {
		apply(catalog.CreateGroup{Name: GroupName(g)})
		apply(catalog.GrantRoles{Grantee: catalog.Owner{Type: catalog.OwnerGroup, Name: GroupName(g)}, Roles: []string{RoleName((g * 3) % cfg.Roles)}})
	}
	for u := 0; u < cfg.Users; u++ {
		apply(catalog.CreateUser{Name: UserName(u)})
		apply(catalog.GrantRoles{Grantee: catalog.Owner{Type: catalog.OwnerUser, Name: UserName(u)},
			Roles: []string{RoleName(u % cfg.Roles), RoleName((u * 7) % cfg.Roles)}})
		if cfg.Groups > 0 {
			apply(catalog.AddGroupMembers{Group: GroupName(u % cfg.Groups), Users: []string{UserName(u)}})
		}
	}
	for t := 0; t < cfg.Tags; t++ {
		vals := make([]string, cfg.ValuesPerTag)
		for v := range vals {
			vals[v] = TagValue(v)
		}
		apply(catalog.CreateTag{Name: TagName(t), AllowedValues: vals})
	}
	versioned := 0
	for c := 0; c < cfg.Catalogs; c++ {
		apply(catalog.CreateCatalog{Name: CatalogName(c), Type: "managed"})
		comment := "catalog " + CatalogName(c)
		apply(catalog.AlterObject{Object: catalog.Catalog(CatalogName(c)), Comment: &comment,
			SetProperties: map[string]string{"team": fmt.Sprintf("team%d", c%3)}})
		for s := 0; s < cfg.SchemasPerCatalog; s++ {
			apply(catalog.CreateSchema{Name: SchemaName(c, s), Properties: map[string]string{"tier": "bronze", "tmp": "x"}})
			apply(catalog.AlterObject{Object: catalog.Schema(SchemaName(c, s)),
				SetProperties: map[string]string{"tier": []string{"bronze", "silver", "gold"}[s%3]}, RemoveProperties: []string{"tmp"}})
			n := c*cfg.SchemasPerCatalog + s
			apply(catalog.AssociateTagsV2{Object: catalog.Schema(SchemaName(c, s)),
				TagsToAdd: []catalog.TagValue{{Name: TagName(n % cfg.Tags), Value: TagValue(n % cfg.ValuesPerTag)}}})
			for t := 0; t < cfg.TablesPerSchema; t++ {
				if versioned < cfg.VersionedTables {
					sid := StorageID(versioned)
					versioned++
					apply(catalog.CreateTable{Name: TableName(c, s, t), Columns: cols, StorageID: sid,
						Files: []catalog.DataFile{DataFile(sid, 0)}})
					for i := 1; i <= cfg.CommitsPerTable; i++ {
						apply(catalog.CommitTableVersion{Table: TableName(c, s, t), Base: uint64(i), Replace: i%4 == 0,
							Columns: cols, Files: []catalog.DataFile{DataFile(sid, i)}})
					}
				} else {
					apply(catalog.CreateTable{Name: TableName(c, s, t), Columns: cols})
				}
				if k := n*cfg.TablesPerSchema + t; k%4 == 0 {
					apply(catalog.AssociateTagsV2{Object: catalog.Table(TableName(c, s, t)),
						TagsToAdd: []catalog.TagValue{{Name: TagName((k / 4) % cfg.Tags), Value: TagValue(k % cfg.ValuesPerTag)}}})
				}
			}
		}
	}
	grants := 0
	grant := func(role int, o catalog.Object, p catalog.Privilege, cond catalog.Condition) {
		apply(catalog.GrantPrivileges{Role: RoleName(role), Object: o,
			Privileges: []catalog.PrivilegeCondition{{Name: p, Condition: cond}}})
		grants++
	}
	for r := 0; r < cfg.Roles && grants < cfg.Grants; r++ {
		for c := 0; c < cfg.Catalogs && grants < cfg.Grants; c++ {
			grant(r, catalog.Catalog(CatalogName(c)), catalog.PrivUseCatalog, catalog.Allow)
			if r%2 == 0 && grants < cfg.Grants {
				grant(r, catalog.Catalog(CatalogName(c)), catalog.PrivUseSchema, catalog.Allow)
			}
		}
	}
	nSchemas := cfg.Catalogs * cfg.SchemasPerCatalog
	for i := 0; grants < cfg.Grants; i++ {
		r := i % cfg.Roles
		k := (i * 7919) % nSchemas
		c, sc := k/cfg.SchemasPerCatalog, k%cfg.SchemasPerCatalog
		switch i % 10 {
		case 0, 1, 2, 3:
			grant(r, catalog.Schema(SchemaName(c, sc)), catalog.PrivUseSchema, catalog.Allow)
		case 4, 5:
			grant(r, catalog.Schema(SchemaName(c, sc)), catalog.PrivSelectTable, catalog.Allow)
		case 6, 7:
			grant(r, catalog.Table(TableName(c, sc, i%cfg.TablesPerSchema)), catalog.PrivSelectTable, catalog.Allow)
		case 8:
			grant(r, catalog.Table(TableName(c, sc, i%cfg.TablesPerSchema)), catalog.PrivModifyTable, catalog.Allow)
		case 9:
			grant((r+1)%cfg.Roles, catalog.Table(TableName(c, sc, (i+1)%cfg.TablesPerSchema)), catalog.PrivModifyTable, catalog.Deny)
		}
	}
	for p := 0; p < cfg.Policies; p++ {
		apply(catalog.CreatePolicy{Name: PolicyName(p), Type: catalog.PolicySystemAccessControl, Enabled: true,
			Content: catalog.PolicyContent{Privileges: []catalog.Privilege{catalog.PrivSelectTable},
				ApplicableRoles: []string{RoleName(p % cfg.Roles)}}})
		sel := catalog.Selector{}
		if p%2 == 0 {
			sel.Value = TagValue(p % cfg.ValuesPerTag)
		}
		apply(catalog.AttachPolicy{Tag: TagName((p * 2) % cfg.Tags), Policy: PolicyName(p), Selector: sel})
	}
	return s
}
