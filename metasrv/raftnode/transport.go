package raftnode

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// streamLayer is raft's StreamLayer over TCP, optionally wrapped in mutual
// TLS. The listener and the dialer use the same tls.Config: peers verify each
// other against the same CAs.
type streamLayer struct {
	net.Listener
	tls *tls.Config // nil: plain TCP
}

// tlsListener hands out accepted TLS connections whose handshake must
// complete within timeout. raft's transport reads a connection without a
// deadline and the handshake happens at the first read, so without one a
// client that never sends its hello holds a goroutine and a descriptor for
// ever. The handshake runs on the connection's own goroutine (its first
// read), never in Accept, where one slow client would hold up the others.
type tlsListener struct {
	net.Listener
	cfg     *tls.Config
	timeout time.Duration
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &handshakeConn{Conn: tls.Server(c, l.cfg), timeout: l.timeout}, nil
}

// handshakeConn is a server-side TLS connection that completes its
// handshake, within timeout, before its first read or write.
type handshakeConn struct {
	*tls.Conn
	timeout time.Duration
	once    sync.Once
	err     error
}

func (c *handshakeConn) handshake() error {
	c.once.Do(func() {
		if c.err = c.Conn.SetDeadline(time.Now().Add(c.timeout)); c.err != nil {
			return
		}
		if c.err = c.Conn.Handshake(); c.err != nil {
			_ = c.Conn.Close()
			return
		}
		c.err = c.Conn.SetDeadline(time.Time{})
	})
	return c.err
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *handshakeConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// peerTLS returns a copy of c hardened for peer-to-peer use.
func peerTLS(c *tls.Config) *tls.Config {
	if c == nil {
		return nil
	}
	c = c.Clone()
	c.ClientAuth = tls.RequireAndVerifyClientCert
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	return c
}

func listen(addr string, tc *tls.Config, handshakeTimeout time.Duration) (*streamLayer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("raftnode: listen %s: %w", addr, err)
	}
	s := &streamLayer{Listener: ln, tls: tc}
	if tc != nil {
		s.Listener = &tlsListener{Listener: ln, cfg: tc, timeout: handshakeTimeout}
	}
	return s, nil
}

// Dial implements raft.StreamLayer. With TLS the handshake completes (and
// the peer's certificate is verified) before the connection is returned.
func (s *streamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.dial(ctx, string(addr))
}

func (s *streamLayer) dial(ctx context.Context, addr string) (net.Conn, error) {
	if s.tls == nil {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	cfg := s.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	d := tls.Dialer{Config: cfg}
	return d.DialContext(ctx, "tcp", addr)
}

// probe checks that addr answers on the Raft transport and, with TLS, proves
// a certificate our CAs accept that names id (see certNames). It sends
// nothing: the peer's transport sees a connection closed before its first
// RPC.
func (s *streamLayer) probe(ctx context.Context, addr, id string) error {
	c, err := s.dial(ctx, addr)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrPeerUnreachable, addr, err)
	}
	defer c.Close()
	tc, ok := c.(*tls.Conn)
	if !ok {
		return nil
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 || !certNames(certs[0], id) {
		return fmt.Errorf("%w: the certificate at %s does not name node %q (as its common name or a DNS name)", ErrPeerIdentity, addr, id)
	}
	return nil
}

// certNames reports whether a node certificate names the node id id, as
// its subject common name or one of its DNS names. The CA vouches for the
// name; without this check any certificate of the cluster's CA (a
// gateway's, another node's) would let its holder join under any id.
func certNames(c *x509.Certificate, id string) bool {
	return c.Subject.CommonName == id || slices.Contains(c.DNSNames, id)
}

// closingTransport is a raft transport that New can close when startup
// fails after it was created.
type closingTransport interface {
	raft.Transport
	Close() error
}

// newTransport returns the node's Raft transport and the probe AddVoter
// runs against it: TCP (with mutual TLS when configured) on cfg.RaftAddr,
// or cfg.Network's in-memory transport.
func newTransport(cfg Config, hl hclog.Logger) (closingTransport, func(ctx context.Context, addr, id string) error, error) {
	if cfg.Network != nil {
		t, err := cfg.Network.attach(cfg.RaftAddr, cfg.DefaultTimeout)
		if err != nil {
			return nil, nil, err
		}
		return t, cfg.Network.probe, nil
	}
	stream, err := listen(cfg.RaftAddr, peerTLS(cfg.TLS), cfg.HandshakeTimeout)
	if err != nil {
		return nil, nil, err
	}
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  stream,
		MaxPool: 3,
		Timeout: cfg.DefaultTimeout,
		Logger:  hl.Named("transport"),
	})
	return trans, stream.probe, nil
}
