package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	lgmcp "lakegate/metasrv/mcp"
)

const mcpUsage = `usage: lakegate mcp --metalake M [--server URL] [--tls-ca FILE] [--include-tool-tags T,...]
                    (--stdio [--token TOKEN] |
                     --http-addr ADDR [--tls-cert FILE --tls-key FILE] [--insecure-expose])

Serves MCP tools over metasrv's REST API (see README, "Using lakegate from an agent").
  --stdio            speak MCP on stdin/stdout; every call uses --token (default $LAKEGATE_TOKEN)
  --http-addr ADDR   serve streamable HTTP on ADDR (path /mcp); every call forwards the
                     caller's Authorization header, a request without one gets 401.
                     HTTPS with --tls-cert and --tls-key (both or neither). Plain HTTP
                     binds loopback addresses only, unless --insecure-expose.
`

// runMCP runs `lakegate mcp`.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp")
	server := fs.String("server", envOr("LAKEGATE_METASRV", "http://127.0.0.1:8816"), "metasrv REST address (default $LAKEGATE_METASRV or http://127.0.0.1:8816)")
	tlsCA := fs.String("tls-ca", "", "trust this CA (PEM) for metasrv instead of the system roots")
	metalake := fs.String("metalake", os.Getenv("LAKEGATE_METALAKE"), "metalake the tools work in (default $LAKEGATE_METALAKE)")
	stdio := fs.Bool("stdio", false, "serve MCP over stdin/stdout")
	token := fs.String("token", "", "bearer token for every call in --stdio mode (default $LAKEGATE_TOKEN)")
	httpAddr := fs.String("http-addr", "", "serve MCP streamable HTTP on this address, e.g. 127.0.0.1:8818")
	tlsCert := fs.String("tls-cert", "", "with --http-addr: serve HTTPS with this certificate chain (PEM); needs --tls-key")
	tlsKey := fs.String("tls-key", "", "with --http-addr: the private key (PEM) of --tls-cert")
	expose := fs.Bool("insecure-expose", false, "allow plain HTTP --http-addr on a non-loopback address (put TLS in front)")
	insecureNoTLS := fs.Bool("insecure-no-tls", false, "allow http:// to a non-loopback --server (a trusted network): tokens cross it in clear")
	tags := fs.String("include-tool-tags", strings.Join(lgmcp.AllTags, ","), "tool tags to serve, comma-separated")
	if err := fs.Parse(args); err != nil {
		return flagError(fs, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: mcp takes no arguments (got %q)", errUsage, fs.Args())
	}
	if *stdio == (*httpAddr != "") {
		return fmt.Errorf("%w: mcp needs exactly one of --stdio and --http-addr", errUsage)
	}
	if *metalake == "" {
		return fmt.Errorf("%w: mcp needs --metalake (or $LAKEGATE_METALAKE)", errUsage)
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together: pass both (HTTPS) or neither", errUsage)
	}
	serveTLS := *tlsCert != ""
	if serveTLS && *stdio {
		return fmt.Errorf("%w: --tls-cert and --tls-key are for --http-addr, not --stdio", errUsage)
	}
	tagList := strings.Split(*tags, ",")
	if _, err := lgmcp.ParseTags(tagList); err != nil {
		return fmt.Errorf("%w: --include-tool-tags: %v", errUsage, err)
	}
	tokenSet := false
	fs.Visit(func(f *flag.Flag) { tokenSet = tokenSet || f.Name == "token" })
	if *httpAddr != "" && tokenSet {
		return fmt.Errorf("%w: --token is for --stdio; over HTTP each caller's Authorization header is forwarded", errUsage)
	}
	base, hc, err := metasrvClient(*server, *tlsCA, *insecureNoTLS)
	if err != nil {
		return err
	}
	cfg := lgmcp.Config{Server: base, Metalake: *metalake, HTTPClient: hc, Tags: tagList, Version: version}

	if *stdio {
		cfg.Token = *token
		if cfg.Token == "" {
			cfg.Token = os.Getenv("LAKEGATE_TOKEN")
		}
		if cfg.Token == "" {
			return fmt.Errorf("%w: --stdio needs --token or $LAKEGATE_TOKEN", errUsage)
		}
		srv, err := lgmcp.NewServer(cfg)
		if err != nil {
			return err
		}
		// stdout carries the protocol: say nothing there.
		fmt.Fprintf(stderr, "lakegate mcp: serving MCP over stdio (metalake %s, metasrv %s)\n", cfg.Metalake, base)
		err = srv.Run(ctx, &sdk.StdioTransport{})
		if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}

	// HTTPS may listen anywhere, as metasrv and the gateway may with TLS;
	// plain HTTP only on loopback unless --insecure-expose.
	if err := checkLoopback(*httpAddr, *expose || serveTLS); err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if serveTLS {
		if tlsCfg, err = serverTLSConfig(*tlsCert, *tlsKey); err != nil {
			return err
		}
	}
	h, err := lgmcp.NewHTTPHandler(cfg)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return err
	}
	// The server's own errors (TLS handshakes, mostly) go to stderr, not
	// the process-wide log.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, TLSConfig: tlsCfg,
		ErrorLog: log.New(stderr, "lakegate mcp: ", log.LstdFlags)}
	scheme := "http"
	if serveTLS {
		scheme = "https"
	}
	fmt.Fprintf(stdout, "lakegate mcp: streamable HTTP on %s://%s/mcp (metalake %s, metasrv %s)\n", scheme, ln.Addr(), cfg.Metalake, base)
	errc := make(chan error, 1)
	go func() {
		if serveTLS {
			errc <- hs.ServeTLS(ln, "", "") // the certificate is in hs.TLSConfig
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		// Open SSE streams do not end by themselves.
		_ = hs.Close()
	}
	return nil
}

// envOr returns $key, or def when it is unset or empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// checkLoopback refuses a listen address that is not loopback unless
// expose is set.
func checkLoopback(addr string, expose bool) error {
	if expose {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: --http-addr %q: %v", errUsage, addr, err)
	}
	if isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%w: --http-addr %q is not a loopback address; without --tls-cert and --tls-key the MCP "+
		"listener speaks plain HTTP, so expose it only behind TLS, with --insecure-expose", errUsage, addr)
}

// serverTLSConfig loads a server certificate chain and key (PEM) into a
// server configuration with TLS 1.2 as the minimum version, as the other
// lakegate listeners do (metasrvTLS, flight.ServerTLS).
func serverTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading TLS certificate (--tls-cert %s, --tls-key %s): %w", certFile, keyFile, err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, nil
}
