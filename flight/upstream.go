package flight

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"lakegate/flight/backend"
	"lakegate/flight/backend/upstream"
)

// UpstreamEngines runs SQL on the upstream Flight SQL engines that metasrv's
// upstream catalogs register; upstream.Pool implements it. The gateway
// prints every statement it sends and serves DoGet itself: an engine's
// tickets and locations never reach clients.
type UpstreamEngines interface {
	// Schema returns the result schema of sql without its rows.
	Schema(ctx context.Context, t upstream.Target, sql string) (*arrow.Schema, error)
	// Execute runs sql and streams its rows.
	Execute(ctx context.Context, t upstream.Target, sql string) (array.RecordReader, error)
}

// errNoUpstreams answers a statement over an upstream table on a gateway
// configured with no upstream engines.
var errNoUpstreams = fmt.Errorf("%w: this gateway serves no upstream engines", backend.ErrUnavailable)

// errMixedEngines refuses a statement over tables of different engines.
var errMixedEngines = fmt.Errorf("%w: a statement may not read tables of different engines (the embedded engine and an upstream one, or two upstream engines)", errBadRequest)

// upstreamOf returns the upstream engine the tables live in: nil when none
// is an upstream table, an error when they do not all live in one engine.
func upstreamOf(tables []backend.TableVersion) (*backend.UpstreamTable, error) {
	if len(tables) == 0 {
		return nil, nil
	}
	first := tables[0].Upstream
	for _, v := range tables[1:] {
		if (v.Upstream == nil) != (first == nil) || (first != nil && !sameEngine(first, v.Upstream)) {
			return nil, errMixedEngines
		}
	}
	return first, nil
}

// sameEngine reports whether a and b are tables of one engine, reached the
// same way.
func sameEngine(a, b *backend.UpstreamTable) bool {
	return a.Address == b.Address && a.TLS == b.TLS && a.Credentials == b.Credentials && a.Dialect == b.Dialect
}

func target(up *backend.UpstreamTable) upstream.Target {
	return upstream.Target{Address: up.Address, TLS: up.TLS, Credentials: up.Credentials}
}

// executeUpstream runs a planned statement on its engine.
func (s *Server) executeUpstream(ctx context.Context, up *backend.UpstreamTable, sql string, args []any) (array.RecordReader, error) {
	if s.cfg.Upstreams == nil {
		return nil, errNoUpstreams
	}
	if len(args) > 0 {
		return nil, fmt.Errorf("%w: parameters are not supported on tables of an upstream engine", errBadRequest)
	}
	rdr, err := s.cfg.Upstreams.Execute(ctx, target(up), sql)
	return rdr, mapUpstreamErr(err)
}

// mapUpstreamErr turns an engine the gateway may not or cannot reach as
// configured (not on its allow-list, a bad address or credentials file in
// the catalog, the pool closing) into an unavailable engine: clients see
// Unavailable, the log says why.
func mapUpstreamErr(err error) error {
	for _, e := range []error{upstream.ErrNotAllowed, upstream.ErrInvalidTarget, upstream.ErrCredentials, upstream.ErrClosed} {
		if errors.Is(err, e) {
			return fmt.Errorf("%w: the table's engine cannot be reached from this gateway: %w", backend.ErrUnavailable, err)
		}
	}
	return err
}
