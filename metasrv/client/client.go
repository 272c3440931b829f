package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Header names shared with metasrv (metasrv.DelegateTenantHeader, …).
const (
	delegateTenantHeader = "Lakegate-Delegate-Tenant"
	delegateUserHeader   = "Lakegate-Delegate-User"
)

// Privileges a reference may need.
const (
	SelectTable = "SELECT_TABLE"
	ModifyTable = "MODIFY_TABLE"
)

// Sentinel errors matched by errors.Is on an *Error (by HTTP status) and on
// failover errors (ErrUnavailable).
var (
	ErrUnauthenticated = errors.New("metasrv client: unauthenticated")
	ErrForbidden       = errors.New("metasrv client: forbidden")
	ErrNotFound        = errors.New("metasrv client: not found")
	ErrBadRequest      = errors.New("metasrv client: bad request")
	ErrUnavailable     = errors.New("metasrv client: unavailable")
)

// Error is a non-2xx answer of metasrv.
type Error struct {
	Status  int    // HTTP status
	Code    int    // Gravitino code (1001, 1003, 1008, …)
	Type    string // Gravitino exception type
	Message string
	Addr    string // the base URL that answered
}

func (e *Error) Error() string {
	return fmt.Sprintf("metasrv client: %s: HTTP %d (code %d %s): %s", e.Addr, e.Status, e.Code, e.Type, e.Message)
}

// Is matches the sentinel for the status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrUnauthenticated:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrBadRequest:
		return e.Status == http.StatusBadRequest || e.Status == http.StatusRequestEntityTooLarge
	case ErrUnavailable:
		return e.Status == http.StatusServiceUnavailable
	}
	return false
}

// Config configures a Client.
type Config struct {
	// Addrs are the metasrv nodes: base URLs ("https://10.0.0.1:8816") or
	// host:port (then Scheme applies). At least one.
	Addrs []string
	// Scheme for Addrs without one. Empty means "https".
	Scheme string
	// Token is the query_service bearer token. Required.
	Token string
	// HTTPClient sends the requests (TLS configuration goes here). Nil
	// means a client with a keep-alive transport sized for a gateway.
	HTTPClient *http.Client
	// MaxResponseBytes bounds a response body. Zero means 64 MiB.
	MaxResponseBytes int64
}

// Client calls metasrv's internal API. Safe for concurrent use.
type Client struct {
	bases []string
	token string
	hc    *http.Client
	max   int64
	cur   atomic.Uint32 // index of the base that answered last
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	if len(cfg.Addrs) == 0 {
		return nil, errors.New("metasrv client: no addresses")
	}
	if cfg.Token == "" {
		return nil, errors.New("metasrv client: no token")
	}
	scheme := cfg.Scheme
	if scheme == "" {
		scheme = "https"
	}
	c := &Client{token: cfg.Token, hc: cfg.HTTPClient, max: cfg.MaxResponseBytes}
	for _, a := range cfg.Addrs {
		if !strings.Contains(a, "://") {
			a = scheme + "://" + a
		}
		u, err := url.Parse(a)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("metasrv client: bad address %q", a)
		}
		c.bases = append(c.bases, strings.TrimRight(a, "/"))
	}
	if c.hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = 256
		tr.MaxIdleConnsPerHost = 128
		tr.IdleConnTimeout = 90 * time.Second
		tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		c.hc = &http.Client{Transport: tr}
	}
	if c.max == 0 {
		c.max = 64 << 20
	}
	return c, nil
}

// CloseIdleConnections closes the client's idle connections.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Ref is one table reference and the privilege it needs.
type Ref struct {
	Schema    string `json:"schema"`
	Table     string `json:"table"`
	Privilege string `json:"privilege"` // SelectTable or ModifyTable
}

// Column is one column of a Table.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// ColumnMask is the mask of one column for the subject.
type ColumnMask struct {
	Column string `json:"column"`
	Mask   string `json:"mask"`
}

// Table is a resolved, authorized table.
type Table struct {
	FullName    string
	Columns     []Column
	Version     uint64
	RowFilter   *string // nil: no row filter
	ColumnMasks []ColumnMask
}

// RefResult is the answer for one Ref: exactly one of Unavailable (missing
// or forbidden, indistinguishable), Conflict (conflicting policies: the
// query must be refused) and Table is set.
type RefResult struct {
	Unavailable bool
	Conflict    bool
	Table       *Table
}

// Result is the answer of Resolve: one RefResult per Ref, in order, all
// decided at Generation.
type Result struct {
	Generation uint64
	Refs       []RefResult
}

type wireRef struct {
	Unavailable bool         `json:"unavailable"`
	Error       string       `json:"error"`
	FullName    string       `json:"fullName"`
	Columns     []Column     `json:"columns"`
	Version     uint64       `json:"version"`
	RowFilter   *string      `json:"rowFilter"`
	ColumnMasks []ColumnMask `json:"columnMasks"`
}

// Resolve resolves and authorizes refs (all in catalog) for subject, a
// user of tenant's metalake, in one call.
func (c *Client) Resolve(ctx context.Context, tenant, subject, catalog string, refs []Ref) (Result, error) {
	return c.ResolveAt(ctx, tenant, subject, catalog, 0, refs)
}

// ResolveAt is Resolve on a snapshot at generation ≥ minGeneration (0: any).
func (c *Client) ResolveAt(ctx context.Context, tenant, subject, catalog string, minGeneration uint64, refs []Ref) (Result, error) {
	if refs == nil {
		refs = []Ref{}
	}
	body, err := json.Marshal(struct {
		Subject       string `json:"subject"`
		Catalog       string `json:"catalog"`
		MinGeneration uint64 `json:"minGeneration,omitempty"`
		Refs          []Ref  `json:"refs"`
	}{subject, catalog, minGeneration, refs})
	if err != nil {
		return Result{}, err
	}
	var out struct {
		Generation uint64    `json:"generation"`
		Results    []wireRef `json:"results"`
	}
	hdr := [][2]string{{delegateTenantHeader, tenant}, {delegateUserHeader, subject}}
	if err := c.do(ctx, http.MethodPost, "/internal/v1/metalakes/"+url.PathEscape(tenant)+"/resolve", hdr, body, &out); err != nil {
		return Result{}, err
	}
	if len(out.Results) != len(refs) {
		return Result{}, fmt.Errorf("metasrv client: %d results for %d refs", len(out.Results), len(refs))
	}
	res := Result{Generation: out.Generation, Refs: make([]RefResult, len(refs))}
	for i, w := range out.Results {
		switch {
		case w.Unavailable:
			res.Refs[i].Unavailable = true
		case w.Error == "conflict":
			res.Refs[i].Conflict = true
		case w.Error != "" || w.FullName == "":
			return Result{}, fmt.Errorf("metasrv client: result %d: unexpected answer", i)
		default:
			res.Refs[i].Table = &Table{FullName: w.FullName, Columns: w.Columns, Version: w.Version,
				RowFilter: w.RowFilter, ColumnMasks: w.ColumnMasks}
		}
	}
	return res, nil
}

// Generation returns tenant's current governance generation on the node
// that answers.
func (c *Client) Generation(ctx context.Context, tenant string) (uint64, error) {
	var out struct {
		Generation uint64 `json:"generation"`
	}
	hdr := [][2]string{{delegateTenantHeader, tenant}}
	if err := c.do(ctx, http.MethodGet, "/internal/v1/metalakes/"+url.PathEscape(tenant)+"/generation", hdr, nil, &out); err != nil {
		return 0, err
	}
	return out.Generation, nil
}

// do sends the request to the current base, failing over to the next on a
// connection error or a 503, each base at most once.
func (c *Client) do(ctx context.Context, method, path string, hdr [][2]string, body []byte, out any) error {
	start := int(c.cur.Load())
	var last error
	for k := range c.bases {
		i := (start + k) % len(c.bases)
		err := c.once(ctx, c.bases[i], method, path, hdr, body, out)
		if err == nil {
			if i != start {
				c.cur.Store(uint32(i))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !retryable(err) {
			return err
		}
		last = err
	}
	return fmt.Errorf("%w: no metasrv node answered: %w", ErrUnavailable, last)
}

// connError marks a failure to talk to a node at all.
type connError struct{ err error }

func (e connError) Error() string { return e.err.Error() }
func (e connError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var ce connError
	if errors.As(err, &ce) {
		return true
	}
	var ae *Error
	return errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable
}

func (c *Client) once(ctx context.Context, base, method, path string, hdr [][2]string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range hdr {
		req.Header.Set(h[0], h[1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return connError{fmt.Errorf("metasrv client: %s: %w", base, err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
	if err != nil {
		return connError{fmt.Errorf("metasrv client: %s: reading answer: %w", base, err)}
	}
	if int64(len(b)) > c.max {
		return fmt.Errorf("metasrv client: %s: answer larger than %d bytes", base, c.max)
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{Status: resp.StatusCode, Addr: base}
		var eb struct {
			Code    int    `json:"code"`
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &eb) == nil {
			e.Code, e.Type, e.Message = eb.Code, eb.Type, eb.Message
		} else {
			e.Message = string(bytes.TrimSpace(b[:min(len(b), 512)]))
		}
		return e
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("metasrv client: %s: decoding answer: %w", base, err)
	}
	return nil
}
