// Package gateway assembles a lakegate Flight SQL gateway from a Config:
// the locked-down engine (flight/backend/duckdb) over the tenants' stage
// (flight/tablefiles), the catalog over metasrv (metasrv/client,
// flight/metacatalog), the upstream engines, the sealed tickets and the
// admission bounds of the Flight server (flight.New), and the loops that
// run beside it: the decision watch, the engine sweeper (idle tenant
// instances and table copies given back), orphan collection (table files
// no retained version references) and the wait for metasrv that makes the
// gateway ready. `lakegate serve`, `lakegate gateway` and the benchmarks
// build their gateway here, so they run the same assembly.
//
// Lifecycle: New builds everything and starts the watch and the sweeper;
// Serve serves Flight SQL on a listener and starts orphan collection and
// the readiness wait; Shutdown drains the Flight server within its
// context, stops every loop and closes what New opened, in reverse order.
// A New that fails leaves nothing running and nothing open.
//
// It owns no decision: who may read or write what is decided by metasrv
// and the Flight server, never here. It must never open a listener the
// caller did not hand it, read flags, environment or files beyond the
// stage and its own scratch directory, log a token, treat a tenant whose
// metalake metasrv does not know as having no referenced files (that would
// delete its tables' data), or report ready before metasrv has answered
// the gateway when Config.WaitMetasrv is set.
package gateway
