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

// errUsage marks errors caused by the command line; main exits with 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	ctx, cancel := context.WithCancel(ctx)
	// Ctrl-C cancels the command, unless the interactive shell routes it
	// to the statement it runs (interrupts).
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	go func() {
		for range sigint {
			interrupts.fire(cancel)
		}
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigint)
	cancel()
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

// run dispatches a command line; it is main without the process exits, so
// tests can call it. A command asked for its help returns *helpRequest,
// printed here on stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	var h *helpRequest
	if errors.As(err, &h) {
		_, err = io.WriteString(stdout, h.text)
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	case "cert":
		return runCert(args[1:], stdout)
	case "token":
		if len(args) > 1 && (args[1] == "-h" || args[1] == "--help" || args[1] == "-help") {
			return &helpRequest{text: commandHelp(newFlagSet("token new"))}
		}
		if len(args) < 2 || args[1] != "new" {
			return fmt.Errorf("%w: token needs the subcommand \"new\" (see \"lakegate token new --help\")", errUsage)
		}
		return runTokenNew(args[2:], stdout)
	case "version", "--version", "-version":
		text, err := runVersion(args[1:])
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, text)
		return err
	case "help":
		if len(args) > 1 {
			return dispatch(ctx, append(args[1:], "--help"), stdout, stderr)
		}
		return &helpRequest{text: usage}
	case "-h", "--help", "-help":
		return &helpRequest{text: usage}
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
}
