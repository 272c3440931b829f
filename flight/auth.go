package flight

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"lakegate/authz"
	"lakegate/metasrv/api"
)

// handshakeMethod is the only RPC that accepts Basic credentials.
const handshakeMethod = "/arrow.flight.protocol.FlightService/Handshake"

// maxAuthHeader bounds the authorization header we are willing to decode.
const maxAuthHeader = 8 << 10

// callCredentials is what a call presented: a bearer token, or (Handshake only)
// a principal id and token from Basic.
type callCredentials struct {
	basic bool
	id    string
	token string
}

// credentialsFrom reads the single authorization header of an incoming call.
func credentialsFrom(ctx context.Context, allowBasic bool) (callCredentials, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get("authorization")
	if len(values) != 1 || len(values[0]) > maxAuthHeader {
		return callCredentials{}, false
	}
	scheme, rest, ok := strings.Cut(values[0], " ")
	if !ok {
		return callCredentials{}, false
	}
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(scheme) {
	case "bearer":
		return callCredentials{token: rest}, rest != ""
	case "basic":
		if !allowBasic {
			return callCredentials{}, false
		}
		// Padded (JDBC) and unpadded (arrow-go) encodings are both in use.
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			if raw, err = base64.RawStdEncoding.DecodeString(rest); err != nil {
				return callCredentials{}, false
			}
		}
		id, token, ok := strings.Cut(string(raw), ":")
		if !ok || id == "" || token == "" {
			return callCredentials{}, false
		}
		return callCredentials{basic: true, id: id, token: token}, true
	}
	return callCredentials{}, false
}

// authenticator wraps authz.Principals for gRPC: every call authenticates
// against the principal map in force, so a reload applies from the next
// call on. Its interceptors are the Server's only ones; each runs inside
// metrics' (nil records nothing), so a refused call is counted too.
type authenticator struct {
	auth    *authz.Principals
	metrics *Metrics
}

// authenticate returns the context carrying the principal and the callCredentials
// used, or an Unauthenticated status. A Basic password may be a static token
// or a JWT (JDBC's user/password form); the user must then be the JWT's.
func (a authenticator) authenticate(ctx context.Context, method string) (context.Context, callCredentials, error) {
	creds, ok := credentialsFrom(ctx, method == handshakeMethod)
	var (
		p      *authz.Principal
		reason authz.FailureReason
		err    error
	)
	switch {
	case !ok:
		// Hash something anyway so a missing header costs what a wrong one does.
		_, _, err = a.auth.AuthenticateReason(ctx, "")
		reason = authz.ReasonUnknownToken
	case creds.basic:
		p, reason, err = a.auth.AuthenticateBasicReason(ctx, creds.id, creds.token)
	default:
		p, reason, err = a.auth.AuthenticateReason(ctx, creds.token)
	}
	if err != nil || p == nil {
		a.metrics.authnFailed(reason)
		return nil, callCredentials{}, toStatus(authz.ErrUnauthenticated)
	}
	ctx = authz.WithPrincipal(ctx, p)
	if p.AuthMethod() == authz.AuthJWT {
		// metasrv verifies the user's own token on the calls the gateway
		// makes for it, and takes the user's groups from it.
		ctx = api.WithDelegateToken(ctx, creds.token)
	}
	return ctx, creds, nil
}

// unaryInterceptor authenticates every unary RPC (health included).
func (a authenticator) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return a.metrics.unaryInterceptor(ctx, req, info, func(ctx context.Context, req any) (any, error) {
		ctx, _, err := a.authenticate(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	})
}

// streamInterceptor authenticates every streaming RPC (Handshake included).
func (a authenticator) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return a.metrics.streamInterceptor(srv, ss, info, func(srv any, ss grpc.ServerStream) error {
		ctx, creds, err := a.authenticate(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		ctx = context.WithValue(ctx, callCredentialsKey{}, creds)
		return handler(srv, &authedStream{ServerStream: ss, ctx: ctx})
	})
}

type callCredentialsKey struct{}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *authedStream) Context() context.Context { return s.ctx }

// handshake answers a Flight Handshake. Authentication already happened in
// the interceptor; the reply carries the bearer token as a response header,
// which is where the JDBC and ADBC drivers look for it.
func handshake(stream flight.FlightService_HandshakeServer) error {
	creds, ok := stream.Context().Value(callCredentialsKey{}).(callCredentials)
	if !ok {
		return toStatus(authz.ErrUnauthenticated)
	}
	if err := stream.SetHeader(metadata.Pairs("authorization", "Bearer "+creds.token)); err != nil {
		return status.Error(codes.Internal, "handshake failed")
	}
	// The request payload is ignored: callCredentials travel in headers. Reading
	// one message keeps clients that send one happy; EOF is fine too.
	if _, err := stream.Recv(); err != nil && !isEOF(err) {
		return err
	}
	return stream.Send(&flight.HandshakeResponse{})
}
