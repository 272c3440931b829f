package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCmd runs a lakegate command line as main would and returns its
// output and error.
func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// newTestCA makes a CA in a fresh directory and returns it.
func newTestCA(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pki")
	if _, errOut, err := runCmd(t, "cert", "ca", "--out", dir); err != nil {
		t.Fatalf("cert ca: %v (%s)", err, errOut)
	}
	return dir
}

// TestCertIssueMakesUsableCertificates: a certificate from `cert issue`
// loads as a TLS key pair, is ECDSA P-256, verifies against the CA for
// every --host as a server and as a client, and its keys are mode 0600.
func TestCertIssueMakesUsableCertificates(t *testing.T) {
	ca := newTestCA(t)
	out := filepath.Join(t.TempDir(), "certs")
	if _, errOut, err := runCmd(t, "cert", "issue", "--ca", ca, "--name", "m1",
		"--host", "localhost,m1.example.com,127.0.0.1,::1", "--out", out); err != nil {
		t.Fatalf("cert issue: %v (%s)", err, errOut)
	}
	for _, key := range []string{filepath.Join(ca, "ca-key.pem"), filepath.Join(out, "m1-key.pem")} {
		fi, err := os.Stat(key)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", key, fi.Mode().Perm())
		}
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(out, "m1.pem"), filepath.Join(out, "m1-key.pem"))
	if err != nil {
		t.Fatalf("loading the issued pair: %v", err)
	}
	if k, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("key %T, want ECDSA P-256", pair.PrivateKey)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.IsCA {
		t.Error("the issued certificate is a CA")
	}
	caPEM, err := os.ReadFile(filepath.Join(ca, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	tests := []struct {
		host  string
		usage x509.ExtKeyUsage
		ok    bool
	}{
		{"localhost", x509.ExtKeyUsageServerAuth, true},
		{"m1.example.com", x509.ExtKeyUsageServerAuth, true},
		{"127.0.0.1", x509.ExtKeyUsageServerAuth, true},
		{"::1", x509.ExtKeyUsageServerAuth, true},
		{"localhost", x509.ExtKeyUsageClientAuth, true},
		{"m2.example.com", x509.ExtKeyUsageServerAuth, false},
		{"10.0.0.1", x509.ExtKeyUsageServerAuth, false},
		{"localhost", x509.ExtKeyUsageCodeSigning, false},
	}
	for _, tt := range tests {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: tt.host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{tt.usage}})
		if (err == nil) != tt.ok {
			t.Errorf("verify %s for %v: %v, want ok=%v", tt.host, tt.usage, err, tt.ok)
		}
	}
	// A certificate signed by another CA does not verify against this one.
	other := newTestCA(t)
	otherOut := filepath.Join(t.TempDir(), "other")
	if _, errOut, err := runCmd(t, "cert", "issue", "--ca", other, "--name", "m1", "--host", "localhost", "--out", otherOut); err != nil {
		t.Fatalf("cert issue: %v (%s)", err, errOut)
	}
	otherPair, err := tls.LoadX509KeyPair(filepath.Join(otherOut, "m1.pem"), filepath.Join(otherOut, "m1-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	otherLeaf, _ := x509.ParseCertificate(otherPair.Certificate[0])
	if _, err := otherLeaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: roots}); err == nil {
		t.Error("a certificate of another CA verified")
	}
}

// TestCertHandshake: a server and a client holding certificates of one
// CA complete a mutual TLS handshake, as two metasrv nodes do.
func TestCertHandshake(t *testing.T) {
	ca := newTestCA(t)
	out := t.TempDir()
	for _, name := range []string{"server", "client"} {
		if _, errOut, err := runCmd(t, "cert", "issue", "--ca", ca, "--name", name, "--host", "localhost", "--out", out); err != nil {
			t.Fatalf("cert issue %s: %v (%s)", name, err, errOut)
		}
	}
	load := func(name string) tls.Certificate {
		p, err := tls.LoadX509KeyPair(filepath.Join(out, name+".pem"), filepath.Join(out, name+"-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	caPEM, _ := os.ReadFile(filepath.Join(ca, "ca.pem"))
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	c1, c2 := net.Pipe()
	srv := tls.Server(c1, &tls.Config{Certificates: []tls.Certificate{load("server")}, ClientCAs: roots,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	cli := tls.Client(c2, &tls.Config{Certificates: []tls.Certificate{load("client")}, RootCAs: roots,
		ServerName: "localhost", MinVersion: tls.VersionTLS12})
	errc := make(chan error, 1)
	go func() { errc <- srv.Handshake() }()
	if err := cli.Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	if got := srv.ConnectionState().PeerCertificates[0].Subject.CommonName; got != "client" {
		t.Errorf("server saw client %q", got)
	}
	cli.Close()
	srv.Close()
}

// TestCertNeverOverwrites: an existing file — a key, a certificate, or a
// symlink planted where the key goes — stops the command before it writes
// anything, and the existing file is left as it was.
func TestCertNeverOverwrites(t *testing.T) {
	ca := newTestCA(t)
	tests := []struct {
		name  string
		plant func(t *testing.T, out string) string // returns the planted path
	}{
		{"existing key", func(t *testing.T, out string) string {
			p := filepath.Join(out, "gw-key.pem")
			if err := os.WriteFile(p, []byte("old key"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"existing certificate", func(t *testing.T, out string) string {
			p := filepath.Join(out, "gw.pem")
			if err := os.WriteFile(p, []byte("old cert"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"symlink in place of the key", func(t *testing.T, out string) string {
			target := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(target, []byte("victim"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(out, "gw-key.pem")); err != nil {
				t.Fatal(err)
			}
			return target
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			planted := tt.plant(t, out)
			before, err := os.ReadFile(planted)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = runCmd(t, "cert", "issue", "--ca", ca, "--name", "gw", "--host", "localhost", "--out", out)
			if err == nil || !strings.Contains(err.Error(), "exists") {
				t.Fatalf("cert issue over %s: %v, want an error saying it exists", tt.name, err)
			}
			after, err := os.ReadFile(planted)
			if err != nil || !bytes.Equal(before, after) {
				t.Errorf("%s changed: %q → %q (%v)", planted, before, after, err)
			}
			entries, _ := os.ReadDir(out)
			if len(entries) != 1 {
				t.Errorf("out holds %d entries, want only the planted one", len(entries))
			}
		})
	}
	// cert ca over an existing CA keeps the CA.
	keyBefore, _ := os.ReadFile(filepath.Join(ca, "ca-key.pem"))
	if _, _, err := runCmd(t, "cert", "ca", "--out", ca); err == nil {
		t.Error("cert ca over an existing CA succeeded")
	}
	if keyAfter, _ := os.ReadFile(filepath.Join(ca, "ca-key.pem")); !bytes.Equal(keyBefore, keyAfter) {
		t.Error("cert ca replaced the CA key")
	}
}

// TestCertRefuses: command lines that cannot make a sound certificate are
// refused — as usage errors (exit 2) where the command line is at fault —
// and write nothing. A name is a file name, so one that leaves --out is
// refused.
func TestCertRefuses(t *testing.T) {
	ca := newTestCA(t)
	leafDir := t.TempDir() // a directory holding a leaf where a CA should be
	if _, errOut, err := runCmd(t, "cert", "issue", "--ca", ca, "--name", "leaf", "--host", "localhost", "--out", leafDir); err != nil {
		t.Fatalf("cert issue: %v (%s)", err, errOut)
	}
	os.Rename(filepath.Join(leafDir, "leaf.pem"), filepath.Join(leafDir, "ca.pem"))
	os.Rename(filepath.Join(leafDir, "leaf-key.pem"), filepath.Join(leafDir, "ca-key.pem"))
	tests := []struct {
		name  string
		args  []string
		usage bool
	}{
		{"no subcommand", []string{"cert"}, true},
		{"unknown subcommand", []string{"cert", "sign"}, true},
		{"ca without --out", []string{"cert", "ca"}, true},
		{"ca with an argument", []string{"cert", "ca", "--out", "OUT", "extra"}, true},
		{"ca days 0", []string{"cert", "ca", "--out", "OUT", "--days", "0"}, true},
		{"issue without --ca", []string{"cert", "issue", "--name", "x", "--host", "h", "--out", "OUT"}, true},
		{"issue without --out", []string{"cert", "issue", "--ca", ca, "--name", "x", "--host", "h"}, true},
		{"issue without --name", []string{"cert", "issue", "--ca", ca, "--host", "h", "--out", "OUT"}, true},
		{"issue without --host", []string{"cert", "issue", "--ca", ca, "--name", "x", "--out", "OUT"}, true},
		{"issue with an empty --host", []string{"cert", "issue", "--ca", ca, "--name", "x", "--host", ",", "--out", "OUT"}, true},
		{"name leaving --out", []string{"cert", "issue", "--ca", ca, "--name", "../x", "--host", "h", "--out", "OUT"}, true},
		{"name with a slash", []string{"cert", "issue", "--ca", ca, "--name", "a/b", "--host", "h", "--out", "OUT"}, true},
		{"name dot dot", []string{"cert", "issue", "--ca", ca, "--name", "..", "--host", "h", "--out", "OUT"}, true},
		{"host with a URL", []string{"cert", "issue", "--ca", ca, "--name", "x", "--host", "https://h", "--out", "OUT"}, true},
		{"unknown flag", []string{"cert", "issue", "--ca", ca, "--name", "x", "--host", "h", "--out", "OUT", "--rsa"}, true},
		{"missing CA", []string{"cert", "issue", "--ca", "NOCA", "--name", "x", "--host", "h", "--out", "OUT"}, false},
		{"a leaf as the CA", []string{"cert", "issue", "--ca", leafDir, "--name", "x", "--host", "h", "--out", "OUT"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			out := filepath.Join(tmp, "out")
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				switch a {
				case "OUT":
					a = out
				case "NOCA":
					a = filepath.Join(tmp, "noca")
				}
				args[i] = a
			}
			_, _, err := runCmd(t, args...)
			if err == nil {
				t.Fatalf("%q succeeded", args)
			}
			if got := errors.Is(err, errUsage); got != tt.usage {
				t.Errorf("%q: %v; usage error %v, want %v", args, err, got, tt.usage)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%q wrote %s", args, out)
			}
			if _, err := os.Stat(filepath.Join(tmp, "x.pem")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%q wrote outside --out", args)
			}
		})
	}
}

// TestCertHelp: every cert command line asked for help answers on stdout
// with an example and exits 0.
func TestCertHelp(t *testing.T) {
	for _, args := range [][]string{
		{"cert", "-h"}, {"cert", "--help"}, {"help", "cert"},
		{"cert", "ca", "-h"}, {"cert", "ca", "--help"},
		{"cert", "issue", "-h"}, {"cert", "issue", "--help"},
	} {
		out, errOut, err := runCmd(t, args...)
		if err != nil {
			t.Errorf("%q: %v (stderr %q), want exit 0", args, err, errOut)
		}
		if !strings.Contains(out, "Examples:") || !strings.Contains(out, "lakegate cert ") {
			t.Errorf("%q printed no examples:\n%s", args, out)
		}
	}
}
