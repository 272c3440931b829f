// Package upstream is the client side of forwarding: it runs SQL that the
// gateway printed itself on an upstream Arrow Flight SQL engine, with the
// gateway's own credentials, and streams the results back as one Arrow reader.
//
// Usage:
//
//	pool := upstream.New(upstream.Config{
//		Allow:          []string{"engine.internal:32010"},
//		CredentialsDir: "/etc/lakegate/upstream",
//	})
//	defer pool.Close()
//	t := upstream.Target{Address: "engine.internal:32010", TLS: true, Credentials: "engine-token"}
//	schema, err := pool.Schema(ctx, t, sqlPrintedByTheGate)
//	rr, err := pool.Execute(ctx, t, sqlPrintedByTheGate)
//	defer rr.Release()
//
// # What it owns
//
// A Pool keeps one gRPC connection per (address, TLS) pair and lets gRPC
// reconnect it; a connection that reported the engine unavailable is dropped
// and the next call opens a fresh one, so an engine that goes down and comes
// back on the same address is used again without recreating the Pool.
//
// Execute asks the engine for a FlightInfo and reads every endpoint's stream,
// in order, through one array.RecordReader. An endpoint without a location, or
// with the reuse-connection location, is read on the same connection; any
// other location must be grpc://host:port, grpc+tcp://host:port or
// grpc+tls://host:port with host:port in Config.Allow. The engine's tickets
// and locations stay inside the reader: the caller (the gateway, which serves
// DoGet itself) never sees them and must never hand its own clients anything
// the engine returned except schemas and rows.
//
// Every call sends "authorization: Bearer <token>", the token being the
// trimmed content of the Target's credentials file, read through os.Root on
// Config.CredentialsDir at every call (so a rotated file is used by the next
// call). Any metadata on the caller's outgoing context is replaced: nothing of
// the gateway's own client reaches the engine.
//
// # What it must never do
//
//   - connect to an address, or follow an endpoint location, that is not in
//     Config.Allow, or without TLS off loopback unless Config.AllowPlaintext
//     (ErrNotAllowed, decided before any connection);
//   - open a credentials path: a credentials name is a plain file name
//     (ErrInvalidTarget otherwise);
//   - put a token, an address, an endpoint location or the engine's own error
//     text into an error or a log: failures are *Error values whose text is
//     generic and carries at most the gRPC code name;
//   - return upstream tickets or locations to its caller;
//   - let arrow-go parse an engine's schema or streamed message before
//     flight/ipccheck has checked its metadata (ipc.go).
//
// # Errors
//
// Failures of the engine or of the connection are *Error values wrapping a
// backend sentinel: backend.ErrUnavailable (could not connect, gRPC
// Unavailable, a connection that timed out), backend.ErrQuery (the engine
// refused the query or sent something unreadable), backend.ErrResources
// (ResourceExhausted), backend.ErrCanceled and backend.ErrDeadline (the
// caller's context). Configuration and target problems use this package's
// sentinels: ErrNotAllowed, ErrInvalidTarget, ErrCredentials, ErrNoSchema and
// ErrClosed.
//
// # Concurrency
//
// A Pool is safe for use from multiple goroutines. A reader returned by
// Execute is not: one goroutine reads it and releases it. Close aborts the
// calls and readers in flight; it does not wait for readers to be released.
//
// A Target or endpoint location without TLS is used only on a loopback
// address unless Config.AllowPlaintext is set: it would carry the token in
// clear text.
package upstream
