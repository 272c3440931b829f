package raftnode_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"lakegate/authz/pkitest"
	"lakegate/metasrv/raftnode"
)

// leaf issues a peer certificate for 127.0.0.1 usable as server and client.
func leaf(t *testing.T, ca *pkitest.Cert, cn string) tls.Certificate {
	t.Helper()
	return ca.Issue(t, pkitest.Host(cn, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)).TLS()
}

// peerConfig presents cert and trusts trusted, both ways.
func peerConfig(cert tls.Certificate, trusted *x509.CertPool) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: trusted, ClientCAs: trusted}
}

// TestMutualTLS forms a two-node cluster over mutual TLS and shows that a
// node whose certificate comes from another CA can neither be added nor
// talk to the cluster's Raft transport.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	good, other := pkitest.NewCA(t, "lakegate-test-ca"), pkitest.NewCA(t, "rogue-ca")

	cfg1 := fewVoters(tcpConfig(t, "t1", true))
	cfg1.TLS = peerConfig(leaf(t, good, "t1"), good.Pool())
	n1 := start(t, cfg1)
	waitLeader(t, 10*time.Second, n1)

	cfg2 := fewVoters(tcpConfig(t, "t2", false))
	cfg2.TLS = peerConfig(leaf(t, good, "t2"), good.Pool())
	n2 := start(t, cfg2)
	join(t, n1, n2)
	last := mustPropose(t, n1, "secret=over-tls")
	waitApplied(t, n2, last)
	if v, _ := n2.kv.get("secret"); v != "over-tls" {
		t.Fatalf("t2 has %q", v)
	}

	// The rogue trusts the cluster's CA but presents a certificate from
	// another CA.
	cfg3 := tcpConfig(t, "rogue", false)
	cfg3.TLS = peerConfig(leaf(t, other, "rogue"), good.Pool())
	rogue := start(t, cfg3)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := n1.Join(ctx, raftnode.Peer{ID: "rogue", RaftAddr: rogue.RaftAddr()})
	if !errors.Is(err, raftnode.ErrPeerUnreachable) {
		t.Fatalf("join of a node with a foreign certificate: %v", err)
	}
	if st := n1.Status(); len(st.Servers) != 2 {
		t.Fatalf("configuration changed: %+v", st.Servers)
	}

	// Nor can the rogue speak to a member's Raft transport: the member
	// rejects its client certificate during the handshake.
	// (GetClientCertificate makes it send the certificate even though its
	// issuer is not among the CAs the member asks for.)
	rogueCert := cfg3.TLS.Certificates[0]
	c, err := tls.Dial("tcp", n1.RaftAddr(), &tls.Config{
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &rogueCert, nil },
		RootCAs:              good.Pool(),
		ServerName:           "127.0.0.1",
	})
	if err == nil {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
		c.Close()
	}
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("rogue connection to a member was not rejected: %v", err)
	}
	t.Logf("rogue rejected: %v", err)

	// And plain TCP config is refused by Validate when TLS lacks CAs.
	bad := tcpConfig(t, "x", false)
	bad.TLS = &tls.Config{Certificates: cfg3.TLS.Certificates}
	if err := bad.Validate(); err == nil {
		t.Fatal("TLS config without CAs validated")
	}
}

// TestJoinNeedsCertificateNamingTheNode: a certificate of the cluster's
// own CA is not enough to join under any id; it must name the node id
// being added. Otherwise any holder of a CA-signed certificate (another
// node's, a gateway's) could join as a node the cluster expects.
func TestJoinNeedsCertificateNamingTheNode(t *testing.T) {
	t.Parallel()
	ca := pkitest.NewCA(t, "lakegate-test-ca")
	cfg1 := oneVoter(tcpConfig(t, "t1", true)) // t2 is never added
	cfg1.TLS = peerConfig(leaf(t, ca, "t1"), ca.Pool())
	n1 := start(t, cfg1)
	waitLeader(t, 10*time.Second, n1)

	// Valid certificate of the right CA, issued for another node.
	cfg2 := tcpConfig(t, "t2", false)
	cfg2.TLS = peerConfig(leaf(t, ca, "someone-else"), ca.Pool())
	n2 := start(t, cfg2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := n1.Join(ctx, raftnode.Peer{ID: "t2", RaftAddr: n2.RaftAddr()})
	if !errors.Is(err, raftnode.ErrPeerIdentity) {
		t.Fatalf("join with a certificate naming another node: %v, want ErrPeerIdentity", err)
	}
	if st := n1.Status(); len(st.Servers) != 1 {
		t.Fatalf("configuration changed: %+v", st.Servers)
	}

	if !n1.IsVoter("t1") || n1.IsVoter("t2") {
		t.Fatalf("IsVoter: %+v", n1.Status().Servers)
	}
}

// TestSilentPeerConnectionClosed: with TLS the transport handshakes on a
// connection's first read, and the transport reads without a deadline, so
// a connection that never sends its TLS hello held a goroutine and a file
// descriptor for ever; anyone who can reach the Raft port could open them
// without bound. It is closed after HandshakeTimeout.
func TestSilentPeerConnectionClosed(t *testing.T) {
	t.Parallel()
	ca := pkitest.NewCA(t, "lakegate-test-ca")
	cfg := tcpConfig(t, "t1", true)
	cfg.TLS = peerConfig(leaf(t, ca, "t1"), ca.Pool())
	cfg.HandshakeTimeout = 300 * time.Millisecond
	n := start(t, cfg)
	c, err := net.Dial("tcp", n.RaftAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The bound only fails the test; the node closes well before it.
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("a connection that sent nothing was still open after 10s")
	}
}
