package raftnode_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"lakegate/metasrv/raftnode"
)

// TestMemNetwork: nodes on one in-memory network replicate to each other;
// the network refuses TLS (it has none to offer), a second node on an
// address in use, and a voter at an address no running node holds; a
// stopped node's address is unreachable until a node takes it again.
func TestMemNetwork(t *testing.T) {
	t.Parallel()
	net := raftnode.NewMemNetwork()
	onNet := func(id string, bootstrap bool) raftnode.Config {
		cfg := fewVoters(nodeConfig(t, id, bootstrap))
		cfg.Network = net
		return cfg
	}
	n1 := start(t, onNet("m1", true))
	waitLeader(t, 10*time.Second, n1)
	n2, n3 := start(t, onNet("m2", false)), start(t, onNet("m3", false))
	join(t, n1, n2)
	join(t, n1, n3)
	last := mustPropose(t, n1, "a=1")
	for _, n := range []*testNode{n2, n3} {
		waitApplied(t, n, last)
		if v, ok := n.kv.get("a"); !ok || v != "1" {
			t.Fatalf("%s: a = %q, %v", n.ID(), v, ok)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tlsCfg := onNet("m9", false)
	tlsCfg.TLS = &tls.Config{Certificates: []tls.Certificate{{}}, RootCAs: x509.NewCertPool(), ClientCAs: x509.NewCertPool()}
	taken := onNet("m9", false)
	taken.RaftAddr = n2.RaftAddr()
	for _, tc := range []struct {
		name string
		cfg  raftnode.Config
		want string
	}{
		{"TLS on the in-memory network", tlsCfg, "the in-memory network carries no TLS"},
		{"address in use", taken, "address already in use"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, err := raftnode.New(ctx, tc.cfg, newKV()); err == nil || !strings.Contains(err.Error(), tc.want) {
				if n != nil {
					_ = n.Shutdown(ctx)
				}
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}

	t.Run("voter at no node's address", func(t *testing.T) {
		if err := n1.AddVoter(ctx, "m9", "127.0.0.1:9"); !errors.Is(err, raftnode.ErrPeerUnreachable) {
			t.Fatalf("AddVoter: %v, want ErrPeerUnreachable", err)
		}
	})

	t.Run("stopped node's address", func(t *testing.T) {
		n3.stop(t)
		leader := waitLeader(t, 10*time.Second, n1, n2)
		if err := leader.AddVoter(ctx, "m3", n3.RaftAddr()); !errors.Is(err, raftnode.ErrPeerUnreachable) {
			t.Fatalf("AddVoter of a stopped node: %v, want ErrPeerUnreachable", err)
		}
		// The restarted node takes its address back and catches up.
		last := mustPropose(t, leader, "b=2")
		r3 := start(t, n3.cfg)
		waitApplied(t, r3, last)
		if v, ok := r3.kv.get("b"); !ok || v != "2" {
			t.Fatalf("restarted m3: b = %q, %v", v, ok)
		}
	})
}
