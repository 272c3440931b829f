package duckdb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
)

// TestLockdown runs escapes on a tenant instance; each must fail. Controls run
// the same reads on files inside the tenant directory, and an unlocked DuckDB
// reads every outside file, so a failure is the lockdown and not a typo.
func TestLockdown(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	const tenant = "acme"
	tdir := filepath.Join(root, "tenants", tenant)
	insideParquet := writeFile(t, e, tenant, "orders", "SELECT range AS id FROM range(10)")
	rels, err := e.Bind(ctx, tenant, []backend.LocalTable{{ID: "orders@1", Paths: []string{insideParquet}}})
	if err != nil {
		t.Fatal(err)
	}
	orders := relSQL(rels[0])

	outside := t.TempDir()
	if real, err := filepath.EvalSymlinks(outside); err == nil {
		outside = real
	}
	// An outside Parquet file, written by a second engine.
	other, otherRoot := newEngine(t)
	outsideParquet := writeFile(t, other, "x", "t", "SELECT 42 AS secret")
	write := func(p, content string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const csv = "secret\n42\n"
	outsideCSV := write(filepath.Join(outside, "secret.csv"), csv)
	insideCSV := write(filepath.Join(tdir, "inside.csv"), csv)
	siblingCSV := write(filepath.Join(root, "tenants", "other", "secret.csv"), csv)
	prefixCSV := write(filepath.Join(root, "tenants", "acmecorp", "secret.csv"), csv) // "acme" is a prefix of it
	link := filepath.Join(tdir, "link.csv")
	if err := os.Symlink(outsideCSV, link); err != nil {
		t.Fatal(err)
	}
	linkDir := filepath.Join(tdir, "linkdir")
	if err := os.Symlink(outside, linkDir); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(tdir, "tmp"), outsideCSV)
	if err != nil {
		t.Fatal(err)
	}
	dotdot := tdir + "/tmp/" + rel // lexically under the tenant dir, "../" to outside
	dotdotSibling := tdir + "/../other/secret.csv"
	q := func(p string) string { return "'" + strings.ReplaceAll(p, "'", "''") + "'" }

	// Controls: an unlocked DuckDB reads every outside file.
	plain, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, p := range []string{outsideCSV, siblingCSV, prefixCSV, link, dotdot, dotdotSibling, filepath.Join(linkDir, "secret.csv")} {
		var n int
		if err := plain.QueryRowContext(ctx, "SELECT secret FROM read_csv("+q(p)+")").Scan(&n); err != nil || n != 42 {
			t.Fatalf("control: unlocked read of %s: %d, %v", p, n, err)
		}
	}
	var n int
	if err := plain.QueryRowContext(ctx, "SELECT secret FROM read_parquet("+q(outsideParquet)+")").Scan(&n); err != nil || n != 42 {
		t.Fatalf("control: unlocked parquet read: %d, %v", n, err)
	}

	// Controls on the tenant instance: reads inside the tenant dir work.
	for _, stmt := range []string{
		"SELECT secret FROM read_csv(" + q(insideCSV) + ")",
		"SELECT content FROM read_text(" + q(insideCSV) + ")",
		"SELECT * FROM read_parquet(" + q(insideParquet) + ")",
		"SELECT * FROM " + q(insideCSV),
		"SELECT * FROM glob(" + q(tdir+"/*.csv") + ")",
		"SELECT * FROM " + orders,
	} {
		if res, err := query(ctx, e, tenant, stmt); err != nil || res.rows == 0 {
			t.Fatalf("control %s: %v", stmt, err)
		}
	}

	cases := []struct{ name, sql string }{
		{"read_csv outside", "SELECT * FROM read_csv(" + q(outsideCSV) + ")"},
		{"read_text outside", "SELECT * FROM read_text(" + q(outsideCSV) + ")"},
		{"read_blob outside", "SELECT * FROM read_blob(" + q(outsideCSV) + ")"},
		{"read_parquet outside", "SELECT * FROM read_parquet(" + q(outsideParquet) + ")"},
		{"replacement scan outside", "SELECT * FROM " + q(outsideCSV)},
		{"glob outside", "SELECT * FROM glob(" + q(outside+"/*") + ")"},
		{"symlink file out", "SELECT * FROM read_csv(" + q(link) + ")"},
		{"symlink dir out", "SELECT * FROM read_csv(" + q(filepath.Join(linkDir, "secret.csv")) + ")"},
		{"dotdot to outside", "SELECT * FROM read_csv(" + q(dotdot) + ")"},
		{"dotdot to sibling", "SELECT * FROM read_csv(" + q(dotdotSibling) + ")"},
		{"sibling tenant", "SELECT * FROM read_csv(" + q(siblingCSV) + ")"},
		{"sibling with tenant as prefix", "SELECT * FROM read_csv(" + q(prefixCSV) + ")"},
		{"etc", "SELECT * FROM read_text('/etc/hostname')"},
		{"copy to outside", "COPY (SELECT 1) TO " + q(filepath.Join(outside, "out.csv"))},
		{"copy to sibling", "COPY (SELECT 1) TO " + q(filepath.Join(root, "tenants", "other", "out.csv"))},
		{"attach file", "ATTACH " + q(filepath.Join(outside, "db.duckdb")) + " AS x"},
		{"export database", "EXPORT DATABASE " + q(filepath.Join(outside, "export"))},
		{"install", "INSTALL httpfs"},
		{"load", "LOAD httpfs"},
		{"load path", "LOAD " + q(filepath.Join(outside, "x.duckdb_extension"))},
		{"install from", "INSTALL httpfs FROM community"},
		{"http", "SELECT * FROM read_csv('http://127.0.0.1:1/x.csv')"},
		{"https", "SELECT * FROM read_parquet('https://example.com/x.parquet')"},
		{"s3", "SELECT * FROM read_parquet('s3://bucket/x.parquet')"},
		{"SET enable_external_access", "SET enable_external_access=true"},
		{"SET lock_configuration", "SET lock_configuration=false"},
		{"RESET lock_configuration", "RESET lock_configuration"},
		{"SET allowed_directories", "SET allowed_directories=['/']"},
		{"SET allowed_paths", "SET allowed_paths=['/etc/hostname']"},
		{"SET temp_directory", "SET temp_directory=" + q(outside)},
		{"SET memory_limit", "SET memory_limit='100GB'"},
		{"SET GLOBAL threads", "SET GLOBAL threads=64"},
		{"SET autoload", "SET autoload_known_extensions=true"},
		{"SET autoinstall", "SET autoinstall_known_extensions=true"},
		{"SET community", "SET allow_community_extensions=true"},
		{"SET unsigned", "SET allow_unsigned_extensions=true"},
		{"SET TimeZone", "SET TimeZone='Europe/Paris'"},
		{"SET null order", "SET default_null_order='nulls_last'"},
		{"PRAGMA threads", "PRAGMA threads=64"},
		{"PRAGMA memory_limit", "PRAGMA memory_limit='100GB'"},
		{"CALL set", "SELECT * FROM duckdb_settings() WHERE name = 'x' AND set_config('lock_configuration', 'false')"},
		{"unqualified relation", `SELECT * FROM "v_orders@1"`},
		{"unqualified table", "SELECT * FROM orders"},
		{"schema-qualified logical name", "SELECT * FROM sales.orders"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := query(ctx, e, tenant, c.sql)
			if err == nil {
				t.Fatalf("%s: succeeded", c.sql)
			}
			if !errors.Is(err, backend.ErrQuery) {
				t.Errorf("err = %v, want ErrQuery", err)
			}
			for _, p := range []string{root, outside, otherRoot} {
				if strings.Contains(err.Error(), p) {
					t.Errorf("error leaks a path: %v", err)
				}
			}
			t.Log(err)
		})
	}
	for _, p := range []string{filepath.Join(outside, "out.csv"), filepath.Join(outside, "db.duckdb"), filepath.Join(outside, "export")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was created", p)
		}
	}
}

// TestPooledConnectionsAreLocked holds several connections at once and checks
// each one: the empty default schema (per connection) and the locked settings
// (per database). There are more than the pool's primed connections, which
// are set up before lock_configuration, so that connections opened after it
// are checked too.
func TestPooledConnectionsAreLocked(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t, func(c *duckdb.Config) { c.MemoryLimit = "512MB"; c.Threads = 3 })
	const tenant = "acme"
	const probe = `SELECT current_schema() AS s,
		current_setting('lock_configuration')::VARCHAR AS locked,
		current_setting('enable_external_access')::VARCHAR AS ext,
		current_setting('autoload_known_extensions')::VARCHAR AS autoload,
		current_setting('autoinstall_known_extensions')::VARCHAR AS autoinstall,
		current_setting('allow_community_extensions')::VARCHAR AS community,
		current_setting('threads')::VARCHAR AS threads,
		current_setting('memory_limit')::VARCHAR AS mem,
		current_setting('default_null_order')::VARCHAR AS nulls,
		current_setting('TimeZone')::VARCHAR AS tz,
		current_setting('temp_directory')::VARCHAR AS tmp,
		current_setting('allowed_directories')::VARCHAR AS dirs`
	const n = 10 // Threads 3: 6 primed connections, 4 opened on demand
	var readers []interface{ Release() }
	defer func() {
		for _, r := range readers {
			r.Release()
		}
	}()
	for range n {
		// Holding each reader keeps its connection checked out, so the pool
		// must hand out n distinct connections.
		rr, err := e.Execute(ctx, tenant, probe, nil)
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, rr)
		if !rr.Next() {
			t.Fatal(rr.Err())
		}
		rec := rr.RecordBatch()
		got := map[string]string{}
		for i, f := range rec.Schema().Fields() {
			got[f.Name] = value(rec.Column(i), 0).(string)
		}
		tdir := filepath.Join(root, "tenants", tenant)
		want := map[string]string{
			"s": "lg_empty", "locked": "true", "ext": "false", "autoload": "false", "autoinstall": "false",
			"community": "false", "threads": "3", "nulls": "nulls_first_on_asc_last_on_desc", "tz": "UTC",
			"tmp": filepath.Join(tdir, "tmp"),
		}
		for k, v := range want {
			if !strings.EqualFold(got[k], v) {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		if !strings.HasPrefix(got["mem"], "488.2 MiB") && !strings.Contains(got["mem"], "MiB") {
			t.Errorf("memory_limit = %q", got["mem"])
		}
		if !strings.Contains(got["dirs"], tdir+"/") {
			t.Errorf("allowed_directories = %q", got["dirs"])
		}
	}
}

// TestNullOrder checks MySQL's NULL ordering: first ascending, last descending.
func TestNullOrder(t *testing.T) {
	e, _ := newEngine(t)
	asc := mustQuery(t, e, "acme", "SELECT x FROM (VALUES (1), (NULL), (2)) v(x) ORDER BY x")
	desc := mustQuery(t, e, "acme", "SELECT x FROM (VALUES (1), (NULL), (2)) v(x) ORDER BY x DESC")
	if asc.values[0][0] != nil || desc.values[2][0] != nil {
		t.Fatalf("asc %v desc %v", asc.values, desc.values)
	}
}

// TestBindRefusesPaths binds versions whose files are outside the tenant
// directory; each must fail with ErrQuery and leave no view behind, without
// showing a path. Bind refuses what lies outside lexically; a symlink inside
// the directory that points out passes that check, and DuckDB's
// allowed_directories refuses it. An unlocked DuckDB reads every file, so a
// failure is the check and not a typo.
func TestBindRefusesPaths(t *testing.T) {
	ctx := context.Background()
	e, root := newEngine(t)
	const tenant = "acme"
	tdir := filepath.Join(root, "tenants", tenant)
	inside := writeFile(t, e, tenant, "ok", "SELECT 42 AS secret")
	other, otherRoot := newEngine(t)
	outside := writeFile(t, other, "x", "t", "SELECT 42 AS secret")
	sibling := writeFile(t, e, "other", "t", "SELECT 42 AS secret")
	prefix := writeFile(t, e, "acmecorp", "t", "SELECT 42 AS secret") // "acme" is a prefix of it
	siblingRel, err := filepath.Rel(tdir, sibling)
	if err != nil {
		t.Fatal(err)
	}
	dotdot := tdir + "/" + siblingRel // lexically under the tenant dir, "../" to the sibling
	link := filepath.Join(tdir, "link.parquet")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	linkDir := filepath.Join(tdir, "linkdir")
	if err := os.Symlink(filepath.Dir(outside), linkDir); err != nil {
		t.Fatal(err)
	}
	linkDirFile := filepath.Join(linkDir, filepath.Base(outside))
	siblingLink := filepath.Join(tdir, "sibling.parquet")
	if err := os.Symlink(sibling, siblingLink); err != nil {
		t.Fatal(err)
	}

	plain, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, p := range []string{inside, outside, sibling, prefix, dotdot, link, linkDirFile, siblingLink} {
		var n int
		if err := plain.QueryRowContext(ctx, "SELECT secret FROM read_parquet('"+p+"')").Scan(&n); err != nil || n != 42 {
			t.Fatalf("control: unlocked read of %s: %d, %v", p, n, err)
		}
	}
	// Control: the file inside binds and reads.
	rels, err := e.Bind(ctx, tenant, []backend.LocalTable{{ID: "ok@1", Paths: []string{inside}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := mustQuery(t, e, tenant, "SELECT secret FROM "+relSQL(rels[0])); r.values[0][0] != int32(42) {
		t.Fatalf("control: %v", r.values)
	}

	for i, c := range []struct {
		name  string
		paths []string
	}{
		{"outside", []string{outside}},
		{"sibling tenant", []string{sibling}},
		{"sibling with tenant as prefix", []string{prefix}},
		{"dotdot to sibling", []string{dotdot}},
		{"relative", []string{"tables/ok/x/part-0.parquet"}},
		{"tenant dir itself", []string{tdir}},
		{"root", []string{root}},
		{"one of several outside", []string{inside, outside}},
		{"symlink file out", []string{link}},
		{"symlink dir out", []string{linkDirFile}},
		{"symlink to sibling tenant", []string{siblingLink}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("bad%d@1", i)
			rels, err := e.Bind(ctx, tenant, []backend.LocalTable{{ID: id, Paths: c.paths}})
			if err == nil {
				// A symlink passes Bind's lexical check only if DuckDB does
				// not read the file when the view is created; the read must
				// fail then.
				_, err = query(ctx, e, tenant, "SELECT * FROM "+relSQL(rels[0]))
				if err == nil {
					t.Fatalf("%v: bound and read", c.paths)
				}
			}
			if !errors.Is(err, backend.ErrQuery) {
				t.Errorf("err = %v, want ErrQuery", err)
			}
			for _, p := range []string{root, otherRoot} {
				if strings.Contains(err.Error(), p) {
					t.Errorf("error leaks a path: %v", err)
				}
			}
			t.Log(err)
		})
	}
}
