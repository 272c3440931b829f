package raftnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// logCacheSize is how many recent log entries are kept in memory.
const logCacheSize = 1024

// Node is one Raft voter replicating a StateMachine. All methods are safe
// for concurrent use. Create it with New; stop it with Shutdown.
type Node struct {
	cfg   Config
	log   *slog.Logger
	raft  *raft.Raft
	fsm   *fsm
	store logStore
	// probe checks that a would-be voter's address answers on the
	// transport (and, with TLS, that its certificate names it).
	probe func(ctx context.Context, addr, id string) error
	addr  string // advertised Raft address (the bound listener address)

	changed   *signal // applied index, state or leader changed
	leaderSig *signal // leader changed
	// readyTerm is the latest term in which this node, as leader, got an
	// entry of its own committed and applied (its membership announcement).
	// Linearizable reads need it: only then does the commit index cover
	// every entry committed by earlier leaders.
	readyTerm atomic.Uint64

	observer *raft.Observer
	obsCh    chan raft.Observation
	poke     chan struct{} // asks the announcer to announce; buffered by one

	stop     chan struct{}
	wg       sync.WaitGroup
	shutOnce sync.Once
	shutDone chan struct{}
	shutErr  error
}

// New opens (or creates) the node's state in cfg.DataDir, starts the Raft
// transport on cfg.RaftAddr and starts Raft. With cfg.Bootstrap and an empty
// DataDir it forms a single-voter cluster; otherwise it waits to be added by
// a leader (see Join) or recovers its membership from disk. ctx bounds only
// startup.
func New(ctx context.Context, cfg Config, sm StateMachine) (n *Node, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sm == nil {
		return nil, errors.New("raftnode: nil StateMachine")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("raft_node", cfg.NodeID)

	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("raftnode: data dir: %w", err)
	}
	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				_ = closers[i]()
			}
		}
	}()

	hl := newHCLog(logger)
	store, err := openLogStore(cfg, hl)
	if err != nil {
		return nil, err
	}
	closers = append(closers, store.Close)

	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.DataDir, cfg.SnapshotRetain, hl.Named("snapshot"))
	if err != nil {
		return nil, fmt.Errorf("raftnode: snapshot store: %w", err)
	}

	trans, probe, err := newTransport(cfg, hl)
	if err != nil {
		return nil, err
	}
	closers = append(closers, trans.Close)

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.CommitTimeout = cfg.CommitTimeout
	rc.MaxAppendEntries = cfg.MaxAppendEntries
	// BatchApplyCh stays off: with a buffered apply channel, futures still
	// queued at shutdown are never answered and their callers would hang.
	// Concurrent proposals are batched anyway: the leader drains every
	// waiting sender, up to MaxAppendEntries, into one disk write.
	rc.BatchApplyCh = false
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.SnapshotInterval = cfg.SnapshotInterval
	rc.TrailingLogs = cfg.TrailingLogs
	rc.NoLegacyTelemetry = true
	rc.Logger = hl.Named("raft")
	if err := raft.ValidateConfig(rc); err != nil {
		return nil, fmt.Errorf("raftnode: %w", err)
	}

	addr := string(trans.LocalAddr())
	if cfg.Bootstrap {
		has, err := raft.HasExistingState(store, store, snaps)
		if err != nil {
			return nil, fmt.Errorf("raftnode: inspect state: %w", err)
		}
		if !has {
			boot := raft.Configuration{Servers: []raft.Server{{
				Suffrage: raft.Voter, ID: rc.LocalID, Address: raft.ServerAddress(addr),
			}}}
			if err := raft.BootstrapCluster(rc, store, store, snaps, trans, boot); err != nil {
				return nil, fmt.Errorf("raftnode: bootstrap: %w", err)
			}
		}
	}

	n = &Node{
		cfg:       cfg,
		log:       logger,
		store:     store,
		probe:     probe,
		addr:      addr,
		changed:   newSignal(),
		leaderSig: newSignal(),
		obsCh:     make(chan raft.Observation, 64),
		poke:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		shutDone:  make(chan struct{}),
	}
	n.fsm = newFSM(sm, n.changed)
	// The cache serves recent entries to replication without reading them
	// back from the store.
	var logStore raft.LogStore = store
	if cfg.ObserveLogWrite != nil {
		logStore = timedLogStore{store, cfg.ObserveLogWrite}
	}
	logs, err := raft.NewLogCache(logCacheSize, logStore)
	if err != nil {
		return nil, fmt.Errorf("raftnode: log cache: %w", err)
	}
	r, err := raft.NewRaft(rc, n.fsm, logs, store, snaps, trans)
	if err != nil {
		return nil, fmt.Errorf("raftnode: start raft: %w", err)
	}
	n.raft = r
	// Non-blocking: a dropped observation is harmless because the watcher
	// re-reads raft's state on every observation it does receive, and drops
	// only happen while undelivered observations are queued.
	n.observer = raft.NewObserver(n.obsCh, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.LeaderObservation, raft.RaftState:
			return true
		}
		return false
	})
	r.RegisterObserver(n.observer)
	n.wg.Add(2)
	go n.watch()
	go n.announce()
	n.poke <- struct{}{} // in case leadership was won before the observer was registered
	return n, nil
}

// ID returns the node's id.
func (n *Node) ID() string { return n.cfg.NodeID }

// RaftAddr returns the advertised Raft address (with the real port when the
// configured port was 0).
func (n *Node) RaftAddr() string { return n.addr }

// IsLeader reports whether this node currently believes it is the leader.
// Use Barrier before serving a read that must not be stale.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// InContact reports whether the node's state can be trusted to be recent:
// it leads (a leader that loses its quorum steps down within the lease
// timeout), or it follows a known leader it heard from within bound.
func (n *Node) InContact(bound time.Duration) bool {
	switch n.raft.State() {
	case raft.Leader:
		return true
	case raft.Follower:
		if _, ok := n.Leader(); !ok {
			return false
		}
		last := n.raft.LastContact()
		return !last.IsZero() && time.Since(last) <= bound
	}
	return false
}

// LeaderCh returns a channel that is closed at the next leadership change
// (any node's). Call it again after it fires; read IsLeader or Status for the
// new state. Any number of goroutines may wait on it.
func (n *Node) LeaderCh() <-chan struct{} { return n.leaderSig.wait() }

// AppliedIndex returns the index of the last log entry applied to the
// StateMachine on this node (the generation reads are served at).
func (n *Node) AppliedIndex() uint64 { return n.fsm.applied.Load() }

// Leader returns the current leader as this node knows it, with its HTTP
// address when it has published one. ok is false when no leader is known.
func (n *Node) Leader() (p Peer, ok bool) {
	addr, id := n.raft.LeaderWithID()
	if id == "" {
		return Peer{}, false
	}
	p = Peer{ID: string(id), RaftAddr: string(addr)}
	if m, found := n.fsm.member(p.ID); found {
		p.HTTPAddr = m.HTTPAddr
	}
	return p, true
}

// Members returns the replicated membership records (id → Peer), which
// carry each member's HTTP address. The map must not be modified.
func (n *Node) Members() map[string]Peer { return n.fsm.memberMap() }

// IsVoter reports whether id is a server of the cluster's current Raft
// configuration, as this node knows it.
func (n *Node) IsVoter(id string) bool {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return false
	}
	for _, srv := range cf.Configuration().Servers {
		if string(srv.ID) == id {
			return true
		}
	}
	return false
}

func (n *Node) notLeader() error {
	p, _ := n.Leader()
	return &NotLeaderError{Leader: p}
}

// bound returns ctx with DefaultTimeout applied when it has no deadline.
func (n *Node) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, n.cfg.DefaultTimeout)
}

// raftTimeout turns ctx's deadline into raft's enqueue timeout.
func (n *Node) raftTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if t := time.Until(d); t > 0 {
			return t
		}
		return time.Nanosecond
	}
	return n.cfg.DefaultTimeout
}

// raftErr maps hashicorp/raft errors onto this package's.
func (n *Node) raftErr(op string, err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("raftnode: %s: %w", op, n.notLeader())
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("raftnode: %s: %w (%v)", op, ErrOutcomeUnknown, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("raftnode: %s: %w", op, ErrClosed)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("raftnode: %s: %w (%v)", op, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("raftnode: %s: %w", op, err)
}

// Propose replicates cmd and returns the StateMachine's result and the log
// index it was applied at. It runs on the leader only; elsewhere it returns
// a *NotLeaderError (errors.Is ErrNotLeader) naming the leader, so the caller
// can forward (see Forwarder). If Apply returned an error value, Propose
// returns it as err together with the index at which the command was
// rejected.
//
// ctx's deadline (or DefaultTimeout) bounds queueing; once queued, the wait
// for commit is bounded by raft itself: it ends at commit, on loss of
// leadership (ErrOutcomeUnknown) or at shutdown. Cancelling ctx does not
// withdraw a queued proposal.
func (n *Node) Propose(ctx context.Context, cmd []byte) (result any, index uint64, err error) {
	if n.raft.State() != raft.Leader {
		return nil, 0, n.notLeader()
	}
	data := make([]byte, 1+len(cmd))
	data[0] = tagUser
	copy(data[1:], cmd)
	return n.apply(ctx, "propose", data)
}

// apply is the one place that submits a log entry. hashicorp/raft reports
// its own failures in Future.Error and the FSM's in Response: check both.
func (n *Node) apply(ctx context.Context, op string, data []byte) (any, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("raftnode: %s: %w", op, err)
	}
	f := n.raft.Apply(data, n.raftTimeout(ctx))
	if err := f.Error(); err != nil {
		return nil, 0, n.raftErr(op, err)
	}
	var resp any
	if r, ok := f.Response().(*response); ok {
		resp = r.take()
	}
	if err, ok := resp.(error); ok {
		return nil, f.Index(), err
	}
	return resp, f.Index(), nil
}

// WaitApplied blocks until this node has applied the log up to index (the
// minGeneration of a read-your-writes read), ctx ends, or the node shuts
// down. Without a ctx deadline it waits at most DefaultTimeout. It works on
// any node.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	for {
		ch := n.changed.wait()
		applied := n.fsm.applied.Load()
		if applied >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("raftnode: wait for index %d (applied %d): %w", index, applied, ctx.Err())
		case <-n.stop:
			return ErrClosed
		}
	}
}

// Barrier prepares a linearizable read on the leader (the read-index
// protocol): it waits until this leader has committed an entry in its
// current term, records the commit index, confirms with a quorum that it is
// still the leader, and waits until the StateMachine has applied up to the
// recorded index. State read afterwards reflects every write acknowledged
// before Barrier was called. On a follower it returns a *NotLeaderError.
func (n *Node) Barrier(ctx context.Context) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	if n.raft.State() != raft.Leader {
		return n.notLeader()
	}
	term := n.raft.CurrentTerm()
	for n.readyTerm.Load() != term {
		ch := n.changed.wait()
		if n.readyTerm.Load() == term {
			break
		}
		if n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
			return n.notLeader()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("raftnode: barrier: leader not ready in term %d: %w", term, ctx.Err())
		case <-n.stop:
			return ErrClosed
		}
	}
	readIndex := n.raft.CommitIndex()
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return n.raftErr("barrier", err)
	}
	if n.raft.CurrentTerm() != term {
		return n.notLeader()
	}
	return n.WaitApplied(ctx, n.visibleIndex(readIndex))
}

// visibleIndex returns the highest index ≤ target that the StateMachine
// wrapper will observe. Raft never hands no-op and barrier entries to the
// FSM, so waiting for one of those would never end.
func (n *Node) visibleIndex(target uint64) uint64 {
	applied := n.fsm.applied.Load()
	for i := target; i > applied; i-- {
		var l raft.Log
		if err := n.store.GetLog(i, &l); err != nil {
			return i // compacted or unreadable: wait for it conservatively
		}
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			return i
		}
	}
	return applied
}

// AddVoter adds a voter with the given id and Raft address. It runs on the
// leader only. It first dials the address through the Raft transport —
// completing the mutual-TLS handshake when TLS is configured; on a
// MemNetwork, checking that a running node holds the address — and adds
// nothing if that fails (ErrPeerUnreachable): an unreachable or untrusted
// voter would only cost the cluster fault tolerance. With TLS the
// certificate presented there must also name id (ErrPeerIdentity).
func (n *Node) AddVoter(ctx context.Context, id, raftAddr string) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	if id == "" || raftAddr == "" {
		return errors.New("raftnode: add voter: empty id or address")
	}
	if n.raft.State() != raft.Leader {
		return n.notLeader()
	}
	if err := n.probe(ctx, raftAddr, id); err != nil {
		return fmt.Errorf("raftnode: add voter %s: %w", id, err)
	}
	f := n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(raftAddr), 0, n.raftTimeout(ctx))
	if err := f.Error(); err != nil {
		return n.raftErr("add voter "+id, err)
	}
	return nil
}

// Join adds p as a voter (see AddVoter) and replicates its membership
// record, which carries p.HTTPAddr. It runs on the leader only.
func (n *Node) Join(ctx context.Context, p Peer) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	if err := n.AddVoter(ctx, p.ID, p.RaftAddr); err != nil {
		return err
	}
	return n.putMember(ctx, p)
}

func (n *Node) putMember(ctx context.Context, p Peer) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, _, err = n.apply(ctx, "member record", append([]byte{tagMemberPut}, body...))
	return err
}

// RemoveServer removes the server with the given id from the cluster and
// deletes its membership record. It runs on the leader only; removing the
// leader itself makes it step down.
func (n *Node) RemoveServer(ctx context.Context, id string) error {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	if n.raft.State() != raft.Leader {
		return n.notLeader()
	}
	body, err := json.Marshal(struct {
		ID string `json:"id"`
	}{id})
	if err != nil {
		return err
	}
	// Record first: once the leader removes itself it can no longer propose.
	if _, _, err := n.apply(ctx, "member delete", append([]byte{tagMemberDelete}, body...)); err != nil {
		return err
	}
	f := n.raft.RemoveServer(raft.ServerID(id), 0, n.raftTimeout(ctx))
	if err := f.Error(); err != nil {
		return n.raftErr("remove server "+id, err)
	}
	return nil
}

// Snapshot asks raft to take a snapshot now (normally driven by
// SnapshotThreshold). Useful before maintenance.
func (n *Node) Snapshot() error {
	if err := n.raft.Snapshot().Error(); err != nil {
		return n.raftErr("snapshot", err)
	}
	return nil
}

// Server is one entry of the Raft configuration.
type Server struct {
	Peer
	Suffrage string `json:"suffrage"` // "Voter", "Nonvoter" or "Staging"
}

// Status is a point-in-time view of the node.
type Status struct {
	ID           string   `json:"id"`
	State        string   `json:"state"` // "Follower", "Candidate", "Leader" or "Shutdown"
	Term         uint64   `json:"term"`
	Leader       Peer     `json:"leader"` // zero when unknown
	LastIndex    uint64   `json:"lastIndex"`
	CommitIndex  uint64   `json:"commitIndex"`
	AppliedIndex uint64   `json:"appliedIndex"`
	Servers      []Server `json:"servers"` // sorted by id; empty after shutdown
	// LastContact is when a follower last heard from the leader; zero on
	// the leader and before a first contact.
	LastContact time.Time `json:"lastContact,omitzero"`
}

// Status reports the node's Raft state and the cluster configuration.
func (n *Node) Status() Status {
	st := Status{
		ID:           n.cfg.NodeID,
		State:        n.raft.State().String(),
		Term:         n.raft.CurrentTerm(),
		LastIndex:    n.raft.LastIndex(),
		CommitIndex:  n.raft.CommitIndex(),
		AppliedIndex: n.fsm.applied.Load(),
		Servers:      []Server{},
	}
	st.Leader, _ = n.Leader()
	if n.raft.State() != raft.Leader {
		st.LastContact = n.raft.LastContact().UTC()
	}
	cf := n.raft.GetConfiguration()
	if cf.Error() == nil {
		members := n.fsm.memberMap()
		for _, s := range cf.Configuration().Servers {
			p := Peer{ID: string(s.ID), RaftAddr: string(s.Address)}
			p.HTTPAddr = members[p.ID].HTTPAddr
			st.Servers = append(st.Servers, Server{Peer: p, Suffrage: s.Suffrage.String()})
		}
		sort.Slice(st.Servers, func(i, j int) bool { return st.Servers[i].ID < st.Servers[j].ID })
	}
	return st
}

// watch turns raft observations into signals and asks the announcer to run
// when this node becomes leader.
func (n *Node) watch() {
	defer n.wg.Done()
	for {
		select {
		case <-n.stop:
			return
		case o := <-n.obsCh:
			if lo, ok := o.Data.(raft.LeaderObservation); ok {
				n.leaderSig.broadcast()
				if lo.LeaderID != "" {
					n.log.Info("raftnode: leader elected", "leader", string(lo.LeaderID), "term", n.raft.CurrentTerm())
				}
			}
			n.changed.broadcast()
			if n.raft.State() == raft.Leader && n.readyTerm.Load() != n.raft.CurrentTerm() {
				select {
				case n.poke <- struct{}{}:
				default:
				}
			}
		}
	}
}

// announce replicates this node's membership record once per leadership
// term. Besides publishing the leader's HTTP address to followers, the
// entry is the leader's first own entry of the term, which Barrier needs.
func (n *Node) announce() {
	defer n.wg.Done()
	self := Peer{ID: n.cfg.NodeID, RaftAddr: n.addr, HTTPAddr: n.cfg.HTTPAddr}
	for {
		select {
		case <-n.stop:
			return
		case <-n.poke:
		}
		term := n.raft.CurrentTerm()
		if n.raft.State() != raft.Leader || n.readyTerm.Load() == term {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.DefaultTimeout)
		err := n.putMember(ctx, self)
		cancel()
		if err != nil {
			n.log.Warn("raftnode: leader announcement failed", "term", term, "err", err)
			continue // a new term's observation pokes again
		}
		if n.raft.CurrentTerm() == term {
			n.readyTerm.Store(term)
			n.changed.broadcast()
		}
	}
}

// Shutdown stops the node: Raft (without transferring leadership; the
// others elect a new leader after HeartbeatTimeout), the transport, the
// node's goroutines and the stores. It is idempotent and safe to call
// concurrently; every call waits for the same shutdown and returns nil once
// it is complete, or ctx's error if ctx ends first (shutdown continues).
func (n *Node) Shutdown(ctx context.Context) error {
	n.shutOnce.Do(func() {
		go func() {
			defer close(n.shutDone)
			n.raft.DeregisterObserver(n.observer)
			err := n.raft.Shutdown().Error() // also closes the transport
			close(n.stop)
			n.wg.Wait()
			n.shutErr = errors.Join(err, n.store.Close())
		}()
	})
	select {
	case <-n.shutDone:
		return n.shutErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// timedLogStore reports the duration of each log write to observe.
type timedLogStore struct {
	raft.LogStore
	observe func(entries int, d time.Duration)
}

// IsMonotonic passes on whether the store refuses gaps in the log
// (raft.MonotonicLogStore; raft-wal does): Raft must then clear the log when
// it installs a snapshot instead of leaving a gap before the next entry.
func (s timedLogStore) IsMonotonic() bool {
	m, ok := s.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

func (s timedLogStore) StoreLog(l *raft.Log) error {
	return s.StoreLogs([]*raft.Log{l})
}

func (s timedLogStore) StoreLogs(logs []*raft.Log) error {
	start := time.Now()
	err := s.LogStore.StoreLogs(logs)
	s.observe(len(logs), time.Since(start))
	return err
}
