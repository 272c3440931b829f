package integration_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
)

var bannerMetrics = regexp.MustCompile(`metrics:\s+(http://\S+/metrics)`)

// metricsURL is the metrics endpoint serve's banner names.
func (s *server) metricsURL(t testing.TB) string {
	t.Helper()
	m := bannerMetrics.FindStringSubmatch(s.Banner)
	if m == nil {
		t.Fatalf("no metrics address in the banner:\n%s", s.Banner)
	}
	return m[1]
}

// TestMetrics: serve exposes the gateway's and the embedded metasrv's
// metrics on one endpoint; a denied query is counted by its reason while
// the client sees a plain not-found; no label names a tenant, user, table
// or statement.
func TestMetrics(t *testing.T) {
	srv := startServe(t)
	metricsURL := srv.metricsURL(t)
	ctx := context.Background()
	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	if _, _, err := analyst.query(ctx, "SELECT count(*) FROM sales.orders"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := analyst.query(ctx, "SELECT * FROM hr.employees"); err == nil {
		t.Fatal("analyst read hr.employees")
	}
	if _, err := dial(t, srv.uri(), bearer("lg_"+strings.Repeat("x", 43))); err == nil {
		// The driver may connect lazily; force a call.
		t.Log("connected with a bad token; the first call fails")
	}

	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", metricsURL, resp.StatusCode, err)
	}
	text := string(body)
	for _, want := range []string{
		`lakegate_authz_denials_total{reason="namespace"} 1`,
		`lakegate_flight_requests_total{code="OK",rpc="DoGet"}`,
		`lakegate_flight_requests_total{code="NotFound",rpc="GetFlightInfo"}`,
		`lakegate_statement_seconds_count{kind="query"}`,
		`lakegate_metasrv_request_seconds_count{op="resolve",outcome="ok"}`,
		`lakegate_decisions_total{source="asked"}`,
		`lakegate_admission_total{outcome="admitted",work="execute"}`,
		"metasrv_", // the embedded node's own metrics
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, secret := range []string{"demo", "analyst", "employees", "orders", "SELECT", srv.DataDir} {
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(line, "#") && strings.Contains(line, secret) {
				t.Errorf("a metric names %q: %s", secret, line)
			}
		}
	}
}

// metricValue returns the value of the metric line starting with name (0 if
// absent).
func metricValue(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return 0
}

// TestDeniedCostsLikeMissing: a table the catalog forbids and one that does
// not exist, in a schema the caller may use, get the same error and cost
// the same calls to metasrv.
func TestDeniedCostsLikeMissing(t *testing.T) {
	srv := startServe(t)
	metricsURL := srv.metricsURL(t)
	env, node := serveMetasrv(t, srv)
	ctx := context.Background()

	admin := mustDial(t, srv.uri(), bearer(srv.token(t, "admin@demo")))
	if _, err := admin.exec(ctx, "CREATE TABLE sales.secret AS SELECT 1 AS id"); err != nil {
		t.Fatal(err)
	}
	const ml = "/api/metalakes/demo"
	env.must(t, node, "POST", ml+"/roles", map[string]any{"name": "no_secret", "securableObjects": []map[string]any{
		{"fullName": "lake.sales.secret", "type": "TABLE", "privileges": []map[string]string{{"name": "SELECT_TABLE", "condition": "DENY"}}}}})
	env.must(t, node, "PUT", ml+"/permissions/users/analyst@demo/grant", map[string]any{"roleNames": []string{"no_secret"}})

	analyst := mustDial(t, srv.uri(), bearer(srv.token(t, "analyst@demo")))
	const resolves = `lakegate_metasrv_request_seconds_count{op="resolve",outcome="ok"}`
	const generations = `lakegate_metasrv_request_seconds_count{op="generation",outcome="ok"}`
	cost := func(sql string) (float64, error) {
		before := metricValue(t, metricsURL, resolves) + metricValue(t, metricsURL, generations)
		_, _, err := analyst.query(ctx, sql)
		return metricValue(t, metricsURL, resolves) + metricValue(t, metricsURL, generations) - before, err
	}
	callsDenied, errDenied := cost("SELECT * FROM sales.secret")
	callsMissing, errMissing := cost("SELECT * FROM sales.nosuch")
	if adbcStatus(errDenied) != adbc.StatusNotFound || adbcStatus(errMissing) != adbc.StatusNotFound {
		t.Fatalf("denied: %v; missing: %v", errDenied, errMissing)
	}
	if strings.ReplaceAll(errDenied.Error(), "secret", "nosuch") != errMissing.Error() {
		t.Errorf("messages differ:\n denied  %s\n missing %s", errDenied, errMissing)
	}
	if callsDenied != callsMissing || callsDenied == 0 {
		t.Errorf("metasrv calls: denied %v, missing %v", callsDenied, callsMissing)
	}
	// Asked again at the same generation, both are answered from the
	// gateway's decision cache: the same answers, and again the same cost
	// (no call at all).
	const reused = `lakegate_decisions_total{source="reused"}`
	wasReused := metricValue(t, metricsURL, reused)
	againDenied, errAgainDenied := cost("SELECT * FROM sales.secret")
	againMissing, errAgainMissing := cost("SELECT * FROM sales.nosuch")
	if errAgainDenied == nil || errAgainDenied.Error() != errDenied.Error() || errAgainMissing == nil || errAgainMissing.Error() != errMissing.Error() {
		t.Errorf("asked again: denied %v, missing %v", errAgainDenied, errAgainMissing)
	}
	if againDenied != 0 || againMissing != 0 {
		t.Errorf("metasrv calls asked again: denied %v, missing %v, want 0 (reused)", againDenied, againMissing)
	}
	if n := metricValue(t, metricsURL, reused) - wasReused; n != 2 {
		t.Errorf("reused decisions = %v, want 2", n)
	}
	if d := metricValue(t, metricsURL, `lakegate_authz_denials_total{reason="privilege"}`); d != 4 {
		t.Errorf("privilege denials = %v, want 4 (a missing table counts like a forbidden one)", d)
	}
	// The owner still reads it.
	if _, _, err := admin.query(ctx, "SELECT * FROM sales.secret"); err != nil {
		t.Fatal(err)
	}
}

// TestListingReused: a second GetTables at the same generation is answered
// from the gateway's cached listing (no metasrv call); a governance change
// (a DENY on one table) is in the very next listing (serve checks the
// embedded node at every reuse).
func TestListingReused(t *testing.T) {
	srv := startServe(t)
	metricsURL := srv.metricsURL(t)
	env, node := serveMetasrv(t, srv)
	cl, ctx := flightSQLAs(t, srv, srv.token(t, "analyst@demo"))
	const lists = `lakegate_metasrv_request_seconds_count{op="list",outcome="ok"}`
	tables := func() []string {
		t.Helper()
		info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{})
		if err != nil {
			t.Fatal(err)
		}
		got := readStrings(t, cl, ctx, info, 2)
		slices.Sort(got)
		return got
	}
	before := metricValue(t, metricsURL, lists)
	first := tables()
	if !slices.Contains(first, "orders") {
		t.Fatalf("GetTables: %v", first)
	}
	if again := tables(); !slices.Equal(again, first) {
		t.Fatalf("second GetTables %v, first %v", again, first)
	}
	if n := metricValue(t, metricsURL, lists) - before; n != 1 {
		t.Errorf("two GetTables at one generation: %v list calls, want 1", n)
	}
	env.must(t, node, "POST", "/api/metalakes/demo/roles", map[string]any{"name": "no_orders", "securableObjects": []map[string]any{
		{"fullName": "lake.sales.orders", "type": "TABLE", "privileges": []map[string]string{{"name": "SELECT_TABLE", "condition": "DENY"}}}}})
	env.must(t, node, "PUT", "/api/metalakes/demo/permissions/users/analyst@demo/grant", map[string]any{"roleNames": []string{"no_orders"}})
	if after := tables(); slices.Contains(after, "orders") || len(after) != len(first)-1 {
		t.Errorf("GetTables right after the DENY: %v", after)
	}
}
