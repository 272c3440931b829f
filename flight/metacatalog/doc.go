// Package metacatalog implements the gateway's backend.Catalog over
// metasrv: every resolve, listing and commit is made by the gateway's
// query_service identity on behalf of the end user (delegation), so metasrv
// decides with that user's roles, grants, tags and policies.
//
// It remembers, per tenant, the highest governance generation its own
// writes produced and asks metasrv for at least that generation on later
// reads, so a gateway always reads its own writes even across metasrv
// nodes.
//
// It must never decide authorization itself, cache a decision beyond the
// call that made it, or widen an "unavailable" answer into anything that
// tells a missing table from a forbidden one.
package metacatalog
