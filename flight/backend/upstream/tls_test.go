package upstream_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"lakegate/flight/backend"
	"lakegate/flight/backend/upstream"
)

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "upstream-test"},
		NotBefore:             time.Unix(0, 0),
		NotAfter:              time.Now().AddDate(1, 0, 0),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, roots
}

func TestTLS(t *testing.T) {
	ctx := context.Background()
	cert, roots := selfSigned(t)
	eng := newEngine(t, true, true)
	srv := serve(t, "127.0.0.1:0", eng, grpc.Creds(credentials.NewServerTLSFromCert(&cert)))

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, credsName), []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	p := upstream.New(upstream.Config{Allow: []string{srv.addr}, CredentialsDir: dir, RootCAs: roots, Allocator: mem})
	t.Cleanup(func() { p.Close() })
	tgt := upstream.Target{Address: srv.addr, TLS: true, Credentials: credsName}

	eng.setLocations([][]string{{}, {"grpc+tls://" + srv.addr}})
	rr, err := p.Execute(ctx, tgt, fixtureQ)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readAll(t, rr)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(slices.Clone(fixtureRows), fixtureRows...); !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	assertTokenSent(t, srv)

	// A plain-text location on a TLS engine, a plain-text target, and a
	// Pool that does not trust the engine's certificate all fail.
	eng.setLocations([][]string{{"grpc://" + srv.addr}})
	if _, err := p.Execute(ctx, tgt, fixtureQ); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("grpc:// location on a TLS engine: %v, want ErrUnavailable", err)
	}
	eng.setLocations(nil)
	if _, err := p.Execute(ctx, upstream.Target{Address: srv.addr, Credentials: credsName}, fixtureQ); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("plain-text target on a TLS engine: %v, want ErrUnavailable", err)
	}
	untrusting := upstream.New(upstream.Config{Allow: []string{srv.addr}, CredentialsDir: dir, RootCAs: x509.NewCertPool(), Allocator: mem})
	defer untrusting.Close()
	if _, err := untrusting.Schema(ctx, tgt, fixtureQ); !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("untrusted certificate: %v, want ErrUnavailable", err)
	}
}
