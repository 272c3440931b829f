package gateway_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"lakegate/authz"
	"lakegate/flight"
	"lakegate/flight/backend/upstream"
	"lakegate/flight/gateway"
	"lakegate/flight/ticket"
	"lakegate/metasrv/client"
	"lakegate/stage"
)

// fakeMetasrv answers the internal API's generation probe with status
// (200 with generation 1 when status is 200) and its files listing with no
// files; every request is counted by path.
type fakeMetasrv struct {
	url    string
	status atomic.Int32
	probes atomic.Int32
	probed chan int    // the status of each generation probe, when not full
	files  chan string // tenant of each files listing, when not full
}

func startFakeMetasrv(t *testing.T, status int) *fakeMetasrv {
	t.Helper()
	f := &fakeMetasrv{files: make(chan string, 16), probed: make(chan int, 16)}
	f.status.Store(int32(status))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Header.Get("Authorization") != "Bearer gw-token":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":1000,"type":"UnauthorizedException","message":"unauthenticated"}`))
		case strings.HasSuffix(r.URL.Path, "/generation"):
			f.probes.Add(1)
			st := int(f.status.Load())
			select {
			case f.probed <- st:
			default:
			}
			w.WriteHeader(st)
			if st == http.StatusOK {
				_, _ = w.Write([]byte(`{"generation":1}`))
				return
			}
			_, _ = w.Write([]byte(`{"code":1003,"type":"X","message":"m"}`))
		case strings.HasSuffix(r.URL.Path, "/files"):
			select {
			case f.files <- r.Header.Get("Lakegate-Delegate-Tenant"):
			default:
			}
			_, _ = w.Write([]byte(`{"generation":1,"files":[]}`))
		default:
			http.Error(w, "unexpected", http.StatusTeapot)
		}
	}))
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

// baseConfig is a gateway for tenant acme over a local stage, asking the
// metasrv at url; tok is its user's token.
func baseConfig(t *testing.T, url string) (cfg gateway.Config, tok string) {
	t.Helper()
	dir := t.TempDir()
	tok, err := authz.NewToken(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	mapPath := filepath.Join(dir, "principals.yaml")
	if err := authz.WritePrincipalMap(mapPath, []authz.PrincipalSpec{{ID: "alice@acme", Tenant: "acme", Role: "user",
		Namespaces: []string{"sales"}, TokenHashes: []string{authz.HashToken(tok).String()}}}); err != nil {
		t.Fatal(err)
	}
	pm, err := authz.LoadPrincipalMap(mapPath)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := ticket.GenerateRing(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return gateway.Config{
		Principals: pm, Tickets: ring,
		Stage:   stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: filepath.Join(root, "stage")}},
		Metasrv: client.Config{Addrs: []string{url}, Token: "gw-token"},
		Version: "test",
	}, tok
}

// readiness asks the gateway at addr for its readiness as the user of tok.
func readiness(t *testing.T, addr, tok string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok), 10*time.Second)
	defer cancel()
	r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: flight.ReadinessService})
	if err != nil {
		t.Fatalf("readiness: %v", err)
	}
	return r.GetStatus()
}

// serve starts g.Serve on a loopback listener; the returned channel gets
// Serve's result.
func serve(t *testing.T, ctx context.Context, g *gateway.Gateway) (addr string, served <-chan error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() { ch <- g.Serve(ctx, lis) }()
	return lis.Addr().String(), ch
}

// loopsRunning lists the goroutines that run one of the gateway's
// background loops.
func loopsRunning() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"gateway.sweepEngine", "gateway.collectOrphans", "gateway.waitMetasrv", "metacatalog.(*Catalog).Watch"} {
			if strings.Contains(g, fn) {
				out = append(out, fn)
			}
		}
	}
	return out
}

// TestGatewayLifecycle: a gateway serves, is ready at once without
// WaitMetasrv, collects orphans of its tenant when it serves, and
// Shutdown stops every loop and is idempotent; Serve after it is refused.
func TestGatewayLifecycle(t *testing.T) {
	ms := startFakeMetasrv(t, http.StatusOK)
	cfg, tok := baseConfig(t, ms.url)
	cfg.GCInterval = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	addr, served := serve(t, serveCtx, g)
	select {
	case <-g.Ready():
	case <-ctx.Done():
		t.Fatal("not ready")
	}
	if st := readiness(t, addr, tok); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("readiness %s, want SERVING", st)
	}
	select {
	case tenant := <-ms.files:
		if tenant != "acme" {
			t.Fatalf("orphan collection asked for the files of %q, want acme", tenant)
		}
	case <-ctx.Done():
		t.Fatal("no orphan collection")
	}
	stop()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := g.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := g.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if l := loopsRunning(); len(l) > 0 {
		t.Fatalf("loops still running after Shutdown: %v", l)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if err := g.Serve(ctx, lis); !errors.Is(err, gateway.ErrServing) {
		t.Fatalf("Serve after Shutdown: %v, want ErrServing", err)
	}
}

// TestGatewayWaitsForMetasrv: with WaitMetasrv the gateway serves but
// reports NOT_SERVING while metasrv is unavailable, and turns ready when
// metasrv answers — a 404 for a tenant without a metalake included.
func TestGatewayWaitsForMetasrv(t *testing.T) {
	ms := startFakeMetasrv(t, http.StatusServiceUnavailable)
	cfg, tok := baseConfig(t, ms.url)
	cfg.WaitMetasrv = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown(ctx)
	addr, served := serve(t, ctx, g)
	if st := readiness(t, addr, tok); st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("readiness %s before metasrv answered, want NOT_SERVING", st)
	}
	// The gateway has been answered 503 at least once before metasrv
	// turns healthy.
	select {
	case st := <-ms.probed:
		if st != http.StatusServiceUnavailable {
			t.Fatalf("first probe answered %d", st)
		}
	case <-ctx.Done():
		t.Fatal("no probe of metasrv")
	}
	select {
	case <-g.Ready():
		t.Fatal("ready while metasrv answers 503")
	default:
	}
	ms.status.Store(http.StatusNotFound)
	select {
	case <-g.Ready():
	case err := <-served:
		t.Fatalf("Serve ended: %v", err)
	case <-ctx.Done():
		t.Fatal("not ready after metasrv answered")
	}
	if st := readiness(t, addr, tok); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("readiness %s after metasrv answered, want SERVING", st)
	}
	if ms.probes.Load() < 2 {
		t.Fatalf("%d probes, want the 503 and the 404 at least", ms.probes.Load())
	}
}

// TestGatewayMetasrvRefuses: a gateway whose token metasrv rejects ends
// Serve with ErrMetasrvRefused, never turns ready, and shuts down cleanly.
func TestGatewayMetasrvRefuses(t *testing.T) {
	for _, c := range []struct {
		name, token string
		status      int
		want        string
	}{
		{"401", "wrong-token", http.StatusOK, "rejected the gateway's token"},
		{"403", "gw-token", http.StatusForbidden, "delegate_tenants"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := startFakeMetasrv(t, c.status)
			cfg, _ := baseConfig(t, ms.url)
			cfg.WaitMetasrv, cfg.Metasrv.Token = true, c.token
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			g, err := gateway.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, served := serve(t, ctx, g)
			err = <-served
			if !errors.Is(err, gateway.ErrMetasrvRefused) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.token) {
				t.Fatalf("Serve: %v, want ErrMetasrvRefused saying %q without the token", err, c.want)
			}
			select {
			case <-g.Ready():
				t.Fatal("ready although metasrv refused the gateway")
			default:
			}
			if err := g.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		})
	}
}

// TestNewFailsCleanly: a configuration New cannot assemble gives an error
// naming the part, and leaves no loop running — also when it fails after
// the loops started (the Flight server refusing its admission bounds).
func TestNewFailsCleanly(t *testing.T) {
	ms := startFakeMetasrv(t, http.StatusOK)
	cases := []struct {
		name string
		edit func(*gateway.Config)
		want string
		is   error
	}{
		{"no principals", func(c *gateway.Config) { c.Principals = nil }, "Principals is required", gateway.ErrInvalidConfig},
		{"no tickets", func(c *gateway.Config) { c.Tickets = nil }, "Tickets is required", gateway.ErrInvalidConfig},
		{"no stage", func(c *gateway.Config) { c.Stage = stage.Descriptor{} }, "Stage", gateway.ErrInvalidConfig},
		{"S3 without credentials", func(c *gateway.Config) {
			c.Stage = stage.Descriptor{Version: stage.DescriptorVersion, S3: &stage.S3Descriptor{Bucket: "b", Prefix: "p", Region: "us-east-1"}}
		}, "an S3 stage needs AWS", gateway.ErrInvalidConfig},
		{"no metasrv", func(c *gateway.Config) { c.Metasrv = client.Config{} }, "Metasrv.Addrs is required", gateway.ErrInvalidConfig},
		{"short gc grace", func(c *gateway.Config) { c.GCGrace = time.Minute }, "GCGrace", gateway.ErrInvalidConfig},
		{"negative decision window", func(c *gateway.Config) { c.DecisionWindow = -time.Second }, "DecisionWindow", gateway.ErrInvalidConfig},
		{"upstream address without port", func(c *gateway.Config) { c.Upstream = &upstream.Config{Allow: []string{"engine"}} }, "Upstream", gateway.ErrInvalidConfig},
		{"access log without a spool", func(c *gateway.Config) { c.AccessLog = &gateway.AccessLogConfig{} }, "SpoolDir is required", gateway.ErrInvalidConfig},
		{"access log failing open for a bad tenant", func(c *gateway.Config) {
			c.AccessLog = &gateway.AccessLogConfig{SpoolDir: t.TempDir(), FailOpen: []string{"Not A Tenant"}}
		}, "FailOpen", gateway.ErrInvalidConfig},
		{"negative access log flush", func(c *gateway.Config) {
			c.AccessLog = &gateway.AccessLogConfig{SpoolDir: t.TempDir(), FlushInterval: -time.Second}
		}, "must not be negative", gateway.ErrInvalidConfig},
		{"bad memory limit", func(c *gateway.Config) { c.MemoryLimit = "lots" }, "opening the engine", nil},
		{"memory budget below one tenant at its limit", func(c *gateway.Config) { c.MemoryLimit, c.MemoryBudget = "1GB", 1<<30 },
			"MemoryBudget 1024 MiB leaves 768 MiB for the tenant engines after the gateway's own buffers (256 MiB), less than one tenant at MemoryLimit 1GB", gateway.ErrInvalidConfig},
		{"negative memory budget", func(c *gateway.Config) { c.MemoryBudget = -1 }, "MemoryBudget -1 is negative", gateway.ErrInvalidConfig},
		{"bad metasrv address", func(c *gateway.Config) { c.Metasrv.Addrs = []string{"ftp://m1"} }, "metasrv client", nil},
		{"admission bounds the Flight server refuses", func(c *gateway.Config) { c.MaxConcurrentPerTenant, c.MaxConcurrent = 8, 4 }, "Flight server", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := baseConfig(t, ms.url)
			c.edit(&cfg)
			g, err := gateway.New(context.Background(), cfg)
			if err == nil {
				_ = g.Shutdown(context.Background())
				t.Fatal("New succeeded")
			}
			if g != nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("New: %v (gateway %v), want an error saying %q", err, g, c.want)
			}
			if l := loopsRunning(); len(l) > 0 {
				t.Fatalf("loops still running after a failed New: %v", l)
			}
		})
	}
}

// TestEngineRoot: a local stage's root is the engine's; an S3 stage's
// engine keeps its scratch under the data directory.
func TestEngineRoot(t *testing.T) {
	local := stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: "/srv/stage"}}
	if got := gateway.EngineRoot(local, "/scratch"); got != "/srv/stage" {
		t.Errorf("local stage: engine root %s, want the stage root", got)
	}
	s3 := stage.Descriptor{Version: stage.DescriptorVersion, S3: &stage.S3Descriptor{Bucket: "b", Prefix: "p"}}
	if got := gateway.EngineRoot(s3, "/scratch"); got != "/scratch/stage" {
		t.Errorf("S3 stage: engine root %s, want /scratch/stage", got)
	}
}
