package upstream_test

import (
	"context"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"lakegate/authz/pkitest"
	"lakegate/flight/backend"
	"lakegate/flight/backend/upstream"
)

func TestTLS(t *testing.T) {
	ctx := context.Background()
	ca := pkitest.NewCA(t, "upstream-test CA")
	cert, roots := ca.Issue(t, pkitest.Host("upstream-test", x509.ExtKeyUsageServerAuth)).TLS(), ca.Pool()
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
