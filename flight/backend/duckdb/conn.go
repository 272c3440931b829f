package duckdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duckdb/duckdb-go/v2/arrowmapping"
	"github.com/duckdb/duckdb-go/v2/mapping"
)

// The tenant instance is driven through duckdb-go's C API bindings (mapping)
// rather than database/sql: database/sql's driver materializes every result
// before returning the first row, while the C API can stream it.

// engineError is an error DuckDB reported, with its type when DuckDB gave one.
type engineError struct {
	typ mapping.ErrorType
	msg string
}

func (e *engineError) Error() string { return e.msg }

// newEngineError builds an engineError from a message without a type (prepare
// and pending errors), recovering the type from the message's prefix.
func newEngineError(msg string) *engineError {
	typ := mapping.ErrorTypeInvalid
	switch prefix, _, _ := strings.Cut(msg, ": "); prefix {
	case "Out of Memory Error":
		typ = mapping.ErrorTypeOutOfMemory
	case "INTERRUPT Error":
		typ = mapping.ErrorTypeInterrupt
	}
	return &engineError{typ: typ, msg: msg}
}

// resultError returns res's error.
func resultError(res *mapping.Result) *engineError {
	msg := mapping.ResultError(res)
	if msg == "" {
		msg = "unknown engine error"
	}
	return &engineError{typ: mapping.ResultErrorType(res), msg: msg}
}

// dbConn is one DuckDB connection of a tenant pool. It is used by one
// goroutine at a time; only the watcher's interrupt runs concurrently.
type dbConn struct {
	c    mapping.Connection
	opts arrowmapping.ArrowOptions // the connection's Arrow conversion options
	// primed reports a connection set up before lock_configuration, with the
	// larger streaming buffer (see primeStatements). It stays in the pool
	// for the pool's lifetime.
	primed bool
	// prepared holds statements prepared on this connection for reuse,
	// least recently used first (see takePrepared).
	prepared []cachedStmt
}

// cachedStmt is a prepared statement kept for its SQL text. gen is the
// tenant's view generation when it was prepared.
type cachedStmt struct {
	sql string
	gen uint64
	ps  mapping.PreparedStatement
}

// maxCachedStmts bounds the prepared statements a connection keeps.
const maxCachedStmts = 8

// takePrepared removes and returns the statement cached for sql, if one was
// prepared at view generation gen. DuckDB re-binds a prepared statement
// whose catalog dependencies changed since it was prepared; the generation
// check also drops it after any view change since, including the drop of a
// superseded version's view (bind_release.go).
func (c *dbConn) takePrepared(sql string, gen uint64) (mapping.PreparedStatement, bool) {
	for i := range c.prepared {
		if e := c.prepared[i]; e.sql == sql {
			c.prepared = append(c.prepared[:i], c.prepared[i+1:]...)
			if e.gen == gen {
				return e.ps, true
			}
			mapping.DestroyPrepare(&e.ps)
			break
		}
	}
	return mapping.PreparedStatement{}, false
}

// keepPrepared caches ps for sql, dropping statements of older view
// generations than cur and the least recently used beyond maxCachedStmts.
func (c *dbConn) keepPrepared(sql string, gen, cur uint64, ps mapping.PreparedStatement) {
	kept := c.prepared[:0]
	for _, e := range c.prepared {
		if e.gen == cur && e.sql != sql {
			kept = append(kept, e)
		} else {
			mapping.DestroyPrepare(&e.ps)
		}
	}
	clear(c.prepared[len(kept):])
	c.prepared = kept
	if gen != cur {
		mapping.DestroyPrepare(&ps)
		return
	}
	if len(c.prepared) == maxCachedStmts {
		mapping.DestroyPrepare(&c.prepared[0].ps)
		c.prepared = append(c.prepared[:0], c.prepared[1:]...)
	}
	c.prepared = append(c.prepared, cachedStmt{sql: sql, gen: gen, ps: ps})
}

// caches reports whether c holds a statement prepared for sql at view
// generation gen. The pool calls it on idle connections, under its lock.
func (c *dbConn) caches(sql string, gen uint64) bool {
	for i := range c.prepared {
		if c.prepared[i].sql == sql && c.prepared[i].gen == gen {
			return true
		}
	}
	return false
}

// query runs internal SQL (one statement) and discards its result.
func (c *dbConn) query(sql string) error {
	var res mapping.Result
	state := mapping.Query(c.c, sql, &res)
	defer mapping.DestroyResult(&res)
	if state == mapping.StateError {
		return resultError(&res)
	}
	return nil
}

func (c *dbConn) close() {
	for i := range c.prepared {
		mapping.DestroyPrepare(&c.prepared[i].ps)
	}
	c.prepared = nil
	arrowmapping.DestroyArrowOptions(&c.opts)
	mapping.Disconnect(&c.c)
}

// interruptEvery is how often a cancelled statement is interrupted again: an
// interrupt that lands between two calls of a statement (after Prepare, before
// execution starts) is cleared when the execution starts, so it is repeated
// until the statement's owner stops watching.
const interruptEvery = 5 * time.Millisecond

// watch interrupts c's statements once ctx is done, repeatedly, until the
// returned stop is called. stop waits until no interrupt is in flight, so
// that none reaches a later statement of the connection's next user.
func (c *dbConn) watch(ctx context.Context) (stop func()) {
	quit := make(chan struct{})
	exited := make(chan struct{})
	stopAfter := context.AfterFunc(ctx, func() {
		defer close(exited)
		tick := time.NewTicker(interruptEvery)
		defer tick.Stop()
		for {
			mapping.Interrupt(c.c)
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		close(quit)
		if !stopAfter() {
			<-exited // the interrupter started: wait for it to return
		}
	}
}

// pool is a tenant's DuckDB database and its connections. The primed
// connections are opened during the lockdown and reused; when all are checked
// out, get opens an extra connection, set up by setup and closed when put
// back. The database closes once the pool is closed and every connection is
// back.
type pool struct {
	setup func(*dbConn) error
	// prepares counts the statements DuckDB prepared on the pool's
	// connections (statements taken from a connection's cache are not
	// prepared again).
	prepares atomic.Uint64

	mu     sync.Mutex
	db     mapping.Database
	idle   []*dbConn // primed connections not checked out
	inUse  int
	closed bool
}

// openPool opens an in-memory database.
func openPool() (*pool, error) {
	var cfg mapping.Config
	if mapping.CreateConfig(&cfg) == mapping.StateError {
		mapping.DestroyConfig(&cfg)
		return nil, errors.New("duckdb: create config")
	}
	defer mapping.DestroyConfig(&cfg)
	var db mapping.Database
	var msg string
	if mapping.OpenExt("", &db, cfg, &msg) == mapping.StateError {
		mapping.Close(&db)
		return nil, fmt.Errorf("duckdb: open database: %s", msg)
	}
	return &pool{db: db}, nil
}

// connect opens a connection outside the pool's accounting. The caller
// closes it or hands it to the pool with prime.
func (p *pool) connect() (*dbConn, error) {
	c := &dbConn{}
	if mapping.Connect(p.db, &c.c) == mapping.StateError {
		mapping.Disconnect(&c.c)
		return nil, errors.New("duckdb: connect failed")
	}
	arrowmapping.ConnectionGetArrowOptions(c.c, &c.opts)
	return c, nil
}

// prime opens n connections, runs stmts on each and adds them to the idle
// set. The lockdown calls it before lock_configuration.
func (p *pool) prime(n int, stmts []string) error {
	for range n {
		c, err := p.connect()
		if err != nil {
			return err
		}
		for _, s := range stmts {
			if err := c.query(s); err != nil {
				c.close()
				return err
			}
		}
		c.primed = true
		p.mu.Lock()
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	}
	return nil
}

// get returns an idle primed connection or opens an extra one. With sql
// set, it prefers an idle connection that caches a statement prepared for
// sql at view generation gen, so that a statement described on one
// connection and executed while another was put back in between is not
// prepared twice; otherwise the one put back last.
func (p *pool) get(sql string, gen uint64) (*dbConn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.inUse++
	if n := len(p.idle); n > 0 {
		i := n - 1
		if sql != "" {
			for j := n - 1; j >= 0; j-- {
				if p.idle[j].caches(sql, gen) {
					i = j
					break
				}
			}
		}
		c := p.idle[i]
		copy(p.idle[i:], p.idle[i+1:])
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()

	c, err := p.connect()
	if err == nil && p.setup != nil {
		if err = p.setup(c); err != nil {
			c.close()
		}
	}
	if err != nil {
		p.release()
		return nil, err
	}
	return c, nil
}

// put returns c, which get handed out. clean reports that c's last statement
// left nothing behind (no result, or one read to its end, and no interrupt
// pending). Otherwise a primed connection runs a trivial statement, which
// makes DuckDB drop the previous one's executor (and whatever memory it
// holds) and clears the interrupt flag, before it is reused.
func (p *pool) put(c *dbConn, clean bool) {
	keep := c.primed
	if keep && !clean {
		keep = c.query("SELECT 1") == nil
	}
	p.mu.Lock()
	keep = keep && !p.closed
	if keep {
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	if !keep {
		c.close()
	}
	p.release()
}

// release ends a checkout.
func (p *pool) release() {
	p.mu.Lock()
	p.inUse--
	closeDB := p.closed && p.inUse == 0
	p.mu.Unlock()
	if closeDB {
		mapping.Close(&p.db)
	}
}

// inUseCount reports how many connections are checked out.
func (p *pool) inUseCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inUse
}

// close closes the idle connections, and the database once no connection is
// checked out. It is idempotent.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	closeDB := p.inUse == 0
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
	if closeDB {
		mapping.Close(&p.db)
	}
}
