// Package metacatalog implements the gateway's backend.Governance over
// metasrv: every resolve, listing and commit is made by the gateway's
// query_service identity on behalf of the end user (delegation), so metasrv
// decides with that user's roles, grants, tags and policies.
//
// It remembers, per tenant, the highest governance generation its own
// writes produced and asks metasrv for at least that generation on later
// reads, so a gateway always reads its own writes even across metasrv
// nodes.
//
// With a decision window (Options.DecisionWindow) it reuses metasrv's
// answer to a resolve request, or a listing, only while the tenant's
// generation is confirmed unchanged: by a watch on metasrv (Catalog.Watch), which
// reports a change within a round trip and, if it stops answering, stops
// all reuse within the window; or by an in-process authority
// (Options.Generations) checked at every use. A missing and a forbidden
// table are cached alike, so they still cost the same.
//
// It must never decide authorization itself, reuse an answer of another
// generation than the one metasrv confirms, or widen an "unavailable"
// answer into anything that tells a missing table from a forbidden one.
package metacatalog
