package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// errUsage marks errors caused by the command line; main exits with 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		printError(os.Stderr, err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// printError prints err for the terminal: its text may hold what others
// wrote (an engine error quotes the value it could not convert), so each
// line goes through printable.
func printError(w io.Writer, err error) {
	lines := strings.Split(err.Error(), "\n")
	for i := range lines {
		lines[i] = printable(lines[i])
	}
	fmt.Fprintln(w, "lakegate:", strings.Join(lines, "\n"))
}

const usage = `usage: lakegate <command> [flags]

commands:
  serve      run the all-in-one gateway (embedded engine, demo tenant)
  gateway    run a stateless Flight SQL gateway replica against a metasrv cluster
  metasrv    run a metadata service node (Raft-replicated catalog, REST API)
  sql        run a query against a gateway and print the result
  ingest     load a local Parquet or CSV file into a table (Flight SQL bulk ingest)
  admin      manage metasrv over its REST API (cluster, metalakes, tags, grants, …)
  mcp        serve MCP tools over metasrv's REST API for agents (stdio or streamable HTTP)
  token new  print a new bearer token and its principal-map hash line
  version    print the version

Run "lakegate <command> -h" for a command's flags.
`

// run dispatches a command line; it is main without the process exits, so
// tests can call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("%w: no command", errUsage)
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "gateway":
		return runGateway(ctx, args[1:], stdout, stderr)
	case "metasrv":
		return runMetasrv(ctx, args[1:], stdout, stderr)
	case "sql":
		return runSQL(ctx, args[1:], stdout, stderr)
	case "ingest":
		return runIngest(ctx, args[1:], stdout, stderr)
	case "admin":
		return runAdmin(ctx, args[1:], stdout, stderr)
	case "mcp":
		return runMCP(ctx, args[1:], stdout, stderr)
	case "token":
		if len(args) < 2 || args[1] != "new" {
			return fmt.Errorf("%w: token needs the subcommand \"new\"", errUsage)
		}
		return runTokenNew(args[2:], stdout)
	case "version":
		fmt.Fprintln(stdout, "lakegate", version)
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}
