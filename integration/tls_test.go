package integration_test

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	drv "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"

	"lakegate/authz/pkitest"
)

// TestTLS runs `lakegate serve` with a TLS listener, then with mutual TLS,
// and checks which clients get through. Every certificate is generated here:
//
//	serverCA ── server (IP 127.0.0.1, DNS localhost)
//	otherCA  ── otherClient (a client certificate the server must not accept)
//	clientCA ── client
//
// A client certificate never replaces the bearer token: with mTLS the token is
// still what identifies the principal.
func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("server certificate", func(t *testing.T) {
		srv := startServe(t, "--tls-cert", pki.serverCert, "--tls-key", pki.serverKey)
		if !strings.Contains(srv.Banner, "grpc+tls://"+srv.Addr) {
			t.Errorf("banner does not announce grpc+tls://%s:\n%s", srv.Addr, srv.Banner)
		}
		tok := srv.token(t, "analyst@demo")
		_, port, err := net.SplitHostPort(srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			uri  string
			opts map[string]string
			ok   bool
		}{
			{"trusting the CA", "grpc+tls://" + srv.Addr, mergeOpts(bearer(tok), trustCA(pki.serverCAPEM)), true},
			{"trusting the CA, name localhost", "grpc+tls://" + srv.Addr,
				mergeOpts(bearer(tok), trustCA(pki.serverCAPEM), map[string]string{drv.OptionSSLOverrideHostname: "localhost"}), true},
			{"trusting another CA", "grpc+tls://" + srv.Addr, mergeOpts(bearer(tok), trustCA(pki.otherCAPEM)), false},
			{"system roots only", "grpc+tls://" + srv.Addr, bearer(tok), false},
			{"name not in the certificate", "grpc+tls://" + srv.Addr,
				mergeOpts(bearer(tok), trustCA(pki.serverCAPEM), map[string]string{drv.OptionSSLOverrideHostname: "lakegate.example"}), false},
			{"plaintext client", "grpc://127.0.0.1:" + port, bearer(tok), false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rows, err := tlsQuery(ctx, t, tt.uri, tt.opts, "SELECT 1")
				if tt.ok {
					if err != nil || len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] != "1" {
						t.Fatalf("SELECT 1 = %v, %v", rows, err)
					}
					return
				}
				if err == nil {
					t.Fatalf("SELECT 1 succeeded (%v), want a connection failure", rows)
				}
				t.Logf("refused as expected: %v", err)
			})
		}
	})

	t.Run("mutual TLS", func(t *testing.T) {
		srv := startServe(t, "--tls-cert", pki.serverCert, "--tls-key", pki.serverKey, "--tls-client-ca", pki.clientCAFile)
		if !strings.Contains(srv.Banner, "grpc+tls://"+srv.Addr) {
			t.Errorf("banner does not announce grpc+tls://%s:\n%s", srv.Addr, srv.Banner)
		}
		uri := "grpc+tls://" + srv.Addr
		analyst, hr := srv.token(t, "analyst@demo"), srv.token(t, "hr@demo")
		base := trustCA(pki.serverCAPEM)
		withCert := mergeOpts(base, withClientCert(pki.clientPEM, pki.clientKeyPEM))
		withOtherCert := mergeOpts(base, withClientCert(pki.otherClientPEM, pki.otherClientKeyPEM))

		const (
			ok = iota
			refused
			unauthenticated
		)
		tests := []struct {
			name string
			opts map[string]string
			sql  string
			want int
			rows string // the single value of the single row, when ok
		}{
			{"analyst with certificate", mergeOpts(withCert, bearer(analyst)), "SELECT count(*) FROM sales.orders", ok, "5000"},
			{"analyst with certificate reads rows", mergeOpts(withCert, bearer(analyst)), "SELECT max(id) FROM sales.orders WHERE status = 'shipped'", ok, "4999"},
			{"hr with the same certificate", mergeOpts(withCert, bearer(hr)), "SELECT count(*) FROM hr.employees", ok, "500"},
			{"no client certificate", mergeOpts(base, bearer(analyst)), "SELECT 1", refused, ""},
			{"certificate from another CA", mergeOpts(withOtherCert, bearer(analyst)), "SELECT 1", refused, ""},
			{"certificate, wrong token", mergeOpts(withCert, bearer("lg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")), "SELECT 1", unauthenticated, ""},
			{"certificate, no token", withCert, "SELECT 1", unauthenticated, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rows, err := tlsQuery(ctx, t, uri, tt.opts, tt.sql)
				switch tt.want {
				case ok:
					if err != nil || len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] != tt.rows {
						t.Fatalf("%s = %v, %v; want [[%s]]", tt.sql, rows, err, tt.rows)
					}
				case refused:
					if err == nil {
						t.Fatalf("%s succeeded (%v), want the TLS handshake refused", tt.sql, rows)
					}
					if adbcStatus(err) == adbc.StatusUnauthenticated {
						// The handshake must fail before any token is looked at.
						t.Fatalf("err = %v: reached token authentication, want a TLS failure", err)
					}
					t.Logf("refused as expected: %v", err)
				case unauthenticated:
					if adbcStatus(err) != adbc.StatusUnauthenticated {
						t.Fatalf("err = %v, want Unauthenticated", err)
					}
				}
			})
		}
	})
}

// tlsQuery connects and runs sql, returning the first error of either step.
func tlsQuery(ctx context.Context, t *testing.T, uri string, opts map[string]string, sql string) ([][]string, error) {
	t.Helper()
	c, err := dial(t, uri, opts)
	if err != nil {
		return nil, err
	}
	_, rows, err := c.query(ctx, sql)
	return rows, err
}

// mergeOpts merges option maps; later maps win.
func mergeOpts(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// trustCA makes the client verify the server against caPEM only.
func trustCA(caPEM string) map[string]string {
	return map[string]string{drv.OptionSSLRootCerts: caPEM}
}

// withClientCert makes the client present a certificate.
func withClientCert(certPEM, keyPEM string) map[string]string {
	return map[string]string{drv.OptionMTLSCertChain: certPEM, drv.OptionMTLSPrivateKey: keyPEM}
}

// testPKI holds the generated certificates: file paths for the server's
// flags, PEM text for the client options.
type testPKI struct {
	serverCert, serverKey, clientCAFile string

	serverCAPEM, otherCAPEM           string
	clientPEM, clientKeyPEM           string
	otherClientPEM, otherClientKeyPEM string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	serverCA := pkitest.NewCA(t, "lakegate test server CA")
	otherCA := pkitest.NewCA(t, "unrelated test CA")
	clientCA := pkitest.NewCA(t, "lakegate test client CA")

	server := serverCA.Issue(t, pkitest.Host("localhost", x509.ExtKeyUsageServerAuth))
	clientTmpl := func(cn string) *x509.Certificate {
		return &x509.Certificate{
			Subject:     pkix.Name{CommonName: cn},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
	}
	client := clientCA.Issue(t, clientTmpl("analyst-laptop"))
	otherClient := otherCA.Issue(t, clientTmpl("stranger"))

	p := &testPKI{
		serverCert:   writeCertFile(t, dir, "server.crt", server.CertPEM, 0o644),
		serverKey:    writeCertFile(t, dir, "server.key", server.KeyPEM, 0o600),
		clientCAFile: writeCertFile(t, dir, "client-ca.crt", clientCA.CertPEM, 0o644),

		serverCAPEM:       serverCA.CertPEM,
		otherCAPEM:        otherCA.CertPEM,
		clientPEM:         client.CertPEM,
		clientKeyPEM:      client.KeyPEM,
		otherClientPEM:    otherClient.CertPEM,
		otherClientKeyPEM: otherClient.KeyPEM,
	}
	// Files for the CAs and client too, for debugging a failed run by hand.
	writeCertFile(t, dir, "server-ca.crt", serverCA.CertPEM, 0o644)
	writeCertFile(t, dir, "other-ca.crt", otherCA.CertPEM, 0o644)
	writeCertFile(t, dir, "client.crt", client.CertPEM, 0o644)
	writeCertFile(t, dir, "client.key", client.KeyPEM, 0o600)
	return p
}

// writeCertFile writes data to dir/name with mode perm and returns the path.
func writeCertFile(t *testing.T, dir, name, data string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
