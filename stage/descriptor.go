package stage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// DescriptorVersion is the only descriptor version this package reads and
// writes.
const DescriptorVersion = 1

// Descriptor says where a stage lives. It never holds credentials: a program
// that opens it brings its own (the AWS SDK's default chain). Exactly one of
// Local and S3 is set. The JSON form is
//
//	{"version":1,"s3":{"bucket":"lake","prefix":"prod","region":"us-east-1"}}
//	{"version":1,"local":{"root":"/var/lib/lakegate/stage"}}
//
// and decoding (UnmarshalJSON, ParseDescriptor) is strict: unknown fields,
// trailing data and invalid descriptors are rejected.
type Descriptor struct {
	Version int              `json:"version"`
	Local   *LocalDescriptor `json:"local,omitempty"`
	S3      *S3Descriptor    `json:"s3,omitempty"`
}

// LocalDescriptor is a stage in a local directory.
type LocalDescriptor struct {
	// Root is an absolute, clean directory path, not "/".
	Root string `json:"root"`
}

// S3Descriptor is a stage under a key prefix of an S3 bucket.
type S3Descriptor struct {
	// Bucket is a DNS-safe bucket name: 3–63 of [a-z0-9.-], starting and
	// ending with a letter or digit, no "..", not an IPv4 address.
	Bucket string `json:"bucket"`
	// Prefix is the stage's key prefix without leading or trailing '/':
	// non-empty, of [A-Za-z0-9._=-] segments joined by single '/', no
	// segment starting with '.'.
	Prefix string `json:"prefix"`
	// Region; empty means the SDK's configured region, else us-east-1.
	Region string `json:"region,omitempty"`
	// Endpoint is an http(s) base URL without user info, query or fragment;
	// empty means AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL from the opening
	// process's environment, else AWS (see OpenS3).
	Endpoint string `json:"endpoint,omitempty"`
	// PathStyle selects path-style addressing (LocalStack, the stand-in,
	// MinIO); false means virtual-hosted style.
	PathStyle bool `json:"path_style,omitempty"`
}

// ParseDescriptor decodes and validates a descriptor's JSON form.
func ParseDescriptor(data []byte) (Descriptor, error) {
	var d Descriptor
	if err := d.UnmarshalJSON(data); err != nil {
		return Descriptor{}, err
	}
	return d, nil
}

// UnmarshalJSON decodes strictly (unknown fields and trailing data are
// errors) and validates.
func (d *Descriptor) UnmarshalJSON(data []byte) error {
	type plain Descriptor
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidDescriptor, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the descriptor", ErrInvalidDescriptor)
	}
	nd := Descriptor(p)
	if err := nd.Validate(); err != nil {
		return err
	}
	*d = nd
	return nil
}

// Validate checks the version, that exactly one backend is set, and the
// backend's fields. Errors wrap ErrInvalidDescriptor and name the bad value.
func (d Descriptor) Validate() error {
	if d.Version != DescriptorVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrInvalidDescriptor, d.Version, DescriptorVersion)
	}
	switch {
	case d.Local != nil && d.S3 != nil:
		return fmt.Errorf("%w: both local and s3 are set", ErrInvalidDescriptor)
	case d.Local != nil:
		return d.Local.validate()
	case d.S3 != nil:
		return d.S3.validate()
	}
	return fmt.Errorf("%w: no backend (local or s3)", ErrInvalidDescriptor)
}

func (l *LocalDescriptor) validate() error {
	r := l.Root
	if !filepath.IsAbs(r) || filepath.Clean(r) != r || r == string(filepath.Separator) {
		return fmt.Errorf("%w: local root %q must be an absolute, clean path other than /", ErrInvalidDescriptor, r)
	}
	if len(r)+2 > MaxKeyLen || strings.ContainsFunc(r, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return fmt.Errorf("%w: local root %s is too long or has control characters", ErrInvalidDescriptor, SafeKey(r))
	}
	return nil
}

func (s *S3Descriptor) validate() error {
	if err := validBucket(s.Bucket); err != nil {
		return fmt.Errorf("%w: bucket %s: %v", ErrInvalidDescriptor, SafeKey(s.Bucket), err)
	}
	// A prefix obeys the key rules; reuse the one checker with a sentinel root.
	if err := CheckKey("x", "x/"+s.Prefix); err != nil {
		return fmt.Errorf("%w: prefix %s: %v", ErrInvalidDescriptor, SafeKey(s.Prefix), err)
	}
	for _, c := range s.Region {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("%w: region %s", ErrInvalidDescriptor, SafeKey(s.Region))
		}
	}
	if s.Endpoint != "" {
		u, err := url.Parse(s.Endpoint)
		switch {
		case err != nil:
			return fmt.Errorf("%w: endpoint %s: %v", ErrInvalidDescriptor, SafeKey(s.Endpoint), err)
		case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.User != nil,
			u.RawQuery != "", u.Fragment != "", u.Opaque != "":
			return fmt.Errorf("%w: endpoint %s must be an http(s) URL without user info, query or fragment",
				ErrInvalidDescriptor, SafeKey(s.Endpoint))
		}
	}
	return nil
}

func validBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return errors.New("length must be 3–63")
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return errors.New("only a-z 0-9 . - are allowed")
		}
	}
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
	if !alnum(b[0]) || !alnum(b[len(b)-1]) {
		return errors.New("must start and end with a letter or digit")
	}
	if strings.Contains(b, "..") || strings.Contains(b, ".-") || strings.Contains(b, "-.") {
		return errors.New(`must not contain "..", ".-" or "-."`)
	}
	if looksLikeIPv4(b) {
		return errors.New("must not look like an IP address")
	}
	return nil
}

func looksLikeIPv4(b string) bool {
	parts := strings.Split(b, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// ValidTenant reports whether t is a valid tenant name for ForTenant: 1–64
// of [A-Za-z0-9_-], starting and ending with a letter or digit.
func ValidTenant(t string) bool {
	if len(t) < 1 || len(t) > 64 {
		return false
	}
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
	for i := 0; i < len(t); i++ {
		if c := t[i]; !alnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return alnum(t[0]) && alnum(t[len(t)-1])
}

// ForTenant returns the tenant's child stage: the same backend with
// "/tenants/<tenant>" appended to the local root or S3 prefix. d must be
// valid. Children never overlap: no tenant's prefix is a prefix of
// another's once the containment check appends '/'.
func (d Descriptor) ForTenant(tenant string) (Descriptor, error) {
	if err := d.Validate(); err != nil {
		return Descriptor{}, err
	}
	if !ValidTenant(tenant) {
		return Descriptor{}, fmt.Errorf("%w: tenant %s must be 1–64 of [A-Za-z0-9_-], alphanumeric at both ends",
			ErrInvalidDescriptor, SafeKey(tenant))
	}
	c := Descriptor{Version: d.Version}
	if d.Local != nil {
		c.Local = &LocalDescriptor{Root: filepath.Join(d.Local.Root, "tenants", tenant)}
	} else {
		s := *d.S3
		s.Prefix = s.Prefix + "/tenants/" + tenant
		c.S3 = &s
	}
	if err := c.Validate(); err != nil {
		return Descriptor{}, err
	}
	return c, nil
}

// String describes the descriptor for logs (it holds no secrets).
func (d Descriptor) String() string {
	switch {
	case d.Local != nil && d.S3 == nil:
		return "local:" + d.Local.Root
	case d.S3 != nil && d.Local == nil:
		return "s3://" + d.S3.Bucket + "/" + d.S3.Prefix
	}
	return "invalid stage descriptor"
}
