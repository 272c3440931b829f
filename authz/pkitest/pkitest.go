package pkitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// Cert is a certificate and its key, parsed and as PEM.
type Cert struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	DER     []byte
	CertPEM string
	KeyPEM  string // PKCS #8
}

// NewCA returns a self-signed certificate authority named name.
func NewCA(t testing.TB, name string) *Cert {
	t.Helper()
	return sign(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}, nil)
}

// Issue signs a certificate for tmpl (its serial number and validity are
// set here) with ca.
func (ca *Cert) Issue(t testing.TB, tmpl *x509.Certificate) *Cert {
	t.Helper()
	return sign(t, tmpl, ca)
}

// Host is the template of a certificate named cn for 127.0.0.1 and
// localhost with the given extended key usages (server, client or both).
func Host(cn string, usage ...x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: usage,
	}
}

// TLS returns c as a tls.Certificate.
func (c *Cert) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.DER}, PrivateKey: c.Key, Leaf: c.Cert}
}

// Pool returns a pool trusting c.
func (c *Cert) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.Cert)
	return p
}

// sign creates a P-256 key for tmpl and a certificate signed by parent (or
// self-signed when parent is nil), valid from an hour ago for a day.
func sign(t testing.TB, tmpl *x509.Certificate, parent *Cert) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	issuer, signer := tmpl, key
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{
		Cert:    cert,
		Key:     key,
		DER:     der,
		CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		KeyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})),
	}
}
