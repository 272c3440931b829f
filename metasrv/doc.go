// Package metasrv is lakegate's Raft-replicated metadata service: the
// authority for governance state (one catalog.Snapshot per metalake), served
// over a REST API shaped like Apache Gravitino's.
//
// Usage:
//
//	cfg := metasrv.DefaultConfig()
//	cfg.NodeID, cfg.DataDir, cfg.RaftAddr, cfg.HTTPAddr = "n1", dir, "10.0.0.1:8817", "10.0.0.1:8816"
//	cfg.Principals, cfg.PeerToken = principalMap, peerToken
//	cfg.Bootstrap = true // first node; the others call srv.Join(ctx, anyMemberHTTPAddr)
//	srv, err := metasrv.New(ctx, cfg)
//	go srv.Serve(listener) // REST under /api/metalakes/{tenant}/…, cluster under /cluster/
//	defer srv.Shutdown(ctx)
//
// The pieces: FSM is the raftnode.StateMachine (metalakes behind one atomic
// pointer; Proposals carry catalog commands stamped by the leader with actor
// and time, applied all or nothing; metalake create/alter/drop need a
// leader-verified operator). AuditLog records every applied and rejected
// command's events to an append-only JSON-lines file and a bounded ring
// served by GET /events. Server authenticates with the principal map,
// confines tenant principals to their own metalake (404 otherwise), maps
// errors to Gravitino codes in one function (mapError), forwards writes from
// followers to the leader as its metadata_peer identity with the original
// caller in api.CallerHeader (the leader re-authorizes; non-peers sending
// forwarding headers are rejected and audited), and serves reads from the
// local snapshot, optionally after minGeneration (per-metalake generation,
// bounded wait) or consistent=true (raftnode Barrier on the leader).
//
// Every response about a metalake carries api.GenerationHeader (the metalake's
// catalog generation) and api.IndexHeader (the Raft index).
//
// Delegation (delegation.go): a query_service sends api.DelegateTenantHeader
// and api.DelegateUserHeader to act for a user of a tenant in its
// delegate_tenants; the request is then authorized as that user. Any other
// use of the headers, and a query_service addressing a metalake without
// them, is rejected (403) and audited.
//
// The internal API for gateways (internal.go, under /internal/v1, for
// query_service delegates only): POST …/metalakes/{m}/resolve decides a
// batch of table references for one user against one snapshot, answering a
// descriptor (columns, storage id, table version, data files, row filter,
// masks), {"unavailable":true} (missing and forbidden alike) or a conflict
// per reference; POST …/metalakes/{m}/tables lists what a user may see;
// GET …/metalakes/{m}/files lists the files retained versions reference
// (for the orphan collector); GET …/metalakes/{m}/generation is the cheap
// generation probe. A node out of contact with the leader for longer than
// Config.StaleReadBound answers these with 503, so gateways fail over
// instead of deciding from stale state. Gateways write (tables, versions)
// through the REST API with delegation. The access log (accesslog.go):
// POST …/metalakes/{m}/access-log commits a gateway's access-log files, as
// the gateway itself, as the next version of <catalog>.system.access_events
// (one catalog.CommitAccessLog, applied as the metalake's owner with the
// gateway as delegator; forwarded to the leader like a write), GET reads
// its storage id; every other write into a schema named system is refused
// by name. The Go client is metasrv/client.
//
// Users signed in by JWT (principals.go): on a JWT user's calls, and on a
// gateway's calls for one that carry its token, metasrv verifies the token
// itself and makes the metalake's catalog agree with it — one
// catalog.SyncIdentityUser, credited to the user with delegator
// "oidc-token", proposed with Proposal.Identity, which no REST request
// sets. A follower forwards the token to the leader, which verifies it
// again and syncs, and answers once it has applied the leader's state.
//
// Table versions (versions.go) and domains (rest_domains.go) are REST
// resources over the catalog's commands like every other.
//
// Writes on the leader go through a batcher (batch.go): concurrent
// proposals are coalesced into one Raft entry (Config.MaxBatchProposals,
// MaxBatchBytes, BatchPipeline), which the FSM applies proposal by
// proposal — each validated against the state the previous ones left, with
// its own result and audit events — publishing the state once. A proposal
// carries its delegating service (Proposal.Delegator) into the audit
// events. A request whose path is a route's under another method gets 405
// / 1006 with an Allow header.
//
// The wire contract (header names, the error envelope and its codes, the
// REST objects and write bodies, the internal API's requests and
// responses) is declared once in metasrv/api; the names here
// (ResolveRequest, TableDescriptor, …) are its aliases. REST handlers are
// named methods (of Server, objectLevel for catalogs, schemas and tables,
// principalKind for users and groups), registered by the *Routes
// functions.
//
// Metrics: Server.MetricsHandler (metrics.go). Every endpoint is
// documented in docs/rest.md; throughput and latency in
// docs/performance.md.
package metasrv
