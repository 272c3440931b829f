package upstream

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
)

// Target identifies an upstream engine as metasrv's catalog describes it.
type Target struct {
	// Address is host:port; it must be in Config.Allow.
	Address string
	// TLS connects with TLS (Config.RootCAs); false connects in clear text.
	TLS bool
	// Credentials is a file name inside Config.CredentialsDir holding the
	// bearer token; "" sends no credentials.
	Credentials string
}

// maxTokenFile bounds a credentials file.
const maxTokenFile = 64 << 10

// checkAddress reports whether addr is host:port with a non-empty host and a
// port in 1..65535. The error never echoes addr.
func checkAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return fmt.Errorf("%w: address is not host:port", ErrInvalidTarget)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return fmt.Errorf("%w: port out of range", ErrInvalidTarget)
	}
	return nil
}

// validCredentialsName reports whether name is a plain file name:
// [A-Za-z0-9][A-Za-z0-9._-]{0,127} without "..".
func validCredentialsName(name string) bool {
	if len(name) == 0 || len(name) > 128 || strings.Contains(name, "..") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// admit checks t against the configuration before anything is sent: the
// address is well formed and allowed, the credentials name is a plain file
// name. It returns the token to send ("" for none).
func (p *Pool) admit(t Target) (string, error) {
	if err := checkAddress(t.Address); err != nil {
		return "", err
	}
	if !p.allowed(t.Address) {
		return "", fmt.Errorf("upstream: target: %w", ErrNotAllowed)
	}
	if !t.TLS && !p.plaintextOK(t.Address) {
		return "", fmt.Errorf("upstream: target without TLS: %w", ErrNotAllowed)
	}
	if t.Credentials == "" {
		return "", nil
	}
	if !validCredentialsName(t.Credentials) {
		return "", fmt.Errorf("%w: credentials must name a plain file", ErrInvalidTarget)
	}
	return p.readToken(t.Credentials)
}

func (p *Pool) allowed(addr string) bool {
	_, ok := p.allow[addr]
	return ok
}

// plaintextOK reports whether addr may be reached without TLS: with
// Config.AllowPlaintext, or on a loopback address (the token never leaves
// the machine).
func (p *Pool) plaintextOK(addr string) bool {
	if p.cfg.AllowPlaintext {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readToken reads the token in the credentials file name through os.Root on
// Config.CredentialsDir. Errors name the file, never its content.
func (p *Pool) readToken(name string) (string, error) {
	fail := func(why string, cause error) (string, error) {
		if cause != nil {
			return "", fmt.Errorf("upstream: credentials file %q: %w: %s: %w", name, ErrCredentials, why, cause)
		}
		return "", fmt.Errorf("upstream: credentials file %q: %w: %s", name, ErrCredentials, why)
	}
	if p.cfg.CredentialsDir == "" {
		return fail("no credentials directory configured", nil)
	}
	root, err := os.OpenRoot(p.cfg.CredentialsDir)
	if err != nil {
		return fail("cannot open the credentials directory", nil)
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			// The path in it is name itself; keep only the reason.
			return fail("cannot open", pe.Err)
		}
		return fail("cannot open", nil)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return fail("not a regular file", nil)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return fail("cannot read", nil)
	}
	if len(b) > maxTokenFile {
		return fail("file too large", nil)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return fail("file is empty", nil)
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < 0x21 || tok[i] > 0x7e {
			return fail("content is not a single bearer token", nil)
		}
	}
	return tok, nil
}

// connKey identifies a pooled connection.
type connKey struct {
	addr string
	tls  bool
}

// endpointKey decides where an endpoint is read: on the connection the
// FlightInfo came from (no location, or the reuse-connection location among
// its locations), or on the first location that is a grpc, grpc+tcp or
// grpc+tls URI of an allowed host:port. Otherwise ErrNotAllowed.
func (p *Pool) endpointKey(origin connKey, ep *flight.FlightEndpoint) (connKey, error) {
	if len(ep.GetLocation()) == 0 {
		return origin, nil
	}
	for _, loc := range ep.GetLocation() {
		if loc.GetUri() == flight.LocationReuseConnection {
			return origin, nil
		}
	}
	for _, loc := range ep.GetLocation() {
		if key, ok := p.parseLocation(loc.GetUri()); ok {
			return key, nil
		}
	}
	return connKey{}, fmt.Errorf("upstream: endpoint location: %w", ErrNotAllowed)
}

func (p *Pool) parseLocation(uri string) (connKey, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
		(u.Path != "" && u.Path != "/") {
		return connKey{}, false
	}
	var tls bool
	switch u.Scheme {
	case "grpc", "grpc+tcp":
	case "grpc+tls":
		tls = true
	default:
		return connKey{}, false
	}
	if checkAddress(u.Host) != nil || !p.allowed(u.Host) || (!tls && !p.plaintextOK(u.Host)) {
		return connKey{}, false
	}
	return connKey{addr: u.Host, tls: tls}, true
}
