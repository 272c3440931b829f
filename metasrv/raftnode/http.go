package raftnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
)

// ForwardedHeader marks a request that one node forwarded to another; its
// value is the forwarding node's id. A node that receives a forwarded
// request and is not the leader answers 503 instead of forwarding again, so
// requests never loop during an election. It carries no authority.
const ForwardedHeader = "Lakegate-Forwarded-By"

// JoinRequest is the body of a join: the joining node's identity and
// addresses.
type JoinRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	HTTPAddr string `json:"httpAddr,omitempty"`
}

// ProposeResponse is the answer of ProposeHandler.
type ProposeResponse struct {
	Index  uint64          `json:"index,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the StateMachine's rejection (HTTP 422) or the failure.
	Error  string `json:"error,omitempty"`
	Leader *Peer  `json:"leader,omitempty"` // with 503: the leader, if known
}

// RejectedError is a StateMachine rejection reported by a remote leader.
type RejectedError struct {
	Index   uint64
	Message string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("raftnode: rejected at index %d: %s", e.Index, e.Message)
}

// HTTPConfig configures the cluster handlers.
type HTTPConfig struct {
	// Node is the local node. Required.
	Node *Node

	// Authorize is called first on every request. A non-nil error rejects
	// the request with 403, or with the status of an error that has an
	// HTTPStatus() int method. Required: authentication is the caller's.
	Authorize func(*http.Request) error

	// AuthorizeJoin is called on a join request after Authorize and after
	// its body is read, before it is forwarded or carried out: whether the
	// caller may add the node req names. Its error rejects the join like
	// Authorize's. Nil admits every join that Authorize let through.
	AuthorizeJoin func(r *http.Request, req JoinRequest) error

	// Forwarder forwards joins that arrive at a follower to the leader. Nil
	// means followers answer 503 naming the leader.
	Forwarder *Forwarder

	// ForwardHeader returns the headers to send with a forwarded join (for
	// example the caller's identity). Nil sends none; with mutual TLS the
	// forwarding node's certificate is then its credential.
	ForwardHeader func(*http.Request) (http.Header, error)

	// Prepare turns a proposal request and its body into the command to
	// propose: re-authorize the original caller, stamp actor and time. Its
	// error rejects the request with 400 (or the status of an error with an
	// HTTPStatus() int method). Nil proposes the body unchanged.
	Prepare func(r *http.Request, body []byte) ([]byte, error)

	// EncodeResult encodes a StateMachine result for ProposeResponse.Result.
	// Nil means json.Marshal.
	EncodeResult func(any) (json.RawMessage, error)

	// MaxBodyBytes bounds request bodies. Zero means 1 MiB.
	MaxBodyBytes int64

	// Logger receives handler errors. Nil discards them.
	Logger *slog.Logger
}

// Handlers serves cluster membership, status and forwarded proposals for the
// metasrv HTTP server to mount. Safe for concurrent use.
type Handlers struct {
	cfg HTTPConfig
	log *slog.Logger
}

// NewHandlers checks cfg and returns the handler set.
func NewHandlers(cfg HTTPConfig) (*Handlers, error) {
	if cfg.Node == nil {
		return nil, errors.New("raftnode: HTTPConfig.Node is nil")
	}
	if cfg.Authorize == nil {
		return nil, errors.New("raftnode: HTTPConfig.Authorize is nil")
	}
	if cfg.MaxBodyBytes < 0 {
		return nil, fmt.Errorf("raftnode: HTTPConfig.MaxBodyBytes %d is negative", cfg.MaxBodyBytes)
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.EncodeResult == nil {
		cfg.EncodeResult = func(v any) (json.RawMessage, error) { return json.Marshal(v) }
	}
	l := cfg.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &Handlers{cfg: cfg, log: l}, nil
}

type statusError interface{ HTTPStatus() int }

func errStatus(err error, def int) int {
	var se statusError
	if errors.As(err, &se) {
		return se.HTTPStatus()
	}
	return def
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail writes err in the handlers' one error mapping.
func (h *Handlers) fail(w http.ResponseWriter, r *http.Request, err error) {
	resp := ProposeResponse{Error: err.Error()}
	status := http.StatusInternalServerError
	var nl *NotLeaderError
	var rej *RejectedError
	switch {
	case errors.As(err, &nl):
		status = http.StatusServiceUnavailable
		if nl.Leader.ID != "" {
			resp.Leader = &nl.Leader
		}
		w.Header().Set("Retry-After", "1")
	case errors.Is(err, ErrNoLeader), errors.Is(err, ErrOutcomeUnknown), errors.Is(err, ErrClosed), errors.Is(err, ErrIsLeader):
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	case errors.As(err, &rej):
		status, resp.Index, resp.Error = http.StatusUnprocessableEntity, rej.Index, rej.Message
	case errors.Is(err, ErrPeerUnreachable):
		status = http.StatusBadGateway
	case errors.Is(err, ErrPeerIdentity):
		status, resp.Error = http.StatusForbidden, err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		status = http.StatusGatewayTimeout
	default:
		h.log.Error("raftnode: request failed", "path", r.URL.Path, "err", err)
		resp.Error = "internal error"
	}
	writeJSON(w, status, resp)
}

// authorize runs the Authorize hook; false means the response is written.
func (h *Handlers) authorize(w http.ResponseWriter, r *http.Request, method string) bool {
	if err := h.cfg.Authorize(r); err != nil {
		writeJSON(w, errStatus(err, http.StatusForbidden), ProposeResponse{Error: err.Error()})
		return false
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeJSON(w, http.StatusMethodNotAllowed, ProposeResponse{Error: "method not allowed"})
		return false
	}
	return true
}

func (h *Handlers) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		status := http.StatusBadRequest
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
		writeJSON(w, status, ProposeResponse{Error: "reading body: " + err.Error()})
		return nil, false
	}
	return b, true
}

// JoinHandler serves POST with a JoinRequest body. On the leader it adds the
// node as a voter (after dialing its Raft address, see Node.AddVoter) and
// records its HTTP address; on a follower it forwards the request to the
// leader, so a joining node may address any member. Answers 200 with the
// cluster Status, 400 for a bad body, 502 if the joiner's Raft address did
// not answer or failed the TLS handshake, 503 (Retry-After) without a
// reachable leader.
func (h *Handlers) JoinHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.authorize(w, r, http.MethodPost) {
			return
		}
		b, ok := h.body(w, r)
		if !ok {
			return
		}
		var req JoinRequest
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.ID == "" || req.RaftAddr == "" {
			if err == nil {
				err = errors.New("id and raftAddr are required")
			}
			writeJSON(w, http.StatusBadRequest, ProposeResponse{Error: "bad join request: " + err.Error()})
			return
		}
		if h.cfg.AuthorizeJoin != nil {
			if err := h.cfg.AuthorizeJoin(r, req); err != nil {
				writeJSON(w, errStatus(err, http.StatusForbidden), ProposeResponse{Error: err.Error()})
				return
			}
		}
		n := h.cfg.Node
		// A node that wins an election while it forwards serves the join
		// itself (forward answers false) rather than failing it.
		if !n.IsLeader() && h.forward(w, r, b) {
			return
		}
		if err := n.Join(r.Context(), Peer(req)); err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, n.Status())
	})
}

// forward relays a request that needs the leader, once. It answers false,
// having written nothing, when this node turned out to be the leader: the
// caller then serves the request itself.
func (h *Handlers) forward(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if h.cfg.Forwarder == nil || r.Header.Get(ForwardedHeader) != "" {
		h.fail(w, r, h.cfg.Node.notLeader())
		return true
	}
	hdr := http.Header{}
	if h.cfg.ForwardHeader != nil {
		var err error
		if hdr, err = h.cfg.ForwardHeader(r); err != nil {
			h.fail(w, r, err)
			return true
		}
	}
	hdr.Set("Content-Type", r.Header.Get("Content-Type"))
	resp, err := h.cfg.Forwarder.Forward(r.Context(), r.Method, r.URL.RequestURI(), hdr, body)
	if errors.Is(err, ErrIsLeader) {
		return false
	}
	if err != nil {
		h.fail(w, r, err)
		return true
	}
	defer resp.Body.Close()
	CopyReply(w, resp, h.cfg.MaxBodyBytes)
	return true
}

// StatusHandler serves GET with the node's Status as JSON.
func (h *Handlers) StatusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.authorize(w, r, http.MethodGet) {
			return
		}
		writeJSON(w, http.StatusOK, h.cfg.Node.Status())
	})
}

// ProposeHandler serves POST of a command (the raw body) forwarded by a
// follower's Forwarder. It runs Prepare, proposes and answers with a
// ProposeResponse: 200 with index and result, 422 with index and error when
// the StateMachine rejected the command, 503 naming the leader when this
// node is not the leader (it never forwards a proposal again).
func (h *Handlers) ProposeHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.authorize(w, r, http.MethodPost) {
			return
		}
		b, ok := h.body(w, r)
		if !ok {
			return
		}
		n := h.cfg.Node
		if !n.IsLeader() {
			h.fail(w, r, n.notLeader())
			return
		}
		cmd := b
		if h.cfg.Prepare != nil {
			var err error
			if cmd, err = h.cfg.Prepare(r, b); err != nil {
				writeJSON(w, errStatus(err, http.StatusBadRequest), ProposeResponse{Error: err.Error()})
				return
			}
		}
		result, index, err := n.Propose(r.Context(), cmd)
		if err != nil {
			if index != 0 { // applied, and rejected by the StateMachine
				err = &RejectedError{Index: index, Message: err.Error()}
			}
			h.fail(w, r, err)
			return
		}
		enc, err := h.cfg.EncodeResult(result)
		if err != nil {
			h.fail(w, r, fmt.Errorf("encode result: %w", err))
			return
		}
		writeJSON(w, http.StatusOK, ProposeResponse{Index: index, Result: enc})
	})
}

// Forwarder sends requests that need the leader to the leader's HTTP
// address, learned from the replicated membership records. It is generic:
// the caller supplies the path and the headers (the metasrv layer adds its
// peer credential and the original caller's identity). Safe for concurrent
// use.
type Forwarder struct {
	// Node is the local node. Required.
	Node *Node
	// Client sends the requests; for https it must carry the TLS client
	// configuration. Nil means http.DefaultClient.
	Client *http.Client
	// Scheme is "https" or "http". Empty means "https".
	Scheme string
}

// Forward sends the request to the current leader, waiting (bounded by ctx,
// or the node's DefaultTimeout without a deadline) until a leader with a
// published HTTP address is known. path is a request URI ("/p?q=v"). The
// request carries ForwardedHeader. The caller closes the response body. It
// fails if this node is itself the leader: handle the request locally.
func (f *Forwarder) Forward(ctx context.Context, method, path string, header http.Header, body []byte) (*http.Response, error) {
	n := f.Node
	leader, err := n.waitLeaderHTTP(ctx)
	if err != nil {
		return nil, err
	}
	scheme := f.Scheme
	if scheme == "" {
		scheme = "https"
	}
	u, err := url.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("raftnode: forward: path %q: %w", path, err)
	}
	u.Scheme, u.Host = scheme, leader.HTTPAddr
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("raftnode: forward: %w", err)
	}
	for k, v := range header {
		req.Header[k] = append([]string(nil), v...)
	}
	req.Header.Set(ForwardedHeader, n.ID())
	c := f.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("raftnode: forward to %s (%s): %w", leader.ID, leader.HTTPAddr, err)
	}
	return resp, nil
}

// Propose forwards cmd to the leader's ProposeHandler mounted at path and
// returns the leader's answer: the result and index, a *RejectedError when
// the StateMachine rejected it, a *NotLeaderError when leadership moved
// (retry), or another error.
func (f *Forwarder) Propose(ctx context.Context, path string, header http.Header, cmd []byte) (ProposeResponse, error) {
	hdr := header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", "application/octet-stream")
	resp, err := f.Forward(ctx, http.MethodPost, path, hdr, cmd)
	if err != nil {
		return ProposeResponse{}, err
	}
	defer resp.Body.Close()
	var pr ProposeResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&pr); err != nil {
		return ProposeResponse{}, fmt.Errorf("raftnode: forward: HTTP %d with undecodable body: %w", resp.StatusCode, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return pr, nil
	case http.StatusUnprocessableEntity:
		return pr, &RejectedError{Index: pr.Index, Message: pr.Error}
	case http.StatusServiceUnavailable:
		nl := &NotLeaderError{}
		if pr.Leader != nil {
			nl.Leader = *pr.Leader
		}
		return pr, fmt.Errorf("raftnode: forward: %w", nl)
	default:
		return pr, fmt.Errorf("raftnode: forward: HTTP %d: %s", resp.StatusCode, pr.Error)
	}
}

// waitLeaderHTTP waits until a leader other than this node with a published
// HTTP address is known.
func (n *Node) waitLeaderHTTP(ctx context.Context) (Peer, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	for {
		ch := n.changed.wait()
		if n.IsLeader() {
			return Peer{}, ErrIsLeader
		}
		if p, ok := n.Leader(); ok && p.HTTPAddr != "" {
			return p, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Peer{}, fmt.Errorf("%w: %v", ErrNoLeader, ctx.Err())
		case <-n.stop:
			return Peer{}, ErrClosed
		}
	}
}
