package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"lakegate/authz"
)

// Limits of a fetch.
const (
	// DefaultTimeout bounds one refresh (discovery and JWKS together).
	DefaultTimeout = 10 * time.Second
	// MaxResponseBytes bounds a discovery document, a JWKS or a JWKS file.
	MaxResponseBytes = 1 << 20
	// MaxKeys bounds the keys of one set.
	MaxKeys      = 100
	maxRedirects = 3
)

// Options configures key sets. The zero value is ready to use.
type Options struct {
	// Client fetches discovery documents and JWKS. Nil means a client with
	// DefaultTimeout. Its CheckRedirect, if nil, is replaced by one that
	// applies the provider's URL rules to every redirect.
	Client *http.Client
	// Now is the clock of the refresh bound; nil means time.Now.
	Now func() time.Time
	// Timeout bounds one refresh; zero means DefaultTimeout.
	Timeout time.Duration
}

// KeySet holds one provider's keys. It implements authz.KeySource and is safe
// for use from multiple goroutines.
type KeySet struct {
	p       *authz.Provider
	client  *http.Client
	now     func() time.Time
	timeout time.Duration

	keys atomic.Pointer[keyMap] // read without the lock

	mu        sync.Mutex // serialises refreshes
	attempted bool
	last      time.Time // when the last refresh started
	lastErr   error

	refreshes atomic.Uint64
}

// keyMap is one fetched key set, by kid.
type keyMap struct {
	byKid map[string][]jose.JSONWebKey
	all   []jose.JSONWebKey
}

func (m *keyMap) lookup(kid string) []jose.JSONWebKey {
	if m == nil {
		return nil
	}
	if kid == "" {
		return m.all
	}
	return m.byKid[kid]
}

// NewKeySet returns the key set of p. For a jwks_file it reads the file now
// and fails if it is unreadable or invalid; URL sources are fetched on first
// use.
func NewKeySet(p *authz.Provider, opts Options) (*KeySet, error) {
	k := &KeySet{p: p, now: opts.Now, timeout: opts.Timeout}
	if k.now == nil {
		k.now = time.Now
	}
	if k.timeout <= 0 {
		k.timeout = DefaultTimeout
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	if client.CheckRedirect == nil {
		c := *client
		c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return errors.New("too many redirects")
			}
			if err := authz.CheckProviderURL(req.URL.String(), p.AllowHTTP()); err != nil {
				return fmt.Errorf("redirect: %v", err)
			}
			return nil
		}
		client = &c
	}
	k.client = client
	if p.JWKSFile() != "" {
		m, err := k.fetch(context.Background())
		if err != nil {
			return nil, err
		}
		k.keys.Store(m)
		k.attempted, k.last = true, k.now()
	}
	return k, nil
}

// Keys implements authz.KeySource.
func (k *KeySet) Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	if ks := k.keys.Load().lookup(kid); len(ks) > 0 {
		return ks, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// Another caller may have refreshed while this one waited.
	if ks := k.keys.Load().lookup(kid); len(ks) > 0 {
		return ks, nil
	}
	now := k.now()
	if k.attempted && now.Sub(k.last) < k.p.RefreshInterval() {
		if k.keys.Load() == nil {
			return nil, fmt.Errorf("oidc: keys of %s unavailable until the next refresh: %w", k.p.Name(), k.lastErr)
		}
		return nil, fmt.Errorf("oidc: %s: %w", k.p.Name(), authz.ErrUnknownKey)
	}
	k.attempted, k.last = true, now
	k.refreshes.Add(1)
	// The fetch serves every waiting caller: it has its own deadline, and
	// the first caller's cancellation does not abort it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.timeout)
	defer cancel()
	m, err := k.fetch(fctx)
	if err != nil {
		k.lastErr = err
		return nil, err
	}
	k.keys.Store(m)
	if ks := m.lookup(kid); len(ks) > 0 {
		return ks, nil
	}
	return nil, fmt.Errorf("oidc: %s: %w", k.p.Name(), authz.ErrUnknownKey)
}

// Refreshes returns how many refreshes (fetches or file reads after the
// first) this set has started.
func (k *KeySet) Refreshes() uint64 { return k.refreshes.Load() }

// fetch reads the provider's current key set.
func (k *KeySet) fetch(ctx context.Context) (*keyMap, error) {
	p := k.p
	var (
		data []byte
		err  error
	)
	switch {
	case p.JWKSFile() != "":
		data, err = readFile(p.JWKSFile())
	case p.JWKSURL() != "":
		data, err = k.get(ctx, p.JWKSURL())
	default:
		var uri string
		if uri, err = k.discover(ctx); err == nil {
			data, err = k.get(ctx, uri)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("oidc: keys of %s: %w", p.Name(), err)
	}
	m, err := parseJWKS(data)
	if err != nil {
		return nil, fmt.Errorf("oidc: keys of %s: %w", p.Name(), err)
	}
	return m, nil
}

// discover reads jwks_uri from the discovery document, whose issuer must be
// the configured one (OpenID Connect Discovery 1.0, section 4.3).
func (k *KeySet) discover(ctx context.Context) (string, error) {
	data, err := k.get(ctx, k.p.DiscoveryURL())
	if err != nil {
		return "", err
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("discovery document: %w", err)
	}
	if doc.Issuer != k.p.Issuer() {
		return "", errors.New("discovery document names another issuer")
	}
	if err := authz.CheckProviderURL(doc.JWKSURI, k.p.AllowHTTP()); err != nil {
		return "", fmt.Errorf("discovery document: jwks_uri: %v", err)
	}
	return doc.JWKSURI, nil
}

// get fetches u, requiring 200 and at most MaxResponseBytes.
func (k *KeySet) get(ctx context.Context, u string) ([]byte, error) {
	if err := authz.CheckProviderURL(u, k.p.AllowHTTP()); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("GET %s: status %s", req.URL.Redacted(), strconv.Itoa(resp.StatusCode))
	}
	return readLimited(resp.Body)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f)
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxResponseBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxResponseBytes)
	}
	return data, nil
}

// parseJWKS keeps the public signature keys of a JWKS document. Keys that
// go-jose cannot parse (for example an unsupported kty) are skipped; a
// private key refuses the whole set.
func parseJWKS(data []byte) (*keyMap, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	if len(doc.Keys) > MaxKeys {
		return nil, fmt.Errorf("JWKS: more than %d keys", MaxKeys)
	}
	m := &keyMap{byKid: make(map[string][]jose.JSONWebKey)}
	for _, raw := range doc.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(raw); err != nil {
			continue
		}
		if !key.IsPublic() {
			if _, symmetric := key.Key.([]byte); symmetric {
				continue // HMAC secrets verify nothing here
			}
			return nil, errors.New("JWKS publishes a private key")
		}
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		m.all = append(m.all, key)
		m.byKid[key.KeyID] = append(m.byKid[key.KeyID], key)
	}
	if len(m.all) == 0 {
		return nil, errors.New("JWKS holds no public signature key")
	}
	return m, nil
}

// Registry makes and keeps the key sets of providers; it implements
// authz.KeySets. Providers with the same key settings (issuer, URLs, http
// permission, refresh interval) share one KeySet across reloads; a
// jwks_file is re-read for every map, so a reload validates it.
type Registry struct {
	opts Options
	mu   sync.Mutex
	sets map[string]*KeySet
}

// NewRegistry returns an empty Registry.
func NewRegistry(opts Options) *Registry {
	return &Registry{opts: opts, sets: make(map[string]*KeySet)}
}

// KeySource implements authz.KeySets.
func (r *Registry) KeySource(p *authz.Provider) (authz.KeySource, error) {
	if p.JWKSFile() != "" {
		return NewKeySet(p, r.opts)
	}
	key := p.Issuer() + "\x00" + p.JWKSURL() + "\x00" + p.DiscoveryURL() + "\x00" +
		strconv.FormatBool(p.AllowHTTP()) + "\x00" + p.RefreshInterval().String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if k, ok := r.sets[key]; ok {
		return k, nil
	}
	k, err := NewKeySet(p, r.opts)
	if err != nil {
		return nil, err
	}
	r.sets[key] = k
	return k, nil
}
