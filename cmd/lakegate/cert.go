package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// lakegate cert makes the certificates of a development or test
// deployment: a CA (`cert ca`) and certificates it signs (`cert issue`)
// for metasrv nodes, gateways and clients. Keys are ECDSA P-256, written
// with mode 0600 into files that must not exist yet: the command never
// overwrites a key. A production deployment uses its own PKI; this is the
// shortest way to the TLS every non-loopback listener requires.

const (
	certCAFile    = "ca.pem"
	certCAKeyFile = "ca-key.pem"
	// caDays and leafDays are the default validity: long enough for a
	// test deployment, short enough that a forgotten key expires.
	caDays   = 3650
	leafDays = 397
)

// certNameRE is what a certificate's name may be: it becomes file names.
var certNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func init() {
	docs["cert ca"] = cmdDoc{
		usage: "cert ca --out DIR [--name NAME] [--days N]",
		about: "Create a development certificate authority: DIR/ca.pem (the certificate to trust) and\n" +
			"DIR/ca-key.pem (its ECDSA P-256 key, mode 0600). Existing files are never overwritten.\n" +
			"For development and tests; production deployments use their own PKI.",
		examples: "lakegate cert ca --out pki",
	}
	docs["cert issue"] = cmdDoc{
		usage: "cert issue --ca DIR --name NAME --host HOST[,HOST]... --out DIR [--days N]",
		about: "Issue a certificate signed by the CA in DIR (from \"lakegate cert ca\"): OUT/NAME.pem (the\n" +
			"certificate followed by the CA's) and OUT/NAME-key.pem (ECDSA P-256, mode 0600), valid for\n" +
			"each HOST (DNS names or IP addresses) as a server and as a client (metasrv nodes use one\n" +
			"certificate for both ends of Raft's mutual TLS). Existing files are never overwritten.",
		examples: "lakegate cert issue --ca pki --name m1 --host localhost,127.0.0.1 --out pki\n" +
			"lakegate cert issue --ca pki --name gw --host gw.example.com,10.0.0.5 --out /etc/lakegate --days 90",
	}
}

const certUsage = `Make development certificates: a CA, and certificates it signs.

Usage:
  lakegate cert ca --out DIR [--name NAME] [--days N]
  lakegate cert issue --ca DIR --name NAME --host HOST[,HOST]... --out DIR [--days N]

Examples:
  lakegate cert ca --out pki
  lakegate cert issue --ca pki --name m1 --host localhost,127.0.0.1 --out pki

Run "lakegate cert <ca|issue> --help" for a command's flags.
`

// runCert dispatches `lakegate cert ca|issue`.
func runCert(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: cert needs a subcommand, ca or issue (see \"lakegate cert --help\")", errUsage)
	}
	switch args[0] {
	case "-h", "--help", "-help":
		return &helpRequest{text: certUsage}
	case "ca":
		return runCertCA(args[1:], stdout, rand.Reader, time.Now())
	case "issue":
		return runCertIssue(args[1:], stdout, rand.Reader, time.Now())
	}
	return fmt.Errorf("%w: unknown cert subcommand %q: ca or issue (see \"lakegate cert --help\")", errUsage, args[0])
}

func runCertCA(args []string, stdout io.Writer, rnd io.Reader, now time.Time) error {
	fs := newFlagSet("cert ca")
	out := fs.String("out", "", "directory to write ca.pem and ca-key.pem into (created with mode 0700; required)")
	name := fs.String("name", "lakegate development CA", "the CA's common name")
	days := fs.Int("days", caDays, "days the CA is valid")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: cert ca takes no arguments (see \"lakegate cert ca --help\")", errUsage)
	}
	if *out == "" {
		return fmt.Errorf("%w: cert ca needs --out DIR", errUsage)
	}
	if *days < 1 || *days > 36500 {
		return fmt.Errorf("%w: --days %d: want 1 to 36500", errUsage, *days)
	}
	key, serial, err := newKeyAndSerial(rnd, "the CA key")
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: *name, Organization: []string{"lakegate development"}},
		NotBefore:             now.Add(-5 * time.Minute), // tolerate clocks a little behind
		NotAfter:              now.AddDate(0, 0, *days),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true, // signs leaves only
	}
	der, err := x509.CreateCertificate(rnd, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("creating the CA certificate: %w", err)
	}
	certPath, keyPath := filepath.Join(*out, certCAFile), filepath.Join(*out, certCAKeyFile)
	if err := writeCertPair(*out, certPath, keyPath, [][]byte{der}, key); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (trust this) and %s (mode 0600), valid until %s\n",
		certPath, keyPath, tmpl.NotAfter.UTC().Format(time.DateOnly))
	return nil
}

func runCertIssue(args []string, stdout io.Writer, rnd io.Reader, now time.Time) error {
	fs := newFlagSet("cert issue")
	caDir := fs.String("ca", "", "directory holding ca.pem and ca-key.pem (from \"lakegate cert ca\"; required)")
	name := fs.String("name", "", "certificate name: the common name and the file names NAME.pem, NAME-key.pem (required)")
	hosts := fs.String("host", "", "comma-separated DNS names and IP addresses the certificate is valid for (required)")
	out := fs.String("out", "", "directory to write the files into (created with mode 0700; required)")
	days := fs.Int("days", leafDays, "days the certificate is valid (at most the CA's remaining validity)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: cert issue takes no arguments (see \"lakegate cert issue --help\")", errUsage)
	}
	switch {
	case *caDir == "":
		return fmt.Errorf("%w: cert issue needs --ca DIR", errUsage)
	case *out == "":
		return fmt.Errorf("%w: cert issue needs --out DIR", errUsage)
	case !certNameRE.MatchString(*name):
		return fmt.Errorf("%w: --name %q: want 1 to 64 of [A-Za-z0-9._-], beginning with a letter or digit", errUsage, *name)
	case *days < 1 || *days > 36500:
		return fmt.Errorf("%w: --days %d: want 1 to 36500", errUsage, *days)
	}
	var dnsNames []string
	var ips []net.IP
	for _, h := range strings.Split(*hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
			continue
		}
		if strings.ContainsAny(h, " /:@") {
			return fmt.Errorf("%w: --host %q is neither a DNS name nor an IP address", errUsage, h)
		}
		dnsNames = append(dnsNames, h)
	}
	if len(dnsNames)+len(ips) == 0 {
		return fmt.Errorf("%w: cert issue needs --host HOST[,HOST…]", errUsage)
	}
	ca, caKey, caDER, err := loadCA(*caDir)
	if err != nil {
		return err
	}
	notAfter := now.AddDate(0, 0, *days)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter // a leaf outliving its CA would fail verification early anyway
	}
	if !notAfter.After(now) {
		return fmt.Errorf("the CA in %s expired on %s", *caDir, ca.NotAfter.UTC().Format(time.DateOnly))
	}
	key, serial, err := newKeyAndSerial(rnd, "the key")
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: *name, Organization: []string{"lakegate development"}},
		NotBefore:    now.Add(-5 * time.Minute),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Server and client: a metasrv node presents the same certificate
		// when it accepts and when it dials a peer (Raft's mutual TLS).
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		DNSNames:              dnsNames,
		IPAddresses:           ips,
	}
	der, err := x509.CreateCertificate(rnd, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("signing the certificate: %w", err)
	}
	certPath, keyPath := filepath.Join(*out, *name+".pem"), filepath.Join(*out, *name+"-key.pem")
	if err := writeCertPair(*out, certPath, keyPath, [][]byte{der, caDER}, key); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s (mode 0600) for %s, valid until %s\n",
		certPath, keyPath, strings.Join(append(dnsNames, ipStrings(ips)...), ", "), notAfter.UTC().Format(time.DateOnly))
	return nil
}

func ipStrings(ips []net.IP) []string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	return s
}

// certSerial returns a random 128-bit serial number, as RFC 5280 asks
// (positive, unpredictable).
func certSerial(rnd io.Reader) (*big.Int, error) {
	n, err := rand.Int(rnd, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating a serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// newKeyAndSerial generates a P-256 key (what names it in an error) and a
// certificate serial number.
func newKeyAndSerial(rnd io.Reader, what string) (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rnd)
	if err != nil {
		return nil, nil, fmt.Errorf("generating %s: %w", what, err)
	}
	serial, err := certSerial(rnd)
	if err != nil {
		return nil, nil, err
	}
	return key, serial, nil
}

// loadCA reads the CA of `cert ca` from dir and checks that its key
// matches its certificate and that it is a CA.
func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, certCAFile), filepath.Join(dir, certCAKeyFile))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("loading the CA from %s: %w", dir, err)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parsing %s: %w", filepath.Join(dir, certCAFile), err)
	}
	if !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, nil, nil, fmt.Errorf("%s is not a CA certificate", filepath.Join(dir, certCAFile))
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, nil, fmt.Errorf("%s: the CA key is not an ECDSA key", filepath.Join(dir, certCAKeyFile))
	}
	return ca, key, pair.Certificate[0], nil
}

// writeCertPair writes the certificates (PEM, mode 0644) and the key
// (PKCS #8 PEM, mode 0600) into dir, creating it with mode 0700. Neither
// file may exist: a key is never overwritten, and on failure nothing is
// left half written.
func writeCertPair(dir, certPath, keyPath string, ders [][]byte, key *ecdsa.PrivateKey) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, p := range []string{certPath, keyPath} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s exists; remove it or choose another --out or --name", p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checking %s: %w", p, err)
		}
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding the key: %w", err)
	}
	if err := writeNew(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	var certPEM []byte
	for _, der := range ders {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if err := writeNew(certPath, certPEM, 0o644); err != nil {
		os.Remove(keyPath)
		return err
	}
	return nil
}

// writeNew creates path with perm (O_EXCL: never through an existing file
// or symlink) and writes b to it; on failure it removes what it created.
func writeNew(path string, b []byte, perm os.FileMode) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	// The umask may narrow perm; Chmod makes a certificate readable as
	// documented (a key stays 0600 either way).
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
