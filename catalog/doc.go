// Package catalog is lakegate's governance core: the pure, deterministic
// state machine of one metalake (tenant) — catalogs, schemas, tables and
// columns; users, groups, roles, grants (ALLOW/DENY) and owners; tags with
// values; policies attached to tags; domains backed by tags — and every
// decision derived from it (Authorize, Visible, FilterVisible,
// RowFiltersAndMasks, EffectiveTags, PoliciesOf, DomainMembers, DomainsOf). The semantics follow Apache Gravitino's access-control, tag,
// tag-value and policy-on-tag designs.
//
// # Usage
//
// One *Snapshot per metalake. Create it with New, then feed it commands:
//
//	s, _ := catalog.New("acme", "alice", created)
//	s, events, err := catalog.Apply(s, catalog.CreateCatalog{Name: "lake"},
//		catalog.Meta{Actor: "alice", Time: leaderTime, Index: raftIndex})
//
// Apply validates the command against the snapshot, checks that the actor may
// run it (Permit; each command documents its rule) and returns a new snapshot
// with Generation()+1 sharing structure with the old one (an update copies
// O(log n) nodes). A rejected command returns the same snapshot, one Failure
// event and an *Error wrapping a sentinel (ErrNotFound, ErrForbidden, …).
//
// Decisions take a snapshot and a principal, the user's name in the metalake:
//
//	d := s.Authorize("bob", catalog.PrivSelectTable, catalog.Table("lake.sales.orders"))
//	visible := s.FilterVisible("bob", tables)
//	filter, masks, err := s.RowFiltersAndMasks("bob", "lake.sales.orders")
//
// Explain answers why: it decides like Authorize, by the same code (the
// decision functions take a tracer that Authorize passes as nil), and
// returns the chain that decided — the user's roles, the owners and the
// grants along the object's chain, the effective tags with the
// system_access_control policies they select, the winning rule, and for a
// read the row filter and masks. ViewExplain is its form for a user
// explaining itself (what it may not see is missing). Preview answers what
// commands would change before they are applied: it applies them to a
// discarded copy and compares the decisions of the users and objects they
// may affect (Diff).
//
// Tables hold data: each has a storage id (its directory "tables/<id>/" in
// the tenant's stage) and a sequence of committed versions, each a schema
// plus a list of immutable Parquet files (DataFile). CreateTable may start a
// table at version 1; CommitTableVersion appends or replaces files with
// optimistic concurrency (ErrVersionConflict when its base is stale). A
// table keeps its current version and RetainedVersions older ones;
// TableVersion and TableVersions read them and ReferencedFiles lists every
// file a garbage collector must keep.
//
// The access log: every catalog may hold the schema "system" (a name no
// other command may use) with the table "access_events", which only
// CommitAccessLog creates and appends to, as the metalake's owner; every
// other write into the schema is refused by name (WritesSystemSchema),
// while owners, grants and tags govern it like any table.
//
// Rules change over time, logs do not: a snapshot carries the rule level
// Apply enforces on it (Snapshot.Rules), raised only by the logged command
// SetRules, so a log replays to the state it produced when it was written.
// At RulesColumnGovernance a column's governance cannot be shed by changing
// the table's columns, and storage ids are minted and never repeat (see
// that constant).
//
// Domains (see CreateDomain) group tables under a business name: a domain
// is backed by a tag and its members are computed from the snapshot, never
// stored — the tables whose effective tags match the binding, directly or
// inherited from a tagged catalog or schema, plus, for a top-level domain,
// those of its visible subdomains. ViewDomains, ViewDomain, ViewSubdomains,
// DomainMembers and DomainsOf answer for a principal (DRAFT domains are seen
// only by their stewards); CheckDomainInvariants checks the hierarchy rules
// C1–C6 that Apply enforces.
//
// Users signed in with an identity provider: SyncIdentityUser creates such
// a user and makes its memberships among the metalake's groups those of
// its token's groups claim. It needs no privilege but runs only under a
// Meta with IdentityToken set and the user as Actor (the caller verified
// the token), and nothing else runs under such a Meta; IdentitySync builds
// it and says whether it would change anything.
//
// Commands serialize with EncodeCommand/DecodeCommand (a versioned JSON
// envelope with explicit, append-only type numbers) and snapshots with
// MarshalBinary/UnmarshalSnapshot (deterministic bytes, lossless).
//
// # Caller's obligations
//
//   - Apply commands in log order and supply Meta: the actor, the
//     leader-assigned time and the log index. Never pass time.Now() from a
//     follower: the time is part of the state.
//   - Keep the current snapshot behind an atomic pointer; a request loads it
//     once and decides everything against that one snapshot.
//   - Set Meta.IdentityToken only for a SyncIdentityUser built from an
//     identity provider's token verified for Meta.Actor, never from what a
//     client sends.
//   - Run CheckEntry on every command a client sends before proposing it:
//     it holds the rules Apply leaves out so that logged commands replay
//     unchanged (who may make a role's initial grants, which privileges a
//     tag policy may confer).
//   - Answer for an object that is not Visible exactly as for a missing one.
//   - Treat an error from RowFiltersAndMasks as a refusal (fail closed).
//   - Snapshot reads without a principal (Object, Tag, Role, …) do not check
//     visibility; use the View* reads or Visible when serving a caller.
//
// # What this package never does
//
// No I/O, no clocks, no randomness, no goroutines, no package-level mutable
// state, no panics on input. Map iteration never affects results: listings
// and serialized forms are sorted. It imports only the standard library (and
// its own internal persistent map), never authz, raft or wire packages.
//
// All exported types are immutable values or safe for concurrent use: a
// *Snapshot is never modified after Apply returns it.
package catalog
