package raftnode

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test with errors.Is; the concrete error may carry more.
var (
	// ErrNotLeader: the operation must run on the leader and this node is
	// not it. The error is a *NotLeaderError naming the leader, if known.
	ErrNotLeader = errors.New("raftnode: not the leader")

	// ErrNoLeader: no leader (or no leader HTTP address) became known
	// within the wait bound.
	ErrNoLeader = errors.New("raftnode: no known leader")

	// ErrIsLeader: a request was to be forwarded to the leader, and this
	// node became the leader meanwhile; the caller may serve it here.
	ErrIsLeader = errors.New("raftnode: this node is the leader")

	// ErrClosed: the node has been shut down. Shutdown itself returns nil.
	ErrClosed = errors.New("raftnode: node is shut down")

	// ErrPeerUnreachable: a server being added did not answer on its Raft
	// address (or failed the mutual-TLS handshake), so it was not added.
	ErrPeerUnreachable = errors.New("raftnode: peer unreachable")
	// ErrPeerIdentity: with TLS, a server being added presented a
	// certificate of the cluster's CA that does not name its node id.
	ErrPeerIdentity = errors.New("raftnode: peer certificate names another node")

	// ErrOutcomeUnknown: leadership was lost or the node shut down while a
	// proposal was in flight; it may or may not be applied eventually.
	ErrOutcomeUnknown = errors.New("raftnode: proposal outcome unknown")
)

// Peer names a cluster member.
type Peer struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	// HTTPAddr is empty when the member has not published one.
	HTTPAddr string `json:"httpAddr,omitempty"`
}

// NotLeaderError reports that this node is not the leader. Leader is the
// zero Peer when no leader is known. It matches ErrNotLeader.
type NotLeaderError struct {
	Leader Peer
}

func (e *NotLeaderError) Error() string {
	if e.Leader.ID == "" {
		return "raftnode: not the leader (leader unknown)"
	}
	return fmt.Sprintf("raftnode: not the leader (leader %s at %s)", e.Leader.ID, e.Leader.RaftAddr)
}

// Unwrap returns ErrNotLeader.
func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }
