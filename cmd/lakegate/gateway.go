package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lakegate/authz"
	"lakegate/flight"
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/backend/upstream"
	"lakegate/flight/gateway"
	"lakegate/flight/ticket"
	"lakegate/metasrv/client"
	"lakegate/stage"
)

// engineFlags are the flags `serve` and `gateway` share: the Flight
// listener, the engine, admission, orphan collection and logging.
type engineFlags struct {
	flightAddr    string
	principals    string
	ticketKeys    string
	stageFile     string
	tls           flight.TLSFiles
	insecureNoTLS bool
	memoryLimit   string
	memoryBudget  string // a size, a percentage of the machine's memory, or "" for the default
	maxTempSize   string
	threads       int
	queryTimeout  time.Duration
	logLevel      string

	maxConcurrentPerTenant int
	maxConcurrent          int
	queueTimeout           time.Duration
	decisionWindow         time.Duration

	gcInterval time.Duration
	gcGrace    time.Duration

	metricsAddr string

	upstreamAllow    string // comma-separated host:port
	upstreamCredsDir string
	upstreamCA       string
	upstreamPlain    bool

	accessLog accessLogFlags
}

// accessLogFlags are the access log's flags, shared by `serve` and
// `gateway`.
type accessLogFlags struct {
	on        bool
	flush     time.Duration
	spoolDir  string // "": <data-dir>/access-log-spool
	spoolMax  string // a size: 512MiB, 2GB, 1048576
	memoryMax string // a size
	failOpen  string // comma-separated tenants
	fullText  string // comma-separated tenants
	retention time.Duration
}

// defaultSpoolMax is --access-log-spool-max's default.
const defaultSpoolMax = "1GiB"

// defaultMemoryMax is --access-log-memory-max's default.
const defaultMemoryMax = "64MiB"

// register defines the access log's flags on fs.
func (c *accessLogFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.on, "access-log", true, "record every statement and discovery call that reaches authorization in the tenant's table system.access_events (readable by its tenant admins); --access-log=false records nothing")
	fs.DurationVar(&c.flush, "access-log-flush", 5*time.Second, "how often each tenant's events are written to its stage: how late they show in system.access_events, and what a crash may lose (e.g. 5s, 1m)")
	fs.StringVar(&c.spoolDir, "access-log-spool-dir", "", "directory holding events while the stage is unavailable (mode 0700); default: <data-dir>/access-log-spool")
	fs.StringVar(&c.spoolMax, "access-log-spool-max", defaultSpoolMax, "bound of the spool (e.g. 512MiB, 4GB): once it and the log's memory (--access-log-memory-max) are full, a tenant's new statements fail with Unavailable \"access log unavailable\" unless it is in --access-log-fail-open")
	fs.StringVar(&c.memoryMax, "access-log-memory-max", defaultMemoryMax, "bound of the events and batches the access log holds in memory across tenants (e.g. 64MiB): once full, or half of it held by one tenant whose stage and spool take nothing, that tenant's new statements fail with Unavailable unless it is in --access-log-fail-open")
	fs.StringVar(&c.failOpen, "access-log-fail-open", "", "comma-separated tenants whose statements still run when their events cannot be kept (counted and alerted on; e.g. acme,globex); default: every tenant fails closed")
	fs.StringVar(&c.fullText, "access-log-full-text", "", "comma-separated tenants whose events keep each statement whole, literals included (e.g. acme); default: every tenant's statements are kept normalised, each literal replaced by ?")
	fs.DurationVar(&c.retention, "access-log-retention", 0, "how long events are kept (e.g. 2160h for 90 days): older ones leave the table's current version, their files go with the versions that name them; 0 keeps them")
}

// config is the gateway's access log configuration (nil when off), with
// the spool under dataDir unless --access-log-spool-dir names one.
func (c *accessLogFlags) config(dataDir string) (*gateway.AccessLogConfig, error) {
	if !c.on {
		return nil, nil
	}
	if c.flush <= 0 || c.retention < 0 {
		return nil, fmt.Errorf("%w: --access-log-flush must be positive and --access-log-retention not negative", errUsage)
	}
	spoolMax, err := parseSize(c.spoolMax)
	if err != nil || spoolMax <= 0 {
		return nil, fmt.Errorf("%w: --access-log-spool-max %q: want a positive size such as 512MiB or 4GB", errUsage, c.spoolMax)
	}
	memoryMax, err := parseSize(c.memoryMax)
	if err != nil || memoryMax <= 0 {
		return nil, fmt.Errorf("%w: --access-log-memory-max %q: want a positive size such as 64MiB", errUsage, c.memoryMax)
	}
	cfg := &gateway.AccessLogConfig{FlushInterval: c.flush, SpoolDir: c.spoolDir, SpoolMax: spoolMax, MaxMemory: memoryMax, Retention: c.retention}
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = filepath.Join(dataDir, "access-log-spool")
	}
	if cfg.FailOpen, err = tenantList("--access-log-fail-open", c.failOpen); err != nil {
		return nil, err
	}
	if cfg.FullText, err = tenantList("--access-log-full-text", c.fullText); err != nil {
		return nil, err
	}
	return cfg, nil
}

// tenantList reads flag's comma-separated tenant ids.
func tenantList(flag, list string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(list, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if _, err := authz.ParseTenantID(t); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUsage, flag, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// sizeUnits are the suffixes parseSize accepts, longest first.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// parseSize reads a byte size: digits with an optional unit (KiB, MiB,
// GiB, TiB, KB, MB, GB, TB, B).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q", s)
	}
	return n * mult, nil
}

// register defines the shared flags on fs; gcInterval is the command's
// default for --gc-interval.
func (c *engineFlags) register(fs *flag.FlagSet, gcInterval time.Duration, gcHelp string) {
	fs.StringVar(&c.flightAddr, "flight-addr", "127.0.0.1:8815", "Flight SQL listen address")
	fs.StringVar(&c.tls.CertFile, "tls-cert", "", "TLS certificate chain (PEM)")
	fs.StringVar(&c.tls.KeyFile, "tls-key", "", "TLS private key (PEM)")
	fs.StringVar(&c.tls.ClientCAFile, "tls-client-ca", "", "require client certificates signed by this CA (PEM): mutual TLS")
	fs.BoolVar(&c.insecureNoTLS, "insecure-no-tls", false, "allow plaintext on a non-loopback address (behind a TLS-terminating proxy); never waives authentication")
	fs.StringVar(&c.memoryLimit, "memory-limit", "1GB", "DuckDB memory_limit per tenant")
	fs.StringVar(&c.memoryBudget, "memory-budget", "", fmt.Sprintf("memory the tenant engines and the gateway's own buffers may hold together (e.g. 16GiB, 60%%): idle engines are closed to make room, and a query that finds none fails with ResourceExhausted; must hold one tenant at --memory-limit. Default: %d%% of the machine's memory or of its cgroup limit if lower", duckdb.DefaultBudgetPercent))
	fs.StringVar(&c.maxTempSize, "max-temp-size", duckdb.DefaultMaxTempSize, "DuckDB max_temp_directory_size per tenant: how much its queries may spill to disk")
	fs.IntVar(&c.threads, "threads", 2, "DuckDB threads per tenant")
	fs.DurationVar(&c.queryTimeout, "query-timeout", 5*time.Minute, "deadline for one query")
	fs.IntVar(&c.maxConcurrentPerTenant, "max-concurrent-per-tenant", 4, "queries one tenant may run at once, and separately statements it may plan or listings it may ask for at once (at most --max-concurrent)")
	fs.IntVar(&c.maxConcurrent, "max-concurrent", 16, "queries that may run at once across all tenants (and separately statements planned or listings made)")
	fs.DurationVar(&c.queueTimeout, "queue-timeout", 5*time.Second, "how long a query, planning call or listing waits for a free slot before failing with ResourceExhausted")
	fs.DurationVar(&c.decisionWindow, "decision-window", time.Second, "reuse metasrv's resolve decisions while a watch on the tenant's governance generation confirms nothing changed; a change is seen within a round trip, and when metasrv stops answering nothing is reused after this long. 0 asks metasrv for every statement")
	fs.DurationVar(&c.gcInterval, "gc-interval", gcInterval, gcHelp)
	fs.DurationVar(&c.gcGrace, "gc-grace", 24*time.Hour, "orphaned files younger than this are kept; must exceed the longest write ("+stage.MaxWriteAge.String()+")")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "127.0.0.1:9464", "address serving Prometheus metrics at /metrics (plain HTTP, unauthenticated: keep it on loopback or a private network); empty disables")
	fs.StringVar(&c.upstreamAllow, "upstream-allow", "", "comma-separated host:port of the upstream Flight SQL engines this gateway may query for upstream catalogs; empty: none")
	fs.StringVar(&c.upstreamCredsDir, "upstream-credentials-dir", "", "directory of the credential files upstream catalogs name (each holds one bearer token)")
	c.accessLog.register(fs)
	fs.StringVar(&c.upstreamCA, "upstream-ca", "", "CA bundle (PEM) verifying upstream engines that use TLS; empty: the system roots")
	fs.BoolVar(&c.upstreamPlain, "upstream-plaintext", false, "allow upstream engines without TLS on non-loopback addresses (their credentials then travel in clear)")
}

// upstreamConfig is the upstream engines the flags allow; nil when none
// are allowed.
func (c *engineFlags) upstreamConfig() (*upstream.Config, error) {
	if c.upstreamAllow == "" {
		if c.upstreamCredsDir != "" || c.upstreamCA != "" || c.upstreamPlain {
			return nil, fmt.Errorf("%w: --upstream-credentials-dir, --upstream-ca and --upstream-plaintext need --upstream-allow", errUsage)
		}
		return nil, nil
	}
	cfg := upstream.Config{Allow: strings.Split(c.upstreamAllow, ","), CredentialsDir: c.upstreamCredsDir, AllowPlaintext: c.upstreamPlain}
	if c.upstreamCA != "" {
		pem, err := os.ReadFile(c.upstreamCA)
		if err != nil {
			return nil, fmt.Errorf("reading --upstream-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: --upstream-ca holds no PEM certificate", errUsage)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: --upstream-allow: %w", errUsage, err)
	}
	return &cfg, nil
}

// assembly is the part of the gateway's configuration the shared flags
// set: the engine, admission, decisions, orphan collection and upstream
// engines.
func (c *engineFlags) assembly() (gateway.Config, error) {
	up, err := c.upstreamConfig()
	if err != nil {
		return gateway.Config{}, err
	}
	budget, err := c.budgetBytes()
	if err != nil {
		return gateway.Config{}, err
	}
	return gateway.Config{
		MemoryLimit: c.memoryLimit, MaxTempSize: c.maxTempSize, Threads: c.threads, QueryTimeout: c.queryTimeout, MemoryBudget: budget,
		MaxConcurrentPerTenant: c.maxConcurrentPerTenant, MaxConcurrent: c.maxConcurrent, QueueTimeout: c.queueTimeout,
		DecisionWindow: c.decisionWindow, GCInterval: c.gcInterval, GCGrace: c.gcGrace, Upstream: up, Version: version,
	}, nil
}

// validate checks the shared flags except the exposure rules, which differ
// between the commands.
func (c *engineFlags) validate() error {
	if c.maxConcurrentPerTenant < 1 || c.maxConcurrent < 1 || c.queueTimeout <= 0 {
		return fmt.Errorf("%w: --max-concurrent-per-tenant, --max-concurrent and --queue-timeout must be positive", errUsage)
	}
	if c.decisionWindow < 0 {
		return fmt.Errorf("%w: --decision-window must not be negative", errUsage)
	}
	if c.maxConcurrentPerTenant > c.maxConcurrent {
		return fmt.Errorf("%w: --max-concurrent-per-tenant (%d) exceeds --max-concurrent (%d)", errUsage, c.maxConcurrentPerTenant, c.maxConcurrent)
	}
	if c.gcInterval < 0 || c.gcGrace <= stage.MaxWriteAge {
		return fmt.Errorf("%w: --gc-interval must not be negative and --gc-grace must exceed %s", errUsage, stage.MaxWriteAge)
	}
	if c.tls.ClientCAFile != "" && !c.tls.Enabled() {
		return fmt.Errorf("%w: --tls-client-ca needs --tls-cert and --tls-key", errUsage)
	}
	if _, err := c.accessLog.config(""); err != nil {
		return err
	}
	budget, err := c.budgetBytes()
	if err != nil {
		return err
	}
	var al *gateway.AccessLogConfig
	if c.accessLog.on {
		al = &gateway.AccessLogConfig{}
	}
	check := gateway.Config{MemoryLimit: c.memoryLimit, MemoryBudget: budget, MaxConcurrent: c.maxConcurrent, AccessLog: al}
	if _, err := check.EngineBudget(); err != nil {
		return fmt.Errorf("%w: --memory-budget too small for --memory-limit: %w", errUsage, err)
	}
	return nil
}

// budgetBytes reads --memory-budget: a size, or a percentage of the
// machine's memory; 0 for the default.
func (c *engineFlags) budgetBytes() (int64, error) {
	s := strings.TrimSpace(c.memoryBudget)
	if s == "" {
		return 0, nil
	}
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.Atoi(strings.TrimSpace(pct))
		if err != nil || p < 1 || p > 100 {
			return 0, fmt.Errorf("%w: --memory-budget %q: want a percentage from 1%% to 100%%", errUsage, c.memoryBudget)
		}
		machine, _ := duckdb.MachineMemory()
		return machine / 100 * int64(p), nil
	}
	n, err := parseSize(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: --memory-budget %q: want a positive size such as 16GiB or 12GB, or a percentage such as 60%%", errUsage, c.memoryBudget)
	}
	return n, nil
}

// gatewayConfig is everything `lakegate gateway` reads from its flags.
type gatewayConfig struct {
	engineFlags
	dataDir          string
	metasrvAddrs     []string
	metasrvTokenFile string
	metasrvCA        string
	shutdownTimeout  time.Duration
	gatewayID        string
}

func parseGatewayFlags(args []string, stderr io.Writer) (gatewayConfig, error) {
	var c gatewayConfig
	var metasrvAddrs string
	fs := newFlagSet("gateway")
	c.register(fs, 0, "how often orphaned table files are collected; 0 (the default) disables. Exactly one gateway of a deployment should set it")
	fs.StringVar(&c.principals, "principals", "", "principal map (YAML, mode 0600; required)")
	fs.StringVar(&c.ticketKeys, "ticket-keys", "", "ticket key ring file (required; every replica loads the same ring)")
	fs.StringVar(&c.stageFile, "stage", "", "root stage descriptor (JSON file: local root or S3 bucket/prefix; required)")
	fs.StringVar(&c.dataDir, "data-dir", "./gateway-data", "engine scratch for an S3 stage: tenants' read caches and spill files under <data-dir>/stage (mode 0700); unused with a local stage, whose root is the engine's root")
	fs.StringVar(&metasrvAddrs, "metasrv", "", "metasrv nodes, comma-separated: base URLs (https://host:8816) or host:port (https); required. http:// only when every metasrv address and --flight-addr are loopback")
	fs.StringVar(&c.metasrvTokenFile, "metasrv-token-file", "", "file whose first line is this gateway's query_service token for metasrv (mode 0600 or 0400; required)")
	fs.StringVar(&c.metasrvCA, "metasrv-ca", "", "CA (PEM) that signs the metasrv nodes' certificates; default: the system roots")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGTERM/SIGINT, how long in-flight calls may drain before they are aborted (then the exit status is 1)")
	fs.StringVar(&c.gatewayID, "gateway-id", "", "this gateway's name in access events (e.g. its query_service principal, gw1@lakegate); default: the host name")
	if err := fs.Parse(args); err != nil {
		return c, flagError(fs, err)
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case c.principals == "":
		return c, fmt.Errorf("%w: --principals is required", errUsage)
	case c.ticketKeys == "":
		return c, fmt.Errorf("%w: --ticket-keys is required: every replica must open every other replica's tickets", errUsage)
	case c.stageFile == "":
		return c, fmt.Errorf("%w: --stage is required", errUsage)
	case strings.TrimSpace(metasrvAddrs) == "":
		return c, fmt.Errorf("%w: --metasrv is required", errUsage)
	case c.metasrvTokenFile == "":
		return c, fmt.Errorf("%w: --metasrv-token-file is required", errUsage)
	case c.shutdownTimeout <= 0:
		return c, fmt.Errorf("%w: --shutdown-timeout must be positive", errUsage)
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	if err := checkExposure(c.flightAddr, true, c.tls.Enabled(), c.insecureNoTLS); err != nil {
		return c, err
	}
	flightHost, _, _ := net.SplitHostPort(c.flightAddr) // checked by checkExposure
	allLoopback := isLoopback(flightHost)
	var plain []string
	for _, a := range strings.Split(metasrvAddrs, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return c, fmt.Errorf("%w: --metasrv has an empty address", errUsage)
		}
		scheme, host, err := metasrvAddr(a)
		if err != nil {
			return c, err
		}
		if scheme == "http" {
			plain = append(plain, a)
		}
		allLoopback = allLoopback && isLoopback(host)
		c.metasrvAddrs = append(c.metasrvAddrs, a)
	}
	if len(plain) > 0 && !allLoopback {
		return c, fmt.Errorf("%w: refusing plaintext to metasrv (%s): http:// is allowed only when every --metasrv address and --flight-addr are loopback; use https:// (and --metasrv-ca)", errUsage, strings.Join(plain, ", "))
	}
	return c, nil
}

// metasrvAddr parses one --metasrv address: a base URL (http or https) or
// host:port, which means https.
func metasrvAddr(a string) (scheme, host string, err error) {
	hostport := a
	scheme = "https"
	if strings.Contains(a, "://") {
		u, err := url.Parse(a)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return "", "", fmt.Errorf("%w: --metasrv %q: want http(s)://host:port or host:port", errUsage, a)
		}
		scheme, hostport = u.Scheme, u.Host
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" || port == "" {
		return "", "", fmt.Errorf("%w: --metasrv %q: want http(s)://host:port or host:port", errUsage, a)
	}
	return scheme, host, nil
}

// maxTokenFileSize bounds a token file; a token is 46 bytes.
const maxTokenFileSize = 4096

// readTokenFile returns the first line of a secret file holding a bearer
// token. The file must be a regular file (not a symlink) with no group or
// other permission bits; the checks are made on the opened file. Errors
// never contain the file's content.
func readTokenFile(flagName, path string) (string, error) {
	fail := func(format string, a ...any) (string, error) {
		return "", fmt.Errorf("%s %s: %s", flagName, path, fmt.Sprintf(format, a...))
	}
	lst, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flagName, err)
	}
	if lst.Mode()&os.ModeSymlink != 0 {
		return fail("is a symbolic link")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %w", flagName, err)
	case !os.SameFile(lst, st):
		return fail("changed while it was opened")
	case !st.Mode().IsRegular():
		return fail("is not a regular file")
	case st.Mode().Perm()&0o077 != 0:
		return fail("mode %04o grants group or other access; want 0600 or 0400", st.Mode().Perm())
	case st.Size() > maxTokenFileSize:
		return fail("is larger than %d bytes", maxTokenFileSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFileSize+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", flagName, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if tok := strings.TrimSpace(line); tok != "" {
		return tok, nil
	}
	return fail("has no token on its first line")
}

// metasrvHTTPClient returns the HTTP client the gateway calls metasrv with:
// a keep-alive transport sized for a gateway, trusting caFile (PEM) for
// https when it is set, else the system roots.
func metasrvHTTPClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 128
	tr.IdleConnTimeout = 90 * time.Second
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("reading --metasrv-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("--metasrv-ca holds no PEM certificate")
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return &http.Client{Transport: tr}, nil
}

// readStage reads and parses the root stage descriptor file.
func readStage(path string) (stage.Descriptor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return stage.Descriptor{}, fmt.Errorf("reading --stage: %w", err)
	}
	d, err := stage.ParseDescriptor(data)
	if err != nil {
		return stage.Descriptor{}, fmt.Errorf("--stage %s: %w", path, err)
	}
	return d, nil
}

// runGateway runs the stateless gateway until ctx is done, then drains it
// within --shutdown-timeout.
func runGateway(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseGatewayFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, c.logLevel)
	if err != nil {
		return err
	}
	cfg, err := c.assembly()
	if err != nil {
		return err
	}
	if cfg.AccessLog, err = c.accessLog.config(c.dataDir); err != nil {
		return err
	}
	if cfg.GatewayID = c.gatewayID; cfg.GatewayID == "" {
		cfg.GatewayID, _ = os.Hostname()
	}
	pp := newProcessPrincipals(c.principals, log)
	if cfg.Authn, err = pp.load(nil); err != nil {
		return err
	}
	cfg.ReloadPrincipals = pp.reload
	if len(gateway.QueryTenants(cfg.Authn.Current().Map())) == 0 {
		return errors.New("the principal map has no principal that may query: nothing to serve")
	}
	if cfg.Tickets, err = ticket.LoadRing(c.ticketKeys); err != nil {
		return err
	}
	if cfg.TLS, err = maybeTLS(c.tls); err != nil {
		return err
	}
	token, err := readTokenFile("--metasrv-token-file", c.metasrvTokenFile)
	if err != nil {
		return err
	}
	hc, err := metasrvHTTPClient(c.metasrvCA)
	if err != nil {
		return err
	}
	if cfg.Stage, err = readStage(c.stageFile); err != nil {
		return err
	}
	if cfg.Stage.S3 != nil {
		if cfg.AWS, err = s3Config(ctx, cfg.Stage); err != nil {
			return err
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), pp)
	cfg.DataDir, cfg.WaitMetasrv, cfg.Registry, cfg.Logger = c.dataDir, true, reg, log
	cfg.Metasrv = client.Config{Addrs: c.metasrvAddrs, Token: token, HTTPClient: hc}
	gw, err := gateway.New(ctx, cfg)
	if err != nil {
		return err
	}
	// Until Serve: nothing to drain.
	abandon := func(err error) error { return errors.Join(err, gw.Shutdown(context.WithoutCancel(ctx))) }
	stopMetrics, metricsAddr, err := serveMetrics(c.metricsAddr, reg, log)
	if err != nil {
		return abandon(err)
	}
	pp.watchSIGHUP(ctx)
	defer func() { _ = stopMetrics(context.WithoutCancel(ctx)) }()
	lis, err := net.Listen("tcp", c.flightAddr)
	if err != nil {
		return abandon(fmt.Errorf("listening on %s: %w", c.flightAddr, err))
	}
	scheme := "grpc"
	if cfg.TLS != nil {
		scheme = "grpc+tls"
	}
	fmt.Fprintf(stdout, "lakegate %s gateway serving Flight SQL on %s://%s\n", version, scheme, lis.Addr())
	fmt.Fprintf(stdout, "metasrv:     %s\n", strings.Join(c.metasrvAddrs, ", "))
	fmt.Fprintf(stdout, "stage:       %s\n", cfg.Stage)
	if metricsAddr != "" {
		fmt.Fprintf(stdout, "metrics:     http://%s/metrics\n", metricsAddr)
	}

	runErr := gw.Serve(ctx, lis)
	log.Info("shutting down", "drain_timeout", c.shutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdownTimeout)
	defer cancel()
	return errors.Join(runErr, gw.Shutdown(shutdownCtx))
}

// serveMetrics serves reg at /metrics on addr until the returned stop is
// called; an empty addr serves nothing.
func serveMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (stop func(context.Context) error, bound string, err error) {
	if addr == "" {
		return func(context.Context) error { return nil }, "", nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("listening on --metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	return func(ctx context.Context) error {
		err := hs.Shutdown(ctx)
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return err
	}, ln.Addr().String(), nil
}
