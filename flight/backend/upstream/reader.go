package upstream

import (
	"context"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
)

// endpoint is one stream of a FlightInfo: its ticket and the connection it
// is read on. Neither leaves the package.
type endpoint struct {
	conn   *conn
	ticket *flight.Ticket
}

// reader streams the endpoints of one FlightInfo, in order, as one
// array.RecordReader. It is not safe for concurrent use.
type reader struct {
	refs atomic.Int64

	pool   *Pool
	parent context.Context // the caller's: decides canceled vs deadline
	ctx    context.Context // parent + credentials, cancelled by Release
	cancel context.CancelFunc
	conns  []*conn // acquired, released by Release

	schema *arrow.Schema
	eps    []endpoint
	next   int            // index of the next endpoint to open
	cur    *flight.Reader // the open stream, nil between streams
	curEp  *endpoint
	rec    arrow.RecordBatch
	err    error
	done   bool
}

// plan resolves every endpoint's connection before anything is read, so a
// location outside Allow fails the whole statement up front.
func (r *reader) plan(origin *conn, info *flight.FlightInfo) error {
	for _, ep := range info.GetEndpoint() {
		if ep.GetTicket() == nil {
			return invalid("execute")
		}
		key, err := r.pool.endpointKey(origin.key, ep)
		if err != nil {
			return err
		}
		c, err := r.conn(key)
		if err != nil {
			return err
		}
		r.eps = append(r.eps, endpoint{conn: c, ticket: ep.GetTicket()})
	}
	return nil
}

// conn returns the reader's connection for key, acquiring it once.
func (r *reader) conn(key connKey) (*conn, error) {
	for _, c := range r.conns {
		if c.key == key {
			return c, nil
		}
	}
	c, err := r.pool.acquire(key)
	if err != nil {
		return nil, err
	}
	r.conns = append(r.conns, c)
	return c, nil
}

// start opens the first stream, whose schema is the reader's: the
// FlightInfo's schema is used only when there is no stream, since engines
// may announce another one than they stream.
func (r *reader) start(info *flight.FlightInfo) error {
	if len(r.eps) == 0 {
		b := info.GetSchema()
		if len(b) == 0 {
			return ErrNoSchema
		}
		s, err := deserializeSchema(b, r.pool.alloc)
		if err != nil {
			return invalid("execute")
		}
		r.schema, r.done = s, true
		return nil
	}
	if err := r.open(); err != nil {
		return err
	}
	r.schema = r.cur.Schema()
	return nil
}

// open opens the stream of the next endpoint.
func (r *reader) open() error {
	ep := &r.eps[r.next]
	r.next++
	rdr, err := ep.conn.client.DoGet(r.ctx, ep.ticket, callOpts...)
	if err != nil {
		return r.pool.fail(r.parent, ep.conn, "read", err)
	}
	r.cur, r.curEp = rdr, ep
	return nil
}

func (r *reader) checkSchema() error {
	if !r.cur.Schema().Equal(r.schema) {
		return invalid("read")
	}
	return nil
}

func (r *reader) Schema() *arrow.Schema { return r.schema }

func (r *reader) Next() bool {
	r.rec = nil
	if r.err != nil || r.done {
		return false
	}
	for {
		if r.parent.Err() != nil {
			r.setErr(classify(r.parent, "read", r.parent.Err()))
			return false
		}
		if r.cur == nil {
			if r.next >= len(r.eps) {
				r.done = true
				return false
			}
			if err := r.open(); err != nil {
				r.setErr(err)
				return false
			}
			if err := r.checkSchema(); err != nil {
				r.setErr(err)
				return false
			}
		}
		if r.cur.Next() {
			r.rec = r.cur.RecordBatch()
			return true
		}
		if err := r.cur.Err(); err != nil {
			r.setErr(r.pool.fail(r.parent, r.curEp.conn, "read", err))
			return false
		}
		r.closeStream()
	}
}

func (r *reader) setErr(err error) {
	r.err = err
	r.closeStream()
}

func (r *reader) closeStream() {
	if r.cur != nil {
		r.cur.Release()
		r.cur, r.curEp = nil, nil
	}
}

func (r *reader) RecordBatch() arrow.RecordBatch { return r.rec }

// Record returns the current batch.
//
// Deprecated: Use RecordBatch.
func (r *reader) Record() arrow.RecordBatch { return r.rec }

func (r *reader) Err() error { return r.err }

func (r *reader) Retain() { r.refs.Add(1) }

// Release stops the upstream streams and lets go of the connections when
// the last reference goes.
func (r *reader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.cancel()
	r.rec = nil
	r.closeStream()
	for _, c := range r.conns {
		r.pool.release(c)
	}
	r.conns = nil
}
