package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"lakegate/authz/sqlgate"
	"lakegate/catalog"
	"lakegate/metasrv"
	"lakegate/metasrv/raftnode"
)

// metasrvConfig is everything `lakegate metasrv` reads from its flags.
type metasrvConfig struct {
	nodeID, dataDir, raftAddr, httpAddr string
	bootstrap                           bool
	join                                string
	principals                          string
	peerTokenFile                       string
	tlsCert, tlsKey, tlsCA              string
	insecureNoTLS                       bool
	logLevel                            string
	metricsAddr                         string
	raftLog                             string
}

func parseMetasrvFlags(args []string, stderr io.Writer) (metasrvConfig, error) {
	var c metasrvConfig
	fs := newFlagSet("metasrv")
	fs.StringVar(&c.nodeID, "node-id", "", "this node's stable id in the cluster (required)")
	fs.StringVar(&c.dataDir, "data-dir", "./metasrv-data", "data directory: Raft log, snapshots, audit log (mode 0700)")
	fs.StringVar(&c.raftAddr, "raft-addr", "127.0.0.1:8817", "Raft transport address, as peers dial it")
	fs.StringVar(&c.httpAddr, "http-addr", "127.0.0.1:8816", "REST API address, as peers and clients dial it")
	fs.BoolVar(&c.bootstrap, "bootstrap", false, "form a new cluster with this node as its first voter (ignored once state exists)")
	fs.StringVar(&c.join, "join", "", "HTTP address of any cluster member to join through")
	fs.StringVar(&c.principals, "principals", "", "principal map (YAML, mode 0600; required)")
	fs.StringVar(&c.peerTokenFile, "peer-token-file", "", "file holding the bearer token of this node's own metadata_peer principal, whose id is --node-id (needed to forward writes and to join)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "certificate chain (PEM) for the REST API and the Raft transport")
	fs.StringVar(&c.tlsKey, "tls-key", "", "private key (PEM)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "CA (PEM) that signs every member's certificate: mutual TLS between nodes")
	fs.BoolVar(&c.insecureNoTLS, "insecure-no-tls", false, "allow plaintext on a non-loopback address; never waives authentication")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "127.0.0.1:9464", "address serving Prometheus metrics at /metrics (unauthenticated; TLS like the REST API); empty disables")
	raftLogFlag(fs, &c.raftLog)
	if err := fs.Parse(args); err != nil {
		return c, flagError(fs, err)
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case c.nodeID == "":
		return c, fmt.Errorf("%w: --node-id is required", errUsage)
	case c.principals == "":
		return c, fmt.Errorf("%w: --principals is required: metasrv never runs without a principal map", errUsage)
	case c.bootstrap && c.join != "":
		return c, fmt.Errorf("%w: --bootstrap and --join exclude each other", errUsage)
	case c.join != "" && c.peerTokenFile == "":
		return c, fmt.Errorf("%w: --join needs --peer-token-file", errUsage)
	case (c.tlsCert == "") != (c.tlsKey == ""), c.tlsCert != "" && c.tlsCA == "":
		return c, fmt.Errorf("%w: TLS needs --tls-cert, --tls-key and --tls-ca together", errUsage)
	}
	if err := checkRaftLog(c.raftLog); err != nil {
		return c, err
	}
	for _, a := range []struct{ flag, addr string }{{"--http-addr", c.httpAddr}, {"--raft-addr", c.raftAddr}, {"--metrics-addr", c.metricsAddr}} {
		if a.addr == "" && a.flag == "--metrics-addr" {
			continue
		}
		host, _, err := net.SplitHostPort(a.addr)
		if err != nil {
			return c, fmt.Errorf("%w: %s %q: %v", errUsage, a.flag, a.addr, err)
		}
		if !isLoopback(host) && c.tlsCert == "" && !c.insecureNoTLS {
			return c, fmt.Errorf("%w: refusing to listen on non-loopback %s without TLS: pass --tls-cert, --tls-key and --tls-ca, or --insecure-no-tls", errUsage, a.addr)
		}
	}
	return c, nil
}

// metasrvTLS builds the server, Raft (mutual) and peer-client TLS
// configurations from the files.
func metasrvTLS(c metasrvConfig) (server, raft *tls.Config, client *http.Client, err error) {
	cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("loading TLS certificate: %w", err)
	}
	pem, err := os.ReadFile(c.tlsCA)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading --tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, nil, errors.New("--tls-ca holds no PEM certificate")
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	raft = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, ClientCAs: pool, RootCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert}
	client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: pool}}}
	return server, raft, client, nil
}

// runMetasrv runs one metasrv node until ctx is done.
func runMetasrv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseMetasrvFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, c.logLevel)
	if err != nil {
		return err
	}
	pp := newProcessPrincipals(c.principals, log)
	principals, err := pp.load(nil)
	if err != nil {
		return err
	}
	cfg := metasrv.DefaultConfig()
	cfg.NodeID, cfg.DataDir, cfg.RaftAddr, cfg.HTTPAddr = c.nodeID, c.dataDir, c.raftAddr, c.httpAddr
	cfg.Raft.LogStore = c.raftLog
	cfg.Bootstrap, cfg.Authn, cfg.Logger = c.bootstrap, principals, log.With("component", "metasrv")
	cfg.ReloadPrincipals = func() error { return pp.reload("operator") }
	cfg.AllowJoins = true // a cluster node; admission is checked per join
	cfg.CheckPolicy = policyChecker()
	if c.peerTokenFile != "" {
		b, err := os.ReadFile(c.peerTokenFile)
		if err != nil {
			return fmt.Errorf("reading --peer-token-file: %w", err)
		}
		cfg.PeerToken = strings.TrimSpace(string(b))
	}
	var serverTLS *tls.Config
	cfg.PeerScheme = "http"
	if c.tlsCert != "" {
		if serverTLS, cfg.RaftTLS, cfg.PeerClient, err = metasrvTLS(c); err != nil {
			return err
		}
		cfg.PeerScheme = "https"
	}
	ln, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", c.httpAddr, err)
	}
	cfg.HTTPAddr = ln.Addr().String() // the real port when --http-addr asked for 0
	if serverTLS != nil {
		ln = tls.NewListener(ln, serverTLS)
	}
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	srv, err := metasrv.New(startCtx, cfg)
	cancel()
	if err != nil {
		ln.Close()
		return err
	}
	srv.MetricsRegistry().MustRegister(pp)
	pp.watchSIGHUP(ctx)
	var metricsSrv *http.Server
	var metricsLn net.Listener
	if c.metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", c.metricsAddr); err != nil {
			ln.Close()
			return errors.Join(fmt.Errorf("listening on --metrics-addr %s: %w", c.metricsAddr, err), shutdownMetasrv(ctx, srv, log))
		}
		if serverTLS != nil {
			metricsLn = tls.NewListener(metricsLn, serverTLS)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", srv.MetricsHandler())
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if metricsSrv != nil {
		go func() {
			if err := metricsSrv.Serve(metricsLn); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics: %w", err)
			}
		}()
		defer metricsSrv.Close()
	}
	fmt.Fprintf(stdout, "lakegate metasrv %s: REST on %s, Raft on %s, data in %s\n", c.nodeID, ln.Addr(), srv.Node().RaftAddr(), c.dataDir)
	if metricsLn != nil {
		fmt.Fprintf(stdout, "lakegate metasrv %s: metrics on %s/metrics\n", c.nodeID, metricsLn.Addr())
	}
	if c.join != "" {
		if err := joinWithRetry(ctx, srv, c.join); err != nil {
			shutdownMetasrv(ctx, srv, log)
			return err
		}
	}
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	log.Info("shutting down")
	return errors.Join(err, shutdownMetasrv(ctx, srv, log))
}

// joinWithRetry asks a member to add this node, retrying while the cluster
// has no leader, for up to a minute.
func joinWithRetry(ctx context.Context, srv *metasrv.Server, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		err := srv.Join(ctx, addr)
		if err == nil || errors.Is(err, metasrv.ErrJoinRefused) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("joining via %s: %w", addr, err)
		case <-t.C:
		}
	}
}

func shutdownMetasrv(ctx context.Context, srv *metasrv.Server, log interface{ Error(string, ...any) }) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
		return err
	}
	return nil
}

// policyChecker validates row filter and column mask expressions with the
// SQL gate when a policy is written, so that a policy no gateway could apply
// is refused with its reason instead of failing queries later.
func policyChecker() func(catalog.PolicyType, catalog.PolicyContent) error {
	g := sqlgate.New(sqlgate.Config{})
	return func(t catalog.PolicyType, c catalog.PolicyContent) error {
		var err error
		switch t {
		case catalog.PolicyRowFilter:
			err = g.CheckRowFilter(c.Expression)
		case catalog.PolicyColumnMask:
			err = g.CheckMask(c.Mask)
		}
		if err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "sqlgate: "))
		}
		return nil
	}
}

// raftLogFlag defines --raft-log, shared by metasrv and serve.
func raftLogFlag(fs *flag.FlagSet, v *string) {
	fs.StringVar(v, "raft-log", raftnode.LogStoreBolt, "how the Raft log is kept: bolt (raft-boltdb, two fdatasyncs per write) or wal (raft-wal, append-only segments, one fsync per write); a data directory keeps the kind it was created with")
}

// checkRaftLog validates --raft-log.
func checkRaftLog(v string) error {
	if v != raftnode.LogStoreBolt && v != raftnode.LogStoreWAL {
		return fmt.Errorf("%w: --raft-log %q: want %s or %s", errUsage, v, raftnode.LogStoreBolt, raftnode.LogStoreWAL)
	}
	return nil
}
