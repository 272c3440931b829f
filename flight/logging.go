package flight

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// RequestIDHeader is the metadata key of a call's request id: a client may
// send one (1–64 of [A-Za-z0-9._-]; anything else is replaced), and every
// response carries the id the server used, as a header, failures included.
const RequestIDHeader = "x-request-id"

// maxRequestIDLen bounds a client-supplied request id.
const maxRequestIDLen = 64

type requestIDKey struct{}

// RequestIDFrom returns the request id of the call ctx belongs to, if any.
func RequestIDFrom(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(requestIDKey{}).(string)
	return id, ok && id != ""
}

// validRequestID reports whether a client-supplied request id may be used
// (and logged) as it is.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns 16 random hex characters read from r (crypto/rand
// when r is nil or fails).
func newRequestID(r io.Reader) string {
	var b [8]byte
	if r == nil {
		r = rand.Reader
	}
	if _, err := io.ReadFull(r, b[:]); err != nil {
		_, _ = rand.Read(b[:])
	}
	return hex.EncodeToString(b[:])
}

// requestID is the id of an incoming call: the client's x-request-id when it
// sent exactly one valid value, else a fresh one.
func (s *Server) requestID(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(RequestIDHeader); len(v) == 1 && validRequestID(v[0]) {
		return v[0]
	}
	return newRequestID(s.rand)
}

// logger returns the Server's logger annotated with the request id of the
// call ctx belongs to. Every log line written on behalf of a request goes
// through it.
func (s *Server) logger(ctx context.Context) *slog.Logger {
	if id, ok := RequestIDFrom(ctx); ok {
		return s.log.With("request_id", id)
	}
	return s.log
}

// requestIDUnary is the outermost unary interceptor: it gives the call its
// request id (on the context, for logger) and returns it as a response
// header, before authentication so refused calls carry one too.
func (s *Server) requestIDUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	id := s.requestID(ctx)
	ctx = context.WithValue(ctx, requestIDKey{}, id)
	_ = grpc.SetHeader(ctx, metadata.Pairs(RequestIDHeader, id))
	return handler(ctx, req)
}

// requestIDStream is requestIDUnary for streaming RPCs.
func (s *Server) requestIDStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	id := s.requestID(ss.Context())
	_ = ss.SetHeader(metadata.Pairs(RequestIDHeader, id))
	return handler(srv, &requestIDStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), requestIDKey{}, id)})
}

type requestIDStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *requestIDStream) Context() context.Context { return s.ctx }
