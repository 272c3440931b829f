// Package flight is lakegate's Arrow Flight SQL server: authentication
// middleware, the Handshake, statement planning through the SQL gate, sealed
// tickets, prepared statements, sessions, discovery and cancellation.
//
// A request flows: interceptor (authenticate the bearer token, every RPC) →
// handler (typed Flight SQL command) → planner (parse, gate, resolve, bind,
// render, describe) → backend (execute). The Server's handlers stay thin:
// they read the caller's session, take admission permits, seal and open
// tickets and stream results. The planner (planner.go and planner_*.go)
// owns the decision of what may run: it turns statement text into an
// authorized plan (Plan), authorizes a prepared plan again for each
// execution (Refresh) and a ticket's pinned versions at its DoGet
// (Reauthorize), binds pinned versions on the engine before they run
// (Bind), and answers the catalog view of discovery and SHOW (Visible,
// Show). Tables of an upstream catalog are planned in their engine's
// dialect (planner_upstream.go) and run through flight/backend/upstream
// (upstream.go); their engine's tickets and locations never leave the
// gateway. Row filters and column masks the catalog returns are applied by
// the gate wherever a table is read (planner_tables.go, preparePolicy).
// Admission (admission.go) bounds per tenant the statements running and, on
// separate permits, those being planned or listed; a panic while serving a
// request fails that request alone (recover.go). A prepared query is opened
// on the engine when its parameters are bound (speculate.go), and streamed
// by its DoGet only if that DoGet's own authorization gives the same plan;
// a refresh that gives another plan (a new version, another policy) makes
// it the one later executions start from (prepared.current).
// Every statement and discovery call that reaches authorization produces
// one access event for Config.AccessLog, and no write reaches schema
// system (access.go).
//
// The package must never: send client SQL text to a backend (only SQL printed by
// authz/sqlgate), tell a denied table apart from a missing one, hand out an
// unsealed ticket, stream a result its DoGet did not authorize, or log a
// token, a ticket or SQL text.
package flight
