// Package flight is lakegate's Arrow Flight SQL server: authentication
// middleware, the Handshake, statement planning through the SQL gate, sealed
// tickets, prepared statements, sessions, discovery and cancellation.
//
// A request flows: interceptor (authenticate the bearer token, every RPC) →
// handler (typed Flight SQL command) → planner (parse, gate, resolve, render)
// → backend (describe, execute). Handlers stay thin; the planner owns the
// decision of what may run. Tables of an upstream catalog (upstream.go) are
// planned in their engine's dialect and run through flight/backend/upstream;
// their engine's tickets and locations never leave the gateway. Row filters
// and column masks the catalog returns are applied by the gate wherever a
// table is read (tables.go, preparePolicy). Admission (admission.go) bounds
// per tenant the statements running and, on separate permits, those being
// planned or listed; a panic while serving a request fails that request alone
// (recover.go). A prepared query is opened on the engine when its parameters
// are bound (speculate.go), and streamed by its DoGet only if that DoGet's
// own authorization gives the same plan.
//
// The package must never: send client SQL text to a backend (only SQL printed by
// authz/sqlgate), tell a denied table apart from a missing one, hand out an
// unsealed ticket, stream a result its DoGet did not authorize, or log a
// token, a ticket or SQL text.
package flight
