package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"lakegate/authz"
	"lakegate/flight"
	"lakegate/flight/gateway"
	"lakegate/flight/ticket"
	"lakegate/metasrv"
	"lakegate/metasrv/client"
	"lakegate/stage"
)

// serveConfig is everything `lakegate serve` reads from its flags.
type serveConfig struct {
	engineFlags
	dataDir     string
	metasrvAddr string
	raftAddr    string
	raftLog     string
}

func parseServeFlags(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := newFlagSet("serve")
	c.register(fs, time.Hour, "how often orphaned table files (from failed or abandoned writes, superseded versions, dropped tables) are collected; 0 disables")
	fs.StringVar(&c.dataDir, "data-dir", "./data", "data directory (created on first start, mode 0700)")
	fs.StringVar(&c.metasrvAddr, "metasrv-addr", "127.0.0.1:8816", "metasrv REST API listen address (port 0 picks one); same exposure rules as --flight-addr")
	fs.StringVar(&c.raftAddr, "raft-addr", "127.0.0.1:8817", "metasrv Raft transport address, loopback only: the node is a single voter (port 0 picks one)")
	fs.StringVar(&c.principals, "principals", "", "principal map (YAML); default: the demo map generated in the data directory, loopback only")
	fs.StringVar(&c.ticketKeys, "ticket-keys", "", "ticket key ring file; default: generated in the data directory")
	fs.StringVar(&c.stageFile, "stage", "", "root stage descriptor (JSON file: local root or S3 bucket/prefix; S3 credentials from the AWS environment); default: a local stage in <data-dir>/stage")
	raftLogFlag(fs, &c.raftLog)
	if err := fs.Parse(args); err != nil {
		return c, flagError(fs, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := c.validate(); err != nil {
		return c, err
	}
	if err := checkRaftLog(c.raftLog); err != nil {
		return c, err
	}
	if err := checkExposure(c.flightAddr, c.principals != "", c.tls.Enabled(), c.insecureNoTLS); err != nil {
		return c, err
	}
	if _, _, err := net.SplitHostPort(c.metasrvAddr); err != nil {
		return c, fmt.Errorf("%w: --metasrv-addr %q: %v", errUsage, c.metasrvAddr, err)
	}
	if err := checkExposure(c.metasrvAddr, c.principals != "", c.tls.Enabled(), c.insecureNoTLS); err != nil {
		return c, err
	}
	host, _, err := net.SplitHostPort(c.raftAddr)
	if err != nil {
		return c, fmt.Errorf("%w: --raft-addr %q: %v", errUsage, c.raftAddr, err)
	}
	if !isLoopback(host) {
		return c, fmt.Errorf("%w: --raft-addr %s is not a loopback address: the embedded metasrv is a single voter and has no peers (run `lakegate metasrv` for a cluster)", errUsage, c.raftAddr)
	}
	return c, nil
}

// checkExposure applies the rules for listening beyond this machine: a
// non-loopback address needs an operator's principal map, and TLS unless
// plaintext was explicitly accepted. Without a map only loopback is served.
func checkExposure(addr string, haveMap, haveTLS, insecureNoTLS bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: --flight-addr %q: %v", errUsage, addr, err)
	}
	if isLoopback(host) {
		return nil
	}
	if !haveMap {
		return fmt.Errorf("%w: refusing to listen on non-loopback %s without --principals: the generated demo map is for this machine only", errUsage, addr)
	}
	if !haveTLS && !insecureNoTLS {
		return fmt.Errorf("%w: refusing to listen on non-loopback %s without TLS: pass --tls-cert and --tls-key, or --insecure-no-tls behind a TLS-terminating proxy", errUsage, addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level: %v", errUsage, err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// runServe starts the all-in-one gateway and blocks until ctx is done.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) (retErr error) {
	c, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, c.logLevel)
	if err != nil {
		return err
	}
	// A first start that fails before it serves leaves no data directory
	// behind: the next attempt starts fresh rather than from half a
	// metasrv, a demo map and tokens printed nowhere.
	_, statErr := os.Lstat(c.dataDir)
	fresh, served := errors.Is(statErr, fs.ErrNotExist), false
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		return fmt.Errorf("creating data directory: %w", err)
	}
	defer func() {
		if fresh && !served && retErr != nil {
			if err := os.RemoveAll(c.dataDir); err != nil {
				retErr = errors.Join(retErr, fmt.Errorf("removing the data directory of the failed first start: %w", err))
			}
		}
	}()
	var firstStart []demoCredential
	principalsPath := c.principals
	if principalsPath == "" {
		principalsPath = filepath.Join(c.dataDir, demoPrincipalsFile)
		if firstStart, err = ensureDemoPrincipals(c.dataDir); err != nil {
			return err
		}
	}
	// One file, two maps in force: the embedded metasrv's adds the
	// gateway's own identity (loaded first: it is the stricter of the two).
	pp := newProcessPrincipals(principalsPath, log)
	gwToken, withGateway, err := gatewayIdentity()
	if err != nil {
		return err
	}
	metaPrincipals, err := pp.load(withGateway)
	if err != nil {
		return err
	}
	principals, err := pp.load(nil)
	if err != nil {
		return err
	}
	ring, err := loadOrCreateRing(c.ticketKeys, c.dataDir)
	if err != nil {
		return err
	}
	var tlsFiles = c.tls
	tlsConfig, err := maybeTLS(tlsFiles)
	if err != nil {
		return err
	}

	stageDesc, err := serveStage(c)
	if err != nil {
		return err
	}

	// The gateway talks to the embedded metasrv as a query_service
	// principal minted for this process only, over its own loopback
	// listener, delegating for every tenant of the principal map.
	demo := c.principals == ""
	meta, metaURL, err := startServeMetasrv(ctx, c, metaPrincipals, pp, tlsConfig, log, demo)
	if err != nil {
		return err
	}
	metaErr := make(chan error, 2)
	go func() { metaErr <- meta.srv.Serve(meta.ln) }()
	go func() { metaErr <- meta.srv.Serve(meta.gatewayLn) }()
	stopMeta := func() error {
		err := shutdownMetasrv(ctx, meta.srv, log)
		return errors.Join(err, <-metaErr, <-metaErr)
	}
	cfg, err := c.assembly()
	if err != nil {
		return errors.Join(err, stopMeta())
	}
	cfg.Authn, cfg.Tickets, cfg.TLS, cfg.Stage, cfg.DataDir = principals, ring, tlsConfig, stageDesc, c.dataDir
	cfg.ReloadPrincipals = pp.reload
	if cfg.AccessLog, err = c.accessLog.config(c.dataDir); err != nil {
		return errors.Join(err, stopMeta())
	}
	cfg.GatewayID = gatewayPrincipal
	cfg.Metasrv = client.Config{Addrs: []string{"http://" + meta.gatewayLn.Addr().String()}, Token: gwToken}
	// Cached decisions are checked against the node itself: a change is
	// seen by the very next statement.
	cfg.Generations = meta.srv.Generation
	cfg.Registry, cfg.Logger = meta.srv.MetricsRegistry(), log
	if stageDesc.S3 != nil {
		if cfg.AWS, err = s3Config(ctx, stageDesc); err != nil {
			return errors.Join(err, stopMeta())
		}
	}
	gw, err := gateway.New(ctx, cfg)
	if err != nil {
		return errors.Join(err, stopMeta())
	}
	// Until Serve: nothing to drain.
	abandon := func(err error) error {
		return errors.Join(err, gw.Shutdown(context.WithoutCancel(ctx)), stopMeta())
	}
	// One endpoint for both: the gateway's metrics join the embedded node's
	// registry.
	stopMetrics, metricsAddr, err := serveMetrics(c.metricsAddr, meta.srv.MetricsRegistry(), log)
	if err != nil {
		return abandon(err)
	}
	meta.srv.MetricsRegistry().MustRegister(pp)
	pp.watchSIGHUP(ctx)
	defer func() { _ = stopMetrics(context.WithoutCancel(ctx)) }()
	if demo {
		if err := ensureDemoTables(ctx, gw.Files(), gw.Governance()); err != nil {
			return abandon(err)
		}
	}
	lis, err := net.Listen("tcp", c.flightAddr)
	if err != nil {
		return abandon(fmt.Errorf("listening on %s: %w", c.flightAddr, err))
	}
	printBanner(stdout, lis.Addr().String(), tlsConfig != nil, principalsPath, c.dataDir, demo, firstStart, metaURL, stageDesc, metricsAddr)
	served = true

	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	gwErr := make(chan error, 1)
	go func() { gwErr <- gw.Serve(serveCtx, lis) }()
	var serveErr error
	select {
	case serveErr = <-gwErr: // ctx ended, or the Flight server failed
	case serveErr = <-metaErr:
		metaErr <- nil // stopMeta waits for two results
		stopServing()
		serveErr = errors.Join(serveErr, <-gwErr)
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	shutdownErr := gw.Shutdown(shutdownCtx)
	if errors.Is(shutdownErr, flight.ErrShutdownAborted) {
		// serve's exit status does not depend on draining (unlike gateway's).
		log.Warn("shutdown", "err", shutdownErr)
		shutdownErr = nil
	}
	return errors.Join(serveErr, shutdownErr, stopMeta())
}

// serveStage returns the root stage: the descriptor file named by --stage,
// or a local stage in <data-dir>/stage.
func serveStage(c serveConfig) (stage.Descriptor, error) {
	if c.stageFile == "" {
		root, err := filepath.Abs(filepath.Join(c.dataDir, "stage"))
		if err != nil {
			return stage.Descriptor{}, fmt.Errorf("resolving the stage directory: %w", err)
		}
		if err := os.MkdirAll(root, 0o700); err != nil {
			return stage.Descriptor{}, fmt.Errorf("creating the stage directory: %w", err)
		}
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return stage.Descriptor{}, fmt.Errorf("resolving the stage directory: %w", err)
		}
		return stage.Descriptor{Version: stage.DescriptorVersion, Local: &stage.LocalDescriptor{Root: root}}, nil
	}
	return readStage(c.stageFile)
}

// gatewayPrincipal is the id of the identity `serve` mints for its gateway.
const gatewayPrincipal = "lakegate-serve-gateway"

// gatewayIdentity mints the gateway's query_service token and returns it
// with the Prepare of the embedded metasrv's maps: each map loaded (at start
// and on every reload) plus the gateway, which may delegate for every
// tenant of that map.
func gatewayIdentity() (string, func(*authz.PrincipalMap) (*authz.PrincipalMap, error), error) {
	tok, err := authz.NewToken(rand.Reader)
	if err != nil {
		return "", nil, err
	}
	id, err := authz.ParsePrincipalID(gatewayPrincipal)
	if err != nil {
		return "", nil, err
	}
	home, err := authz.ParseTenantID("lakegate")
	if err != nil {
		return "", nil, err
	}
	hash := authz.HashToken(tok)
	prepare := func(m *authz.PrincipalMap) (*authz.PrincipalMap, error) {
		p, err := authz.NewPrincipal(id, home, authz.RoleQueryService, nil, gateway.QueryTenants(m))
		if err != nil {
			return nil, err
		}
		withGW, err := m.With(p, hash)
		if err != nil {
			return nil, fmt.Errorf("adding the gateway's identity to the principal map: %w", err)
		}
		return withGW, nil
	}
	return tok, prepare, nil
}

// serveMetasrv is the single-node metasrv embedded in `serve`.
type serveMetasrv struct {
	srv *metasrv.Server
	ln  net.Listener
	// gatewayLn is a loopback listener only the gateway uses.
	gatewayLn net.Listener
}

// serveMetasrvNode is the embedded node's id in its one-voter cluster.
const serveMetasrvNode = "serve"

// startServeMetasrv opens (on first start: bootstraps) the single-node
// metasrv under <data-dir>/metasrv, waits until it leads, and makes sure the
// demo metalake exists. The caller serves meta.ln and shuts the node down.
func startServeMetasrv(ctx context.Context, c serveConfig, principals *authz.Principals, pp *processPrincipals, serverTLS *tls.Config, log *slog.Logger, demo bool) (meta serveMetasrv, restURL string, err error) {
	ln, err := net.Listen("tcp", c.metasrvAddr)
	if err != nil {
		return meta, "", fmt.Errorf("listening on %s: %w", c.metasrvAddr, err)
	}
	cfg := metasrv.DefaultConfig()
	cfg.NodeID, cfg.DataDir = serveMetasrvNode, filepath.Join(c.dataDir, "metasrv")
	cfg.RaftAddr, cfg.HTTPAddr = c.raftAddr, ln.Addr().String() // the real port when port 0 was asked for
	cfg.Raft.LogStore = c.raftLog
	// Bootstrap is ignored once state exists. A single voter never forwards,
	// so it needs no peer token.
	cfg.Bootstrap, cfg.Authn, cfg.Logger = true, principals, log.With("component", "metasrv")
	cfg.ReloadPrincipals = func() error { return pp.reload("operator") }
	cfg.CheckPolicy = policyChecker()
	scheme := "http"
	if serverTLS != nil {
		scheme = "https"
		t := serverTLS.Clone()
		t.NextProtos = []string{"h2", "http/1.1"}
		ln = tls.NewListener(ln, t)
	}
	cfg.PeerScheme = scheme
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	srv, err := metasrv.New(startCtx, cfg)
	if err != nil {
		ln.Close()
		return meta, "", err
	}
	if err := srv.AwaitLeadership(startCtx); err != nil {
		ln.Close()
		return meta, "", errors.Join(err, shutdownMetasrv(ctx, srv, log))
	}
	if demo {
		if err := ensureDemoMetalake(startCtx, srv); err != nil {
			ln.Close()
			return meta, "", errors.Join(err, shutdownMetasrv(ctx, srv, log))
		}
	}
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		return meta, "", errors.Join(err, shutdownMetasrv(ctx, srv, log))
	}
	return serveMetasrv{srv: srv, ln: ln, gatewayLn: gln}, scheme + "://" + cfg.HTTPAddr, nil
}

func maybeTLS(f flight.TLSFiles) (*tls.Config, error) {
	if !f.Enabled() {
		return nil, nil
	}
	return flight.ServerTLS(f)
}

// loadOrCreateRing loads the ticket key ring, generating one in the data
// directory on first start when no file was named.
func loadOrCreateRing(path, dataDir string) (*ticket.Ring, error) {
	if path != "" {
		return ticket.LoadRing(path)
	}
	path = filepath.Join(dataDir, "ticket-keys")
	ring, err := ticket.LoadRing(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return ring, err
	}
	ring, err = ticket.GenerateRing(rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := ticket.WriteRingFile(path, ring); err != nil {
		return nil, err
	}
	return ring, nil
}
