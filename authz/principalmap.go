package authz

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxMapSize is the largest principal map accepted, in bytes.
const maxMapSize = 1 << 20

// The principal map file shape (README, "Principal map").
// Field names are part of the contract.
type mapFile struct {
	Principals []mapPrincipal `yaml:"principals"`
	OIDC       *mapOIDC       `yaml:"oidc,omitempty"`
}

type mapPrincipal struct {
	ID              string     `yaml:"id"`
	Tenant          string     `yaml:"tenant"`
	Role            string     `yaml:"role"`
	Namespaces      []string   `yaml:"namespaces,omitempty,flow"`
	DelegateTenants []string   `yaml:"delegate_tenants,omitempty,flow"`
	Tokens          []mapToken `yaml:"tokens,omitempty"`
}

type mapToken struct {
	SHA256 string `yaml:"sha256"`
}

// PrincipalMap is a validated principal map: principals and the SHA-256
// hashes of their tokens. It is immutable and safe for use from multiple
// goroutines. Token rotation means editing the file and reloading it
// (Principals.Reload).
type PrincipalMap struct {
	principals []*Principal  // sorted by id
	hashes     [][]TokenHash // hashes[i] belong to principals[i], in file order
	providers  []*Provider   // the oidc section, in file order
}

// Providers returns the OIDC providers of the map's oidc section, in file
// order (nil when there is none). The Providers are shared (immutable).
func (m *PrincipalMap) Providers() []*Provider { return slices.Clone(m.providers) }

// Principals returns the principals sorted by id. The slice is a copy; the
// Principals are shared (they are immutable).
func (m *PrincipalMap) Principals() []*Principal { return slices.Clone(m.principals) }

// Len returns the number of principals.
func (m *PrincipalMap) Len() int { return len(m.principals) }

// ParsePrincipalMap decodes and validates a principal map. Decoding is strict:
// exactly one YAML document, no unknown fields. It refuses an empty map,
// invalid ids, tenants, roles and namespaces, principals without tokens,
// token hashes that are not 64 hex characters (either case), the hash of the
// empty token, any token hash that appears twice, and duplicate principal ids.
// A principal may have no token only if it is a user whose tenant an OIDC
// provider serves (it signs in with a JWT only). The optional oidc section is
// validated as strictly (see Provider). Content errors are *MapError values wrapping ErrInvalidMap; no error message
// contains a token hash.
func ParsePrincipalMap(data []byte) (*PrincipalMap, error) {
	if len(data) > maxMapSize {
		return nil, &MapError{Index: -1, Rule: fmt.Sprintf("larger than %d bytes", maxMapSize)}
	}
	var f mapFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &MapError{Index: -1, Rule: "empty: no principals"}
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &MapError{Index: -1, Rule: "must hold exactly one YAML document"}
	}
	if len(f.Principals) == 0 {
		return nil, &MapError{Index: -1, Rule: "empty: no principals"}
	}
	providers, err := parseProviders(f.OIDC)
	if err != nil {
		return nil, err
	}
	jwtOnly := func(p *Principal) bool {
		if p.role != RoleUser {
			return false
		}
		for _, pv := range providers {
			if pv.serves(p.tenant) {
				return true
			}
		}
		return false
	}

	type hashOwner struct{ principal, token int }
	var (
		owners = make(map[TokenHash]hashOwner)
		ids    = make(map[PrincipalID]int, len(f.Principals))
		m      = &PrincipalMap{
			principals: make([]*Principal, 0, len(f.Principals)),
			hashes:     make([][]TokenHash, 0, len(f.Principals)),
		}
	)
	for i, mp := range f.Principals {
		fail := func(rule string, err error) error {
			return &MapError{Index: i, Principal: printableID(mp.ID), Rule: rule, Err: err}
		}
		p, err := mp.principal(fail)
		if err != nil {
			return nil, err
		}
		if j, dup := ids[p.id]; dup {
			return nil, fail(fmt.Sprintf("duplicate id (also principals[%d])", j), nil)
		}
		ids[p.id] = i
		if len(mp.Tokens) == 0 && !jwtOnly(p) {
			return nil, fail("needs at least one token", nil)
		}
		hs := make([]TokenHash, 0, len(mp.Tokens))
		for k, t := range mp.Tokens {
			h, err := parseTokenHash(t.SHA256)
			if err != nil {
				return nil, fail("tokens["+strconv.Itoa(k)+"]: "+err.Error(), nil)
			}
			if h == emptyTokenHash {
				return nil, fail("tokens["+strconv.Itoa(k)+"]: sha256 is the hash of the empty token", nil)
			}
			if o, dup := owners[h]; dup {
				return nil, fail(fmt.Sprintf("tokens[%d]: duplicate sha256 (also principals[%d].tokens[%d])", k, o.principal, o.token), nil)
			}
			owners[h] = hashOwner{i, k}
			hs = append(hs, h)
		}
		m.principals = append(m.principals, p)
		m.hashes = append(m.hashes, hs)
	}
	order := make([]int, len(m.principals))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return strings.Compare(m.principals[a].id.s, m.principals[b].id.s)
	})
	sorted := &PrincipalMap{principals: make([]*Principal, len(order)), hashes: make([][]TokenHash, len(order)), providers: providers}
	for to, from := range order {
		sorted.principals[to], sorted.hashes[to] = m.principals[from], m.hashes[from]
	}
	return sorted, nil
}

// principal validates the identity fields through the value objects.
func (mp *mapPrincipal) principal(fail func(string, error) error) (*Principal, error) {
	id, err := ParsePrincipalID(mp.ID)
	if err != nil {
		return nil, fail("id", err)
	}
	tenant, err := ParseTenantID(mp.Tenant)
	if err != nil {
		return nil, fail("tenant", err)
	}
	role, err := ParseRole(mp.Role)
	if err != nil {
		return nil, fail("role", err)
	}
	var nss []Namespace
	for k, s := range mp.Namespaces {
		ns, err := ParseNamespace(s)
		if err != nil {
			return nil, fail("namespaces["+strconv.Itoa(k)+"]", err)
		}
		nss = append(nss, ns)
	}
	var dts []TenantID
	for k, s := range mp.DelegateTenants {
		t, err := ParseTenantID(s)
		if err != nil {
			return nil, fail("delegate_tenants["+strconv.Itoa(k)+"]", err)
		}
		dts = append(dts, t)
	}
	p, err := NewPrincipal(id, tenant, role, nss, dts)
	if err != nil {
		return nil, fail("principal", err)
	}
	return p, nil
}

var (
	// hexRunRE finds long hex runs: a principal id containing one is not
	// echoed, in case a hash was pasted into the id field.
	hexRunRE = regexp.MustCompile(`[0-9A-Fa-f]{32,}`)
	// yamlLineRE extracts the line number from a yaml.v3 message.
	yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)
	// quotedRE and longRunRE redact input echoed by yaml.v3 messages.
	quotedRE  = regexp.MustCompile("`[^`]*`" + `|"(?:[^"\\]|\\.)*"|'[^']*'`)
	longRunRE = regexp.MustCompile(`[A-Za-z0-9_\-+/=]{16,}`)
)

// printableID returns s if it is a valid principal id that does not look
// like a token or a hash, else "".
func printableID(s string) string {
	if _, err := ParsePrincipalID(s); err != nil || hexRunRE.MatchString(s) || strings.Contains(s, tokenPrefix) {
		return ""
	}
	return s
}

// yamlError converts a yaml.v3 error into a *MapError whose Rule keeps the
// line number and the kind of problem but redacts echoed input.
func yamlError(err error) error {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = te.Errors
	}
	e := &MapError{Index: -1}
	for i, msg := range msgs {
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			if i == 0 {
				e.Line, _ = strconv.Atoi(m[1])
			}
			msg = msg[len(m[0]):]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		msg = quotedRE.ReplaceAllStringFunc(msg, func(q string) string {
			if len(q) <= 3 { // an indicator such as '-'
				return q
			}
			return "<redacted>"
		})
		msg = longRunRE.ReplaceAllString(msg, "<redacted>")
		if i == 0 {
			e.Rule = "YAML: " + msg
		} else {
			e.Rule += fmt.Sprintf(" (and %d more)", len(msgs)-1)
			break
		}
	}
	return e
}

// PrincipalSpec describes one principal for EncodePrincipalMap, in the
// textual form of the map file. TokenHashes are 64 hex characters each (see
// TokenHash.String).
type PrincipalSpec struct {
	ID, Tenant, Role string
	Namespaces       []string
	DelegateTenants  []string
	TokenHashes      []string
}

// EncodePrincipalMap renders specs as a principal map file in the documented
// shape, omitting empty lists. Hashes are written in lower case. The result
// is validated with ParsePrincipalMap, whose error is returned if it fails.
func EncodePrincipalMap(specs []PrincipalSpec) ([]byte, error) {
	f := mapFile{Principals: make([]mapPrincipal, len(specs))}
	for i, s := range specs {
		mp := mapPrincipal{
			ID:              s.ID,
			Tenant:          s.Tenant,
			Role:            s.Role,
			Namespaces:      s.Namespaces,
			DelegateTenants: s.DelegateTenants,
			Tokens:          make([]mapToken, len(s.TokenHashes)),
		}
		for k, h := range s.TokenHashes {
			mp.Tokens[k].SHA256 = strings.ToLower(h)
		}
		f.Principals[i] = mp
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&f); err != nil {
		return nil, fmt.Errorf("authz: encoding principal map: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("authz: encoding principal map: %w", err)
	}
	if _, err := ParsePrincipalMap(buf.Bytes()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WritePrincipalMap encodes specs and writes them to a new file at path with
// mode 0600, synced to stable storage. It refuses to overwrite an existing
// file (or follow a symlink there), and removes a partially written file.
func WritePrincipalMap(path string, specs []PrincipalSpec) (err error) {
	data, err := EncodePrincipalMap(specs)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("authz: writing principal map: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
			err = fmt.Errorf("authz: writing principal map: %w", err)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// String describes m without its token hashes.
func (m *PrincipalMap) String() string {
	return "authz.PrincipalMap{" + strconv.Itoa(len(m.principals)) + " principals}"
}

// GoString is String, so that %#v does not print token hashes either.
func (m *PrincipalMap) GoString() string { return m.String() }

// With returns a new map holding m's principals and p, authenticated by the
// token hashes hs. A process uses it for principals it mints for itself and
// never writes to a file (the all-in-one server's gateway identity towards
// its embedded metasrv). It refuses a duplicate id or token hash, or no
// hash. m is unchanged.
func (m *PrincipalMap) With(p *Principal, hs ...TokenHash) (*PrincipalMap, error) {
	if p == nil || len(hs) == 0 {
		return nil, fmt.Errorf("%w: a principal with at least one token hash is required", ErrInvalidMap)
	}
	seen := make(map[TokenHash]bool)
	for _, h := range hs {
		if h == emptyTokenHash || seen[h] {
			return nil, fmt.Errorf("%w: invalid or duplicate token hash", ErrInvalidMap)
		}
		seen[h] = true
	}
	for i, q := range m.principals {
		if q.id == p.id {
			return nil, fmt.Errorf("%w: duplicate id", ErrInvalidMap)
		}
		for _, h := range m.hashes[i] {
			if seen[h] {
				return nil, fmt.Errorf("%w: duplicate token hash", ErrInvalidMap)
			}
		}
	}
	i, _ := slices.BinarySearchFunc(m.principals, p, func(a, b *Principal) int { return strings.Compare(a.id.s, b.id.s) })
	out := &PrincipalMap{
		principals: slices.Insert(slices.Clone(m.principals), i, p),
		hashes:     slices.Insert(slices.Clone(m.hashes), i, slices.Clone(hs)),
		providers:  m.providers,
	}
	return out, nil
}
