package integration_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"lakegate/authz"
	"lakegate/localstack/standin"
)

// tenantsS3 is the S3 side of a test: the stand-in (or, with AWS_ENDPOINT_URL,
// LocalStack or AWS), a fresh prefix in the bucket, an unchecked SDK client
// with the test credentials, and the environment `serve` gets.
type tenantsS3 struct {
	bucket, prefix, endpoint string
	standin                  *standin.Server // nil against AWS_ENDPOINT_URL: no server log
	raw                      *s3.Client
	env                      []string
}

// newTenantsS3 follows stage/stagetest's rule: AWS_ENDPOINT_URL (bucket
// $LAKEGATE_TEST_BUCKET, default "lakegate", credentials from the
// environment) when set, otherwise the stand-in on 127.0.0.1:0 with test/test.
func newTenantsS3(t *testing.T) *tenantsS3 {
	t.Helper()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	st := &tenantsS3{bucket: "lakegate", prefix: "s3tenants-" + hex.EncodeToString(rnd[:]), endpoint: os.Getenv("AWS_ENDPOINT_URL")}
	var cfg aws.Config
	if st.endpoint != "" {
		if b := os.Getenv("LAKEGATE_TEST_BUCKET"); b != "" {
			st.bucket = b
		}
		var err error
		if cfg, err = config.LoadDefaultConfig(t.Context(), config.WithRegion("us-east-1")); err != nil {
			t.Fatal(err)
		}
		st.env = os.Environ()
		if os.Getenv("AWS_REGION") == "" {
			st.env = append(st.env, "AWS_REGION=us-east-1")
		}
	} else {
		srv, err := standin.Start(context.Background(), standin.Config{Buckets: []string{st.bucket}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		st.standin, st.endpoint = srv, srv.URL()
		cfg = aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
		// Only the test credentials: nothing from the developer's AWS
		// environment (profiles, session tokens, endpoints) leaks in.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "AWS_") {
				st.env = append(st.env, kv)
			}
		}
		st.env = append(st.env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
			"AWS_EC2_METADATA_DISABLED=true")
	}
	st.raw = s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle, o.Region = aws.String(st.endpoint), true, "us-east-1"
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return st
}

// descriptorFile writes the root stage descriptor for `serve --stage`.
func (st *tenantsS3) descriptorFile(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"version": 1, "s3": map[string]any{
		"bucket": st.bucket, "prefix": st.prefix, "region": "us-east-1", "endpoint": st.endpoint, "path_style": true}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stage.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tenantPrefix is the key prefix every request for tenant's data must name.
func (st *tenantsS3) tenantPrefix(tenant string) string {
	return st.prefix + "/tenants/" + tenant + "/"
}

// mark returns the position in the stand-in's request log (-1 without one).
func (st *tenantsS3) mark() int {
	if st.standin == nil {
		return -1
	}
	return len(st.standin.Requests())
}

// requestKeys lists every key a logged request names: the object key, list
// prefix / start-after / key-marker, copy source and multi-delete keys. A
// request naming none (a bucket-level call) names "".
func (st *tenantsS3) requestKeys(r standin.Request) []string {
	var keys []string
	if k := r.Key(); k != "" {
		keys = append(keys, k)
	}
	for _, p := range []string{"prefix", "start-after", "key-marker"} {
		keys = append(keys, r.Query[p]...)
	}
	if r.CopySource != "" {
		src := strings.TrimPrefix(r.CopySource, "/")
		if b, k, ok := strings.Cut(src, "/"); ok && b == st.bucket {
			src = k
		} else {
			src = "\x00other bucket: " + r.CopySource
		}
		keys = append(keys, src)
	}
	keys = append(keys, r.DeleteKeys...)
	if _, ok := r.Query["delete"]; ok && len(r.DeleteKeys) == 0 {
		keys = append(keys, "") // a delete whose keys we could not see
	}
	if len(keys) == 0 {
		keys = []string{""}
	}
	return keys
}

// within fails unless every request logged in [from, to) is for the test
// bucket and names only keys under tenant's prefix, with no "", ".", ".."
// segments. It returns the requests (nil without a server log) for further
// checks.
func (st *tenantsS3) within(t *testing.T, what, tenant string, from, to int) []standin.Request {
	t.Helper()
	if st.standin == nil {
		return nil
	}
	want := st.tenantPrefix(tenant)
	reqs := st.standin.Requests()[from:to]
	for _, r := range reqs {
		if r.Bucket() != st.bucket {
			t.Errorf("%s: %s %s: bucket %q, want %q", what, r.Method, r.Path, r.Bucket(), st.bucket)
			continue
		}
		for _, k := range st.requestKeys(r) {
			rest, ok := strings.CutPrefix(k, want)
			if !ok {
				t.Errorf("%s: %s %s?%s names key %q outside %s", what, r.Method, r.Path, r.Query.Encode(), k, want)
				continue
			}
			for _, seg := range strings.Split(rest, "/") {
				if seg == "." || seg == ".." || strings.ContainsRune(seg, 0) {
					t.Errorf("%s: %s %s names key %q with a segment %q", what, r.Method, r.Path, k, seg)
				}
			}
		}
	}
	return reqs
}

// etags lists the objects under tenant's prefix with their ETags through
// the unchecked client.
func (st *tenantsS3) etags(t *testing.T, tenant string) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := s3.NewListObjectsV2Paginator(st.raw, &s3.ListObjectsV2Input{Bucket: &st.bucket, Prefix: aws.String(st.tenantPrefix(tenant))})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToString(o.ETag)
		}
	}
	return out
}

var tenantsMetaBanner = regexp.MustCompile(`metasrv REST on (https?://\S+)`)

// startServeWithEnv is startServeArgs with env as the process's whole
// environment; it also returns the metasrv REST base URL from the banner.
func startServeWithEnv(t *testing.T, dataDir string, env []string, args ...string) (*server, string) {
	t.Helper()
	s, err := launch(t, dataDir, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	m := tenantsMetaBanner.FindStringSubmatch(s.Banner)
	if m == nil {
		t.Fatalf("no metasrv REST address in the banner:\n%s", s.Banner)
	}
	return s, m[1]
}

// TestS3TwoTenants: two tenants on one S3 stage, provisioned through the
// REST API by an operator's principal map, write and read tables with the
// same names through ingest and SQL; each sees only its own rows, nothing
// alice tries reaches a key outside her tenant's prefix, bob's objects are
// untouched, and the per-tenant read cache refetches only alice's keys.
func TestS3TwoTenants(t *testing.T) {
	ctx := context.Background()
	st := newTenantsS3(t)

	// The operator's principal map: a deployment admin and one user per
	// tenant, both granted the namespace "sales".
	tokens := map[string]string{}
	var specs []authz.PrincipalSpec
	for _, p := range []authz.PrincipalSpec{
		{ID: "ops-admin", Tenant: "ops", Role: "operator"},
		{ID: "alice@a", Tenant: "a", Role: "user", Namespaces: []string{"sales"}},
		{ID: "bob@b", Tenant: "b", Role: "user", Namespaces: []string{"sales"}},
	} {
		tok, err := authz.NewToken(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tokens[p.ID] = tok
		p.TokenHashes = []string{authz.HashToken(tok).String()}
		specs = append(specs, p)
	}
	principals := filepath.Join(t.TempDir(), "principals.yaml")
	if err := authz.WritePrincipalMap(principals, specs); err != nil {
		t.Fatal(err)
	}

	dataDir := t.TempDir()
	args := []string{"serve", "--data-dir", dataDir, "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--metasrv-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0",
		"--principals", principals, "--stage", st.descriptorFile(t), "--log-level", "warn",
		// The orphan collector visits every tenant's stage on its own
		// schedule (at start, then every interval); the request log is
		// attributed to one tenant per phase, so it stays off here; so
		// does the access log, which writes every tenant's events into
		// its prefix on its own schedule.
		"--gc-interval", "0", "--access-log=false"}
	srv, metaURL := startServeWithEnv(t, dataDir, st.env, args...)
	if strings.Contains(srv.Banner, "They are shown once") {
		t.Fatalf("a demo was provisioned with --principals:\n%s", srv.Banner)
	}
	if !strings.Contains(srv.Banner, "s3://"+st.bucket+"/"+st.prefix) {
		t.Fatalf("banner does not name the S3 stage:\n%s", srv.Banner)
	}

	// Provisioning over REST: the admin creates the metalakes, each owner
	// its catalog and schema.
	rest := func(id string) (*metasrvEnv, *metasrvProc) {
		return &metasrvEnv{adminTok: tokens[id], client: &http.Client{Timeout: 20 * time.Second}},
			&metasrvProc{id: "serve", httpAddr: strings.TrimPrefix(metaURL, "http://")}
	}
	admin, node := rest("ops-admin")
	for tenant, owner := range map[string]string{"a": "alice@a", "b": "bob@b"} {
		admin.must(t, node, "POST", "/api/metalakes", map[string]any{"name": tenant, "owner": owner})
		e, _ := rest(owner)
		e.must(t, node, "POST", "/api/metalakes/"+tenant+"/catalogs", map[string]any{"name": "lake", "type": "managed"})
		e.must(t, node, "POST", "/api/metalakes/"+tenant+"/catalogs/lake/schemas", map[string]any{"name": "sales"})
	}
	if aliceREST, _ := rest("alice@a"); aliceREST.do(t, node, "GET", "/api/metalakes/b", nil).status != http.StatusNotFound {
		t.Fatal("alice can address metalake b over REST")
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ingest := func(t *testing.T, c *client, table, mode string, first, n int64) {
		t.Helper()
		rdr := ingestRows(mem, first, n)
		defer rdr.Release()
		got, err := c.ingest(ctx, "sales", table, mode, rdr)
		if err != nil || got != n {
			t.Fatalf("ingest %d rows into sales.%s (%s): %d, %v", n, table, mode, got, err)
		}
	}
	sumIDs := func(first, n int64) string { return fmt.Sprint(n*first + n*(n-1)/2) }

	alice := mustDial(t, srv.uri(), bearer(tokens["alice@a"]))
	bob := mustDial(t, srv.uri(), bearer(tokens["bob@b"]))
	const bobFirst, bobN = 1_000_001, 7_000
	aliceWant := []string{"60000", sumIDs(1, 60_000), "1", "60000"}
	bobWant := []string{fmt.Sprint(bobN), sumIDs(bobFirst, bobN), fmt.Sprint(bobFirst), fmt.Sprint(bobFirst + bobN - 1)}
	const countSQL = "SELECT count(*), sum(id), min(id), max(id) FROM sales.t"

	from := st.mark()
	t.Run("alice writes and reads", func(t *testing.T) {
		ingest(t, alice, "t", adbc.OptionValueIngestModeCreate, 1, 50_000)
		ingest(t, alice, "t", adbc.OptionValueIngestModeAppend, 50_001, 10_000)
		wantRows(t, alice.mustRows(t, countSQL), aliceWant)
		if _, err := alice.exec(ctx, "CREATE TABLE sales.t2 AS SELECT id FROM sales.t WHERE id < 100"); err != nil {
			t.Fatal(err)
		}
		wantRows(t, alice.mustRows(t, "SELECT count(*), sum(id) FROM sales.t2"), []string{"99", "4950"})
	})
	if reqs := st.within(t, "alice writes", "a", from, st.mark()); st.standin != nil && len(reqs) == 0 {
		t.Error("alice's writes sent no request to S3")
	}

	from = st.mark()
	t.Run("bob writes the same names", func(t *testing.T) {
		ingest(t, bob, "t", adbc.OptionValueIngestModeCreate, bobFirst, bobN)
		ingest(t, bob, "bonly", adbc.OptionValueIngestModeCreate, 1, 10)
		wantRows(t, bob.mustRows(t, countSQL), bobWant)
		if _, _, err := bob.query(ctx, "SELECT * FROM sales.t2"); adbcStatus(err) != adbc.StatusNotFound {
			t.Fatalf("bob reads alice's sales.t2: %v", err)
		}
	})
	if reqs := st.within(t, "bob writes", "b", from, st.mark()); st.standin != nil && len(reqs) == 0 {
		t.Error("bob's writes sent no request to S3")
	}

	from = st.mark()
	t.Run("alice still sees only her rows", func(t *testing.T) {
		wantRows(t, alice.mustRows(t, countSQL), aliceWant)
		wantRows(t, alice.mustRows(t, "SELECT count(*) FROM sales.t WHERE id > 60000"), []string{"0"})
	})
	st.within(t, "alice reads", "a", from, st.mark())

	bobObjects := st.etags(t, "b")
	if len(bobObjects) == 0 {
		t.Fatalf("no objects under %s", st.tenantPrefix("b"))
	}
	var bobKey string
	for k := range bobObjects {
		if strings.HasSuffix(k, ".parquet") {
			bobKey = k
			break
		}
	}
	if bobKey == "" {
		t.Fatalf("no parquet object among bob's: %v", bobObjects)
	}
	bobURL := "s3://" + st.bucket + "/" + bobKey
	bobGlob := "s3://" + st.bucket + "/" + st.tenantPrefix("b") + "**/*.parquet"

	aliceObjects := st.etags(t, "a")
	// CTAS into the granted schema under a name the catalog refuses.
	badCTASTargets := []string{"t/../../b", "t%2F..%2F..%2Fb", "t\u2215..\u2215..\u2215b", "t\uff0f..\uff0f..\uff0fb", strings.Repeat("t", 2048)}
	var badCTAS []string
	for _, name := range badCTASTargets {
		sql := "CREATE TABLE sales.`" + name + "` AS SELECT 1 AS id"
		badCTAS = append(badCTAS, sql)
	}
	from = st.mark()
	t.Run("alice's attacks", func(t *testing.T) {
		for _, sql := range append([]string{
			"SELECT * FROM `../b`.t",
			"SELECT * FROM sales.`../../b/tables`",
			"SELECT * FROM `b.sales`.t",
			"SELECT * FROM `b`.`sales.t`",
			"SELECT * FROM b.sales.t",
			"SELECT * FROM `/" + st.tenantPrefix("b") + "`.t",
			"SELECT * FROM read_parquet('" + bobURL + "')",
			"SELECT * FROM '" + bobURL + "'",
			"SELECT * FROM `" + bobURL + "`",
			"INSERT INTO sales.t SELECT * FROM read_parquet('" + bobGlob + "')",
			"INSERT INTO sales.t SELECT * FROM read_parquet('" + bobURL + "')",
			"CREATE TABLE sales.x AS SELECT * FROM '" + bobURL + "'",
			"CREATE TABLE sales.x AS SELECT * FROM '" + bobGlob + "'",
			"CREATE TABLE `../b`.t AS SELECT 1 AS id",
			"DROP TABLE `../b`.t",
			"DROP TABLE sales.bonly",
			"INSERT INTO sales.bonly (id) VALUES (1)",
		}, badCTAS...) {
			// Writes go through ExecuteUpdate, so the gate, not the RPC
			// kind, is what refuses them.
			var err error
			if strings.HasPrefix(sql, "SELECT") {
				_, _, err = alice.query(ctx, sql)
			} else {
				_, err = alice.exec(ctx, sql)
			}
			switch {
			case refused(err):
			default:
				t.Errorf("%s: %v (status %v), want NotFound or InvalidArgument", truncName(sql), err, adbcStatus(err))
			}
		}
		longName := strings.Repeat("t", 2048)
		for _, name := range []struct{ schema, table string }{
			{"../b", "t"},
			{"../../b/tables", "t"},
			{"sales", "t/../../b"},
			{"sales", "../../b/t"},
			{"sales\x00", "t"},
			{"sales", "t\x00"},
			{"sales", "t\x00/../../b"},
			{"..%2Fb", "t"},
			{"sales", "t%2F..%2F..%2Fb"},
			{"..\u2215b", "t"},
			{"sales", "t\u2215..\u2215..\u2215b"},
			{"..\uff0fb", "t"},
			{"sales", "t\uff0f..\uff0f..\uff0fb"},
			{"sales", longName},
			{longName, "t"},
		} {
			for _, mode := range []string{adbc.OptionValueIngestModeCreate, adbc.OptionValueIngestModeAppend} {
				rdr := ingestRows(mem, 1, 10)
				_, err := alice.ingest(ctx, name.schema, name.table, mode, rdr)
				rdr.Release()
				if !refused(err) {
					t.Errorf("ingest (%s) into %q.%q: %v (status %v), want NotFound or InvalidArgument",
						mode, truncName(name.schema), truncName(name.table), err, adbcStatus(err))
				}
			}
		}
		// Bob's table names from alice's session are just missing tables:
		// the same status and message template as a name nobody has.
		missing := func(table string) string {
			_, _, err := alice.query(ctx, "SELECT * FROM sales."+table)
			if adbcStatus(err) != adbc.StatusNotFound {
				t.Errorf("SELECT from sales.%s: %v (status %v), want NotFound", table, err, adbcStatus(err))
				return ""
			}
			return strings.ReplaceAll(err.Error(), table, "<name>")
		}
		if b, n := missing("bonly"), missing("nosuchtbl"); b != n {
			t.Errorf("bob's table and a missing one answer differently:\n%s\n%s", b, n)
		}
		rdr := ingestRows(mem, 1, 10)
		_, err := alice.ingest(ctx, "sales", "bonly", adbc.OptionValueIngestModeAppend, rdr)
		rdr.Release()
		if adbcStatus(err) != adbc.StatusNotFound {
			t.Errorf("append into bob's table name: %v (status %v), want NotFound", err, adbcStatus(err))
		}
	})
	if reqs := st.within(t, "alice's attacks", "a", from, st.mark()); len(reqs) > 0 {
		// Refused attacks make no storage call; the known CTAS cases above
		// write and delete inside alice's prefix.
		t.Logf("alice's attacks caused %d S3 requests (all under %s)", len(reqs), st.tenantPrefix("a"))
	}

	// Alice's own data and catalog are as before: no attack added a row, a
	// table or an object (the failed CTAS writes were cleaned up).
	wantRows(t, alice.mustRows(t, countSQL), aliceWant)
	aliceREST, _ := rest("alice@a")
	var tables []string
	for _, id := range aliceREST.must(t, node, "GET", "/api/metalakes/a/catalogs/lake/schemas/sales/tables", nil).body["identifiers"].([]any) {
		tables = append(tables, id.(map[string]any)["name"].(string))
	}
	if slices.Sort(tables); !slices.Equal(tables, []string{"t", "t2"}) {
		t.Errorf("alice's tables after the attacks: %v, want [t t2]", tables)
	}
	if got := st.etags(t, "a"); !maps.Equal(got, aliceObjects) {
		t.Errorf("alice's objects changed during the attacks:\nbefore %v\nafter  %v", aliceObjects, got)
	}

	after := st.etags(t, "b")
	if len(after) != len(bobObjects) {
		t.Errorf("bob's objects: %d before alice's attacks, %d after", len(bobObjects), len(after))
	}
	for k, etag := range bobObjects {
		if after[k] != etag {
			t.Errorf("bob's object %s: ETag %s before alice's attacks, %q after", k, etag, after[k])
		}
	}
	from = st.mark()
	wantRows(t, bob.mustRows(t, countSQL), bobWant)
	st.within(t, "bob reads after the attacks", "b", from, st.mark())

	// Restarts on the same data directory: warm (alice's cache directory
	// survives) and cold (deleted while the server is stopped). Either way
	// her tables read back, and neither the start nor her reads name a key
	// outside her prefix.
	cacheDir := filepath.Join(dataDir, "stage", "tenants", "a", "cache")
	restartAndRead := func(t *testing.T, what string) []standin.Request {
		t.Helper()
		from := st.mark()
		srv.stop(t)
		if ps := srv.cmd.ProcessState; ps == nil || !ps.Success() {
			t.Fatalf("serve did not exit cleanly (%v); stderr:\n%s", ps, srv.stderr.String())
		}
		if what == "cold" {
			if _, err := os.Stat(cacheDir); err != nil {
				t.Fatalf("alice's cache directory: %v", err)
			}
			if err := os.RemoveAll(cacheDir); err != nil {
				t.Fatal(err)
			}
		}
		srv, _ = startServeWithEnv(t, dataDir, st.env, args...)
		c := mustDial(t, srv.uri(), bearer(tokens["alice@a"]))
		for _, q := range []struct {
			sql  string
			want []string
		}{{countSQL, aliceWant}, {"SELECT count(*), sum(id) FROM sales.t2", []string{"99", "4950"}}} {
			_, rows, err := c.query(ctx, q.sql)
			if err != nil {
				t.Fatalf("%s after a %s restart: %v; serve's log:\n%s", q.sql, what, err, srv.stderr.String())
			}
			wantRows(t, rows, q.want)
		}
		return st.within(t, what+" restart read", "a", from, st.mark())
	}
	t.Run("warm restart", func(t *testing.T) {
		if reqs := restartAndRead(t, "warm"); st.standin != nil {
			t.Logf("warm read: %d S3 requests", len(reqs))
		}
	})
	t.Run("cold restart", func(t *testing.T) {
		reqs := restartAndRead(t, "cold")
		gets := 0
		for _, r := range reqs {
			if r.Method == http.MethodGet && r.Key() != "" {
				gets++
			}
		}
		if st.standin != nil && gets == 0 {
			t.Errorf("cold read fetched nothing from S3: %v", reqs)
		}
		if _, err := os.Stat(cacheDir); err != nil {
			t.Errorf("cache directory after the cold read: %v", err)
		}
	})
}

// refused reports whether err is a refusal: NotFound (denied and missing
// look the same) or InvalidArgument (rejected by the gate or the name rules).
func refused(err error) bool {
	s := adbcStatus(err)
	return err != nil && (s == adbc.StatusNotFound || s == adbc.StatusInvalidArgument)
}

// truncName shortens a name for messages.
func truncName(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
