package flight

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSFiles names the PEM files of a TLS listener.
type TLSFiles struct {
	// CertFile and KeyFile are the server's certificate chain and key.
	CertFile string
	KeyFile  string
	// ClientCAFile, when set, requires every client to present a certificate
	// signed by one of its CAs (mutual TLS).
	ClientCAFile string
}

// Enabled reports whether a certificate was configured.
func (f TLSFiles) Enabled() bool { return f.CertFile != "" || f.KeyFile != "" }

// ServerTLS loads the files into a server configuration with TLS 1.2 as the
// minimum version.
func ServerTLS(f TLSFiles) (*tls.Config, error) {
	if f.CertFile == "" || f.KeyFile == "" {
		return nil, errors.New("flight: TLS needs both a certificate and a key file")
	}
	cert, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("flight: loading TLS certificate: %w", err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2"},
	}
	if f.ClientCAFile != "" {
		pem, err := os.ReadFile(f.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("flight: reading client CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("flight: client CA file %s holds no PEM certificate", f.ClientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
