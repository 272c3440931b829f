package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/ingest"
	"lakegate/flight/tablefiles"
	"lakegate/metasrv"
	"lakegate/stage"
)

// Files `serve` generates in the data directory.
const (
	demoPrincipalsFile = "principals.yaml"
	demoTokensFile     = "tokens.txt"
	demoTenant         = "demo"
	demoAdmin          = "admin@demo" // owner of the demo metalake in the embedded metasrv
	demoOperator       = "operator"   // the deployment's operator, who creates the demo metalake
)

// demoCredential is a generated principal and its token, shown once.
type demoCredential struct {
	id, role, grants, token, example string
}

// demoPrincipals are the principals serve generates: an analyst who may
// read sales, an HR user who may read hr and the tenant's admin, all of
// tenant demo, and the deployment's operator, who creates and drops
// metalakes (tenants) and reads no data.
var demoPrincipals = []struct {
	id, tenant, role string
	namespaces       []string
	example          string // a query the banner suggests
}{
	{"analyst@demo", demoTenant, "user", []string{"sales"}, "SELECT status, count(*) FROM sales.orders GROUP BY status"},
	{"hr@demo", demoTenant, "user", []string{"hr"}, "SELECT department, avg(salary) FROM hr.employees GROUP BY department"},
	{"admin@demo", demoTenant, "tenant_admin", nil, "SELECT count(*) FROM sales.customers"},
	{demoOperator, demoOperatorTenant, "operator", nil, ""},
}

// demoOperatorTenant is the demo operator's own tenant: every principal
// has one, and an operator's is none of the tenants it provisions.
const demoOperatorTenant = "platform"

// ensureDemoPrincipals creates the demo principal map and the tokens file on
// first start and returns the new credentials; on later starts it returns nil.
func ensureDemoPrincipals(dataDir string) ([]demoCredential, error) {
	mapPath := filepath.Join(dataDir, demoPrincipalsFile)
	if _, err := os.Lstat(mapPath); err == nil {
		return nil, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var (
		specs []authz.PrincipalSpec
		creds []demoCredential
		lines strings.Builder
	)
	lines.WriteString("# lakegate demo tokens (generated once; keep this file private)\n")
	for _, d := range demoPrincipals {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			return nil, err
		}
		specs = append(specs, authz.PrincipalSpec{
			ID: d.id, Tenant: d.tenant, Role: d.role, Namespaces: d.namespaces,
			TokenHashes: []string{authz.HashToken(tok).String()},
		})
		grants := strings.Join(d.namespaces, ",")
		switch d.role {
		case "tenant_admin":
			grants = "all namespaces and governance of " + demoTenant
		case "operator":
			grants = "metalakes and the cluster; no data"
		}
		creds = append(creds, demoCredential{id: d.id, role: d.role, grants: grants, token: tok, example: d.example})
		fmt.Fprintf(&lines, "%s %s\n", d.id, tok)
	}
	// Tokens first: a map without its tokens file would lock the demo out.
	tokensPath := filepath.Join(dataDir, demoTokensFile)
	if err := writeSecretFile(tokensPath, []byte(lines.String())); err != nil {
		return nil, err
	}
	if err := authz.WritePrincipalMap(mapPath, specs); err != nil {
		os.Remove(tokensPath)
		return nil, err
	}
	return creds, nil
}

// writeSecretFile creates path with mode 0600, refusing to overwrite.
func writeSecretFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// demoTables are generated deterministically with DuckDB's range().
var demoTables = []struct {
	schema, name, query string
}{
	{"sales", "customers", `SELECT i AS id, 'Customer ' || i AS name,
		['DE','FR','US','JP','BR'][1 + i % 5] AS country,
		DATE '2020-01-01' + CAST(i % 1000 AS INTEGER) AS signup_date
		FROM range(1, 2001) t(i)`},
	{"sales", "orders", `SELECT i AS id, 1 + (i * 7919) % 2000 AS customer_id,
		DATE '2024-01-01' + CAST(i % 365 AS INTEGER) AS order_date,
		CAST(10 + (i * 37 % 10000) / 100.0 AS DECIMAL(10,2)) AS amount,
		['new','shipped','returned'][1 + i % 3] AS status
		FROM range(1, 5001) t(i)`},
	{"hr", "employees", `SELECT i AS id, 'Employee ' || i AS name,
		['eng','sales','hr','finance'][1 + i % 4] AS department,
		50000 + (i * 137) % 90000 AS salary,
		lpad(CAST(100 + i % 800 AS VARCHAR), 3, '0') || '-' || lpad(CAST(10 + i % 89 AS VARCHAR), 2, '0') || '-' || lpad(CAST(1000 + i AS VARCHAR), 4, '0') AS ssn
		FROM range(1, 501) t(i)`},
}

// demoCatalog is the demo tenant's catalog, the gateway's default.
const demoCatalog = "lake"

// demoRoles gives each demo user a role over its schema: read, write and
// create tables there (the admin owns the metalake and may do anything).
var demoRoles = []struct{ role, user, schema string }{
	{"sales_analyst", "analyst@demo", "sales"},
	{"hr_analyst", "hr@demo", "hr"},
}

// demoGovernance is what the demo metalake holds besides its tables: the
// catalog, the schemas, the users and their roles. It is proposed once, as
// the metalake's owner, all or nothing.
func demoGovernance() []catalog.Command {
	cmds := []catalog.Command{catalog.CreateCatalog{Name: demoCatalog, Type: "managed", Comment: "demo data"}}
	for _, r := range demoRoles {
		cmds = append(cmds,
			catalog.CreateSchema{Name: demoCatalog + "." + r.schema},
			catalog.CreateUser{Name: r.user},
			catalog.CreateRole{Name: r.role, Grants: []catalog.Grant{
				{Object: catalog.Catalog(demoCatalog), Privilege: catalog.PrivUseCatalog, Condition: catalog.Allow},
				{Object: catalog.Schema(demoCatalog + "." + r.schema), Privilege: catalog.PrivUseSchema, Condition: catalog.Allow},
				{Object: catalog.Schema(demoCatalog + "." + r.schema), Privilege: catalog.PrivSelectTable, Condition: catalog.Allow},
				{Object: catalog.Schema(demoCatalog + "." + r.schema), Privilege: catalog.PrivModifyTable, Condition: catalog.Allow},
				{Object: catalog.Schema(demoCatalog + "." + r.schema), Privilege: catalog.PrivCreateTable, Condition: catalog.Allow},
			}},
			catalog.GrantRoles{Grantee: catalog.Owner{Type: catalog.OwnerUser, Name: r.user}, Roles: []string{r.role}},
		)
	}
	return cmds
}

// ensureDemoTables writes each demo table that does not exist yet through
// the same path as a client's ingest: rows generated by a scratch engine
// (the serving engine runs only statements the SQL gate printed) are written
// as Parquet to the demo tenant's stage and committed as version 1 in the
// embedded metasrv, by the demo admin.
func ensureDemoTables(ctx context.Context, files *tablefiles.Files, cat backend.Governance) error {
	admin := backend.Caller{Tenant: demoTenant, Subject: demoAdmin, Catalog: demoCatalog}
	var engine *duckdb.Engine
	var closeEngine func()
	defer func() {
		if closeEngine != nil {
			closeEngine()
		}
	}()
	for _, t := range demoTables {
		name := backend.TableName{Schema: t.schema, Name: t.name}
		got, err := cat.Resolve(ctx, admin, []backend.TableRef{{Name: name}})
		if err != nil {
			return fmt.Errorf("demo table %s: %w", name, err)
		}
		if got[0] != nil {
			continue
		}
		if engine == nil {
			if engine, closeEngine, err = scratchEngine(); err != nil {
				return err
			}
		}
		if err := writeDemoTable(ctx, engine, files, cat, admin, name, t.query); err != nil {
			return fmt.Errorf("writing demo table %s: %w", name, err)
		}
	}
	return nil
}

// scratchEngine is an engine over a temporary root that runs the demo's own
// generating statements (range()), which the serving engine refuses; close
// removes it.
func scratchEngine() (e *duckdb.Engine, close func(), err error) {
	root, err := os.MkdirTemp("", "lakegate-demo-")
	if err != nil {
		return nil, nil, err
	}
	cfg := duckdb.DefaultConfig()
	cfg.Root, cfg.NoVerify = root, true
	if e, err = duckdb.New(cfg); err != nil {
		os.RemoveAll(root)
		return nil, nil, err
	}
	return e, func() { e.Close(); os.RemoveAll(root) }, nil
}

func writeDemoTable(ctx context.Context, engine *duckdb.Engine, files *tablefiles.Files, cat backend.Governance, admin backend.Caller, name backend.TableName, query string) error {
	rows, err := engine.Execute(ctx, demoTenant, query, nil)
	if err != nil {
		return err
	}
	defer rows.Release()
	store, err := files.Store(ctx, demoTenant)
	if err != nil {
		return err
	}
	var sid [16]byte
	if _, err := rand.Read(sid[:]); err != nil {
		return err
	}
	storageID := hex.EncodeToString(sid[:])
	segment, err := stage.NewSegment()
	if err != nil {
		return err
	}
	written, _, err := ingest.Copy(ctx, ingest.Config{Store: store, StorageID: storageID, Segment: segment, Schema: rows.Schema()}, rows)
	if err != nil {
		return err
	}
	cm := backend.Commit{Name: name, Create: true, StorageID: storageID}
	for _, f := range rows.Schema().Fields() {
		cm.Columns = append(cm.Columns, backend.Column{Name: f.Name, Type: f.Type.String()})
	}
	for _, f := range written {
		cm.Files = append(cm.Files, backend.DataFile{Key: f.Key, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256})
	}
	_, err = cat.Commit(ctx, admin, cm)
	return err
}

// printBanner tells the operator how to connect. Tokens appear only on the
// first start; afterwards the banner points at the tokens file.
// metaURL is the embedded metasrv's REST base URL.
func printBanner(w io.Writer, addr string, tls bool, principalsPath, dataDir string, demo bool, creds []demoCredential, metaURL string, stageDesc stage.Descriptor, metricsAddr string) {
	scheme, jdbcTLS, shellTLS := "grpc", "useEncryption=false", ""
	if tls {
		scheme, jdbcTLS, shellTLS = "grpc+tls", "useEncryption=true", " --tls"
	}
	// The serving line comes last, so whoever waits for it has the whole
	// banner (tests and scripts read up to it).
	defer fmt.Fprintf(w, "lakegate %s serving Flight SQL on %s://%s\n", version, scheme, addr)
	fmt.Fprintf(w, "metasrv REST on %s (single node, data in %s)\n", metaURL, filepath.Join(dataDir, "metasrv"))
	fmt.Fprintf(w, "stage:       %s\n", stageDesc)
	if metricsAddr != "" {
		fmt.Fprintf(w, "metrics:     http://%s/metrics\n", metricsAddr)
	}
	fmt.Fprintf(w, "principal map: %s\n", principalsPath)
	adminTLS := ""
	if tls {
		adminTLS = " --tls-ca <CA of the server certificate>"
	}
	fmt.Fprintf(w, "metadata:    LAKEGATE_TOKEN=<operator or tenant admin token> ./bin/lakegate admin --server %s%s metalake list\n", metaURL, adminTLS)
	if !demo {
		return
	}
	tokensPath := filepath.Join(dataDir, demoTokensFile)
	if len(creds) == 0 {
		fmt.Fprintf(w, "demo tokens: %s (mode 0600; shown only on the first start)\n", tokensPath)
		fmt.Fprintf(w, "connect:     jdbc:arrow-flight-sql://%s?%s&token=<token>\n", addr, jdbcTLS)
		return
	}
	fmt.Fprintf(w, "demo tenant %q created; tokens saved to %s (mode 0600). They are shown once:\n\n", demoTenant, tokensPath)
	for _, c := range creds {
		fmt.Fprintf(w, "  %s (%s: %s)\n", c.id, c.role, c.grants)
		fmt.Fprintf(w, "    token: %s\n", c.token)
		if c.role == "operator" {
			// No SQL: an operator provisions tenants and runs the cluster.
			fmt.Fprintf(w, "    admin: LAKEGATE_TOKEN=%s ./bin/lakegate admin --server %s%s metalake create <tenant> --owner <user>@<tenant>\n", c.token, metaURL, adminTLS)
			continue
		}
		fmt.Fprintf(w, "    ADBC:  uri=%s://%s  adbc.flight.sql.authorization_header=\"Bearer %s\"\n", scheme, addr, c.token)
		fmt.Fprintf(w, "    JDBC:  jdbc:arrow-flight-sql://%s?%s&token=%s\n", addr, jdbcTLS, c.token)
		fmt.Fprintf(w, "    shell: LAKEGATE_TOKEN=%s ./bin/lakegate sql%s --addr %s '%s'\n", c.token, shellTLS, addr, c.example)
		if c.role == "tenant_admin" {
			fmt.Fprintf(w, "    admin: LAKEGATE_TOKEN=%s ./bin/lakegate admin --server %s%s metalake get %s\n", c.token, metaURL, adminTLS, demoTenant)
		}
		fmt.Fprintln(w)
	}
}

// ensureDemoMetalake creates the demo metalake, owned by the demo tenant
// admin, and its governance (demoGovernance) unless they exist, through
// metasrv's bootstrap: the checks REST applies to the same writes, the
// metalake created by the operator, its governance by its owner.
func ensureDemoMetalake(ctx context.Context, srv *metasrv.Server) error {
	return srv.Bootstrap(ctx, metasrv.Seed{Metalake: demoTenant, Operator: demoOperator, Owner: demoAdmin,
		Comment: "lakegate serve demo tenant", Commands: demoGovernance()})
}
