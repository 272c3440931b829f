// Command standin runs the SigV4-checking S3 stand-in (see package
// lakegate/localstack/standin) until interrupted:
//
//	standin -addr 127.0.0.1:4566 -bucket lakegate
//
// Point clients at it with AWS_ENDPOINT_URL=http://127.0.0.1:4566,
// AWS_ACCESS_KEY_ID=test, AWS_SECRET_ACCESS_KEY=test, AWS_REGION=us-east-1
// and path-style addressing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"lakegate/localstack/standin"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4566", "listen address")
	buckets := flag.String("bucket", "lakegate", "comma-separated buckets to create")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := standin.Start(ctx, standin.Config{Addr: *addr, Buckets: strings.Split(*buckets, ",")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("standin: serving S3 on", srv.URL())
	<-ctx.Done()
	_ = srv.Close()
}
