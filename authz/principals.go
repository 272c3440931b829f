package authz

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// PrincipalsConfig configures LoadPrincipals and NewPrincipals.
type PrincipalsConfig struct {
	// Keys makes the key sources of the maps' OIDC providers (see
	// AuthConfig.Keys). Keep one for the process so reloads keep cached
	// keys.
	Keys KeySets
	// Now is the JWT clock (AuthConfig.Now); nil means time.Now.
	Now func() time.Time
	// Prepare, if set, derives the map in force from every loaded map, for
	// principals a process mints for itself (PrincipalMap.With). Its error
	// refuses the map like a validation error.
	Prepare func(*PrincipalMap) (*PrincipalMap, error)
}

// Principals holds the principal map in force and its Authenticator, and
// replaces both, whole, on Reload: an invalid new map is refused and the
// old one stays in force. It is safe for use from multiple goroutines;
// authentication never waits for a reload.
type Principals struct {
	cfg      PrincipalsConfig
	mu       sync.Mutex // serialises reloads
	cur      atomic.Pointer[Snapshot]
	reloaded atomic.Uint64
	refused  atomic.Uint64
}

// Snapshot is one map in force, its Authenticator and its generation. It is
// immutable.
type Snapshot struct {
	m   *PrincipalMap
	a   *Authenticator
	gen uint64
}

// Map returns the snapshot's map.
func (s *Snapshot) Map() *PrincipalMap { return s.m }

// Authenticator returns the snapshot's Authenticator.
func (s *Snapshot) Authenticator() *Authenticator { return s.a }

// Generation returns the snapshot's generation: 1 for the first map, one
// more for every accepted reload. A ticket or session that records the
// generation it was issued under can tell that the map changed since.
func (s *Snapshot) Generation() uint64 { return s.gen }

// LoadPrincipals loads the map at path (LoadPrincipalMap) and builds its
// Authenticator; this is generation 1.
func LoadPrincipals(path string, cfg PrincipalsConfig) (*Principals, error) {
	m, err := LoadPrincipalMap(path)
	if err != nil {
		return nil, err
	}
	return NewPrincipals(m, cfg)
}

// NewPrincipals holds m (after cfg.Prepare) as generation 1.
func NewPrincipals(m *PrincipalMap, cfg PrincipalsConfig) (*Principals, error) {
	p := &Principals{cfg: cfg}
	s, err := p.build(m, 1)
	if err != nil {
		return nil, err
	}
	p.cur.Store(s)
	return p, nil
}

// build prepares m and makes its Authenticator.
func (p *Principals) build(m *PrincipalMap, gen uint64) (*Snapshot, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no map", ErrInvalidMap)
	}
	if p.cfg.Prepare != nil {
		var err error
		if m, err = p.cfg.Prepare(m); err != nil {
			return nil, err
		}
	}
	a, err := NewAuthenticatorWith(m, AuthConfig{Keys: p.cfg.Keys, Now: p.cfg.Now})
	if err != nil {
		return nil, err
	}
	return &Snapshot{m: m, a: a, gen: gen}, nil
}

// Reload loads the map at path with the checks of LoadPrincipalMap (file
// safety, full validation, the providers' key files) and puts it in force
// as the next generation. On any error the map in force is unchanged, the
// refusal is counted (Reloads) and the error says why; it never contains a
// token or a hash. Callers log it.
func (p *Principals) Reload(path string) error {
	m, err := LoadPrincipalMap(path)
	if err != nil {
		p.refused.Add(1)
		return fmt.Errorf("authz: reload refused, the previous principal map stays in force: %w", err)
	}
	return p.Replace(m)
}

// Replace is Reload for a map already parsed.
func (p *Principals) Replace(m *PrincipalMap) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, err := p.build(m, p.cur.Load().gen+1)
	if err != nil {
		p.refused.Add(1)
		return fmt.Errorf("authz: reload refused, the previous principal map stays in force: %w", err)
	}
	p.cur.Store(s)
	p.reloaded.Add(1)
	return nil
}

// Current returns the snapshot in force.
func (p *Principals) Current() *Snapshot { return p.cur.Load() }

// Generation returns the generation in force.
func (p *Principals) Generation() uint64 { return p.cur.Load().gen }

// Reloads returns how many reloads were accepted and how many refused.
func (p *Principals) Reloads() (accepted, refused uint64) {
	return p.reloaded.Load(), p.refused.Load()
}

// AuthenticateReason authenticates token against the map in force (see
// Authenticator.AuthenticateReason).
func (p *Principals) AuthenticateReason(ctx context.Context, token string) (*Principal, FailureReason, error) {
	return p.cur.Load().a.AuthenticateReason(ctx, token)
}

// AuthenticateBasicReason authenticates id and token against the map in
// force (see Authenticator.AuthenticateBasicReason).
func (p *Principals) AuthenticateBasicReason(ctx context.Context, id, token string) (*Principal, FailureReason, error) {
	return p.cur.Load().a.AuthenticateBasicReason(ctx, id, token)
}

// Holds reports whether the map in force still admits pr with the same
// grants (Authenticator.Holds): the check for a ticket or session issued
// under an older generation. A removed principal fails it on its next call.
func (p *Principals) Holds(pr *Principal, now time.Time) bool {
	return p.cur.Load().a.Holds(pr, now)
}
