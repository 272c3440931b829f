package integration_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"lakegate/authz"
	"lakegate/flight/ticket"
)

// Health service names of `lakegate gateway` (flight.LivenessService and
// flight.ReadinessService).
const (
	livenessService  = ""
	readinessService = "arrow.flight.protocol.FlightService"
)

// gatewayExitBound bounds how long a gateway may take to exit after SIGTERM;
// it is a failure bound only.
const gatewayExitBound = 60 * time.Second

// writeSecret writes content to dir/name with mode 0600.
func writeSecret(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newToken(t *testing.T) string {
	t.Helper()
	tok, err := authz.NewToken(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// healthStatus asks the server for service's health status.
func healthStatus(ctx context.Context, conn *grpc.ClientConn, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	return r.GetStatus(), err
}

// waitServing watches service until it reports SERVING.
func waitServing(ctx context.Context, conn *grpc.ClientConn, service string) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	w, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return err
	}
	for {
		r, err := w.Recv()
		if err != nil {
			return err
		}
		if r.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
	}
}

// waitExit waits for the process to exit after a signal (bounded) and
// returns its state.
func waitExit(t *testing.T, s *server) *os.ProcessState {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("waiting for the gateway: %v", err)
		}
	case <-time.After(gatewayExitBound):
		_ = s.cmd.Process.Kill()
		<-done
		t.Fatalf("the gateway did not exit within %s of SIGTERM; stderr:\n%s", gatewayExitBound, s.stderr.String())
	}
	return s.cmd.ProcessState
}

// TestGateway runs a standalone metasrv node and two `lakegate gateway`
// replicas sharing one ticket key ring and one local stage: readiness
// follows metasrv, a user ingests through one gateway and reads through the
// other, a ticket from one is redeemed at the other, and SIGTERM drains
// (exit 0) or, past --shutdown-timeout, aborts a held stream (exit 1).
func TestGateway(t *testing.T) {
	dir := t.TempDir()
	gwTok, aliceTok := newToken(t), newToken(t)

	// metasrv's map: the deployment admin, the node's peer identity and the
	// gateways' query_service identity, a delegate for acme.
	env := newMetasrvEnv(t,
		authz.PrincipalSpec{ID: "gateway", Tenant: "platform", Role: "query_service", DelegateTenants: []string{"acme"}, TokenHashes: []string{authz.HashToken(gwTok).String()}})
	adminTok := env.adminTok
	// The gateways' map: the end users.
	gwPrincipals := filepath.Join(dir, "gateway-principals.yaml")
	if err := authz.WritePrincipalMap(gwPrincipals, []authz.PrincipalSpec{
		{ID: "alice@acme", Tenant: "acme", Role: "user", Namespaces: []string{"sales"}, TokenHashes: []string{authz.HashToken(aliceTok).String()}},
	}); err != nil {
		t.Fatal(err)
	}
	ring, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ringPath := filepath.Join(dir, "ticket-keys")
	if err := ticket.WriteRingFile(ringPath, ring); err != nil {
		t.Fatal(err)
	}
	stageRoot := filepath.Join(dir, "stage")
	if err := os.Mkdir(stageRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	stageRoot, err = filepath.EvalSymlinks(stageRoot)
	if err != nil {
		t.Fatal(err)
	}
	stageFile := writeSecret(t, dir, "stage.json", fmt.Sprintf(`{"version": 1, "local": {"root": %q}}`, stageRoot))
	gwTokFile := writeSecret(t, dir, "gateway.token", gwTok+"\n")

	// The gateways start before metasrv: they serve (live) but are not
	// ready until they have reached it.
	metaAddr := freeLoopbackAddr(t)
	startGateway := func(extra ...string) *server {
		args := append([]string{"gateway", "--flight-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--principals", gwPrincipals,
			"--ticket-keys", ringPath, "--stage", stageFile, "--data-dir", t.TempDir(),
			"--metasrv", "http://" + metaAddr, "--metasrv-token-file", gwTokFile}, extra...)
		return startServeArgs(t, "", args...)
	}
	gw1 := startGateway()
	gw2 := startGateway("--shutdown-timeout", "1s")
	for _, gw := range []*server{gw1, gw2} {
		// (startServeArgs keeps the banner up to the address line.)
		if !strings.HasPrefix(gw.Banner, "lakegate ") || !strings.Contains(gw.Banner, " gateway serving Flight SQL on grpc://127.0.0.1:") {
			t.Fatalf("banner:\n%s", gw.Banner)
		}
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+aliceTok)
	grpcConn := func(gw *server) *grpc.ClientConn {
		conn, err := grpc.NewClient(gw.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	conn1, conn2 := grpcConn(gw1), grpcConn(gw2)

	t.Run("not ready without metasrv", func(t *testing.T) {
		for _, conn := range []*grpc.ClientConn{conn1, conn2} {
			if st, err := healthStatus(ctx, conn, livenessService); err != nil || st != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("liveness: %v %v, want SERVING", st, err)
			}
			if st, err := healthStatus(ctx, conn, readinessService); err != nil || st != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Fatalf("readiness before metasrv: %v %v, want NOT_SERVING", st, err)
			}
		}
	})

	ms, err := env.runMetasrv(t, "m1", t.TempDir(), metaAddr, freeLoopbackAddr(t), "--bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	env.waitConverged(t, 1, ms)

	t.Run("ready once metasrv answers", func(t *testing.T) {
		for _, conn := range []*grpc.ClientConn{conn1, conn2} {
			if err := waitServing(ctx, conn, readinessService); err != nil {
				t.Fatalf("readiness: %v; stderr:\n%s", err, gw1.stderr.String())
			}
		}
	})
	if !strings.Contains(gw1.stderr.String(), "waiting for metasrv") {
		t.Errorf("gateway 1 did not log while it waited for metasrv:\n%s", gw1.stderr.String())
	}

	// Provision the tenant as the deployment admin.
	const ml = "/api/metalakes/acme"
	env.must(t, ms, "POST", "/api/metalakes", map[string]any{"name": "acme"})
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"POST", ml + "/catalogs", map[string]any{"name": "lake", "type": "managed"}},
		{"POST", ml + "/catalogs/lake/schemas", map[string]any{"name": "sales"}},
		{"POST", ml + "/users", map[string]any{"name": "alice@acme"}},
		{"POST", ml + "/roles", map[string]any{"name": "sales_rw", "securableObjects": []map[string]any{
			{"fullName": "lake", "type": "CATALOG", "privileges": []map[string]string{{"name": "USE_CATALOG", "condition": "ALLOW"}}},
			{"fullName": "lake.sales", "type": "SCHEMA", "privileges": []map[string]string{
				{"name": "USE_SCHEMA", "condition": "ALLOW"}, {"name": "SELECT_TABLE", "condition": "ALLOW"},
				{"name": "MODIFY_TABLE", "condition": "ALLOW"}, {"name": "CREATE_TABLE", "condition": "ALLOW"}}}}}},
		{"PUT", ml + "/permissions/users/alice@acme/grant", map[string]any{"roleNames": []string{"sales_rw"}}},
	} {
		env.must(t, ms, w.method, w.path, w.body)
	}

	alice1 := mustDial(t, gw1.uri(), bearer(aliceTok))
	alice2 := mustDial(t, gw2.uri(), bearer(aliceTok))
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	const n = 1000

	t.Run("ingest through gateway 1, read through gateway 2", func(t *testing.T) {
		rdr := ingestRows(mem, 1, n)
		defer rdr.Release()
		if got, err := alice1.ingest(context.Background(), "sales", "events", adbc.OptionValueIngestModeCreate, rdr); err != nil || got != n {
			t.Fatalf("ingest via gateway 1: %d, %v", got, err)
		}
		wantRows(t, alice2.mustRows(t, "SELECT count(*), sum(id), count(label) FROM sales.events"), []string{"1000", "500500", "999"})
		if _, err := alice2.exec(context.Background(), "INSERT INTO sales.events (id, amount, label, ts) SELECT id + 1000, amount, label, ts FROM sales.events WHERE id <= 10"); err != nil {
			t.Fatalf("insert via gateway 2: %v", err)
		}
		wantRows(t, alice1.mustRows(t, "SELECT count(*), max(id) FROM sales.events"), []string{"1010", "1010"})
	})

	t.Run("a ticket from gateway 1 is redeemed at gateway 2", func(t *testing.T) {
		info, err := flightsqlClient(conn1).Execute(ctx, "SELECT count(*) FROM sales.events WHERE id <= 100")
		if err != nil {
			t.Fatal(err)
		}
		rdr, err := flightsqlClient(conn2).DoGet(ctx, info.GetEndpoint()[0].GetTicket())
		if err != nil {
			t.Fatalf("DoGet at gateway 2: %v", err)
		}
		defer rdr.Release()
		var got []string
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := range int(rec.NumRows()) {
				got = append(got, rec.Column(0).ValueStr(i))
			}
		}
		if err := rdr.Err(); err != nil || len(got) != 1 || got[0] != "100" {
			t.Fatalf("rows %v, err %v; want [100]", got, err)
		}
	})

	t.Run("SIGTERM on an idle gateway exits 0", func(t *testing.T) {
		if err := gw1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if st := waitExit(t, gw1); !st.Success() {
			t.Fatalf("exit status %v; stderr:\n%s", st, gw1.stderr.String())
		}
	})

	t.Run("SIGTERM past --shutdown-timeout with a held stream exits 1", func(t *testing.T) {
		// A result far larger than every buffer between the engine and the
		// client: once the client stops reading, the stream stays open.
		cl := flightsqlClient(conn2)
		info, err := cl.Execute(ctx, "SELECT a.id, a.label, b.id, b.label FROM sales.events a CROSS JOIN sales.events b CROSS JOIN sales.events c")
		if err != nil {
			t.Fatal(err)
		}
		streamCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		rdr, err := cl.DoGet(streamCtx, info.GetEndpoint()[0].GetTicket())
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Release()
		if !rdr.Next() { // the stream is open and producing
			t.Fatalf("no first batch: %v", rdr.Err())
		}
		if err := gw2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		st := waitExit(t, gw2)
		if st.ExitCode() != 1 {
			t.Fatalf("exit status %v, want 1; stderr:\n%s", st, gw2.stderr.String())
		}
		if !strings.Contains(gw2.stderr.String(), "shutdown deadline passed") {
			t.Fatalf("stderr does not say why:\n%s", gw2.stderr.String())
		}
		cancel()
	})

	// No secret reached the logs.
	for name, out := range map[string]string{"gateway 1": gw1.stderr.String(), "gateway 2": gw2.stderr.String()} {
		for _, secret := range []string{adminTok, env.peerTokens["m1"], gwTok, aliceTok} {
			if strings.Contains(out, secret) {
				t.Errorf("%s logged a token", name)
			}
		}
	}
}
