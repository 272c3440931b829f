package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
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
	"lakegate/flight/backend/duckdb"
	"lakegate/flight/ticket"
)

// serveConfig is everything `lakegate serve` reads from its flags.
type serveConfig struct {
	dataDir       string
	flightAddr    string
	principals    string
	ticketKeys    string
	tls           flight.TLSFiles
	insecureNoTLS bool
	memoryLimit   string
	threads       int
	queryTimeout  time.Duration
	logLevel      string
}

func parseServeFlags(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dataDir, "data-dir", "./data", "data directory (created on first start, mode 0700)")
	fs.StringVar(&c.flightAddr, "flight-addr", "127.0.0.1:8815", "Flight SQL listen address")
	fs.StringVar(&c.principals, "principals", "", "principal map (YAML); default: the demo map generated in the data directory, loopback only")
	fs.StringVar(&c.ticketKeys, "ticket-keys", "", "ticket key ring file; default: generated in the data directory")
	fs.StringVar(&c.tls.CertFile, "tls-cert", "", "TLS certificate chain (PEM)")
	fs.StringVar(&c.tls.KeyFile, "tls-key", "", "TLS private key (PEM)")
	fs.StringVar(&c.tls.ClientCAFile, "tls-client-ca", "", "require client certificates signed by this CA (PEM): mutual TLS")
	fs.BoolVar(&c.insecureNoTLS, "insecure-no-tls", false, "allow plaintext on a non-loopback address (behind a TLS-terminating proxy); never waives authentication")
	fs.StringVar(&c.memoryLimit, "memory-limit", "1GB", "DuckDB memory_limit per tenant")
	fs.IntVar(&c.threads, "threads", 2, "DuckDB threads per tenant")
	fs.DurationVar(&c.queryTimeout, "query-timeout", 5*time.Minute, "deadline for one query")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if c.tls.ClientCAFile != "" && !c.tls.Enabled() {
		return c, fmt.Errorf("%w: --tls-client-ca needs --tls-cert and --tls-key", errUsage)
	}
	return c, checkExposure(c.flightAddr, c.principals != "", c.tls.Enabled(), c.insecureNoTLS)
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
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, c.logLevel)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		return fmt.Errorf("creating data directory: %w", err)
	}
	var firstStart []demoCredential
	principalsPath := c.principals
	if principalsPath == "" {
		principalsPath = filepath.Join(c.dataDir, demoPrincipalsFile)
		if firstStart, err = ensureDemoPrincipals(c.dataDir); err != nil {
			return err
		}
	}
	principals, err := authz.LoadPrincipalMap(principalsPath)
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

	engineCfg := duckdb.DefaultConfig()
	engineCfg.Root = filepath.Join(c.dataDir, "stage")
	engineCfg.MemoryLimit = c.memoryLimit
	engineCfg.Threads = c.threads
	engineCfg.QueryTimeout = c.queryTimeout
	engineCfg.Logger = log
	engine, err := duckdb.New(engineCfg)
	if err != nil {
		return err
	}
	defer engine.Close()
	if err := ensureDemoTables(ctx, engine); err != nil {
		return err
	}

	srv, err := flight.New(flight.Config{
		Principals: principals,
		Backend:    engine,
		Tickets:    ring,
		TLS:        tlsConfig,
		Version:    version,
		Logger:     log.With("component", "flight"),
	})
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", c.flightAddr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", c.flightAddr, err)
	}
	printBanner(stdout, lis.Addr().String(), tlsConfig != nil, principalsPath, c.dataDir, c.principals == "", firstStart)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	return <-errc
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
