package raftnode

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// StateMachine is what the node replicates. The node calls Apply, Snapshot
// and Restore from a single goroutine, never concurrently with each other;
// Snapshot.Persist runs concurrently with later Applies.
type StateMachine interface {
	// Apply applies a committed command at log index. It must be
	// deterministic: the same commands in the same order produce the same
	// state and results on every replica (no clocks, randomness or I/O).
	// The result is returned to the proposer on the leader; it may be an
	// error value, which Propose returns as its error.
	Apply(index uint64, cmd []byte) any

	// Snapshot captures the current state. It must be O(1) — grab an
	// immutable pointer — because Applies wait for it.
	Snapshot() (Snapshot, error)

	// Restore replaces all state with the snapshot read from r, discarding
	// whatever was there before.
	Restore(r io.Reader) error
}

// Snapshot is an immutable point-in-time state captured by
// StateMachine.Snapshot.
type Snapshot interface {
	// Persist writes the state to w. It runs concurrently with Apply.
	Persist(w io.Writer) error
	// Release is called once the snapshot is no longer needed, whether or
	// not Persist was called.
	Release()
}

// Envelope tags: the first byte of every command log entry. The numbers are
// part of the on-disk format: append only, never renumber (pinned by a test).
const (
	tagUser         byte = 1 // rest: a StateMachine command
	tagMemberPut    byte = 2 // rest: JSON Peer, replaces the record of Peer.ID
	tagMemberDelete byte = 3 // rest: JSON {"id": ...}
)

// Snapshot stream header. The wrapper's state precedes the user state.
var snapshotMagic = [4]byte{'L', 'G', 'R', 'N'}

const snapshotVersion byte = 1

// maxMembersJSON bounds the membership section read from a snapshot.
const maxMembersJSON = 16 << 20

// fsm adapts a StateMachine to raft.BatchingFSM. It strips the envelope,
// handles the membership records itself, tracks the applied index and
// signals waiters after every batch.
type fsm struct {
	sm      StateMachine
	changed *signal

	// applied is the index of the last log entry this wrapper has seen
	// (command or configuration). Entries raft never hands to an FSM
	// (no-ops, barriers) do not move it.
	applied atomic.Uint64
	// members maps id → Peer. Copy-on-write: the map behind the pointer is
	// never mutated, so Snapshot and readers just load it.
	members atomic.Pointer[map[string]Peer]
}

func newFSM(sm StateMachine, changed *signal) *fsm {
	f := &fsm{sm: sm, changed: changed}
	empty := map[string]Peer{}
	f.members.Store(&empty)
	return f
}

func (f *fsm) member(id string) (Peer, bool) {
	p, ok := (*f.members.Load())[id]
	return p, ok
}

func (f *fsm) memberMap() map[string]Peer { return *f.members.Load() }

// Apply implements raft.FSM. Unused when batching (raft prefers ApplyBatch),
// but kept consistent.
func (f *fsm) Apply(l *raft.Log) any {
	r := f.applyOne(l)
	f.changed.broadcast()
	return r
}

// response carries a command's result to its proposer. hashicorp/raft's log
// cache keeps each recent entry's future, and with it the FSM's response,
// until 1,024 newer entries push it out; the proposer takes v out of the
// box (Node.apply), so that only the empty box stays there and a result
// (for metasrv, a catalog snapshot) lives no longer than its request.
type response struct{ v any }

// take returns the result and leaves the box empty.
func (r *response) take() any {
	v := r.v
	r.v = nil
	return v
}

// ApplyBatch implements raft.BatchingFSM.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	for i, l := range logs {
		out[i] = f.applyOne(l)
	}
	f.changed.broadcast()
	return out
}

func (f *fsm) applyOne(l *raft.Log) any {
	defer f.applied.Store(l.Index)
	if l.Type != raft.LogCommand {
		return nil // configuration entries: raft owns them; only the index moves
	}
	if len(l.Data) == 0 {
		// Only this package writes commands; continuing would let replicas diverge.
		panic(fmt.Sprintf("raftnode: empty command at index %d", l.Index))
	}
	body := l.Data[1:]
	switch l.Data[0] {
	case tagUser:
		return &response{v: f.sm.Apply(l.Index, body)}
	case tagMemberPut:
		var p Peer
		if err := json.Unmarshal(body, &p); err != nil || p.ID == "" {
			panic(fmt.Sprintf("raftnode: bad member record at index %d: %v", l.Index, err))
		}
		f.editMembers(func(m map[string]Peer) { m[p.ID] = p })
		return nil
	case tagMemberDelete:
		var p struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			panic(fmt.Sprintf("raftnode: bad member delete at index %d: %v", l.Index, err))
		}
		f.editMembers(func(m map[string]Peer) { delete(m, p.ID) })
		return nil
	default:
		panic(fmt.Sprintf("raftnode: unknown command tag %d at index %d", l.Data[0], l.Index))
	}
}

func (f *fsm) editMembers(edit func(map[string]Peer)) {
	m := maps.Clone(*f.members.Load())
	edit(m)
	f.members.Store(&m)
}

// Snapshot implements raft.FSM: O(1), it captures pointers only.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	us, err := f.sm.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("raftnode: state machine snapshot: %w", err)
	}
	return &fsmSnapshot{applied: f.applied.Load(), members: f.memberMap(), user: us}, nil
}

// Restore implements raft.FSM. Stream: magic, version, uvarint applied
// index, uvarint length + JSON members, then the StateMachine's bytes.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	br := bufio.NewReader(rc)
	var hdr [5]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return fmt.Errorf("raftnode: restore: header: %w", err)
	}
	if [4]byte(hdr[:4]) != snapshotMagic || hdr[4] != snapshotVersion {
		return fmt.Errorf("raftnode: restore: unknown snapshot format %x", hdr)
	}
	applied, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("raftnode: restore: applied index: %w", err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return fmt.Errorf("raftnode: restore: members length: %w", err)
	}
	if n > maxMembersJSON {
		return fmt.Errorf("raftnode: restore: members section of %d bytes exceeds %d", n, maxMembersJSON)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(br, buf); err != nil {
		return fmt.Errorf("raftnode: restore: members: %w", err)
	}
	members := map[string]Peer{}
	if err := json.Unmarshal(buf, &members); err != nil {
		return fmt.Errorf("raftnode: restore: members: %w", err)
	}
	if err := f.sm.Restore(br); err != nil {
		return fmt.Errorf("raftnode: restore: state machine: %w", err)
	}
	f.members.Store(&members)
	f.applied.Store(applied)
	f.changed.broadcast()
	return nil
}

type fsmSnapshot struct {
	applied uint64
	members map[string]Peer
	user    Snapshot
}

// Persist implements raft.FSMSnapshot.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	err := s.write(sink)
	if err != nil {
		return errors.Join(err, sink.Cancel())
	}
	return sink.Close()
}

func (s *fsmSnapshot) write(w io.Writer) error {
	members, err := json.Marshal(s.members)
	if err != nil {
		return fmt.Errorf("raftnode: snapshot: members: %w", err)
	}
	hdr := append(snapshotMagic[:], snapshotVersion)
	hdr = binary.AppendUvarint(hdr, s.applied)
	hdr = binary.AppendUvarint(hdr, uint64(len(members)))
	hdr = append(hdr, members...)
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("raftnode: snapshot: header: %w", err)
	}
	if err := s.user.Persist(w); err != nil {
		return fmt.Errorf("raftnode: snapshot: state machine: %w", err)
	}
	return nil
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() { s.user.Release() }

// signal is a broadcast condition: wait returns a channel that is closed at
// the next broadcast. Safe for concurrent use.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

func (s *signal) broadcast() {
	s.mu.Lock()
	close(s.ch)
	s.ch = make(chan struct{})
	s.mu.Unlock()
}
