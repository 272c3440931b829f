package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	lgflight "lakegate/flight"
)

// connFlags are the connection flags shared by the client commands (sql,
// ingest).
type connFlags struct {
	addr     *string
	token    *string
	useTLS   *bool
	caFile   *string
	insecure *bool
}

// addConnFlags registers --addr, --token, --tls, --tls-ca and
// --insecure-no-tls on fs.
func addConnFlags(fs *flag.FlagSet) *connFlags {
	return &connFlags{
		addr:     fs.String("addr", envOr("LAKEGATE_ADDR", "127.0.0.1:8815"), "gateway address (default $LAKEGATE_ADDR or 127.0.0.1:8815)"),
		token:    fs.String("token", "", "bearer token (default: $LAKEGATE_TOKEN)"),
		useTLS:   fs.Bool("tls", false, "connect with TLS"),
		caFile:   fs.String("tls-ca", "", "trust this CA (PEM) instead of the system roots"),
		insecure: fs.Bool("insecure-no-tls", false, "allow plaintext to a non-loopback --addr (a trusted network): the token crosses it in clear"),
	}
}

// resolve fills the token from $LAKEGATE_TOKEN when --token is empty (no
// token at all is a usage error) and refuses to send it in clear beyond
// this machine.
func (c *connFlags) resolve() error {
	if *c.token == "" {
		*c.token = os.Getenv("LAKEGATE_TOKEN")
	}
	if *c.token == "" {
		return fmt.Errorf("%w: no token: pass --token or set LAKEGATE_TOKEN", errUsage)
	}
	if *c.useTLS || *c.caFile != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(*c.addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %q: %v", errUsage, *c.addr, err)
	}
	return checkClearText("--addr", host, "--tls", *c.insecure)
}

// checkClearText refuses a plaintext connection that would carry a bearer
// token beyond this machine — to host, the host of flagName — unless
// insecure (--insecure-no-tls) says the network is trusted. useTLS says
// how to ask for TLS instead.
func checkClearText(flagName, host, useTLS string, insecure bool) error {
	if insecure || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%w: %s %s is not a loopback address, and without TLS the token would cross the network in clear: "+
		"use %s, or --insecure-no-tls on a network you trust", errUsage, flagName, host, useTLS)
}

// dial opens a Flight SQL client to the gateway and returns it with ctx
// carrying the bearer token. Call resolve first. The client keeps the
// gateway's session cookie, so that the session (USE, the catalog and
// schema options) lasts as long as the client.
func (c *connFlags) dial(ctx context.Context) (*flightsql.Client, context.Context, error) {
	creds := insecure.NewCredentials()
	if *c.useTLS || *c.caFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if *c.caFile != "" {
			pem, err := os.ReadFile(*c.caFile)
			if err != nil {
				return nil, nil, err
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, nil, fmt.Errorf("%s holds no PEM certificate", *c.caFile)
			}
		}
		creds = credentials.NewTLS(cfg)
	}
	cl, err := flightsql.NewClient(*c.addr, nil, []flight.ClientMiddleware{flight.NewClientCookieMiddleware()},
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(lgflight.MaxMessageBytes)))
	if err != nil {
		return nil, nil, err
	}
	return cl, metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+*c.token), nil
}
