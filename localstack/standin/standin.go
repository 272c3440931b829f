package standin

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Defaults: the same names, region and credentials as LocalStack's test
// setup.
const (
	DefaultRegion          = "us-east-1"
	DefaultAccessKeyID     = "test"
	DefaultSecretAccessKey = "test"
	DefaultAddr            = "127.0.0.1:0"
)

// Config configures a stand-in. The zero Config listens on 127.0.0.1:0 and
// accepts test/test in us-east-1.
type Config struct {
	// Addr is the listen address for Start; "" means 127.0.0.1:0.
	Addr string
	// Credentials is the only key pair accepted; zero means test/test.
	Credentials Credentials
	// Region is the only region accepted in signatures; "" means us-east-1.
	Region string
	// Buckets are created at start.
	Buckets []string
	// Now is the clock for signature time checks; nil means time.Now.
	Now func() time.Time
}

// Request is one entry of the request log: every request the stand-in
// received, authorized or not.
type Request struct {
	Method string
	Path   string     // decoded URL path: /bucket/key
	Query  url.Values // decoded query
	// CopySource is the x-amz-copy-source header, decoded, if any.
	CopySource string
	// DeleteKeys are the keys of a multi-object delete (POST ?delete).
	DeleteKeys []string
	// Status is the HTTP status the stand-in answered with.
	Status int
}

// Bucket and Key split Path into the bucket and object key (path-style).
func (r Request) Bucket() string {
	b, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
	return b
}

// Key returns the object key of the request path ("" for bucket requests).
func (r Request) Key() string {
	_, k, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
	return k
}

// Server is an in-memory S3 server (gofakes3) behind SigV4 verification.
// It is an http.Handler, so tests may mount it anywhere; Start also runs it
// on a listener. Safe for use from multiple goroutines.
type Server struct {
	cfg     Config
	backend *s3mem.Backend
	fake    http.Handler

	mu   sync.Mutex
	log  []Request
	fail func(Request) bool // FailRequests

	// Set by Start.
	url  string
	http *http.Server
	wg   sync.WaitGroup
	stop context.CancelFunc
}

// New builds a stand-in with cfg's buckets.
func New(cfg Config) (*Server, error) {
	if cfg.Credentials == (Credentials{}) {
		cfg.Credentials = Credentials{DefaultAccessKeyID, DefaultSecretAccessKey}
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	be := s3mem.New()
	for _, b := range cfg.Buckets {
		if err := be.CreateBucket(b); err != nil {
			return nil, fmt.Errorf("standin: create bucket %q: %w", b, err)
		}
	}
	fake := gofakes3.New(be, gofakes3.WithTimeSource(clock(cfg.Now)))
	return &Server{cfg: cfg, backend: be, fake: fake.Server()}, nil
}

type clock func() time.Time

func (c clock) Now() time.Time                  { return c() }
func (c clock) Since(t time.Time) time.Duration { return c().Sub(t) }

// Start builds a stand-in and serves it on cfg.Addr until ctx is done or
// Close is called.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("standin: %w", err)
	}
	s.url = "http://" + l.Addr().String()
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	ctx, s.stop = context.WithCancel(ctx)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		_ = s.http.Serve(l)
	}()
	go func() {
		defer s.wg.Done()
		<-ctx.Done()
		_ = s.http.Close()
	}()
	return s, nil
}

// URL is the base URL of a started server ("http://127.0.0.1:port").
func (s *Server) URL() string { return s.url }

// Close stops a started server and waits for its goroutines. Idempotent.
func (s *Server) Close() error {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
	return nil
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// FailRequests makes the stand-in answer every request for which fail
// returns true with 503 ServiceUnavailable, as S3 answers while it cannot
// serve, until FailRequests(nil): a stage that becomes unavailable, and
// returns, in tests. The requests are logged with their 503.
func (s *Server) FailRequests(fail func(Request) bool) {
	s.mu.Lock()
	s.fail = fail
	s.mu.Unlock()
}

// ServeHTTP verifies the request's SigV4 signature, logs it, and passes it
// to the fake S3. Unsigned or badly signed requests get 403; requests
// FailRequests selects get 503.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query()}
	if cs := r.Header.Get("X-Amz-Copy-Source"); cs != "" {
		rec.CopySource, _ = url.PathUnescape(cs)
	}
	sw := NewStatusWriter(w)
	defer func() {
		rec.Status = sw.Status
		s.mu.Lock()
		s.log = append(s.log, rec)
		s.mu.Unlock()
	}()
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil && fail(rec) {
		WriteError(sw, http.StatusServiceUnavailable, "ServiceUnavailable", "the stand-in was told to fail this request")
		return
	}

	payload, err := verify(r, s.cfg.Credentials, s.cfg.Region, s.cfg.Now())
	if err != nil {
		code := "SignatureDoesNotMatch"
		if errors.Is(err, errNoAuth) {
			code = "AccessDenied"
		}
		WriteError(sw, http.StatusForbidden, code, err.Error())
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(sw, http.StatusBadRequest, "IncompleteBody", err.Error())
		return
	}
	switch {
	case payload == unsignedPayload:
	case strings.HasPrefix(payload, "STREAMING-"):
		WriteError(sw, http.StatusNotImplemented, "NotImplemented", "streaming payloads are not supported by the stand-in")
		return
	case payload != hexSHA256(body):
		WriteError(sw, http.StatusBadRequest, "XAmzContentSHA256Mismatch", "payload hash does not match x-amz-content-sha256")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if _, ok := rec.Query["delete"]; ok && r.Method == http.MethodPost {
		var del struct {
			Objects []struct{ Key string } `xml:"Object"`
		}
		if xml.Unmarshal(body, &del) == nil {
			for _, o := range del.Objects {
				rec.DeleteKeys = append(rec.DeleteKeys, o.Key)
			}
		}
	}
	// gofakes3 ignores If-None-Match on copies and multipart completion;
	// S3 honours it, so the stand-in does too.
	_, completing := rec.Query["uploadId"]
	copying := rec.CopySource != "" && r.Method == http.MethodPut
	if r.Header.Get("If-None-Match") == "*" && (copying || completing && r.Method == http.MethodPost) {
		if obj, err := s.backend.HeadObject(rec.Bucket(), rec.Key()); err == nil {
			obj.Contents.Close()
			WriteError(sw, http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
			return
		}
	}
	s.fake.ServeHTTP(sw, r)
}

// WriteError answers an S3 error: status and an <Error> document with code
// and msg, as S3 does.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_ = xml.NewEncoder(w).Encode(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}{Code: code, Message: msg})
}

// StatusWriter is an http.ResponseWriter that remembers the status it
// answered (200 unless WriteHeader said otherwise before the body).
type StatusWriter struct {
	http.ResponseWriter
	Status  int
	written bool
}

// NewStatusWriter wraps w.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter {
	return &StatusWriter{ResponseWriter: w, Status: http.StatusOK}
}

// WriteHeader implements http.ResponseWriter.
func (w *StatusWriter) WriteHeader(code int) {
	if !w.written {
		w.Status, w.written = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *StatusWriter) Write(p []byte) (int, error) {
	w.written = true
	return w.ResponseWriter.Write(p)
}
