package flight

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/util"

	"lakegate/authz"
)

// A client runs a prepared query in three calls: DoPut binds the parameters,
// GetFlightInfo asks where the result is, DoGet fetches it. The engine's
// part — re-planning the statement for its values and executing it — is
// most of a small query's time in the gateway, and the client will ask for
// the result next, so the gateway starts it as soon as the parameters are
// bound (or, for a statement without parameters, at GetFlightInfo) and the
// client's next two round trips overlap it.
//
// Nothing changes about what is sent or when it is authorized: the
// speculation opens the plan already authorized for the statement, exactly
// as DoGet would, and DoGet authorizes it again (planner.Refresh) and
// streams the open reader only if that confirms the same plan; otherwise it
// closes it and runs what the refresh returned. Nor does it take anything
// from other statements: it takes an execution permit only if one is free
// at once, gives it back as soon as a statement finds no free permit
// (admission's yield), and is closed if its client does not claim it
// within speculationTTL.

// speculationTTL bounds how long a speculation waits for its DoGet.
const speculationTTL = time.Second

// speculationBatches is how many batches a speculation reads ahead: the end
// of a one-batch result is known before DoGet.
const speculationBatches = 2

// speculationBufferBytes bounds the results held, across all tenants, by
// speculations that have read their whole result and given back everything
// else (speculations.detach).
const speculationBufferBytes = 16 << 20

// speculation is a prepared query being opened on the engine in a goroutine
// of its own (opening): before its DoGet (speculate), or by its DoGet while
// it authorizes the statement again. Exactly one party takes a speculation
// out of its statement (speculations.take) and then either claims it (DoGet)
// or drops it.
type speculation struct {
	st     *prepared
	pl     *plan    // the plan it opens
	key    [32]byte // the ticket key it runs under
	tenant string
	// metrics receives its outcome; nil (nothing recorded) for the one a
	// DoGet opens itself.
	metrics *Metrics
	// cancel ends the speculation's context: the engine call while it
	// opens, the reader once open.
	cancel context.CancelFunc
	// ready is closed once open has returned; o is then the open
	// statement, or nil if it could not open (no free permit, an error:
	// DoGet then runs the statement itself and reports its own errors).
	ready chan struct{}
	o     *openStatement
	// err is why o is nil, for a DoGet to report; nil for a speculation
	// that could not open (its DoGet runs the statement itself and meets
	// any error again, or gets the permit that was not free).
	err error
	// detached is set (before ready closes) when o holds only the
	// result's batches: no permit, files or engine reader.
	detached bool
	// opened is set once o is open, so yield passes over those detached
	// without waiting for them.
	opened atomic.Bool
}

// speculations tracks the speculations not yet taken, by tenant, so a
// statement finding no free permit can take one back (yield). Dropping one
// ends its account in the Server's producers (opening opened it), so
// Shutdown waits until every one has given back what it holds.
type speculations struct {
	producers *sync.WaitGroup
	metrics   *Metrics

	mu       sync.Mutex
	byTenant map[string]map[*speculation]struct{}
	buffered int64 // bytes of the results of detached speculations
}

func newSpeculations(producers *sync.WaitGroup) *speculations {
	return &speculations{producers: producers, byTenant: map[string]map[*speculation]struct{}{}}
}

// putLocked makes sp st's speculation and returns the one it replaces, if any,
// now taken by the caller. Call with st.mu held.
func (ss *speculations) putLocked(st *prepared, sp *speculation) *speculation {
	old := st.spec
	st.spec = sp
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if old != nil {
		ss.forgetLocked(old)
	}
	set := ss.byTenant[sp.tenant]
	if set == nil {
		set = map[*speculation]struct{}{}
		ss.byTenant[sp.tenant] = set
	}
	set[sp] = struct{}{}
	return old
}

// take removes st's speculation and returns it, if any; with want set, only
// if it is want (a timer or a yield finding that someone else took it first
// gets nil).
func (ss *speculations) take(st *prepared, want *speculation) *speculation {
	st.mu.Lock()
	defer st.mu.Unlock()
	return ss.takeLocked(st, want)
}

// takeLocked is take with st.mu held.
func (ss *speculations) takeLocked(st *prepared, want *speculation) *speculation {
	sp := st.spec
	if sp == nil || (want != nil && sp != want) {
		return nil
	}
	st.spec = nil
	ss.mu.Lock()
	ss.forgetLocked(sp)
	ss.mu.Unlock()
	return sp
}

func (ss *speculations) forgetLocked(sp *speculation) {
	if set := ss.byTenant[sp.tenant]; set != nil {
		delete(set, sp)
		if len(set) == 0 {
			delete(ss.byTenant, sp.tenant)
		}
	}
}

// drop cancels a taken speculation and, once it has opened, gives back what
// it holds; outcome is recorded unless it never opened. With wait unset it
// returns at once.
func (ss *speculations) drop(sp *speculation, outcome string, wait bool) {
	sp.cancel()
	done := func() {
		<-sp.ready
		if sp.o != nil {
			sp.o.close()
			sp.metrics.speculated(outcome)
		} else {
			sp.metrics.speculated(speculationUnopened)
		}
		ss.producers.Done()
	}
	if wait {
		done()
		return
	}
	go done()
}

// yield drops speculations not yet taken — of tenant, or with anyTenant of
// any tenant if tenant has none — until one that held a permit has given it
// back, and reports whether one did. (Those that could not open hold none
// and are dropped on the way: their DoGet runs the statement as if there
// had been no speculation.)
func (ss *speculations) yield(tenant string, anyTenant bool) bool {
	for {
		ss.mu.Lock()
		sp := yieldable(ss.byTenant[tenant])
		if sp == nil && anyTenant {
			for _, set := range ss.byTenant {
				if sp = yieldable(set); sp != nil {
					break
				}
			}
		}
		ss.mu.Unlock()
		if sp == nil {
			return false
		}
		// Someone may take it between the two locks: then look again.
		if ss.take(sp.st, sp) != nil {
			ss.drop(sp, speculationYielded, true)
			if sp.o != nil && !sp.detached {
				return true
			}
		}
	}
}

// yieldable returns a speculation of set that may hold a permit: not one
// known to be detached.
func yieldable(set map[*speculation]struct{}) *speculation {
	for sp := range set {
		if !sp.opened.Load() || !sp.detached {
			return sp
		}
	}
	return nil
}

// detach turns o, whose whole result ra has read ahead, into a statement
// holding only those batches — giving back at once the permit, the pinned
// files and the engine's reader — if they fit in what is left of
// speculationBufferBytes. Otherwise it returns nil and o is unchanged.
func (ss *speculations) detach(o *openStatement, ra *aheadReader) *openStatement {
	if !ra.ended || ra.Err() != nil {
		return nil
	}
	var n int64
	for _, rec := range ra.ahead {
		n += util.TotalRecordSize(rec)
	}
	rdr, err := array.NewRecordReader(ra.Schema(), ra.ahead)
	if err != nil {
		return nil
	}
	ss.mu.Lock()
	if ss.buffered+n > speculationBufferBytes {
		ss.mu.Unlock()
		rdr.Release()
		return nil
	}
	ss.buffered += n
	ss.mu.Unlock()
	o.close() // the batches live on in rdr
	return &openStatement{ctx: o.ctx, rdr: rdr, tables: o.tables, close: func() {
		rdr.Release()
		ss.mu.Lock()
		ss.buffered -= n
		ss.mu.Unlock()
	}}
}

// dropAll drops every speculation of the statements in ps (at shutdown).
func (ss *speculations) dropAll(ps *preparedStore) {
	for _, st := range ps.all() {
		if sp := ss.take(st, nil); sp != nil {
			ss.drop(sp, speculationDiscarded, false)
		}
	}
}

// speculate opens st's plan for its next DoGet, under the statement's
// ticket key. With rebind set it first binds args (DoPut), replacing any
// speculation of the parameters bound before; otherwise (GetFlightInfo) it
// uses the parameters bound now and keeps a speculation already started.
func (s *Server) speculate(ctx context.Context, p *authz.Principal, st *prepared, key [32]byte, args []any, rebind bool) {
	pl := st.current()
	// Statements of other kinds, and upstream engines' (the gateway does
	// not spend another system's capacity on a guess), are not started
	// before they are asked for.
	up, err := upstreamOf(pl.tables)
	eligible := pl.sql != "" && pl.write == nil && pl.show == nil && err == nil && up == nil
	st.mu.Lock()
	if rebind {
		st.args = args
	} else if st.spec != nil {
		st.mu.Unlock()
		return
	}
	args = st.args
	if !eligible || len(args) != pl.numParams {
		old := s.specs.takeLocked(st, nil)
		st.mu.Unlock()
		if old != nil {
			s.specs.drop(old, speculationDiscarded, false)
		}
		return
	}
	// The speculation outlives the call that starts it; it keeps the
	// call's values (principal, request id) but not its cancellation.
	sp := s.opening(context.WithoutCancel(ctx), p, key, pl, args, true)
	sp.st, sp.tenant, sp.metrics = st, p.Tenant().String(), s.specs.metrics
	old := s.specs.putLocked(st, sp)
	st.mu.Unlock()
	if old != nil {
		s.specs.drop(old, speculationDiscarded, false)
	}
	time.AfterFunc(speculationTTL, func() {
		if sp := s.specs.take(st, sp); sp != nil {
			s.specs.drop(sp, speculationExpired, false)
		}
	})
}

// opening starts opening pl with args under key in a goroutine of its own,
// accounted for in the Server's producers, and returns its speculation at
// once; ready closes when it is open or has failed. Ending ctx (or the
// speculation's cancel) stops it. A speculative one takes a permit only if
// one is free, keeps no error, and reads ahead (and may detach) what it
// opens; otherwise it waits for a permit as any statement does and keeps its
// error for its DoGet.
func (s *Server) opening(ctx context.Context, p *authz.Principal, key [32]byte, pl *plan, args []any, speculative bool) *speculation {
	ctx, cancel := context.WithCancel(ctx)
	sp := &speculation{key: key, pl: pl, cancel: cancel, ready: make(chan struct{})}
	admit := s.admitExecute.acquire
	if speculative {
		admit = s.admitExecute.tryAcquire
	}
	s.producers.Add(1)
	go func() {
		defer close(sp.ready)
		var o *openStatement
		defer func() {
			if r := recover(); r != nil {
				if o != nil {
					o.close()
				}
				sp.o, sp.err = nil, s.panicked(ctx, "opening a statement", r)
			}
		}()
		o, err := s.open(ctx, p, key, pl.sqlFor(args), args, pl.tables, admit)
		switch {
		case err != nil && !speculative:
			sp.err = err
			return
		case err != nil:
			return
		case speculative:
			// Small results are then complete before DoGet asks, and
			// need nothing but their bytes until it does.
			ra := readAhead(o.rdr, speculationBatches)
			o.rdr = ra
			if d := s.specs.detach(o, ra); d != nil {
				o, sp.detached = d, true
			}
		}
		sp.o = o
		sp.opened.Store(true)
	}()
	return sp
}

// claim runs a prepared query whose speculation sp its DoGet took: it
// authorizes the statement again and streams sp's reader if the plan is the
// one sp opened, or runs the refreshed plan otherwise (which later
// executions then start from).
func (s *Server) claim(ctx context.Context, p *authz.Principal, st *prepared, sp *speculation, args []any) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	base := st.current()
	pl, err := s.planner.Refresh(ctx, s.whoIs(ctx, p), base)
	if err == nil {
		st.refreshed(base, pl)
	}
	select {
	case <-sp.ready:
	case <-ctx.Done():
		s.specs.drop(sp, speculationDiscarded, false)
		return nil, nil, toStatus(ctx.Err())
	}
	switch {
	case err != nil:
		s.specs.drop(sp, speculationStale, true)
		return nil, nil, s.fail(ctx, "refresh", err)
	case pl == sp.pl && sp.err != nil:
		s.specs.drop(sp, speculationStale, true)
		return nil, nil, sp.err
	case pl != sp.pl || sp.o == nil:
		s.specs.drop(sp, speculationStale, true)
		return s.execute(ctx, p, sp.key, pl.sqlFor(args), args, pl.tables)
	}
	// The stream is DoGet's now: it ends with DoGet's context, and so does
	// the engine's reader.
	o := sp.o
	o.ctx = ctx
	stop := context.AfterFunc(ctx, sp.cancel)
	closeSpec := o.close
	o.close = func() {
		stop()
		closeSpec()
	}
	schema, ch := s.stream(o)
	sp.metrics.speculated(speculationClaimed)
	s.specs.producers.Done() // the stream's producer accounts for it now
	return schema, ch, nil
}

// aheadReader is a RecordReader that read some batches of its source ahead.
type aheadReader struct {
	array.RecordReader // the source
	ahead              []arrow.RecordBatch
	cur                arrow.RecordBatch
	ended              bool // the source's Next returned false
}

// readAhead reads up to n batches of src now and returns a reader that
// yields them and then the rest of src. Releasing it releases src.
func readAhead(src array.RecordReader, n int) *aheadReader {
	r := &aheadReader{RecordReader: src}
	for len(r.ahead) < n {
		if !src.Next() {
			r.ended = true
			break
		}
		rec := src.RecordBatch()
		rec.Retain()
		r.ahead = append(r.ahead, rec)
	}
	return r
}

func (r *aheadReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if len(r.ahead) > 0 {
		r.cur = r.ahead[0]
		r.ahead = r.ahead[1:]
		return true
	}
	if r.ended || !r.RecordReader.Next() {
		r.ended = true
		return false
	}
	r.cur = r.RecordReader.RecordBatch()
	r.cur.Retain()
	return true
}

func (r *aheadReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch (arrow-go's deprecated name for it).
func (r *aheadReader) Record() arrow.RecordBatch { return r.cur }

// Release releases the batches read ahead and then the source.
func (r *aheadReader) Release() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	for _, rec := range r.ahead {
		rec.Release()
	}
	r.ahead = nil
	r.RecordReader.Release()
}
