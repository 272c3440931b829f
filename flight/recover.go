package flight

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"google.golang.org/grpc"
)

// A panic in a request's handler is a bug, but gRPC does not recover it: the
// process would exit and every tenant's streams with it, so one caller's
// input could take the replica down. The innermost interceptors and the
// goroutines handlers start turn a panic into Internal ("internal error")
// for that request alone and log it with its stack. Nothing else is
// recovered: a panic outside a request still ends the process.

// recoverUnary answers a panicking unary handler with Internal.
func (s *Server) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			resp, err = nil, s.panicked(ctx, info.FullMethod, r)
		}
	}()
	return handler(ctx, req)
}

// recoverStream answers a panicking stream handler with Internal.
func (s *Server) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.panicked(ss.Context(), info.FullMethod, r)
		}
	}()
	return handler(srv, ss)
}

// panicked logs a recovered panic of the request ctx belongs to and returns
// the status its caller gets. The panic value may hold request data, so it
// goes to the log (with the request id) and never to the caller.
func (s *Server) panicked(ctx context.Context, where string, r any) error {
	s.logger(ctx).ErrorContext(ctx, "request panicked", "where", where, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return toStatus(errPanicked)
}

// errPanicked is the error of a request whose handler panicked; toStatus
// maps it, like every unexpected error, to Internal.
var errPanicked = errors.New("flight: the request's handler panicked")
