package integration_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lakegate/localstack/standin"
)

// unavailableStage starts an S3 stand-in (closed at cleanup) and writes a
// stage descriptor for it; it returns the stand-in, the descriptor's path
// and serve's environment (the stand-in's test credentials, nothing of
// the developer's AWS environment).
func unavailableStage(t *testing.T) (*standin.Server, string, []string) {
	t.Helper()
	st, err := standin.Start(context.Background(), standin.Config{Buckets: []string{"lakegate"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	desc, err := json.Marshal(map[string]any{"version": 1, "s3": map[string]any{
		"bucket": "lakegate", "prefix": "p", "region": "us-east-1", "endpoint": st.URL(), "path_style": true}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stage.json")
	if err := os.WriteFile(path, desc, 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true")
	return st, path, env
}

// failWrites makes the stand-in refuse every write (503), as a stage that
// cannot be written; reads still work.
func failWrites(st *standin.Server) {
	st.FailRequests(func(r standin.Request) bool { return r.Method != http.MethodGet && r.Method != http.MethodHead })
}

// spooled counts the files in tenant's directory of the access log's spool.
func spooled(t *testing.T, dataDir, tenant string) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dataDir, "access-log-spool", tenant))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".parquet") {
			n++
		}
	}
	return n
}

// TestAccessLogStageUnavailable: `serve` on an S3 stage (the stand-in) whose
// writes start failing. Fail closed (the default): the events of the
// statements run meanwhile go to the spool on local disk and, once the
// stage returns, appear in system.access_events, each once. With the
// spool and the log's memory full, new statements are refused with
// Unavailable ("access log unavailable") and counted; once the stage
// returns, statements run again and every event of a statement that ran is
// delivered. Fail open (--access-log-fail-open): statements keep running
// and the events that could not be kept are counted as dropped.
func TestAccessLogStageUnavailable(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T, extra ...string) (*server, *standin.Server) {
		st, desc, env := unavailableStage(t)
		dataDir := t.TempDir()
		args := serveArgs(dataDir, append([]string{"--stage", desc, "--access-log-flush", "200ms",
			"--access-log-spool-max", "48KiB", "--access-log-memory-max", "64KiB"}, extra...)...)
		s, err := launch(t, dataDir, env, args...)
		if err != nil {
			t.Fatal(err)
		}
		return s, st
	}
	// count is the number of the analyst's events in system.access_events
	// whose statement names alias, as the tenant admin reads it; -1 while
	// the table cannot be read.
	count := func(admin *client, alias string) int {
		_, rows, err := admin.query(ctx, "SELECT count(*) FROM system.access_events WHERE principal = 'analyst@demo' AND statement LIKE '%"+alias+"%'")
		if err != nil || len(rows) != 1 {
			return -1
		}
		n, err := strconv.Atoi(rows[0][0])
		if err != nil {
			return -1
		}
		return n
	}
	// waitCount waits until count reaches want; the deadline bounds a
	// failure.
	waitCount := func(t *testing.T, admin *client, alias string, want int) {
		t.Helper()
		got := -1
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
			if got = count(admin, alias); got >= want {
				break
			}
		}
		if got != want {
			t.Fatalf("%d events of %s in system.access_events, want %d", got, alias, want)
		}
	}

	t.Run("fail closed", func(t *testing.T) {
		s, st := start(t)
		analyst := mustDial(t, s.uri(), bearer(s.token(t, "analyst@demo")))
		admin := mustDial(t, s.uri(), bearer(s.token(t, "admin@demo")))

		// The stage goes: the events of what runs meanwhile are spooled.
		failWrites(st)
		const spooledRuns = 5
		for range spooledRuns {
			if _, _, err := analyst.query(ctx, "SELECT count(*) AS while_down FROM sales.orders"); err != nil {
				t.Fatalf("a statement while the stage is down, with room in the spool: %v", err)
			}
		}
		for deadline := time.Now().Add(2 * time.Minute); spooled(t, s.DataDir, "demo") == 0; {
			if time.Now().After(deadline) {
				t.Fatal("nothing spooled within 2 minutes of the stage failing")
			}
		}
		// It returns: the spool is delivered, each event once.
		st.FailRequests(nil)
		waitCount(t, admin, "while_down", spooledRuns)

		// The stage goes again, long enough for the spool to fill: each
		// statement's event is spooled (the log's memory empties) until
		// the spool has no room for another file; then the events stay in
		// memory, and once that is full new statements are refused, fail
		// closed.
		failWrites(st)
		metrics := s.metricsURL(t)
		const spoolMax, fileRoom = 48 << 10, 8 << 10 // a file of a few events takes ~5 KiB
		ran := 0
		run := func() error {
			_, _, err := analyst.query(ctx, "SELECT count(*) AS until_full FROM sales.orders")
			if err == nil {
				ran++
			}
			return err
		}
		deadline := time.Now().Add(3 * time.Minute)
		for metricValue(t, metrics, "lakegate_access_log_spool_bytes") < spoolMax-fileRoom {
			if err := run(); err != nil {
				t.Fatalf("statement %d with room in the spool: %v", ran+1, err)
			}
			for metricValue(t, metrics, "lakegate_access_log_memory_bytes") > 0 {
				if time.Now().After(deadline) {
					t.Fatal("an event was neither written nor spooled within 3 minutes")
				}
			}
		}
		var refusal error
		for refusal == nil {
			if time.Now().After(deadline) {
				t.Fatalf("%d statements ran within 3 minutes of a failing stage; none refused", ran)
			}
			refusal = run()
		}
		if !strings.Contains(refusal.Error(), "access log unavailable") || !strings.Contains(refusal.Error(), "Unavailable") {
			t.Fatalf("refused with %v, want Unavailable \"access log unavailable\"", refusal)
		}
		if n := metricValue(t, s.metricsURL(t), "lakegate_access_log_refused_total"); n < 1 {
			t.Errorf("lakegate_access_log_refused_total = %v after a refusal", n)
		}
		if n := metricValue(t, metrics, "lakegate_access_log_spool_bytes"); n < spoolMax-fileRoom {
			t.Errorf("statements refused with %v bytes in a spool of %d", n, spoolMax)
		}
		// It returns: statements run again, and every event of a statement
		// that ran is delivered; the refused ones left none.
		st.FailRequests(nil)
		for deadline := time.Now().Add(2 * time.Minute); ; {
			_, _, err := analyst.query(ctx, "SELECT count(*) AS after_return FROM sales.orders")
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("statements still refused 2 minutes after the stage returned: %v", err)
			}
		}
		waitCount(t, admin, "until_full", ran)
		if n := metricValue(t, s.metricsURL(t), `lakegate_access_events_dropped_total{reason="lost"}`); n != 0 {
			t.Errorf("%v events lost", n)
		}
	})

	t.Run("fail open", func(t *testing.T) {
		s, st := start(t, "--access-log-fail-open", "demo")
		analyst := mustDial(t, s.uri(), bearer(s.token(t, "analyst@demo")))
		failWrites(st)
		dropped := `lakegate_access_events_dropped_total{reason="fail_open"}`
		ran := 0
		for deadline := time.Now().Add(2 * time.Minute); metricValue(t, s.metricsURL(t), dropped) == 0; ran++ {
			if time.Now().After(deadline) {
				t.Fatalf("%d statements ran over 2 minutes of a failing stage; no event dropped", ran)
			}
			if _, _, err := analyst.query(ctx, "SELECT count(*) FROM sales.orders"); err != nil {
				t.Fatalf("statement %d of a fail-open tenant: %v", ran+1, err)
			}
		}
		if n := metricValue(t, s.metricsURL(t), "lakegate_access_log_refused_total"); n != 0 {
			t.Errorf("lakegate_access_log_refused_total = %v for a fail-open tenant", n)
		}
		st.FailRequests(nil)
	})
}
