package metasrv

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"lakegate/metasrv/raftnode"
)

// Proposal batching. Concurrent writes on the leader are coalesced into one
// Raft log entry holding N encoded proposals (a batch entry), so that one
// log write, one replication message, one follower write and one FSM state
// publication serve N writes. The FSM applies a batch entry's proposals in
// order, each exactly as if it were its own entry (its own validation
// against the state the previous ones left, all or nothing, its own events
// and result), at the entry's index. A batch of one is proposed as the
// plain proposal, so a lone writer's entries are unchanged.

// batchMagic starts a batch entry: "LGB" and the batch format's version.
// A plain proposal starts with '{' (version 1) or "LGP" (version 2).
var batchMagic = [4]byte{'L', 'G', 'B', 1}

// Batching defaults (Config.MaxBatchProposals, MaxBatchBytes and
// BatchPipeline when zero).
const (
	DefaultMaxBatchProposals = 256
	DefaultMaxBatchBytes     = 1 << 20
	DefaultBatchPipeline     = 2
)

// encodeBatch writes batchMagic, a uvarint count and the uvarint-length-
// prefixed proposals (EncodeProposal bytes).
func encodeBatch(props [][]byte) []byte {
	n := len(batchMagic) + binary.MaxVarintLen64
	for _, p := range props {
		n += binary.MaxVarintLen64 + len(p)
	}
	b := make([]byte, 0, n)
	b = append(b, batchMagic[:]...)
	b = binary.AppendUvarint(b, uint64(len(props)))
	for _, p := range props {
		b = appendBytes(b, p)
	}
	return b
}

// isBatch reports whether b is a batch entry (of any version).
func isBatch(b []byte) bool {
	return len(b) >= len(batchMagic) && [3]byte(b[:3]) == [3]byte(batchMagic[:3])
}

// decodeBatch parses a batch entry strictly: unknown versions, a count of
// zero, truncation and trailing data are errors wrapping
// ErrInvalidProposal. The proposals alias b.
func decodeBatch(b []byte) ([][]byte, error) {
	if !isBatch(b) {
		return nil, fmt.Errorf("%w: batch: unknown encoding", ErrInvalidProposal)
	}
	if b[3] != batchMagic[3] {
		return nil, fmt.Errorf("%w: unsupported batch version %d", ErrInvalidProposal, b[3])
	}
	d := proposalDecoder{b: b[len(batchMagic):]}
	n := d.uvarint("proposal count")
	if d.err == nil && (n == 0 || n > uint64(len(d.b))) {
		d.fail("bad proposal count %d", n)
	}
	var out [][]byte
	for i := uint64(0); i < n && d.err == nil; i++ {
		if p := d.bytes("proposal"); d.err == nil {
			out = append(out, p)
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes of trailing data", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: batch: %v", ErrInvalidProposal, d.err)
	}
	return out, nil
}

// BatchResult is what FSM.Apply returns for a batch entry: one result per
// proposal, in order, each a *Result or an error.
type BatchResult struct {
	Results []any
}

// batcher coalesces concurrent proposals on the leader. At most pipeline
// entries are in Raft at once; proposals arriving meanwhile queue and leave
// together, up to maxItems proposals and maxBytes bytes per entry, when an
// entry completes. No goroutine runs while nothing is queued.
type batcher struct {
	node     *raftnode.Node
	timeout  time.Duration // bounds the queueing of each entry in Raft
	maxItems int
	maxBytes int
	pipeline int
	// observe, when set, receives the number of proposals of each entry.
	observe func(n int)

	mu       sync.Mutex
	queue    []*pending
	inflight int
	closed   bool
}

type pending struct {
	data []byte
	done chan outcome // buffered by one; answered exactly once
}

type outcome struct {
	res   any
	index uint64
	err   error
}

// propose queues data and waits for its outcome. Like raftnode.Node.Propose
// it returns the proposal's own result, or its rejection as err with the
// index it was rejected at. ctx bounds only the wait before the entry is
// handed to Raft: once queued, the proposal is not withdrawn, and the wait
// for commit is bounded by Raft (commit, leadership loss, shutdown).
func (b *batcher) propose(ctx context.Context, data []byte) (any, uint64, error) {
	if b.maxItems == 1 { // batching off: one entry per write, no pipeline bound
		return b.node.Propose(ctx, data)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	p := &pending{data: data, done: make(chan outcome, 1)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, 0, fmt.Errorf("metasrv: propose: %w", raftnode.ErrClosed)
	}
	b.queue = append(b.queue, p)
	b.kickLocked()
	b.mu.Unlock()
	o := <-p.done
	return o.res, o.index, o.err
}

// kickLocked starts an entry if the pipeline has room and proposals wait.
func (b *batcher) kickLocked() {
	for b.inflight < b.pipeline && len(b.queue) > 0 {
		n, size := 1, len(b.queue[0].data)
		for n < len(b.queue) && n < b.maxItems && size+len(b.queue[n].data) <= b.maxBytes {
			size += len(b.queue[n].data)
			n++
		}
		batch := make([]*pending, n)
		copy(batch, b.queue)
		b.queue = b.queue[n:]
		if len(b.queue) == 0 {
			b.queue = nil // let the backing array go
		}
		b.inflight++
		go b.send(batch)
	}
}

// send proposes one entry and answers its proposals.
func (b *batcher) send(batch []*pending) {
	defer func() {
		b.mu.Lock()
		b.inflight--
		b.kickLocked()
		b.mu.Unlock()
	}()
	if b.observe != nil {
		b.observe(len(batch))
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	if len(batch) == 1 {
		res, index, err := b.node.Propose(ctx, batch[0].data)
		batch[0].done <- outcome{res, index, err}
		return
	}
	props := make([][]byte, len(batch))
	for i, p := range batch {
		props[i] = p.data
	}
	res, index, err := b.node.Propose(ctx, encodeBatch(props))
	br, ok := res.(*BatchResult)
	if err == nil && (!ok || len(br.Results) != len(batch)) {
		err = fmt.Errorf("metasrv: unexpected batch apply result %T", res)
	}
	for i, p := range batch {
		if err != nil {
			p.done <- outcome{nil, index, err}
			continue
		}
		if e, isErr := br.Results[i].(error); isErr {
			p.done <- outcome{nil, index, e}
		} else {
			p.done <- outcome{br.Results[i], index, nil}
		}
	}
}

// close fails every queued proposal with raftnode.ErrClosed and refuses new
// ones. Entries already in Raft are answered by Raft (at shutdown, with
// ErrClosed).
func (b *batcher) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, p := range b.queue {
		p.done <- outcome{err: fmt.Errorf("metasrv: propose: %w", raftnode.ErrClosed)}
	}
	b.queue = nil
}
