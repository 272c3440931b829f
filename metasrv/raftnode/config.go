package raftnode

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Config configures a Node. Build one with DefaultConfig and override fields;
// New calls Validate. For every field the zero value has a documented meaning,
// and no zero value weakens security.
type Config struct {
	// NodeID is this server's stable identity in the cluster. It must be
	// unique across all time and must not change across restarts. Required.
	NodeID string

	// DataDir holds the Raft log and stable store (raft.db, or wal/ with
	// LogStoreWAL) and the snapshot directory (snapshots/). It is created if
	// missing. Required.
	DataDir string

	// LogStore is how the Raft log and stable store are kept on disk:
	// LogStoreBolt (raft.db, hashicorp/raft-boltdb: a bbolt B-tree, two
	// fdatasyncs per write) or LogStoreWAL (wal/, hashicorp/raft-wal:
	// append-only segment files, one fsync per write). A DataDir holding
	// the other kind is refused. Empty means LogStoreBolt.
	LogStore string

	// RaftAddr is the host:port the Raft transport listens on and advertises
	// to peers. The host must be an address peers can dial (not 0.0.0.0);
	// port 0 picks a free port, readable afterwards from Node.RaftAddr.
	// Required.
	RaftAddr string

	// HTTPAddr is the host:port of this node's HTTP API as peers should dial
	// it. It is replicated in the membership record so that followers can
	// forward writes and joins to the leader. Empty means this node cannot be
	// forwarded to; it can still serve and forward elsewhere.
	HTTPAddr string

	// Bootstrap makes this node form a new single-voter cluster when its
	// DataDir holds no Raft state. It is ignored when state exists, so it is
	// safe to leave set across restarts. Exactly one node of a new cluster
	// bootstraps; the others join.
	Bootstrap bool

	// TLS, when set, runs the Raft transport over mutual TLS: the listener
	// requires and verifies a client certificate against TLS.ClientCAs, and
	// outgoing connections present TLS.Certificates and verify the peer
	// against TLS.RootCAs. ClientAuth is forced to RequireAndVerifyClientCert
	// and MinVersion to at least TLS 1.2. Nil means plain TCP, for tests and
	// single-host deployments only.
	TLS *tls.Config
	// HandshakeTimeout bounds the TLS handshake of a connection the
	// transport accepts; one that has not completed it by then is closed.
	// Zero means 10s. Without TLS it has no effect.
	HandshakeTimeout time.Duration

	// Network, when set, carries the Raft transport over this in-process
	// MemNetwork instead of TCP: for tests whose subject is not the
	// network, so that they need no sockets or ports. RaftAddr is then an
	// address of the MemNetwork's own. It carries no TLS: Validate refuses
	// it together with TLS. Nil means TCP; no flag or file selects it.
	Network *MemNetwork

	// Logger receives Node and Raft logs, scoped with the node id. Nil
	// discards them.
	Logger *slog.Logger

	// HeartbeatTimeout is how long a follower waits without contact from the
	// leader before it starts an election. Zero means 1s.
	HeartbeatTimeout time.Duration

	// ElectionTimeout is how long a candidate waits before retrying an
	// election. Zero means HeartbeatTimeout.
	ElectionTimeout time.Duration

	// LeaderLeaseTimeout is how long a leader keeps leading without reaching
	// a quorum. Zero means HeartbeatTimeout/2.
	LeaderLeaseTimeout time.Duration

	// CommitTimeout bounds how long the leader waits before sending an
	// AppendEntries carrying a new commit index. Zero means 5ms.
	CommitTimeout time.Duration

	// DefaultTimeout bounds Propose, WaitApplied, Barrier and membership
	// changes whose context carries no deadline, and is the I/O timeout of
	// the Raft transport. Zero means 10s.
	DefaultTimeout time.Duration

	// MaxAppendEntries is the most log entries sent in one AppendEntries
	// RPC, and the size of the apply batch: concurrent proposals are
	// committed together up to this many per disk write. Zero means 256;
	// the maximum is 1024.
	MaxAppendEntries int

	// SnapshotThreshold is how many log entries must accumulate since the
	// last snapshot before the next one is taken. Zero means 8192.
	SnapshotThreshold uint64

	// SnapshotInterval is how often the threshold is checked (randomly
	// staggered up to twice this). Zero means 2m.
	SnapshotInterval time.Duration

	// TrailingLogs is how many log entries are kept after a snapshot so
	// slightly lagging followers catch up from the log instead of a full
	// snapshot. Zero means 10240.
	TrailingLogs uint64

	// SnapshotRetain is how many snapshots are kept on disk. Zero means 2.
	SnapshotRetain int

	// ObserveLogWrite, when set, is called after every write of log
	// entries to the log store, with the number of entries and how long
	// the write took. Each write is one bbolt transaction with its two
	// fdatasyncs (LogStoreBolt) or one append and fsync (LogStoreWAL),
	// on the leader before it replicates and on a follower
	// before it acknowledges, so every commit waits for two of them in
	// turn: the disk's sync latency is a floor under write latency. It
	// runs on Raft's own goroutines and must return quickly. Nil means
	// not observed.
	ObserveLogWrite func(entries int, d time.Duration)
}

// Log store kinds (Config.LogStore).
const (
	LogStoreBolt = "bolt"
	LogStoreWAL  = "wal"
)

// DefaultConfig returns a Config with every timeout and size at its default
// (the same values the zero fields mean). Identity and addresses are empty.
func DefaultConfig() Config {
	return Config{
		HeartbeatTimeout:   time.Second,
		ElectionTimeout:    time.Second,
		LeaderLeaseTimeout: 500 * time.Millisecond,
		CommitTimeout:      5 * time.Millisecond,
		DefaultTimeout:     10 * time.Second,
		HandshakeTimeout:   10 * time.Second,
		MaxAppendEntries:   256,
		SnapshotThreshold:  8192,
		SnapshotInterval:   2 * time.Minute,
		TrailingLogs:       10240,
		SnapshotRetain:     2,
		LogStore:           LogStoreBolt,
	}
}

// withDefaults fills zero fields with their documented meaning.
func (c Config) withDefaults() Config {
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = time.Second
	}
	if c.ElectionTimeout == 0 {
		c.ElectionTimeout = c.HeartbeatTimeout
	}
	if c.LeaderLeaseTimeout == 0 {
		c.LeaderLeaseTimeout = c.HeartbeatTimeout / 2
	}
	if c.CommitTimeout == 0 {
		c.CommitTimeout = 5 * time.Millisecond
	}
	if c.DefaultTimeout == 0 {
		c.DefaultTimeout = 10 * time.Second
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.MaxAppendEntries == 0 {
		c.MaxAppendEntries = 256
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = 2 * time.Minute
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.SnapshotRetain == 0 {
		c.SnapshotRetain = 2
	}
	if c.LogStore == "" {
		c.LogStore = LogStoreBolt
	}
	return c
}

// Validate checks the fields against each other, after applying the zero
// defaults, and reports the offending values.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.NodeID == "" {
		errs = append(errs, errors.New("NodeID is empty"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("DataDir is empty"))
	}
	if host, _, err := net.SplitHostPort(c.RaftAddr); err != nil {
		errs = append(errs, fmt.Errorf("RaftAddr %q: %v", c.RaftAddr, err))
	} else if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		errs = append(errs, fmt.Errorf("RaftAddr %q: host must be an address peers can dial", c.RaftAddr))
	}
	if c.HTTPAddr != "" {
		if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
			errs = append(errs, fmt.Errorf("HTTPAddr %q: %v", c.HTTPAddr, err))
		}
	}
	if c.TLS != nil {
		if len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil {
			errs = append(errs, errors.New("TLS: no certificate (Certificates or GetCertificate)"))
		}
		if c.TLS.ClientCAs == nil {
			errs = append(errs, errors.New("TLS: ClientCAs is nil; peers' client certificates cannot be verified"))
		}
		if c.TLS.RootCAs == nil {
			errs = append(errs, errors.New("TLS: RootCAs is nil; refusing to verify peers against the system roots"))
		}
		if c.TLS.InsecureSkipVerify {
			errs = append(errs, errors.New("TLS: InsecureSkipVerify is set"))
		}
	}
	if c.Network != nil && c.TLS != nil {
		errs = append(errs, errors.New("TLS and Network are both set: the in-memory network carries no TLS"))
	}
	if c.HeartbeatTimeout < 5*time.Millisecond {
		errs = append(errs, fmt.Errorf("HeartbeatTimeout %s is below 5ms", c.HeartbeatTimeout))
	}
	if c.ElectionTimeout < c.HeartbeatTimeout {
		errs = append(errs, fmt.Errorf("ElectionTimeout %s is below HeartbeatTimeout %s", c.ElectionTimeout, c.HeartbeatTimeout))
	}
	if c.LeaderLeaseTimeout < 5*time.Millisecond || c.LeaderLeaseTimeout > c.HeartbeatTimeout {
		errs = append(errs, fmt.Errorf("LeaderLeaseTimeout %s must be within [5ms, HeartbeatTimeout %s]", c.LeaderLeaseTimeout, c.HeartbeatTimeout))
	}
	if c.CommitTimeout < time.Millisecond {
		errs = append(errs, fmt.Errorf("CommitTimeout %s is below 1ms", c.CommitTimeout))
	}
	if c.DefaultTimeout < 0 {
		errs = append(errs, fmt.Errorf("DefaultTimeout %s is negative", c.DefaultTimeout))
	}
	if c.HandshakeTimeout < 0 {
		errs = append(errs, fmt.Errorf("HandshakeTimeout %s is negative", c.HandshakeTimeout))
	}
	if c.MaxAppendEntries < 1 || c.MaxAppendEntries > 1024 {
		errs = append(errs, fmt.Errorf("MaxAppendEntries %d must be within [1, 1024]", c.MaxAppendEntries))
	}
	if c.SnapshotInterval < 5*time.Millisecond {
		errs = append(errs, fmt.Errorf("SnapshotInterval %s is below 5ms", c.SnapshotInterval))
	}
	if c.LogStore != LogStoreBolt && c.LogStore != LogStoreWAL {
		errs = append(errs, fmt.Errorf("LogStore %q is neither %q nor %q", c.LogStore, LogStoreBolt, LogStoreWAL))
	}
	if c.SnapshotRetain < 1 {
		errs = append(errs, fmt.Errorf("SnapshotRetain %d is below 1", c.SnapshotRetain))
	}
	if len(errs) > 0 {
		return fmt.Errorf("raftnode: invalid config: %w", errors.Join(errs...))
	}
	return nil
}
