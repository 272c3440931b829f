package integration_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var bannerMetrics = regexp.MustCompile(`metrics:\s+(http://\S+/metrics)`)

// TestMetrics: serve exposes the gateway's and the embedded metasrv's
// metrics on one endpoint; a denied query is counted by its reason while
// the client sees a plain not-found; no label names a tenant, user, table
// or statement.
func TestMetrics(t *testing.T) {
	srv := startServe(t)
	m := bannerMetrics.FindStringSubmatch(srv.Banner)
	if m == nil {
		t.Fatalf("no metrics address in the banner:\n%s", srv.Banner)
	}
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

	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", m[1], resp.StatusCode, err)
	}
	text := string(body)
	for _, want := range []string{
		`lakegate_authz_denials_total{reason="namespace"} 1`,
		`lakegate_flight_requests_total{code="OK",rpc="DoGet"}`,
		`lakegate_flight_requests_total{code="NotFound",rpc="GetFlightInfo"}`,
		`lakegate_statement_seconds_count{kind="query"}`,
		`lakegate_metasrv_request_seconds_count{op="resolve",outcome="ok"}`,
		`lakegate_admission_total{outcome="admitted"}`,
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
