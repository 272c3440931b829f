package metasrv_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestMetricsAfterWrites(t *testing.T) {
	n := single(t)
	must(t, n, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}})
	must(t, n, call{method: "POST", path: ml + "/tags", token: tokAlice, body: map[string]any{"name": "pii"}})
	must(t, n, call{method: "POST", path: ml + "/objects/catalog/lake/tags", token: tokAlice, body: map[string]any{"tagsToAdd": []string{"pii"}}})
	expect(t, n, call{method: "POST", path: ml + "/catalogs", token: tokAlice, body: map[string]any{"name": "lake"}}, 409, 1004)
	expect(t, n, call{method: "GET", path: "/api/metalakes/acme/nosuch/acme", token: tokAlice}, 404, 1003)

	rec := httptest.NewRecorder()
	n.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body)
	}
	text := rec.Body.String()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing the exposition: %v\n%s", err, text)
	}
	for _, name := range []string{
		"metasrv_http_requests_total", "metasrv_http_request_duration_seconds",
		"metasrv_proposal_duration_seconds", "metasrv_fsm_apply_duration_seconds",
		"metasrv_raft_log_write_duration_seconds", "metasrv_raft_leader_changes_total", "metasrv_raft_state", "metasrv_raft_term",
		"metasrv_raft_last_index", "metasrv_raft_commit_index", "metasrv_raft_applied_index",
		"metasrv_raft_servers", "metasrv_metalakes", "metasrv_audit_write_errors_total",
	} {
		if families[name] == nil {
			t.Errorf("metric family %s missing", name)
		}
	}
	// No label value names the metalake (or a user, or an object).
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				for _, bad := range []string{"acme", "alice", "lake/", "pii"} {
					if strings.Contains(lp.GetValue(), bad) {
						t.Errorf("%s: label %s=%q contains %q", name, lp.GetName(), lp.GetValue(), bad)
					}
				}
			}
		}
	}
	find := func(name string, labels map[string]string) *dto.Metric {
		t.Helper()
	next:
		for _, m := range families[name].GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			return m
		}
		t.Fatalf("%s%v: no such series in\n%s", name, labels, text)
		return nil
	}
	route := "POST /api/metalakes/{tenant}/objects/{type}/{fullName}/tags"
	if got := find("metasrv_http_requests_total", map[string]string{"route": route, "code": "200"}).GetCounter().GetValue(); got != 1 {
		t.Errorf("tag association requests: %v", got)
	}
	find("metasrv_http_requests_total", map[string]string{"route": "POST /api/metalakes/{tenant}/catalogs", "code": "409"})
	find("metasrv_http_requests_total", map[string]string{"route": "/api/", "code": "404"})
	// metalake create, catalog, tag, association committed; the duplicate
	// catalog rejected by the FSM.
	if got := find("metasrv_proposal_duration_seconds", map[string]string{"outcome": "committed"}).GetHistogram().GetSampleCount(); got != 4 {
		t.Errorf("committed proposals: %d", got)
	}
	if got := find("metasrv_proposal_duration_seconds", map[string]string{"outcome": "rejected"}).GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("rejected proposals: %d", got)
	}
	if got := find("metasrv_fsm_apply_duration_seconds", nil).GetHistogram().GetSampleCount(); got < 5 {
		t.Errorf("FSM applies: %d", got)
	}
	// Each of the 5 entries above was written to the log before it was
	// applied (several may share one write).
	if h := find("metasrv_raft_log_write_duration_seconds", nil).GetHistogram(); h.GetSampleCount() < 1 || h.GetSampleSum() <= 0 {
		t.Errorf("log writes: %d taking %vs", h.GetSampleCount(), h.GetSampleSum())
	}
	if got := find("metasrv_raft_state", map[string]string{"state": "Leader"}).GetGauge().GetValue(); got != 1 {
		t.Errorf("raft state Leader: %v", got)
	}
	if got := find("metasrv_raft_leader_changes_total", nil).GetCounter().GetValue(); got < 1 {
		t.Errorf("leader changes: %v", got)
	}
	if got := find("metasrv_raft_applied_index", nil).GetGauge().GetValue(); got < 5 {
		t.Errorf("applied index: %v", got)
	}
	if got := find("metasrv_metalakes", nil).GetGauge().GetValue(); got != 1 {
		t.Errorf("metalakes: %v", got)
	}
}
