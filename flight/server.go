package flight

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	"lakegate/authz"
	"lakegate/flight/backend"
	"lakegate/flight/ticket"
	"lakegate/stage"
)

// MaxMessageBytes is the gRPC limit on messages the server sends and clients
// should accept. Result batches are coalesced to several MiB, so gRPC's 4 MiB
// default is too small.
const MaxMessageBytes = 256 << 20

// MaxRequestBytes bounds one message a client sends. Unary requests are
// decoded before authentication runs, so this is also what an unauthenticated
// caller can make the server buffer.
const MaxRequestBytes = 16 << 20

// MaxStreamsPerConn bounds the calls one client connection has open at once
// (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS; gRPC's default is unbounded). A
// client past it waits for one of its calls to end; drivers use a few.
const MaxStreamsPerConn = 256

// MaxHeaderBytes bounds the metadata of one call (gRPC's default is 16 MiB):
// a bearer token, a request id and a session cookie need a few hundred bytes.
const MaxHeaderBytes = 64 << 10

// Config configures a Server. The zero value of every optional field is a safe
// default; Validate reports what is missing.
type Config struct {
	// Principals is the immutable principal map; required unless Authn is
	// set.
	Principals *authz.PrincipalMap
	// Authn, when set, authenticates every call against the principal map
	// it holds in force, which its owner may reload (authz.Principals); it
	// takes the place of Principals. Nil authenticates against Principals,
	// without JWT key sources.
	Authn *authz.Principals
	// ReloadPrincipals, when set, reloads Authn from its file for a
	// platform operator's ReloadPrincipalsActionType; by is the
	// operator's id, for the log. Nil: the action is unknown.
	ReloadPrincipals func(by string) error
	// Backend executes authorized SQL; required.
	Backend backend.Backend
	// Upstreams runs SQL on the upstream engines of upstream catalogs.
	// Nil: tables of upstream catalogs answer Unavailable.
	Upstreams UpstreamEngines
	// Governance resolves, authorizes and commits tables for callers; required.
	Governance backend.Governance
	// Files gives the Backend local access to committed table files and
	// opens tenants' stages for writes; required.
	Files TableFiles
	// Tickets seals tickets and prepared statement handles; required.
	Tickets *ticket.Ring
	// TLS, when non-nil, is used for the listener. Nil serves plaintext; the
	// caller decides whether that is allowed for the address.
	TLS *tls.Config
	// DefaultCatalog is the catalog name every tenant sees. Zero means "lake".
	DefaultCatalog string
	// TicketTTL bounds how long a ticket from GetFlightInfo stays valid.
	// Zero means 10 minutes.
	TicketTTL time.Duration
	// PreparedTTL closes prepared statements idle for longer. Zero means 30
	// minutes.
	PreparedTTL time.Duration
	// SessionTTL closes sessions idle for longer. Zero means 8 hours.
	SessionTTL time.Duration
	// MaxSQLBytes bounds statement text. Zero means 1 MiB.
	MaxSQLBytes int
	// MaxConcurrentPerTenant bounds the statements one tenant executes at
	// once, and separately the statements it plans (parse, authorization,
	// engine describe) and the listings it asks for (GetDbSchemas,
	// GetTables, SHOW) at once. Zero means 4. It may not exceed
	// MaxConcurrent.
	MaxConcurrentPerTenant int
	// MaxConcurrent bounds the statements executing at once across all
	// tenants, and separately those being planned or listed. Zero means 16.
	MaxConcurrent int
	// QueueTimeout bounds how long a request waits for a permit before it
	// fails with ResourceExhausted. Zero means 5 seconds.
	QueueTimeout time.Duration
	// IdleConnTimeout is how long a client connection with no call in
	// progress is kept: then the server sends GOAWAY, and a client opens a
	// new connection at its next call. Anyone may open connections (tokens
	// are checked per call), so they may not stay without end. Zero means
	// 5 minutes.
	IdleConnTimeout time.Duration
	// HandshakeTimeout bounds a new connection's TLS and HTTP/2 handshake;
	// a connection that has not completed it by then is closed. Zero means
	// 10 seconds (gRPC's own default is two minutes).
	HandshakeTimeout time.Duration
	// Stage is the deployment's root stage descriptor. The
	// StageDescribeActionType action answers each caller with its tenant's
	// child of it. Nil means no stage: the action answers Unimplemented and is
	// not listed.
	Stage *stage.Descriptor
	// Version is reported by GetSqlInfo.
	Version string
	// Logger receives operational logs. Nil discards them.
	Logger *slog.Logger
	// Metrics receives the Server's Prometheus metrics (see NewMetrics). Nil
	// records nothing.
	Metrics *Metrics
	// Now is the clock; nil means time.Now. Tests inject one.
	Now func() time.Time
	// AccessLog receives one event for every statement and discovery call
	// that reaches authorization (access.go), and admits tenants'
	// statements. Nil keeps no access log.
	AccessLog AccessLog
	// GatewayID names this gateway in access events: the query_service
	// principal it delegates to metasrv as.
	GatewayID string
	// AccessLogFullText lists the tenants whose operator chose to keep
	// statements whole in access events (literals included, cut at 64
	// KiB); every other tenant's are normalised (sqlgate.Normalize).
	AccessLogFullText []string
	// StartNotReady starts the server with its readiness (ReadinessService)
	// NOT_SERVING until SetReady(true), for a process that must first reach
	// a dependency. The zero value reports ready from the start.
	StartNotReady bool
}

// gRPC health service names the server reports (grpc.health.v1, which like
// every RPC needs a valid bearer token).
const (
	// LivenessService ("") is SERVING from New until the server has stopped:
	// the process is alive and serving gRPC.
	LivenessService = ""
	// ReadinessService is SERVING while the server should receive new
	// statements: after SetReady(true) (or from New, without
	// Config.StartNotReady) and until Shutdown begins.
	ReadinessService = "arrow.flight.protocol.FlightService"
)

// ErrShutdownAborted is returned by Shutdown when its context ended before
// every call had finished: the calls left were aborted.
var ErrShutdownAborted = errors.New("flight: shutdown deadline passed; in-flight calls were aborted")

func (c *Config) withDefaults() Config {
	out := *c
	if out.DefaultCatalog == "" {
		out.DefaultCatalog = "lake"
	}
	if out.TicketTTL == 0 {
		out.TicketTTL = 10 * time.Minute
	}
	if out.PreparedTTL == 0 {
		out.PreparedTTL = 30 * time.Minute
	}
	if out.SessionTTL == 0 {
		out.SessionTTL = 8 * time.Hour
	}
	if out.MaxSQLBytes == 0 {
		out.MaxSQLBytes = 1 << 20
	}
	if out.MaxConcurrentPerTenant == 0 {
		out.MaxConcurrentPerTenant = 4
	}
	if out.MaxConcurrent == 0 {
		out.MaxConcurrent = 16
	}
	if out.QueueTimeout == 0 {
		out.QueueTimeout = 5 * time.Second
	}
	if out.IdleConnTimeout == 0 {
		out.IdleConnTimeout = 5 * time.Minute
	}
	if out.HandshakeTimeout == 0 {
		out.HandshakeTimeout = 10 * time.Second
	}
	if out.Version == "" {
		out.Version = "dev"
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	return out
}

// Validate reports configuration errors.
func (c *Config) Validate() error {
	var errs []error
	if c.Principals == nil && c.Authn == nil {
		errs = append(errs, errors.New("flight: Config.Principals or Config.Authn is required"))
	}
	if c.Backend == nil {
		errs = append(errs, errors.New("flight: Config.Backend is required"))
	}
	if c.Tickets == nil {
		errs = append(errs, errors.New("flight: Config.Tickets is required"))
	}
	if c.Governance == nil {
		errs = append(errs, errors.New("flight: Config.Governance is required"))
	}
	if c.Files == nil {
		errs = append(errs, errors.New("flight: Config.Files is required"))
	}
	for name, d := range map[string]time.Duration{"TicketTTL": c.TicketTTL, "PreparedTTL": c.PreparedTTL, "SessionTTL": c.SessionTTL, "QueueTimeout": c.QueueTimeout, "IdleConnTimeout": c.IdleConnTimeout, "HandshakeTimeout": c.HandshakeTimeout} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("flight: Config.%s is negative (%s)", name, d))
		}
	}
	if c.MaxSQLBytes < 0 {
		errs = append(errs, fmt.Errorf("flight: Config.MaxSQLBytes is negative (%d)", c.MaxSQLBytes))
	}
	if c.MaxConcurrentPerTenant < 0 {
		errs = append(errs, fmt.Errorf("flight: Config.MaxConcurrentPerTenant is negative (%d)", c.MaxConcurrentPerTenant))
	}
	if c.MaxConcurrent < 0 {
		errs = append(errs, fmt.Errorf("flight: Config.MaxConcurrent is negative (%d)", c.MaxConcurrent))
	}
	if c.MaxConcurrentPerTenant >= 0 && c.MaxConcurrent >= 0 {
		d := c.withDefaults()
		if d.MaxConcurrentPerTenant > d.MaxConcurrent {
			errs = append(errs, fmt.Errorf("flight: Config.MaxConcurrentPerTenant (%d) exceeds Config.MaxConcurrent (%d)", d.MaxConcurrentPerTenant, d.MaxConcurrent))
		}
	}
	if c.Stage != nil {
		if err := c.Stage.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("flight: Config.Stage: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Server is lakegate's Flight SQL service. It is safe for use from multiple
// goroutines. Serve blocks; Shutdown drains and Close aborts.
type Server struct {
	flightsql.BaseServer

	cfg Config
	log *slog.Logger
	// planner turns statements into authorized plans (planner.go).
	planner  *planner
	auth     authenticator
	grpc     *grpc.Server
	health   *health.Server
	sessions *sessionStore
	prepared *preparedStore
	specs    *speculations
	running  *runningQueries
	// admitExecute bounds the statements executing; admitPlan those
	// being planned and the listings (Server.admitPlanning).
	admitExecute *admission
	admitPlan    *admission
	// pending holds the access events of planned tickets not yet fetched
	// (access.go); nil without an access log.
	pending *pendingPlans
	mem     memory.Allocator
	rand    io.Reader

	// producers tracks DoGet goroutines so Shutdown can wait for them.
	producers sync.WaitGroup

	// readyMu guards stopping: once Shutdown or Close began, SetReady(true)
	// is ignored.
	readyMu  sync.Mutex
	stopping bool
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg.withDefaults()
	if c.Authn == nil {
		ps, err := authz.NewPrincipals(c.Principals, authz.PrincipalsConfig{})
		if err != nil {
			return nil, fmt.Errorf("flight: principal map: %w", err)
		}
		c.Authn = ps
	}
	s := &Server{
		cfg:          c,
		log:          c.Logger,
		planner:      newPlanner(c),
		auth:         authenticator{auth: c.Authn},
		sessions:     newSessionStore(c.SessionTTL, c.Now),
		running:      newRunningQueries(),
		admitExecute: newAdmission(workExecute, c.MaxConcurrentPerTenant, c.MaxConcurrent, c.QueueTimeout),
		admitPlan:    newAdmission(workPlan, c.MaxConcurrentPerTenant, c.MaxConcurrent, c.QueueTimeout),
		mem:          memory.DefaultAllocator,
		rand:         rand.Reader,
	}
	s.specs = newSpeculations(&s.producers)
	s.prepared = newPreparedStore(c.PreparedTTL, c.Now, s.specs)
	if c.AccessLog != nil {
		s.pending = newPendingPlans(c.TicketTTL, c.Now, c.AccessLog.Record)
		s.prepared.record = c.AccessLog.Record
	}
	// A statement finding no free execution permit takes one back from a
	// speculation (speculate.go).
	s.admitExecute.yield = s.specs.yield
	s.Alloc = s.mem
	s.instrument()
	if err := registerSQLInfo(s, c.Version); err != nil {
		return nil, err
	}
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.requestIDUnary, s.auth.unaryInterceptor, s.accessUnary, s.recoverUnary),
		grpc.ChainStreamInterceptor(s.requestIDStream, s.auth.streamInterceptor, s.accessStream, s.recoverStream, checkIPCStream),
		grpc.MaxRecvMsgSize(MaxRequestBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.MaxConcurrentStreams(MaxStreamsPerConn),
		grpc.MaxHeaderListSize(MaxHeaderBytes),
		grpc.ConnectionTimeout(c.HandshakeTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: c.IdleConnTimeout,
			// A client gone without closing its connection (a crashed
			// host, a dropped route) is noticed within Time+Timeout
			// instead of TCP's own timeout of many minutes, so its calls
			// end and give back their admission permits.
			Time:    time.Minute,
			Timeout: 20 * time.Second,
		}),
		// Streams run on a pool of goroutines whose stacks have already
		// grown to what a Flight call needs, instead of a new goroutine per
		// stream growing its stack again (runtime.morestack: ~5 % of a
		// point query's server CPU without the pool, ~2 % with it). A
		// stream finding every worker busy gets its own goroutine.
		grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0))),
	}
	if c.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(c.TLS)))
	}
	s.grpc = grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(s.grpc, &service{FlightServer: flightsql.NewFlightServerWithAllocator(s, s.mem), srv: s})
	s.health = health.NewServer()
	s.health.SetServingStatus(LivenessService, healthpb.HealthCheckResponse_SERVING)
	ready := healthpb.HealthCheckResponse_SERVING
	if c.StartNotReady {
		ready = healthpb.HealthCheckResponse_NOT_SERVING
	}
	s.health.SetServingStatus(ReadinessService, ready)
	healthpb.RegisterHealthServer(s.grpc, s.health)
	return s, nil
}

// service routes Flight RPCs to the Flight SQL router, answering Handshake
// and lakegate's own actions (stage_action.go) itself.
type service struct {
	flight.FlightServer
	srv *Server
}

func (service) Handshake(stream flight.FlightService_HandshakeServer) error { return handshake(stream) }

// Serve accepts connections on lis until Shutdown or Close. It returns nil
// after a Shutdown or Close.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// SetReady sets the readiness health status (ReadinessService): SERVING
// when ready, NOT_SERVING otherwise. Once Shutdown or Close began, the server
// stays NOT_SERVING.
func (s *Server) SetReady(ready bool) {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ready && !s.stopping {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.health.SetServingStatus(ReadinessService, st)
}

// stopReadiness reports NOT_SERVING for ReadinessService from now on.
func (s *Server) stopReadiness() {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	s.stopping = true
	s.health.SetServingStatus(ReadinessService, healthpb.HealthCheckResponse_NOT_SERVING)
}

// Shutdown drains the server: readiness goes NOT_SERVING first (liveness
// stays SERVING), then the server stops accepting connections and calls and
// waits for running ones — streams included — until ctx is done. If ctx
// ends first, it aborts what is left (cancelling running queries) and
// returns an error wrapping ErrShutdownAborted; otherwise nil. It waits for
// result producers to exit either way and is idempotent.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopReadiness()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("%w (%v)", ErrShutdownAborted, ctx.Err())
		s.grpc.Stop()
		<-done
	}
	s.health.Shutdown()
	s.running.cancelAll()
	s.specs.dropAll(s.prepared)
	s.producers.Wait()
	s.flushAccess()
	return err
}

// Close aborts every call and waits for result producers to exit.
func (s *Server) Close() error {
	s.stopReadiness()
	s.health.Shutdown()
	s.grpc.Stop()
	s.running.cancelAll()
	s.specs.dropAll(s.prepared)
	s.producers.Wait()
	s.flushAccess()
	return nil
}

// flushAccess records the plans no call will record any more: tickets not
// fetched and prepared statements never executed.
func (s *Server) flushAccess() {
	if s.pending == nil {
		return
	}
	s.pending.flush()
	s.prepared.flushUnexecuted()
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
