package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"

	"lakegate/authz"
	"lakegate/flight"
	"lakegate/flight/accesslog"
	"lakegate/flight/backend"
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/backend/upstream"
	"lakegate/flight/metacatalog"
	"lakegate/flight/tablefiles"
	"lakegate/flight/ticket"
	"lakegate/metasrv/client"
	"lakegate/stage"
)

// Errors New, Serve and Shutdown wrap.
var (
	// ErrInvalidConfig: Config.Validate refused the configuration.
	ErrInvalidConfig = errors.New("gateway: invalid configuration")
	// ErrMetasrvRefused: metasrv answered the gateway with 401 or 403 (its
	// token or its principal is wrong); retrying changes nothing.
	ErrMetasrvRefused = errors.New("gateway: metasrv refused the gateway")
	// ErrServing: Serve was called on a gateway that serves already or was
	// shut down.
	ErrServing = errors.New("gateway: already serving or shut down")
)

// DefaultGCGrace is Config.GCGrace when it is zero.
const DefaultGCGrace = 24 * time.Hour

// Config is what a gateway is assembled from. Zero values mean the
// documented defaults; Validate names every invalid field.
type Config struct {
	// Principals authenticates the gateway's clients; required unless
	// Authn is set.
	Principals *authz.PrincipalMap
	// Authn, when set, authenticates the gateway's clients against the
	// map it holds in force, which the caller reloads (SIGHUP, the reload
	// action); its first map then stands for Principals, which must be
	// nil. The tenants the gateway serves (collection, the metasrv wait)
	// are those of the map at New.
	Authn *authz.Principals
	// ReloadPrincipals, when set, serves a platform operator's
	// flight.ReloadPrincipalsActionType (reloading Authn); nil: the
	// gateway has no such action.
	ReloadPrincipals func(by string) error
	// Tickets seals tickets and prepared statement handles; required. The
	// replicas of one deployment share a ring.
	Tickets *ticket.Ring
	// TLS, when set, serves Flight SQL over TLS; nil serves plaintext (the
	// caller decides whether its address allows that).
	TLS *tls.Config
	// Stage is the deployment's root stage; required.
	Stage stage.Descriptor
	// AWS holds the configuration and credentials of an S3 stage; required
	// with one, unused with a local stage.
	AWS *aws.Config
	// DataDir holds the engine's scratch for an S3 stage (<DataDir>/stage:
	// tenants' read caches and spill files), created mode 0700; required
	// with an S3 stage. A local stage's root is the engine's root (it reads
	// committed files in place) and DataDir is unused.
	DataDir string

	// Metasrv is the client configuration of the metadata service the
	// catalog asks; required unless Catalog is set.
	Metasrv client.Config
	// Governance, when set, replaces metasrv (benchmarks and tests with a
	// catalog of their own): Metasrv must then be empty, and neither
	// orphan collection, WaitMetasrv, Generations nor a DecisionWindow is
	// available.
	Governance backend.Governance
	// DecisionWindow lets the catalog reuse metasrv's decisions while the
	// tenant's generation is confirmed unchanged (metacatalog.Options); zero
	// asks metasrv for every statement.
	DecisionWindow time.Duration
	// Generations is an in-process authority on tenants' generations (the
	// embedded metasrv of `lakegate serve`); nil: the gateway watches
	// metasrv.
	Generations func(tenant string) (uint64, bool)
	// WaitMetasrv starts the gateway not ready: Serve makes it ready once
	// metasrv answers it, and ends with ErrMetasrvRefused when metasrv
	// rejects its identity. Without it the gateway is ready when it serves.
	WaitMetasrv bool

	// MemoryLimit, MaxTempSize, Threads and QueryTimeout configure the
	// engine per tenant; zero means duckdb's defaults.
	MemoryLimit  string
	MaxTempSize  string
	Threads      int
	QueryTimeout time.Duration
	// MemoryBudget bounds, in bytes, the tenant engines and the gateway's
	// own buffers together (budget.go): the engines get what is left after
	// GatewayBuffers, and must fit one tenant at MemoryLimit. Zero means
	// duckdb.DefaultMemoryBudget (75 % of the machine's memory, or of its
	// cgroup limit if lower).
	MemoryBudget int64

	// MaxConcurrentPerTenant, MaxConcurrent and QueueTimeout are the Flight
	// server's admission bounds (flight.Config); zero means its defaults.
	MaxConcurrentPerTenant int
	MaxConcurrent          int
	QueueTimeout           time.Duration

	// Upstream, when set, allows the upstream engines of upstream catalogs;
	// nil allows none.
	Upstream *upstream.Config

	// GCInterval is how often orphaned table files are collected (first
	// when Serve starts); zero never.
	GCInterval time.Duration
	// GCGrace keeps orphaned files younger than this; it must exceed the
	// longest write (stage.MaxWriteAge). Zero means DefaultGCGrace.
	GCGrace time.Duration

	// AccessLog, when set, records every statement and discovery call
	// that reaches authorization into each tenant's table
	// system.access_events (flight/accesslog); nil keeps no access log.
	AccessLog *AccessLogConfig
	// GatewayID names this gateway in access events (its query_service
	// principal, or another name the operator chose).
	GatewayID string

	// Registry receives the gateway's metrics; nil records none.
	Registry *prometheus.Registry
	// Logger receives operational logs; nil discards them.
	Logger *slog.Logger
	// Version is what GetSqlInfo reports.
	Version string
}

// Validate reports every invalid field of c, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case c.Principals == nil && c.Authn == nil:
		bad("Principals is required")
	case c.Principals != nil && c.Authn != nil:
		bad("Principals and Authn exclude each other")
	case c.Authn != nil:
		c.Principals = c.Authn.Current().Map()
	}
	if c.Tickets == nil {
		bad("Tickets is required")
	}
	if err := c.Stage.Validate(); err != nil {
		bad("Stage: %w", err)
	}
	if c.Stage.S3 != nil {
		if c.AWS == nil {
			bad("an S3 stage needs AWS")
		}
		if c.DataDir == "" {
			bad("an S3 stage needs DataDir")
		}
	}
	metasrv := len(c.Metasrv.Addrs) > 0
	switch {
	case c.Governance == nil && !metasrv:
		bad("Metasrv.Addrs is required")
	case c.Governance != nil && (metasrv || c.Metasrv.Token != ""):
		bad("Catalog and Metasrv exclude each other")
	case c.Governance != nil && (c.GCInterval != 0 || c.WaitMetasrv || c.Generations != nil || c.DecisionWindow != 0):
		bad("with Catalog, GCInterval, WaitMetasrv, Generations and DecisionWindow need metasrv")
	}
	if c.DecisionWindow < 0 {
		bad("DecisionWindow %s is negative", c.DecisionWindow)
	}
	if c.Threads < 0 || c.QueryTimeout < 0 {
		bad("Threads and QueryTimeout must not be negative")
	}
	if _, err := c.EngineBudget(); err != nil {
		bad("%w", err)
	}
	if c.MaxConcurrentPerTenant < 0 || c.MaxConcurrent < 0 || c.QueueTimeout < 0 {
		bad("MaxConcurrentPerTenant, MaxConcurrent and QueueTimeout must not be negative")
	}
	if c.GCInterval < 0 {
		bad("GCInterval %s is negative", c.GCInterval)
	}
	if c.GCGrace != 0 && c.GCGrace <= stage.MaxWriteAge {
		bad("GCGrace %s must exceed the longest write (%s)", c.GCGrace, stage.MaxWriteAge)
	}
	if c.Upstream != nil {
		if err := c.Upstream.Validate(); err != nil {
			bad("Upstream: %w", err)
		}
	}
	if c.AccessLog != nil {
		if err := c.AccessLog.validate(); err != nil {
			bad("AccessLog: %w", err)
		}
	}
	if c.WaitMetasrv && c.Principals != nil && len(QueryTenants(c.Principals)) == 0 {
		bad("WaitMetasrv needs a principal that may query")
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
}

// EngineRoot is the engine's data root for a stage: a local stage's root
// (the engine reads committed files in place, so the two must be the same
// directory), or <dataDir>/stage for S3, where the engine keeps only
// scratch: each tenant's read cache (tenants/<t>/cache) and spill
// directory (tenants/<t>/tmp). A local stage's tenants keep their spill
// directory in the stage (tenants/<t>/tmp), beside their tables.
func EngineRoot(d stage.Descriptor, dataDir string) string {
	if d.Local != nil {
		return d.Local.Root
	}
	return filepath.Join(dataDir, "stage")
}

// QueryTenants returns the tenants of the principals that may query, in
// map order, then those of the map's OIDC providers (whose users may
// query), each once: the tenants a gateway serves.
func QueryTenants(m *authz.PrincipalMap) []authz.TenantID {
	seen := map[authz.TenantID]bool{}
	var tenants []authz.TenantID
	add := func(t authz.TenantID) {
		if !seen[t] {
			seen[t] = true
			tenants = append(tenants, t)
		}
	}
	for _, p := range m.Principals() {
		if p.MayQuery() {
			add(p.Tenant())
		}
	}
	for _, pr := range m.Providers() {
		for _, t := range pr.Tenants() {
			add(t)
		}
	}
	return tenants
}

// Gateway is an assembled gateway: New builds it, Serve serves it,
// Shutdown stops it.
type Gateway struct {
	cfg     Config
	log     *slog.Logger
	tenants []authz.TenantID

	engine *duckdb.Engine
	files  *tablefiles.Files
	mc     *client.Client          // nil with Config.Governance
	meta   *metacatalog.Governance // nil with Config.Governance
	cat    backend.Governance
	up     *upstream.Pool // nil: no upstream engines
	srv    *flight.Server
	// accessLog is the access log (nil: none); closeAccessLog flushes it
	// after the Flight server has drained.
	accessLog      flight.AccessLog
	closeAccessLog func(context.Context) error

	ready     chan struct{} // closed when the gateway turns ready
	readyOnce sync.Once

	mu      sync.Mutex
	serving bool
	closed  bool
	stops   []func() // stop the background loops, in start order
	// flightDone is closed when the Flight server's Serve has returned
	// flightErr; reported: Serve returned it to its caller already.
	flightDone chan struct{}
	flightErr  error
	reported   bool

	shutOnce sync.Once
	shutErr  error
}

// New assembles a gateway and starts its decision watch and engine
// sweeper. On error nothing it started runs and nothing it opened stays
// open; the error names the part that failed.
func New(ctx context.Context, cfg Config) (_ *Gateway, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.GCGrace == 0 {
		cfg.GCGrace = DefaultGCGrace
	}
	authn := cfg.Authn
	if authn != nil {
		cfg.Principals = authn.Current().Map()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{cfg: cfg, log: log, tenants: QueryTenants(cfg.Principals), ready: make(chan struct{})}
	// Every failure returns a nil gateway: release the one built so far.
	defer func() {
		if err != nil {
			g.release()
		}
	}()
	engineCfg := duckdb.DefaultConfig()
	engineCfg.Root = EngineRoot(cfg.Stage, cfg.DataDir)
	if cfg.Stage.Local == nil {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("gateway: creating the data directory: %w", err)
		}
	}
	if cfg.MemoryLimit != "" {
		engineCfg.MemoryLimit = cfg.MemoryLimit
	}
	if cfg.MaxTempSize != "" {
		engineCfg.MaxTempSize = cfg.MaxTempSize
	}
	if cfg.Threads != 0 {
		engineCfg.Threads = cfg.Threads
	}
	if cfg.QueryTimeout != 0 {
		engineCfg.QueryTimeout = cfg.QueryTimeout
	}
	// A statement waits for memory as long as for an execution slot.
	engineCfg.MemoryWait = cfg.QueueTimeout
	engineCfg.Logger = log
	if engineCfg.MemoryBudget, err = cfg.EngineBudget(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err) // Validate checked it
	}
	if g.engine, err = duckdb.New(engineCfg); err != nil {
		return nil, fmt.Errorf("gateway: opening the engine: %w", err)
	}
	log.Info("memory budget", "bytes", cfg.memoryBudget(), "gateway_buffers", GatewayBuffers(cfg), "engines", engineCfg.MemoryBudget)
	var s3 stage.Config
	if cfg.Stage.S3 != nil {
		s3.AWS = cfg.AWS
	}
	if g.files, err = tablefiles.New(tablefiles.Config{Stage: cfg.Stage, EngineRoot: engineCfg.Root, S3: s3, Logger: log.With("component", "stage")}); err != nil {
		return nil, fmt.Errorf("gateway: opening the stage: %w", err)
	}
	var metrics *flight.Metrics
	if cfg.Registry != nil {
		metrics = flight.NewMetrics(cfg.Registry)
		registerBudgetMetrics(cfg.Registry, g.engine, GatewayBuffers(cfg))
	}
	g.cat = cfg.Governance
	if g.cat == nil {
		if g.mc, err = client.New(cfg.Metasrv); err != nil {
			return nil, fmt.Errorf("gateway: metasrv client: %w", err)
		}
		g.meta = metacatalog.NewWithOptions(g.mc, metacatalog.Options{Observe: metrics.ObserveMetasrv,
			DecisionWindow: cfg.DecisionWindow, Reuse: metrics.ObserveDecision, Generations: cfg.Generations,
			Logger: log.With("component", "decisions")})
		g.cat = g.meta
		g.background(g.meta.Watch)
	}
	g.background(func(ctx context.Context) { sweepEngine(ctx, g.engine, log) })
	var ups flight.UpstreamEngines
	if cfg.Upstream != nil {
		g.up = upstream.New(*cfg.Upstream)
		ups = g.up
	}
	var fullText []string
	if cfg.AccessLog != nil {
		fullText = cfg.AccessLog.FullText
		var reg prometheus.Registerer
		if cfg.Registry != nil {
			reg = cfg.Registry
		}
		if g.accessLog, g.closeAccessLog, err = g.openAccessLog(*cfg.AccessLog, reg); err != nil {
			return nil, fmt.Errorf("gateway: the access log: %w", err)
		}
	}
	stageDesc := cfg.Stage
	g.srv, err = flight.New(flight.Config{
		Principals: cfg.Principals,
		Authn:      authn,

		ReloadPrincipals: cfg.ReloadPrincipals,
		Backend:          g.engine,
		Upstreams:        ups,
		Governance:       g.cat,
		Files:            g.files,
		Tickets:          cfg.Tickets,
		TLS:              cfg.TLS,
		Stage:            &stageDesc,
		Version:          cfg.Version,
		Logger:           log.With("component", "flight"),
		StartNotReady:    cfg.WaitMetasrv,
		Metrics:          metrics,
		AccessLog:        g.accessLog,
		GatewayID:        cfg.GatewayID,

		AccessLogFullText: fullText,

		MaxConcurrentPerTenant: cfg.MaxConcurrentPerTenant,
		MaxConcurrent:          cfg.MaxConcurrent,
		QueueTimeout:           cfg.QueueTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: the Flight server: %w", err)
	}
	return g, nil
}

// Governance is the gateway's governance: metasrv's (through the decision
// cache), or Config.Governance. The caller acts for the callers it names, as
// a client's request would.
func (g *Gateway) Governance() backend.Governance { return g.cat }

// Files is the gateway's access to the tenants' stages.
func (g *Gateway) Files() *tablefiles.Files { return g.files }

// Engine is the gateway's engine.
func (g *Gateway) Engine() *duckdb.Engine { return g.engine }

// Ready is closed once the gateway is ready: when Serve starts, or with
// Config.WaitMetasrv when metasrv has answered it. A Shutdown before then
// leaves it open.
func (g *Gateway) Ready() <-chan struct{} { return g.ready }

// Serve serves Flight SQL on lis and starts orphan collection and, with
// Config.WaitMetasrv, the wait for metasrv. It returns nil when ctx ends,
// the Flight server's error when it stops serving, or an error wrapping
// ErrMetasrvRefused when metasrv rejects the gateway; in every case the
// Flight server may still run: call Shutdown. lis is closed by Shutdown.
func (g *Gateway) Serve(ctx context.Context, lis net.Listener) error {
	g.mu.Lock()
	if g.serving || g.closed {
		g.mu.Unlock()
		return ErrServing
	}
	g.serving = true
	flightDone := make(chan struct{})
	g.flightDone = flightDone
	g.mu.Unlock()

	if g.mc != nil {
		tenants, mc, grace, interval, log := g.tenants, g.mc, g.cfg.GCGrace, g.cfg.GCInterval, g.log.With("component", "gc")
		g.background(func(ctx context.Context) { collectOrphans(ctx, interval, grace, tenants, g.files, mc, log) })
	}
	go func() {
		err := g.srv.Serve(lis)
		g.mu.Lock()
		g.flightErr = err
		g.mu.Unlock()
		close(flightDone)
	}()
	var readyErr chan error
	if g.cfg.WaitMetasrv {
		readyErr = make(chan error, 1)
		g.background(func(ctx context.Context) { readyErr <- waitMetasrv(ctx, g.mc, g.tenants[0].String(), g.log) })
	} else {
		g.markReady()
	}
	for {
		select {
		case <-flightDone:
			g.mu.Lock()
			err := g.flightErr
			g.reported = true
			g.mu.Unlock()
			if err == nil {
				return nil
			}
			return fmt.Errorf("gateway: serving Flight SQL: %w", err)
		case err := <-readyErr:
			readyErr = nil
			switch {
			case err == nil:
				g.srv.SetReady(true)
				g.markReady()
				g.log.Info("ready: metasrv answered")
			case ctx.Err() == nil:
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
}

func (g *Gateway) markReady() { g.readyOnce.Do(func() { close(g.ready) }) }

// Shutdown drains the Flight server until ctx ends (then aborts what is
// left: the error wraps flight.ErrShutdownAborted), stops every loop and
// closes everything New opened. It is idempotent; the error joins the
// drain's and the Flight server's own unless Serve returned that already.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.shutOnce.Do(func() {
		g.mu.Lock()
		g.closed = true
		flightDone := g.flightDone
		g.mu.Unlock()
		errs := []error{g.srv.Shutdown(ctx)}
		// The server has recorded its last events: they reach the stage
		// (or the spool) before the stage and metasrv are closed.
		if g.closeAccessLog != nil {
			if err := g.closeAccessLog(context.WithoutCancel(ctx)); err != nil {
				errs = append(errs, fmt.Errorf("gateway: flushing the access log: %w", err))
			}
			g.closeAccessLog = nil
		}
		if flightDone != nil {
			<-flightDone
			g.mu.Lock()
			if g.flightErr != nil && !g.reported {
				errs = append(errs, fmt.Errorf("gateway: serving Flight SQL: %w", g.flightErr))
			}
			g.mu.Unlock()
		}
		g.release()
		g.shutErr = errors.Join(errs...)
	})
	return g.shutErr
}

// background runs loop until release stops it (and waits for it).
func (g *Gateway) background(loop func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop(ctx)
	}()
	g.mu.Lock()
	g.stops = append(g.stops, func() { cancel(); <-done })
	g.mu.Unlock()
}

// release stops the loops, last started first, then closes what New
// opened, in reverse order.
func (g *Gateway) release() {
	g.mu.Lock()
	stops := g.stops
	g.stops = nil
	g.mu.Unlock()
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
	if g.closeAccessLog != nil {
		_ = g.closeAccessLog(context.Background())
	}
	if g.up != nil {
		g.up.Close()
	}
	if g.mc != nil {
		g.mc.CloseIdleConnections()
	}
	if g.files != nil {
		g.files.Close()
	}
	if g.engine != nil {
		g.engine.Close()
	}
}

// AccessLogConfig configures a gateway's access log: each tenant's events
// are batched and written every FlushInterval as Parquet files into the
// tenant's stage, each file committed as the next version of the tenant's
// system.access_events; while the stage is unavailable they wait in the
// spool on local disk.
type AccessLogConfig struct {
	// FlushInterval is how often each tenant's batch is written: what a
	// crash may lose, and how late an event shows in the table. Zero means
	// the access log's default.
	FlushInterval time.Duration
	// SpoolDir holds batches the stage refused, created mode 0700;
	// required.
	SpoolDir string
	// SpoolMax bounds the spool's bytes; once it is full, statements of a
	// tenant that fails closed are refused with Unavailable. Zero means
	// the access log's default.
	SpoolMax int64
	// MaxMemory bounds the bytes of events and batches held in memory
	// across tenants (batches the full spool could not take included);
	// once it is full, or one tenant holds half of it, that tenant's
	// statements are refused unless it fails open. Zero means the access
	// log's default (64 MiB).
	MaxMemory int64
	// FailOpen lists the tenants whose statements still run when their
	// events cannot be kept (the loss is counted and alerted on).
	FailOpen []string
	// Retention is how long events are kept; zero keeps them. The
	// gateway's own writer leaves older files out of the table's next
	// version (at most every 10 minutes per tenant); a Sink given here
	// applies its own.
	Retention time.Duration
	// FullText lists the tenants whose events keep statements whole,
	// literals included (an operator's choice per tenant); the others'
	// are normalised.
	FullText []string
	// Sink receives each flushed file. Nil means the gateway's own writer:
	// into the tenant's stage, committed through metasrv as the next
	// version of <catalog>.system.access_events (accesslog_sink.go).
	Sink accesslog.Sink
}

func (c AccessLogConfig) validate() error {
	var errs []error
	if c.SpoolDir == "" {
		errs = append(errs, errors.New("SpoolDir is required"))
	}
	if c.FlushInterval < 0 || c.SpoolMax < 0 || c.MaxMemory < 0 || c.Retention < 0 {
		errs = append(errs, errors.New("FlushInterval, SpoolMax, MaxMemory and Retention must not be negative"))
	}
	for _, t := range c.FailOpen {
		if _, err := authz.ParseTenantID(t); err != nil {
			errs = append(errs, fmt.Errorf("FailOpen: %w", err))
		}
	}
	return errors.Join(errs...)
}

// accessLogCatalog is the catalog whose schema system holds the access
// log: the Flight server's default catalog, the one every tenant sees.
const accessLogCatalog = "lake"

// openAccessLog opens the access log c configures, which New hands to the
// Flight server; close flushes it (Shutdown, once the server has drained).
func (g *Gateway) openAccessLog(c AccessLogConfig, metricsReg prometheus.Registerer) (flight.AccessLog, func(context.Context) error, error) {
	sink := c.Sink
	var own *accessLogSink
	if sink == nil && g.mc != nil {
		own = newAccessLogSink(g.files, g.mc, accessLogCatalog, c.Retention)
		own.compact.log = g.log.With("component", "accesslog")
		sink = own
	}
	if sink == nil {
		// Config.Governance replaces metasrv: nothing commits the files.
		g.log.Warn("access log: no metasrv to commit its files to; statements are not recorded")
		return nil, nil, nil
	}
	if err := os.MkdirAll(c.SpoolDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("creating the spool directory: %w", err)
	}
	failOpen := map[string]bool{}
	for _, t := range c.FailOpen {
		failOpen[t] = true
	}
	var metrics *accesslog.Metrics
	if metricsReg != nil {
		metrics = accesslog.NewMetrics(metricsReg)
	}
	l, err := accesslog.New(accesslog.Config{
		Sink:          sink,
		FlushInterval: c.FlushInterval,
		SpoolDir:      c.SpoolDir,
		SpoolMax:      c.SpoolMax,
		MaxMemory:     c.MaxMemory,
		FailOpen:      func(tenant string) bool { return failOpen[tenant] },
		Logger:        g.log.With("component", "accesslog"),
		Metrics:       metrics,
	})
	if err != nil {
		if own != nil {
			own.closeCompaction()
		}
		return nil, nil, err
	}
	if own == nil {
		return l, l.Close, nil
	}
	return l, func(ctx context.Context) error {
		err := l.Close(ctx)
		// After the last flush: its commit may start a compaction.
		own.closeCompaction()
		return err
	}, nil
}
