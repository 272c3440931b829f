package metasrv

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lakegate/authz"
	"lakegate/catalog"
	"lakegate/metasrv/raftnode"
)

// Config configures a Server. Build one with DefaultConfig and set the
// identity, addresses and principal map; New calls Validate. No zero value
// weakens security.
type Config struct {
	// NodeID is the node's stable id in the cluster. Required.
	NodeID string
	// DataDir holds the Raft state (raft/) and the audit log (audit.jsonl).
	// Required.
	DataDir string
	// RaftAddr is the Raft transport's host:port (port 0 picks one).
	// Required.
	RaftAddr string
	// HTTPAddr is the REST API's host:port as peers dial it; it is
	// replicated so that followers can forward writes. Required.
	HTTPAddr string
	// Bootstrap forms a new single-voter cluster when DataDir is empty.
	Bootstrap bool
	// RaftTLS runs the Raft transport over mutual TLS (see
	// raftnode.Config.TLS). Nil means plain TCP.
	RaftTLS *tls.Config
	// Principals authenticates every request. Required unless Authn is
	// set.
	Principals *authz.PrincipalMap
	// Authn, when set, authenticates every request against the map it
	// holds in force (static tokens and OIDC JWTs), which the process
	// reloads (ReloadPrincipals); its map in force stands for Principals,
	// which must then be nil.
	Authn *authz.Principals
	// ReloadPrincipals, when set, reloads Authn from its file for an
	// operator's POST /api/admin/principals/reload; its error (which names
	// no secret) is the answer. Nil answers that route 404.
	ReloadPrincipals func() error
	// PeerToken is this node's metadata_peer bearer token, sent when it
	// forwards a request to the leader or joins a cluster. It must
	// authenticate as the metadata_peer principal whose id is NodeID (New
	// refuses any other): that is how the other nodes know which node
	// speaks. Empty means the node cannot forward: writes on a follower
	// answer 503.
	PeerToken string
	// AllowJoins lets other nodes join the cluster through this node. A
	// join is admitted only from the metadata_peer principal whose id is
	// the joining node's id (or forwarded by a current member that checked
	// it) and, with RaftTLS, only for a node whose Raft certificate names
	// that id. False refuses every join (a single-node deployment).
	AllowJoins bool
	// PeerClient sends forwarded requests and joins; for https it carries
	// the TLS client configuration. Nil means http.DefaultClient.
	PeerClient *http.Client
	// PeerScheme is "https" or "http" for forwarded requests and joins.
	// Empty means "https".
	PeerScheme string
	// MaxBodyBytes bounds request bodies. Zero means 1 MiB.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request's body may take to arrive
	// once its headers have: a client sending it a byte at a time would
	// otherwise hold the connection and its goroutine for as long as it
	// likes. Zero means 30s.
	BodyTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request before the node closes it. Zero means 2m.
	IdleTimeout time.Duration
	// ReadWaitTimeout bounds the wait of a read with minGeneration or
	// consistent=true. Zero means 5s.
	ReadWaitTimeout time.Duration
	// ProposeTimeout bounds how long a write waits for its proposal to be
	// committed and applied; past it the write answers 503 and its outcome
	// is unknown (the proposal is not withdrawn). Zero means 5s.
	ProposeTimeout time.Duration
	// StaleReadBound is how long a follower may go without hearing from
	// the leader and still answer the internal API (gateways' decisions);
	// past it the node answers 503 so gateways fail over to a node in
	// contact, and never decide from a state older than this. Zero means
	// 5s.
	StaleReadBound time.Duration
	// AuditRingSize is the number of events kept for GET /events. Zero
	// means DefaultAuditRing.
	AuditRingSize int
	// MaxBatchProposals is the most writes the leader coalesces into one
	// Raft log entry (see batch.go). Zero means DefaultMaxBatchProposals;
	// 1 turns batching off (one entry per write).
	MaxBatchProposals int
	// MaxBatchBytes bounds the encoded proposals of one batch entry (a
	// single larger proposal still goes alone). Zero means
	// DefaultMaxBatchBytes.
	MaxBatchBytes int
	// BatchPipeline is how many batch entries may be in Raft at once;
	// writes arriving meanwhile wait and leave together. Zero means
	// DefaultBatchPipeline.
	BatchPipeline int
	// Raft tunes the replication core; NodeID, DataDir, RaftAddr, HTTPAddr,
	// Bootstrap, TLS and Logger are overwritten from this Config. The zero
	// value means raftnode's defaults.
	Raft raftnode.Config
	// Logger receives operational logs. Nil discards them.
	Logger *slog.Logger
	// Now returns the time the leader stamps on proposals. Nil means
	// time.Now.
	Now func() time.Time
	// CheckPolicy, when set, validates the content of a row_filter or
	// column_mask policy (its SQL expression) before a create or an
	// alteration that changes the content is proposed; an error refuses the
	// request with 400 (IllegalArgumentException, code 1001) and the
	// error's message. Nil accepts what the catalog accepts. It must be
	// safe for concurrent use and must not block: it runs in the request.
	CheckPolicy func(typ catalog.PolicyType, content catalog.PolicyContent) error
}

// DefaultConfig returns a Config with every tunable at its default.
func DefaultConfig() Config {
	return Config{
		MaxBodyBytes:      1 << 20,
		BodyTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ReadWaitTimeout:   5 * time.Second,
		ProposeTimeout:    5 * time.Second,
		StaleReadBound:    5 * time.Second,
		AuditRingSize:     DefaultAuditRing,
		MaxBatchProposals: DefaultMaxBatchProposals,
		MaxBatchBytes:     DefaultMaxBatchBytes,
		BatchPipeline:     DefaultBatchPipeline,
		Raft:              raftnode.DefaultConfig(),
	}
}

// Validate checks the fields, reporting the offending values.
func (c Config) Validate() error {
	var errs []error
	if c.NodeID == "" {
		errs = append(errs, errors.New("metasrv: Config.NodeID is empty"))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("metasrv: Config.DataDir is empty"))
	}
	if c.HTTPAddr == "" {
		errs = append(errs, errors.New("metasrv: Config.HTTPAddr is empty"))
	}
	pm := c.Principals
	if c.Authn != nil {
		pm = c.Authn.Current().Map()
	}
	switch {
	case c.Principals != nil && c.Authn != nil:
		errs = append(errs, errors.New("metasrv: Config.Principals and Config.Authn exclude each other"))
	case pm == nil:
		errs = append(errs, errors.New("metasrv: Config.Principals is nil: metasrv never runs without a principal map"))
	case c.PeerToken != "":
		if err := checkPeerIdentity(pm, c.PeerToken, c.NodeID); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxBodyBytes %d is negative", c.MaxBodyBytes))
	}
	if c.BodyTimeout < 0 || c.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("BodyTimeout %s and IdleTimeout %s must not be negative", c.BodyTimeout, c.IdleTimeout))
	}
	if c.StaleReadBound < 0 {
		errs = append(errs, fmt.Errorf("StaleReadBound %s is negative", c.StaleReadBound))
	}
	if c.ReadWaitTimeout < 0 {
		errs = append(errs, fmt.Errorf("ReadWaitTimeout %s is negative", c.ReadWaitTimeout))
	}
	if c.ProposeTimeout < 0 {
		errs = append(errs, fmt.Errorf("ProposeTimeout %s is negative", c.ProposeTimeout))
	}
	if c.MaxBatchProposals < 0 || c.MaxBatchBytes < 0 || c.BatchPipeline < 0 {
		errs = append(errs, fmt.Errorf("MaxBatchProposals %d, MaxBatchBytes %d and BatchPipeline %d must not be negative",
			c.MaxBatchProposals, c.MaxBatchBytes, c.BatchPipeline))
	}
	if c.PeerScheme != "" && c.PeerScheme != "http" && c.PeerScheme != "https" {
		errs = append(errs, fmt.Errorf("PeerScheme %q is not http or https", c.PeerScheme))
	}
	if len(errs) > 0 {
		return fmt.Errorf("metasrv: invalid config: %w", errors.Join(errs...))
	}
	return nil
}

// Server is one metasrv node: the replicated FSM, its Raft node and the
// REST API. Safe for concurrent use. Serve blocks; Shutdown stops
// everything and is idempotent.
type Server struct {
	cfg Config
	log *slog.Logger
	// authn holds the principal map in force; byID indexes it by id.
	authn  *authz.Principals
	byID   principalIndex
	audit  *AuditLog
	fsm    *FSM
	node   *raftnode.Node
	fwd    *raftnode.Forwarder
	batch  *batcher
	mux    *http.ServeMux
	now    func() time.Time
	client *http.Client
	// metrics are the node's instruments; handler is mux instrumented.
	metrics *metrics
	handler http.Handler
	stop    chan struct{} // closed by Shutdown
	wg      sync.WaitGroup

	mu       sync.Mutex
	servers  []*http.Server
	closing  bool // Shutdown has begun: Serve serves no new listener
	shutOnce sync.Once
	shutErr  error
}

// New opens the node's state in cfg.DataDir and starts Raft. Serve the API
// with Serve; join a cluster with Join.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.ProposeTimeout == 0 {
		cfg.ProposeTimeout = 5 * time.Second
	}
	if cfg.ReadWaitTimeout == 0 {
		cfg.ReadWaitTimeout = 5 * time.Second
	}
	if cfg.StaleReadBound == 0 {
		cfg.StaleReadBound = 5 * time.Second
	}
	if cfg.PeerScheme == "" {
		cfg.PeerScheme = "https"
	}
	if cfg.MaxBatchProposals == 0 {
		cfg.MaxBatchProposals = DefaultMaxBatchProposals
	}
	if cfg.MaxBatchBytes == 0 {
		cfg.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if cfg.BatchPipeline == 0 {
		cfg.BatchPipeline = DefaultBatchPipeline
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("metasrv_node", cfg.NodeID)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("metasrv: data dir: %w", err)
	}
	audit, err := OpenAuditLog(filepath.Join(cfg.DataDir, "audit.jsonl"), cfg.AuditRingSize, log)
	if err != nil {
		return nil, err
	}
	authn := cfg.Authn
	if authn == nil {
		if authn, err = authz.NewPrincipals(cfg.Principals, authz.PrincipalsConfig{}); err != nil {
			audit.Close()
			return nil, fmt.Errorf("metasrv: principal map: %w", err)
		}
	}
	s := &Server{
		cfg:     cfg,
		log:     log,
		authn:   authn,
		byID:    principalIndex{ps: authn},
		audit:   audit,
		fsm:     NewFSM(audit),
		now:     cfg.Now,
		client:  cfg.PeerClient,
		metrics: newMetrics(),
		stop:    make(chan struct{}),
	}
	s.fsm.applyDuration = s.metrics.fsmApply
	if s.now == nil {
		s.now = time.Now
	}
	if s.client == nil {
		s.client = http.DefaultClient
	}
	rc := cfg.Raft
	rc.NodeID, rc.DataDir, rc.RaftAddr, rc.HTTPAddr = cfg.NodeID, filepath.Join(cfg.DataDir, "raft"), cfg.RaftAddr, cfg.HTTPAddr
	rc.Bootstrap, rc.TLS, rc.Logger = cfg.Bootstrap, cfg.RaftTLS, log
	observe := rc.ObserveLogWrite
	rc.ObserveLogWrite = func(entries int, d time.Duration) {
		s.metrics.logWrite.Observe(d.Seconds())
		if observe != nil {
			observe(entries, d)
		}
	}
	node, err := raftnode.New(ctx, rc, s.fsm)
	if err != nil {
		audit.Close()
		return nil, err
	}
	s.node = node
	s.fwd = &raftnode.Forwarder{Node: node, Client: s.client, Scheme: cfg.PeerScheme}
	s.batch = &batcher{node: node, timeout: cfg.ReadWaitTimeout, maxItems: cfg.MaxBatchProposals,
		maxBytes: cfg.MaxBatchBytes, pipeline: cfg.BatchPipeline, observe: func(n int) { s.metrics.batchSize.Observe(float64(n)) }}
	if err := s.routes(); err != nil {
		_ = node.Shutdown(ctx)
		audit.Close()
		return nil, err
	}
	s.mux.Handle("/cluster/remove", s.clusterRemoveHandler())
	s.handler = s.metrics.instrument(s.mux)
	s.metrics.reg.MustRegister(newRaftCollector(node, s.fsm), s.metrics.authn, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: metricAuditWriteErrors,
		Help: "Failed writes to the node's audit.jsonl; the events of a failed write are missing from the file.",
	}, func() float64 { return float64(audit.WriteErrors()) }))
	s.wg.Go(func() { s.watchLeader(s.stop) })
	return s, nil
}

// checkPeerIdentity checks that a node's peer token authenticates as the
// metadata_peer principal named after the node: other nodes take the
// principal id of a forwarded request or a join for the node that sends
// it. The error names the fix, never the token.
func checkPeerIdentity(m *authz.PrincipalMap, token, nodeID string) error {
	p, err := authz.NewAuthenticator(m).Authenticate(token)
	switch {
	case err != nil:
		return errors.New("metasrv: the peer token matches no principal of the map: add its hash to the metadata_peer principal whose id is this node's id")
	case p.Role() != authz.RoleMetadataPeer:
		return fmt.Errorf("metasrv: the peer token belongs to principal %q of role %s: a node's peer token must belong to the metadata_peer principal whose id is the node id %q", p.ID(), p.Role(), nodeID)
	case p.ID().String() != nodeID:
		return fmt.Errorf("metasrv: the peer token belongs to metadata_peer %q, not to one named after this node: give each node its own metadata_peer principal with id %q (the node id) and its own token", p.ID(), nodeID)
	}
	return nil
}

// authorizeJoin admits a join (raftnode.HTTPConfig.AuthorizeJoin): from
// the metadata_peer principal whose id is the joining node's id, or
// forwarded by a current member (which checked that before forwarding).
// The Raft certificate check follows in raftnode's AddVoter.
func (s *Server) authorizeJoin(r *http.Request, req raftnode.JoinRequest) error {
	if !s.cfg.AllowJoins {
		return statusErr{http.StatusForbidden, fmt.Errorf("%w: this node accepts no joins", ErrForbidden)}
	}
	p, err := s.authenticate(r)
	if err != nil {
		return statusErr{http.StatusUnauthorized, err}
	}
	if p.Role() == authz.RoleMetadataPeer {
		id := p.ID().String()
		if id == req.ID {
			return nil
		}
		if by := r.Header.Get(raftnode.ForwardedHeader); by == id && s.node.IsVoter(id) {
			return nil
		}
	}
	s.rejectEvent(r, "", p.ID().String(), "JoinCluster", catalog.Object{}, fmt.Errorf("%w: join as node %q", ErrForbidden, req.ID))
	return statusErr{http.StatusForbidden, fmt.Errorf("%w: a node joins only as the metadata_peer principal whose id is its node id", ErrForbidden)}
}

// RemoveRequest is the body of POST /cluster/remove.
type RemoveRequest struct {
	ID string `json:"id"`
}

// clusterRemoveHandler serves POST /cluster/remove with a RemoveRequest
// body, for operator and metadata_peer principals only.
// The leader removes the server from the Raft configuration (and its
// membership record) and answers 200 with the cluster status; a follower
// forwards the request to the leader once. Errors are {"error":…}: 401,
// 403, 405, 400 (bad body), 404 (no such server in the configuration), 503
// (Retry-After) without a reachable leader.
func (s *Server) clusterRemoveHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, msg string) {
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			writeJSON(w, status, raftnode.ProposeResponse{Error: msg})
		}
		p, err := s.authenticate(r)
		if err != nil {
			fail(http.StatusUnauthorized, err.Error())
			return
		}
		if !clusterRole(p) {
			fail(http.StatusForbidden, ErrForbidden.Error())
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			fail(http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		b, err := s.readBody(w, r)
		if err != nil {
			status := http.StatusBadRequest
			if errors.Is(err, errBodyTooLarge) {
				status = http.StatusRequestEntityTooLarge
			}
			fail(status, err.Error())
			return
		}
		var req RemoveRequest
		if err := decodeRequest(b, &req); err != nil || req.ID == "" {
			if err == nil {
				err = errors.New("id is required")
			}
			fail(http.StatusBadRequest, "bad remove request: "+err.Error())
			return
		}
		n := s.node
		if !n.IsLeader() {
			if r.Header.Get(raftnode.ForwardedHeader) != "" { // never forward twice
				resp := raftnode.ProposeResponse{Error: raftnode.ErrNotLeader.Error()}
				if l, ok := n.Leader(); ok {
					resp.Leader = &l
				}
				w.Header().Set("Retry-After", "1")
				writeJSON(w, http.StatusServiceUnavailable, resp)
				return
			}
			hdr, err := s.peerHeader()
			if err != nil {
				fail(http.StatusServiceUnavailable, err.Error())
				return
			}
			hdr.Set("Content-Type", "application/json")
			resp, err := s.fwd.Forward(r.Context(), http.MethodPost, r.URL.RequestURI(), hdr, b)
			if err != nil {
				status := http.StatusServiceUnavailable
				if errors.Is(err, raftnode.ErrPeerUnreachable) {
					status = http.StatusBadGateway
				}
				fail(status, err.Error())
				return
			}
			defer resp.Body.Close()
			raftnode.CopyReply(w, resp, s.cfg.MaxBodyBytes)
			return
		}
		known := false
		for _, sv := range n.Status().Servers {
			known = known || sv.ID == req.ID
		}
		if !known {
			fail(http.StatusNotFound, fmt.Sprintf("no server %q in the cluster configuration", req.ID))
			return
		}
		if err := n.RemoveServer(r.Context(), req.ID); err != nil {
			status, _ := mapError(err)
			msg := err.Error()
			if status == http.StatusInternalServerError {
				s.log.Error("metasrv: cluster remove", "id", req.ID, "err", err)
				msg = "internal error"
			}
			fail(status, msg)
			return
		}
		s.log.Info("metasrv: removed server", "id", req.ID, "by", p.ID().String())
		writeJSON(w, http.StatusOK, n.Status())
	})
}

// Node returns the Raft node.
func (s *Server) Node() *raftnode.Node { return s.node }

// FSM returns the replicated state machine.
func (s *Server) FSM() *FSM { return s.fsm }

// Generation returns metalake's generation on this node (0 for one that
// does not exist), as the internal API would answer it: ok is false when
// the node may be stale (it has not heard from a leader within
// Config.StaleReadBound). An in-process gateway checks cached decisions
// with it.
func (s *Server) Generation(metalake string) (gen uint64, ok bool) {
	if s.inContact() != nil {
		return 0, false
	}
	if l, found := s.fsm.Lake(metalake); found {
		return l.Generation(), true
	}
	return 0, true
}

// Audit returns the node's audit log.
func (s *Server) Audit() *AuditLog { return s.audit }

// Handler returns the HTTP handler: the REST API under /api/ and the
// cluster endpoints under /cluster/, counted in the node's metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves the HTTP API on ln until Shutdown; it returns nil after
// Shutdown, at once (closing ln) when Shutdown came first.
func (s *Server) Serve(ln net.Listener) error {
	// No ReadTimeout or WriteTimeout: they would also cut the long polls
	// of /internal/v1/generations (and ReadTimeout's deadline, left on the
	// connection, cancels a request still running past it); bodies have
	// their own deadline (readBody).
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: s.cfg.IdleTimeout,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.mu.Lock()
	if s.closing {
		// A Serve that starts after Shutdown would serve for ever.
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	s.servers = append(s.servers, hs)
	s.mu.Unlock()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Join asks the cluster member whose HTTP address is addr (any member) to
// add this node as a voter, authenticating with PeerToken. A join the
// cluster does not admit fails with ErrJoinRefused.
func (s *Server) Join(ctx context.Context, addr string) error {
	body, _ := json.Marshal(raftnode.JoinRequest{ID: s.cfg.NodeID, RaftAddr: s.node.RaftAddr(), HTTPAddr: s.cfg.HTTPAddr})
	u := addr
	if !strings.Contains(u, "://") {
		u = s.cfg.PeerScheme + "://" + addr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(u, "/")+"/cluster/join", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("metasrv: join: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.cfg.PeerToken)
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("metasrv: join via %s: %w", addr, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized, http.StatusForbidden:
		// Not admitted: asking again changes nothing.
		return fmt.Errorf("%w: join via %s: HTTP %d: %s", ErrJoinRefused, addr, resp.StatusCode, bytes.TrimSpace(msg))
	}
	return fmt.Errorf("metasrv: join via %s: HTTP %d: %s", addr, resp.StatusCode, bytes.TrimSpace(msg))
}

// Shutdown stops the HTTP servers (draining requests until ctx ends), Raft
// and the audit log. It is idempotent; later calls return the first
// result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		servers := s.servers
		s.mu.Unlock()
		var errs []error
		for _, hs := range servers {
			if err := hs.Shutdown(ctx); err != nil {
				errs = append(errs, err, hs.Close())
			}
		}
		s.batch.close()
		errs = append(errs, s.node.Shutdown(ctx), s.audit.Close())
		close(s.stop)
		s.wg.Wait()
		s.shutErr = errors.Join(errs...)
	})
	return s.shutErr
}

// Close aborts: it closes connections without draining, then shuts down.
func (s *Server) Close() error {
	s.mu.Lock()
	for _, hs := range s.servers {
		_ = hs.Close()
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Shutdown(ctx)
}

// errBodyTooLarge is a request body over Config.MaxBodyBytes.
var errBodyTooLarge = errors.New("request body too large")

// readBody reads r's body: at most MaxBodyBytes, and within BodyTimeout
// of the call. Once the body is in, the deadline is lifted, so a handler
// may then hold the request (long polls do); after a failed read the
// connection is closed with the answer instead (net/http would otherwise
// wait, without a deadline, for the rest of the body before answering).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	// A writer without deadlines (httptest's recorder) still has the
	// size bound.
	timed := rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) == nil
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err == nil {
		if timed {
			_ = rc.SetReadDeadline(time.Time{})
		}
		return b, nil
	}
	w.Header().Set("Connection", "close")
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, fmt.Errorf("%w: larger than %d bytes", errBodyTooLarge, s.cfg.MaxBodyBytes)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("request body not received within %s", s.cfg.BodyTimeout)
	}
	return nil, fmt.Errorf("reading request body: %w", err)
}
