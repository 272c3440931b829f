package raftnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// MemNetwork is an in-process network for the Raft transport, for tests:
// the nodes whose Config.Network is the same MemNetwork exchange Raft's
// RPCs over channels (hashicorp/raft's InmemTransport) instead of TCP, so a
// test binary can run many clusters without sockets or ports. Addresses
// are host:port strings of the network's own, never bound on the host; a
// node's address is free again once the node has shut down, so a restart
// may take it back.
//
// It carries no TLS and checks no peer identity: tests of the transport
// itself (TLS, peer certificates, joins over TCP) run on TCP. It is never
// selected by a flag or file; only a program that constructs a Config can
// set it. A MemNetwork is safe for concurrent use; the zero value is not
// usable, build one with NewMemNetwork.
type MemNetwork struct {
	mu    sync.Mutex
	nodes map[string]*raft.InmemTransport // by address
	next  int                             // last port handed out for port 0
}

// NewMemNetwork returns an empty in-memory network.
func NewMemNetwork() *MemNetwork {
	return &MemNetwork{nodes: map[string]*raft.InmemTransport{}}
}

// memTransport is a node's transport on a MemNetwork; closing it takes the
// node off the network.
type memTransport struct {
	*raft.InmemTransport
	net *MemNetwork
}

// Close detaches the transport: the others' RPCs to its address fail at
// once from now on, as a refused connection does on TCP.
func (t *memTransport) Close() error {
	t.net.detach(t.InmemTransport)
	return t.InmemTransport.Close()
}

// attach adds a transport at addr (port 0: a port of the network's not in
// use) and connects it both ways with every transport already attached.
// timeout bounds each RPC, as the TCP transport's I/O timeout does.
func (m *MemNetwork) attach(addr string, timeout time.Duration) (*memTransport, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("raftnode: in-memory address %q: %w", addr, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if port == "0" {
		for {
			m.next++
			addr = net.JoinHostPort(host, strconv.Itoa(m.next))
			if _, used := m.nodes[addr]; !used {
				break
			}
		}
	} else if _, used := m.nodes[addr]; used {
		return nil, fmt.Errorf("raftnode: in-memory address %s: %w", addr, errAddrInUse)
	}
	_, t := raft.NewInmemTransportWithTimeout(raft.ServerAddress(addr), timeout)
	for a, peer := range m.nodes {
		t.Connect(raft.ServerAddress(a), peer)
		peer.Connect(raft.ServerAddress(addr), t)
	}
	m.nodes[addr] = t
	return &memTransport{InmemTransport: t, net: m}, nil
}

// errAddrInUse is attach's answer for an address a running node holds.
var errAddrInUse = errors.New("address already in use")

// detach removes t from the network and every route to it.
func (m *MemNetwork) detach(t *raft.InmemTransport) {
	m.mu.Lock()
	defer m.mu.Unlock()
	addr := t.LocalAddr()
	if m.nodes[string(addr)] != t {
		return // already detached
	}
	delete(m.nodes, string(addr))
	for _, peer := range m.nodes {
		peer.Disconnect(addr)
	}
}

// probe is AddVoter's check on the in-memory network: addr must be a
// transport attached now (the TCP transport dials it instead). There is
// no certificate to check id against.
func (m *MemNetwork) probe(ctx context.Context, addr, _ string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrPeerUnreachable, addr, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.nodes[addr]; !ok {
		return fmt.Errorf("%w: %s: no node at this address on the in-memory network", ErrPeerUnreachable, addr)
	}
	return nil
}
