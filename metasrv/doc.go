// Package metasrv is lakegate's Raft-replicated metadata service: the
// authority for governance state (the catalog), served over a REST API shaped
// like Apache Gravitino's.
//
// The package is being built. Today it holds only the replication core,
// metasrv/raftnode (a hashicorp/raft node with durable stores, a mutual-TLS
// transport, read barriers, membership handlers and write forwarding). The
// catalog state machine, the REST API, delegation, audit events and the Go
// client (metasrv/client) land here next, as described in issue 4 and the
// "metasrv" section of the design.
package metasrv
