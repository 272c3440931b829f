// Package raftnode is metasrv's replication core: one hashicorp/raft voter
// that replicates a caller-supplied StateMachine, with durable log and
// stable stores (raft-boltdb, or raft-wal's segment files: Config.LogStore),
// file snapshots, and a TCP transport that runs over mutual TLS when
// configured. Tests whose subject is not the network run the transport over
// an in-process MemNetwork instead (Config.Network): no sockets, no ports,
// no TLS; nothing but a program that builds a Config selects it.
//
// Usage:
//
//	cfg := raftnode.DefaultConfig()
//	cfg.NodeID, cfg.DataDir, cfg.RaftAddr, cfg.HTTPAddr = "n1", dir, "10.0.0.1:8817", "10.0.0.1:8816"
//	cfg.Bootstrap = true // first node only; ignored once state exists
//	n, err := raftnode.New(ctx, cfg, sm)
//	defer n.Shutdown(ctx)
//	result, index, err := n.Propose(ctx, cmd) // leader only, else *NotLeaderError
//	err = n.WaitApplied(ctx, minGeneration)   // read-your-writes on any node
//	err = n.Barrier(ctx)                      // linearizable read on the leader
//
// The caller's obligations:
//
//   - StateMachine.Apply is deterministic (no clocks, randomness or I/O);
//     stamp time and actor into the command before proposing. Snapshot is
//     O(1) (capture an immutable pointer); Persist does the I/O; Restore
//     discards prior state.
//   - Writes reaching a follower are the caller's to forward: Propose
//     returns a *NotLeaderError naming the leader (and its HTTP address), and
//     Forwarder sends the request to the leader's HTTP API with the headers
//     the caller chooses. The leader must re-authorize what it receives.
//   - Mount Handlers (JoinHandler, StatusHandler, ProposeHandler) on the
//     node's HTTP server and supply Authorize: these handlers authenticate
//     nobody themselves.
//
// Membership records: besides the user's commands the log carries small
// records id → {raftAddr, httpAddr}, distinguished by a one-byte envelope
// tag that the StateMachine never sees, and saved in snapshots ahead of the
// user state. A joining node's record is written by the leader that adds it
// (JoinHandler, Node.Join); each new leader writes its own at the start of
// its term. That is how followers learn where to forward, and the leader's
// own committed entry is what Barrier waits for before trusting its commit
// index.
//
// Generations: Propose returns the log index a command was applied at;
// AppliedIndex reports how far this node has applied. Both are the
// "generation" metasrv attaches to responses; WaitApplied takes one.
//
// The package never interprets commands, authenticates or authorizes
// requests, maps errors to Gravitino codes, writes audit events or exports
// metrics: those belong to metasrv. It never transfers leadership on
// Shutdown; the remaining voters elect a new leader after HeartbeatTimeout.
// A Node is safe for concurrent use.
package raftnode
