package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/flight/backend"
)

// Config configures a Pool. The zero value allows no address.
type Config struct {
	// Allow lists the host:port addresses the gateway may connect to (the
	// catalog is written by tenants' admins: without this, a catalog could
	// point the gateway and its credentials at any service). Addresses are
	// compared as written. Empty: none.
	Allow []string
	// AllowPlaintext lets targets and endpoint locations without TLS be
	// used on any allowed address; without it only loopback ones may (a
	// plaintext connection carries the credentials in clear).
	AllowPlaintext bool
	// CredentialsDir holds the credential files; each holds one bearer
	// token (surrounding white space trimmed). A file is read at every call
	// that names it. "": Targets with Credentials are refused.
	CredentialsDir string
	// RootCAs verifies TLS targets; nil uses the system roots.
	RootCAs *x509.CertPool
	// Allocator allocates the batches Execute returns; nil uses
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// DialTimeout bounds one connection attempt; 0 means 5s.
	DialTimeout time.Duration
}

// DefaultDialTimeout is the DialTimeout used when Config.DialTimeout is 0.
const DefaultDialTimeout = 5 * time.Second

// maxRecvMsgSize bounds one message from an engine. gRPC's default (4 MiB)
// is smaller than the batches engines and lakegate itself produce.
const maxRecvMsgSize = 256 << 20

// Validate checks the configuration: every Allow entry is host:port with a
// port in 1..65535 and DialTimeout is not negative. New does not call it (an
// entry that is not host:port matches no target); wiring code should.
func (c Config) Validate() error {
	for i, a := range c.Allow {
		if err := checkAddress(a); err != nil {
			return fmt.Errorf("upstream: config: Allow[%d] %q: %w", i, a, err)
		}
	}
	if c.DialTimeout < 0 {
		return fmt.Errorf("upstream: config: DialTimeout %v is negative", c.DialTimeout)
	}
	return nil
}

// Pool runs statements on upstream engines over pooled connections, one per
// (address, TLS) pair. It is safe for use from multiple goroutines.
type Pool struct {
	cfg   Config
	allow map[string]struct{}
	alloc memory.Allocator

	mu     sync.Mutex
	conns  map[connKey]*conn // guarded by mu
	closed bool              // guarded by mu
}

// conn is a pooled connection. refs counts the calls and readers using it;
// an evicted conn is closed when the last of them lets go.
type conn struct {
	key    connKey
	cc     *grpc.ClientConn
	client *flightsql.Client

	refs    int  // guarded by Pool.mu
	evicted bool // guarded by Pool.mu
	closed  bool // guarded by Pool.mu
}

// New returns a Pool for cfg. It opens no connection.
func New(cfg Config) *Pool {
	cfg.Allow = append([]string(nil), cfg.Allow...)
	if cfg.Allocator == nil {
		cfg.Allocator = memory.DefaultAllocator
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	allow := make(map[string]struct{}, len(cfg.Allow))
	for _, a := range cfg.Allow {
		allow[a] = struct{}{}
	}
	return &Pool{cfg: cfg, allow: allow, alloc: cfg.Allocator, conns: make(map[connKey]*conn)}
}

// callOpts fail a call at once when the connection is known to be down
// instead of waiting for gRPC to reconnect.
var callOpts = []grpc.CallOption{grpc.WaitForReady(false)}

// withToken replaces ctx's outgoing metadata with the gateway's credentials.
func withToken(ctx context.Context, token string) context.Context {
	md := metadata.MD{}
	if token != "" {
		md.Set("authorization", "Bearer "+token)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// Schema returns the result schema of sql without streaming its rows: the
// engine's GetExecuteSchema. An engine that does not implement it gives
// ErrNoSchema: the schema of its FlightInfo cannot be trusted to be the one
// its streams carry (arrow-go's SQLite example announces unions and streams
// the types of the first row), and clients check that they agree; the
// caller may Execute the statement and take the reader's Schema instead.
func (p *Pool) Schema(ctx context.Context, t Target, sql string) (*arrow.Schema, error) {
	token, err := p.admit(t)
	if err != nil {
		return nil, err
	}
	c, err := p.acquire(connKey{addr: t.Address, tls: t.TLS})
	if err != nil {
		return nil, err
	}
	defer p.release(c)
	res, err := c.client.GetExecuteSchema(withToken(ctx, token), sql, callOpts...)
	if err == nil {
		s, err := deserializeSchema(res.GetSchema(), p.alloc)
		if err != nil {
			return nil, invalid("schema")
		}
		return s, nil
	}
	if status.Code(err) == codes.Unimplemented && ctx.Err() == nil {
		return nil, ErrNoSchema
	}
	return nil, p.fail(ctx, c, "schema", err)
}

// Execute runs sql and streams every endpoint's batches, in order, as one
// reader whose schema is the first stream's (the FlightInfo's when there is
// no endpoint); every later stream must carry the same. The first endpoint's stream is opened before Execute
// returns, so an engine that refuses the statement at DoGet fails here. The
// caller must Release the reader; cancelling ctx stops it, and Next then
// returns false with Err wrapping backend.ErrCanceled or ErrDeadline.
func (p *Pool) Execute(ctx context.Context, t Target, sql string) (array.RecordReader, error) {
	token, err := p.admit(t)
	if err != nil {
		return nil, err
	}
	c, err := p.acquire(connKey{addr: t.Address, tls: t.TLS})
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(withToken(ctx, token))
	r := &reader{pool: p, parent: ctx, ctx: rctx, cancel: cancel, conns: []*conn{c}}
	r.refs.Store(1)

	info, err := c.client.Execute(rctx, sql, callOpts...)
	if err != nil {
		r.Release()
		return nil, p.fail(ctx, c, "execute", err)
	}
	if err := r.plan(c, info); err != nil {
		r.Release()
		return nil, err
	}
	if err := r.start(info); err != nil {
		r.Release()
		return nil, err
	}
	return r, nil
}

// Close closes every connection, aborting the calls and readers using them.
// Later calls fail with ErrClosed. Close is idempotent and returns nil.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	var toClose []*conn
	for k, c := range p.conns {
		delete(p.conns, k)
		c.evicted = true
		c.closed = true
		toClose = append(toClose, c)
	}
	p.mu.Unlock()
	for _, c := range toClose {
		_ = c.cc.Close()
	}
	return nil
}

// acquire returns the pooled connection for key, creating it if needed (no
// network I/O: gRPC connects on the first call). A connection gRPC reports
// in TRANSIENT_FAILURE is replaced rather than waiting out its backoff.
func (p *Pool) acquire(key connKey) (*conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	var stale *conn
	c := p.conns[key]
	if c != nil && c.cc.GetState() == connectivity.TransientFailure {
		stale = p.evictLocked(c)
		c = nil
	}
	if c == nil {
		var err error
		if c, err = p.dial(key); err != nil {
			p.mu.Unlock()
			closeConn(stale)
			return nil, &Error{Op: "connect", Code: codes.Unavailable, Err: backend.ErrUnavailable}
		}
		p.conns[key] = c
	}
	c.refs++
	p.mu.Unlock()
	closeConn(stale)
	return c, nil
}

// release lets go of c; an evicted connection is closed with its last user.
func (p *Pool) release(c *conn) {
	p.mu.Lock()
	c.refs--
	var done *conn
	if c.evicted && c.refs == 0 && !c.closed {
		c.closed = true
		done = c
	}
	p.mu.Unlock()
	closeConn(done)
}

// evict drops c from the pool, so that the next call dials afresh; c itself
// is closed once unused.
func (p *Pool) evict(c *conn) {
	p.mu.Lock()
	done := p.evictLocked(c)
	p.mu.Unlock()
	closeConn(done)
}

// evictLocked returns c when the caller must close it.
func (p *Pool) evictLocked(c *conn) *conn {
	if p.conns[c.key] == c {
		delete(p.conns, c.key)
	}
	c.evicted = true
	if c.refs == 0 && !c.closed {
		c.closed = true
		return c
	}
	return nil
}

func closeConn(c *conn) {
	if c != nil {
		_ = c.cc.Close()
	}
}

// fail classifies err of a call on c and drops c when the engine was
// unavailable through it.
func (p *Pool) fail(ctx context.Context, c *conn, op string, err error) error {
	e := classify(ctx, op, err)
	if e.Err == backend.ErrUnavailable {
		p.evict(c)
	}
	return e
}

func (p *Pool) dial(key connKey) (*conn, error) {
	tc := insecure.NewCredentials()
	if key.tls {
		tc = credentials.NewTLS(&tls.Config{RootCAs: p.cfg.RootCAs, MinVersion: tls.VersionTLS12})
	}
	cc, err := grpc.NewClient(key.addr,
		grpc.WithTransportCredentials(tc),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.DefaultConfig,
			MinConnectTimeout: p.cfg.DialTimeout,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMsgSize)),
		grpc.WithChainStreamInterceptor(checkIPCStream),
	)
	if err != nil {
		return nil, err
	}
	return &conn{
		key:    key,
		cc:     cc,
		client: &flightsql.Client{Client: flight.NewClientFromConn(cc, nil), Alloc: p.alloc},
	}, nil
}
